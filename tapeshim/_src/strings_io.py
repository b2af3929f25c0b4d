"""`tf.io.decode_raw`, `tf.io.serialize_tensor` and `tf.io.parse_tensor` (TF's `TensorProto` wire format).

`serialize_tensor` writes what TF writes (dtype, shape, then the values as
`tensor_content` bytes, or `string_val` entries for strings), so the bytes are
identical to TF's; `parse_tensor` also reads the typed `*_val` fields TF's
constants use (a value list shorter than the shape repeats its last value).
"""

from __future__ import annotations

import base64
from typing import Any

import ml_dtypes
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor, host_tensor
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

_DECODABLE = (
    "half",
    "float",
    "double",
    "int32",
    "uint16",
    "uint8",
    "int16",
    "int8",
    "int64",
    "complex64",
    "complex128",
    "bool",
    "bfloat16",
)
_TF_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _tf_name(dtype: dtypes.DType) -> str:
    return _TF_NAMES.get(dtype.name, dtype.name)


def decode_raw(
    input_bytes: TensorLike,
    out_type: DTypeLike,
    little_endian: bool = True,
    fixed_length: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Reinterprets each string's bytes as a vector of `out_type`, as `tf.io.decode_raw`.

    Returns:
      A tensor of shape `input_bytes.shape + [n]`.

    Raises:
      InvalidArgumentError: for strings of different sizes (without `fixed_length`) or a size that is not a
        multiple of the element size.
    """
    strings = as_string_tensor(input_bytes, "input_bytes")
    dtype = dtypes.as_dtype(out_type)
    if _tf_name(dtype) not in _DECODABLE:
        raise errors.invalid_argument(
            f"Value for attr 'out_type' of {dtype.name} is not in the list of allowed values: "
            f"{', '.join(_DECODABLE)}\n\t; NodeDef: {{{{node DecodeRaw}}}}",
            "DecodeRaw",
        )
    np_dtype = np.dtype(dtype.as_numpy_dtype).newbyteorder("<" if little_endian else ">")
    size = np_dtype.itemsize
    flat = list(strings._array.reshape(-1))
    if fixed_length is not None:
        width = int(convert_to_tensor(fixed_length).numpy())
        if width % size:
            raise errors.invalid_argument(
                f"fixed_length ({width}) must be a multiple of the size of out_type ({size})", "DecodeRawV2"
            )
        flat = [s[:width].ljust(width, b"\0") for s in flat]
    elif flat:
        first = len(flat[0])
        for i, s in enumerate(flat):
            if len(s) != first:
                raise errors.invalid_argument(
                    f"DecodeRaw requires input strings to all be the same size, but element {i} has size "
                    f"{first} != {len(s)}",
                    "DecodeRaw",
                )
        if first % size:
            raise errors.invalid_argument(
                f"Input to DecodeRaw has length {first} that is not a multiple of {size}, the size of "
                f"{_tf_name(dtype)}",
                "DecodeRaw",
            )
    count = (len(flat[0]) if flat else 0) // size
    data = b"".join(flat)
    values = (
        np.frombuffer(data, np_dtype).astype(np.dtype(dtype.as_numpy_dtype))
        if data
        else np.zeros(0, dtype.as_numpy_dtype)
    )
    return host_tensor(np.array(values.reshape(*strings._array.shape, count), order="C"), dtype)


# -- protobuf wire format ---------------------------------------------------------------------------------------
def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _shape_proto(shape: tuple) -> bytes:
    return b"".join(_field(2, _varint(1 << 3) + _varint(int(d)) if d else b"") for d in shape)  # 0: proto3 default


def serialize_tensor(tensor: TensorLike, name: str | None = None) -> StringTensor:
    """The `TensorProto` bytes of a tensor (a scalar string tensor), byte-identical to `tf.io.serialize_tensor`."""
    tensor = convert_to_tensor(tensor)
    dtype = tensor.dtype
    out = _varint(1 << 3) + _varint(dtypes._ENUM_OF_NAME[dtype.name])
    out += _field(2, _shape_proto(tuple(tensor.shape)))
    if isinstance(tensor, StringTensor):  # every tf.string tensor is one
        out += b"".join(_field(8, s) for s in tensor._array.reshape(-1))
    else:
        host = np.ascontiguousarray(np.asarray(tensor.numpy()))
        content = host.astype(host.dtype.newbyteorder("<")).tobytes()
        if content:
            out += _field(4, content)
    result = np.empty((), dtype=object)
    result[()] = out
    return StringTensor(result)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of each field of a message: ints for varints, bytes otherwise."""
    out, at = [], 0
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, at = _read_varint(data, at)
        elif wire == 1:
            value, at = data[at : at + 8], at + 8
        elif wire == 2:
            size, at = _read_varint(data, at)
            value, at = data[at : at + size], at + size
        elif wire == 5:
            value, at = data[at : at + 4], at + 4
        else:
            raise ValueError(f"wire type {wire}")
        if at > len(data) or number == 0:
            raise ValueError("truncated message")
        out.append((number, wire, value))
    return out


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


# the typed value fields: field number -> (numpy dtype of packed fixed-width data, or "varint")
_VAL_FIELDS = {
    5: "<f4",
    6: "<f8",
    7: "varint",
    9: "<f4",
    10: "varint",
    11: "varint",
    12: "<f8",
    13: "varint",
    16: "varint",
    17: "varint",
}


def _typed_values(fields: list, number: int) -> list:
    kind = _VAL_FIELDS[number]
    values: list = []
    for n, wire, value in fields:
        if n != number:
            continue
        if kind == "varint":
            if wire == 2:
                at = 0
                while at < len(value):
                    item, at = _read_varint(value, at)
                    values.append(item)
            else:
                values.append(value)
        else:  # packed (wire type 2) or one fixed-width value (wire types 1 and 5)
            values.extend(np.frombuffer(value, kind).tolist())
    return values


def _from_val_fields(fields: list, dtype: dtypes.DType, count: int) -> np.ndarray:
    name = dtype.name
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if name in ("float32",):
        values = _typed_values(fields, 5)
    elif name == "float64":
        values = _typed_values(fields, 6)
    elif name in ("int32", "int16", "int8", "uint8", "uint16"):
        values = [_signed(v, 32) if name.startswith("int") else v for v in _typed_values(fields, 7)]
    elif name == "int64":
        values = [_signed(v, 64) for v in _typed_values(fields, 10)]
    elif name == "bool":
        values = [bool(v) for v in _typed_values(fields, 11)]
    elif name in ("float16", "bfloat16"):
        bits = np.asarray(_typed_values(fields, 13), np.uint16)
        values = bits.view(np.float16 if name == "float16" else ml_dtypes.bfloat16).tolist()
    elif name == "uint32":
        values = _typed_values(fields, 16)
    elif name == "uint64":
        values = _typed_values(fields, 17)
    elif name in ("complex64", "complex128"):
        flat = _typed_values(fields, 9 if name == "complex64" else 12)
        values = [complex(a, b) for a, b in zip(flat[0::2], flat[1::2])]
    else:
        values = []
    array = np.asarray(values, np_dtype)
    if array.size < count:
        fill = array[-1] if array.size else np.zeros((), np_dtype)
        array = np.concatenate([array, np.full(count - array.size, fill, np_dtype)])
    return array[:count]


def parse_tensor(serialized: TensorLike, out_type: DTypeLike, name: str | None = None) -> Tensor:
    """The tensor a `TensorProto` holds, as `tf.io.parse_tensor`.

    Raises:
      InvalidArgumentError: for bytes that are not a TensorProto, or a dtype other than `out_type`.
    """
    data = as_string_tensor(serialized, "serialized")
    if data._array.ndim != 0:
        raise errors.invalid_argument(
            f"Expected `serialized` to be a scalar, got shape: [{','.join(str(d) for d in data._array.shape)}]",
            "ParseTensor",
        )
    raw: bytes = data._array.item()
    want = dtypes.as_dtype(out_type)
    try:
        fields = _fields(raw)
        enum = next((v for n, w, v in fields if n == 1 and w == 0), 0)
        dtype = dtypes.as_dtype(int(enum))
        shape_msg = next((v for n, w, v in fields if n == 2 and w == 2), b"")
        shape = tuple(
            _signed(next((v for n, w, v in _fields(dim) if n == 1 and w == 0), 0), 64)
            for n, w, dim in _fields(shape_msg)
            if n == 2 and w == 2
        )
    except (ValueError, TypeError, StopIteration):
        raise errors.invalid_argument(
            f"Could not parse `serialized` as TensorProto, base64: {base64.b64encode(raw).decode()}", "ParseTensor"
        ) from None
    if dtype is not want:
        raise errors.invalid_argument(
            f"Type mismatch between parsed tensor ({_tf_name(dtype)}) and dtype ({_tf_name(want)})", "ParseTensor"
        )
    count = int(np.prod(shape)) if shape else 1
    if dtype is dtypes.string:
        strings = [bytes(v) for n, w, v in fields if n == 8 and w == 2]
        out = np.empty(count, dtype=object)
        out[:] = (strings + [strings[-1] if strings else b""] * count)[:count]
        return host_tensor(out.reshape(shape), dtypes.string)
    content = b"".join(v for n, w, v in fields if n == 4 and w == 2)
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if content:
        if len(content) != count * np_dtype.itemsize:
            raise errors.invalid_argument(
                "Could not parse `serialized` as TensorProto: content size mismatch", "ParseTensor"
            )
        array = np.frombuffer(content, np_dtype.newbyteorder("<")).astype(np_dtype)
    else:
        array = _from_val_fields(fields, dtype, count)
    return host_tensor(np.array(array.reshape(shape), order="C"), dtype)
