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


def test_training_on_new_lengths_does_not_warn_of_compiles(caplog):
    # Each new length is a new structure (its Keras calls are traced for it) that the host computes and XLA
    # never compiles: TF eager prints nothing here, and neither does tapeshim (it warned of "compiled" programs).
    import logging

    from keras_eager_cases import train_on_new_lengths

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        train_on_new_lengths(tapeshim, lengths=(53, 59, 61, 67, 71, 73, 79))
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]
