"""Breadth against real TensorFlow: elementwise ops over several shapes, and bad-input error classes."""

import numpy as np
import pytest

from oracle import check, check_raises, sample

RNG = np.random.default_rng(5)
UNARY = {  # path: input kind
    "math.sin": "normal",
    "math.cos": "normal",
    "math.tan": "unit",
    "math.tanh": "normal",
    "math.sinh": "unit",
    "math.cosh": "unit",
    "math.asin": "unit",
    "math.acos": "unit",
    "math.atan": "normal",
    "math.asinh": "normal",
    "math.acosh": "above1",
    "math.atanh": "unit",
    "math.exp": "normal",
    "math.expm1": "normal",
    "math.log": "positive",
    "math.log1p": "positive",
    "math.sqrt": "positive",
    "math.rsqrt": "positive",
    "math.square": "normal",
    "math.reciprocal": "positive",
    "math.sigmoid": "normal",
    "math.softplus": "normal",
    "math.softsign": "normal",
    "math.log_sigmoid": "normal",
    "math.erf": "normal",
    "math.erfc": "normal",
    "math.lgamma": "positive",
    "math.digamma": "positive",
    "math.abs": "normal",
    "math.negative": "normal",
    "math.sign": "normal",
    "nn.relu": "normal",
    "nn.elu": "normal",
    "nn.selu": "normal",
    "nn.gelu": "normal",
    "nn.silu": "normal",
    "nn.relu6": "normal",
    "nn.leaky_relu": "normal",
}
SHAPES = [(), (2, 3), (1, 4, 1)]


def _op(tf, path):
    space, _, name = path.rpartition(".")
    return getattr(getattr(tf, space) if space else tf, name)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("path", sorted(UNARY))
def test_unary_ops_over_shapes(path, shape):
    x0 = sample(RNG, shape, UNARY[path])
    seed = RNG.normal(size=shape).astype(np.float32)

    def body(tf):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = _op(tf, path)(x)
        return y, tape.gradient(y, x, output_gradients=tf.constant(seed))

    check(body, rtol=2e-4)


INTEGER_OK = ("math.abs", "math.negative", "math.sign", "math.square", "nn.relu", "nn.relu6", "nn.leaky_relu")


@pytest.mark.parametrize("path", sorted(p for p in UNARY if p not in INTEGER_OK))
def test_float_ops_reject_integers(path):
    check_raises(lambda tf: _op(tf, path)(tf.constant([1, 2])))


@pytest.mark.parametrize("path", INTEGER_OK)
def test_ops_accepting_integers(path):
    check(lambda tf: _op(tf, path)(tf.constant([-3, 2, 7])))


@pytest.mark.parametrize(
    "call",
    [
        lambda tf, x: tf.reduce_sum(x, axis=2),
        lambda tf, x: tf.reduce_mean(x, axis=-3),
        lambda tf, x: tf.reduce_max(x, axis=5),
        lambda tf, x: tf.reduce_min(x, axis=[0, 2]),
        lambda tf, x: tf.reduce_prod(x, axis=2),
        lambda tf, x: tf.math.reduce_variance(x, axis=2),
        lambda tf, x: tf.reduce_logsumexp(x, axis=2),
        lambda tf, x: tf.argmax(x, axis=2),
        lambda tf, x: tf.cumsum(x, axis=2),
        lambda tf, x: tf.concat([x, x], axis=2),
        lambda tf, x: tf.stack([x, x], axis=3),
        lambda tf, x: tf.expand_dims(x, 3),
        lambda tf, x: tf.squeeze(x, axis=0),
        lambda tf, x: tf.nn.softmax(x, axis=2),
        lambda tf, x: tf.split(x, 2, axis=2),
        lambda tf, x: tf.reverse(x, [2]),
    ],
)
def test_out_of_range_axis(call):
    check_raises(lambda tf: call(tf, tf.ones([2, 3])))


@pytest.mark.parametrize(
    "call",
    [
        lambda tf: tf.matmul(tf.ones([3]), tf.ones([3, 2])),
        lambda tf: tf.nn.conv2d(tf.ones([4, 4, 3]), tf.ones([3, 3, 3, 2]), 1, "SAME"),
        lambda tf: tf.nn.max_pool2d(tf.ones([4, 4, 3]), 2, 2, "VALID"),
        lambda tf: tf.linalg.cholesky(tf.ones([3])),
        lambda tf: tf.linalg.det(tf.ones([2, 3])),
        lambda tf: tf.nn.bias_add(tf.ones([2, 3]), tf.ones([4])),
        lambda tf: tf.reshape(tf.ones([2, 3]), [-1, -1]),
        lambda tf: tf.one_hot(tf.constant([1.5]), 3),
        lambda tf: tf.gather(tf.ones([3]), tf.constant([1.0])),
        lambda tf: tf.math.unsorted_segment_sum(tf.ones([3]), tf.constant([0.0, 1.0, 1.0]), 2),
    ],
)
def test_wrong_rank_and_dtype(call):
    check_raises(call)
