"""TF's warning when a `tf.function` retraces on most of its recent calls.

As TF, each Python function (keyed by its code object, so a `tf.function` made
again in a loop shares the count) keeps how many calls ran since each of its
recent traces. When at least 5 of the last calls (at most 10 calls kept) traced,
TF's warning is logged to the `tensorflow` logger, at most twice per function.
"""

from __future__ import annotations

import functools
import threading
import types
import weakref
from typing import Any, Callable

from tapeshim._src.tf_logging import get_logger

_MAX_CALL_HISTORY = 10
_THRESHOLD = 5
_MAX_WARNINGS = 2

_MESSAGE = (
    "{} out of the last {} calls to {} triggered tf.function retracing. Tracing is expensive and the excessive "
    "number of tracings could be due to (1) creating @tf.function repeatedly in a loop, (2) passing tensors with "
    "different shapes, (3) passing Python objects instead of tensors. For (1), please define your @tf.function "
    "outside of the loop. For (2), @tf.function has reduce_retracing=True option that can avoid unnecessary "
    "retracing. For (3), please refer to https://www.tensorflow.org/guide/function#controlling_retracing and "
    "https://www.tensorflow.org/api_docs/python/tf/function for  more details."
)


class RetracingDetector:
    """The recent calls of one Python function: how many calls followed each trace."""

    __slots__ = ("_calls_per_trace", "_calls", "_warnings", "__weakref__")

    def __init__(self) -> None:
        self._calls_per_trace: list[int] = []
        self._calls = 0
        self._warnings = 0

    def called_without_tracing(self) -> None:
        """Counts a call that ran an existing trace."""
        if not self._calls_per_trace:
            self._calls_per_trace = [0]  # get_concrete_function traced without a call
        self._calls_per_trace[-1] += 1
        self._calls += 1

    def called_with_tracing(self, function_text: str) -> None:
        """Counts a call that traced; warns when most recent calls did."""
        self._calls += 1
        self._calls_per_trace.append(1)
        while self._calls_per_trace and self._calls - self._calls_per_trace[0] > _MAX_CALL_HISTORY:
            self._calls -= self._calls_per_trace.pop(0)
        if self._warnings >= _MAX_WARNINGS or len(self._calls_per_trace) < _THRESHOLD:
            return
        self._warnings += 1
        get_logger().warning(_MESSAGE.format(len(self._calls_per_trace), self._calls, function_text))


_detectors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _target(python_function: Callable) -> Any:
    """What calls are counted by: the function's code object where it has one, as TF."""
    target = python_function
    if isinstance(target, functools.partial):  # a method bound by Function.__get__
        target = target.func
    while hasattr(target, "__wrapped__"):
        target = target.__wrapped__
    target = getattr(target, "__func__", target)
    return getattr(target, "__code__", python_function)


def detector_for(python_function: Callable) -> RetracingDetector:
    """The detector shared by every `tapeshim.function` of this Python function."""
    key = _target(python_function)
    with _lock:
        try:
            detector = _detectors.get(key)
        except TypeError:  # not weakly referenceable: one detector of its own
            return RetracingDetector()
        if detector is None:
            detector = _detectors[key] = RetracingDetector()
        return detector


def function_text(python_function: Callable) -> str:
    """The function as TF's warning names it (`<function f at 0x...>`, `<bound method ...>`)."""
    if (
        isinstance(python_function, functools.partial)
        and len(python_function.args) == 1
        and not python_function.keywords
    ):
        return str(types.MethodType(python_function.func, python_function.args[0]))
    return str(python_function)
