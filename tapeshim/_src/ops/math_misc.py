"""More `tf.math` rows: `reciprocal_no_nan`, `multiply_no_nan`, `scalar_mul`, `erfinv`,
`cumulative_logsumexp`, `polyval` and `confusion_matrix`."""

from __future__ import annotations

from typing import Any, overload

import jax.scipy.special
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.indexed_slices import IndexedSlices
from tapeshim._src.ops import array_ops, debugging_ops, manip_ops, math_ops, table
from tapeshim._src.ops.common import broadcast_check, checks, dtype_check, missing_kernel, normalize_axis, static_error
from tapeshim._src.ops.math_kernels import cumulative_logsumexp_impl, mul_no_nan_impl
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, TensorLike

_mul_no_nan_op = OpDef(
    "MulNoNan", mul_no_nan_impl, True, checks(dtype_check("MulNoNan", "fc"), broadcast_check("MulNoNan"))
)
_erfinv_op = OpDef("Erfinv", jax.scipy.special.erfinv, True, dtype_check("Erfinv", "f"))
_cumulative_logsumexp_op = OpDef(
    "CumulativeLogsumexp", cumulative_logsumexp_impl, True, dtype_check("CumulativeLogsumexp", "f")
)


@table.export(
    "math.reciprocal_no_nan",
    gradient="tf",
    dtypes=table.FLOAT,
    note="divide_no_nan(1, x): 0 and a finite gradient where x == 0, as TF",
)
@ragged_dispatch()
def reciprocal_no_nan(x: TensorLike, name: str | None = None) -> Tensor:
    """1 / x element-wise, 0 where x == 0, as `tf.math.reciprocal_no_nan`.

    Args:
      x: a floating or complex tensor.
      name: ignored.

    Returns:
      A tensor of `x`'s shape and dtype.

    Raises:
      InvalidArgumentError: for an integer or bool `x` (TF's DivNoNan has no such kernel).
    """
    x = convert_to_tensor(x)
    return math_ops._divide_no_nan(convert_to_tensor(1, dtype=x._dtype), x)


@table.export(
    "math.multiply_no_nan",
    gradient="tf",
    dtypes=table.FLOAT,
    note="y's gradient is x * upstream also where y == 0; complex gradients unconjugated, as TF's MulNoNanGrad",
    op=_mul_no_nan_op,
)
@ragged_dispatch("x", "y")
def multiply_no_nan(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """x * y element-wise with broadcasting, 0 where y == 0 even if x is inf or nan, as `tf.math.multiply_no_nan`.

    Args:
      x: a floating or complex tensor.
      y: a tensor converted to `x`'s dtype.
      name: ignored.

    Returns:
      A tensor of the broadcast shape.

    Raises:
      ValueError: if `y` is a tensor of another dtype.
      InvalidArgumentError: for integer dtypes or shapes that do not broadcast.
    """
    a = convert_to_tensor(x)
    b = convert_to_tensor(y, dtype=a._dtype)
    return apply(_mul_no_nan_op, (a, b))[0]


@overload
def scalar_mul(scalar: TensorLike, x: IndexedSlices, name: str | None = None) -> IndexedSlices: ...


@overload
def scalar_mul(scalar: TensorLike, x: TensorLike, name: str | None = None) -> Tensor: ...


@table.export("math.scalar_mul", "scalar_mul", dtypes=table.NUMERIC)
@ragged_dispatch("x")
def scalar_mul(scalar: TensorLike, x: TensorLike | IndexedSlices, name: str | None = None) -> Tensor | IndexedSlices:
    """`scalar * x`, the scalar converted to `x`'s dtype, as `tf.math.scalar_mul`; an `IndexedSlices` `x`
    stays one (its values scaled).

    Args:
      scalar: a 0-D value.
      x: a tensor, variable or `IndexedSlices`.
      name: ignored.

    Returns:
      A tensor (or `IndexedSlices`) of `x`'s shape and dtype.

    Raises:
      ValueError: if `scalar` is not 0-D, or is a tensor of another dtype.
      TypeError: if a Python `scalar` cannot take `x`'s dtype.
    """
    dtype = x.dtype  # type: ignore[union-attr]  # (TF reads it too: a list `x` is an AttributeError)
    factor = convert_to_tensor(scalar, dtype=dtype)
    if factor._shape:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {tuple(factor._shape)}.")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(math_ops.multiply(factor, x.values), x.indices, x.dense_shape)
    return math_ops.multiply(factor, x)


@table.export(
    "math.erfinv",
    dtypes=table.REAL_FLOAT,
    note="float16/bfloat16 raise NotFoundError, as TF's CPU kernels",
    op=_erfinv_op,
)
@ragged_dispatch()
def erfinv(x: TensorLike, name: str | None = None) -> Tensor:
    """The inverse of the error function element-wise, as `tf.math.erfinv` (inf at 1, nan outside [-1, 1]).

    Args:
      x: a float32 or float64 tensor.
      name: ignored.

    Returns:
      A tensor of `x`'s shape and dtype.

    Raises:
      NotFoundError: for float16 and bfloat16, which TF's CPU kernels do not support.
      InvalidArgumentError: for other dtypes.
    """
    x = convert_to_tensor(x)
    if x._dtype.name in ("float16", "bfloat16"):
        raise missing_kernel("Erfinv", f"T=DT_{'HALF' if x._dtype.name == 'float16' else 'BFLOAT16'}")
    return apply(_erfinv_op, (x,))[0]


@table.export(
    "math.cumulative_logsumexp",
    gradient="tf",
    dtypes=table.REAL_FLOAT,
    note="TF's log-space gradient (nan where an input and its result are both -inf); forward mode of an "
    "exclusive scan gives 0, not TF's nan, at its -inf start",
    op=_cumulative_logsumexp_op,
)
def cumulative_logsumexp(
    x: TensorLike, axis: AxisLike = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """log(cumsum(exp(x))) along `axis`, computed stably, as `tf.math.cumulative_logsumexp`.

    Args:
      x: a floating tensor.
      axis: the axis to scan (an int or a scalar int tensor).
      exclusive: leave each element out of its own result (the first result is -inf).
      reverse: scan from the end.
      name: ignored.

    Returns:
      A tensor of `x`'s shape and dtype.

    Raises:
      InvalidArgumentError: if `axis` is out of range or the dtype is not floating.
    """
    x = convert_to_tensor(x)
    rank = len(x._shape)
    position = int(convert_to_tensor(axis).numpy()) if isinstance(axis, Tensor) else int(axis)  # type: ignore[arg-type]
    if not -rank <= position < rank:
        raise static_error(f"ScanOp: Expected scan axis in the range [{-rank}, {rank}), but got {position}")
    (position,) = normalize_axis(position, rank)
    static = (("axis", position), ("exclusive", bool(exclusive)), ("reverse", bool(reverse)))
    return apply(_cumulative_logsumexp_op, (x,), static)[0]


@table.export("math.polyval", dtypes=table.NUMERIC)
def polyval(coeffs: list, x: TensorLike, name: str | None = None) -> Tensor:
    """The polynomial `coeffs[0] * x**(n-1) + ... + coeffs[n-1]` by Horner's rule, as `tf.math.polyval`.

    Each coefficient is converted on its own (as TF does, so a Python float is float32), so
    coefficients and `x` must share a dtype; with no coefficients the result is zeros like `x`.

    Args:
      coeffs: a list of tensors (or values), broadcasting with `x`, highest power first.
      x: a tensor.
      name: ignored.

    Returns:
      The polynomial's value: one coefficient alone is returned as given (not broadcast).

    Raises:
      ValueError: if `coeffs` is not a list.
      InvalidArgumentError: if the dtypes differ.
    """
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    point = convert_to_tensor(x)
    if not coeffs:
        return array_ops.zeros_like(point)
    terms = [convert_to_tensor(c) for c in coeffs]
    value = terms[0]
    for term in terms[1:]:
        value = math_ops.add(term, math_ops.multiply(value, point))
    return value


def _squeezed(first: Tensor, second: Tensor) -> tuple[Tensor, Tensor]:
    """Drops a last dimension of size 1 from whichever of the two has one more dimension than the other."""
    rank_first, rank_second = len(first._shape), len(second._shape)
    if rank_second == rank_first + 1 and second._shape[-1] == 1:
        second = array_ops.squeeze(second, [-1])
    elif rank_first == rank_second + 1 and first._shape[-1] == 1:
        first = array_ops.squeeze(first, [-1])
    return first, second


@table.export(
    "math.confusion_matrix",
    dtypes=table.REAL,
    note="without num_classes, labels and predictions must be known (not traced); value checks are "
    "skipped inside tapeshim.function",
)
def confusion_matrix(
    labels: TensorLike,
    predictions: TensorLike,
    num_classes: Any = None,
    weights: TensorLike | None = None,
    dtype: DTypeLike = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """The `[num_classes, num_classes]` matrix counting (or summing `weights` over) each (label, prediction)
    pair, as `tf.math.confusion_matrix`.

    Labels and predictions are cast to int64 (floats truncated); a trailing dimension of size 1 on one of them
    is squeezed away. Without `num_classes`, it is max(labels, predictions) + 1, which depends on their values.

    Args:
      labels: the true classes, 1-D.
      predictions: the predicted classes, of the labels' shape.
      num_classes: the number of classes, or None.
      weights: one weight per pair, or None for ones.
      dtype: the result's dtype (the weights are cast to it).
      name: ignored.

    Returns:
      The confusion matrix, rows the labels and columns the predictions.

    Raises:
      InvalidArgumentError: if a label or prediction is negative, or not below `num_classes`, or the shapes
        of labels and predictions differ.
      ValueError: if `weights` does not have the predictions' shape.
    """
    truth, guess = _squeezed(convert_to_tensor(labels), convert_to_tensor(predictions))
    truth, guess = math_ops.cast(truth, dtypes.int64), math_ops.cast(guess, dtypes.int64)
    weight = None
    if weights is not None:
        guess, weight = _squeezed(guess, convert_to_tensor(weights))
        if tuple(weight._shape) != tuple(guess._shape):
            raise ValueError(f"Shapes {tuple(guess._shape)} and {tuple(weight._shape)} are incompatible")
    debugging_ops.assert_non_negative(truth, message="`labels` contains negative values")
    debugging_ops.assert_non_negative(guess, message="`predictions` contains negative values")
    if num_classes is None:
        found = [np.asarray(t.numpy()) for t in (truth, guess)]
        if not all(values.size for values in found):  # (TF's maximum of nothing is int64's lowest)
            raise errors.invalid_argument(f"Dimension {np.iinfo(np.int64).min + 1} must be >= 0", "ScatterNd")
        classes = int(max(values.max() for values in found)) + 1
    else:
        classes = int(array_ops.folded_int(num_classes))
        debugging_ops.assert_less(truth, np.int64(classes), message="`labels` out of bound")
        debugging_ops.assert_less(guess, np.int64(classes), message="`predictions` out of bound")
    indices = array_ops.stack([truth, guess], axis=1)
    updates = array_ops.ones_like(guess, dtype=dtype) if weight is None else math_ops.cast(weight, dtype)
    return manip_ops.scatter_nd(indices, updates, [classes, classes])
