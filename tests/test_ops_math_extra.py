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
