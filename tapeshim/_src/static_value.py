"""Values known while tracing: `tf.shape(x)[0]` used as a dimension inside `tapeshim.function`.

TF code passes shape tensors where a shape is expected (`tf.reshape(x, (tf.shape(x)[0], -1))`,
`tf.random.normal(shape=(batch, dim))`); TF builds a dynamic-shape op. XLA needs static
shapes, and tapeshim traces a function once per input shape, so such a tensor's value is
known while tracing whenever it is computed from constants alone (`tf.shape` of a traced
tensor is a constant). `resolve` gives shape arguments those values, the way TF's
`tensor_util.constant_value` folds shape tensors. A value that depends on a function's
arguments, variables or random draws stays symbolic (TF's error follows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import jax
import numpy as np

from tapeshim._src import symbolic_values
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor

if TYPE_CHECKING:
    from tapeshim._src.function_trace import FunctionTrace


def walk(tensor: Tensor, visit: Callable[[Tensor], bool | None]) -> bool:
    """Visits `tensor` and the tensors its value is computed from, each once; `visit(t)` says whether to go on
    to `t`'s inputs (True), not (False), or to stop the walk (None). Returns False when a visit stopped it."""
    pending, seen = [tensor], set()
    while pending:
        current = pending.pop()
        if current._tid in seen:
            continue
        seen.add(current._tid)
        expand = visit(current)
        if expand is None:
            return False
        if expand and current._node is not None:
            pending.extend(current._node.inputs)
    return True


def from_constants_only(tensor: Tensor, trace: FunctionTrace, ops: frozenset | None = None) -> bool:
    """Whether `tensor` (recorded in `trace`) is computed from concrete tensors that are not placeholders.

    Args:
      tensor: the tensor.
      trace: the function trace that recorded it.
      ops: when given, every op on the way must also be one of these TF op names.
    """

    def visit(current: Tensor) -> bool | None:
        if current._tid in trace.placeholders:
            return None
        node = current._node
        if node is None:
            return None if current._value is None else False
        if ops is not None and node.op_type not in ops:
            return None
        return True

    return walk(tensor, visit)


def known_value(tensor: Tensor) -> np.ndarray | None:
    """The value of `tensor` if it is known now (eagerly, or while tracing from constants alone), else None."""
    trace = _thread_state.trace
    if isinstance(tensor._value, jax.core.Tracer):
        return None  # a value inside a JAX transformation
    if trace is None or not trace.is_symbolic(tensor):
        return np.asarray(tensor.value)
    if tensor._tid in trace.placeholders:
        return None
    if not from_constants_only(tensor, trace):
        # In a trace for every size, `tf.shape(x)` arithmetic is known as symbolic dimensions.
        return symbolic_values.value_of(tensor, trace) if trace.symbolic else None
    return np.asarray(trace.concrete_value(tensor))


def resolve(value: Any) -> Any:
    """`value` (a shape-like argument) with tensors whose values are known replaced by numpy values."""
    if isinstance(value, Tensor):
        known = known_value(value)
        if known is not None and known.dtype == object and known.ndim == 0:
            return known.item()  # a symbolic dimension
        return value if known is None else known
    if isinstance(value, (list, tuple)):
        resolved = [resolve(v) for v in value]
        return resolved if isinstance(value, list) else tuple(resolved)
    return value
