"""NumPy implementations of JAX primitives, for the host interpreter (`interpret.py`).

Each rule takes the primitive's operands as NumPy arrays and its parameters as
keywords, and returns what XLA's CPU backend computes: the same dtypes and
shapes, XLA's semantics where NumPy's differ (integer division truncates, a
float converted to an integer saturates, dynamic slice starts are clamped,
gathers and scatters follow their dimension numbers and modes). A rule may
return a value of another dtype; the interpreter casts it to the output's dtype.

`SUPPORTED` names a rule's parameter check for primitives that only some
parameters allow; a primitive without a rule, or whose check fails, is not
interpreted (its program compiles instead).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import numpy as np

from tapeshim._src.interpret_blas import contiguous, matmul

Rule = Callable[..., Any]
RULES: dict[str, Rule] = {}
SUPPORTED: dict[str, Callable[[dict], bool]] = {}
PLAIN: dict[str, Callable[..., Any]] = {}
"""Rules that are one NumPy function of the operands alone (no parameter): the interpreter calls it directly."""


def _rule(*names: str, supported: Callable[[dict], bool] | None = None) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for name in names:
            RULES[name] = rule
            PLAIN.pop(name, None)
            if supported is not None:
                SUPPORTED[name] = supported
        return rule

    return register


def _unary(name: str, fn: Callable[[Any], Any]) -> None:
    RULES[name] = lambda x, **_: fn(x)
    PLAIN[name] = fn


def _binary(name: str, fn: Callable[[Any, Any], Any]) -> None:
    RULES[name] = lambda x, y, **_: fn(x, y)
    PLAIN[name] = fn


_UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": np.negative,
    "floor": np.floor,
    "ceil": np.ceil,
    "is_finite": np.isfinite,
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sqrt": np.sqrt,
    "cbrt": np.cbrt,
    "abs": np.abs,
    "square": np.square,
    "not": np.invert,
    "real": np.real,
    "imag": np.imag,
    "conj": np.conj,
}
for _name, _fn in _UNARY.items():
    _unary(_name, _fn)

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add,
    "add_any": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "atan2": np.arctan2,
    "nextafter": np.nextafter,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
for _name, _binary_fn in _BINARY.items():
    _binary(_name, _binary_fn)


@_rule("rsqrt")
def _rsqrt(x: Any, **_: Any) -> Any:
    return np.reciprocal(np.sqrt(x))


@_rule("logistic")
def _logistic(x: Any, **_: Any) -> Any:
    return np.reciprocal(np.exp(np.negative(x)) + x.dtype.type(1))


@_rule("complex")
def _complex(x: Any, y: Any, **_: Any) -> Any:
    x, y = np.broadcast_arrays(x, y)
    out = np.empty(x.shape, np.complex128 if x.dtype == np.float64 else np.complex64)
    out.real, out.imag = x, y  # not x + y * 1j, whose complex product turns inf into nan
    return out


@_rule("sign")
def _sign(x: Any, **_: Any) -> Any:
    if x.dtype.kind == "c":  # x / |x|, as XLA: nan for an infinite part
        magnitude = np.abs(x)
        return np.where(magnitude == 0, x, x / np.where(magnitude == 0, 1, magnitude))
    if x.dtype.kind == "f":
        return np.where(x == 0, x, np.sign(x))  # a zero keeps its sign
    return np.sign(x)


def _zero(dtype: np.dtype, negative: Any) -> Any:
    return np.where(negative, dtype.type(-0.0), dtype.type(0.0))


def _extreme(out: Any, negative_zero: Callable[[], Any]) -> Any:
    """`out` (an elementwise max or min) with XLA's sign on its zeros: -0 orders below +0."""
    if out.dtype.kind == "f":
        zero = out == 0
        if zero.any():
            return np.where(zero, _zero(out.dtype, negative_zero()), out)
    return out


def _one_value(operand: Any) -> Any:
    """`operand`'s one value as a 0-d array where it is a scalar or a scalar broadcast (`broadcast_in_dim`'s
    view of a large result: every stride 0, as ReLU's `max(x, 0)` binds it), else None."""
    if operand.ndim == 0:
        return operand
    if operand.size and not any(operand.strides):
        return operand[(0,) * operand.ndim]  # (a NumPy scalar; `reshape` would copy the whole view)
    return None


@_rule("max")
def _max(x: Any, y: Any, **_: Any) -> Any:
    if x.ndim and x.shape == y.shape:  # a scalar broadcast computes as the scalar (the result keeps the shape)
        scalar = _one_value(y)
        if scalar is not None:
            y = scalar
        elif (scalar := _one_value(x)) is not None:
            x = scalar
    out = np.maximum(x, y)
    for operand in (y, x):  # a scalar operand (ReLU's 0.0) settles the zeros' signs without the masks
        if operand.ndim == 0 and out.dtype.kind == "f":
            value = operand.item()
            if value != 0:  # (or NaN): a zero of `out` is the other operand's own, as XLA's
                return out
            if math.copysign(1.0, value) > 0:  # +0: every zero of `out` is +0 (-0 orders below it)
                return out + out.dtype.type(0)  # (-0 + 0 is +0; every other value stays as it is)
    return _extreme(out, lambda: np.signbit(x) & np.signbit(y))


@_rule("min")
def _min(x: Any, y: Any, **_: Any) -> Any:
    return _extreme(np.minimum(x, y), lambda: np.signbit(x) | np.signbit(y))


@_rule("div")
def _div(x: Any, y: Any, **_: Any) -> Any:
    if x.dtype.kind not in "iu":
        return np.divide(x, y)
    safe = np.where(y == 0, 1, y).astype(y.dtype)
    quotient = np.floor_divide(x, safe)
    if x.dtype.kind == "i":  # XLA truncates toward zero
        inexact = (x - quotient * safe) != 0
        quotient = np.where(inexact & ((x < 0) != (safe < 0)), quotient + 1, quotient)
    return np.where(y == 0, np.array(-1).astype(x.dtype), quotient)


@_rule("rem")
def _rem(x: Any, y: Any, **_: Any) -> Any:
    if x.dtype.kind not in "iu":
        return np.fmod(x, y)
    safe = np.where(y == 0, 1, y).astype(y.dtype)
    return np.where(y == 0, x, np.fmod(x, safe))


@_rule("pow")
def _pow(x: Any, y: Any, **_: Any) -> Any:
    return np.power(x, y)


@_rule("integer_pow")
def _integer_pow(x: Any, *, y: int, **_: Any) -> Any:
    if y == 0:
        return np.ones_like(x)
    return np.power(x, x.dtype.type(y))


@_rule("round")
def _round(x: Any, *, rounding_method: Any, **_: Any) -> Any:
    if int(rounding_method) == int(jax.lax.RoundingMethod.TO_NEAREST_EVEN):
        return np.rint(x)
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


BITWISE_SELECT_MIN = 4096
"""The fewest elements from which a two-way `select_n` picks with bit masks (`select`), not `np.where`."""

_UNSIGNED_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@_rule("select_n")
def _select_n(which: Any, *cases: Any, **_: Any) -> Any:
    if which.dtype == np.bool_:
        return select(which, cases[1], cases[0])
    if len(cases) > 32:  # NumPy's choose takes at most 64 choices: the program compiles instead
        raise NotImplementedError("select_n over more than 32 cases")
    return np.choose(which, cases, mode="clip")


def select(which: np.ndarray, if_true: np.ndarray, if_false: np.ndarray) -> np.ndarray:
    """`np.where(which, if_true, if_false)` for a bool `which` and `if_true` of its shape, bit for bit.

    `np.where` over a mask that is not all one value branches on each element: 1.9-2.0 ms over 0.5M floats
    (a ReLU's gradient in a compute-bound MLP step), measured. From `BITWISE_SELECT_MIN` elements the
    elements' bits are picked with a mask instead: 0.3 ms where `if_false` is a zero without a sign bit (a
    scalar or a broadcast one, as a ReLU's gradient's), 0.8 ms otherwise. Bits are copied exactly: NaNs,
    infinities and the zeros' signs stay as they are."""
    unsigned = _UNSIGNED_OF_SIZE.get(if_true.dtype.itemsize)
    if (
        unsigned is None
        or which.dtype != np.bool_
        or which.size < BITWISE_SELECT_MIN
        or if_true.dtype != if_false.dtype
        or if_true.shape != which.shape
        or if_false.shape not in (which.shape, ())
    ):
        return np.where(which, if_true, if_false)
    false_zero = not any(if_false.strides) and not if_false.view(unsigned).flat[0]  # (broadcast) +0, no sign bit
    if not false_zero and not if_false.shape:
        return np.where(which, if_true, if_false)
    out = np.empty(which.shape, if_true.dtype)
    bits = out.view(unsigned)
    np.subtract(unsigned(0), which, out=bits, dtype=unsigned)  # all ones where `which`, else zeros
    true_bits = if_true.view(unsigned)
    if false_zero:
        np.bitwise_and(bits, true_bits, out=bits)
        return out
    false_bits = if_false.view(unsigned)
    picked = np.bitwise_xor(true_bits, false_bits)
    np.bitwise_and(picked, bits, out=bits)
    np.bitwise_xor(bits, false_bits, out=bits)  # if_false ^ ((if_true ^ if_false) & mask)
    return out


@_rule("clamp")
def _clamp(low: Any, x: Any, high: Any, **_: Any) -> Any:
    return np.minimum(np.maximum(x, low), high)


def _saturating_int(x: Any, dtype: np.dtype) -> Any:
    """XLA's float-to-integer conversion: NaN gives 0, values outside the range the nearest bound."""
    info = np.iinfo(dtype)
    whole = np.trunc(x)
    # compared in float64: float32 cannot hold the int32 bounds exactly
    high = whole.astype(np.float64) >= float(info.max)
    low = whole.astype(np.float64) <= float(info.min)
    inside = np.where(high | low | np.isnan(whole), 0, whole).astype(dtype)
    return np.where(high, dtype.type(info.max), np.where(low, dtype.type(info.min), inside))


@_rule("convert_element_type")
def _convert(x: Any, *, new_dtype: Any, **_: Any) -> Any:
    dtype = np.dtype(new_dtype)
    if x.dtype.kind == "c" and dtype.kind != "c":  # the real part, as XLA
        x = np.real(x)
    if x.dtype.kind == "f" and dtype.kind in "iu":
        return _saturating_int(x, dtype)
    if dtype == np.bool_:
        return x != 0
    return x.astype(dtype)


class CheckFailed(Exception):
    """A `checkify.check` in an interpreted program failed; the argument is checkify's message."""


@_rule("check")
def _check(*operands: Any, err_tree: Any, **_: Any) -> list:
    # A check whose predicates (checkify's error flags: its bool operands) are all false passes; building the
    # error value costs 14-16 us a check, a small training step's label checks 30 us of its 0.5 ms host call
    if not any(operand.dtype == np.bool_ and operand.any() for operand in operands):
        return []
    # checkify's own error value, built from the check's operands, formats the message as a compiled run would
    message = jax.tree.unflatten(err_tree, list(operands)).get()
    if message is not None:
        raise CheckFailed(message)
    return []


@_rule("copy", "copy_p", "stop_gradient")
def _copy(x: Any, **_: Any) -> Any:
    return x


@_rule("optimization_barrier")
def _barrier(*xs: Any, **_: Any) -> list:
    return list(xs)


@_rule("device_put", supported=lambda params: all(d is None for d in params.get("devices", ())))
def _device_put(*xs: Any, **_: Any) -> list:
    return list(xs)


def _read_only_view(base: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A read-only view of the contiguous `base` with `shape` and `strides` (0 along repeated axes): what
    `np.broadcast_to` makes, at a tenth of its cost (0.3 us against 2.1 us, a copy of 4,096 floats 0.9 us)."""
    view = np.ndarray(shape, base.dtype, base, 0, strides)
    view.flags.writeable = False
    return view


@_rule("iota")
def _iota(*, dtype: Any, shape: tuple, dimension: int, **_: Any) -> Any:
    line = np.arange(shape[dimension], dtype=dtype)
    return _read_only_view(line, tuple(shape), tuple(line.itemsize if d == dimension else 0 for d in range(len(shape))))


@_rule("broadcast_in_dim")
def _broadcast_in_dim(x: Any, *, shape: tuple, broadcast_dimensions: tuple, **_: Any) -> Any:
    if x.shape == shape:
        return x
    if x.size == 1:  # one value (ReLU's zero): a view every rule reads as that value (`_one_value`)
        return _read_only_view(np.ascontiguousarray(x), tuple(shape), (0,) * len(shape))
    expanded = [1] * len(shape)
    for operand_dim, out_dim in enumerate(broadcast_dimensions):
        expanded[out_dim] = x.shape[operand_dim]
    if math.prod(shape) <= _SMALL:  # a copy: faster than NumPy's broadcast view for a small result
        out = np.empty(shape, x.dtype)
        out[...] = x.reshape(expanded)
        return out
    return np.broadcast_to(x.reshape(expanded), shape)


_SMALL = 1 << 14
"""Elements of a result small enough to build as a new array where NumPy's view functions cost more."""


@_rule("reshape")
def _reshape(x: Any, *, new_sizes: tuple, dimensions: tuple | None = None, **_: Any) -> Any:
    return (x if dimensions is None else np.transpose(x, dimensions)).reshape(new_sizes)


@_rule("squeeze")
def _squeeze(x: Any, *, dimensions: tuple, **_: Any) -> Any:
    return np.squeeze(x, axis=tuple(dimensions))


@_rule("transpose")
def _transpose(x: Any, *, permutation: tuple, **_: Any) -> Any:
    return np.transpose(x, permutation)


@_rule("rev")
def _rev(x: Any, *, dimensions: tuple, **_: Any) -> Any:
    return np.flip(x, axis=tuple(dimensions))


@_rule("concatenate")
def _concatenate(*xs: Any, dimension: int, **_: Any) -> Any:
    return np.concatenate(xs, axis=dimension)


@_rule("stack")
def _stack(*xs: Any, axis: int, **_: Any) -> Any:
    return np.stack(xs, axis=axis)


@_rule("unstack")
def _unstack(x: Any, *, axis: int, **_: Any) -> list:
    return [np.take(x, k, axis=axis) for k in range(x.shape[axis])]


@_rule("split")
def _split(x: Any, *, sizes: tuple, axis: int, **_: Any) -> list:
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


@_rule("pad")
def _pad(x: Any, value: Any, *, padding_config: tuple, **_: Any) -> Any:
    if any(interior for _, _, interior in padding_config):
        spread_shape = [n + max(n - 1, 0) * interior for n, (_, _, interior) in zip(x.shape, padding_config)]
        spread = np.full(spread_shape, value, dtype=x.dtype)
        spread[tuple(slice(None, None, interior + 1) for _, _, interior in padding_config)] = x
        x = spread
    widths = [(max(low, 0), max(high, 0)) for low, high, _ in padding_config]
    padded = np.pad(x, widths, constant_values=value) if any(a or b for a, b in widths) else x
    cuts = tuple(slice(max(-low, 0), n - max(-high, 0)) for n, (low, high, _) in zip(padded.shape, padding_config))
    return padded[cuts]


@_rule("slice")
def _slice(x: Any, *, start_indices: tuple, limit_indices: tuple, strides: tuple | None, **_: Any) -> Any:
    steps = strides or (1,) * len(start_indices)
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, steps))]


def _clamped_starts(shape: tuple, starts: tuple, sizes: tuple) -> list[int]:
    return [min(max(int(start), 0), dim - size) for dim, start, size in zip(shape, starts, sizes)]


@_rule("dynamic_slice")
def _dynamic_slice(x: Any, *starts: Any, slice_sizes: tuple, **_: Any) -> Any:
    begin = _clamped_starts(x.shape, starts, slice_sizes)
    return x[tuple(slice(b, b + size) for b, size in zip(begin, slice_sizes))]


@_rule("dynamic_update_slice")
def _dynamic_update_slice(x: Any, update: Any, *starts: Any, **_: Any) -> Any:
    begin = _clamped_starts(x.shape, starts, update.shape)
    out = np.array(x)
    out[tuple(slice(b, b + size) for b, size in zip(begin, update.shape))] = update
    return out


# -- reductions -------------------------------------------------------------------------------
def _identity(dtype: np.dtype, largest: bool) -> Any:
    """The identity of max (`largest=False`) or min (`largest=True`) reductions for `dtype`."""
    if dtype == np.bool_:
        return largest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if largest else info.min
    return np.inf if largest else -np.inf


@_rule("reduce_sum")
def _reduce_sum(x: Any, *, axes: tuple, **_: Any) -> Any:
    return np.asarray(np.add.reduce(x, axis=tuple(axes), dtype=x.dtype))  # (`np.sum` adds a wrapper's 1.4 us)


@_rule("reduce_prod")
def _reduce_prod(x: Any, *, axes: tuple, **_: Any) -> Any:
    return np.prod(x, axis=tuple(axes), dtype=x.dtype)


def _winning_zeros(x: Any, negative_wins: bool) -> Any:
    """Where `x` holds the zero a min (`negative_wins`: -0) or a max (+0) keeps: XLA orders -0 below +0."""
    return (x == 0) & (np.signbit(x) if negative_wins else ~np.signbit(x))


def _signed_zeros(out: Any, zero: Any, found: Any, negative_wins: bool) -> Any:
    """`out`, a float max or min, with its zeros (`zero`) signed as XLA's: winning where `found` says a winning
    zero (`_winning_zeros`) took part."""
    return np.where(zero, _zero(out.dtype, found if negative_wins else ~found), out)


def _signed_zero_extreme(x: Any, out: Any, axes: tuple, negative_wins: bool) -> Any:
    """A float max or min reduction's zeros with XLA's sign (-0 orders below +0)."""
    if out.dtype.kind != "f":
        return out
    zero = out == 0
    if not zero.any():
        return out
    return _signed_zeros(out, zero, np.any(_winning_zeros(x, negative_wins), axis=axes), negative_wins)


@_rule("reduce_max")
def _reduce_max(x: Any, *, axes: tuple, **_: Any) -> Any:
    # (the ufunc's own reduction: `np.max` adds a Python wrapper's 2 us)
    out = np.asarray(np.maximum.reduce(x, axis=tuple(axes), initial=_identity(x.dtype, largest=False)))
    return _signed_zero_extreme(x, out, tuple(axes), negative_wins=False)


@_rule("reduce_min")
def _reduce_min(x: Any, *, axes: tuple, **_: Any) -> Any:
    out = np.asarray(np.minimum.reduce(x, axis=tuple(axes), initial=_identity(x.dtype, largest=True)))
    return _signed_zero_extreme(x, out, tuple(axes), negative_wins=True)


@_rule("reduce_and")
def _reduce_and(x: Any, *, axes: tuple, **_: Any) -> Any:
    return np.all(x, axis=tuple(axes)) if x.dtype == np.bool_ else np.bitwise_and.reduce(x, axis=tuple(axes))


@_rule("reduce_or")
def _reduce_or(x: Any, *, axes: tuple, **_: Any) -> Any:
    return np.any(x, axis=tuple(axes)) if x.dtype == np.bool_ else np.bitwise_or.reduce(x, axis=tuple(axes))


@_rule("argmax", supported=lambda params: len(params["axes"]) == 1)
def _argmax(x: Any, *, axes: tuple, index_dtype: Any, **_: Any) -> Any:
    return np.argmax(x, axis=axes[0]).astype(index_dtype)


@_rule("argmin", supported=lambda params: len(params["axes"]) == 1)
def _argmin(x: Any, *, axes: tuple, index_dtype: Any, **_: Any) -> Any:
    return np.argmin(x, axis=axes[0]).astype(index_dtype)


def _cumulative(fn: Callable[..., Any]) -> Rule:
    def rule(x: Any, *, axis: int, reverse: bool, **_: Any) -> Any:
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis), axis)
        return fn(x, axis=axis)

    return rule


RULES["cumsum"] = _cumulative(lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype))
RULES["cumprod"] = _cumulative(lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype))


@_rule("dim_as_value")
def _dim_as_value(*, dim: int, **_: Any) -> Any:
    """A dimension's size as a value (`jnp.array(x.shape)` in a trace for every size; `dim` is resolved)."""
    return np.asarray(dim)


@_rule("sort", supported=lambda params: params["num_keys"] == 1)
def _sort(*xs: Any, dimension: int, **_: Any) -> list:
    order = np.argsort(xs[0], axis=dimension, kind="stable")
    return [np.take_along_axis(x, order, axis=dimension) for x in xs]


@_rule("top_k")
def _top_k(x: Any, *, k: int, axis: int = -1, **_: Any) -> list:
    # larger first, ties in index order: a stable ascending sort of an order-reversing key
    if x.dtype == np.bool_:
        key = ~x.astype(np.int8)
    elif x.dtype.kind in "iu":
        key = np.invert(x)
    else:  # XLA's total order: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN
        bits = x.view(np.int64 if x.dtype.itemsize == 8 else np.int32)
        ordered = bits ^ ((bits >> (8 * x.dtype.itemsize - 1)) & np.iinfo(bits.dtype).max)
        key = np.invert(ordered)
    order = np.take(np.argsort(key, axis=axis, kind="stable"), np.arange(k), axis=axis)
    return [np.take_along_axis(x, order, axis=axis), order.astype(np.int32)]


# -- contractions -----------------------------------------------------------------------------
@_rule("dot_general")
def _dot_general(lhs: Any, rhs: Any, *, dimension_numbers: tuple, preferred_element_type: Any = None, **_: Any) -> Any:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if preferred_element_type is not None:
        dtype = np.dtype(preferred_element_type)
        lhs, rhs = lhs.astype(dtype, copy=False), rhs.astype(dtype, copy=False)
    if lhs.ndim == 2 and rhs.ndim == 2 and len(lhs_contract) == 1 and not lhs_batch:  # a layer's, or its gradients
        return matmul(lhs.T if lhs_contract[0] == 0 else lhs, rhs.T if rhs_contract[0] == 1 else rhs)
    lhs_free = [d for d in range(lhs.ndim) if d not in lhs_contract and d not in lhs_batch]
    rhs_free = [d for d in range(rhs.ndim) if d not in rhs_contract and d not in rhs_batch]
    batch_shape = [lhs.shape[d] for d in lhs_batch]
    lhs_free_shape = [lhs.shape[d] for d in lhs_free]
    rhs_free_shape = [rhs.shape[d] for d in rhs_free]
    contracted = math.prod(lhs.shape[d] for d in lhs_contract)
    left = np.transpose(lhs, [*lhs_batch, *lhs_free, *lhs_contract]).reshape(
        [*batch_shape, math.prod(lhs_free_shape), contracted]
    )
    right = np.transpose(rhs, [*rhs_batch, *rhs_contract, *rhs_free]).reshape(
        [*batch_shape, contracted, math.prod(rhs_free_shape)]
    )
    return matmul(left, right).reshape([*batch_shape, *lhs_free_shape, *rhs_free_shape])


def _dilated(x: Any, dilation: tuple, first_axis: int) -> Any:
    """`x` with `d - 1` zeros between neighbours along `len(dilation)` axes from `first_axis` on (XLA's lhs
    dilation)."""
    if all(d == 1 for d in dilation):
        return x
    shape = list(x.shape)
    for k, d in enumerate(dilation):
        shape[first_axis + k] = (x.shape[first_axis + k] - 1) * d + 1 if x.shape[first_axis + k] else 0
    out = np.zeros(shape, x.dtype)
    out[(slice(None),) * first_axis + tuple(slice(None, None, d) for d in dilation)] = x
    return out


def _padded(x: Any, padding: tuple, first_axis: int) -> Any:
    """`x` padded with zeros (or cut, for negative padding) along `len(padding)` axes from `first_axis` on."""
    widths = [(0, 0)] * first_axis + [(max(low, 0), max(high, 0)) for low, high in padding]
    widths += [(0, 0)] * (x.ndim - len(widths))
    if any(low or high for low, high in widths):
        x = np.pad(x, widths)
    cuts = (slice(None),) * first_axis + tuple(
        slice(max(-low, 0), x.shape[first_axis + k] - max(-high, 0)) for k, (low, high) in enumerate(padding)
    )
    return x[cuts]


@_rule(
    "conv_general_dilated",
    supported=lambda params: min(params["batch_group_count"], params["feature_group_count"]) == 1,
)
def _conv(
    lhs: Any,
    rhs: Any,
    *,
    window_strides: tuple,
    padding: tuple,
    lhs_dilation: tuple,
    rhs_dilation: tuple,
    dimension_numbers: Any,
    feature_group_count: int,
    batch_group_count: int,
    preferred_element_type: Any = None,
    **_: Any,
) -> Any:
    # XLA's convolution as matrix products (over the patch matrix, or one per kernel position, summed):
    # lhs as (N, C, spatial...), rhs as (O, I, spatial...), output laid out as `out_spec` says.
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if preferred_element_type is not None:
        dtype = np.dtype(preferred_element_type)
        lhs, rhs = lhs.astype(dtype, copy=False), rhs.astype(dtype, copy=False)
    kernel = np.transpose(rhs, rhs_spec)
    out_features, group_channels = kernel.shape[:2]
    sizes = kernel.shape[2:]
    rank = len(sizes)
    # (N, spatial..., C): a channels-last view (of NHWC data, its own layout), dilated and padded
    x = np.transpose(lhs, (lhs_spec[0], *lhs_spec[2:], lhs_spec[1]))
    x = _padded(_dilated(x, lhs_dilation, 1), padding, 1)
    n, channels = x.shape[0], x.shape[-1]
    spans = [(size - 1) * d + 1 for size, d in zip(sizes, rhs_dilation)]
    out_spatial = [
        max((extent - span) // stride + 1, 0) for extent, span, stride in zip(x.shape[1:-1], spans, window_strides)
    ]
    if batch_group_count > 1:  # batch groups (a grouped convolution's filter gradient) pair with output groups
        groups = batch_group_count
        n = n // groups
        x = np.moveaxis(x.reshape(groups, n, *x.shape[1:]), 0, -2)  # (N / groups, spatial..., groups, C)
    else:
        groups = feature_group_count
        x = x.reshape(*x.shape[:-1], groups, channels // groups)  # (N, spatial..., groups, C / groups)
    kernel = kernel.reshape(groups, out_features // groups, group_channels, *sizes)
    result_type = np.result_type(x, kernel)
    patch_bytes = n * groups * group_channels * math.prod(sizes) * math.prod(out_spatial) * result_type.itemsize
    if patch_bytes <= _PATCH_BYTES:
        out = _conv_by_patches(x, kernel, sizes, out_spatial, rhs_dilation, window_strides)
    else:
        out = _conv_by_positions(x, kernel, sizes, out_spatial, rhs_dilation, window_strides, result_type)
    # (N, out spatial..., O) -> (N, O, out spatial...) -> as `out_spec` lays it out
    out = np.transpose(out.astype(result_type, copy=False), (0, rank + 1, *range(1, rank + 1)))
    return np.transpose(out, np.argsort(out_spec))


_PATCH_BYTES = 2**25
"""The largest patch matrix (`_conv_by_patches`) a convolution builds, in bytes (32 MiB: 8M float32 elements);
a larger one sums over the kernel positions instead, one matrix product each."""


def _conv_by_patches(x: Any, kernel: Any, sizes: tuple, out_spatial: list, rhs_dilation: tuple, strides: tuple) -> Any:
    """The convolution of `x` (N, spatial..., G, Cg) with `kernel` (G, Og, Cg, sizes...), as (N, out spatial...,
    G * Og): one matrix product per group over the patch matrix (every kernel position at every output position),
    in the arguments' dtype, as XLA's CPU convolution (Eigen's) computes it."""
    rank = len(sizes)
    n, groups, channels, out_group = x.shape[0], x.shape[-2], x.shape[-1], kernel.shape[1]
    if not math.prod(out_spatial):  # (no output position: a window larger than the input)
        return np.zeros((n, *out_spatial, groups * out_group), np.result_type(x, kernel))
    spans = [(size - 1) * dilation + 1 for size, dilation in zip(sizes, rhs_dilation)]
    windows = np.lib.stride_tricks.sliding_window_view(x, spans, axis=tuple(range(1, 1 + rank)))
    # (N, window starts..., G, Cg, window offsets...): the strided starts and dilated offsets, a view
    windows = windows[
        (slice(None),)
        + tuple(slice(0, (extent - 1) * stride + 1, stride) for extent, stride in zip(out_spatial, strides))
        + (slice(None), slice(None))
        + tuple(slice(None, None, dilation) for dilation in rhs_dilation)
    ]
    # (G, N, out spatial..., sizes..., Cg), copied once: channels innermost, as NHWC data holds them (a strided
    # view: NumPy's fancy indexing gathered each element, 3-10x slower)
    patches = contiguous(
        np.transpose(windows, (1 + rank, 0, *range(1, 1 + rank), *range(3 + rank, 3 + 2 * rank), 2 + rank))
    ).reshape(groups, n * math.prod(out_spatial), math.prod(sizes) * channels)
    # (G, sizes..., Cg, Og), as the patches' columns
    weights = np.transpose(kernel, (0, *range(3, 3 + rank), 2, 1)).reshape(
        groups, math.prod(sizes) * channels, out_group
    )
    out = matmul(patches, weights)  # (G, N * out positions, Og)
    out = np.moveaxis(out.reshape(groups, n, *out_spatial, out_group), 0, -2)
    return out.reshape(n, *out_spatial, groups * out_group)  # (sizes spelled out: a zero batch or no features)


def _conv_by_positions(
    x: Any, kernel: Any, sizes: tuple, out_spatial: list, rhs_dilation: tuple, strides: tuple, result_type: Any
) -> Any:
    """`_conv_by_patches`' convolution without its patch matrix: one product per kernel position, summed in
    float64 for float32 arguments (closer to XLA's single fused sum than rounding after each position)."""
    wide = np.float64 if result_type == np.float32 else result_type
    n, groups, out_group = x.shape[0], x.shape[-2], kernel.shape[1]
    out = np.zeros((n, *out_spatial, groups, out_group), wide)
    for position in np.ndindex(*sizes):
        window = tuple(
            slice(p * d, p * d + (o - 1) * stride + 1, stride) if o else slice(0, 0)
            for p, d, o, stride in zip(position, rhs_dilation, out_spatial, strides)
        )
        patch = x[(slice(None),) + window]  # (N, out spatial..., G, Cg)
        weights = kernel[(slice(None), slice(None), slice(None)) + position]  # (G, Og, Cg)
        out += np.einsum(  # (`optimize`: as a BLAS product, 6x NumPy's own loop here)
            "n...gc,goc->n...go", patch.astype(wide, copy=False), weights.astype(wide, copy=False), optimize=True
        )
    return out.reshape(n, *out_spatial, groups * out_group)


from tapeshim._src import (  # noqa: E402 - registering rules of their own
    interpret_gathers,  # noqa: F401 - the gather and scatter rules
    interpret_random,  # noqa: F401 - the random-number and shift rules
    interpret_windows,  # noqa: F401 - the pooling rules
)
