"""`tf.sets`: set operations over the last dimension of dense or sparse tensors, on the host.

The results' shapes depend on the values, so these run eagerly (numpy on the host);
inside `tapeshim.function` they raise NotImplementedError. Results are `SparseTensor`s
(`tapeshim/_src/sparse.py`), rows in order and each row's values sorted, as TF's.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import manip_ops, table
from tapeshim._src.sparse import SparseTensor, _host
from tapeshim._src.state import _thread_state
from tapeshim._src.strings_tensor import host_tensor
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_ALLOWED = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.string)
SET_DTYPES = "int8, int16, int32, int64, uint8, uint16, string"


def _eager_only(what: str) -> None:
    if _thread_state.trace is not None:
        raise NotImplementedError(
            f"tf.sets.{what} inside tapeshim.function is not supported: its result's shape "
            "depends on the values. Call it outside the function (for example in tf.data)."
        )


def _as_input(value: Any, name: str) -> Any:
    if isinstance(value, SparseTensor) or hasattr(value, "dense_shape") and hasattr(value, "indices"):
        sp: SparseTensor | Tensor = SparseTensor.from_value(value)
        dtype = sp.dtype
    else:
        sp = convert_to_tensor(value)
        dtype = sp.dtype
    if dtype not in _ALLOWED:
        allowed = ", ".join(f"tf.{d.name}" for d in _ALLOWED)
        raise TypeError(f"'{name}' has invalid dtype `{dtype!r}` not in supported dtypes: `frozenset({{{allowed}}})`.")
    return sp


def _rows(value: Any) -> tuple[tuple, dict]:
    """The leading shape and, per row index, the list of values in that row."""
    if isinstance(value, SparseTensor):
        shape = tuple(int(d) for d in value._shape_host)
        if len(shape) < 2:
            raise errors.invalid_argument(f"Invalid rank {len(shape)}.", "SparseToSparseSetOperation")
        rows: dict = {}
        for index, item in zip(value._index_host, _host(value.values).reshape(-1)):
            rows.setdefault(tuple(int(i) for i in index[:-1]), []).append(item)
        return shape[:-1], rows
    shape = tuple(value._shape)
    if len(shape) < 2:
        raise errors.invalid_argument(
            f"Shape [{','.join(map(str, shape))}] has rank {len(shape)} < 2", "DenseToDenseSetOperation"
        )
    array = _host(value).reshape(-1, shape[-1]) if shape[-1] else np.zeros((int(np.prod(shape[:-1])), 0))
    rows = {}
    for position, index in enumerate(np.ndindex(*shape[:-1])):
        rows[index] = list(array[position])
    return shape[:-1], rows


def _result(lead: tuple, sets: dict, dtype: dtypes.DType) -> SparseTensor:
    width = max((len(s) for s in sets.values()), default=0)
    indices, values = [], []
    for index in np.ndindex(*lead):
        for k, item in enumerate(sets.get(index, [])):
            indices.append(list(index) + [k])
            values.append(item)
    index_array = np.asarray(indices, np.int64).reshape(len(indices), len(lead) + 1)
    if dtype == dtypes.string:
        value_tensor = host_tensor(np.asarray(values, dtype=object), dtypes.string)
    else:
        value_tensor = convert_to_tensor(np.asarray(values, dtype=dtype._np).reshape(-1), dtype=dtype)
    return SparseTensor(index_array, value_tensor, np.asarray(list(lead) + [width], np.int64))


def _set_op(a: Any, b: Any, kind: str, what: str) -> SparseTensor:
    _eager_only(what)
    a_in, b_in = _as_input(a, "a"), _as_input(b, "b")
    if kind != "difference" and isinstance(a_in, SparseTensor) and not isinstance(b_in, SparseTensor):
        a_in, b_in = b_in, a_in  # TF's wrapper puts the dense operand first for symmetric operations
    if a_in.dtype != b_in.dtype:
        raise TypeError(f"Types don't match, {a_in.dtype!r} vs {b_in.dtype!r}.")
    lead_a, rows_a = _rows(a_in)
    lead_b, rows_b = _rows(b_in)
    if lead_a != lead_b:
        op_name = (
            "SparseToSparseSetOperation"
            if isinstance(a_in, SparseTensor)
            else "DenseToSparseSetOperation"
            if isinstance(b_in, SparseTensor)
            else "DenseToDenseSetOperation"
        )
        raise errors.invalid_argument(
            f"Mismatched shapes [{','.join(map(str, lead_a))}] vs [{','.join(map(str, lead_b))}]", op_name
        )
    sets = {}
    for index in np.ndindex(*lead_a):
        x, y = set(rows_a.get(index, [])), set(rows_b.get(index, []))
        if kind == "intersection":
            found = x & y
        elif kind == "union":
            found = x | y
        elif kind == "difference":
            found = x - y
        else:
            found = y - x
        sets[index] = sorted(found)
    return _result(lead_a, sets, a_in.dtype)


@table.export("sets.intersection", gradient="-", dtypes=SET_DTYPES, note="eager only (result shape from values)")
def intersection(a: TensorLike, b: TensorLike, validate_indices: bool = True) -> SparseTensor:
    """The sorted intersection of each row's values of `a` and `b` (last dimension), as a SparseTensor.

    Raises:
      TypeError: a dtype sets do not support, or `a` and `b` of different dtypes.
      InvalidArgumentError: rank below 2, or different leading shapes.
    """
    return _set_op(a, b, "intersection", "intersection")


@table.export("sets.union", gradient="-", dtypes=SET_DTYPES, note="eager only (result shape from values)")
def union(a: TensorLike, b: TensorLike, validate_indices: bool = True) -> SparseTensor:
    """The sorted union of each row's values of `a` and `b` (last dimension), as a SparseTensor.

    Raises:
      TypeError: a dtype sets do not support, or `a` and `b` of different dtypes.
      InvalidArgumentError: rank below 2, or different leading shapes.
    """
    return _set_op(a, b, "union", "union")


@table.export("sets.difference", gradient="-", dtypes=SET_DTYPES, note="eager only (result shape from values)")
def difference(a: TensorLike, b: TensorLike, aminusb: bool = True, validate_indices: bool = True) -> SparseTensor:
    """The sorted difference `a - b` (or `b - a`) of each row's values (last dimension), as a SparseTensor.

    Raises:
      TypeError: a dtype sets do not support, or `a` and `b` of different dtypes.
      InvalidArgumentError: rank below 2, or different leading shapes.
    """
    return _set_op(a, b, "difference" if aminusb else "b_minus_a", "difference")


@table.export("sets.size", gradient="-", dtypes=SET_DTYPES, note="eager only")
def size(a: TensorLike, validate_indices: bool = True) -> Tensor:
    """The number of distinct values in each row (last dimension) of a SparseTensor, as int32.

    Raises:
      TypeError: `a` is not a SparseTensor, or of a dtype sets do not support.
    """
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    _eager_only("size")
    sp = _as_input(a, "a")
    lead, rows = _rows(sp)
    counts = np.zeros(lead, np.int32)
    for index, items in rows.items():
        counts[index] = len(set(items))
    return convert_to_tensor(counts)


# What `unique_with_counts` returns, as TF's tuple (a `count` field, which a typed NamedTuple cannot declare
# over tuple.count).
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


@table.export("unique_with_counts", gradient="-", dtypes=table.ANY, note="x must be known (not traced)")
def unique_with_counts(
    x: TensorLike, out_idx: Any = dtypes.int32, name: str | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """`tf.unique`'s values and indices, and how often each value occurs (in `out_idx`'s dtype)."""
    y, idx = manip_ops.unique(x, out_idx)
    counts = np.bincount(np.asarray(idx.numpy()).reshape(-1), minlength=int(y._shape[0]))
    return UniqueWithCounts(y, idx, convert_to_tensor(counts.astype(dtypes.as_dtype(out_idx).as_numpy_dtype)))
