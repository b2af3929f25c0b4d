"""`tf.ragged.constant`, `tf.ragged.range` and friends."""

from __future__ import annotations

from typing import Any, SupportsInt

import numpy as np

from tapeshim._src import dtypes, ragged_array
from tapeshim._src.ops import array_ops, manip_ops
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.strings_tensor import host_tensor
from tapeshim._src.tensor import constant as dense_constant
from tapeshim._src.tensor import convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

_DEPTH = "all scalar values must have the same nesting depth"


def _scalar_depths(value: Any, depth: int, found: set) -> int:
    """Collects the depths of the scalars of a nested list; returns its deepest list nesting."""
    if isinstance(value, (list, tuple)):
        deepest = depth + 1
        for item in value:
            deepest = max(deepest, _scalar_depths(item, depth + 1, found))
        return deepest
    found.add(depth)
    return depth


def constant(
    pylist: Any,
    dtype: DTypeLike | None = None,
    ragged_rank: int | None = None,
    inner_shape: Any = None,
    name: str | None = None,
    row_splits_dtype: DTypeLike = dtypes.int64,
) -> Any:
    """A ragged tensor from a nested Python list, as `tf.ragged.constant`.

    Args:
      pylist: nested lists of scalars (numbers or strings); the scalars must all
        be at the same depth.
      dtype: the values' dtype (inferred as `tf.constant` does when None).
      ragged_rank: the number of ragged dimensions (default: all but the scalars'
        inner uniform dimensions given by `inner_shape`).
      inner_shape: the shape of each innermost value (uniform dimensions).
      name: ignored.
      row_splits_dtype: int64 (default) or int32.

    Returns:
      A `RaggedTensor`, or a `Tensor` when `ragged_rank` is 0 (a flat list).

    Raises:
      ValueError: for scalars at different depths or inner values of different shapes.
    """
    depths: set = set()
    lists = _scalar_depths(pylist, 0, depths)
    if len(depths) > 1:
        raise ValueError(_DEPTH)
    depth = depths.pop() if depths else lists
    inner_rank = 0 if inner_shape is None else len(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(0, depth - 1 - inner_rank)
    elif not 0 <= ragged_rank < max(depth, 1):
        raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}")
    if ragged_rank == 0:
        return dense_constant(pylist, dtype=dtype)
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    levels: list[list[int]] = []
    items: list = list(pylist)
    for _ in range(ragged_rank):
        lengths = [len(item) for item in items]
        levels.append(lengths)
        items = [child for item in items for child in item]
    if any(isinstance(i, (list, tuple)) for i in items):
        shapes = {np.shape(np.asarray(i, dtype=object)) for i in items}
        if len(shapes) > 1:
            raise ValueError("inner values have inconsistent shape")
    if items:
        values = dense_constant(items, dtype=dtype)
    else:
        inner = tuple(inner_shape) if inner_shape is not None else ()
        target = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        values = convert_to_tensor(np.zeros((0, *inner), target.as_numpy_dtype), dtype=target)
    result: Any = values
    for lengths in reversed(levels):
        splits: np.ndarray = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(
            splits_dtype.as_numpy_dtype
        )
        result = RaggedTensor(result, dense_constant(splits))
    return result


def ragged_range(
    starts: TensorLike,
    limits: TensorLike | None = None,
    deltas: TensorLike = 1,
    dtype: DTypeLike | None = None,
    name: str | None = None,
    row_splits_dtype: DTypeLike = dtypes.int64,
) -> RaggedTensor:
    """One `range(start, limit, delta)` row per element, as `tf.ragged.range`."""
    if limits is None:
        starts, limits = 0, starts
    s, lim, d = (
        convert_to_tensor(v, dtype=dtype) if dtype is not None else convert_to_tensor(v)
        for v in (starts, limits, deltas)
    )
    out_dtype = s.dtype
    s_h, l_h, d_h = np.broadcast_arrays(np.asarray(s.numpy()), np.asarray(lim.numpy()), np.asarray(d.numpy()))
    np_dtype = out_dtype.as_numpy_dtype
    rows = [np.arange(a, b, c, dtype=np_dtype) for a, b, c in zip(s_h.ravel(), l_h.ravel(), d_h.ravel())]
    flat = np.concatenate(rows) if rows else np.zeros((0,), out_dtype.as_numpy_dtype)
    splits = np.concatenate([[0], np.cumsum([len(r) for r in rows], dtype=np.int64)])
    return RaggedTensor(
        dense_constant(flat.astype(out_dtype.as_numpy_dtype)),
        dense_constant(splits.astype(dtypes.as_dtype(row_splits_dtype).as_numpy_dtype)),
    )


def _as_ragged(value: Any, ragged_rank: int) -> RaggedTensor:
    """A RaggedTensor (a dense tensor becomes one with uniform rows)."""
    if isinstance(value, RaggedTensor):
        return value
    tensor = convert_to_tensor(value)
    if tensor.ndim < 2:
        raise ValueError("tf.ragged.stack needs inputs of rank >= 1 to stack into rank >= 2")
    return RaggedTensor.from_tensor(tensor)


def _concat_rows(parts: list) -> Any:
    """Concatenates ragged tensors (or dense tensors) along their rows (axis 0)."""
    if not isinstance(parts[0], RaggedTensor):
        if parts[0].dtype is dtypes.string:
            return host_tensor(np.concatenate([np.asarray(p._value) for p in parts]), dtypes.string)
        return array_ops.concat(parts, 0)
    if any(not isinstance(p, RaggedTensor) or p.ragged_rank != parts[0].ragged_rank for p in parts):
        raise ValueError("tapeshim's tf.ragged.stack takes inputs of one ragged rank")
    splits, offset = [np.zeros(1, np.int64)], 0
    for p in parts:
        splits.append(p._splits[1:] + offset)
        offset += int(p._splits[-1])
    dtype = parts[0].row_splits.dtype.as_numpy_dtype
    return RaggedTensor(_concat_rows([p.values for p in parts]), dense_constant(np.concatenate(splits).astype(dtype)))


def stack(values: Any, axis: int = 0, name: str | None = None) -> RaggedTensor:
    """Stacks ragged (or dense) tensors into a ragged tensor of one more dimension (`axis=0`), as TF's."""
    if int(axis) != 0:
        raise NotImplementedError("tapeshim's tf.ragged.stack supports axis=0 only")
    dense = [convert_to_tensor(v) if not isinstance(v, RaggedTensor) else None for v in values]
    if dense and all(t is not None and t.ndim == 1 for t in dense):  # vectors of any lengths: one row each
        rows = [t for t in dense if t is not None]
        row_ends = np.cumsum([t._shape[0] for t in rows])
        return RaggedTensor(_concat_rows(rows), dense_constant(np.concatenate([[0], row_ends]).astype(np.int32)))
    parts = [_as_ragged(v, 1) for v in values]
    counts = [p.nrows_int() for p in parts]
    splits: np.ndarray = np.concatenate([[0], np.cumsum(counts)]).astype(parts[0].row_splits.dtype.as_numpy_dtype)
    return RaggedTensor(_concat_rows(parts), dense_constant(splits))


def boolean_mask(data: TensorLike, mask: TensorLike, name: str | None = None) -> Any:
    """The elements of `data` where `mask` is True, rows kept ragged, as `tf.ragged.boolean_mask`.

    Supports a dense `data` with a rank-1 or rank-2 `mask`, and a RaggedTensor `data` or `mask`
    (`ragged_array.boolean_mask`).
    """
    if isinstance(data, RaggedTensor) or isinstance(mask, RaggedTensor):
        return ragged_array.boolean_mask(data, mask)
    tensor = convert_to_tensor(data)
    keep = np.asarray(convert_to_tensor(mask, dtype=dtypes.bool_).numpy())
    if keep.ndim == 1:
        return manip_ops.boolean_mask(tensor, dense_constant(keep))
    if keep.ndim != 2 or tuple(tensor.shape[:2]) != keep.shape:
        raise ValueError("tapeshim's tf.ragged.boolean_mask takes a rank-1 or rank-2 mask matching data's shape")
    rows, cols = np.nonzero(keep)
    flat = array_ops.reshape(tensor, [-1, *tensor.shape[2:]]) if tensor.dtype is not dtypes.string else None
    positions = dense_constant((rows * keep.shape[1] + cols).astype(np.int64))
    if flat is None:
        host = np.asarray(tensor._value).reshape(-1, *tensor.shape[2:])
        values = host_tensor(host[np.asarray(positions.numpy())], dtypes.string)
    else:
        values = array_ops.gather(flat, positions)
    lengths = keep.sum(axis=1).astype(np.int64)
    return RaggedTensor(values, dense_constant(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)))


def row_splits_to_segment_ids(splits: TensorLike, name: str | None = None, out_type: DTypeLike | None = None) -> Any:
    """The row of each value given row splits, as `tf.ragged.row_splits_to_segment_ids`."""
    tensor = convert_to_tensor(splits, dtype_hint=dtypes.int64)
    host = np.asarray(tensor.numpy(), np.int64)
    if host.ndim != 1 or host.size == 0:
        raise ValueError("splits must be a non-empty vector")
    target = tensor.dtype if out_type is None else dtypes.as_dtype(out_type)
    return dense_constant(np.repeat(np.arange(host.size - 1), np.diff(host)).astype(target.as_numpy_dtype))


def segment_ids_to_row_splits(
    segment_ids: TensorLike,
    num_segments: SupportsInt | None = None,
    out_type: DTypeLike | None = None,
    name: str | None = None,
) -> Any:
    """Row splits from each value's (sorted) row, as `tf.ragged.segment_ids_to_row_splits`."""
    tensor = convert_to_tensor(segment_ids, dtype_hint=dtypes.int64)
    host = np.asarray(tensor.numpy(), np.int64).reshape(-1)
    count = int(num_segments) if num_segments is not None else (int(host.max()) + 1 if host.size else 0)
    target = tensor.dtype if out_type is None else dtypes.as_dtype(out_type)
    lengths = np.bincount(host, minlength=count)[:count]
    return dense_constant(np.concatenate([[0], np.cumsum(lengths)]).astype(target.as_numpy_dtype))
