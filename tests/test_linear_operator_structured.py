"""The structured tf.linalg operators (circulant, Toeplitz, Householder, permutation, tridiagonal, zeros,
block lower triangular) against TF: every method, derived operators, gradients through a GradientTape,
errors, batch shapes, float32/float64/complex, and inside `tf.function`.

Each operator is made by `OPERATORS[kind](tf, batched)` from the same numpy data in both modules and
summarized by `summary` (every method's value or error class, as `test_linear_operator.summary`, for real and
complex operators). TF's tridiagonal operator needs an argument with the operator's batch rank, so batched
tridiagonal operators get a batched argument.
"""

import numpy as np
import pytest
from test_linear_operator import _arg, _attempt, _operator

import tapeshim
from oracle import check, check_raises

RNG = np.random.default_rng(11)


def _var(tf, array, dtype="float64"):
    return tf.Variable(np.asarray(array).astype(dtype))


# spectra bounded away from zero (non-singular), real and complex
SPECTRUM = {False: RNG.uniform(1.0, 2.0, size=(4,)), True: RNG.uniform(1.0, 2.0, size=(2, 4))}
SPECTRUM_C = {b: s + 0.5j * RNG.normal(size=s.shape) for b, s in SPECTRUM.items()}
SPECTRUM_2D = {False: RNG.uniform(1.0, 2.0, size=(2, 3)), True: RNG.uniform(1.0, 2.0, size=(2, 2, 3))}
SPECTRUM_3D = RNG.uniform(1.0, 2.0, size=(2, 2, 2))
COL = {False: np.array([3.0, 0.5, -0.3]), True: np.array([[3.0, 0.5, -0.3], [2.5, 0.2, 0.4]])}
ROW = {False: np.array([9.0, 0.7, 0.2]), True: np.array([[9.0, 0.7, 0.2], [1.0, -0.6, 0.1]])}
AXIS = {False: RNG.normal(size=(3,)), True: RNG.normal(size=(2, 3))}
PERM = {False: np.array([2, 0, 1], np.int32), True: np.array([[2, 0, 1], [1, 0, 2]], np.int32)}
COMPACT = {
    False: np.stack([RNG.normal(size=3), 3 + RNG.uniform(size=3), RNG.normal(size=3)]),
    True: np.stack([RNG.normal(size=(2, 3)), 3 + RNG.uniform(size=(2, 3)), RNG.normal(size=(2, 3))], axis=-2),
}


def _tridiag_matrix(compact):
    sup, diag, sub = compact[..., 0, :], compact[..., 1, :], compact[..., 2, :]
    n = diag.shape[-1]
    out = np.zeros(diag.shape + (n,))
    idx = np.arange(n)
    out[..., idx, idx] = diag
    out[..., idx[:-1], idx[1:]] = sup[..., :-1]
    out[..., idx[1:], idx[:-1]] = sub[..., 1:]
    return out


def _spd_tridiag(batched):
    off = COMPACT[batched][..., 0, :]
    return np.stack([off, COMPACT[batched][..., 1, :], np.roll(off, 1, axis=-1)], axis=-2)


BLOCK00 = {False: RNG.normal(size=(2, 2)) / 3 + 2 * np.eye(2), True: RNG.normal(size=(2, 2, 2)) / 3 + 2 * np.eye(2)}
BLOCK10 = RNG.normal(size=(2, 2))
BLOCK20 = RNG.normal(size=(1, 2))
BLOCK21 = RNG.normal(size=(1, 2))


def _block_lower(tf, b):
    return tf.linalg.LinearOperatorBlockLowerTriangular(
        [
            [tf.linalg.LinearOperatorFullMatrix(_var(tf, BLOCK00[b]), is_non_singular=True)],
            [
                tf.linalg.LinearOperatorFullMatrix(_var(tf, BLOCK10)),
                tf.linalg.LinearOperatorDiag(_var(tf, [1.5, 2.5]), is_non_singular=True),
            ],
        ]
    )


def _block_lower_3(tf, b):
    return tf.linalg.LinearOperatorBlockLowerTriangular(
        [
            [tf.linalg.LinearOperatorLowerTriangular(_var(tf, BLOCK00[b]))],
            [
                tf.linalg.LinearOperatorFullMatrix(_var(tf, BLOCK10)),
                tf.linalg.LinearOperatorIdentity(2, dtype=tf.float64),
            ],
            [
                tf.linalg.LinearOperatorFullMatrix(_var(tf, BLOCK20)),
                tf.linalg.LinearOperatorFullMatrix(_var(tf, BLOCK21)),
                tf.linalg.LinearOperatorScaledIdentity(1, _var(tf, 1.7)),
            ],
        ],
        is_self_adjoint=False,
    )


def _circulant(tf, b):
    return tf.linalg.LinearOperatorCirculant(_var(tf, SPECTRUM[b]), input_output_dtype=tf.float64)


OPERATORS = {
    "circulant": _circulant,
    "circulant_complex": lambda tf, b: tf.linalg.LinearOperatorCirculant(
        _var(tf, SPECTRUM_C[b], "complex128"), input_output_dtype=tf.complex128
    ),
    "circulant_complex64_real_spectrum": lambda tf, b: tf.linalg.LinearOperatorCirculant(
        tf.constant(SPECTRUM[b], tf.float32), is_positive_definite=True
    ),
    "circulant_2d": lambda tf, b: tf.linalg.LinearOperatorCirculant2D(
        _var(tf, SPECTRUM_2D[b]), input_output_dtype=tf.float64
    ),
    "circulant_3d": lambda tf, b: tf.linalg.LinearOperatorCirculant3D(
        _var(tf, SPECTRUM_3D[None] if b else SPECTRUM_3D, "complex128"), input_output_dtype=tf.complex128
    ),
    "toeplitz": lambda tf, b: tf.linalg.LinearOperatorToeplitz(_var(tf, COL[b]), _var(tf, ROW[b])),
    "toeplitz_spd": lambda tf, b: tf.linalg.LinearOperatorToeplitz(
        _var(tf, COL[b]), _var(tf, COL[b]), is_self_adjoint=True, is_positive_definite=True
    ),
    "householder": lambda tf, b: tf.linalg.LinearOperatorHouseholder(_var(tf, AXIS[b])),
    "householder_complex": lambda tf, b: tf.linalg.LinearOperatorHouseholder(
        _var(tf, AXIS[b] + 1j * AXIS[b][..., ::-1], "complex128")
    ),
    "toeplitz_complex": lambda tf, b: tf.linalg.LinearOperatorToeplitz(
        _var(tf, COL[b] + 0.5j, "complex128"), _var(tf, ROW[b] - 0.25j, "complex128")
    ),
    "tridiag_complex": lambda tf, b: tf.linalg.LinearOperatorTridiag(_var(tf, COMPACT[b] * (1 + 0.5j), "complex128")),
    "permutation_complex": lambda tf, b: tf.linalg.LinearOperatorPermutation(tf.constant(PERM[b]), dtype=tf.complex128),
    "permutation": lambda tf, b: tf.linalg.LinearOperatorPermutation(tf.constant(PERM[b]), dtype=tf.float64),
    "permutation_float32": lambda tf, b: tf.linalg.LinearOperatorPermutation(tf.constant(PERM[b])),
    "tridiag": lambda tf, b: tf.linalg.LinearOperatorTridiag(_var(tf, COMPACT[b])),
    "tridiag_spd": lambda tf, b: tf.linalg.LinearOperatorTridiag(
        _var(tf, _spd_tridiag(b)), is_self_adjoint=True, is_positive_definite=True
    ),
    "tridiag_sequence": lambda tf, b: tf.linalg.LinearOperatorTridiag(
        [_var(tf, COMPACT[b][..., 0, :]), _var(tf, COMPACT[b][..., 1, :]), _var(tf, COMPACT[b][..., 2, :])],
        diagonals_format="sequence",
    ),
    "tridiag_matrix": lambda tf, b: tf.linalg.LinearOperatorTridiag(
        _var(tf, _tridiag_matrix(COMPACT[b])), diagonals_format="matrix"
    ),
    "block_lower": _block_lower,
    "block_lower_3": _block_lower_3,
    "block_lower_spd": lambda tf, b: tf.linalg.LinearOperatorBlockLowerTriangular(
        [[tf.linalg.LinearOperatorDiag(_var(tf, SPECTRUM[b]), is_positive_definite=True)]],
        is_self_adjoint=True,
        is_positive_definite=True,
    ),
    "zeros": lambda tf, b: tf.linalg.LinearOperatorZeros(3, batch_shape=[2] if b else None, dtype=tf.float64),
    "zeros_wide": lambda tf, b: tf.linalg.LinearOperatorZeros(
        3, 2, batch_shape=[2] if b else None, is_square=False, is_self_adjoint=False
    ),
}


def summary(tf, op, batched_arg=False):
    """Every method of `op`: a dict of values (or the errors' classes)."""
    m, n = int(op.range_dimension), int(op.domain_dimension)
    x = _arg(tf, op, n, batched_arg)
    y = _arg(tf, op, m, batched_arg)
    if op.dtype.is_complex:
        x, y = x * tf.constant(1 - 0.5j, op.dtype), y * tf.constant(0.5 + 1j, op.dtype)
    base = tf.cast(tf.reshape(tf.range(m * n, dtype=op.dtype.real_dtype), [m, n]), op.dtype)
    return {
        "name": op.name,
        "shape": op.shape,
        "batch_shape": op.batch_shape,
        "tensor_rank": op.tensor_rank,
        "dims": (int(op.range_dimension), int(op.domain_dimension)),
        "shape_tensor": op.shape_tensor(),
        "batch_shape_tensor": op.batch_shape_tensor(),
        "dtype": op.dtype,
        "hints": (op.is_non_singular, op.is_self_adjoint, op.is_positive_definite, _attempt(lambda: op.is_square)),
        "to_dense": op.to_dense(),
        "diag_part": _attempt(op.diag_part),
        "trace": _attempt(op.trace),
        "determinant": _attempt(op.determinant),
        "log_abs_determinant": _attempt(op.log_abs_determinant),
        "matmul": op.matmul(x),
        "@": op @ x,
        "matmul_adjoint": op.matmul(y, adjoint=True),
        "matmul_adjoint_arg": op.matmul(tf.linalg.adjoint(x), adjoint_arg=True),
        "matmul_both": op.matmul(tf.linalg.adjoint(y), adjoint=True, adjoint_arg=True),
        "matvec": op.matvec(x[..., 0]),
        "matvec_adjoint": op.matvec(y[..., 0], adjoint=True),
        "solve": _attempt(lambda: op.solve(y)),
        "solve_adjoint": _attempt(lambda: op.solve(x, adjoint=True)),
        "solve_adjoint_arg": _attempt(lambda: op.solve(tf.linalg.adjoint(y), adjoint_arg=True)),
        "solvevec": _attempt(lambda: op.solvevec(y[..., 0])),
        "solvevec_adjoint": _attempt(lambda: op.solvevec(x[..., 0], adjoint=True)),
        "add_to_tensor": op.add_to_tensor(base + tf.zeros(op.batch_shape.as_list() + [m, n], op.dtype)),
        "eigvals": _attempt(op.eigvals),
        "cond": _attempt(op.cond),
        "adjoint": _attempt(lambda: _operator(tf, op.adjoint())),
        "H": _attempt(lambda: _operator(tf, op.H)),
        "inverse": _attempt(lambda: _operator(tf, op.inverse())),
        "cholesky": _attempt(lambda: _operator(tf, op.cholesky())),
        "variables": len(op.trainable_variables),
    }


def _needs_batched_arg(kind, batched):
    return batched and kind.startswith("tridiag")


@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
@pytest.mark.parametrize("kind", sorted(OPERATORS))
def test_operator_methods(kind, batched):
    check(lambda tf: summary(tf, OPERATORS[kind](tf, batched), _needs_batched_arg(kind, batched)))


@pytest.mark.parametrize("kind", ["circulant", "circulant_complex", "toeplitz", "householder", "permutation", "zeros"])
def test_batched_argument_broadcasts_against_the_operator(kind):
    check(lambda tf: summary(tf, OPERATORS[kind](tf, False), batched_arg=True))


def _loss(tf, op, batched_arg):
    x = _arg(tf, op, int(op.domain_dimension), batched_arg)
    loss = tf.reduce_sum(tf.abs(op.matmul(x)) ** 2) + tf.reduce_sum(tf.abs(op.to_dense()))
    loss += tf.reduce_sum(tf.abs(op.solve(x)) ** 2) + tf.reduce_sum(tf.abs(op.solvevec(x[..., 0], adjoint=True)))
    loss += tf.reduce_sum(tf.abs(op.log_abs_determinant())) + tf.reduce_sum(tf.abs(op.trace()))
    return loss + tf.reduce_sum(tf.abs(op.diag_part()))


def gradients(tf, op, batched_arg=False):
    """The loss and its gradient w.r.t. each of the operator's variables (in the order TF lists them)."""
    variables = sorted(op.trainable_variables, key=lambda v: v.shape.as_list())
    with tf.GradientTape() as tape:
        loss = _loss(tf, op, batched_arg)
    return loss, tape.gradient(loss, variables)


# TF's gradient of `tridiagonal_solve` is wrong for complex diagonals (see test_complex_tridiag_solve_gradient)
GRADIENT_KINDS = sorted(
    k for k in OPERATORS if not k.startswith(("permutation", "zeros", "circulant_complex64")) and k != "tridiag_complex"
)


@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
@pytest.mark.parametrize("kind", GRADIENT_KINDS)
def test_gradients_through_a_tape(kind, batched):
    check(lambda tf: gradients(tf, OPERATORS[kind](tf, batched), _needs_batched_arg(kind, batched)))


@pytest.mark.parametrize(
    "kind", ["circulant", "circulant_complex", "toeplitz", "householder", "tridiag", "permutation", "block_lower"]
)
def test_gradient_with_respect_to_the_argument(kind):
    def body(tf):
        op = OPERATORS[kind](tf, True)
        x = tf.Variable(_arg(tf, op, int(op.domain_dimension), batched=True))
        with tf.GradientTape() as tape:
            y = op.matmul(x) + op.solve(x, adjoint=True) + op.matmul(x, adjoint=True)
            loss = tf.reduce_sum(tf.abs(y) ** 2)
        return loss, tape.gradient(loss, x)

    check(body)


@pytest.mark.parametrize(
    "kind", ["circulant", "circulant_2d", "toeplitz", "householder", "tridiag", "permutation", "block_lower_3"]
)
def test_inside_function(kind):
    def body(tf):
        op = OPERATORS[kind](tf, True)

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(op.solve(x) ** 2) + tf.reduce_sum(op.log_abs_determinant())
                loss += tf.reduce_sum(op.matmul(x, adjoint=True))
            variables = sorted(op.trainable_variables, key=lambda v: v.shape.as_list())
            return loss, op.matvec(x[..., 0]), op.to_dense(), tape.gradient(loss, [x] + variables)

        x = _arg(tf, op, int(op.domain_dimension), batched=True)
        return step(x), step(x * 2.0)

    check(body)


def test_complex_tridiag_solve_gradient():
    """tapeshim's gradient of a complex tridiagonal solve is TF's gradient of the same solve done densely
    (TF's own `tridiagonal_solve` gradient misses a conjugate for complex diagonals)."""

    def body(tf):
        op = OPERATORS["tridiag_complex"](tf, True)
        x = _arg(tf, op, 3, batched=True) * tf.constant(1 + 0.2j, tf.complex128)
        with tf.GradientTape() as tape:
            solver = op if tf is tapeshim else tf.linalg.LinearOperatorFullMatrix(op.to_dense())
            loss = tf.reduce_sum(tf.abs(solver.solve(x)) ** 2)
            loss += tf.reduce_sum(tf.abs(solver.solve(x, adjoint=True, adjoint_arg=False)))
        return loss, tape.gradient(loss, op.trainable_variables)

    check(body)


def test_zeros_gradient_with_respect_to_the_argument_is_none():
    def body(tf):
        x = tf.Variable(tf.ones([3, 2]))
        op = tf.linalg.LinearOperatorZeros(3, batch_shape=[2])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(op.matmul(x)) + tf.reduce_sum(op.matvec(x[:, 0], adjoint=True))
        return loss, tape.gradient(loss, x)

    check(body)


def test_float32_operators():
    def body(tf):
        ops = {
            "circulant": tf.linalg.LinearOperatorCirculant(
                tf.constant(SPECTRUM[True], tf.float32), input_output_dtype=tf.float32
            ),
            "toeplitz": tf.linalg.LinearOperatorToeplitz(
                tf.constant(COL[True], tf.float32), tf.constant(ROW[True], tf.float32)
            ),
            "householder": tf.linalg.LinearOperatorHouseholder(tf.constant(AXIS[True], tf.float32)),
            "tridiag": tf.linalg.LinearOperatorTridiag(tf.constant(COMPACT[False], tf.float32)),
            "zeros": tf.linalg.LinearOperatorZeros(3),
        }
        return {name: summary(tf, op) for name, op in ops.items()}

    check(body)


def test_circulant_complex_spectrum_with_real_dtype():
    hermitian = np.fft.fft(np.array([2.0, 0.5, -0.3, 0.5]))  # the spectrum of a real symmetric kernel

    def body(tf):
        op = tf.linalg.LinearOperatorCirculant(tf.constant(hermitian, tf.complex128), input_output_dtype=tf.float64)
        x = tf.constant(np.arange(8.0).reshape(4, 2))
        return summary(tf, op), op.convolution_kernel(), op.block_depth, op.block_shape, op.matmul(x)

    check(body)


def test_circulant_integer_spectrum():
    def body(tf):
        op = tf.linalg.LinearOperatorCirculant(tf.constant([3, 1, 2]))
        x = tf.constant(np.arange(6.0).reshape(3, 2), tf.complex64)
        return op.dtype, op.is_self_adjoint, op.to_dense(), op.matmul(x), op.solve(x), op.determinant()

    check(body)


def test_circulant_properties():
    def body(tf):
        op = OPERATORS["circulant_2d"](tf, True)
        return (
            op.block_depth,
            op.block_shape,
            op.block_shape_tensor(),
            op.convolution_kernel(),
            op.spectrum.shape,
            sorted(op.parameters),
            op.name,
        )

    check(body)


def test_parameters_and_properties():
    def body(tf):
        out = {}
        for kind in sorted(OPERATORS):
            op = OPERATORS[kind](tf, False)
            out[kind] = (sorted(op.parameters), op.name)
        tri = OPERATORS["tridiag"](tf, True)
        toeplitz = OPERATORS["toeplitz"](tf, True)
        out["props"] = (
            tri.diagonals_format,
            tri.diagonals,
            toeplitz.col,
            toeplitz.row,
            OPERATORS["householder"](tf, True).reflection_axis,
            OPERATORS["permutation"](tf, True).perm,
            OPERATORS["circulant"](tf, True).spectrum,
        )
        return out

    check(body)


# -- derived operators and products -------------------------------------------------------------------------
PRODUCTS = {
    "circulant_circulant": lambda tf: _circulant(tf, True) @ _circulant(tf, False),
    "circulant_solve_circulant": lambda tf: _circulant(tf, True).solve(_circulant(tf, False)),
    "complex_circulant_adjoint": lambda tf: OPERATORS["circulant_complex"](tf, True).adjoint(),
    "complex_circulant_inverse": lambda tf: OPERATORS["circulant_complex"](tf, True).inverse(),
    "circulant_2d_inverse": lambda tf: OPERATORS["circulant_2d"](tf, True).inverse(),
    "circulant_3d_adjoint": lambda tf: OPERATORS["circulant_3d"](tf, True).adjoint(),
    "circulant_full": lambda tf: _circulant(tf, False) @ tf.linalg.LinearOperatorFullMatrix(_var(tf, np.eye(4) * 2)),
    "zeros_diag": lambda tf: OPERATORS["zeros"](tf, True) @ tf.linalg.LinearOperatorDiag(_var(tf, [1.0, 2.0, 3.0])),
    "diag_zeros": lambda tf: tf.linalg.LinearOperatorDiag(_var(tf, [1.0, 2.0, 3.0])) @ OPERATORS["zeros"](tf, True),
    "zeros_wide_adjoint": lambda tf: OPERATORS["zeros_wide"](tf, True).adjoint(),
    "householder_inverse": lambda tf: OPERATORS["householder"](tf, True).inverse(),
    "householder_householder": lambda tf: OPERATORS["householder"](tf, True) @ OPERATORS["householder"](tf, False),
    "permutation_self_adjoint": lambda tf: tf.linalg.LinearOperatorPermutation(
        [1, 0, 2], is_self_adjoint=True
    ).adjoint(),
    "toeplitz_spd_cholesky": lambda tf: OPERATORS["toeplitz_spd"](tf, True).cholesky(),
    "block_lower_inverse_of_inverse": lambda tf: _block_lower_3(tf, True).inverse().inverse(),
    "block_lower_times_diag": lambda tf: _block_lower(tf, False) @ tf.linalg.LinearOperatorDiag(_var(tf, np.ones(4))),
    "tridiag_spd_inverse": lambda tf: OPERATORS["tridiag_spd"](tf, True).inverse(),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_operator_products(name):
    check(lambda tf: _operator(tf, PRODUCTS[name](tf)))


# -- errors -------------------------------------------------------------------------------------------------
def _blocks(tf, *rows, **hints):
    def make(block):
        if isinstance(block, tuple):
            return tf.linalg.LinearOperatorDiag(tf.constant(block[1:]), is_non_singular=block[0])
        return tf.linalg.LinearOperatorFullMatrix(tf.constant(block))

    return tf.linalg.LinearOperatorBlockLowerTriangular([[make(b) for b in row] for row in rows], **hints)


ERRORS = {
    "block_lower_empty": lambda tf: tf.linalg.LinearOperatorBlockLowerTriangular([]),
    "block_lower_row_length": lambda tf: _blocks(tf, [(None, 1.0, 2.0)], [(None, 1.0, 2.0)]),
    "block_lower_diag_not_square": lambda tf: _blocks(tf, [[[1.0, 2.0]]]),
    "block_lower_dtypes": lambda tf: tf.linalg.LinearOperatorBlockLowerTriangular(
        [
            [tf.linalg.LinearOperatorDiag([1.0, 2.0])],
            [
                tf.linalg.LinearOperatorFullMatrix(tf.ones([2, 2])),
                tf.linalg.LinearOperatorIdentity(2, dtype=tf.float64),
            ],
        ]
    ),
    "block_lower_not_square": lambda tf: _blocks(tf, [(None, 1.0, 2.0)], is_square=False),
    "block_lower_singular_hint": lambda tf: _blocks(tf, [(True, 1.0, 2.0)], is_non_singular=False),
    "block_lower_off_diagonal_columns": lambda tf: _blocks(
        tf, [(None, 1.0, 2.0)], [np.ones((3, 3)), (None, 1.0, 2.0, 3.0)]
    ),
    "block_lower_cholesky": lambda tf: _block_lower(tf, False).cholesky(),
    "block_lower_matmul_dims": lambda tf: _block_lower(tf, False).matmul(tf.ones([3, 1], tf.float64)),
    "circulant_scalar": lambda tf: tf.linalg.LinearOperatorCirculant(tf.constant(1.0)),
    "circulant_real_not_self_adjoint": lambda tf: tf.linalg.LinearOperatorCirculant(
        tf.constant([1.0, 2.0]), is_self_adjoint=False
    ),
    "circulant_not_square": lambda tf: tf.linalg.LinearOperatorCirculant(tf.constant([1.0, 2.0]), is_square=False),
    "circulant_2d_rank1": lambda tf: tf.linalg.LinearOperatorCirculant2D(tf.ones([3])),
    "circulant_3d_rank2": lambda tf: tf.linalg.LinearOperatorCirculant3D(tf.ones([3, 2])),
    "circulant_matmul_dtype": lambda tf: _circulant(tf, False).matmul(tf.ones([4, 1])),
    "circulant_matmul_dims": lambda tf: _circulant(tf, False).matmul(tf.ones([3, 1], tf.float64)),
    "pd_singular_hints": lambda tf: tf.linalg.LinearOperatorCirculant(
        tf.constant([1.0, 2.0]), is_positive_definite=True, is_non_singular=False
    ),
    "toeplitz_scalar": lambda tf: tf.linalg.LinearOperatorToeplitz(tf.constant(1.0), tf.constant(1.0)),
    "toeplitz_lengths": lambda tf: tf.linalg.LinearOperatorToeplitz(tf.ones([3]), tf.ones([2])),
    "toeplitz_not_square": lambda tf: tf.linalg.LinearOperatorToeplitz(tf.ones([2]), tf.ones([2]), is_square=False),
    "toeplitz_batches": lambda tf: tf.linalg.LinearOperatorToeplitz(tf.ones([2, 3]), tf.ones([3, 3])).shape,
    "householder_scalar": lambda tf: tf.linalg.LinearOperatorHouseholder(tf.constant(1.0)),
    "householder_not_self_adjoint": lambda tf: tf.linalg.LinearOperatorHouseholder(tf.ones([2]), is_self_adjoint=False),
    "householder_pd": lambda tf: tf.linalg.LinearOperatorHouseholder(tf.ones([2]), is_positive_definite=True),
    "householder_not_square": lambda tf: tf.linalg.LinearOperatorHouseholder(tf.ones([2]), is_square=False),
    "householder_cholesky": lambda tf: OPERATORS["householder"](tf, False).cholesky(),
    "permutation_float": lambda tf: tf.linalg.LinearOperatorPermutation(tf.constant([1.0, 0.0])),
    "permutation_scalar": lambda tf: tf.linalg.LinearOperatorPermutation(tf.constant(1)),
    "permutation_singular": lambda tf: tf.linalg.LinearOperatorPermutation([1, 0], is_non_singular=False),
    "permutation_not_square": lambda tf: tf.linalg.LinearOperatorPermutation([1, 0], is_square=False),
    "permutation_dtype": lambda tf: tf.linalg.LinearOperatorPermutation([1, 0]).matvec(tf.ones([2], tf.float64)),
    "tridiag_format": lambda tf: tf.linalg.LinearOperatorTridiag(tf.ones([3, 3]), diagonals_format="bad"),
    "tridiag_not_square": lambda tf: tf.linalg.LinearOperatorTridiag(tf.ones([3, 3]), is_square=False).is_square,
    "tridiag_pd_singular": lambda tf: tf.linalg.LinearOperatorTridiag(
        tf.ones([3, 3]), is_positive_definite=True, is_non_singular=False
    ),
    "zeros_non_singular": lambda tf: tf.linalg.LinearOperatorZeros(2, is_non_singular=True),
    "zeros_pd": lambda tf: tf.linalg.LinearOperatorZeros(2, is_positive_definite=True),
    "zeros_not_self_adjoint": lambda tf: tf.linalg.LinearOperatorZeros(2, is_self_adjoint=False),
    "zeros_not_square_self_adjoint": lambda tf: tf.linalg.LinearOperatorZeros(2, is_square=False),
    "zeros_rect_square": lambda tf: tf.linalg.LinearOperatorZeros(2, 3),
    "zeros_negative": lambda tf: tf.linalg.LinearOperatorZeros(-2),
    "zeros_float_rows": lambda tf: tf.linalg.LinearOperatorZeros(2.0),
    "zeros_float_columns": lambda tf: tf.linalg.LinearOperatorZeros(2, 2.0),
    "zeros_batch_matrix": lambda tf: tf.linalg.LinearOperatorZeros(2, batch_shape=[[2]]),
    "zeros_solve": lambda tf: tf.linalg.LinearOperatorZeros(2).solve(tf.ones([2, 1])),
    "zeros_inverse": lambda tf: tf.linalg.LinearOperatorZeros(2).inverse(),
    "zeros_wide_determinant": lambda tf: OPERATORS["zeros_wide"](tf, False).determinant(),
    "full_times_wide_zeros": lambda tf: (
        tf.linalg.LinearOperatorFullMatrix(tf.ones([3, 3])) @ OPERATORS["zeros_wide"](tf, True)
    ),
    "wide_zeros_times_full": lambda tf: (
        OPERATORS["zeros_wide"](tf, False) @ tf.linalg.LinearOperatorFullMatrix(tf.ones([2, 2]))
    ),
    "zeros_matmul_dims": lambda tf: tf.linalg.LinearOperatorZeros(2).matmul(tf.ones([3, 1])),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])
