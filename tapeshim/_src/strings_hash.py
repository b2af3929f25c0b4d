"""TF's string hash buckets: `to_hash_bucket_fast` (FarmHash Fingerprint64), `to_hash_bucket` (TF's Hash64,
MurmurHash64A with TF's seed) and `to_hash_bucket_strong` (SipHash-2-4 with the given key).

Pure-Python implementations of the published algorithms, written here from
their descriptions; their values equal TF's, checked by the tests against
real TF.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from tapeshim._src import errors
from tapeshim._src.strings_ops import ragged_elementwise
from tapeshim._src.strings_tensor import as_string_tensor
from tapeshim._src.tensor import Tensor, constant
from tapeshim._src.typing_aliases import TensorLike

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
    return _mix16(
        (_ror((a + b) & _MASK, 43) + _ror(c, 30) + d) & _MASK, (a + _ror((b + _K2) & _MASK, 18) + c) & _MASK, mul
    )


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
    return _mix16(
        (_ror((e + f) & _MASK, 43) + _ror(g, 30) + h) & _MASK, (e + _ror((f + a) & _MASK, 18) + g) & _MASK, mul
    )


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
    return _mix16((_mix16(v[0], w[0], mul) + _smix(y) * _K0 + z) & _MASK, (_mix16(v[1], w[1], mul) + x) & _MASK, mul)


# -- the same algorithm vectorized with numpy (uint64 arithmetic wraps as C's) for strings of up to 64 bytes --
_U = np.uint64


def _vror(v: np.ndarray, shift: int) -> np.ndarray:
    return v if shift == 0 else (v >> _U(shift)) | (v << _U(64 - shift))


def _vmix16(u: np.ndarray, v: np.ndarray, mul: np.uint64) -> np.ndarray:
    a = (u ^ v) * mul
    a ^= a >> _U(47)
    b = (v ^ a) * mul
    b ^= b >> _U(47)
    return b * mul


def _fingerprint_group(rows: np.ndarray, n: int) -> np.ndarray:
    """Fingerprint64 of each row of a `[count, n]` uint8 array (n <= 64)."""

    def f64(at: int) -> np.ndarray:
        return np.ascontiguousarray(rows[:, at : at + 8]).view("<u8").reshape(-1).astype(_U)

    def f32(at: int) -> np.ndarray:
        return np.ascontiguousarray(rows[:, at : at + 4]).view("<u4").reshape(-1).astype(_U)

    k0, k1, k2 = _U(_K0), _U(_K1), _U(_K2)
    mul = _U((_K2 + n * 2) & _MASK)
    if n == 0:
        return np.full(rows.shape[0], k2, _U)
    if n < 4:
        y = rows[:, 0].astype(_U) + (rows[:, n >> 1].astype(_U) << _U(8))
        z = _U(n) + (rows[:, n - 1].astype(_U) << _U(2))
        h = (y * k2) ^ (z * k0)
        return (h ^ (h >> _U(47))) * k2
    if n < 8:
        return _vmix16(_U(n) + (f32(0) << _U(3)), f32(n - 4), mul)
    if n <= 16:
        a = f64(0) + k2
        b = f64(n - 8)
        return _vmix16(_vror(b, 37) * mul + a, (_vror(a, 25) + b) * mul, mul)
    if n <= 32:
        a, b = f64(0) * k1, f64(8)
        c, d = f64(n - 8) * mul, f64(n - 16) * k2
        return _vmix16(_vror(a + b, 43) + _vror(c, 30) + d, a + _vror(b + k2, 18) + c, mul)
    a, b = f64(0) * k2, f64(8)
    c, d = f64(n - 8) * mul, f64(n - 16) * k2
    y = _vror(a + b, 43) + _vror(c, 30) + d
    z = _vmix16(y, a + _vror(b + k2, 18) + c, mul)
    e, f = f64(16) * mul, f64(24)
    g = (y + f64(n - 32)) * mul
    h = (z + f64(n - 24)) * mul
    return _vmix16(_vror(e + f, 43) + _vror(g, 30) + h, e + _vror(f + a, 18) + g, mul)


def fingerprints(values: np.ndarray) -> np.ndarray:
    """Fingerprint64 of every bytes object of a flat object array, as uint64 (numpy for up to 64 bytes)."""
    out = np.empty(values.size, _U)
    lengths = np.fromiter((len(v) for v in values), dtype=np.int64, count=values.size)
    with np.errstate(over="ignore"):
        for n in np.unique(lengths):
            where = np.nonzero(lengths == n)[0]
            if n > 64:
                out[where] = [fingerprint64(values[i]) for i in where]
                continue
            rows = np.frombuffer(b"".join(values[i] for i in where), np.uint8).reshape(where.size, int(n))
            out[where] = _fingerprint_group(rows, int(n))
    return out


@ragged_elementwise
def to_hash_bucket_fast(input: TensorLike, num_buckets: int, name: str | None = None) -> Tensor:  # noqa: A002
    """Each string's bucket `Fingerprint64(s) % num_buckets` (int64), as `tf.strings.to_hash_bucket_fast`.

    Raises:
      InvalidArgumentError: for a non-string input or fewer than one bucket.
    """
    strings = as_string_tensor(input, "input")
    buckets = int(num_buckets)
    if buckets < 1:
        raise errors.invalid_argument(
            f"Value for attr 'num_buckets' of {buckets} must be at least minimum 1", "StringToHashBucketFast"
        )
    flat = strings._array.reshape(-1)
    out = (fingerprints(flat) % _U(buckets)).astype(np.int64)
    return constant(out.reshape(strings._array.shape))


_MURMUR_M = 0xC6A4A7935BD1E995
_TF_HASH_SEED = 0xDECAFCAFFE


def hash64(s: bytes, seed: int = _TF_HASH_SEED) -> int:
    """TF's `Hash64` (MurmurHash64A) of `s`, an unsigned 64-bit integer."""
    n = len(s)
    h = (seed ^ (n * _MURMUR_M)) & _MASK
    whole = n - n % 8
    for at in range(0, whole, 8):
        k = (_u64(s, at) * _MURMUR_M) & _MASK
        k ^= k >> 47
        k = (k * _MURMUR_M) & _MASK
        h = ((h ^ k) * _MURMUR_M) & _MASK
    tail = s[whole:]
    if tail:
        for i, byte in enumerate(tail):
            h ^= byte << (8 * i)
        h = (h * _MURMUR_M) & _MASK
    h ^= h >> 47
    h = (h * _MURMUR_M) & _MASK
    return h ^ (h >> 47)


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def siphash24(key: tuple[int, int], s: bytes) -> int:
    """SipHash-2-4 of `s` under the 128-bit key `(k0, k1)` (TF's `StrongKeyedHash`)."""
    k0, k1 = key[0] & _MASK, key[1] & _MASK
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rounds(v0: int, v1: int, v2: int, v3: int, count: int) -> tuple:
        for _ in range(count):
            v0 = (v0 + v1) & _MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = len(s)
    padded = s + b"\0" * (7 - n % 8) + bytes([n & 0xFF])
    for at in range(0, len(padded), 8):
        m = _u64(padded, at)
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def _buckets(input: Any, num_buckets: Any, op: str, hash_fn: Any) -> Tensor:  # noqa: A002
    strings = as_string_tensor(input, "input")
    buckets = int(num_buckets)
    if buckets < 1:
        raise errors.invalid_argument(f"Value for attr 'num_buckets' of {buckets} must be at least minimum 1", op)
    flat = strings._array.reshape(-1)
    out = np.fromiter((hash_fn(v) % buckets for v in flat), dtype=np.int64, count=flat.size)
    return constant(out.reshape(strings._array.shape))


@ragged_elementwise
def to_hash_bucket(string_tensor: TensorLike, num_buckets: int, name: str | None = None) -> Tensor:
    """Each string's bucket `Hash64(s) % num_buckets` (int64), as `tf.strings.to_hash_bucket`."""
    return _buckets(string_tensor, num_buckets, "StringToHashBucket", hash64)


@ragged_elementwise
def to_hash_bucket_strong(input: TensorLike, num_buckets: int, key: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Each string's bucket `SipHash24(key, s) % num_buckets` (int64), as `tf.strings.to_hash_bucket_strong`.

    Raises:
      ValueError: if `key` is not two integers.
    """
    pair = [int(k) for k in key]
    if any(not -(2**63) <= k < 2**63 for k in pair):
        raise OverflowError("int too big to convert")  # TF takes the key as int64s
    if len(pair) != 2:
        raise ValueError(f"Key must have size 2, got {len(pair)}.")
    return _buckets(input, num_buckets, "StringToHashBucketStrong", lambda s: siphash24((pair[0], pair[1]), s))
