"""Windowed ops on NHWC images that pick one element per window: `tf.nn.max_pool_with_argmax`,
`tf.nn.dilation2d` and `tf.nn.erosion2d` (grayscale morphology), and `tf.nn.local_response_normalization`.

The picking ops scan each window in TF's CPU kernel's order (rows, then columns) with its comparison, so
that ties and NaNs pick the element TF picks; the value is then gathered at that element, so JAX's gradient
sends the upstream gradient there, which is TF's gradient (`MaxPoolGradWithArgmax`, `Dilation2DBackprop*`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import manip_ops, math_ops, table
from tapeshim._src.ops.common import attr_error, convert_same_dtype, dtype_check, missing_kernel, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_ALLOWED_PADDINGS = '"SAME", "VALID"'


class MaxPoolWithArgmax(NamedTuple):
    """What `tf.nn.max_pool_with_argmax` returns (TF's `gen_nn_ops.MaxPoolWithArgmax`)."""

    output: Tensor
    argmax: Tensor


def _lowest(dtype: Any) -> Any:
    """The lowest finite value of `dtype` (TF's kernels' initial maximum)."""
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.finfo(dtype).min
    return jnp.iinfo(dtype).min


def _output_size(size: int, window: int, stride: int, padding: str, op_name: str) -> tuple[int, int]:
    """The output size and the padding before, for one spatial dimension (TF's `GetWindowedOutputSize`)."""
    if padding == "VALID":
        out = int((size - window + stride) / stride)  # (C++ division, toward zero)
        if out < 0:
            raise static_error(
                f"Computed output size would be negative: {out} [input_size: {size}, effective_filter_size: "
                f"{window}, stride: {stride}]",
                op_name,
            )
        return out, 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + window - size, 0) // 2


def _windows(
    x: jax.Array, fill: Any, window: tuple, strides: tuple, rates: tuple, before: tuple, out: tuple
) -> tuple[jax.Array, jax.Array]:
    """Each output position's window of `x` (`[n, oh, ow, kh * kw, c]`, rows first) and whether each element is
    inside the image (not padding)."""
    n, h, w, c = x.shape
    spans = [(o - 1) * s + 1 if o else 0 for o, s in zip(out, strides)]
    needs = [span + (k - 1) * r for span, k, r in zip(spans, window, rates)]
    after = [max(need - b - size, 0) for need, b, size in zip(needs, before, (h, w))]
    widths = [(0, 0), (before[0], after[0]), (before[1], after[1]), (0, 0)]
    padded = jnp.pad(x, widths, constant_values=fill)
    inside = jnp.pad(jnp.ones((1, h, w, 1), bool), widths)
    values, valid = [], []
    for i in range(window[0]):
        for j in range(window[1]):
            start = (0, i * rates[0], j * rates[1], 0)
            limit = (n, i * rates[0] + spans[0], j * rates[1] + spans[1], c)
            step = (1, strides[0], strides[1], 1)
            values.append(lax.slice(padded, start, limit, step))
            valid.append(lax.slice(inside, start, (1, limit[1], limit[2], 1), step))
    return jnp.stack(values, axis=3), jnp.stack(valid, axis=3)


def _pick(values: jax.Array, valid: jax.Array, start_unset: bool) -> jax.Array:
    """The position in each window of TF's maximum: the first valid element, then each strictly larger one
    (`start_unset`), or each valid element larger than the lowest value before it (not `start_unset`)."""
    best = jnp.full(values.shape[:3] + values.shape[4:], _lowest(values.dtype), values.dtype)
    arg = jnp.zeros(best.shape, jnp.int32)
    unset = jnp.ones(best.shape, bool)
    for k in range(values.shape[3]):
        v, ok = values[:, :, :, k], valid[:, :, :, k]
        take = ok & ((unset & start_unset) | (v > best))
        best = jnp.where(take, v, best)
        arg = jnp.where(take, k, arg)
        unset = unset & ~take
    return arg


def _gather(values: jax.Array, arg: jax.Array) -> jax.Array:
    return jnp.take_along_axis(values, arg[:, :, :, None], axis=3)[:, :, :, 0]


def _max_pool_argmax(
    x: jax.Array, window: tuple, strides: tuple, before: tuple, out: tuple, index_dtype: str, with_batch: bool
) -> tuple[jax.Array, jax.Array]:
    n, h, w, c = x.shape
    values, valid = _windows(x, _lowest(x.dtype), window, strides, (1, 1), before, out)
    arg = _pick(values, valid, True)
    rows = jnp.arange(out[0])[:, None, None] * strides[0] + arg // window[1] - before[0]
    cols = jnp.arange(out[1])[None, :, None] * strides[1] + arg % window[1] - before[1]
    index = ((rows.astype(jnp.int64) * w + cols) * c + jnp.arange(c)).astype(jnp.int64)
    if with_batch:
        index = index + jnp.arange(n, dtype=jnp.int64)[:, None, None, None] * (h * w * c)
    return _gather(values, arg), index.astype(index_dtype)


_max_pool_argmax_op = OpDef("MaxPoolWithArgmax", _max_pool_argmax, True, dtype_check("MaxPoolWithArgmax", "fiu"))


def _sequence(value: Any, what: str) -> tuple[int, ...]:
    """TF's `_get_sequence(value, 2, 3, what)`: an int or 1, 2 or 4 values, as the 4 NHWC values."""
    values = [int(v) for v in np.atleast_1d(np.asarray(value)).tolist()]
    if len(values) == 1:
        return (1, values[0], values[0], 1)
    if len(values) == 2:
        return (1, *values, 1)
    if len(values) == 4:
        return tuple(values)
    raise ValueError(f"{what} should be of length 1, 2 or 4. Received: {what}={value} of length {len(values)}")


def _check_padding(padding: Any, op_name: str) -> str:
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    if padding not in ("SAME", "VALID"):
        raise attr_error(
            f"Value for attr 'padding' of \"{padding}\" is not in the list of allowed values: {_ALLOWED_PADDINGS}"
            f"\n\t; NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    return padding


def _check_nhwc(data_format: str) -> None:
    if data_format != "NHWC":
        raise ValueError(
            f"`data_format` values other  than 'NHWC' are not supported. Received: data_format={data_format}"
        )


@table.export(
    "nn.max_pool_with_argmax",
    dtypes=table.REAL,
    note="NHWC; ties pick TF's CPU kernel's element; int32 indices have a gradient (TF's CPU kernels: NotFoundError)",
    op=_max_pool_argmax_op,
)
def max_pool_with_argmax(
    input: TensorLike,  # noqa: A002
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    output_dtype: Any = "int64",
    include_batch_in_index: bool = False,
    name: str | None = None,
) -> MaxPoolWithArgmax:
    """2-D max pooling that also returns where each maximum is, as `tf.nn.max_pool_with_argmax`.

    A maximum at `[b, y, x, c]` has the flattened index `(y * width + x) * channels + c`, plus
    `b * height * width * channels` with `include_batch_in_index`.

    Args:
      input: a 4-D NHWC tensor.
      ksize: the window: an int, 2 values or 4 NHWC values.
      strides: the strides, in the same forms.
      padding: "SAME" or "VALID".
      data_format: "NHWC" only.
      output_dtype: the indices' dtype, int64 or int32.
      include_batch_in_index: whether the index counts the batch.
      name: ignored.

    Returns:
      `MaxPoolWithArgmax(output, argmax)`: the pooled values and their indices.

    Raises:
      ValueError: for another data format or a ksize or strides of another length.
      InvalidArgumentError: for a rank other than 4, a window or stride under 1, or a bad padding or dtype.
      UnimplementedError: for pooling across the batch or the depth.
    """
    _check_nhwc(data_format)
    window, steps = _sequence(ksize, "ksize"), _sequence(strides, "strides")
    index_dtype = dtypes.as_dtype(output_dtype)
    if index_dtype not in (dtypes.int32, dtypes.int64):
        raise attr_error(
            f"Value for attr 'Targmax' of {index_dtype.name.replace('float32', 'float').replace('float64', 'double')}"
            " is not in the list of allowed values: int32, int64\n\t; NodeDef: {{node MaxPoolWithArgmax}}",
            "MaxPoolWithArgmax",
        )
    padding = _check_padding(padding, "MaxPoolWithArgmax")
    x = convert_to_tensor(input)
    op_name = "MaxPoolWithArgmax"
    if len(x._shape) != 4:
        raise static_error(f"tensor_in must be 4-dimensional ({len(x._shape)})", op_name)
    if min(window) <= 0:
        raise static_error(f"ksize must be a positive int32 value, got:{min(window)}", op_name)
    if min(steps) <= 0:
        raise static_error(f"Stride must be > 0, but got {min(steps)}", op_name)
    if window[0] != 1 or steps[0] != 1:
        raise errors.UnimplementedError(None, None, "Pooling is not yet supported on the batch dimension.")
    if window[3] != 1 or steps[3] != 1:
        raise errors.UnimplementedError(None, None, "MaxPoolWithArgmax is not yet supported on the depth dimension.")
    sizes = [_output_size(x._shape[1 + i], window[1 + i], steps[1 + i], padding, op_name) for i in range(2)]
    static = (
        ("before", (sizes[0][1], sizes[1][1])),
        ("index_dtype", index_dtype.name),
        ("out", (sizes[0][0], sizes[1][0])),
        ("strides", steps[1:3]),
        ("window", window[1:3]),
        ("with_batch", bool(include_batch_in_index)),
    )
    output, argmax = apply(_max_pool_argmax_op, (x,), static)
    return MaxPoolWithArgmax(output, argmax)


def _dilation(x: jax.Array, f: jax.Array, strides: tuple, rates: tuple, before: tuple, out: tuple) -> jax.Array:
    window = f.shape[:2]
    values, valid = _windows(x, _lowest(x.dtype), window, strides, rates, before, out)
    sums = values + f.reshape(1, 1, 1, window[0] * window[1], f.shape[2])
    arg = _pick(sums, valid, False)
    found = jnp.any(jnp.take_along_axis(valid, arg[:, :, :, None], axis=3), axis=3)
    picked = _gather(sums, arg)
    return jnp.where(found & (picked > _lowest(x.dtype)), picked, jnp.asarray(_lowest(x.dtype), x.dtype))


_dilation_op = OpDef("Dilation2D", _dilation, True, dtype_check("Dilation2D", "fiu"))


def _four(value: Any, attr: str) -> tuple[int, ...]:
    values = [int(v) for v in np.atleast_1d(np.asarray(value)).tolist()]
    if len(values) < 4:
        raise attr_error(
            f"Length for attr '{attr}' of {len(values)} must be at least minimum 4\n\t; NodeDef: "
            "{{node Dilation2D}}",
            "Dilation2D",
        )
    return tuple(values)


@table.export("nn.dilation2d", dtypes=table.REAL, note="NHWC only, as TF", op=_dilation_op)
def dilation2d(
    input: TensorLike,  # noqa: A002
    filters: TensorLike,
    strides: Any,
    padding: str,
    data_format: str,
    dilations: Any,
    name: str | None = None,
) -> Tensor:
    """Grayscale dilation: each output is the maximum over the window of `input + filters`, as
    `tf.nn.dilation2d`.

    Args:
      input: a `[batch, height, width, depth]` tensor.
      filters: a `[filter_height, filter_width, depth]` tensor (one structuring function per channel).
      strides: the 4 NHWC strides (batch and depth 1).
      padding: "SAME" or "VALID".
      data_format: "NHWC" only.
      dilations: the 4 NHWC rates (batch and depth 1).
      name: ignored.

    Returns:
      The `[batch, out_height, out_width, depth]` dilation.

    Raises:
      ValueError: for another data format.
      InvalidArgumentError: for bad ranks, depths, strides, rates, padding or dtypes.
      UnimplementedError: for strides or rates across the batch or the depth.
    """
    _check_nhwc(data_format)
    op_name = "Dilation2D"
    steps, rates = _four(strides, "strides"), _four(dilations, "rates")
    padding = _check_padding(padding, op_name)
    x, f = convert_same_dtype((input, filters), op_name)
    if len(x._shape) != 4:
        raise static_error(f"input must be 4-dimensional[{','.join(map(str, x._shape))}]", op_name)
    if len(f._shape) != 3:
        raise static_error(f"filter must be 3-dimensional: [{','.join(map(str, f._shape))}]", op_name)
    if x._shape[3] != f._shape[2]:
        raise static_error(f"input and filter must have the same depth: {x._shape[3]} vs {f._shape[2]}", op_name)
    if steps[0] != 1 or steps[3] != 1:
        raise errors.UnimplementedError(None, None, "Stride is only supported across spatial dimensions.")
    if rates[0] != 1 or rates[3] != 1:
        raise errors.UnimplementedError(None, None, "Rate is only supported across spatial dimensions.")
    if min(steps) <= 0:
        raise static_error(f"Stride must be > 0, but got {min(steps)}", op_name)
    sizes = [
        _output_size(x._shape[1 + i], (f._shape[i] - 1) * rates[1 + i] + 1, steps[1 + i], padding, op_name)
        for i in range(2)
    ]
    static = (
        ("before", (sizes[0][1], sizes[1][1])),
        ("out", (sizes[0][0], sizes[1][0])),
        ("rates", rates[1:3]),
        ("strides", steps[1:3]),
    )
    return apply(_dilation_op, (x, f), static)[0]


@table.export("nn.erosion2d", dtypes=table.REAL, note="NHWC only, as TF")
def erosion2d(
    value: TensorLike,
    filters: TensorLike,
    strides: Any,
    padding: str,
    data_format: str,
    dilations: Any,
    name: str | None = None,
) -> Tensor:
    """Grayscale erosion, as `tf.nn.erosion2d`: `-dilation2d(-value, filters reversed in height and width)`.

    Args:
      value: a `[batch, height, width, depth]` tensor.
      filters: a `[filter_height, filter_width, depth]` tensor.
      strides: the 4 NHWC strides (batch and depth 1).
      padding: "SAME" or "VALID".
      data_format: "NHWC" only.
      dilations: the 4 NHWC rates (batch and depth 1).
      name: ignored.

    Returns:
      The `[batch, out_height, out_width, depth]` erosion.

    Raises:
      ValueError: for another data format.
      InvalidArgumentError: for the arguments `tf.nn.dilation2d` refuses.
    """
    _check_nhwc(data_format)
    reversed_filters = manip_ops.reverse(filters, [0, 1])
    return math_ops.negative(
        dilation2d(math_ops.negative(value), reversed_filters, strides, padding, data_format, dilations)
    )


def _lrn(x: jax.Array, radius: int, bias: float, alpha: float, beta: float) -> jax.Array:
    squares = x * x
    window = (1, 1, 1, 2 * radius + 1)
    total = lax.reduce_window(squares, 0.0, lax.add, window, (1, 1, 1, 1), ((0, 0),) * 3 + ((radius, radius),))
    return x * (bias + alpha * total) ** -beta


_lrn_op = OpDef("LRN", _lrn, True)


@table.export("nn.local_response_normalization", "nn.lrn", dtypes="float16, float32", op=_lrn_op)
def local_response_normalization(
    input: TensorLike,  # noqa: A002
    depth_radius: int = 5,
    bias: float = 1,
    alpha: float = 1,
    beta: float = 0.5,
    name: str | None = None,
) -> Tensor:
    """Local response normalization across the last (depth) dimension, as `tf.nn.local_response_normalization`:
    `input / (bias + alpha * sum(input[..., d - r : d + r + 1] ** 2)) ** beta`.

    Args:
      input: a 4-D float16 or float32 tensor.
      depth_radius: the half-width `r` of the window over the depth.
      bias: the offset (usually positive, so that nothing divides by 0).
      alpha: the scale.
      beta: the exponent.
      name: ignored.

    Returns:
      The normalized tensor, of `input`'s shape and dtype.

    Raises:
      InvalidArgumentError: for a rank other than 4, a negative radius, or a dtype other than float16 and
        float32 (TypeError while traced).
      NotFoundError: for bfloat16, which TF's CPU kernels do not take.
    """
    x = convert_to_tensor(input)
    if x._dtype is dtypes.bfloat16:
        raise missing_kernel("LRN", "T=DT_BFLOAT16")
    if x._dtype not in (dtypes.float16, dtypes.float32):
        name_ = {"float64": "double"}.get(x._dtype.name, x._dtype.name)
        raise attr_error(
            f"Value for attr 'T' of {name_} is not in the list of allowed values: half, bfloat16, float\n\t; "
            "NodeDef: {{node LRN}}",
            "LRN",
        )
    if len(x._shape) != 4:
        raise static_error("in must be 4-dimensional", "LRN")
    radius = int(depth_radius)
    if radius < 0:
        raise errors.invalid_argument(f"depth_radius = {radius} larger than int max", "LRN")
    static = (("alpha", float(alpha)), ("beta", float(beta)), ("bias", float(bias)), ("radius", radius))
    return apply(_lrn_op, (x,), static)[0]
