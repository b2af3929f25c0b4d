"""tf.linalg.diag with k, set_diag, adjoint, matrix_transpose, cross, expm against TF (values, gradients, errors)."""

import numpy as np
import pytest

from oracle import check, check_raises, run_taped, squared_sum

RNG = np.random.default_rng(11)
D2 = RNG.normal(size=(2, 3)).astype(np.float32)
M34 = RNG.normal(size=(2, 3, 4)).astype(np.float32)
SQ = (RNG.normal(size=(2, 3, 3)) / 2).astype(np.float64)


def _grad(tf, fn, *arrays):
    return run_taped(tf, lambda tf, *xs: fn(*xs), arrays, loss=squared_sum)


CASES = {
    "diag_main": lambda tf: _grad(tf, lambda d: tf.linalg.diag(d), D2),
    "diag_k1": lambda tf: _grad(tf, lambda d: tf.linalg.diag(d, k=1), D2),
    "diag_k_neg": lambda tf: _grad(tf, lambda d: tf.linalg.diag(d, k=-2, padding_value=9.0), D2),
    "diag_rows_cols": lambda tf: _grad(tf, lambda d: tf.linalg.diag(d, k=-1, num_rows=4, num_cols=5), D2),
    "diag_rows_only": lambda tf: _grad(tf, lambda d: tf.linalg.diag(d, k=1, num_rows=5), D2),
    "diag_band": lambda tf: _grad(tf, lambda d: tf.linalg.diag(d, k=(-1, 0)), M34[0, :2, :3]),
    "diag_band_wide": lambda tf: _grad(
        tf, lambda d: tf.linalg.diag(d, k=(-1, 1), num_rows=3, num_cols=4), M34[:, :, :3]
    ),
    "diag_band_left_left": lambda tf: _grad(
        tf, lambda d: tf.linalg.diag(d, k=(0, 1), align="LEFT_LEFT"), M34[0, :2, :3]
    ),
    "diag_band_right_right": lambda tf: _grad(
        tf, lambda d: tf.linalg.diag(d, k=(-1, 1), align="RIGHT_RIGHT"), M34[0, :, :3]
    ),
    "diag_k_tensor": lambda tf: _grad(tf, lambda d: tf.linalg.diag(d, k=tf.constant([-1, 0])), M34[0, :2, :3]),
    "set_diag": lambda tf: _grad(tf, lambda x, d: tf.linalg.set_diag(x, d), M34, M34[:, :, 0]),
    "set_diag_k": lambda tf: _grad(tf, lambda x, d: tf.linalg.set_diag(x, d, k=1), M34, M34[:, :, 1]),
    "set_diag_band": lambda tf: _grad(tf, lambda x, d: tf.linalg.set_diag(x, d, k=(-1, 0)), M34, M34[:, :2, :3]),
    "set_diag_band_left_right": lambda tf: _grad(
        tf,
        lambda x, d: tf.linalg.set_diag(x, d, k=(-2, 1), align="LEFT_RIGHT"),
        M34,
        np.concatenate([M34, M34], 1)[:, :4, :3],
    ),
    "matrix_transpose": lambda tf: _grad(tf, lambda x: tf.linalg.matrix_transpose(x), M34),
    "adjoint": lambda tf: _grad(tf, lambda x: tf.linalg.adjoint(x), SQ),
    "adjoint_complex": lambda tf: tf.linalg.adjoint(tf.complex(tf.constant(SQ), tf.constant(SQ * 2))),
    "transpose_conjugate": lambda tf: tf.linalg.matrix_transpose(
        tf.complex(tf.constant(SQ), tf.constant(-SQ)), conjugate=True
    ),
    "cross": lambda tf: _grad(tf, lambda a, b: tf.linalg.cross(a, b), M34[:, :, :3], M34[:, :, 1:]),
    "cross_int": lambda tf: tf.linalg.cross(tf.constant([1, 2, 3]), tf.constant([1, 2, 4])),
    "expm": lambda tf: _grad(tf, lambda x: tf.linalg.expm(x), SQ),
    "expm_single": lambda tf: tf.linalg.expm(tf.constant([[0.0, 1.0], [-1.0, 0.0]])),
    "expm_complex": lambda tf: tf.linalg.expm(tf.complex(tf.constant(SQ[0]), tf.constant(SQ[1]))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_tf(name):
    check(CASES[name])


def test_in_function():
    check(
        lambda tf: tf.function(
            lambda d, x: (
                tf.linalg.diag(d, k=(-1, 0)),
                tf.linalg.set_diag(x, d[0], k=1),
                tf.linalg.expm(x[:, :3]),
                tf.linalg.adjoint(x),
            )
        )(tf.constant(M34[0, :2, :3]), tf.constant(M34[0]))
    )


ERRORS = {
    "diag_bad_k": lambda tf: tf.linalg.diag([[1.0, 2.0]], k=(1, 0)),
    "diag_bad_sizes": lambda tf: tf.linalg.diag([1.0, 2.0], k=-1, num_rows=4, num_cols=3, padding_value=9.0),
    "diag_band_count": lambda tf: tf.linalg.diag(tf.zeros([3, 2]), k=(-1, 0)),
    "diag_align": lambda tf: tf.linalg.diag(tf.zeros([2, 2]), k=(-1, 0), align="MIDDLE"),
    "set_diag_shape": lambda tf: tf.linalg.set_diag(tf.zeros([3, 4]), [1.0, 2.0]),
    "set_diag_band_shape": lambda tf: tf.linalg.set_diag(tf.zeros([3, 4]), tf.zeros([2, 2]), k=(-1, 0)),
    "set_diag_dtype": lambda tf: tf.linalg.set_diag(tf.zeros([3, 3]), tf.zeros([3], tf.float64)),
    "transpose_rank1": lambda tf: tf.linalg.matrix_transpose(tf.constant([1.0, 2.0])),
    "adjoint_rank1": lambda tf: tf.linalg.adjoint(tf.constant([1.0, 2.0])),
    "cross_size": lambda tf: tf.linalg.cross(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0])),
    "cross_dtype": lambda tf: tf.linalg.cross(tf.constant([1.0, 2.0, 3.0]), tf.constant([1, 2, 3])),
    "expm_int": lambda tf: tf.linalg.expm(tf.constant([[1, 2], [3, 4]])),
    "expm_not_square": lambda tf: tf.linalg.expm(tf.constant([[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]])),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_against_tf(name):
    check_raises(ERRORS[name])


def test_slogdet_returns_tf_namedtuple():
    def body(tf):
        result = tf.linalg.slogdet(tf.constant([[2.0, 1.0], [1.0, 3.0]]))
        return type(result).__name__, result._fields, result.sign, result.log_abs_determinant

    check(body)


def test_slogdet_of_a_complex_matrix_is_complex():
    # TF's log |det| of a complex matrix has the matrix's dtype (imaginary part 0), and its gradient flows.
    matrix = np.array([[1 + 2j, 0.5], [0.3j, 2]], np.complex64)

    def body(tf):
        x = tf.Variable(matrix)
        with tf.GradientTape() as tape:
            sign, log_abs = tf.linalg.slogdet(x)
            loss = tf.math.real(log_abs)
        return sign, log_abs, tape.gradient(loss, x)

    check(body)
