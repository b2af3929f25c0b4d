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
from tapeshim._src.io.example_proto import Example
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor
from tapeshim._src.tensor import Tensor, constant

_KINDS = {"float32": ("float_list", "float"), "int64": ("int64_list", "int64"), "string": ("bytes_list", "string")}
_KIND_NAMES = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_OP = "ParseExampleV2"


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of fixed shape (`tf.io.FixedLenFeature`): a dense tensor; `default_value` when missing."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> "FixedLenFeature":
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length (`tf.io.VarLenFeature`): a `SparseTensor`."""


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A sequence of fixed-shape items (`tf.io.FixedLenSequenceFeature`): a dense `[n, *shape]` tensor."""

    def __new__(cls, shape: Any, dtype: Any, allow_missing: bool = False,
                default_value: Any = None) -> "FixedLenSequenceFeature":
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


def _dtype(config: Any, attr: str) -> Any:
    dtype = dtypes.as_dtype(config.dtype)
    if dtype.name not in _KINDS:
        raise errors.InvalidArgumentError(None, None, f"Value for attr '{attr}' of {dtype.name} is not in the list "
                                          "of allowed values: float, int64, string")
    return dtype


def _values(feature: Any, dtype: Any) -> list:
    """The values of one (validated) Feature message."""
    kind = feature.WhichOneof("kind")
    return [] if kind is None else list(getattr(feature, kind).value)


def _validate(parsed: list, configs: list, single: bool) -> None:
    """TF's errors for the examples, in TF's order: each example's features as serialized, then missing ones."""
    for index, features in enumerate(parsed):
        where = "" if single else "Name: <unknown>, "
        at = "." if single else f", Index: {index}."
        for key, feature in features.items():
            config = configs.get(key)
            if config is None:
                continue
            dtype = dtypes.as_dtype(config.dtype)
            expected_kind, expected_name = _KINDS[dtype.name]
            kind = feature.WhichOneof("kind")
            if kind is not None and kind != expected_kind:
                actual = _KIND_NAMES[kind]
                if isinstance(config, VarLenFeature):
                    reason = f"Expected type: {expected_name}, Actual type: {actual}"
                else:
                    reason = f"Data type: {actual} but expected type: {expected_name}"
                raise errors.invalid_argument(f"{where}Key: {key}{at}  Data types don't match. {reason}", _OP)
            count = 0 if kind is None else len(getattr(feature, kind).value)
            shape = _shape(config) if not isinstance(config, VarLenFeature) else ()
            size = int(np.prod(shape))
            if isinstance(config, FixedLenFeature) and count != size:
                if single:
                    raise errors.invalid_argument(f"Key: {key}.  Can't parse serialized Example: Some {expected_kind} "
                                                  "slice was not parsed.", _OP)
                raise errors.invalid_argument(f"{where}Key: {key}{at}  Number of {expected_name} values != expected.  "
                                              f"Values size: {count} but output shape: {list(shape)}", _OP)
            if isinstance(config, FixedLenSequenceFeature) and size and count % size:
                if single:
                    raise errors.invalid_argument(f"Error while parsing feature with key {key}: number of elements "
                                                  f"should be divisible by {size}, found {count} instead", _OP)
                dims = ",".join(["?"] + [str(d) for d in shape])
                raise errors.invalid_argument(f"{where}Key: {key}{at}  Number of {expected_name} values is not a "
                                              f"multiple of stride length. Saw {count} values but output shape is: "
                                              f"[{dims}]", _OP)
        for key, config in configs.items():
            if isinstance(config, FixedLenFeature) and config.default_value is None and key not in features:
                name = _KINDS[dtypes.as_dtype(config.dtype).name][1]
                raise errors.invalid_argument(f"{where}Feature: {key} (data type: {name}) is required but could "
                                              "not be found.", _OP)


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
        raise errors.invalid_argument(f"Input to reshape is a tensor with {array.size} values, but the requested "
                                      f"shape has {size}", "Reshape")
    return array.reshape(shape)


def _shape(config: Any) -> tuple:
    return tuple(int(d) for d in (config.shape if config.shape is not None else []))


def _decode(serialized: bytes) -> Any:
    try:
        return Example.FromString(serialized).features.feature
    except (wire.DecodeError, ValueError):
        raise errors.invalid_argument("Could not parse example input, value: "
                                      f"'{serialized[:64]!r}'", _OP) from None


def _check(features: dict) -> list[tuple[str, Any]]:
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    sparse = sorted((k, c) for k, c in features.items() if isinstance(c, VarLenFeature))
    dense = sorted((k, c) for k, c in features.items() if isinstance(c, (FixedLenFeature, FixedLenSequenceFeature)))
    if len(sparse) + len(dense) != len(features):
        bad = next(c for c in features.values() if not isinstance(
            c, (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature)))
        raise ValueError(f"Unsupported {type(bad).__name__} {bad}.")
    for key, config in dense:
        if isinstance(config, FixedLenSequenceFeature) and not config.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
        if isinstance(config, FixedLenFeature) and config.shape is None:
            raise ValueError(f"Missing shape for feature {key}.")
    return sparse + dense


def _fixed(config: FixedLenFeature, feature: Any, dtype: Any) -> np.ndarray:
    shape = _shape(config)
    default = _default(config, dtype, shape)
    if feature is None:
        return default
    return _array(_values(feature, dtype), dtype).reshape(shape)


def _sequence(config: FixedLenSequenceFeature, feature: Any, dtype: Any) -> np.ndarray:
    values = [] if feature is None else _values(feature, dtype)
    return _array(values, dtype).reshape((-1,) + _shape(config))


def _sparse(indices: np.ndarray, values: np.ndarray, dense_shape: list, dtype: Any) -> Any:
    from tapeshim._src.sparse import SparseTensor

    return SparseTensor(constant(indices.astype(np.int64), dtypes.int64), _tensor(values, dtype),
                        constant(np.asarray(dense_shape, np.int64), dtypes.int64))


def _serialized(serialized: Any) -> np.ndarray:
    return np.asarray(as_string_tensor(serialized, "serialized").numpy(), dtype=object)


def parse_single_example(serialized: Any, features: dict, example_names: Any = None,
                         name: str | None = None) -> dict:
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


def parse_example(serialized: Any, features: dict, example_names: Any = None, name: str | None = None) -> dict:
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


def _parse(data: np.ndarray, features: dict, single: bool) -> dict:
    configs = _check(features)
    for _, config in configs:
        _dtype(config, "sparse_types" if isinstance(config, VarLenFeature) else "Tdense")
    for _, config in configs:  # defaults are checked first, as TF builds them before parsing
        if not isinstance(config, VarLenFeature):
            _default(config, dtypes.as_dtype(config.dtype), _shape(config) if isinstance(config, FixedLenFeature)
                     else ())
    parsed = [_decode(bytes(item)) for item in data]
    _validate(parsed, dict(configs), single)
    out: dict = {}
    for key, config in configs:
        dtype = dtypes.as_dtype(config.dtype)
        maps = [(m[key] if key in m else None) for m in parsed]
        if isinstance(config, VarLenFeature):
            rows = [_values(f, dtype) if f is not None else [] for f in maps]
            values = _array([v for row in rows for v in row], dtype)
            longest = max((len(r) for r in rows), default=0)
            if single:
                indices = np.arange(len(rows[0]), dtype=np.int64).reshape(-1, 1)
                out[key] = _sparse(indices, values, [len(rows[0])], dtype)
            else:
                pairs = [(b, i) for b, row in enumerate(rows) for i in range(len(row))]
                indices = np.asarray(pairs, np.int64).reshape(-1, 2)
                out[key] = _sparse(indices, values, [len(rows), longest], dtype)
        elif isinstance(config, FixedLenFeature):
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
            batch = np.empty((len(arrays), longest) + shape, dtype=object if dtype.name == "string"
                             else dtype.as_numpy_dtype)
            batch[...] = fill
            for b, array in enumerate(arrays):
                batch[b, :array.shape[0]] = array
            out[key] = _tensor(batch, dtype)
    return out
