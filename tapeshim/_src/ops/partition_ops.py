"""`tf.dynamic_partition` and `tf.dynamic_stitch`: output shapes that depend on index values, so the indices
must be known (not traced), as for `tf.unique`; inside `tapeshim.function` reading them raises
`OperatorNotAllowedInGraphError`."""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors
from tapeshim._src.ops import array_ops, table
from tapeshim._src.ops.common import attr_error, is_tensor_like, static_error, tf_type_name
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.state import in_forward_mode
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _shape_text(shape: Sequence[int]) -> str:
    return f"[{','.join(map(str, shape))}]"


def _int32_input(value: Tensor, position: int, op_name: str) -> None:
    if value._dtype.name != "int32":
        raise attr_error(
            f"cannot compute {op_name} as input #{position}(zero-based) was expected to be a int32 tensor but is "
            f"a {tf_type_name(value._dtype)} tensor",
            op_name,
        )


def _partition(x: jax.Array, positions: tuple, lead: int) -> tuple:
    rows = x.reshape((-1,) + x.shape[lead:])
    return tuple(rows[np.asarray(chosen, np.int64)] for chosen in positions)


_partition_op = OpDef("DynamicPartition", _partition, True)


@table.export(
    "dynamic_partition",
    dtypes="numeric, bool",
    note="partitions must be known (not traced), as for tf.unique",
    op=_partition_op,
)
def dynamic_partition(
    data: TensorLike, partitions: TensorLike, num_partitions: Any, name: str | None = None
) -> list[Tensor]:
    """Splits `data` into `num_partitions` tensors by the int32 `partitions`, as `tf.dynamic_partition`.

    Output `i` holds, in order, the slices `data[j]` (over `partitions`' leading dimensions) with
    `partitions[j] == i`.

    Args:
      data: the tensor; its shape starts with `partitions`' shape.
      partitions: int32 partition numbers in `[0, num_partitions)`.
      num_partitions: the number of outputs, at least 1.
      name: ignored.

    Returns:
      A list of `num_partitions` tensors of `data`'s dtype.

    Raises:
      InvalidArgumentError: for non-int32 partitions, mismatched shapes, a partition out of range or fewer
        than 1 partitions.
      OperatorNotAllowedInGraphError: inside `tapeshim.function` (the output shapes depend on the values).
    """
    count = int(array_ops.folded_int(num_partitions))
    if count < 1:
        raise attr_error(
            f"Value for attr 'num_partitions' of {count} must be at least minimum 1\n\t; "
            "NodeDef: {{node DynamicPartition}}",
            "DynamicPartition",
        )
    x = convert_to_tensor(data)
    p = convert_to_tensor(partitions, dtype_hint="int32")
    _int32_input(p, 1, "DynamicPartition")
    lead = len(p._shape)
    if tuple(x._shape[:lead]) != tuple(p._shape):
        raise static_error(
            f"data.shape must start with partitions.shape, got data.shape = {_shape_text(x._shape)}, "
            f"partitions.shape = {_shape_text(p._shape)}",
            "DynamicPartition",
        )
    values = np.asarray(p.numpy()).reshape(-1)
    bad = np.flatnonzero((values < 0) | (values >= count))
    if bad.size:
        where = np.unravel_index(int(bad[0]), p._shape) if lead else ()
        raise errors.invalid_argument(
            f"partitions[{','.join(map(str, where))}] = {int(values[bad[0]])} is not in [0, {count})",
            "DynamicPartition",
        )
    positions = tuple(tuple(np.flatnonzero(values == i).tolist()) for i in range(count))
    return list(apply(_partition_op, (x,), (("lead", lead), ("positions", positions))))


def _gather_rows(flat: jax.Array, sources: tuple) -> jax.Array:
    padded = jnp.concatenate([flat, jnp.zeros((1,) + flat.shape[1:], flat.dtype)])
    return padded[np.asarray(sources, np.int64).reshape(-1)]


def _stitch(*parts: jax.Array, slots: tuple, sources: tuple, leads: tuple) -> jax.Array:
    trailing = parts[0].shape[leads[0] :]

    def forward(*pieces: jax.Array) -> jax.Array:
        flat = jnp.concatenate([piece.reshape((-1,) + trailing) for piece in pieces])
        return _gather_rows(flat, sources)

    if in_forward_mode():
        return forward(*parts)

    @jax.custom_vjp
    def stitched(*pieces: jax.Array) -> jax.Array:
        return forward(*pieces)

    def stitched_forward(*pieces: jax.Array) -> tuple:
        return forward(*pieces), None

    def stitched_backward(_: Any, g: jax.Array) -> tuple:
        # TF's DynamicStitch gradient: every data slice gets the gradient at its index, also a slice a later
        # one overwrote.
        return tuple(g[np.asarray(slot, np.int64)].reshape(part.shape) for slot, part in zip(slots, parts, strict=True))

    stitched.defvjp(stitched_forward, stitched_backward)
    return stitched(*parts)


_stitch_op = OpDef("DynamicStitch", _stitch, True)


def _as_list(values: Any) -> list:
    if isinstance(values, (list, tuple)):
        return list(values)
    return list(convert_to_tensor(values))


@table.export(
    "dynamic_stitch",
    gradient="tf",
    dtypes="numeric, bool",
    note="indices must be known (not traced), as for tf.unique; every data slice gets the gradient at its "
    "index, also one a later slice overwrote, as TF",
    op=_stitch_op,
)
def dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    """Interleaves the slices of `data` into one tensor by `indices`, as `tf.dynamic_stitch`.

    `merged[indices[m][i, ...]] = data[m][i, ..., :]`; where an index occurs more than once the last slice
    (in list order) wins, and rows no index names are zeros.

    Args:
      indices: a list of int32 tensors.
      data: a list of tensors of one dtype, as many as `indices`; `data[m].shape` starts with
        `indices[m].shape` and the rest is the same for all.
      name: ignored.

    Returns:
      A tensor of `[max(indices) + 1] + trailing` shape.

    Raises:
      ValueError: if the lists have different lengths.
      InvalidArgumentError: for non-int32 indices, different dtypes, mismatched shapes or a negative index.
      OperatorNotAllowedInGraphError: inside `tapeshim.function` (the output shape depends on the values).
    """
    index_list, data_list = _as_list(indices), _as_list(data)
    if len(index_list) != len(data_list):
        raise ValueError(
            f"List argument 'data' to 'dynamic_stitch' Op with length {len(data_list)} must match length "
            f"{len(index_list)} of argument 'indices'."
        )
    n = len(index_list)
    index_tensors = [convert_to_tensor(i, dtype_hint="int32") for i in index_list]
    for position, tensor in enumerate(index_tensors):
        _int32_input(tensor, position, "DynamicStitch")
    anchor = next((d for d in data_list if is_tensor_like(d)), None)
    hint = None if anchor is None else convert_to_tensor(anchor)._dtype
    parts = [convert_to_tensor(d, dtype_hint=hint) for d in data_list]
    for position, part in enumerate(parts[1:], start=1):
        if part._dtype != parts[0]._dtype:
            raise attr_error(
                f"cannot compute DynamicStitch as input #{n + position}(zero-based) was expected to be a "
                f"{tf_type_name(parts[0]._dtype)} tensor but is a {tf_type_name(part._dtype)} tensor",
                "DynamicStitch",
            )
    leads = tuple(len(i._shape) for i in index_tensors)
    trailing = tuple(parts[0]._shape[leads[0] :])
    for m, (index, part) in enumerate(zip(index_tensors, parts)):
        if tuple(part._shape[: leads[m]]) != tuple(index._shape):
            raise static_error(
                f"data[{m}].shape = {_shape_text(part._shape)} does not start with indices[{m}].shape = "
                f"{_shape_text(index._shape)}",
                "DynamicStitch",
            )
        if tuple(part._shape[leads[m] :]) != trailing:
            raise static_error(
                f"Need data[0].shape[{leads[0]}:] = data[{m}].shape[{leads[m]}:], got data[0].shape = "
                f"{_shape_text(parts[0]._shape)}, data[{m}].shape = {_shape_text(part._shape)}, indices[0].shape "
                f"= {_shape_text(index_tensors[0]._shape)}, indices[{m}].shape = {_shape_text(index._shape)}",
                "DynamicStitch",
            )
    flat_indices = [np.asarray(i.numpy()).reshape(-1).astype(np.int64) for i in index_tensors]
    for values in flat_indices:
        negative = np.flatnonzero(values < 0)
        if negative.size:
            raise errors.invalid_argument(f"indices[{int(negative[0])}] is out of range", "DynamicStitch")
    rows = max((int(v.max()) + 1 for v in flat_indices if v.size), default=0)
    total = sum(int(v.size) for v in flat_indices)
    sources = np.full(rows, -1, np.int64)
    offset = 0
    for values in flat_indices:  # the last slice wins: it has the highest position in the concatenation
        np.maximum.at(sources, values, offset + np.arange(values.size))
        offset += values.size
    sources[sources < 0] = total  # the zero row after the data
    static = (
        ("leads", leads),
        ("slots", tuple(tuple(v.tolist()) for v in flat_indices)),
        ("sources", tuple(sources.tolist())),
    )
    return apply(_stitch_op, parts, static)[0]
