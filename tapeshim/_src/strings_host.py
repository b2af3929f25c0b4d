"""The engine's element-moving ops on `tf.string` tensors (`tf.reshape`, `tf.concat`, `tf.gather`, ...).

`apply(op, inputs, static)` runs one of the engine's ops (an `OpDef` of the op
table) on inputs among which some are string tensors. Each string input is
replaced by an int64 tensor of *codes* (equal strings share a code, across all
inputs), the engine runs the op on the codes exactly as on any integer tensor
(its shape checks and error messages included), and the codes in the results
are turned back into strings. This serves the ops that only move, select or
compare elements, which are the ones TF registers for strings; any other op
raises the `InvalidArgumentError` TF's kernels raise for a string input.

`registry.apply` calls this when an input has dtype `tf.string`, on its
dispatch-cache miss path (so the hot path pays nothing).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tapeshim._src import dtypes, errors, registry
from tapeshim._src.strings_tensor import StringTensor
from tapeshim._src.tensor import Tensor, constant

# TF op type -> the output positions that hold strings (the others are numeric, e.g. Unique's indices)
_STRING_OUTPUTS = {
    "Reshape": None,
    "Transpose": None,
    "ConcatV2": None,
    "Pack": None,
    "ExpandDims": None,
    "Squeeze": None,
    "StridedSlice": None,
    "SelectV2": None,
    "GatherV2": None,
    "GatherNd": None,
    "Tile": None,
    "BroadcastTo": None,
    "ReverseV2": None,
    "Roll": None,
    "Fill": None,
    "SplitV": None,
    "PadV2": None,
    "Identity": None,
    "Unique": None,
    "Repeat": None,
    "Equal": (),
    "NotEqual": (),
}


def supports(op_name: str) -> bool:
    """Whether the engine op `op_name` runs on string tensors."""
    return op_name in _STRING_OUTPUTS


def apply(op: Any, inputs: Sequence[Tensor], static: tuple = ()) -> tuple:
    """Runs the engine op `op` with string inputs through codes; returns its output tensors.

    Raises:
      InvalidArgumentError: for an op TF does not define on strings, or string and
        numeric inputs where the op needs one dtype.
    """
    if op.name == "Cast":
        target = dtypes.as_dtype(dict(static).get("dtype", "float32"))
        if target is dtypes.string:
            return tuple(inputs)
        names = {"float32": "float", "float64": "double", "float16": "half"}
        raise errors.UnimplementedError(
            None, None, f"Cast string to {names.get(target.name, target.name)} is not supported [Op:Cast]"
        )
    if op.name not in _STRING_OUTPUTS:
        raise errors.invalid_argument(
            f"Value for attr 'T' of string is not in the list of allowed values\n\t; NodeDef: {{{{node {op.name}}}}}",
            op.name,
        )
    strings = [t for t in inputs if t._dtype is dtypes.string]
    flats = [np.asarray(t._value, dtype=object).reshape(-1) for t in strings]
    pool = np.concatenate(flats) if flats else np.empty((0,), object)
    table, inverse = (
        np.unique(pool, return_inverse=True) if pool.size else (np.empty((0,), object), np.empty((0,), np.int64))
    )
    coded, start = [], 0
    for t in inputs:
        if t._dtype is dtypes.string:
            size = int(np.prod(t._shape)) if t._shape else 1
            coded.append(constant(np.asarray(inverse[start : start + size], np.int64).reshape(t._shape)))
            start += size
        else:
            coded.append(t)
    kinds = {t._dtype for t in inputs}
    if op.name in ("Equal", "NotEqual", "ConcatV2", "Pack") and len(kinds) > 1:
        other = next(d for d in kinds if d is not dtypes.string)
        raise errors.invalid_argument(
            f"cannot compute {op.name} as input #1(zero-based) was expected to be a string tensor but is a "
            f"{other.name} tensor",
            op.name,
        )
    outputs = registry.apply(op, coded, static)
    string_positions = _STRING_OUTPUTS[op.name]
    result = []
    for i, out in enumerate(outputs):
        if string_positions is None or i in string_positions:
            codes = np.asarray(out.numpy(), np.int64)
            result.append(StringTensor(table[codes] if table.size else np.empty(codes.shape, object)))
        else:
            result.append(out)
    return tuple(result)
