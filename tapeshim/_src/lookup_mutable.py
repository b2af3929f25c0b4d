"""`tf.lookup.experimental.MutableHashTable` and `DenseHashTable`: tables a program inserts into and reads.

TF keeps a mutable table in a resource its kernels change in place, eagerly and on every call of a
`tf.function`. tapeshim keeps its entries on the host (a dict from key to value row): eagerly each
method changes or reads it at once; inside a `tapeshim.function` each becomes one host callback of
the compiled program (an ordered effect, as TF's stateful ops: it runs on every call, in program
order with the program's other effects), so a function that inserts then looks up sees its own
insert, and an eager `size()` after the call sees what the call did.

Keys and values are TF's dtypes (numbers, bool, strings); a value may be a vector (the default
value's shape). Inside a function, strings can be keys only where they are known when tracing
(tapeshim's strings never enter a compiled program), and string values are looked up eagerly only.

A `DenseHashTable` keeps TF's buckets: the same probing, growth, erased keys' deleted-key markers and
`export()` for integer keys, bucket for bucket. What differs from TF (docs/porting.md): `export()`
lists a `MutableHashTable`'s entries in the order they were first inserted (TF's in its hash order,
which is not specified), and a `DenseHashTable` of string keys places them in other buckets (TF hashes
strings with its own function); keys of a `DenseHashTable` are scalars. Tables are not saved by
`tf.train.Checkpoint`.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from tapeshim._src import dtypes, errors, host_errors, registry
from tapeshim._src.node import OpKey
from tapeshim._src.ops import logging_ops
from tapeshim._src.state import _thread_state
from tapeshim._src.strings_tensor import StringTensor
from tapeshim._src.tensor import Tensor, convert_to_tensor

_STRING_KEYED = ("int64", "int32", "float32", "float64", "bool")
_KERNELS = {  # TF's CPU kernels: key dtype -> the value dtypes of its tables
    "MutableHashTableV2": {
        "string": _STRING_KEYED,
        "int64": ("string", "int64", "int32", "float32", "float64"),
        "int32": ("int32", "float32", "float64"),
    },
    "MutableDenseHashTableV2": {
        "string": _STRING_KEYED,
        "int64": ("int64", "int32", "float32", "float64", "bool"),
        "int32": ("int32", "float32", "float64"),
    },
}
_TF_TYPE_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE"}
_DENSE_LOAD = 0.8  # TF's DenseHashTable grows past this fraction of its buckets in use
_DENSE_BUCKETS = 2**17  # TF's default `initial_num_buckets`


def _converted(value: Any, dtype: dtypes.DType, argument: str) -> Tensor:
    """`value` as a tensor of `dtype`; TF's ValueError names the argument."""
    try:
        return convert_to_tensor(value, dtype=dtype)
    except ValueError as error:
        raise ValueError(f"{argument}: {error}") from None


def _host_values(tensor: Tensor) -> np.ndarray:
    if isinstance(tensor, StringTensor):
        return np.asarray(tensor._array, dtype=object)
    return np.asarray(tensor.numpy())


def _row_key(key: Any) -> Any:
    return key.item() if isinstance(key, np.generic) else key


class _MutableTable:
    """The entries and methods both tables share (see the module docstring)."""

    _op_prefix = "LookupTable"
    _table_op = "MutableHashTableV2"

    def __init__(self, key_dtype: Any, value_dtype: Any, default_value: Any, name: str, checkpoint: bool) -> None:
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        if self._value_dtype.name not in _KERNELS[self._table_op].get(self._key_dtype.name, ()):
            key, value = (_TF_TYPE_NAMES.get(d.name, f"DT_{d.name.upper()}") for d in (key_dtype, value_dtype))
            raise errors.NotFoundError(
                None,
                None,
                f"Could not find device for node: {{{{node {self._table_op}}}}} = {self._table_op}[key_dtype={key}, "
                f"value_dtype={value}] [Op:{self._table_op}]",
            )
        self._default = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._value_shape: tuple[int, ...] = tuple(self._default._shape)
        self._entries: dict[Any, np.ndarray] = {}
        self._given_name, self._checkpoint = name, checkpoint

    # -- the public API ------------------------------------------------------------------------------------
    @property
    def key_dtype(self) -> dtypes.DType:
        """The table's key dtype."""
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        """The table's value dtype."""
        return self._value_dtype

    @property
    def name(self) -> None:
        """None, as TF's eager tables report."""
        return None

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries, an int64 scalar."""
        del name
        (count,) = self._run("Size", lambda: (np.asarray(self._count(), np.int64),), [], [((), dtypes.int64)])
        return count

    def insert(self, keys: Any, values: Any, name: str | None = None) -> None:
        """Sets `values` (shaped `keys.shape + value_shape`) for `keys`; a repeated key keeps its last value.

        Raises:
          ValueError: keys or values of another dtype than the table's.
          InvalidArgumentError: values of another shape.
        """
        del name
        keys = self._keys(keys)
        values = _converted(values, self._value_dtype, "values")
        expected = tuple(keys.shape) + self._value_shape
        if tuple(values.shape) != expected:
            raise errors.invalid_argument(
                f"Expected shape {list(expected)} for value, got {list(values.shape)}", f"{self._op_prefix}InsertV2"
            )

        def insert(key_values: np.ndarray, value_values: np.ndarray) -> tuple:
            flat_keys = key_values.reshape(-1)
            self._check_keys(flat_keys, "InsertV2")
            rows = value_values.reshape((flat_keys.size, *self._value_shape))
            self._grow_for(flat_keys.size)
            for key, row in zip(flat_keys, rows):
                row = np.asarray(row)  # (an object array's element is the object itself)
                self._put(_row_key(key), row.item() if row.ndim == 0 else row.copy())
            return ()

        self._run("InsertV2", insert, [keys, values], [])

    def lookup(self, keys: Any, dynamic_default_values: Any = None, name: str | None = None) -> Tensor:
        """The values of `keys` (shaped `keys.shape + value_shape`), the default value for missing keys
        (or `dynamic_default_values`, of the result's shape).

        Raises:
          ValueError: keys of another dtype than the table's.
        """
        del name
        keys = self._keys(keys)
        shape = tuple(keys.shape) + self._value_shape
        defaults = (
            self._default
            if dynamic_default_values is None
            else convert_to_tensor(dynamic_default_values, dtype=self._value_dtype)
        )

        def find(key_values: np.ndarray, default_values: np.ndarray) -> tuple:
            flat_keys = key_values.reshape(-1)
            self._check_keys(flat_keys, "FindV2")
            out = np.array(np.broadcast_to(default_values, shape), dtype=self._value_dtype._np)
            rows = out.reshape((flat_keys.size, *self._value_shape))
            for index, key in enumerate(flat_keys):
                row = self._get(_row_key(key))
                if row is not None:
                    rows[index] = row
            return (out,)

        if self._value_dtype == dtypes.string:
            if _thread_state.trace is not None:
                raise NotImplementedError(
                    "A table of string values is looked up eagerly only: inside a tapeshim.function its results "
                    "would be strings, which tapeshim's compiled programs do not carry."
                )
            (found,) = find(_host_values(keys), _host_values(defaults))
            return convert_to_tensor(found, dtype=dtypes.string)
        (result,) = self._run("FindV2", find, [keys, defaults], [(shape, self._value_dtype)])
        return result

    def __getitem__(self, keys: Any) -> Tensor:
        """`lookup(keys)`."""
        return self.lookup(keys)

    def remove(self, keys: Any, name: str | None = None) -> None:
        """Removes `keys` from the table (keys it does not hold are ignored)."""
        del name
        keys = self._keys(keys)

        def remove(key_values: np.ndarray) -> tuple:
            flat_keys = key_values.reshape(-1)
            self._check_keys(flat_keys, "Remove")
            for key in flat_keys:
                self._drop(_row_key(key))
            return ()

        self._run("Remove", remove, [keys], [])

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        """`(keys, values)`: every entry of the table (see the module docstring for their order)."""
        del name
        if _thread_state.trace is not None:
            raise NotImplementedError(
                "export() inside a tapeshim.function: its result's size is the table's at run time, which a "
                "compiled program cannot have; export eagerly."
            )
        keys, values = self._exported()
        return convert_to_tensor(keys, dtype=self._key_dtype), convert_to_tensor(values, dtype=self._value_dtype)

    # -- shared machinery ----------------------------------------------------------------------------------
    def _exported(self) -> tuple[np.ndarray, np.ndarray]:
        keys = np.array(list(self._entries), dtype=self._host_dtype(self._key_dtype)).reshape(-1)
        values = np.array(list(self._entries.values()), dtype=self._host_dtype(self._value_dtype))
        return keys, values.reshape((len(self._entries), *self._value_shape))

    @staticmethod
    def _host_dtype(dtype: dtypes.DType) -> Any:
        return object if dtype == dtypes.string else dtype._np

    def _keys(self, keys: Any) -> Tensor:
        return _converted(keys, self._key_dtype, "keys")

    def _check_keys(self, flat_keys: np.ndarray, op: str) -> None:
        """Raises TF's error for keys the table cannot hold (`DenseHashTable`'s empty and deleted keys)."""

    def _grow_for(self, batch: int) -> None:
        """Makes room for a batch of `batch` keys (`DenseHashTable`'s buckets)."""

    def _count(self) -> int:
        return len(self._entries)

    def _put(self, key: Any, row: Any) -> None:
        self._entries[key] = row

    def _get(self, key: Any) -> Any:
        return self._entries.get(key)

    def _drop(self, key: Any) -> None:
        self._entries.pop(key, None)

    def _run(self, op: str, host: Callable[..., tuple], inputs: list[Tensor], avals: list[tuple]) -> list[Tensor]:
        """`host(*input values)` now (eagerly, or on tensors known when tracing), or as an ordered host callback
        of the function being traced; its outputs as tensors of `avals`."""
        op_name = f"{self._op_prefix}{op}"
        if _thread_state.trace is None:
            try:
                outputs = host(*[_host_values(t) for t in inputs])
            except errors.OpError as error:
                raise errors.invalid_argument(error.message, op_name) from None
            return [Tensor(jnp.asarray(o), shape, dtype) for o, (shape, dtype) in zip(outputs, avals)]
        # Inside a function: the op runs at every call of the compiled program, where it stands in program order.
        strings = [t for t in inputs if isinstance(t, StringTensor)]
        known = {id(t): _host_values(t) for t in strings}  # (strings known when tracing: closed over)
        numeric = [t for t in inputs if id(t) not in known]
        structs = tuple(jax.ShapeDtypeStruct(shape, dtype._np) for shape, dtype in avals)

        def on_host(*arrays: np.ndarray) -> tuple:
            given = iter(arrays)
            values = [known[id(t)] if id(t) in known else np.asarray(next(given)) for t in inputs]
            try:
                outputs = host(*values)
            except errors.OpError as error:
                host_errors.fail(errors.invalid_argument(error.message, op_name))
            return tuple(np.asarray(o, dtype=s.dtype) for o, s in zip(outputs, structs))

        ordered = logging_ops.ordered_effects()

        def callback(*arrays: jax.Array) -> tuple:
            results = io_callback(on_host, structs, *[jax.lax.stop_gradient(a) for a in arrays], ordered=ordered)
            return (*results, jnp.zeros((), jnp.int32))

        recorded = registry.record(callback, OpKey(op_name, id(self)), tuple(numeric), (*avals, ((), dtypes.int32)), [])
        _thread_state.trace.effects.append(recorded[-1])  # (the effect's token: the call runs it in order)
        return list(recorded[:-1])


class MutableHashTable(_MutableTable):
    """`tf.lookup.experimental.MutableHashTable`: a table of keys to values that grows as entries are inserted.

    Args:
      key_dtype: the keys' dtype.
      value_dtype: the values' dtype.
      default_value: the value of a missing key; its shape is the values' shape.
      name: the table's name (TF's eager tables report None).
      checkpoint: accepted for TF's signature (tapeshim's checkpoints do not save tables).
      experimental_is_anonymous: accepted for TF's signature.
    """

    def __init__(
        self,
        key_dtype: Any,
        value_dtype: Any,
        default_value: Any,
        name: str = "MutableHashTable",
        checkpoint: bool = True,
        experimental_is_anonymous: bool = False,
    ) -> None:
        del experimental_is_anonymous
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint)


class DenseHashTable(_MutableTable):
    """`tf.lookup.experimental.DenseHashTable`: a mutable table in open-addressed buckets, with reserved
    empty and deleted keys that can never be table keys.

    Args:
      key_dtype: the keys' dtype.
      value_dtype: the values' dtype.
      default_value: the value of a missing key; its shape is the values' shape.
      empty_key: the key marking an unused bucket.
      deleted_key: the key marking a bucket whose entry was erased; not `empty_key`.
      initial_num_buckets: a power of two (TF's default: 2**17); the table doubles them as it fills.
      name: the table's name (TF's eager tables report None).
      checkpoint: accepted for TF's signature (tapeshim's checkpoints do not save tables).
      experimental_is_anonymous: accepted for TF's signature.

    Raises:
      InvalidArgumentError: `empty_key` equal to `deleted_key`, or `initial_num_buckets` not a power of two.
    """

    _table_op = "MutableDenseHashTableV2"

    def __init__(
        self,
        key_dtype: Any,
        value_dtype: Any,
        default_value: Any,
        empty_key: Any,
        deleted_key: Any,
        initial_num_buckets: int | None = None,
        name: str = "MutableDenseHashTable",
        checkpoint: bool = True,
        experimental_is_anonymous: bool = False,
    ) -> None:
        del experimental_is_anonymous
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint)
        self._empty = _host_values(self._keys(empty_key))
        self._deleted = _host_values(self._keys(deleted_key))
        if self._empty.shape != self._deleted.shape or np.array_equal(self._empty, self._deleted):
            raise errors.invalid_argument("Empty and deleted keys cannot be equal", "MutableDenseHashTableV2")
        if self._empty.ndim:
            raise NotImplementedError(
                f"DenseHashTable keys of shape {list(self._empty.shape)}: tapeshim's tables hold scalar keys."
            )
        self._empty_key, self._deleted_key = _row_key(self._empty[()]), _row_key(self._deleted[()])
        buckets = _DENSE_BUCKETS if initial_num_buckets is None else int(initial_num_buckets)
        if buckets <= 0 or buckets & (buckets - 1):
            raise errors.invalid_argument(
                f"Number of buckets must be at least 4 and a power of 2, got: {buckets}", "MutableDenseHashTableV2"
            )
        self._reset_buckets(buckets)

    def insert_or_assign(self, keys: Any, values: Any, name: str | None = None) -> None:
        """`insert(keys, values)`."""
        self.insert(keys, values, name)

    def erase(self, keys: Any, name: str | None = None) -> None:
        """`remove(keys)`."""
        self.remove(keys, name)

    def _check_keys(self, flat_keys: np.ndarray, op: str) -> None:
        for reserved, what in ((self._empty, "empty_key"), (self._deleted, "deleted_key")):
            if np.any(flat_keys == reserved.reshape(-1)[0]):
                raise errors.invalid_argument(f"Using the {what} as a table key is not allowed")

    # TF's buckets: open addressing over a power of two of them, a key's first bucket its value (as an
    # unsigned integer) modulo their number, then triangular probing; an erased key leaves the deleted key
    # (and its old value) in its bucket, which a later insert of any key probing through it takes.
    def _reset_buckets(self, count: int) -> None:
        self._buckets = count
        self._bucket_keys: list[Any] = [self._empty_key] * count
        self._bucket_values = np.zeros((count, *self._value_shape), dtype=self._value_dtype._np)
        self._used = 0

    def _first_bucket(self, key: Any) -> int:
        if isinstance(key, (bytes, str)):  # (TF hashes strings with its own function: another bucket order)
            digest = hashlib.blake2b(key if isinstance(key, bytes) else key.encode(), digest_size=8).digest()
            return int.from_bytes(digest, "little") & (self._buckets - 1)
        return int(key) & (self._buckets - 1)

    def _probe(self, key: Any) -> Any:
        """The buckets `key` probes, in order (endless: callers stop at a match or an empty bucket)."""
        bucket, probes = self._first_bucket(key), 0
        while True:
            yield bucket
            probes += 1
            bucket = (bucket + probes) & (self._buckets - 1)

    def _grow_for(self, batch: int) -> None:
        wanted = self._buckets
        while self._used + batch > _DENSE_LOAD * wanted:
            wanted *= 2
        if wanted == self._buckets:
            return
        entries = [
            (key, self._bucket_values[index])
            for index, key in enumerate(self._bucket_keys)
            if key != self._empty_key and key != self._deleted_key
        ]
        self._reset_buckets(wanted)
        for key, row in entries:
            self._put(key, row)

    def _count(self) -> int:
        return self._used

    def _put(self, key: Any, row: Any) -> None:
        for bucket in self._probe(key):
            held = self._bucket_keys[bucket]
            if held == key:
                self._bucket_values[bucket] = row
                return
            if held == self._empty_key or held == self._deleted_key:
                self._bucket_keys[bucket] = key
                self._bucket_values[bucket] = row
                self._used += 1
                return

    def _find(self, key: Any) -> int | None:
        for bucket in self._probe(key):
            held = self._bucket_keys[bucket]
            if held == key:
                return bucket
            if held == self._empty_key:
                return None
        return None  # (unreachable: the buckets are never all in use)

    def _get(self, key: Any) -> Any:
        bucket = self._find(key)
        return None if bucket is None else self._bucket_values[bucket]

    def _drop(self, key: Any) -> None:
        bucket = self._find(key)
        if bucket is not None:
            self._bucket_keys[bucket] = self._deleted_key
            self._used -= 1

    def _exported(self) -> tuple[np.ndarray, np.ndarray]:
        keys = np.array(self._bucket_keys, dtype=self._host_dtype(self._key_dtype)).reshape(-1, 1)
        values = self._bucket_values
        return keys, values.reshape((self._buckets, 1)) if not self._value_shape else values.copy()
