"""The kernels of the commonest ops, written with `lax` where their operands need nothing `jnp` adds.

An op's kernel is traced by JAX once per new input signature (its shapes for the op's first call at a size,
then inside every program that records it). A `jnp` function is a `jit` of its own, traced per signature
inside the kernel's trace: `jnp.add` costs a new shape's kernel trace 414 us where `lax.add` costs 163 us,
`jnp.where` 910 against 183 us, `jnp.matmul` 639 against about 170 us (measured on the 2-core development
machine, `jax.jit(...).trace` over 40 new shapes). A first training step at new shapes traces one kernel per
op, so these traces are most of what it costs above TF eager.

Where the operands already have one dtype (with one weak type) and shapes that need no broadcasting beyond a
scalar, and a dtype the `jnp` function computes in unchanged, `lax` binds the same equation `jnp` would (the
jaxprs are equal); anything else goes to `jnp` as before.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def _typed_alike(x: Any, y: Any) -> bool:
    """Whether `x` and `y` have one dtype and one weak type (`jnp` would promote neither)."""
    x_type, y_type = jax.typeof(x), jax.typeof(y)
    return x_type.dtype == y_type.dtype and x_type.weak_type == y_type.weak_type


def _shapes_alike(x: Any, y: Any) -> bool:
    """Whether `x` and `y` need no broadcasting but a scalar's, which `lax` does itself (`jnp` binds the same)."""
    x_shape, y_shape = np.shape(x), np.shape(y)
    if not x_shape or not y_shape:
        return True
    try:
        return bool(x_shape == y_shape)
    except Exception:  # noqa: BLE001 - symbolic sizes JAX cannot compare: `jnp` decides
        return False


def binary_alike(x: Any, y: Any) -> bool:
    """Whether a binary `lax` function takes `x` and `y` as `jnp` would hand them to it (typed and shaped alike)."""
    return _typed_alike(x, y) and _shapes_alike(x, y)


def _ranked(value: Any, rank: int) -> Any:
    """`value` with leading size-1 axes up to `rank` (a `broadcast_in_dim`, as `jnp`'s rank promotion binds it)."""
    shape = tuple(np.shape(value))
    if len(shape) == rank:
        return value
    return lax.broadcast_in_dim(value, (1,) * (rank - len(shape)) + shape, tuple(range(rank - len(shape), rank)))


def _broadcast_alike(x: Any, y: Any) -> tuple | None:
    """`(x, y)` as `jnp` hands them to a binary `lax` function: a scalar as it is, an operand of lower rank with
    leading size-1 axes (`_ranked`); `lax` broadcasts size-1 axes itself. None where `jnp` must decide: sizes
    that do not broadcast (its error), symbolic sizes JAX cannot compare."""
    x_shape, y_shape = np.shape(x), np.shape(y)
    if not x_shape or not y_shape:
        return x, y
    try:
        if x_shape == y_shape:
            return x, y
        if any(not (a == b or a == 1 or b == 1) for a, b in zip(x_shape[::-1], y_shape[::-1])):
            return None
    except Exception:  # noqa: BLE001 - symbolic sizes JAX cannot compare: `jnp` decides
        return None
    rank = max(len(x_shape), len(y_shape))
    return _ranked(x, rank), _ranked(y, rank)


def binary(lax_fn: Callable[[Any, Any], Any], jnp_fn: Callable[[Any, Any], Any], kinds: str) -> Callable:
    """`jnp_fn`'s kernel, binding `lax_fn` where the operands' dtype is of `kinds` (NumPy's dtype kinds) and
    their types alike, broadcasting their shapes as `jnp` does (`_broadcast_alike`)."""

    def kernel(x: Any, y: Any) -> Any:
        if np.dtype(jax.typeof(x).dtype).kind in kinds and _typed_alike(x, y):
            operands = _broadcast_alike(x, y)
            if operands is not None:
                return lax_fn(*operands)
        return jnp_fn(x, y)

    kernel.__name__ = kernel.__qualname__ = getattr(jnp_fn, "__name__", "kernel")
    return kernel


def unary(lax_fn: Callable[[Any], Any], jnp_fn: Callable[[Any], Any]) -> Callable:
    """`jnp_fn`'s kernel, binding `lax_fn` on floating and complex operands (`jnp` promotes others)."""

    def kernel(x: Any) -> Any:
        if np.dtype(jax.typeof(x).dtype).kind in "fc":
            return lax_fn(x)
        return jnp_fn(x)

    kernel.__name__ = kernel.__qualname__ = getattr(jnp_fn, "__name__", "kernel")
    return kernel


add = binary(lax.add, jnp.add, "iufc")
subtract = binary(lax.sub, jnp.subtract, "iufc")
multiply = binary(lax.mul, jnp.multiply, "iufc")
true_divide = binary(lax.div, jnp.true_divide, "fc")
negative = unary(lax.neg, jnp.negative)
exp = unary(lax.exp, jnp.exp)
log = unary(lax.log, jnp.log)
tanh = unary(lax.tanh, jnp.tanh)
square = unary(lax.square, jnp.square)


def where(condition: Any, x: Any, y: Any) -> Any | None:
    """`jnp.where(condition, x, y)` bound with `lax.select` where `x` and `y` are typed alike and `condition`,
    `x` and `y` have one shape or are scalars (`x` and `y` broadcast as `jnp` does); else None."""
    if not _typed_alike(x, y):
        return None
    shapes = [np.shape(v) for v in (condition, x, y)]
    full = next((s for s in shapes if s), ())
    try:
        if any(s and s != full for s in shapes):
            return None
    except Exception:  # noqa: BLE001 - symbolic sizes JAX cannot compare
        return None
    if full:  # (a scalar condition selects whole operands: `lax.select` takes it as it is, as `jnp` does)
        x, y = (v if np.shape(v) else lax.broadcast_in_dim(v, full, ()) for v in (x, y))
    return lax.select(condition, x, y)


def matmul(a: Any, b: Any) -> Any:
    """`jnp.matmul(a, b)`, binding its `dot_general` directly for two matrices of one real floating dtype."""
    a_type = jax.typeof(a)
    if (
        np.ndim(a) == np.ndim(b) == 2
        and np.dtype(a_type.dtype).kind == "f"
        and not a_type.weak_type
        and _typed_alike(a, b)
    ):
        return lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=a_type.dtype)
    return jnp.matmul(a, b)


_SUMMED = (np.dtype(np.float32), np.dtype(np.float64))
"""The dtypes `jnp.sum` and `jnp.mean` (given the input's dtype) reduce in unchanged: half precision is
computed in float32, integers and complex values are left to `jnp`."""


def _summed_axes(x: Any, axis: tuple | None) -> tuple | None:
    """The axes `_sum` reduces `x` over (`axis`; None: all), or None where `jnp` must decide (a dtype it
    computes in another, a weak type, axes out of range or repeated: its error)."""
    x_type = jax.typeof(x)
    if np.dtype(x_type.dtype) not in _SUMMED or x_type.weak_type:
        return None
    rank = len(x_type.shape)
    axes = tuple(range(rank)) if axis is None else tuple(axis)
    if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        return None
    return axes


def _sum(x: Any, axes: tuple, keepdims: bool) -> Any:
    """The sum of `x` over `axes`, kept as size-1 axes with `keepdims`, bound as
    `jnp.sum(x, axis, keepdims=keepdims, dtype=x.dtype)` binds it."""
    total = lax.reduce_sum(x, axes)
    return lax.expand_dims(total, axes) if keepdims else total


def reduce_sum(x: Any, axis: tuple | None, keepdims: bool) -> Any | None:
    """`jnp.sum(x, axis, keepdims=keepdims, dtype=x.dtype)` for float32 and float64 values, bound with `lax`;
    None for other values (the caller calls `jnp`)."""
    axes = _summed_axes(x, axis)
    return None if axes is None else _sum(x, axes, keepdims)


def reduce_mean(x: Any, axis: tuple | None, keepdims: bool) -> Any | None:
    """`jnp.mean(x, axis, keepdims=keepdims, dtype=x.dtype)` for float32 and float64 values, bound with `lax`;
    None for others (the caller calls `jnp`). A count of symbolic sizes (a trace for any batch size) is made a
    value first, as `jnp.mean` makes it (`dim_as_value`, through `jnp.asarray` of the size)."""
    axes = _summed_axes(x, axis)
    if axes is None:
        return None
    shape = np.shape(x)
    count = size_value(math.prod([shape[a] for a in axes]), jax.typeof(x).dtype)  # (made before the sum, as jnp)
    return lax.div(_sum(x, axes, keepdims), count)


def size_value(size: Any, dtype: Any) -> Any:
    """A size as a scalar of `dtype`: a NumPy constant, or for a symbolic size (a trace for any batch size) the
    value `jnp` makes of it (`dim_as_value`, through `jnp.asarray`)."""
    return np.asarray(size, dtype) if isinstance(size, (int, np.integer)) else jnp.asarray(size, dtype)
