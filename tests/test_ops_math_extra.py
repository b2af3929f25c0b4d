"""truncatediv, reduce_euclidean_norm, linalg.normalize, linalg.pinv and debugging.Assert against real TF."""

import numpy as np
import pytest

from oracle import check, check_raises

_MATRIX = np.array([[3.0, 4.0], [6.0, 8.0]], np.float32)

_CASES = {
    "truncatediv_ints": lambda tf: tf.truncatediv(tf.constant([7, -7, 7]), tf.constant([2, 2, -2])),
    "truncatediv_floats": lambda tf: tf.truncatediv(tf.constant([7.0, -7.0]), 2.0),
    "reduce_euclidean_norm_ints": lambda tf: tf.math.reduce_euclidean_norm(tf.constant([[3, 4], [6, 8]]), axis=1),
    "reduce_euclidean_norm": lambda tf: tf.math.reduce_euclidean_norm(_MATRIX),
    "reduce_euclidean_norm_keepdims": lambda tf: tf.math.reduce_euclidean_norm(_MATRIX, axis=0, keepdims=True),
    "normalize_rows": lambda tf: tf.linalg.normalize(_MATRIX, axis=1),
    "normalize_all": lambda tf: tf.linalg.normalize(_MATRIX),
    "pinv": lambda tf: tf.linalg.pinv(tf.constant([[1.0, 2.0], [2.0, 4.0], [1.0, 0.0]])),
    "pinv_batch": lambda tf: tf.linalg.pinv(tf.constant(np.arange(12, dtype=np.float64).reshape(2, 3, 2) ** 1.5)),
    "assert_true": lambda tf: tf.Assert(True, ["x"]),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_values(name):
    check(_CASES[name], rtol=1e-5)


def test_gradients():
    def body(tf):
        v = tf.Variable(_MATRIX)
        with tf.GradientTape() as tape:
            loss = (
                tf.reduce_sum(tf.linalg.normalize(v, axis=1)[0] * [[1.0, 2.0]])
                + tf.reduce_sum(tf.linalg.pinv(v))
                + tf.math.reduce_euclidean_norm(v)
            )
        return tape.gradient(loss, v)

    check(body)


def test_errors():
    check_raises(lambda tf: tf.truncatediv(tf.constant([7]), tf.constant([0])))
    raised = check_raises(lambda tf: tf.debugging.Assert(tf.constant(False), [tf.constant([1, 2, 3, 4, 5])]))
    assert "to be true. Summarized data: 1, 2, 3, ..." in raised.message
    raised = check_raises(lambda tf: tf.debugging.Assert(False, [tf.constant([1, 2, 3, 4]), "x"]))
    assert raised.message == "Expected 'False' to be true. Summarized data: 1, 2, 3, ...\nb'x'"
    check_raises(lambda tf: tf.Assert(tf.constant([True, False]), ["x"]))


# -- tf.add_n of a tensor is the sum of its rows (TF iterates it; it was NumPy's truth-value ValueError), and
# tf.clip_by_value's bounds may not broadcast the clipped tensor to more elements (TF's ValueError; it broadcast)
ROWS_AND_BOUNDS = {
    "add_n_matrix": lambda tf: tf.math.add_n(tf.constant([[1.0, 2.0], [3.0, 4.0]])),
    "add_n_vector": lambda tf: tf.math.add_n(tf.constant([1.0, 2.0, 5.0])),
    "add_n_variable": lambda tf: tf.math.add_n(tf.Variable([[1.0, 2.0], [3.0, 4.0]])),
    "add_n_ndarray": lambda tf: tf.math.add_n(np.array([[1.0, 2.0], [3.0, 4.0]])),
    "add_n_ragged_rows": lambda tf: tf.math.add_n(tf.ragged.constant([[1.0, 5.0], [3.0, 4.0]])),
    "add_n_ragged_rows_of_other_lengths": lambda tf: tf.math.add_n(tf.ragged.constant([[1.0, 5.0], [3.0]])),
    "add_n_scalar": lambda tf: tf.math.add_n(tf.constant(3.0)),
    "add_n_no_rows": lambda tf: tf.math.add_n(tf.zeros((0, 2))),
    "add_n_not_iterable": lambda tf: tf.math.add_n(5),
    "add_n_symbolic_in_function": lambda tf: tf.function(tf.math.add_n)(tf.constant([[1.0, 2.0], [3.0, 4.0]])),
    "clip_min_broadcasts": lambda tf: tf.clip_by_value(tf.ones(3), tf.zeros((2, 3)), 1.0),
    "clip_max_broadcasts": lambda tf: tf.clip_by_value(tf.ones(3), 0.0, tf.ones((2, 3))),
    "clip_scalar_vector_bounds": lambda tf: tf.clip_by_value(tf.constant(0.5), tf.zeros(3), 1.0),
    "clip_in_function": lambda tf: tf.function(lambda: tf.clip_by_value(tf.ones(3), tf.zeros((2, 3)), 1.0))(),
    "clip_bounds_that_fit": lambda tf: tf.clip_by_value(tf.ones((2, 3)) * 2.0, tf.zeros(3), tf.ones((1, 3))),
    "clip_ragged_dense_bounds": lambda tf: tf.clip_by_value(
        tf.ragged.constant([[1.0, 5.0], [3.0]]), tf.constant([[0.0], [2.0]]), 4.0
    ),
}
_COMPUTES = {"add_n_matrix", "add_n_vector", "add_n_variable", "add_n_ndarray", "add_n_ragged_rows"}


@pytest.mark.parametrize("name", sorted(ROWS_AND_BOUNDS))
def test_add_n_of_a_tensor_and_clip_bounds_as_tf(name):
    check(lambda tf: ROWS_AND_BOUNDS[name](tf), raises=name not in _COMPUTES | {"clip_bounds_that_fit"})
