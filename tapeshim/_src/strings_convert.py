"""`tf.strings` conversions: to_number, as_string, format, and the unicode_* ops (host-side, as TF's kernels)."""

from __future__ import annotations

import codecs
import re
import sys
from typing import Any

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import logging_ops
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.strings_ops import map_strings, ragged_elementwise, strings_array, tokens_result
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

_INT_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_FLOAT_LIMITS = {"float32": 3.4028234663852886e38, "float64": sys.float_info.max}


def _parse_number(text: bytes, dtype: dtypes.DType) -> Any:
    s = text.decode("utf-8", "replace")
    fail = errors.invalid_argument(f"StringToNumberOp could not correctly convert string: {s}", "StringToNumber")
    if dtype.is_integer:
        if not _INT_TEXT.fullmatch(s):
            raise fail
        number = int(s)
        info = np.iinfo(dtype.as_numpy_dtype)
        if not info.min <= number <= info.max:
            raise fail
        return number
    stripped = s.strip()
    value: float | None
    try:
        if "_" in stripped:
            raise ValueError(stripped)
        value = float(stripped)
    except ValueError:
        try:
            value = float.fromhex(stripped) if stripped.lower().lstrip("+-").startswith("0x") else None
        except ValueError:
            value = None
        if value is None:
            raise fail from None
    return value


@ragged_elementwise
def to_number(string_tensor: TensorLike, out_type: DTypeLike = dtypes.float32, name: str | None = None) -> Tensor:
    """Parses each string as a number of `out_type` (float32, float64, int32, int64), as `tf.strings.to_number`.

    Raises:
      InvalidArgumentError: for a string that is not a number of that type.
    """
    strings = as_string_tensor(string_tensor, "string_tensor")
    dtype = dtypes.as_dtype(out_type)
    if dtype not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(
            f"Value passed to parameter 'out_type' has DataType {dtype.name} not in list of allowed "
            "values: float32, float64, int32, int64"
        )
    return map_strings(lambda s: _parse_number(s, dtype), strings, dtype)


def _c_format(fill: str, width: int, precision: int, kind: str) -> str:
    flags = "0" if fill == "0" else ""
    if fill not in ("", " ", "0"):
        raise errors.invalid_argument(f'Fill argument not supported: "{fill}"', "AsString")
    width_text = str(width) if width > -1 else ""
    precision_text = f".{precision}" if precision > -1 else ""
    return f"%{flags}{width_text}{precision_text}{kind}"


@ragged_elementwise
def as_string(
    input: TensorLike,
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,  # noqa: A002
    width: int = -1,
    fill: str = "",
    name: str | None = None,
) -> Tensor:
    """Formats each number as a string (C printf rules, TF's defaults), as `tf.strings.as_string`.

    Raises:
      InvalidArgumentError: for scientific and shortest together, or precision with an integer input.
    """
    tensor = convert_to_tensor(input)
    dtype = tensor.dtype
    if isinstance(tensor, StringTensor):  # every tf.string tensor is one
        fmt = _c_format(fill, width, -1, "s")
        return map_strings(
            lambda s: (fmt % s.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape"), tensor
        )
    if scientific and shortest:
        raise errors.invalid_argument("Cannot select both scientific and shortest notation", "AsString")
    host = np.asarray(tensor.numpy())
    if dtype.is_floating or dtype.is_complex:
        kind = "e" if scientific else "g" if shortest else "f"
        fmt = _c_format(fill, width, precision, kind)
        if dtype.is_complex:
            texts = [f"({fmt % v.real},{fmt % v.imag})" for v in host.reshape(-1)]
        else:  # (C's printf pads inf and nan with spaces, also under the 0 flag)
            spaced = fmt.replace("%0", "%", 1)
            texts = [(fmt if np.isfinite(v) else spaced) % float(v) for v in host.reshape(-1)]
    else:
        if precision > -1 or scientific or shortest:
            raise errors.invalid_argument(
                f"Cannot select precision, scientific or shortest for {dtype.name} input", "AsString"
            )
        if dtype is dtypes.bool_:
            texts = ["true" if v else "false" for v in host.reshape(-1)]
            fmt = _c_format(fill, width, -1, "s")
            texts = [fmt % t for t in texts]
        else:
            fmt = _c_format(fill, width, -1, "d")
            texts = [fmt % int(v) for v in host.reshape(-1)]
    return StringTensor(strings_array([t.encode() for t in texts], host.shape))


def _quoted(item: object) -> str:
    """One element of a string tensor as `tf.strings.format` prints it: its bytes in double quotes."""
    text = item.decode("utf-8", "backslashreplace") if isinstance(item, bytes) else str(item)
    return '"' + text + '"'


def _format_value(tensor: Tensor, summarize: int) -> str:
    if isinstance(tensor, StringTensor):  # every tf.string tensor is one
        array = tensor._array
        if array.ndim == 0:
            return _quoted(array.item())
        threshold = 0 if summarize >= 0 else sys.maxsize
        return np.array2string(
            array,
            separator=" ",
            threshold=threshold,
            edgeitems=max(summarize, 1),
            max_line_width=sys.maxsize,
            formatter={"all": _quoted},
        )
    return logging_ops._format_array(np.asarray(tensor.numpy()), summarize)


def format(
    template: str,
    inputs: Any,
    placeholder: str = "{}",
    summarize: int = 3,  # noqa: A001
    name: str | None = None,
) -> Tensor:
    """Fills the placeholders of `template` with the tensors of `inputs`, printed as `tf.print` does.

    Raises:
      ValueError: if the number of placeholders and inputs differ.
    """
    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    parts = template.split(placeholder)
    if len(parts) - 1 != len(values):
        raise ValueError(
            f"The template expects {len(parts) - 1} tensors, but the inputs only has {len(values)}. "
            "Please ensure the number of placeholders in template matches inputs length."
        )
    texts = [_format_value(convert_to_tensor(v), summarize) for v in values]
    out = parts[0] + "".join(t + p for t, p in zip(texts, parts[1:]))
    return StringTensor(strings_array([out.encode("utf-8")], ()))


_ENCODINGS = {
    "UTF-8": "utf-8",
    "UTF-16-BE": "utf-16-be",
    "UTF-32-BE": "utf-32-be",
    "UTF-16-LE": "utf-16-le",
    "UTF-32-LE": "utf-32-le",
    "US-ASCII": "ascii",
    "ISO-8859-1": "latin-1",
}


def _codec(encoding: str, argument: str) -> str:
    codec = _ENCODINGS.get(str(encoding).upper())
    if codec is None:
        raise errors.invalid_argument(f"Could not create converter for {argument} encoding: {encoding}", None)
    return codec


def _decode_points(s: bytes, codec: str, errors_mode: str, replacement: int) -> list[int]:
    if errors_mode == "strict":
        try:
            text = s.decode(codec)
        except UnicodeDecodeError:
            raise errors.invalid_argument("Invalid formatting on input string", "UnicodeDecode") from None
        return [ord(c) for c in text]
    if errors_mode == "ignore":
        return [ord(c) for c in s.decode(codec, "ignore")]
    if errors_mode != "replace":
        raise ValueError(f"errors must be one of 'strict', 'replace', 'ignore', got {errors_mode!r}")
    return [replacement if c == "\ufffd" else ord(c) for c in s.decode(codec, "replace")]


@ragged_elementwise
def unicode_decode(
    input: TensorLike,
    input_encoding: str,
    errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> Any:
    """Each string's code points (int32; a RaggedTensor, 1-D for a scalar), as `tf.strings.unicode_decode`."""
    strings = as_string_tensor(input, "input")
    codec = _codec(input_encoding, "input")
    rows = []
    for s in strings._array.reshape(-1):
        points = _decode_points(s, codec, errors, replacement_char)
        if replace_control_characters:
            points = [replacement_char if p < 0x20 or 0x7F <= p < 0xA0 else p for p in points]
        rows.append(points)
    return tokens_result(rows, strings._array.shape, dtypes.int32)


def _points_and_offsets(s: bytes, codec: str, errors_mode: str, replacement: int) -> tuple[list, list]:
    """Code points with the byte offset each starts at (an incremental decode, byte by byte)."""
    if errors_mode not in ("strict", "replace", "ignore"):
        raise ValueError(f"errors must be one of 'strict', 'replace', 'ignore', got {errors_mode!r}")
    decoder = codecs.getincrementaldecoder(codec)("strict" if errors_mode == "strict" else errors_mode)
    points, offsets, start = [], [], 0
    for i in range(len(s)):
        try:
            text = decoder.decode(s[i : i + 1])
        except UnicodeDecodeError:
            raise errors.invalid_argument("Invalid formatting on input string", "UnicodeDecodeWithOffsets") from None
        for c in text:
            points.append(replacement if c == "\ufffd" and errors_mode == "replace" else ord(c))
            offsets.append(start)
        if text or decoder.getstate()[0] == b"":
            start = i + 1
    tail = decoder.decode(b"", final=True) if s else ""
    for c in tail:
        points.append(replacement if c == "\ufffd" else ord(c))
        offsets.append(start)
    return points, offsets


def unicode_decode_with_offsets(
    input: TensorLike | RaggedTensor,
    input_encoding: str,
    errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> tuple:
    """`(code points, byte offsets)` of each string, as `tf.strings.unicode_decode_with_offsets`."""
    if isinstance(input, RaggedTensor):
        points, offsets = unicode_decode_with_offsets(
            input.flat_values, input_encoding, errors, replacement_char, replace_control_characters
        )
        return input.with_flat_values(points), input.with_flat_values(offsets)
    strings = as_string_tensor(input, "input")
    codec = _codec(input_encoding, "input")
    pairs = [_points_and_offsets(s, codec, errors, replacement_char) for s in strings._array.reshape(-1)]
    rows = [p for p, _ in pairs]
    if replace_control_characters:
        rows = [[replacement_char if c < 0x20 or 0x7F <= c < 0xA0 else c for c in row] for row in rows]
    return (
        tokens_result(rows, strings._array.shape, dtypes.int32),
        tokens_result([o for _, o in pairs], strings._array.shape, dtypes.int64),
    )


@ragged_elementwise
def unicode_split(
    input: TensorLike,
    input_encoding: str,
    errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533,
    name: str | None = None,
) -> Any:
    """Each string's characters as strings in `input_encoding`, as `tf.strings.unicode_split`."""
    strings = as_string_tensor(input, "input")
    codec = _codec(input_encoding, "input")
    rows = [
        [chr(p).encode(codec, "surrogatepass") for p in _decode_points(s, codec, errors, replacement_char)]
        for s in strings._array.reshape(-1)
    ]
    return tokens_result(rows, strings._array.shape, dtypes.string)


def _encode_points(points: Any, codec: str, errors_mode: str, replacement: int) -> bytes:
    chars = []
    for p in points:
        p = int(p)
        if 0 <= p <= 0x10FFFF and not 0xD800 <= p <= 0xDFFF:
            chars.append(chr(p))
        elif errors_mode == "strict":
            raise errors.invalid_argument(f"Invalid code point: {p}", "UnicodeEncode")
        elif errors_mode == "replace":
            chars.append(chr(replacement))
    return "".join(chars).encode(codec)


def unicode_encode(
    input: TensorLike | RaggedTensor,
    output_encoding: str,
    errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533,
    name: str | None = None,
) -> Tensor:
    """Encodes rows of int32 code points as strings (one rank less), as `tf.strings.unicode_encode`."""
    codec = _codec(output_encoding, "output")
    if isinstance(input, RaggedTensor):
        rows = input.to_list()
        shape: tuple = (len(rows),)
        if rows and isinstance(rows[0], list) and rows[0] and isinstance(rows[0][0], list):
            raise ValueError("tapeshim's tf.strings.unicode_encode takes a 2-D RaggedTensor")
    else:
        host = np.asarray(convert_to_tensor(input).numpy())
        if host.ndim == 0:
            raise ValueError("input must have rank at least 1")
        shape = host.shape[:-1]
        rows = list(host.reshape(-1, host.shape[-1]))
    texts = [_encode_points(row, codec, errors, replacement_char) for row in rows]
    return StringTensor(strings_array(texts, shape))


@ragged_elementwise
def unicode_transcode(
    input: TensorLike,
    input_encoding: str,
    output_encoding: str,
    errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> Tensor:
    """Re-encodes each string from `input_encoding` to `output_encoding`, as `tf.strings.unicode_transcode`."""
    strings = as_string_tensor(input, "input")
    source, target = _codec(input_encoding, "input"), _codec(output_encoding, "output")

    def transcode(s: bytes) -> bytes:
        points = _decode_points(s, source, errors, replacement_char)
        if replace_control_characters:
            points = [replacement_char if p < 0x20 or 0x7F <= p < 0xA0 else p for p in points]
        return _encode_points(points, target, "replace", replacement_char)

    return map_strings(transcode, strings)


def unsorted_segment_join(
    inputs: Any, segment_ids: TensorLike, num_segments: TensorLike, separator: str = "", name: str | None = None
) -> Tensor:
    """Joins the strings of each segment (in input order), as `tf.strings.unsorted_segment_join`.

    Raises:
      InvalidArgumentError: for a segment id out of `[0, num_segments)`.
    """
    strings = as_string_tensor(inputs, "inputs")
    ids = np.asarray(convert_to_tensor(segment_ids).numpy(), np.int64)
    count = int(convert_to_tensor(num_segments).numpy())
    array = strings._array
    if ids.shape != array.shape[: ids.ndim]:
        raise errors.invalid_argument(
            "segment_ids should have the same shape as the prefix of inputs' shape", "UnsortedSegmentJoin"
        )
    if ids.size and (ids.min() < 0 or ids.max() >= count):
        raise errors.invalid_argument(
            "segment_ids are not allowed to exceed num_segments or to have negative values.", "UnsortedSegmentJoin"
        )
    sep = separator.encode("utf-8") if isinstance(separator, str) else bytes(separator)
    inner = array.shape[ids.ndim :]
    rows = array.reshape(ids.size, -1)
    parts: list = [[[] for _ in range(rows.shape[1])] for _ in range(count)]
    for row, segment in zip(rows, ids.reshape(-1)):
        for j, value in enumerate(row):
            parts[segment][j].append(value)
    joined = [sep.join(cell) for seg in parts for cell in seg]
    return StringTensor(strings_array(joined, (count, *inner)))
