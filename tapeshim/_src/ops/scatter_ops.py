"""`tf.tensor_scatter_nd_max`, `tensor_scatter_nd_min`, `tensor_scatter_nd_sub` (the update/add forms are in
`manip_ops.py`): JAX's `.at[...].max/min/add`, with the same checks of indices and shapes."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from tapeshim._src import runtime_checks
from tapeshim._src.ops import table
from tapeshim._src.ops.common import attr_error, static_error
from tapeshim._src.ops.manip_ops import _index_static
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _impl(
    tensor: jax.Array, indices: jax.Array, updates: jax.Array, mode: str, op_name: str, checked: bool = False
) -> jax.Array:
    if checked:
        runtime_checks.check_vectors_traced(indices, tensor.shape, op_name)
    where = tuple(jnp.moveaxis(indices, -1, 0))
    if mode == "max":
        return tensor.at[where].max(updates)
    if mode == "min":
        return tensor.at[where].min(updates)
    return tensor.at[where].add(-updates)


_op = OpDef("TensorScatterMinMaxSub", _impl, True)


def _scatter(tensor: Any, indices: Any, updates: Any, mode: str, op_name: str) -> Tensor:
    t = convert_to_tensor(tensor)
    i = convert_to_tensor(indices)
    u = convert_to_tensor(updates, dtype_hint=t.dtype)
    if u.dtype != t.dtype:
        raise attr_error(
            f"cannot compute {op_name} as input #2(zero-based) was expected to be a {t.dtype.name} "
            f"tensor but is a {u.dtype.name} tensor",
            op_name,
        )
    if not i.dtype.is_integer:
        raise attr_error(
            f"Value for attr 'Tindices' of {i.dtype.name} is not in the list of allowed values: int16, int32, int64",
            op_name,
        )
    if mode != "sub" and (t.dtype.is_complex or t.dtype.is_bool):
        raise attr_error(f"Value for attr 'T' of {t.dtype.name} is not in the list of allowed values", op_name)
    depth = i._shape[-1] if i._shape else 0
    expected = tuple(i._shape[:-1]) + tuple(t._shape[depth:])
    if depth > len(t._shape) or tuple(u._shape) != expected:
        raise static_error(
            f"updates has shape [{','.join(map(str, u._shape))}] but indices of shape "
            f"[{','.join(map(str, i._shape))}] into a tensor of shape [{','.join(map(str, t._shape))}] need "
            f"updates of shape [{','.join(map(str, expected))}]",
            op_name,
        )
    static = (("mode", mode), ("op_name", op_name)) + _index_static(i, t._shape, op_name)
    return apply(_op, (t, i, u), static)[0]


@table.export("tensor_scatter_nd_max", dtypes=table.REAL)
def tensor_scatter_nd_max(
    tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: str | None = None
) -> Tensor:
    """`tensor` with each element at `indices` replaced by its maximum with `updates`."""
    return _scatter(tensor, indices, updates, "max", "TensorScatterMax")


@table.export("tensor_scatter_nd_min", dtypes=table.REAL)
def tensor_scatter_nd_min(
    tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: str | None = None
) -> Tensor:
    """`tensor` with each element at `indices` replaced by its minimum with `updates`."""
    return _scatter(tensor, indices, updates, "min", "TensorScatterMin")


@table.export("tensor_scatter_nd_sub", dtypes=table.NUMERIC)
def tensor_scatter_nd_sub(
    tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: str | None = None
) -> Tensor:
    """`tensor` with `updates` subtracted at `indices`."""
    return _scatter(tensor, indices, updates, "sub", "TensorScatterSub")
