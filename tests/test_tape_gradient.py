"""`tape.gradient` (tf_tape_semantics.md section 4), against real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises


def _xs(tf):
    return tf.constant(1.0), tf.constant(2.0), tf.constant(3.0)


@pytest.mark.parametrize(
    "shape_of",
    [
        lambda x1, x2, x3: x1,
        lambda x1, x2, x3: (x1,),
        lambda x1, x2, x3: [(x1, x2), (x2, x3)],
        lambda x1, x2, x3: [x1, {"x2": x2, "x3": x3}],
        lambda x1, x2, x3: {"z": x3, "a": x1},
        lambda x1, x2, x3: {2: x2, 1: x1},
    ],
)
def test_result_has_sources_structure(shape_of):
    def body(tf):
        x1, x2, x3 = _xs(tf)
        with tf.GradientTape() as t:
            t.watch([x1, x2, x3])
            y = x1 * x2 * x3 + x2 * x2
        return t.gradient(y, shape_of(x1, x2, x3))

    check(body)


@pytest.mark.parametrize(
    "targets",
    [
        lambda tf, x: {"y0": x**2, "y1": 1 / x},
        lambda tf, x: x * tf.constant([3.0, 4.0]),
        lambda tf, x: [x * x, tf.reduce_sum(x) * 10],
        lambda tf, x: [x, x * x],
        lambda tf, x: [x * x, tf.stack([x, x, x])],
    ],
)
def test_targets_are_summed(targets):
    def body(tf):
        x = tf.constant(2.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = targets(tf, x)
        return t.gradient(y, x)

    check(body)


def test_vector_targets_summed():
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as t:
            y = [v * v, tf.reduce_sum(v) * 10]
        return t.gradient(y, v)

    check(body)


def test_target_that_is_a_source():
    def body(tf):
        x, y = tf.constant(2.0), tf.constant(3.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, y])
            w = y * y
        return t.gradient([x, y, w], [x, y]), t.gradient([y, y], y)

    check(body)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.constant(3.0),
        lambda tf: tf.Variable(3.0),
        lambda tf: tf.constant([1.0, 2.0]),
        lambda tf: tf.constant(4),
    ],
)
def test_gradient_of_x_by_x_is_ones_without_watch(make):
    def body(tf):
        x = make(tf)
        with tf.GradientTape() as t:
            pass
        return t.gradient(x, x)

    check(body)


def test_variable_target():
    def body(tf):
        v = tf.Variable(1.0)
        with tf.GradientTape() as t:
            y = v * 3
        return t.gradient([v, y], v)

    check(body)


def test_repeated_and_fanout_sources():
    def body(tf):
        x, y = tf.constant(3.0), tf.constant(2.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, y])
            z = x * x + x * y
            w = x * x + x
        return t.gradient(z, [x, x]), t.gradient(z, [y, x]), t.gradient(w, x)

    check(body)


@pytest.mark.parametrize(
    "case",
    [
        lambda tf, x, y: ([x * y, x], [x], [1.0, 2.0]),
        lambda tf, x, y: (x * x, x, 2.0),
        lambda tf, x, y: ([x * x, 4 * x], x, [2.0]),
        lambda tf, x, y: ([x * x], x, [2.0, 5.0]),
        lambda tf, x, y: (x * x, x, tf.constant(3.0)),
    ],
)
def test_output_gradients(case):
    def body(tf):
        x, y = tf.constant(3.0), tf.constant(2.0)
        with tf.GradientTape() as t:
            t.watch([x, y])
            target, sources, seeds = case(tf, x, y)
        return t.gradient(target, sources, output_gradients=seeds)

    check(body)


def test_output_gradients_vector_seed():
    def body(tf):
        v = tf.Variable([1.0, 2.0, 3.0])
        with tf.GradientTape() as t:
            y = v * v
        return t.gradient(y, v, output_gradients=tf.constant([1.0, 0.0, 10.0]))

    check(body)


@pytest.mark.parametrize(
    "seed",
    [
        lambda tf: 2,
        lambda tf: tf.constant(2.0, tf.float64),
        lambda tf: tf.constant([1.0, 2.0]),
        lambda tf: [None],
    ],
)
def test_bad_output_gradients(seed):
    def body(tf):
        v = tf.Variable([1.0, 2.0, 3.0])
        with tf.GradientTape() as t:
            y = v * v
        return t.gradient(y, v, output_gradients=seed(tf))

    check_raises(body)


def test_intermediate_sources():
    def body(tf):
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x
            z = y * y
        return t.gradient(z, y), t.gradient(z, [x, y])

    check(body)


def test_intermediate_without_watch_is_none():
    def body(tf):
        x = tf.constant(3.0)
        with tf.GradientTape() as t:
            y = x * x
            z = y * y
        return t.gradient(z, y)

    check(body)


@pytest.mark.parametrize("mode", [None, "none", "zero", "ZERO"])
def test_unconnected_gradients(mode):
    def body(tf):
        x = tf.Variable(2.0)
        d = tf.Variable([1.0, 2.0], dtype=tf.float64)
        i = tf.constant([1, 2])
        with tf.GradientTape() as t:
            t.watch(i)
            y = x * 2.0
        kwargs = {}
        if mode == "ZERO":
            kwargs["unconnected_gradients"] = tf.UnconnectedGradients.ZERO
        elif mode is not None:
            kwargs["unconnected_gradients"] = mode
        return t.gradient(y, [x, d, i], **kwargs)

    check(body)


def test_argument_errors_with_messages():
    def target_none(tf):
        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
        return t.gradient(None, x)

    def bad_mode(tf):
        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.gradient(y, x, unconnected_gradients="nonsense")

    def source_none(tf):
        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        return t.gradient(y, [x, None])

    check_raises(target_none, messages=True)
    check_raises(bad_mode, messages=True)
    check_raises(source_none, messages=True)


def test_empty_sources_and_keywords():
    def body(tf):
        x = tf.constant(1.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            z = x * 2
        return t.gradient(z, []), t.gradient(target=z, sources=[x])

    check(body)


def test_results_are_new_tensors():
    def body(tf):
        x = tf.constant(1.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            z = x * x
        a, b = t.gradient(z, x), t.gradient(z, x)
        return a is b, isinstance(a, tf.Tensor), a, b

    check(body)


def test_values_and_dtypes_over_random_shapes():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(4, 3)).astype(np.float32)

    def body(tf):
        w = tf.Variable(data)
        b = tf.Variable(np.ones(3, np.float64))
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.tanh(w) * tf.cast(b, tf.float32)) + tf.cast(tf.reduce_sum(b * b), tf.float32)
        return t.gradient(y, [w, b])

    check(body, rtol=1e-6)  # float64 b goes through a float32 cast
