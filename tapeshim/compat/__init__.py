"""`tf.compat`: TF's string and dimension helpers, `tf.compat.v2` (tapeshim itself) and the TF 2 parts of `v1`.

tapeshim runs TF 2 programs only: `tf.compat.v1` has what TF 2 programs still call
(`enable_eager_execution`, `logging`, `set_random_seed`, ...); every other name raises an
AttributeError saying so.
"""

from __future__ import annotations

import codecs
import contextlib
import datetime
import numbers
import os
from typing import Any, Iterator

import numpy as np

import tapeshim as v2
from tapeshim.compat import v1

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)

_HORIZON = [datetime.date(2026, 1, 1)]


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes (text is encoded), as `tf.compat.as_bytes`.

    Raises:
      TypeError: neither bytes nor text.
    """
    encoding = codecs.lookup(encoding).name
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """`bytes_or_text` as text (bytes are decoded), as `tf.compat.as_text`.

    Raises:
      TypeError: neither bytes nor text.
    """
    encoding = codecs.lookup(encoding).name
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    """`value` as text: bytes decoded, anything else through `str`, as `tf.compat.as_str_any`."""
    if isinstance(value, bytes):
        return as_str(value, encoding=encoding)
    return str(value)


def path_to_str(path: Any) -> Any:
    """A path-like object as a string (other values unchanged), as `tf.compat.path_to_str`."""
    if hasattr(path, "__fspath__"):
        path = as_str_any(os.fspath(path))
    return path


def dimension_value(dimension: Any) -> int | None:
    """The int (or None) of a dimension, as `tf.compat.dimension_value`."""
    return getattr(dimension, "value", dimension)


def dimension_at_index(shape: Any, index: int) -> Any:
    """The dimension at `index` of a shape (None for an unknown rank), as `tf.compat.dimension_at_index`."""
    shape = v2.TensorShape(shape)
    if shape.rank is None:
        return None
    return shape[index]


def forward_compatible(year: int, month: int, day: int) -> bool:
    """Whether the forward compatibility horizon is past the date, as `tf.compat.forward_compatible`."""
    return _HORIZON[0] > datetime.date(year, month, day)


@contextlib.contextmanager
def forward_compatibility_horizon(year: int, month: int, day: int) -> Iterator[None]:
    """Moves the forward compatibility horizon inside the block, as `tf.compat.forward_compatibility_horizon`."""
    saved = _HORIZON[0]
    _HORIZON[0] = datetime.date(year, month, day)
    try:
        yield
    finally:
        _HORIZON[0] = saved


__all__ = [
    "as_bytes",
    "as_str",
    "as_str_any",
    "as_text",
    "bytes_or_text_types",
    "complex_types",
    "dimension_at_index",
    "dimension_value",
    "forward_compatibility_horizon",
    "forward_compatible",
    "integral_types",
    "path_to_str",
    "real_types",
    "v1",
    "v2",
]
