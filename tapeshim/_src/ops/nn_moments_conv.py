"""More `tf.nn` rows built from other ops: `weighted_moments`, `normalize_moments` and `separable_conv2d`
(JAX's gradients of the ops they run, which are TF's)."""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import array_ops, conv_ops, math_ops, table
from tapeshim._src.ops.common import attr_error, tf_type_name
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, TensorLike


@table.export(
    "nn.weighted_moments",
    dtypes=table.REAL_FLOAT,
    note="float16 is computed in float32, as TF; zero total weight gives 0 (divide_no_nan), as TF",
)
def weighted_moments(
    x: TensorLike, axes: AxisLike, frequency_weights: TensorLike, keepdims: bool = False, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """The mean and variance of `x` over `axes`, each element weighted by `frequency_weights`, as
    `tf.nn.weighted_moments`.

    Args:
      x: a floating tensor.
      axes: the axes to reduce.
      frequency_weights: weights broadcasting with `x`, cast to `x`'s dtype.
      keepdims: keep the reduced axes with size 1.
      name: ignored.

    Returns:
      `(mean, variance)`, of `x`'s dtype.

    Raises:
      InvalidArgumentError: if the weights do not broadcast with `x`, or an axis is out of range.
    """
    t = convert_to_tensor(x)
    weights = convert_to_tensor(frequency_weights)
    half = t._dtype == dtypes.float16
    if half:  # (summed in float32, as TF)
        t = math_ops.cast(t, dtypes.float32)
    if weights._dtype != t._dtype:
        weights = math_ops.cast(weights, t._dtype)
    total = math_ops.reduce_sum(math_ops.multiply(weights, t), axes, keepdims=True)
    weight_sum = math_ops.reduce_sum(math_ops.add(weights, array_ops.zeros_like(t)), axes, keepdims=True)
    mean = math_ops.divide_no_nan(total, weight_sum)
    spread = math_ops.reduce_sum(math_ops.multiply(weights, math_ops.squared_difference(t, mean)), axes, keepdims=True)
    variance = math_ops.divide_no_nan(spread, weight_sum)
    if not keepdims:
        mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
    if half:
        mean, variance = math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
    return mean, variance


@table.export("nn.normalize_moments", dtypes=table.REAL_FLOAT)
def normalize_moments(
    counts: TensorLike,
    mean_ss: TensorLike,
    variance_ss: TensorLike,
    shift: TensorLike | None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean and variance from sufficient statistics, as `tf.nn.normalize_moments`.

    Args:
      counts: the number of elements summed.
      mean_ss: the sum of the (shifted) elements.
      variance_ss: the sum of the squared (shifted) elements.
      shift: the shift the sums were taken with, or None.
      name: ignored.

    Returns:
      `(mean, variance)`: `mean_ss / counts + shift` and `variance_ss / counts - (mean_ss / counts)**2`.

    Raises:
      InvalidArgumentError: if the dtypes differ.
      NotFoundError: for integer `counts`, as TF's Reciprocal has no such CPU kernel.
    """
    divisor = math_ops.reciprocal(counts)
    shifted_mean = math_ops.multiply(mean_ss, divisor)
    mean = shifted_mean if shift is None else math_ops.add(shifted_mean, shift)
    variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean))
    return mean, variance


def _depthwise_checks(x: Tensor, padding: Any, data_format: str, strides: Any) -> None:
    """TF's DepthwiseConv2dNative checks the convolution helper does not make."""
    if not isinstance(strides, (list, tuple)):
        raise TypeError(f"Expected list for 'strides' argument to 'depthwise_conv2d_native' Op, not {strides!r}.")
    if isinstance(padding, str) and padding not in ("SAME", "VALID"):
        raise attr_error(
            f'Value for attr \'padding\' of "{padding}" is not in the list of allowed values: "SAME", "VALID", '
            '"EXPLICIT"\n\t; NodeDef: {{node DepthwiseConv2dNative}}',
            "DepthwiseConv2dNative",
        )
    if x._dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise attr_error(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values: half, bfloat16, float, "
            "double\n\t; NodeDef: {{node DepthwiseConv2dNative}}",
            "DepthwiseConv2dNative",
        )
    if len(strides) == 4 and strides[1] != strides[2]:
        raise errors.invalid_argument(
            "Current implementation only supports equal length strides in the row and column dimensions.",
            "DepthwiseConv2dNative",
        )
    if data_format != "NHWC":
        raise errors.UnimplementedError(
            None,
            None,
            "Depthwise convolution on CPU is only supported for NHWC format [Op:DepthwiseConv2dNative]",
        )


@table.export(
    "nn.separable_conv2d",
    dtypes=table.REAL_FLOAT,
    note="NHWC only: NCHW raises UnimplementedError, as TF's CPU kernels; dilations with strides > 1 (which TF "
    "documents as unsupported) give the strided dilated convolution, not TF's space-to-batch result",
)
def separable_conv2d(
    input: TensorLike,  # noqa: A002 - TF's name
    depthwise_filter: TensorLike,
    pointwise_filter: TensorLike,
    strides: Any,
    padding: Any,
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """A depthwise convolution followed by a 1x1 convolution mixing its channels, as `tf.nn.separable_conv2d`.

    Args:
      input: a 4-D NHWC floating tensor.
      depthwise_filter: `[h, w, in_channels, multiplier]`.
      pointwise_filter: `[1, 1, in_channels * multiplier, out_channels]`.
      strides: the depthwise convolution's `[1, stride, stride, 1]` (a list).
      padding: "SAME" or "VALID", for the depthwise convolution.
      data_format: "NHWC" (or None); "NCHW" raises, as TF's CPU kernels.
      dilations: the depthwise convolution's `[rate, rate]`, or None.
      name: ignored.

    Returns:
      The `[batch, out_height, out_width, out_channels]` result.

    Raises:
      TypeError: if `strides` is not a list.
      ValueError: if the pointwise filter is not 1x1.
      InvalidArgumentError: for bad ranks, channel counts, dtypes, padding or unequal strides.
      UnimplementedError: for "NCHW".
    """
    x = convert_to_tensor(input)
    depthwise = convert_to_tensor(depthwise_filter)
    pointwise = convert_to_tensor(pointwise_filter)
    layout = data_format or "NHWC"
    _depthwise_checks(x, padding, layout, strides)
    for size in pointwise._shape[:2]:
        if size != 1:
            raise ValueError(f"Dimensions {size} and 1 are not compatible")
    if len(x._shape) != 4:
        raise errors.invalid_argument(
            f"input must be 4-dimensional[{','.join(map(str, x._shape))}]", "DepthwiseConv2dNative"
        )
    if len(depthwise._shape) != 4:
        raise errors.invalid_argument(
            f"filter must be 4-dimensional: [{','.join(map(str, depthwise._shape))}]", "DepthwiseConv2dNative"
        )
    if depthwise._dtype != x._dtype:
        raise attr_error(
            "cannot compute DepthwiseConv2dNative as input #1(zero-based) was expected to be a "
            f"{tf_type_name(x._dtype)} tensor but is a {tf_type_name(depthwise._dtype)} tensor",
            "DepthwiseConv2dNative",
        )
    if x._shape[3] != depthwise._shape[2]:
        raise errors.invalid_argument(
            f"input and filter must have the same depth: {x._shape[3]} vs {depthwise._shape[2]}",
            "DepthwiseConv2dNative",
        )
    mixed = conv_ops.depthwise_conv2d(x, depthwise, strides, padding, layout, dilations)
    return conv_ops.conv2d(mixed, pointwise, [1, 1, 1, 1], "VALID", layout)
