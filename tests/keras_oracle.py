"""The Keras oracle: Keras test bodies run with TF's Keras in a child process, and with tapeshim here.

Keras chooses its backend once per process, so TF's Keras (TensorFlow backend)
and tapeshim's (JAX backend) cannot share one. Each body in `keras_cases.py`
is a function of the module (`def case_x(tf)`). `tf_results()` runs every body
once with `import tensorflow as tf` in a child process (KERAS_BACKEND=tensorflow)
and returns their descriptions; tests run the same body with tapeshim in the
test process and compare.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

_HERE = Path(__file__).parent


def describe(value: Any) -> Any:
    """A description of a result that is the same whichever module made it, and picklable."""
    if isinstance(value, dict):
        return {key: describe(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "numpy") or hasattr(value, "__array__"):
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        return ("array", array.dtype.name, array.shape, array)
    return ("object", type(value).__name__)


def run_case(body: Callable[[Any], Any], module: Any) -> dict:
    """Runs `body(module)`: its described result or error, and the UserWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = {"result": describe(body(module))}
        except Exception as exc:  # noqa: BLE001 - the error class is part of the comparison
            outcome = {"raised": type(exc).__name__, "message": str(exc)}
    outcome["warnings"] = [
        str(w.message)
        for w in caught
        if issubclass(w.category, UserWarning) and "Gradients do not exist" in str(w.message)
    ]
    return outcome


def assert_same(expected: Any, actual: Any, path: str = "result", rtol: float = 2e-5, atol: float = 2e-6) -> None:
    """Asserts two descriptions match: structure, dtype, shape, values."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), f"{path}: {actual!r} vs TF {expected!r}"
        for key in expected:
            assert_same(expected[key], actual[key], f"{path}[{key!r}]", rtol, atol)
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: {actual!r} vs TF {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{path}[{i}]", rtol, atol)
    elif isinstance(expected, tuple) and expected[0] == "array":
        assert isinstance(actual, tuple) and actual[0] == "array", f"{path}: {actual!r} vs TF {expected!r}"
        assert actual[1] == expected[1], f"{path}: dtype {actual[1]} vs TF {expected[1]}"
        assert actual[2] == expected[2], f"{path}: shape {actual[2]} vs TF {expected[2]}"
        if expected[3].dtype.kind in "fc":
            np.testing.assert_allclose(actual[3], expected[3], rtol=rtol, atol=atol, err_msg=path)
        else:
            np.testing.assert_array_equal(actual[3], expected[3], err_msg=path)
    elif isinstance(expected, float):
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=path)
    else:
        assert actual == expected, f"{path}: tapeshim {actual!r} vs TF {expected!r}"


def assert_outcomes_match(
    expected: dict, actual: dict, rtol: float = 2e-5, atol: float = 2e-6, message: bool = False
) -> None:
    """Compares two `run_case` outcomes: same error class (and message), or same result and warnings."""
    if "raised" in expected or "raised" in actual:
        assert expected.get("raised") == actual.get("raised"), f"TF: {expected}\ntapeshim: {actual}"
        if message:
            assert expected["message"] == actual["message"]
    else:
        assert_same(expected["result"], actual["result"], rtol=rtol, atol=atol)
    assert actual["warnings"] == expected["warnings"]


_cache: dict[str, dict] = {}


def tf_results(tmp_dir: Path) -> dict[str, dict]:
    """Every case of keras_cases.py run with TF's own Keras, in a child process (cached per session)."""
    if "tf" not in _cache:
        out = tmp_dir / "tf_keras_results.pkl"
        env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
        done = subprocess.run(
            [sys.executable, str(_HERE / "keras_cases.py"), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert done.returncode == 0, f"TF's Keras run failed:\n{done.stderr[-4000:]}"
        with open(out, "rb") as stream:
            _cache["tf"] = pickle.load(stream)
    return _cache["tf"]


def tf_keras_outcomes(script: str, out: Path) -> dict:
    """Runs `script` (a test file whose `__main__` pickles its cases' TF outcomes to `argv[1]`) with TF's Keras
    in a child process (KERAS_BACKEND=tensorflow), and returns those outcomes."""
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, script, str(out)], env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"TF's Keras run failed:\n{done.stderr[-4000:]}"
    with open(out, "rb") as stream:
        return pickle.load(stream)


def compile_counts(tapeshim: Any) -> dict:
    """tapeshim's programs compiled, function traces, eager kernels and per-op plan runs so far
    (`experimental.compile_stats`). The last makes a steady loop's count strict: a plan run per op in the loop
    could compile at a step its per-op time decides (`replay.compile_now`), a step that depends on the load."""
    stats = tapeshim.experimental.compile_stats()
    return {key: stats[key] for key in ("programs_compiled", "function_traces", "eager_kernels", "per_op_plans")}
