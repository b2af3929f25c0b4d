"""`tf.raw_ops`' array ops: shapes, joins and splits, slicing, gathers and scatters, padding, identities.

Each is tapeshim's public op under TF's op name and argument names (see `raw_ops_base`).
"""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes
from tapeshim._src.raw_ops_base import RawOp, define, named_tuple, tf_module

Unique = named_tuple("Unique", "y idx")


def _squeeze(input: Any, axis: Any) -> Any:  # noqa: A002 - TF's argument name
    """TF's `Squeeze`: an empty `axis` squeezes every size-1 dimension."""
    return tf_module().squeeze(input, axis=list(axis) or None)


def _unpack(value: Any, num: int, axis: int) -> Any:
    return tf_module().unstack(value, num=num, axis=axis)


def _shape_n(input: Any, out_type: Any) -> Any:  # noqa: A002 - TF's argument name
    tf = tf_module()
    return [tf.shape(x, out_type=out_type) for x in input]


def _strided_slice(
    input: Any,  # noqa: A002 - TF's argument name
    begin: Any,
    end: Any,
    strides: Any,
    begin_mask: int,
    end_mask: int,
    ellipsis_mask: int,
    new_axis_mask: int,
    shrink_axis_mask: int,
) -> Any:
    return tf_module().strided_slice(
        input,
        begin,
        end,
        strides,
        begin_mask=begin_mask,
        end_mask=end_mask,
        ellipsis_mask=ellipsis_mask,
        new_axis_mask=new_axis_mask,
        shrink_axis_mask=shrink_axis_mask,
    )


def _unique(x: Any, out_idx: Any) -> Any:
    y, idx = tf_module().unique(x, out_idx=out_idx)
    return Unique(y, idx)


def _one_hot(indices: Any, depth: Any, on_value: Any, off_value: Any, axis: int) -> Any:
    return tf_module().one_hot(indices, depth, on_value=on_value, off_value=off_value, axis=axis)


def _split_v(value: Any, size_splits: Any, axis: Any, num_split: int) -> Any:
    return tf_module().split(value, size_splits, axis=axis, num=num_split)


def _reverse_sequence(input: Any, seq_lengths: Any, seq_dim: int, batch_dim: int) -> Any:  # noqa: A002
    return tf_module().reverse_sequence(input, seq_lengths, seq_axis=seq_dim, batch_axis=batch_dim)


def array_raw_ops() -> dict[str, RawOp]:
    """The array raw ops, op name -> raw op."""
    t: dict[str, RawOp] = {}
    tf = tf_module
    define(t, "Reshape", "tensor shape", lambda tensor, shape: tf().reshape(tensor, shape))
    define(t, "ExpandDims", "input axis", lambda input, axis: tf().expand_dims(input, axis))
    define(t, "Squeeze", "input", _squeeze, axis=[])
    define(t, "ConcatV2", "values axis", lambda values, axis: tf().concat(values, axis))
    define(t, "Concat", "concat_dim values", lambda concat_dim, values: tf().concat(values, concat_dim))
    define(t, "Pack", "values", lambda values, axis: tf().stack(values, axis=axis), axis=0)
    define(t, "Unpack", "value num", _unpack, axis=0)
    define(t, "Tile", "input multiples", lambda input, multiples: tf().tile(input, multiples))
    define(t, "Fill", "dims value", lambda dims, value: tf().fill(dims, value))
    define(t, "ZerosLike", "x", lambda x: tf().zeros_like(x))
    define(t, "OnesLike", "x", lambda x: tf().ones_like(x))
    define(t, "Shape", "input", lambda input, out_type: tf().shape(input, out_type=out_type), out_type=dtypes.int32)
    define(t, "ShapeN", "input", _shape_n, out_type=dtypes.int32)
    define(t, "Size", "input", lambda input, out_type: tf().size(input, out_type=out_type), out_type=dtypes.int32)
    define(t, "Rank", "input", lambda input: tf().rank(input))
    define(t, "Slice", "input begin size", lambda input, begin, size: tf().slice(input, begin, size))
    define(
        t,
        "StridedSlice",
        "input begin end strides",
        _strided_slice,
        begin_mask=0,
        end_mask=0,
        ellipsis_mask=0,
        new_axis_mask=0,
        shrink_axis_mask=0,
    )
    define(
        t,
        "GatherV2",
        "params indices axis",
        lambda params, indices, axis, batch_dims: tf().gather(params, indices, axis=axis, batch_dims=batch_dims),
        batch_dims=0,
    )
    define(
        t,
        "GatherNd",
        "params indices",
        lambda params, indices, bad_indices_policy: tf().gather_nd(params, indices),
        bad_indices_policy="",
    )
    define(
        t,
        "ScatterNd",
        "indices updates shape",
        lambda indices, updates, shape, bad_indices_policy: tf().scatter_nd(indices, updates, shape),
        bad_indices_policy="",
    )
    for op_name, fn in (
        ("TensorScatterUpdate", "tensor_scatter_nd_update"),
        ("TensorScatterAdd", "tensor_scatter_nd_add"),
        ("TensorScatterSub", "tensor_scatter_nd_sub"),
        ("TensorScatterMax", "tensor_scatter_nd_max"),
        ("TensorScatterMin", "tensor_scatter_nd_min"),
    ):
        define(
            t,
            op_name,
            "tensor indices updates",
            lambda tensor, indices, updates, bad_indices_policy, fn=fn: getattr(tf(), fn)(tensor, indices, updates),
            bad_indices_policy="",
        )
    define(t, "OneHot", "indices depth on_value off_value", _one_hot, axis=-1)
    define(t, "Range", "start limit delta", lambda start, limit, delta: tf().range(start, limit, delta))
    define(t, "LinSpace", "start stop num", lambda start, stop, num: tf().linspace(start, stop, num))
    define(t, "Pad", "input paddings", lambda input, paddings: tf().pad(input, paddings))
    define(
        t,
        "PadV2",
        "input paddings constant_values",
        lambda input, paddings, constant_values: tf().pad(input, paddings, constant_values=constant_values),
    )
    define(t, "MirrorPad", "input paddings mode", lambda input, paddings, mode: tf().pad(input, paddings, mode=mode))
    define(t, "ReverseV2", "tensor axis", lambda tensor, axis: tf().reverse(tensor, axis))
    define(t, "ReverseSequence", "input seq_lengths seq_dim", _reverse_sequence, batch_dim=0)
    define(t, "Where", "condition", lambda condition: tf().where(condition))
    define(t, "Identity", "input", lambda input: tf().identity(input))
    define(t, "IdentityN", "input", lambda input: tf().identity_n(input))
    define(t, "Snapshot", "input", lambda input: tf().identity(input))
    define(t, "StopGradient", "input", lambda input: tf().stop_gradient(input))
    define(t, "BroadcastTo", "input shape", lambda input, shape: tf().broadcast_to(input, shape))
    define(t, "BroadcastArgs", "s0 s1", lambda s0, s1: tf().broadcast_dynamic_shape(s0, s1))
    define(t, "Split", "axis value num_split", lambda axis, value, num_split: tf().split(value, num_split, axis=axis))
    define(t, "SplitV", "value size_splits axis num_split", _split_v)
    define(t, "Unique", "x", _unique, out_idx=dtypes.int32)
    define(
        t,
        "LowerBound",
        "sorted_inputs values",
        lambda sorted_inputs, values, out_type: tf().searchsorted(sorted_inputs, values, "left", out_type=out_type),
        out_type=dtypes.int32,
    )
    define(
        t,
        "UpperBound",
        "sorted_inputs values",
        lambda sorted_inputs, values, out_type: tf().searchsorted(sorted_inputs, values, "right", out_type=out_type),
        out_type=dtypes.int32,
    )
    define(
        t,
        "CheckNumerics",
        "tensor message",
        lambda tensor, message: tf().debugging.check_numerics(tensor, message),
    )
    define(
        t,
        "SpaceToDepth",
        "input block_size",
        lambda input, block_size, data_format: tf().nn.space_to_depth(input, block_size, data_format=data_format),
        data_format="NHWC",
    )
    define(
        t,
        "DepthToSpace",
        "input block_size",
        lambda input, block_size, data_format: tf().nn.depth_to_space(input, block_size, data_format=data_format),
        data_format="NHWC",
    )
    return t
