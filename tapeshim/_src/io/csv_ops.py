"""`tf.io.decode_csv`: CSV records (a string tensor) into one tensor per column, on the host."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.io.gfile import glob, path_text
from tapeshim._src.ops import table
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor

_OP = "DecodeCSV"
_ALLOWED = ("float32", "float64", "int32", "int64", "string")
_INT = re.compile(r"^\s*[+-]?\d+\s*$")
_INT_RANGE = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


def _split(record: bytes, delim: bytes, quotes: bool) -> list[bytes]:
    """The fields of one record, with TF's quoting rules (`""` inside quotes is one quote)."""
    fields: list[bytes] = []
    pos, end = 0, len(record)
    if not end:
        return fields  # an empty record has no fields
    while True:
        if quotes and pos < end and record[pos : pos + 1] == b'"':
            pos += 1
            out = bytearray()
            while True:
                if pos >= end:
                    raise errors.invalid_argument("Quoted field has to end with quote followed by delim or end", _OP)
                char = record[pos : pos + 1]
                if char == b'"':
                    if record[pos + 1 : pos + 2] == b'"':
                        out += b'"'
                        pos += 2
                        continue
                    pos += 1
                    break
                out += char
                pos += 1
            if pos < end and record[pos : pos + len(delim)] != delim:
                raise errors.invalid_argument("Quote inside a string has to be escaped by another quote", _OP)
            fields.append(bytes(out))
        else:
            stop = record.find(delim, pos)
            stop = end if stop < 0 else stop
            fields.append(record[pos:stop])
            pos = stop
        if pos >= end:
            return fields
        pos += len(delim)
        if pos == end:
            fields.append(b"")
            return fields


def _default(value: Any, column: int) -> tuple[Any, Any]:
    """(dtype, default value or None when the column is required) of one `record_defaults` entry."""
    if isinstance(value, dtypes.DType) or isinstance(value, type):
        raise ValueError(
            f"Attempt to convert a value ({value!r}) with an unsupported type ({type(value)!r}) to a Tensor."
        )
    tensor = convert_to_tensor(value)
    if tensor.dtype.name not in _ALLOWED:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Value for attr 'OUT_TYPE' of {tensor.dtype.name} is not in "
            "the list of allowed values: float, double, int32, int64, string",
        )
    array = np.asarray(tensor.numpy(), dtype=object if tensor.dtype.name == "string" else None).reshape(-1)
    if array.size > 1:
        raise errors.invalid_argument(
            f"There should only be 1 default per field but field {column} has {array.size}", _OP
        )
    return tensor.dtype, (array[0] if array.size else None)


def _value(text: bytes, dtype: Any, column: int, record: int) -> Any:
    name = dtype.name
    if name == "string":
        return text
    decoded = text.decode("utf-8", errors="replace")
    if name in _INT_RANGE:
        low, high = _INT_RANGE[name]
        if _INT.match(decoded) and low <= int(decoded) <= high:
            return int(decoded)
    else:
        try:
            if "_" not in decoded:
                return float(decoded)
        except ValueError:
            pass
    raise errors.invalid_argument(f"Field {column} in record {record} is not a valid {name}: {decoded}", _OP)


def decode_csv(
    records: Any,
    record_defaults: Any,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: Any = None,
) -> list[Tensor]:
    """Parses CSV records into one tensor per column, as `tf.io.decode_csv`.

    Args:
      records: a string tensor of records (any shape); each output has its shape.
      record_defaults: one entry per output column: a one-element value whose
        dtype (float32, float64, int32, int64 or string) is the column's and whose
        value fills empty fields, or an empty list for a required column.
      field_delim: the one-character field separator.
      use_quote_delim: whether double quotes delimit fields (`""` is a quote).
      na_value: a field equal to it is empty.
      select_cols: the sorted column indices to keep (all columns when None).

    Raises:
      InvalidArgumentError: a record with the wrong number of fields, a field that
        is not a number of its column's type, or a missing required field.
    """
    data = as_string_tensor(records, "records")
    columns = [_default(d, i) for i, d in enumerate(record_defaults)]
    delim = field_delim.encode("utf-8") if isinstance(field_delim, str) else bytes(field_delim)
    na = na_value.encode("utf-8") if isinstance(na_value, str) else bytes(na_value)
    selected = None if select_cols is None else [int(c) for c in select_cols]
    if selected is not None:
        if any(b <= a for a, b in zip(selected, selected[1:])):
            raise ValueError("select_cols is not strictly increasing.")
        if len(selected) != len(columns):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    flat = np.asarray(data.numpy(), dtype=object).reshape(-1)
    values: list[list] = [[] for _ in columns]
    for index, record in enumerate(flat):
        fields = _split(bytes(record), delim, bool(use_quote_delim))
        if selected is None:
            if len(fields) != len(columns):
                raise errors.invalid_argument(
                    f"Expect {len(columns)} fields but have {len(fields)} in record {index}", _OP
                )
            picked = fields
        else:
            if len(fields) <= selected[-1]:
                raise errors.invalid_argument(
                    f"Expect {selected[-1] + 1} fields but have {len(fields)} in record {index}", _OP
                )
            picked = [fields[c] for c in selected]
        for column, (text, (dtype, default)) in enumerate(zip(picked, columns)):
            if text == b"" or (na and text == na):
                if default is None:
                    raise errors.invalid_argument(f"Field {column} is required but missing in record {index}!", _OP)
                values[column].append(default)
            else:
                values[column].append(_value(text, dtype, column, index))
    shape = tuple(data.shape)
    out: list[Tensor] = []
    for (dtype, _), column_values in zip(columns, values):
        if dtype.name == "string":
            array = np.empty(len(column_values), dtype=object)
            array[:] = [bytes(v) for v in column_values]
            out.append(StringTensor(array.reshape(shape)))
        else:
            out.append(constant(np.asarray(column_values, dtype.as_numpy_dtype).reshape(shape), dtype))
    return out


def matching_files(pattern: Any, name: str | None = None) -> StringTensor:
    """The sorted paths matching a glob pattern (or a 1-D tensor of patterns), as `tf.io.matching_files`."""
    patterns = np.asarray(as_string_tensor(pattern, "pattern").numpy(), dtype=object).reshape(-1)
    names = sorted({n for p in patterns for n in glob(path_text(p))})
    array = np.empty(len(names), dtype=object)
    array[:] = [n.encode("utf-8") for n in names]
    return StringTensor(array)


table.export("io.decode_csv", gradient="-", dtypes="string", note="host-side (numpy), TF's quoting rules")(decode_csv)
table.export("io.matching_files", gradient="-", dtypes="string", note="host-side glob, sorted")(matching_files)
