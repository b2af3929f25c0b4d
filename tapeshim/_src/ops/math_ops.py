"""The `tf.math` rows of the op table, with TF's gradient conventions.

Where TF's gradient or numerics differ from JAX's, the row's implementation
(from `math_kernels.py`) is written so that JAX's derivative *is* TF's (and
stays usable in forward mode): `maximum`/`minimum` send a tie's gradient to the
first argument, `abs'(0)` is 0, and `clip_by_value` passes the gradient at its
(inclusive) boundaries.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import dtypes, errors, symbolic_broadcast
from tapeshim._src.ops import lax_kernels, matmul_types, table
from tapeshim._src.ops.common import (
    broadcast_check,
    broadcast_shapes,
    checks,
    convert_same_dtype,
    dtype_check,
    first_anchored,
    is_plain_value,
    is_tensor_like,
    missing_kernel,
    normalize_axis,
    same_dtype_for_division,
)
from tapeshim._src.ops.contraction_ops import matmul_check, matmul_types_check
from tapeshim._src.ops.math_kernels import (
    abs_impl,
    cast_impl,
    chooser_reduce,
    digamma_impl,
    divide_no_nan_impl,
    floordiv_impl,
    floormod_impl,
    matmul_impl,
    maximum_impl,
    mean_impl,
    minimum_impl,
    pow_impl,
    sqrt_impl,
    squared_difference_impl,
    sum_impl,
    xdivy_impl,
    xlogy_impl,
)
from tapeshim._src.ops.ragged_hook import on_ragged as _on_ragged
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, TensorLike

FLOAT = "fc"
NUMERIC = "fciu"
REAL_NUMERIC = "fiu"
ANY = "fciub"


_DTYPE_WORDS = {
    FLOAT: table.FLOAT,
    NUMERIC: table.NUMERIC,
    REAL_NUMERIC: table.REAL,
    ANY: table.ANY,
    "f": table.REAL_FLOAT,
    "b": "bool",
    "fiu": table.REAL,
    "fci": table.NUMERIC,
}


def _unary(
    public_name: str,
    op_name: str,
    impl: Callable,
    allowed: str = FLOAT,
    differentiable: bool = True,
    what: str = "",
    paths: tuple[str, ...] = (),
    gradient: str | None = None,
    note: str = "",
) -> Callable[..., Tensor]:
    op = OpDef(op_name, impl, differentiable, dtype_check(op_name, allowed))

    def unary(x: Any, name: str | None = None) -> Tensor:
        try:
            tensor = convert_to_tensor(x)
        except ValueError as exc:
            return _on_ragged(unary, (x,), exc)
        return apply(op, (tensor,))[0]

    unary.__name__ = unary.__qualname__ = public_name
    unary.__doc__ = (
        f"Computes {what or public_name} element-wise, as `tf.math.{public_name}`.\n\n"
        "Args:\n  x: a Tensor.\n  name: ignored.\n\nReturns:\n  A Tensor of the same shape."
        + ("" if differentiable else "\n\nThis op has no gradient: gradients through it are `None`.")
    )
    if paths:
        table.export(*paths, gradient=gradient, dtypes=_DTYPE_WORDS[allowed], note=note, op=op)(unary)
    return unary


def _elementwise_op(op_name: str, impl: Callable, allowed: str, differentiable: bool = True) -> OpDef:
    """The kernel of a broadcasting binary op: TF's dtype and broadcast checks before `impl`."""
    return OpDef(op_name, impl, differentiable, checks(dtype_check(op_name, allowed), broadcast_check(op_name)))


def _binary(
    public_name: str,
    op_name: str,
    impl: Callable,
    allowed: str = NUMERIC,
    differentiable: bool = True,
    what: str = "",
    paths: tuple[str, ...] = (),
    gradient: str | None = None,
    note: str = "",
    on_strings: Callable[[Tensor, Tensor], Tensor] | None = None,
) -> Callable[..., Tensor]:
    op = _elementwise_op(op_name, impl, allowed, differentiable)

    def binary(x: Any, y: Any, name: str | None = None) -> Tensor:
        try:
            operands = tuple(convert_same_dtype((x, y), op_name))
        except (ValueError, TypeError) as exc:
            return _on_ragged(binary, (x, y), exc)
        if on_strings is not None and operands[0]._dtype is dtypes.string:
            return on_strings(*operands)
        trace = _thread_state.trace
        if trace is not None and trace.symbolic:  # sizes only a call knows (`symbolic_broadcast`)
            operands = symbolic_broadcast.aligned(operands, op_name)
        return apply(op, operands)[0]

    binary.__name__ = binary.__qualname__ = public_name
    binary.__doc__ = (
        f"Returns {what or public_name} element-wise with broadcasting, as `tf.math.{public_name}`.\n\n"
        "Args:\n  x: a Tensor.\n  y: a Tensor of the same dtype (Python values are converted to it).\n"
        "  name: ignored.\n\nReturns:\n  A Tensor of the broadcast shape.\n\n"
        "Raises:\n  InvalidArgumentError: if the dtypes differ or the shapes do not broadcast."
    )
    if paths:
        table.export(*paths, gradient=gradient, dtypes=_DTYPE_WORDS[allowed], note=note, op=op)(binary)
    return binary


# -- elementwise unary -----------------------------------------------------------
negative = _unary("negative", "Neg", lax_kernels.negative, "fci", what="-x", paths=("math.negative", "negative"))
exp = _unary("exp", "Exp", lax_kernels.exp, what="e^x", paths=("math.exp", "exp"))
expm1 = _unary("expm1", "Expm1", jnp.expm1, paths=("math.expm1",))
log = _unary("log", "Log", lax_kernels.log, what="the natural logarithm", paths=("math.log",))
log1p = _unary("log1p", "Log1p", jnp.log1p, paths=("math.log1p",))
sin = _unary("sin", "Sin", jnp.sin, paths=("math.sin", "sin"))
cos = _unary("cos", "Cos", jnp.cos, paths=("math.cos", "cos"))
tan = _unary("tan", "Tan", jnp.tan, paths=("math.tan", "tan"))
tanh = _unary("tanh", "Tanh", lax_kernels.tanh, paths=("math.tanh", "tanh", "nn.tanh"))
sinh = _unary("sinh", "Sinh", jnp.sinh, paths=("math.sinh", "sinh"))
cosh = _unary("cosh", "Cosh", jnp.cosh, paths=("math.cosh", "cosh"))
sqrt = _unary(
    "sqrt",
    "Sqrt",
    sqrt_impl,
    what="the square root",
    paths=("math.sqrt", "sqrt"),
    gradient="tf",
    note="a zero upstream gives a zero gradient, even at a masked sqrt(0), as TF",
)
rsqrt = _unary("rsqrt", "Rsqrt", lax.rsqrt, what="1 / sqrt(x)", paths=("math.rsqrt",))
square = _unary("square", "Square", lax_kernels.square, NUMERIC, what="x * x", paths=("math.square", "square"))
_reciprocal = _unary("reciprocal", "Reciprocal", jnp.reciprocal, what="1 / x")


@table.export("math.reciprocal", dtypes=table.FLOAT)
@ragged_dispatch()
def reciprocal(x: TensorLike, name: str | None = None) -> Tensor:
    """1 / x element-wise. Integer inputs raise NotFoundError, as TF's CPU kernels do."""
    x = convert_to_tensor(x)
    if x.dtype.is_integer:
        raise missing_kernel("Reciprocal", f"T=DT_{x.dtype.name.upper()}")
    return _reciprocal(x)


sigmoid = _unary(
    "sigmoid", "Sigmoid", jax.nn.sigmoid, what="1 / (1 + exp(-x))", paths=("math.sigmoid", "sigmoid", "nn.sigmoid")
)
abs = _unary(
    "abs",
    "Abs",
    abs_impl,
    NUMERIC,
    what="the absolute value (gradient 0 at 0, as TF)",
    paths=("math.abs", "abs"),
    gradient="tf",
    note="abs'(0) is 0 (JAX: 1)",
)
_sign = _unary("sign", "Sign", jnp.sign, NUMERIC, what="the sign (its gradient is zeros, as TF)")


@table.export(
    "math.sign",
    "sign",
    gradient="zeros",
    dtypes=table.NUMERIC,
    note="complex x is divide_no_nan(x, abs(x)), differentiable, as TF",
)
@ragged_dispatch()
def sign(x: TensorLike, name: str | None = None) -> Tensor:
    """The sign of `x` element-wise, as `tf.math.sign`; its gradient is zeros for real `x`.

    As in TF, a complex `x` gives `x / |x|` (0 at 0), computed with
    `divide_no_nan`, and its gradient flows through that.
    """
    x = convert_to_tensor(x)
    if x._dtype.is_complex:
        return divide_no_nan(x, cast(abs(x), x._dtype))
    return _sign(x)


_round = _unary("round", "Round", jnp.round, "f", False, "round-half-to-even")


@table.export("math.round", "round", gradient="none", dtypes=table.REAL, note="integers come back unchanged")
def round(x: TensorLike, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Rounds half to even, as `tf.math.round`; integer tensors come back unchanged.

    This op has no gradient: gradients through it are `None`.
    """
    try:
        x = convert_to_tensor(x)
    except ValueError as exc:
        return _on_ragged(round, (x,), exc)
    _no_complex_kernel(x, "Round")
    return x if x._dtype.is_integer else _round(x)


floor = _unary("floor", "Floor", jnp.floor, "f", False, paths=("math.floor", "floor"))
ceil = _unary("ceil", "Ceil", jnp.ceil, "f", False, paths=("math.ceil",))
rint = _unary("rint", "Rint", jnp.round, "f", False, paths=("math.rint",))
is_nan = _unary("is_nan", "IsNan", jnp.isnan, "f", False, paths=("math.is_nan",))
is_inf = _unary("is_inf", "IsInf", jnp.isinf, "f", False, paths=("math.is_inf",))
is_finite = _unary("is_finite", "IsFinite", jnp.isfinite, "f", False, paths=("math.is_finite",))
logical_not = _unary(
    "logical_not", "LogicalNot", jnp.logical_not, "b", False, paths=("math.logical_not", "logical_not")
)
real = _unary("real", "Real", jnp.real, NUMERIC, what="the real part", paths=("math.real",))
_imag = _unary("imag", "Imag", jnp.imag, "c", what="the imaginary part")
_real_zeros_op = OpDef("ZerosLike", jnp.zeros_like, False)


@table.export("math.imag", dtypes=table.NUMERIC, note="a real input gives zeros with no gradient (None), as TF")
@ragged_dispatch()
def imag(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The imaginary part of `input`, as `tf.math.imag`.

    As in TF, a real `input` gives zeros of its own dtype that no gradient flows
    through (the gradient is `None`).
    """
    x = convert_to_tensor(input)
    return _imag(x) if x._dtype.is_complex else apply(_real_zeros_op, (x,))[0]


conj = _unary("conj", "Conj", jnp.conj, NUMERIC, what="the complex conjugate", paths=("math.conj",))
identity = _unary("identity", "Identity", lambda x: x, ANY, what="the identity", paths=("identity",))
_stop_gradient_op = OpDef("StopGradient", lax.stop_gradient, False)
asin = _unary("asin", "Asin", jnp.arcsin, paths=("math.asin", "asin"))
acos = _unary("acos", "Acos", jnp.arccos, paths=("math.acos", "acos"))
atan = _unary("atan", "Atan", jnp.arctan, paths=("math.atan", "atan"))
asinh = _unary("asinh", "Asinh", jnp.arcsinh, paths=("math.asinh", "asinh"))
acosh = _unary("acosh", "Acosh", jnp.arccosh, paths=("math.acosh", "acosh"))
atanh = _unary("atanh", "Atanh", jnp.arctanh, paths=("math.atanh", "atanh"))
erf = _unary("erf", "Erf", jax.scipy.special.erf, "f", paths=("math.erf",))
erfc = _unary("erfc", "Erfc", jax.scipy.special.erfc, "f", paths=("math.erfc",))
_lgamma = _unary("lgamma", "Lgamma", jax.scipy.special.gammaln, "f")
_digamma = _unary("digamma", "Digamma", digamma_impl, "f")


def _no_bfloat16_kernel(x: Tensor, op_name: str) -> None:
    """TF's CPU registers no bfloat16 kernel for Lgamma and Digamma: NotFoundError, as TF."""
    if x._dtype.name == "bfloat16":
        raise errors.NotFoundError(
            None,
            None,
            f"Could not find device for node: {{{{node {op_name}}}}} = {op_name}[T=DT_BFLOAT16]\n"
            f"All kernels registered for op {op_name}:\n  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; "
            f"T in [DT_FLOAT]\n  device='CPU'; T in [DT_HALF]\n [Op:{op_name}]",
        )


@table.export("math.lgamma", dtypes=table.REAL_FLOAT, note="bfloat16 raises NotFoundError, as TF's CPU kernels")
@ragged_dispatch()
def lgamma(x: TensorLike, name: str | None = None) -> Tensor:
    """log|Gamma(x)| element-wise, as `tf.math.lgamma`.

    Raises:
      NotFoundError: for bfloat16, which TF's CPU kernels do not support.
    """
    x = convert_to_tensor(x)
    _no_bfloat16_kernel(x, "Lgamma")
    return _lgamma(x)


@table.export(
    "math.digamma",
    dtypes=table.REAL_FLOAT,
    note="bfloat16 raises NotFoundError; a float16 gradient raises InvalidArgumentError, as TF",
)
@ragged_dispatch()
def digamma(x: TensorLike, name: str | None = None) -> Tensor:
    """The derivative of lgamma element-wise, as `tf.math.digamma`.

    Raises:
      NotFoundError: for bfloat16, which TF's CPU kernels do not support.
      InvalidArgumentError: when differentiated in float16 (TF's Polygamma has
        no half kernel), at the gradient call.
    """
    x = convert_to_tensor(x)
    _no_bfloat16_kernel(x, "Digamma")
    return _digamma(x)


softplus = _unary(
    "softplus", "Softplus", jax.nn.softplus, "f", what="log(1 + exp(x))", paths=("math.softplus", "nn.softplus")
)
softsign = _unary(
    "softsign", "Softsign", jax.nn.soft_sign, "f", what="x / (1 + |x|)", paths=("math.softsign", "nn.softsign")
)
log_sigmoid = _unary("log_sigmoid", "LogSigmoid", jax.nn.log_sigmoid, "f", paths=("math.log_sigmoid",))
atan2 = _binary("atan2", "Atan2", jnp.arctan2, "f", paths=("math.atan2", "atan2"))
xlogy = _binary(
    "xlogy",
    "Xlogy",
    xlogy_impl,
    FLOAT,
    what="x * log(y), 0 where x == 0",
    paths=("math.xlogy",),
    gradient="tf",
    note="the gradient is 0 where x == 0; complex gradients unconjugated, as TF",
)
xdivy = _binary(
    "xdivy",
    "Xdivy",
    xdivy_impl,
    FLOAT,
    what="x / y, 0 where x == 0",
    paths=("math.xdivy",),
    gradient="tf",
    note="complex gradients are not conjugated, as TF's XdivyGrad",
)
_divide_no_nan = _binary("divide_no_nan", "DivNoNan", divide_no_nan_impl, FLOAT, what="x / y, 0 where y == 0")


@table.export(
    "math.divide_no_nan",
    gradient="tf",
    dtypes=table.NUMERIC,
    note="finite gradients where y == 0; integers divide as float32/float64, as TF",
)
@ragged_dispatch("x", "y")
def divide_no_nan(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """x / y element-wise, 0 where y == 0, as `tf.math.divide_no_nan`.

    Integer inputs are cast to floats first, as in `truediv`.

    Raises:
      TypeError: if the dtypes differ or are not numeric.
    """
    if not is_tensor_like(x) and is_tensor_like(y):
        y = convert_to_tensor(y)
        x = convert_to_tensor(x, dtype=y.dtype)
    else:
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype_hint=x.dtype)
    x, y = same_dtype_for_division(x, y)
    if not (x._dtype.is_floating or x._dtype.is_complex or x._dtype.name in _INT_DIV_RESULT):
        raise TypeError(f"Invalid dtype tf.{x._dtype.name} in tf.math.divide_no_nan.")
    float_name = _INT_DIV_RESULT.get(x._dtype.name)
    if float_name is not None:
        x, y = cast(x, float_name), cast(y, float_name)
    return _divide_no_nan(x, y)


# -- elementwise binary -----------------------------------------------------------
add = _binary("add", "AddV2", lax_kernels.add, what="x + y", paths=("math.add", "add"), on_strings=lambda x, y: x + y)
subtract = _binary("subtract", "Sub", lax_kernels.subtract, what="x - y", paths=("math.subtract", "subtract"))
multiply = _binary("multiply", "Mul", lax_kernels.multiply, what="x * y", paths=("math.multiply", "multiply"))
_real_div = _binary("realdiv", "RealDiv", lax_kernels.true_divide, FLOAT, what="x / y")
_floordiv_op = _elementwise_op("FloorDiv", floordiv_impl, REAL_NUMERIC, False)
_floormod_op = _elementwise_op("FloorMod", floormod_impl, REAL_NUMERIC)


def _no_complex_kernel(x: Tensor, op_name: str) -> None:
    """TF registers no complex CPU kernel for some ops that allow complex types: NotFoundError, as TF."""
    if x._dtype.is_complex:
        raise missing_kernel(op_name, f"T=DT_{x._dtype.name.upper()}")


def _integer_division(op: OpDef, x: Tensor, y: Tensor) -> Tensor:
    """Applies FloorDiv/FloorMod with TF's CPU error for an integer division by zero.

    A concrete integer divisor is checked now; one known only when the program
    runs (computed under a tape, or traced by `tapeshim.function`) is checked
    inside it (`runtime_checks`), raising the same error after the run.
    """
    from tapeshim._src import runtime_checks  # import cycle: math_ops -> runtime_checks -> tensor -> math_ops

    def host_check(values: Any) -> None:
        if (np.asarray(values) == 0).any():
            raise errors.invalid_argument("Integer division by zero", op.name)

    static = runtime_checks.checked_static(y, host_check) if y._dtype.is_integer else ()
    return apply(op, (x, y), static)[0]


_DIVISION_BY_ZERO_NOTE = (
    "integer division by zero raises InvalidArgumentError (in the program for lazy divisors), as TF's CPU"
)


@table.export("math.floordiv", gradient="none", dtypes=table.REAL, note=_DIVISION_BY_ZERO_NOTE)
@ragged_dispatch("x", "y")
def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """floor(x / y) element-wise with broadcasting, as `tf.math.floordiv` (no gradient).

    Raises:
      InvalidArgumentError: if the dtypes differ, the shapes do not broadcast, or
        an integer `y` holds a zero (see `floormod`).
    """
    x, y = convert_same_dtype((x, y), "FloorDiv")
    _no_complex_kernel(x, "FloorDiv")
    return _integer_division(_floordiv_op, x, y)


@table.export("math.floormod", "math.mod", dtypes=table.REAL, note=_DIVISION_BY_ZERO_NOTE)
@ragged_dispatch("x", "y")
def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x - floor(x / y) * y element-wise with broadcasting, as `tf.math.floormod`.

    Raises:
      InvalidArgumentError: if the dtypes differ, the shapes do not broadcast, or
        an integer `y` holds a zero (checked inside the compiled program when
        `y` is only known there: computed under a tape, or traced by
        `tapeshim.function`).
    """
    x, y = convert_same_dtype((x, y), "FloorMod")
    return _integer_division(_floormod_op, x, y)


_pow = _binary("pow", "Pow", pow_impl, what="x ** y")


@table.export(
    "math.pow",
    "pow",
    dtypes=table.NUMERIC,
    gradient="tf",
    note="the gradient for y is 0 where x <= 0 (x == 0 for complex), as TF",
)
@ragged_dispatch("x", "y")
def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Computes x ** y element-wise with broadcasting, as `tf.math.pow`.

    Raises:
      InvalidArgumentError: if the dtypes differ, the shapes do not broadcast, or
        an integer is raised to a negative integer power.
    """
    x, y = convert_same_dtype((x, y), "Pow")
    if y._dtype.is_integer and y._value is not None and bool(jnp.any(y._value < 0)):
        raise errors.invalid_argument("Integers to negative integer powers are not allowed", "Pow")
    return _pow(x, y)


maximum = _binary(
    "maximum",
    "Maximum",
    maximum_impl,
    REAL_NUMERIC,
    what="max(x, y) (a tie's gradient goes to x)",
    paths=("math.maximum", "maximum"),
    gradient="tf",
    note="a tie's gradient goes to x (JAX: half each); NaN propagates, as TF",
)
minimum = _binary(
    "minimum",
    "Minimum",
    minimum_impl,
    REAL_NUMERIC,
    what="min(x, y) (a tie's gradient goes to x)",
    paths=("math.minimum", "minimum"),
    gradient="tf",
    note="a tie's gradient goes to x (JAX: half each); NaN propagates, as TF",
)
squared_difference = _binary(
    "squared_difference",
    "SquaredDifference",
    squared_difference_impl,
    paths=("math.squared_difference",),
    note="complex: (x - y) * conj(x - y), as TF",
)
equal = _binary("equal", "Equal", jnp.equal, ANY, False, "x == y", paths=("math.equal", "equal"))
not_equal = _binary("not_equal", "NotEqual", jnp.not_equal, ANY, False, "x != y", paths=("math.not_equal", "not_equal"))
less = _binary("less", "Less", jnp.less, REAL_NUMERIC, False, "x < y", paths=("math.less", "less"))
less_equal = _binary(
    "less_equal", "LessEqual", jnp.less_equal, REAL_NUMERIC, False, "x <= y", paths=("math.less_equal", "less_equal")
)
greater = _binary("greater", "Greater", jnp.greater, REAL_NUMERIC, False, "x > y", paths=("math.greater", "greater"))
greater_equal = _binary(
    "greater_equal",
    "GreaterEqual",
    jnp.greater_equal,
    REAL_NUMERIC,
    False,
    "x >= y",
    paths=("math.greater_equal", "greater_equal"),
)
logical_and = _binary(
    "logical_and", "LogicalAnd", jnp.logical_and, "b", False, paths=("math.logical_and", "logical_and")
)
logical_or = _binary("logical_or", "LogicalOr", jnp.logical_or, "b", False, paths=("math.logical_or", "logical_or"))
logical_xor = _binary("logical_xor", "LogicalXor", jnp.logical_xor, "b", False, paths=("math.logical_xor",))
_complex_op = OpDef("Complex", lax.complex, True, checks(dtype_check("Complex", "f"), broadcast_check("Complex")))
_cast_op = OpDef("Cast", cast_impl, True)
_matmul_op = OpDef("MatMul", matmul_impl, True, checks(matmul_types_check, matmul_check))
_reduce_ops = {
    "sum": OpDef("Sum", sum_impl, True, dtype_check("Sum", NUMERIC)),
    "mean": OpDef("Mean", mean_impl, True, dtype_check("Mean", NUMERIC)),
    "max": OpDef("Max", functools.partial(chooser_reduce, "max"), True, dtype_check("Max", REAL_NUMERIC)),
    "min": OpDef("Min", functools.partial(chooser_reduce, "min"), True, dtype_check("Min", REAL_NUMERIC)),
    "prod": OpDef(
        "Prod",
        lambda x, axis, keepdims: jnp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype),
        True,
        dtype_check("Prod", NUMERIC),
    ),
    "all": OpDef(
        "All", lambda x, axis, keepdims: jnp.all(x, axis=axis, keepdims=keepdims), False, dtype_check("All", "b")
    ),
    "any": OpDef(
        "Any", lambda x, axis, keepdims: jnp.any(x, axis=axis, keepdims=keepdims), False, dtype_check("Any", "b")
    ),
}


_INT_DIV_RESULT = {
    "int8": "float32",
    "uint8": "float32",
    "int16": "float32",
    "uint16": "float32",
    "int32": "float64",
    "uint32": "float64",
    "int64": "float64",
    "uint64": "float64",
}


_TRUEDIV_TYPES = (
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
"""The dtypes `tf.math.truediv` divides (TF's order, for its message)."""
_TRUEDIV_NAMES = frozenset(_TRUEDIV_TYPES)


@table.export("math.truediv", "truediv", dtypes=table.NUMERIC, note="integers divide as float32/float64, as TF")
@ragged_dispatch("x", "y")
def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Divides x / y element-wise; integer inputs are cast to floats first, as TF does.

    int8/int16/uint8/uint16 divide as float32, wider integers as float64.

    As in TF, `y` converts with `x`'s dtype as a hint (`first_anchored`).

    Raises:
      TypeError: if the dtypes differ.
      InvalidArgumentError: if the shapes do not broadcast.
    """
    x, y = same_dtype_for_division(*first_anchored(x, y))
    if x._dtype.name not in _TRUEDIV_NAMES:
        raise TypeError(
            f"Invalid dtype tf.{x._dtype.name} in __truediv__. Expected one of "
            f"{{{', '.join(f'tf.{name}' for name in _TRUEDIV_TYPES)}}}."
        )
    float_name = _INT_DIV_RESULT.get(x._dtype.name)
    if float_name is not None:
        x, y = cast(x, float_name), cast(y, float_name)
    return _real_div(x, y)


@table.export("math.divide", "divide", dtypes=table.NUMERIC)
def divide(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """Divides x / y element-wise, as `tf.math.divide` (see `truediv`).

    As in TF, an `x` that is not a tensor converts strictly to `y`'s dtype (a value it cannot take: TypeError),
    unless a `name` is given: `x` then converts as in `truediv`.
    """
    if name is None and is_plain_value(x) and is_tensor_like(y):
        tensor: Any = y  # (a Tensor or a Variable: read once, by `truediv`; a RaggedTensor `x` dispatches there)
        x = convert_to_tensor(x, dtype=tensor.dtype)
    return truediv(x, y)


@table.export(
    "cast", "dtypes.cast", dtypes=table.ANY, note="differentiable between floating/complex dtypes only", op=_cast_op
)
def cast(x: TensorLike, dtype: DTypeLike, name: str | None = None) -> Tensor:
    """Casts `x` to `dtype`, as `tf.cast`. Float-to-int truncates; complex-to-real keeps the real part.

    Casts between floating/complex dtypes are differentiable (the gradient comes
    back in the source's dtype); casts to or from integers and bool are not.
    """
    target = dtypes.as_dtype(dtype)
    try:
        x = convert_to_tensor(x)
    except ValueError as exc:
        return _on_ragged(lambda values: cast(values, target), (x,), exc)
    if x._dtype == target:
        return x
    return apply(_cast_op, (x,), (("dtype", target.name),))[0]


@table.export("complex", "dtypes.complex", dtypes=table.REAL_FLOAT, op=_complex_op)
@ragged_dispatch("real", "imag")
def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Builds complex numbers from real and imaginary parts, as `tf.complex`."""
    return apply(_complex_op, tuple(convert_same_dtype((real, imag), "Complex")))[0]


@table.export("stop_gradient", dtypes=table.ANY, op=_stop_gradient_op)
def stop_gradient(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Returns `input` unchanged, but gradients do not flow through it (they are `None`)."""
    return apply(_stop_gradient_op, (convert_to_tensor(input),))[0]


@table.export("linalg.matmul", "matmul", dtypes=table.NUMERIC, op=_matmul_op)
def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    output_type: Any = None,
    grad_a: bool = False,
    grad_b: bool = False,
    name: str | None = None,
) -> Tensor:
    """Multiplies matrices `a @ b` (rank >= 2, batched over leading dims), as `tf.linalg.matmul`.

    As TF's, a bfloat16 matrix times a float32 one (or a sparsity hint on float32 and bfloat16 matrices) is
    computed in float32, and an `output_type` other than the inputs' dtypes multiplies (u)int8 into int32 and
    bfloat16 with (u)int8 into bfloat16 (`matmul_types`).

    Raises:
      InvalidArgumentError: if the dtypes differ (otherwise than above) or the inner dimensions do not match.
      NotFoundError: an `output_type` TF's CPU has no kernel for.
    """
    if (transpose_a and adjoint_a) or (transpose_b and adjoint_b):
        side = "a" if transpose_a and adjoint_a else "b"
        raise ValueError(
            f"Only one of `transpose_{side}` and `adjoint_{side}` can be True. Received `transpose_{side}`=True, "
            f"`adjoint_{side}`=True."
        )
    a, b = first_anchored(a, b)
    result_dtype = None  # (TF's SparseMatMul or BatchMatMulV3: both operands cast to one dtype, the product maybe)
    if a._dtype is not b._dtype or output_type is not None or a_is_sparse or b_is_sparse:
        a, b, result_dtype = matmul_types.operands(a, b, output_type, bool(a_is_sparse or b_is_sparse), cast)
    a, b = convert_same_dtype((a, b), "MatMul")
    static = (
        ("adjoint_a", bool(adjoint_a)),
        ("adjoint_b", bool(adjoint_b)),
        ("transpose_a", bool(transpose_a)),
        ("transpose_b", bool(transpose_b)),
    )
    product = apply(_matmul_op, (a, b), static)[0]
    return product if result_dtype is None else cast(product, result_dtype)


def _reduce(kind: str, input_tensor: Any, axis: Any, keepdims: bool) -> Tensor:
    x = convert_to_tensor(input_tensor)
    axes = normalize_axis(axis, len(x._shape))
    return apply(_reduce_ops[kind], (x,), (("axis", axes), ("keepdims", bool(keepdims))))[0]


@table.export(
    "math.reduce_sum", "reduce_sum", dtypes=table.NUMERIC, note="bfloat16 accumulates in float32, as TF's CPU kernel"
)
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_sum")
def reduce_sum(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """Sums over `axis` (all axes when None), as `tf.math.reduce_sum`."""
    return _reduce("sum", input_tensor, axis, keepdims)


@table.export(
    "math.reduce_mean",
    "reduce_mean",
    dtypes=table.NUMERIC,
    note="integer means truncate; bfloat16 accumulates in float32, as TF",
)
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_mean")
def reduce_mean(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """Averages over `axis`; integer means truncate, as in TF."""
    return _reduce("mean", input_tensor, axis, keepdims)


@table.export(
    "math.reduce_max",
    "reduce_max",
    gradient="tf",
    dtypes=table.REAL,
    note="tied maxima share the gradient; a NaN result gives NaN gradients, as TF",
)
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_max")
def reduce_max(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The maximum over `axis`; tied maxima share the gradient equally, as in TF."""
    return _reduce("max", input_tensor, axis, keepdims)


@table.export(
    "math.reduce_min",
    "reduce_min",
    gradient="tf",
    dtypes=table.REAL,
    note="tied minima share the gradient; a NaN result gives NaN gradients, as TF",
)
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_min")
def reduce_min(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The minimum over `axis`; tied minima share the gradient equally, as in TF."""
    return _reduce("min", input_tensor, axis, keepdims)


@table.export("math.reduce_prod", "reduce_prod", dtypes=table.NUMERIC)
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_prod")
def reduce_prod(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The product over `axis`."""
    return _reduce("prod", input_tensor, axis, keepdims)


@table.export("math.reduce_all", "reduce_all", gradient="-", dtypes="bool")
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_all")
def reduce_all(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """Logical AND over `axis`."""
    return _reduce("all", input_tensor, axis, keepdims)


@table.export("math.reduce_any", "reduce_any", gradient="-", dtypes="bool")
@ragged_dispatch(impl="tapeshim._src.ragged_reductions:reduce_any")
def reduce_any(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """Logical OR over `axis`."""
    return _reduce("any", input_tensor, axis, keepdims)


def tensor_equals(x: Any, y: Any) -> Any:
    """`x == y` for tensors: elementwise, or False when `y` is None or shapes cannot broadcast."""
    if y is None:
        return False
    return _compare_or_constant(equal, x, y, False)


def tensor_not_equals(x: Any, y: Any) -> Any:
    """`x != y` for tensors: elementwise, or True when `y` is None or shapes cannot broadcast."""
    if y is None:
        return True
    return _compare_or_constant(not_equal, x, y, True)


def _compare_or_constant(op: Callable, x: Any, y: Any, otherwise: bool) -> Any:
    x_t = convert_to_tensor(x)
    y_t = convert_to_tensor(y, dtype_hint=x_t.dtype) if not is_tensor_like(y) else convert_to_tensor(y)
    try:
        broadcast_shapes(tuple(x_t._shape), tuple(y_t._shape))
    except ValueError:
        return convert_to_tensor(otherwise)
    return op(x_t, y_t)
