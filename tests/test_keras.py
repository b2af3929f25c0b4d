"""tf.keras (real Keras 3 on JAX) against TF's own Keras, which runs in a child process (keras_oracle.py)."""

import pytest
from keras_cases import all_cases
from keras_oracle import assert_outcomes_match, run_case, tf_results

import tapeshim

MESSAGES = {"spec_k4_all_none_raises", "compute_loss_without_a_loss"}


@pytest.fixture(scope="session")
def tf_keras(tmp_path_factory):
    return tf_results(tmp_path_factory.mktemp("tf_keras"))


CASES = all_cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_keras_case_matches_tensorflow(name, tf_keras):
    expected = tf_keras[name]
    actual = run_case(CASES[name], tapeshim)
    assert_outcomes_match(expected, actual, message=name in MESSAGES)
