"""The `tensorflow` logger and TF's per-call-site rate limiting of warnings."""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter
from types import FrameType

_logger = logging.getLogger("tensorflow")
_counts: Counter = Counter()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_logger() -> logging.Logger:
    """Returns the `tensorflow` logger, with TF's stderr handler if it has none.

    As in TF, records print as `WARNING:tensorflow:<message>`.
    """
    if not _logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT, None))
        _logger.addHandler(handler)
    return _logger


def caller_site() -> tuple[str, int]:
    """The file and line of the first frame outside tapeshim (the user's call)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


def warn_first_n(message: str, n: int) -> None:
    """Logs `message` as a WARNING at most `n` times per user call site."""
    site = caller_site()
    _counts[site, message[:40]] += 1
    if _counts[site, message[:40]] <= n:
        get_logger().warning(message)
