"""Which outputs a tape tracks when a call is recorded as one op, against TF: the None pattern of gradients.

A loaded SavedModel function is one op over all its inputs in TF's tape: the gradient of an output from an
input it does not depend on is zero. A Keras call in training mode (recorded with its forward pass saved)
is op by op in TF: the gradient of an output from an input or weight it does not depend on is None.
"""

import inspect
import os
import pickle
import subprocess
import sys
import tempfile

from keras_oracle import assert_outcomes_match, run_case

import tapeshim
from oracle import check


def _loaded(tf):
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(2.0)
            self.unused = tf.Variable(3.0)

        @tf.function(input_signature=[tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)])
        def f(self, x, y):
            return {"a": x * self.v, "b": y * 2.0, "c": tf.stop_gradient(x) * y}

    folder = tempfile.mkdtemp()
    model = Model()
    tf.saved_model.save(model, folder)
    return tf.saved_model.load(folder)


def test_loaded_function_tracks_every_output_of_a_watched_input():
    def body(tf):
        loaded = _loaded(tf)
        x, y = tf.constant(1.5), tf.constant(2.5)
        with tf.GradientTape(persistent=True) as both:
            both.watch([x, y])
            out = loaded.f(x, y)
        with tf.GradientTape(persistent=True) as only_x:
            only_x.watch(x)
            out_x = loaded.f(x, y)
        with tf.GradientTape(persistent=True) as variables:
            out_v = loaded.f(x, y)
        sources = [x, y, loaded.v, loaded.unused]
        return (
            {k: both.gradient(out[k], sources) for k in "abc"},
            {k: only_x.gradient(out_x[k], [x, y]) for k in "abc"},
            {k: variables.gradient(out_v[k], [loaded.v, loaded.unused]) for k in "abc"},
        )

    check(body)


def keras_two_branch_gradients(tf):
    """A training-mode call of a two-branch model (BatchNormalization: recorded with its forward pass saved)."""
    import numpy as np  # the body runs alone in the TF child process too

    a_in, b_in = tf.keras.Input((3,)), tf.keras.Input((3,))
    out_a = tf.keras.layers.BatchNormalization()(tf.keras.layers.Dense(2)(a_in))
    out_b = tf.keras.layers.Dense(2)(b_in)
    model = tf.keras.Model([a_in, b_in], [out_a, out_b])
    rng = np.random.default_rng(1)
    model.set_weights([(rng.standard_normal(w.shape) * 0.4 + 1.0).astype(w.dtype) for w in model.weights])
    a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 4.0)
    b = tf.constant(np.ones((2, 3), np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        out_a, out_b = model([a, b], training=True)
        loss_a, loss_b = tf.reduce_sum(out_a * out_a), tf.reduce_sum(out_b)
    sources = [a, b] + model.trainable_variables
    moving = [v.numpy() for v in model.non_trainable_variables]
    return tape.gradient(loss_a, sources), tape.gradient(loss_b, sources), moving


def keras_two_output_layer_gradients(tf):
    """A plain Keras call (no saved forward pass): a layer whose two outputs each use one input."""
    import numpy as np  # the body runs alone in the TF child process too

    class TwoOutputs(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(3,), initializer="ones", name="w")

        def call(self, x, y):
            return x * self.w, y * 3.0

    layer = TwoOutputs()
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 4.0)
    y = tf.constant(np.ones((2, 3), np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        a, b = layer(x, y)
        loss_a, loss_b = tf.reduce_sum(a * a), tf.reduce_sum(b)
    sources = [x, y, layer.w]
    return tape.gradient(loss_a, sources), tape.gradient(loss_b, sources)


def _keras_in_tf(body):
    # TF's Keras runs in a child process: Keras picks one backend per process (see keras_oracle.py).
    script = (
        inspect.getsource(body) + "\nimport pickle, sys\nimport tensorflow as tf\n"
        "sys.path.insert(0, sys.argv[1])\nfrom keras_oracle import run_case\n"
        f"sys.stdout.buffer.write(pickle.dumps(run_case({body.__name__}, tf)))\n"
    )
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", script, os.path.dirname(__file__)], env=env, capture_output=True, timeout=600
    )
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    return pickle.loads(done.stdout)


def test_training_keras_call_tracks_an_output_by_the_inputs_it_depends_on():
    expected = _keras_in_tf(keras_two_branch_gradients)
    actual = run_case(keras_two_branch_gradients, tapeshim)
    assert_outcomes_match(expected, actual)
    gradient_a, gradient_b, _ = actual["result"]
    assert [g is None for g in gradient_a] == [False, True, False, False, False, False, True, True]
    assert [g is None for g in gradient_b] == [True, False, True, True, True, True, False, False]


def test_keras_call_tracks_an_output_by_the_inputs_it_depends_on():
    # The plain Keras call path (keras_bridge): d(loss_b)/dx, d(loss_a)/dy and d(loss_b)/dw are None, as in TF.
    expected = _keras_in_tf(keras_two_output_layer_gradients)
    actual = run_case(keras_two_output_layer_gradients, tapeshim)
    assert_outcomes_match(expected, actual)
    gradient_a, gradient_b = actual["result"]
    assert [g is None for g in gradient_a] == [False, True, False]
    assert [g is None for g in gradient_b] == [True, False, True]
