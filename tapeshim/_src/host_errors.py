"""TF's errors for exceptions raised by Python functions run inside a compiled program (`tf.py_function`).

TF runs a `py_function`'s Python function as an op (`EagerPyFunc`), and an
exception it raises fails the op with the `tf.errors` class TF's kernel gives the
exception's type (`python/lib/core/py_func.cc`): `ValueError` and `TypeError`
(and their subclasses) give `InvalidArgumentError`, `StopIteration`
`OutOfRangeError`, `MemoryError` `ResourceExhaustedError`, `NotImplementedError`
`UnimplementedError`, anything else (a `tf.errors` class included) `UnknownError`.
The message holds the exception's type, message and traceback.

Inside a compiled program the function runs in a host callback: the callback
keeps the converted error here (`fail`) and raises it, XLA stops the program and
JAX raises its own `JaxRuntimeError`; where a program is run (a function's call,
a tape's replay) `raise_pending` swaps that for the kept `tf.errors` class.
"""

from __future__ import annotations

import threading
import traceback
from types import TracebackType
from typing import NoReturn

from tapeshim._src import errors

_CLASSES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], type[errors.OpError]], ...] = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    (StopIteration, errors.OutOfRangeError),
    (MemoryError, errors.ResourceExhaustedError),
    (NotImplementedError, errors.UnimplementedError),
)

EAGER_SUFFIX = " [Op:EagerPyFunc]"
"""The end of an eager `py_function`'s error message, as TF's."""
GRAPH_SUFFIX = "\n\t [[{{node EagerPyFunc}}]]"
"""The end of the message of a `py_function` that failed inside a function, as TF's."""

_lock = threading.Lock()
_pending: list[errors.OpError] = []


def tf_error(exc: Exception, suffix: str, skip_frames: int = 1) -> errors.OpError:
    """The `tf.errors` error TF raises for `exc`, raised by a `py_function`'s Python function.

    Args:
      exc: what the Python function raised.
      suffix: the end of the message (`EAGER_SUFFIX` or `GRAPH_SUFFIX`).
      skip_frames: the traceback's first frames to leave out (the caller's own).

    Returns:
      The error, with `exc` as its `__cause__`.
    """
    error_class = next((c for kinds, c in _CLASSES if isinstance(exc, kinds)), errors.UnknownError)
    tb: TracebackType | None = exc.__traceback__
    for _ in range(skip_frames):
        tb = tb.tb_next if tb is not None else None
    text = f"{type(exc).__name__}: {exc}"
    frames = "\n".join(line.rstrip("\n") for line in traceback.format_tb(tb))
    error = error_class(None, None, f"{text}\nTraceback (most recent call last):\n\n{frames}\n\n{text}\n{suffix}")
    error.__cause__ = exc
    return error


def fail(error: errors.OpError) -> NoReturn:
    """Keeps `error` for `raise_pending` and raises it (inside a host callback: XLA stops the program)."""
    with _lock:
        _pending.append(error)
    raise error


def take_pending() -> errors.OpError | None:
    """The first error a host callback kept since the last call (None: none), forgetting all of them."""
    with _lock:
        first = _pending[0] if _pending else None
        _pending.clear()
    return first


def raise_pending() -> None:
    """Raises the `tf.errors` error a host callback kept, in place of the `JaxRuntimeError` it made JAX raise;
    returns where no callback kept one (the caller then re-raises JAX's error)."""
    error = take_pending()
    if error is not None:
        raise error from error.__cause__
