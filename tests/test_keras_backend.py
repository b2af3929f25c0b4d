"""tf.keras.backend (TF's legacy backend) and Keras optimizer/layer fixes, against TF's own Keras.

The bodies (`keras_backend_cases.LEGACY_BACKEND_CASES`, completed by
`keras_backend_cases_more`, one per backend name, and
`keras_state_and_sparse_cases.BACKEND_CASES`) run with TF's Keras in a child process
(KERAS_BACKEND=tensorflow) and with tapeshim here; outcomes are compared as in
tests/test_keras.py.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from keras_backend_cases_more import LEGACY_BACKEND_CASES
from keras_oracle import assert_outcomes_match, run_case
from keras_state_and_sparse_cases import BACKEND_CASES

import tapeshim

_HERE = Path(__file__).parent
NAMESPACES = (
    "",
    "activations",
    "applications",
    "backend",
    "callbacks",
    "config",
    "constraints",
    "datasets",
    "dtype_policies",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "optimizers",
    "optimizers.schedules",
    "optimizers.legacy",
    "preprocessing",
    "regularizers",
    "utils",
    "ops",
    "random",
)
# tapeshim's tf.keras also has `saving` (Keras's namespace), which TF 2.21's tf.keras lacks.
TAPESHIM_EXTRA = {"": {"saving"}}
# TF's backend function that returns a tf.SparseTensor, a type tapeshim does not have.
TAPESHIM_MISSING = {"backend": {"ctc_label_dense_to_sparse"}}
ALL_CASES = {**LEGACY_BACKEND_CASES, **BACKEND_CASES}
_CHILD = """
import pickle, sys
sys.path.insert(0, {here!r})
import tensorflow as tf
from keras_backend_cases_more import LEGACY_BACKEND_CASES
from keras_state_and_sparse_cases import BACKEND_CASES
from keras_oracle import run_case
cases = {{**LEGACY_BACKEND_CASES, **BACKEND_CASES}}
outcomes = {{name: run_case(body, tf) for name, body in cases.items()}}
outcomes["__names__"] = sorted(n for n in dir(tf.keras.backend) if not n.startswith("_"))
outcomes["__namespaces__"] = {{}}
for path in {namespaces!r}:
    module = tf.keras
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    outcomes["__namespaces__"][path] = sorted(n for n in dir(module) if not n.startswith("_"))
with open(sys.argv[1], "wb") as stream:
    pickle.dump(outcomes, stream)
"""


@pytest.fixture(scope="session")
def tf_backend_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("tf_keras_backend") / "results.pkl"
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(here=str(_HERE), namespaces=NAMESPACES), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, f"TF's Keras run failed:\n{done.stderr[-4000:]}"
    with open(out, "rb") as stream:
        return pickle.load(stream)


def test_backend_has_tfs_names_and_no_others(tf_backend_results):
    expected = sorted(set(tf_backend_results["__names__"]) - TAPESHIM_MISSING["backend"])
    assert sorted(n for n in dir(tapeshim.keras.backend) if not n.startswith("_")) == expected
    assert sorted(tapeshim.keras.backend.__all__) == expected


@pytest.mark.parametrize("path", NAMESPACES)
def test_keras_namespace_has_tfs_names(path, tf_backend_results):
    module = tapeshim.keras
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    names = {n for n in dir(module) if not n.startswith("_")}
    expected = set(tf_backend_results["__namespaces__"][path]) - TAPESHIM_MISSING.get(path, set())
    assert not expected - names, f"tf.keras.{path} lacks TF's {sorted(expected - names)}"
    assert not names - expected - TAPESHIM_EXTRA.get(path, set()), (
        f"tf.keras.{path} has names TF's lacks: {sorted(names - expected)}"
    )


def test_every_backend_name_has_a_case(tf_backend_results):
    covered = {name[len("backend_") :].removesuffix("_error") for name in LEGACY_BACKEND_CASES}
    assert not set(tf_backend_results["__names__"]) - TAPESHIM_MISSING["backend"] - covered


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_matches_tensorflow(name, tf_backend_results):
    expected = tf_backend_results[name]
    if not name.endswith("_error"):
        assert "raised" not in expected, f"TF raised in a case that should not: {expected}"
    actual = run_case(ALL_CASES[name], tapeshim)
    assert_outcomes_match(expected, actual)


def test_training_call_under_a_tape_runs_its_forward_pass_once():
    """BatchNormalization/Dropout-style state updates: one forward pass per step (tapeshim only; the values are
    compared with TF's Keras in batchnorm_training_steps_under_tape and layer_counting_training_calls_under_tape)."""
    import jax
    import numpy as np

    tf = tapeshim
    forward_runs = []

    class Counting(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.seen = self.add_weight(shape=(), initializer="zeros", trainable=False, name="seen")
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones", name="w")

        def call(self, inputs, training=False):
            jax.debug.callback(lambda value: forward_runs.append(1), inputs)
            if training:
                self.seen.assign(self.seen + 1.0)
            return tf.keras.ops.matmul(inputs, self.w)

    model = tf.keras.Sequential(
        [tf.keras.Input((3,)), Counting(), tf.keras.layers.BatchNormalization(), tf.keras.layers.Dropout(0.5)]
    )
    x = np.ones((4, 3), np.float32)
    for step in range(3):
        forward_runs.clear()
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x, training=True) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        jax.effects_barrier()
        assert len(forward_runs) == 1, f"step {step}: {len(forward_runs)} forward passes"
        assert all(g is not None for g in grads)
        assert float(model.layers[0].seen.numpy()) == step + 1.0
