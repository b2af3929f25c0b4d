"""A small protocol-buffer message runtime: the behaviour of protobuf's Python messages that TF programs use.

Messages declare their fields (`Field`); instances behave as protobuf's: keyword
construction, attribute access with defaults, sub-messages that become present when
written to (oneof members replacing each other), repeated fields and message maps
(`m.feature["x"]` inserts an empty entry, as protobuf), `SerializeToString`,
`FromString` / `ParseFromString` / `MergeFromString`, `CopyFrom`, `MergeFrom`,
`HasField`, `WhichOneof`, `ClearField`, `ListFields`, `ByteSize`, equality and
protobuf's text format from `str()`. Unknown fields are kept and written back.
"""

from __future__ import annotations

import math
import operator
import struct
from typing import Any, Callable, Iterable

import numpy as np

from tapeshim._src.io import wire

_SCALAR_DEFAULTS = {
    "bytes": b"",
    "string": "",
    "float": 0.0,
    "double": 0.0,
    "int64": 0,
    "int32": 0,
    "uint64": 0,
    "bool": False,
    "enum": 0,
}
_INT_RANGES = {
    "int64": (-(1 << 63), (1 << 63) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "enum": (-(1 << 31), (1 << 31) - 1),
    "uint64": (0, (1 << 64) - 1),
}


class Field:
    """One field of a message: name, number, kind, and how it repeats."""

    def __init__(
        self,
        name: str,
        number: int,
        kind: str,
        repeated: bool = False,
        packed: bool = False,
        message: Callable[[], type] | None = None,
        oneof: str | None = None,
        is_map: bool = False,
    ) -> None:
        self.name, self.number, self.kind = name, number, kind
        self.repeated, self.packed, self.oneof, self.is_map = repeated, packed, oneof, is_map
        self._message = message

    @property
    def message_type(self) -> type:
        """The message class of a message field.

        Raises:
          TypeError: for a field that holds no message.
        """
        if self._message is None:
            raise TypeError(f"'NoneType' object is not callable (field {self.name} holds no message)")
        return self._message()

    def __repr__(self) -> str:
        return f"<Field {self.name} = {self.number}>"


def _coerce(kind: str, value: Any) -> Any:
    """`value` as field `kind` stores it, with protobuf's TypeError/ValueError for a wrong type or range."""
    if kind == "bytes":
        if isinstance(value, str) or not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected bytes, {type(value).__name__} found")
        return bytes(value)
    if kind == "string":
        if isinstance(value, (bytes, bytearray)):
            try:
                return bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(
                    f"{value!r} has type bytes, but isn't valid UTF-8 encoding. Non-UTF-8 strings "
                    "must be converted to unicode objects before being added."
                ) from None
        if not isinstance(value, str):
            raise TypeError(f"{value!r} has type {type(value).__name__}, but expected one of: bytes, str")
        return value
    if kind in ("float", "double"):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        value = float(value)
        return float(np.float32(value)) if kind == "float" else value
    if kind == "bool":
        return bool(value)
    if isinstance(value, bool):  # numpy's bool falls to operator.index's TypeError, as protobuf's
        raise TypeError(f"Field {kind} value: Expected an int, got a boolean.")
    number = operator.index(value)
    low, high = _INT_RANGES[kind]
    if not low <= number <= high:
        raise ValueError(f"Value out of range: {number}")
    return int(number)


def _encode_scalar(field: Field, value: Any) -> bytes:
    kind, number = field.kind, field.number
    if kind in ("bytes", "string"):
        return wire.length_delimited(number, value.encode("utf-8") if kind == "string" else value)
    if kind == "float":
        return wire.tag(number, wire.FIXED32) + struct.pack("<f", value)
    if kind == "double":
        return wire.tag(number, wire.FIXED64) + struct.pack("<d", value)
    return wire.tag(number, wire.VARINT) + wire.varint(int(value))


def _packed_payload(field: Field, values: list) -> bytes:
    if field.kind == "float":
        return wire.pack_floats(values)
    if field.kind == "double":
        return wire.pack_doubles(values)
    return wire.pack_varints(values)


def _decode_scalar(kind: str, wire_type: int, value: Any) -> Any:
    if kind == "bytes":
        return bytes(value)
    if kind == "string":
        return bytes(value).decode("utf-8", errors="replace")
    if kind == "float":
        return struct.unpack("<f", value)[0]
    if kind == "double":
        return struct.unpack("<d", value)[0]
    if kind == "bool":
        return bool(value)
    if kind in ("int64", "int32", "enum"):
        return wire.signed64(value)
    return value


def _decode_packed(kind: str, payload: bytes) -> list:
    if kind == "float":
        return list(struct.unpack(f"<{len(payload) // 4}f", payload))
    if kind == "double":
        return list(struct.unpack(f"<{len(payload) // 8}d", payload))
    return [_decode_scalar(kind, wire.VARINT, v) for v in wire.unpack_varints(payload)]


class _Repeated(list):
    """A repeated scalar field: a list that converts what is stored and tells its message it changed."""

    def __init__(self, owner: "Message", field: Field) -> None:
        super().__init__()
        self._owner, self._field = owner, field

    def _conv(self, value: Any) -> Any:
        return _coerce(self._field.kind, value)

    def append(self, value: Any) -> None:
        super().append(self._conv(value))
        self._owner._touch(self._field)

    def extend(self, values: Iterable[Any]) -> None:
        super().extend([self._conv(v) for v in values])
        self._owner._touch(self._field)

    def insert(self, index: int, value: Any) -> None:  # type: ignore[override]
        super().insert(index, self._conv(value))
        self._owner._touch(self._field)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, [self._conv(v) for v in value])
        else:
            super().__setitem__(index, self._conv(value))
        self._owner._touch(self._field)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, tuple)) else NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(list(self))


class _RepeatedMessages(list):
    """A repeated message field: `add()` makes an element; `append`/`extend` copy messages in."""

    def __init__(self, owner: "Message", field: Field) -> None:
        super().__init__()
        self._owner, self._field = owner, field

    def add(self, **kwargs: Any) -> "Message":
        element = self._field.message_type(**kwargs)
        element._parent = (self._owner, self._field)
        super().append(element)
        self._owner._touch(self._field)
        return element

    def append(self, message: "Message") -> None:
        self.add().CopyFrom(message)

    def extend(self, messages: Iterable["Message"]) -> None:
        for message in messages:
            self.append(message)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, tuple)) else NotImplemented

    __hash__ = None


class _MessageMap(dict):
    """A `map<string, Message>` field: reading a missing key inserts an empty message, as protobuf."""

    def __init__(self, owner: "Message", field: Field) -> None:
        super().__init__()
        self._owner, self._field = owner, field

    def __missing__(self, key: str) -> "Message":
        return self.get_or_create(key)

    def get_or_create(self, key: str) -> "Message":
        key = _coerce("string", key)
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        value = self._field.message_type()
        value._parent = (self._owner, self._field)
        dict.__setitem__(self, key, value)
        self._owner._touch(self._field)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        raise ValueError("May not set values directly, call my_map[key].foo = 5")

    def __delitem__(self, key: str) -> None:
        dict.__delitem__(self, key)
        self._owner._touch(self._field)

    def __eq__(self, other: object) -> bool:
        return dict(self) == dict(other) if isinstance(other, dict) else NotImplemented

    __hash__ = None


class Message:
    """Base of tapeshim's protocol-buffer messages (see the module docstring)."""

    FIELDS: tuple[Field, ...] = ()
    _BY_NAME: dict[str, Field] = {}
    _BY_NUMBER: dict[int, Field] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._BY_NAME = {f.name: f for f in cls.FIELDS}
        cls._BY_NUMBER = {f.number: f for f in cls.FIELDS}

    def __init__(self, **kwargs: Any) -> None:
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_present", set())
        object.__setattr__(self, "_parent", None)
        object.__setattr__(self, "_unknown", b"")
        for name, value in kwargs.items():
            field = self._field(name)
            if value is None:
                continue
            if field.is_map:
                target = getattr(self, name)
                for key, item in dict(value).items():
                    target.get_or_create(key).CopyFrom(item) if isinstance(item, Message) else target.get_or_create(
                        key
                    ).MergeFrom(field.message_type(**item))
            elif field.repeated:
                getattr(self, name).extend(value)
            elif field.kind == "message":
                child = getattr(self, name)
                if isinstance(value, dict):
                    value = field.message_type(**value)
                if not isinstance(value, field.message_type):
                    raise TypeError(
                        f"Parameter to CopyFrom() must be instance of same class: expected "
                        f"{field.message_type.__name__} got {type(value).__name__}."
                    )
                child.CopyFrom(value)
                self._touch(field)
            else:
                setattr(self, name, value)

    # -- fields -----------------------------------------------------------
    @classmethod
    def _field(cls, name: str) -> Field:
        try:
            return cls._BY_NAME[name]
        except KeyError:
            raise ValueError(f'Protocol message {cls.__name__} has no "{name}" field.') from None

    def __reduce__(self) -> tuple:
        """Pickles (and deep-copies) as the serialized message, as protobuf's messages do."""
        return type(self).FromString, (self.SerializeToString(),)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        field = type(self)._BY_NAME.get(name)
        if field is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        values = self._values
        if name not in values:
            if field.is_map:
                values[name] = _MessageMap(self, field)
            elif field.repeated:
                values[name] = (_RepeatedMessages if field.kind == "message" else _Repeated)(self, field)
            elif field.kind == "message":
                child = field.message_type()
                child._parent = (self, field)
                values[name] = child
            else:
                return _SCALAR_DEFAULTS[field.kind]
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        field = type(self)._BY_NAME.get(name)
        if field is None:
            raise AttributeError(f'Protocol message has no "{name}" field.')
        if field.repeated or field.kind == "message":
            what = "message" if field.kind == "message" and not field.repeated else "repeated"
            raise AttributeError(f'Assignment not allowed to {what} field "{name}" in protocol message object.')
        self._values[name] = _coerce(field.kind, value)
        self._touch(field)

    def _touch(self, field: Field) -> None:
        """Marks `field` present (clearing its oneof siblings) and this message present in its parent."""
        if not field.repeated:
            self._present.add(field.name)
            if field.oneof is not None:
                for other in self.FIELDS:
                    if other.oneof == field.oneof and other is not field:
                        self._present.discard(other.name)
                        self._values.pop(other.name, None)
        if self._parent is not None:
            parent, parent_field = self._parent
            parent._touch(parent_field)

    def _is_set(self, field: Field) -> bool:
        value = self._values.get(field.name)
        if field.repeated:
            return bool(value)
        if field.kind == "message" or field.oneof is not None:
            return field.name in self._present
        return (
            value is not None
            and value != _SCALAR_DEFAULTS[field.kind]
            or (field.kind in ("float", "double") and value is not None and math.copysign(1.0, value) < 0)
        )

    def HasField(self, name: str) -> bool:  # noqa: N802 - protobuf's name
        """Whether singular field (or oneof) `name` is set."""
        oneofs = {f.oneof for f in self.FIELDS if f.oneof}
        if name in oneofs:
            return self.WhichOneof(name) is not None
        field = self._field(name)
        if field.repeated:
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        return self._is_set(field)

    def WhichOneof(self, oneof: str) -> str | None:  # noqa: N802
        """The name of the member of `oneof` that is set, or None."""
        members = [f for f in self.FIELDS if f.oneof == oneof]
        if not members:
            raise ValueError(f'Protocol message has no oneof "{oneof}" field.')
        for field in members:
            if field.name in self._present:
                return field.name
        return None

    def ClearField(self, name: str) -> None:  # noqa: N802
        """Resets field `name` to its default."""
        self._field(name)
        self._values.pop(name, None)
        self._present.discard(name)

    def Clear(self) -> None:  # noqa: N802
        """Resets every field."""
        self._values.clear()
        self._present.clear()
        object.__setattr__(self, "_unknown", b"")

    def ListFields(self) -> list[tuple[Field, Any]]:  # noqa: N802
        """(field, value) for every set field, in field-number order."""
        return [(f, getattr(self, f.name)) for f in sorted(self.FIELDS, key=lambda f: f.number) if self._is_set(f)]

    # -- copying ----------------------------------------------------------
    def CopyFrom(self, other: "Message") -> None:  # noqa: N802
        """Makes this message a copy of `other`."""
        if not isinstance(other, type(self)):
            raise TypeError(
                f"Parameter to CopyFrom() must be instance of same class: expected "
                f"{type(self).__name__} got {type(other).__name__}."
            )
        if other is self:
            return
        self.Clear()
        self.MergeFrom(other)
        if self._parent is not None:
            self._parent[0]._touch(self._parent[1])

    def MergeFrom(self, other: "Message") -> None:  # noqa: N802
        """Merges `other` in, as protobuf: set scalars overwrite, repeated fields append, messages merge."""
        for field in other.FIELDS:
            if not other._is_set(field) and not (field.kind == "message" and field.name in other._present):
                continue
            value = getattr(other, field.name)
            if field.is_map:
                target = getattr(self, field.name)
                for key, item in value.items():
                    target.get_or_create(key).MergeFrom(item)
            elif field.repeated:
                getattr(self, field.name).extend(value)
            elif field.kind == "message":
                getattr(self, field.name).MergeFrom(value)
                self._touch(field)
            else:
                self._values[field.name] = value
                self._touch(field)
        object.__setattr__(self, "_unknown", self._unknown + other._unknown)

    # -- wire format ------------------------------------------------------
    def SerializeToString(self, deterministic: bool = False) -> bytes:  # noqa: N802
        """The message's wire-format bytes (map entries in insertion order, sorted when `deterministic`)."""
        out = []
        for field in sorted(self.FIELDS, key=lambda f: f.number):
            if not self._is_set(field):
                continue
            value = getattr(self, field.name)
            if field.is_map:
                items = sorted(value.items()) if deterministic else value.items()
                for key, item in items:
                    entry = wire.length_delimited(1, key.encode("utf-8")) + wire.length_delimited(
                        2, item.SerializeToString(deterministic)
                    )
                    out.append(wire.length_delimited(field.number, entry))
            elif field.kind == "message":
                items = value if field.repeated else [value]
                out.extend(wire.length_delimited(field.number, m.SerializeToString(deterministic)) for m in items)
            elif field.repeated and field.packed:
                out.append(wire.length_delimited(field.number, _packed_payload(field, list(value))))
            elif field.repeated:
                out.extend(_encode_scalar(field, v) for v in value)
            else:
                out.append(_encode_scalar(field, value))
        out.append(self._unknown)
        return b"".join(out)

    def ByteSize(self) -> int:  # noqa: N802
        """The length of the serialized message."""
        return len(self.SerializeToString())

    def MergeFromString(self, data: bytes) -> int:  # noqa: N802
        """Merges serialized `data` into this message; returns its length.

        Raises:
          DecodeError: `data` is not a valid serialization of this message.
        """
        data = bytes(data)
        for number, wire_type, value, raw in wire.fields(data):
            field = self._BY_NUMBER.get(number)
            if field is None:
                object.__setattr__(self, "_unknown", self._unknown + raw)
                continue
            if field.is_map:
                key, item = "", field.message_type()
                for n, _, v, _ in wire.fields(value):
                    if n == 1:
                        key = bytes(v).decode("utf-8", errors="replace")
                    elif n == 2:
                        item.MergeFromString(v)
                getattr(self, field.name).get_or_create(key).CopyFrom(item)
            elif field.kind == "message":
                if wire_type != wire.LENGTH:
                    raise wire.DecodeError(f"Field {field.name} has the wrong wire type.")
                target = getattr(self, field.name).add() if field.repeated else getattr(self, field.name)
                target.MergeFromString(value)
                if not field.repeated:
                    self._touch(field)
            elif field.repeated:
                values = (
                    _decode_packed(field.kind, value)
                    if wire_type == wire.LENGTH and field.kind not in ("bytes", "string")
                    else [_decode_scalar(field.kind, wire_type, value)]
                )
                getattr(self, field.name).extend(values)
            else:
                self._values[field.name] = _decode_scalar(field.kind, wire_type, value)
                self._touch(field)
        return len(data)

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802
        """Replaces this message's contents with serialized `data`; returns its length."""
        self.Clear()
        return self.MergeFromString(data)

    @classmethod
    def FromString(cls, data: bytes) -> "Message":  # noqa: N802
        """A new message parsed from serialized `data`."""
        message = cls()
        message.MergeFromString(data)
        return message

    # -- comparison and text ------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        if type(other) is not type(self):
            return False
        mine, theirs = self.ListFields(), other.ListFields()
        return (
            [f.name for f, _ in mine] == [f.name for f, _ in theirs]
            and all(a == b for (_, a), (_, b) in zip(mine, theirs))
            and self._unknown == other._unknown
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable, as protobuf's messages (object's is a method)

    def __str__(self) -> str:
        return "".join(self._text_lines(0))

    def __repr__(self) -> str:
        return str(self)

    def _text_lines(self, depth: int) -> list[str]:
        pad = "  " * depth
        lines = []
        for field, value in self.ListFields():
            if field.is_map:
                for key, item in value.items():
                    lines.append(f"{pad}{field.name} {{\n{pad}  key: {_text_bytes(key.encode('utf-8'))}\n")
                    lines.append(f"{pad}  value {{\n")
                    lines.extend(item._text_lines(depth + 2))
                    lines.append(f"{pad}  }}\n{pad}}}\n")
            elif field.kind == "message":
                for item in value if field.repeated else [value]:
                    lines.append(f"{pad}{field.name} {{\n")
                    lines.extend(item._text_lines(depth + 1))
                    lines.append(f"{pad}}}\n")
            else:
                for item in value if field.repeated else [value]:
                    lines.append(f"{pad}{field.name}: {_text_scalar(field.kind, item)}\n")
        return lines


def _text_bytes(data: bytes) -> str:
    out = []
    for byte in data:
        char = chr(byte)
        if char in "\"'\\":
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _shortest(value: float, digits: tuple[int, int], as_float32: bool) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    for precision in digits:
        text = f"{value:.{precision}g}"
        back = float(np.float32(float(text))) if as_float32 else float(text)
        if back == value:
            return text
    return f"{value:.{digits[-1]}g}"


def _text_scalar(kind: str, value: Any) -> str:
    if kind == "bytes":
        return _text_bytes(value)
    if kind == "string":
        return _text_bytes(value.encode("utf-8"))
    if kind == "float":
        return _shortest(value, (6, 9), True)
    if kind == "double":
        return _shortest(value, (15, 17), False)
    if kind == "bool":
        return "true" if value else "false"
    return str(value)
