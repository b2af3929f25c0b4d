"""LU factorization and what reads it: `tf.linalg.lu`, `lu_solve`, `lu_reconstruct`, and `tf.linalg.matrix_rank`
(on `jax.lax.linalg`; JAX's gradients, which are TF's, but for `lu`, which TF registers none for)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, runtime_checks
from tapeshim._src.ops import table
from tapeshim._src.ops.common import (
    attr_error,
    convert_same_dtype,
    dtype_check,
    gradient_not_registered,
    missing_kernel,
    static_error,
)
from tapeshim._src.ops.linalg_ops import _runtime_checked
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

_LU_TYPES = "double, float, half, complex64, complex128"
_TRIANGULAR_TYPES = ("bfloat16", "double", "float", "half", "complex64", "complex128")


class Lu(NamedTuple):
    """What `lu` returns, as TF's `Lu` tuple: the packed factors and the row permutation."""

    lu: Tensor
    p: Tensor


def _lu(x: jax.Array, index_type: str, checked: bool = False) -> tuple:
    packed, _, permutation = jax.lax.linalg.lu(gradient_not_registered("Lu")(x))
    if checked and x.size:
        pivots = jnp.abs(jnp.diagonal(jax.lax.stop_gradient(packed), axis1=-2, axis2=-1))
        runtime_checks.require(jnp.all(pivots > 0), "Input is not invertible. [Op:Lu]")
    return packed, permutation.astype(index_type)


_lu_op = OpDef("Lu", _lu, True)


def _check_index_type(dtype: Any, attr: str, op_name: str) -> str:
    name = dtypes.as_dtype(dtype).name
    if name not in ("int32", "int64"):
        type_name = "float" if name == "float32" else "double" if name == "float64" else name
        raise attr_error(
            f"Value for attr '{attr}' of {type_name} is not in the list of allowed values: int32, int64\n\t; "
            f"NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    return name


@table.export(
    "linalg.lu",
    gradient="custom",
    dtypes="float32, float64, complex",
    note="differentiating raises LookupError, as TF (no registered gradient); float16 raises NotFoundError, "
    "as TF's CPU; a singular matrix raises InvalidArgumentError, as TF",
    op=_lu_op,
)
def lu(input: TensorLike, output_idx_type: DTypeLike = dtypes.int32, name: str | None = None) -> Lu:  # noqa: A002
    """The LU factorization with partial pivoting of a (batch of) square matrices, as `tf.linalg.lu`.

    `input[..., p, :] == L @ U`, with `L` unit lower triangular and `U` upper triangular, both packed in `lu`.

    Args:
      input: a `[..., n, n]` float32, float64 or complex tensor.
      output_idx_type: int32 or int64, the dtype of `p`.
      name: ignored.

    Returns:
      `Lu(lu, p)`: the packed factors, of `input`'s shape and dtype, and the `[..., n]` permutation.

    Raises:
      InvalidArgumentError: for another dtype, a rank under 2, a non-square or a singular matrix.
      NotFoundError: for float16, which TF's CPU kernels do not support.
    """
    x = convert_to_tensor(input)
    index_type = _check_index_type(output_idx_type, "output_idx_type", "Lu")
    if x._dtype.name == "float16":
        raise missing_kernel("Lu", f"T=DT_HALF, output_idx_type=DT_{index_type.upper()}")
    dtype_check("Lu", "", names=tuple(_LU_TYPES.split(", ")))(((x._shape, x._dtype),), {})
    if len(x._shape) < 2:
        raise static_error(f"Input tensor must have rank >= 2, got {len(x._shape)}", "Lu")
    if x._shape[-1] != x._shape[-2]:
        raise static_error("Input matrix must be square.", "Lu")
    packed, permutation = apply(_lu_op, (x,), (("index_type", index_type),) + _runtime_checked(x))
    return Lu(packed, permutation)


def _check_packed(lower_upper: Tensor) -> None:
    if len(lower_upper._shape) < 2:
        raise ValueError("Input `lower_upper` must have at least 2 dimensions.")
    if lower_upper._shape[-1] != lower_upper._shape[-2]:
        raise ValueError("`lower_upper` must be square.")


def _permutation(perm: TensorLike, op_name: str, attr: str = "Tindices") -> Tensor:
    p = convert_to_tensor(perm)
    _check_index_type(p._dtype, attr, op_name)
    return p


def _lu_solve(packed: jax.Array, permutation: jax.Array, rhs: jax.Array) -> jax.Array:
    batch = jnp.broadcast_shapes(packed.shape[:-2], permutation.shape[:-1], rhs.shape[:-2])
    packed = jnp.broadcast_to(packed, batch + packed.shape[-2:])
    permutation = jnp.broadcast_to(permutation, batch + permutation.shape[-1:])
    rhs = jnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    permuted = jnp.take_along_axis(rhs, permutation[..., :, None], axis=-2)
    lower = jax.lax.linalg.triangular_solve(packed, permuted, left_side=True, lower=True, unit_diagonal=True)
    return jax.lax.linalg.triangular_solve(packed, lower, left_side=True, lower=False)


_lu_solve_op = OpDef("LuSolve", _lu_solve, True)


@table.export(
    "linalg.lu_solve",
    dtypes=table.FLOAT,
    note="batch dimensions broadcast, as TF; out-of-range permutation entries are not checked",
    op=_lu_solve_op,
)
def lu_solve(
    lower_upper: TensorLike, perm: TensorLike, rhs: TensorLike, validate_args: bool = False, name: str | None = None
) -> Tensor:
    """X with `A @ X = rhs`, given `A`'s LU factorization `(lower_upper, perm)` from `lu`, as `tf.linalg.lu_solve`.

    Args:
      lower_upper: the packed `[..., n, n]` factors.
      perm: the `[..., n]` int32 or int64 row permutation.
      rhs: the `[..., n, k]` right-hand sides, of `lower_upper`'s dtype.
      validate_args: ignored (the shapes are checked always).
      name: ignored.

    Returns:
      The `[..., n, k]` solution (batch dimensions broadcast).

    Raises:
      ValueError: for a rank under 2, a non-square `lower_upper`, or sizes that do not match.
      InvalidArgumentError: for different or integer dtypes.
    """
    packed = convert_to_tensor(lower_upper)
    rhs_t = convert_to_tensor(rhs, dtype_hint=packed._dtype)
    _check_packed(packed)
    if len(rhs_t._shape) < 2:
        raise ValueError("Input `rhs` must have at least 2 dimensions.")
    if packed._shape[-1] != rhs_t._shape[-2]:
        raise ValueError("`lower_upper.shape[-1]` must equal `rhs.shape[-1]`.")
    p = _permutation(perm, "GatherV2")
    packed, rhs_t = convert_same_dtype((packed, rhs_t), "MatrixTriangularSolve")
    dtype_check("MatrixTriangularSolve", "", names=_TRIANGULAR_TYPES)(((packed._shape, packed._dtype),), {})
    return apply(_lu_solve_op, (packed, p, rhs_t))[0]


def _lu_reconstruct(packed: jax.Array, permutation: jax.Array) -> jax.Array:
    n = packed.shape[-1]
    lower = jnp.tril(packed, -1) + jnp.eye(n, dtype=packed.dtype)
    product = jnp.matmul(lower, jnp.triu(packed))
    inverse = jnp.argsort(permutation, axis=-1)
    return jnp.take_along_axis(product, inverse[..., :, None], axis=-2)


_lu_reconstruct_op = OpDef("LuReconstruct", _lu_reconstruct, True)


@table.export("linalg.lu_reconstruct", dtypes=table.NUMERIC, op=_lu_reconstruct_op)
def lu_reconstruct(
    lower_upper: TensorLike, perm: TensorLike, validate_args: bool = False, name: str | None = None
) -> Tensor:
    """The matrix `A` whose LU factorization is `(lower_upper, perm)`, as `tf.linalg.lu_reconstruct`.

    Args:
      lower_upper: the packed `[..., n, n]` factors from `lu`.
      perm: the `[..., n]` int32 or int64 row permutation.
      validate_args: ignored (the shapes are checked always).
      name: ignored.

    Returns:
      `A`, of `lower_upper`'s shape and dtype.

    Raises:
      ValueError: for a rank under 2 or a non-square `lower_upper`.
      InvalidArgumentError: for a permutation that is not int32 or int64.
    """
    packed = convert_to_tensor(lower_upper)
    _check_packed(packed)
    p = _permutation(perm, "InvertPermutation", attr="T")
    return apply(_lu_reconstruct_op, (packed, p))[0]


def _matrix_rank(x: jax.Array, *tolerance: jax.Array) -> jax.Array:
    values = jnp.linalg.svd(x, compute_uv=False)
    if tolerance:
        bound = tolerance[0]
    else:
        eps = np.finfo(np.dtype(x.dtype)).eps
        bound = jnp.max(values, axis=-1, keepdims=True) * max(x.shape[-2:]) * jnp.asarray(eps, x.dtype)
    return jnp.sum(values > bound, axis=-1).astype(jnp.int32)


_matrix_rank_op = OpDef("MatrixRank", _matrix_rank, False)


@table.export("linalg.matrix_rank", dtypes="float32, float64", op=_matrix_rank_op)
def matrix_rank(a: TensorLike, tol: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The number of singular values of each matrix above `tol`, as `tf.linalg.matrix_rank`.

    Args:
      a: a `[..., m, n]` float32 or float64 tensor.
      tol: the threshold; None for `eps * max(m, n) * max(singular values)` per matrix.
      validate_args: ignored (the dtype and rank are checked always).
      name: ignored.

    Returns:
      The int32 `[...]` ranks.

    Raises:
      TypeError: for a dtype that is not floating.
      ValueError: for a rank under 2.
      NotFoundError: for float16, InvalidArgumentError for bfloat16 (TF's Svd kernels).
    """
    x = convert_to_tensor(a)
    if not x._dtype.is_floating:
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw {x._dtype.name}).")
    if len(x._shape) < 2:
        raise ValueError(f"Input `a` must have at least 2 dimensions (saw: {len(x._shape)}).")
    if x._dtype.name == "float16":
        raise missing_kernel("Svd", "T=DT_HALF, compute_uv=false, full_matrices=false")
    if x._dtype.name == "bfloat16":
        raise attr_error(
            f"Value for attr 'T' of bfloat16 is not in the list of allowed values: {_LU_TYPES}\n\t; "
            "NodeDef: {{node Svd}}",
            "Svd",
        )
    inputs = (x,) if tol is None else (x, convert_to_tensor(tol, dtype=x._dtype))
    return apply(_matrix_rank_op, inputs)[0]
