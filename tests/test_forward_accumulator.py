"""`tf.autodiff.ForwardAccumulator` (section 15), against real TensorFlow."""

import pytest

from oracle import check, check_raises


def test_basics():
    def body(tf):
        x = tf.constant([1.0, 1.0])
        v = tf.Variable(3.0)
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
            y = x * x
            s = tf.stop_gradient(x) * x
        with tf.autodiff.ForwardAccumulator(v, tf.constant(1.0)) as acc_v:
            w = v * v
        return acc.jvp(y), acc.jvp(x), acc.jvp(s), acc_v.jvp(w)

    check(body)


def test_matmul_jvp():
    def body(tf):
        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        x = tf.constant([[1.0], [2.0]])
        t = tf.constant([[0.5], [-1.0]])
        with tf.autodiff.ForwardAccumulator(x, t) as acc:
            y = a @ x
        return acc.jvp(y)

    check(body)


@pytest.mark.parametrize("mode", [None, "zero"])
def test_unconnected_and_after_exit(mode):
    def body(tf):
        x = tf.constant(2.0)
        u = tf.constant([1.0, 2.0])
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
            y = x * 3
        after = y * 2
        kwargs = {} if mode is None else {"unconnected_gradients": mode}
        return acc.jvp(u * 2, **kwargs), acc.jvp(after, **kwargs), acc.jvp(y, **kwargs)

    check(body)


def test_nested_dicts_and_outside_use():
    def body(tf):
        x = tf.constant(2.0)
        z = tf.constant(3.0)
        primals = {"x": x, "z": [z]}
        tangents = {"x": tf.constant(1.0), "z": [tf.constant(2.0)]}
        with tf.autodiff.ForwardAccumulator(primals, tangents) as acc:
            y = x * x * z
            w = x + z * z
        return acc.jvp({"y": y, "z": w})

    check(body)


def test_never_entered_returns_none():
    def body(tf):
        x = tf.constant(1.0)
        acc = tf.autodiff.ForwardAccumulator(x, tf.constant(1.0))
        return acc.jvp(x * 2)

    check(body)


def test_errors():
    def twice(tf):
        x = tf.constant(1.0)
        tf.autodiff.ForwardAccumulator([x, x], [tf.constant(1.0), tf.constant(1.0)])

    def nest_mismatch(tf):
        x = tf.constant([1.0])
        tf.autodiff.ForwardAccumulator([x], tf.constant([1.0]))

    def reenter(tf):
        x = tf.constant(1.0)
        acc = tf.autodiff.ForwardAccumulator(x, tf.constant(1.0))
        with acc:
            with acc:
                pass

    def bad_shape(tf):
        x = tf.constant([1.0, 2.0])
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0, 3.0])):
            return x * 2

    check_raises(twice, messages=True)
    check_raises(nest_mismatch)
    check_raises(reenter, messages=True)
    check_raises(bad_shape)


def test_int_primal_has_no_jvp():
    def body(tf):
        x = tf.constant(2)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1)) as acc:
            y = x * x
        return acc.jvp(y)

    check(body)


def test_nesting_order():
    def body(tf):
        x = tf.constant(1.1)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as outer:
            with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as inner:
                y = x**3.5
            inner_jvp = inner.jvp(y)
        return outer.jvp(inner_jvp), inner_jvp

    check(body, rtol=1e-5)


def test_forward_over_backward_hvp():
    def body(tf):
        x = tf.constant([1.0, 2.0])
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(x**3)
            backward = tape.gradient(y, x)
        return backward, acc.jvp(backward)

    check(body)


def test_backward_over_forward():
    def body(tf):
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
                y = x**3
            jvp = acc.jvp(y)
        return jvp, tape.gradient(jvp, x)

    check(body)


def test_nesting_order_reversed_gives_none():
    def body(tf):
        x = tf.constant(1.1)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as outer:
            with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as inner:
                y = x**3.5
            outer_jvp = outer.jvp(y)
        return inner.jvp(outer_jvp), outer_jvp

    check(body, rtol=1e-5)


def test_variable_primal_and_target():
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        with tf.autodiff.ForwardAccumulator(v, tf.constant([3.0, 4.0])) as acc:
            y = v * v
        return acc.jvp(v), acc.jvp(y)

    check(body)
