"""NumPy values that compiled programs take, put on the device once (`device_leaves`).

`jax.jit` copies a NumPy argument on each call (3 ms a call for 16 MiB here), and tapeshim's host constants are
NumPy arrays: a compiled tape program or `tapeshim.function` puts such a value on the device once, as its
tensor's value from then on. Values stay TF's; counts, never durations.
"""

import jax
import numpy as np
import pytest

import tapeshim
import tapeshim as tf
from oracle import backend_compiles, check
from tapeshim._src import background_compile, device_leaves, interpret

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="host constants are NumPy arrays on the CPU only")

rng = np.random.default_rng(11)
ROWS = 2048  # (x: 2048 x 16 float32, 128 KiB, above `device_leaves.LEAF_MIN_BYTES`; y: 8 KiB, below)
X = rng.normal(size=(ROWS, 16)).astype(np.float32)
Y = rng.normal(size=(ROWS, 1)).astype(np.float32)


def _train(tf, x, y, steps):
    w = tf.Variable(np.zeros((16, 1), np.float32))
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        w.assign_sub(0.05 * tape.gradient(loss, w))
        losses.append(loss)
    return losses, w


@pytest.mark.usefixtures("compiles_on_repeat")  # (the step's program compiles from its second call)
def test_a_compiled_step_puts_a_large_constant_on_the_device_once():
    assert X.nbytes >= device_leaves.LEAF_MIN_BYTES > Y.nbytes
    x, y = tf.constant(X), tf.constant(Y)
    assert type(x._value) is np.ndarray  # (a host constant)
    _train(tf, x, y, 3)
    background_compile.wait()
    compile_log = backend_compiles()
    compiled_before = len(compile_log)
    losses, w = _train(tf, x, y, 6)
    assert isinstance(x._value, jax.Array)
    assert type(y._value) is np.ndarray  # (8 KiB: the call copies it, as a step's batch, each used once)
    assert len(compile_log) == compiled_before  # (the steady loop compiles nothing more)
    np.testing.assert_array_equal(x.numpy(), X)
    check(lambda tf: _train(tf, tf.constant(X), tf.constant(Y), 9))  # the values are TF's, compiled or not


@pytest.mark.usefixtures("compiles_on_repeat")
def test_a_function_puts_its_captured_constants_on_the_device_once_compiled():
    def body(tf):
        x, y = tf.constant(X[:256]), tf.constant(Y[:256])
        w = tf.Variable(np.zeros((16, 1), np.float32))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            w.assign_sub(0.05 * tape.gradient(loss, w))
            return loss

        losses = [step() for _ in range(3)]
        if tf is not tapeshim:
            return losses + [step() for _ in range(3)], w
        assert type(x._value) is np.ndarray  # (its first calls computed on the host)
        background_compile.wait()
        losses += [step() for _ in range(3)]
        assert isinstance(x._value, jax.Array) and isinstance(y._value, jax.Array)
        return losses, w

    check(body)
