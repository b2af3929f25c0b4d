"""TF's warnings on the `tensorflow` logger (section 17), against real TensorFlow."""

import logging

import pytest

import tapeshim
from oracle import real_tf


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def tf_log():
    handler = _Collect()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    yield handler.messages
    logger.removeHandler(handler)


def _watch_ints(tf, n):
    x = tf.constant(1)
    v = tf.Variable(2)
    for _ in range(n):
        with tf.GradientTape() as t:
            t.watch(x)  # one call site
    with tf.GradientTape() as t:
        t.watch(v)  # another call site
        t.watch(tf.constant(1.0))
        t.watch(tf.constant(1.0, tf.bfloat16))


@pytest.mark.parametrize("module", [real_tf, tapeshim], ids=["tf", "tapeshim"])
def test_watched_int_warning_is_rate_limited_per_call_site(module, tf_log):
    _watch_ints(module, 7)
    warning = "The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.int32"
    int32 = [m for m in tf_log if m == warning]
    assert len(int32) == 6  # 5 from the loop's line, 1 from the variable's line
    assert len(tf_log) == 6


@pytest.mark.parametrize("module", [real_tf, tapeshim], ids=["tf", "tapeshim"])
def test_persistent_gradient_inside_context_warns_once_per_site(module, tf_log):
    tf = module
    x = tf.constant(1.0)
    for _ in range(3):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x
            t.gradient(y, x)
    found = [m for m in tf_log if m.startswith("Calling GradientTape.gradient on a persistent tape inside its context")]
    assert len(found) == 1
    assert "Only call GradientTape.gradient inside the context if you actually want to trace" in found[0]


@pytest.mark.parametrize("module", [real_tf, tapeshim], ids=["tf", "tapeshim"])
def test_int_primal_warning(module, tf_log):
    module.autodiff.ForwardAccumulator(module.constant(1), module.constant(1))
    assert tf_log == ["The dtype of the watched primal must be floating (e.g. tf.float32), got tf.int32"]


def test_get_logger_is_the_tensorflow_logger():
    assert tapeshim.get_logger() is logging.getLogger("tensorflow")
    assert real_tf.get_logger() is tapeshim.get_logger()


def test_stderr_format_without_tensorflow(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "warn.py"
    script.write_text("import tapeshim as tf\nx = tf.constant(1)\nwith tf.GradientTape() as t:\n    t.watch(x)\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (
        "WARNING:tensorflow:The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.int32"
        in result.stderr.splitlines()
    )
