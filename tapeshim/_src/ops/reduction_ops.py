"""Reductions, scans, norms, clipping and segment ops (`tf.math`, top level)."""

from __future__ import annotations

import collections
import functools
from typing import Any, Sequence, cast, overload

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import dtypes, errors, runtime_checks, symbolic_dims
from tapeshim._src.indexed_slices import IndexedSlices
from tapeshim._src.ops import array_ops, linalg_ops, math_kernels, math_ops, nn_ops, table
from tapeshim._src.ops.common import dtype_check, gradient_not_registered, normalize_axis, static_error
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, TensorLike

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _reduce_args(input_tensor: Any, axis: Any, keepdims: Any) -> tuple[Tensor, tuple]:
    x = convert_to_tensor(input_tensor)
    return x, (("axis", normalize_axis(axis, len(x._shape))), ("keepdims", bool(keepdims)))


def _variance_args(input_tensor: Any, axis: Any, keepdims: Any) -> tuple[Tensor, tuple]:
    x, static = _reduce_args(input_tensor, axis, keepdims)
    if x.dtype.is_integer:
        raise TypeError(f"Input must be either real or complex. Received integer type {x.dtype!r}.")
    return x, static


def _variance_impl(x: jax.Array, axis: tuple | None, keepdims: bool) -> jax.Array:
    """TF's reduce_variance: the mean of squared deviations from the (differentiated) mean, each mean
    accumulated as TF's reduce_mean does."""
    diff = x - math_kernels.mean_impl(x, axis, True)
    squared = jnp.real(jnp.conj(diff) * diff) if jnp.issubdtype(x.dtype, jnp.complexfloating) else jnp.square(diff)
    return math_kernels.mean_impl(squared, axis, keepdims)


_variance_op = OpDef("Variance", _variance_impl, True, dtype_check("Variance", "fc"))
_std_op = OpDef(
    "Std",
    lambda x, axis, keepdims: math_kernels.sqrt_impl(_variance_impl(x, axis, keepdims)),
    True,
    dtype_check("Std", "fc"),
)
_logsumexp_op = OpDef(
    "ReduceLogSumExp",
    lambda x, axis, keepdims: jax.nn.logsumexp(x, axis=axis, keepdims=keepdims),
    True,
    dtype_check("ReduceLogSumExp", "f"),
)


@table.export("math.reduce_variance", dtypes=table.FLOAT, op=_variance_op)
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_variance")
def reduce_variance(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The variance (mean squared deviation) over `axis`, computed as TF composes it.

    Raises:
      TypeError: for integer input, as TF.
    """
    x, static = _variance_args(input_tensor, axis, keepdims)
    return apply(_variance_op, (x,), static)[0]


@table.export("math.reduce_std", dtypes=table.FLOAT, op=_std_op)
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_std")
def reduce_std(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The standard deviation over `axis`: sqrt(reduce_variance), as TF.

    Raises:
      TypeError: for integer input, as TF.
    """
    x, static = _variance_args(input_tensor, axis, keepdims)
    return apply(_std_op, (x,), static)[0]


@table.export("math.reduce_logsumexp", "reduce_logsumexp", dtypes=table.REAL_FLOAT, op=_logsumexp_op)
def reduce_logsumexp(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed stably."""
    x, static = _reduce_args(input_tensor, axis, keepdims)
    return apply(_logsumexp_op, (x,), static)[0]


def _sequential_scan(x: jax.Array, axis: int, combine: Any, identity: float) -> jax.Array:
    """A running sum or product that rounds to x's dtype after every step, left to right, as TF's CPU scan
    does for float16/bfloat16 (XLA's parallel scan rounds differently)."""
    moved = jnp.moveaxis(x, axis, 0)

    def step(total: jax.Array, row: jax.Array) -> tuple:
        total = combine(total, row)
        return total, total

    out: jax.Array
    _, out = lax.scan(step, jnp.full(moved.shape[1:], identity, x.dtype), moved)
    return jnp.moveaxis(out, 0, axis)


def _cumsum(x: jax.Array, axis: int, dtype: Any) -> jax.Array:
    if x.dtype in (jnp.float16, jnp.bfloat16):
        return _sequential_scan(x, axis, jnp.add, 0)
    return jnp.cumsum(x, axis=axis, dtype=dtype)


def _cumprod_values(x: jax.Array, axis: int, dtype: Any) -> jax.Array:
    if x.dtype in (jnp.float16, jnp.bfloat16):
        return _sequential_scan(x, axis, jnp.multiply, 1)
    return jnp.cumprod(x, axis=axis, dtype=dtype)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _cumprod(x: jax.Array, axis: int, exclusive: bool, reverse: bool) -> jax.Array:
    return _scan(_cumprod_values, x, axis, exclusive, reverse, 1)


@_cumprod.defjvp
def _cumprod_jvp(axis: int, exclusive: bool, reverse: bool, primals: tuple, tangents: tuple) -> tuple:
    # The transpose of TF's CumprodGrad, div_no_nan(cumsum(prod * g, reverse=not reverse), x): 0 where x is 0.
    (x,), (t,) = primals, tangents
    prod = _cumprod(x, axis, exclusive, reverse)
    zero = x == 0
    ratio = jnp.where(zero, jnp.zeros_like(t), t / jnp.where(zero, jnp.ones_like(x), x))
    return prod, prod * _scan(_cumsum, ratio, axis, exclusive, reverse, 0)


@functools.lru_cache(maxsize=None)
def _cumprod_tf(axis: int, exclusive: bool, reverse: bool) -> Any:
    # TF's CumprodGrad does not conjugate for complex inputs.
    return math_kernels.tf_complex_gradient(lambda x: _cumprod(x, axis, exclusive, reverse))


def _cumprod_impl(x: jax.Array, axis: int, exclusive: bool, reverse: bool) -> jax.Array:
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return _cumprod_tf(axis, exclusive, reverse)(x)
    return _scan(jnp.cumprod, x, axis, exclusive, reverse, 1)


def _scan(fn: Any, x: jax.Array, axis: int, exclusive: bool, reverse: bool, identity: float) -> jax.Array:
    if reverse:
        x = jnp.flip(x, axis)
    out = fn(x, axis=axis, dtype=x.dtype)
    if exclusive and x.shape[axis]:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        out = jnp.pad(lax.slice_in_dim(out, 0, x.shape[axis] - 1, axis=axis), pad, constant_values=identity)
    return jnp.flip(out, axis) if reverse else out


_cumsum_op = OpDef(
    "Cumsum",
    lambda x, axis, exclusive, reverse: _scan(_cumsum, x, axis, exclusive, reverse, 0),
    True,
    dtype_check("Cumsum", "fciu"),
)
_cumprod_op = OpDef("Cumprod", _cumprod_impl, True, dtype_check("Cumprod", "fciu"))


def _cumulative(op: OpDef, x: Any, axis: Any, exclusive: bool, reverse: bool) -> Tensor:
    x = convert_to_tensor(x)
    (axis,) = normalize_axis(int(axis), len(x._shape))
    return apply(op, (x,), (("axis", axis), ("exclusive", bool(exclusive)), ("reverse", bool(reverse))))[0]


@table.export(
    "math.cumsum",
    "cumsum",
    dtypes=table.NUMERIC,
    note="float16/bfloat16 accumulate step by step in their own precision, as TF's CPU kernel",
)
@ragged_dispatch(impl="tapeshim._src.ragged_array:cumsum")
def cumsum(
    x: TensorLike, axis: AxisLike = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """The running sum along `axis` (optionally exclusive and/or from the end)."""
    return _cumulative(_cumsum_op, x, axis, exclusive, reverse)


@table.export(
    "math.cumprod",
    gradient="tf",
    dtypes=table.NUMERIC,
    note="the gradient is 0 at a zero input (TF divides by x with div_no_nan), not conjugated for "
    "complex; float16/bfloat16 multiply step by step, as TF's CPU kernel",
)
def cumprod(
    x: TensorLike, axis: AxisLike = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """The running product along `axis` (optionally exclusive and/or from the end)."""
    return _cumulative(_cumprod_op, x, axis, exclusive, reverse)


_top_k_op = OpDef("TopKV2", lambda x, k: lax.top_k(x, k), True, dtype_check("TopKV2", "fiu"))


@table.export("math.top_k", "nn.top_k", dtypes=table.REAL, note="indices are int32, as TF", op=_top_k_op)
def top_k(
    input: TensorLike,
    k: int = 1,
    sorted: bool = True,
    index_type: Any = dtypes.int32,  # noqa: A002
    name: str | None = None,
) -> TopKV2:
    """The `k` largest values of the last axis and their indices (`values`, `indices`)."""
    x = convert_to_tensor(input)
    k = int(array_ops.folded_int(k))  # `k=tf.shape(x)[1]` inside tapeshim.function is known (H5)
    if not x._shape or k > x._shape[-1] or k < 0:
        raise static_error(  # (inside a function, TF's shape inference refuses it: ValueError)
            f"input must have at least k columns. Had {x._shape[-1] if x._shape else 0}, needed {k}", "TopKV2"
        )
    values, indices = apply(_top_k_op, (x,), (("k", k),))
    return TopKV2(values, math_ops.cast(indices, index_type))


@table.export("math.count_nonzero", gradient="-", dtypes=table.ANY)
def count_nonzero(
    input: TensorLike,
    axis: AxisLike = None,
    keepdims: bool | None = None,
    dtype: DTypeLike = dtypes.int64,  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """The number of non-zero elements over `axis`."""
    x = convert_to_tensor(input)
    nonzero = math_ops.cast(
        math_ops.not_equal(x, math_ops.cast(0, x.dtype) if not x.dtype.is_bool else False), dtypes.int64
    )
    return math_ops.cast(math_ops.reduce_sum(nonzero, axis=axis, keepdims=bool(keepdims)), dtype)


def _times_conj(x: Tensor) -> Tensor:
    """x * conj(x): TF's euclidean norms sum it, so a complex input gives a complex norm."""
    return x * math_ops.conj(x) if x.dtype.is_complex else x * x


@table.export(
    "norm", "linalg.norm", dtypes=table.FLOAT, note="vector p-norms and matrix norms 'fro', 1, 2, inf over two axes"
)
def norm(
    tensor: TensorLike,
    ord: Any = "euclidean",
    axis: AxisLike = None,
    keepdims: Any = None,  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """The vector or matrix norm of `tensor`, as `tf.norm`; its gradient at 0 is nan, as TF's.

    As in TF, the euclidean norm of a complex tensor is complex (sqrt of the sum
    of x * conj(x)); the other norms are real.
    """
    x = convert_to_tensor(tensor)
    keep = bool(keepdims)
    magnitude = math_ops.abs(x)
    axes = None if axis is None else ([int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis])
    if axes is not None and len(axes) == 2:
        rows, cols = (a % len(x._shape) for a in axes)
        if ord in ("euclidean", "fro"):
            return math_ops.sqrt(math_ops.reduce_sum(_times_conj(x), axis=axes, keepdims=keep))
        if ord == 1:
            return math_ops.reduce_max(
                math_ops.reduce_sum(magnitude, axis=rows, keepdims=True), axis=axes, keepdims=keep
            )
        if ord in (np.inf, "inf"):
            return math_ops.reduce_max(
                math_ops.reduce_sum(magnitude, axis=cols, keepdims=True), axis=axes, keepdims=keep
            )
        if ord == 2:
            moved = array_ops.transpose(x, [d for d in range(len(x._shape)) if d not in (rows, cols)] + [rows, cols])
            largest = math_ops.reduce_max(linalg_ops.svd(moved, compute_uv=False), axis=-1)
            if keep:
                for a in sorted((rows, cols)):
                    largest = array_ops.expand_dims(largest, a)
            return largest
        raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf], got {ord!r}.")
    if ord in ("euclidean", "fro", 2):
        return math_ops.sqrt(math_ops.reduce_sum(_times_conj(x), axis=axes, keepdims=keep))
    if ord == 1:
        return math_ops.reduce_sum(magnitude, axis=axes, keepdims=keep)
    if ord in (np.inf, "inf"):
        return math_ops.reduce_max(magnitude, axis=axes, keepdims=keep)
    if isinstance(ord, (int, float)) and ord > 0:
        p = float(ord)
        return math_ops.pow(math_ops.reduce_sum(math_ops.pow(magnitude, p), axis=axes, keepdims=keep), 1.0 / p)
    raise ValueError(f"'ord' must be a supported vector norm, got {ord!r}.")


@table.export("math.l2_normalize", "nn.l2_normalize", "linalg.l2_normalize", dtypes=table.FLOAT)
def l2_normalize(
    x: TensorLike, axis: AxisLike = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None
) -> Tensor:
    """x / sqrt(max(sum(x**2), epsilon)) along `axis`, as TF computes it."""
    x = convert_to_tensor(x)
    axis = dim if axis is None else axis
    if x.dtype.is_complex:
        square_real = math_ops.square(math_ops.real(x))
        square_imag = math_ops.square(math_ops.imag(x))
        square_sum = math_ops.real(math_ops.reduce_sum(square_real + square_imag, axis=axis, keepdims=True))
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.complex(math_ops.real(x) * inv_norm, math_ops.imag(x) * inv_norm)
    square_sum = math_ops.reduce_sum(math_ops.square(x), axis=axis, keepdims=True)
    return x * math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))


@overload
def clip_by_norm(
    t: IndexedSlices, clip_norm: TensorLike, axes: AxisLike = None, name: str | None = None
) -> IndexedSlices: ...


@overload
def clip_by_norm(t: TensorLike, clip_norm: TensorLike, axes: AxisLike = None, name: str | None = None) -> Tensor: ...


@table.export("clip_by_norm", dtypes=table.REAL_FLOAT)
def clip_by_norm(
    t: TensorLike | IndexedSlices, clip_norm: TensorLike, axes: AxisLike = None, name: str | None = None
) -> Tensor | IndexedSlices:
    """Rescales `t` so its L2 norm over `axes` is at most `clip_norm` (TF's formula and gradient)."""
    if isinstance(t, IndexedSlices):
        return IndexedSlices(clip_by_norm(t.values, clip_norm, axes), t.indices, t.dense_shape)
    t = convert_to_tensor(t)
    if np.isscalar(clip_norm):  # as TF: a negative Python bound is 0, a tensor one is clamped at 0 and cast
        clip_norm = max(cast(float, clip_norm), 0)  # a Python or NumPy number (anything else raises TypeError)
    else:
        clip_norm = math_ops.cast(math_ops.maximum(clip_norm, 0), t.dtype)
    l2sum = math_ops.reduce_sum(t * t, axis=axes, keepdims=True)
    positive = l2sum > 0

    l2sum_safe = array_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
    l2norm = array_ops.where(positive, math_ops.sqrt(l2sum_safe), l2sum)
    return math_ops.identity(t * clip_norm / math_ops.maximum(l2norm, clip_norm))


@table.export("linalg.global_norm", dtypes=table.REAL_FLOAT)
def global_norm(t_list: Sequence[Any], name: str | None = None) -> Tensor:
    """sqrt(sum of squared L2 norms) of the non-None tensors in `t_list`."""
    tensors = [convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t) for t in t_list if t is not None]
    if not tensors:
        return convert_to_tensor(0.0)

    half_squared_norm = math_ops.reduce_sum(array_ops.stack([nn_ops.l2_loss(t) for t in tensors]))
    return math_ops.sqrt(half_squared_norm * 2.0)


@table.export("clip_by_global_norm", dtypes=table.REAL_FLOAT)
def clip_by_global_norm(
    t_list: Sequence[Any], clip_norm: TensorLike, use_norm: Any = None, name: str | None = None
) -> tuple[list[Tensor | IndexedSlices | None], Tensor]:
    """Scales every tensor by clip_norm / max(global_norm, clip_norm); returns (clipped list, global norm)."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("`t_list` should be a sequence of tensors.")
    norm_value = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    clip = convert_to_tensor(clip_norm, dtype_hint=norm_value.dtype)
    # As TF: an infinite norm makes every entry NaN (norm - norm).
    scale = clip * math_ops.minimum(1.0 / norm_value, 1.0 / clip) + (norm_value - norm_value)
    clipped: list[Tensor | IndexedSlices | None] = []
    for t in t_list:
        if t is None:
            clipped.append(None)
        elif isinstance(t, IndexedSlices):
            clipped.append(IndexedSlices(t.values * math_ops.cast(scale, t.dtype), t.indices, t.dense_shape))
        else:
            t = convert_to_tensor(t)
            clipped.append(math_ops.identity(t * math_ops.cast(scale, t.dtype)))
    return clipped, norm_value


def _segment(kind: str, data: jax.Array, ids: jax.Array, num_segments: int, checked: bool = False) -> jax.Array:
    if checked:
        runtime_checks.check_range_traced(ids, num_segments, "segment_ids", "UnsortedSegmentSum", segment=True)
    data = data.reshape((-1,) + data.shape[ids.ndim :])  # ids may cover several leading axes
    ids = ids.reshape(-1).astype(jnp.int32)
    if kind == "sum":
        return jax.ops.segment_sum(data, ids, num_segments)
    if kind == "prod":
        return math_kernels.segment_prod_impl(data, ids, num_segments)
    if kind in ("max", "min"):
        chosen = jax.ops.segment_max if kind == "max" else jax.ops.segment_min
        out = chosen(data, ids, num_segments)
        info = jnp.finfo(data.dtype) if jnp.issubdtype(data.dtype, jnp.floating) else jnp.iinfo(data.dtype)
        present = jax.ops.segment_sum(jnp.ones(ids.shape, jnp.int32), ids, num_segments) > 0
        empty = info.min if kind == "max" else info.max  # (the dtype's lowest for a max, its highest for a min)
        return jnp.where(present.reshape(present.shape + (1,) * (data.ndim - ids.ndim)), out, empty)
    total = jax.ops.segment_sum(data, ids, num_segments)
    count = jax.ops.segment_sum(jnp.ones(ids.shape, data.dtype), ids, num_segments)
    count = jnp.maximum(count, 1).reshape(count.shape + (1,) * (data.ndim - ids.ndim))
    if jnp.issubdtype(data.dtype, jnp.integer):  # (TF's integer mean: an integer division, toward zero)
        return lax.div(total, jnp.broadcast_to(count, total.shape))
    return total / count


_segment_op = OpDef(
    "UnsortedSegment",
    lambda d, i, kind, num_segments, checked=False: _segment(kind, d, i, num_segments, checked),
    True,
    dtype_check("UnsortedSegment", "fciu"),
)


def _segment_call(kind: str, data: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    data_t, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    num_segments = array_ops.folded_int(num_segments)  # `tf.shape(x)[0]` inside tapeshim.function (H5)
    if not ids.dtype.is_integer:
        raise errors.invalid_argument(f"segment_ids must be int32 or int64, got {ids.dtype.name}", "Segment")
    if tuple(data_t._shape[: len(ids._shape)]) != tuple(ids._shape):
        raise errors.invalid_argument(
            f"data.shape = {list(data_t._shape)} does not start with segment_ids.shape = {list(ids._shape)}",
            "UnsortedSegmentSum",
        )
    if not symbolic_dims.is_symbolic(num_segments):  # (a symbolic one, in a trace for every size, is checked per call)
        num_segments = int(num_segments)
    static = (("kind", kind), ("num_segments", num_segments)) + runtime_checks.checked_static(
        ids,
        lambda values: runtime_checks.check_range_host(
            values, num_segments, "segment_ids", "UnsortedSegmentSum", segment=True
        ),
        (num_segments,),
    )
    return apply(_segment_op, (data_t, ids), static)[0]


@table.export("math.unsorted_segment_sum", dtypes=table.NUMERIC)
def unsorted_segment_sum(
    data: TensorLike, segment_ids: TensorLike, num_segments: TensorLike, name: str | None = None
) -> Tensor:
    """Sums the rows of `data` that share a segment id."""
    return _segment_call("sum", data, segment_ids, num_segments)


@table.export("math.unsorted_segment_mean", dtypes=table.REAL, note="integers average as float64/float32, as TF")
def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Averages the rows of `data` that share a segment id (0 for empty segments), as TF composes it.

    The sums are divided by max(count, 1) with `truediv`, so integer data gives
    float64 (float32 for 8- and 16-bit integers), and complex data raises TF's
    error (its `maximum` has no complex kernel).
    """
    summed, counts = _sums_and_counts(data, segment_ids, num_segments)
    return math_ops.truediv(summed, math_ops.maximum(counts, 1))


def _sums_and_counts(data: Any, segment_ids: Any, num_segments: Any) -> tuple[Tensor, Tensor]:
    """Each segment's sum of rows, and its count of rows (shaped to divide the sums), as TF composes the
    unsorted segment mean and sqrt_n."""
    data_t, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    num_segments = array_ops.folded_int(num_segments)
    summed = unsorted_segment_sum(data_t, ids, num_segments)
    counts = unsorted_segment_sum(array_ops.ones(ids._shape, data_t.dtype), ids, num_segments)
    counts = array_ops.reshape(counts, [summed._shape[0]] + [1] * (len(data_t._shape) - len(ids._shape)))
    return summed, counts


@table.export("math.unsorted_segment_max", dtypes=table.REAL)
def unsorted_segment_max(
    data: TensorLike, segment_ids: TensorLike, num_segments: TensorLike, name: str | None = None
) -> Tensor:
    """The maximum of the rows of `data` that share a segment id (the dtype's lowest for empty ones)."""
    return _segment_call("max", data, segment_ids, num_segments)


def _sorted_segment(kind: str, data: TensorLike, segment_ids: TensorLike, op_name: str) -> Tensor:
    """A sorted segment reduction (TF's Segment* ops): max(id) + 1 segments, empty ones 0 (1 for a product)."""
    ids = convert_to_tensor(segment_ids)
    values = np.asarray(ids.numpy()).reshape(-1)
    count = int(np.max(values)) + 1 if values.size else 0
    if values.size and (np.diff(values) < 0).any():
        raise errors.invalid_argument("segment ids are not increasing", op_name)
    if values.size and values[0] < 0:
        raise errors.invalid_argument(
            f"Segment id {values[0]} out of range [0, {count}), possibly because 'segment_ids' input is not sorted.",
            op_name,
        )
    out = _segment_call(kind, data, ids, count)
    if kind in ("max", "min") and values.size and len(set(values.tolist())) < count:  # empty segments: 0
        present = np.zeros(count, bool)
        present[values] = True
        mask = constant(present.reshape((count,) + (1,) * (len(out._shape) - 1)))
        out = array_ops.where(mask, out, array_ops.zeros_like(out))
    return out


@table.export("math.unsorted_segment_min", dtypes=table.REAL)
def unsorted_segment_min(
    data: TensorLike, segment_ids: TensorLike, num_segments: TensorLike, name: str | None = None
) -> Tensor:
    """The minimum of the rows of `data` that share a segment id (the dtype's highest for empty ones)."""
    return _segment_call("min", data, segment_ids, num_segments)


@table.export("math.unsorted_segment_sqrt_n", dtypes=table.REAL_FLOAT)
def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """The sums of the rows of `data` that share a segment id, divided by the square root of their count
    (empty segments 0), as TF composes it."""
    summed, counts = _sums_and_counts(data, segment_ids, num_segments)
    return math_ops.truediv(summed, math_ops.sqrt(math_ops.maximum(counts, 1)))


@table.export("math.segment_sum", dtypes=table.NUMERIC, note="segment ids must be known (not traced)")
def segment_sum(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor:
    """Sums the rows of `data` per sorted segment id; there are max(id) + 1 segments."""
    return _sorted_segment("sum", data, segment_ids, "SegmentSum")


@table.export(
    "math.unsorted_segment_prod",
    gradient="tf",
    dtypes=table.NUMERIC,
    note="the gradient is exact at zeros and not conjugated for complex, as TF's",
)
def unsorted_segment_prod(
    data: TensorLike, segment_ids: TensorLike, num_segments: TensorLike, name: str | None = None
) -> Tensor:
    """Multiplies the rows of `data` that share a segment id (1 for empty segments; negative ids are dropped).

    Args:
      data: a numeric tensor.
      segment_ids: int32 or int64 ids, a prefix of `data`'s shape.
      num_segments: the number of segments.
      name: ignored.

    Returns:
      A tensor of shape `[num_segments] + data.shape[segment_ids.rank:]`.

    Raises:
      InvalidArgumentError: if an id is `num_segments` or more, or the shapes do not match.
    """
    return _segment_call("prod", data, segment_ids, num_segments)


@table.export(
    "math.segment_prod",
    gradient="tf",
    dtypes=table.NUMERIC,
    note="segment ids must be known (not traced); the gradient is exact at zeros, as TF's",
)
def segment_prod(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor:
    """Multiplies the rows of `data` per sorted segment id; there are max(id) + 1 segments (empty ones 1).

    Raises:
      InvalidArgumentError: if the ids are not sorted or are negative.
    """
    return _sorted_segment("prod", data, segment_ids, "SegmentProd")


@table.export("math.segment_mean", dtypes=table.REAL, note="segment ids must be known (not traced)")
def segment_mean(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor:
    """Averages the rows of `data` per sorted segment id (0 for empty segments; integers truncated, as TF)."""
    return _sorted_segment("mean", data, segment_ids, "SegmentMean")


@table.export("math.segment_max", dtypes=table.REAL, note="segment ids must be known (not traced)")
def segment_max(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor:
    """The maximum of the rows of `data` per sorted segment id (0 for empty segments)."""
    return _sorted_segment("max", data, segment_ids, "SegmentMax")


@table.export("math.segment_min", dtypes=table.REAL, note="segment ids must be known (not traced)")
def segment_min(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor:
    """The minimum of the rows of `data` per sorted segment id (0 for empty segments)."""
    return _sorted_segment("min", data, segment_ids, "SegmentMin")


def _weighted_bincount(values: jax.Array, weights: jax.Array, length: int, per_row: bool) -> jax.Array:
    weights = gradient_not_registered("DenseBincount")(weights)
    if per_row:
        return jax.vmap(lambda v, w: jnp.zeros((length,), w.dtype).at[v].add(w, mode="drop"))(values, weights)
    return jnp.zeros((length,), weights.dtype).at[values.reshape(-1)].add(weights.reshape(-1), mode="drop")


_weighted_bincount_op = OpDef("DenseBincount", _weighted_bincount, True)


@table.export(
    "math.bincount",
    gradient="custom",
    dtypes=table.REAL,
    note="arr must be known (not traced); differentiating through weights raises LookupError, as TF",
    op=_weighted_bincount_op,
)
def bincount(
    arr: TensorLike,
    weights: TensorLike | None = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: DTypeLike = dtypes.int32,
    name: str | None = None,
    axis: AxisLike = None,
    binary_output: bool = False,
) -> Tensor:
    """Counts occurrences of each value in the int array `arr` (weighted if `weights` is given).

    As in TF, the weighted count is an op with no registered gradient: it is
    recorded when a tape watches `weights`, and asking for a gradient through it
    raises `LookupError`.
    """
    arr_t = convert_to_tensor(arr)
    data = np.asarray(arr_t.numpy())
    if binary_output and weights is not None:
        raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one.")
    weights_t = None if weights is None else convert_to_tensor(weights)
    if data.size and data.min() < 0:
        raise errors.invalid_argument(f"Input arr must be non-negative! Got: {data.min()}", "Bincount")
    length = int(data.max()) + 1 if data.size else 0
    if minlength is not None:
        length = max(length, int(minlength))
    if maxlength is not None:
        length = min(length, int(maxlength))
    if weights_t is not None:
        per_row = axis == -1 and data.ndim == 2
        return apply(_weighted_bincount_op, (arr_t, weights_t), (("length", length), ("per_row", per_row)))[0]
    out_dtype = dtypes.as_dtype(dtype).as_numpy_dtype

    def count(values: np.ndarray) -> np.ndarray:
        keep = values < length
        counts = np.bincount(values[keep].astype(np.int64), minlength=length)[:length]
        return np.minimum(counts, 1) if binary_output else counts

    if axis == -1 and data.ndim == 2:
        rows = [count(data[i]) for i in range(data.shape[0])]
        return convert_to_tensor(np.stack(rows).reshape(data.shape[0], length).astype(out_dtype))
    return convert_to_tensor(count(data.reshape(-1)).astype(out_dtype))
