"""Nested tapes, higher-order derivatives and jacobians (sections 7-8), against real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises


def test_nested_tapes_guide():
    def body(tf):
        x = tf.Variable(1.0)
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x * x * x
            dy_dx = t1.gradient(y, x)
        return dy_dx, t2.gradient(dy_dx, x)

    check(body)


def test_nested_docstring_constant():
    def body(tf):
        x = tf.constant(5.0)
        with tf.GradientTape() as g:
            g.watch(x)
            with tf.GradientTape() as gg:
                gg.watch(x)
                y = x * x
            dy_dx = gg.gradient(y, x)
        return dy_dx, g.gradient(dy_dx, x)

    check(body)


def test_inner_gradient_after_outer_exit_is_none():
    def body(tf):
        x = tf.Variable(1.0)
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x * x * x
        dy_dx = t1.gradient(y, x)
        return t2.gradient(dy_dx, x)

    check(body)


def test_persistent_tape_to_third_order():
    def body(tf):
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x * x
            dy = t.gradient(y, x)
            d2y = t.gradient(dy, x)
            d3y = t.gradient(d2y, x)
        return y, dy, d2y, d3y

    check(body)


def test_inner_tape_watches_intermediate():
    def body(tf):
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as g:
            g.watch(x)
            y = x * x
            with tf.GradientTape() as gg:
                gg.watch(y)
                z = 2 * y
            inner = gg.gradient(z, [y])[0]
        return inner, g.gradient(z, [x])[0], g.gradient(inner, x)

    check(body)


def test_independent_tapes_in_one_with():
    def body(tf):
        x0, x1 = tf.constant(0.0), tf.constant(0.0)
        with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
            tape0.watch(x0)
            tape1.watch(x1)
            y0 = tf.math.sin(x0)
            y1 = tf.nn.sigmoid(x1)
            y = y0 + y1
            ys = tf.reduce_sum(y)
        return tape0.gradient(ys, [x0, x1]), tape1.gradient(ys, [x0, x1])

    check(body)


def test_hessian_via_jacobian_of_gradient():
    def body(tf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = tf.reduce_sum(x * x * x)
            g = t1.gradient(y, x)
        return g, t2.jacobian(g, x)

    check(body)


def test_input_gradient_regularisation():
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(4, 3)).astype(np.float32)
    ws = rng.normal(size=(3, 2)).astype(np.float32)

    def body(tf):
        x = tf.constant(xs)
        w = tf.Variable(ws)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.tanh(x @ w))
            gx = inner.gradient(y, x)
            penalty = tf.reduce_sum(gx * gx)
        return penalty, outer.gradient(penalty, w)

    check(body, rtol=1e-4)


def test_jacobian_values_and_shapes():
    def body(tf):
        x = tf.constant([2.0, 4.0])
        y = tf.constant([3.0, 4.0])
        with tf.GradientTape(persistent=True) as g:
            g.watch([x, y])
            z = x * x * y
            s = tf.reduce_sum(x * x)
        return g.jacobian(z, [x, y]), g.jacobian(s, x), g.jacobian(z, y, experimental_use_pfor=False)

    check(body)


def test_jacobian_shape_rule():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(5, 10)).astype(np.float32)
    m = rng.normal(size=(7, 5)).astype(np.float32)

    def body(tf):
        x = tf.constant(a)
        s = tf.constant(1.5)
        with tf.GradientTape(persistent=True) as g:
            g.watch([x, s])
            y = tf.constant(m) @ x * s
            v = tf.stack([s, s * s, s * 3, s, s])
        return g.jacobian(y, x), g.jacobian(v, s)

    check(body, rtol=1e-4)


@pytest.mark.parametrize("mode", [None, "zero"])
def test_jacobian_unconnected(mode):
    def body(tf):
        x = tf.constant([1.0, 2.0])
        u = tf.constant([1.0, 2.0, 3.0])
        with tf.GradientTape() as g:
            g.watch([x, u])
            y = x * 2
        kwargs = {} if mode is None else {"unconnected_gradients": mode}
        return g.jacobian(y, [x, u], **kwargs)

    check(body)


def test_jacobian_dict_sources_and_float64():
    def body(tf):
        x = tf.constant([1.0, 2.0], tf.float64)
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.sin(x)
        return g.jacobian(y, {"x": x})

    check(body)


def test_jacobian_without_pfor_needs_persistent():
    def body(tf):
        x = tf.constant([1.0])
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.jacobian(y, x, experimental_use_pfor=False)

    def batch(tf):
        x = tf.constant([[1.0]])
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.batch_jacobian(y, x, experimental_use_pfor=False)

    check_raises(body, messages=True)
    check_raises(batch, messages=True)


def test_batch_jacobian_values_and_shapes():
    rng = np.random.default_rng(3)
    xs = rng.normal(size=(7, 5)).astype(np.float32)
    ws = rng.normal(size=(5, 6)).astype(np.float32)

    def body(tf):
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        y = tf.constant([[3.0, 4.0], [5.0, 6.0]])
        a = tf.constant(xs)
        with tf.GradientTape(persistent=True) as g:
            g.watch([x, y, a])
            z = x * x * y
            h = tf.reshape(tf.tanh(a @ tf.constant(ws)), [7, 3, 2])
        return g.batch_jacobian(z, x), g.batch_jacobian(h, a), g.batch_jacobian(z, y, parallel_iterations=2)

    check(body, rtol=1e-4)


def test_batch_jacobian_unconnected_gives_zeros_and_empty_source():
    def body(tf):
        x = tf.constant([[1.0, 2.0]])
        u = tf.zeros([1, 0])
        with tf.GradientTape(persistent=True) as g:
            g.watch([x, u])
            z = x * 2
        return g.batch_jacobian(z, u), g.batch_jacobian(tf.reduce_sum(u, axis=1, keepdims=True) + 1.0, u)

    check(body)


def test_batch_jacobian_errors():
    def mismatch(tf):
        x = tf.ones([2, 3])
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.concat([x, x], 0)
        return g.batch_jacobian(y, x)

    def low_rank(tf):
        x = tf.ones([2])
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * 2
        return g.batch_jacobian(y, x)

    check_raises(mismatch, messages=True)
    check_raises(low_rank, messages=True)
