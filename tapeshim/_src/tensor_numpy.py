"""Python values as NumPy arrays, with TF's conversion rules and errors (`convert_to_tensor`'s first step)."""

from __future__ import annotations

import array as stdlib_array
import numbers
from typing import Any

import numpy as np

from tapeshim._src.dtypes import DType

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_OUT_OF_RANGE_FLOAT = "Can't convert Python sequence with a value out of range for a double-precision float."
_OUT_OF_RANGE_INT = "Can't convert Python sequence with out-of-range integer to Tensor."
_MIXED_TYPES = "Can't convert Python sequence with mixed types to Tensor."
_HALF_PRECISION = ("float16", "bfloat16")
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _first_leaf(value: Any) -> Any:
    """The first scalar (or numpy array) of a nested list; None for an empty one."""
    while isinstance(value, (list, tuple)):
        if not value:
            return None
        value = value[0]
    return value


def _numeric_numpy(value: np.ndarray | np.generic) -> np.ndarray:
    """A numpy value of a numeric dtype; strings and objects raise TF's ValueError (tapeshim has no strings)."""
    array = np.asarray(value)
    if array.dtype.kind not in "biufc" and array.dtype.name != "bfloat16":  # (ml_dtypes' bfloat16 is kind "V")
        kind = "string" if array.dtype.kind in "US" else array.flat[0].__class__.__name__ if array.size else "object"
        raise ValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported object type {kind}).")
    return array


_NOT_ARRAY_LIKE = (bool, int, float, complex, str, bytes, list, tuple, range, type(None), np.ndarray, np.generic)
_BUFFERS = (memoryview, bytearray, stdlib_array.array)


def _as_tf_reads(value: Any) -> Any:
    """`value` as TF's eager conversion reads it: an object with `__array__` (a `jax.Array`, a pandas
    `DataFrame`, a PyTorch tensor) or the array interface becomes a NumPy array (a NumPy array's dtype rules
    follow); a `bytearray`, `array.array` or `memoryview` becomes a list of Python numbers (bytes become
    int32, doubles float32); anything else is returned as it is."""
    if isinstance(value, _NOT_ARRAY_LIKE):
        return value
    if isinstance(value, _BUFFERS):
        try:
            return list(value)
        except (NotImplementedError, TypeError) as exc:  # a memoryview of more than one dimension, or none
            raise ValueError(f"Cannot infer dtype of a {type(value).__name__} object: {exc}") from None
    if callable(getattr(value, "__array__", None)) or isinstance(getattr(value, "__array_interface__", None), dict):
        return np.asarray(value)
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _python_numpy(value: Any) -> np.ndarray:
    """A Python scalar or nested list as numpy at Python's own precision (bool, int64, float64, complex128).

    Integers beyond int64 come back as uint64 or object arrays, for the caller
    to judge against the dtype it converts to.

    Raises:
      ValueError: for a ragged list, or one holding a value that is not a number.
    """
    if isinstance(value, bool):
        return np.asarray(value, np.bool_)
    if isinstance(value, float):
        return np.asarray(value, np.float64)
    if isinstance(value, numbers.Integral):
        number = int(value)
        return np.asarray(number, np.int64 if _INT64_MIN <= number <= _INT64_MAX else object)
    if isinstance(value, complex):
        return np.asarray(value, np.complex128)
    if isinstance(value, range):
        value = list(value)
    if isinstance(value, (list, tuple)):
        try:
            array = np.asarray(value)
        except (ValueError, OverflowError):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
        if array.dtype.kind in "fu" and _is_int(_first_leaf(value)):
            # numpy widens integers beyond int64 to uint64 or float64; keep them exact for the range check
            exact = np.asarray(value, dtype=object)
            if all(_is_int(v) for v in exact.flat):
                return exact
        if array.dtype.kind == "O" and not all(_is_int(v) for v in array.flat):
            raise ValueError(_MIXED_TYPES)  # None or another non-number among numbers
        if array.dtype.kind in "biufcO":
            return array
    raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) to a Tensor.")


def _check_integers(array: np.ndarray, target: np.dtype | None) -> np.ndarray:
    """Python integers must fit int64 (uint64 for a uint64 target), as TF requires; returns them as numpy."""
    if array.dtype.kind == "i":
        return array
    values = [int(v) for v in array.flat]  # uint64 or object: integers beyond int64
    if target is not None and target == np.uint64:
        if all(0 <= v < 2**64 for v in values):
            return np.asarray(values, np.uint64).reshape(array.shape)
    elif all(_INT64_MIN <= v <= _INT64_MAX for v in values):
        return np.asarray(values, np.int64).reshape(array.shape)
    raise ValueError(_OUT_OF_RANGE_INT)


def _check_sequence_types(value: Any, array: np.ndarray) -> None:
    """TF's rule for lists without a dtype: the first element's kind decides which others may follow."""
    first = _first_leaf(value)
    if isinstance(first, (bool, np.bool_)) and array.dtype.kind != "b":
        raise ValueError(_MIXED_TYPES)
    if array.dtype.kind == "c" and not isinstance(first, (complex, np.complexfloating)):
        raise ValueError(_MIXED_TYPES)


def default_numpy(value: Any) -> np.ndarray:
    """Converts a Python value to numpy with TF's default dtypes (float32, int32 or int64, complex128)."""
    value = _as_tf_reads(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return _numeric_numpy(value)
    array = _python_numpy(value)
    kind = array.dtype.kind
    if isinstance(value, (list, tuple)):
        if not array.size and kind == "f":
            return array.astype(np.float32)
        _check_sequence_types(value, array)
    if kind in "iuO":
        array = _check_integers(array, None)
        if not array.size:
            return array.astype(np.float32)
        fits = _INT32_MIN <= array.min() and array.max() <= _INT32_MAX
        return array.astype(np.int32) if fits else array
    if kind == "f":
        first = _first_leaf(value)
        if isinstance(first, (np.floating, np.ndarray)) and first.dtype.kind == "f":
            return array.astype(first.dtype)  # a list led by numpy floats keeps their precision, as in TF
        with np.errstate(over="ignore"):
            narrowed = array.astype(np.float32)
        if np.any(np.isinf(narrowed) & np.isfinite(array)):
            raise ValueError(_OUT_OF_RANGE_FLOAT)
        return narrowed
    return array


def _cannot_convert(value: Any, dtype: DType) -> TypeError:
    """TF's TypeError for a Python value that cannot take `dtype`."""
    return TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {_TF_TYPE_NAMES.get(dtype.name, dtype.name)}")


def numpy_as(value: Any, dtype: DType) -> np.ndarray:
    """Converts a Python or numpy value straight to `dtype` (no detour through float32), as TF does.

    Python floats keep their double precision up to the cast to `dtype` (half
    precision goes through float32, as TF's conversion does); integers must fit
    int64 and then wrap to narrower integer dtypes, as in TF.

    Raises:
      TypeError: for a lossy Python conversion (a float to an integer dtype, a
        complex to a real one, a number to bool).
      ValueError: for an integer out of int64's range or a ragged list.
    """
    target = dtype._np
    value = _as_tf_reads(value)
    if isinstance(value, (np.ndarray, np.generic)):
        if np.asarray(value).dtype.kind == "O":
            try:  # an object array of numbers converts to a requested dtype, as in TF
                return np.asarray(value).astype(target)
            except (TypeError, ValueError):
                pass
        with np.errstate(all="ignore"):
            return _numeric_numpy(value).astype(target)
    if isinstance(value, (str, bytes)):
        raise _cannot_convert(value, dtype)
    array = _python_numpy(value)
    kind = array.dtype.kind
    if kind == "O" and target.kind in "fc":
        array = array.astype(np.float64)  # huge Python integers to floating types
        kind = "f"
    lossy = array.size and (
        (kind == "f" and target.kind in "iub")
        or (kind == "c" and target.kind != "c")
        or (kind in "iufO" and target.kind == "b")
    )
    if lossy:
        raise _cannot_convert(value, dtype)
    if kind in "uO":
        array = _check_integers(array, target)
    with np.errstate(all="ignore"):
        if dtype.name in _HALF_PRECISION and kind == "f":
            array = array.astype(np.float32)
        return array.astype(target)
