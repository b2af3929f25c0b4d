"""The per-op tier's gradient (`tapeshim/_src/replay_eager.py`): only the cotangents that reach a source.

A plan run per op (a long one, a new size of a structure) is differentiated by one VJP kernel per recorded op.
Those kernels compute only the cotangents that can flow back to a requested source: a layer's product with its
data computes its weights' cotangent alone, and the ops of a branch that reaches no requested source are not
differentiated. Cotangents summed at a slot are added on the host, as XLA adds them. Values and `None`
gradients are TF's either way.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oracle import check, check_raises, real_tf
from tapeshim._src import interpret, replay, replay_eager

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

LINKS = replay.SMALL_PLAN  # (a plan over `SMALL_PLAN` nodes runs per op on its first sightings)

rng = np.random.default_rng(11)
X = rng.normal(size=(6, 5)).astype(np.float32)
W = (rng.normal(size=(5, 4)) * 0.5).astype(np.float32)
V = (rng.normal(size=(4,)) * 0.5).astype(np.float32)


def _long_step(tf, requested):
    """A product of data and weights, a long elementwise chain, a second variable's branch (requested or not),
    an integer gather and a value used twice (its cotangents summed)."""
    w, v = tf.Variable(W), tf.Variable(V)
    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as tape:
        h = tf.matmul(x, w)
        for _ in range(LINKS):
            h = tf.sin(h) * 0.9
        rows = tf.gather(h, tf.constant([0, 2, 2, 5]))
        loss = tf.reduce_sum(rows * rows + rows) + tf.reduce_sum(tf.tanh(v) * tf.reduce_mean(h, axis=0))
    out = [tape.gradient(loss, [w, v] if requested == "both" else w), tape.gradient(loss, [x, v])]
    del tape
    return loss, out


@pytest.mark.parametrize("requested", ["weights", "both"])
def test_a_long_plan_per_op_gives_tfs_gradients(requested):
    runs = replay_eager.stats["per_op_runs"]
    check(lambda tf: _long_step(tf, requested))
    assert replay_eager.stats["per_op_runs"] > runs, "the per-op tier served the plan"


def test_a_product_with_data_differentiates_its_weights_alone():
    import tapeshim

    _long_step(tapeshim, "weights")
    wanted = {key[2] for key in replay_eager._vjp_kernels if key[2] is not None}
    assert (False, True) in wanted, "the data's cotangent of `matmul(x, w)` is not computed"


def test_a_custom_gradient_on_an_unrequested_branch_is_called_as_tfs():
    # TF calls a custom gradient's grad_fn on every path from the target, requested sources or not: the per-op
    # tier differentiates every recorded node of a plan holding one (here its grad_fn raises, as TF's run does)
    def body(tf):
        @tf.custom_gradient
        def doubled(x):
            def grad_fn(upstream):
                raise ValueError("grad_fn called")

            return x * 2.0, grad_fn

        w, v = tf.Variable(np.ones(4, np.float32)), tf.Variable(np.full(4, 2.0, np.float32))
        with tf.GradientTape() as tape:
            h = w * 1.0
            for _ in range(LINKS):
                h = tf.sin(h) * 0.9
            loss = tf.reduce_sum(h) + tf.reduce_sum(doubled(v))
        return tape.gradient(loss, w)

    check_raises(body)


def test_cotangents_summed_on_the_host_round_and_flush_as_tf_and_xla():
    tiny = np.finfo(np.float32).tiny
    a = np.array([1.5 * tiny, -0.0, 3.0, 0.1, -2.5 * tiny, np.inf], np.float32)
    b = np.array([-1.25 * tiny, -0.0, 1e-8, 0.2, 2.25 * tiny, 1.0], np.float32)
    expected = real_tf.add(a, b).numpy()  # (TF's, bit for bit: the oracle)
    with interpret.host_errors_ignored():  # (the per-op tier's gradient sums inside its host context)
        summed = replay_eager._sum(a, b)
    assert isinstance(summed, np.ndarray)
    np.testing.assert_array_equal(summed.view(np.uint32), expected.view(np.uint32))
    xla = np.asarray(jax.jit(jnp.add)(a, b))  # (and the compiled `add` kernel's, which it stands in for)
    np.testing.assert_array_equal(summed.view(np.uint32), xla.view(np.uint32))
    assert summed[0] == 0.0 and summed[4] == 0.0 and np.signbit(summed[4])  # (subnormals flushed, signed)
    scalar = replay_eager._sum(np.array(1.5, np.float32), np.array(2.0, np.float32))
    assert isinstance(scalar, np.ndarray) and scalar.shape == () and scalar == 3.5  # (0-d: an array)
