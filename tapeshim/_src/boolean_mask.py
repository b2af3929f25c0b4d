"""Boolean masks: `tf.boolean_mask(x, mask, axis)` and `x[mask]`, as TF 2.21.

TF's `__getitem__` hands a bool tensor, a numpy bool array or a Python bool to
`tf.boolean_mask`. The result's size depends on the mask's values; XLA needs
static shapes, so the mask's values must be known when the op runs: eagerly, or
under a recording tape (the mask is forced), or inside `tapeshim.function` when
the mask is computed from constants. A mask only known when the compiled function
runs makes the function run eagerly for those argument types (`ValueNeededByAnOp`:
TF's graph gives the result an unknown size).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src import errors, static_value
from tapeshim._src.dynamic_shapes import ValueNeededByAnOp
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tf_logging import caller_site
from tapeshim._src.typing_aliases import AxisLike, TensorLike


def is_mask_key(key: Any) -> bool:
    """Whether `tensor[key]` is boolean-mask indexing in TF: a bool tensor, numpy bool array or Python bool."""
    if key.__class__ is bool:
        return True
    if isinstance(key, Tensor):
        return key._dtype.is_bool
    return isinstance(key, np.ndarray) and key.dtype == np.bool_


def _static_axis(axis: Any) -> int:
    if isinstance(axis, Tensor):
        known = static_value.known_value(axis)
        if known is None or np.ndim(known) != 0:
            raise TypeError(f"`axis` of tf.boolean_mask must be a known scalar integer, got {axis!r}")
        return int(known)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"`axis` of tf.boolean_mask must be an integer, got {axis!r}")
    return int(axis)


def _mask_positions(mask: Tensor) -> np.ndarray:
    """The flat positions where `mask` is nonzero, as int64 (the mask's value must be known now)."""
    known = static_value.known_value(mask)
    if known is None:
        message = (
            "tf.boolean_mask (and indexing a tensor with a boolean mask) needs the mask's values to size its "
            "result, and this mask is only known when the compiled tapeshim.function runs: XLA programs have "
            "static shapes. Compute the mask outside the function, or keep the shape with "
            "`tf.where(mask, x, tf.zeros_like(x))`."
        )
        if _thread_state.trace is None:
            raise errors.OperatorNotAllowedInGraphError(message)
        # (TF's graph gives the result an unknown size: the function runs eagerly for these argument types)
        filename, line = caller_site()
        raise ValueNeededByAnOp(message, f"tf.boolean_mask needs its mask's values at {filename}, line {line}")
    return np.flatnonzero(np.asarray(known).reshape(-1)).astype(np.int64)


def boolean_mask(tensor: TensorLike, mask: TensorLike, axis: AxisLike = None) -> Tensor:
    """The elements (or slices along `axis`) of `tensor` where `mask` is true.

    Args:
      tensor: The tensor to select from, of rank at least `axis + rank(mask)`.
      mask: A tensor (or nested list) whose shape matches `tensor`'s dimensions
        `axis` to `axis + rank(mask)`; nonzero entries are selected.
      axis: The first dimension the mask covers (Python slicing semantics for
        negative values, as TF); 0 when None.

    Returns:
      `tensor` with the masked dimensions flattened into one, keeping the selected entries.

    Raises:
      ValueError: if the mask is a scalar or its shape does not match `tensor`'s.
      OperatorNotAllowedInGraphError: if the mask's values are only known when a
        compiled function runs.
    """
    from tapeshim._src.ops import array_ops  # import cycle: boolean_mask <-> array_ops (its indexing)

    x, m = convert_to_tensor(tensor), convert_to_tensor(mask)
    mask_rank = len(m._shape)
    if mask_rank == 0:
        raise ValueError("mask cannot be scalar.")
    axis = 0 if axis is None else _static_axis(axis)
    covered = tuple(x._shape[axis : axis + mask_rank])
    if covered != tuple(m._shape):
        raise ValueError(f"Shapes {TensorShape(covered)} and {TensorShape(tuple(m._shape))} are incompatible")
    axis %= len(x._shape)
    flat_shape = list(x._shape[:axis]) + [-1] + list(x._shape[axis + mask_rank :])
    positions = _mask_positions(m)
    return array_ops.gather(array_ops.reshape(x, flat_shape), constant(positions), axis=axis)


def all_python_bools(key: tuple) -> bool:
    """Whether an index tuple holds only Python bools (TF packs them into a bool index tensor and refuses it)."""
    return bool(key) and all(item.__class__ is bool for item in key)


def bool_index_error() -> Exception:
    return errors.invalid_argument(
        "Value for attr 'Index' of bool is not in the list of allowed values: int16, int32, int64", "StridedSlice"
    )
