"""`tf.math.approx_max_k` and `tf.math.approx_min_k` (also `tf.nn.*`): exact top-k, as TF's CPU and XLA kernels.

TF's approximate kernels return the exact result off TPU; tapeshim always does (`lax.top_k` along the reduction
dimension, sorted, lower indices first among ties). TF's CPU kernel covers only `approx_max_k` along the last
dimension (the rest raise NotFoundError there, and run under XLA); tapeshim runs every case, as TF's XLA kernel.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from tapeshim._src.ops import table
from tapeshim._src.ops.common import attr_error, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_TYPES = ("float16", "bfloat16", "float32")


class ApproxTopK(NamedTuple):
    """What `approx_max_k` / `approx_min_k` return, as TF's tuple: the values and their int32 indices."""

    values: Tensor
    indices: Tensor


def _approx_top_k(x: jax.Array, k: int, axis: int, is_max_k: bool) -> tuple:
    moved = jnp.moveaxis(x, axis, -1)
    values, indices = lax.top_k(moved if is_max_k else -moved, k)
    values = values if is_max_k else -values
    return jnp.moveaxis(values, -1, axis), jnp.moveaxis(indices.astype(jnp.int32), -1, axis)


_approx_top_k_op = OpDef("ApproxTopK", _approx_top_k, True)


def _run(operand: TensorLike, k: int, reduction_dimension: int, is_max_k: bool) -> ApproxTopK:
    x = convert_to_tensor(operand)
    if x._dtype.name not in _TYPES:
        type_name = {"float64": "double"}.get(x._dtype.name, x._dtype.name)
        raise attr_error(
            f"Value for attr 'T' of {type_name} is not in the list of allowed values: half, bfloat16, float\n\t; "
            "NodeDef: {{node ApproxTopK}}",
            "ApproxTopK",
        )
    k = int(k)
    if k < 0:
        raise attr_error(
            f"Value for attr 'k' of {k} must be at least minimum 0\n\t; NodeDef: {{{{node ApproxTopK}}}}", "ApproxTopK"
        )
    rank = len(x._shape)
    if rank == 0:
        raise static_error("input must be >= 1-D, got shape []", "ApproxTopK")
    axis = int(reduction_dimension)
    if not -rank <= axis < rank:
        raise static_error(f"Invalid reduction_dimension {axis} for input of rank {rank}", "ApproxTopK")
    axis %= rank
    if k > x._shape[axis]:
        raise static_error(f"input must have at least k columns. Had {x._shape[axis]}, needed {k}", "ApproxTopK")
    static = (("axis", axis), ("is_max_k", is_max_k), ("k", k))
    return ApproxTopK(*apply(_approx_top_k_op, (x,), static))


@table.export(
    "math.approx_max_k",
    "nn.approx_max_k",
    dtypes="float16, bfloat16, float32",
    note="exact, as TF off TPU; any reduction_dimension (TF's CPU kernel: the last only, else NotFoundError)",
    op=_approx_top_k_op,
)
def approx_max_k(
    operand: TensorLike,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> ApproxTopK:
    """The `k` largest values along `reduction_dimension` and their indices, as `tf.math.approx_max_k`.

    Args:
      operand: a float16, bfloat16 or float32 tensor of rank 1 or more.
      k: how many values to return, 0 to the dimension's size.
      reduction_dimension: the dimension searched.
      recall_target: ignored (the result is exact).
      reduction_input_size_override: ignored (the result is exact).
      aggregate_to_topk: ignored (the result is always the sorted top k).
      name: ignored.

    Returns:
      `ApproxTopK(values, indices)`: `operand`'s shape with `k` along `reduction_dimension`, largest first;
      the indices are int32.

    Raises:
      InvalidArgumentError: for another dtype, a negative `k`, a scalar, or `k` above the dimension's size.
    """
    return _run(operand, k, reduction_dimension, True)


@table.export(
    "math.approx_min_k",
    "nn.approx_min_k",
    dtypes="float16, bfloat16, float32",
    note="exact, as TF's XLA kernel (TF's CPU kernel has none: NotFoundError)",
    op=_approx_top_k_op,
)
def approx_min_k(
    operand: TensorLike,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> ApproxTopK:
    """The `k` smallest values along `reduction_dimension` and their indices, as `tf.math.approx_min_k`.

    Args:
      operand: a float16, bfloat16 or float32 tensor of rank 1 or more.
      k: how many values to return, 0 to the dimension's size.
      reduction_dimension: the dimension searched.
      recall_target: ignored (the result is exact).
      reduction_input_size_override: ignored (the result is exact).
      aggregate_to_topk: ignored (the result is always the sorted top k).
      name: ignored.

    Returns:
      `ApproxTopK(values, indices)`: `operand`'s shape with `k` along `reduction_dimension`, smallest first;
      the indices are int32.

    Raises:
      InvalidArgumentError: for another dtype, a negative `k`, a scalar, or `k` above the dimension's size.
    """
    return _run(operand, k, reduction_dimension, False)
