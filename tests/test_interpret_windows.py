"""The host interpreter's pooling rules give XLA's values, and a CNN's first steps no longer compile.

The rules' oracle is XLA's compiled result (the host runs JAX's primitives where XLA would); what a pooling
layer computes is compared with TF elsewhere (`test_ops`, `keras_cases`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import tapeshim as tf
from oracle import backend_compiles, check, interpreted_and_compiled
from tapeshim._src import interpret

_RNG = np.random.default_rng(0)
X = jnp.asarray(_RNG.normal(size=(2, 9, 9, 3)).astype(np.float32))
SPECIAL = jnp.asarray(  # ties, NaN, infinities and zeros of both signs
    np.array([[1, 1, 0, -0.0], [np.nan, 2, 2, -np.inf], [-np.inf, -np.inf, 3, 3], [0.0, -0.0, -0.0, 0.0]], np.float32)
).reshape(1, 4, 4, 1)
_INITS = {"max": (-jnp.inf, lax.max), "min": (jnp.inf, lax.min), "sum": (0.0, lax.add)}
WINDOWS = [(2, 2, "VALID"), (3, 2, "SAME"), (3, 1, "SAME"), (2, 1, "VALID"), (3, 3, "VALID")]


def _pool(kind, size, stride, padding, dilation=None):
    init, combine = _INITS[kind]

    def pool(x):
        window = (1, size, size, 1)
        return lax.reduce_window(x, init, combine, window, (1, stride, stride, 1), padding, window_dilation=dilation)

    return pool


def _and_gradient(pool):
    def both(x):
        out, pullback = jax.vjp(pool, x)
        return out, pullback(jnp.arange(out.size, dtype=out.dtype).reshape(out.shape))[0]

    return both


def _host_and_compiled(fn, *args):
    interpreted, compiled = interpreted_and_compiled(fn, args)
    return jax.tree.leaves(interpreted), jax.tree.leaves(compiled)


@pytest.mark.parametrize("kind", sorted(_INITS))
@pytest.mark.parametrize("size, stride, padding", WINDOWS)
def test_pools_and_their_gradients_are_xlas(kind, size, stride, padding):
    got, want = _host_and_compiled(_and_gradient(_pool(kind, size, stride, padding)), X)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", sorted(_INITS))
def test_ties_nans_infinities_and_signed_zeros_are_xlas(kind):
    # (max pooling's gradient goes to the first of equal maxima, never to the padding, as XLA's)
    got, want = _host_and_compiled(_and_gradient(_pool(kind, 2, 1, "SAME")), SPECIAL)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        np.testing.assert_array_equal(np.signbit(np.asarray(a)), np.signbit(np.asarray(b)))


TILED = jnp.asarray(  # 2 x 2 windows that tile it: an all-negative zero, both zeros, ties, NaN, -inf, a remainder
    np.array(
        [
            [-0.0, -1.0, -0.0, 0.0, 5.0],
            [-0.0, -np.inf, -1.0, -2.0, 1.0],
            [5.0, 5.0, np.nan, 1.0, 2.0],
            [5.0, 5.0, 3.0, 3.0, 9.0],
            [1.0, 2.0, 3.0, 4.0, 5.0],
        ],
        np.float32,
    )
).reshape(1, 5, 5, 1)


ZEROS = jnp.asarray(  # 2 x 2 windows of zeros of both signs among values of one sign (a zero max, a zero min)
    np.array([[0, -0.0, 1, 0], [2, 3, -0.0, -0.0], [-0.0, -0.0, -1, 0], [-0.0, -0.0, -2, -0.0]], np.float32)
).reshape(1, 4, 4, 1)


@pytest.mark.parametrize("kind", sorted(_INITS))
@pytest.mark.parametrize(
    "operand",
    [TILED, TILED[:, :4, :4], jnp.nan_to_num(TILED, nan=7.0), ZEROS, -ZEROS],
    ids=["5x5", "4x4", "no_nan", "zeros", "negated_zeros"],
)
def test_tiling_windows_ties_nans_and_signed_zeros_are_xlas(kind, operand):
    """Windows that tile the operand (strides equal to the window: `MaxPooling2D`'s) take the rules' tiled
    path (`interpret_windows._tile_views`), NaN-free gradients too; its maxima, zeros' signs and chosen elements
    are XLA's."""
    got, want = _host_and_compiled(_and_gradient(_pool(kind, 2, 2, "VALID")), operand)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        np.testing.assert_array_equal(np.signbit(np.asarray(a)), np.signbit(np.asarray(b)))


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("special", [np.inf, np.nan], ids=["inf", "nan"])
def test_a_tiling_pools_gradient_of_non_finite_and_negative_zero_values_is_xlas(kind, special):
    """A gradient holding inf or NaN takes the masked copy of the tiled scatter; a -0 value chosen still comes
    out +0, as XLA adds it into a zero."""
    operand = jnp.asarray(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) * np.float32(0.5))
    cotangent = jnp.asarray(np.array([[special, -0.0], [-0.0, 1.0]], np.float32).reshape(1, 2, 2, 1))

    def gradient(x, ct):
        return jax.vjp(_pool(kind, 2, 2, "VALID"), x)[1](ct)[0]

    got, want = _host_and_compiled(gradient, operand, cotangent)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(np.signbit(np.asarray(got[0])), np.signbit(np.asarray(want[0])))


def test_tiling_windows_of_integers_are_xlas():
    values = jnp.asarray(_RNG.integers(-3, 3, size=(2, 6, 7, 2)).astype(np.int32))

    def pool_and_scatter(x):
        pooled = lax.reduce_window(x, np.int32(np.iinfo(np.int32).min), lax.max, (1, 2, 3, 1), (1, 2, 3, 1), "VALID")
        return pooled, jax.vjp(_pool("max", 2, 2, "VALID"), x.astype(jnp.float32))[1](
            jnp.ones((2, 3, 3, 2), jnp.float32)
        )[0]

    got, want = _host_and_compiled(pool_and_scatter, values)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize(
    "operand, cotangent, padding",
    [
        ([-np.inf] * 3, [1, 10, 100, 1000, 10000], ((2, 2),)),  # the leading padding wins the tie (dropped)
        ([np.nan] * 3, [1, 10, 100, 1000, 10000], ((2, 2),)),  # a padding element after NaN is chosen
        ([0, 0, 10, 0, 0], [1, 1e8, -1e8], ((0, 0),)),  # one element, three windows: added in their order
    ],
)
def test_max_poolings_gradient_chooses_and_adds_as_xla(operand, cotangent, padding):
    def pool(v):
        return lax.reduce_window(v, -jnp.inf, lax.max, (3,), (1,), padding)

    def gradient(x, ct):
        return jax.vjp(pool, x)[1](ct)[0]

    args = (jnp.asarray(operand, jnp.float32), jnp.asarray(cotangent, jnp.float32))
    got, want = _host_and_compiled(gradient, *args)
    np.testing.assert_array_equal(got[0], want[0])


def test_dilated_windows_and_other_ranks_are_xlas():
    got, want = _host_and_compiled(_pool("max", 2, 1, "VALID", dilation=(1, 2, 2, 1)), X)
    np.testing.assert_array_equal(got[0], want[0])
    got, want = _host_and_compiled(lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (3,), (2,), "SAME"), X[0, 0, :, 0])
    np.testing.assert_array_equal(got[0], want[0])


def test_base_dilation_compiles_instead():
    pool = jax.jit(lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "VALID", (1, 2, 2, 1)))
    assert not interpret.supported(pool.trace(X).jaxpr)


def test_pooling_ops_give_tfs_values_and_gradients():
    def pools(tf):
        x = tf.constant(np.asarray(X))
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = tf.nn.max_pool2d(x, 3, 2, "SAME") * 2.0
            mean = tf.nn.avg_pool2d(x, 2, 2, "VALID")
            loss = tf.reduce_sum(out) + tf.reduce_sum(mean * mean)
        return out, mean, tape.gradient(loss, x)

    check(pools, rtol=1e-5)


def test_a_tiling_max_pool_gives_tfs_values_and_gradients():
    """`MaxPooling2D`'s windows (2 x 2, stride 2, an odd size's remainder dropped) on ReLU's zeros, through the
    tiled path, against TF."""

    def pools(tf):
        x = tf.constant(np.asarray(X))
        with tf.GradientTape() as tape:
            tape.watch(x)
            pooled = tf.nn.max_pool2d(tf.nn.relu(x), 2, 2, "VALID")
            loss = tf.reduce_sum(pooled * pooled)
        return pooled, tape.gradient(loss, x)

    check(pools, rtol=1e-6)


def test_a_cnns_first_steps_compile_nothing():
    keras, layers = tf.keras, tf.keras.layers
    model = keras.Sequential(
        [
            keras.Input((10, 10, 2)),
            layers.Conv2D(4, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.AveragePooling2D(2, padding="same"),
            layers.Flatten(),
            layers.Dense(3),
        ]
    )
    optimizer = keras.optimizers.SGD(0.1)
    images = tf.constant(_RNG.normal(size=(4, 10, 10, 2)).astype(np.float32))
    labels = tf.constant(np.array([0, 1, 2, 1], np.int32))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    compiles = backend_compiles()
    before = len(compiles)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    # (before the host's pooling rules, the first step compiled the model's call and its gradient)
    assert len(compiles) == before, "a CNN's first steps run on the host"
    assert np.isfinite(float(loss))
