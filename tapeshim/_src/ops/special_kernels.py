"""JAX kernels of TF's special functions (`tf.math.special.*`, `igamma`, `betainc`, `zeta`, `polygamma`).

Each unary function is a `jax.custom_jvp` whose derivative is TF's registered gradient (math_grad.py), written
with the other functions here, so second derivatives follow TF's rules too. Values come from
`jax.scipy.special` where it has the function, else from `bessel_kernels`; float16 is computed in float32
and rounded, as TF's half kernels. Edge values (zeros, negative arguments, infinities) follow TF's kernels
where JAX's differ.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from tapeshim._src.ops import bessel_kernels

Fn = Callable[[jax.Array], jax.Array]


def _widened(fn: Fn) -> Fn:
    """`fn` computed in float32 for a float16 `x`."""

    def widened(x: jax.Array) -> jax.Array:
        if x.dtype == jnp.float16:
            return fn(x.astype(jnp.float32)).astype(x.dtype)
        return fn(x)

    return widened


def _with_derivative(value: Fn, derivative: Callable[[jax.Array, jax.Array], jax.Array]) -> Fn:
    """`value` whose derivative is `derivative(x, y)` (TF's gradient rule; `y` is the value)."""
    f = jax.custom_jvp(_widened(value))

    def jvp(primals: tuple, tangents: tuple) -> tuple:
        (x,), (t,) = primals, tangents
        y = f(x)
        return y, (derivative(x, y) * t).astype(y.dtype)

    f.defjvp(jvp)
    return f


def _expint_value(x: jax.Array) -> jax.Array:
    """Ei(x); TF's kernel gives -inf at 0 and NaN for x < 0 (JAX: -E1(-x))."""
    y = jsp.expi(jnp.where(x > 0, x, 1.0).astype(x.dtype))
    return jnp.where(x > 0, y, jnp.where(x == 0, -jnp.inf, jnp.nan)).astype(x.dtype)


def _sign(x: jax.Array) -> jax.Array:
    return jnp.sign(x)


i0: Fn = _with_derivative(jsp.i0, lambda x, y: i1(x))
i0e: Fn = _with_derivative(jsp.i0e, lambda x, y: i1e(x) - _sign(x) * y)
i1: Fn = _with_derivative(jsp.i1, lambda x, y: jnp.where(x == 0, jnp.ones_like(x), i0(x) - y / x))
i1e: Fn = _with_derivative(
    jsp.i1e, lambda x, y: jnp.where(x == 0, jnp.full_like(x, 0.5), i0e(x) - y * (_sign(x) + 1 / x))
)
k0: Fn = _with_derivative(bessel_kernels.k0, lambda x, y: -k1(x))
k0e: Fn = _with_derivative(bessel_kernels.k0e, lambda x, y: y - k1e(x))
k1: Fn = _with_derivative(bessel_kernels.k1, lambda x, y: -k0(x) - y / x)
k1e: Fn = _with_derivative(bessel_kernels.k1e, lambda x, y: y * (1 - 1 / x) - k0e(x))
j0: Fn = _with_derivative(bessel_kernels.j0, lambda x, y: -j1(x))
j1: Fn = _with_derivative(bessel_kernels.j1, lambda x, y: jnp.where(x == 0, jnp.full_like(x, 0.5), j0(x) - y / x))
y0: Fn = _with_derivative(bessel_kernels.y0, lambda x, y: -y1(x))
y1: Fn = _with_derivative(bessel_kernels.y1, lambda x, y: y0(x) - y / x)
dawsn: Fn = _with_derivative(jsp.dawsn, lambda x, y: 1 - 2 * x * y)
expint: Fn = _with_derivative(_expint_value, lambda x, y: jnp.exp(x) / x)
fresnel_cos: Fn = _with_derivative(lambda x: jsp.fresnel(x)[1], lambda x, y: jnp.cos((jnp.pi / 2) * x * x))
fresnel_sin: Fn = _with_derivative(lambda x: jsp.fresnel(x)[0], lambda x, y: jnp.sin((jnp.pi / 2) * x * x))
spence: Fn = _with_derivative(jsp.spence, lambda x, y: jnp.where(x == 1, -jnp.ones_like(x), jnp.log(x) / (1 - x)))


# -- two- and three-argument functions --------------------------------------------------------------------
def _igamma_value(a: jax.Array, x: jax.Array) -> jax.Array:
    """P(a, x) with TF's edges: 0 where x == 0, NaN for x < 0 or a <= 0, 0 for a == inf."""
    y = jsp.gammainc(a, x)
    y = jnp.where(a == jnp.inf, 0.0, y)
    y = jnp.where(jnp.isnan(a) | jnp.isnan(x) | (x < 0) | (a <= 0), jnp.nan, y)
    return jnp.where(x == 0, 0.0, y).astype(x.dtype)


def _igammac_value(a: jax.Array, x: jax.Array) -> jax.Array:
    """Q(a, x) with TF's edges: NaN for x < 0 or a <= 0, 1 for a == inf and finite x."""
    y = jsp.gammaincc(a, x)
    y = jnp.where((a == jnp.inf) & (x < jnp.inf), 1.0, y)
    return jnp.where(jnp.isnan(a) | jnp.isnan(x) | (x < 0) | (a <= 0), jnp.nan, y).astype(x.dtype)


def _igamma_partials(a: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    partial_a = jax.lax.igamma_grad_a(*jnp.broadcast_arrays(a, x))
    partial_x = jnp.exp(-x + (a - 1) * jnp.log(x) - jsp.gammaln(a))
    return partial_a, partial_x


@jax.custom_jvp
def igamma(a: jax.Array, x: jax.Array) -> jax.Array:
    """The regularized lower incomplete gamma function P(a, x)."""
    return _igamma_value(a, x)


@igamma.defjvp
def _igamma_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, x), (ta, tx) = primals, tangents
    partial_a, partial_x = _igamma_partials(a, x)
    return igamma(a, x), partial_a * ta + partial_x * tx


@jax.custom_jvp
def igammac(a: jax.Array, x: jax.Array) -> jax.Array:
    """The regularized upper incomplete gamma function Q(a, x)."""
    return _igammac_value(a, x)


@igammac.defjvp
def _igammac_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, x), (ta, tx) = primals, tangents
    partial_a, partial_x = _igamma_partials(a, x)
    return igammac(a, x), -(partial_a * ta + partial_x * tx)


@jax.custom_jvp
def betainc(a: jax.Array, b: jax.Array, x: jax.Array) -> jax.Array:
    """The regularized incomplete beta function I_x(a, b); differentiable in x only, as TF. TF's edges: 0 at
    x == 0 and 1 at x == 1 (also for a NaN a or b), NaN where a <= 0 or b <= 0."""
    y = jsp.betainc(a, b, x)
    y = jnp.where(x == 0, 0.0, jnp.where(x == 1, 1.0, y))
    return jnp.where((a <= 0) | (b <= 0), jnp.nan, y).astype(x.dtype)


@betainc.defjvp
def _betainc_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, b, x), (_, _, tx) = primals, tangents
    log_beta = jsp.gammaln(a) + jsp.gammaln(b) - jsp.gammaln(a + b)
    partial_x = jnp.exp(jsp.xlog1py(b - 1, -x) + jsp.xlogy(a - 1, x) - log_beta)
    return betainc(a, b, x), partial_x * tx


def _zeta_value(x: jax.Array, q: jax.Array) -> jax.Array:
    """Hurwitz zeta with TF's edges: inf for x == 1 (any q), NaN for x < 1; x == inf gives inf, 1 or 0 for
    q < 1, q == 1, q > 1; q == inf gives 0 for x > 1."""
    y = jsp.zeta(x, q)
    y = jnp.where(x == jnp.inf, jnp.where(q < 1, jnp.inf, jnp.where(q == 1, 1.0, 0.0)), y)
    y = jnp.where((q == jnp.inf) & (x > 1), 0.0, y)
    y = jnp.where(jnp.isnan(x) | jnp.isnan(q) | (x < 1), jnp.nan, y)
    return jnp.where(x == 1, jnp.inf, y).astype(q.dtype)


@jax.custom_jvp
def zeta(x: jax.Array, q: jax.Array) -> jax.Array:
    """The Hurwitz zeta function; differentiable in q only, as TF."""
    return _zeta_value(x, q)


@zeta.defjvp
def _zeta_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, q), (_, tq) = primals, tangents
    return zeta(x, q), -x * zeta(x + 1, q) * tq


def _polygamma_value(n: jax.Array, x: jax.Array) -> jax.Array:
    """psi^(n)(x) as TF's kernel: digamma for n == 0, (-1)^(n+1) n! zeta(n + 1, x) else, NaN for a
    non-integer n."""
    order = jnp.where(jnp.isfinite(n), n, 0.0)
    sign = jnp.where(jnp.mod(order, 2) == 0, -1.0, 1.0).astype(x.dtype)
    higher = sign * jnp.exp(jsp.gammaln(n + 1)) * _zeta_value(n + 1, x)
    y = jnp.where(n == 0, jsp.digamma(x), higher)
    return jnp.where(jnp.floor(n) == n, y, jnp.nan).astype(x.dtype)


@jax.custom_jvp
def polygamma(n: jax.Array, x: jax.Array) -> jax.Array:
    """The polygamma function; differentiable in x only, as TF."""
    return _polygamma_value(n, x)


@polygamma.defjvp
def _polygamma_jvp(primals: tuple, tangents: tuple) -> tuple:
    (n, x), (_, tx) = primals, tangents
    return polygamma(n, x), polygamma(n + 1, x) * tx
