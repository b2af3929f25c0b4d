"""TF's structural ops on RaggedTensors: `tf.concat`, `tf.stack`, `tf.tile`, `tf.gather`, `tf.reverse`, ...

The op functions dispatch here (`ops.ragged_hook.ragged_dispatch`) when an operand is a RaggedTensor;
each function takes the op's own arguments. The row partitions are computed on the host with numpy;
the values move with tapeshim's `gather`, so gradients reach the flat values. Results follow TF's:
a RaggedTensor keeps its row-splits dtype, and a dense operand mixed with ragged ones is read as a
RaggedTensor with uniform rows.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tapeshim._src import dtypes, errors, nest
from tapeshim._src.ops import array_ops, manip_ops, math_ops, reduction_ops
from tapeshim._src.ragged import RaggedTensor, _gather_rows
from tapeshim._src.ragged_dispatch import _same_partition
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike


def _splits(values: np.ndarray, like: RaggedTensor) -> Tensor:
    return constant(np.asarray(values).astype(like.row_splits.dtype.as_numpy_dtype))


def _lengths_to_splits(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


def _positions(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The concatenated ranges `range(starts[i], stops[i])`."""
    ranges = [np.arange(a, b, dtype=np.int64) for a, b in zip(starts, stops)]
    return np.concatenate(ranges) if ranges else np.zeros(0, np.int64)


def _axis(axis: Any, rank: int, extra: int = 0) -> int:
    """`axis` normalized to `[0, rank + extra)`, or TF's ValueError."""
    a = int(np.asarray(axis.numpy() if isinstance(axis, Tensor) else axis))
    bound = rank + extra
    if not -bound <= a < bound:
        raise ValueError(f"axis={a} out of bounds: expected {-bound}<=axis<{bound}")
    return a % bound


def _as_ragged(value: Any, ragged_rank: int, splits_dtype: dtypes.DType) -> Any:
    """A dense tensor as a RaggedTensor of `ragged_rank` with uniform rows (a RaggedTensor unchanged)."""
    if isinstance(value, RaggedTensor) or ragged_rank == 0:
        return value
    tensor = convert_to_tensor(value)
    if tensor.ndim <= ragged_rank:
        raise ValueError(f"A dense tensor of rank {tensor.ndim} has no ragged_rank {ragged_rank} partition")
    rows, cols = int(tensor._shape[0]), int(tensor._shape[1])
    inner = array_ops.reshape(tensor, [rows * cols, *tensor._shape[2:]])
    splits: np.ndarray = (np.arange(rows + 1, dtype=np.int64) * cols).astype(splits_dtype.as_numpy_dtype)
    return RaggedTensor(_as_ragged(inner, ragged_rank - 1, splits_dtype), constant(splits), cols)


def _rows(parts: list) -> Any:
    """The rows of `parts` one after the other (axis 0)."""
    if not isinstance(parts[0], RaggedTensor):
        return array_ops.concat(parts, 0)
    offsets, total = [np.zeros(1, np.int64)], 0
    for p in parts:
        offsets.append(p._splits[1:] + total)
        total += int(p._splits[-1])
    return RaggedTensor(_rows([p._values for p in parts]), _splits(np.concatenate(offsets), parts[0]))


def _concat(parts: list, axis: int) -> Any:
    if not isinstance(parts[0], RaggedTensor):
        return array_ops.concat(parts, axis)
    if axis == 0:
        return _rows(parts)
    counts = {p.nrows_int() for p in parts}
    if len(counts) != 1:
        raise errors.invalid_argument("Input tensors at index 0 (=x) and 1 (=y) have incompatible shapes.", None)
    if axis > 1:
        lengths = [np.diff(p._splits) for p in parts]
        if any(not np.array_equal(lengths[0], other) for other in lengths[1:]):
            raise errors.invalid_argument("Input tensors have incompatible shapes.", None)
        return parts[0].with_values(_concat([p._values for p in parts], axis - 1))
    values = _rows([p._values for p in parts])
    offsets = np.cumsum([0] + [int(p._splits[-1]) for p in parts])
    starts = np.stack([p._splits[:-1] + o for p, o in zip(parts, offsets)], axis=1).ravel()
    stops = np.stack([p._splits[1:] + o for p, o in zip(parts, offsets)], axis=1).ravel()
    lengths = sum(np.diff(p._splits) for p in parts)
    return RaggedTensor(_gather_rows(values, _positions(starts, stops)), _splits(_lengths_to_splits(lengths), parts[0]))


def concat(values: Sequence[Any], axis: int, name: str | None = None) -> Any:
    """`tf.concat` of RaggedTensors (and dense tensors, read as uniform rows) along `axis`."""
    values = list(values)
    if len(values) == 1:
        return values[0]
    ragged = [v for v in values if isinstance(v, RaggedTensor)]
    rank = max(v.ndim if isinstance(v, RaggedTensor) else convert_to_tensor(v).ndim for v in values)
    a = _axis(axis, rank)
    ragged_rank = max(r.ragged_rank for r in ragged)
    parts = [_as_ragged(v, ragged_rank, ragged[0].row_splits.dtype) for v in values]
    if any(p.ragged_rank != ragged_rank for p in parts):
        raise ValueError("tapeshim's ragged tf.concat takes inputs of one ragged rank")
    return _concat(parts, a)


def stack(values: Sequence[Any], axis: int = 0, name: str | None = None) -> Any:
    """`tf.stack` of RaggedTensors: a new dimension at `axis` (each input expanded, then concatenated)."""
    values = list(values)
    rank = max(v.ndim if isinstance(v, RaggedTensor) else convert_to_tensor(v).ndim for v in values)
    a = _axis(axis, rank, 1)
    ragged = next(v for v in values if isinstance(v, RaggedTensor))
    parts = [_as_ragged(v, ragged.ragged_rank, ragged.row_splits.dtype) for v in values]
    expanded = [expand_dims(p, a) for p in parts]
    return expanded[0] if len(expanded) == 1 else _concat(expanded, a)


def expand_dims(input: Any, axis: int, name: str | None = None) -> Any:  # noqa: A002 - TF's name
    """`tf.expand_dims` of a RaggedTensor: a uniform dimension of size 1 at `axis`."""
    rt: RaggedTensor = input
    a = _axis(axis, rt.ndim, 1)
    n = rt.nrows_int()
    if a == 0:
        return RaggedTensor(rt, _splits(np.asarray([0, n]), rt), n)
    if a == 1:
        return RaggedTensor(rt, _splits(np.arange(n + 1), rt), 1)
    inner = rt._values
    expanded = expand_dims(inner, a - 1) if isinstance(inner, RaggedTensor) else array_ops.expand_dims(inner, a - 1)
    return RaggedTensor(expanded, rt.row_splits, rt._uniform)


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Any:  # noqa: A002 - TF's name
    """`tf.squeeze` of a RaggedTensor along `axis` (required), each squeezed dimension of size 1."""
    rt: RaggedTensor = input
    if axis is None:
        raise ValueError("Ragged.squeeze must have an axis argument.")
    axes = sorted({_axis(a, rt.ndim) for a in (axis if isinstance(axis, (list, tuple)) else [axis])}, reverse=True)
    result: Any = rt
    for a in axes:
        result = _squeeze_one(result, a)
    return result


def _squeeze_one(value: Any, axis: int) -> Any:
    if not isinstance(value, RaggedTensor):
        return array_ops.squeeze(value, [axis])
    lengths = np.diff(value._splits)
    if axis == 0:
        if value.nrows_int() != 1:
            raise errors.invalid_argument("Can not squeeze dim[0], expected a dimension of 1", None)
        return value._values
    if axis == 1:
        if np.any(lengths != 1):
            raise errors.invalid_argument("Can not squeeze a ragged dimension whose rows are not all 1 long", None)
        inner = value._values
        return inner if not isinstance(inner, RaggedTensor) else RaggedTensor(inner._values, inner.row_splits)
    return value.with_values(_squeeze_one(value._values, axis - 1))


def size(input: Any, out_type: DTypeLike = dtypes.int32, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of values of a RaggedTensor, as `tf.size`."""
    flat = input.flat_values
    return constant(int(np.prod(flat._shape)), dtype=dtypes.as_dtype(out_type))


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The rank of a RaggedTensor, as `tf.rank`."""
    return constant(input.ndim, dtype=dtypes.int32)


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    axis: AxisLike = None,
    batch_dims: int = 0,
    name: str | None = None,
) -> Any:
    """`tf.gather` with ragged `params` (rows at `indices`, axis 0) or ragged `indices` (a ragged result)."""
    if isinstance(indices, RaggedTensor):
        if isinstance(params, RaggedTensor):
            return indices.with_flat_values(gather(params, indices.flat_values))
        return indices.with_flat_values(array_ops.gather(params, indices.flat_values, axis=axis, batch_dims=batch_dims))
    if axis not in (None, 0) or batch_dims != 0:
        raise NotImplementedError("tapeshim's tf.gather of a RaggedTensor supports axis=0 and batch_dims=0 only")
    rt: RaggedTensor = params
    index = np.asarray(convert_to_tensor(indices).numpy())
    if not np.issubdtype(index.dtype, np.integer):
        raise TypeError(f"indices must be int32 or int64, got {index.dtype}")
    bad = (index < 0) | (index >= rt.nrows_int())
    if bad.any():
        raise errors.invalid_argument(
            f"indices[{int(np.argmax(bad.ravel()))}] = {int(index.ravel()[np.argmax(bad.ravel())])} "
            f"is not in [0, {rt.nrows_int()})",
            "RaggedGather",
        )
    if index.ndim == 0:
        return rt[int(index)]
    result: Any = _gather_rows(rt, index.ravel().astype(np.int64))
    for dim in reversed(index.shape[1:]):
        rows = int(np.prod(result.nrows_int())) // max(int(dim), 1) if dim else 0
        result = RaggedTensor(result, _splits(np.arange(rows + 1) * int(dim), rt), int(dim))
    return result


def _tile_rows(rt: RaggedTensor, multiples: list[int]) -> Any:
    """`rt` tiled: its rows `multiples[0]` times, each row's elements `multiples[1]` times, and so on."""
    rows = np.tile(np.arange(rt.nrows_int(), dtype=np.int64), multiples[0])
    chosen = _gather_rows(rt, rows) if multiples[0] != 1 else rt
    lengths = np.diff(chosen._splits)
    starts, stops = np.repeat(chosen._splits[:-1], multiples[1]), np.repeat(chosen._splits[1:], multiples[1])
    values: Any = chosen._values
    if multiples[1] != 1:
        values = _gather_rows(values, _positions(starts, stops))
    rest = [1, *multiples[2:]]
    if any(m != 1 for m in rest):
        values = _tile_rows(values, rest) if isinstance(values, RaggedTensor) else manip_ops.tile(values, rest)
    return RaggedTensor(values, _splits(_lengths_to_splits(lengths * multiples[1]), rt))


def tile(input: Any, multiples: Any, name: str | None = None) -> Any:  # noqa: A002 - TF's name
    """`tf.tile` of a RaggedTensor: each dimension repeated (a ragged row repeats its own elements)."""
    rt: RaggedTensor = input
    counts = [int(m) for m in np.asarray(convert_to_tensor(multiples).numpy()).ravel()]
    if len(counts) != rt.ndim:
        raise errors.invalid_argument(
            f"Expected multiples argument to be a vector of length {rt.ndim} but got length {len(counts)}", "Tile"
        )
    if any(m < 0 for m in counts):
        raise errors.invalid_argument(f"Expected multiples to be non-negative, got {counts}", "Tile")
    return _tile_rows(rt, counts)


def _reverse_one(value: Any, axis: int) -> Any:
    if not isinstance(value, RaggedTensor):
        return manip_ops.reverse(value, [axis])
    if axis == 0:
        return _gather_rows(value, np.arange(value.nrows_int() - 1, -1, -1, dtype=np.int64))
    if axis == 1:
        ranges = [np.arange(b - 1, a - 1, -1, dtype=np.int64) for a, b in zip(value._splits[:-1], value._splits[1:])]
        order = np.concatenate(ranges) if ranges else np.zeros(0, np.int64)
        return RaggedTensor(_gather_rows(value._values, order), value.row_splits, value._uniform)
    return value.with_values(_reverse_one(value._values, axis - 1))


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Any:
    """`tf.reverse` of a RaggedTensor along each of `axis` (a ragged axis reverses within each row)."""
    rt: RaggedTensor = tensor
    listed = np.asarray(axis.numpy() if isinstance(axis, Tensor) else axis).ravel().tolist()
    result: Any = rt
    for a in sorted({_axis(a, rt.ndim) for a in listed}):
        result = _reverse_one(result, a)
    return result


def cumsum(x: Any, axis: AxisLike = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Any:
    """`tf.math.cumsum` of a RaggedTensor: the cumulative sum of the zero-padded dense tensor, cut to the rows."""
    rt: RaggedTensor = x
    _axis(axis, rt.ndim)
    dense = reduction_ops.cumsum(rt.to_tensor(), axis, exclusive=exclusive, reverse=reverse)
    return rt.with_flat_values(manip_ops.gather_nd(dense, constant(rt._dense_coordinates())))


def softmax(logits: Any, axis: AxisLike = None, name: str | None = None) -> Any:
    """`tf.nn.softmax` of a RaggedTensor along `axis` (default the last), with ragged reductions."""
    rt: Any = logits
    a = -1 if axis is None else axis
    shifted = math_ops.exp(rt - math_ops.reduce_max(rt, axis=a, keepdims=True))
    return shifted / math_ops.reduce_sum(shifted, axis=a, keepdims=True)


def map_fn(
    fn: Callable[..., Any],
    elems: Any,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: str | None = None,
    fn_output_signature: Any = None,
) -> Any:
    """`tf.map_fn` over the rows of RaggedTensor elements, eagerly, one call of `fn` per row.

    The outputs are stacked into a dense tensor where they all have one shape and `fn_output_signature`
    names a dtype or TensorSpec; otherwise (no signature: the elements' structure) into RaggedTensors.
    """
    flat = nest.flatten(elems)
    counts = {f.nrows_int() if isinstance(f, RaggedTensor) else int(convert_to_tensor(f)._shape[0]) for f in flat}
    if len(counts) != 1:
        raise ValueError("Elements must all have the same size along dimension 0")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    structure = elems if signature is None else signature
    outputs = [nest.flatten(fn(nest.pack_sequence_as(elems, [f[i] for f in flat]))) for i in range(counts.pop())]
    results = []
    for position, spec in enumerate(nest.flatten(structure)):
        column = [
            o[position] if isinstance(o[position], RaggedTensor) else convert_to_tensor(o[position]) for o in outputs
        ]
        ragged_out = isinstance(spec, RaggedTensor) or not column
        if not ragged_out and signature is not None:
            want = dtypes.as_dtype(getattr(spec, "dtype", spec))
            column = [math_ops.cast(c, want) if c.dtype is not want else c for c in column]
        results.append(_stack_rows(column, ragged_out))
    return nest.pack_sequence_as(structure, results)


def _stack_rows(column: list, ragged_out: bool) -> Any:
    if not ragged_out:
        return array_ops.stack(column)
    if any(isinstance(c, RaggedTensor) for c in column):
        return _rows([expand_dims(c, 0) for c in column])
    lengths = np.asarray([int(c._shape[0]) for c in column], np.int64)
    values = array_ops.concat(column, 0)
    return RaggedTensor(values, constant(_lengths_to_splits(lengths)))


def boolean_mask(data: Any, mask: Any, name: str | None = None) -> Any:
    """`tf.ragged.boolean_mask` with a RaggedTensor `data` or `mask`.

    A mask with `data`'s row partition keeps the values where it is True (the innermost rows shrink);
    a dense vector mask keeps the rows where it is True. A dense `data` is read through a ragged mask's
    partition.

    Raises:
      InvalidArgumentError: for a ragged mask of another partition than `data`.
    """
    if not isinstance(mask, RaggedTensor):
        keep = np.asarray(convert_to_tensor(mask, dtype=dtypes.bool_).numpy())
        if keep.ndim != 1:
            raise NotImplementedError("tapeshim's ragged boolean_mask of a RaggedTensor takes a vector or ragged mask")
        if keep.size != data.nrows_int():
            raise errors.invalid_argument("The mask must have data's number of rows", None)
        return _gather_rows(data, np.nonzero(keep)[0].astype(np.int64))
    if not isinstance(data, RaggedTensor):
        dense = convert_to_tensor(data)
        data = mask.with_flat_values(manip_ops.gather_nd(dense, constant(mask._dense_coordinates())))
    if mask.ragged_rank != data.ragged_rank:
        raise ValueError("mask and data must have the same ragged rank")
    _same_partition(data, mask)
    keep = np.asarray(mask.flat_values.numpy()).astype(bool)
    if keep.ndim != 1:
        raise NotImplementedError("tapeshim's tf.ragged.boolean_mask takes a mask as deep as the ragged dimensions")
    return _mask_innermost(data, keep)


def _mask_innermost(rt: RaggedTensor, keep: np.ndarray) -> RaggedTensor:
    inner = rt._values
    if isinstance(inner, RaggedTensor):
        return RaggedTensor(_mask_innermost(inner, keep), rt.row_splits)
    kept = np.cumsum(np.concatenate([[0], keep.astype(np.int64)]))
    values = _gather_rows(inner, np.nonzero(keep)[0].astype(np.int64))
    return RaggedTensor(values, _splits(kept[rt._splits], rt))
