"""`tf.summary`: TensorBoard event files, written eagerly or from inside `tapeshim.function`.

Inside a compiled function a summary is an ordered host callback
(`jax.debug.callback`) taking the value, the step and the `record_if`
condition, so each call of the function writes its own values and steps
without retracing. The writer, the tag and `max_outputs`/`buckets` are fixed
when the function is traced, as in TF.
"""

from __future__ import annotations

import contextlib
import struct
import threading
import time
from typing import Any, Callable, Iterator, cast

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, registry
from tapeshim._src.distribute import strategy as distribute
from tapeshim._src.io.gfile import path_text
from tapeshim._src.node import OpKey
from tapeshim._src.ops import math_ops, table
from tapeshim._src.state import _thread_state, current_name_scope
from tapeshim._src.summary_proto import (
    DT_DOUBLE,
    DT_FLOAT,
    DT_STRING,
    Event,
    EventFileWriter,
    Summary,
    SummaryMetadata,
    SummaryValue,
    encode_png,
    tensor_proto,
)
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tf_logging import warn_first_n

_DEFAULT_BUCKETS = 30


class _State(threading.local):
    def __init__(self) -> None:
        self.writer: "SummaryWriter | None" = None
        self.record_if: Any = True


_state = _State()
_step: list[Any] = [None]  # the default step, shared by all threads as TF's


class SummaryWriter:
    """The base of summary writers, as `tf.summary.SummaryWriter`."""

    def set_as_default(self, step: Any = None) -> None:
        """Makes this the default writer for this thread (and `step` the default step, when given)."""
        self._check_open()
        _state.writer = self
        if step is not None:
            _step[0] = step

    def as_default(self, step: Any = None) -> "_DefaultWriter":
        """A context in which this is the default writer (and `step` the default step); flushes on exit.

        Raises:
          RuntimeError: the writer is closed.
        """
        self._check_open()
        return _DefaultWriter(self, step)

    def _check_open(self) -> None:
        return None

    def init(self) -> None:
        """Opens the writer's resources (done at creation)."""

    def flush(self) -> None:
        """Writes buffered summaries to the file."""

    def close(self) -> None:
        """Flushes and closes the writer."""

    def _write(self, value: SummaryValue, step: int) -> None:
        raise NotImplementedError


class _DefaultWriter:
    """The context manager `SummaryWriter.as_default` returns."""

    def __init__(self, writer: SummaryWriter, step: Any) -> None:
        self._writer, self._step = writer, step
        self._saved: tuple = ()

    def __enter__(self) -> SummaryWriter:
        self._saved = (_state.writer, _step[0])
        _state.writer = self._writer
        if self._step is not None:
            _step[0] = self._step
        return self._writer

    def __exit__(self, *exc_info: Any) -> None:
        _state.writer = self._saved[0]
        if self._step is not None:
            _step[0] = self._saved[1]
        self._writer.flush()


class _FileWriter(SummaryWriter):
    def __init__(self, logdir: str, max_queue: int, flush_millis: int, filename_suffix: str) -> None:
        self._logdir = logdir
        self._events = EventFileWriter(logdir, max_queue, flush_millis, filename_suffix)
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")

    def flush(self) -> None:
        # summaries written from compiled code arrive through host callbacks that may still be pending
        jax.effects_barrier()
        self._events.flush()

    def close(self) -> None:
        jax.effects_barrier()
        self._events.close()
        self._closed = True

    def _write(self, value: Any, step: int) -> None:
        event = Event(wall_time=time.time(), step=int(step))
        if isinstance(value, Summary):  # a whole Summary (write_raw_pb)
            event.summary.CopyFrom(value)
        else:
            event.summary.value.append(value)
        self._events.add(event)


class _NoopWriter(SummaryWriter):
    """A writer that writes nothing (`tf.summary.create_noop_writer`).

    As TF's, making it the default changes nothing: the default writer (if any) stays.
    """

    def set_as_default(self, step: Any = None) -> None:
        return None

    def as_default(self, step: Any = None) -> contextlib.nullcontext:  # type: ignore[override]
        return contextlib.nullcontext(self)

    def _write(self, value: SummaryValue, step: int) -> None:
        return None


def create_file_writer(
    logdir: Any,
    max_queue: int | None = None,
    flush_millis: int | None = None,
    filename_suffix: str | None = None,
    name: str | None = None,
    experimental_trackable: bool = False,
    experimental_mesh: Any = None,
) -> SummaryWriter:
    """A writer of a new event file in `logdir` (created if missing), as `tf.summary.create_file_writer`.

    Args:
      logdir: the directory of the event file.
      max_queue: events buffered before a write to disk (default 10).
      flush_millis: the longest time events stay buffered (default 120000).
      filename_suffix: appended to the file name (default ".v2").
      name, experimental_trackable, experimental_mesh: accepted for compatibility.
    """
    return _FileWriter(
        path_text(logdir),
        10 if max_queue is None else max_queue,
        120_000 if flush_millis is None else flush_millis,
        ".v2" if filename_suffix is None else filename_suffix,
    )


def create_noop_writer() -> SummaryWriter:
    """A writer that writes nothing."""
    return _NoopWriter()


def flush(writer: SummaryWriter | None = None, name: str | None = None) -> None:
    """Flushes `writer` (default: the default writer)."""
    writer = _state.writer if writer is None else writer
    if writer is not None:
        writer.flush()


@contextlib.contextmanager
def record_if(condition: Any) -> Iterator[None]:
    """Summaries are written only while `condition` (a bool, boolean tensor or callable returning one) holds."""
    saved = _state.record_if
    _state.record_if = condition
    try:
        yield
    finally:
        _state.record_if = saved


def _condition() -> Any:
    condition = _state.record_if
    return condition() if callable(condition) else condition


def should_record_summaries() -> Tensor:
    """Whether a summary written now would be recorded: a default writer exists and `record_if` holds."""
    writer = _state.writer
    if writer is None or isinstance(writer, _NoopWriter):
        return constant(False, dtypes.bool_)
    return convert_to_tensor(_condition(), dtypes.bool_)


def get_step() -> Any:
    """The default step (`tf.summary.experimental.get_step`): an int, tensor, variable or None."""
    return _step[0]


def set_step(step: Any) -> None:
    """Sets the default step for summaries."""
    _step[0] = step


@contextlib.contextmanager
def summary_scope(name: str, default_name: str | None = None, values: Any = None) -> Iterator[tuple[str, str]]:
    """(tag, scope) for a summary named `name` under the current name scope."""
    tag = current_name_scope() + cast(str, name or default_name)
    yield tag, tag


def trace_on(graph: bool = True, profiler: bool = False, profiler_outdir: str | None = None) -> None:
    """Accepted; records nothing: tapeshim has no TF graph or TF profiler trace (see docs/io.md).

    Logs a warning (once per call site) saying so; `jax.profiler` traces what runs.
    """
    warn_first_n(
        "tf.summary.trace_on: tapeshim records no TF graph or profiler trace (it runs JAX programs); "
        "trace_export will write nothing. Use jax.profiler for a trace of what runs.",
        1,
    )


def trace_off() -> None:
    """Accepted and ignored (see `trace_on`)."""


def trace_export(name: str, step: Any = None, profiler_outdir: str | None = None) -> None:
    """Writes nothing: tapeshim records no graph trace (see `trace_on`)."""


def _as_tensor(value: Any) -> Any:
    if hasattr(value, "_read_for_op"):
        return value._read_for_op()
    if isinstance(value, Tensor):
        return value
    return convert_to_tensor(value)


def _is_host(tensor: Any) -> bool:
    return getattr(tensor.dtype, "is_string", False)


def _metadata(plugin: str, description: str | None, content: bytes = b"") -> SummaryMetadata:
    metadata = SummaryMetadata()
    metadata.plugin_data.plugin_name = plugin
    if content:
        metadata.plugin_data.content = content
    if description:
        metadata.summary_description = description
    return metadata


def _summary(tag: str, build: Callable[[np.ndarray], SummaryValue | list], data: Any, step: Any) -> Tensor:
    """Writes `build(value)` under `tag` at `step` to the default writer; eagerly or per call of a function."""
    writer = _state.writer
    if writer is None or isinstance(writer, _NoopWriter):
        return constant(False, dtypes.bool_)
    step = _step[0] if step is None else step
    if step is None:
        raise ValueError(
            "No step set. Please specify one either through the `step` argument or through "
            "tf.summary.experimental.set_step()"
        )
    condition = _condition()
    full_tag = current_name_scope() + tag

    def write(value: np.ndarray, step_value: Any, keep: Any) -> None:
        if bool(np.asarray(keep)):
            summary = build(value)
            if isinstance(summary, SummaryValue):
                summary.tag = full_tag
                writer._write(summary, int(np.asarray(step_value)))
            else:  # serialized Summary messages, written as they are
                for message in summary:
                    writer._write(message, int(np.asarray(step_value)))

    trace = _thread_state.trace
    data_tensor = data if isinstance(data, np.ndarray) else _as_tensor(data)
    if trace is None:
        keep = bool(np.asarray(_as_tensor(condition).value)) if not isinstance(condition, bool) else condition
        if keep:
            host = data_tensor if isinstance(data_tensor, np.ndarray) else np.asarray(data_tensor.numpy())
            write(host, np.asarray(_as_tensor(step).value), True)
        return constant(keep, dtypes.bool_)

    step_tensor = _as_tensor(step)
    keep_tensor = convert_to_tensor(condition, dtypes.bool_) if not isinstance(condition, Tensor) else condition
    replica = _replica_id()
    if replica is not None:  # as TF: inside strategy.run, only the first replica's summaries are written
        keep_tensor = math_ops.logical_and(keep_tensor, math_ops.equal(replica, 0))
    if isinstance(data_tensor, np.ndarray) or _is_host(data_tensor):  # host strings: fixed when traced
        fixed = data_tensor if isinstance(data_tensor, np.ndarray) else np.asarray(data_tensor.numpy())
        inputs: tuple = (step_tensor, keep_tensor)

        def write_fixed(step_value: Any, keep: Any) -> None:
            write(fixed, step_value, keep)

        callback: Callable[..., None] = write_fixed
    else:
        inputs = (data_tensor, step_tensor, keep_tensor)
        callback = write

    def effect(*arrays: jax.Array) -> jax.Array:
        # ordered effects are refused in a region over several devices: there, each replica calls back
        jax.debug.callback(callback, *arrays, ordered=replica is None)
        return jnp.zeros((), jnp.int32)

    (token,) = registry.record(
        lambda *arrays: (effect(*arrays),), OpKey("WriteSummary", id(effect)), inputs, (((), dtypes.int32),), []
    )
    trace.effects.append(token)
    return keep_tensor


def _replica_id() -> Any:
    """This replica's index inside `strategy.run` over several replicas, else None."""
    context = distribute.get_replica_context()
    if context is None or isinstance(context, distribute._DefaultReplicaContext):
        return None
    return context.replica_id_in_sync_group if context.num_replicas_in_sync > 1 else None


def _numeric(data: Any, target: str) -> Any:
    """`data` as a tensor, with TF's UnimplementedError for strings cast to `target`."""
    tensor = data if isinstance(data, np.ndarray) else _as_tensor(data)
    if (
        isinstance(tensor, np.ndarray)
        and tensor.dtype.kind in "OSU"
        or (not isinstance(tensor, np.ndarray) and _is_host(tensor))
    ):
        raise errors.UnimplementedError(None, None, f"Cast string to {target} is not supported [Op:Cast]")
    return tensor


def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> Tensor:
    """Writes a scalar (as float32) for TensorBoard's scalars dashboard.

    Returns:
      A boolean tensor: True if the summary was written, False if there is no
      default writer or `record_if` is false.

    Raises:
      ValueError: `data` is not a scalar, or no step is set.
    """
    tensor = _numeric(data, "float")
    if tuple(tensor.shape) != ():
        raise ValueError(f"Expected scalar shape, saw shape: {tuple(tensor.shape)}.")

    def build(value: np.ndarray) -> SummaryValue:
        out = SummaryValue(metadata=_metadata("scalars", description))
        out.tensor.CopyFrom(tensor_proto(np.asarray(value, np.float32), DT_FLOAT))
        return out

    return _summary(name, build, tensor, step)


def histogram_buckets(data: np.ndarray, bucket_count: int) -> np.ndarray:
    """TensorBoard's `[bucket_count, 3]` (left edge, right edge, count) histogram of `data`, in float64."""
    values = np.asarray(data, np.float64).reshape(-1)
    bucket_count = max(int(bucket_count), 0)
    if values.size == 0 or bucket_count == 0:
        return np.zeros((bucket_count, 3), np.float64)
    low, high = values.min(), values.max()
    span = high - low
    if span == 0:
        counts = np.zeros(bucket_count, np.float64)
        counts[-1] = values.size
        return np.stack([np.full(bucket_count, low), np.full(bucket_count, low), counts], axis=1)
    width = span / bucket_count
    index = np.minimum(np.floor((values - low) / width).astype(np.int64), bucket_count - 1)
    counts = np.bincount(index, minlength=bucket_count).astype(np.float64)
    step = (high - low) / bucket_count
    edges = low + step * np.arange(bucket_count + 1, dtype=np.float64)
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def histogram(
    name: str, data: Any, step: Any = None, buckets: int | None = None, description: str | None = None
) -> Tensor:
    """Writes a histogram of `data` (`buckets` equal-width buckets, default 30) for TensorBoard."""
    tensor = _numeric(data, "double")
    count = _DEFAULT_BUCKETS if buckets is None else int(buckets)

    def build(value: np.ndarray) -> SummaryValue:
        out = SummaryValue(metadata=_metadata("histograms", description))
        out.tensor.CopyFrom(tensor_proto(histogram_buckets(value, count), DT_DOUBLE))
        return out

    return _summary(name, build, tensor, step)


def _to_uint8(images: np.ndarray) -> np.ndarray:
    """`tf.image.convert_image_dtype(images, tf.uint8, saturate=True)`."""
    if images.dtype == np.uint8:
        return images
    if images.dtype.kind == "f":
        scaled = images.astype(np.float32) * np.float32(255.5)
        return np.clip(np.nan_to_num(scaled), 0, 255).astype(np.uint8)
    if images.dtype.kind in "iu":
        bits = images.dtype.itemsize * 8 - (1 if images.dtype.kind == "i" else 0)
        return np.clip(images.astype(np.int64) >> max(bits - 8, 0), 0, 255).astype(np.uint8)
    if images.dtype == np.bool_:
        return images.astype(np.uint8)
    raise TypeError(f"Unsupported image dtype {images.dtype}")


def image(name: str, data: Any, step: Any = None, max_outputs: int = 3, description: str | None = None) -> Tensor:
    """Writes up to `max_outputs` images of a `[k, h, w, c]` batch (c = 1, 3 or 4) as PNGs.

    Raises:
      ValueError: `data` is not of rank 4.
    """
    tensor = _as_tensor(data)
    shape = tuple(tensor.shape)
    if len(shape) != 4:
        raise ValueError(f"Tensor  must have rank 4.  Received rank {len(shape)}, shape {shape}")
    limit = int(max_outputs)

    def build(value: np.ndarray) -> SummaryValue:
        pixels = _to_uint8(np.asarray(value)[: max(limit, 0)])
        strings = [str(shape[2]).encode(), str(shape[1]).encode()] + [encode_png(p) for p in pixels]
        out = SummaryValue(metadata=_metadata("images", description))
        out.tensor.CopyFrom(tensor_proto(np.array(strings, dtype=object), DT_STRING))
        return out

    return _summary(name, build, tensor, step)


def _wav(samples: np.ndarray, rate: int) -> bytes:
    """16-bit PCM WAV bytes of float `[samples, channels]` audio in [-1, 1] (as `tf.audio.encode_wav`)."""
    count, channels = samples.shape
    pcm = np.clip(np.round(samples.astype(np.float32) * np.float32(32768.0)), -32768, 32767).astype("<i2").tobytes()
    fmt = struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + len(pcm))
        + b"WAVE"
        + b"fmt "
        + fmt
        + b"data"
        + struct.pack("<I", len(pcm))
        + pcm
    )


def audio(
    name: str,
    data: Any,
    sample_rate: Any,
    step: Any = None,
    max_outputs: int = 3,
    encoding: Any = None,
    description: str | None = None,
) -> Tensor:
    """Writes up to `max_outputs` clips of a `[k, samples, channels]` float batch as WAV, for TensorBoard.

    Raises:
      ValueError: `data` is not of rank 3, or `encoding` is not "wav".
    """
    if encoding not in (None, "wav"):
        raise ValueError(f"Unknown encoding: {encoding!r}")
    tensor = _numeric(data, "float")
    shape = tuple(tensor.shape)
    if len(shape) != 3:
        raise ValueError(f"Shapes must be equal rank, but are {len(shape)} and 3")
    rate = int(np.asarray(_as_tensor(sample_rate).numpy()))
    limit = int(max_outputs)

    def build(value: np.ndarray) -> SummaryValue:
        clips = np.asarray(value, np.float32)[: max(limit, 0)]
        strings = np.empty((len(clips), 2), dtype=object)
        for i, clip in enumerate(clips):
            strings[i] = (_wav(clip, rate), b"")
        out = SummaryValue(metadata=_metadata("audio", description, content=b"\x10\x0b"))  # encoding: WAV
        out.tensor.CopyFrom(tensor_proto(strings, DT_STRING))
        return out

    return _summary(name, build, tensor, step)


def _strings(data: Any) -> np.ndarray:
    if hasattr(data, "numpy") and not isinstance(data, np.ndarray):
        data = data.numpy()
    array = np.asarray(data, dtype=object)
    flat = [v.encode("utf-8") if isinstance(v, str) else v for v in array.reshape(-1)]
    if not all(isinstance(v, bytes) for v in flat):
        raise TypeError(f"text summaries take strings; got {data!r}")
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(array.shape)


def text(name: str, data: Any, step: Any = None, description: str | None = None) -> Tensor:
    """Writes a string tensor (of any shape) for TensorBoard's text dashboard."""
    strings = _strings(data)

    def build(value: np.ndarray) -> SummaryValue:
        out = SummaryValue(metadata=_metadata("text", description))
        out.tensor.CopyFrom(tensor_proto(value, DT_STRING))
        return out

    return _summary(name, build, strings, step)


def write(tag: str, tensor: Any, step: Any = None, metadata: Any = None, name: str | None = None) -> Tensor:
    """Writes `tensor` under `tag` with the given `SummaryMetadata` (a message or its serialized bytes)."""
    if callable(tensor):
        tensor = tensor()
    data: Any = _strings(tensor) if _is_string_like(tensor) else _as_tensor(tensor)
    if metadata is None:
        meta_bytes = b""
    elif isinstance(metadata, bytes):
        meta_bytes = metadata
    else:
        meta_bytes = metadata.SerializeToString()

    def build(value: np.ndarray) -> SummaryValue:
        out = SummaryValue()
        out.metadata.MergeFromString(meta_bytes)
        value = np.asarray(value)
        enum = DT_STRING if value.dtype == object else dtypes.as_dtype(value.dtype).as_datatype_enum
        out.tensor.CopyFrom(tensor_proto(value, enum))
        return out

    return _summary(tag, build, data, step)


def write_raw_pb(tensor: Any, step: Any = None, name: str | None = None) -> Tensor:
    """Writes serialized `Summary` protocol buffers (a string scalar or vector) as they are, one event each.

    Raises:
      ValueError: no step is set.
    """
    strings = _strings(tensor)

    def build(value: np.ndarray) -> list:
        return [Summary.FromString(bytes(item)) for item in np.asarray(value, dtype=object).reshape(-1)]

    return _summary("", build, strings, step)


def _is_string_like(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "OSU"
    if isinstance(value, (list, tuple)) and value:
        return isinstance(value[0], (str, bytes))
    return getattr(getattr(value, "dtype", None), "is_string", False)


_NOTE = "event files TF's summary_iterator reads; in tapeshim.function an ordered host callback per call"
table.export("summary.scalar", gradient="-", dtypes="floating, integer", note=_NOTE)(scalar)
table.export(
    "summary.histogram", gradient="-", dtypes="floating, integer", note="TensorBoard's bucketing, computed on the host"
)(histogram)
table.export(
    "summary.image", gradient="-", dtypes="floating, integer", note="PNG bytes differ from TF's, pixels equal"
)(image)
table.export("summary.audio", gradient="-", dtypes="floating", note="16-bit PCM WAV, as TF")(audio)
table.export("summary.text", gradient="-", dtypes="string", note="string data fixed when traced")(text)
table.export("summary.write", gradient="-", dtypes=table.ANY, note=_NOTE)(write)
