"""TF's reductions of a RaggedTensor (`tf.reduce_sum(rt, axis=1)`, ...), as segment reductions.

`tf.reduce_sum` and friends dispatch here (`ops.ragged_hook.ragged_dispatch`) when their input is a
RaggedTensor. As TF's ragged reductions:

* `axis=None` reduces the flat values (a dense scalar);
* a ragged axis is a segment reduction (`tf.math.unsorted_segment_*`) of the values: axis 1 over each
  value's row, axis 0 over each value's position within its row (the result has as many entries as
  the longest row); an empty segment gives the reduction's identity (0 for sums, 1 for products,
  the dtype's lowest value for `reduce_max`, its highest for `reduce_min`);
* a deeper axis reduces the values (keeping the outer partition);
* several axes are reduced one at a time, the innermost first; `keepdims` re-inserts each reduced
  axis with `tf.expand_dims`;
* `reduce_mean` is `reduce_sum / count` (`truediv`: integers give float64, empty rows NaN), and
  `reduce_variance` is `max(mean(x^2) - mean(x)^2, 0)`, `reduce_std` its square root.

The values go through tapeshim's segment ops, so gradients reach the flat values.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.ops import array_ops, math_ops, reduction_ops
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike

Segment = Callable[[Any, Any, Any], Any]
Dense = Callable[..., Any]


def _axes(rt: RaggedTensor, axis: AxisLike) -> list[int]:
    """`axis` as non-negative ints, checked against the rank as TF checks it."""
    if isinstance(axis, Tensor):
        axis = np.asarray(axis.numpy()).tolist()
    listed = list(axis) if isinstance(axis, (list, tuple, np.ndarray)) else [axis]
    rank = rt.ndim
    found = []
    for item in listed:
        a = int(item)  # type: ignore[arg-type]
        if not -rank <= a < rank:
            raise ValueError(f"axis={a} out of bounds: expected {-rank}<=axis<{rank}")
        found.append(a % rank)
    return found


def _segment(op: Segment, data: Any, ids: np.ndarray, count: int) -> Any:
    """`op` over segments `ids` of `data`'s rows; a ragged `data` aligns its rows' elements by position."""
    if not isinstance(data, RaggedTensor):
        return op(data, constant(ids.astype(np.int64)), count)
    lengths = np.diff(data._splits)
    out_lengths = np.zeros(count, np.int64)
    np.maximum.at(out_lengths, ids, lengths)
    out_splits = np.concatenate([[0], np.cumsum(out_lengths)]).astype(np.int64)
    within = np.arange(int(data._splits[-1]), dtype=np.int64) - np.repeat(data._splits[:-1], lengths)
    child_ids = out_splits[np.repeat(ids, lengths)] + within
    values = _segment(op, data._values, child_ids, int(out_splits[-1]))
    return RaggedTensor(values, constant(out_splits.astype(data.row_splits.dtype.as_numpy_dtype)))


def _one_axis(value: Any, axis: int, op: Segment, dense: Dense) -> Any:
    if not isinstance(value, RaggedTensor):
        return dense(value, axis)
    lengths = np.diff(value._splits)
    if axis == 0:
        within = np.arange(int(value._splits[-1]), dtype=np.int64) - np.repeat(value._splits[:-1], lengths)
        return _segment(op, value._values, within, int(lengths.max()) if lengths.size else 0)
    if axis == 1:
        return _segment(op, value._values, np.repeat(np.arange(lengths.size), lengths), lengths.size)
    return value.with_values(_one_axis(value._values, axis - 1, op, dense))


def _aggregate(rt: RaggedTensor, axis: AxisLike, keepdims: bool, op: Segment, dense: Dense) -> Any:
    """The reduction `dense` / `op` of `rt` over `axis` (see the module docstring); no axes: `rt` itself."""
    if axis is None:
        return dense(rt.flat_values, None, keepdims=False) if not keepdims else _keep_all(rt, dense)
    axes = _axes(rt, axis)
    result: Any = rt
    for a in sorted(set(axes), reverse=True):
        result = _one_axis(result, a, op, dense)
    if keepdims:
        for a in sorted(set(axes)):
            result = array_ops.expand_dims(result, a)
    return result


def _keep_all(rt: RaggedTensor, dense: Dense) -> Tensor:
    return array_ops.reshape(dense(rt.flat_values, None), [1] * rt.ndim)


def _dense(reduce: Dense) -> Dense:
    return lambda x, axis, keepdims=False: reduce(x, axis=axis, keepdims=keepdims)


def reduce_sum(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.reduce_sum` of a RaggedTensor (see the module docstring)."""
    return _aggregate(input_tensor, axis, keepdims, reduction_ops.unsorted_segment_sum, _dense(math_ops.reduce_sum))


def reduce_prod(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.reduce_prod` of a RaggedTensor: empty rows give 1."""
    return _aggregate(input_tensor, axis, keepdims, reduction_ops.unsorted_segment_prod, _dense(math_ops.reduce_prod))


def reduce_max(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.reduce_max` of a RaggedTensor: empty rows give the dtype's lowest value."""
    return _aggregate(input_tensor, axis, keepdims, reduction_ops.unsorted_segment_max, _dense(math_ops.reduce_max))


def reduce_min(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.reduce_min` of a RaggedTensor: empty rows give the dtype's highest value."""
    return _aggregate(input_tensor, axis, keepdims, reduction_ops.unsorted_segment_min, _dense(math_ops.reduce_min))


def _boolean(rt: RaggedTensor, axis: AxisLike, keepdims: bool, whole: Dense, segment: Segment, dense: Dense) -> Any:
    """`reduce_any` / `reduce_all` of a bool RaggedTensor: `whole` over all values, else the max / min of its
    values as int32 (empty rows give False / True), compared with 0."""
    if rt.dtype is not dtypes.bool_:
        math_ops.reduce_any(rt.flat_values)  # TF's dtype error for a non-bool input
    if axis is None:
        return _aggregate(rt, None, keepdims, segment, _dense(whole))
    as_int = rt.with_flat_values(math_ops.cast(rt.flat_values, dtypes.int32))
    found = _aggregate(as_int, axis, keepdims, segment, _dense(dense))
    return math_ops.greater(found, 0) if found is not as_int else rt


def reduce_any(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.reduce_any` of a bool RaggedTensor: empty rows give False."""
    return _boolean(
        input_tensor, axis, keepdims, math_ops.reduce_any, reduction_ops.unsorted_segment_max, math_ops.reduce_max
    )


def reduce_all(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.reduce_all` of a bool RaggedTensor: empty rows give True."""
    return _boolean(
        input_tensor, axis, keepdims, math_ops.reduce_all, reduction_ops.unsorted_segment_min, math_ops.reduce_min
    )


def reduce_mean(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.reduce_mean` of a RaggedTensor: the sum over the count (integers give float64; empty rows NaN)."""
    rt: RaggedTensor = input_tensor
    if axis is not None and not _axes(rt, axis):
        return rt
    total = reduce_sum(rt, axis, keepdims)
    count = reduce_sum(rt.with_flat_values(array_ops.ones_like(rt.flat_values)), axis, keepdims)
    return math_ops.truediv(total, count)


def reduce_variance(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.math.reduce_variance` of a RaggedTensor: `max(mean(x^2) - mean(x)^2, 0)`, as TF computes it.

    Raises:
      ValueError: for a complex input, as TF.
    """
    rt: RaggedTensor = input_tensor
    if rt.dtype.is_complex:
        raise ValueError("reduce_variance is not supported for RaggedTensors with complex dtypes.")
    mean_of_square = reduce_mean(math_ops.square(rt), axis, keepdims)
    square_of_mean = math_ops.square(reduce_mean(rt, axis, keepdims))
    return math_ops.maximum(mean_of_square - square_of_mean, convert_to_tensor(0, dtype=_dtype(square_of_mean)))


def reduce_std(input_tensor: Any, axis: AxisLike = None, keepdims: bool = False, name: str | None = None) -> Any:
    """`tf.math.reduce_std` of a RaggedTensor: the square root of `reduce_variance`."""
    return math_ops.sqrt(reduce_variance(input_tensor, axis, keepdims))


def _dtype(value: Any) -> dtypes.DType:
    return value.dtype
