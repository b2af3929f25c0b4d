"""The host interpreter's random-number rules give XLA's bits, and random draws no longer force compiles.

JAX's threefry keys on the host (`interpret_random`, `threefry`) have no TF counterpart: TF's random streams
are not JAX's, and tapeshim's draws follow JAX's (`random_ops`). The oracle here is XLA's compiled result,
compared bit for bit; what users see of a dropout layer is compared with TF elsewhere (`keras_cases`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeshim as tf
from oracle import backend_compiles, interpreted_and_compiled
from tapeshim._src import interpret, threefry
from tapeshim._src.ops import random_ops

SEED = jnp.array([123, 4567], jnp.uint32)
KEYS = jnp.arange(8, dtype=jnp.uint32).reshape(4, 2) * jnp.uint32(2654435761)


def _wrapped(seed):
    return jax.random.wrap_key_data(seed)


CASES = {
    "bits8": (lambda s: jax.random.bits(_wrapped(s), (3, 5), jnp.uint8), (SEED,)),
    "bits16": (lambda s: jax.random.bits(_wrapped(s), (4,), jnp.uint16), (SEED,)),
    "bits32": (lambda s: jax.random.bits(_wrapped(s), (2, 3, 4), jnp.uint32), (SEED,)),
    "bits64": (lambda s: jax.random.bits(_wrapped(s), (7,), jnp.uint64), (SEED,)),
    "bits_scalar": (lambda s: jax.random.bits(_wrapped(s), (), jnp.uint32), (SEED,)),
    "bits_empty": (lambda s: jax.random.bits(_wrapped(s), (0, 3), jnp.uint32), (SEED,)),
    "split": (lambda s: jax.random.key_data(jax.random.split(_wrapped(s), 5)), (SEED,)),
    "split_2d": (lambda s: jax.random.key_data(jax.random.split(_wrapped(s), (2, 3))), (SEED,)),
    "fold_in": (lambda s: jax.random.key_data(jax.random.fold_in(_wrapped(s), 7)), (SEED,)),
    "fold_in_negative_message": (
        lambda s, m: jax.random.key_data(jax.random.fold_in(_wrapped(s), m)),
        (SEED, jnp.int32(-5)),
    ),
    "seed_int32": (lambda n: jax.random.key_data(jax.random.key(n)), (jnp.int32(-3),)),
    "seed_int64": (lambda n: jax.random.key_data(jax.random.key(n)), (jnp.int64(-3),)),
    "seed_int64_high_word": (lambda n: jax.random.key_data(jax.random.PRNGKey(n)), (jnp.int64(2**40 + 5),)),
    "uniform32": (lambda s: jax.random.uniform(_wrapped(s), (3, 4), jnp.float32, -2.0, 3.0), (SEED,)),
    "uniform64": (lambda s: jax.random.uniform(_wrapped(s), (3, 4), jnp.float64), (SEED,)),
    "bernoulli": (lambda s: jax.random.bernoulli(_wrapped(s), 0.3, (10, 10)), (SEED,)),
    "dropout_mask": (
        lambda s, x: jnp.where(jax.random.bernoulli(_wrapped(s), 0.7, x.shape), x / 0.7, 0.0),
        (SEED, jnp.linspace(-1.0, 1.0, 24, dtype=jnp.float32).reshape(4, 6)),
    ),
    "batched_bits": (jax.vmap(lambda s: jax.random.bits(_wrapped(s), (3,), jnp.uint32)), (KEYS,)),
    "batched_split": (jax.vmap(lambda s: jax.random.key_data(jax.random.split(_wrapped(s), 3))), (KEYS,)),
    "batched_fold_in": (
        jax.vmap(lambda s, m: jax.random.key_data(jax.random.fold_in(_wrapped(s), m))),
        (KEYS, jnp.arange(4, dtype=jnp.uint32)),
    ),
    "batched_uniform": (jax.vmap(lambda s: jax.random.uniform(_wrapped(s), (2, 2))), (KEYS,)),
    "shifts": (
        lambda x, c: (jax.lax.shift_left(x, c), jax.lax.shift_right_logical(x, c)),
        (jnp.array([1, -5, 7, 2**30, -1], jnp.int32), jnp.array([0, 3, 31, 32, -1], jnp.int32)),
    ),
    "unsigned_shifts": (
        lambda x, c: (jax.lax.shift_left(x, c), jax.lax.shift_right_logical(x, c)),
        (jnp.array([1, 2**31, 7, 2**16], jnp.uint32), jnp.array([1, 31, 40, 16], jnp.uint32)),
    ),
    "bitcast": (
        lambda x, y: (jax.lax.bitcast_convert_type(x, jnp.float32), jax.lax.bitcast_convert_type(y, jnp.uint64)),
        (jnp.array([1065353216, 3, 2**31], jnp.uint32), jnp.array([1.5, -0.0], jnp.float64)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_host_draws_are_xlas(name):
    interpreted, compiled = interpreted_and_compiled(*CASES[name])
    for got, want in zip(jax.tree.leaves(interpreted), jax.tree.leaves(compiled)):
        assert got.dtype == want.dtype and got.shape == want.shape
        if np.issubdtype(got.dtype, np.floating):  # (the floats made of the bits: XLA's to the rounding)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-7, atol=0)
        else:  # the bits, the keys, a mask: XLA's exactly
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_keys_reach_only_the_random_rules_and_calls():
    # a slice of split keys, a key as a program's argument or result, and a key constant are not interpreted
    sliced = jax.jit(lambda s: jax.random.bits(jax.random.split(_wrapped(s))[1], (3,), jnp.uint32)).trace(SEED)
    assert not interpret.supported(sliced.jaxpr)
    key = jax.random.key(0)
    assert not interpret.supported(jax.jit(lambda k: jax.random.bits(k, (2,), jnp.uint32)).trace(key).jaxpr)
    assert not interpret.supported(jax.jit(lambda s: _wrapped(s)).trace(SEED).jaxpr)
    assert not interpret.supported(jax.jit(lambda: jax.random.bits(key, (2,), jnp.uint32)).trace().jaxpr)


def test_another_key_implementation_or_original_counters_compile_instead():
    other = jax.jit(lambda s: jax.random.bits(jax.random.wrap_key_data(s, impl="rbg"), (3,), jnp.uint32))
    assert not interpret.supported(other.trace(jnp.zeros((4,), jnp.uint32)).jaxpr)
    fn = jax.jit(lambda s: jax.random.bits(_wrapped(s), (4,), jnp.uint32))
    traced = fn.trace(SEED)
    was = jax.config.values["jax_threefry_partitionable"]
    jax.config.update("jax_threefry_partitionable", False)
    try:
        assert interpret.run(traced, (SEED,)) is None  # (the host does not draw JAX's original counters)
    finally:
        jax.config.update("jax_threefry_partitionable", was)
    np.testing.assert_array_equal(interpret.run(traced, (SEED,)), fn(SEED))


@pytest.mark.parametrize(
    "base, messages",
    [(0, (0,)), (7, (1, 0)), (-1, (2**32 - 1,)), (2**40 + 3, (5, 9)), (-(2**63), (12,)), (2**63 - 1, ())],
)
def test_eager_keys_are_jaxs(base, messages):
    want = jax.random.PRNGKey(base)
    for message in messages:
        want = jax.random.fold_in(want, message)
    words = threefry.seed(base)
    for message in messages:
        words = threefry.fold_in(words, message)
    assert words == tuple(int(word) for word in np.asarray(want))  # (computed on the host)
    np.testing.assert_array_equal(random_ops._folded_key(base, *messages), want)


@pytest.mark.parametrize(
    "flag, value",
    [("jax_default_prng_impl", "rbg"), ("jax_default_prng_impl", "unsafe_rbg"), ("jax_enable_x64", False)],
)
def test_eager_keys_of_other_configurations_are_jaxs(flag, value):
    # (another key implementation's keys have other words; without 64-bit mode JAX reads a seed as an int32)
    was = jax.config.values[flag]
    jax.config.update(flag, value)
    try:
        want = jax.random.fold_in(jax.random.PRNGKey(-3), 4)
        got = random_ops._folded_key(-3, 4)
    finally:
        jax.config.update(flag, was)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "base, messages, jax_base, jax_words",
    [(2**63, (), -(2**63), ()), (0, (-4,), 0, (2**32 - 4, 2**32 - 1)), (0, (2**32,), 0, (0, 1)), (7, (3,), 7, (3,))],
)
def test_keys_of_any_python_int_are_int64_seeds_with_their_words_folded_in(base, messages, jax_base, jax_words):
    # (TF reads seeds as int64s; JAX raises for a fold past uint32, so a message's high word is a second fold)
    want = jax.random.PRNGKey(jax_base)
    for word in jax_words:
        want = jax.random.fold_in(want, word)
    np.testing.assert_array_equal(random_ops._folded_key(base, *messages), want)


def test_a_dropout_models_first_steps_compile_nothing():
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.Input((12,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dropout(0.5),
            keras.layers.Dense(3),
        ]
    )
    optimizer = keras.optimizers.SGD(0.1)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(8, 12)).astype(np.float32))
    y = tf.constant(rng.integers(0, 3, size=8).astype(np.int32))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step():
        with tf.GradientTape() as tape:
            hidden = model.layers[0](x)
            dropped = model.layers[1](hidden, training=True)
            loss = loss_fn(y, model.layers[2](dropped))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        kept = hidden.numpy() != 0
        return (dropped.numpy() == 0)[kept]

    compiles = backend_compiles()
    before = len(compiles)
    masks = [step() for _ in range(4)]
    # (before the host drew JAX's keys, the first step compiled the dropout layer's call and its gradient)
    assert len(compiles) == before, "a dropout's draws run on the host: its first steps compile nothing"
    assert 0.3 < np.mean(np.concatenate(masks)) < 0.7  # (about half the units dropped: fresh masks each step)
    assert len({mask.tobytes() for mask in masks}) == 4
