"""`tf.searchsorted`, `tf.histogram_fixed_width` (and `_bins`), `tf.unravel_index`: no gradient."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import array_ops, table
from tapeshim._src.ops.common import attr_error, convert_same_dtype
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.static_value import known_value
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike


def _index_dtype(dtype: Any, attr: str, op_name: str) -> dtypes.DType:
    result = dtypes.as_dtype(dtype)
    if result not in (dtypes.int32, dtypes.int64):
        raise attr_error(
            f"Value for attr '{attr}' of {result.name} is not in the list of allowed values: int32, "
            f"int64\n\t; NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    return result


def _searchsorted(seq: jax.Array, values: jax.Array, side: str, out: Any) -> jax.Array:
    rows = jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))(seq, values)
    return rows.astype(out)


_lower_op = OpDef("LowerBound", _searchsorted, False)
_upper_op = OpDef("UpperBound", _searchsorted, False)


@table.export("searchsorted", gradient="-", dtypes=table.REAL)
def searchsorted(
    sorted_sequence: Any,
    values: TensorLike,
    side: str = "left",
    out_type: DTypeLike = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Where each value would be inserted into its row of `sorted_sequence`, as `tf.searchsorted`.

    Args:
      sorted_sequence: an N-D tensor sorted along its innermost dimension.
      values: an N-D tensor with the same leading dimensions.
      side: `"left"` (first suitable index) or `"right"` (last).
      out_type: int32 or int64.

    Raises:
      ValueError: `side` is not "left" or "right".
      InvalidArgumentError: the leading dimensions differ, or the dtypes do.
    """
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = {side!r}.")
    op_name = "LowerBound" if side == "left" else "UpperBound"
    seq, vals = convert_same_dtype((sorted_sequence, values), op_name)
    out = _index_dtype(out_type, "out_type", op_name)
    for t in (seq, vals):
        if not t._shape:
            raise errors.invalid_argument("slice index -1 of dimension 0 out of bounds.", "StridedSlice")
    seq_rows = int(np.prod(seq._shape[:-1], dtype=np.int64))
    val_rows = int(np.prod(vals._shape[:-1], dtype=np.int64))
    if seq_rows != val_rows:
        raise errors.invalid_argument("Leading dim_size of both tensors must match.", op_name)

    seq2 = array_ops.reshape(seq, [seq_rows, seq._shape[-1]])
    vals2 = array_ops.reshape(vals, [val_rows, vals._shape[-1]])
    result = apply(_lower_op if side == "left" else _upper_op, (seq2, vals2), (("side", side), ("out", out._np)))[0]
    return array_ops.reshape(result, list(vals._shape))


def _histogram(values: jax.Array, value_range: jax.Array, nbins: int, out: Any) -> jax.Array:
    lo, hi = value_range[0], value_range[1]
    step = (hi - lo).astype(jnp.float64) / nbins
    shifted = (jnp.maximum(values.reshape(-1), lo) - lo).astype(jnp.float64)
    index = jnp.minimum(shifted / step, nbins - 1).astype(jnp.int32)
    return jnp.bincount(index, length=nbins).astype(out)


_histogram_op = OpDef("HistogramFixedWidth", _histogram, False)


def _histogram_inputs(values: Any, value_range: Any, nbins: Any, dtype: Any) -> tuple:
    v, r = convert_same_dtype((values, value_range), "HistogramFixedWidth")
    allowed = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)
    if v._dtype not in allowed:
        raise attr_error(
            f"Value for attr 'T' of {v._dtype.name} is not in the list of allowed values: int32, int64, "
            "float, double\n\t; NodeDef: {{node HistogramFixedWidth}}",
            "HistogramFixedWidth",
        )
    out = _index_dtype(dtype, "dtype", "HistogramFixedWidth")
    known_bins = known_value(convert_to_tensor(nbins))
    if known_bins is None:  # the histogram's shape depends on it
        raise TypeError("`nbins` must be known when the histogram is built, not computed inside the program.")
    bins = int(known_bins)
    if bins <= 0:
        raise errors.invalid_argument(f"nbins should be a positive number, but got '{bins}'", "HistogramFixedWidth")
    known = known_value(r)
    if known is not None and not known[0] < known[1]:
        shown = ", ".join(f"{x:g}" for x in known.tolist())
        raise errors.invalid_argument(
            f"value_range should satisfy value_range[0] < value_range[1], but got '[{shown}]'", "HistogramFixedWidth"
        )
    return v, r, bins, out


@table.export("histogram_fixed_width", gradient="-", dtypes=table.REAL, op=_histogram_op)
def histogram_fixed_width(
    values: TensorLike,
    value_range: TensorLike,
    nbins: TensorLike = 100,
    dtype: DTypeLike = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Counts `values` in `nbins` equal bins over `value_range` (outliers in the end bins).

    Raises:
      InvalidArgumentError: `nbins` is not positive, `value_range[0] >= value_range[1]`,
        or a dtype is not allowed.
    """
    v, r, bins, out = _histogram_inputs(values, value_range, nbins, dtype)
    return apply(_histogram_op, (v, r), (("nbins", bins), ("out", out._np)))[0]


def _bins(values: jax.Array, value_range: jax.Array, nbins: int, out: Any) -> jax.Array:
    scaled = (values - value_range[0]) / (value_range[1] - value_range[0])
    index = jnp.clip(jnp.floor(jnp.asarray(nbins, values.dtype) * scaled), 0, nbins - 1)
    return index.astype(out)


_bins_op = OpDef("HistogramFixedWidthBins", _bins, False)


@table.export("histogram_fixed_width_bins", gradient="-", dtypes=table.REAL, op=_bins_op)
def histogram_fixed_width_bins(
    values: TensorLike,
    value_range: TensorLike,
    nbins: TensorLike = 100,
    dtype: DTypeLike = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """The bin of each value for `histogram_fixed_width` (same shape as `values`).

    Raises:
      InvalidArgumentError: `nbins` is not positive, a dtype is not allowed, or `values` are integers.
    """
    v, r, bins, out = _histogram_inputs(values, value_range, nbins, dtype)
    if not v._dtype.is_floating:  # TF scales integer values by a float64 nbins: its Mul refuses them
        raise attr_error(
            f"cannot compute Mul as input #1(zero-based) was expected to be a {v._dtype.name} tensor "
            "but is a double tensor",
            "Mul",
        )
    return apply(_bins_op, (v, r), (("nbins", bins), ("out", out._np)))[0]


def _unravel(indices: jax.Array, dims: jax.Array) -> jax.Array:
    parts = []
    rest = indices
    for k in range(dims.shape[0] - 1, -1, -1):
        parts.append(lax.rem(rest, dims[k]))
        rest = lax.div(rest, dims[k])
    return jnp.stack(parts[::-1])


_unravel_op = OpDef("UnravelIndex", _unravel, False)


@table.export("unravel_index", gradient="-", dtypes="int32, int64", op=_unravel_op)
def unravel_index(indices: TensorLike, dims: TensorLike, name: str | None = None) -> Tensor:
    """The coordinates of flat `indices` in an array of shape `dims`, as `tf.unravel_index`.

    Returns:
      A tensor of shape `[len(dims)] + indices.shape`.

    Raises:
      InvalidArgumentError: a dtype other than int32/int64, different dtypes, indices of
        rank above 1, or (eagerly) an index past the array.
    """
    idx, shape = convert_same_dtype((indices, dims), "UnravelIndex")
    _index_dtype(idx._dtype, "Tidx", "UnravelIndex")
    if len(idx._shape) > 1:
        raise errors.invalid_argument(
            f'The indices can only be scalar or vector, got "[{",".join(map(str, idx._shape))}]"', "UnravelIndex"
        )
    known_idx, known_dims = known_value(idx), known_value(shape)
    if (
        known_idx is not None
        and known_dims is not None
        and known_idx.size
        and (np.max(known_idx) >= np.prod(known_dims, dtype=np.int64))
    ):
        raise errors.invalid_argument("index is out of bound as with dims", "UnravelIndex")
    return apply(_unravel_op, (idx, shape))[0]


def _in_top_k(predictions: jax.Array, targets: jax.Array, k: int) -> jax.Array:
    """TF's InTopKV2: a target is in the top k when fewer than k predictions of its row beat it; a target out of
    range, or a row with a non-finite prediction, is not."""
    classes = predictions.shape[-1]
    valid = (targets >= 0) & (targets < classes)
    picked = jnp.take_along_axis(predictions, jnp.clip(targets, 0, classes - 1)[:, None].astype(jnp.int32), axis=1)
    beaten_by = jnp.sum(predictions > picked, axis=1)
    return valid & jnp.all(jnp.isfinite(predictions), axis=1) & (beaten_by < k)  # (a non-finite row: False)


_in_top_k_op = OpDef("InTopKV2", _in_top_k, False)


@table.export("math.in_top_k", "nn.in_top_k", gradient="-", dtypes="float32", op=_in_top_k_op)
def in_top_k(targets: TensorLike, predictions: TensorLike, k: Any, name: str | None = None) -> Tensor:
    """Whether each row's `targets` class is among its `k` largest `predictions` (ties count in), as TF.

    Raises:
      InvalidArgumentError: for predictions that are not a matrix of float32, or targets not a vector of one
        entry per row.
    """
    scores, wanted = convert_to_tensor(predictions), convert_to_tensor(targets)
    if len(scores._shape) != 2:
        raise errors.invalid_argument(f"predictions must be 2-dimensional, got [{len(scores._shape)}]", "InTopKV2")
    if len(wanted._shape) != 1 or wanted._shape[0] != scores._shape[0]:
        raise errors.invalid_argument(
            f"First dimension of predictions {scores._shape[0]} must match length of targets "
            f"{wanted._shape[0] if wanted._shape else 0}",
            "InTopKV2",
        )
    if scores._dtype.name != "float32":
        raise attr_error(
            f"Value for attr 'T' of {scores._dtype.name} is not in the list of allowed values: float", "InTopKV2"
        )
    if not wanted._dtype.is_integer:
        raise attr_error(f"targets must be int32 or int64, got {wanted._dtype.name}", "InTopKV2")
    return apply(_in_top_k_op, (scores, wanted), (("k", int(convert_to_tensor(k).numpy())),))[0]
