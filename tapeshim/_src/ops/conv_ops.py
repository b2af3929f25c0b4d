"""Convolutions and pooling (`tf.nn.conv*`, `tf.nn.*_pool*`) on `lax.conv_general_dilated` / `lax.reduce_window`."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import errors
from tapeshim._src.ops import array_ops, table
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.ops.common import convert_same_dtype
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import ShapeLike, TensorLike


def _tuple(value: Any, n: int, what: str) -> tuple[int, ...]:
    """Expands TF's int / [n] / [1, n..., 1] argument forms to n spatial values."""
    if value is None:
        return (1,) * n
    values = [int(v) for v in np.atleast_1d(np.asarray(value)).tolist()]
    if len(values) == 1:
        return (values[0],) * n
    if len(values) == n:
        return tuple(values)
    if len(values) == n + 2:
        return tuple(values[1:-1])
    raise ValueError(f"`{what}` should be of length 1, {n} or {n + 2}. Received: {value}")


def _padding(padding: Any, n: int) -> Any:
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"`padding` must be 'SAME' or 'VALID', got {padding!r}.")
        if padding not in ("SAME", "VALID"):  # (TF's attr is case-sensitive)
            raise errors.invalid_argument(
                f'Value for attr \'padding\' of "{padding}" is not in the list of allowed values: "SAME", '
                '"VALID", "EXPLICIT"',
                "Conv2D",
            )
        return padding
    pairs = [tuple(int(v) for v in p) for p in padding]
    return tuple(pairs[1:-1]) if len(pairs) == n + 2 else tuple(pairs)


def _conv_impl(
    x: jax.Array, w: jax.Array, strides: tuple, padding: Any, dilations: tuple, spec: str, groups: int
) -> jax.Array:
    kernel_spec = {3: "WIO", 4: "HWIO", 5: "DHWIO"}[len(spec)]
    numbers = lax.conv_dimension_numbers(x.shape, w.shape, (spec, kernel_spec, spec))
    return lax.conv_general_dilated(
        x, w, strides, padding, rhs_dilation=dilations, dimension_numbers=numbers, feature_group_count=groups
    )


_conv_op = OpDef("Conv", _conv_impl, True)


def _conv(
    x: Any,
    filters: Any,
    strides: Any,
    padding: Any,
    data_format: str,
    dilations: Any,
    n: int,
    groups_from_depthwise: bool = False,
) -> Tensor:
    inputs, kernel = convert_same_dtype((x, filters), "Conv2D")
    if len(inputs._shape) != n + 2 or len(kernel._shape) != n + 2:
        raise errors.invalid_argument(
            f"convolution input must be {n + 2}-dimensional: [{','.join(map(str, inputs._shape))}]", "Conv2D"
        )
    spec = {"NHWC": "NHWC", "NCHW": "NCHW", "NWC": "NWC", "NCW": "NCW", "NDHWC": "NDHWC", "NCDHW": "NCDHW"}.get(
        data_format
    )
    if spec is None:
        raise ValueError(f"data_format {data_format!r} is not supported.")
    channels = inputs._shape[spec.index("C")]
    groups = 1
    if groups_from_depthwise:
        groups = channels
        kernel = _depthwise_kernel(kernel)
    elif channels != kernel._shape[-2]:
        if channels % kernel._shape[-2]:
            raise errors.invalid_argument(
                f"input depth must be evenly divisible by filter depth: {channels} vs {kernel._shape[-2]}", "Conv2D"
            )
        groups = channels // kernel._shape[-2]
    stride_sizes, dilation_sizes = _tuple(strides, n, "strides"), _tuple(dilations, n, "dilations")
    op_name = "Conv3D" if n == 3 else "Conv2D"  # (TF's conv1d is a Conv2D)
    if min(stride_sizes) <= 0:
        what = "Spatial strides" if n == 3 else "Row and column strides"
        raise errors.invalid_argument(f"{what} should be larger than 0.", op_name)
    if min(dilation_sizes) <= 0:
        raise errors.invalid_argument("Dilated rates should be larger than 0.", op_name)
    static = (
        ("dilations", dilation_sizes),
        ("groups", groups),
        ("padding", _padding(padding, n)),
        ("spec", spec),
        ("strides", stride_sizes),
    )
    return apply(_conv_op, (inputs, kernel), static)[0]


def _depthwise_kernel(kernel: Tensor) -> Tensor:
    h, w, c, m = kernel._shape
    return array_ops.reshape(kernel, [h, w, 1, c * m])


@table.export("nn.conv2d", dtypes=table.REAL_FLOAT, note="gradients with dilations work (TF CPU kernels cannot)")
def conv2d(
    input: TensorLike,
    filters: TensorLike,
    strides: TensorLike,
    padding: Any,
    data_format: str = "NHWC",  # noqa: A002
    dilations: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """2-D convolution, as `tf.nn.conv2d` (filters [h, w, in, out]; SAME/VALID or explicit padding)."""
    return _conv(input, filters, strides, padding, data_format, dilations, 2)


@table.export("nn.conv1d", dtypes=table.REAL_FLOAT)
def conv1d(
    input: TensorLike,
    filters: TensorLike,
    stride: TensorLike,
    padding: Any,
    data_format: str = "NWC",  # noqa: A002
    dilations: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """1-D convolution, as `tf.nn.conv1d` (filters [w, in, out])."""
    return _conv(input, filters, stride, padding, data_format, dilations, 1)


@table.export("nn.depthwise_conv2d", dtypes=table.REAL_FLOAT)
def depthwise_conv2d(
    input: TensorLike,
    filter: TensorLike,
    strides: TensorLike,
    padding: Any,
    data_format: str | None = None,  # noqa: A002
    dilations: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Depthwise 2-D convolution (filter [h, w, in, multiplier])."""
    return _conv(input, filter, strides, padding, data_format or "NHWC", dilations, 2, groups_from_depthwise=True)


@table.export("nn.conv2d_transpose", dtypes=table.REAL_FLOAT)
def conv2d_transpose(
    input: TensorLike,
    filters: TensorLike,
    output_shape: ShapeLike | TensorLike,
    strides: TensorLike,
    padding: str = "SAME",  # noqa: A002
    data_format: str = "NHWC",
    dilations: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """The transpose (gradient) of conv2d: filters [h, w, out, in], producing `output_shape`."""
    inputs, kernel = convert_same_dtype((input, filters), "Conv2DBackpropInput")
    shape = _static_ints(output_shape, "output_shape")
    static = (
        ("dilations", _tuple(dilations, 2, "dilations")),
        ("output_shape", shape),
        ("padding", _padding(padding, 2)),
        ("spec", data_format),
        ("strides", _tuple(strides, 2, "strides")),
    )
    return apply(_conv_transpose_op, (inputs, kernel), static)[0]


def _conv_transpose_impl(
    x: jax.Array, w: jax.Array, output_shape: tuple, strides: tuple, padding: Any, dilations: tuple, spec: str
) -> jax.Array:
    def forward(y: jax.Array) -> jax.Array:
        return _conv_impl(y, w, strides, padding, dilations, spec, 1)

    _, pullback = jax.vjp(forward, jnp.zeros(output_shape, x.dtype))
    return pullback(x)[0]


_conv_transpose_op = OpDef("Conv2DBackpropInput", _conv_transpose_impl, True)


def _pool_impl(x: jax.Array, kind: str, window: tuple, strides: tuple, padding: str, spec: str) -> jax.Array:
    channel_axis = spec.index("C")
    dims = [1] * x.ndim
    step = [1] * x.ndim
    spatial = [i for i in range(1, x.ndim) if i != channel_axis]
    for axis, size, stride in zip(spatial, window, strides):
        dims[axis], step[axis] = size, stride
    # Python-scalar identities let JAX recognise the max/sum windows, which it can differentiate.
    if kind == "max":
        if jnp.issubdtype(x.dtype, jnp.floating):
            return lax.reduce_window(x, -float("inf"), lax.max, dims, step, padding)
        return lax.reduce_window(x, jnp.array(jnp.iinfo(x.dtype).min, x.dtype), lax.max, dims, step, padding)
    total = lax.reduce_window(x, 0.0, lax.add, dims, step, padding)
    count = lax.reduce_window(jnp.ones(x.shape, x.dtype), 0.0, lax.add, dims, step, padding)
    return total / count


_pool_op = OpDef("Pool", _pool_impl, True)


def _pool(kind: str, x: Any, ksize: Any, strides: Any, padding: str, data_format: str, n: int) -> Tensor:
    t = convert_to_tensor(x)
    if len(t._shape) != n + 2:
        raise errors.invalid_argument(f"tensor_in_shape must have {n} spatial dimensions. {len(t._shape)} 0", "MaxPool")
    op_name = ("MaxPool" if kind == "max" else "AvgPool") + ("3D" if n == 3 else "")
    if kind == "avg" and not t._dtype.is_floating:
        raise errors.invalid_argument(
            f"Value for attr 'T' of {t._dtype.name} is not in the list of allowed values: half, bfloat16, float, "
            f"double\n\t; NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    window, stride_sizes = _tuple(ksize, n, "ksize"), _tuple(strides, n, "strides")
    if min(window) <= 0:
        full = [1, *window, 1] if data_format.endswith("C") else [1, 1, *window]
        raise errors.invalid_argument(
            "Sliding window ksize must be positive. The specified or inferred ksize is: " + ",".join(map(str, full)),
            op_name,
        )
    if min(stride_sizes) <= 0:
        raise errors.invalid_argument(f"Stride must be > 0, but got {min(stride_sizes)}", op_name)
    static = (
        ("kind", kind),
        ("padding", _padding(padding, n)),
        ("spec", data_format),
        ("strides", stride_sizes),
        ("window", window),
    )
    return apply(_pool_op, (t,), static)[0]


@table.export("nn.max_pool2d", dtypes=table.REAL)
def max_pool2d(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str = "NHWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """2-D max pooling."""
    return _pool("max", input, ksize, strides, padding, data_format, 2)


@table.export("nn.avg_pool2d", dtypes=table.REAL_FLOAT, note="SAME padding averages over the valid cells, as TF")
def avg_pool2d(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str = "NHWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """2-D average pooling."""
    return _pool("avg", input, ksize, strides, padding, data_format, 2)


@table.export("nn.max_pool1d", dtypes=table.REAL)
def max_pool1d(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str = "NWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """1-D max pooling."""
    return _pool("max", input, ksize, strides, padding, data_format, 1)


@table.export("nn.avg_pool1d", dtypes=table.REAL_FLOAT)
def avg_pool1d(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str = "NWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """1-D average pooling."""
    return _pool("avg", input, ksize, strides, padding, data_format, 1)


_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _spatial_rank(x: Any, what: str) -> tuple[Tensor, int]:
    t = convert_to_tensor(x)
    n = len(t._shape) - 2
    if n not in _FORMATS:
        if "pool" in what:  # TF's pooling wrappers check the rank; its convolution leaves it to the kernel
            raise ValueError(
                f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={tuple(t._shape)} of "
                f"rank {len(t._shape)}."
            )
        raise errors.invalid_argument(
            f"convolution input must be 4-dimensional: [{','.join(map(str, t._shape))}]", "Conv2D"
        )
    return t, n


def _format(data_format: Any, n: int) -> str:
    if data_format is None:
        return _FORMATS[n][0]
    if data_format not in _FORMATS[n] and not (n == 1 and data_format in ("NHWC", "NCHW")):
        allowed = ", ".join(f'"{f}"' for f in _FORMATS[n])
        raise errors.invalid_argument(
            f"Value for attr 'data_format' of \"{data_format}\" is not in the list of allowed values: {allowed}"
        )
    return {"NHWC": "NWC", "NCHW": "NCW"}.get(data_format, data_format) if n == 1 else data_format


@table.export("nn.convolution", dtypes=table.REAL_FLOAT)
def convolution(
    input: TensorLike,
    filters: TensorLike,
    strides: TensorLike | None = None,
    padding: Any = "VALID",  # noqa: A002
    data_format: str | None = None,
    dilations: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """N-D convolution (1 to 3 spatial dimensions, from the input's rank), as `tf.nn.convolution`.

    Raises:
      ValueError: an input rank other than 3, 4 or 5, or a data format for another rank.
    """
    x, n = _spatial_rank(input, "tf.nn.convolution")
    return _conv(x, filters, strides, padding, _format(data_format, n), dilations, n)


@table.export("nn.conv3d", dtypes=table.REAL_FLOAT)
def conv3d(
    input: TensorLike,
    filters: TensorLike,
    strides: TensorLike,
    padding: Any,
    data_format: str = "NDHWC",  # noqa: A002
    dilations: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """3-D convolution, as `tf.nn.conv3d` (filters [d, h, w, in, out])."""
    return _conv(input, filters, strides, padding, data_format, dilations, 3)


def _pool_nd(
    kind: str,
    input: Any,
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: Any,  # noqa: A002
    what: str,
) -> Tensor:
    x, n = _spatial_rank(input, what)
    if isinstance(padding, str) and padding.upper() not in ("SAME", "VALID"):
        raise errors.invalid_argument(
            f"Value for attr 'padding' of \"{padding}\" is not in the list of allowed "
            'values: "SAME", "VALID", "EXPLICIT"'
        )
    return _pool(kind, x, ksize, strides, padding, _format(data_format, n), n)


@table.export("nn.max_pool", dtypes=table.REAL)
def max_pool(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str | None = None,  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """Max pooling over 1 to 3 spatial dimensions (from the input's rank), as `tf.nn.max_pool`."""
    return _pool_nd("max", input, ksize, strides, padding, data_format, "tf.nn.max_pool")


@table.export("nn.avg_pool", dtypes=table.REAL_FLOAT, note="SAME padding averages over the valid cells, as TF")
def avg_pool(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str | None = None,  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """Average pooling over 1 to 3 spatial dimensions (from the input's rank), as `tf.nn.avg_pool`."""
    return _pool_nd("avg", input, ksize, strides, padding, data_format, "tf.nn.avg_pool")


@table.export("nn.max_pool3d", dtypes=table.REAL)
def max_pool3d(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str = "NDHWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """3-D max pooling."""
    return _pool("max", input, ksize, strides, padding, data_format, 3)


@table.export("nn.avg_pool3d", dtypes=table.REAL_FLOAT)
def avg_pool3d(
    input: TensorLike,
    ksize: TensorLike,
    strides: TensorLike,
    padding: str,
    data_format: str = "NDHWC",  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """3-D average pooling."""
    return _pool("avg", input, ksize, strides, padding, data_format, 3)
