"""Gathers that stand in for ops JAX's shape polymorphism refuses on sizes known per call.

In a trace for every size (`function_symbolic`), some JAX functions need a size
when they are traced: `jnp.pad` in "reflect" or "symmetric" mode must know that
an axis is longer than one element. TF's kernels check such limits when they run;
the ops here take the limits as checked (the callers check them in the program,
`runtime_checks.require`) and compute the same values with index arithmetic on
`lax.iota`, which any size allows.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax import lax


def mirror_pad(x: jax.Array, paddings: Any, mode: str) -> jax.Array:
    """`jnp.pad(x, paddings, mode)` for "reflect" or "symmetric" along axes whose sizes are known per call (a
    trace for every size, `function_symbolic`): each padded axis as one gather, whose indices the paddings'
    limits (TF's, checked by the caller) keep inside the axis."""
    if all(d.__class__ is int for d in x.shape):
        return jnp.pad(x, paddings, mode=mode)
    for axis, (before, after) in enumerate(paddings):
        if before.__class__ is int and after.__class__ is int and before == after == 0:
            continue
        n = jnp.asarray(x.shape[axis], jnp.int32)
        index = lax.iota(jnp.int32, before + x.shape[axis] + after) - jnp.asarray(before, jnp.int32)
        edge = 1 if mode == "symmetric" else 0  # (symmetric repeats the edge element)
        index = jnp.where(index < 0, -index - edge, index)
        index = jnp.where(index >= n, 2 * n - 2 + edge - index, index)
        x = jnp.take(x, index, axis=axis)
    return x
