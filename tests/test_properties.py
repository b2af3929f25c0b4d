"""Hypothesis properties of the tape: linearity, repeatability, agreement with JAX and TF."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import tapeshim as tf
from oracle import assert_same, describe, real_tf, sample
from tapeshim._src import background_compile

FLOATS = st.floats(-2.0, 2.0, allow_nan=False, width=32)
VECTORS = st.integers(1, 5).flatmap(lambda n: arrays(np.float32, (n,), elements=FLOATS))
UNARY = {
    "sin": (lambda m, x: m.sin(x), jnp.sin),
    "tanh": (lambda m, x: m.tanh(x), jnp.tanh),
    "square": (lambda m, x: m.square(x), jnp.square),
    "exp": (lambda m, x: m.exp(x * 0.5), lambda x: jnp.exp(x * 0.5)),
    "sigmoid": (lambda m, x: m.nn.sigmoid(x), jax.nn.sigmoid),
    "scale": (lambda m, x: 3.0 * x - 1.0, lambda x: 3.0 * x - 1.0),
    "relu_shift": (lambda m, x: m.nn.relu(x + 0.25), lambda x: jax.nn.relu(x + 0.25)),
}
CHAINS = st.lists(st.sampled_from(sorted(UNARY)), min_size=1, max_size=6)


def _apply(module, chain, x):
    for name in chain:
        x = UNARY[name][0](module, x)
    return x


@settings(max_examples=30, deadline=None)
@given(VECTORS, CHAINS, st.floats(-3, 3, width=32), st.floats(-3, 3, width=32))
def test_gradient_is_linear_in_output_gradients(x0, chain, a, b):
    rng = np.random.default_rng(len(chain))
    s1, s2 = sample(rng, x0.shape), sample(rng, x0.shape)
    x = tf.constant(x0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = _apply(tf, chain, x)
    g1 = tape.gradient(y, x, output_gradients=tf.constant(s1)).numpy()
    g2 = tape.gradient(y, x, output_gradients=tf.constant(s2)).numpy()
    mixed = tape.gradient(y, x, output_gradients=tf.constant((a * s1 + b * s2).astype(np.float32))).numpy()
    np.testing.assert_allclose(mixed, a * g1 + b * g2, rtol=1e-4, atol=1e-4)


@settings(max_examples=30, deadline=None)
@given(VECTORS, CHAINS)
def test_persistent_tape_repeats_exactly(x0, chain):
    v = tf.Variable(x0)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(_apply(tf, chain, v))
    first = tape.gradient(y, v).numpy()
    second = tape.gradient(y, v).numpy()
    # a new program runs on the host (interpret.py), with NumPy's rounding, until it has compiled in the
    # background (background_compile); the tape still repeats its answers bit for bit, as TF's
    background_compile.wait()
    third = tape.gradient(y, v).numpy()
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, third)
    # Another tape recording the same computes it compiled: NumPy's and XLA's tanh differ by a few ulps near
    # saturation, where `1 - tanh(x)**2` makes them differ by more than 1e-6 (3.5e-6 for exp, square, scale,
    # tanh, exp): rounding at the gradient's own scale
    with tf.GradientTape(persistent=True) as again:
        y = tf.reduce_sum(_apply(tf, chain, v))
    compiled = again.gradient(y, v).numpy()
    np.testing.assert_array_equal(compiled, again.gradient(y, v).numpy())
    scale = float(np.max(np.abs(first[np.isfinite(first)]), initial=1.0))
    np.testing.assert_allclose(first, compiled, rtol=1e-6, atol=1e-5 * scale)


@settings(max_examples=25, deadline=None)
@given(VECTORS, CHAINS)
def test_nested_tapes_match_jax_hessian(x0, chain):
    x = tf.constant(x0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(_apply(tf, chain, x))
        g = inner.gradient(y, x)
    hessian = outer.jacobian(g, x, unconnected_gradients="zero").numpy()

    def f(z):
        for name in chain:
            z = UNARY[name][1](z)
        return jnp.sum(z)

    expected = np.asarray(jax.hessian(f)(jnp.asarray(x0)))
    # Chains like exp(exp(exp(x))) overflow float32; compare where the Hessian is meaningful.
    assume(np.all(np.isfinite(expected)) and np.max(np.abs(expected)) < 1e4)
    np.testing.assert_allclose(hessian, expected, rtol=1e-4, atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(VECTORS, CHAINS)
def test_random_chains_match_tensorflow(x0, chain):
    def body(m):
        x = m.Variable(x0)
        with m.GradientTape() as tape:
            y = _apply(m, chain, x)
            loss = m.reduce_sum(y * y)
        return loss, tape.gradient(loss, x)

    assert_same(describe(body(real_tf)), describe(body(tf)), rtol=1e-4)
