"""`tf.linalg.diag` with `k` (one diagonal or a band), `tf.linalg.set_diag`, and the other matrix helpers
`tf.linalg.adjoint`, `matrix_transpose`, `cross`, `expm`.

Diagonals are placed with one gather whose indices are computed on the host from the
static shapes (TF's `MatrixDiagV3` / `MatrixSetDiagV3` layout and alignment), so JAX
differentiates with respect to the diagonals and the input matrix.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import array_ops, table
from tapeshim._src.ops.common import convert_same_dtype, dtype_check, missing_kernel, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _band(k: Any, op_name: str) -> tuple[int, int]:
    if isinstance(k, Tensor):
        k = np.asarray(k.numpy()).tolist()
    if isinstance(k, (list, tuple, np.ndarray)):
        values = [int(v) for v in np.asarray(k).reshape(-1)]
        if len(values) not in (1, 2):
            raise errors.invalid_argument(
                f"diag_index must be a scalar or vector with 1 or 2 elements, got {len(values)}", op_name
            )
        lo, hi = values[0], values[-1]
    else:
        lo = hi = int(k)
    if lo > hi:
        raise errors.invalid_argument(
            f"lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}", op_name
        )
    return lo, hi


def _length(d: int, rows: int, cols: int) -> int:
    return max(0, min(rows - max(0, -d), cols - max(0, d)))


def _layout(rows: int, cols: int, lo: int, hi: int, max_len: int, align: str) -> tuple:
    """Per matrix element: whether it is on a diagonal of the band, and where in the diagonals it is stored."""
    superdiag_left, subdiag_left = (part == "LEFT" for part in align.split("_"))
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    d = j - i
    mask = (d >= lo) & (d <= hi)
    lengths = np.vectorize(lambda dd: _length(int(dd), rows, cols))(d) if d.size else d
    left = (superdiag_left & (d >= 0)) | (subdiag_left & (d <= 0))
    offset = np.where(left, 0, max_len - lengths)
    position = np.where(d >= 0, i, j) + offset
    row = np.where(mask, hi - d, 0)
    column = np.where(mask, position, 0)
    return mask, row, column


def _place(diagonals: jax.Array, base: jax.Array, rows: int, cols: int, lo: int, hi: int, align: str) -> jax.Array:
    mask, row, column = _layout(rows, cols, lo, hi, diagonals.shape[-1], align)
    values = diagonals[..., row, column]
    return jnp.where(mask, values, base)


def _diag_impl(
    diagonals: jax.Array, padding: jax.Array, rows: int, cols: int, lo: int, hi: int, align: str
) -> jax.Array:
    base = jnp.broadcast_to(padding, diagonals.shape[:-2] + (rows, cols))
    return _place(diagonals, base, rows, cols, lo, hi, align)


_diag_op = OpDef("MatrixDiagV3", _diag_impl, True)
_set_diag_op = OpDef(
    "MatrixSetDiagV3",
    lambda x, diagonals, lo, hi, align: _place(diagonals, x, x.shape[-2], x.shape[-1], lo, hi, align),
    True,
)


def _check_align(align: str, op_name: str) -> str:
    if align not in _ALIGNS:
        raise errors.invalid_argument(
            f"Attr align has value '{align}' not in list of allowed values: {', '.join(repr(a) for a in _ALIGNS)}",
            op_name,
        )
    return align


def matrix_diag(
    diagonal: TensorLike,
    k: TensorLike = 0,
    num_rows: int = -1,
    num_cols: int = -1,
    padding_value: TensorLike = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """`tf.linalg.diag`: matrices with `diagonal` on the k-th diagonal (or the band `k = (lower, upper)`)."""
    op_name = "MatrixDiagV3"
    d = convert_to_tensor(diagonal)
    lo, hi = _band(k, op_name)
    _check_align(align, op_name)
    band = lo != hi
    if len(d._shape) < (2 if band else 1):
        raise static_error(
            f"diagonal must be at least {2 if band else 1}-dim, received shape: [{','.join(map(str, d._shape))}]",
            op_name,
        )
    if band and d._shape[-2] != hi - lo + 1:
        raise errors.invalid_argument(
            f"The number of diagonals provided in the input does not match the lower_diag"
            f"_index and upper_diag_index range. Expected {hi - lo + 1}, got "
            f"{d._shape[-2]}",
            op_name,
        )
    max_len = d._shape[-1]
    min_rows, min_cols = max_len - min(hi, 0), max_len + max(lo, 0)
    rows, cols = int(num_rows), int(num_cols)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols):
        raise errors.invalid_argument(
            "The number of rows or columns is not consistent with the specified d_lower, d_upper, and diagonal.",
            op_name,
        )

    diagonals = d if band else array_ops.expand_dims(d, -2)
    padding = convert_to_tensor(padding_value, dtype=d._dtype)
    static = (("align", align), ("cols", cols), ("hi", hi), ("lo", lo), ("rows", rows))
    return apply(_diag_op, (diagonals, padding), static)[0]


@table.export("linalg.set_diag", dtypes=table.ANY, op=_set_diag_op)
def set_diag(
    input: TensorLike,
    diagonal: TensorLike,
    name: str = "set_diag",
    k: TensorLike = 0,  # noqa: A002
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """`input` with its k-th diagonal (or the band `k = (lower, upper)`) replaced by `diagonal`.

    Raises:
      InvalidArgumentError: `diagonal`'s shape does not fit the input's batch shape and
        the longest diagonal of the band, or `k` is not a valid band.
    """
    op_name = "MatrixSetDiagV3"
    x, d = convert_same_dtype((input, diagonal), op_name)
    lo, hi = _band(k, op_name)
    _check_align(align, op_name)
    if len(x._shape) < 2:
        raise static_error(f"input must be at least 2-dim, received shape: [{','.join(map(str, x._shape))}]", op_name)
    rows, cols = x._shape[-2:]
    max_len = max(_length(dd, rows, cols) for dd in range(lo, hi + 1))
    band = lo != hi
    expected = tuple(x._shape[:-2]) + ((hi - lo + 1,) if band else ()) + (max_len,)
    if tuple(d._shape) != expected:
        raise errors.invalid_argument(
            "Either first dimensions of diagonal don't match input.shape[:-2], or diagonal.shape[:-1] is not equal "
            "to the longests diagonal in range [lower_diag_index:upper_diag_index].\nInput shape: "
            f"[{','.join(map(str, x._shape))}]\nDiagonal shape: [{','.join(map(str, d._shape))}]\nExpected diagonal "
            f"shape: [{','.join(map(str, expected))}]",
            op_name,
        )

    diagonals = d if band else array_ops.expand_dims(d, -2)
    return apply(_set_diag_op, (x, diagonals), (("align", align), ("hi", hi), ("lo", lo)))[0]


def _rank2(a: Tensor) -> None:
    if len(a._shape) < 2:
        raise ValueError(
            f"Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = "
            f"{np.asarray(a.numpy())} with shape: {tuple(a._shape)}"
        )


_transpose_op = OpDef("Transpose", lambda x, conj: jnp.swapaxes(jnp.conj(x) if conj else x, -1, -2), True)


@table.export("linalg.matrix_transpose", dtypes=table.ANY, op=_transpose_op)
def matrix_transpose(a: TensorLike, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Swaps the last two dimensions (conjugating complex values if `conjugate`).

    Raises:
      ValueError: `a` has rank below 2.
    """
    x = convert_to_tensor(a)
    _rank2(x)
    return apply(_transpose_op, (x,), (("conj", bool(conjugate) and x._dtype.is_complex),))[0]


@table.export("linalg.adjoint", dtypes=table.ANY, op=_transpose_op)
def adjoint(matrix: TensorLike, name: str | None = None) -> Tensor:
    """The conjugate transpose of the last two dimensions.

    Raises:
      ValueError: `matrix` has rank below 2.
    """
    x = convert_to_tensor(matrix)
    _rank2(x)
    return apply(_transpose_op, (x,), (("conj", x._dtype.is_complex),))[0]


_cross_op = OpDef("Cross", jnp.cross, True, dtype_check("Cross", "fiu"))


@table.export("linalg.cross", dtypes=table.REAL, op=_cross_op)
def cross(a: TensorLike, b: TensorLike, name: str | None = None) -> Tensor:
    """The cross products of pairs of 3-element vectors (the last dimension).

    Raises:
      InvalidArgumentError: the shapes differ.
      FailedPreconditionError: the last dimension is not 3.
    """
    x, y = convert_same_dtype((a, b), "Cross")
    if x._shape != y._shape:
        raise static_error(
            f"Both inputs must be of same shape: [{','.join(map(str, x._shape))}] vs. [{','.join(map(str, y._shape))}]",
            "Cross",
        )
    if not x._shape or x._shape[-1] != 3:
        raise errors.FailedPreconditionError(
            None, None, "Cross-products are only defined for 3-element vectors. [Op:Cross]"
        )
    return apply(_cross_op, (x, y))[0]


def _expm(x: jax.Array) -> jax.Array:
    batch = x.shape[:-2]
    flat = x.reshape((-1,) + x.shape[-2:])
    return jax.vmap(jax.scipy.linalg.expm)(flat).reshape(batch + x.shape[-2:])


_expm_op = OpDef("MatrixExponential", _expm, True)


@table.export(
    "linalg.expm", dtypes=table.FLOAT, note="jax.scipy.linalg.expm (Pade with scaling and squaring)", op=_expm_op
)
def expm(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """The matrix exponential of a (batch of) square matrices.

    Raises:
      ValueError: integer matrices.
      InvalidArgumentError: matrices that are not square.
    """
    x = convert_to_tensor(input)
    if not (x._dtype.is_floating or x._dtype.is_complex) or x._dtype == dtypes.bfloat16:
        raise ValueError(f"tf.linalg.expm does not support matrices of type {x._dtype!r}")
    if len(x._shape) < 2 or x._shape[-1] != x._shape[-2]:
        shape = "[" + ",".join(map(str, (1,) + tuple(x._shape[-2:]))) + "]"
        raise static_error(f"Matrix size-incompatible: In[0]: {shape}, In[1]: {shape}", "BatchMatMulV2")
    if x._dtype == dtypes.float16:  # (TF's expm is Python over matrix products and a solve without a half kernel)
        raise missing_kernel("MatrixSolve", "T=DT_HALF, adjoint=false")
    return apply(_expm_op, (x,))[0]
