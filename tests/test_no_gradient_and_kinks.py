"""stop_gradient, ops without gradients, and TF's conventions at kinks (sections 10-11)."""

import pytest

from oracle import check, run_taped


def _grad(tf, values, fn, mode=None):
    # tf.gather's gradient is an IndexedSlices in TF (the op-surface issue); compare it densified.
    y, (grad,) = run_taped(tf, fn, [values], dtype="float32", unconnected_gradients=mode, densify=True)
    return grad, y


def test_stop_gradient_guide():
    def body(tf):
        x, y = tf.constant(2.0), tf.constant(3.0)
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = x**2 + tf.stop_gradient(y**2)
        return t.gradient(z, {"x": x, "y": y}), z

    check(body)


@pytest.mark.parametrize("mode", [None, "zero"])
def test_stop_gradient_modes(mode):
    check(lambda tf: _grad(tf, [1.0, 2.0], lambda tf, x: tf.stop_gradient(x * x), mode))


def test_straight_through_estimator():
    def body(tf):
        x = tf.constant([0.3, 1.6])
        with tf.GradientTape() as t:
            t.watch(x)
            y = x + tf.stop_gradient(tf.round(x) - x)
            loss = tf.reduce_sum(y * y)
        return y, t.gradient(loss, x)

    check(body)


@pytest.mark.parametrize(
    "fn",
    [
        lambda tf, x: tf.round(x),
        lambda tf, x: tf.floor(x),
        lambda tf, x: tf.math.ceil(x),
        lambda tf, x: tf.math.rint(x),
        lambda tf, x: x // 2.0,
        lambda tf, x: tf.round(x) + x,
        lambda tf, x: tf.sign(x),
        lambda tf, x: tf.math.floormod(x, 2.0),
        lambda tf, x: tf.cast(tf.argmax(x), tf.float32),
        lambda tf, x: tf.cast(x > 1.0, tf.float32),
        lambda tf, x: tf.cast(tf.equal(x, 1.5), tf.float32),
        lambda tf, x: tf.cast(tf.cast(x, tf.int32), tf.float32) * x,
        lambda tf, x: tf.zeros_like(x),
        lambda tf, x: tf.ones_like(x) * 3.0,
        lambda tf, x: tf.gather(x, tf.argmax(x)) * 2,
        lambda tf, x: tf.cast(tf.shape(x), tf.float32),
        lambda tf, x: tf.cast(tf.size(x), tf.float32),
    ],
)
@pytest.mark.parametrize("mode", [None, "zero"])
def test_none_versus_zeros(fn, mode):
    check(lambda tf: _grad(tf, [1.5, 2.7, -0.4], fn, mode))


@pytest.mark.parametrize(
    "values,fn",
    [
        ([-1.0, 0.0, 1.0], lambda tf, x: tf.nn.relu(x)),
        ([-1.0, 0.0, 1.0], lambda tf, x: tf.abs(x)),
        ([-2.0, 0.0, 0.5, 1.0, 2.0], lambda tf, x: tf.clip_by_value(x, 0.0, 1.0)),
        ([1.0, 3.0, 3.0], lambda tf, x: tf.reduce_max(x)),
        ([1.0, 1.0, 3.0], lambda tf, x: tf.reduce_min(x)),
        ([0.0, 0.0], lambda tf, x: tf.sqrt(tf.reduce_sum(x * x))),
        ([0.0, 4.0], lambda tf, x: tf.where(x > 0, tf.math.log(x), 0.0)),
        ([0.0], lambda tf, x: tf.sqrt(x)),
    ],
)
def test_kinks_match_tf(values, fn):
    check(lambda tf: _grad(tf, values, fn))


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_max_min_ties_go_to_first_argument(op):
    def body(tf):
        a = tf.constant([1.0, 2.0])
        b = tf.constant([1.0, 1.0])
        with tf.GradientTape() as t:
            t.watch([a, b])
            y = getattr(tf, op)(a, b)
        return t.gradient(y, [a, b])

    check(body)


def test_pow_gradient_with_respect_to_exponent_at_zero():
    def body(tf):
        x = tf.constant(0.0)
        p = tf.constant(2.0)
        with tf.GradientTape() as t:
            t.watch([x, p])
            y = x**p
        return t.gradient(y, [x, p])

    check(body)


def test_random_op_path_gives_zeros_from_x_only():
    def body(tf):
        x = tf.constant([1.0, 2.0, 3.0])
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.ones([3]) * 7.0 + 0 * x
        return t.gradient(y, x)

    check(body)


def test_softmax_cross_entropy_gradients():
    def body(tf):
        logits = tf.constant([[0.0, 0.0]])
        labels = tf.constant([[1.0, 0.0]])
        sparse = tf.constant([0])
        with tf.GradientTape(persistent=True) as t:
            t.watch([logits, labels])
            dense = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            sp = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=sparse, logits=logits)
        return t.gradient(dense, [logits, labels]), t.gradient(sp, [logits, sparse]), dense, sp

    check(body, rtol=1e-5)


@pytest.mark.parametrize("values", [[-1.0, 4.0], [0.0, 4.0]])
def test_where_with_sqrt_of_a_masked_zero(values):
    check(lambda tf: _grad(tf, values, lambda tf, x: tf.where(x > 0, tf.sqrt(x), 0.0)))


def test_sqrt_forward_mode_and_second_order():
    def body(tf):
        x = tf.constant([0.25, 4.0])
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
            y = tf.sqrt(x)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                z = tf.reduce_sum(tf.sqrt(x))
            g = inner.gradient(z, x)
        return acc.jvp(y), g, outer.gradient(g, x)

    check(body)
