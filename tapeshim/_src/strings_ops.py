"""`tf.strings` ops on string tensors: split, case, strip, join, length, substr, regular expressions, n-grams.

They run on the host, element by element, over the numpy object arrays that
hold string tensors (see `strings_tensor.py`); numeric results are ordinary
tensors, token lists are `RaggedTensor`s, as TF's.
"""

from __future__ import annotations

import builtins
import functools
import re
from typing import Any, Callable, Sequence

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor, host_tensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, TensorLike

_len = builtins.len  # `substr` has an argument named `len`, as TF's


def ragged_elementwise(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Makes an op taking a string tensor as first argument also take a RaggedTensor, as TF's dispatch does:
    the op runs on the flat values and the result keeps the row partitions."""

    @functools.wraps(fn)
    def wrapper(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        if isinstance(input, RaggedTensor):
            return input.with_flat_values(fn(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)

    return wrapper


def strings_array(values: Sequence[bytes], shape: tuple) -> np.ndarray:
    """An object array of bytes of `shape` from a flat sequence."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out.reshape(shape)


def map_strings(fn: Callable[[bytes], Any], tensor: StringTensor, dtype: dtypes.DType = dtypes.string) -> Tensor:
    """`fn` applied to every string of `tensor`; the results form a tensor of `dtype`."""
    flat = tensor._array.reshape(-1)
    results = [fn(s) for s in flat]
    if dtype is dtypes.string:
        return StringTensor(strings_array(results, tensor._array.shape))
    return constant(np.asarray(results, dtype.as_numpy_dtype).reshape(tensor._array.shape))


def tokens_result(tokens: list[list[Any]], shape: tuple, values_dtype: dtypes.DType) -> Any:
    """Per-string token lists as TF returns them: a 1-D tensor for a scalar input, else a RaggedTensor
    whose outer dimensions are the input's (uniform) ones."""
    flat_values = [t for row in tokens for t in row]
    if values_dtype is dtypes.string:
        values: Tensor = StringTensor(strings_array(flat_values, (len(flat_values),)))
    else:
        values = constant(np.asarray(flat_values, values_dtype.as_numpy_dtype).reshape(-1))
    if not shape:
        return values
    splits = np.concatenate([[0], np.cumsum([len(row) for row in tokens], dtype=np.int64)])
    result: Any = RaggedTensor(values, constant(splits))
    count = len(tokens)
    for dim in reversed(shape[1:]):
        count //= max(dim, 1) if dim else 1
        outer = np.arange(0, count * dim + 1, dim, dtype=np.int64) if dim else np.zeros(count + 1, np.int64)
        result = RaggedTensor(result, constant(outer), uniform_row_length=dim)
    return result


@ragged_elementwise
def split(input: TensorLike, sep: str | bytes | None = None, maxsplit: int = -1, name: str | None = None) -> Any:  # noqa: A002
    """Splits each string at `sep` (runs of whitespace when None or empty), as `tf.strings.split`.

    Returns:
      A 1-D string tensor for a scalar input; a RaggedTensor of one more dimension otherwise.
    """
    strings = as_string_tensor(input, "input")
    separator = None if sep is None else _as_bytes(sep, "sep")
    if separator == b"":
        separator = None
    limit = int(maxsplit)
    tokens = [s.split(separator, limit) for s in strings._array.reshape(-1)]
    if separator is None and limit > 0:
        # TF's whitespace split emits the (empty) remainder once `maxsplit` tokens are taken
        tokens = [row + [b""] if len(row) == limit else row for row in tokens]
    return tokens_result(tokens, strings._array.shape, dtypes.string)


def _as_bytes(value: Any, name: str) -> bytes:
    if isinstance(value, Tensor):
        value = as_string_tensor(value, name).numpy()
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    raise TypeError(f"Expected string for argument '{name}' not {value!r}.")


def _case(
    input: Any,
    encoding: str,
    ascii_fn: Callable[[bytes], bytes],  # noqa: A002
    text_fn: Callable[[str], str],
) -> Tensor:
    strings = as_string_tensor(input, "input")
    if encoding in ("", None):
        return map_strings(ascii_fn, strings)
    if encoding.lower().replace("-", "") != "utf8":
        raise errors.invalid_argument(f"Unknown encoding: {encoding}", None)
    return map_strings(
        lambda s: text_fn(s.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape"), strings
    )


@ragged_elementwise
def lower(input: TensorLike, encoding: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    """Lower-cases ASCII letters (all letters with `encoding="utf-8"`), as `tf.strings.lower`."""
    return _case(input, encoding, bytes.lower, str.lower)


@ragged_elementwise
def upper(input: TensorLike, encoding: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    """Upper-cases ASCII letters (all letters with `encoding="utf-8"`), as `tf.strings.upper`."""
    return _case(input, encoding, bytes.upper, str.upper)


@ragged_elementwise
def strip(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """Removes leading and trailing whitespace, as `tf.strings.strip`."""
    return map_strings(bytes.strip, as_string_tensor(input, "input"))


def _utf8_starts(s: bytes) -> list[int]:
    """The byte offset of each UTF-8 character of `s` (continuation bytes start none)."""
    return [i for i, b in enumerate(s) if b & 0xC0 != 0x80]


@ragged_elementwise
def length(input: TensorLike, unit: str = "BYTE", name: str | None = None) -> Tensor:  # noqa: A002
    """The length of each string in bytes or (`unit="UTF8_CHAR"`) characters, int32, as `tf.strings.length`."""
    strings = as_string_tensor(input, "input")
    if unit == "BYTE":
        return map_strings(len, strings, dtypes.int32)
    if unit == "UTF8_CHAR":
        return map_strings(lambda s: len(_utf8_starts(s)), strings, dtypes.int32)
    raise ValueError(f"unit must be one of ('BYTE', 'UTF8_CHAR'), got {unit!r}")


def substr(input: TensorLike, pos: TensorLike, len: TensorLike, unit: str = "BYTE", name: str | None = None) -> Tensor:  # noqa: A002
    """The substring of `len` bytes (or characters) from `pos` (negative: from the end), as `tf.strings.substr`.

    Raises:
      InvalidArgumentError: if `pos` is beyond a string's length.
    """
    strings = as_string_tensor(input, "input")
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be one of ('BYTE', 'UTF8_CHAR'), got {unit!r}")
    positions = np.asarray(convert_to_tensor(pos).numpy())
    lengths = np.asarray(convert_to_tensor(len).numpy())
    try:
        s_b, p_b, l_b = np.broadcast_arrays(strings._array, positions, lengths)
    except ValueError:
        raise errors.invalid_argument(
            "pos and len should have the same shape as input or be scalars", "Substr"
        ) from None
    out = []
    for i, (s, p, n) in enumerate(zip(s_b.reshape(-1), p_b.reshape(-1), l_b.reshape(-1))):
        starts = _utf8_starts(s) + [_len(s)] if unit == "UTF8_CHAR" else None
        size = _len(starts) - 1 if starts is not None else _len(s)
        p, n = int(p), int(n)
        if p > size or p < -size:
            raise errors.invalid_argument(f"pos {p} out of range for string {s!r} at index {i}", "Substr")
        p = p + size if p < 0 else p
        stop = min(p + max(n, 0), size)
        out.append(s[starts[p] : starts[stop]] if starts is not None else s[p:stop])
    return StringTensor(strings_array(out, s_b.shape))


def join(inputs: Sequence[Any], separator: str = "", name: str | None = None) -> Tensor:
    """Joins the strings of several (broadcast) tensors element by element, as `tf.strings.join`."""
    tensors = [as_string_tensor(t, "inputs") for t in inputs]
    sep = _as_bytes(separator, "separator")
    if not tensors:
        return StringTensor(strings_array([b""], ()))
    try:
        arrays = np.broadcast_arrays(*[t._array for t in tensors])
    except ValueError:
        raise errors.invalid_argument("Input shapes do not match", "StringJoin") from None
    flat = [a.reshape(-1) for a in arrays]
    joined = [sep.join(parts) for parts in zip(*flat)]
    return StringTensor(strings_array(joined, arrays[0].shape))


def _reduce_join_ragged(rt: RaggedTensor, axis: Any, sep: bytes) -> Any:
    """reduce_join of a RaggedTensor of strings: over all axes, the innermost one, or axis 0 of a 2-D one."""
    flat = np.asarray(rt.flat_values._value)
    if flat.ndim != 1:
        raise ValueError("tapeshim's ragged reduce_join takes ragged tensors with 1-D flat values")
    rank = rt.ragged_rank + 1
    if axis is None:
        return StringTensor(strings_array([sep.join(flat)], ()))
    axis = int(axis) % rank
    if axis == rank - 1:

        def collapse(node: RaggedTensor) -> Any:
            if isinstance(node._values, RaggedTensor):
                return RaggedTensor(collapse(node._values), node._row_splits)
            values = np.asarray(node._values._value)
            return StringTensor(
                strings_array(
                    [sep.join(values[node._splits[i] : node._splits[i + 1]]) for i in range(node.nrows_int())],
                    (node.nrows_int(),),
                )
            )

        return collapse(rt)
    if axis == 0 and rank == 2:
        rows = rt.to_list()
        width = max((_len(r) for r in rows), default=0)
        columns = [sep.join(r[j] for r in rows if _len(r) > j) for j in range(width)]
        return StringTensor(strings_array(columns, (width,)))
    raise ValueError(
        f"tapeshim's ragged reduce_join supports axis=None, the innermost axis, or 0 of a 2-D "
        f"ragged tensor; got axis={axis}"
    )


def reduce_join(
    inputs: TensorLike | RaggedTensor,
    axis: AxisLike = None,
    keepdims: bool = False,
    separator: str = "",
    name: str | None = None,
) -> Any:
    """Joins the strings along `axis` (all axes when None), as `tf.strings.reduce_join`."""
    if isinstance(inputs, RaggedTensor):
        if keepdims:
            raise ValueError("tapeshim's ragged reduce_join does not take keepdims")
        return _reduce_join_ragged(inputs, axis, _as_bytes(separator, "separator"))
    strings = as_string_tensor(inputs, "inputs")
    array = strings._array
    rank = array.ndim
    axes = (
        list(range(rank - 1, -1, -1))
        if axis is None
        else [int(a) for a in np.atleast_1d(convert_to_tensor(axis).numpy() if isinstance(axis, Tensor) else axis)]
    )
    for a in axes:
        if not -rank <= a < max(rank, 1):
            raise errors.invalid_argument(
                f"Invalid reduction dimension {a} for input with {rank} dimensions.", "ReduceJoin"
            )
    axes = list(dict.fromkeys(a % rank for a in axes)) if rank else []
    sep = _as_bytes(separator, "separator")
    kept = [a for a in range(rank) if a not in axes]
    moved = np.transpose(array, kept + axes[::-1]) if rank else array  # the first axis listed varies fastest
    kept_shape = tuple(array.shape[a] for a in kept)
    rows = moved.reshape(*kept_shape, -1) if rank else moved.reshape(1)
    joined = [sep.join(row) for row in rows.reshape(-1, rows.shape[-1] if rows.ndim else 1)]
    result = strings_array(joined, kept_shape)
    if keepdims:
        result = result.reshape([1 if a in axes else array.shape[a] for a in range(rank)])
    return StringTensor(result)


def _compile(pattern: Any, op: str) -> tuple[re.Pattern, re.Pattern | None]:
    """The pattern over text (RE2's ASCII classes: `re.ASCII`) and, for an ASCII pattern, over bytes."""
    raw = _as_bytes(pattern, "pattern")
    text = raw.decode("utf-8", "surrogateescape")
    try:
        return re.compile(text, re.ASCII), re.compile(raw) if raw.isascii() else None
    except re.error as exc:
        raise errors.invalid_argument(f"Invalid pattern: {text}, error: {exc}", op) from None


def _decoded(s: bytes) -> str:
    return s.decode("utf-8", "surrogateescape")


def _python_template(rewrite: str) -> str:
    """RE2's rewrite string (`\\0`..`\\9` are groups, `\\\\` a backslash) as a Python `re` template."""
    out, i = [], 0
    while i < _len(rewrite):
        c = rewrite[i]
        if c == "\\" and i + 1 < _len(rewrite) and (rewrite[i + 1].isdigit() or rewrite[i + 1] == "\\"):
            nxt = rewrite[i + 1]
            out.append(f"\\g<{nxt}>" if nxt.isdigit() else "\\\\")
            i += 2
            continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return "".join(out)


@ragged_elementwise
def regex_replace(
    input: TensorLike,
    pattern: TensorLike,
    rewrite: TensorLike,
    replace_global: bool = True,  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """Replaces matches of the regular expression `pattern` with `rewrite`, as `tf.strings.regex_replace`.

    Patterns are Python `re` expressions over UTF-8 text with RE2's ASCII
    character classes (TF uses RE2, whose common syntax they share); `rewrite`
    uses RE2's `\\1` group references.
    """
    strings = as_string_tensor(input, "input")
    text_pattern, bytes_pattern = _compile(pattern, "StaticRegexReplace")
    template = _python_template(_decoded(_as_bytes(rewrite, "rewrite")))
    bytes_template = template.encode("utf-8", "surrogateescape")
    count = 0 if replace_global else 1

    def replace(s: bytes) -> bytes:
        if bytes_pattern is not None and s.isascii():
            return bytes_pattern.sub(bytes_template, s, count=count)
        return text_pattern.sub(template, _decoded(s), count=count).encode("utf-8", "surrogateescape")

    return map_strings(replace, strings)


@ragged_elementwise
def regex_full_match(input: TensorLike, pattern: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """Whether each whole string matches `pattern` (bool), as `tf.strings.regex_full_match`."""
    strings = as_string_tensor(input, "input")
    text_pattern, bytes_pattern = _compile(pattern, "StaticRegexFullMatch")

    def matches(s: bytes) -> bool:
        if bytes_pattern is not None and s.isascii():
            return bytes_pattern.fullmatch(s) is not None
        return text_pattern.fullmatch(_decoded(s)) is not None

    return map_strings(matches, strings, dtypes.bool_)


@ragged_elementwise
def bytes_split(input: TensorLike, name: str | None = None) -> Any:  # noqa: A002
    """Each string's bytes as one-byte strings (a RaggedTensor; 1-D for a scalar), as `tf.strings.bytes_split`."""
    strings = as_string_tensor(input, "input")
    tokens = [[s[i : i + 1] for i in range(_len(s))] for s in strings._array.reshape(-1)]
    return tokens_result(tokens, strings._array.shape, dtypes.string)


def ngrams(
    data: TensorLike | RaggedTensor,
    ngram_width: Any,
    separator: str = " ",
    pad_values: Any = None,
    padding_width: Any = None,
    preserve_short_sequences: bool = False,
    name: str | None = None,
) -> Any:
    """The n-grams of each row of strings, joined by `separator`, as `tf.strings.ngrams`.

    `data` is a 1-D string tensor or a 2-D RaggedTensor of strings; the result
    has the same kind.
    """
    widths = [int(ngram_width)] if np.ndim(ngram_width) == 0 else [int(w) for w in ngram_width]
    sep = _as_bytes(separator, "separator")
    if isinstance(data, RaggedTensor):
        rows = [[bytes(v) for v in row] for row in data.to_list()]
    else:
        strings = as_string_tensor(data, "data")
        if strings._array.ndim != 1:
            raise ValueError("tapeshim's tf.strings.ngrams takes a 1-D tensor or a 2-D RaggedTensor")
        rows = [list(strings._array)]
    if pad_values is None:
        left = right = None
    elif isinstance(pad_values, (tuple, list)):
        left, right = (_as_bytes(v, "pad_values") for v in pad_values)
    else:
        left = right = _as_bytes(pad_values, "pad_values")
    out_rows = []
    for row in rows:
        grams = []
        for width in widths:
            pad = 0 if left is None else (width - 1 if padding_width is None else int(padding_width))
            padded = row if left is None or right is None else [left] * pad + row + [right] * pad
            count = _len(padded) - width + 1
            if count <= 0 and preserve_short_sequences and row:
                grams.append(sep.join(padded))
            grams.extend(sep.join(padded[i : i + width]) for i in range(max(count, 0)))
        out_rows.append(grams)
    if isinstance(data, RaggedTensor):
        return tokens_result(out_rows, (_len(out_rows),), dtypes.string)
    return host_tensor(strings_array(out_rows[0], (_len(out_rows[0]),)), dtypes.string)
