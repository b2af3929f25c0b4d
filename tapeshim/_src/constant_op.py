"""`tf.constant`, the public op: TF's refusals of tensors where a constant needs Python or NumPy values.

`tensor.constant` makes the constant; tapeshim's own code calls it with tensors too (inside traces as well).
The public `tf.constant` first refuses what TF 2.21 refuses (observed):

- a list or tuple holding a tensor or a variable, at any depth: eagerly TF's `ValueError` (its converter
  asks the tensor for a `len()`: "TypeError: Scalar tensor has no `len()`", or a variable's "object of type
  'ResourceVariable' has no len()"); inside a `tf.function` a tensor is TF's `TypeError` ("Expected any
  non-tensor type, but got a tensor instead.") and a variable its `NotImplementedError` (`numpy()` of a
  variable in a graph). `tf.convert_to_tensor` packs such lists, in both modes;
- inside a `tf.function`, a tensor the function made (a graph tensor: an argument or an op's result):
  `TypeError`; a tensor made outside it (a captured eager tensor) is a constant's value, as eagerly;
- inside a `tf.function`, a variable: `NotImplementedError`.
"""

from __future__ import annotations

from typing import Any, Sequence

from tapeshim._src.function_trace import FunctionTrace
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor
from tapeshim._src.tensor import constant as _make_constant
from tapeshim._src.typing_aliases import DTypeLike

_IN_GRAPH_TENSOR = "Expected any non-tensor type, but got a tensor instead."
_IN_GRAPH_VARIABLE = "numpy() is only available when eager execution is enabled."


def constant(
    value: Any, dtype: DTypeLike | None = None, shape: Sequence[int] | None = None, name: str | None = None
) -> Tensor:
    """Creates a constant tensor from a Python or NumPy value, as `tf.constant`.

    Args:
      value: a Python scalar or (nested) list of them, a NumPy array, or a tensor (eagerly, or one made
        outside the `tf.function` being traced).
      dtype: the result's dtype; Python and NumPy values are converted to it (a tensor of another dtype is
        TF's `TypeError`).
      shape: an optional shape; a single value is broadcast to it, a value with as many elements reshaped.
      name: ignored.

    Returns:
      A concrete `Tensor`.

    Raises:
      ValueError: eagerly, a list or tuple holding a tensor or a variable (as TF).
      TypeError: inside a `tf.function`, a tensor the function made, or a list or tuple holding any tensor;
        a value that does not convert to `dtype`.
      NotImplementedError: inside a `tf.function`, a variable, or a list or tuple holding one.
    """
    trace = _thread_state.trace
    in_graph = isinstance(trace, FunctionTrace)
    if isinstance(value, (list, tuple)):
        held = _held_tensor(value)
        if held is not None:
            _refuse_held(held, in_graph)
    elif in_graph:
        if isinstance(value, Tensor) and (value._tid >= trace.first_tid or trace.is_symbolic(value)):
            raise TypeError(_IN_GRAPH_TENSOR)
        if not isinstance(value, Tensor) and hasattr(value, "_read_for_op"):
            raise NotImplementedError(_IN_GRAPH_VARIABLE)
    return _make_constant(value, dtype, shape, name)


_PLAIN_TYPES = frozenset({float, int, bool, complex, str, bytes, type(None)})
"""Element types that are neither tensors nor sequences: a list of only these is skipped in one C-level pass
(`set(map(type, ...))`), where a Python loop over a large list's numbers cost more than its conversion."""


def _held_tensor(value: list | tuple) -> Any:
    """The first tensor or variable a (nested) list or tuple holds, depth first; None if it holds none."""
    if set(map(type, value)) <= _PLAIN_TYPES:
        return None
    for item in value:
        if item.__class__ in _PLAIN_TYPES:
            continue
        if isinstance(item, Tensor) or hasattr(item, "_read_for_op"):
            return item
        if isinstance(item, (list, tuple)):
            found = _held_tensor(item)
            if found is not None:
                return found
    return None


def _refuse_held(held: Any, in_graph: bool) -> None:
    """TF's error for a list holding `held`, a tensor or a variable (see the module docstring)."""
    is_variable = not isinstance(held, Tensor)
    if in_graph:
        raise NotImplementedError(_IN_GRAPH_VARIABLE) if is_variable else TypeError(_IN_GRAPH_TENSOR)
    reason = "object of type 'ResourceVariable' has no len()" if is_variable else "Scalar tensor has no `len()`"
    raise ValueError(f"TypeError: {reason}")
