"""Linear-algebra details against TF: `lstsq(fast=False)` (the minimum-norm solution, `l2_regularizer` ignored, no
gradient) and `lstsq`'s errors for integer matrices; real `logdet` and complex `eigh` eigenvalues of complex
matrices; `inv(adjoint=True)`; the missing float16 kernel in `qr`'s gradient; `tensordot` of unsigned operands and
complex `truncatediv` (no CPU kernels); and the raw ops `Svd`, `SelfAdjointEigV2`, `MatrixSolveLs`, `Lu`,
`MatrixSquareRoot`, `Diag` and `SpaceToBatchND`."""

import numpy as np
import pytest

from oracle import check, check_raises

MODES = pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])

RANK_DEFICIENT = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], np.float32)
FULL_RANK = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], np.float32)
WIDE = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.1]], np.float32)
RHS3 = np.array([[1.0], [2.0], [3.5]], np.float32)
RHS2 = np.array([[1.0], [2.0]], np.float32)
BATCH = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]]], np.float32)
HERMITIAN = np.array([[2.0, 1j], [-1j, 3.0]], np.complex64)
SQUARE = np.array([[1.0, 2.0], [0.5, 3.0]], np.float32)
COMPLEX_SQUARE = np.array([[1.0 + 1j, 2.0], [0.5, 3.0 - 2j]], np.complex64)
SPD = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)


def _run(fn, in_function):
    def body(tf):
        return tf.function(lambda: fn(tf))() if in_function else fn(tf)

    return body


LSTSQ_SLOW = {
    "rank_deficient": lambda tf: tf.linalg.lstsq(RANK_DEFICIENT, RHS3, fast=False),
    "rank_deficient_l2_ignored": lambda tf: tf.linalg.lstsq(RANK_DEFICIENT, RHS3, l2_regularizer=1.0, fast=False),
    "full_rank_l2_ignored": lambda tf: tf.linalg.lstsq(FULL_RANK, RHS3, l2_regularizer=1.0, fast=False),
    "underdetermined": lambda tf: tf.linalg.lstsq(WIDE, RHS2, l2_regularizer=2.0, fast=False),
    "batch": lambda tf: tf.linalg.lstsq(BATCH, np.ones((2, 2, 1), np.float32), fast=False),
    "float64": lambda tf: tf.linalg.lstsq(RANK_DEFICIENT.astype(np.float64), RHS3.astype(np.float64), fast=False),
    "complex64": lambda tf: tf.linalg.lstsq(RANK_DEFICIENT.astype(np.complex64), RHS3.astype(np.complex64), fast=False),
    "fast_l2": lambda tf: tf.linalg.lstsq(FULL_RANK, RHS3, l2_regularizer=1.0, fast=True),
}


@MODES
@pytest.mark.parametrize("case", sorted(LSTSQ_SLOW))
def test_lstsq_slow_path_is_the_minimum_norm_solution(case, in_function):
    check(_run(LSTSQ_SLOW[case], in_function))


@MODES
def test_lstsq_slow_path_has_no_gradient(in_function):
    def gradient(tf):
        a = tf.constant(FULL_RANK)
        with tf.GradientTape() as tape:
            tape.watch(a)
            y = tf.reduce_sum(tf.linalg.lstsq(a, RHS3, fast=False))
        return tape.gradient(y, a)

    check_raises(_run(gradient, in_function))


def _ints(tf, dtype):
    return tf.cast(tf.constant([[1, 2], [3, 4]]), dtype)


LSTSQ_INTEGERS = {
    "int32_l2": lambda tf: tf.linalg.lstsq(_ints(tf, tf.int32), _ints(tf, tf.int32), l2_regularizer=0.5),
    "int32_l2_integral_float": lambda tf: tf.linalg.lstsq(_ints(tf, tf.int32), _ints(tf, tf.int32), l2_regularizer=1.0),
    "int32_l2_int": lambda tf: tf.linalg.lstsq(_ints(tf, tf.int32), _ints(tf, tf.int32), l2_regularizer=1),
    "int32_no_l2": lambda tf: tf.linalg.lstsq(_ints(tf, tf.int32), _ints(tf, tf.int32)),
    "int32_slow_l2": lambda tf: tf.linalg.lstsq(
        _ints(tf, tf.int32), _ints(tf, tf.int32), l2_regularizer=0.5, fast=False
    ),
    "int32_l2_bad_rhs": lambda tf: tf.linalg.lstsq(_ints(tf, tf.int32), tf.constant([[1, 2, 3]]), l2_regularizer=0.5),
    "int64_l2": lambda tf: tf.linalg.lstsq(_ints(tf, tf.int64), _ints(tf, tf.int64), l2_regularizer=0.5),
    "int64_no_l2": lambda tf: tf.linalg.lstsq(_ints(tf, tf.int64), _ints(tf, tf.int64)),
    "uint8": lambda tf: tf.linalg.lstsq(_ints(tf, tf.uint8), _ints(tf, tf.uint8)),
    "uint8_l2": lambda tf: tf.linalg.lstsq(_ints(tf, tf.uint8), _ints(tf, tf.uint8), l2_regularizer=0.5),
    "bool": lambda tf: tf.linalg.lstsq(tf.ones((2, 2), tf.bool), tf.ones((2, 2), tf.bool)),
}


@MODES
@pytest.mark.parametrize("case", sorted(LSTSQ_INTEGERS))
def test_lstsq_of_integers_raises_tfs_error(case, in_function):
    check_raises(_run(LSTSQ_INTEGERS[case], in_function))


COMPLEX_HERMITIAN = {
    "logdet": lambda tf: tf.linalg.logdet(HERMITIAN),
    "logdet_complex128": lambda tf: tf.linalg.logdet(HERMITIAN.astype(np.complex128)),
    "eigh_values": lambda tf: tf.linalg.eigh(HERMITIAN)[0],
    "eigh_vector_magnitudes": lambda tf: tf.abs(tf.linalg.eigh(HERMITIAN)[1]),
    "eigh_complex128": lambda tf: tf.linalg.eigh(HERMITIAN.astype(np.complex128))[0],
    "eigh_real": lambda tf: tf.linalg.eigh(SPD)[0],
}


@MODES
@pytest.mark.parametrize("case", sorted(COMPLEX_HERMITIAN))
def test_complex_logdet_and_eigh_have_tfs_dtypes(case, in_function):
    check(_run(COMPLEX_HERMITIAN[case], in_function))


def _complex_gradient(of):
    def body(tf):
        x = tf.constant(HERMITIAN)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = of(tf, x)
        return tape.gradient(y, x)

    return body


COMPLEX_GRADIENTS = {
    "logdet": lambda tf, x: tf.linalg.logdet(x),
    "eigh_real_weights": lambda tf, x: tf.reduce_sum(tf.math.real(tf.linalg.eigh(x)[0]) * tf.constant([1.0, 2.0])),
    "eigh_complex_weights": lambda tf, x: tf.reduce_sum(
        tf.linalg.eigh(x)[0] * tf.constant([1.0 + 1j, 2.0], tf.complex64)
    ),
}


@pytest.mark.parametrize("case", sorted(COMPLEX_GRADIENTS))
def test_complex_logdet_and_eigh_gradients(case):
    check(_complex_gradient(COMPLEX_GRADIENTS[case]))


INV = {
    "float32": lambda tf: tf.linalg.inv(SQUARE, adjoint=True),
    "float32_no_adjoint": lambda tf: tf.linalg.inv(SQUARE, adjoint=False),
    "float16": lambda tf: tf.linalg.inv(SQUARE.astype(np.float16), adjoint=True),
    "complex64": lambda tf: tf.linalg.inv(COMPLEX_SQUARE, adjoint=True),
    "batch": lambda tf: tf.linalg.inv(np.stack([SQUARE, SPD]), adjoint=True),
}
INV_ERRORS = {
    "bfloat16": lambda tf: tf.linalg.inv(tf.cast(SQUARE, tf.bfloat16), adjoint=True),
    "int32": lambda tf: tf.linalg.inv(tf.constant([[1, 2], [3, 4]]), adjoint=True),
    "not_square": lambda tf: tf.linalg.inv(tf.ones((2, 3)), adjoint=True),
}


@MODES
@pytest.mark.parametrize("case", sorted(INV))
def test_inv_of_the_adjoint(case, in_function):
    check(_run(INV[case], in_function))


@MODES
@pytest.mark.parametrize("case", sorted(INV_ERRORS))
def test_inv_of_the_adjoint_errors(case, in_function):
    check_raises(_run(INV_ERRORS[case], in_function))


def test_inv_of_a_singular_adjoint_raises():
    check_raises(lambda tf: tf.linalg.inv(tf.constant([[1.0, 2.0], [2.0, 4.0]]), adjoint=True))


def test_inv_of_the_adjoint_gradient():
    def body(tf):
        x = tf.constant(SQUARE)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.linalg.inv(x, adjoint=True) * tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        return tape.gradient(y, x)

    check(body)


QR_HALF = {
    "square_r": ((2, 2), False, 1),
    "square_q": ((2, 2), False, 0),
    "wide_full_q": ((2, 3), True, 0),
    "tall_q": ((3, 2), False, 0),
}


@MODES
@pytest.mark.parametrize("case", sorted(QR_HALF))
def test_float16_qr_gradient_has_no_kernel(case, in_function):
    shape, full, output = QR_HALF[case]

    def gradient(tf):
        x = tf.cast(tf.reshape(tf.range(1.0, 1.0 + np.prod(shape)), shape), tf.float16)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.linalg.qr(x, full_matrices=full)[output])
        return tape.gradient(y, x)

    check_raises(_run(gradient, in_function))


@MODES
def test_float16_qr_computes(in_function):
    check(_run(lambda tf: tf.abs(tf.linalg.qr(tf.constant(SQUARE.astype(np.float16)))[1]), in_function))


KERNELLESS = {
    "tensordot_uint8": lambda tf: tf.tensordot(tf.ones((2, 2), tf.uint8), tf.ones((2, 2), tf.uint8), 1),
    "tensordot_uint8_outer": lambda tf: tf.tensordot(tf.ones((2, 2), tf.uint8), tf.ones((2, 2), tf.uint8), 0),
    "tensordot_uint16_lists": lambda tf: tf.tensordot(
        tf.ones((2, 3), tf.uint16), tf.ones((3, 2), tf.uint16), [[1], [0]]
    ),
    "tensordot_uint32": lambda tf: tf.tensordot(tf.ones((2, 2), tf.uint32), tf.ones((2, 2), tf.uint32), 1),
    "tensordot_uint64": lambda tf: tf.tensordot(tf.ones((2, 2), tf.uint64), tf.ones((2, 2), tf.uint64), 1),
    "tensordot_uint8_mismatch": lambda tf: tf.tensordot(tf.ones((2, 3), tf.uint8), tf.ones((2, 2), tf.uint8), 1),
    "tensordot_int8": lambda tf: tf.tensordot(tf.ones((2, 2), tf.int8), tf.ones((2, 2), tf.int8), 1),
    "truncatediv_complex64": lambda tf: tf.truncatediv(
        tf.constant([1 + 1j], tf.complex64), tf.constant([1 + 1j], tf.complex64)
    ),
    "truncatediv_complex128": lambda tf: tf.truncatediv(
        tf.constant([1 + 1j], tf.complex128), tf.constant([1 + 1j], tf.complex128)
    ),
    "truncatediv_bool": lambda tf: tf.truncatediv(tf.constant([True]), tf.constant([True])),
}


@MODES
@pytest.mark.parametrize("case", sorted(KERNELLESS))
def test_ops_without_a_cpu_kernel(case, in_function):
    check_raises(_run(KERNELLESS[case], in_function))


@MODES
def test_tensordot_and_truncatediv_still_compute(in_function):
    def body(tf):
        ints = tf.constant([[7, -7], [5, 3]])
        return (
            tf.tensordot(ints, ints, 1),
            tf.tensordot(tf.constant(SQUARE), tf.constant(SPD), [[0], [1]]),
            tf.truncatediv(ints, tf.constant([[2, 2], [-2, 2]])),
            tf.truncatediv(tf.constant([7.5, -7.5]), tf.constant([2.0, 2.0])),
        )

    check(_run(body, in_function))


RAW = {
    "Svd": lambda tf: [tf.raw_ops.Svd(input=SQUARE).s, tf.abs(tf.raw_ops.Svd(input=SQUARE).u)],
    "Svd:full": lambda tf: [
        tf.raw_ops.Svd(input=FULL_RANK, full_matrices=True).s,
        tf.abs(tf.raw_ops.Svd(input=FULL_RANK, full_matrices=True).u).shape,
        tf.abs(tf.raw_ops.Svd(input=FULL_RANK, full_matrices=True).v),
    ],
    "Svd:values": lambda tf: tf.raw_ops.Svd(input=FULL_RANK, compute_uv=False).s,
    "SelfAdjointEigV2": lambda tf: [
        tf.raw_ops.SelfAdjointEigV2(input=SPD).e,
        tf.abs(tf.raw_ops.SelfAdjointEigV2(input=SPD).v),
    ],
    "SelfAdjointEigV2:values": lambda tf: tf.raw_ops.SelfAdjointEigV2(input=SPD, compute_v=False).e,
    "SelfAdjointEigV2:complex": lambda tf: tf.raw_ops.SelfAdjointEigV2(input=HERMITIAN).e,
    "MatrixSolveLs": lambda tf: tf.raw_ops.MatrixSolveLs(
        matrix=SPD, rhs=np.eye(2, dtype=np.float32), l2_regularizer=0.5
    ),
    "MatrixSolveLs:float64_l2": lambda tf: tf.raw_ops.MatrixSolveLs(
        matrix=FULL_RANK, rhs=RHS3, l2_regularizer=tf.constant(0.5, tf.float64)
    ),
    "MatrixSolveLs:slow": lambda tf: tf.raw_ops.MatrixSolveLs(
        matrix=RANK_DEFICIENT, rhs=RHS3, l2_regularizer=0.5, fast=False
    ),
    "Lu": lambda tf: tf.raw_ops.Lu(input=SQUARE),
    "Lu:int64": lambda tf: tf.raw_ops.Lu(input=SQUARE, output_idx_type=tf.int64),
    "MatrixSquareRoot": lambda tf: tf.raw_ops.MatrixSquareRoot(input=SPD),
    "Diag": lambda tf: tf.raw_ops.Diag(diagonal=tf.constant([1, 2])),
    "Diag:matrix": lambda tf: tf.raw_ops.Diag(diagonal=SQUARE),
    "SpaceToBatchND": lambda tf: tf.raw_ops.SpaceToBatchND(
        input=np.arange(8.0, dtype=np.float32).reshape(1, 2, 4, 1), block_shape=[2, 2], paddings=[[0, 0], [0, 0]]
    ),
    "SpaceToBatchND:padded": lambda tf: tf.raw_ops.SpaceToBatchND(
        input=np.arange(6.0, dtype=np.float32).reshape(1, 2, 3, 1), block_shape=[2, 2], paddings=[[0, 0], [0, 1]]
    ),
}
RAW_ERRORS = {
    "Svd": lambda tf: tf.raw_ops.Svd(input=tf.ones((3,))),
    "SelfAdjointEigV2": lambda tf: tf.raw_ops.SelfAdjointEigV2(input=tf.ones((2, 3))),
    "MatrixSolveLs": lambda tf: tf.raw_ops.MatrixSolveLs(matrix=SPD, rhs=tf.ones((3, 2)), l2_regularizer=0.0),
    "MatrixSolveLs:float32_l2": lambda tf: tf.raw_ops.MatrixSolveLs(
        matrix=SPD, rhs=SPD, l2_regularizer=tf.constant(0.5)
    ),
    "MatrixSolveLs:int32": lambda tf: tf.raw_ops.MatrixSolveLs(
        matrix=tf.constant([[1, 2], [3, 4]]), rhs=tf.constant([[1], [2]]), l2_regularizer=0.0
    ),
    "Lu": lambda tf: tf.raw_ops.Lu(input=tf.ones((2, 3))),
    "MatrixSquareRoot": lambda tf: tf.raw_ops.MatrixSquareRoot(input=tf.ones((2, 3))),
    "Diag": lambda tf: tf.raw_ops.Diag(diagonal=tf.constant(1.0)),
    "SpaceToBatchND": lambda tf: tf.raw_ops.SpaceToBatchND(
        input=tf.ones((1, 2, 4, 1)), block_shape=[3, 2], paddings=[[0, 0], [0, 0]]
    ),
    "SpaceToBatchND:positional": lambda tf: tf.raw_ops.SpaceToBatchND(tf.ones((1, 2, 2, 1)), [2, 2], [[0, 0], [0, 0]]),
}


@pytest.mark.parametrize("case", sorted(RAW))
def test_linalg_raw_ops(case):
    check(RAW[case])


@pytest.mark.parametrize("case", sorted(RAW_ERRORS))
def test_linalg_raw_op_errors(case):
    check_raises(RAW_ERRORS[case])
