"""`tf.print`: prints at call time, eagerly or on every call of a compiled function."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src.ops import table
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor


def _format_array(array: np.ndarray, summarize: int) -> str:
    """TF's text for a tensor value: `[1 2 3]`, `[[1.5 2]\\n [3 4]]`, floats as `%g`."""
    if array.dtype.kind == "b":
        formatter = {"bool": lambda v: "1" if v else "0"}
    elif array.dtype.kind in "fc":
        formatter = {"all": lambda v: f"{v:g}" if not isinstance(v, complex) else f"{v}"}
    else:
        formatter = {"all": lambda v: f"{v}"}
    threshold = 0 if summarize >= 0 else sys.maxsize
    return np.array2string(array, separator=" ", formatter=formatter, threshold=threshold,
                           edgeitems=max(summarize, 1), max_line_width=sys.maxsize)


def _render(parts: list, arrays: list, sep: str, summarize: int) -> str:
    values = iter(arrays)
    texts = []
    for part in parts:
        texts.append(_format_array(np.asarray(next(values)), summarize) if part is None else str(part))
    return sep.join(texts)


def print_v2(*inputs: Any, output_stream: TextIO | None = None, summarize: int = 3, sep: str = " ",
             end: str = "\n", name: str | None = None) -> None:
    """Prints tensors and Python values, as `tf.print`.

    Eagerly it prints at once; inside `tapeshim.function` it prints every time
    the compiled function runs. Tensors print as TF prints them (`[1 2 3]`),
    summarized to `summarize` elements at each end of an axis (-1: all).

    Args:
      *inputs: tensors, variables and Python values.
      output_stream: where to print (default `sys.stderr`, as TF).
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

    def emit(*arrays: Any) -> None:
        stream = output_stream if output_stream is not None else sys.stderr
        stream.write(_render(parts, list(arrays), sep, summarize) + end)
        stream.flush()

    trace = _thread_state.trace
    if trace is None:
        emit(*[t.value for t in tensors])
        return

    def effect(*arrays: jax.Array) -> jax.Array:
        jax.debug.callback(emit, *arrays, ordered=True)
        return jnp.zeros((), jnp.int32)

    from tapeshim._src import dtypes, registry

    (token,) = registry.record(lambda *arrays: (effect(*arrays),), ("PrintV2", id(effect)), tuple(tensors),
                               (((), dtypes.int32),), [])
    trace.effects.append(token)


table.export("print", gradient="-", dtypes=table.ANY, note="prints to stderr on every call, also compiled")(print_v2)
