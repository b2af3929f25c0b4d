"""Cross-replica collectives as tapeshim ops: `lax` collectives over the bound replica axis.

Each op's JAX body calls `lax.psum`/`pmean`/`all_gather`/`axis_index` only while the
replica axis is bound (the body of the strategy's `shard_map`); while tapeshim traces
the per-replica function (shape evaluation, no bound axis) it is a stand-in with the
same output shape. The region runs with `check_vma=False`, so the gradient of
`psum(x)` with respect to each replica's `x` is N, as TF's.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from tapeshim._src.distribute.context import ReduceOp, active_axis
from tapeshim._src.jax_op import jax_op


def _psum(x: jax.Array) -> jax.Array:
    axis = active_axis()
    return jax.lax.psum(x, axis[0]) if axis else x


def _pmean(x: jax.Array) -> jax.Array:
    axis = active_axis()
    if not axis:
        return x
    if jnp.issubdtype(x.dtype, jnp.integer):  # TF's integer MEAN: the sum divided in integer arithmetic
        return jax.lax.psum(x, axis[0]) // axis[1]
    return jax.lax.pmean(x, axis[0])


def _replica_id(anchor: jax.Array) -> jax.Array:
    axis = active_axis()
    return anchor + (jax.lax.axis_index(axis[0]).astype(anchor.dtype) if axis else 0)


# Distinct names: tapeshim keys compiled programs by op names.
all_reduce_sum = jax_op(_psum, name="CollectiveReduceV2Sum")
all_reduce_mean = jax_op(_pmean, name="CollectiveReduceV2Mean")
replica_id = jax_op(_replica_id, name="ReplicaId", differentiable=False)

_gathers: dict[tuple[int, int], Any] = {}


def all_gather(x: Any, axis: int, num_replicas: int) -> Any:
    """Concatenates every replica's `x` along `axis` (the stand-in repeats the local value)."""

    key = (axis, num_replicas)
    if key not in _gathers:

        def gather(value: jax.Array) -> jax.Array:
            bound = active_axis()
            if bound:
                return jax.lax.all_gather(value, bound[0], axis=axis, tiled=True)
            return jnp.concatenate([value] * num_replicas, axis=axis)

        _gathers[key] = jax_op(gather, name=f"CollectiveGatherV2_axis{axis}_of{num_replicas}")
    return _gathers[key](x)


def all_reduce(op: ReduceOp, x: Any) -> Any:
    return all_reduce_sum(x) if op is ReduceOp.SUM else all_reduce_mean(x)


def psum_arrays(arrays: list) -> list:
    """Sums JAX arrays over the bound replica axis (identity when none is bound)."""
    axis = active_axis()
    if not axis:
        return list(arrays)
    return list(jax.lax.psum(list(arrays), axis[0]))


def synchronized_moments(x: jax.Array, axes: Any) -> tuple[jax.Array, jax.Array]:
    """Mean and variance over `axes` of every replica's batch (BatchNormalization(synchronized=True)).

    TF's formula: sums, squared sums and counts all-reduced, then `var = E[x^2] - E[x]^2` (at least 0);
    outside a replica region it is the same formula over the local batch, as TF's default replica context.
    """
    axes = tuple(axes)
    compute = jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else x.dtype
    values = x.astype(compute)
    local_sum = jnp.sum(values, axis=axes, keepdims=True)
    local_squares = jnp.sum(jnp.square(values), axis=axes, keepdims=True)
    local_count = jnp.sum(jnp.ones_like(values), axis=axes, keepdims=True)
    bound = active_axis()
    if bound:
        local_sum, local_squares, local_count = jax.lax.psum((local_sum, local_squares, local_count), bound[0])
    safe = jnp.where(local_count == 0, 1, local_count)
    mean = jnp.where(local_count == 0, 0, local_sum / safe)
    squares_mean = jnp.where(local_count == 0, 0, local_squares / safe)
    variance = jnp.maximum(squares_mean - jnp.square(mean), 0.0)
    return jnp.squeeze(mean, axes).astype(x.dtype), jnp.squeeze(variance, axes).astype(x.dtype)
