"""`tf.compat.v1.logging`: TF 1's logging functions on the `tensorflow` logger."""

import logging as _logging
from collections import Counter as _Counter
from typing import Any

from tapeshim._src.tf_logging import caller_site as _caller_site
from tapeshim._src.tf_logging import get_logger as _get_logger

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_counts: _Counter = _Counter()


def set_verbosity(v: int) -> None:
    """Sets the `tensorflow` logger's level."""
    _get_logger().setLevel(v)


def get_verbosity() -> int:
    """The `tensorflow` logger's effective level."""
    return _get_logger().getEffectiveLevel()


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs `msg % args` at `level`."""
    _get_logger().log(level, msg, *args, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at DEBUG."""
    log(DEBUG, msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at INFO."""
    log(INFO, msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at WARNING."""
    log(WARN, msg, *args, **kwargs)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at ERROR."""
    log(ERROR, msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at FATAL (CRITICAL)."""
    log(FATAL, msg, *args, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at `level` (TF's verbose logging)."""
    log(level, msg, *args, **kwargs)


def flush() -> None:
    """Flushes the logger's handlers."""
    for handler in _get_logger().handlers:
        handler.flush()


def log_if(level: int, msg: Any, condition: Any, *args: Any) -> None:
    """Logs when `condition` holds."""
    if condition:
        log(level, msg, *args)


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs on the first call from a call site and every `n`-th call after it."""
    site = _caller_site()
    count = _counts[site]
    _counts[site] += 1
    log_if(level, msg, count % n == 0, *args)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs on the first `n` calls from a call site."""
    site = _caller_site()
    count = _counts[site]
    _counts[site] += 1
    log_if(level, msg, count < n, *args)


def TaskLevelStatusMessage(msg: Any) -> None:  # noqa: N802 - TF's name
    """Logs `msg` at ERROR, as TF does."""
    error(msg)


__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "TaskLevelStatusMessage",
    "WARN",
    "debug",
    "error",
    "fatal",
    "flush",
    "get_verbosity",
    "info",
    "log",
    "log_every_n",
    "log_first_n",
    "log_if",
    "set_verbosity",
    "vlog",
    "warn",
    "warning",
]
