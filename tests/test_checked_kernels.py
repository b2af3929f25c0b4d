"""Kernels with runtime checks whose first call skips its check (an empty input), against real TensorFlow.

A kernel is compiled once for all its argument signatures; one whose first signature
traced no check (an empty matrix to invert, no labels, no indices) must still check the
next signature's values. tapeshim runs in a fresh process, so these really are the
kernels' first calls.
"""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from oracle import check_raises, real_tf, run


def _steps(tf):
    """Each step's outcome: ("value", array) or ("raised", class name, message)."""

    def taped_inv(value):
        x = tf.Variable(value)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.linalg.inv(x))
        return tape.gradient(y, x)

    def taped_xent(labels, classes):
        logits = tf.Variable(tf.zeros((len(labels), classes)))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(labels, tf.int32), logits=logits)
            )
        return tape.gradient(loss, logits)

    def taped_gather(indices):
        params = tf.Variable(tf.reshape(tf.range(12.0), (4, 3)))
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(params, tf.constant(indices, tf.int32)))
        return tf.convert_to_tensor(tape.gradient(y, params))

    steps = [
        lambda: tf.linalg.inv(tf.zeros((0, 0))),
        lambda: tf.linalg.inv(tf.eye(2) * 2.0),
        lambda: tf.linalg.inv(tf.zeros((2, 2))),
        lambda: taped_inv(np.zeros((0, 0), np.float32)),
        lambda: taped_inv(np.eye(2, dtype=np.float32) * 4.0),
        lambda: taped_inv(np.zeros((2, 2), np.float32)),
        lambda: taped_xent([], 3),
        lambda: taped_xent([0, 2], 3),
        lambda: taped_xent([0, 7], 3),
        lambda: taped_gather([]),
        lambda: taped_gather([1, 3]),
        lambda: taped_gather([1, 9]),
    ]
    outcomes = []
    for step in steps:
        try:
            outcomes.append(("value", np.asarray(step())))
        except Exception as exc:  # noqa: BLE001 - every exception is part of the comparison
            outcomes.append(("raised", type(exc).__name__, str(exc)))
    return outcomes


def test_a_kernel_whose_first_call_skipped_its_check_still_checks_later_calls():
    script = (
        "import pickle, sys\nsys.path.insert(0, sys.argv[1])\nimport tapeshim\n"
        "from test_checked_kernels import _steps\nsys.stdout.buffer.write(pickle.dumps(_steps(tapeshim)))\n"
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", script, os.path.dirname(__file__)], env=env, capture_output=True, timeout=600
    )
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    actual = pickle.loads(done.stdout)
    expected = _steps(real_tf)
    assert len(actual) == len(expected)
    for k, (want, got) in enumerate(zip(expected, actual)):
        assert want[0] == got[0], f"step {k}: TF {want!r}, tapeshim {got!r}"
        if want[0] == "raised":
            assert got[1] == want[1], f"step {k}: TF raised {want[1]}, tapeshim {got[1]}: {got[2]}"
            if "Input is not invertible" in want[2]:
                assert "Input is not invertible" in got[2]
            elif "label value of 7" in want[2]:
                assert "label value of 7 which is outside the valid range of [0, 3).  Label values: 0 7" in got[2]
            else:
                assert "indices[1] = 9 is not in [0, 4)" in want[2] and "indices[1] = 9 is not in [0, 4)" in got[2]
        else:
            assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape, f"step {k}"
            np.testing.assert_allclose(got[1], want[1], rtol=1e-6, err_msg=f"step {k}")


@pytest.mark.parametrize("where", ["eager", "function", "tape"])
def test_a_scalar_index_out_of_range_is_named_as_tf_names_it(where):
    def body(tf):
        params = tf.reshape(tf.range(12.0), (4, 3))
        if where == "eager":
            return tf.gather(params, 15)
        if where == "function":
            return tf.function(lambda i: tf.gather(params, i, axis=1))(tf.constant(-1))
        with tf.GradientTape() as tape:
            tape.watch(params)
            return tf.gather(params, tf.constant(9))

    raised = check_raises(body)
    phrase = {"eager": "indices = 15 is not in [0, 4)", "function": "indices = -1 is not in [0, 3)"}
    for message in (run(body, real_tf).message, raised.message):
        assert phrase.get(where, "indices = 9 is not in [0, 4)") in message


@pytest.mark.parametrize("where", ["eager", "tape", "function", "every_size"])
def test_labels_out_of_range_are_listed_as_tf_lists_them(where):
    labels, logits = [[1, 7], [0, -2]], np.zeros((2, 2, 3), np.float32)

    def body(tf):
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits
        if where == "eager":
            return xent(labels=tf.constant(labels), logits=tf.constant(logits))
        if where == "tape":
            variable = tf.Variable(logits)
            with tf.GradientTape():
                return xent(labels=tf.constant(labels), logits=variable)
        signature = None
        if where == "every_size":
            signature = [tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None, None, 3], tf.float32)]
        return tf.function(lambda y, z: xent(labels=y, logits=z), input_signature=signature)(
            tf.constant(labels), tf.constant(logits)
        )

    raised = check_raises(body)
    for message in (run(body, real_tf).message, raised.message):
        assert (
            "Received a label value of -2 which is outside the valid range of [0, 3).  Label values: 1 7 0 -2"
            in message
        )
