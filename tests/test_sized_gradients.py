"""New sizes of a gradient request's structure computed from one symbolic trace of its program
(`tapeshim/_src/sized_gradients.py`), against TF.

An eager training step whose batch changes size every step (variable-length data) runs in the per-op tier,
op by op. From the third size of a small structure on, its whole gradient program is bound to the step's sizes
and computed in one host call instead. Checked here: the values, `None` gradients and errors are TF's, with the
program serving the new sizes; a plan with a user's function in it stays per op.
"""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises
from tapeshim._src import interpret, replay_eager, sized_gradients

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

SIZES = (10, 11, 13, 17, 12, 23, 31)


def _steps(tf):
    """A classification step over batches of new sizes: losses, gradients (one unconnected: None), updates."""
    rng = np.random.default_rng(4)
    w = tf.Variable((rng.normal(size=(4, 8)) * 0.3).astype(np.float32))
    b = tf.Variable(np.zeros(3, np.float32))
    unused = tf.Variable(np.ones(2, np.float32))
    head = tf.Variable((rng.normal(size=(8, 3)) * 0.3).astype(np.float32))
    out = []
    for n in SIZES:
        x = tf.constant(rng.normal(size=(n, 4)).astype(np.float32))
        labels = tf.constant(rng.integers(0, 3, size=n).astype(np.int32))
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w))
            logits = tf.matmul(h - tf.reduce_mean(h, axis=0), head) + b
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        grads = tape.gradient(loss, [w, b, head, unused])
        for variable, grad in zip((w, b, head), grads):
            variable.assign_sub(0.1 * grad)
        out.append((loss, grads))
    return out


def _sized_sources_and_seeds(tf):
    """A watched input of each step's size and output gradients of its size: both sized in the program."""
    rng = np.random.default_rng(5)
    w = tf.Variable(rng.normal(size=(3, 2)).astype(np.float32))
    out = []
    for n in SIZES:
        x = tf.constant(rng.normal(size=(n, 3)).astype(np.float32))
        seed = tf.constant(rng.normal(size=(n, 2)).astype(np.float32))
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.tanh(tf.matmul(x, w)) * 2.0
            total = tf.reduce_sum(y * y)
        out.append(
            (
                tape.gradient(y, [x, w], output_gradients=seed),
                tape.gradient([total, y], [w, x]),
                tape.gradient(total, x),
                tape.gradient(total, x),  # a persistent tape asked again: its first answer
            )
        )
        del tape
    return out


def test_batches_of_new_sizes_give_tfs_values_with_one_program_for_the_sizes():
    before = sized_gradients.stats["sized_gradients"]
    check(_steps)
    assert sized_gradients.stats["sized_gradients"] - before >= len(SIZES) - 3


def test_sized_sources_seeds_and_persistent_tapes_give_tfs_values():
    before = sized_gradients.stats["sized_gradients"]
    check(_sized_sources_and_seeds)
    assert sized_gradients.stats["sized_gradients"] > before


def test_later_sizes_run_no_per_op_kernel():
    """From the third size on, a step's gradient is one host call: the per-op tier runs none of it."""
    rng = np.random.default_rng(6)
    w = tapeshim.Variable(rng.normal(size=(4, 5)).astype(np.float32))
    per_op = []
    for n in (40, 41, 42, 43, 44, 45):
        x = tapeshim.constant(rng.normal(size=(n, 4)).astype(np.float32))
        runs = replay_eager.stats["per_op_runs"]
        with tapeshim.GradientTape() as tape:
            loss = tapeshim.reduce_sum(tapeshim.square(tapeshim.matmul(x, w) - 1.0))
        grad = tape.gradient(loss, w)
        expected = 2 * x.numpy().T @ (x.numpy() @ w.numpy() - 1.0)
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-4, atol=1e-4)
        per_op.append(replay_eager.stats["per_op_runs"] - runs)
    assert per_op[3:] == [0, 0, 0]


def test_a_bad_label_at_a_new_size_raises_tfs_error():
    def body(tf):
        w = tf.Variable(np.ones((4, 3), np.float32))
        for n in (10, 11, 12, 13):
            x = tf.ones((n, 4))
            labels = tf.constant([5 if n == 13 else 1] * n)  # out of range at the last size
            with tf.GradientTape() as tape:
                logits = tf.matmul(x, w)
                loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            tape.gradient(loss, w)

    check_raises(body)


def test_a_plan_with_a_users_function_stays_per_op():
    """A custom gradient is a user's Python: its plan is never traced symbolically."""

    def body(tf):
        @tf.custom_gradient
        def scaled(x):
            return x * 2.0, lambda upstream: upstream * 3.0

        w = tf.Variable(np.ones((3,), np.float32))
        out = []
        for n in SIZES[:5]:
            x = tf.ones((n, 3))
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(scaled(x * w))
            out.append(tape.gradient(loss, w))
        return out

    before = sized_gradients.stats["sized_gradients"]
    check(body)
    assert sized_gradients.stats["sized_gradients"] == before


def test_a_size_too_heavy_for_the_host_leaves_the_later_sizes_served(monkeypatch):
    """A size whose work the host refuses (`interpret_cost.HOST_ELEMENTS`) runs per op; it does not mark the
    structure (or a kernel's) as one the interpreter cannot run, so later sizes are served as before."""
    from tapeshim._src import interpret_cost, kernel_families

    rng = np.random.default_rng(8)
    w = tapeshim.Variable(rng.normal(size=(3, 5)).astype(np.float32))

    def step(n):
        x = tapeshim.constant(rng.normal(size=(n, 3)).astype(np.float32))
        with tapeshim.GradientTape() as tape:
            loss = tapeshim.reduce_sum(tapeshim.tanh(tapeshim.matmul(x, w)))
        grad = tape.gradient(loss, w)
        expected = x.numpy().T @ (1 - np.tanh(x.numpy() @ w.numpy()) ** 2)
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-4, atol=1e-5)

    for n in (50, 51, 52):
        step(n)
    failed = kernel_families.stats["failed"]
    with monkeypatch.context() as patched:
        patched.setattr(interpret_cost, "HOST_ELEMENTS", 500)
        step(400)  # (more elements than the patched limit)
    served = sized_gradients.stats["sized_gradients"]
    step(53)
    assert sized_gradients.stats["sized_gradients"] == served + 1
    assert kernel_families.stats["failed"] == failed
