"""`jaxpr_inline.inline`: a traced jaxpr bound equation by equation inside another trace.

A recorded Keras call is replayed from the jaxpr of its analysis (`keras_bridge._replay`), so what a gradient
program traces must be what running the function again would have given: the same values and gradients,
through nested `jit`s (entered), custom derivative rules (kept) and constants of the trace.
"""

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import jaxpr_inline


def _function(x, w):
    scale = np.float32(0.5)  # a constant of the trace

    @jax.jit
    def layer(h):
        return jax.nn.relu(h @ w) * scale  # a nested jit, and relu's custom JVP rule

    h = layer(x)
    return jnp.sum(jax.nn.logsumexp(h, axis=1)), h


def test_inlined_jaxpr_gives_the_functions_values_and_gradients():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    w = rng.normal(size=(4, 3)).astype(np.float32)
    closed = jax.jit(_function).trace(x, w).jaxpr

    def replayed(x, w):
        total, h = jaxpr_inline.inline(closed, [x, w])
        return total, h

    for got, want in zip(replayed(x, w), _function(x, w)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    grad = jax.jit(jax.grad(lambda x, w: replayed(x, w)[0], argnums=(0, 1)))(x, w)
    want = jax.grad(lambda x, w: _function(x, w)[0], argnums=(0, 1))(x, w)
    for got_part, want_part in zip(grad, want):
        np.testing.assert_allclose(got_part, want_part, rtol=1e-5, atol=1e-6)
    # nested jits are entered: the gradient program's trace holds no call of the inner jaxpr
    names = {eqn.primitive.name for eqn in jax.make_jaxpr(lambda x, w: replayed(x, w)[0])(x, w).eqns}
    assert "pjit" not in names and "jit" not in names
