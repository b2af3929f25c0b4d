"""tf.keras (real Keras 3 on JAX) against TF's own Keras, which runs in a child process (keras_oracle.py)."""

import pytest
from keras_cases import CASES
from keras_oracle import assert_outcomes_match, run_case, tf_results

import tapeshim

# Tolerances: float32 training over several steps accumulates rounding that differs between TF's
# kernels and XLA's; single evaluations are compared tightly.
LOOSE = {"fit_arrays", "fit_dataset_with_validation_and_early_stopping", "eager_custom_loop_matches",
         "training_step_in_function", "train_on_batch_values", "optimizer_keras_variables_and_schedule"}
MESSAGES = {"spec_k4_all_none_raises"}


@pytest.fixture(scope="session")
def tf_keras(tmp_path_factory):
    return tf_results(tmp_path_factory.mktemp("tf_keras"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_keras_case_matches_tensorflow(name, tf_keras):
    expected = tf_keras[name]
    actual = run_case(CASES[name], tapeshim)
    tol = 2e-4 if name in LOOSE else 2e-5
    assert_outcomes_match(expected, actual, rtol=tol, atol=tol / 10, message=name in MESSAGES)
