"""The ops a training step needs: values and gradients against real TensorFlow.

Each case runs eagerly (outside any tape) and lazily (inside a tape, then
differentiated with a random output gradient), in float32 and float64.
"""

import numpy as np
import pytest

from oracle import check, check_raises, check_values_and_gradients, sample

RNG = np.random.default_rng(7)


# name: (function of (tf, *inputs), input shapes, positive inputs?)
CASES = {
    "add": (lambda tf, a, b: tf.add(a, b), [(3, 4), (4,)], False),
    "subtract": (lambda tf, a, b: tf.subtract(a, b), [(3, 4), (3, 1)], False),
    "multiply": (lambda tf, a, b: tf.multiply(a, b), [(3, 4), (3, 4)], False),
    "truediv": (lambda tf, a, b: tf.math.truediv(a, b), [(3, 4), (4,)], True),
    "divide": (lambda tf, a, b: tf.divide(a, b), [(2, 3), (2, 3)], True),
    "floormod": (lambda tf, a, b: tf.math.floormod(a, b), [(5,), (5,)], True),
    "pow": (lambda tf, a, b: tf.pow(a, b), [(4,), (4,)], True),
    "exp": (lambda tf, a: tf.exp(a), [(2, 3)], False),
    "log": (lambda tf, a: tf.math.log(a), [(2, 3)], True),
    "sin": (lambda tf, a: tf.sin(a), [(5,)], False),
    "cos": (lambda tf, a: tf.cos(a), [(5,)], False),
    "tanh": (lambda tf, a: tf.tanh(a), [(5,)], False),
    "sqrt": (lambda tf, a: tf.sqrt(a), [(5,)], True),
    "square": (lambda tf, a: tf.square(a), [(5,)], False),
    "abs": (lambda tf, a: tf.abs(a), [(5,)], False),
    "maximum": (lambda tf, a, b: tf.maximum(a, b), [(3, 4), (4,)], False),
    "minimum": (lambda tf, a, b: tf.minimum(a, b), [(3, 4), (4,)], False),
    "sign": (lambda tf, a: tf.sign(a), [(5,)], False),
    "negative": (lambda tf, a: -a, [(5,)], False),
    "cast_f64": (lambda tf, a: tf.cast(a, tf.float64) * 2.0, [(5,)], False),
    "reduce_sum": (lambda tf, a: tf.reduce_sum(a, axis=1), [(3, 4)], False),
    "reduce_sum_keep": (lambda tf, a: tf.reduce_sum(a, axis=[0, 1], keepdims=True), [(3, 4)], False),
    "reduce_mean": (lambda tf, a: tf.reduce_mean(a, axis=-1), [(3, 4)], False),
    "reduce_max": (lambda tf, a: tf.reduce_max(a, axis=0), [(3, 4)], False),
    "reduce_min": (lambda tf, a: tf.reduce_min(a), [(3, 4)], False),
    "matmul": (lambda tf, a, b: tf.matmul(a, b), [(3, 4), (4, 2)], False),
    "matmul_t": (lambda tf, a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True), [(4, 3), (2, 4)], False),
    "matmul_batch": (lambda tf, a, b: tf.linalg.matmul(a, b), [(2, 3, 4), (2, 4, 5)], False),
    "reshape": (lambda tf, a: tf.reshape(a, [-1, 2]) * 3.0, [(3, 4)], False),
    "transpose": (lambda tf, a: tf.transpose(a) * 3.0, [(3, 4)], False),
    "transpose_perm": (lambda tf, a: tf.transpose(a, perm=[1, 0, 2]) * 3.0, [(2, 3, 4)], False),
    "concat": (lambda tf, a, b: tf.concat([a, b, a], axis=1), [(3, 2), (3, 4)], False),
    "stack": (lambda tf, a, b: tf.stack([a, b], axis=1), [(3, 2), (3, 2)], False),
    "relu": (lambda tf, a: tf.nn.relu(a), [(3, 4)], False),
    "sigmoid": (lambda tf, a: tf.nn.sigmoid(a), [(3, 4)], False),
    "softmax": (lambda tf, a: tf.nn.softmax(a), [(3, 4)], False),
    "softmax_axis0": (lambda tf, a: tf.nn.softmax(a, axis=0), [(3, 4)], False),
    "log_softmax": (lambda tf, a: tf.nn.log_softmax(a), [(3, 4)], False),
    "softmax_xent": (
        lambda tf, a, b: tf.nn.softmax_cross_entropy_with_logits(labels=tf.nn.softmax(b), logits=a),
        [(3, 4), (3, 4)],
        False,
    ),
    "sparse_xent": (
        lambda tf, a: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 3, 1]), logits=a),
        [(3, 4)],
        False,
    ),
    "getitem": (lambda tf, a: a[1:, ::-2] * 2.0, [(3, 4)], False),
    "clip": (lambda tf, a: tf.clip_by_value(a, -0.5, 0.5), [(3, 4)], False),
    "where": (lambda tf, a, b: tf.where(a > b, a, b * 2.0), [(3, 4), (3, 4)], False),
    "identity": (lambda tf, a: tf.identity(a), [(3,)], False),
    "expand_squeeze": (lambda tf, a: tf.squeeze(tf.expand_dims(a, 0) * 2.0), [(3, 4)], False),
    "add_n": (lambda tf, a, b: tf.add_n([a, b, a]), [(3,), (3,)], False),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_eager_and_gradient(name, dtype):
    fn, shapes, positive = CASES[name]
    inputs = [sample(RNG, s, "positive" if positive else "normal", dtype) for s in shapes]
    check_values_and_gradients(fn, inputs, RNG, rtol=1e-4 if dtype == np.float32 else 1e-9)


def test_no_gradient_ops_values():
    def body(tf):
        a = tf.constant([[1.5, -2.5, 3.0], [0.5, 2.0, -1.0]])
        b = tf.constant([[1.0, -2.5, 2.0], [0.5, 3.0, -1.5]])
        return (
            tf.round(a),
            tf.floor(a),
            tf.argmax(a, axis=1),
            tf.argmax(a),
            tf.math.argmin(a, axis=0),
            tf.equal(a, b),
            tf.not_equal(a, b),
            tf.less(a, b),
            tf.less_equal(a, b),
            tf.greater(a, b),
            tf.greater_equal(a, b),
            a > 1.0,
            tf.cast(a, tf.int32),
            tf.cast(a > 0, tf.float32),
            tf.argmax(a, axis=1, output_type=tf.int32),
        )

    check(body)


def test_creation_ops():
    def body(tf):
        x = tf.constant([[1.0, 2.0]])
        return (
            tf.zeros([2, 3]),
            tf.ones([2], tf.int32),
            tf.zeros_like(x),
            tf.ones_like(x, dtype=tf.int64),
            tf.fill([2, 2], 7.0),
            tf.fill([3], 2),
            tf.range(5),
            tf.range(1, 10, 3),
            tf.range(0.0, 1.0, 0.25),
            tf.range(5, dtype=tf.float32),
            tf.shape(x),
            tf.size(x),
            tf.rank(x),
        )

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.concat([tf.ones([2, 2]), tf.ones([3, 3])], axis=0),
        lambda tf: tf.concat([tf.ones([2]), tf.ones([2], tf.int32)], axis=0),
        lambda tf: tf.stack([tf.ones([2]), tf.ones([3])]),
        lambda tf: tf.reduce_sum(tf.ones([2, 2]), axis=2),
        lambda tf: tf.transpose(tf.ones([2, 3]), perm=[0, 0]),
        lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 1]), logits=tf.ones([3, 4])),
        lambda tf: tf.nn.softmax_cross_entropy_with_logits(labels=tf.ones([3, 3]), logits=tf.ones([3, 4])),
        lambda tf: tf.matmul(tf.ones([2, 3]), tf.ones([3, 2], tf.float64)),
        lambda tf: tf.squeeze(tf.ones([2, 3]), axis=0),
        lambda tf: tf.where(tf.constant([True, False]), tf.ones([2]), tf.ones([3])),
    ],
)
def test_bad_input_raises_tf_error_class(bad):
    check_raises(bad)


def test_bad_input_inside_a_tape_raises_at_the_op_and_tape_still_works():
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as t:
            y = v * v
            try:
                tf.matmul(tf.reshape(y, [1, 2]), tf.ones([3, 1]))
            except tf.errors.InvalidArgumentError:
                pass
            z = tf.reduce_sum(y)
        return t.gradient(z, v)

    check(body)
