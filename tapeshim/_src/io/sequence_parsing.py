"""`tf.io.parse_single_sequence_example` / `parse_sequence_example`: `SequenceExample`s into tensors.

Context features are parsed as `parse_example` parses features. Sequence
features are `FixedLenSequenceFeature`s (a dense `[steps, *shape]` tensor, padded
to the longest sequence in a batch) or `VarLenFeature`s (a `SparseTensor` indexed
`[step, position]`, or `[example, step, position]`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.io import parsing, wire
from tapeshim._src.io.parsing import FixedLenSequenceFeature, VarLenFeature
from tapeshim._src.ops import table
from tapeshim._src.strings_tensor import as_string_tensor
from tapeshim._src.tensor import constant
from tapeshim._src.typing_aliases import TensorLike

_OP = "ParseSequenceExampleV2"


def _decode(serialized: bytes) -> tuple[dict, dict]:
    """(context {key: (kind, values)}, feature lists {key: [(kind, values), ...]}) of a `SequenceExample`."""
    context: dict = {}
    lists: dict = {}
    try:
        for number, _, body, _ in wire.fields(serialized):
            if number == 1:
                context.update(parsing.decode_features(body))
            elif number == 2:
                for key, payload in parsing.map_entries(body):
                    lists[key] = [parsing.feature(bytes(f)) for n, _, f, _ in wire.fields(payload) if n == 1]
    except wire.DecodeError:
        raise errors.invalid_argument("Could not parse example input", _OP) from None
    return context, lists


def _sequence_configs(sequence_features: dict | None, single: bool) -> list[tuple[str, Any]]:
    configs = sequence_features or {}
    for key, config in configs.items():
        if not isinstance(config, (FixedLenSequenceFeature, VarLenFeature)):
            raise ValueError(f"Unsupported {type(config).__name__} {config} for key '{key}'")
        if isinstance(config, FixedLenSequenceFeature) and config.default_value is not None:
            raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
        parsing._dtype(
            config, "feature_list_sparse_types" if isinstance(config, VarLenFeature) else "feature_list_dense_types"
        )
    sparse = sorted((k, c) for k, c in configs.items() if isinstance(c, VarLenFeature))
    dense = sorted((k, c) for k, c in configs.items() if isinstance(c, FixedLenSequenceFeature))
    return sparse + dense


def _steps(key: str, config: Any, steps: list, index: int) -> list:
    """The checked values of each step of one feature list."""
    dtype = dtypes.as_dtype(config.dtype)
    expected_kind, expected_name = parsing._KINDS[dtype.name]
    size = int(np.prod(parsing._shape(config))) if isinstance(config, FixedLenSequenceFeature) else None
    out = []
    for kind, values in steps:
        if kind is not None and kind != expected_kind:
            raise errors.invalid_argument(
                f"Name: <unknown>, Key: {key}, Index: {index}.  Data types don't match. Expected type: {expected_name}",
                _OP,
            )
        if size is not None and len(values) != size:
            raise errors.invalid_argument(
                f"Name: <unknown>, Key: {key}, Index: {index}.  Number of values != expected.  values size: "
                f"{len(values)} but output shape: {list(parsing._shape(config))}",
                _OP,
            )
        out.append(values)
    return out


def _parse(
    data: np.ndarray, context_features: dict | None, sequence_features: dict | None, single: bool
) -> tuple[dict, dict, dict]:
    if not context_features and not sequence_features:
        raise ValueError("Both context_features and sequence_features are None, but at least one should have values.")
    context_configs = parsing._check(context_features) if context_features else []
    sequence_configs = _sequence_configs(sequence_features, single)
    decoded = [_decode(bytes(item)) for item in data]
    context = parsing.parse_decoded([c for c, _ in decoded], context_configs, single) if context_configs else {}
    lists: dict = {}
    lengths: dict = {}
    for key, config in sequence_configs:
        dtype = dtypes.as_dtype(config.dtype)
        per_example: list[Any] = []  # steps of each example
        for index, (_, feature_lists) in enumerate(decoded):
            if key not in feature_lists:
                if isinstance(config, FixedLenSequenceFeature) and not config.allow_missing:
                    raise errors.invalid_argument(
                        f"Name: <unknown>, Feature list '{key}' is required but could not be found.  Did you mean "
                        "to include it in feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?",
                        _OP,
                    )
                per_example.append([])
            else:
                per_example.append(_steps(key, config, feature_lists[key], index))
        if isinstance(config, VarLenFeature):
            lists[key] = _sparse(per_example, dtype, single)
        else:
            shape = parsing._shape(config)
            longest = max((len(steps) for steps in per_example), default=0)
            fill: Any = b"" if dtype.name == "string" else 0
            batch: np.ndarray = np.empty(
                (len(per_example), longest) + shape, dtype=object if dtype.name == "string" else dtype.as_numpy_dtype
            )
            batch[...] = fill
            for b, steps in enumerate(per_example):
                for t, values in enumerate(steps):
                    batch[b, t] = parsing._array(list(values), dtype).reshape(shape)
            lists[key] = parsing._tensor(batch[0] if single else batch, dtype)
            lengths[key] = constant(np.asarray([len(s) for s in per_example], np.int64), dtypes.int64)
    return context, lists, lengths


def _sparse(per_example: list, dtype: Any, single: bool) -> Any:
    indices, values = [], []
    longest_steps = max((len(steps) for steps in per_example), default=0)
    longest_values = max((len(v) for steps in per_example for v in steps), default=0)
    for b, steps in enumerate(per_example):
        for t, step in enumerate(steps):
            for i, value in enumerate(step):
                indices.append((t, i) if single else (b, t, i))
                values.append(value)
    rank = 2 if single else 3
    dense_shape = [longest_steps, longest_values] if single else [len(per_example), longest_steps, longest_values]
    return parsing._sparse(
        np.asarray(indices, np.int64).reshape(-1, rank), parsing._array(values, dtype), dense_shape, dtype
    )


def parse_single_sequence_example(
    serialized: TensorLike,
    context_features: dict | None = None,
    sequence_features: dict | None = None,
    example_name: TensorLike | None = None,
    name: str | None = None,
) -> tuple[dict, dict]:
    """Parses one serialized `tf.train.SequenceExample` into (context, feature lists), as TF.

    Raises:
      ValueError: no features are given, or a sequence feature is not a
        `FixedLenSequenceFeature` / `VarLenFeature`.
      InvalidArgumentError: a required feature list is missing, or a step has the
        wrong type or number of values.
    """
    data = np.asarray(as_string_tensor(serialized, "serialized").numpy(), dtype=object)
    if data.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    context, lists, _ = _parse(data.reshape(1), context_features, sequence_features, single=True)
    return context, lists


def parse_sequence_example(
    serialized: TensorLike,
    context_features: dict | None = None,
    sequence_features: dict | None = None,
    example_names: TensorLike | None = None,
    name: str | None = None,
) -> tuple[dict, dict, dict]:
    """Parses a vector of serialized `tf.train.SequenceExample`s: (context, feature lists, lengths), as TF.

    Dense sequences are padded to the longest with 0 (or b""); `lengths` gives each
    dense feature list's number of steps per example.
    """
    data = np.asarray(as_string_tensor(serialized, "serialized").numpy(), dtype=object)
    if data.ndim != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {data.ndim} for input serialized.")
    return _parse(data, context_features, sequence_features, single=False)


table.export(
    "io.parse_sequence_example",
    gradient="-",
    dtypes="string",
    note="host-side; FixedLenSequence/VarLen sequence features; some messages differ",
)(parse_sequence_example)
table.export(
    "io.parse_single_sequence_example", gradient="-", dtypes="string", note="host-side; as io.parse_sequence_example"
)(parse_single_sequence_example)
