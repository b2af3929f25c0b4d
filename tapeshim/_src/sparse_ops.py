"""More `tf.sparse` ops: reshape, concat, slice, expand_dims, retain, transpose, fill_empty_rows, reduce_max, eye.

The index arithmetic runs on the host (numpy); values are selected with
tapeshim's `gather` (strings on the host), so gradients reach numeric values.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tapeshim._src import dtypes, errors, registry
from tapeshim._src.ops import array_ops, manip_ops, math_ops
from tapeshim._src.ops.common import dtype_check, gradient_not_registered
from tapeshim._src.sparse import (
    SparseTensor,
    _check_bounds,
    _host,
    _sparse,
    present,
    present_entries,
    reorder,
    to_dense,
)
from tapeshim._src.strings_tensor import host_tensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, ShapeLike, TensorLike

_NO_GRADIENT_MAX = registry.OpDef("SparseReduceMax", lambda x: gradient_not_registered("SparseReduceMax")(x), True)


def _take(values: Tensor, positions: np.ndarray) -> Tensor:
    """`values[positions]`: a tapeshim gather for numbers (differentiable), numpy for strings."""
    positions = np.asarray(positions, np.int64).reshape(-1)
    if values.dtype is dtypes.string:
        return host_tensor(_host(values)[positions], dtypes.string)
    return array_ops.gather(values, constant(positions))


def _make(indices: np.ndarray, values: Tensor, shape: Sequence[int]) -> SparseTensor:
    rank = len(shape)
    return SparseTensor(
        constant(np.asarray(indices, np.int64).reshape(-1, rank)), values, constant(np.asarray(shape, np.int64))
    )


def _row_major(indices: np.ndarray) -> np.ndarray:
    return np.lexsort(indices.T[::-1]) if indices.shape[0] else np.zeros(0, np.int64)


def reshape(sp_input: SparseTensor, shape: ShapeLike | TensorLike, name: str | None = None) -> SparseTensor:
    """The same values in a sparse tensor of a new dense shape (one -1 allowed), as `tf.sparse.reshape`.

    Raises:
      InvalidArgumentError: if the number of dense elements differs.
    """
    sp = _sparse(sp_input, "sp_input")
    old = [int(d) for d in sp._shape_host]
    new = [int(d) for d in np.asarray(convert_to_tensor(shape, dtype_hint=dtypes.int64).numpy()).reshape(-1)]
    total = int(np.prod(old)) if old else 1
    if new.count(-1) > 1:
        raise errors.invalid_argument("only one output dimension may be -1, not both 0 and 1", "SparseReshape")
    if -1 in new:
        known = int(np.prod([d for d in new if d != -1])) if len(new) > 1 else 1
        new[new.index(-1)] = total // known if known else 0
    if int(np.prod(new)) != total:
        raise errors.invalid_argument(
            f"Input to reshape is a tensor with {total} dense values, but the requested shape has "
            f"{int(np.prod(new))}. input_shape=[{','.join(map(str, old))}] output_shape=[{','.join(map(str, new))}]",
            "SparseReshape",
        )
    if sp._index_host.shape[0]:
        flat = np.ravel_multi_index(tuple(sp._index_host.T), old) if old else np.zeros(sp._index_host.shape[0], int)
        indices = np.stack(np.unravel_index(flat, new), axis=1) if new else np.zeros((flat.size, 0), np.int64)
    else:
        indices = np.zeros((0, len(new)), np.int64)
    return _make(indices, sp.values, new)


def concat(
    axis: int, sp_inputs: Sequence[SparseTensor], expand_nonconcat_dims: bool = False, name: str | None = None
) -> SparseTensor:
    """Concatenates sparse tensors along `axis` (row-major ordered result), as `tf.sparse.concat`.

    Raises:
      InvalidArgumentError: if the other dimensions differ (without `expand_nonconcat_dims`).
    """
    parts = [_sparse(sp, "sp_inputs") for sp in sp_inputs]
    rank = parts[0].ndim
    axis = int(axis) % rank
    shapes = [p._shape_host for p in parts]
    if expand_nonconcat_dims:
        bound = np.max(np.stack(shapes), axis=0)
    else:
        bound = shapes[0]
        for position, shape in enumerate(shapes[1:], start=1):
            for d in range(rank):
                if d != axis and shape[d] != bound[d]:
                    raise errors.invalid_argument(
                        f"Input shapes must match: expected {bound[d]} for dimension {d} but got {shape[d]} at "
                        f"position {position}",
                        "SparseConcat",
                    )
    offset, blocks = 0, []
    for p in parts:
        idx = p._index_host.copy()
        idx[:, axis] += offset
        offset += int(p._shape_host[axis])
        blocks.append(idx)
    indices = np.concatenate(blocks) if blocks else np.zeros((0, rank), np.int64)
    if parts[0].dtype is dtypes.string:
        values = host_tensor(np.concatenate([_host(p.values) for p in parts]), dtypes.string)
    else:  # TF's SparseConcat passes no gradient to the values
        values = math_ops.stop_gradient(array_ops.concat([p.values for p in parts], 0))
    order = _row_major(indices)
    dense_shape = [int(d) for d in bound]
    dense_shape[axis] = offset
    return _make(indices[order], _take(values, order), dense_shape)


def slice(sp_input: SparseTensor, start: TensorLike, size: TensorLike, name: str | None = None) -> SparseTensor:  # noqa: A001
    """The entries inside `[start, start + size)`, shifted to start at 0, as `tf.sparse.slice`."""
    sp = _sparse(sp_input, "sp_input")
    begin = np.asarray(convert_to_tensor(start, dtype_hint=dtypes.int64).numpy(), np.int64).reshape(-1)
    extent = np.asarray(convert_to_tensor(size, dtype_hint=dtypes.int64).numpy(), np.int64).reshape(-1)
    stop = np.minimum(begin + extent, sp._shape_host)
    idx = sp._index_host
    keep = np.all((idx >= begin) & (idx < stop), axis=1) if idx.shape[0] else np.zeros(0, bool)
    positions = np.nonzero(keep)[0]
    shape = np.maximum(stop - begin, 0)
    return _make(idx[positions] - begin, _take(sp.values, positions), [int(d) for d in shape])


def expand_dims(sp_input: SparseTensor, axis: int | None = None, name: str | None = None) -> SparseTensor:
    """A size-1 dimension inserted at `axis`, as `tf.sparse.expand_dims`."""
    sp = _sparse(sp_input, "sp_input")
    rank = sp.ndim
    axis = -1 if axis is None else int(axis)
    if not -rank - 1 <= axis <= rank:
        raise errors.invalid_argument(f"Axis {axis} must be in range [{-rank - 1}, {rank}]", "ExpandDims")
    axis %= rank + 1
    idx = np.insert(sp._index_host, axis, 0, axis=1)
    shape = [int(d) for d in sp._shape_host]
    shape.insert(axis, 1)
    return _make(idx, sp.values, shape)


def retain(sp_input: SparseTensor, to_retain: Any) -> SparseTensor:
    """The entries where the bool vector `to_retain` is True, as `tf.sparse.retain`.

    Raises:
      ValueError: if `to_retain` is not a vector as long as the values.
    """
    sp = _sparse(sp_input, "sp_input")
    mask = np.asarray(convert_to_tensor(to_retain, dtype_hint=dtypes.bool_).numpy())
    if mask.ndim != 1 or mask.shape[0] != sp._index_host.shape[0]:
        raise ValueError(
            f"Shapes must be equal rank, but are 1 and {mask.ndim}"
            if mask.ndim != 1
            else f"Dimensions {mask.shape[0]} and {sp._index_host.shape[0]} are not compatible"
        )
    positions = np.nonzero(mask.astype(bool))[0]
    return _make(sp._index_host[positions], _take(sp.values, positions), [int(d) for d in sp._shape_host])


def transpose(sp_input: SparseTensor, perm: TensorLike | None = None, name: str | None = None) -> SparseTensor:
    """The sparse tensor with permuted dimensions (reversed when `perm` is None), reordered, as TF's."""
    sp = _sparse(sp_input, "sp_input")
    rank = sp.ndim
    order_dims = (
        list(range(rank))[::-1]
        if perm is None
        else [int(p) for p in np.asarray(convert_to_tensor(perm).numpy()).reshape(-1)]
    )
    if sorted(order_dims) != list(range(rank)):
        raise errors.invalid_argument(f"perm must be a permutation of [0, {rank}), got {order_dims}", "Transpose")
    idx = sp._index_host[:, order_dims]
    order = _row_major(idx)
    return _make(idx[order], _take(sp.values, order), [int(sp._shape_host[d]) for d in order_dims])


def fill_empty_rows(sp_input: SparseTensor, default_value: TensorLike, name: str | None = None) -> tuple:
    """`(filled, empty_row_indicator)`: every empty row gets `default_value` at column 0, as TF's."""
    sp = _sparse(sp_input, "sp_input")
    _check_bounds(sp, "SparseFillEmptyRows")
    rows = int(sp._shape_host[0])
    idx = sp._index_host
    empty = np.ones(rows, bool)
    empty[idx[:, 0]] = False
    missing = np.nonzero(empty)[0]
    extra = np.zeros((missing.size, idx.shape[1]), np.int64)
    extra[:, 0] = missing
    default = convert_to_tensor(default_value, dtype=sp.dtype)
    if sp.dtype is dtypes.string:
        values = host_tensor(
            np.concatenate([_host(sp.values), np.full(missing.size, _host(default), object)]), dtypes.string
        )
    else:
        values = array_ops.concat([sp.values, array_ops.fill([int(missing.size)], default)], 0)
    indices = np.concatenate([idx, extra])
    order = np.argsort(indices[:, 0], kind="stable")
    filled = _make(indices[order], _take(values, order), [int(d) for d in sp._shape_host])
    return filled, constant(empty)


def reduce_max(
    sp_input: SparseTensor,
    axis: AxisLike = None,
    keepdims: Any = None,
    output_is_sparse: bool = False,
    name: str | None = None,
) -> Any:
    """The maximum of the *present* values over `axis` (0 where none), as `tf.sparse.reduce_max`."""
    sp = _sparse(sp_input, "sp_input")
    if sp.dtype is not dtypes.string:  # TF registers no gradient for SparseReduceMax
        sp = sp.with_values(registry.apply(_NO_GRADIENT_MAX, (sp.values,))[0])
    lowest = -np.inf if sp.dtype.is_floating else np.iinfo(sp.dtype.as_numpy_dtype).min
    dense = to_dense(reorder(sp), default_value=lowest)
    result = math_ops.reduce_max(dense, axis=axis, keepdims=bool(keepdims))
    result = array_ops.where(present(sp, axis, keepdims), result, array_ops.zeros_like(result))
    return present_entries(sp, result, axis, keepdims) if output_is_sparse else result


def eye(
    num_rows: int, num_columns: int | None = None, dtype: DTypeLike = dtypes.float32, name: str | None = None
) -> SparseTensor:
    """A sparse identity matrix, as `tf.sparse.eye`."""
    rows = int(num_rows)
    cols = rows if num_columns is None else int(num_columns)
    diag = np.arange(min(rows, cols), dtype=np.int64)
    target = dtypes.as_dtype(dtype)
    return _make(np.stack([diag, diag], axis=1), constant(np.ones(diag.size, target.as_numpy_dtype)), [rows, cols])


def _segment(kind: str, data: Any, indices: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    """TF's SparseSegment{Sum,Mean,SqrtN}: rows `data[indices]` reduced by sorted `segment_ids`."""
    op = {"sum": "SparseSegmentSum", "mean": "SparseSegmentMean", "sqrt_n": "SparseSegmentSqrtN"}[kind]
    data = convert_to_tensor(data)
    if kind != "sum":  # (a mean divides: TF's kernels take floats only)
        dtype_check(op, "f")((((), data.dtype),), {})
    idx = np.asarray(convert_to_tensor(indices).numpy(), np.int64).reshape(-1)
    ids = np.asarray(convert_to_tensor(segment_ids).numpy(), np.int64).reshape(-1)
    rows = int(data.shape[0])
    for i, v in enumerate(idx):
        if not 0 <= v < rows:
            raise errors.invalid_argument(f"Bad: indices[{i}] == {v} out of range [0, {rows})", op)
    if np.any(np.diff(ids) < 0):
        raise errors.invalid_argument("segment ids are not increasing", op)
    count = int(num_segments) if num_segments is not None else (int(ids[-1]) + 1 if ids.size else 0)
    picked = manip_ops.gather_nd(data, constant(idx[:, None]))  # a dense gradient for data, as TF's
    sums = manip_ops.scatter_nd(constant(ids[:, None]), picked, [count, *data.shape[1:]])
    if kind == "sum":
        return sums
    sizes = np.bincount(ids, minlength=count)[:count].astype(np.float64)
    scale = np.maximum(sizes, 1.0) if kind == "mean" else np.sqrt(np.maximum(sizes, 1.0))
    shaped = scale.reshape(-1, *([1] * (data.ndim - 1))).astype(data.dtype.as_numpy_dtype)
    return math_ops.truediv(sums, array_ops.reshape(constant(shaped), list(shaped.shape)))


def segment_sum(
    data: TensorLike,
    indices: TensorLike,
    segment_ids: TensorLike,
    num_segments: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Sums of the rows `data[indices]` per (sorted) segment id, as `tf.sparse.segment_sum`.

    Raises:
      InvalidArgumentError: for an index out of range or decreasing segment ids.
    """
    return _segment("sum", data, indices, segment_ids, num_segments)


def segment_mean(
    data: TensorLike,
    indices: TensorLike,
    segment_ids: TensorLike,
    num_segments: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Means of the rows `data[indices]` per (sorted) segment id (0 for empty ones), as `tf.sparse.segment_mean`."""
    return _segment("mean", data, indices, segment_ids, num_segments)


def segment_sqrt_n(
    data: TensorLike,
    indices: TensorLike,
    segment_ids: TensorLike,
    num_segments: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Sums divided by sqrt(segment size) of the rows `data[indices]`, as `tf.sparse.segment_sqrt_n`."""
    return _segment("sqrt_n", data, indices, segment_ids, num_segments)


def _union_extreme(a: SparseTensor, b: SparseTensor, pick: str) -> SparseTensor:
    a, b = _sparse(a, "sp_a"), _sparse(b, "sp_b")
    if not np.array_equal(a._shape_host, b._shape_host):
        raise errors.invalid_argument("Operands' shapes do not match", "SparseSparseMaximum")
    keys = sorted({tuple(r) for r in np.concatenate([a._index_host, b._index_host])})
    indices = np.asarray(keys, np.int64).reshape(-1, a.ndim)
    fn = math_ops.maximum if pick == "max" else math_ops.minimum
    dense = fn(to_dense(reorder(a)), to_dense(reorder(b)))  # absent entries count as 0, as TF's
    return _make(indices, manip_ops.gather_nd(dense, constant(indices)), [int(d) for d in a._shape_host])


def maximum(sp_a: SparseTensor, sp_b: SparseTensor, name: str | None = None) -> SparseTensor:
    """The elementwise maximum over the union of entries (an absent entry is 0), as `tf.sparse.maximum`."""
    return _union_extreme(sp_a, sp_b, "max")


def minimum(sp_a: SparseTensor, sp_b: SparseTensor, name: str | None = None) -> SparseTensor:
    """The elementwise minimum over the union of entries (an absent entry is 0), as `tf.sparse.minimum`."""
    return _union_extreme(sp_a, sp_b, "min")


def softmax(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """The softmax of each row's present values (the last dimension), as `tf.sparse.softmax`."""
    sp = _sparse(sp_input, "sp_input")
    idx = sp._index_host
    if not idx.shape[0]:
        return sp
    _, groups = np.unique(idx[:, :-1], axis=0, return_inverse=True)
    groups = groups.reshape(-1).astype(np.int64)
    count = int(groups.max()) + 1
    host = np.asarray(sp.values.numpy(), np.float64)
    peak = np.full(count, -np.inf)
    np.maximum.at(peak, groups, host)
    shifted = sp.values - constant(peak[groups].astype(sp.dtype.as_numpy_dtype))  # softmax is shift-invariant
    e = math_ops.exp(shifted)
    sums = manip_ops.scatter_nd(constant(groups[:, None]), e, [count])
    return sp.with_values(e / array_ops.gather(sums, constant(groups)))


def map_values(op: Any, *args: Any, **kwargs: Any) -> SparseTensor:
    """`op` applied to the values of the SparseTensors among `args` and `kwargs`, as `tf.sparse.map_values`.

    Every SparseTensor argument must have the same indices and dense shape; the result has them too.

    Raises:
      ValueError: if no argument is a SparseTensor.
      InvalidArgumentError: if the SparseTensors' indices or dense shapes differ.
    """
    found: list[SparseTensor] = []

    def values_of(value: Any) -> Any:
        if isinstance(value, SparseTensor):
            found.append(value)
            return value.values
        if isinstance(value, (list, tuple)):
            return type(value)(values_of(v) for v in value)
        if isinstance(value, dict):
            return {k: values_of(v) for k, v in value.items()}
        return value

    args = tuple(values_of(a) for a in args)
    kwargs = {k: values_of(v) for k, v in kwargs.items()}
    if not found:
        raise ValueError("No SparseTensor in argument list of map_values")
    first = found[0]
    for other in found[1:]:
        same_shape = np.array_equal(first._shape_host, other._shape_host)
        if not same_shape or not np.array_equal(first._index_host, other._index_host):
            raise errors.invalid_argument(
                "Condition x == y did not hold. SparseTensors to map_values must have the same "
                + ("dense_shape" if not same_shape else "indices"),
                "AssertEqual",
            )
    return SparseTensor(first.indices, convert_to_tensor(op(*args, **kwargs)), first.dense_shape)


def split(
    sp_input: SparseTensor | None = None,
    num_split: int | None = None,
    axis: int | None = None,
    name: str | None = None,
) -> list[SparseTensor]:
    """`num_split` SparseTensors, `sp_input` split along `axis`, as `tf.sparse.split`.

    The first `size % num_split` pieces are one longer than the rest, as TF's.

    Raises:
      ValueError: if `sp_input` is not a SparseTensor or `num_split`/`axis` is missing.
      InvalidArgumentError: for an `axis` out of range or more pieces than the dimension has entries.
    """
    sp = _sparse(sp_input, "sp_input")
    if num_split is None:
        raise ValueError("Argument `num_split` is required")
    if axis is None:
        raise ValueError("Argument `axis` is required")
    shape = np.asarray(sp._shape_host, np.int64)
    rank = shape.shape[0]
    axis = int(axis)
    if not -rank <= axis < rank:
        raise errors.invalid_argument(f"Split dim must be in [-{rank}, {rank}), got {axis}", "SparseSplit")
    axis %= rank
    num_split = int(num_split)
    size = int(shape[axis])
    if num_split < 1 or num_split > size:
        raise errors.invalid_argument(
            f"Split dim {axis} size ({size}) must be >= num_split ({num_split})", "SparseSplit"
        )
    indices = sp._index_host
    pieces = []
    start = 0
    for k in range(num_split):
        length = size // num_split + (1 if k < size % num_split else 0)
        keep = np.nonzero((indices[:, axis] >= start) & (indices[:, axis] < start + length))[0]
        rows = indices[keep].copy()
        rows[:, axis] -= start
        piece_shape = shape.copy()
        piece_shape[axis] = length
        if sp.dtype is dtypes.string:
            values: Tensor = host_tensor(np.asarray(_host(sp.values))[keep], dtypes.string)
        else:
            values = array_ops.gather(sp.values, constant(keep.astype(np.int64)))
        pieces.append(SparseTensor(constant(rows.astype(np.int64)), values, constant(piece_shape)))
        start += length
    return pieces
