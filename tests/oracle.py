"""The differential harness: run one test body with TensorFlow and with tapeshim, compare.

A body is a function of the module (`lambda tf: ...`). `check(body)` runs it
with real TensorFlow (the oracle) and with tapeshim and compares what came out:
structure, `None` pattern, tensor dtype, shape and values (per-dtype
tolerance), or the error class (and optionally message) when the body raises.
"""

from __future__ import annotations

import os
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# TF 2.21's oneDNN kernels (on by default on AVX-512 CPUs) abort the process on some bad inputs
# (a rank-3 conv2d fails a CHECK instead of raising InvalidArgumentError); the oracle uses TF's
# portable kernels, which raise the errors TF documents.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as real_tf  # noqa: E402  (the oracle: a missing TF fails the run)

import tapeshim  # noqa: E402

MODULES = (real_tf, tapeshim)
TOLERANCE = {
    "float16": 2e-3,
    "bfloat16": 2e-2,
    "float32": 2e-5,
    "float64": 1e-10,
    "complex64": 2e-5,
    "complex128": 1e-10,
}


class Raised:
    """What a body raised: its class name, message and the exception."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.name = type(exc).__name__
        self.message = str(exc)

    def __repr__(self) -> str:
        return f"Raised({self.name}: {self.message[:200]})"


def run(body: Callable[[Any], Any], module: Any) -> Any:
    try:
        return body(module)
    except Exception as exc:  # noqa: BLE001 - every exception is part of the comparison
        return Raised(exc)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, (real_tf.Tensor, real_tf.Variable, tapeshim.Tensor, tapeshim.Variable))


def describe(value: Any) -> Any:
    """A module-independent description of a result, for comparison."""
    if isinstance(value, Raised):
        return value
    if _is_tensor(value):
        array = np.asarray(value.numpy())
        return ("tensor", value.dtype.name, tuple(array.shape), array)
    if isinstance(value, (real_tf.IndexedSlices, tapeshim.IndexedSlices)):
        return ("IndexedSlices", [describe(value.values), describe(value.indices)])
    if isinstance(value, dict):
        return (type(value).__name__, [(k, describe(v)) for k, v in value.items()])
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, [describe(v) for v in value])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [describe(v) for v in value])
    if isinstance(value, (real_tf.TensorSpec, tapeshim.TensorSpec)):
        return ("TensorSpec", value.shape.as_list() if value.shape.rank is not None else None, value.dtype.name)
    if isinstance(value, (real_tf.DType, tapeshim.DType)):
        return ("dtype", value.name)
    if isinstance(value, (real_tf.TensorShape, tapeshim.TensorShape)):
        return ("shape", None if value.rank is None else tuple(value.as_list()))
    if isinstance(value, np.generic):
        return ("numpy", value.dtype.name, value.item())
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.name, value.shape, value)
    return value


def assert_same(
    expected: Any, actual: Any, path: str = "result", rtol: float | None = None, messages: bool = False
) -> None:
    """Asserts two descriptions match (expected from TF, actual from tapeshim)."""
    if isinstance(expected, Raised) or isinstance(actual, Raised):
        assert isinstance(expected, Raised) and isinstance(actual, Raised), (
            f"{path}: TF gave {expected!r}, tapeshim gave {actual!r}"
        )
        assert expected.name == actual.name, f"{path}: TF raised {expected!r}, tapeshim raised {actual!r}"
        if messages:
            assert expected.message == actual.message, (
                f"{path}: messages differ:\nTF:       {expected.message!r}\ntapeshim: {actual.message!r}"
            )
        return
    if isinstance(expected, tuple) and expected and expected[0] in ("tensor", "ndarray"):
        assert isinstance(actual, tuple) and actual and actual[0] == expected[0], (
            f"{path}: TF gave a {expected[0]}, tapeshim gave {actual!r}"
        )
        _, dtype, shape, values = expected
        assert actual[1] == dtype, f"{path}: dtype {actual[1]} != TF's {dtype}"
        assert actual[2] == shape, f"{path}: shape {actual[2]} != TF's {shape}"
        tol = rtol if rtol is not None else TOLERANCE.get(dtype, 0)
        if tol:
            np.testing.assert_allclose(
                np.asarray(actual[3], np.complex128 if "complex" in dtype else np.float64),
                np.asarray(values, np.complex128 if "complex" in dtype else np.float64),
                rtol=tol,
                atol=tol,
                equal_nan=True,
                err_msg=path,
            )
        else:
            np.testing.assert_array_equal(actual[3], values, err_msg=path)
        return
    if isinstance(expected, tuple) and len(expected) == 2 and isinstance(expected[1], list):
        assert isinstance(actual, tuple) and len(actual) == 2 and actual[0] == expected[0], (
            f"{path}: TF gave a {expected[0]}, tapeshim gave {actual!r}"
        )
        assert len(actual[1]) == len(expected[1]), f"{path}: lengths differ: {actual[1]!r} vs TF {expected[1]!r}"
        for i, (e, a) in enumerate(zip(expected[1], actual[1])):
            if isinstance(e, tuple) and len(e) == 2 and expected[0] in ("dict", "OrderedDict"):
                assert e[0] == a[0], f"{path}: keys differ: {a[0]!r} vs TF {e[0]!r}"
                assert_same(e[1], a[1], f"{path}[{e[0]!r}]", rtol, messages)
            else:
                assert_same(e, a, f"{path}[{i}]", rtol, messages)
        return
    if isinstance(expected, float) and isinstance(actual, float):
        np.testing.assert_allclose(actual, expected, rtol=rtol or 1e-6, err_msg=path)
        return
    assert expected == actual, f"{path}: tapeshim gave {actual!r}, TF gave {expected!r}"


def check(body: Callable[[Any], Any], rtol: float | None = None, messages: bool = False) -> Any:
    """Runs `body` with TF and tapeshim, asserts the results match; returns tapeshim's."""
    expected = run(body, real_tf)
    actual = run(body, tapeshim)
    assert_same(describe(expected), describe(actual), rtol=rtol, messages=messages)
    return actual


def check_raises(body: Callable[[Any], Any], messages: bool = False) -> Raised:
    """Like `check`, and asserts that TF raised."""
    expected = run(body, real_tf)
    assert isinstance(expected, Raised), f"TF did not raise: {expected!r}"
    actual = run(body, tapeshim)
    assert_same(expected, actual, messages=messages)
    return actual
