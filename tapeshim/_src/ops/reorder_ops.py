"""Ops that move elements without computing: `tf.reverse_sequence`, `tf.nn.depth_to_space` and
`tf.nn.space_to_depth` (JAX's gradients, which are TF's: the same moves backwards)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors, runtime_checks
from tapeshim._src.ops import array_ops, table
from tapeshim._src.ops.common import attr_error, missing_kernel, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _reverse_sequence(
    x: jax.Array, lengths: jax.Array, seq_axis: int, batch_axis: int, checked: bool = False
) -> jax.Array:
    size = x.shape[seq_axis]
    if checked:
        for bad, text in ((lengths > size, f" > input.dims({seq_axis})"), (lengths < 0, " < 0")):
            first, _ = runtime_checks.first_bad(bad, lengths)
            runtime_checks.require(~jnp.any(bad), "seq_lens({p})" + text + " [Op:ReverseSequence]", p=first)
    length_shape = [1] * x.ndim
    length_shape[batch_axis] = x.shape[batch_axis]
    position_shape = [1] * x.ndim
    position_shape[seq_axis] = size
    length = lengths.astype(jnp.int64 if lengths.dtype == jnp.int64 else jnp.int32).reshape(length_shape)
    position = jnp.arange(size, dtype=length.dtype).reshape(position_shape)
    source = jnp.where(position < length, length - 1 - position, position)
    return jnp.take_along_axis(x, jnp.broadcast_to(source, x.shape), axis=seq_axis)


_reverse_sequence_op = OpDef("ReverseSequence", _reverse_sequence, True)


@table.export("reverse_sequence", dtypes="numeric, bool", op=_reverse_sequence_op)
def reverse_sequence(
    input: TensorLike,  # noqa: A002 - TF's name
    seq_lengths: TensorLike,
    seq_axis: int | None = None,
    batch_axis: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Reverses the first `seq_lengths[b]` elements along `seq_axis` of each slice `b` of `batch_axis`, as
    `tf.reverse_sequence`.

    Args:
      input: the tensor.
      seq_lengths: int32 or int64 lengths, one per slice of `batch_axis`, each at most the size of `seq_axis`.
      seq_axis: the axis reversed (non-negative, required).
      batch_axis: the axis the lengths run along (non-negative; default 0).
      name: ignored.

    Returns:
      A tensor of `input`'s shape and dtype.

    Raises:
      TypeError: if `seq_axis` is None.
      InvalidArgumentError: for bad axes, lengths of the wrong dtype, rank or count, or out of range.
    """
    if seq_axis is None:
        raise TypeError("Expected int for argument 'seq_dim' not None.")
    seq, batch = int(seq_axis), 0 if batch_axis is None else int(batch_axis)
    x, lengths = convert_to_tensor(input), convert_to_tensor(seq_lengths)
    if lengths._dtype.name not in ("int32", "int64"):
        raise attr_error(
            f"Value for attr 'Tlen' of {lengths._dtype.name} is not in the list of allowed values: int32, int64\n\t; "
            "NodeDef: {{node ReverseSequence}}",
            "ReverseSequence",
        )
    rank = len(x._shape)
    for failed, message in (
        (batch < 0, f"Invalid batch_dim {batch}"),
        (seq < 0, f"Invalid seq_dim {seq}"),
        (seq >= rank, f"seq_dim must be < input rank ( {seq} vs. {rank})"),
        (batch >= rank, f"batch_dim must be < input rank ( {batch} vs. {rank})"),
        (seq == batch, f"batch_dim == seq_dim == {seq}"),
        (len(lengths._shape) != 1, f"seq_lengths must be 1-dim, not {len(lengths._shape)}"),
    ):
        if failed:
            raise static_error(message, "ReverseSequence")
    if lengths._shape[0] != x._shape[batch]:
        raise static_error(
            f"Length of seq_lengths != input.dims({batch}), ({lengths._shape[0]} vs. {x._shape[batch]})",
            "ReverseSequence",
        )
    size = x._shape[seq]

    def host_check(values: Any) -> None:
        values = np.asarray(values)
        for bad, text in ((values > size, f" > input.dims({seq})"), (values < 0, " < 0")):
            if bad.any():
                raise errors.invalid_argument(f"seq_lens({int(np.argmax(bad))}){text}", "ReverseSequence")

    static = (("seq_axis", seq), ("batch_axis", batch)) + runtime_checks.checked_static(lengths, host_check)
    return apply(_reverse_sequence_op, (x, lengths), static)[0]


def _depth_to_space(x: jax.Array, block: int) -> jax.Array:
    n, h, w, c = x.shape
    depth = c // (block * block)
    moved = x.reshape(n, h, w, block, block, depth).transpose(0, 1, 3, 2, 4, 5)
    return moved.reshape(n, h * block, w * block, depth)


def _space_to_depth(x: jax.Array, block: int) -> jax.Array:
    n, h, w, c = x.shape
    moved = x.reshape(n, h // block, block, w // block, block, c).transpose(0, 1, 3, 2, 4, 5)
    return moved.reshape(n, h // block, w // block, block * block * c)


_depth_to_space_op = OpDef("DepthToSpace", _depth_to_space, True)
_space_to_depth_op = OpDef("SpaceToDepth", _space_to_depth, True)


def _block_args(x: Tensor, block_size: Any, data_format: str, op_name: str) -> int:
    """The block size, after TF's attribute, layout and rank checks."""
    block = int(array_ops.folded_int(block_size))
    if data_format not in ("NHWC", "NCHW", "NCHW_VECT_C"):
        raise attr_error(
            f'Value for attr \'data_format\' of "{data_format}" is not in the list of allowed values: "NHWC", '
            f'"NCHW", "NCHW_VECT_C"\n\t; NodeDef: {{{{node {op_name}}}}}',
            op_name,
        )
    if block < 2:
        raise static_error(f"Value for attr 'block_size' of {block} must be at least minimum 2", op_name)
    if data_format != "NHWC":  # (TF's CPU kernels are NHWC only)
        raise missing_kernel(op_name, f'T=DT_{x._dtype.name.upper()}, block_size={block}, data_format="{data_format}"')
    return block


@table.export(
    "nn.depth_to_space",
    dtypes=table.ANY,
    note="NHWC only: NCHW raises NotFoundError, as TF's CPU kernels",
    op=_depth_to_space_op,
)
def depth_to_space(input: TensorLike, block_size: Any, data_format: str = "NHWC", name: str | None = None) -> Tensor:  # noqa: A002
    """Moves depth into blocks of space: `[n, h, w, b*b*c]` becomes `[n, h*b, w*b, c]`, as
    `tf.nn.depth_to_space`.

    Args:
      input: a 4-D NHWC tensor.
      block_size: the block's side, at least 2.
      data_format: "NHWC" (the only layout TF's CPU kernels take).
      name: ignored.

    Returns:
      The rearranged tensor, of `input`'s dtype.

    Raises:
      InvalidArgumentError: for a block size under 2, a rank other than 4, or a depth not divisible by
        `block_size**2`.
      NotFoundError: for the "NCHW" layouts.
    """
    x = convert_to_tensor(input)
    block = _block_args(x, block_size, data_format, "DepthToSpace")
    if len(x._shape) != 4:
        raise static_error(f"Input rank should be: 4 instead of: {len(x._shape)}", "DepthToSpace")
    if x._shape[3] % (block * block):
        raise static_error(
            f"Input depth dimension {x._shape[3]} should be divisible by: {block * block}", "DepthToSpace"
        )
    return apply(_depth_to_space_op, (x,), (("block", block),))[0]


@table.export(
    "nn.space_to_depth",
    dtypes=table.ANY,
    note="NHWC only: NCHW raises NotFoundError, as TF's CPU kernels",
    op=_space_to_depth_op,
)
def space_to_depth(input: TensorLike, block_size: Any, data_format: str = "NHWC", name: str | None = None) -> Tensor:  # noqa: A002
    """Moves blocks of space into depth: `[n, h*b, w*b, c]` becomes `[n, h, w, b*b*c]`, as
    `tf.nn.space_to_depth`.

    Args:
      input: a 4-D NHWC tensor.
      block_size: the block's side, at least 2.
      data_format: "NHWC" (the only layout TF's CPU kernels take).
      name: ignored.

    Returns:
      The rearranged tensor, of `input`'s dtype.

    Raises:
      InvalidArgumentError: for a block size under 2, a rank other than 4, or a height or width not divisible
        by `block_size`.
      NotFoundError: for the "NCHW" layouts.
    """
    x = convert_to_tensor(input)
    block = _block_args(x, block_size, data_format, "SpaceToDepth")
    if len(x._shape) != 4:
        raise static_error(f"Input rank should be 4 instead of {len(x._shape)}", "SpaceToDepth")
    if x._shape[1] % block or x._shape[2] % block:
        raise static_error(
            f"Image width {x._shape[2]} and height {x._shape[1]} should be divisible by block_size: {block}",
            "SpaceToDepth",
        )
    return apply(_space_to_depth_op, (x,), (("block", block),))[0]
