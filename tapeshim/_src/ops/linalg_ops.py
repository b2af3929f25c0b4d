"""`tf.linalg` on `jnp.linalg` / `lax.linalg` (JAX's gradients)."""

from __future__ import annotations

import collections
from typing import Any

import jax
import jax.numpy as jnp

from tapeshim._src import errors, runtime_checks
from tapeshim._src.ops import array_ops, math_ops, table
from tapeshim._src.ops.common import (
    LINALG_TYPES,
    convert_same_dtype,
    dtype_check,
    enum_name,
    gradient_raises,
    kernels_before_shapes,
    linalg_kernels,
    missing_kernel,
    static_error,
)
from tapeshim._src.ops.linalg_diag import matrix_diag
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _runtime_checked(x: Tensor) -> tuple:
    """`(("checked", True),)` unless x is a tracer of a JAX transformation tapeshim does not run."""
    return () if isinstance(x._value, jax.core.Tracer) else (("checked", True),)


def _check_rhs(a: Tensor, b: Tensor, op_name: str) -> None:
    if len(b._shape) < 2 or b._shape[-2] != a._shape[-1]:
        raise static_error(
            f"Input matrix and rhs are incompatible: matrix of shape [{','.join(map(str, a._shape))}], rhs of shape "
            f"[{','.join(map(str, b._shape))}]",
            op_name,
        )


def _square(x: Tensor, op_name: str) -> None:
    if len(x._shape) < 2 or x._shape[-1] != x._shape[-2]:
        raise static_error(f"Input matrix must be square, got shape {list(x._shape)}", op_name)


def _matrix_op(
    public: str,
    op_name: str,
    impl: Any,
    square: bool = True,
    note: str = "",
    kinds: str = "fc",
    checked: bool = False,
    result: Any = None,
    check: Any = None,
) -> Any:
    op = OpDef(op_name, impl, True, check or dtype_check(op_name, kinds))

    def matrix_fn(input: Any, name: str | None = None) -> Any:  # noqa: A002
        x = convert_to_tensor(input)
        kernels_before_shapes(op.check, (x,))
        if square:
            _square(x, op_name)
        elif len(x._shape) < 2:
            raise static_error(
                f"input must be at least 2-dim, received shape: [{','.join(map(str, x._shape))}]", op_name
            )
        outputs = apply(op, (x,), _runtime_checked(x) if checked else ())
        if len(outputs) == 1:
            return outputs[0]
        return outputs if result is None else result(*outputs)  # (`result`: TF's namedtuple of the outputs)

    matrix_fn.__name__ = matrix_fn.__qualname__ = public
    matrix_fn.__doc__ = f"`tf.linalg.{public}` of a (batch of) matrices."
    return table.export(f"linalg.{public}", dtypes=table.FLOAT, note=note, op=op)(matrix_fn)


def _require_invertible(x: jax.Array, message: str) -> None:
    """A runtime check, as TF's LU-based kernels make: every pivot of x's LU factorization is nonzero."""
    if x.shape[-1] == 0 or x.size == 0:
        return
    lu, _, _ = jax.lax.linalg.lu(jax.lax.stop_gradient(x))
    pivots = jnp.abs(jnp.diagonal(lu, axis1=-2, axis2=-1))
    runtime_checks.require(jnp.all(pivots > 0), message)


def _in_float32(fn: Any) -> Any:
    """`fn` computing in float32 for float16 operands, its outputs rounded back: TF's CPU kernels of half
    precision (`Qr`, `MatrixInverse`) where JAX's LAPACK calls have none."""

    def computed(x: jax.Array, *args: Any, **kwargs: Any) -> Any:
        if x.dtype != jnp.float16:
            return fn(x, *args, **kwargs)
        return jax.tree.map(lambda out: out.astype(jnp.float16), fn(x.astype(jnp.float32), *args, **kwargs))

    return computed


def _adjoint(x: jax.Array) -> jax.Array:
    return jnp.conj(jnp.swapaxes(x, -1, -2))


@_in_float32
def _inv(x: jax.Array, adjoint: bool = False, checked: bool = False) -> jax.Array:
    if adjoint:
        x = _adjoint(x)
    if checked:
        _require_invertible(x, "Input is not invertible. [Op:MatrixInverse]")
    return jnp.linalg.inv(x)


_DETERMINANT_TYPES = ("half", "float", "double", "complex64", "complex128")
_inv_op = OpDef("MatrixInverse", _inv, True, linalg_kernels("MatrixInverse", half=True))


@table.export("linalg.inv", dtypes=table.FLOAT, op=_inv_op)
def inv(input: TensorLike, adjoint: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of (a batch of) square matrices, or of their adjoints, as `tf.linalg.inv`.

    Args:
      input: `[..., n, n]` matrices of float16, float32, float64, complex64 or complex128.
      adjoint: whether to invert the adjoint (conjugate transpose) of each matrix.
      name: ignored.

    Returns:
      The `[..., n, n]` inverses, of `input`'s dtype.

    Raises:
      InvalidArgumentError: for matrices that are not square or not invertible, or another dtype.
    """
    x = convert_to_tensor(input)
    kernels_before_shapes(_inv_op.check, (x,))
    _square(x, "MatrixInverse")
    return apply(_inv_op, (x,), (("adjoint", bool(adjoint)),) + _runtime_checked(x))[0]


det = _matrix_op(
    "det", "MatrixDeterminant", jnp.linalg.det, check=linalg_kernels("MatrixDeterminant", _DETERMINANT_TYPES)
)
LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def _slogdet(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    sign, log_abs = jnp.linalg.slogdet(x)
    return sign, log_abs.astype(x.dtype)  # (TF's log |det| of a complex matrix is complex, its imaginary part 0)


slogdet = _matrix_op(
    "slogdet",
    "LogMatrixDeterminant",
    _slogdet,
    result=LogMatrixDeterminant,
    check=linalg_kernels("LogMatrixDeterminant", _DETERMINANT_TYPES),
)
cholesky = _matrix_op("cholesky", "Cholesky", jnp.linalg.cholesky, check=linalg_kernels("Cholesky"))
logdet = _matrix_op(
    "logdet",
    "Logdet",
    lambda x: 2.0 * jnp.sum(jnp.log(jnp.real(jnp.diagonal(jnp.linalg.cholesky(x), axis1=-2, axis2=-1))), axis=-1),
    note="for Hermitian positive definite; real (float32 for complex64), as TF",
    check=linalg_kernels("Cholesky"),  # (TF's logdet is Python over a Cholesky factor)
)
trace = _matrix_op(
    "trace", "Trace", lambda x: jnp.trace(x, axis1=-2, axis2=-1, dtype=x.dtype), square=False, kinds="fciu"
)
diag_part = _matrix_op(
    "diag_part", "MatrixDiagPart", lambda x: jnp.diagonal(x, axis1=-2, axis2=-1), square=False, kinds="fciu"
)


def _eigh_impl(x: jax.Array) -> tuple:
    # TF reads only the lower triangle, so its gradient lands there (doubled off the diagonal).
    lower = jnp.tril(x)
    return tuple(jnp.linalg.eigh(lower + jnp.conj(jnp.swapaxes(jnp.tril(x, -1), -1, -2))))


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _eigh_vectors(x: jax.Array) -> tuple:
    e, v = _eigh_impl(x)
    return e.astype(x.dtype), v  # (TF's eigenvalues of a complex matrix are complex, their imaginary parts 0)


_eigh_op = OpDef(
    "SelfAdjointEigV2", _eigh_vectors, True, linalg_kernels("SelfAdjointEigV2", attrs=lambda static: ", compute_v=true")
)


def _qr(x: jax.Array, full: bool, graph: bool = False) -> tuple:
    if x.dtype == jnp.float16:
        # TF's gradient of `Qr` solves a triangular system, which TF's CPU has no half kernel for
        attrs = "T=DT_HALF, adjoint=false, lower=false"
        x = gradient_raises(lambda: missing_kernel("MatrixTriangularSolve", attrs, in_graph=graph))(x)
    return _in_float32(lambda y: tuple(jnp.linalg.qr(y, mode="complete" if full else "reduced")))(x)


_qr_op = OpDef("Qr", _qr, True, linalg_kernels("Qr", half=True))
_svd_op = OpDef(
    "Svd",
    lambda x, full, uv: _svd(x, full, uv),
    True,
    linalg_kernels(
        "Svd", attrs=lambda static: f", compute_uv={_flag(static['uv'])}, full_matrices={_flag(static['full'])}"
    ),
)


def _solve(a: jax.Array, b: jax.Array, adjoint: bool, checked: bool = False) -> jax.Array:
    if checked:
        _require_invertible(a, "Input matrix is not invertible. [Op:MatrixSolve]")
    return jnp.linalg.solve(jnp.conj(jnp.swapaxes(a, -1, -2)) if adjoint else a, b)


_solve_op = OpDef(
    "MatrixSolve",
    _solve,
    True,
    linalg_kernels("MatrixSolve", attrs=lambda static: f", adjoint={_flag(static['adjoint'])}"),
)


def _batch_broadcast(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """`a` and `b` with their batch dimensions (all but the last two) broadcast together, as TF's
    `MatrixTriangularSolve` broadcasts them."""
    batch = tuple(jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:])


_TRIANGULAR_KERNELS = linalg_kernels(
    "MatrixTriangularSolve",
    ("bfloat16",) + LINALG_TYPES,
    attrs=lambda static: f", adjoint={_flag(static['adjoint'])}, lower={_flag(static['lower'])}",
)
_triangular_op = OpDef(
    "MatrixTriangularSolve",
    lambda a, b, lower, adjoint: jax.scipy.linalg.solve_triangular(
        *_batch_broadcast(a, b), lower=lower, trans="C" if adjoint else 0
    ),
    True,
    _TRIANGULAR_KERNELS,
)


def _lstsq_kernels(in_avals: tuple, static: dict) -> None:
    """TF's `lstsq` is Python over a Cholesky factor (`fast`), else the `MatrixSolveLs` kernel."""
    if static["fast"]:
        _CHOLESKY_KERNELS(in_avals, static)
    else:
        _SOLVE_LS_KERNELS(in_avals, static)


_CHOLESKY_KERNELS = linalg_kernels("Cholesky")
_SOLVE_LS_KERNELS = linalg_kernels("MatrixSolveLs", attrs=lambda static: ", fast=false")


_diag_op = OpDef("MatrixDiag", lambda d: d[..., :, None] * jnp.eye(d.shape[-1], dtype=d.dtype), True)
_band_op = OpDef("MatrixBandPart", lambda x, lower, upper: _band(x, lower, upper), True)
_lstsq_op = OpDef("MatrixSolveLs", lambda a, b, l2, fast: _lstsq(a, b, l2, fast), True, _lstsq_kernels)


def _svd(x: jax.Array, full: bool, uv: bool) -> Any:
    if not uv:
        return (jnp.linalg.svd(x, compute_uv=False),)
    u, s, vh = jnp.linalg.svd(x, full_matrices=full)
    return s, u, jnp.conj(jnp.swapaxes(vh, -1, -2))


def _band(x: jax.Array, lower: int, upper: int) -> jax.Array:
    rows = jnp.arange(x.shape[-2])[:, None]
    cols = jnp.arange(x.shape[-1])[None, :]
    keep = jnp.ones(x.shape[-2:], bool)
    if lower >= 0:
        keep &= rows - cols <= lower
    if upper >= 0:
        keep &= cols - rows <= upper
    return jnp.where(keep, x, jnp.zeros_like(x))


def _lstsq(a: jax.Array, b: jax.Array, l2: float, fast: bool = True) -> jax.Array:
    if not fast:  # TF's `MatrixSolveLs` kernel: the minimum-norm solution, `l2` ignored, no gradient
        solution = jnp.linalg.pinv(a) @ b
        return gradient_raises(lambda: ValueError("Gradient not defined for fast=False"))(solution)
    at = _adjoint(a)
    if a.shape[-2] < a.shape[-1]:  # underdetermined: the minimum-norm solution, as TF's fast path
        gram = a @ at + l2 * jnp.eye(a.shape[-2], dtype=a.dtype)
        return at @ jnp.linalg.solve(gram, b)
    gram = at @ a + l2 * jnp.eye(a.shape[-1], dtype=a.dtype)
    return jnp.linalg.solve(gram, at @ b)


@table.export(
    "linalg.eigh",
    gradient="tf",
    dtypes=table.FLOAT,
    note="reads the lower triangle, as TF; complex input gives complex eigenvalues, as TF; eigenvector signs may "
    "differ from TF's",
    op=_eigh_op,
)
def eigh(tensor: TensorLike, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, both of its dtype (complex eigenvalues, their
    imaginary parts 0, for a complex matrix), as `tf.linalg.eigh`."""
    x = convert_to_tensor(tensor)
    kernels_before_shapes(_eigh_op.check, (x,))
    _square(x, "SelfAdjointEigV2")
    return apply(_eigh_op, (x,))


@table.export("linalg.qr", dtypes=table.FLOAT, note="column signs may differ from TF's", op=_qr_op)
def qr(input: TensorLike, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """The QR decomposition (q, r); a gradient of float16 raises TF's missing-kernel error, as TF's CPU."""
    x = convert_to_tensor(input)
    graph = (("graph", True),) if x._dtype.name == "float16" and _thread_state.trace is not None else ()
    return apply(_qr_op, (x,), (("full", bool(full_matrices)),) + graph)


@table.export("linalg.svd", dtypes=table.FLOAT, note="singular vector signs may differ from TF's", op=_svd_op)
def svd(tensor: TensorLike, full_matrices: bool = False, compute_uv: bool = True, name: str | None = None) -> Any:
    """Singular values, and (s, u, v) with v not transposed, as TF returns them."""
    outputs = apply(_svd_op, (convert_to_tensor(tensor),), (("full", bool(full_matrices)), ("uv", bool(compute_uv))))
    return outputs if compute_uv else outputs[0]


@table.export("linalg.solve", dtypes=table.FLOAT, op=_solve_op)
def solve(matrix: TensorLike, rhs: TensorLike, adjoint: bool = False, name: str | None = None) -> Tensor:
    """X with matrix @ X = rhs (or adjoint(matrix) @ X = rhs)."""
    a, b = convert_same_dtype((matrix, rhs), "MatrixSolve")
    kernels_before_shapes(_solve_op.check, (a,), (("adjoint", bool(adjoint)),))
    _square(a, "MatrixSolve")
    _check_rhs(a, b, "MatrixSolve")
    return apply(_solve_op, (a, b), (("adjoint", bool(adjoint)),) + _runtime_checked(a))[0]


@table.export("linalg.triangular_solve", dtypes=table.FLOAT, op=_triangular_op)
def triangular_solve(
    matrix: TensorLike, rhs: TensorLike, lower: bool = True, adjoint: bool = False, name: str | None = None
) -> Tensor:
    """X with matrix @ X = rhs for a triangular matrix."""
    a, b = convert_same_dtype((matrix, rhs), "MatrixTriangularSolve")
    kernels_before_shapes(_TRIANGULAR_KERNELS, (a,), (("adjoint", bool(adjoint)), ("lower", bool(lower))))
    _square(a, "MatrixTriangularSolve")
    _check_rhs(a, b, "MatrixTriangularSolve")
    return apply(_triangular_op, (a, b), (("adjoint", bool(adjoint)), ("lower", bool(lower))))[0]


@table.export("linalg.diag", dtypes=table.ANY, op=_diag_op)
def diag(
    diagonal: TensorLike,
    name: str = "diag",
    k: TensorLike = 0,
    num_rows: int = -1,
    num_cols: int = -1,
    padding_value: TensorLike = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """Matrices with `diagonal` on the k-th diagonal, or the band `k = (lower, upper)` (TF's MatrixDiagV3).

    Args:
      diagonal: `[..., N]` for one diagonal; `[..., upper - lower + 1, N]` for a band, upper diagonal first.
      k: the diagonal offset (0: main, >0 above, <0 below), or a `(lower, upper)` pair.
      num_rows, num_cols: the matrices' size (-1: the smallest that fits).
      padding_value: the value off the diagonals.
      align: where shorter diagonals of a band sit: `"RIGHT_LEFT"` (TF's default), `"LEFT_RIGHT"`,
        `"LEFT_LEFT"`, `"RIGHT_RIGHT"` (superdiagonals, then subdiagonals).

    Raises:
      InvalidArgumentError: `k` is not a valid band, or the sizes do not fit the diagonals.
    """
    if (
        isinstance(k, int)
        and k == 0
        and num_rows == -1
        and num_cols == -1
        and isinstance(padding_value, (int, float))
        and padding_value == 0
    ):
        d = convert_to_tensor(diagonal)
        if not d._shape:
            raise static_error("diagonal must be at least 1-dim, received shape: []", "MatrixDiagV3")
        return apply(_diag_op, (d,))[0]
    return matrix_diag(diagonal, k, num_rows, num_cols, padding_value, align)


def _eig_impl(x: jax.Array, vectors: bool) -> tuple:
    # (TF differentiates the eigenvectors too: distinct eigenvalues assumed, as its EigGrad)
    return tuple(
        jax.lax.linalg.eig(
            x, compute_left_eigenvectors=False, compute_right_eigenvectors=vectors, enable_eigvec_derivs=vectors
        )
    )


def _eig_shapes(in_avals: tuple, static: dict) -> None:
    """TF's `Eig` shape function's errors (its dtypes are `_eig`'s to refuse, as TF's wrapper)."""
    shape, _ = in_avals[0]
    if len(shape) < 2:
        raise static_error(f"Input tensor 0 must have rank >= 2, got {len(shape)}", "Eig")
    if shape[-1] != shape[-2]:
        raise static_error("Input matrix must be square.", "Eig")


_eig_op = OpDef("Eig", _eig_impl, True, _eig_shapes)
_EIG_TYPES = ("float32", "complex64", "float64", "complex128")


def _eig(tensor: TensorLike, vectors: bool) -> tuple:
    x = convert_to_tensor(tensor)
    if x._dtype.name not in _EIG_TYPES:  # (TF's wrapper picks the output dtype for these only)
        raise UnboundLocalError("cannot access local variable 'out_dtype' where it is not associated with a value")
    return apply(_eig_op, (x,), (("vectors", vectors),))


@table.export(
    "linalg.eig",
    "eig",
    dtypes=table.FLOAT,
    note="eigenvalues in LAPACK's order (TF's Eigen solver often agrees, not always); each eigenvector may differ from "
    "TF's by a complex phase",
    op=_eig_op,
)
def eig(tensor: TensorLike, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The eigenvalues and eigenvectors of (a batch of) square matrices, as `tf.linalg.eig`.

    Args:
      tensor: `[..., n, n]` matrices of float32, float64, complex64 or complex128.
      name: ignored.

    Returns:
      `(e, v)`: `[..., n]` eigenvalues and `[..., n, n]` eigenvectors (columns, unit norm), complex64 for
      float32 and complex64 matrices, complex128 for the others.

    Raises:
      InvalidArgumentError: matrices that are not square (`ValueError` inside a function, as TF's shape function).
      UnboundLocalError: another dtype, as TF's wrapper.
    """
    e, v = _eig(tensor, True)
    return e, v


@table.export("linalg.eigvals", "eigvals", dtypes=table.FLOAT, note="in LAPACK's order (see `eig`)", op=_eig_op)
def eigvals(tensor: TensorLike, name: str | None = None) -> Tensor:
    """The eigenvalues of (a batch of) square matrices, as `tf.linalg.eigvals` (see `eig`)."""
    return _eig(tensor, False)[0]


@table.export("linalg.band_part", dtypes=table.ANY, op=_band_op)
def band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Keeps `num_lower` sub- and `num_upper` super-diagonals (-1: all), zeroing the rest."""
    x = convert_to_tensor(input)
    if len(x._shape) < 2:
        raise errors.invalid_argument(  # TF checks this in the kernel, also in graph mode
            f"input must be at least 2-dim, received shape: [{','.join(map(str, x._shape))}]", "MatrixBandPart"
        )
    bands = []
    for name, value, size, what in (
        ("num_lower", num_lower, x._shape[-2], "rows"),
        ("num_upper", num_upper, x._shape[-1], "columns"),
    ):
        if isinstance(value, (float, jnp.floating)) or (
            hasattr(value, "dtype")
            and not jnp.issubdtype(jnp.dtype(getattr(value.dtype, "as_numpy_dtype", value.dtype)), jnp.integer)
        ):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype int64")
        if int(value) > size:
            raise errors.invalid_argument(
                f"{name} must be negative or less or equal to number of {what} ({size}) got: {int(value)}",
                "MatrixBandPart",
            )
        bands.append(int(value))
    return apply(_band_op, (x,), (("lower", bands[0]), ("upper", bands[1])))[0]


def _fast_path_errors(a: Tensor, l2_regularizer: Any) -> None:
    """The errors of TF's `fast` path (Python over `MatMul` and `Cholesky`) before its Cholesky's: a bool matrix,
    an unsigned one (no CPU `MatMul` kernel, eagerly), a Python float `l2_regularizer` for an integer matrix."""
    dtype = a._dtype
    if dtype.is_bool:
        raise TypeError("Expected numeric or variant tensor, got dtype tf.bool.")
    if dtype.is_unsigned and _thread_state.trace is None:
        raise missing_kernel(
            "MatMul", f"T={enum_name(dtype)}, grad_a=false, grad_b=false, transpose_a=true, transpose_b=false"
        )
    if dtype.name in ("int32", "int64") and isinstance(l2_regularizer, float) and l2_regularizer != 0:
        raise TypeError(
            f"Expected {dtype.name}, but got {l2_regularizer!r} of type 'float'."
            if _thread_state.trace is not None
            else f"Cannot convert {l2_regularizer!r} to EagerTensor of dtype {dtype.name}"
        )


@table.export(
    "linalg.lstsq",
    dtypes=table.REAL_FLOAT,
    note="fast=True: normal equations, as TF; fast=False: the minimum-norm solution (l2_regularizer ignored, "
    "no gradient), as TF's kernel",
    op=_lstsq_op,
)
def lstsq(
    matrix: TensorLike, rhs: TensorLike, l2_regularizer: float = 0.0, fast: bool = True, name: str | None = None
) -> Tensor:
    """The least-squares solution X of matrix @ X = rhs, as `tf.linalg.lstsq`.

    Args:
      matrix: `[..., m, n]` matrices.
      rhs: `[..., m, k]` right-hand sides.
      l2_regularizer: the L2 regularization of the `fast` path (ignored when `fast` is False, as TF).
      fast: True: the (regularized) normal equations, solved by Cholesky; False: the minimum-norm
        least-squares solution (also of rank-deficient matrices), which has no gradient.
      name: ignored.

    Returns:
      The `[..., n, k]` solutions.

    Raises:
      InvalidArgumentError: for shapes that do not fit or a dtype TF's kernels refuse.
      TypeError: a Python float `l2_regularizer` (not 0) for an integer matrix, as TF.
      ValueError: differentiating with `fast=False`, as TF.
    """
    a, b = convert_same_dtype((matrix, rhs), "MatrixSolveLs")
    if fast:
        _fast_path_errors(a, l2_regularizer)
    kernels_before_shapes(_lstsq_kernels, (a,), (("fast", bool(fast)),))
    if len(a._shape) < 2 or len(b._shape) < 2 or a._shape[-2] != b._shape[-2]:
        raise static_error(
            f"Matrix size-incompatible: In[0]: [{','.join(map(str, a._shape))}], In[1]: "
            f"[{','.join(map(str, b._shape))}]",
            "MatMul",
        )
    l2 = float(l2_regularizer) if fast else 0.0  # (ignored by the slow path: one kernel for every value)
    return apply(_lstsq_op, (a, b), (("l2", l2), ("fast", bool(fast))))[0]


@table.export("linalg.matvec", dtypes=table.NUMERIC)
def matvec(
    a: TensorLike,
    b: TensorLike,
    transpose_a: bool = False,
    adjoint_a: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """Matrix-vector product a @ b."""
    b_t = convert_to_tensor(b)
    product = math_ops.matmul(a, array_ops.expand_dims(b_t, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return array_ops.squeeze(product, -1)


_eigvalsh_op = OpDef(
    "SelfAdjointEigV2",
    lambda x: _eigh_impl(x)[0].astype(x.dtype),
    True,
    linalg_kernels("SelfAdjointEigV2", attrs=lambda static: ", compute_v=false"),
)


@table.export(
    "linalg.eigvalsh",
    gradient="tf",
    dtypes=table.FLOAT,
    note="reads the lower triangle, as TF; complex input gives complex eigenvalues, as TF; float16 raises "
    "NotFoundError, as TF's CPU kernels",
    op=_eigvalsh_op,
)
def eigvalsh(tensor: TensorLike, name: str | None = None) -> Tensor:
    """The eigenvalues (ascending) of a (batch of) Hermitian matrices, as `tf.linalg.eigvalsh`.

    Args:
      tensor: `[..., n, n]`; only its lower triangle is read.
      name: ignored.

    Returns:
      `[..., n]` eigenvalues, of `tensor`'s dtype.

    Raises:
      InvalidArgumentError: if the matrices are not square or the dtype is not floating or complex.
      NotFoundError: for float16, which TF's CPU kernels do not support.
    """
    x = convert_to_tensor(tensor)
    kernels_before_shapes(_eigvalsh_op.check, (x,))
    if len(x._shape) < 2:
        raise static_error(f"Input tensor 0 must have rank >= 2, got {len(x._shape)}", "SelfAdjointEigV2")
    _square(x, "SelfAdjointEigV2")
    return apply(_eigvalsh_op, (x,))[0]


@table.export("linalg.cholesky_solve", dtypes=table.FLOAT, note="float16/bfloat16 raise NotFoundError, as TF's CPU")
def cholesky_solve(chol: TensorLike, rhs: TensorLike, name: str | None = None) -> Tensor:
    """X with A @ X = rhs, given A's lower Cholesky factor `chol`, by two triangular solves, as
    `tf.linalg.cholesky_solve`.

    Args:
      chol: `[..., m, m]` lower-triangular factors.
      rhs: `[..., m, k]` right-hand sides.
      name: ignored.

    Returns:
      `[..., m, k]` solutions.

    Raises:
      InvalidArgumentError: for shapes that do not match or a dtype that is not floating or complex.
      NotFoundError: for float16 and bfloat16, which TF's CPU kernels do not support.
    """
    a, b = convert_same_dtype((chol, rhs), "MatrixTriangularSolve")
    solved = triangular_solve(a, b, lower=True, adjoint=False)  # (its kernels checked before its shapes, as TF)
    return triangular_solve(a, solved, lower=True, adjoint=True)


def _tensor_diag(d: jax.Array) -> jax.Array:
    return jnp.diag(d.reshape(-1)).reshape(d.shape + d.shape)


_tensor_diag_op = OpDef(
    "Diag",
    _tensor_diag,
    True,
    dtype_check("Diag", "fci", ("bfloat16", "half", "float", "double", "int32", "int64", "complex64", "complex128")),
)


@table.export(
    "linalg.tensor_diag", dtypes=table.NUMERIC, note="bfloat16 raises NotFoundError, as TF's CPU", op=_tensor_diag_op
)
def tensor_diag(diagonal: TensorLike, name: str | None = None) -> Tensor:
    """The tensor of shape `diagonal.shape + diagonal.shape` holding `diagonal` on its diagonal (zeros elsewhere),
    as `tf.linalg.tensor_diag`.

    Args:
      diagonal: a tensor of rank at least 1.
      name: ignored.

    Returns:
      A tensor of twice `diagonal`'s rank and its dtype.

    Raises:
      InvalidArgumentError: for a scalar, or a dtype TF's Diag does not take.
      NotFoundError: for bfloat16, which TF's CPU kernels do not support.
    """
    d = convert_to_tensor(diagonal)
    if d._dtype.name == "bfloat16":
        raise missing_kernel("Diag", "T=DT_BFLOAT16")
    if not d._shape:
        raise static_error("Input must be at least rank 1, got 0", "Diag")
    return apply(_tensor_diag_op, (d,))[0]
