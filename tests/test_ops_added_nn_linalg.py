"""reverse_sequence, nn.depth_to_space, nn.space_to_depth, linalg.eigvalsh, linalg.cholesky_solve and
linalg.tensor_diag against real TF: values, gradients and errors."""

import numpy as np
import pytest

from oracle import check, check_raises, jvp_body, taped_body, traced_body

_X = np.arange(24.0).reshape(2, 3, 4)
_IMAGES = np.arange(2 * 2 * 3 * 8.0).reshape(2, 2, 3, 8)
_SPACE = np.arange(2 * 4 * 6 * 3.0).reshape(2, 4, 6, 3)
_SPD = np.array([[4.0, 2.0, 0.5], [2.0, 3.0, 0.25], [0.5, 0.25, 2.0]])
_CHOL = np.linalg.cholesky(_SPD)
_RHS = np.array([[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]])
_MOVE_TYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "int8", "uint8", "int32", "int64", "bool")


@pytest.mark.parametrize("dtype", _MOVE_TYPES)
def test_reverse_sequence(dtype):
    def body(tf):
        x = tf.cast(tf.constant(_X % 5), getattr(tf, dtype))
        return (
            tf.reverse_sequence(x, [2, 3], seq_axis=1, batch_axis=0),
            tf.reverse_sequence(x, [2, 4], seq_axis=2),
            tf.reverse_sequence(x, tf.constant([1, 0, 3], tf.int64), seq_axis=2, batch_axis=1),
            tf.reverse_sequence(x, [1, 2, 0, 1], seq_axis=0, batch_axis=2),
        )

    check(body)
    check(lambda tf: tf.reverse_sequence(tf.zeros([0, 3]), tf.zeros([0], tf.int32), seq_axis=1, batch_axis=0))


@pytest.mark.parametrize("dtype", _MOVE_TYPES)
def test_depth_to_space_and_back(dtype):
    def body(tf):
        x = tf.cast(tf.constant(_IMAGES % 7), getattr(tf, dtype))
        deeper = tf.nn.space_to_depth(tf.cast(tf.constant(_SPACE % 7), getattr(tf, dtype)), 2)
        return tf.nn.depth_to_space(x, 2), deeper, tf.nn.space_to_depth(tf.nn.depth_to_space(x, 2), 2)

    check(body)
    check(lambda tf: tf.nn.depth_to_space(tf.ones([1, 1, 2, 9], getattr(tf, dtype)), tf.constant(3)))
    check(lambda tf: tf.nn.space_to_depth(tf.ones([1, 3, 6, 1], getattr(tf, dtype)), 3))


@pytest.mark.parametrize("dtype", ("float32", "float64", "complex64", "complex128"))
def test_eigvalsh(dtype):
    check(lambda tf: tf.linalg.eigvalsh(tf.constant(_SPD, getattr(tf, dtype))), rtol=1e-4)
    check(lambda tf: tf.linalg.eigvalsh(tf.eye(2, batch_shape=[3], dtype=getattr(tf, dtype)) * 2.0))
    check(lambda tf: tf.linalg.eigvalsh(tf.constant([[4.0, 1.0], [2.0, 3.0]], getattr(tf, dtype))), rtol=1e-4)


def test_eigvalsh_complex_hermitian():
    check(lambda tf: tf.linalg.eigvalsh(tf.constant([[2.0, 1j], [-1j, 2.0]], tf.complex128)))


@pytest.mark.parametrize("dtype", ("float32", "float64", "complex64", "complex128"))
def test_cholesky_solve(dtype):
    check(
        lambda tf: tf.linalg.cholesky_solve(tf.constant(_CHOL, getattr(tf, dtype)), tf.constant(_RHS, dtype)),
        rtol=1e-4,
    )
    check(
        lambda tf: tf.linalg.cholesky_solve(
            tf.constant(np.stack([_CHOL, 2 * _CHOL]), getattr(tf, dtype)), tf.constant(np.stack([_RHS, _RHS]), dtype)
        ),
        rtol=1e-4,
    )


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64", "int32", "int64", "complex64", "complex128"))
def test_tensor_diag(dtype):
    check(lambda tf: tf.linalg.tensor_diag(tf.constant([[1, 2], [3, 4]], getattr(tf, dtype))))
    check(lambda tf: tf.linalg.tensor_diag(tf.constant([5, -1, 2], getattr(tf, dtype))))
    check(lambda tf: tf.linalg.tensor_diag(tf.zeros([0], getattr(tf, dtype))))


# -- gradients ----------------------------------------------------------------------------------------------
def test_move_gradients():
    weights = np.arange(24.0).reshape(2, 3, 4)
    check(taped_body(lambda tf, x: tf.reverse_sequence(x, [2, 3], seq_axis=1, batch_axis=0) * weights, _X))
    check(taped_body(lambda tf, x, n: tf.reverse_sequence(x, n, seq_axis=2), _X, np.array([4, 1], np.int32)))
    check(taped_body(lambda tf, x: tf.nn.depth_to_space(x, 2) * np.arange(96.0).reshape(2, 4, 6, 2), _IMAGES))
    check(taped_body(lambda tf, x: tf.nn.space_to_depth(x, 2) * np.arange(144.0).reshape(2, 2, 3, 12), _SPACE))
    check(jvp_body(lambda tf, x: tf.nn.depth_to_space(x, 2), np.ones((1, 1, 2, 4)).tolist()))


def test_linalg_gradients():
    upstream = np.array([1.0, 2.0, -1.0])
    check(taped_body(lambda tf, a: tf.linalg.eigvalsh(a), _SPD, output_gradients=upstream))
    check(taped_body(lambda tf, a: tf.linalg.eigvalsh(a), np.array([[4.0, 1.0], [2.0, 3.0]])))
    check(
        taped_body(
            lambda tf, a: tf.linalg.eigvalsh(a),
            np.array([[4.0, 1 - 1j], [1 + 1j, 3.0]]),
            output_gradients=np.array([1.0 + 0j, 2.0 + 0j]),
        )
    )
    check(taped_body(lambda tf, c, b: tf.linalg.cholesky_solve(c, b), _CHOL, _RHS))
    check(taped_body(lambda tf, c, b: tf.linalg.cholesky_solve(c, b), _CHOL, _RHS, dtype="float32"), rtol=1e-4)
    weights = np.arange(16.0).reshape(2, 2, 2, 2)
    check(taped_body(lambda tf, d: tf.linalg.tensor_diag(d) * weights, np.array([[1.0, 2.0], [3.0, 4.0]])))
    check(taped_body(lambda tf, d: tf.linalg.tensor_diag(d) * [[1j, 2.0], [3.0, 4.0]], np.array([1.0 + 1j, 2.0])))
    check(taped_body(lambda tf, d: tf.linalg.tensor_diag(d), np.array([1, 2], np.int32)))


# -- errors -------------------------------------------------------------------------------------------------
_ERRORS = {
    "reverse_sequence_negative_batch_axis": lambda tf: tf.reverse_sequence(_X, [2, 3], seq_axis=-2, batch_axis=-3),
    "reverse_sequence_negative_seq_axis": lambda tf: tf.reverse_sequence(_X, [2, 3], seq_axis=-1, batch_axis=0),
    "reverse_sequence_no_seq_axis": lambda tf: tf.reverse_sequence(_X, [2, 3]),
    "reverse_sequence_too_long": lambda tf: tf.reverse_sequence(_X, [2, 4], seq_axis=1, batch_axis=0),
    "reverse_sequence_negative_length": lambda tf: tf.reverse_sequence(_X, [2, -1], seq_axis=1, batch_axis=0),
    "reverse_sequence_same_axes": lambda tf: tf.reverse_sequence(_X, [2, 3], seq_axis=1, batch_axis=1),
    "reverse_sequence_count": lambda tf: tf.reverse_sequence(_X, [2, 3, 1], seq_axis=1, batch_axis=0),
    "reverse_sequence_lengths_rank": lambda tf: tf.reverse_sequence(_X, [[2, 3]], seq_axis=1, batch_axis=0),
    "reverse_sequence_float_lengths": lambda tf: tf.reverse_sequence(_X, [2.0, 3.0], seq_axis=1, batch_axis=0),
    "reverse_sequence_seq_axis_rank": lambda tf: tf.reverse_sequence(_X, [2, 3], seq_axis=3, batch_axis=0),
    "reverse_sequence_batch_axis_rank": lambda tf: tf.reverse_sequence(_X, [2, 3], seq_axis=1, batch_axis=5),
    "depth_to_space_nchw": lambda tf: tf.nn.depth_to_space(_IMAGES, 2, data_format="NCHW"),
    "depth_to_space_bad_format": lambda tf: tf.nn.depth_to_space(_IMAGES, 2, data_format="NHCW"),
    "depth_to_space_block_1": lambda tf: tf.nn.depth_to_space(_IMAGES, 1),
    "depth_to_space_depth": lambda tf: tf.nn.depth_to_space(_IMAGES, 3),
    "depth_to_space_rank": lambda tf: tf.nn.depth_to_space(_IMAGES[0], 2),
    "space_to_depth_nchw": lambda tf: tf.nn.space_to_depth(_SPACE, 2, data_format="NCHW"),
    "space_to_depth_block_1": lambda tf: tf.nn.space_to_depth(_SPACE, 1),
    "space_to_depth_size": lambda tf: tf.nn.space_to_depth(np.zeros((2, 4, 5, 3)), 2),
    "space_to_depth_rank": lambda tf: tf.nn.space_to_depth(np.zeros((1, 2, 2, 2, 1)), 2),
    "eigvalsh_not_square": lambda tf: tf.linalg.eigvalsh(tf.ones([2, 3])),
    "eigvalsh_rank": lambda tf: tf.linalg.eigvalsh(tf.ones([2])),
    "eigvalsh_half": lambda tf: tf.linalg.eigvalsh(tf.eye(2, dtype=tf.float16)),
    "eigvalsh_bfloat16": lambda tf: tf.linalg.eigvalsh(tf.constant([[1.0, 0.0], [0.0, 1.0]], tf.bfloat16)),
    "eigvalsh_int": lambda tf: tf.linalg.eigvalsh(tf.eye(2, dtype=tf.int32)),
    "cholesky_solve_mismatch": lambda tf: tf.linalg.cholesky_solve(_CHOL, np.ones((2, 1))),
    "cholesky_solve_rank": lambda tf: tf.linalg.cholesky_solve(_CHOL, np.ones(3)),
    "cholesky_solve_int": lambda tf: tf.linalg.cholesky_solve(tf.constant([[1]]), tf.constant([[1]])),
    "cholesky_solve_half": lambda tf: tf.linalg.cholesky_solve(
        tf.eye(2, dtype=tf.float16), tf.ones([2, 1], tf.float16)
    ),
    "cholesky_solve_dtypes": lambda tf: tf.linalg.cholesky_solve(tf.eye(2), tf.ones([2, 1], tf.float64)),
    "tensor_diag_scalar": lambda tf: tf.linalg.tensor_diag(3.0),
    "tensor_diag_bfloat16": lambda tf: tf.linalg.tensor_diag(tf.ones([2], tf.bfloat16)),
    "tensor_diag_int8": lambda tf: tf.linalg.tensor_diag(tf.ones([2], tf.int8)),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_errors(name):
    check_raises(_ERRORS[name])


def test_error_messages():
    check_raises(lambda tf: tf.reverse_sequence(_X, [2, 3]), messages=True)


def test_inside_function():
    check(traced_body(lambda tf, x, n: tf.reverse_sequence(x, n, seq_axis=1), _X, np.array([3, 1], np.int32)))
    check(traced_body(lambda tf, x: tf.nn.space_to_depth(tf.nn.depth_to_space(x, 2), 2), _IMAGES))
    check(traced_body(lambda tf, a: tf.linalg.eigvalsh(a), _SPD))
    check(traced_body(lambda tf, c, b: tf.linalg.cholesky_solve(c, b), _CHOL, _RHS))
    check(traced_body(lambda tf, d: tf.linalg.tensor_diag(d), np.array([1.0, 2.0])))


def test_lengths_checked_inside_function():
    def body(tf):
        return tf.function(lambda x, n: tf.reverse_sequence(x, n, seq_axis=1))(
            tf.constant(_X), tf.constant([3, 4], tf.int32)
        )

    check_raises(body)
