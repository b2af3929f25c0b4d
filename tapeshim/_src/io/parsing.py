"""`tf.io.parse_single_example` / `parse_example` and the feature configurations they take.

Examples are decoded on the host (they are `tf.string` data); the results are
tensors of TF's dtypes and shapes: dense tensors for `FixedLenFeature` and
`FixedLenSequenceFeature`, `SparseTensor`s for `VarLenFeature`. The result dict
lists sparse features first, then dense ones, each sorted by key, as TF's.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.io import wire
from tapeshim._src.ops import table
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.sparse import SparseTensor
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor
from tapeshim._src.tensor import Tensor, constant
from tapeshim._src.typing_aliases import DTypeLike, TensorLike, TensorShapeLike

_KINDS = {"float32": ("float_list", "float"), "int64": ("int64_list", "int64"), "string": ("bytes_list", "string")}
_KIND_NAMES = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_OP = "ParseExampleV2"


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of fixed shape (`tf.io.FixedLenFeature`): a dense tensor; `default_value` when missing."""

    def __new__(
        cls, shape: TensorShapeLike, dtype: DTypeLike, default_value: TensorLike | None = None
    ) -> "FixedLenFeature":
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length (`tf.io.VarLenFeature`): a `SparseTensor`."""


class FixedLenSequenceFeature(
    collections.namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])
):
    """A sequence of fixed-shape items (`tf.io.FixedLenSequenceFeature`): a dense `[n, *shape]` tensor."""

    def __new__(
        cls,
        shape: TensorShapeLike,
        dtype: DTypeLike,
        allow_missing: bool = False,
        default_value: TensorLike | None = None,
    ) -> "FixedLenSequenceFeature":
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class RaggedFeature(
    collections.namedtuple("RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])
):
    """A feature of any length (`tf.io.RaggedFeature`): a `RaggedTensor` `[batch, None]` (a 1-D tensor for
    one example). Only `partitions=()` is supported: further ragged dimensions raise `ValueError`."""

    def __new__(
        cls,
        dtype: DTypeLike,
        value_key: str | None = None,
        partitions: Any = (),
        row_splits_dtype: DTypeLike | None = None,
        validate: bool = False,
    ) -> "RaggedFeature":
        if partitions:
            raise ValueError("tapeshim's RaggedFeature supports no partitions (only [batch, None] results).")
        splits = dtypes.int32 if row_splits_dtype is None else dtypes.as_dtype(row_splits_dtype)
        return super().__new__(cls, dtype, value_key, tuple(partitions), splits, validate)


def _dtype(config: Any, attr: str) -> Any:
    dtype = dtypes.as_dtype(config.dtype)
    if dtype.name not in _KINDS:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Value for attr '{attr}' of {dtype.name} is not in the list of allowed values: float, int64, string",
        )
    return dtype


def _values(feature: Any, dtype: Any) -> Any:
    """The values of one (validated) feature: a list of bytes or a numpy array."""
    return feature[1]


def _validate(parsed: list, configs: dict, single: bool) -> None:
    """TF's errors for the examples, in TF's order: each example's features as serialized, then missing ones."""
    info = {}
    for key, config in configs.items():
        dtype = dtypes.as_dtype(config.dtype)
        shape = _shape(config) if not isinstance(config, (VarLenFeature, RaggedFeature)) else ()
        info[key] = (config, _KINDS[dtype.name], shape, int(np.prod(shape)))
    required = [
        (key, names[1])
        for key, (config, names, _, _) in info.items()
        if isinstance(config, FixedLenFeature) and config.default_value is None
    ]
    for index, features in enumerate(parsed):
        for key, feature in features.items():
            found = info.get(key)
            if found is None:
                continue
            config, (expected_kind, expected_name), shape, size = found
            kind, count = feature[0], len(feature[1])
            if (
                kind is not None
                and kind != expected_kind
                or (isinstance(config, FixedLenFeature) and count != size)
                or (isinstance(config, FixedLenSequenceFeature) and size and count % size)
            ):
                _raise(key, config, kind, count, expected_kind, expected_name, shape, size, index, single)
        for key, name in required:
            if key not in features:
                where = "" if single else "Name: <unknown>, "
                raise errors.invalid_argument(
                    f"{where}Feature: {key} (data type: {name}) is required but could not be found.", _OP
                )


def _raise(
    key: str,
    config: Any,
    kind: str | None,
    count: int,
    expected_kind: str,
    expected_name: str,
    shape: tuple,
    size: int,
    index: int,
    single: bool,
) -> None:
    """Raises TF's error for one feature of one example that does not fit its configuration."""
    where = "" if single else "Name: <unknown>, "
    at = "." if single else f", Index: {index}."
    if kind is not None and kind != expected_kind:
        actual = _KIND_NAMES[kind]
        if isinstance(config, (VarLenFeature, RaggedFeature)):
            reason = f"Expected type: {expected_name}, Actual type: {actual}"
        else:
            reason = f"Data type: {actual} but expected type: {expected_name}"
        raise errors.invalid_argument(f"{where}Key: {key}{at}  Data types don't match. {reason}", _OP)
    if isinstance(config, FixedLenFeature):
        if single:
            raise errors.invalid_argument(
                f"Key: {key}.  Can't parse serialized Example: Some {expected_kind} slice was not parsed.", _OP
            )
        raise errors.invalid_argument(
            f"{where}Key: {key}{at}  Number of {expected_name} values != expected.  "
            f"Values size: {count} but output shape: {list(shape)}",
            _OP,
        )
    if single:
        raise errors.invalid_argument(
            f"Error while parsing feature with key {key}: number of elements "
            f"should be divisible by {size}, found {count} instead",
            _OP,
        )
    dims = ",".join(["?"] + [str(d) for d in shape])
    raise errors.invalid_argument(
        f"{where}Key: {key}{at}  Number of {expected_name} values is not a "
        f"multiple of stride length. Saw {count} values but output shape is: "
        f"[{dims}]",
        _OP,
    )


def _array(values: list, dtype: Any) -> np.ndarray:
    if dtype.name == "string":
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, dtype=dtype.as_numpy_dtype)


def _tensor(array: np.ndarray, dtype: Any) -> Tensor:
    if dtype.name == "string":
        return StringTensor(array)
    return constant(array, dtype)


def _default(config: Any, dtype: Any, shape: tuple) -> np.ndarray | None:
    if config.default_value is None:
        return None
    if dtype.name == "string":
        array = np.asarray(as_string_tensor(config.default_value).numpy(), dtype=object)
    else:
        array = np.asarray(config.default_value, dtype=dtype.as_numpy_dtype)
    size = int(np.prod(shape))
    if array.size != size:
        raise errors.invalid_argument(
            f"Input to reshape is a tensor with {array.size} values, but the requested shape has {size}", "Reshape"
        )
    return array.reshape(shape)


def _shape(config: Any) -> tuple:
    return tuple(int(d) for d in (config.shape if config.shape is not None else []))


_KIND_OF_FIELD = {1: "bytes_list", 2: "float_list", 3: "int64_list"}


def feature(payload: bytes) -> tuple:
    """(kind, values) of a serialized `Feature`: the last kind set wins, as protobuf's oneof."""
    kind: str | None = None
    values: list[bytes] | np.ndarray = []
    for number, _, body, _ in wire.fields(payload):
        if number not in _KIND_OF_FIELD:
            continue
        if _KIND_OF_FIELD[number] != kind:
            kind, values = _KIND_OF_FIELD[number], []
        parts: list[Any] = []  # bytes of a bytes_list, else arrays
        for inner, wire_type, value, _ in wire.fields(body):
            if inner != 1:
                continue
            if number == 1:
                parts.append(bytes(value))
            elif number == 2:
                parts.append(
                    np.frombuffer(value, "<f4") if wire_type == wire.LENGTH else np.frombuffer(value, "<f4", count=1)
                )
            else:
                ints = wire.unpack_varints(value) if wire_type == wire.LENGTH else [value]
                parts.append(np.asarray(ints, np.uint64).astype(np.int64))
        if number == 1:
            values = list(values) + parts
        else:
            values = np.concatenate([np.asarray(values, np.float32 if number == 2 else np.int64)] + parts)
    return kind, values


def map_entries(data: bytes) -> list[tuple[str, bytes]]:
    """(key, value payload) of each entry of a serialized `map<string, Message>` field's container."""
    out = []
    for entry_number, _, entry, _ in wire.fields(data):
        if entry_number != 1:
            continue
        key, payload = "", b""
        for n, _, v, _ in wire.fields(entry):
            if n == 1:
                key = bytes(v).decode("utf-8", errors="replace")
            elif n == 2:
                payload = bytes(v)
        out.append((key, payload))
    return out


def decode_features(data: bytes) -> dict:
    """{key: (kind, values)} of a serialized `Features` message."""
    return {key: feature(payload) for key, payload in map_entries(data)}


def _decode(serialized: bytes) -> dict:
    """{key: (kind, values)} of a serialized `Example` (decoded straight from the wire format)."""
    try:
        out: dict = {}
        for number, _, example_field, _ in wire.fields(serialized):
            if number == 1:
                out.update(decode_features(example_field))
        return out
    except wire.DecodeError:
        raise errors.invalid_argument(f"Could not parse example input, value: '{serialized[:64]!r}'", _OP) from None


def _check(features: dict) -> list[tuple[str, Any]]:
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    sparse = sorted((k, c) for k, c in features.items() if isinstance(c, VarLenFeature))
    dense = sorted((k, c) for k, c in features.items() if isinstance(c, (FixedLenFeature, FixedLenSequenceFeature)))
    ragged = sorted(
        ((k, c) for k, c in features.items() if isinstance(c, RaggedFeature)),
        key=lambda item: (item[1].value_key is not None, item[0]),
    )  # TF's order
    if len(sparse) + len(dense) + len(ragged) != len(features):
        bad = next(
            c
            for c in features.values()
            if not isinstance(c, (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature, RaggedFeature))
        )
        raise ValueError(f"Unsupported {type(bad).__name__} {bad}.")
    for key, config in dense:
        if isinstance(config, FixedLenSequenceFeature) and not config.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
        if isinstance(config, FixedLenFeature) and config.shape is None:
            raise ValueError(f"Missing shape for feature {key}.")
    split_types: dict[str, str] = {}
    for key, ragged_config in ragged:  # features read from the same Example key share their row-splits type
        source, name = _source(key, ragged_config), ragged_config.row_splits_dtype.name
        if split_types.setdefault(source, name) != name:
            raise ValueError(
                f"Conflicting partition type <dtype: '{split_types[source]}'> vs <dtype: '{name}'> "
                f"for feature {source}."
            )
    return sparse + dense + ragged


def _fixed(config: FixedLenFeature, feature: Any, dtype: Any) -> np.ndarray:
    shape = _shape(config)
    default = _default(config, dtype, shape)
    if feature is None:
        assert default is not None, "validation raises for a missing feature without a default"
        return default
    return _array(_values(feature, dtype), dtype).reshape(shape)


def _sequence(config: FixedLenSequenceFeature, feature: Any, dtype: Any) -> np.ndarray:
    values = [] if feature is None else _values(feature, dtype)
    return _array(values, dtype).reshape((-1,) + _shape(config))


def _sparse(indices: np.ndarray, values: np.ndarray, dense_shape: list, dtype: Any) -> Any:
    return SparseTensor(
        constant(indices.astype(np.int64), dtypes.int64),
        _tensor(values, dtype),
        constant(np.asarray(dense_shape, np.int64), dtypes.int64),
    )


def _serialized(serialized: Any) -> np.ndarray:
    return np.asarray(as_string_tensor(serialized, "serialized").numpy(), dtype=object)


def parse_single_example(
    serialized: TensorLike, features: dict, example_names: TensorLike | None = None, name: str | None = None
) -> dict:
    """Parses one serialized `tf.train.Example` (a scalar string) into tensors, as `tf.io.parse_single_example`.

    Raises:
      ValueError: `serialized` is not a scalar, `features` is empty, or a
        `FixedLenSequenceFeature` does not allow missing values.
      InvalidArgumentError: a required feature is missing, has the wrong type or
        the wrong number of values.
    """
    data = _serialized(serialized)
    if data.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    return _parse(data.reshape(1), features, single=True)


def parse_example(
    serialized: TensorLike, features: dict, example_names: TensorLike | None = None, name: str | None = None
) -> dict:
    """Parses a vector of serialized `tf.train.Example`s into batched tensors, as `tf.io.parse_example`.

    Dense features get a leading batch dimension; `FixedLenSequenceFeature`s are
    padded to the longest sequence with `default_value` (0 or b""); `VarLenFeature`s
    are `SparseTensor`s with indices `[example, position]`. A scalar `serialized`
    is parsed as `parse_single_example` does.
    """
    data = _serialized(serialized)
    if data.ndim == 0:
        return _parse(data.reshape(1), features, single=True)
    if data.ndim != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {data.ndim} for input serialized.")
    return _parse(data, features, single=False)


class SparseFeature(
    collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
):
    """A sparse feature from an index feature and a value feature (`tf.io.SparseFeature`, one index key)."""

    def __new__(
        cls, index_key: Any, value_key: str, dtype: DTypeLike, size: Any, already_sorted: bool = False
    ) -> "SparseFeature":
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _sparse_feature(key: str, config: SparseFeature, parsed: list, single: bool) -> Any:
    """The SparseTensor of a SparseFeature: positions from its index feature, values from its value feature."""
    if not isinstance(config.index_key, str):
        raise ValueError(f"tapeshim's SparseFeature takes one index_key (a string); got {config.index_key!r}.")
    dtype = dtypes.as_dtype(config.dtype)
    size = int(config.size[0] if isinstance(config.size, (list, tuple)) else config.size)
    where = "" if single else "Name: <unknown>, "
    all_indices, all_values = [], []
    for index, features in enumerate(parsed):
        positions = features.get(config.index_key, (None, []))
        values = features.get(config.value_key, (None, []))
        for source, (kind, _), expected in (
            (config.index_key, positions, "int64_list"),
            (config.value_key, values, _KINDS[dtype.name][0]),
        ):
            if kind is not None and kind != expected:
                raise errors.invalid_argument(
                    f"{where}Key: {source}, Index: {index}.  Data types don't match. "
                    f"Expected type: {_KIND_NAMES[expected]}, Actual type: "
                    f"{_KIND_NAMES[kind]}",
                    _OP,
                )
        ids, items = list(np.asarray(positions[1], np.int64)), list(values[1])
        if len(ids) != len(items):
            raise ValueError(f"Dimensions {len(ids)} and {len(items)} are not compatible")
        order = range(len(ids)) if config.already_sorted else sorted(range(len(ids)), key=lambda i: ids[i])
        for i in order:
            all_indices.append((ids[i],) if single else (index, ids[i]))
            all_values.append(items[i])
    rank = 1 if single else 2
    shape = [size] if single else [len(parsed), size]
    return _sparse(np.asarray(all_indices, np.int64).reshape(-1, rank), _array(all_values, dtype), shape, dtype)


def _parse(data: np.ndarray, features: dict, single: bool) -> dict:
    combined = sorted((k, c) for k, c in features.items() if isinstance(c, SparseFeature))
    features = {k: c for k, c in features.items() if not isinstance(c, SparseFeature)}
    if combined and not features:
        for _, config in combined:
            _dtype(config, "sparse_types")
        parsed = [_decode(bytes(item)) for item in data]
        return {key: _sparse_feature(key, config, parsed, single) for key, config in combined}
    configs = _check(features)
    for _, config in combined:
        _dtype(config, "sparse_types")
    for _, config in configs:
        _dtype(
            config,
            "sparse_types"
            if isinstance(config, VarLenFeature)
            else "ragged_value_types"
            if isinstance(config, RaggedFeature)
            else "Tdense",
        )
    for _, config in configs:  # defaults are checked first, as TF builds them before parsing
        if not isinstance(config, (VarLenFeature, RaggedFeature)):
            _default(
                config, dtypes.as_dtype(config.dtype), _shape(config) if isinstance(config, FixedLenFeature) else ()
            )
    parsed = [_decode(bytes(item)) for item in data]
    out = parse_decoded(parsed, configs, single)
    for key, config in combined:  # after the other results, as TF's
        out[key] = _sparse_feature(key, config, parsed, single)
    return out


def _source(key: str, config: Any) -> str:
    """The Example feature a configuration reads (a RaggedFeature's `value_key`, else its own key)."""
    return (config.value_key or key) if isinstance(config, RaggedFeature) else key


def parse_decoded(parsed: list, configs: list, single: bool) -> dict:
    """The result dict for decoded examples (`{key: (kind, values)}` each) and sorted, checked configs."""
    _validate(parsed, {_source(k, c): c for k, c in configs}, single)
    out: dict = {}
    for key, config in configs:
        dtype = dtypes.as_dtype(config.dtype)
        source = _source(key, config)
        maps = [(m[source] if source in m else None) for m in parsed]
        if isinstance(config, RaggedFeature):
            rows = [_values(f, dtype) if f is not None else [] for f in maps]
            values = _tensor(
                _array([v for row in rows for v in row], dtype)
                if dtype.name == "string"
                else np.concatenate([np.asarray(r, dtype.as_numpy_dtype) for r in rows]),
                dtype,
            )
            if single:
                out[key] = values
            else:
                lengths = constant(
                    np.asarray([len(r) for r in rows], config.row_splits_dtype.as_numpy_dtype), config.row_splits_dtype
                )
                out[key] = RaggedTensor.from_row_lengths(values, lengths)
        elif isinstance(config, VarLenFeature):
            rows = [_values(f, dtype) if f is not None else [] for f in maps]
            flat_values = (
                _array([v for row in rows for v in row], dtype)
                if dtype.name == "string"
                else np.concatenate([np.asarray(r, dtype.as_numpy_dtype) for r in rows])
            )
            longest = max((len(r) for r in rows), default=0)
            if single:
                indices = np.arange(len(rows[0]), dtype=np.int64).reshape(-1, 1)
                out[key] = _sparse(indices, flat_values, [len(rows[0])], dtype)
            else:
                pairs = [(b, i) for b, row in enumerate(rows) for i in range(len(row))]
                indices = np.asarray(pairs, np.int64).reshape(-1, 2)
                out[key] = _sparse(indices, flat_values, [len(rows), longest], dtype)
        elif isinstance(config, FixedLenFeature):
            shape = _shape(config)
            if dtype.name != "string" and all(f is not None for f in maps):  # one copy for the whole batch
                flat = np.concatenate([np.asarray(f[1], dtype.as_numpy_dtype) for f in maps if f is not None])
                out[key] = _tensor(flat.reshape(shape if single else (len(maps),) + shape), dtype)
                continue
            arrays = [_fixed(config, f, dtype) for f in maps]
            out[key] = _tensor(arrays[0] if single else np.stack(arrays), dtype)
        else:
            arrays = [_sequence(config, f, dtype) for f in maps]
            if single:
                out[key] = _tensor(arrays[0], dtype)
                continue
            shape = _shape(config)
            longest = max((a.shape[0] for a in arrays), default=0)
            fill: Any = b"" if dtype.name == "string" else 0
            if config.default_value is not None:
                fill = _default(config, dtype, ()) if np.size(config.default_value) == 1 else fill
            batch = np.empty(
                (len(arrays), longest) + shape, dtype=object if dtype.name == "string" else dtype.as_numpy_dtype
            )
            batch[...] = fill
            for b, array in enumerate(arrays):
                batch[b, : array.shape[0]] = array
            out[key] = _tensor(batch, dtype)
    return out


table.export(
    "io.parse_example",
    gradient="-",
    dtypes="string",
    note="host-side; FixedLen/FixedLenSequence/VarLen/Ragged (no partitions)/Sparse (one index key)",
)(parse_example)
table.export("io.parse_single_example", gradient="-", dtypes="string", note="host-side; as io.parse_example")(
    parse_single_example
)
