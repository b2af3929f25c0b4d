"""`tf.strings.to_hash_bucket_fast`: TF's Fingerprint64 (FarmHash's `farmhashna::Hash64`) modulo the buckets.

A pure-Python implementation of the published FarmHash Fingerprint64 algorithm
(MIT licensed, by Geoff Pike), written here from its description; its values
equal TF's, checked by the tests against real TF.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from tapeshim._src.strings_tensor import as_string_tensor
from tapeshim._src.tensor import Tensor, constant

_MASK = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _u64(data: bytes, at: int) -> int:
    return struct.unpack_from("<Q", data, at)[0]


def _u32(data: bytes, at: int) -> int:
    return struct.unpack_from("<I", data, at)[0]


def _ror(value: int, shift: int) -> int:
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _smix(value: int) -> int:
    return value ^ (value >> 47)


def _mix16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _short(s: bytes, n: int) -> int:
    if n >= 8:
        mul = _K2 + n * 2
        a = (_u64(s, 0) + _K2) & _MASK
        b = _u64(s, n - 8)
        c = (_ror(b, 37) * mul + a) & _MASK
        d = ((_ror(a, 25) + b) * mul) & _MASK
        return _mix16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _mix16((n + (_u32(s, 0) << 3)) & _MASK, _u32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_smix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _medium(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K1) & _MASK
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _MASK
    d = (_u64(s, n - 16) * _K2) & _MASK
    return _mix16((_ror((a + b) & _MASK, 43) + _ror(c, 30) + d) & _MASK,
                  (a + _ror((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _upto64(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K2) & _MASK
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _MASK
    d = (_u64(s, n - 16) * _K2) & _MASK
    y = (_ror((a + b) & _MASK, 43) + _ror(c, 30) + d) & _MASK
    z = _mix16(y, (a + _ror((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_u64(s, 16) * mul) & _MASK
    f = _u64(s, 24)
    g = ((y + _u64(s, n - 32)) * mul) & _MASK
    h = ((z + _u64(s, n - 24)) * mul) & _MASK
    return _mix16((_ror((e + f) & _MASK, 43) + _ror(g, 30) + h) & _MASK,
                  (e + _ror((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak32(s: bytes, at: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = (_u64(s, at + 8 * i) for i in range(4))
    a = (a + w) & _MASK
    b = _ror((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _ror(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(s: bytes) -> int:
    """FarmHash's Fingerprint64 of `s` (TF's `Fingerprint64`), an unsigned 64-bit integer."""
    n = len(s)
    if n <= 16:
        return _short(s, n)
    if n <= 32:
        return _medium(s, n)
    if n <= 64:
        return _upto64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_smix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v, w = (0, 0), (0, 0)
    x = (x * _K2 + _u64(s, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    at = 0
    while True:
        x = (_ror((x + y + v[0] + _u64(s, at + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_ror((y + v[1] + _u64(s, at + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _u64(s, at + 40)) & _MASK
        z = (_ror((z + w[0]) & _MASK, 33) * _K1) & _MASK
        v = _weak32(s, at, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak32(s, at + 32, (z + w[1]) & _MASK, (y + _u64(s, at + 16)) & _MASK)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    at = last64
    w0 = (w[0] + ((n - 1) & 63)) & _MASK
    v0 = (v[0] + w0) & _MASK
    w0 = (w0 + v0) & _MASK
    v, w = (v0, v[1]), (w0, w[1])
    x = (_ror((x + y + v[0] + _u64(s, at + 8)) & _MASK, 37) * mul) & _MASK
    y = (_ror((y + v[1] + _u64(s, at + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _u64(s, at + 40)) & _MASK
    z = (_ror((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak32(s, at, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak32(s, at + 32, (z + w[1]) & _MASK, (y + _u64(s, at + 16)) & _MASK)
    z, x = x, z
    return _mix16((_mix16(v[0], w[0], mul) + _smix(y) * _K0 + z) & _MASK,
                  (_mix16(v[1], w[1], mul) + x) & _MASK, mul)


def to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> Tensor:  # noqa: A002
    """Each string's bucket `Fingerprint64(s) % num_buckets` (int64), as `tf.strings.to_hash_bucket_fast`.

    Raises:
      InvalidArgumentError: for a non-string input or fewer than one bucket.
    """
    from tapeshim._src import errors

    strings = as_string_tensor(input, "input")
    buckets = int(num_buckets)
    if buckets < 1:
        raise errors.invalid_argument(f"Value for attr 'num_buckets' of {buckets} must be at least minimum 1",
                                      "StringToHashBucketFast")
    flat = strings._value.reshape(-1)
    out = np.fromiter((fingerprint64(s) % buckets for s in flat), dtype=np.int64, count=flat.size)
    return constant(out.reshape(strings._value.shape))
