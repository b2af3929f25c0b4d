"""Moving blocks of space into the batch and back (`tf.space_to_batch_nd`, `tf.space_to_batch`,
`tf.batch_to_space`), and `tf.nn.atrous_conv2d`, TF's dilated convolution (here `lax.conv_general_dilated`
with `rhs_dilation`, whose values and gradients are those of TF's space-to-batch formulation).

The block shape, paddings and crops must be known when the op is built (Python values, or tensors whose
value is known), as every shape here is static.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import static_value
from tapeshim._src.ops import conv_ops, table
from tapeshim._src.ops.common import attr_error, is_tensor_like, missing_kernel, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _int_array(value: Any, attr: str, op_name: str) -> np.ndarray:
    """An integer argument (a list or an integer tensor whose value is known) as a numpy array of its shape.

    Raises:
      InvalidArgumentError: (TypeError while traced) for a non-integer dtype, as TF's attribute `attr`.
    """
    value = static_value.resolve(value)
    array = np.asarray(convert_to_tensor(value).numpy() if is_tensor_like(value) else value)
    if array.dtype.kind not in "iu" and array.size:
        name = {"f": "float", "b": "bool", "c": "complex64"}.get(array.dtype.kind, str(array.dtype))
        if array.dtype == np.float64:
            name = "double"
        raise attr_error(
            f"Value for attr '{attr}' of {name} is not in the list of allowed values: int32, int64\n\t; "
            f"NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    return array.astype(np.int64)


def _block_args(x: Tensor, block_shape: Any, pairs: Any, what: str, op_name: str) -> tuple[tuple, tuple]:
    """The block shape and the `[M, 2]` paddings or crops, checked as TF's kernel checks them."""
    if x._dtype.name in ("string", "bool", "complex64", "complex128"):  # (no CPU kernel in TF)
        kind = "Tpaddings" if what == "paddings" else "Tcrops"
        raise missing_kernel(op_name, f"T=DT_{x._dtype.name.upper()}, Tblock_shape=DT_INT32, {kind}=DT_INT32")
    block = _int_array(block_shape, "Tblock_shape", op_name)
    amounts = _int_array(pairs, "Tpaddings" if what == "paddings" else "Tcrops", op_name)
    if block.ndim != 1:
        raise static_error(f"block_shape rank should be 1 instead of {block.ndim}", op_name)
    m = block.shape[0]
    if amounts.shape != (m, 2):
        raise static_error(
            f"{what} should have shape [{m}, 2] instead of [{','.join(map(str, amounts.shape))}]", op_name
        )
    if len(x._shape) < 1 + m:
        raise static_error(f"input rank should be >= {1 + m} instead of {len(x._shape)}", op_name)
    if (amounts < 0).any():
        raise static_error(f"{'Paddings' if what == 'paddings' else 'Crops'} must be non-negative", op_name)
    return tuple(int(b) for b in block), tuple((int(a), int(b)) for a, b in amounts)


def _space_to_batch(x: jax.Array, block: tuple, paddings: tuple) -> jax.Array:
    m = len(block)
    rest = x.shape[1 + m :]
    widths = [(0, 0), *paddings] + [(0, 0)] * len(rest)
    padded = jnp.pad(x, widths)
    batch = x.shape[0]
    split: list[int] = [batch]
    for i, b in enumerate(block):
        split += [padded.shape[1 + i] // b, b]
    split += list(rest)
    moved = padded.reshape(split)
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    order += list(range(1 + 2 * m, moved.ndim))
    out_shape = [batch * int(np.prod(block))] + [padded.shape[1 + i] // b for i, b in enumerate(block)] + list(rest)
    return moved.transpose(order).reshape(out_shape)


def _batch_to_space(x: jax.Array, block: tuple, crops: tuple) -> jax.Array:
    m = len(block)
    rest = x.shape[1 + m :]
    batch = x.shape[0] // int(np.prod(block))
    spatial = x.shape[1 : 1 + m]
    split = [*block, batch, *spatial, *rest]
    moved = x.reshape(split)
    order = [m]
    for i in range(m):
        order += [m + 1 + i, i]
    order += list(range(2 * m + 1, moved.ndim))
    full = moved.transpose(order).reshape([batch] + [d * b for d, b in zip(spatial, block)] + list(rest))
    index = (slice(None),) + tuple(slice(lo, d * b - hi) for (lo, hi), d, b in zip(crops, spatial, block))
    return full[index]


_space_to_batch_op = OpDef("SpaceToBatchND", _space_to_batch, True)
_batch_to_space_op = OpDef("BatchToSpaceND", _batch_to_space, True)


@table.export("space_to_batch_nd", dtypes=table.REAL, op=_space_to_batch_op)
def space_to_batch_nd(input: TensorLike, block_shape: Any, paddings: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Pads the `M` spatial dimensions after the batch and moves their blocks into the batch, as
    `tf.space_to_batch_nd`.

    Args:
      input: an `[batch, d1, ..., dM, ...]` tensor.
      block_shape: `[M]` integer block sizes, each at least 1.
      paddings: `[M, 2]` non-negative integer paddings (start, end) of the spatial dimensions.
      name: ignored.

    Returns:
      A tensor of shape `[batch * prod(block_shape), (d1 + pad) / b1, ..., (dM + pad) / bM, ...]`.

    Raises:
      InvalidArgumentError: (ValueError while traced) for bad shapes, negative paddings, a block size under 1
        or a padded size the block does not divide.
    """
    x = convert_to_tensor(input)
    block, paddings_ = _block_args(x, block_shape, paddings, "paddings", "SpaceToBatchND")
    for i, (b, (lo, hi)) in enumerate(zip(block, paddings_)):
        if b < 1:
            raise static_error(
                f"All values in block_shape must be positive, got value, {b} at index {i}.", "SpaceToBatchND"
            )
        size = x._shape[1 + i] + lo + hi
        if size % b:
            raise static_error(f"padded_shape[{i}]={size} is not divisible by block_shape[{i}]={b}", "SpaceToBatchND")
    return apply(_space_to_batch_op, (x,), (("block", block), ("paddings", paddings_)))[0]


@table.export("space_to_batch", "nn.space_to_batch", dtypes=table.REAL)
def space_to_batch(input: TensorLike, block_shape: Any, paddings: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """`tf.space_to_batch` (TF2): `tf.space_to_batch_nd` under another name.

    Args:
      input: an `[batch, d1, ..., dM, ...]` tensor.
      block_shape: `[M]` integer block sizes (a scalar raises, as TF).
      paddings: `[M, 2]` non-negative integer paddings.
      name: ignored.

    Returns:
      The tensor `tf.space_to_batch_nd` returns.
    """
    return space_to_batch_nd(input, block_shape, paddings, name)


@table.export("batch_to_space", dtypes=table.REAL)
def batch_to_space(input: TensorLike, block_shape: Any, crops: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Moves blocks of the batch back into the `M` spatial dimensions and crops them, as `tf.batch_to_space`
    (TF2's `BatchToSpaceND`).

    Args:
      input: an `[batch * prod(block_shape), d1, ..., dM, ...]` tensor.
      block_shape: `[M]` integer block sizes, or one int for `[b, b]`.
      crops: `[M, 2]` non-negative integer crops (start, end) of the spatial dimensions.
      name: ignored.

    Returns:
      A tensor of shape `[batch, d1 * b1 - crops, ..., dM * bM - crops, ...]`.

    Raises:
      InvalidArgumentError: (ValueError while traced) for bad shapes, negative crops, block sizes whose
        product is not positive or does not divide the batch, or crops larger than a dimension.
    """
    if isinstance(block_shape, int):
        block_shape = np.array([block_shape, block_shape], np.int64)
    x = convert_to_tensor(input)
    block, crops_ = _block_args(x, block_shape, crops, "crops", "BatchToSpaceND")
    product = int(np.prod(block))
    if product <= 0:
        raise static_error(f"Product of block sizes must be positive, got {product}", "BatchToSpaceND")
    if x._shape[0] % product:
        raise static_error(
            f"Input batch dimension ({x._shape[0]}) is not divisible by product of block sizes ({product})",
            "BatchToSpaceND",
        )
    for i, (b, (lo, hi)) in enumerate(zip(block, crops_)):
        size = x._shape[1 + i] * b - lo - hi
        if size < 0:
            raise static_error(f"cropped_shape[{i}]={size} must be non-negative", "BatchToSpaceND")
    return apply(_batch_to_space_op, (x,), (("block", block), ("crops", crops_)))[0]


@table.export("nn.atrous_conv2d", dtypes=table.REAL_FLOAT, note="a convolution with rhs_dilation, not space_to_batch")
def atrous_conv2d(value: TensorLike, filters: TensorLike, rate: Any, padding: str, name: str | None = None) -> Tensor:
    """Atrous (dilated) 2-D convolution of NHWC `value` with HWIO `filters`, as `tf.nn.atrous_conv2d`.

    Args:
      value: a `[batch, height, width, in_channels]` tensor.
      filters: a `[height, width, in_channels, out_channels]` tensor.
      rate: the dilation rate, a positive int (or a pair).
      padding: "SAME" or "VALID".
      name: ignored.

    Returns:
      The `[batch, out_height, out_width, out_channels]` convolution.

    Raises:
      ValueError: for a rate under 1, a padding other than "SAME" or "VALID", or channels the filters do not
        match.
    """
    rates = tuple(int(r) for r in np.broadcast_to(np.asarray(rate), (2,)))
    if min(rates) <= 0:
        raise ValueError(f"all values of `dilation_rate` must be positive. Received: dilation_rate={np.asarray(rates)}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: padding={padding}")
    x, w = convert_to_tensor(value), convert_to_tensor(filters)
    if len(x._shape) == 4 and len(w._shape) == 4 and x._shape[3] % w._shape[2]:
        raise ValueError(
            "The number of input channels is not divisible by the corresponding number of output filters. "
            f"Received: input.shape={tuple(x._shape)} with {x._shape[3]} channels and filters.shape="
            f"{tuple(w._shape)} with {w._shape[2]} channels."
        )
    return conv_ops.conv2d(x, w, 1, padding.upper(), dilations=list(rates))
