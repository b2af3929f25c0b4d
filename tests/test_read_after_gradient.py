"""Intermediates read after their gradient (`read_after_gradient`): the next step's gradient program computes them.

keras.io's training loops read the step's logits after `apply_gradients` (`accuracy.update_state(y, logits)`).
Values are compared with TF's; the tests of the mechanism count forces and compiles, never durations.
"""

import gc
import weakref

import numpy as np
import pytest

import tapeshim as tf
from oracle import check
from tapeshim import experimental
from tapeshim._src import read_after_gradient, replay

RNG = np.random.default_rng(11)
W1 = (RNG.normal(size=(5, 8)) * 0.4).astype(np.float32)
W2 = (RNG.normal(size=(8, 3)) * 0.4).astype(np.float32)
X = RNG.normal(size=(6, 5)).astype(np.float32)
Y = RNG.integers(0, 3, size=6).astype(np.int32)


def _step(tf, w1, w2, x, y):
    """One SGD step; returns the loss, the logits and a metric the tape recorded beside the loss."""
    with tf.GradientTape() as tape:
        hidden = tf.nn.relu(x @ w1)
        logits = hidden @ w2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        largest = tf.reduce_max(logits)
    g1, g2 = tape.gradient(loss, [w1, w2])
    w1.assign_sub(0.1 * g1)
    w2.assign_sub(0.1 * g2)
    return loss, logits, largest


def _loop(tf, steps, read):
    w1, w2 = tf.Variable(W1), tf.Variable(W2)
    x, y = tf.constant(X), tf.constant(Y)
    out = []
    for _ in range(steps):
        loss, logits, largest = _step(tf, w1, w2, x, y)
        out.append(read(tf, loss, logits, largest, y))
    return out, w1, w2


READS = {
    "logits": lambda tf, loss, logits, largest, y: [loss, logits],
    "argmax": lambda tf, loss, logits, largest, y: [loss, tf.argmax(logits, axis=1)],
    "accuracy": lambda tf, loss, logits, largest, y: tf.reduce_mean(
        tf.cast(tf.equal(tf.cast(tf.argmax(logits, axis=1), tf.int32), y), tf.float32)
    ),
    "recorded_metric": lambda tf, loss, logits, largest, y: [loss, largest],
    "numpy": lambda tf, loss, logits, largest, y: float(np.sum(logits.numpy())),
}


@pytest.mark.parametrize("read", sorted(READS))
def test_intermediates_read_after_the_gradient_match_tf(read):
    check(lambda tf: _loop(tf, 5, READS[read]))


def _counting_forces(monkeypatch):
    forced = []
    compute = replay._compute

    def counting(lazy):
        forced.append(len(lazy))
        return compute(lazy)

    monkeypatch.setattr(replay, "_compute", counting)
    return forced


def test_the_next_steps_gradient_program_computes_what_was_read(monkeypatch):
    w1, w2, x, y = tf.Variable(W1), tf.Variable(W2), tf.constant(X), tf.constant(Y)
    accuracy = []
    for _ in range(3):
        _, logits, _ = _step(tf, w1, w2, x, y)
        accuracy.append(tf.argmax(logits, axis=1).numpy())  # the first step's read forced the logits
    forced = _counting_forces(monkeypatch)
    experimental.reset_compile_stats()
    for _ in range(6):
        _, logits, _ = _step(tf, w1, w2, x, y)
        assert logits._value is not None and logits._node is None  # computed, its graph let go
        accuracy.append(tf.argmax(logits, axis=1).numpy())
    assert forced == []
    assert experimental.compile_stats()["programs_compiled"] == 0  # one program for the steady loop


def test_a_metric_recorded_beside_the_loss_reads_the_logits_without_the_forward():
    w1, w2, x, y = tf.Variable(W1), tf.Variable(W2), tf.constant(X), tf.constant(Y)
    for _ in range(3):
        _, logits, largest = _step(tf, w1, w2, x, y)
        float(largest)
    assert logits._value is not None  # the metric's force now starts from the logits' value
    assert largest._value is not None


def test_a_read_intermediate_keeps_no_graph():
    w1, w2, x, y = tf.Variable(W1), tf.Variable(W2), tf.constant(X), tf.constant(Y)
    kept, refs = [], []
    for _ in range(4):
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(x @ w1)
            logits = hidden @ w2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        refs.append(weakref.ref(hidden))
        del hidden
        tape.gradient(loss, [w1, w2])
        logits.numpy()
        kept.append(logits)
    del tape
    gc.collect()
    assert all(ref() is None for ref in refs)
    assert all(logits._node is None for logits in kept)


def test_a_persistent_tape_learns_nothing():
    w = tf.Variable(W1)
    x = tf.constant(X)
    for _ in range(3):
        with tf.GradientTape(persistent=True) as tape:
            hidden = x @ w
            loss = tf.reduce_sum(hidden * hidden)
        first = tape.gradient(loss, w).numpy()
        assert hidden._value is None  # (its request computed the loss and the gradient only)
        hidden.numpy()
        assert np.array_equal(tape.gradient(loss, w).numpy(), first)
        del tape


def test_reads_inside_a_function_are_its_own():
    def body(tf):
        w = tf.Variable(W1)
        x = tf.constant(X)

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                hidden = x @ w
                loss = tf.reduce_sum(tf.square(hidden))
            w.assign_sub(0.01 * tape.gradient(loss, w))
            return tf.reduce_max(hidden)

        return [step() for _ in range(3)]

    check(body)


def test_requests_noted_keep_ids_and_slots_only():
    w1, w2, x, y = tf.Variable(W1), tf.Variable(W2), tf.constant(X), tf.constant(Y)
    _step(tf, w1, w2, x, y)
    for entry in read_after_gradient._recent:
        assert not any(isinstance(part, tf.Tensor) for part in entry)
        assert all(isinstance(tid, int) for tid in entry[1])


def _chain_step(w, x, read):
    with tf.GradientTape() as tape:
        a = x @ w
        b = tf.sin(a)
        c = tf.tanh(b) * a
        d = tf.exp(-c)
        loss = tf.reduce_sum(d * c)
    tape.gradient(loss, w)
    if read is not None:
        [a, b, c, d][read].numpy()


def test_reading_more_of_a_structure_is_not_a_new_size():
    # each new read extends the program's key; counted as sizes of the structure, the fourth made it run per op
    w = tf.Variable(np.full((4, 4), 0.1, np.float32))
    x = tf.constant(np.ones((2, 4), np.float32))
    for step in range(8):
        _chain_step(w, x, step % 4)
    experimental.reset_compile_stats()
    for step in range(12):
        _chain_step(w, x, step % 4)
    stats = experimental.compile_stats()
    assert stats["per_op_plans"] == 0 and stats["programs_compiled"] == 0, stats


def test_a_read_forced_inside_the_tape_some_steps_keeps_one_program():
    w1, x, y = tf.Variable(W1), tf.constant(X), tf.constant(Y)
    w2 = tf.constant(W2)

    def step(read_inside):
        with tf.GradientTape() as tape:
            logits = tf.nn.relu(x @ w1) @ w2
            if read_inside:
                logits.numpy()  # (a value before the request: the program computes it, and fills nothing)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        w1.assign_sub(0.1 * tape.gradient(loss, w1))
        logits.numpy()

    for _ in range(6):
        step(False)
    hits = {key: replay._program_hits.get(key, 0) for key in replay._programs if key[0] == "gradient"}
    for k in range(8):
        step(k % 2 == 1)
    # (the reads inside the tape force the logits by programs of their own, as before: not counted here)
    assert {key for key in replay._programs if key[0] == "gradient"} <= set(hits)  # (others' may be evicted)
    served = [replay._program_hits.get(key, 0) - before for key, before in hits.items() if key in replay._programs]
    assert sorted(served)[-1] == 8 and sum(served) == 8  # every step's request, one program


def test_an_output_the_targets_do_not_reach_is_forgotten():
    def body(tf):
        w = tf.Variable(W1)
        x = tf.constant(X)
        out = []
        for _ in range(4):
            with tf.GradientTape() as tape:
                used, unused = tf.split(x @ w, 2, axis=1)
                loss = tf.reduce_sum(used * used)
            w.assign_sub(0.01 * tape.gradient(loss, w))
            out.append([loss, unused.numpy()])  # read after the gradient: a sibling the loss does not reach
        return out

    read_after_gradient.forget()
    check(body)
    assert not any(read_after_gradient._wanted.values())  # (noted once, then known unreachable)
