"""tf.linalg.LinearOperator and its subclasses against TF: properties, hints, values, derived operators,
gradients through a GradientTape (w.r.t. the operators' variables), errors, with and without batch dimensions,
and inside `tf.function`.

Each operator is made by `OPERATORS[kind](tf, batched)` from the same numpy data in both modules; `summary`
runs every method on it and records, per method, the value or the class of the error it raised.
"""

import numpy as np
import pytest

from oracle import check, check_raises

RNG = np.random.default_rng(7)


def _well_conditioned(*shape):
    n = shape[-1]
    return RNG.normal(size=shape) / 3 + 2 * np.eye(n)


def _spd(*shape):
    a = RNG.normal(size=shape) / 2
    return a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1])


FULL = {False: _well_conditioned(3, 3), True: _well_conditioned(2, 3, 3)}
FULL2 = {False: _well_conditioned(2, 2), True: _well_conditioned(2, 2, 2)}
SPD = {False: _spd(3, 3), True: _spd(2, 3, 3)}
DIAG = {False: RNG.uniform(1.0, 2.0, size=(3,)), True: RNG.uniform(1.0, 2.0, size=(2, 3))}
TRIL = {False: _well_conditioned(3, 3), True: _well_conditioned(2, 3, 3)}
TRIL2 = {False: _well_conditioned(2, 2), True: _well_conditioned(2, 2, 2)}
SCALE = {False: np.float64(1.7), True: np.array([1.3, -0.6])}
WIDE = {False: RNG.normal(size=(3, 2)), True: RNG.normal(size=(2, 3, 2))}
U = {False: RNG.normal(size=(3, 2)) / 2, True: RNG.normal(size=(2, 3, 2)) / 2}
V = RNG.normal(size=(3, 2)) / 2
X3 = RNG.normal(size=(3, 2))
X3_BATCHED = RNG.normal(size=(2, 3, 2))


def _var(tf, array):
    return tf.Variable(np.asarray(array, np.float64))


def _full(tf, batched):
    return tf.linalg.LinearOperatorFullMatrix(_var(tf, FULL[batched]))


def _diag(tf, batched):
    return tf.linalg.LinearOperatorDiag(_var(tf, DIAG[batched]), is_positive_definite=True)


def _tril(tf, batched):
    return tf.linalg.LinearOperatorLowerTriangular(_var(tf, TRIL[batched]), is_non_singular=True)


OPERATORS = {
    "full": _full,
    "full_spd": lambda tf, b: tf.linalg.LinearOperatorFullMatrix(
        _var(tf, SPD[b]), is_self_adjoint=True, is_positive_definite=True
    ),
    "full_wide": lambda tf, b: tf.linalg.LinearOperatorFullMatrix(_var(tf, WIDE[b])),
    "diag": _diag,
    "tril": _tril,
    "identity": lambda tf, b: tf.linalg.LinearOperatorIdentity(3, batch_shape=[2] if b else None, dtype=tf.float64),
    "scaled_identity": lambda tf, b: tf.linalg.LinearOperatorScaledIdentity(3, _var(tf, SCALE[b])),
    "composition": lambda tf, b: tf.linalg.LinearOperatorComposition([_full(tf, b), _diag(tf, False)]),
    "composition_wide": lambda tf, b: tf.linalg.LinearOperatorComposition(
        [tf.linalg.LinearOperatorFullMatrix(_var(tf, WIDE[b])), tf.linalg.LinearOperatorFullMatrix(_var(tf, FULL2[b]))]
    ),
    "inversion": lambda tf, b: tf.linalg.LinearOperatorInversion(_full(tf, b)),
    "adjoint": lambda tf, b: tf.linalg.LinearOperatorAdjoint(_tril(tf, b)),
    "block_diag": lambda tf, b: tf.linalg.LinearOperatorBlockDiag(
        [
            tf.linalg.LinearOperatorFullMatrix(_var(tf, FULL2[b])),
            tf.linalg.LinearOperatorDiag(_var(tf, [1.5, 2.5])),
            tf.linalg.LinearOperatorIdentity(1, dtype=tf.float64),
        ]
    ),
    "kronecker": lambda tf, b: tf.linalg.LinearOperatorKronecker(
        [
            tf.linalg.LinearOperatorFullMatrix(_var(tf, FULL2[b])),
            tf.linalg.LinearOperatorLowerTriangular(_var(tf, TRIL2[False]), is_non_singular=True),
        ]
    ),
    "low_rank": lambda tf, b: tf.linalg.LinearOperatorLowRankUpdate(
        _full(tf, b), _var(tf, U[b]), diag_update=_var(tf, [0.5, 1.5]), v=_var(tf, V)
    ),
    "low_rank_spd": lambda tf, b: tf.linalg.LinearOperatorLowRankUpdate(
        _diag(tf, b), _var(tf, U[b]), diag_update=_var(tf, [0.5, 1.5]), is_diag_update_positive=True
    ),
    "low_rank_identity_update": lambda tf, b: tf.linalg.LinearOperatorLowRankUpdate(
        tf.linalg.LinearOperatorFullMatrix(_var(tf, SPD[b]), is_self_adjoint=True, is_positive_definite=True),
        _var(tf, U[False]),
    ),
    "kronecker_spd": lambda tf, b: tf.linalg.LinearOperatorKronecker(
        [_diag(tf, False), tf.linalg.LinearOperatorFullMatrix(_var(tf, SPD[b][..., :2, :2]), is_self_adjoint=True)]
    ),
}


def _attempt(fn):
    """fn()'s value, or the class of what it raised (so that one body compares each method's error)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the error class is part of the comparison
        return ("raised", type(exc).__name__)


def _operator(tf, op):
    """A derived operator, described: its class name, hints, shape and dense matrix."""
    if not isinstance(op, tf.linalg.LinearOperator):
        return op
    return (
        type(op).__name__,
        op.is_non_singular,
        op.is_self_adjoint,
        op.is_positive_definite,
        _attempt(lambda: op.is_square),
        op.shape,
        op.to_dense(),
    )


def _arg(tf, op, rows, batched=False, columns=2):
    """An argument with `rows` rows for `op` (None: unknown, then one of its dimension)."""
    values = (X3_BATCHED if batched else X3)[..., :rows, :columns]
    if values.shape[-2] < rows:
        values = np.concatenate([values] * 3, axis=-2)[..., :rows, :]
    return tf.constant(values, op.dtype)


def summary(tf, op, batched_arg=False):
    """Every method of `op`: a dict of values (or the errors' classes)."""
    m, n = int(op.range_dimension), int(op.domain_dimension)
    x = _arg(tf, op, n, batched_arg)
    y = _arg(tf, op, m, batched_arg)
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
        "matvec": op.matvec(x[..., 0]),
        "matvec_adjoint": op.matvec(y[..., 0], adjoint=True),
        "solve": _attempt(lambda: op.solve(y)),
        "solve_adjoint": _attempt(lambda: op.solve(x, adjoint=True)),
        "solve_adjoint_arg": _attempt(lambda: op.solve(tf.linalg.adjoint(y), adjoint_arg=True)),
        "solvevec": _attempt(lambda: op.solvevec(y[..., 0])),
        "solvevec_adjoint": _attempt(lambda: op.solvevec(x[..., 0], adjoint=True)),
        "add_to_tensor": op.add_to_tensor(
            tf.reshape(tf.range(m * n, dtype=op.dtype), [m, n]) + tf.zeros(op.batch_shape.as_list() + [m, n], op.dtype)
        ),
        "eigvals": _attempt(op.eigvals),
        "cond": _attempt(op.cond),
        "adjoint": _attempt(lambda: _operator(tf, op.adjoint())),
        "H": _attempt(lambda: _operator(tf, op.H)),
        "inverse": _attempt(lambda: _operator(tf, op.inverse())),
        "cholesky": _attempt(lambda: _operator(tf, op.cholesky())),
        "variables": len(op.trainable_variables),
    }


@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
@pytest.mark.parametrize("kind", sorted(OPERATORS))
def test_operator_methods(kind, batched):
    check(lambda tf: summary(tf, OPERATORS[kind](tf, batched)))


@pytest.mark.parametrize(
    "kind", ["full", "diag", "tril", "identity", "scaled_identity", "composition", "kronecker", "low_rank_spd"]
)
def test_batched_argument_broadcasts_against_the_operator(kind):
    check(lambda tf: summary(tf, OPERATORS[kind](tf, False), batched_arg=True))


def _loss(tf, op):
    n = int(op.domain_dimension)
    x = _arg(tf, op, n)
    loss = tf.reduce_sum(op.matmul(x) ** 2) + tf.reduce_sum(op.to_dense())
    if op.is_square is not False:
        loss += tf.reduce_sum(op.solve(x) ** 2) + tf.reduce_sum(op.solvevec(x[..., 0]))
        loss += tf.reduce_sum(op.log_abs_determinant()) + tf.reduce_sum(op.trace())
    return loss


def gradients(tf, op):
    """The loss and its gradient w.r.t. each of the operator's variables (in the order TF lists them)."""
    variables = sorted(op.trainable_variables, key=lambda v: v.shape.as_list())
    with tf.GradientTape() as tape:
        loss = _loss(tf, op)
    return loss, tape.gradient(loss, variables)


@pytest.mark.parametrize("batched", [False, True], ids=["single", "batch"])
@pytest.mark.parametrize("kind", sorted(OPERATORS))
def test_gradients_through_a_tape(kind, batched):
    check(lambda tf: gradients(tf, OPERATORS[kind](tf, batched)))


@pytest.mark.parametrize("kind", ["full", "composition", "kronecker", "block_diag", "low_rank"])
def test_inside_function(kind):
    def body(tf):
        op = OPERATORS[kind](tf, True)

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(op.solve(x) ** 2) + tf.reduce_sum(op.log_abs_determinant())
            return (
                loss,
                op.matvec(x[..., 0]),
                tape.gradient(loss, sorted(op.trainable_variables, key=lambda v: v.shape.as_list())),
            )

        x = _arg(tf, op, int(op.domain_dimension))
        return step(x), step(x * 2.0)

    check(body)


def test_determinant_paths_and_float32():
    def body(tf):
        spd = tf.constant(SPD[True], tf.float32)
        chol = tf.linalg.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True)
        plain = tf.linalg.LinearOperatorFullMatrix(spd)
        rhs = tf.constant(X3, tf.float32)
        return chol.determinant(), plain.determinant(), chol.solve(rhs), plain.solve(rhs), chol.log_abs_determinant()

    check(body)


def test_complex_operators():
    z = FULL[True] + 1j * RNG.normal(size=(2, 3, 3)) / 4
    d = DIAG[True] + 0.5j

    def body(tf):
        full = tf.linalg.LinearOperatorFullMatrix(tf.constant(z, tf.complex128))
        diag = tf.linalg.LinearOperatorDiag(tf.constant(d, tf.complex128))
        scaled = tf.linalg.LinearOperatorScaledIdentity(3, tf.constant(1.0 - 2.0j, tf.complex128))
        low_rank = tf.linalg.LinearOperatorLowRankUpdate(
            full, tf.constant(U[False] * (1 - 1j), tf.complex128), diag_update=tf.constant([0.5j, 1.5], tf.complex128)
        )
        x = tf.constant(X3 + 1j * X3, tf.complex128)
        out = {}
        for name, op in [("full", full), ("diag", diag), ("scaled", scaled), ("low_rank", low_rank)]:
            out[name] = (
                op.is_self_adjoint,
                op.matmul(x, adjoint=True),
                op.solve(x),
                op.solve(x, adjoint=True),
                op.determinant(),
                op.log_abs_determinant(),
                op.adjoint().to_dense(),
                op.trace(),
            )
        return out

    check(body)


# -- operator @ operator: the simplified products TF returns -----------------------------------------------
PRODUCTS = {
    "diag_diag": lambda tf: _diag(tf, True) @ _diag(tf, False),
    "diag_solve_diag": lambda tf: _diag(tf, True).solve(_diag(tf, False)),
    "identity_full": lambda tf: tf.linalg.LinearOperatorIdentity(3, dtype=tf.float64) @ _full(tf, True),
    "full_identity": lambda tf: _full(tf, True) @ tf.linalg.LinearOperatorIdentity(3, dtype=tf.float64),
    "full_solve_identity": lambda tf: _full(tf, False).solve(tf.linalg.LinearOperatorIdentity(3, dtype=tf.float64)),
    "scaled_scaled": lambda tf: OPERATORS["scaled_identity"](tf, True) @ OPERATORS["scaled_identity"](tf, False),
    "scaled_diag": lambda tf: OPERATORS["scaled_identity"](tf, False) @ _diag(tf, True),
    "diag_scaled": lambda tf: _diag(tf, True) @ OPERATORS["scaled_identity"](tf, False),
    "diag_tril": lambda tf: _diag(tf, False) @ _tril(tf, True),
    "tril_diag": lambda tf: _tril(tf, True) @ _diag(tf, False),
    "full_full": lambda tf: _full(tf, True) @ _full(tf, False),
    "full_adjoint_full": lambda tf: _full(tf, False).matmul(_full(tf, True), adjoint=True, adjoint_arg=True),
    "full_solve_full": lambda tf: _full(tf, True).solve(_full(tf, False)),
    "inversion_solve": lambda tf: tf.linalg.LinearOperatorInversion(_full(tf, False)).solve(_diag(tf, False)),
    "inverse_of_inversion": lambda tf: OPERATORS["inversion"](tf, True).inverse(),
    "adjoint_of_adjoint": lambda tf: OPERATORS["adjoint"](tf, True).adjoint(),
    "block_block": lambda tf: OPERATORS["block_diag"](tf, True) @ OPERATORS["block_diag"](tf, False),
    "wide_wide_adjoint": lambda tf: OPERATORS["full_wide"](tf, False) @ OPERATORS["full_wide"](tf, True).H,
    "composition_aat": lambda tf: _aat(tf),
    "composition_aat_cholesky": lambda tf: _aat(tf).cholesky(),
    "kronecker_inverse": lambda tf: OPERATORS["kronecker_spd"](tf, True).inverse(),
}


def _aat(tf):
    tril = _tril(tf, True)
    return tf.linalg.LinearOperatorComposition([tril, tril.H])


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_operator_products(name):
    check(lambda tf: _operator(tf, PRODUCTS[name](tf)))


# -- errors -------------------------------------------------------------------------------------------------
def _identity(tf, *args, **kwargs):
    return tf.linalg.LinearOperatorIdentity(*args, **kwargs)


ERRORS = {
    "full_rank1": lambda tf: tf.linalg.LinearOperatorFullMatrix(tf.constant([1.0, 2.0])),
    "full_int": lambda tf: tf.linalg.LinearOperatorFullMatrix(tf.constant([[1, 2], [3, 4]])),
    "pd_singular_hints": lambda tf: tf.linalg.LinearOperatorFullMatrix(
        tf.eye(2), is_positive_definite=True, is_non_singular=False
    ),
    "non_singular_not_square": lambda tf: tf.linalg.LinearOperatorFullMatrix(
        tf.eye(2), is_non_singular=True, is_square=False
    ),
    "square_hint_false_but_square": lambda tf: tf.linalg.LinearOperatorFullMatrix(tf.eye(2), is_square=False).is_square,
    "matmul_dims": lambda tf: _full(tf, False).matmul(tf.ones([2, 2], tf.float64)),
    "matmul_dtype": lambda tf: _full(tf, False).matmul(tf.ones([3, 2])),
    "matvec_dims": lambda tf: _full(tf, True).matvec(tf.ones([4], tf.float64)),
    "solve_dims": lambda tf: _full(tf, True).solve(tf.ones([2, 2], tf.float64)),
    "solvevec_dtype": lambda tf: _full(tf, True).solvevec(tf.ones([3], tf.float32)),
    "add_to_tensor_dtype": lambda tf: _full(tf, True).add_to_tensor(tf.ones([3, 3])),
    "solve_singular_hint": lambda tf: tf.linalg.LinearOperatorFullMatrix(tf.eye(2), is_non_singular=False).solve(
        tf.ones([2, 1])
    ),
    "solve_wide": lambda tf: OPERATORS["full_wide"](tf, False).solve(tf.ones([3, 1], tf.float64)),
    "inverse_singular_hint": lambda tf: tf.linalg.LinearOperatorFullMatrix(tf.eye(2), is_non_singular=False).inverse(),
    "cholesky_not_pd": lambda tf: _full(tf, False).cholesky(),
    "eigvals_not_self_adjoint": lambda tf: _full(tf, False).eigvals(),
    "diag_scalar": lambda tf: tf.linalg.LinearOperatorDiag(tf.constant(1.0)),
    "diag_real_not_self_adjoint": lambda tf: tf.linalg.LinearOperatorDiag(tf.ones([2]), is_self_adjoint=False),
    "diag_not_square": lambda tf: tf.linalg.LinearOperatorDiag(tf.ones([2]), is_square=False),
    "tril_not_square": lambda tf: tf.linalg.LinearOperatorLowerTriangular(tf.eye(2), is_square=False),
    "tril_rank1": lambda tf: tf.linalg.LinearOperatorLowerTriangular(tf.ones([2])),
    "identity_not_self_adjoint": lambda tf: _identity(tf, 2, is_self_adjoint=False),
    "identity_singular": lambda tf: _identity(tf, 2, is_non_singular=False),
    "identity_not_pd": lambda tf: _identity(tf, 2, is_positive_definite=False),
    "identity_not_square": lambda tf: _identity(tf, 2, is_square=False),
    "identity_float_rows": lambda tf: _identity(tf, 2.0),
    "identity_negative_rows": lambda tf: _identity(tf, -1),
    "identity_rows_vector": lambda tf: _identity(tf, [2, 3]),
    "identity_batch_matrix": lambda tf: _identity(tf, 2, batch_shape=[[2]]),
    "identity_batch_negative": lambda tf: _identity(tf, 2, batch_shape=[-2]),
    "identity_batch_float": lambda tf: _identity(tf, 2, batch_shape=[2.0]),
    "scaled_not_square": lambda tf: tf.linalg.LinearOperatorScaledIdentity(2, 1.0, is_square=False),
    "scaled_real_not_self_adjoint": lambda tf: tf.linalg.LinearOperatorScaledIdentity(2, 1.0, is_self_adjoint=False),
    "composition_empty": lambda tf: tf.linalg.LinearOperatorComposition([]),
    "composition_dtypes": lambda tf: tf.linalg.LinearOperatorComposition(
        [_full(tf, False), tf.linalg.LinearOperatorIdentity(3)]
    ),
    "composition_dims": lambda tf: (
        tf.linalg.LinearOperatorComposition([OPERATORS["full_wide"](tf, False), _full(tf, False)]).shape
    ),
    "composition_batches": lambda tf: (
        tf.linalg.LinearOperatorComposition(
            [_full(tf, True), tf.linalg.LinearOperatorIdentity(3, batch_shape=[3], dtype=tf.float64)]
        ).shape
    ),
    "composition_hint": lambda tf: tf.linalg.LinearOperatorComposition(
        [_diag(tf, False), _diag(tf, False)], is_non_singular=False
    ),
    "operator_matmul_dims": lambda tf: _full(tf, False) @ OPERATORS["full_wide"](tf, False).H,
    "inversion_singular": lambda tf: tf.linalg.LinearOperatorInversion(
        tf.linalg.LinearOperatorFullMatrix(tf.eye(2), is_non_singular=False)
    ),
    "inversion_wide": lambda tf: tf.linalg.LinearOperatorInversion(OPERATORS["full_wide"](tf, False)),
    "inversion_hint_contradicts": lambda tf: tf.linalg.LinearOperatorInversion(_diag(tf, False), is_self_adjoint=False),
    "adjoint_hint_contradicts": lambda tf: tf.linalg.LinearOperatorAdjoint(_diag(tf, False), is_square=False),
    "block_diag_empty": lambda tf: tf.linalg.LinearOperatorBlockDiag([]),
    "block_diag_dtypes": lambda tf: tf.linalg.LinearOperatorBlockDiag([_full(tf, False), _identity(tf, 2)]),
    "block_diag_hint": lambda tf: tf.linalg.LinearOperatorBlockDiag(
        [_diag(tf, False), _diag(tf, False)], is_positive_definite=False
    ),
    "block_block_count": lambda tf: (
        OPERATORS["block_diag"](tf, False)
        @ tf.linalg.LinearOperatorBlockDiag([_diag(tf, False), _identity(tf, 2, dtype=tf.float64)])
    ),
    "kronecker_empty": lambda tf: tf.linalg.LinearOperatorKronecker([]),
    "kronecker_dtypes": lambda tf: tf.linalg.LinearOperatorKronecker([_full(tf, False), _identity(tf, 2)]),
    "kronecker_hint": lambda tf: tf.linalg.LinearOperatorKronecker(
        [_diag(tf, False), _identity(tf, 2, dtype=tf.float64)], is_self_adjoint=False
    ),
    "diag_add_to_tensor_unbroadcast": lambda tf: _diag(tf, True).add_to_tensor(tf.ones([3, 3], tf.float64)),
    "diag_times_batched_scale": lambda tf: _diag(tf, True) @ OPERATORS["scaled_identity"](tf, True),
    "low_rank_identity_not_positive": lambda tf: tf.linalg.LinearOperatorLowRankUpdate(
        _full(tf, False), tf.ones([3, 1], tf.float64), is_diag_update_positive=False
    ),
    "low_rank_not_self_adjoint": lambda tf: tf.linalg.LinearOperatorLowRankUpdate(
        _diag(tf, False), tf.ones([3, 1], tf.float64), is_self_adjoint=False
    ),
    "low_rank_not_pd": lambda tf: tf.linalg.LinearOperatorLowRankUpdate(
        _diag(tf, False), tf.ones([3, 1], tf.float64), is_positive_definite=False
    ),
    "low_rank_u_rows": lambda tf: tf.linalg.LinearOperatorLowRankUpdate(_full(tf, False), tf.ones([2, 1], tf.float64)),
    "low_rank_diag_size": lambda tf: tf.linalg.LinearOperatorLowRankUpdate(
        _full(tf, False), tf.ones([3, 2], tf.float64), diag_update=tf.ones([3], tf.float64)
    ),
    "low_rank_batches": lambda tf: tf.linalg.LinearOperatorLowRankUpdate(
        _full(tf, True), tf.ones([3, 3, 2], tf.float64)
    ),
    "low_rank_singular_base_solve": lambda tf: tf.linalg.LinearOperatorLowRankUpdate(
        tf.linalg.LinearOperatorFullMatrix(tf.eye(2), is_non_singular=False), tf.ones([2, 1])
    ).solve(tf.ones([2, 1])),
    "abstract_base": lambda tf: tf.linalg.LinearOperator(tf.float32),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])


def test_user_subclass_gets_the_default_methods():
    def body(tf):
        class Twice(tf.linalg.LinearOperator):
            def __init__(self, n):
                self.n = n
                super().__init__(dtype=tf.float64, is_self_adjoint=True, is_positive_definite=True, name="Twice")

            def _shape(self):
                return tf.TensorShape([self.n, self.n])

            def _shape_tensor(self):
                return tf.constant([self.n, self.n])

            def _matmul(self, x, adjoint=False, adjoint_arg=False):
                return 2.0 * (tf.linalg.adjoint(x) if adjoint_arg else x)

        return summary(tf, Twice(3))

    check(body)
