"""Matrix functions and structured solves: `tf.linalg.sqrtm`, `logm`, `tridiagonal_solve`, `banded_triangular_solve`.

`sqrtm` is the Denman-Beavers iteration (a fixed number of steps, so JAX differentiates it: its derivative is
the Sylvester-equation gradient TF registers); `logm` is inverse scaling and squaring (square roots until the
matrix is near the identity, then the Gauss-Legendre form of the diagonal Pade approximant), complex only and
without a gradient, as TF's kernel. The solves run `lax.linalg.tridiagonal_solve` and `triangular_solve`.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import runtime_checks
from tapeshim._src.ops import array_ops, linalg_diag, math_ops, table
from tapeshim._src.ops.common import attr_error, convert_same_dtype, missing_kernel, static_error
from tapeshim._src.ops.linalg_ops import _runtime_checked
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_SQRT_STEPS = 32
_LOG_NODES, _LOG_WEIGHTS = np.polynomial.legendre.leggauss(10)


def _type_error(x: Tensor, op_name: str, allowed: str) -> Exception:
    name = {"float32": "float", "float64": "double", "float16": "half"}.get(x._dtype.name, x._dtype.name)
    return attr_error(
        f"Value for attr 'T' of {name} is not in the list of allowed values: {allowed}\n\t; "
        f"NodeDef: {{{{node {op_name}}}}}",
        op_name,
    )


def _square_matrix(x: Tensor, op_name: str) -> None:
    if len(x._shape) < 2:
        raise static_error(f"Input tensor 0 must have rank >= 2, got {len(x._shape)}", op_name)
    if x._shape[-1] != x._shape[-2]:
        raise static_error("Input matrix must be square.", op_name)


def _denman_beavers(a: jax.Array, converge: bool = False) -> jax.Array:
    """The principal square root of each matrix of `a` (scaled to norm 1 first, then rescaled).

    A fixed number of steps, which JAX differentiates (`sqrtm`); with `converge`, until the iterates stop
    changing (`logm`, which has no gradient).
    """
    n = a.shape[-1]
    scale = jnp.sqrt(jnp.sum(jnp.abs(a) ** 2, axis=(-2, -1), keepdims=True))
    scale = jnp.where(scale == 0, jnp.ones_like(scale), scale).astype(a.dtype)
    eye = jnp.broadcast_to(jnp.eye(n, dtype=a.dtype), a.shape)

    def step(y: jax.Array, z: jax.Array) -> tuple:
        return (y + jnp.linalg.inv(z)) / 2, (z + jnp.linalg.inv(y)) / 2

    if not converge:
        y, _ = jax.lax.fori_loop(0, _SQRT_STEPS, lambda _, carry: step(*carry), (a / scale, eye))
        return y * jnp.sqrt(scale)
    tolerance = float(np.finfo(np.dtype(a.dtype)).eps) * n

    def going(carry: tuple) -> jax.Array:
        _, _, change, count = carry
        return (change > tolerance) & (count < _SQRT_STEPS)

    def body(carry: tuple) -> tuple:
        y, z, _, count = carry
        new_y, new_z = step(y, z)
        change = jnp.max(jnp.abs(new_y - y)) / jnp.maximum(jnp.max(jnp.abs(new_y)), 1e-30)
        return new_y, new_z, change, count + 1

    start = (a / scale, eye, jnp.asarray(np.inf, jnp.abs(a).dtype), jnp.asarray(0, jnp.int32))
    y, *_ = jax.lax.while_loop(going, body, start)
    return y * jnp.sqrt(scale)


@jax.custom_vjp
def _sqrtm_tf_gradient(x: jax.Array) -> jax.Array:
    return _denman_beavers(x)


def _sqrtm_forward(x: jax.Array) -> tuple:
    return _denman_beavers(x), x


def _sqrtm_backward(x: jax.Array, g: jax.Array) -> tuple:
    # TF's gradient solves a Sylvester equation in the root's transpose, not its adjoint: for complex input,
    # JAX's derivative at conj(x) (the same as at x for real input).
    _, pullback = jax.vjp(_denman_beavers, jnp.conj(x))
    return pullback(g)


_sqrtm_tf_gradient.defvjp(_sqrtm_forward, _sqrtm_backward)


def _sqrtm(x: jax.Array) -> jax.Array:
    if x.shape[-1] == 0:
        return x
    return _sqrtm_tf_gradient(x)


_sqrtm_op = OpDef("MatrixSquareRoot", _sqrtm, True)


@table.export(
    "linalg.sqrtm",
    gradient="custom",
    dtypes="float32, float64, complex",
    note="Denman-Beavers iteration (TF: Schur); a real matrix without a real square root gives no NaN; the "
    "complex gradient is TF's (transpose-based, not the conjugate convention)",
    op=_sqrtm_op,
)
def sqrtm(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """The principal square root of each square matrix, as `tf.linalg.sqrtm`.

    Args:
      input: a `[..., n, n]` float32, float64 or complex tensor.
      name: ignored.

    Returns:
      The square roots, of `input`'s shape and dtype.

    Raises:
      InvalidArgumentError: for another dtype, a rank under 2 or a non-square matrix.
      NotFoundError: for float16, which TF's CPU kernels do not support.
    """
    x = convert_to_tensor(input)
    if x._dtype.name == "float16":
        raise missing_kernel("MatrixSquareRoot", "T=DT_HALF")
    if x._dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise _type_error(x, "MatrixSquareRoot", "double, float, half, complex64, complex128")
    _square_matrix(x, "MatrixSquareRoot")
    return apply(_sqrtm_op, (x,))[0]


def _log_near_identity(x: jax.Array) -> jax.Array:
    """`log(I + x)` for `||x|| < 1/4`: Gauss-Legendre quadrature of `x (I + t x)^-1` over `[0, 1]`."""
    eye = jnp.eye(x.shape[-1], dtype=x.dtype)
    total = jnp.zeros_like(x)
    for node, weight in zip(_LOG_NODES, _LOG_WEIGHTS):
        t = float(node + 1) / 2
        total = total + (float(weight) / 2) * jnp.linalg.solve(eye + t * x, x)
    return total


def _logm_value(x: jax.Array) -> jax.Array:
    eye = jnp.eye(x.shape[-1], dtype=x.dtype)

    def far(carry: tuple) -> jax.Array:
        y, count = carry
        return (jnp.max(jnp.sum(jnp.abs(y - eye), axis=-2)) > 0.25) & (count < 64)

    def root(carry: tuple) -> tuple:
        y, count = carry
        return _denman_beavers(y, converge=True), count + 1

    y, count = jax.lax.while_loop(far, root, (x, jnp.asarray(0, jnp.int32)))
    return _log_near_identity(y - eye) * jnp.exp2(count.astype(jnp.float32)).astype(x.dtype)


@jax.custom_vjp
def _logm_no_gradient(x: jax.Array) -> jax.Array:
    return _logm_value(x)


def _logm_forward(x: jax.Array) -> tuple:
    return _logm_value(x), None


def _logm_backward(_: Any, g: jax.Array) -> tuple:
    raise LookupError("gradient registry has no entry for: MatrixLogarithm")


_logm_no_gradient.defvjp(_logm_forward, _logm_backward)


def _logm(x: jax.Array) -> jax.Array:
    if x.shape[-1] == 0:
        return x
    return _logm_no_gradient(x)


_logm_op = OpDef("MatrixLogarithm", _logm, True)


@table.export(
    "linalg.logm",
    gradient="custom",
    dtypes="complex64, complex128",
    note="differentiating raises LookupError, as TF (no registered gradient); inverse scaling and squaring "
    "(TF: Eigen's Schur-Pade)",
    op=_logm_op,
)
def logm(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """The principal logarithm of each square complex matrix, as `tf.linalg.logm`.

    Args:
      input: a `[..., n, n]` complex64 or complex128 tensor.
      name: ignored.

    Returns:
      The logarithms, of `input`'s shape and dtype.

    Raises:
      InvalidArgumentError: for a real or integer dtype, a rank under 2 or a non-square matrix.
    """
    x = convert_to_tensor(input)
    if not x._dtype.is_complex:
        raise _type_error(x, "MatrixLogarithm", "complex64, complex128")
    _square_matrix(x, "MatrixLogarithm")
    return apply(_logm_op, (x,))[0]


_SOLVE_TYPES = ("float32", "float64", "complex64", "complex128")


def _tridiagonal_solve_impl(
    diagonals: jax.Array, rhs: jax.Array, partial_pivoting: bool, perturb_singular: bool
) -> jax.Array:
    zero = jnp.zeros(diagonals.shape[:-2] + (1,), diagonals.dtype)
    upper = jnp.concatenate([diagonals[..., 0, :-1], zero], axis=-1)
    lower = jnp.concatenate([zero, diagonals[..., 2, 1:]], axis=-1)
    return jax.lax.linalg.tridiagonal_solve(lower, diagonals[..., 1, :], upper, rhs, perturb_singular=perturb_singular)


_tridiagonal_solve_op = OpDef("TridiagonalSolve", _tridiagonal_solve_impl, True)


def _dims(t: Tensor) -> str:
    return "(" + ", ".join(str(d) for d in t._shape) + ("," if len(t._shape) == 1 else "") + ")"


def _solve_compact(
    diagonals: Tensor, rhs: Tensor, transpose_rhs: bool, conjugate_rhs: bool, pivoting: bool, perturb: bool
) -> Tensor:
    d_rank, r_rank = len(diagonals._shape), len(rhs._shape)
    if d_rank < 2:
        raise ValueError(f"Expected diagonals to have rank at least 2, got {d_rank}")
    if r_rank not in (d_rank, d_rank - 1):
        raise ValueError(f"Expected the rank of rhs to be {d_rank - 1} or {d_rank}, got {r_rank}")
    if tuple(diagonals._shape[:-2]) != tuple(rhs._shape[: d_rank - 2]):
        batch_d = "(" + ", ".join(map(str, diagonals._shape[:-2])) + ("," if d_rank == 3 else "") + ")"
        batch_r = "(" + ", ".join(map(str, rhs._shape[: d_rank - 2])) + ("," if d_rank == 3 else "") + ")"
        raise ValueError(f"Batch shapes {batch_d} and {batch_r} are incompatible")
    if diagonals._shape[-2] != 3:
        raise ValueError(f"Expected 3 diagonals got {diagonals._shape[-2]}")
    vector = r_rank == d_rank - 1
    if vector:
        if conjugate_rhs:
            rhs = math_ops.conj(rhs)
        rhs = array_ops.expand_dims(rhs, -1)
    elif transpose_rhs:
        rhs = linalg_diag.matrix_transpose(rhs, conjugate=conjugate_rhs)
    elif conjugate_rhs:
        rhs = math_ops.conj(rhs)
    if diagonals._shape[-1] != rhs._shape[-2]:
        raise ValueError(
            "Expected number of left-hand sided and right-hand sides to be equal, got "
            f"{diagonals._shape[-1]} and {rhs._shape[-2]}"
        )
    diagonals, rhs = convert_same_dtype((diagonals, rhs), "TridiagonalSolve")
    if diagonals._dtype.name not in _SOLVE_TYPES:
        raise _type_error(diagonals, "TridiagonalSolve", "double, float, complex64, complex128")
    static = (("partial_pivoting", bool(pivoting)), ("perturb_singular", bool(perturb)))
    result = apply(_tridiagonal_solve_op, (diagonals, rhs), static)[0]
    return array_ops.squeeze(result, -1) if vector else result


@table.export(
    "linalg.tridiagonal_solve",
    dtypes=table.FLOAT,
    note="always partially pivoted (`partial_pivoting=False` gives the same values up to rounding)",
)
def tridiagonal_solve(
    diagonals: Any,
    rhs: TensorLike,
    diagonals_format: str = "compact",
    transpose_rhs: bool = False,
    conjugate_rhs: bool = False,
    name: str | None = None,
    partial_pivoting: bool = True,
    perturb_singular: bool = False,
) -> Tensor:
    """X with `A @ X = rhs` for tridiagonal matrices `A`, as `tf.linalg.tridiagonal_solve`.

    Args:
      diagonals: `A`: "compact", a `[..., 3, M]` tensor (superdiagonal, its last entry ignored; diagonal;
        subdiagonal, its first entry ignored); "sequence", a list of the three (the off-diagonals of length M
        or M - 1); "matrix", the `[..., M, M]` matrices.
      rhs: the `[..., M, K]` right-hand sides, or `[..., M]` for one.
      diagonals_format: "compact", "sequence" or "matrix".
      transpose_rhs: solve against `rhs`'s (batch) transpose (ignored for a vector `rhs`).
      conjugate_rhs: conjugate `rhs` first.
      name: ignored.
      partial_pivoting: whether to pivot (the values are the same up to rounding).
      perturb_singular: perturb the pivots of a singular matrix to give a finite result.

    Returns:
      The solution, of `rhs`'s shape (transposed back when `transpose_rhs`).

    Raises:
      ValueError: for bad ranks, sizes, formats or `perturb_singular` without `partial_pivoting`.
      InvalidArgumentError: for different or unsupported dtypes.
    """
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    r = convert_to_tensor(rhs)
    if diagonals_format == "compact":
        compact = convert_to_tensor(diagonals)
    elif diagonals_format == "sequence":
        if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        superdiag, maindiag, subdiag = (convert_to_tensor(d) for d in diagonals)
        if superdiag._shape[:-1] != maindiag._shape[:-1] or subdiag._shape[:-1] != maindiag._shape[:-1]:
            raise ValueError(
                "Tensors representing the three diagonals must have the same shape,except for the last dimension, "
                f"got {_dims(subdiag)}, {_dims(maindiag)}, {_dims(superdiag)}"
            )
        m = maindiag._shape[-1]
        padded = []
        for t, what, pad in ((superdiag, "superdiagonal", [0, 1]), (subdiag, "subdiagonal", [1, 0])):
            if t._shape[-1] == m - 1:
                t = _pad_last(t, pad)
            elif t._shape[-1] != m:
                raise ValueError(f"Expected {what} to be have length {m} or {m - 1}, got {t._shape[-1]}.")
            padded.append(t)
        compact = array_ops.stack([padded[0], maindiag, padded[1]], axis=-2)
    elif diagonals_format == "matrix":
        matrix = convert_to_tensor(diagonals)
        if matrix._shape[-1] != matrix._shape[-2]:
            raise ValueError(
                f"Expected last two dimensions of diagonals to be same, got {matrix._shape[-1]} and {matrix._shape[-2]}"
            )
        compact = apply(_compact_op, (matrix,))[0]
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    return _solve_compact(compact, r, transpose_rhs, conjugate_rhs, partial_pivoting, perturb_singular)


def _compact(matrix: jax.Array) -> jax.Array:
    """The `[..., 3, M]` compact diagonals of tridiagonal matrices (`matrix_diag_part`, k=(-1, 1), LEFT_RIGHT)."""
    zero = jnp.zeros(matrix.shape[:-2] + (min(1, matrix.shape[-1]),), matrix.dtype)
    upper = jnp.concatenate([jnp.diagonal(matrix, 1, -2, -1), zero], axis=-1)
    lower = jnp.concatenate([zero, jnp.diagonal(matrix, -1, -2, -1)], axis=-1)
    return jnp.stack([upper, jnp.diagonal(matrix, 0, -2, -1), lower], axis=-2)


_compact_op = OpDef("MatrixDiagPartV3", _compact, True)


def _pad_last(t: Tensor, pad: Sequence[int]) -> Tensor:
    from tapeshim._src.ops import manip_ops  # import cycle: manip_ops imports the array ops this module uses

    return manip_ops.pad(t, [[0, 0]] * (len(t._shape) - 1) + [list(pad)])


def _banded_matrix(bands: jax.Array, n: int, lower: bool) -> jax.Array:
    """The dense `[..., n, n]` triangular matrix of `bands` (`[..., K, n]`, LEFT_RIGHT aligned)."""
    k = bands.shape[-2]
    rows = np.arange(n)[:, None]
    cols = np.arange(n)[None, :]
    band = rows - cols if lower else (k - 1) - (cols - rows)
    valid = (rows - cols >= 0) & (rows - cols < k) if lower else (cols - rows >= 0) & (cols - rows < k)
    index = np.where(valid, band, 0)
    values = bands[..., index, np.broadcast_to(rows, (n, n))]
    return jnp.where(valid, values, jnp.zeros((), bands.dtype))


def _banded_solve_impl(
    bands: jax.Array, rhs: jax.Array, lower: bool, adjoint: bool, checked: bool = False
) -> jax.Array:
    n = rhs.shape[-2]
    matrix = _banded_matrix(bands, n, lower)
    if checked and n and bands.size:
        diagonal = bands[..., 0, :] if lower else bands[..., -1, :]
        runtime_checks.require(jnp.all(jax.lax.stop_gradient(diagonal) != 0), "Input matrix is not invertible.")
    batch = jnp.broadcast_shapes(matrix.shape[:-2], rhs.shape[:-2])
    matrix = jnp.broadcast_to(matrix, batch + matrix.shape[-2:])
    rhs = jnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    return jax.lax.linalg.triangular_solve(
        matrix, rhs, left_side=True, lower=lower, transpose_a=adjoint, conjugate_a=adjoint
    )


_banded_solve_op = OpDef("BandedTriangularSolve", _banded_solve_impl, True)


@table.export(
    "linalg.banded_triangular_solve",
    dtypes=table.FLOAT,
    note="batch dimensions broadcast, as TF",
    op=_banded_solve_op,
)
def banded_triangular_solve(
    bands: TensorLike, rhs: TensorLike, lower: bool = True, adjoint: bool = False, name: str | None = None
) -> Tensor:
    """X with `A @ X = rhs` (or `A^H @ X`) for banded triangular `A`, as `tf.linalg.banded_triangular_solve`.

    Args:
      bands: the `[..., K, M]` bands of `A`, LEFT_RIGHT aligned: with `lower`, the diagonal first, then the
        K - 1 subdiagonals; otherwise the K - 1th superdiagonal first and the diagonal last.
      rhs: the `[..., M, N]` right-hand sides, of `bands`' dtype.
      lower: whether `A` is lower triangular.
      adjoint: solve with `A`'s conjugate transpose.
      name: ignored.

    Returns:
      The `[..., M, N]` solution (batch dimensions broadcast).

    Raises:
      InvalidArgumentError: for ranks under 2, sizes or batches that do not match, a zero on the diagonal,
        different or unsupported dtypes.
      NotFoundError: for float16, which TF's CPU kernels do not support.
    """
    a, b = convert_same_dtype((bands, rhs), "BandedTriangularSolve")
    if a._dtype.name == "float16":
        raise missing_kernel(
            "BandedTriangularSolve", f"T=DT_HALF, adjoint={str(adjoint).lower()}, lower={str(lower).lower()}"
        )
    if a._dtype.name not in _SOLVE_TYPES:
        raise _type_error(a, "BandedTriangularSolve", "double, float, half, complex64, complex128")
    for index, t in enumerate((a, b)):
        if len(t._shape) < 2:
            raise static_error(f"In[{index}] ndims must be >= 2: {len(t._shape)}", "BandedTriangularSolve")
    shape_a, shape_b = "[" + ",".join(map(str, a._shape)) + "]", "[" + ",".join(map(str, b._shape)) + "]"
    try:
        np.broadcast_shapes(tuple(a._shape[:-2]), tuple(b._shape[:-2]))
    except ValueError:
        raise static_error(
            f"In[0] and In[1] must have compatible batch dimensions: {shape_a} vs. {shape_b}", "BandedTriangularSolve"
        ) from None
    if a._shape[-1] != b._shape[-2]:
        raise static_error(
            f"In[0] mismatch In[1] shape: {a._shape[-1]} vs. {b._shape[-2]}: {shape_a} {shape_b} 1 0",
            "BandedTriangularSolve",
        )
    static = (("adjoint", bool(adjoint)), ("lower", bool(lower))) + _runtime_checked(a)
    return apply(_banded_solve_op, (a, b), static)[0]
