"""The Threefry-2x32 hash behind JAX's default random keys, on the host: for arrays and for one key.

JAX's default keys (`jax.random.PRNGKey`, `key<fry>`) are two 32-bit words; seeding, folding in and drawing
bits all hash counters with Threefry-2x32, 20 rounds (Salmon, Moraes, Dror and Shaw, "Parallel random
numbers: as easy as 1, 2, 3", SC 2011). Computed here with NumPy's wrapping `uint32` arithmetic (`threefry`:
the host interpreter's random rules, `interpret_random`) or with Python integers (`fold_in`, `seed`: one
eager op's key, where JAX's own `fold_in` and `PRNGKey` are jitted functions that compile on their first
call: 0.1-0.2 s of a program's first `tf.random.normal`). Both give JAX's words exactly; the tests compare
them with JAX's (`tests/test_interpret_random.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_WORD = np.dtype(np.uint32)
_MASK = 0xFFFFFFFF
_PARITY = 0x1BD11BDA  # the key schedule's constant
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))  # per group of four rounds, alternating
_GROUPS = 5  # 20 rounds


def _rotated(x: np.ndarray, distance: int) -> np.ndarray:
    return (x << np.uint32(distance)) | (x >> np.uint32(32 - distance))


def threefry(key0: Any, key1: Any, x0: Any, x1: Any) -> tuple[np.ndarray, np.ndarray]:
    """The hash of the counters `(x0, x1)` under the key `(key0, key1)` (all `uint32`, broadcast against each
    other): the two output words, as arrays."""
    key0, key1 = np.asarray(key0, _WORD), np.asarray(key1, _WORD)
    schedule = (key0, key1, key0 ^ key1 ^ np.uint32(_PARITY))
    shape = np.broadcast_shapes(key0.shape, key1.shape, np.shape(x0), np.shape(x1))
    with np.errstate(over="ignore"):  # (the words wrap around, as the hash means them to)
        a = np.broadcast_to(np.asarray(x0, _WORD) + schedule[0], shape).copy()
        b = np.broadcast_to(np.asarray(x1, _WORD) + schedule[1], shape).copy()
        for group in range(1, _GROUPS + 1):
            for distance in _ROTATIONS[(group - 1) % 2]:
                a += b
                b = _rotated(b, distance)
                b ^= a
            a += schedule[group % 3]
            b += schedule[(group + 1) % 3] + np.uint32(group)
    return np.asarray(a), np.asarray(b)


def _hash(key: tuple[int, int], x0: int, x1: int) -> tuple[int, int]:
    """`threefry` of one pair of counters, in Python integers (a few microseconds, no array)."""
    schedule = (key[0], key[1], key[0] ^ key[1] ^ _PARITY)
    a, b = (x0 + schedule[0]) & _MASK, (x1 + schedule[1]) & _MASK
    for group in range(1, _GROUPS + 1):
        for distance in _ROTATIONS[(group - 1) % 2]:
            a = (a + b) & _MASK
            b = ((b << distance) | (b >> (32 - distance))) & _MASK
            b ^= a
        a = (a + schedule[group % 3]) & _MASK
        b = (b + schedule[(group + 1) % 3] + group) & _MASK
    return a, b


def seed(value: int) -> tuple[int, int]:
    """`jax.random.PRNGKey(value)`'s words for an int64 seed (JAX reads it so: its high and low words)."""
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"seed must be an int64, got {value}")
    bits = value % 2**64
    return bits >> 32, bits & _MASK


def fold_in(key: tuple[int, int], message: int) -> tuple[int, int]:
    """`jax.random.fold_in(key, message)`'s words for a `uint32` message: the hash of the counters `(0, message)`."""
    if not 0 <= message <= _MASK:
        raise ValueError(f"message must be a uint32, got {message}")
    return _hash(key, 0, message)
