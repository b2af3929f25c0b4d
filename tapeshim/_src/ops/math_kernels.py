"""JAX implementations of `tf.math` kernels whose numerics or gradients are TF's, not JAX's.

Each is written so that JAX's derivative *is* TF's (and stays usable in forward
mode): `maximum`/`minimum` send a tie's gradient to the first argument and
propagate NaN, `abs'(0)` is 0, `sqrt` gives zero for a zero upstream, `pow`'s
exponent gradient is 0 where the base is not positive, `reduce_max`/`min` share
the gradient among ties (NaN when the result is NaN), and bfloat16 sums and
means accumulate in float32 as TF's CPU kernels do.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import dtypes, errors, runtime_checks
from tapeshim._src.ops import lax_kernels
from tapeshim._src.state import in_forward_mode


@jax.custom_jvp
def _abs_real(x: jax.Array) -> jax.Array:
    return jnp.abs(x)


@_abs_real.defjvp
def _abs_real_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    return jnp.abs(x), jnp.sign(x) * t


def abs_impl(x: jax.Array) -> jax.Array:
    """|x|, with TF's gradient 0 at 0 for real floats (JAX: 1)."""
    if jnp.issubdtype(x.dtype, jnp.complexfloating) or not jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.abs(x)
    return _abs_real(x)


@jax.custom_vjp
def _sqrt_reverse(x: jax.Array) -> jax.Array:
    return jnp.sqrt(x)


def _sqrt_fwd(x: jax.Array) -> tuple:
    y = jnp.sqrt(x)
    return y, y


def _sqrt_bwd(y: jax.Array, g: jax.Array) -> tuple:
    # TF's SqrtGrad: a zero upstream gives zero, even where 0.5 / y is inf or nan (a masked sqrt(0)).
    return (jnp.where(g == 0, jnp.zeros_like(g), g * 0.5 / y),)


_sqrt_reverse.defvjp(_sqrt_fwd, _sqrt_bwd)


def sqrt_impl(x: jax.Array) -> jax.Array:
    """sqrt with TF's reverse-mode gradient; forward mode (which custom_vjp cannot do) uses JAX's."""
    if in_forward_mode() or not jnp.issubdtype(x.dtype, jnp.floating):
        return jnp.sqrt(x)
    return _sqrt_reverse(x)


def _nan_from_x(x: jax.Array, y: jax.Array, picked: jax.Array) -> jax.Array:
    """`picked`, but NaN where `x` is NaN (TF's kernels propagate it); there the gradient goes to y, as TF's mask."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return picked
    return jnp.where(jnp.isnan(x), y + lax.stop_gradient(x), picked)


def _lax_extreme(x: jax.Array, y: jax.Array, x_wins: Callable[[Any, Any], Any]) -> jax.Array | None:
    """`_nan_from_x(x, y, jnp.where(x_wins(x, y), x, y))` bound with `lax` (`lax_kernels`: the equations `jnp`
    binds, without its traces) for real floats typed alike, of one shape or a scalar; else None."""
    if not (jnp.issubdtype(x.dtype, jnp.floating) and lax_kernels.binary_alike(x, y)):
        return None
    picked = lax_kernels.where(x_wins(x, y), x, y)
    if picked is None:
        return None
    return lax_kernels.where(lax.ne(x, x), lax.add(y, lax.stop_gradient(x)), picked)  # (NaN from x: y's, as TF)


def maximum_impl(x: jax.Array, y: jax.Array) -> jax.Array:
    """max(x, y): a tie's gradient goes to x, NaN propagates (its gradient goes to y), as TF."""
    fast = _lax_extreme(x, y, lax.ge)
    return _nan_from_x(x, y, jnp.where(x >= y, x, y)) if fast is None else fast


def minimum_impl(x: jax.Array, y: jax.Array) -> jax.Array:
    """min(x, y): a tie's gradient goes to x, NaN propagates (its gradient goes to y), as TF."""
    fast = _lax_extreme(x, y, lax.le)
    return _nan_from_x(x, y, jnp.where(x <= y, x, y)) if fast is None else fast


@jax.custom_jvp
def _pow_inexact(x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.power(x, y)


@_pow_inexact.defjvp
def _pow_inexact_jvp(primals: tuple, tangents: tuple) -> tuple:
    # TF's PowGrad: y * x^(y - 1) for x, and z * log(x) for y where x > 0 (x != 0 for complex), else 0.
    (x, y), (tx, ty) = primals, tangents
    z = _pow_inexact(x, y)
    mask = (x != 0) if jnp.issubdtype(x.dtype, jnp.complexfloating) else (x > 0)
    log_x = jnp.where(mask, jnp.log(jnp.where(mask, x, jnp.ones_like(x))), jnp.zeros_like(x))
    return z, y * _pow_inexact(x, y - 1) * tx + z * log_x * ty


def pow_impl(x: jax.Array, y: jax.Array) -> jax.Array:
    """x ** y with TF's PowGrad for floating and complex inputs."""
    return _pow_inexact(x, y) if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.power(x, y)


def sum_impl(x: jax.Array, axis: tuple | None, keepdims: bool) -> jax.Array:
    """The sum over `axis` in x's dtype; bfloat16 accumulates in float32, as TF's CPU kernel."""
    if x.dtype == jnp.bfloat16:  # TF's CPU kernel accumulates bfloat16 sums in float32
        return jnp.sum(x.astype(jnp.float32), axis=axis, keepdims=keepdims).astype(x.dtype)
    summed = lax_kernels.reduce_sum(x, axis, keepdims)  # (without `jnp.sum`'s traces where it can)
    return jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype) if summed is None else summed


def chooser_reduce(kind: str, x: jax.Array, axis: tuple | None, keepdims: bool) -> jax.Array:
    """reduce_max (`kind` "max") or reduce_min over `axis`, with TF's MinOrMaxGrad for floats."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return _chosen(kind, x, axis, keepdims)
    return _chooser_float(kind, axis, keepdims, x)


def _chosen(kind: str, x: jax.Array, axis: tuple | None, keepdims: bool) -> jax.Array:
    """`jnp.max` or `jnp.min` from TF's identity: an empty axis gives the lowest (highest) value, as TF's."""
    dtype = x.dtype
    if dtype == jnp.bool_:
        initial: Any = kind != "max"
    elif jnp.issubdtype(dtype, jnp.integer):
        initial = jnp.iinfo(dtype).min if kind == "max" else jnp.iinfo(dtype).max
    else:
        initial = -jnp.inf if kind == "max" else jnp.inf
    reduce = jnp.max if kind == "max" else jnp.min
    return reduce(x, axis=axis, keepdims=keepdims, initial=jnp.asarray(initial, dtype))


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1, 2))
def _chooser_float(kind: str, axis: tuple | None, keepdims: bool, x: jax.Array) -> jax.Array:
    return _chosen(kind, x, axis, keepdims)


@_chooser_float.defjvp
def _chooser_float_jvp(kind: str, axis: tuple | None, keepdims: bool, primals: tuple, tangents: tuple) -> tuple:
    # TF's MinOrMaxGrad: the elements equal to the result share it equally (0/0, so NaN, when it is NaN).
    (x,), (t,) = primals, tangents
    y = _chooser_float(kind, axis, keepdims, x)
    kept = _chosen(kind, x, axis, True)
    indicators = (x == kept).astype(x.dtype)
    count = jnp.sum(indicators, axis=axis, keepdims=True)
    # TF's indicators / num_selected, which is 0/0 (NaN) where the result is NaN (XLA would fold it to 0).
    share = jnp.where(count > 0, indicators / jnp.maximum(count, 1), jnp.asarray(jnp.nan, x.dtype))
    return y, jnp.sum(share * t, axis=axis, keepdims=keepdims)


def add_n_impl(*xs: jax.Array) -> jax.Array:
    """TF's AddN order: the first `n % 8` inputs (8 or 9 when that is 0 or 1) left to right, then each
    following group of 8 summed left to right and added to the total. The order decides half-precision
    rounding."""
    head = {0: 8, 1: 9}.get(len(xs) % 8, len(xs) % 8) if len(xs) > 1 else 1
    total = functools.reduce(operator.add, xs[:head])
    for start in range(head, len(xs), 8):
        total = total + functools.reduce(operator.add, xs[start : start + 8])
    return total


def require_nonzero_divisor(y: jax.Array, op_name: str) -> None:
    runtime_checks.require(~jnp.any(y == 0), f"Integer division by zero [Op:{op_name}]")


def floordiv_impl(x: jax.Array, y: jax.Array, checked: bool = False) -> jax.Array:
    """floor(x / y); `checked` (an integer divisor known only when the program runs) adds TF's zero check."""
    if jnp.issubdtype(x.dtype, jnp.integer):
        if checked:
            require_nonzero_divisor(y, "FloorDiv")
        return jnp.floor_divide(x, y)
    return jnp.floor(x / y)


def floormod_impl(x: jax.Array, y: jax.Array, checked: bool = False) -> jax.Array:
    """x - floor(x / y) * y; `checked` (an integer divisor known only when the program runs) adds TF's zero check."""
    if checked:
        require_nonzero_divisor(y, "FloorMod")
    return jnp.mod(x, y)


def mean_impl(x: jax.Array, axis: tuple | None, keepdims: bool) -> jax.Array:
    """The mean over `axis` in x's dtype: integers truncate, bfloat16 accumulates in float32, as TF."""
    if x.dtype == jnp.bfloat16:  # TF's CPU kernel sums and divides bfloat16 in float32
        return jnp.mean(x.astype(jnp.float32), axis=axis, keepdims=keepdims).astype(x.dtype)
    if jnp.issubdtype(x.dtype, jnp.integer):
        total = jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
        count = x.size if axis is None else math.prod(x.shape[a] for a in axis)
        return lax.div(total, jnp.asarray(max(count, 1), x.dtype))
    mean = lax_kernels.reduce_mean(x, axis, keepdims)  # (without `jnp.mean`'s traces where it can)
    return jnp.mean(x, axis=axis, keepdims=keepdims, dtype=x.dtype) if mean is None else mean


@jax.custom_vjp
def _digamma_half(x: jax.Array) -> jax.Array:
    return jax.scipy.special.digamma(x)


def _digamma_half_fwd(x: jax.Array) -> tuple:
    return _digamma_half(x), None


def _digamma_half_bwd(_: None, g: jax.Array) -> tuple:
    raise errors.invalid_argument(
        "Value for attr 'T' of half is not in the list of allowed values: float, double\n\t; NodeDef: "
        "{{node Polygamma}}; Op<name=Polygamma; signature=a:T, x:T -> z:T; attr=T:type,allowed=[DT_FLOAT, "
        "DT_DOUBLE]>",
        "Polygamma",
    )


_digamma_half.defvjp(_digamma_half_fwd, _digamma_half_bwd)


def digamma_impl(x: jax.Array) -> jax.Array:
    """digamma; in float16 its gradient raises TF's error (TF's Polygamma has no half kernel)."""
    if x.dtype == jnp.float16 and not in_forward_mode():
        return _digamma_half(x)
    return jax.scipy.special.digamma(x)


def squared_difference_impl(x: jax.Array, y: jax.Array) -> jax.Array:
    """(x - y)^2; for complex inputs (x - y) * conj(x - y), as TF's kernel."""
    diff = x - y
    return diff * jnp.conj(diff) if jnp.issubdtype(diff.dtype, jnp.complexfloating) else jnp.square(diff)


def _unconjugated(fn: Callable) -> Callable:
    """`fn` (holomorphic) with TF's unconjugated complex gradient: grad * f'(z), not grad * conj(f'(z)).

    A few TF gradient functions (Xlogy, Xdivy, Cumprod, the swish custom
    gradient) multiply by the derivative without conjugating it. Tapes return
    conj(vjp(conj(grad))); a backward pass of conj(vjp(conj(c))) undoes that.
    """

    @jax.custom_vjp
    def wrapped(*xs: jax.Array) -> jax.Array:
        return fn(*xs)

    def forward(*xs: jax.Array) -> tuple:
        return jax.vjp(fn, *xs)

    def backward(pullback: Callable, c: jax.Array) -> tuple:
        return tuple(jnp.conj(g) for g in pullback(jnp.conj(c)))

    wrapped.defvjp(forward, backward)
    return wrapped


def tf_complex_gradient(fn: Callable) -> Callable:
    """`fn`, whose gradient for complex inputs is TF's unconjugated one (see `_unconjugated`).

    Real inputs and forward mode (which custom_vjp cannot do) run `fn` itself.
    """
    unconjugated = _unconjugated(fn)

    def apply(*xs: jax.Array) -> jax.Array:
        if in_forward_mode() or not jnp.issubdtype(xs[0].dtype, jnp.complexfloating):
            return fn(*xs)
        return unconjugated(*xs)

    return apply


def _safe_divide(x: jax.Array, y: jax.Array, zero_where: jax.Array) -> jax.Array:
    """x / y, and 0 where `zero_where`, with finite gradients there (TF's convention)."""
    safe_y = jnp.where(zero_where, jnp.ones_like(y), y)
    return jnp.where(zero_where, jnp.zeros_like(x / safe_y), x / safe_y)


def _xlogy(x: jax.Array, y: jax.Array) -> jax.Array:
    zero = x == 0
    safe_y = jnp.where(zero, jnp.ones_like(y), y)
    return jnp.where(zero, jnp.zeros_like(x * safe_y), x * jnp.log(safe_y))


xlogy_impl = tf_complex_gradient(_xlogy)
xdivy_impl = tf_complex_gradient(lambda x, y: _safe_divide(x, y, x == 0))


def divide_no_nan_impl(x: jax.Array, y: jax.Array) -> jax.Array:
    """x / y, 0 where y == 0, with finite gradients there (TF's DivNoNan)."""
    return _safe_divide(x, y, y == 0)


def _times_unless_zero(a: jax.Array, b: jax.Array) -> jax.Array:
    """a * b, and 0 where b == 0 (even where a is inf or nan): TF's MulNoNan."""
    return jnp.where(b == 0, jnp.zeros_like(a * b), a * b)


@jax.custom_vjp
def _mul_no_nan(x: jax.Array, y: jax.Array) -> jax.Array:
    return _times_unless_zero(x, y)


def _mul_no_nan_fwd(x: jax.Array, y: jax.Array) -> tuple:
    return _times_unless_zero(x, y), (x, y)


def _mul_no_nan_bwd(residuals: tuple, c: jax.Array) -> tuple:
    # TF's MulNoNanGrad: (mul_no_nan(g, y), mul_no_nan(x, g)), unconjugated for complex. Tapes return
    # conj(vjp(conj(g))), so the vjp conjugates the other factor.
    x, y = residuals
    return _times_unless_zero(c, jnp.conj(y)), _times_unless_zero(jnp.conj(x), c)


_mul_no_nan.defvjp(_mul_no_nan_fwd, _mul_no_nan_bwd)


def mul_no_nan_impl(x: jax.Array, y: jax.Array) -> jax.Array:
    """x * y, 0 where y == 0, with TF's gradient: y's is x * g (also where y == 0), 0 where g == 0."""
    x, y = jnp.broadcast_arrays(x, y)  # (JAX sums the gradient of a broadcast input)
    if in_forward_mode():
        return _times_unless_zero(x, y)
    return _mul_no_nan(x, y)


def _shift(x: jax.Array, axis: int, reverse: bool, fill: float) -> jax.Array:
    """x moved one step along `axis` (toward the end, or the start if `reverse`), `fill` entering: an inclusive
    scan made exclusive."""
    size = x.shape[axis]
    if not size:
        return x
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, 1) if reverse else (1, 0)
    kept = lax.slice_in_dim(x, 1, size, axis=axis) if reverse else lax.slice_in_dim(x, 0, size - 1, axis=axis)
    return jnp.pad(kept, pad, constant_values=fill)


def _cumulative_logsumexp(x: jax.Array, axis: int, exclusive: bool, reverse: bool) -> jax.Array:
    out = lax.cumlogsumexp(x, axis=axis, reverse=reverse)
    return _shift(out, axis, reverse, -jnp.inf) if exclusive else out


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _cumulative_logsumexp_tf(x: jax.Array, axis: int, exclusive: bool, reverse: bool) -> jax.Array:
    return _cumulative_logsumexp(x, axis, exclusive, reverse)


def _cumulative_logsumexp_fwd(x: jax.Array, axis: int, exclusive: bool, reverse: bool) -> tuple:
    out = _cumulative_logsumexp(x, axis, exclusive, reverse)
    return out, (x, out)


def _cumulative_logsumexp_bwd(axis: int, exclusive: bool, reverse: bool, residuals: tuple, g: jax.Array) -> tuple:
    # d out_k / d x_i = exp(x_i - out_k) for every k whose window holds i: the gradient is a scan the other way,
    # kept in log space with the positive and the negative parts of g apart (nan where x and out are both -inf,
    # as TF's).
    x, out = residuals
    minus_inf = jnp.full_like(g, -jnp.inf)
    positive = jnp.where(g > 0, jnp.log(jnp.where(g > 0, g, 1)), minus_inf)
    negative = jnp.where(g < 0, jnp.log(jnp.where(g < 0, -g, 1)), minus_inf)

    def part(log_g: jax.Array) -> jax.Array:
        return jnp.exp(x + _cumulative_logsumexp(log_g - out, axis, exclusive, not reverse))

    return (part(positive) - part(negative),)


_cumulative_logsumexp_tf.defvjp(_cumulative_logsumexp_fwd, _cumulative_logsumexp_bwd)


def cumulative_logsumexp_impl(x: jax.Array, axis: int, exclusive: bool, reverse: bool) -> jax.Array:
    """log(cumsum(exp(x))) along `axis` (optionally exclusive: -inf first; and/or from the end), with TF's
    log-space gradient; forward mode (which custom_vjp cannot do) differentiates the scan itself."""
    if in_forward_mode():
        return _cumulative_logsumexp(x, axis, exclusive, reverse)
    return _cumulative_logsumexp_tf(x, axis, exclusive, reverse)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _segment_prod(data: jax.Array, ids: jax.Array, num_segments: int) -> jax.Array:
    return jax.ops.segment_prod(data, ids, num_segments)  # (ids outside [0, num_segments) are dropped)


@_segment_prod.defjvp
def _segment_prod_jvp(num_segments: int, primals: tuple, tangents: tuple) -> tuple:
    # Each element's derivative is the product of the other elements of its segment, found as TF's
    # UnsortedSegmentProdGrad does: the product of the nonzero elements, divided by the element when the segment
    # holds no zero; for its one zero, that product; 0 when the segment holds two zeros or more.
    data, ids = primals
    t = tangents[0]
    zero = data == 0
    nonzero = jnp.where(zero, jnp.ones_like(data), data)
    product = _segment_prod(nonzero, ids, num_segments)
    zeros = jax.ops.segment_sum(zero.astype(jnp.int32), ids, num_segments)

    def gathered(values: jax.Array) -> jax.Array:
        return jnp.take(values, ids, axis=0, mode="fill", fill_value=0)

    own_product, own_zeros = gathered(product), gathered(zeros)
    others = jnp.where(
        zero,
        jnp.where(own_zeros == 1, own_product, jnp.zeros_like(own_product)),
        jnp.where(own_zeros == 0, own_product / nonzero, jnp.zeros_like(own_product)),
    )
    return jax.ops.segment_prod(data, ids, num_segments), jax.ops.segment_sum(t * others, ids, num_segments)


def segment_prod_impl(data: jax.Array, ids: jax.Array, num_segments: int) -> jax.Array:
    """The product of the rows of `data` (flattened to `[n, ...]`) per id of `ids` (`[n]`), 1 for empty
    segments, with TF's gradient (exact at zeros; not conjugated for complex, as TF's)."""
    if not jnp.issubdtype(data.dtype, jnp.inexact):
        return jax.ops.segment_prod(data, ids, num_segments)
    return tf_complex_gradient(lambda d: _segment_prod(d, ids, num_segments))(data)


_INT_MIN_TARGETS = (np.dtype(np.int32), np.dtype(np.int64))


def cast_impl(x: jax.Array, dtype: str) -> jax.Array:
    """`x` as `dtype` (a dtype name), as TF's `Cast` kernel converts it (complex to real keeps the real part)."""
    target = dtypes.as_dtype(dtype)._np
    if jnp.issubdtype(x.dtype, jnp.complexfloating) and not jnp.issubdtype(target, jnp.complexfloating):
        x = jnp.real(x)
    if jnp.issubdtype(x.dtype, jnp.floating) and x.dtype != jnp.bfloat16 and target in _INT_MIN_TARGETS:
        # TF's CPU kernel: a float outside int32's (int64's) range, NaN and the infinities become its lowest
        # value, where XLA saturates. (Narrower targets saturate in TF's vectorised kernel too, except in
        # tensors of a few elements; TF's bfloat16 kernel follows yet other rules: those keep XLA's.)
        bound = float(2 ** (8 * target.itemsize - 1))
        t = jnp.trunc(x.astype(jnp.promote_types(x.dtype, jnp.float32)))
        fits = (t >= -bound) & (t < bound)
        return jnp.where(fits, jnp.where(fits, t, 0).astype(target), np.iinfo(target).min)
    return x.astype(target)


def matmul_impl(
    a: jax.Array, b: jax.Array, transpose_a: bool, transpose_b: bool, adjoint_a: bool, adjoint_b: bool
) -> jax.Array:
    """`a @ b`, each transposed (or adjoint: conjugated too) first when asked."""
    if transpose_a or adjoint_a:
        a = jnp.swapaxes(a, -1, -2)
        a = jnp.conj(a) if adjoint_a else a
    if transpose_b or adjoint_b:
        b = jnp.swapaxes(b, -1, -2)
        b = jnp.conj(b) if adjoint_b else b
    return lax_kernels.matmul(a, b)
