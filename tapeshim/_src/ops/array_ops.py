"""The array-manipulation rows of the op table (`tf.reshape`, `tf.concat`, indexing, ...)."""

from __future__ import annotations

import builtins
import math
from typing import Any, Sequence, cast

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import (
    boolean_mask,
    dtypes,
    errors,
    registry,
    runtime_checks,
    shape_conversion,  # noqa: F401 - registers TensorShape's conversion
    static_value,
    symbolic_dims,
)
from tapeshim._src.node import OpKey
from tapeshim._src.ops import table
from tapeshim._src.ops.common import (
    attr_error,
    broadcast_shapes,
    convert_same_dtype,
    is_tensor_like,
    normalize_axis,
    static_error,
    tf_type_name,
)
from tapeshim._src.ops.ragged_hook import ragged_dispatch, ragged_shape_dispatch
from tapeshim._src.ops.range_ops import range as range  # noqa: A004 - re-exported: array_ops.range
from tapeshim._src.registry import OpDef, apply, check_allocation
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, ShapeLike, TensorLike

newaxis = None


def _symbolic_ints(value: Any) -> tuple | None:
    """A resolved integer argument that holds symbolic dimensions (`tf.shape(x)[0]` in a trace for every size,
    `symbolic_values`), flattened; None where it holds none."""
    if isinstance(value, Tensor) or (isinstance(value, np.ndarray) and value.dtype != object):
        return None
    if value.__class__ in (list, tuple) and all(v.__class__ is int for v in value):
        return None  # (the common case, on every shaped op's dispatch: plain ints)
    try:
        flat = np.asarray(value, dtype=object).reshape(-1)
    except (TypeError, ValueError):
        return None
    if not any(symbolic_dims.is_symbolic(v) for v in flat):
        return None
    if not all(symbolic_dims.is_symbolic(v) or isinstance(v, (int, np.integer)) for v in flat):
        return None
    return tuple(v if symbolic_dims.is_symbolic(v) else int(v) for v in flat)


def _static_ints(value: Any, what: str) -> tuple[int, ...]:
    value = static_value.resolve(value)  # `tf.shape(x)[0]` inside tapeshim.function is known (H5)
    symbolic = _symbolic_ints(value)
    if symbolic is not None:
        return symbolic
    if is_tensor_like(value):
        value = convert_to_tensor(value).numpy()
    try:
        return tuple(int(d) for d in np.asarray(value).reshape(-1))
    except (TypeError, ValueError):
        raise TypeError(f"Expected `{what}` to be a list of integers, got {value!r}.") from None


def _attr_error(attr: str, dtype_name: str, op_name: str, allowed: str) -> Exception:
    return attr_error(
        f"Value for attr '{attr}' of {dtype_name} is not in the list of allowed values: "
        f"{allowed}\n\t; NodeDef: {{{{node {op_name}}}}}",
        None,
    )


def int_arg(value: ShapeLike | TensorLike, attr: str, op_name: str, allowed: str = "int32, int64") -> tuple[int, ...]:
    """An integer argument (an int, a list of ints or an integer tensor) as ints, flattened.

    Raises:
      InvalidArgumentError: for floats, as TF's kernel attribute `attr` of
        `op_name` allows only integer types.
    """
    value = static_value.resolve(value)
    symbolic = _symbolic_ints(value)
    if symbolic is not None:
        return symbolic
    array = np.asarray(convert_to_tensor(value).numpy() if is_tensor_like(value) else value)
    if array.dtype.kind not in "iu" and array.size:
        try:
            name = tf_type_name(dtypes.from_numpy(array.dtype))
        except (TypeError, ValueError, KeyError):
            name = str(array.dtype)
        raise _attr_error(attr, name, op_name, allowed)
    return _static_ints(array, attr)


def shape_arg(value: ShapeLike | TensorLike, op_name: str, float_error: str = "convert") -> tuple[int, ...]:
    """A shape argument (a list, tuple or 1-D integer tensor) as non-negative ints, with TF's errors.

    Args:
      value: the shape.
      op_name: the TF op named in error messages.
      float_error: what TF raises for a non-integer shape: "convert" (a TypeError
        converting a list to int32, as `tf.zeros`), "attr" (an InvalidArgumentError
        for the op's `T` attribute, as the random ops), or the name of the op's
        index attribute that refuses it (`"Tidx"` for `tf.broadcast_to`).

    Raises:
      TypeError, InvalidArgumentError: for a non-integer shape, a shape that is
        not a vector, or a negative dimension.
    """
    given_tensor = is_tensor_like(value)
    value = static_value.resolve(value)  # `tf.shape(x)[0]` inside tapeshim.function is known (H5)
    symbolic = _symbolic_ints(value)
    if symbolic is not None:
        return symbolic
    array = np.asarray(convert_to_tensor(value).numpy() if is_tensor_like(value) else value)
    if array.dtype.kind not in "iu" and array.size:
        name = tf_type_name(dtypes.from_numpy(array.dtype)) if array.dtype.kind in "fc" else str(array.dtype)
        if float_error == "attr":
            raise _attr_error("T", name, op_name, "int32, int64")
        if float_error != "convert":  # a float list becomes a float tensor, refused by the op's index attribute
            raise _attr_error(float_error, name, op_name, "int32, int64")
        if given_tensor:
            raise _attr_error("index_type", name, op_name, "int32, int64")
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype int32")
    if array.ndim > 1:
        raise static_error(f"dims must represent a vector, got shape [{','.join(map(str, array.shape))}]", op_name)
    dims = tuple(int(d) for d in array.reshape(-1))
    for d in dims:
        if d < 0:
            raise static_error(f"Dimension {d} must be >= 0", op_name)
    return dims


def folded_int(value: Any) -> Any:
    """An integer tensor argument known while tracing (`depth=tf.shape(x)[1]` inside tapeshim.function, H5) as
    its numpy value, or as a symbolic dimension in a trace for every size; any other value as given."""
    if isinstance(value, Tensor) and value._dtype.is_integer:
        value = static_value.resolve(value)
        return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    return value


def python_int(value: Any, dtype_name: str) -> int:
    """An int argument TF converts to a tensor of `dtype_name`: a float raises TF's TypeError."""
    floating = isinstance(value, (float, np.floating))
    if floating or (is_tensor_like(value) and not convert_to_tensor(value).dtype.is_integer):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype_name}")
    return int(value)


def _index_dtype(out_type: Any, op_name: str) -> None:
    dtype = dtypes.as_dtype(out_type)
    if dtype.name not in ("int32", "int64"):
        raise _attr_error("out_type", tf_type_name(dtype), op_name, "int32, int64")


def _reshape_target(size_dims: tuple, target: tuple) -> tuple[int, ...]:
    """The requested shape with its -1 resolved as TF resolves it; raises TF's errors."""
    for position, d in enumerate(target):
        if d < -1:
            raise static_error(f"Size {position} must be non-negative, not {d}", "Reshape")
    if sum(d == -1 for d in target) > 1:
        raise static_error("Only one input size may be -1, not both", "Reshape")
    size = math.prod(size_dims)
    if -1 in target:
        # TF infers the -1 from the nonzero requested sizes; where the request has a zero size, the input's zero
        # sizes are left out too (0 values to [0, -1] give [0, 1]), else they count ([-1, 3] of 0 values: [0, 3])
        known = math.prod(d for d in target if d > 0)
        dropped = 0 in target and 0 in size_dims
        counted = math.prod(d for d in size_dims if d > 0 or 0 not in target)
        if not dropped and counted % known:
            raise static_error(
                f"Input to reshape is a tensor with {size} values, but the requested shape requires a "
                f"multiple of {known}",
                "Reshape",
            )
        target = tuple(counted // known if d == -1 else d for d in target)
    if math.prod(target) != size:
        raise static_error(
            f"Input to reshape is a tensor with {size} values, but the requested shape has {math.prod(target)}",
            "Reshape",
        )
    return target


_reshape_op = OpDef("Reshape", lambda x, shape: jnp.reshape(x, shape), True)
_transpose_op = OpDef(
    "Transpose",
    lambda x, perm, conjugate: jnp.conj(jnp.transpose(x, perm)) if conjugate else jnp.transpose(x, perm),
    True,
)
_concat_op = OpDef("ConcatV2", lambda *xs, axis: jnp.concatenate(xs, axis=axis), True)
_stack_op = OpDef("Pack", lambda *xs, axis: jnp.stack(xs, axis=axis), True)
_expand_dims_op = OpDef("ExpandDims", lambda x, axis: jnp.expand_dims(x, axis), True)
_squeeze_op = OpDef("Squeeze", lambda x, axis: jnp.squeeze(x, axis), True)
_slice_op = OpDef("StridedSlice", lambda x, key: x[_decode_key(key)], True)
_dynamic_slice_op = OpDef("StridedSlice", lambda x, *indices, key: _dynamic_slice_impl(x, indices, key), True)
_where_op = OpDef("SelectV2", lambda c, x, y: jnp.where(c, x, y), True)
_gather_op = OpDef(
    "GatherV2", lambda p, i, axis, batch_dims, checked=False: _gather_impl(p, i, axis, batch_dims, checked), True
)


@table.export("reshape", dtypes=table.ANY, op=_reshape_op)
@ragged_shape_dispatch("shape", impl="tapeshim._src.ragged_shape:reshape")
def reshape(tensor: TensorLike, shape: ShapeLike | TensorLike, name: str | None = None) -> Tensor:
    """Reshapes `tensor` to `shape` (one dimension may be -1), as `tf.reshape`.

    Raises:
      InvalidArgumentError: if the number of elements differs.
    """
    x = convert_to_tensor(tensor)
    target = int_arg(shape, "Tshape", "Reshape")
    if all(isinstance(d, (int, np.integer)) for d in x._shape):  # not Keras's symbolic shape inference
        target = _reshape_target(tuple(x._shape), target)
    elif any(symbolic_dims.is_symbolic(d) for d in x._shape) and all(
        isinstance(d, (int, np.integer)) and d >= 0 for d in target
    ):  # sizes known per call to a fixed shape: TF checks the count when the graph runs
        return apply(_reshape_checked_op, (x,), (("shape", tuple(int(d) for d in target)),))[0]
    return apply(_reshape_op, (x,), (("shape", target),))[0]


def _reshape_checked_impl(x: jax.Array, shape: tuple) -> jax.Array:
    """`x` of sizes known per call reshaped to the fixed `shape`, its element count checked when the call
    runs (JAX cannot prove it, and would fail refining the program's shapes)."""
    count, total = jnp.asarray(math.prod(x.shape)), math.prod(shape)
    runtime_checks.require(
        count == total,
        "Input to reshape is a tensor with {count} values, but the requested shape has " + f"{total} [Op:Reshape]",
        count=count,
    )
    return runtime_checks.with_size(x.reshape(-1), 0, total).reshape(shape)


_reshape_checked_op = OpDef("Reshape", _reshape_checked_impl, True)


@table.export("transpose", dtypes=table.ANY, op=_transpose_op)
def transpose(
    a: TensorLike, perm: TensorLike | None = None, conjugate: bool = False, name: str | None = None
) -> Tensor:
    """Permutes the dimensions of `a` (reverses them when `perm` is None)."""
    x = convert_to_tensor(a)
    rank = len(x._shape)
    perm = tuple(builtins.range(rank - 1, -1, -1)) if perm is None else int_arg(perm, "Tperm", "Transpose")
    if sorted(p % rank if rank else p for p in perm) != list(builtins.range(rank)):
        raise errors.invalid_argument(
            f"transpose expects a vector of size {rank}. But input(1) is a vector of size {len(perm)}"
            if len(perm) != rank
            else f"{list(perm)} is not a valid permutation",
            "Transpose",
        )
    return apply(_transpose_op, (x,), (("conjugate", bool(conjugate)), ("perm", perm)))[0]


def _check_same_rank(tensors: Sequence[Tensor], axis: int, op_name: str, concat: bool) -> int:
    rank = len(tensors[0]._shape)
    limit = rank if concat else rank + 1
    if not -limit <= axis < limit:
        if not concat:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-limit}, {limit})")
        raise static_error(
            f"ConcatOp : Expected concatenating dimensions in the range [{-limit}, {limit}), but got {axis}", op_name
        )
    axis %= limit
    for i, t in enumerate(tensors[1:], start=1):
        a, b = tensors[0]._shape, t._shape
        same = len(a) == len(b) and all(x == y for k, (x, y) in enumerate(zip(a, b)) if not (concat and k == axis))
        if not same:
            if concat:
                raise static_error(
                    f"ConcatOp : Dimension {0 if len(a) == len(b) else 'rank'} in both shapes must be equal: "
                    f"shape[0] = {list(a)} vs. shape[{i}] = {list(b)}",
                    op_name,
                )
            raise static_error(
                f"Shapes of all inputs must match: values[0].shape = {list(a)} != values[{i}].shape = {list(b)}",
                op_name,
            )
    return axis


@table.export("concat", dtypes=table.ANY, op=_concat_op)
@ragged_dispatch(impl="tapeshim._src.ragged_array:concat", lists=("values",))
def concat(values: Sequence[Any], axis: int, name: str | None = None) -> Tensor:
    """Joins tensors along an existing `axis`, as `tf.concat`."""
    tensors = convert_same_dtype(list(values), "ConcatV2")
    axis = _check_same_rank(tensors, int(axis), "ConcatV2", True)
    return apply(_concat_op, tuple(tensors), (("axis", axis),))[0]


@table.export("stack", dtypes=table.ANY, op=_stack_op)
@ragged_dispatch(impl="tapeshim._src.ragged_array:stack", lists=("values",))
def stack(values: Sequence[Any], axis: int = 0, name: str | None = None) -> Tensor:
    """Stacks tensors of one shape along a new `axis`, as `tf.stack`."""
    values = list(values)
    if int(axis) == 0 and not any(isinstance(v, Tensor) or hasattr(v, "_read_for_op") for v in values):
        try:  # (as TF: a list of Python values is one constant, its dtype inferred; else it packs them)
            return convert_to_tensor(values)
        except (TypeError, ValueError):
            kinds = [convert_to_tensor(v).dtype.name for v in values]
            if len(set(kinds)) > 1:  # (TF's op conversion of the list)
                raise TypeError(
                    f"Tensors in list passed to 'values' of 'Pack' Op have types [{', '.join(kinds)}] that don't "
                    "all match."
                ) from None
    tensors = convert_same_dtype(values, "Pack")
    axis = _check_same_rank(tensors, int(axis), "Pack", False)
    return apply(_stack_op, tuple(tensors), (("axis", axis),))[0]


@table.export("unstack", dtypes=table.ANY)
def unstack(value: TensorLike, num: int | None = None, axis: int = 0, name: str | None = None) -> list[Tensor]:
    """Splits `value` along `axis` into a list of tensors."""
    x = convert_to_tensor(value)
    rank = len(x._shape)
    if not -rank <= int(axis) < rank:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-rank}, {rank})")
    axis = int(axis) % rank
    if num is not None and int(num) != x._shape[axis]:
        raise static_error(
            f"Input shape axis {axis} must equal {int(num)}, got shape [{','.join(map(str, x._shape))}]", "Unpack"
        )
    return [getitem(x, (slice(None),) * axis + (i,)) for i in builtins.range(x._shape[axis])]


@table.export("expand_dims", dtypes=table.ANY, op=_expand_dims_op)
@ragged_dispatch(impl="tapeshim._src.ragged_array:expand_dims")
def expand_dims(input: TensorLike, axis: int, name: str | None = None) -> Tensor:  # noqa: A002
    """Inserts a dimension of size 1 at `axis`."""
    x = convert_to_tensor(input)
    rank = len(x._shape)
    if isinstance(axis, (list, tuple, np.ndarray)) or (isinstance(axis, Tensor) and len(axis._shape) == 1):
        values = list(np.asarray(axis.numpy() if isinstance(axis, Tensor) else axis).reshape(-1))
        if len(values) != 1:  # (TF takes a one-element vector)
            raise static_error(f"'dim' must be a tensor with a single value, got {len(values)} values", "ExpandDims")
        axis = values[0]
    axis = python_int(axis, "int32")
    if not -rank - 1 <= axis <= rank:
        raise static_error(f"Tried to expand dim index {axis} for tensor with {rank} dimensions.", "ExpandDims")
    return apply(_expand_dims_op, (x,), (("axis", axis % (rank + 1)),))[0]


@table.export("squeeze", dtypes=table.ANY, op=_squeeze_op)
@ragged_dispatch(impl="tapeshim._src.ragged_array:squeeze")
def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Removes dimensions of size 1 (all of them, or those in `axis`)."""
    x = convert_to_tensor(input)
    axes = normalize_axis(
        [int(axis)] if np.ndim(axis) == 0 and axis is not None and not is_tensor_like(axis) else axis, len(x._shape)
    )
    if axes is None:
        if any(symbolic_dims.is_symbolic(d) for d in x._shape):  # TF decides per run whether a None dim is 1
            raise ValueError("tf.squeeze without `axis` on a dimension of unknown size")  # (traced per shape)
        axes = tuple(i for i, d in enumerate(x._shape) if d == 1)
    for a in axes:
        if x._shape[a] != 1:
            raise static_error(f"Can not squeeze dim[{a}], expected a dimension of 1, got {x._shape[a]}", "Squeeze")
    return apply(_squeeze_op, (x,), (("axis", axes),))[0]


# -- indexing ------------------------------------------------------------------
def _encode_key(key: Any, shape: tuple, dynamic: list | None = None) -> tuple:
    """Turns a Python index into a hashable static spec, checking int bounds as TF does.

    Scalar int tensors only known when a `tapeshim.function` runs are appended to
    `dynamic` and checked inside the program.
    """
    if not isinstance(key, tuple):
        key = (key,)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    spec: list = []
    dim = 0
    for item in key:
        if item is Ellipsis:
            spec.append(("...",))
            dim += len(shape) - n_real
        elif item is None:
            spec.append(("new",))
        elif isinstance(item, slice):
            for part in (item.start, item.stop, item.step):
                if isinstance(part, (float, np.floating)) or (
                    is_tensor_like(part) and not convert_to_tensor(part).dtype.is_integer
                ):
                    raise TypeError(
                        "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                        f"tf.int32/tf.int64 tensors are valid indices, got {part!r}"
                    )
            parts = tuple(_slice_part(p) for p in (item.start, item.stop, item.step))
            sized = not any(symbolic_dims.is_symbolic(p) for p in parts)
            if sized and parts[2] == 0:
                raise static_error("slice stride cannot be zero", "StridedSlice")
            if (
                dynamic is not None
                and sized
                and parts[2] in (None, 1)
                and parts[0] is not None
                and dim < len(shape)
                and isinstance(shape[dim], (int, np.integer))  # (a symbolic size slices statically)
            ):
                # `x[i:i + n]`: the start is data, only the length shapes the kernel
                start, stop, _ = slice(*parts).indices(shape[dim])
                spec.append(("dslice", len(dynamic), dim, max(0, stop - start)))
                dynamic.append(_index_argument(start))
            else:
                spec.append(("slice",) + parts)
            dim += 1
        else:
            if is_tensor_like(item):
                item = convert_to_tensor(item)
                if not item._dtype.is_integer or item._shape:
                    raise TypeError(
                        "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                        f"tf.int32/tf.int64 tensors are valid indices, got {item!r}"
                    )
                trace = _thread_state.trace
                if dynamic is not None and trace is not None and trace.is_symbolic(item) and dim < len(shape):
                    spec.append(("dyn", len(dynamic), dim, shape[dim]))
                    dynamic.append(item)
                    dim += 1
                    continue
                item = int(item)
            elif not isinstance(item, (int, np.integer)):  # a bool among other indices is an int, as TF
                raise TypeError(
                    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                    f"tf.int32/tf.int64 tensors are valid indices, got {item!r}"
                )
            item = int(item)
            if dim >= len(shape):
                raise static_error(
                    f"Index out of range using input dim {dim}; input has only {len(shape)} dims", "StridedSlice"
                )
            size = shape[dim]
            if not -size <= item < size:
                raise static_error(f"slice index {item} of dimension {dim} out of bounds.", "StridedSlice")
            if dynamic is not None:  # the index is data: an argument of one kernel for every index
                spec.append(("arg", len(dynamic)))
                dynamic.append(_index_argument(item % size))
            else:
                spec.append(("int", item))
            dim += 1
    if dim > len(shape):
        raise static_error(
            f"Index out of range using input dim {len(shape)}; input has only {len(shape)} dims", "StridedSlice"
        )
    return tuple(spec)


def _slice_part(part: Any) -> Any:
    """A slice's start, stop or step as an int; a tensor known while tracing (`x[:tf.shape(x)[0] - 1]`) gives
    its value, or a symbolic dimension in a trace for every size (H5)."""
    if part is None:
        return None
    part = folded_int(part)
    return part if symbolic_dims.is_symbolic(part) else int(part)


def _decode_key(spec: tuple, dynamic: tuple = ()) -> tuple:
    items: list = []
    for part in spec:
        kind = part[0]
        if kind == "...":
            items.append(Ellipsis)
        elif kind == "new":
            items.append(None)
        elif kind == "slice":
            items.append(slice(*part[1:]))
        elif kind == "dslice":
            items.append(slice(None))  # cut before indexing (`_dynamic_slice_impl`)
        elif kind == "arg":
            items.append(dynamic[part[1]])
        elif kind == "dyn":
            _, position, dim, size = part
            index = dynamic[position]
            runtime_checks.require(
                (index >= -size) & (index < size),
                f"slice index {{index}} of dimension {dim} out of bounds. [Op:StridedSlice]",
                index=index,
            )
            items.append(index)
        else:
            items.append(part[1])
    return tuple(items)


def _index_argument(index: int) -> Tensor:
    """A Python index as an int32 scalar tensor, an argument of the slicing kernel: it holds a NumPy scalar,
    which the kernel takes as it takes a device array (a transfer per index cost 30 us, more than the
    kernel's call; an indexing loop's indices are mostly new)."""
    held = np.asarray(index, np.int32)  # (kernels and programs take a NumPy value as they take a jax.Array)
    return Tensor(cast(jax.Array, held), (), dtypes.int32)


def _dynamic_slice_impl(x: jax.Array, indices: tuple, key: tuple) -> jax.Array:
    """`x[key]` where some indices and slice starts are arguments (`("arg", ...)`, `("dslice", ...)`)."""
    for part in key:
        if part[0] == "dslice":
            _, position, dim, length = part
            x = jax.lax.dynamic_slice_in_dim(x, indices[position], length, axis=dim)
        elif part[0] == "dyn" and part[3] == 0:  # an index into an empty axis: its check fails when it runs
            # (a loop body over no rows is traced, not run; JAX refuses to index an empty axis: one row of zeros)
            x = runtime_checks.with_size(x, part[2], 1)
    return x[_decode_key(key, indices)]


_INDEX_SPEC = (("arg", 0),)  # `x[i]`: `_encode_key`'s spec of an int index into the first axis


def _first_axis(key: Any, size: int) -> tuple[tuple, Tensor] | None:
    """The spec and index argument `_encode_key` gives `x[i]` and `x[i:j]` (ints, no step) on a first axis of
    `size` elements, without its general walk (an indexing loop's common case); None for another key, or an
    index out of range (`_encode_key` raises TF's error)."""
    if key.__class__ is int:
        return (_INDEX_SPEC, _index_argument(key % size)) if -size <= key < size else None
    start, stop = key.start, key.stop  # (a slice)
    if key.step is None and start.__class__ is int and (stop is None or stop.__class__ is int):
        first, last, _ = key.indices(size)
        return (("dslice", 0, 0, max(0, last - first)),), _index_argument(first)
    return None


def getitem(tensor: Any, key: Any) -> Tensor:
    """`tensor[key]` with ints, slices, strides, `...`, `tf.newaxis` and negative indices."""
    x = convert_to_tensor(tensor)
    if (key.__class__ is int or key.__class__ is slice) and x._shape and x._shape[0].__class__ is int:
        found = _first_axis(key, x._shape[0])
        if found is not None:
            spec, index = found
            return apply(_dynamic_slice_op, (x, index), (("key", spec),))[0]
    if key.__class__ is list:  # TF reads a list index as a tuple of indices
        key = tuple(key)
    if key.__class__ is not tuple and boolean_mask.is_mask_key(key):
        return boolean_mask.boolean_mask(x, key)
    if key.__class__ is tuple and boolean_mask.all_python_bools(key):
        raise boolean_mask.bool_index_error()
    dynamic: list = []
    spec = _encode_key(key, x._shape, dynamic)
    if dynamic:  # indices only known when the function runs
        return apply(_dynamic_slice_op, (x, *dynamic), (("key", spec),))[0]
    return apply(_slice_op, (x,), (("key", spec),))[0]


@table.export("where", dtypes=table.ANY, note="the 1-argument form needs a known condition", op=_where_op)
def where(
    condition: TensorLike, x: TensorLike | None = None, y: TensorLike | None = None, name: str | None = None
) -> Tensor:
    """Picks from `x` where `condition` holds, else from `y` (broadcasting), as `tf.where`.

    With only `condition`, returns the int64 coordinates of its true elements.
    """
    try:
        cond = convert_to_tensor(condition)
    except ValueError as exc:
        if x is None and y is None:
            from tapeshim._src import ragged_dispatch  # import cycle: ragged_dispatch -> ops

            if ragged_dispatch.has_ragged((condition,)):
                return ragged_dispatch.true_coordinates(cast(Any, condition))
        if x is None or y is None:
            raise
        from tapeshim._src.ops.math_ops import _on_ragged  # import cycle: math_ops -> array_ops

        return _on_ragged(where, (condition, x, y), exc)
    if x is None and y is None:
        if not cond._shape:  # (TF's kernel needs a dimension)
            raise errors.invalid_argument("WhereOp : Unhandled input dimensions: 0", "Where")
        return constant(np.argwhere(np.asarray(cond.numpy())).astype(np.int64))
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    if not cond._dtype.is_bool:
        raise attr_error(
            f"cannot compute SelectV2 as input #0(zero-based) was expected to be a bool tensor but is a "
            f"{cond._dtype.name} tensor",
            "SelectV2",
        )
    x_t, y_t = convert_same_dtype((x, y), "SelectV2")
    try:
        broadcast_shapes(tuple(cond._shape), tuple(x_t._shape), tuple(y_t._shape))
    except ValueError:
        raise static_error(
            f"condition [{','.join(map(str, cond._shape))}], then [{','.join(map(str, x_t._shape))}], and else "
            f"[{','.join(map(str, y_t._shape))}] must be broadcastable",
            "SelectV2",
        ) from None
    return apply(_where_op, (cond, x_t, y_t))[0]


def _gather_impl(params: jax.Array, indices: jax.Array, axis: int, batch_dims: int, checked: bool = False) -> jax.Array:
    if checked:
        runtime_checks.check_range_traced(indices, params.shape[axis], "indices", "GatherV2")
    if params.shape[axis] == 0 and indices.size:  # (a loop body over no rows: see `_dynamic_slice_impl`)
        params = runtime_checks.with_size(params, axis, 1)
    if batch_dims:
        gather = _gather_impl
        for _ in builtins.range(batch_dims):
            gather = jax.vmap(gather, in_axes=(0, 0, None, None))
        return gather(params, indices, axis - batch_dims, 0)
    return jnp.take(params, indices, axis=axis, mode="clip")


@table.export(
    "gather",
    dtypes=table.ANY,
    note="the gradient of a variable or watched tensor gathered on axis 0 is IndexedSlices, as TF",
    op=_gather_op,
)
@ragged_dispatch("params", "indices", impl="tapeshim._src.ragged_array:gather")
def gather(
    params: TensorLike,
    indices: TensorLike,
    validate_indices: Any = None,
    axis: AxisLike = None,
    batch_dims: int = 0,
    name: str | None = None,
) -> Tensor:
    """Gathers slices of `params` along `axis` at `indices` (dense gradient)."""
    p = convert_to_tensor(params)
    i = convert_to_tensor(indices)
    if not i._dtype.is_integer:
        raise attr_error(
            f"Value for attr 'Tindices' of {i._dtype.name} is not in the list of allowed values: int16, int32, int64",
            "GatherV2",
        )
    rank = len(p._shape)
    batch_dims = int(batch_dims)
    if batch_dims < 0:  # (counted from the indices' rank, as TF)
        batch_dims += len(i._shape)
    axis = batch_dims if axis is None else int_arg(axis, "Taxis", "GatherV2")[0]
    if axis >= rank:
        raise static_error(f"Shape must be at least rank {axis + 1} but is rank {rank}", "GatherV2")
    if axis < -rank:
        raise static_error(f"Expected axis in the range [{-rank}, {rank}), but got {axis}", "GatherV2")
    axis %= rank
    bound = p._shape[axis]  # the check captures plain values, so its verdict on an array can be remembered
    static = (("axis", axis), ("batch_dims", int(batch_dims))) + runtime_checks.checked_static(
        i, lambda values: runtime_checks.check_range_host(values, bound, "indices", "GatherV2"), (bound,)
    )
    return apply(_gather_op, (p, i), static)[0]


# -- creation --------------------------------------------------------------------
def _filled(shape: Any, value: Any, dtype: dtypes.DType, op_name: str = "Fill") -> Tensor:
    dims = shape_arg(shape, "Fill")
    if dtype is dtypes.string:  # host-side strings: zeros are empty strings, as TF's
        from tapeshim._src.strings_tensor import (
            host_tensor,
        )  # import cycle: array_ops -> strings_tensor -> tensor -> array_ops

        if value != 0:
            if op_name == "OnesLike":
                raise errors.invalid_argument(
                    "Value for attr 'T' of string is not in the list of allowed values: bfloat16, half, float, "
                    "double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, complex64, complex128, "
                    "bool\n\t; NodeDef: {{node OnesLike}}",
                    op_name,
                )
            raise TypeError(f"Cannot convert {value} to EagerTensor of dtype string")
        return host_tensor(np.full(dims, b"", dtype=object), dtypes.string)
    if any(symbolic_dims.is_symbolic(d) for d in dims):  # sizes known per call (`function_symbolic`)
        np_dtype = dtype._np

        def kernel() -> tuple:
            return (jnp.full(dims, value, np_dtype),)

        return registry.record(kernel, OpKey(op_name, dtype._name, value, dims), (), ((dims, dtype),), [])[0]
    check_allocation(dims, dtype, "Fill")
    with jax.ensure_compile_time_eval():
        if isinstance(value, (bool, int, float, complex, np.generic)):
            # Filled on the host and transferred: nothing compiles (`jnp.asarray` would, while JAX traces).
            return Tensor(jax.device_put(np.full(dims, value, dtype._np)), dims, dtype)
        return Tensor(jnp.full(dims, value, dtype._np), dims, dtype)


@table.export("zeros", gradient="-", dtypes=table.ANY)
@ragged_shape_dispatch("shape", impl="tapeshim._src.ragged_shape:zeros")
def zeros(
    shape: ShapeLike | TensorLike, dtype: DTypeLike = dtypes.float32, name: str | None = None, layout: Any = None
) -> Tensor:
    """A tensor of zeros."""
    return _filled(shape, 0, dtypes.as_dtype(dtype))


@table.export("ones", gradient="-", dtypes=table.ANY)
@ragged_shape_dispatch("shape", impl="tapeshim._src.ragged_shape:ones")
def ones(
    shape: ShapeLike | TensorLike, dtype: DTypeLike = dtypes.float32, name: str | None = None, layout: Any = None
) -> Tensor:
    """A tensor of ones."""
    return _filled(shape, 1, dtypes.as_dtype(dtype))


_fill_op = OpDef("Fill", lambda value, dims: jnp.broadcast_to(value, dims), True)


@table.export("fill", dtypes=table.ANY, note="differentiable with respect to value, as TF", op=_fill_op)
@ragged_shape_dispatch("dims", impl="tapeshim._src.ragged_shape:fill")
def fill(dims: TensorLike, value: TensorLike, name: str | None = None, layout: Any = None) -> Tensor:
    """A tensor of shape `dims` filled with the scalar `value` (its dtype follows `value`), as `tf.fill`.

    As in TF, the gradient with respect to `value` is the sum of the output's gradient.
    """
    scalar = convert_to_tensor(value)
    if scalar._shape:
        raise static_error(f"value must be a scalar, got shape {list(scalar._shape)}", "Fill")
    shape = shape_arg(dims, "Fill")
    check_allocation(shape, scalar._dtype, "Fill")
    return apply(_fill_op, (scalar,), (("dims", shape),))[0]


@table.export("zeros_like", gradient="none", dtypes=table.ANY)
@ragged_dispatch()
def zeros_like(
    input: TensorLike, dtype: DTypeLike | None = None, name: str | None = None, layout: Any = None
) -> Tensor:  # noqa: A002
    """Zeros of `input`'s shape (and dtype unless given); no gradient flows through it."""
    x = convert_to_tensor(input)
    return _filled_like(x, 0, dtypes.as_dtype(dtype) if dtype is not None else x._dtype, "ZerosLike")


@table.export("ones_like", gradient="none", dtypes=table.ANY)
@ragged_dispatch()
def ones_like(input: TensorLike, dtype: DTypeLike | None = None, name: str | None = None, layout: Any = None) -> Tensor:  # noqa: A002
    """Ones of `input`'s shape (and dtype unless given); no gradient flows through it."""
    x = convert_to_tensor(input)
    return _filled_like(x, 1, dtypes.as_dtype(dtype) if dtype is not None else x._dtype, "OnesLike")


def _filled_like(x: Tensor, value: int, dtype: dtypes.DType, op_name: str) -> Tensor:
    """`value`s of `x`'s shape: made on the host, or, for symbolic dimensions (`function_symbolic`), a recorded
    op whose shape is `x`'s on each call."""
    if all(d.__class__ is int for d in x._shape) or dtype is dtypes.string:
        return _filled(x._shape, value, dtype, "Fill" if op_name == "ZerosLike" else op_name)
    np_dtype = dtype._np

    def kernel(like: jax.Array) -> tuple:
        return (jnp.full(like.shape, value, np_dtype),)

    return registry.record(kernel, OpKey(op_name, dtype._name, value), (x,), ((x._shape, dtype),), [])[0]


@table.export("shape", gradient="-", dtypes=table.ANY)
@ragged_dispatch(impl="tapeshim._src.ragged_shape:shape")
def shape(input: TensorLike, out_type: DTypeLike = dtypes.int32, name: str | None = None) -> Tensor:  # noqa: A002
    """The shape of `input` as a 1-D integer tensor."""
    x = convert_to_tensor(input)
    _index_dtype(out_type, "Shape")
    dtype = dtypes.as_dtype(out_type)
    if any(d.__class__ is not int for d in x._shape):  # symbolic dimensions (`function_symbolic`): known per call
        return _recorded_shape(x, dtype, "Shape")
    return constant(np.asarray(x._shape, dtype._np))


_shape_kernels: dict = {}


def _recorded_shape(x: Tensor, dtype: dtypes.DType, op_type: str) -> Tensor:
    """`tf.shape` (`op_type` "Shape") or `tf.size` ("Size") of a tensor with symbolic dimensions, as a recorded
    op: its value is only known when the function runs."""
    np_dtype, whole = dtype._np, op_type == "Shape"
    kernel = _shape_kernels.get((np_dtype, whole))
    if kernel is None:

        def kernel(value: jax.Array) -> tuple:
            return (jnp.array(value.shape if whole else value.size, dtype=np_dtype),)

        _shape_kernels[(np_dtype, whole)] = kernel
    out_shape = (x.ndim,) if whole else ()
    return registry.record(kernel, OpKey(op_type, dtype._name), (x,), ((out_shape, dtype),), [])[0]


@table.export("size", gradient="-", dtypes=table.ANY)
@ragged_dispatch(impl="tapeshim._src.ragged_array:size")
def size(input: TensorLike, out_type: DTypeLike = dtypes.int32, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of elements of `input`."""
    x = convert_to_tensor(input)
    if any(d.__class__ is not int for d in x._shape):  # symbolic dimensions (`function_symbolic`): known per call
        return _recorded_shape(x, dtypes.as_dtype(out_type), "Size")
    return constant(np.asarray(math.prod(x._shape), dtypes.as_dtype(out_type)._np))


@table.export("rank", gradient="-", dtypes=table.ANY)
@ragged_dispatch(impl="tapeshim._src.ragged_array:rank")
def rank(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002
    """The rank of `input` as an int32 scalar."""
    return constant(np.int32(len(convert_to_tensor(input)._shape)))


def pack_nested(value: TensorLike, dtype: dtypes.DType | None) -> Tensor:
    """Converts a (nested) list holding Tensors by stacking, as `tf.convert_to_tensor([t1, t2])`."""
    if isinstance(value, (list, tuple)):
        parts = [pack_nested(v, dtype) for v in value]
        return stack(parts)
    return convert_to_tensor(value, dtype=dtype)
