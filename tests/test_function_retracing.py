"""Retracing of `tapeshim.function` against `tf.function`: TF's frequent-retracing warning (its text and
how often it is logged), the cost of a retrace (a retrace that records the same program reuses its
compiled executable), and `as_jaxpr`, the program a call runs."""

import logging
import re

import jax
import numpy as np
import pytest

import tapeshim
from oracle import backend_compiles, check


class _Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "triggered tf.function retracing" in record.getMessage():
            self.messages.append(re.sub(r" at 0x[0-9a-f]+", " at 0x?", record.getMessage()))


def _warnings_of(run):
    """Runs `run()`, returning its value and the retracing warnings logged meanwhile."""
    handler = _Captured()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    try:
        return run(), handler.messages
    finally:
        logger.removeHandler(handler)


def test_retracing_on_a_changing_python_float_warns_twice_with_tf_text():
    def body(tf):
        @tf.function
        def scaled(x, scale):
            return x * scale

        def run():
            return [scaled(tf.constant(1.0), float(i)) for i in range(12)]

        values, messages = _warnings_of(run)
        return values, messages, scaled.experimental_get_tracing_count()

    check(body)


def test_warning_counts_recent_calls_without_tracing_too():
    def body(tf):
        @tf.function
        def scaled(x, scale):
            return x * scale

        def run():
            for i in range(8):
                scaled(tf.constant(1.0), float(i))  # traces
                scaled(tf.constant(2.0), float(i))  # same signature: no trace

        _, messages = _warnings_of(run)
        return messages

    check(body)


def test_a_function_made_again_in_a_loop_shares_the_count():
    def body(tf):
        def plus_one(x):
            return x + 1.0

        def run():
            for _ in range(7):
                tf.function(plus_one)(tf.constant(1.0))
            for _ in range(7):
                tf.function(lambda x: x * 2.0)(tf.constant(1.0))

        _, messages = _warnings_of(run)
        return [m.split(" triggered")[0] for m in messages]

    check(body)


def test_no_warning_for_shapes_an_input_signature_covers_or_few_retraces():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def total(x):
            return tf.reduce_sum(x)

        @tf.function
        def scaled(x, scale):
            return x * scale

        def run():
            for n in range(1, 9):
                total(tf.ones([n]))
            for i in range(4):
                scaled(tf.constant(1.0), float(i))
            for _ in range(4):
                scaled(tf.constant(2.0), 3.0)

        _, messages = _warnings_of(run)
        return messages, total.experimental_get_tracing_count()

    check(body)


def test_a_retrace_with_another_python_float_compiles_nothing_new():
    compiles = backend_compiles()

    @tapeshim.function
    def step(x, scale):
        return tapeshim.reduce_sum(tapeshim.tanh(x * scale) + 1.0)

    x = tapeshim.ones([3, 4])
    step(x, 0.5)  # traced; computed on the host (interpret.py)
    first = step(x, 0.5).numpy()  # compiled
    before = len(compiles)
    values = [step(x, 0.5 + i).numpy() for i in range(1, 6)]
    assert len(compiles) == before
    assert step.experimental_get_tracing_count() == 6
    np.testing.assert_allclose(
        [first] + values, [np.sum(np.tanh(np.ones((3, 4)) * (0.5 + i)) + 1) for i in range(6)], rtol=1e-6
    )


def test_as_jaxpr_is_the_program_a_call_runs():
    v = tapeshim.Variable(2.0)

    @tapeshim.function
    def f(x, s):
        v.assign_add(1.0)
        return tapeshim.reduce_sum(x * s + v)

    x = tapeshim.ones([2, 2])
    jaxpr = f.as_jaxpr(x, 3.0)
    assert f.experimental_get_tracing_count() == 1  # traced by as_jaxpr, as get_concrete_function would
    assert v.numpy() == 2.0  # nothing ran
    assert [tuple(a.aval.shape) for a in jaxpr.jaxpr.invars] == [(2, 2), (), (), ()]
    assert [tuple(a.aval.shape) for a in jaxpr.jaxpr.outvars] == [(), ()]  # the output, the new value of v
    (result, new_v) = jax.core.eval_jaxpr(
        jaxpr.jaxpr, jaxpr.consts, np.ones((2, 2), np.float32), np.float32(2.0), np.float32(1.0), np.float32(3.0)
    )
    assert float(new_v) == 3.0
    assert float(result) == float(f(x, 3.0)) == 24.0
    assert f.experimental_get_tracing_count() == 1
    assert "reduce_sum" in str(f.as_jaxpr(x, 3.0))


def test_as_jaxpr_of_a_function_with_an_input_signature_checks_the_arguments():
    @tapeshim.function(input_signature=[tapeshim.TensorSpec([None], tapeshim.float32)])
    def f(x):
        return x * 2.0

    invars = f.as_jaxpr(tapeshim.ones([5])).jaxpr.invars
    assert [tuple(a.aval.shape) for a in invars] == [(5,), ()]  # x, the captured constant 2.0
    with pytest.raises(TypeError):
        f.as_jaxpr(tapeshim.ones([2, 2]))
