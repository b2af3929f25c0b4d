"""`tf.cond`, `tf.case`, `tf.switch_case` and `tf.while_loop` on the values of a JAX trace.

Keras's own computations run under JAX's tracing: the bridge compiles a layer's
call, an optimizer's update and the learning-rate schedule it asks for
(`keras_bridge.py`). Their tensors hold JAX tracers, on which eager Python
control flow cannot branch; TF's Keras runs the same code eagerly or in a graph,
where `tf.cond(step < warmup, ...)` in a schedule works. Here such constructs
become `lax.cond`, `lax.switch` and `lax.while_loop` in the JAX trace.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax

from tapeshim._src import nest
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor


def jax_traced(*tensors: Tensor) -> bool:
    """Whether any of `tensors` holds a tracer of a JAX transformation (not tapeshim's function trace)."""
    return any(isinstance(t._value, jax.core.Tracer) for t in tensors)


def _arrays(result: Any) -> list:
    """A branch's or body's flat outputs as JAX values (None stays None)."""
    return [None if leaf is None else convert_to_tensor(leaf).value for leaf in nest.flatten(result)]


def switch(selector: Tensor, fns: Sequence[Callable[[], Any]], message: str) -> Any:
    """`fns[selector]()` as one `lax.cond` (a bool selector picks `fns[0]` when true) or `lax.switch`.

    Raises:
      ValueError: if the branches return different structures, shapes or dtypes (`message`).
    """
    structures: list = []

    def make(fn: Callable[[], Any]) -> Callable[[Any], list]:
        def branch(_: Any) -> list:
            result = fn()
            structures.append(result)
            return _arrays(result)

        return branch

    branches = [make(fn) for fn in fns]
    value = selector.value
    try:
        if value.dtype == jnp.bool_:
            outputs = lax.cond(value, branches[0], branches[1], None)
        else:
            outputs = lax.switch(jnp.clip(value.astype(jnp.int32), 0, len(branches) - 1), branches, None)
    except TypeError as exc:
        raise ValueError(f"{message}\n{exc}") from None
    return nest.pack_sequence_as(structures[0], [None if v is None else concrete(v) for v in outputs])


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    values: list,
    as_structure: Callable[[Any], Any],
    limit: Tensor | None,
    count: int,
) -> list:
    """`tf.while_loop` over loop variables `values` (a list) as one `lax.while_loop`; returns them.

    `count` iterations ran already (eagerly, before the condition became a traced value), of at most `limit`.

    Raises:
      ValueError: if the body changes a loop variable's shape or dtype.
    """
    flat = [convert_to_tensor(v) for v in nest.flatten(values)]

    def rebuilt(arrays: Sequence[jax.Array]) -> list:
        return nest.pack_sequence_as(values, [concrete(a) for a in arrays])

    def keep_going(carry: tuple) -> jax.Array:
        count, arrays = carry
        go = convert_to_tensor(cond(*rebuilt(arrays))).value
        return go if limit is None else jnp.logical_and(count < limit.value, go)

    def step(carry: tuple) -> tuple:
        count, arrays = carry
        result = as_structure(body(*rebuilt(arrays)))
        new = tuple(convert_to_tensor(leaf).value for leaf in nest.flatten(result))
        for before, after in zip(arrays, new):
            if before.shape != after.shape or before.dtype != after.dtype:
                raise ValueError(
                    f"Input tensor enters the loop with shape {list(before.shape)} and dtype {before.dtype}, but "
                    f"has shape {list(after.shape)} and dtype {after.dtype} after one iteration. To allow the "
                    "shape to vary across iterations, use the `shape_invariants` argument of tf.while_loop."
                )
        return count + 1, new

    _, final = lax.while_loop(keep_going, step, (jnp.asarray(count, jnp.int32), tuple(t.value for t in flat)))
    return rebuilt(final)
