"""Subnormal floats on the host interpreter's values (`tapeshim/_src/interpret_flush.py`), as XLA's CPU flushes
them: each subnormal becomes a zero of its sign, every other value keeps its bits (zeros and their signs,
infinities, NaNs), and an array without subnormals is returned as it is.

Large arrays with zeros or NaNs (a ReLU's output) are checked from their bits (`_any_subnormal`); these tests
compare that path with NumPy's own arithmetic on the same arrays.
"""

import numpy as np
import pytest

from tapeshim._src import interpret_flush

rng = np.random.default_rng(11)


def _flushed(array):
    """XLA's flush of `array`, from NumPy's arithmetic: the reference."""
    tiny = np.finfo(array.dtype).tiny
    magnitude = np.abs(array)
    return np.where((magnitude < tiny) & (magnitude > 0), np.copysign(array.dtype.type(0), array), array)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_array_with_zeros_is_flushed_only_where_it_holds_subnormals(dtype):
    tiny = np.finfo(dtype).tiny
    piece = interpret_flush.CHUNK_BYTES // np.dtype(dtype).itemsize
    relu = np.maximum(rng.normal(size=2 * piece + 777), 0).astype(dtype)  # half zeros
    relu[5] = -0.0
    relu[piece + 9] = np.nan
    relu[piece + 10] = -np.inf
    relu[piece + 11] = tiny  # the smallest normal: kept
    relu[piece + 12] = -tiny
    assert interpret_flush.flush_subnormals(relu) is relu, "no subnormal: the array itself"
    for position in (0, piece - 1, piece, 2 * piece, relu.size - 1):
        for value in (tiny / 4, -tiny / 4, np.nextafter(dtype(0), dtype(1)), -np.nextafter(tiny, dtype(0))):
            given = relu.copy()
            given[position] = value
            flushed = interpret_flush.flush_subnormals(given)
            assert flushed.tobytes() == _flushed(given).tobytes(), (position, value)
            assert flushed[position] == 0 and np.signbit(flushed[position]) == (value < 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_bits_flush_as_numpys_arithmetic_says(dtype):
    # Every class of float at once: random bit patterns (NaNs, infinities, zeros, subnormals, normals)
    unsigned = np.uint32 if dtype == np.float32 else np.uint64
    size = 3 * interpret_flush.CHUNK_BYTES // np.dtype(dtype).itemsize + 5
    bits = rng.integers(0, np.iinfo(unsigned).max, size=size, dtype=unsigned, endpoint=True)
    exponent_bits = 8 if dtype == np.float32 else 11
    mantissa_bits = 8 * np.dtype(dtype).itemsize - 1 - exponent_bits
    bits[::3] &= ~(unsigned((1 << exponent_bits) - 1) << unsigned(mantissa_bits))  # a third: zero exponents
    values = bits.view(dtype)
    assert interpret_flush.flush_subnormals(values.copy()).tobytes() == _flushed(values).tobytes()
    normal = np.where(np.abs(values) < np.finfo(dtype).tiny, dtype(0), values)
    assert interpret_flush.flush_subnormals(normal) is normal
