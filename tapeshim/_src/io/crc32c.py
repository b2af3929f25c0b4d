"""CRC-32C (Castagnoli), and TFRecord's masked form, in numpy.

Short inputs run a table-driven loop. Long inputs are cut into equal chunks whose
CRCs are computed side by side (one numpy step per byte position, across all
chunks) and then joined with the "shift by a chunk of zeros" operator, which is
linear over GF(2) and so is four 256-entry tables.
"""

from __future__ import annotations

import functools

import numpy as np

_POLY = 0x82F63B78  # reflected Castagnoli polynomial
_CHUNK = 1024
_MASK_DELTA = 0xA282EAD8


def _byte_table() -> np.ndarray:
    table = np.zeros(256, dtype=np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table[n] = c
    return table


_TABLE = _byte_table()
_TABLE_LIST = [int(v) for v in _TABLE]


def _update_small(state: int, data: bytes) -> int:
    table = _TABLE_LIST
    for byte in data:
        state = table[(state ^ byte) & 0xFF] ^ (state >> 8)
    return state


@functools.lru_cache(maxsize=4)
def _shift_tables(length: int) -> tuple[list[int], ...]:
    """Tables of the linear map `state -> update(state, zeros(length))`, one per byte of the state."""
    columns = []
    for bit in range(32):
        columns.append(_update_small(1 << bit, bytes(length)))
    tables = []
    for byte_index in range(4):
        table = []
        for value in range(256):
            out = 0
            for bit in range(8):
                if value >> bit & 1:
                    out ^= columns[byte_index * 8 + bit]
            table.append(out)
        tables.append(table)
    return tuple(tables)


def _update(state: int, data: bytes) -> int:
    count = len(data) // _CHUNK
    if count < 4:
        return _update_small(state, data)
    body = np.frombuffer(data, dtype=np.uint8, count=count * _CHUNK).reshape(count, _CHUNK)
    partial = np.zeros(count, dtype=np.uint32)  # each chunk's CRC register, started from zero
    for column in body.T:
        partial = _TABLE[(partial ^ column) & 0xFF] ^ (partial >> 8)
    t0, t1, t2, t3 = _shift_tables(_CHUNK)
    for value in partial.tolist():
        state = (t0[state & 0xFF] ^ t1[state >> 8 & 0xFF] ^ t2[state >> 16 & 0xFF] ^ t3[state >> 24]) ^ value
    return _update_small(state, data[count * _CHUNK :])


def crc32c(data: bytes) -> int:
    """The CRC-32C of `data`."""
    return _update(0xFFFFFFFF, bytes(data)) ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The masked CRC-32C TFRecord files store: the CRC rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
