"""`tf.math.special.*` (Bessel functions, Dawson's integral, Ei, Fresnel integrals, Spence's function),
`tf.math.igamma`/`igammac`/`betainc`/`zeta`/`polygamma` and `tf.truncatemod`. Kernels: `special_kernels`."""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors, runtime_checks
from tapeshim._src.ops import math_kernels, math_ops, table
from tapeshim._src.ops import special_kernels as kernels
from tapeshim._src.ops.common import (
    broadcast_check,
    checks,
    convert_same_dtype,
    dtype_check,
    gradient_not_registered,
    missing_kernel,
    static_error,
)
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_TF_KERNEL_TYPES = {"float16": "HALF", "bfloat16": "BFLOAT16"}


def _no_half_kernel(tensors: tuple[Tensor, ...], op_name: str, missing: tuple[str, ...]) -> None:
    """TF registers these ops for half types without CPU kernels: NotFoundError, as TF."""
    name = tensors[0]._dtype.name
    if name in missing:
        raise missing_kernel(op_name, f"T=DT_{_TF_KERNEL_TYPES[name]}")


def _unary(
    public_name: str,
    op_name: str,
    impl: Callable[[jax.Array], jax.Array],
    what: str,
    paths: tuple[str, ...],
    no_half: bool = False,
) -> Callable[..., Tensor]:
    """A public unary special function: float16 (unless `no_half`), float32 and float64."""
    op = OpDef(op_name, impl, True, dtype_check(op_name, "f"))
    missing = ("bfloat16", "float16") if no_half else ("bfloat16",)

    def special(x: TensorLike, name: str | None = None) -> Tensor:
        tensor = convert_to_tensor(x)
        _no_half_kernel((tensor,), op_name, missing)
        return apply(op, (tensor,))[0]

    special.__name__ = special.__qualname__ = public_name
    kinds = "float32 or float64" if no_half else "float16, float32 or float64"
    special.__doc__ = (
        f"{what} element-wise, as `tf.{paths[-1]}`.\n\n"
        f"Args:\n  x: a {kinds} tensor.\n  name: ignored.\n\n"
        "Returns:\n  A tensor of `x`'s shape and dtype.\n\n"
        "Raises:\n  InvalidArgumentError: for a non-floating dtype.\n"
        f"  NotFoundError: for {'float16 and bfloat16' if no_half else 'bfloat16'}, which TF's CPU kernels do "
        "not support.\n"
    )
    dispatched = ragged_dispatch()(special)
    table.export(*paths, gradient="tf", dtypes="float32, float64" + ("" if no_half else ", float16"), op=op)(dispatched)
    return dispatched


def _paths(name: str, in_math: bool = False) -> tuple[str, ...]:
    return (f"math.{name}", f"math.special.{name}") if in_math else (f"math.special.{name}",)


bessel_i0 = _unary("bessel_i0", "BesselI0", kernels.i0, "The modified Bessel function I0", _paths("bessel_i0", True))
bessel_i0e = _unary(
    "bessel_i0e",
    "BesselI0e",
    kernels.i0e,
    "The scaled modified Bessel function exp(-|x|) I0",
    _paths("bessel_i0e", True),
)
bessel_i1 = _unary("bessel_i1", "BesselI1", kernels.i1, "The modified Bessel function I1", _paths("bessel_i1", True))
bessel_i1e = _unary(
    "bessel_i1e",
    "BesselI1e",
    kernels.i1e,
    "The scaled modified Bessel function exp(-|x|) I1",
    _paths("bessel_i1e", True),
)
bessel_j0 = _unary("bessel_j0", "BesselJ0", kernels.j0, "The Bessel function J0", _paths("bessel_j0"))
bessel_j1 = _unary("bessel_j1", "BesselJ1", kernels.j1, "The Bessel function J1", _paths("bessel_j1"))
bessel_y0 = _unary("bessel_y0", "BesselY0", kernels.y0, "The Bessel function Y0 (-inf for x <= 0)", _paths("bessel_y0"))
bessel_y1 = _unary("bessel_y1", "BesselY1", kernels.y1, "The Bessel function Y1 (-inf for x < 0)", _paths("bessel_y1"))
bessel_k0 = _unary("bessel_k0", "BesselK0", kernels.k0, "The modified Bessel function K0", _paths("bessel_k0"))
bessel_k0e = _unary(
    "bessel_k0e", "BesselK0e", kernels.k0e, "The scaled modified Bessel function exp(x) K0", _paths("bessel_k0e")
)
bessel_k1 = _unary("bessel_k1", "BesselK1", kernels.k1, "The modified Bessel function K1", _paths("bessel_k1"))
bessel_k1e = _unary(
    "bessel_k1e", "BesselK1e", kernels.k1e, "The scaled modified Bessel function exp(x) K1", _paths("bessel_k1e")
)
dawsn = _unary("dawsn", "Dawsn", kernels.dawsn, "Dawson's integral", _paths("dawsn"), no_half=True)
expint = _unary(
    "expint", "Expint", kernels.expint, "The exponential integral Ei (NaN for x < 0)", _paths("expint"), no_half=True
)
fresnel_cos = _unary(
    "fresnel_cos", "FresnelCos", kernels.fresnel_cos, "The Fresnel cosine integral", _paths("fresnel_cos"), no_half=True
)
fresnel_sin = _unary(
    "fresnel_sin", "FresnelSin", kernels.fresnel_sin, "The Fresnel sine integral", _paths("fresnel_sin"), no_half=True
)
spence = _unary(
    "spence", "Spence", kernels.spence, "Spence's function (the dilogarithm of 1 - x)", _paths("spence"), no_half=True
)


# -- igamma, igammac, zeta, polygamma, betainc ------------------------------------------------------------
_DOUBLES = ("float", "double")
_igamma_op = OpDef("Igamma", kernels.igamma, True, checks(dtype_check("Igamma", "f"), broadcast_check("Igamma")))
_igammac_op = OpDef("Igammac", kernels.igammac, True, checks(dtype_check("Igammac", "f"), broadcast_check("Igammac")))
_zeta_op = OpDef("Zeta", kernels.zeta, True, checks(dtype_check("Zeta", "", _DOUBLES), broadcast_check("Zeta")))
_polygamma_op = OpDef(
    "Polygamma", kernels.polygamma, True, checks(dtype_check("Polygamma", "", _DOUBLES), broadcast_check("Polygamma"))
)


def _binary(op: OpDef, first: TensorLike, second: TensorLike, missing: tuple[str, ...] = ()) -> tuple[Tensor, Tensor]:
    a, b = convert_same_dtype((first, second), op.name)
    _no_half_kernel((a,), op.name, missing)
    return a, b


@table.export("math.igamma", dtypes="float32, float64", note="float16/bfloat16 raise NotFoundError, as TF's CPU")
def igamma(a: TensorLike, x: TensorLike, name: str | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x), with broadcasting, as `tf.math.igamma`.

    Differentiable in both `a` (TF's IgammaGradA) and `x`.

    Args:
      a: a float32 or float64 tensor, positive.
      x: a tensor of `a`'s dtype, non-negative.
      name: ignored.

    Returns:
      The broadcast tensor (NaN where a <= 0 or x < 0, 0 where x == 0).

    Raises:
      InvalidArgumentError: for other dtypes, differing dtypes or shapes that do not broadcast.
      NotFoundError: for float16 and bfloat16, which TF's CPU kernels do not support.
    """
    return apply(_igamma_op, _binary(_igamma_op, a, x, ("float16", "bfloat16")))[0]


@table.export("math.igammac", dtypes="float32, float64", note="float16/bfloat16 raise NotFoundError, as TF's CPU")
def igammac(a: TensorLike, x: TensorLike, name: str | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), as `tf.math.igammac`.

    Args:
      a: a float32 or float64 tensor, positive.
      x: a tensor of `a`'s dtype, non-negative.
      name: ignored.

    Returns:
      The broadcast tensor (NaN where a <= 0 or x < 0).

    Raises:
      InvalidArgumentError: for other dtypes, differing dtypes or shapes that do not broadcast.
      NotFoundError: for float16 and bfloat16, which TF's CPU kernels do not support.
    """
    return apply(_igammac_op, _binary(_igammac_op, a, x, ("float16", "bfloat16")))[0]


@table.export("math.zeta", gradient="tf", dtypes="float32, float64", note="no gradient for x (None), as TF")
@ragged_dispatch("x", "q")
def zeta(x: TensorLike, q: TensorLike, name: str | None = None) -> Tensor:
    """The Hurwitz zeta function sum_k (k + q)^-x, with broadcasting, as `tf.math.zeta`.

    TF differentiates it in `q` only: the gradient for `x` is None.

    Args:
      x: a float32 or float64 tensor.
      q: a tensor of `x`'s dtype.
      name: ignored.

    Returns:
      The broadcast tensor (NaN where x < 1).

    Raises:
      InvalidArgumentError: for other dtypes, differing dtypes or shapes that do not broadcast.
    """
    s, shift = _binary(_zeta_op, x, q)
    return apply(_zeta_op, (math_ops.stop_gradient(s), shift))[0]


@table.export("math.polygamma", gradient="tf", dtypes="float32, float64", note="no gradient for a (None), as TF")
def polygamma(a: TensorLike, x: TensorLike, name: str | None = None) -> Tensor:
    """The polygamma function psi^(a)(x), with broadcasting, as `tf.math.polygamma`.

    TF differentiates it in `x` only: the gradient for `a` is None.

    Args:
      a: a float32 or float64 tensor of non-negative integers (NaN results elsewhere).
      x: a tensor of `a`'s dtype.
      name: ignored.

    Returns:
      The broadcast tensor.

    Raises:
      InvalidArgumentError: for other dtypes, differing dtypes or shapes that do not broadcast.
    """
    order, point = _binary(_polygamma_op, a, x)
    return apply(_polygamma_op, (math_ops.stop_gradient(order), point))[0]


def _betainc_check(in_avals: tuple, static: dict) -> None:
    shapes = [shape for shape, _ in in_avals]
    names = ("a", "b", "x")
    sized = [(n, s) for n, s in zip(names, shapes) if s]
    for (first, a), (other, b) in zip(sized, sized[1:]):
        if tuple(a) != tuple(b):
            text = ["[" + ",".join(str(d) for d in s) + "]" for s in (a, b)]
            raise static_error(f"Shapes of {first} and {other} are inconsistent: {text[0]} vs. {text[1]}", "Betainc")


_betainc_op = OpDef(
    "Betainc",
    lambda a, b, x: kernels.betainc(*jnp.broadcast_arrays(a, b, x)),  # (scalars broadcast to the others' shape)
    True,
    checks(dtype_check("Betainc", "", _DOUBLES), _betainc_check),
)


@table.export("math.betainc", gradient="tf", dtypes="float32, float64", note="no gradient for a and b (None), as TF")
def betainc(a: TensorLike, b: TensorLike, x: TensorLike, name: str | None = None) -> Tensor:
    """The regularized incomplete beta function I_x(a, b), as `tf.math.betainc`.

    `a`, `b` and `x` have one shape, or are scalars (which broadcast). TF differentiates it in `x` only:
    the gradients for `a` and `b` are None.

    Args:
      a: a float32 or float64 tensor.
      b: a tensor of `a`'s dtype.
      x: a tensor of `a`'s dtype, in [0, 1].
      name: ignored.

    Returns:
      A tensor of the non-scalar inputs' shape.

    Raises:
      InvalidArgumentError: for other dtypes, differing dtypes or two non-scalar shapes that differ.
    """
    first, second, point = convert_same_dtype((a, b, x), "Betainc")
    inputs = (math_ops.stop_gradient(first), math_ops.stop_gradient(second), point)
    return apply(_betainc_op, inputs)[0]


# -- truncatemod ------------------------------------------------------------------------------------------
def _truncatemod(x: jax.Array, y: jax.Array, checked: bool = False) -> jax.Array:
    if jnp.issubdtype(x.dtype, jnp.integer):
        if checked:
            math_kernels.require_nonzero_divisor(y, "TruncateMod")
        return jax.lax.rem(*jnp.broadcast_arrays(x, y))  # (C's %: the sign of the dividend)
    not_registered = gradient_not_registered("TruncateMod")
    return jnp.fmod(not_registered(x), not_registered(y))


_truncatemod_op = OpDef(
    "TruncateMod",
    _truncatemod,
    True,
    checks(
        dtype_check("TruncateMod", "", ("int32", "int64", "bfloat16", "half", "float", "double")),
        broadcast_check("TruncateMod"),
    ),
)


@table.export(
    "truncatemod",
    gradient="custom",
    dtypes="float32, float64, int32, int64",
    note="differentiating raises LookupError, as TF (no registered gradient); float16/bfloat16 raise "
    "NotFoundError, as TF's CPU",
    op=_truncatemod_op,
)
@ragged_dispatch("x", "y")
def truncatemod(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """The remainder of x / y rounded toward zero (C's `fmod` and `%`: the sign of `x`), as `tf.truncatemod`.

    Args:
      x: a float32, float64, int32 or int64 tensor.
      y: a tensor of `x`'s dtype, broadcasting with it.
      name: ignored.

    Returns:
      The broadcast tensor.

    Raises:
      InvalidArgumentError: for other dtypes, differing dtypes or shapes that do not broadcast.
      NotFoundError: for float16 and bfloat16, which TF's CPU kernels do not support.
      InternalError: if an integer `y` holds a zero (as TF's CPU kernel).
      LookupError: when a gradient through it is taken (TF registers none).
    """
    a, b = convert_same_dtype((x, y), "TruncateMod")
    _no_half_kernel((a,), "TruncateMod", ("float16", "bfloat16"))

    def host_check(values: Any) -> None:
        if (np.asarray(values) == 0).any():  # (TF's CPU kernel reports it so)
            raise errors.InternalError(
                None, None, "Unexpected error in binary operator (only integer div and mod should have errors)"
            )

    static = runtime_checks.checked_static(b, host_check) if b._dtype.is_integer else ()
    return apply(_truncatemod_op, (a, b), static)[0]
