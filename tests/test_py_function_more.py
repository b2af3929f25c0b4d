"""tf.py_function / tf.numpy_function against TF: errors, Keras layers, vectorized_map, when the function runs.

* An exception the Python function raises is the `tf.errors` class TF gives its type
  (`ValueError`/`TypeError` -> `InvalidArgumentError`, `StopIteration` ->
  `OutOfRangeError`, ...), eagerly (`py_function`; `numpy_function` re-raises it as
  it is) and inside a `tf.function`, on the call that traces and on later calls.
* A `py_function` without results in a Keras layer's `call` runs when TF's runs it
  (the bodies are `py_function_keras_cases.CASES`, run with TF's Keras in a child process).
* `tf.vectorized_map` over a function that calls one gives TF's values and runs it as
  often as TF's while-loop fallback does.
* How often and with which values the Python function runs inside a function.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from keras_oracle import assert_outcomes_match, run_case
from py_function_keras_cases import CASES as KERAS_CASES

import tapeshim
from oracle import check, check_raises

_HERE = Path(__file__).parent
EXCEPTIONS = {
    "value_error": lambda: ValueError("bad value"),
    "type_error": lambda: TypeError("bad type"),
    "unicode_error": lambda: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    "stop_iteration": lambda: StopIteration("no more"),
    "memory_error": lambda: MemoryError("no memory"),
    "not_implemented": lambda: NotImplementedError("not yet"),
    "key_error": lambda: KeyError("k"),
    "runtime_error": lambda: RuntimeError("broken"),
    "zero_division": lambda: ZeroDivisionError("zero"),
}


def _raiser(make_exception):
    def func(*args):
        raise make_exception()

    return func


def _failing_body(make_exception, kind: str, where: str):
    def body(tf):
        func = _raiser(make_exception)

        def op(x):
            if kind == "py":
                return tf.py_function(func, [x], tf.float32)
            if kind == "np":
                return tf.numpy_function(func, [x], tf.float32)
            tf.py_function(func, [x], [])
            return x

        if where == "eager":
            return op(tf.constant(1.0))
        return tf.function(op)(tf.constant(1.0))

    return body


@pytest.mark.parametrize("where", ["eager", "function"])
@pytest.mark.parametrize("kind", ["py", "np", "py_no_results"])
@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_an_exception_of_the_python_function_is_tfs_error_class(name, kind, where):
    raised = check_raises(_failing_body(EXCEPTIONS[name], kind, where))
    if isinstance(raised.exc, tapeshim.errors.OpError):  # the original type and message are in TF's message
        assert raised.message.startswith(f"{type(EXCEPTIONS[name]()).__name__}: ")
        assert str(EXCEPTIONS[name]()) in raised.message


def test_a_tf_error_raised_by_the_python_function_is_unknown_error():
    def body(tf):
        def func(x):
            raise tf.errors.InvalidArgumentError(None, None, "inner")

        return tf.function(lambda x: tf.py_function(func, [x], tf.float32))(tf.constant(1.0))

    check_raises(body)


def _later_call_fails_body(kind: str):
    def body(tf):
        def func(x):
            if float(x) > 1.0:
                raise ValueError(f"too big: {float(x)}")
            return x * 2.0

        if kind == "py":
            f = tf.function(lambda x: tf.py_function(func, [x], tf.float32))
        elif kind == "np":
            f = tf.function(lambda x: tf.numpy_function(lambda v: np.float32(func(tf.constant(v))), [x], tf.float32))
        else:
            f = tf.function(lambda x: (tf.py_function(lambda v: func(v) and None, [x], []), x + 1.0)[1])
        results = [f(tf.constant(1.0))]
        try:
            f(tf.constant(2.0))
        except Exception as exc:  # noqa: BLE001 - the class is compared
            results.append(type(exc).__name__)
            results.append("too big: 2.0" in str(exc))
        results.append(f(tf.constant(0.5)))  # the function still runs after a failed call
        return results

    return body


@pytest.mark.parametrize("kind", ["py", "np", "py_no_results"])
def test_a_later_call_that_fails_raises_tfs_error_and_the_next_call_runs(kind):
    check(_later_call_fails_body(kind))


def test_a_failure_under_a_tape_is_tfs_error():
    def body(tf):
        def func(x):
            raise StopIteration("done")

        f = tf.function(lambda x: tf.py_function(func, [x], tf.float32) + x)
        x = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            y = f(x)
        return tape.gradient(y, x)

    check_raises(body)


# -- Keras: a py_function without results in a layer's call --------------------------------------
_CHILD = """
import pickle, sys
sys.path.insert(0, {here!r})
import tensorflow as tf
from keras_oracle import run_case
from py_function_keras_cases import CASES
with open(sys.argv[1], "wb") as stream:
    pickle.dump({{name: run_case(body, tf) for name, body in CASES.items()}}, stream)
"""


@pytest.fixture(scope="module")
def tf_keras_outcomes(tmp_path_factory):
    out = tmp_path_factory.mktemp("tf_keras_py_function") / "results.pkl"
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(here=str(_HERE)), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"TF's Keras run failed:\n{done.stderr[-4000:]}"
    with open(out, "rb") as stream:
        return pickle.load(stream)


@pytest.mark.parametrize("name", sorted(KERAS_CASES))
def test_keras_layer_with_a_py_function_without_results(name, tf_keras_outcomes):
    expected = tf_keras_outcomes[name]
    assert "raised" not in expected, f"TF raised: {expected}"
    assert_outcomes_match(expected, run_case(KERAS_CASES[name], tapeshim), rtol=1e-4, atol=1e-4)


# -- tf.vectorized_map ------------------------------------------------------------------------------
ELEMS = np.arange(6, dtype=np.float32).reshape(3, 2)


def _vectorized_body(kind: str, in_function: bool):
    def body(tf):
        calls = []

        def on_tensor(t):
            calls.append(t.numpy().tolist())
            return t * 2.0 + 1.0

        def on_array(a):
            calls.append(np.asarray(a).tolist())
            return (a * 3.0).astype(np.float32)

        fns = {
            "py": lambda e: tf.py_function(on_tensor, [e], tf.float32),
            "np": lambda e: tf.numpy_function(on_array, [e], tf.float32),
            "py_and_ops": lambda e: tf.py_function(on_tensor, [e], tf.float32) * tf.reduce_sum(e) + 1.0,
            "py_no_results": lambda e: (tf.py_function(lambda t: calls.append(t.numpy().tolist()), [e], []), e * 2)[1],
            "np_stateless": lambda e: tf.numpy_function(on_array, [e], tf.float32, stateful=False),
            "structure": lambda e: {"a": tf.py_function(on_tensor, [e["x"]], tf.float32), "b": e["y"] + 1},
        }
        elems = {"x": ELEMS, "y": ELEMS[:, 0]} if kind == "structure" else ELEMS
        elems = tf.nest.map_structure(tf.constant, elems)
        run = lambda elems: tf.vectorized_map(fns[kind], elems)  # noqa: E731
        result = tf.function(run)(elems) if in_function else run(elems)
        return result, sorted(calls) if kind == "np_stateless" else calls  # (a stateless one: in any order)

    return body


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("kind", ["py", "np", "py_and_ops", "py_no_results", "np_stateless", "structure"])
def test_vectorized_map_of_a_host_function(kind, in_function):
    check(_vectorized_body(kind, in_function))


def test_vectorized_map_with_tf_print_prints_as_tf(capfd):
    from oracle import check_printed

    check_printed(lambda tf: tf.vectorized_map(lambda e: (tf.print("row", e), e * 2)[1], tf.constant(ELEMS)), capfd)


# -- when the Python function runs inside a function -------------------------------------------------
def test_runs_once_per_call_with_each_calls_values():
    def body(tf):
        calls = []

        def func(x):
            calls.append(float(x))
            return x * 10.0

        f = tf.function(lambda x: tf.py_function(func, [x * 2.0], tf.float32))
        return [f(tf.constant(v)) for v in (1.0, 2.0, 2.0, 3.0)], calls

    check(body)


def test_no_results_in_an_untaken_branch_never_runs():
    def body(tf):
        calls = []

        @tf.function
        def f(x):
            return tf.cond(
                x > 0, lambda: (tf.py_function(lambda: calls.append("ran"), [], []), x + 1)[1], lambda: x - 1
            )

        return f(tf.constant(-1.0)), list(calls), f(tf.constant(1.0)), calls

    check(body)
