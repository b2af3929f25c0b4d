"""More of `tf.Variable`'s sparse methods: `scatter_mul`, `scatter_div`, `scatter_nd_max`, `scatter_nd_min`,
`gather_nd` and `batch_scatter_update`.

`Variable` (`variable.py`) delegates to these functions. Each update computes the variable's new value from
a read of it and writes it through the variable's scope (eager storage, a `tapeshim.function` trace, ...), as
the methods in `variable.py` do; a write is not differentiable (TF registers no gradient for its
`ResourceScatter*` ops), and reads after it see the new value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors, runtime_checks
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

if TYPE_CHECKING:
    from tapeshim._src.variable import Variable

# TF's `ResourceScatterMul`/`ResourceScatterDiv` kernels: real and complex numbers, no bool.
_MUL_DIV_DTYPES = frozenset(
    "float16 bfloat16 float32 float64 complex64 complex128 int8 int16 int32 int64 uint8 uint16 uint32 uint64".split()
)


def _mul_div_impl(
    table: jax.Array, indices: jax.Array, updates: jax.Array, mode: str, op_name: str, checked: bool = False
) -> jax.Array:
    if checked:
        runtime_checks.check_range_traced(indices, table.shape[0], "indices", op_name)
        if mode == "div" and jnp.issubdtype(table.dtype, jnp.integer):
            runtime_checks.require(~jnp.any(updates == 0), f"updates must not contain 0 [Op:{op_name}]")
    # TF registers no gradient for the write: a function differentiated as a whole sees none through it.
    table, updates = jax.lax.stop_gradient(table), jax.lax.stop_gradient(updates)
    if updates.ndim == 0:  # a scalar applies to every element of the rows named
        updates = jnp.broadcast_to(updates, indices.shape + table.shape[1:])
    if mode == "mul":
        return table.at[indices].multiply(updates)
    # Each row divided by every update naming it, in turn: by their product (truncation composes for integers).
    divisor = jnp.ones_like(table).at[indices].multiply(updates)
    if jnp.issubdtype(table.dtype, jnp.integer):
        return jax.lax.div(table, divisor)
    return table / divisor


_mul_div_op = OpDef("ResourceScatterMulDiv", _mul_div_impl, False)


def _sparse_delta(sparse_delta: Any) -> Any:
    from tapeshim._src.indexed_slices import IndexedSlices  # (imports ops, which import the variable module)

    if not isinstance(sparse_delta, IndexedSlices):
        raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. Received arg: {sparse_delta}")
    return sparse_delta


def _index_tensor(indices: TensorLike, op_name: str) -> Tensor:
    from tapeshim._src.ops.common import attr_error  # (ops import the variable module)

    tensor = convert_to_tensor(indices)
    if tensor._dtype.name not in ("int32", "int64"):
        raise attr_error(
            f"Value for attr 'Tindices' of {tensor._dtype.name} is not in the list of allowed values: int32, int64",
            op_name,
        )
    return tensor


def scatter_mul_div(variable: Variable, sparse_delta: Any, mode: str) -> Variable:
    """`variable.scatter_mul` (`mode` "mul") and `variable.scatter_div` ("div").

    Args:
      variable: the variable updated.
      sparse_delta: an `IndexedSlices`: the rows `indices` of the variable are multiplied (divided) by `values`,
        of shape `indices.shape + variable.shape[1:]` or a scalar.
      mode: "mul" or "div".

    Returns:
      The variable.

    Raises:
      TypeError: if `sparse_delta` is not an `IndexedSlices`.
      ValueError: if its values are a tensor of another dtype than the variable's.
      InvalidArgumentError: for bool variables, non-integer indices, a shape mismatch, an index out of range, or
        (integer variables) a zero divisor.
    """
    from tapeshim._src.ops.common import attr_error, static_error  # (ops import the variable module)
    from tapeshim._src.variable import variable_scope

    delta = _sparse_delta(sparse_delta)
    op_name = "ResourceScatterMul" if mode == "mul" else "ResourceScatterDiv"
    indices = _index_tensor(delta.indices, op_name)
    updates = convert_to_tensor(delta.values, dtype=variable.dtype)
    if variable.dtype.name not in _MUL_DIV_DTYPES:
        raise attr_error(
            f"Value for attr 'dtype' of {variable.dtype.name} is not in the list of allowed values", op_name
        )
    shape = tuple(variable._shape)
    expected = tuple(indices._shape) + shape[1:]
    if updates._shape != () and tuple(updates._shape) != expected:
        raise static_error(
            "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], got updates.shape "
            f"[{','.join(map(str, updates._shape))}], indices.shape [{','.join(map(str, indices._shape))}], "
            f"params.shape [{','.join(map(str, shape))}]",
            op_name,
        )
    static = (("mode", mode), ("op_name", op_name)) + _checked(indices, updates, shape[0], mode, op_name, variable)
    new_value = apply(_mul_div_op, (variable.read_value(), indices, updates), static)[0]
    variable_scope().assign(variable, new_value, "assign")
    return variable


def _checked(indices: Tensor, updates: Tensor, rows: int, mode: str, op_name: str, variable: Variable) -> tuple:
    """`(("checked", True),)` when the indices (or integer divisors) are checked in the program; else checks
    them now, on the host."""

    def check_range(values: Any) -> None:
        runtime_checks.check_range_host(values, rows, "indices", op_name)

    def check_divisors(values: Any) -> None:
        if np.any(np.asarray(values) == 0):
            raise errors.invalid_argument("updates must not contain 0", op_name)

    static = runtime_checks.checked_static(indices, check_range, (rows,))
    if mode == "div" and variable.dtype.is_integer:
        static += runtime_checks.checked_static(updates, check_divisors)
    return (("checked", True),) if static else ()


def scatter_nd_extremum(variable: Variable, indices: TensorLike, updates: TensorLike, mode: str) -> Variable:
    """`variable.scatter_nd_max` (`mode` "max") and `variable.scatter_nd_min` ("min").

    Args:
      variable: the variable updated.
      indices: integer index vectors (last axis) into the variable.
      updates: the values, of shape `indices.shape[:-1] + variable.shape[indices.shape[-1]:]`.
      mode: "max" or "min".

    Returns:
      The variable.

    Raises:
      ValueError: if `updates` is a tensor of another dtype than the variable's.
      InvalidArgumentError: for complex or bool variables, a shape mismatch or an index out of range.
    """
    return variable._scatter_nd(indices, updates, mode)


def gather_nd(variable: Variable, indices: TensorLike) -> Tensor:
    """`variable.gather_nd`: `tf.gather_nd` of the variable's value (a tape's gradient is dense, as TF's).

    Args:
      variable: the variable read.
      indices: int32 or int64 index vectors (last axis) into the variable.

    Returns:
      The slices at `indices`.

    Raises:
      InvalidArgumentError: for non-integer or scalar indices, or an index out of range.
    """
    from tapeshim._src.ops import manip_ops  # (ops import the variable module)

    return manip_ops.gather_nd(variable, _index_tensor(indices, "ResourceGatherNd"))


def _batch_indices_impl(indices: jax.Array) -> jax.Array:
    """The index vectors of `batch_scatter_update`: each prefix position's own coordinates, then its index."""
    prefix = indices.shape[:-1]
    grids = [
        jnp.broadcast_to(jax.lax.broadcasted_iota(indices.dtype, prefix + (1,), axis), indices.shape)
        for axis in range(len(prefix))
    ]
    return jnp.stack(grids + [indices], axis=-1)


_batch_indices_op = OpDef("BatchScatterIndices", _batch_indices_impl, False)


def batch_scatter_update(variable: Variable, sparse_delta: Any) -> Variable:
    """`variable.batch_scatter_update`: `var[i_1, ..., i_n, indices[i_1, ..., i_n, j]] = values[i_1, ..., i_n, j]`.

    Args:
      variable: the variable updated.
      sparse_delta: an `IndexedSlices` whose `indices` index the variable's axis `indices.ndim - 1` and whose
        leading dimensions are the variable's.

    Returns:
      The variable.

    Raises:
      TypeError: if `sparse_delta` is not an `IndexedSlices`.
      ValueError: if its values are a tensor of another dtype than the variable's.
      InvalidArgumentError: for a shape mismatch or an index out of range.
    """
    delta = _sparse_delta(sparse_delta)
    indices = convert_to_tensor(delta.indices)
    if not indices._shape:
        raise errors.invalid_argument("indices must be at least a vector", "ResourceScatterNdUpdate")
    nd_indices = apply(_batch_indices_op, (indices,))[0]
    return variable._scatter_nd(nd_indices, delta.values, "update")
