"""`tf.lookup`: static hash tables, vocabulary tables with out-of-vocabulary buckets, and their initializers.

Design:

* A table's contents are read once, when it is made, into host numpy arrays (object arrays of
  `bytes` for `tf.string`), keyed in insertion order; duplicate keys with different values are
  TF's `FailedPreconditionError`.
* A lookup of string keys runs on the host (string tensors are host values, even inside a
  `tapeshim.function`, where the result is a constant of the trace).
* A lookup of integer keys with numeric values is a JAX kernel (a binary search in the sorted
  keys), so it runs eagerly and inside `tapeshim.function` on traced keys. Integer keys with
  string values need the keys' values on the host: inside a function this raises
  `NotImplementedError`.
* `StaticVocabularyTable` gives an out-of-vocabulary key the bucket TF gives it:
  `Fingerprint64(key) % num_oov_buckets + size`, where an integer key is hashed as its decimal
  text (`strings_hash.fingerprints`). For traced integer keys the hash is a host callback.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.dtypes import DType
from tapeshim._src.io.gfile import path_text
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.sparse import SparseTensor
from tapeshim._src.strings_hash import fingerprints
from tapeshim._src.strings_tensor import StringTensor, host_tensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

# The (key, value) dtypes TF registers a HashTable kernel for.
_REGISTERED = {
    ("string", "string"),
    ("string", "int64"),
    ("string", "int32"),
    ("string", "float32"),
    ("string", "float64"),
    ("string", "bool"),
    ("int64", "string"),
    ("int64", "int64"),
    ("int64", "int32"),
    ("int64", "float32"),
    ("int64", "float64"),
    ("int32", "string"),
    ("int32", "int32"),
    ("int32", "float32"),
    ("int32", "float64"),
}


def _find_impl(keys: jax.Array, table_keys: jax.Array, table_values: jax.Array, default: jax.Array) -> jax.Array:
    """Each key's value in the sorted `table_keys` (binary search), else `default`."""
    if table_keys.shape[0] == 0:
        return jnp.broadcast_to(default, keys.shape)
    position = jnp.clip(jnp.searchsorted(table_keys, keys), 0, table_keys.shape[0] - 1)
    return jnp.where(table_keys[position] == keys, table_values[position], default)


def _host_buckets(keys: np.ndarray, num_buckets: int) -> np.ndarray:
    """TF's out-of-vocabulary bucket of each key: Fingerprint64 of its bytes (integers: decimal text)."""
    flat = np.asarray(keys).reshape(-1)
    if flat.dtype != object:
        texts = np.empty(flat.size, dtype=object)
        texts[:] = [b"%d" % int(k) for k in flat]
        flat = texts
    if flat.size == 0:
        return np.zeros(np.shape(keys), np.int64)
    return (fingerprints(flat) % np.uint64(num_buckets)).astype(np.int64).reshape(np.shape(keys))


def _vocabulary_impl(
    keys: jax.Array, table_keys: jax.Array, table_values: jax.Array, *, num_buckets: int, size: int
) -> jax.Array:
    """Ids of integer keys: the table's value, else the key's hash bucket after the table's ids."""
    ids = _find_impl(keys, table_keys, table_values, jnp.asarray(-1, jnp.int64))
    shape = jax.ShapeDtypeStruct(keys.shape, jnp.int64)
    buckets = jax.pure_callback(functools.partial(_host_buckets, num_buckets=num_buckets), shape, keys)
    return jnp.where(ids != -1, ids, buckets + size)


_FIND = OpDef("LookupTableFindV2", _find_impl, differentiable=False)
_VOCABULARY = OpDef("StaticVocabularyTableLookup", _vocabulary_impl, differentiable=False)


def _host_array(tensor: Tensor) -> np.ndarray:
    """A tensor's value as a flat host array (object array of bytes for strings)."""
    if isinstance(tensor, StringTensor):
        return np.asarray(tensor._array, dtype=object).reshape(-1)
    return np.asarray(tensor.numpy()).reshape(-1)


class TextFileIndex:
    """The special column indices of `TextFileInitializer`: the whole line, or the line number."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class _Initializer:
    """The base of table initializers: the key and value dtypes, and the host key/value arrays."""

    def __init__(self, key_dtype: DType, value_dtype: DType) -> None:
        self._key_dtype = key_dtype
        self._value_dtype = value_dtype

    @property
    def key_dtype(self) -> DType:
        """The dtype of the table's keys."""
        return self._key_dtype

    @property
    def value_dtype(self) -> DType:
        """The dtype of the table's values."""
        return self._value_dtype

    def _contents(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


class KeyValueTensorInitializer(_Initializer):
    """Initializes a table from a tensor of keys and a tensor of values, as `tf.lookup.KeyValueTensorInitializer`.

    Args:
      keys: the keys (a tensor or a value convertible to one).
      values: the values, one per key.
      key_dtype: the keys' dtype (default: inferred from `keys`).
      value_dtype: the values' dtype (default: inferred from `values`).
      name: accepted for compatibility.
    """

    def __init__(
        self,
        keys: TensorLike,
        values: TensorLike,
        key_dtype: DTypeLike | None = None,
        value_dtype: DTypeLike | None = None,
        name: str | None = None,
    ) -> None:
        del name
        self._keys = convert_to_tensor(keys, dtype=key_dtype)
        self._values = convert_to_tensor(values, dtype=value_dtype)
        super().__init__(self._keys.dtype, self._values.dtype)

    def _contents(self) -> tuple[np.ndarray, np.ndarray]:
        if self._keys.shape.as_list() != self._values.shape.as_list():
            raise errors.invalid_argument(
                f"Expected shape {self._keys.shape.as_list()} for value, got {self._values.shape.as_list()}",
                "LookupTableImportV2",
            )
        return _host_array(self._keys), _host_array(self._values)


def _parse(field: str, dtype: DType, line_number: int) -> Any:
    """One field of a vocabulary file as a key or value of `dtype` (TF's parse errors for bad text)."""
    if dtype is dtypes.string:
        return field.encode("utf-8")
    text = field.strip()
    try:
        if dtype.is_integer:
            value = int(text, 10)
            info = np.iinfo(dtype.as_numpy_dtype)
            if not info.min <= value <= info.max:
                raise ValueError(text)
            return value
        return float(text)
    except ValueError:
        raise errors.invalid_argument(
            f"Field {field} in line {line_number} is not a valid {dtype.name}.", "InitializeTableFromTextFileV2"
        ) from None


class TextFileInitializer(_Initializer):
    """Initializes a table from a text file, one entry per line, as `tf.lookup.TextFileInitializer`.

    Each line is split at `delimiter`; the key and the value are the columns at `key_index` and
    `value_index`, or the whole line (`TextFileIndex.WHOLE_LINE`), or the line's number
    (`TextFileIndex.LINE_NUMBER`, int64 only).

    Args:
      filename: the vocabulary file (a local path).
      key_dtype: the keys' dtype.
      key_index: the keys' column, or `TextFileIndex.WHOLE_LINE` / `LINE_NUMBER`.
      value_dtype: the values' dtype.
      value_index: the values' column, or `TextFileIndex.WHOLE_LINE` / `LINE_NUMBER`.
      vocab_size: read only the first `vocab_size` lines (the file must have that many).
      delimiter: the column separator.
      name: accepted for compatibility.
      value_index_offset: added to the line number when `value_index` is `LINE_NUMBER`.

    Raises:
      ValueError: for an empty filename, an index below -2, a line-number column that is not
        int64, or a `vocab_size` below 1.
    """

    def __init__(
        self,
        filename: Any,
        key_dtype: DTypeLike,
        key_index: int,
        value_dtype: DTypeLike,
        value_index: int,
        vocab_size: int | None = None,
        delimiter: str = "\t",
        name: str | None = None,
        value_index_offset: int = 0,
    ) -> None:
        del name
        if filename is None or (isinstance(filename, (str, bytes)) and not filename):
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key = dtypes.as_dtype(key_dtype)
        value = dtypes.as_dtype(value_dtype)
        for label, index in (("key_index", key_index), ("value_index", value_index)):
            if index < -2:
                raise ValueError(f"`{label}` should be >= -2, received: {index}.")
        if key_index == TextFileIndex.LINE_NUMBER and key is not dtypes.int64:
            raise ValueError(f"`key_dtype` must be int64 if `key_index` is {key_index}, received: {key!r}")
        if key_index == TextFileIndex.WHOLE_LINE and not key.is_integer and key is not dtypes.string:
            raise ValueError(
                f"`key_dtype` should be either integer or string for `key_index` {key_index}, received: {key!r}"
            )
        if value_index == TextFileIndex.LINE_NUMBER and value is not dtypes.int64:
            raise ValueError(f"`value_dtype` must be int64 for `value_index` {value_index}, received: {value!r}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._offset = value_index_offset
        super().__init__(key, value)

    def _field(self, index: int, line: str, columns: list[str], number: int, dtype: DType, offset: int = 0) -> Any:
        if index == TextFileIndex.LINE_NUMBER:
            return number + offset
        if index == TextFileIndex.WHOLE_LINE:
            return _parse(line, dtype, number)
        return _parse(columns[index], dtype, number)

    def _lines(self, path: str) -> list[tuple[str, int]]:
        """The file's lines (a final `\\r` dropped), each with the byte offset just after it."""
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as exc:
            raise errors.from_os_error(exc, path) from None
        if not data:
            raise errors.OutOfRangeError(
                None, None, "Read less bytes than requested [Op:InitializeTableFromTextFileV2]"
            )
        lines: list[tuple[str, int]] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            stop = len(data) if end < 0 else end + 1
            raw = data[start : (len(data) if end < 0 else end)]
            lines.append((raw.rstrip(b"\r").decode("utf-8", "surrogateescape"), stop))
            start = stop
        return lines

    def _contents(self) -> tuple[np.ndarray, np.ndarray]:
        path = path_text(self._filename)
        lines = self._lines(path)
        op = "InitializeTableFromTextFileV2"
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise errors.invalid_argument(
                    f"Invalid vocab_size in {path}: expected {self._vocab_size} but got {len(lines)}", op
                )
            lines = lines[: self._vocab_size]
        needed = max(self._key_index, self._value_index) + 1
        keys, values = [], []
        for number, (line, stop) in enumerate(lines):
            if not line:
                raise errors.invalid_argument(f"Invalid content in {path}: empty line found at position {stop}.", op)
            columns = line.split(self._delimiter) if needed > 0 else []
            if len(columns) < needed:
                raise errors.invalid_argument(
                    f"Invalid number of columns in {path} line {number} ({line}) : expected at least {needed} got "
                    f"{len(columns)}",
                    op,
                )
            keys.append(self._field(self._key_index, line, columns, number, self._key_dtype))
            values.append(self._field(self._value_index, line, columns, number, self._value_dtype, self._offset))
        return _as_array(keys, self._key_dtype), _as_array(values, self._value_dtype)


def _as_array(items: list, dtype: DType) -> np.ndarray:
    if dtype is dtypes.string:
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out
    return np.asarray(items, dtype=dtype.as_numpy_dtype).reshape(-1)


def _unique_entries(keys: np.ndarray, values: np.ndarray, op: str) -> tuple[np.ndarray, np.ndarray]:
    """The table's entries in insertion order; a key given two different values is TF's error."""
    seen: dict[Any, Any] = {}
    order: list[int] = []
    for i, (key, value) in enumerate(zip(keys.tolist(), values.tolist())):
        if key in seen:
            if seen[key] != value:
                shown = key.decode("utf-8", "replace") if isinstance(key, bytes) else key
                old, new = (v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in (seen[key], value))
                raise errors.FailedPreconditionError(
                    None,
                    None,
                    f"HashTable has different value for same key. Key {shown} has {old} and trying to add value "
                    f"{new} [Op:{op}]",
                )
            continue
        seen[key] = value
        order.append(i)
    index = np.asarray(order, np.int64)
    return keys[index], values[index]


class _HashTable:
    """A table's host entries and the kernels' sorted inputs (the shared part of both static tables)."""

    def __init__(self, initializer: _Initializer | None, key_dtype: DType, value_dtype: DType) -> None:
        if (key_dtype.name, value_dtype.name) not in _REGISTERED:
            raise errors.NotFoundError(
                None,
                None,
                f"Could not find device for node: {{{{node HashTableV2}}}} = HashTableV2[key_dtype=DT_"
                f"{key_dtype.name.upper()}, value_dtype=DT_{value_dtype.name.upper()}]",
            )
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        if initializer is None:
            keys, values = _as_array([], key_dtype), _as_array([], value_dtype)
        else:
            op = (
                "LookupTableImportV2"
                if isinstance(initializer, KeyValueTensorInitializer)
                else "InitializeTableFromTextFileV2"
            )
            keys, values = _unique_entries(*initializer._contents(), op)
        self.keys, self.values = keys, values
        self.index = {k: i for i, k in enumerate(keys.tolist())}
        if key_dtype is not dtypes.string and value_dtype is not dtypes.string:
            order = np.argsort(keys, kind="stable")
            self.sorted_keys = constant(keys[order], dtype=key_dtype)
            self.sorted_values = constant(values[order], dtype=value_dtype)

    def positions(self, flat_keys: np.ndarray) -> np.ndarray:
        """Each key's row in the table, or -1."""
        index = self.index
        return np.fromiter((index.get(k, -1) for k in flat_keys.tolist()), dtype=np.int64, count=flat_keys.size)

    def host_find(self, keys: Tensor, default: Tensor) -> Tensor:
        """The values of concrete keys (host), as a tensor of the keys' shape."""
        shape = tuple(keys.shape.as_list())
        rows = self.positions(_host_array(keys))
        fill = _host_array(default)[0]
        kind: Any = object if self.value_dtype is dtypes.string else self.value_dtype.as_numpy_dtype
        out: np.ndarray = np.empty(rows.size, dtype=kind)
        out[:] = fill
        hit = rows >= 0
        out[hit] = self.values[rows[hit]]
        return host_tensor(out.reshape(shape), self.value_dtype)


def _concrete_keys(keys: Tensor, what: str) -> Tensor:
    """`keys` if their values are known now; inside a function trace, a clear NotImplementedError."""
    try:
        keys.numpy()
    except errors.OperatorNotAllowedInGraphError:
        raise NotImplementedError(
            f"tapeshim: {what} of traced integer keys inside tapeshim.function is not supported (its result "
            "needs the keys' values on the host). Run the lookup eagerly or in Dataset.map, or pass the keys "
            "as a constant."
        ) from None
    return keys


def _split_composite(keys: Any) -> tuple[Any, Any]:
    """`(flat tensor, rebuild)` for a RaggedTensor or SparseTensor of keys; `(keys, None)` otherwise."""
    if isinstance(keys, RaggedTensor):
        return keys.flat_values, keys.with_flat_values
    if isinstance(keys, SparseTensor):
        return keys.values, lambda values: SparseTensor(keys.indices, values, keys.dense_shape)
    return keys, None


class StaticHashTable:
    """An immutable hash table, initialized once, as `tf.lookup.StaticHashTable`.

    Args:
      initializer: a `KeyValueTensorInitializer` or `TextFileInitializer`.
      default_value: the value for keys not in the table (a scalar of the values' dtype).
      name: the table's name.
      experimental_is_anonymous: accepted for compatibility.

    Raises:
      TypeError: if `default_value` does not convert to the values' dtype.
      ValueError: if `default_value` is not a scalar.
      NotFoundError: for a key/value dtype pair TF has no hash table for.
    """

    def __init__(
        self,
        initializer: _Initializer,
        default_value: TensorLike,
        name: str | None = None,
        experimental_is_anonymous: bool = False,
    ) -> None:
        del experimental_is_anonymous, name
        self._default_value = convert_to_tensor(default_value, dtype=initializer.value_dtype)
        if self._default_value.shape.rank != 0:
            raise ValueError(f"Shapes {self._default_value.shape} and () are not compatible")
        self._table = _HashTable(initializer, initializer.key_dtype, initializer.value_dtype)

    @property
    def key_dtype(self) -> DType:
        """The dtype of the table's keys."""
        return self._table.key_dtype

    @property
    def value_dtype(self) -> DType:
        """The dtype of the table's values."""
        return self._table.value_dtype

    @property
    def default_value(self) -> Tensor:
        """The value of keys not in the table."""
        return self._default_value

    @property
    def name(self) -> str | None:
        """The table's name: None, as eager TF gives (it keeps the name of graph-built tables only)."""
        return None

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries, an int64 scalar."""
        return constant(np.int64(self._table.keys.size))

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The value of each key (the default value for a missing key), of the keys' shape.

        Args:
          keys: a tensor, `RaggedTensor` or `SparseTensor` of the table's key dtype.
          name: accepted for compatibility.

        Returns:
          A tensor (or ragged/sparse tensor, as `keys`) of the values.

        Raises:
          TypeError: if the keys' dtype is not the table's key dtype.
        """
        flat, rebuild = _split_composite(keys)
        if flat.dtype != self.key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self.key_dtype!r}, received: {flat.dtype!r}")
        table = self._table
        if self.key_dtype is dtypes.string:
            result = table.host_find(flat, self._default_value)
        elif self.value_dtype is dtypes.string:
            result = table.host_find(_concrete_keys(flat, "StaticHashTable.lookup to strings"), self._default_value)
        else:
            result = apply(_FIND, (flat, table.sorted_keys, table.sorted_values, self._default_value))[0]
        return result if rebuild is None else rebuild(result)

    __getitem__ = lookup

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        """The table's keys and values, as two 1-D tensors (in insertion order; TF's order is its hash order)."""
        return host_tensor(self._table.keys, self.key_dtype), host_tensor(self._table.values, self.value_dtype)


class StaticVocabularyTable:
    """Maps keys to ids, with hash buckets for out-of-vocabulary keys, as `tf.lookup.StaticVocabularyTable`.

    A key in the table gets its value; any other key gets `Fingerprint64(key) % num_oov_buckets + size`
    (an integer key is hashed as its decimal text), as TF.

    Args:
      initializer: the vocabulary (int64 values, string or int64 keys), or None for buckets only.
      num_oov_buckets: the number of out-of-vocabulary buckets (at least 1).
      lookup_key_dtype: the dtype of the keys `lookup` takes (default: the initializer's key dtype,
        or `tf.string`); an integer dtype is cast to the table's int64 keys.
      name: the table's name.
      experimental_is_anonymous: accepted for compatibility.

    Raises:
      ValueError: if `num_oov_buckets` is below 1.
      TypeError: for values that are not int64 or keys that are neither int64 nor strings.
    """

    def __init__(
        self,
        initializer: _Initializer | None,
        num_oov_buckets: int,
        lookup_key_dtype: DTypeLike | None = None,
        name: str | None = None,
        experimental_is_anonymous: bool = False,
    ) -> None:
        del experimental_is_anonymous
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        key_dtype = dtypes.string if initializer is None else initializer.key_dtype
        if initializer is not None:
            if initializer.value_dtype is not dtypes.int64:
                raise TypeError(
                    f"Invalid `value_dtype`, expected {dtypes.int64!r} but got {initializer.value_dtype!r}."
                )
            if key_dtype not in (dtypes.int64, dtypes.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), but got {key_dtype!r}.")
        lookup_dtype = key_dtype if lookup_key_dtype is None else dtypes.as_dtype(lookup_key_dtype)
        if lookup_dtype is not key_dtype and not (lookup_dtype.is_integer and key_dtype.is_integer):
            raise TypeError(f"Invalid `key_dtype`, expected {key_dtype!r} but got {lookup_dtype!r}.")
        self._name = name
        self._num_oov_buckets = int(num_oov_buckets)
        self._lookup_key_dtype = lookup_dtype
        self._table = _HashTable(initializer, key_dtype, dtypes.int64)

    @property
    def key_dtype(self) -> DType:
        """The dtype of the keys `lookup` takes."""
        return self._lookup_key_dtype

    @property
    def value_dtype(self) -> DType:
        """The dtype of the ids (int64)."""
        return dtypes.int64

    @property
    def name(self) -> str | None:
        """The table's name."""
        return self._name

    def size(self, name: str | None = None) -> Tensor:
        """The vocabulary's size plus the number of out-of-vocabulary buckets, an int64 scalar."""
        return constant(np.int64(self._table.keys.size + self._num_oov_buckets))

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The id of each key: its value in the vocabulary, else its out-of-vocabulary bucket.

        Args:
          keys: a tensor, `RaggedTensor` or `SparseTensor` of the table's lookup key dtype.
          name: accepted for compatibility.

        Returns:
          An int64 tensor (or ragged/sparse tensor, as `keys`) of ids.

        Raises:
          TypeError: if the keys' dtype is not the lookup key dtype.
        """
        flat, rebuild = _split_composite(keys)
        if flat.dtype != self._lookup_key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._lookup_key_dtype!r}, received: {flat.dtype!r}")
        table, size = self._table, self._table.keys.size
        if table.key_dtype is dtypes.string:
            strings = _host_array(flat)
            rows = table.positions(strings)
            ids = np.where(rows >= 0, table.values[np.maximum(rows, 0)] if size else 0, -1).astype(np.int64)
            buckets = _host_buckets(strings, self._num_oov_buckets)
            result = constant(np.where(ids != -1, ids, buckets + size).reshape(tuple(flat.shape.as_list())))
        else:
            if flat.dtype is not dtypes.int64:
                from tapeshim._src.ops import math_ops  # import cycle: ops import tables' users

                flat = math_ops.cast(flat, dtypes.int64)
            static = (("num_buckets", self._num_oov_buckets), ("size", int(size)))
            result = apply(_VOCABULARY, (flat, table.sorted_keys, table.sorted_values), static)[0]
        return result if rebuild is None else rebuild(result)

    __getitem__ = lookup
