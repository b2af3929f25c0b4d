"""`tf.nn.conv1d_transpose`, `conv3d_transpose`, the rank-dispatching `tf.nn.conv_transpose`, and `tf.nn.pool`.

The transposed convolutions run the `Conv2DBackpropInput` kernel of `conv_ops` (the vjp of a convolution, for
any spatial rank), after TF's checks of the kernel (depths, the size `output_shape` implies); `tf.nn.pool`
dispatches to `conv_ops`' pooling and, with dilations, pools dilated windows with `lax.reduce_window`.
"""

from __future__ import annotations

import collections.abc
import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import errors
from tapeshim._src.ops import table
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.ops.common import convert_same_dtype, is_tensor_like, static_error
from tapeshim._src.ops.conv_ops import _conv_transpose_op, _padding, _pool
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import ShapeLike, TensorLike

_TRANSPOSE_OPS = {1: "Conv2DBackpropInput", 2: "Conv2DBackpropInput", 3: "Conv3DBackpropInputV2"}


def _sequence(value: Any, n: int, channel_index: int, name: str) -> list[int]:
    """TF's `_get_sequence`: an int or a list of 1, n or n + 2 ints, as the n + 2 values of the kernel."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, collections.abc.Iterable) and isinstance(value, collections.abc.Sized):
        values = list(value)
    else:
        values = [value]
    if len(values) == n + 2:
        return [int(v) for v in values]
    if len(values) == 1:
        values = values * n
    elif len(values) != n:
        raise ValueError(
            f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={values} of length {len(values)}"
        )
    full = [1] * (n + 2)
    spatial = [i for i in range(n + 2) if i not in (0, channel_index)]
    for axis, v in zip(spatial, values):
        full[axis] = int(v)
    return full


def _transpose(
    x: Tensor,
    kernel: Tensor,
    output_shape: tuple[int, ...],
    strides: list[int],
    padding: Any,
    spec: str,
    dilations: list[int],
    op_name: str,
    n: int,
) -> Tensor:
    """TF's shape checks of a transposed convolution, then the kernel (`spec` of n + 2 letters)."""
    full = n + 2
    if len(x._shape) != full:
        raise static_error(f"out_backprop tensor must have {full} dimensions", op_name)
    if len(kernel._shape) != full:
        raise static_error(f"filter must be {full}-dimensional", op_name)
    if len(output_shape) != full:
        raise static_error(f"input_sizes must be {full}-dimensional, got: {len(output_shape)}", op_name)
    channel = spec.index("C")
    if x._shape[channel] != kernel._shape[-1]:
        raise static_error(
            f"out_backprop and filter must have the same out_depth: {x._shape[channel]} vs {kernel._shape[-1]}",
            op_name,
        )
    if output_shape[channel] != kernel._shape[-2]:
        raise static_error(
            f"input and filter must have the same depth: {output_shape[channel]} vs {kernel._shape[-2]}", op_name
        )
    if output_shape[0] != x._shape[0]:
        raise static_error(f"input and out_backprop must have the same batch: {output_shape[0]}", op_name)
    spatial = [i for i in range(full) if i not in (0, channel)]
    if any(strides[i] != 1 for i in (0, channel)) or any(dilations[i] != 1 for i in (0, channel)):
        raise static_error("Current implementation does not yet support strides in the batch and depth dimensions.")
    pads = _padding(padding, n)
    for index, axis in enumerate(spatial):
        size, k, s, d = output_shape[axis], kernel._shape[index], strides[axis], dilations[axis]
        if s <= 0 or d <= 0:
            raise static_error("Strides and dilations must be positive.", op_name)
        span = (k - 1) * d + 1
        if pads == "SAME":
            expected = -(-size // s)
        elif pads == "VALID":
            expected = max(0, (size - span) // s + 1)
        else:
            expected = max(0, (size + sum(pads[index]) - span) // s + 1)
        if expected != x._shape[axis]:
            raise static_error(
                f"Size of out_backprop doesn't match computed: actual = {x._shape[axis]}, computed = {expected} "
                f"spatial_dim: {axis} input: {size} filter: {k} output: {x._shape[axis]} stride: {s} dilation: {d}",
                op_name,
            )
    static = (
        ("dilations", tuple(dilations[i] for i in spatial)),
        ("output_shape", tuple(output_shape)),
        ("padding", pads),
        ("spec", spec),
        ("strides", tuple(strides[i] for i in spatial)),
    )
    return apply(_conv_transpose_op, (x, kernel), static)[0]


def _check_padding(padding: Any, op_name: str, explicit: bool) -> None:
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            allowed = '"SAME", "VALID", "EXPLICIT"' if explicit else '"SAME", "VALID"'
            raise errors.invalid_argument(
                f"Value for attr 'padding' of \"{padding}\" is not in the list of allowed values: {allowed}", op_name
            )
    elif not explicit:
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")


@table.export("nn.conv1d_transpose", dtypes=table.REAL_FLOAT, note="dilations > 1 work (TF's CPU kernel raises)")
def conv1d_transpose(
    input: TensorLike,  # noqa: A002
    filters: TensorLike,
    output_shape: ShapeLike | TensorLike,
    strides: Any,
    padding: Any = "SAME",
    data_format: str | None = "NWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose (gradient) of `conv1d`, as `tf.nn.conv1d_transpose`.

    Args:
      input: the `[batch, width, in_channels]` (NWC) or `[batch, in_channels, width]` (NCW) tensor.
      filters: the `[width, output_channels, in_channels]` filter, of `input`'s dtype.
      output_shape: the 3 sizes of the result.
      strides: an int, or a list of 1 or 3 ints.
      padding: "SAME" or "VALID".
      data_format: "NWC" (or None) or "NCW".
      dilations: an int, or a list of 1 or 3 ints.
      name: ignored.

    Returns:
      The `output_shape` tensor of `input`'s dtype.

    Raises:
      ValueError: for another `data_format`, or `strides`/`dilations` of another length.
      TypeError: for explicit padding.
      InvalidArgumentError: for depths or sizes that do not match, or another padding string.
    """
    if data_format is None or data_format == "NWC":
        spec, channel = "NWC", 2
    elif data_format == "NCW":
        spec, channel = "NCW", 1
    else:
        raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
    stride_list = [1, *_sequence(strides, 1, channel, "stride")]
    dilation_list = [1, *_sequence(dilations, 1, channel, "dilations")]
    _check_padding(padding, "Conv2DBackpropInput", explicit=False)
    x, kernel = convert_same_dtype((input, filters), "Conv2DBackpropInput")
    shape = _static_ints(output_shape, "output_shape")
    return _transpose(x, kernel, shape, stride_list[1:], padding, spec, dilation_list[1:], "Conv2DBackpropInput", 1)


@table.export("nn.conv3d_transpose", dtypes=table.REAL_FLOAT, note="dilations > 1 work (TF's CPU kernel raises)")
def conv3d_transpose(
    input: TensorLike,  # noqa: A002
    filters: TensorLike,
    output_shape: ShapeLike | TensorLike,
    strides: Any,
    padding: str = "SAME",
    data_format: str | None = "NDHWC",
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose (gradient) of `conv3d`, as `tf.nn.conv3d_transpose`.

    Args:
      input: the `[batch, depth, height, width, in_channels]` (NDHWC) or NCDHW tensor.
      filters: the `[depth, height, width, output_channels, in_channels]` filter, of `input`'s dtype.
      output_shape: the 5 sizes of the result.
      strides: an int, or a list of 1, 3 or 5 ints.
      padding: "SAME" or "VALID".
      data_format: "NDHWC" (or None) or "NCDHW".
      dilations: an int, or a list of 1, 3 or 5 ints.
      name: ignored.

    Returns:
      The `output_shape` tensor of `input`'s dtype.

    Raises:
      ValueError: for `strides`/`dilations` of another length.
      TypeError: for explicit padding.
      InvalidArgumentError: for depths or sizes that do not match, or another padding string.
    """
    data_format = data_format or "NDHWC"
    if data_format not in ("NDHWC", "NCDHW"):
        raise errors.invalid_argument(
            f'Value for attr \'data_format\' of "{data_format}" is not in the list of allowed values: "NDHWC", "NCDHW"',
            "Conv3DBackpropInputV2",
        )
    channel = 1 if data_format.startswith("NC") else 4
    stride_list = _sequence(strides, 3, channel, "strides")
    dilation_list = _sequence(dilations, 3, channel, "dilations")
    _check_padding(padding, "Conv3DBackpropInputV2", explicit=False)
    x, kernel = convert_same_dtype((input, filters), "Conv3DBackpropInputV2")
    shape = _static_ints(output_shape, "output_shape")
    return _transpose(x, kernel, shape, stride_list, padding, data_format, dilation_list, "Conv3DBackpropInputV2", 3)


@table.export("nn.conv_transpose", dtypes=table.REAL_FLOAT, note="dilations > 1 work (TF's CPU kernels raise)")
def conv_transpose(
    input: TensorLike,  # noqa: A002
    filters: TensorLike,
    output_shape: ShapeLike | TensorLike,
    strides: Any,
    padding: Any = "SAME",
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """The transpose of `convolution`, as `tf.nn.conv_transpose`: 1-D, 2-D or 3-D from `output_shape`'s length.

    Args:
      input: the `[batch, *spatial, in_channels]` tensor (or channels first, with `data_format`).
      filters: the `[*spatial, output_channels, in_channels]` filter, of `input`'s dtype.
      output_shape: the 3, 4 or 5 sizes of the result (a list or a 1-D tensor).
      strides: an int, or a list of 1, N or N + 2 ints.
      padding: "SAME" or "VALID" (or explicit pairs, for 2-D).
      data_format: None (channels last) or the format of `conv1d_transpose`, `conv2d_transpose` or
        `conv3d_transpose`.
      dilations: an int, or a list of 1, N or N + 2 ints.
      name: ignored.

    Returns:
      The `output_shape` tensor of `input`'s dtype.

    Raises:
      ValueError: for an `output_shape` that is not sized or not of length 3, 4 or 5.
      InvalidArgumentError: for depths or sizes that do not match.
    """
    if is_tensor_like(output_shape):
        shape_tensor = convert_to_tensor(output_shape)
        n = (shape_tensor._shape[0] if shape_tensor._shape else 0) - 2
    elif isinstance(output_shape, collections.abc.Sized):
        n = len(output_shape) - 2
    else:
        raise ValueError(f"`output_shape` must be a tensor or sized collection. Received: output_shape={output_shape}")
    if not 1 <= n <= 3:
        raise ValueError(
            f"`output_shape` must be of length 3, 4 or 5. Received: output_shape={output_shape} of length {n + 2}."
        )
    if n == 1:
        return conv1d_transpose(input, filters, output_shape, strides, padding, data_format, dilations)
    if n == 3:
        return conv3d_transpose(input, filters, output_shape, strides, padding, data_format, dilations)
    data_format = data_format or "NHWC"
    channel = 1 if data_format.startswith("NC") else 3
    stride_list = _sequence(strides, 2, channel, "strides")
    dilation_list = _sequence(dilations, 2, channel, "dilations")
    _check_padding(padding, "Conv2DBackpropInput", explicit=True)
    x, kernel = convert_same_dtype((input, filters), "Conv2DBackpropInput")
    shape = _static_ints(output_shape, "output_shape")
    if data_format not in ("NHWC", "NCHW"):
        raise errors.invalid_argument(f"Invalid data format: {data_format}", "Conv2DBackpropInput")
    return _transpose(x, kernel, shape, stride_list, padding, data_format, dilation_list, "Conv2DBackpropInput", 2)


def _strides_and_dilations(n: int, strides: Any, dilations: Any) -> tuple[np.ndarray, np.ndarray]:
    """TF's `_get_strides_and_dilation_rate`."""
    if dilations is None:
        dilations = [1] * n
    elif len(dilations) != n:
        raise ValueError(
            f"`len(dilation_rate)` should be {n}. Received: dilation_rate={dilations} of length {len(dilations)}"
        )
    rate = np.array(dilations, dtype=np.int32)
    if np.any(rate < 1):
        raise ValueError(f"all values of `dilation_rate` must be positive. Received: dilation_rate={rate}")
    if strides is None:
        strides = [1] * n
    elif len(strides) != n:
        raise ValueError(f"`len(strides)` should be {n}. Received: strides={strides} of length {len(strides)}")
    step = np.array(strides, dtype=np.int32)
    if np.any(step < 1):
        raise ValueError(f"all values of `strides` must be positive. Received: strides={step}")
    if np.any(step > 1) and np.any(rate > 1):
        raise ValueError(
            "`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
            f"Received: strides={step} and dilation_rate={rate}"
        )
    return step, rate


def _dilated_pool_impl(x: jax.Array, kind: str, window: tuple, dilations: tuple, spatial: tuple) -> jax.Array:
    dims, rates = [1] * x.ndim, [1] * x.ndim
    for axis, size, rate in zip(spatial, window, dilations):
        dims[axis], rates[axis] = size, rate
    out_shape = [max(0, d - (w - 1) * r) for d, w, r in zip(x.shape, dims, rates)]
    if 0 in out_shape:
        return jnp.zeros(out_shape, x.dtype)
    if kind == "max":  # the window's values stacked (row-major), the first maximum taken: TF's gradient routing
        slices = []
        for offsets in itertools.product(*(range(w) for w in dims)):
            starts = [o * r for o, r in zip(offsets, rates)]
            slices.append(lax.slice(x, starts, [s + n for s, n in zip(starts, out_shape)]))
        stacked = jnp.stack(slices)
        first = jnp.argmax(stacked, axis=0)
        return jnp.take_along_axis(stacked, first[None], axis=0)[0]
    ones = (1,) * x.ndim
    total = lax.reduce_window(x, 0.0, lax.add, dims, ones, "VALID", window_dilation=rates)
    return total / jnp.asarray(int(np.prod(window)), x.dtype)


_dilated_pool_op = OpDef("Pool", _dilated_pool_impl, True)


@table.export(
    "nn.pool",
    dtypes=table.REAL,
    note="AVG takes floating types only; channels-first formats work (TF's CPU kernels raise)",
)
def pool(
    input: TensorLike,  # noqa: A002
    window_shape: Any,
    pooling_type: str,
    strides: Any = None,
    padding: str = "VALID",
    data_format: str | None = None,
    dilations: Any = None,
    name: str | None = None,
) -> Tensor:
    """N-D max or average pooling (N = `len(window_shape)`, 1 to 3), with dilations, as `tf.nn.pool`.

    Args:
      input: the `[batch, *spatial, channels]` tensor (or `[batch, channels, *spatial]` for "NC" formats).
      window_shape: N ints.
      pooling_type: "MAX" or "AVG".
      strides: N ints (None: ones); all 1 where a dilation is above 1.
      padding: "SAME" or "VALID" ("SAME" only without dilations).
      data_format: None, or the NWC/NCW, NHWC/NCHW, NDHWC/NCDHW format of N.
      dilations: N ints (None: ones).
      name: ignored.

    Returns:
      The pooled tensor, of `input`'s dtype.

    Raises:
      ValueError: for bad window, strides, dilations, pooling type, data format or rank, as TF's wrapper.
      InvalidArgumentError: for another padding string, or AVG of integers.
    """
    x = convert_to_tensor(input)
    n = len(window_shape)
    if not 1 <= n <= 3:
        raise ValueError(f"`len(window_shape)` must be 1, 2, or 3. Received: window_shape={window_shape} of length {n}")
    if len(x._shape) != n + 2:
        raise ValueError(f"Shape {tuple(x._shape)} must have rank {n + 2}")
    step, rate = _strides_and_dilations(n, strides, dilations)
    if padding == "SAME" and np.any(rate > 1):
        raise ValueError(
            "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. "
            f"Received: padding={padding} and dilation_rate={rate}"
        )
    if np.any(step > np.asarray(window_shape)):
        raise ValueError(
            "`strides` > `window_shape` not supported due to inconsistency between CPU and GPU implementations. "
            f"Received: strides={step} and window_shape={window_shape}"
        )
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")
    kind = pooling_type.lower()
    if n == 1:
        if data_format is None or data_format == "NWC":
            data_format = "NWC"
        elif data_format != "NCW":
            raise ValueError(f"data_format must be either 'NWC' or 'NCW'. Received: data_format={data_format}")
    data_format = data_format or {2: "NHWC", 3: "NDHWC"}.get(n, "NWC")
    op_name = ("MaxPool" if kind == "max" else "AvgPool") + ("3D" if n == 3 else "")
    if not isinstance(padding, str) or padding not in ("SAME", "VALID"):
        raise errors.invalid_argument(
            f'Value for attr \'padding\' of "{padding}" is not in the list of allowed values: "SAME", "VALID"',
            op_name,
        )
    window = tuple(int(w) for w in window_shape)
    if not np.any(rate > 1):
        return _pool(kind, x, window, tuple(int(s) for s in step), padding, data_format, n)
    if kind == "avg" and not x._dtype.is_floating:
        raise errors.invalid_argument(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values: half, bfloat16, float, "
            f"double\n\t; NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    channel = 1 if data_format.startswith("NC") else n + 1
    spatial = tuple(i for i in range(1, n + 2) if i != channel)
    static = (("dilations", tuple(int(r) for r in rate)), ("kind", kind), ("spatial", spatial), ("window", window))
    return apply(_dilated_pool_op, (x,), static)[0]
