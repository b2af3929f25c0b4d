"""`tf.broadcast_static_shape` (on `TensorShape`s) and `tf.broadcast_dynamic_shape` (TF's `BroadcastArgs`, on
shape vectors)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors, runtime_checks
from tapeshim._src.ops import table
from tapeshim._src.ops.common import attr_error, convert_same_dtype, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor
from tapeshim._src.typing_aliases import TensorLike


def _dims(shape: Any, argument: str) -> list[int | None] | None:
    if not isinstance(shape, TensorShape):
        # (TF reads `shape.ndims`: anything else fails there.)
        raise AttributeError(
            f"'{type(shape).__name__}' object has no attribute 'ndims': `{argument}` must be a `tf.TensorShape`"
        )
    return shape.dims


@table.export("broadcast_static_shape", gradient="-", dtypes="-")
def broadcast_static_shape(shape_x: TensorShape, shape_y: TensorShape) -> TensorShape:
    """The shape two tensors of the static shapes `shape_x` and `shape_y` broadcast to.

    An unknown dimension meeting a known one larger than 1 takes it (TF assumes the program is right); meeting
    1 or another unknown one, it stays unknown. An unknown rank gives an unknown shape.

    Args:
      shape_x: a `tf.TensorShape`.
      shape_y: a `tf.TensorShape`.

    Returns:
      The broadcast `tf.TensorShape`.

    Raises:
      AttributeError: if an argument is not a `tf.TensorShape` (as TF).
      ValueError: if the shapes do not broadcast.
    """
    dims_x, dims_y = _dims(shape_x, "shape_x"), _dims(shape_y, "shape_y")
    if dims_x is None or dims_y is None:
        return TensorShape(None)
    rank = max(len(dims_x), len(dims_y))
    padded_x = [1] * (rank - len(dims_x)) + list(dims_x)
    padded_y = [1] * (rank - len(dims_y)) + list(dims_y)
    result: list[int | None] = []
    for x, y in zip(padded_x, padded_y):
        if x is None or y is None:
            result.append(x if x is not None and x > 1 else y if y is not None and y > 1 else None)
        elif x == 1 or x == y:
            result.append(y)
        elif y == 1:
            result.append(x)
        else:
            raise ValueError(
                "Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension pair they "
                f"are either equal or one of them is 1. Received: {shape_x} and {shape_y}."
            )
    return TensorShape(result)


def _padded(vector: jax.Array, rank: int) -> jax.Array:
    return jnp.concatenate([jnp.ones((rank - vector.shape[0],), vector.dtype), vector])


def _broadcast_args_impl(x: jax.Array, y: jax.Array, checked: bool = False) -> jax.Array:
    rank = max(x.shape[0], y.shape[0])
    x, y = _padded(x, rank), _padded(y, rank)
    if checked:
        runtime_checks.require(
            jnp.all((x == y) | (x == 1) | (y == 1)), "Incompatible shapes for BroadcastArgs [Op:BroadcastArgs]"
        )
    return jnp.where(x == 1, y, x)


_broadcast_args_op = OpDef("BroadcastArgs", _broadcast_args_impl, False)


def _host_check(x: Tensor, y: Tensor) -> tuple:
    """`(("checked", True),)` when a shape is symbolic (checked when the program runs); else checks them now."""
    symbolic = runtime_checks.checked_static(x, lambda _: None) + runtime_checks.checked_static(y, lambda _: None)
    if symbolic or not runtime_checks.checks_enabled():
        return (("checked", True),) if symbolic else ()
    vx, vy = np.asarray(x.numpy()), np.asarray(y.numpy())
    rank = max(vx.shape[0], vy.shape[0])
    px = np.concatenate([np.ones(rank - vx.shape[0], vx.dtype), vx])
    py = np.concatenate([np.ones(rank - vy.shape[0], vy.dtype), vy])
    if not np.all((px == py) | (px == 1) | (py == 1)):
        text = " vs. ".join("[" + ",".join(str(d) for d in v) + "]" for v in (vx, vy))
        raise errors.invalid_argument(f"Incompatible shapes: {text}", "BroadcastArgs")
    return ()


@table.export("broadcast_dynamic_shape", gradient="-", dtypes="int32, int64", op=_broadcast_args_op)
def broadcast_dynamic_shape(shape_x: TensorLike, shape_y: TensorLike) -> Tensor:
    """The shape two tensors of the shapes `shape_x` and `shape_y` (1-D integer tensors) broadcast to.

    Args:
      shape_x: a 1-D int32 or int64 tensor (a Python list becomes the other argument's dtype, or int32).
      shape_y: a 1-D tensor of the same dtype.

    Returns:
      A 1-D tensor of their dtype: the broadcast shape.

    Raises:
      InvalidArgumentError: for other dtypes, different dtypes, an argument that is not a vector, or shapes
        that do not broadcast.
    """
    x, y = convert_same_dtype([shape_x, shape_y], "BroadcastArgs")
    if x._dtype.name not in ("int32", "int64"):
        raise attr_error(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values: int32, int64",
            "BroadcastArgs",
        )
    for argument, tensor in (("shape_x", x), ("shape_y", y)):
        if len(tensor._shape) != 1:
            position = 0 if argument == "shape_x" else 1
            raise static_error(
                f"In[{position}] must be a vector ({argument}).[{','.join(map(str, tensor._shape))}]",
                "BroadcastArgs",
            )
    return apply(_broadcast_args_op, (x, y), _host_check(x, y))[0]
