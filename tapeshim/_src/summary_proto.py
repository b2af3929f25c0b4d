"""TensorBoard's event-file messages (`event.proto`, `summary.proto`, `tensor.proto`) and the event-file writer.

Event files are TFRecord files of serialized `Event`s; the first holds the file
version (`brain.Event:2`), the rest one `Summary` each.
"""

from __future__ import annotations

import atexit
import os
import socket
import threading
import time
import weakref
import zlib
from typing import Any

import jax
import numpy as np

from tapeshim._src.io.proto import Field, Message
from tapeshim._src.io.records import frame

# TF's DataType enum values for the dtypes summaries write.
DT_FLOAT, DT_DOUBLE, DT_INT32, DT_STRING, DT_INT64 = 1, 2, 3, 7, 9


class Dim(Message):
    FIELDS = (Field("size", 1, "int64"), Field("name", 2, "string"))


class TensorShapeProto(Message):
    FIELDS = (Field("dim", 2, "message", repeated=True, message=lambda: Dim), Field("unknown_rank", 3, "bool"))


class TensorProto(Message):
    FIELDS = (
        Field("dtype", 1, "enum"),
        Field("tensor_shape", 2, "message", message=lambda: TensorShapeProto),
        Field("version_number", 3, "int32"),
        Field("tensor_content", 4, "bytes"),
        Field("float_val", 5, "float", repeated=True, packed=True),
        Field("double_val", 6, "double", repeated=True, packed=True),
        Field("int_val", 7, "int32", repeated=True, packed=True),
        Field("string_val", 8, "bytes", repeated=True),
        Field("int64_val", 10, "int64", repeated=True, packed=True),
        Field("bool_val", 11, "bool", repeated=True, packed=True),
    )


class PluginData(Message):
    FIELDS = (Field("plugin_name", 1, "string"), Field("content", 2, "bytes"))


class SummaryMetadata(Message):
    FIELDS = (
        Field("plugin_data", 1, "message", message=lambda: PluginData),
        Field("display_name", 2, "string"),
        Field("summary_description", 3, "string"),
        Field("data_class", 4, "enum"),
    )


class SummaryValue(Message):
    """`Summary.Value`: a tag and its data (TF2 summaries write `tensor` plus plugin `metadata`)."""

    FIELDS = (
        Field("tag", 1, "string"),
        Field("simple_value", 2, "float", oneof="value"),
        Field("node_name", 7, "string"),
        Field("tensor", 8, "message", message=lambda: TensorProto, oneof="value"),
        Field("metadata", 9, "message", message=lambda: SummaryMetadata),
    )


class Summary(Message):
    FIELDS = (Field("value", 1, "message", repeated=True, message=lambda: SummaryValue),)


class SourceMetadata(Message):
    FIELDS = (Field("writer", 1, "string"),)


class Event(Message):
    FIELDS = (
        Field("wall_time", 1, "double"),
        Field("step", 2, "int64"),
        Field("file_version", 3, "string", oneof="what"),
        Field("graph_def", 4, "bytes", oneof="what"),
        Field("summary", 5, "message", message=lambda: Summary, oneof="what"),
        Field("source_metadata", 10, "message", message=lambda: SourceMetadata),
    )


def tensor_proto(array: np.ndarray, dtype_enum: int) -> TensorProto:
    """A `TensorProto` of `array`: numbers as little-endian `tensor_content`, strings as `string_val`."""
    proto = TensorProto(dtype=dtype_enum)
    for size in array.shape:
        proto.tensor_shape.dim.add(size=int(size))
    proto._touch(TensorProto._BY_NAME["tensor_shape"])
    if dtype_enum == DT_STRING:
        proto.string_val.extend([bytes(v) for v in array.reshape(-1)])
    else:
        proto.tensor_content = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    return proto


def encode_png(image: np.ndarray) -> bytes:
    """A PNG of an `[h, w, c]` uint8 image (c = 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA)."""
    height, width, channels = image.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = np.concatenate([np.zeros((height, 1), np.uint8), image.reshape(height, width * channels)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + (zlib.crc32(body) & 0xFFFFFFFF).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, color_type, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes()))
        + chunk(b"IEND", b"")
    )


_WRITER_IDS = iter(range(1 << 62))
_WRITER_IDS_LOCK = threading.Lock()
_OPEN_WRITERS: "weakref.WeakSet[EventFileWriter]" = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    """Flushes and closes every open event file when the interpreter exits (TF's writers flush when destroyed).

    Closed here, a writer collected later, while the interpreter tears its modules down, has nothing left to do.
    """
    writers = list(_OPEN_WRITERS)
    if writers:
        try:
            jax.effects_barrier()  # summaries still on their way from compiled code's host callbacks
        except RuntimeError:  # JAX's backends already shut down: nothing of theirs is pending
            pass
    for writer in writers:
        writer.close()


class EventFileWriter:
    """Appends `Event`s to a new `events.out.tfevents.*` file in `logdir`.

    Events are buffered and reach the file every `max_queue` events, every
    `flush_millis` milliseconds (checked when an event is added), and on `flush`.
    """

    def __init__(
        self, logdir: str, max_queue: int = 10, flush_millis: int = 120_000, filename_suffix: str = ".v2"
    ) -> None:
        os.makedirs(logdir, exist_ok=True)
        with _WRITER_IDS_LOCK:
            serial = next(_WRITER_IDS)
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.{serial}"
        self.path = os.path.join(logdir, name + (filename_suffix or ""))
        self._file: Any = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()
        self._pending: list[bytes] = []
        self._max_queue = max(int(max_queue), 1)
        self._flush_seconds = flush_millis / 1000.0
        self._now = time.time  # bound here: `__del__` may run after the module's globals are gone
        self._last_flush = self._now()
        _OPEN_WRITERS.add(self)
        first = Event(wall_time=time.time(), file_version="brain.Event:2")
        first.source_metadata.writer = "tapeshim"
        self.add(first)
        self.flush()

    def add(self, event: Event) -> None:
        """Queues one event."""
        with self._lock:
            if self._file is None:
                return
            self._pending.append(frame(event.SerializeToString()))
            due = len(self._pending) >= self._max_queue or self._now() - self._last_flush >= self._flush_seconds
        if due:
            self.flush()

    def flush(self) -> None:
        """Writes the queued events to the file."""
        with self._lock:
            if self._file is None:
                return
            self._file.write(b"".join(self._pending))
            self._pending.clear()
            self._file.flush()
            self._last_flush = self._now()

    def __del__(self) -> None:
        if getattr(self, "_file", None) is not None:
            self.close()

    def close(self) -> None:
        """Flushes and closes the file."""
        self.flush()
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
