"""`tf.print`: prints at call time, eagerly or on every call of a compiled function."""

from __future__ import annotations

import sys
from typing import Any, Callable, Hashable, TextIO

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import api_compat_v1_logging as v1_logging
from tapeshim._src import dtypes, registry
from tapeshim._src.distribute import context as distribute_context
from tapeshim._src.ops import table
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor
from tapeshim._src.tf_logging import get_logger
from tapeshim._src.typing_aliases import TensorLike


def _format_float(value: Any, double: bool) -> str:
    """TF's text for one float: `%.6g` (`%.15g` for float64) when it reads back as the same value,
    else `%.9g` (`%.17g`), as TF's FloatToBuffer/DoubleToBuffer; float16 and bfloat16 print as float32."""
    if not np.isfinite(value):
        return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    short, full = (15, 17) if double else (6, 9)
    text = f"{float(value):.{short}g}"
    same = float(text) == float(value) if double else np.float32(text) == np.float32(value)
    return text if same else f"{float(value):.{full}g}"


def _format_array(array: np.ndarray, summarize: int) -> str:
    """TF's text for a tensor value: `[1 2 3]`, `[[1.5 2]\\n [3 4]]`, floats as TF's FloatToBuffer."""
    if array.dtype.kind == "O":  # tf.string: each element quoted, as TF prints it

        def quoted(v: Any) -> str:
            return '"' + (v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else str(v)) + '"'

        if array.ndim == 0:
            return quoted(array[()])
        element: Callable[[Any], str] = quoted
    elif array.dtype.kind == "b":
        element = lambda v: "1" if v else "0"  # noqa: E731
    elif array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        double = array.dtype.itemsize == 8
        if not double:
            array = array.astype(np.float32)
        element = lambda v: _format_float(v, double)  # noqa: E731
    else:
        element = lambda v: f"{v}"  # noqa: E731
    threshold = 0 if summarize >= 0 else sys.maxsize
    return np.array2string(
        array,
        separator=" ",
        formatter={"bool": element} if array.dtype.kind == "b" else {"all": element},
        threshold=threshold,
        edgeitems=max(summarize, 1),
        max_line_width=sys.maxsize,
    )


def _render(parts: list, arrays: list, sep: str, summarize: int) -> str:
    values = iter(arrays)
    texts = []
    for part in parts:
        texts.append(_format_array(np.asarray(next(values)), summarize) if part is None else str(part))
    return sep.join(texts)


_LOG_LEVELS: dict[Any, int] = {
    v1_logging.info: v1_logging.INFO,
    v1_logging.INFO: v1_logging.INFO,
    v1_logging.warning: v1_logging.WARN,
    v1_logging.warn: v1_logging.WARN,
    v1_logging.WARN: v1_logging.WARN,
    v1_logging.error: v1_logging.ERROR,
    v1_logging.ERROR: v1_logging.ERROR,
}


def _writer(output_stream: Any) -> Callable[[str], None]:
    """Where `tf.print` writes, as TF allows: `sys.stdout`, `sys.stderr` (the default, looked up when it
    prints), a `tf.compat.v1.logging` level or function, or a `file://<path>` to append to.

    Raises:
      ValueError: for any other `output_stream` (TF's message).
    """
    if output_stream is None:
        return lambda text: _write(sys.stderr, text)
    if output_stream is sys.stdout or output_stream is sys.stderr:
        return lambda text: _write(output_stream, text)
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        path = output_stream[len("file://") :]

        def append(text: str) -> None:
            with open(path, "a", encoding="utf-8") as file:
                file.write(text)

        return append
    level = _LOG_LEVELS.get(output_stream) if isinstance(output_stream, Hashable) else None
    if level is not None:
        return lambda text: get_logger().log(level, text.rstrip("\n"))
    raise ValueError(
        f"Unsupported output stream, logging level, or file.{output_stream}. Supported streams are sys.stdout, "
        "sys.stderr, tf.logging.info, tf.logging.warning, tf.logging.error. File needs to be in the form of "
        "'file://<filepath>'."
    )


def _write(stream: TextIO, text: str) -> None:
    stream.write(text)
    stream.flush()


def ordered_effects() -> bool:
    """Whether a traced print is an ordered effect: JAX refuses them in a program over several devices, where
    each replica prints in no fixed order between replicas (as TF's MirroredStrategy)."""
    replica = distribute_context.current_replica_context()
    return replica is None or replica.num_replicas_in_sync <= 1


def print_v2(
    *inputs: TensorLike,
    output_stream: TextIO | str | int | Callable[..., Any] | None = None,
    summarize: int = 3,
    sep: str = " ",
    end: str = "\n",
    name: str | None = None,
) -> None:
    """Prints tensors and Python values, as `tf.print`.

    Eagerly it prints at once; inside `tapeshim.function` it prints every time
    the compiled function runs. Tensors print as TF prints them (`[1 2 3]`),
    summarized to `summarize` elements at each end of an axis (-1: all).

    Args:
      *inputs: tensors, variables and Python values.
      output_stream: where to print, as TF allows: `sys.stderr` (the default),
        `sys.stdout`, a `tf.compat.v1.logging` function or level (info, warning,
        error), or `"file://<path>"` (appended to).
      summarize: elements shown at each end of each axis.
      sep: the separator between inputs.
      end: printed after the last input.
    """
    parts: list = []
    tensors: list[Tensor] = []
    for value in inputs:
        if isinstance(value, Tensor) or hasattr(value, "_read_for_op"):
            parts.append(None)
            tensors.append(value if isinstance(value, Tensor) else value._read_for_op())
        else:
            parts.append(value)

    write = _writer(output_stream)

    def emit(*arrays: Any) -> None:
        write(_render(parts, list(arrays), sep, summarize) + end)

    trace = _thread_state.trace
    if trace is None:
        values = [t.value for t in tensors]
        if any(isinstance(v, jax.core.Tracer) for v in values):
            # Inside a JAX trace that is not a function's (a custom gradient's grad_fn, which TF runs eagerly at
            # the gradient, traced into the gradient program): it prints when the program runs.
            jax.debug.callback(emit, *values, ordered=ordered_effects())
        else:
            emit(*values)
        return

    ordered = ordered_effects()  # (where the print is recorded: its replica context)

    def effect(*arrays: jax.Array) -> jax.Array:
        jax.debug.callback(emit, *arrays, ordered=ordered)
        return jnp.zeros((), jnp.int32)

    (token,) = registry.record(
        lambda *arrays: (effect(*arrays),), ("PrintV2", id(effect)), tuple(tensors), (((), dtypes.int32),), []
    )
    trace.effects.append(token)


table.export("print", gradient="-", dtypes=table.ANY, note="prints to stderr on every call, also compiled")(print_v2)
