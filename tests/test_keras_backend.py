"""tf.keras.backend (TF's legacy backend) and Keras optimizer/layer fixes, against TF's own Keras.

The bodies (`keras_backend_cases.LEGACY_BACKEND_CASES`, one per backend name, and
`keras_cases.BACKEND_CASES`) run with TF's Keras in a child process
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
from keras_backend_cases import LEGACY_BACKEND_CASES
from keras_cases import BACKEND_CASES
from keras_oracle import assert_outcomes_match, run_case

import tapeshim

_HERE = Path(__file__).parent
ALL_CASES = {**LEGACY_BACKEND_CASES, **BACKEND_CASES}
_CHILD = """
import pickle, sys
sys.path.insert(0, {here!r})
import tensorflow as tf
from keras_backend_cases import LEGACY_BACKEND_CASES
from keras_cases import BACKEND_CASES
from keras_oracle import run_case
cases = {{**LEGACY_BACKEND_CASES, **BACKEND_CASES}}
outcomes = {{name: run_case(body, tf) for name, body in cases.items()}}
outcomes["__names__"] = sorted(n for n in dir(tf.keras.backend) if not n.startswith("_"))
with open(sys.argv[1], "wb") as stream:
    pickle.dump(outcomes, stream)
"""


@pytest.fixture(scope="session")
def tf_backend_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("tf_keras_backend") / "results.pkl"
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "-c", _CHILD.format(here=str(_HERE)), str(out)], env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"TF's Keras run failed:\n{done.stderr[-4000:]}"
    with open(out, "rb") as stream:
        return pickle.load(stream)


def test_backend_has_tfs_names_and_no_others(tf_backend_results):
    names = sorted(n for n in dir(tapeshim.keras.backend) if not n.startswith("_"))
    assert names == tf_backend_results["__names__"]
    assert sorted(tapeshim.keras.backend.__all__) == tf_backend_results["__names__"]


def test_every_backend_name_has_a_case(tf_backend_results):
    covered = {name[len("backend_"):].removesuffix("_error") for name in LEGACY_BACKEND_CASES}
    assert not set(tf_backend_results["__names__"]) - covered


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_matches_tensorflow(name, tf_backend_results):
    expected = tf_backend_results[name]
    if not name.endswith("_error"):
        assert "raised" not in expected, f"TF raised in a case that should not: {expected}"
    actual = run_case(ALL_CASES[name], tapeshim)
    assert_outcomes_match(expected, actual)
