"""Array manipulation beyond the basics: split, tile, pad, scatter/gather, sort, ..."""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import boolean_mask as _boolean_mask
from tapeshim._src import dtypes, errors, registry, runtime_checks, static_value, symbolic_dims, symbolic_indexing
from tapeshim._src.node import OpKey
from tapeshim._src.ops import array_ops, math_ops, table
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.ops.common import (
    attr_error,
    broadcast_shapes,
    gradient_not_registered,
    is_tensor_like,
    normalize_axis,
    static_error,
    tf_type_name,
)
from tapeshim._src.ops.ragged_hook import ragged_dispatch, ragged_shape_dispatch
from tapeshim._src.registry import OpDef, apply, check_allocation
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, ShapeLike, TensorLike


def _axis(axis: Any, rank: int) -> int:
    return normalize_axis(int(axis), rank)[0]


_split_op = OpDef("SplitV", lambda x, sizes, axis: tuple(jnp.split(x, np.cumsum(sizes)[:-1], axis=axis)), True)


@table.export("split", dtypes=table.ANY, op=_split_op)
def split(
    value: Any,
    num_or_size_splits: Any,
    axis: Any = 0,
    num: int | None = None,
    name: str | None = None,
) -> list[Tensor]:
    """Splits `value` along `axis` into equal parts or parts of the given sizes (one may be -1)."""
    x = convert_to_tensor(value)
    rank = len(x._shape)
    if not -rank <= int(axis) < rank:
        raise static_error(f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {int(axis)}", "Split")
    axis = _axis(axis, rank)
    length = x._shape[axis]
    if isinstance(num_or_size_splits, (float, np.floating)):
        raise ValueError(
            "Rank-0 tensors are not supported as the num_or_size_splits argument to split. Argument "
            f"provided: {num_or_size_splits}"
        )
    if isinstance(num_or_size_splits, (int, np.integer)):
        parts = int(num_or_size_splits)
        if parts <= 0 or length % parts:
            raise static_error(
                f"Number of ways to split should evenly divide the split dimension, but got split_dim {axis} "
                f"(size = {length}) and num_split {parts}",
                "Split",
            )
        sizes: tuple[int, ...] | list[int] = (length // parts,) * parts
    else:
        sizes = list(array_ops.int_arg(num_or_size_splits, "Tlen", "SplitV", "int8, int32, int64"))
        if sizes.count(-1) > 1:
            raise static_error("There can only be one -1 in the input.", "SplitV")
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = length - (sum(sizes) + 1)
        if sum(sizes) != length or any(s < 0 for s in sizes):
            raise static_error(
                f"Determined shape must either match input shape along split_dim exactly if fully specified, or "
                f"be less than the size of the input along split_dim if not fully specified.  Got: {sum(sizes)}",
                "SplitV",
            )
        sizes = tuple(sizes)
    return list(apply(_split_op, (x,), (("axis", axis), ("sizes", sizes))))


_tile_op = OpDef("Tile", lambda x, multiples: jnp.tile(x, multiples), True)


@table.export("tile", dtypes=table.ANY, op=_tile_op)
@ragged_dispatch(impl="tapeshim._src.ragged_array:tile")
def tile(input: TensorLike, multiples: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats `input` `multiples[i]` times along each axis i."""
    x = convert_to_tensor(input)
    multiples = array_ops.int_arg(multiples, "Tmultiples", "Tile")
    if len(multiples) != len(x._shape):
        raise static_error(
            f"Expected multiples argument to be a vector of length {len(x._shape)} but got length {len(multiples)}",
            "Tile",
        )
    for position, m in enumerate(multiples):
        if m < 0:
            raise errors.invalid_argument(f"Expected multiples[{position}] >= 0, but got {m}", "Tile")
    return apply(_tile_op, (x,), (("multiples", multiples),))[0]


def _repeat_impl(x: jax.Array, repeats: tuple, axis: int) -> jax.Array:
    if len(repeats) == 1 and not all(d.__class__ is int for d in x.shape):  # (sizes known per call)
        tiled = jnp.broadcast_to(jnp.expand_dims(x, axis + 1), x.shape[: axis + 1] + repeats + x.shape[axis + 1 :])
        return tiled.reshape(x.shape[:axis] + (x.shape[axis] * repeats[0],) + x.shape[axis + 1 :])
    total = int(np.sum(repeats)) if len(repeats) > 1 else None
    return jnp.repeat(x, np.asarray(repeats), axis=axis, total_repeat_length=total)


_repeat_op = OpDef("Repeat", _repeat_impl, True)


@table.export("repeat", dtypes=table.ANY, op=_repeat_op)
def repeat(input: TensorLike, repeats: Any, axis: AxisLike = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats each element `repeats` times along `axis` (the flattened input when None)."""
    x = convert_to_tensor(input)
    if axis is None:
        x = array_ops.reshape(x, [-1])
        axis = 0
    axis = _axis(axis, len(x._shape))
    given = convert_to_tensor(repeats)
    if not given.dtype.is_integer:
        raise TypeError(
            f"Argument `tensor` (name: repeats) must be of type integer. Received `tensor` = {repeats} of "
            f"dtype: {given.dtype!r}"
        )
    counts = _static_ints(given, "repeats")
    if len(counts) not in (1, x._shape[axis]):
        raise ValueError(f"Dimensions {x._shape[axis]} and {len(counts)} are not compatible")
    for count in counts:
        if count < 0:
            raise errors.invalid_argument(f"Expected multiples[1] >= 0, but got {count}", "Tile")
    return apply(_repeat_op, (x,), (("axis", axis), ("repeats", counts)))[0]


_MIRROR_MESSAGES = {
    "reflect": "paddings must be less than the dimension size: {before}, {after} not less than {size}",
    "symmetric": "paddings must be no greater than the dimension size: {before}, {after} greater than {size}",
}


def _pad_impl(x: jax.Array, c: jax.Array, paddings: tuple, mode: str, checks: tuple = ()) -> jax.Array:
    for axis in checks:  # (TF's MirrorPad limits on sizes known per call)
        before, after = (jnp.asarray(p) for p in paddings[axis])
        size = jnp.asarray(x.shape[axis])
        ok = (before < size) & (after < size) if mode == "reflect" else (before <= size) & (after <= size)
        runtime_checks.require(ok, _MIRROR_MESSAGES[mode] + " [Op:MirrorPad]", before=before, after=after, size=size)
    if any(symbolic_dims.is_symbolic(amount) for pair in paddings for amount in pair):  # (sizes known per call)
        for before, after in paddings:
            runtime_checks.require(
                (jnp.asarray(before) >= 0) & (jnp.asarray(after) >= 0),
                "Paddings must be non-negative: {before} {after} [Op:Pad]",
                before=jnp.asarray(before),
                after=jnp.asarray(after),
            )
        clamped = [
            (symbolic_dims.at_least_zero(before), symbolic_dims.at_least_zero(after), 0) for before, after in paddings
        ]
        return lax.pad(x, c, clamped)  # (`jnp.pad` compares them)
    if mode == "constant":
        return jnp.pad(x, paddings, mode=mode, constant_values=c)
    return symbolic_indexing.mirror_pad(x, paddings, mode)


_pad_op = OpDef("PadV2", _pad_impl, True)


@table.export("pad", dtypes=table.ANY, op=_pad_op)
def pad(
    tensor: TensorLike, paddings: TensorLike, mode: str = "CONSTANT", constant_values: Any = 0, name: str | None = None
) -> Tensor:
    """Pads `tensor` by `paddings` ([[before, after], ...]); mode CONSTANT, REFLECT or SYMMETRIC."""
    x = convert_to_tensor(tensor)
    if _thread_state.trace is not None:  # `[[0, n - tf.shape(x)[0]], [0, 0]]` inside tapeshim.function (H5)
        paddings = static_value.resolve(paddings)
    given = np.asarray(convert_to_tensor(paddings).numpy() if is_tensor_like(paddings) else paddings)
    if given.ndim != 2 or given.shape[1] != 2:
        raise static_error(f"paddings must be a matrix with 2 columns: [{','.join(map(str, given.shape))}]", "Pad")
    amounts = np.asarray(array_ops.int_arg(paddings, "Tpaddings", "Pad")).reshape(-1, 2)
    if amounts.shape[0] != len(x._shape):
        raise static_error(
            f"The first dimension of paddings must be the rank of inputs[{amounts.shape[0]},2] {list(x._shape)}",
            "PadV2",
        )
    modes = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}
    if mode.upper() not in modes:
        raise ValueError(
            f'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or '
            f'"SYMMETRIC". Received `mode` = {mode}'
        )
    checks = []  # (the axes whose MirrorPad limits only the call's sizes decide)
    for axis, ((before, after), size) in enumerate(zip(amounts.tolist(), x._shape)):
        if symbolic_dims.is_symbolic(before) or symbolic_dims.is_symbolic(after):
            if mode.upper() != "CONSTANT":  # (TF checks these sizes per run: traced per shape instead)
                raise ValueError("tf.pad REFLECT or SYMMETRIC by an amount known per call")
            continue  # checked when the function runs (`_pad_impl`)
        if before < 0 or after < 0:
            raise static_error(f"Paddings must be non-negative: {before} {after}", "Pad")
        if mode.upper() == "CONSTANT":
            continue
        reflect = mode.upper() == "REFLECT"
        try:
            bad = bool(before >= size or after >= size) if reflect else bool(before > size or after > size)
        except Exception:  # noqa: BLE001 - JAX's InconclusiveDimensionOperation: a size known per call
            checks.append(axis)
            continue
        if bad:
            message = _MIRROR_MESSAGES["reflect" if reflect else "symmetric"]
            raise errors.invalid_argument(message.format(before=before, after=after, size=size), "MirrorPad")
    value = convert_to_tensor(constant_values, dtype_hint=x.dtype)
    return apply(
        _pad_op,
        (x, math_ops.cast(value, x.dtype)),
        (("mode", modes[mode.upper()]), ("paddings", tuple(map(tuple, amounts.tolist()))))
        + ((("checks", tuple(checks)),) if checks else ()),
    )[0]


_reverse_op = OpDef("ReverseV2", lambda x, axis: jnp.flip(x, axis), True)


@table.export("reverse", dtypes=table.ANY, op=_reverse_op)
@ragged_dispatch(impl="tapeshim._src.ragged_array:reverse")
def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverses `tensor` along the axes in `axis`."""
    x = convert_to_tensor(tensor)
    axes = normalize_axis(list(array_ops.int_arg(axis, "Tidx", "ReverseV2")), len(x._shape))
    return apply(_reverse_op, (x,), (("axis", axes),))[0]


def _roll_impl(x: jax.Array, shift: tuple, axis: tuple) -> jax.Array:
    if not any(symbolic_dims.is_symbolic(s) for s in shift):
        return jnp.roll(x, shift, axis)
    for amount, ax in zip(shift, axis):  # (a size known per call, `tf.shape(x)[0]`: rolled by its value)
        x = jnp.roll(x, jnp.asarray(amount), ax)
    return x


def _roll_dynamic_impl(x: jax.Array, shift: jax.Array, axis: tuple) -> jax.Array:
    shifts = jnp.reshape(shift, (-1,))
    for k, ax in enumerate(axis):
        x = jnp.roll(x, shifts[k], ax)
    return x


_roll_op = OpDef("Roll", _roll_impl, True)
_roll_dynamic_op = OpDef("Roll", _roll_dynamic_impl, True)


def _shift_tensor(shift: Any) -> Tensor | None:
    """`shift` as a tensor where only the call knows its value (inside `tapeshim.function`: a random shift, an
    argument), else None (its value is known: a static shift)."""
    if _thread_state.trace is None:
        return None
    resolved = static_value.resolve(shift)
    values = resolved if isinstance(resolved, (list, tuple)) else [resolved]
    unknown = [v for v in values if isinstance(v, Tensor) and static_value.known_value(v) is None]
    return convert_to_tensor(shift) if unknown else None


@table.export("roll", dtypes=table.ANY, op=_roll_op)
def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Rolls elements along `axis` by `shift` (both may be lists). Inside `tapeshim.function`, a shift only the
    call knows (`tf.random.uniform`, an argument) rolls in the program, as TF's graph does."""
    x = convert_to_tensor(input)
    axes = normalize_axis(list(array_ops.int_arg(axis, "Taxis", "Roll")), len(x._shape))
    dynamic = _shift_tensor(shift)
    if dynamic is not None:
        if dynamic.dtype not in (dtypes.int32, dtypes.int64):
            raise array_ops._attr_error("Tshift", tf_type_name(dynamic.dtype), "Roll", "int32, int64")
        if len(dynamic._shape) > 1:
            raise static_error("shift must be a scalar or a 1-D vector", "Roll")
        if (dynamic._shape[0] if dynamic._shape else 1) != len(axes):
            raise static_error("shift and axis must have the same size", "Roll")
        return apply(_roll_dynamic_op, (x, dynamic), (("axis", tuple(axes)),))[0]
    shifts = array_ops.int_arg(shift, "Tshift", "Roll")
    if len(shifts) != len(axes):
        raise static_error("shift and axis must have the same size", "Roll")
    return apply(_roll_op, (x,), (("axis", axes), ("shift", shifts)))[0]


def _gather_nd_impl(params: jax.Array, indices: jax.Array, batch_dims: int, checked: bool = False) -> jax.Array:
    if checked:
        runtime_checks.check_vectors_traced(indices, params.shape[batch_dims:], "GatherNd")
    if batch_dims:
        return jax.vmap(lambda p, i: _gather_nd_impl(p, i, batch_dims - 1))(params, indices)
    if indices.shape[-1] == 0:  # empty index vectors pick the whole of params, once per vector
        return jnp.broadcast_to(params, indices.shape[:-1] + params.shape)
    return params[tuple(jnp.moveaxis(indices, -1, 0))]


_gather_nd_op = OpDef("GatherNd", _gather_nd_impl, True)


def _index_static(indices: Tensor, shape: tuple, op_name: str) -> tuple:
    """`(("checked", True),)` when `indices` is checked in the program; else checks it now, on the host."""
    return runtime_checks.checked_static(
        indices, lambda values: runtime_checks.check_vectors_host(values, tuple(shape), op_name), shape
    )


@table.export("gather_nd", dtypes=table.ANY, op=_gather_nd_op)
def gather_nd(params: TensorLike, indices: TensorLike, batch_dims: int = 0, name: str | None = None) -> Tensor:
    """Gathers slices of `params` at the index vectors in the last axis of `indices`."""
    p, i = convert_to_tensor(params), convert_to_tensor(indices)
    if not i.dtype.is_integer:
        raise attr_error(f"indices must be int32 or int64, got {i.dtype.name}", "GatherNd")
    if not i._shape:
        raise static_error("indices must be at least a vector", "GatherNd")
    batch_dims = int(batch_dims)
    depth, params_rank = (i._shape[-1] if i._shape else 0), len(p._shape) - batch_dims
    if depth > params_rank:
        raise static_error(
            f"index innermost dimension length must be <= params rank; saw: {depth} vs. {params_rank}", "GatherNd"
        )
    static = (("batch_dims", batch_dims),) + _index_static(i, p._shape[batch_dims:], "GatherNd")
    return apply(_gather_nd_op, (p, i), static)[0]


def _scatter_impl(
    tensor: jax.Array, indices: jax.Array, updates: jax.Array, mode: str, op_name: str, checked: bool = False
) -> jax.Array:
    if checked:
        runtime_checks.check_vectors_traced(indices, tensor.shape, op_name)
    where = tuple(jnp.moveaxis(indices, -1, 0))
    if mode == "update":
        return tensor.at[where].set(updates)
    if tensor.dtype == jnp.bool_:  # (TF's bool sum is an or)
        return tensor.astype(jnp.int32).at[where].max(updates.astype(jnp.int32)).astype(jnp.bool_)
    return tensor.at[where].add(updates)


_scatter_op = OpDef("TensorScatter", _scatter_impl, True)


def _scatter(tensor: Tensor, indices: Any, updates: Any, mode: str, op_name: str) -> Tensor:
    i = convert_to_tensor(indices)
    u = convert_to_tensor(updates, dtype_hint=tensor.dtype)
    if u.dtype != tensor.dtype:
        raise attr_error(f"updates must have the tensor's dtype {tensor.dtype.name}, got {u.dtype.name}", op_name)
    if not i.dtype.is_integer:
        raise attr_error(
            f"Value for attr 'Tindices' of {i.dtype.name} is not in the list of allowed values: int16, int32, int64",
            op_name,
        )
    depth = i._shape[-1] if i._shape else 0
    expected = tuple(i._shape[:-1]) + tuple(tensor._shape[depth:])
    if depth > len(tensor._shape) or tuple(u._shape) != expected:
        raise static_error(
            f"updates has shape [{','.join(map(str, u._shape))}] but indices of shape "
            f"[{','.join(map(str, i._shape))}] into a tensor of shape [{','.join(map(str, tensor._shape))}] need "
            f"updates of shape [{','.join(map(str, expected))}]",
            op_name,
        )
    static = (("mode", mode), ("op_name", op_name)) + _index_static(i, tensor._shape, op_name)
    return apply(_scatter_op, (tensor, i, u), static)[0]


@table.export("scatter_nd", dtypes=table.NUMERIC)
def scatter_nd(
    indices: TensorLike, updates: TensorLike, shape: ShapeLike | TensorLike, name: str | None = None
) -> Tensor:
    """A tensor of `shape` with `updates` summed in at `indices` (zeros elsewhere)."""
    u = convert_to_tensor(updates)
    return _scatter(array_ops.zeros(array_ops.shape_arg(shape, "ScatterNd"), u.dtype), indices, u, "add", "ScatterNd")


@table.export("tensor_scatter_nd_update", dtypes=table.ANY)
def tensor_scatter_nd_update(
    tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: str | None = None
) -> Tensor:
    """`tensor` with the elements at `indices` replaced by `updates`."""
    return _scatter(convert_to_tensor(tensor), indices, updates, "update", "TensorScatterUpdate")


@table.export("tensor_scatter_nd_add", dtypes=table.NUMERIC)
def tensor_scatter_nd_add(
    tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: str | None = None
) -> Tensor:
    """`tensor` with `updates` added at `indices`."""
    t = convert_to_tensor(tensor)
    if t.dtype.is_bool:  # (TF registers no bool kernel)
        raise errors.NotFoundError(
            None, None, "Could not find device for node: {{node TensorScatterAdd}} = TensorScatterAdd[T=DT_BOOL]"
        )
    return _scatter(t, indices, updates, "add", "TensorScatterAdd")


@table.export(
    "boolean_mask",
    dtypes=table.ANY,
    note="a mask only known when a tf.function runs makes it run eagerly (the result's size is data-dependent)",
)
def boolean_mask(tensor: TensorLike, mask: TensorLike, axis: AxisLike = None, name: str | None = None) -> Tensor:
    """The elements (or slices along `axis`) of `tensor` where `mask` is true."""
    return _boolean_mask.boolean_mask(tensor, mask, axis)


@table.export("slice", dtypes=table.ANY)
def slice(input_: TensorLike, begin: TensorLike, size: TensorLike, name: str | None = None) -> Tensor:  # noqa: A001
    """The slice of `input_` starting at `begin` with `size` (-1: to the end) per axis."""
    x = convert_to_tensor(input_)
    starts, sizes = array_ops.int_arg(begin, "Index", "Slice"), array_ops.int_arg(size, "Index", "Slice")
    rank = len(x._shape)
    if len(starts) != rank or len(sizes) != rank:
        raise static_error(
            f"Expected begin and size arguments to be 1-D tensors of size {rank}, but got shapes [{len(starts)}] "
            f"and [{len(sizes)}] instead.",
            "Slice",
        )
    key = tuple(builtins.slice(b, None if s == -1 else b + s) for b, s in zip(starts, sizes))
    for position, (b, s, d) in enumerate(zip(starts, sizes, x._shape)):
        if not 0 <= b <= d:
            raise errors.invalid_argument(f"Expected begin[{position}] in [0, {d}], but got {b}", "Slice")
        if s != -1 and not 0 <= s <= d - b:
            raise errors.invalid_argument(f"Expected size[{position}] in [0, {d - b}], but got {s}", "Slice")
    return array_ops.getitem(x, key)


@table.export("strided_slice", dtypes=table.ANY)
def strided_slice(
    input_: TensorLike,
    begin: TensorLike,
    end: TensorLike,
    strides: TensorLike | None = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Tensor:
    """TF's strided slice with its bit masks, as indexing would express it."""
    starts = array_ops.int_arg(begin, "Index", "StridedSlice", "int16, int32, int64")
    ends = array_ops.int_arg(end, "Index", "StridedSlice", "int16, int32, int64")
    steps = (
        array_ops.int_arg(strides, "Index", "StridedSlice", "int16, int32, int64")
        if strides is not None
        else (1,) * len(starts)
    )
    if not len(starts) == len(ends) == len(steps):
        raise static_error(
            f"Expected begin, end, and strides to be 1D equal size tensors, but got shapes [{len(starts)}], "
            f"[{len(ends)}], and [{len(steps)}] instead.",
            "StridedSlice",
        )
    key: list = []
    for i, (b, e, s) in enumerate(zip(starts, ends, steps)):
        if ellipsis_mask >> i & 1:
            key.append(Ellipsis)
        elif new_axis_mask >> i & 1:
            key.append(None)
        elif shrink_axis_mask >> i & 1:
            key.append(b)
        else:
            key.append(builtins.slice(None if begin_mask >> i & 1 else b, None if end_mask >> i & 1 else e, s))
    return array_ops.getitem(convert_to_tensor(input_), tuple(key))


_broadcast_op = OpDef("BroadcastTo", lambda x, shape: jnp.broadcast_to(x, shape), True)


@table.export("broadcast_to", dtypes=table.ANY, op=_broadcast_op)
@ragged_shape_dispatch("shape", impl="tapeshim._src.ragged_shape:broadcast_to")
def broadcast_to(input: TensorLike, shape: ShapeLike | TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """Broadcasts `input` to `shape`."""
    x = convert_to_tensor(input)
    target = array_ops.shape_arg(shape, "BroadcastTo", float_error="Tidx")
    if len(target) < len(x._shape):
        raise static_error(
            f"Rank of input ({len(x._shape)}) must be no greater than rank of output shape ({len(target)}).",
            "BroadcastTo",
        )
    try:
        if broadcast_shapes(tuple(x._shape), target) != target:
            raise ValueError
    except ValueError:
        raise static_error(
            f"Unable to broadcast tensor of shape {list(x._shape)} to tensor of shape {list(target)}", "BroadcastTo"
        ) from None
    return apply(_broadcast_op, (x,), (("shape", target),))[0]


@table.export("meshgrid", dtypes=table.ANY)
def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """Coordinate grids from 1-D tensors (`indexing='xy'` or `'ij'`)."""
    indexing = kwargs.get("indexing", "xy")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    tensors = [array_ops.reshape(convert_to_tensor(a), [-1]) for a in args]
    sizes = [t._shape[0] for t in tensors]  # (symbolic dimensions in a trace for every size)
    grids = []
    for i, t in enumerate(tensors):
        shape: list[int | None] = [1] * len(tensors)
        shape[i] = sizes[i]
        if indexing == "xy" and len(tensors) > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        full = list(sizes)
        if indexing == "xy" and len(tensors) > 1:
            full[0], full[1] = full[1], full[0]
        grids.append(broadcast_to(array_ops.reshape(t, shape), full))
    return grids


def _linspace_impl(start: jax.Array, stop: jax.Array, num: int, axis: int) -> jax.Array:
    """TF's linspace_nd: start + delta * [1 .. num - 2] between the two end points, then the first `num`."""
    shape = jnp.broadcast_shapes(start.shape, stop.shape)
    first = jnp.expand_dims(jnp.broadcast_to(start, shape), axis)
    last = jnp.expand_dims(jnp.broadcast_to(stop, shape), axis)
    if symbolic_dims.is_symbolic(num):
        return _symbolic_linspace(first, last, num, axis)
    steps = builtins.max(num - 1, 1)
    delta = (last - first) / jnp.asarray(steps, first.dtype)
    inner_shape = [1] * first.ndim
    inner_shape[axis] = builtins.max(num - 2, 0)
    inner = jnp.arange(1, steps, dtype=jnp.int64).astype(first.dtype).reshape(inner_shape)
    return lax.slice_in_dim(jnp.concatenate([first, first + delta * inner, last], axis=axis), 0, num, axis=axis)


def _symbolic_linspace(first: jax.Array, last: jax.Array, num: Any, axis: int) -> jax.Array:
    """`_linspace_impl` for a `num` known per call (a trace for every size): the same values, each position
    `first + delta * i` but for the end points, with TF's check of a negative `num` when the call runs."""
    count = jnp.asarray(num)
    runtime_checks.require(count >= 0, "Requires start <= limit when delta > 0: 1/-1 [Op:Range]")
    shape = list(first.shape)
    shape[axis] = symbolic_dims.at_least_zero(num)
    position = lax.broadcasted_iota(jnp.int32, tuple(shape), axis)
    delta = (last - first) / jnp.maximum(count - 1, 1).astype(first.dtype)
    inner = jnp.where(position == 0, first, first + delta * position.astype(first.dtype))
    return jnp.where((position == count - 1) & (position > 0), last, inner)


_linspace_op = OpDef("LinSpace", _linspace_impl, True)


@table.export(
    "linspace",
    dtypes=table.REAL_FLOAT,
    note="TF's formula; gradients flow to start and stop; num known while tracing or a tf.shape size",
    op=_linspace_op,
)
def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` (inclusive) along `axis`, as `tf.linspace`.

    `start` and `stop` broadcast against each other; integer bounds give
    float64 (float32 for 8- and 16-bit integers), as TF's division does. The
    result is differentiable with respect to `start` and `stop`.

    Raises:
      InvalidArgumentError: if `num` is negative.
    """
    first = convert_to_tensor(start)
    last = convert_to_tensor(stop, dtype=first.dtype)
    num = array_ops.folded_int(num)  # `tf.shape(x)[0]` inside tapeshim.function (H5)
    if symbolic_dims.is_symbolic(num):  # a size known per call (a trace for every size): checked when it runs
        count = num
    else:
        count = int(num.numpy() if is_tensor_like(num) else num)
        if count < 0:  # (TF's linspace builds a range to -1 for any negative `num`)
            raise static_error("Requires start <= limit when delta > 0: 1/-1", "Range")
    if first.dtype.is_integer:
        wide = "float32" if first.dtype.size <= 2 else "float64"
        first, last = math_ops.cast(first, wide), math_ops.cast(last, wide)
    rank = builtins.max(len(first._shape), len(last._shape)) + 1
    return apply(_linspace_op, (first, last), (("num", count), ("axis", _axis(axis, rank))))[0]


@table.export("eye", "linalg.eye", gradient="-", dtypes=table.ANY)
def eye(
    num_rows: int,
    num_columns: int | None = None,
    batch_shape: ShapeLike | TensorLike | None = None,
    dtype: DTypeLike = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """An identity matrix (or a batch of them)."""
    num_rows = array_ops.folded_int(num_rows)  # `tf.eye(tf.shape(x)[0])` inside tapeshim.function (H5)
    columns_given = num_rows if num_columns is None else array_ops.folded_int(num_columns)
    if any(symbolic_dims.is_symbolic(n) for n in (num_rows, columns_given)):
        return _symbolic_eye(num_rows, columns_given, batch_shape, dtypes.as_dtype(dtype))
    if not all(
        isinstance(n, (int, np.integer)) or (is_tensor_like(n) and convert_to_tensor(n).dtype.is_integer)
        for n in (num_rows, columns_given)
    ):
        raise TypeError(
            "Arguments `num_rows` and `num_columns` must be positive integer values. Received: "
            f"num_rows={num_rows}, num_columns={columns_given}"
        )
    rows, columns = int(num_rows), int(columns_given)
    batch = () if batch_shape is None else array_ops.shape_arg(batch_shape, "Fill")
    array_ops.shape_arg((rows, columns), "Fill")
    check_allocation(batch + (rows, columns), dtypes.as_dtype(dtype), "MatrixDiagV3")
    matrix: np.ndarray = np.eye(rows, columns, dtype=dtypes.as_dtype(dtype).as_numpy_dtype)
    if batch:
        matrix = np.broadcast_to(matrix, batch + matrix.shape)
    return constant(matrix)


def _one_hot_impl(indices: jax.Array, on: jax.Array, off: jax.Array, depth: int, axis: int) -> jax.Array:
    if symbolic_dims.is_symbolic(depth):  # a size known per call: checked as TF's kernel checks it
        value = jnp.asarray(depth)
        runtime_checks.require(value >= 0, "depth must be non-negative, got: {depth} [Op:OneHot]", depth=value)
        depth = symbolic_dims.at_least_zero(depth)
    hot = jax.nn.one_hot(indices, depth, axis=axis, dtype=jnp.bool_)
    return jnp.where(hot, on, off)


_one_hot_op = OpDef("OneHot", lambda i, on, off, depth, axis: _one_hot_impl(i, on, off, depth, axis), False)


@table.export("one_hot", dtypes=table.ANY, op=_one_hot_op)
@ragged_dispatch()
def one_hot(
    indices: TensorLike,
    depth: int,
    on_value: TensorLike | None = None,
    off_value: TensorLike | None = None,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    name: str | None = None,
) -> Tensor:
    """One-hot encodes integer `indices` into `depth` classes (float32 by default)."""
    target = (
        dtypes.as_dtype(dtype)
        if dtype is not None
        else (convert_to_tensor(on_value).dtype if on_value is not None else dtypes.float32)
    )
    index_tensor = convert_to_tensor(indices)
    if not index_tensor.dtype.is_integer:
        raise attr_error(
            f"Value for attr 'TI' of {tf_type_name(index_tensor.dtype)} is not in the list of allowed values: "
            "uint8, int8, int32, int64",
            "OneHot",
        )
    depth = array_ops.folded_int(depth)
    if not symbolic_dims.is_symbolic(depth):
        depth = array_ops.python_int(depth, "int32")
        if depth < 0:
            raise static_error(f"depth must be non-negative, got: {depth}", "OneHot")
    out_rank = len(index_tensor._shape) + 1
    if axis is not None and not -1 <= int(axis) < out_rank:
        raise static_error(f"Expected axis to be -1 or between [0, {out_rank}).  But received: {int(axis)}", "OneHot")
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=target)
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=target)
    return apply(
        _one_hot_op,
        (convert_to_tensor(indices), on, off),
        (("axis", -1 if axis is None else int(axis)), ("depth", depth)),
    )[0]


def _symbolic_eye(rows: Any, columns: Any, batch_shape: Any, dtype: dtypes.DType) -> Tensor:
    """`tf.eye` sized by symbolic dimensions (a trace for every size): a recorded op, sized per call."""
    batch = () if batch_shape is None else array_ops.shape_arg(batch_shape, "Fill")
    given = tuple(n if symbolic_dims.is_symbolic(n) else int(n) for n in (rows, columns))
    sizes = tuple(symbolic_dims.at_least_zero(n) for n in given)
    out_shape, np_dtype = batch + sizes, dtype._np

    def kernel() -> tuple:
        for n in given:  # TF's `eye` fills a vector of that length: its Fill checks the size when it runs
            if symbolic_dims.is_symbolic(n):
                value = jnp.asarray(n)
                runtime_checks.require(value >= 0, "Dimension {size} must be >= 0 [Op:Fill]", size=value)
        return (jnp.broadcast_to(jnp.eye(sizes[0], sizes[1], dtype=np_dtype), out_shape),)

    return registry.record(kernel, OpKey("Eye", dtype._name, out_shape), (), ((out_shape, dtype),), [])[0]


def _sort_impl(x: jax.Array, axis: int, descending: bool) -> jax.Array:
    """Sorted values; for floats, gathered by a stable argsort so that tied elements keep their order and the
    gradient goes where TF's (top_k based) sort sends it: the first of equal values comes first, both ways."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.sort(x, axis=axis, descending=descending)
    order = jnp.argsort(x, axis=axis, stable=True, descending=descending)
    return jnp.take_along_axis(x, order, axis=axis)


_sort_op = OpDef("Sort", _sort_impl, True)
_argsort_op = OpDef(
    "Argsort",
    lambda x, axis, descending: jnp.argsort(x, axis=axis, stable=True, descending=descending).astype(jnp.int32),
    False,
)


def _sortable(x: Tensor) -> Tensor:
    """TF sorts with TopKV2, which has no complex or bool kernel: InvalidArgumentError, as TF."""
    if not (x._dtype.is_floating or x._dtype.is_integer):
        raise errors.invalid_argument(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values: float, double, int32, "
            "uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64\n\t; NodeDef: {{node TopKV2}}",
            "TopKV2",
        )
    return x


def _direction(direction: str) -> bool:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"`direction` should be one of ('ASCENDING', 'DESCENDING'). Received: {direction}")
    return direction == "DESCENDING"


@table.export(
    "sort",
    gradient="tf",
    dtypes=table.REAL,
    note="ties keep their order, so the gradient reaches the element TF's sort picks",
    op=_sort_op,
)
def sort(values: TensorLike, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """Sorted `values` along `axis`, as `tf.sort`.

    Tied values keep their original order in either direction (TF sorts with
    `top_k`), which decides which of them each output's gradient reaches.
    """
    x = _sortable(convert_to_tensor(values))
    return apply(_sort_op, (x,), (("axis", _axis(axis, len(x._shape))), ("descending", _direction(direction))))[0]


@table.export("argsort", gradient="-", dtypes=table.REAL, op=_argsort_op)
def argsort(
    values: TensorLike, axis: int = -1, direction: str = "ASCENDING", stable: bool = False, name: str | None = None
) -> Tensor:
    """The int32 indices that sort `values` along `axis` (stable)."""
    x = convert_to_tensor(values)
    return apply(_argsort_op, (x,), (("axis", _axis(axis, len(x._shape))), ("descending", _direction(direction))))[0]


_unique_gather_op = OpDef(
    "Unique", lambda x, positions: gradient_not_registered("Unique")(x[np.asarray(positions, np.int64)]), True
)


class Unique(NamedTuple):
    """What `unique` returns, as TF's `Unique` tuple."""

    y: Tensor
    idx: Tensor


@table.export(
    "unique",
    gradient="custom",
    dtypes=table.ANY,
    note="x must be known (not traced); differentiating raises LookupError, as TF",
    op=_unique_gather_op,
)
def unique(x: TensorLike, out_idx: DTypeLike = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The unique values of 1-D `x` in order of appearance, and each element's index into them."""
    t = convert_to_tensor(x)
    if len(t._shape) != 1:
        raise static_error("unique expects a 1D vector.", "Unique")
    values = np.asarray(t.numpy())
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    y = apply(_unique_gather_op, (t,), (("positions", tuple(first[order].tolist())),))[0]
    idx = constant(rank[inverse.reshape(-1)].astype(dtypes.as_dtype(out_idx).as_numpy_dtype))
    return Unique(y, idx)


@table.export("sequence_mask", gradient="-", dtypes=table.REAL)
def sequence_mask(
    lengths: TensorLike, maxlen: Any = None, dtype: DTypeLike = dtypes.bool_, name: str | None = None
) -> Tensor:
    """mask[..., j] = j < lengths[...], with maxlen columns (max(lengths) when None)."""
    lengths_t = convert_to_tensor(lengths)
    if maxlen is None:
        maxlen = int(np.max(lengths_t.numpy())) if lengths_t.shape.num_elements() else 0
    maxlen = array_ops.folded_int(maxlen)  # `maxlen=tf.shape(x)[1]` inside tapeshim.function (H5)
    if symbolic_dims.is_symbolic(maxlen):  # a size known per call: a range checked when the call runs
        columns = array_ops.range(maxlen, dtype=lengths_t.dtype)
    else:
        if int(maxlen) < 0:
            raise static_error(f"Requires start <= limit when delta > 0: 0/{int(maxlen)}", "Range")
        columns = constant(np.arange(int(maxlen), dtype=lengths_t.dtype.as_numpy_dtype))
    mask = math_ops.less(columns, array_ops.expand_dims(lengths_t, -1))
    return mask if dtypes.as_dtype(dtype).is_bool else math_ops.cast(mask, dtype)


_bitcast_op = OpDef("Bitcast", lambda x, type: lax.bitcast_convert_type(x, dtypes.as_dtype(type)._np), False)


@table.export("bitcast", dtypes=table.NUMERIC, op=_bitcast_op)
def bitcast(input: TensorLike, type: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Reinterprets the bits of `input` as `type`."""
    x, target = convert_to_tensor(input), dtypes.as_dtype(type)
    wider, narrower = target._np.itemsize, x.dtype._np.itemsize
    if wider > narrower and (not x._shape or x._shape[-1] != wider // narrower):
        raise static_error(f"Cannot bitcast from {narrower} to {wider}", "Bitcast")
    return apply(_bitcast_op, (x,), (("type", target.name),))[0]
