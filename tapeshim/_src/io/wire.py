"""Protocol-buffer wire format: varints, tags and length-delimited fields.

Only what tapeshim's messages use: varint (0), 64-bit (1), length-delimited (2)
and 32-bit (5) fields. Decoding raises `DecodeError` (a `ValueError`, as
protobuf's `google.protobuf.message.DecodeError`) on truncated or malformed data.
"""

from __future__ import annotations

import struct
from typing import Any, Iterator

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class DecodeError(ValueError):
    """Malformed protocol-buffer bytes (`google.protobuf.message.DecodeError`)."""


def varint(value: int) -> bytes:
    """The base-128 varint of `value`; negative values are their 64-bit two's complement (10 bytes)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    """The key of field `number` with `wire_type`."""
    return varint(number << 3 | wire_type)


def length_delimited(number: int, payload: bytes) -> bytes:
    """Field `number` holding `payload` (bytes, a string or a message)."""
    return tag(number, LENGTH) + varint(len(payload)) + payload


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """(value, next position) of the varint at `pos`."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise DecodeError("Truncated message.")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & ((1 << 64) - 1), pos
        shift += 7
        if shift >= 70:
            raise DecodeError("Too many bytes when decoding varint.")


def signed64(value: int) -> int:
    """A varint's 64 bits read as a signed int64."""
    return value - (1 << 64) if value >= 1 << 63 else value


def fields(data: bytes) -> Iterator[tuple[int, int, Any, bytes]]:
    """(field number, wire type, value, raw bytes of the whole field) for each field in `data`.

    The value is an int (varint), bytes of 4 or 8 (fixed) or the payload (length-delimited). It is
    typed `Any`: its type follows the wire type, which the callers check and a checker cannot relate.
    """
    pos, end = 0, len(data)
    value: int | bytes
    while pos < end:
        start = pos
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise DecodeError("Field number 0 is illegal.")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
        elif wire_type == FIXED64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire_type == FIXED32:
            value, pos = data[pos : pos + 4], pos + 4
        elif wire_type == LENGTH:
            size, pos = read_varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            raise DecodeError(f"Unsupported wire type {wire_type}.")
        if pos > end:
            raise DecodeError("Truncated message.")
        yield number, wire_type, value, data[start:pos]


def pack_floats(values: list[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


def pack_doubles(values: list[float]) -> bytes:
    return struct.pack(f"<{len(values)}d", *values)


def pack_varints(values: list[int]) -> bytes:
    return b"".join(varint(int(v)) for v in values)


def unpack_varints(data: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        out.append(value)
    return out
