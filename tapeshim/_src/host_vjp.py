"""VJP kernels computed on the host from their op's forward jaxpr, without a JAX trace of the VJP.

The per-op tier differentiates a new structure op by op: each op's VJP kernel (`replay_eager`) is a
`jax.vjp` of the op's kernel, and its first calls run on the host from that VJP's trace (`interpret`). The
trace is what costs: JAX linearizes and transposes the op's Python at 100-300 us per equation, 5-20 ms for a
softmax cross-entropy, a quarter to a half of a first training step's time. The op's forward jaxpr is at hand
(its forward kernel ran on the host from it a moment before, and JAX caches it), so here the VJP is computed
from it directly: the forward equations whose values a backward rule reads (`_READS`) run with the
interpreter's NumPy rules, then a NumPy rule per primitive (`_RULES`) takes each equation's output cotangents
back to its inputs, as JAX's transpose rules do. Building that plan costs 0.2-0.8 ms.

A kernel qualifies only where every equation it runs has a rule here (calls are inlined; custom-JVP and
custom-VJP functions qualify by identity, `_CUSTOM`, each rule the derivative the function defines: JAX's
relu, tapeshim's TF gradients), or one traced from JAX's VJP of the equation that the interpreter runs
(`host_vjp_traced`: a convolution), and every value is a real float of 32 or 64 bits, an integer or a boolean:
anything else (complex numbers, random keys, other custom derivatives, loops, runtime checks) is traced as
before. Only a signature's first host calls come from here (`kernel_calls.UNTRACED_CALLS`); the VJP
is then traced, and compiles as before. Values follow JAX's VJP formulas in their order of operations (so the
compiled VJP's rounding, to the last bits), subnormals flushed as XLA's.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import (
    host_vjp_costs,
    host_vjp_traced,
    interpret,
    interpret_fpmode,
    interpret_plan,
    interpret_rules,
)
from tapeshim._src.interpret_blas import matmul
from tapeshim._src.interpret_flush import flush_subnormals, software_flush
from tapeshim._src.ops import math_kernels, nn_ops

stats = {"host_vjp_plans": 0}
"""VJP signatures computed here (each a plan made without a JAX trace of the VJP)."""

FLOATS = frozenset(np.dtype(name) for name in ("float32", "float64"))
"""The dtypes whose values carry cotangents here (real floats of 32 and 64 bits)."""
_OTHERS = frozenset(
    np.dtype(name) for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
)

Rule = Callable[[list, list, list, dict], list]
"""`rule(output cotangents, inputs, outputs, params)`: one input cotangent (or None: zero) per input."""

_RULES: dict[str, Rule] = {}

_APPLIES: dict[str, Callable[[Any], bool]] = {
    "reshape": lambda eqn: eqn.params.get("dimensions") is None and len(eqn.invars) == 1,
    "broadcast_in_dim": lambda eqn: len(eqn.invars) == 1,  # (dynamic shapes: more operands)
    "pad": lambda eqn: all(low >= 0 and high >= 0 for low, high, _ in eqn.params["padding_config"]),
}
"""Rules that hold only for some parameters: whether one holds for an equation (checked when a plan is made)."""

_READS: dict[str, str] = {
    **dict.fromkeys(
        (
            "neg", "add", "add_any", "sub", "reduce_sum", "broadcast_in_dim", "reshape", "squeeze", "transpose",
            "rev", "slice", "concatenate", "pad", "stack", "unstack", "split", "cumsum", "convert_element_type",
            "copy", "copy_p", "sign", "floor", "ceil", "round", "stop_gradient",
        ),
        "none",
    ),
    **dict.fromkeys(
        (
            "mul", "div", "log", "log1p", "sin", "cos", "square", "abs", "integer_pow", "select_n", "gather",
            "dynamic_slice", "dynamic_update_slice", "dot_general", "scatter-add", "scatter_add",
        ),
        "ins",
    ),
    **dict.fromkeys(("exp", "expm1", "tanh", "logistic", "top_k"), "outs"),
}  # fmt: skip
"""Which of an equation's values its rule reads: "none" (shapes and dtypes only), "ins", "outs"; "both" for
the others. A forward step runs only where a rule reads its values (`_Plan`)."""


class _Unsupported(Exception):
    """An equation without a rule here, or a value of another dtype: the VJP is traced as before."""


def _rule(*names: str) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for name in names:
            _RULES[name] = rule
        return rule

    return register


def _summed_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """A cotangent of a broadcast operand (a rank-0 operand of an elementwise primitive) summed to its shape."""
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + k for k, d in enumerate(shape) if d == 1 and g.shape[lead + k] != 1)
    return np.sum(g, axis=axes, keepdims=False).reshape(shape) if axes else g.reshape(shape)


class _Elementwise:
    """An elementwise primitive's rule, from one function per operand: `partial(g, inputs, outputs)` gives that
    operand's cotangent at the output's shape (summed to the operand's shape here); None for an operand no
    cotangent flows to (`for_live`: a constant's, as `x * 1.01`'s, would be computed, summed, then dropped)."""

    __slots__ = ("partials",)

    def __init__(self, partials: tuple) -> None:
        self.partials = partials

    def __call__(self, cts: list, ins: list, outs: list, params: dict) -> list:
        values = [None if partial is None else partial(cts[0], ins, outs) for partial in self.partials]
        return [None if value is None else _summed_to(value, np.shape(x)) for value, x in zip(values, ins)]

    def for_live(self, live: Sequence[bool]) -> "_Elementwise":
        return self if all(live) else _Elementwise(tuple(p if keep else None for p, keep in zip(self.partials, live)))


def _elementwise(name: str, *partials: Callable[[np.ndarray, list, list], np.ndarray | None]) -> None:
    _RULES[name] = _Elementwise(partials)


def _const(x: np.ndarray, value: float) -> np.ndarray:
    return np.asarray(value, dtype=x.dtype)


def _tanh_cotangent(scaled: np.ndarray, y: np.ndarray) -> np.ndarray:
    """JAX's tanh VJP from `scaled = g * (1 - y)`: `scaled + scaled * y`."""
    return scaled + scaled * y


def _balanced_eq(x: np.ndarray, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """JAX's max/min derivative: 1 where x is the result, a half where y ties with it, else 0."""
    return np.where(x == z, np.where(y == z, _const(z, 0.5), _const(z, 1)), _const(z, 0))


_elementwise("neg", lambda g, i, o: -g)
_elementwise("add", lambda g, i, o: g, lambda g, i, o: g)
_elementwise("add_any", lambda g, i, o: g, lambda g, i, o: g)
_elementwise("sub", lambda g, i, o: g, lambda g, i, o: -g)
_elementwise("mul", lambda g, i, o: g * i[1], lambda g, i, o: i[0] * g)
# (each in the order of JAX's transposed JVP: `g * x` never forms, so no overflow JAX's VJP would not have)
_elementwise("div", lambda g, i, o: g / i[1], lambda g, i, o: -((g * np.reciprocal(i[1] * i[1])) * i[0]))
_elementwise(
    "max", lambda g, i, o: g * _balanced_eq(i[0], o[0], i[1]), lambda g, i, o: g * _balanced_eq(i[1], o[0], i[0])
)
_elementwise(
    "min", lambda g, i, o: g * _balanced_eq(i[0], o[0], i[1]), lambda g, i, o: g * _balanced_eq(i[1], o[0], i[0])
)
_elementwise("exp", lambda g, i, o: g * o[0])
_elementwise("expm1", lambda g, i, o: g * (o[0] + _const(o[0], 1)))
_elementwise("log", lambda g, i, o: g / i[0])
_elementwise("log1p", lambda g, i, o: g / (i[0] + _const(i[0], 1)))
_elementwise("tanh", lambda g, i, o: _tanh_cotangent(g * (_const(o[0], 1) - o[0]), o[0]))
_elementwise("logistic", lambda g, i, o: g * (o[0] * (_const(o[0], 1) - o[0])))
_elementwise("sin", lambda g, i, o: g * np.cos(i[0]))
_elementwise("cos", lambda g, i, o: -(g * np.sin(i[0])))
_elementwise("sqrt", lambda g, i, o: g * (_const(i[0], 0.5) / o[0]))
_elementwise("rsqrt", lambda g, i, o: g * (_const(i[0], -0.5) * (o[0] / i[0])))
_elementwise("square", lambda g, i, o: g * (_const(i[0], 2) * i[0]))
_elementwise("abs", lambda g, i, o: interpret_rules.select(i[0] >= 0, g, -g))
_elementwise("copy", lambda g, i, o: g)
_elementwise("copy_p", lambda g, i, o: g)
for _zero_derivative in ("sign", "floor", "ceil", "round", "stop_gradient"):
    _elementwise(_zero_derivative, lambda g, i, o: None)


@_rule("integer_pow")
def _integer_pow(cts: list, ins: list, outs: list, params: dict) -> list:
    y = params["y"]
    if y == 0:
        return [None]
    x = ins[0]
    power = np.ones_like(x) if y == 1 else interpret_rules.RULES["integer_pow"](x, y=y - 1).astype(x.dtype)
    return [cts[0] * (_const(x, y) * power)]


@_rule("convert_element_type")
def _convert(cts: list, ins: list, outs: list, params: dict) -> list:
    return [cts[0].astype(ins[0].dtype) if ins[0].dtype in FLOATS else None]


@_rule("select_n")
def _select_n(cts: list, ins: list, outs: list, params: dict) -> list:
    which, cases, g = ins[0], ins[1:], cts[0]
    zero = np.zeros((), g.dtype)
    picked = [
        interpret_rules.select(which == k if which.dtype != np.bool_ else which == bool(k), g, zero)
        for k in range(len(cases))
    ]
    return [None] + [_summed_to(p, np.shape(case)) for p, case in zip(picked, cases)]


@_rule("reduce_sum")
def _reduce_sum(cts: list, ins: list, outs: list, params: dict) -> list:
    x = ins[0]
    kept = [1 if d in params["axes"] else n for d, n in enumerate(x.shape)]
    return [np.broadcast_to(cts[0].reshape(kept), x.shape)]


def _chooser_share(x: np.ndarray, kept_result: np.ndarray, axes: tuple) -> tuple[np.ndarray, np.ndarray]:
    """`(indicators, count)`: where `x` equals its max/min reduction over `axes`, and how many do (kept dims)."""
    indicators = (x == kept_result).astype(x.dtype)
    return indicators, np.sum(indicators, axis=axes, keepdims=True)


@_rule("reduce_max", "reduce_min")
def _reduce_chooser(cts: list, ins: list, outs: list, params: dict) -> list:
    # JAX's rule: the result's cotangent shared equally by the elements equal to it.
    x, axes = ins[0], tuple(params["axes"])
    kept = [1 if d in axes else n for d, n in enumerate(x.shape)]
    indicators, count = _chooser_share(x, outs[0].reshape(kept), axes)
    return [indicators * (cts[0].reshape(kept) / count)]


@_rule("broadcast_in_dim")
def _broadcast_in_dim(cts: list, ins: list, outs: list, params: dict) -> list:
    x, g = ins[0], cts[0]
    dims = tuple(params["broadcast_dimensions"])
    summed = np.sum(g, axis=tuple(d for d in range(g.ndim) if d not in dims)) if g.ndim > len(dims) else g
    ones = tuple(k for k, n in enumerate(np.shape(x)) if n == 1 and summed.shape[k] != 1)
    if ones:
        summed = np.sum(summed, axis=ones, keepdims=True)
    return [summed.reshape(np.shape(x))]


@_rule("reshape", "squeeze")
def _reshape(cts: list, ins: list, outs: list, params: dict) -> list:
    return [cts[0].reshape(np.shape(ins[0]))]


@_rule("transpose")
def _transpose(cts: list, ins: list, outs: list, params: dict) -> list:
    return [np.transpose(cts[0], np.argsort(params["permutation"]))]


@_rule("rev")
def _rev(cts: list, ins: list, outs: list, params: dict) -> list:
    return [np.flip(cts[0], tuple(params["dimensions"]))]


@_rule("slice")
def _slice(cts: list, ins: list, outs: list, params: dict) -> list:
    x = ins[0]
    strides = params["strides"] or (1,) * x.ndim
    out = np.zeros(x.shape, cts[0].dtype)
    out[tuple(slice(s, e, k) for s, e, k in zip(params["start_indices"], params["limit_indices"], strides))] = cts[0]
    return [out]


@_rule("concatenate")
def _concatenate(cts: list, ins: list, outs: list, params: dict) -> list:
    axis = params["dimension"]
    bounds = np.cumsum([np.shape(x)[axis] for x in ins])[:-1]
    return list(np.split(cts[0], bounds, axis=axis))


@_rule("pad")
def _pad(cts: list, ins: list, outs: list, params: dict) -> list:
    config = params["padding_config"]
    g = cts[0]
    inner = g[tuple(slice(low, n - high, interior + 1) for (low, high, interior), n in zip(config, g.shape))]
    return [inner, np.sum(g) - np.sum(inner)]


def _window(x_shape: tuple, starts: list, sizes: tuple) -> tuple:
    """The slices of a dynamic slice's window, its starts clamped as XLA's."""
    clamped = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, x_shape, sizes)]
    return tuple(slice(s, s + k) for s, k in zip(clamped, sizes))


@_rule("dynamic_slice")
def _dynamic_slice(cts: list, ins: list, outs: list, params: dict) -> list:
    x = ins[0]
    out = np.zeros(x.shape, cts[0].dtype)
    out[_window(x.shape, ins[1:], tuple(params["slice_sizes"]))] = cts[0]
    return [out] + [None] * (len(ins) - 1)


@_rule("dynamic_update_slice")
def _dynamic_update_slice(cts: list, ins: list, outs: list, params: dict) -> list:
    x, update, g = ins[0], ins[1], cts[0]
    window = _window(x.shape, ins[2:], update.shape)
    operand = np.array(g)
    operand[window] = 0
    return [operand, g[window]] + [None] * (len(ins) - 2)


@_rule("stack")
def _stack(cts: list, ins: list, outs: list, params: dict) -> list:
    return [np.take(cts[0], k, axis=params["axis"]) for k in range(len(ins))]


def _filled(cts: list, outs: list) -> list:
    return [np.zeros(np.shape(o), o.dtype) if g is None else g for g, o in zip(cts, outs)]


@_rule("unstack")
def _unstack(cts: list, ins: list, outs: list, params: dict) -> list:
    return [np.stack(_filled(cts, outs), axis=params["axis"])]


@_rule("split")
def _split(cts: list, ins: list, outs: list, params: dict) -> list:
    return [np.concatenate(_filled(cts, outs), axis=params["axis"])]


@_rule("cumsum")
def _cumsum(cts: list, ins: list, outs: list, params: dict) -> list:
    axis, g = params["axis"], cts[0]
    if params["reverse"]:
        return [np.cumsum(g, axis=axis, dtype=g.dtype)]
    return [np.flip(np.cumsum(np.flip(g, axis), axis=axis, dtype=g.dtype), axis)]


@_rule("gather")
def _gather(cts: list, ins: list, outs: list, params: dict) -> list:
    # JAX's transpose: a scatter-add of the cotangent into zeros, with the gather's dimension numbers.
    operand, indices = ins
    numbers = params["dimension_numbers"]
    scatter_numbers = jax.lax.ScatterDimensionNumbers(
        update_window_dims=tuple(numbers.offset_dims),
        inserted_window_dims=tuple(numbers.collapsed_slice_dims),
        scatter_dims_to_operand_dims=tuple(numbers.start_index_map),
        operand_batching_dims=tuple(numbers.operand_batching_dims),
        scatter_indices_batching_dims=tuple(numbers.start_indices_batching_dims),
    )
    zeros = np.zeros(operand.shape, cts[0].dtype)
    scatter_add = interpret_rules.RULES["scatter-add"]
    return [scatter_add(zeros, indices, cts[0], dimension_numbers=scatter_numbers, mode=params["mode"]), None]


@_rule("scatter-add", "scatter_add")
def _scatter_add(cts: list, ins: list, outs: list, params: dict) -> list:
    # JAX's transpose: the operand's cotangent is the output's; the updates' a gather of it at the indices.
    operand, indices, updates = ins
    g = cts[0]
    numbers = params["dimension_numbers"]
    window_dims = tuple(numbers.update_window_dims)
    inserted = tuple(numbers.inserted_window_dims)
    operand_batch = tuple(numbers.operand_batching_dims)
    gather_numbers = jax.lax.GatherDimensionNumbers(
        offset_dims=window_dims,
        collapsed_slice_dims=inserted,
        start_index_map=tuple(numbers.scatter_dims_to_operand_dims),
        operand_batching_dims=operand_batch,
        start_indices_batching_dims=tuple(numbers.scatter_indices_batching_dims),
    )
    windows = iter(window_dims)
    slice_sizes = tuple(
        1 if d in inserted or d in operand_batch else updates.shape[next(windows)] for d in range(g.ndim)
    )
    gather = interpret_rules.RULES["gather"]
    picked = gather(
        g, indices, dimension_numbers=gather_numbers, slice_sizes=slice_sizes, mode=params["mode"], fill_value=0
    )
    return [g, None, picked]


@_rule("top_k")
def _top_k(cts: list, ins: list, outs: list, params: dict) -> list:
    # The values' cotangent placed at their indices (distinct along the axis), zeros elsewhere.
    x, axis = ins[0], params.get("axis", -1)
    out = np.zeros(x.shape, cts[0].dtype)
    np.put_along_axis(out, outs[1].astype(np.int64), cts[0] + np.zeros((), cts[0].dtype), axis=axis)  # (-0 + 0)
    return [out]


@_rule("dot_general")
def _dot_general(cts: list, ins: list, outs: list, params: dict) -> list:
    # (`live_operands`, where a plan gives it: only the operands that carry a cotangent get one, `_Plan`)
    lhs, rhs = ins
    g = cts[0]
    live_lhs, live_rhs = params.get("live_operands", (True, True))
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    if lhs.ndim == 2 and rhs.ndim == 2 and len(lhs_contract) == 1 and not lhs_batch:
        # a matrix product (either operand transposed), without einsum's overhead
        d_lhs = d_rhs = None
        if live_lhs:
            d_a = matmul(g, (rhs if rhs_contract[0] == 0 else rhs.T).T)
            d_lhs = d_a if lhs_contract[0] == 1 else d_a.T
        if live_rhs:
            d_b = matmul((lhs if lhs_contract[0] == 1 else lhs.T).T, g)
            d_rhs = d_b if rhs_contract[0] == 0 else d_b.T
        return [d_lhs, d_rhs]
    n_batch = len(lhs_batch)
    if (
        lhs.ndim == rhs.ndim == n_batch + 2
        and tuple(lhs_batch) == tuple(rhs_batch) == tuple(range(n_batch))
        and tuple(lhs_contract) == (n_batch + 1,)
        and tuple(rhs_contract) == (n_batch,)
    ):  # a batch of matrix products
        return [
            matmul(g, np.swapaxes(rhs, -1, -2)) if live_lhs else None,
            matmul(np.swapaxes(lhs, -1, -2), g) if live_rhs else None,
        ]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs_labels = [next(letters) for _ in range(lhs.ndim)]
    rhs_labels = [""] * rhs.ndim
    for l_dim, r_dim in zip((*lhs_contract, *lhs_batch), (*rhs_contract, *rhs_batch)):
        rhs_labels[r_dim] = lhs_labels[l_dim]
    rhs_labels = [label or next(letters) for label in rhs_labels]
    out_labels = (
        [lhs_labels[d] for d in lhs_batch]
        + [lhs_labels[d] for d in range(lhs.ndim) if d not in lhs_contract and d not in lhs_batch]
        + [rhs_labels[d] for d in range(rhs.ndim) if d not in rhs_contract and d not in rhs_batch]
    )
    out_s, lhs_s, rhs_s = "".join(out_labels), "".join(lhs_labels), "".join(rhs_labels)
    path = ["einsum_path", (0, 1)]
    return [
        np.einsum(f"{out_s},{rhs_s}->{lhs_s}", g, rhs, optimize=path) if live_lhs else None,
        np.einsum(f"{out_s},{lhs_s}->{rhs_s}", g, lhs, optimize=path) if live_rhs else None,
    ]


def _relu(cts: list, ins: list, outs: list, params: dict) -> list:
    # jax.nn.relu's own derivative (and `nn_ops._relu`'s): 0 at 0.
    return [interpret_rules.select(ins[0] > 0, cts[0], np.zeros((), cts[0].dtype))]


def _xent_tf(cts: list, ins: list, outs: list, params: dict) -> list:
    # TF's SoftmaxCrossEntropyWithLogits gradient (`nn_ops._xent`): softmax - labels by the logits, -log_softmax
    # by the labels, along the reduced axis.
    labels, logits = ins
    axis = params["axis"]
    g = np.expand_dims(cts[0], axis)
    shifted = logits - np.max(logits, axis=axis, keepdims=True)
    unnormalized = np.exp(shifted)
    total = np.sum(unnormalized, axis=axis, keepdims=True)
    return [g * -(shifted - np.log(total)), g * (unnormalized / total - labels)]


def _abs_real(cts: list, ins: list, outs: list, params: dict) -> list:
    # TF's gradient of |x| (`math_kernels._abs_real`): sign(x), 0 at 0.
    return [np.sign(ins[0]) * cts[0]]


def _chooser_float(cts: list, ins: list, outs: list, params: dict) -> list:
    # TF's MinOrMaxGrad (`math_kernels._chooser_float`): NaN where no element equals the result (a NaN).
    axes = params["reduced_axes"]
    x = ins[0]
    kept_shape = [1 if d in axes else n for d, n in enumerate(x.shape)]
    indicators, count = _chooser_share(x, outs[0].reshape(kept_shape), axes)
    share = np.where(count > 0, indicators / np.maximum(count, _const(count, 1)), _const(x, np.nan))
    return [share * cts[0].reshape(kept_shape)]


def _sqrt_tf(cts: list, ins: list, outs: list, params: dict) -> list:
    # TF's SqrtGrad (`math_kernels._sqrt_reverse`): a zero upstream gives zero, even where 0.5 / y is not finite.
    g, y = cts[0], outs[0]
    return [np.where(g == 0, np.zeros((), g.dtype), g * _const(y, 0.5) / y)]


def _elu_tf(cts: list, ins: list, outs: list, params: dict) -> list:
    # TF's EluGrad (`nn_ops._elu_impl`), from the outputs: y + 1 below 0, else 1.
    y = outs[0]
    return [np.where(y < 0, y + _const(y, 1), _const(y, 1)) * cts[0]]


def _selu_tf(cts: list, ins: list, outs: list, params: dict) -> list:
    # TF's SeluGrad (`nn_ops._selu_impl`), from the outputs.
    y = outs[0]
    slope = np.where(y < 0, y + _const(y, nn_ops.SELU_SCALE_ALPHA), _const(y, nn_ops.SELU_SCALE))
    return [slope * cts[0]]


def _pow_tf(cts: list, ins: list, outs: list, params: dict) -> list:
    # TF's PowGrad (`math_kernels._pow_inexact`): y * x^(y - 1) for x; z * log(x) for y where x > 0, else 0.
    x, y = ins
    z, g = outs[0], cts[0]
    positive = x > 0
    log_x = np.where(positive, np.log(np.where(positive, x, _const(x, 1))), _const(x, 0))
    power = interpret_rules.RULES["pow"](x, y - _const(y, 1)).astype(z.dtype)
    return [_summed_to((y * power) * g, x.shape), _summed_to((z * log_x) * g, np.shape(y))]


def _source_of(fun: Any) -> str:
    """A function's source as a jaxpr's debug info gives it (`name at file:line`)."""
    fun = getattr(fun, "__wrapped__", fun)  # (jax.nn.relu is a jitted function)
    code = fun.__code__
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"


_CUSTOM: dict[str, tuple[Rule, str]] = {
    _source_of(jax.nn.relu.fun): (_relu, "ins"),  # type: ignore[attr-defined]
    _source_of(nn_ops._relu.fun): (_relu, "ins"),
    _source_of(nn_ops._xent.fun): (_xent_tf, "ins"),
    _source_of(math_kernels._abs_real.fun): (_abs_real, "ins"),
    _source_of(math_kernels._chooser_float.fun): (_chooser_float, "both"),
    _source_of(math_kernels._sqrt_reverse.fun): (_sqrt_tf, "outs"),
    _source_of(math_kernels._pow_inexact.fun): (_pow_tf, "both"),
    _source_of(nn_ops._elu_impl.fun): (_elu_tf, "outs"),
    _source_of(nn_ops._selu_impl.fun): (_selu_tf, "outs"),
}
"""The custom-JVP and custom-VJP functions whose derivative has a rule here, by their source (`_source_of`), with
what the rule reads (as `_READS`)."""


def _custom_rule(eqn: Any, called: jax_core.ClosedJaxpr) -> tuple[Rule, dict, str]:
    """The rule of a custom-JVP or custom-VJP call (computing `called`), its parameters and what it reads
    (`_READS`); raises `_Unsupported` for a function not in `_CUSTOM`."""
    debug = getattr(called.jaxpr, "debug_info", None)
    found = _CUSTOM.get(getattr(debug, "func_src_info", None) or "")
    if found is None or eqn.params.get("num_consts", 0):
        raise _Unsupported
    rule, reads = found
    params: dict = {}
    if rule is _chooser_float:
        reductions = [e for e in called.jaxpr.eqns if e.primitive.name in ("reduce_max", "reduce_min")]
        if len(reductions) != 1:
            raise _Unsupported
        params["reduced_axes"] = tuple(reductions[0].params["axes"])
    elif rule is _xent_tf:  # (its axis, a static argument: the one its sums reduce)
        sums = {tuple(e.params["axes"]) for e in called.jaxpr.eqns if e.primitive.name == "reduce_sum"}
        if len(sums) != 1 or len(next(iter(sums))) != 1:
            raise _Unsupported
        params["axis"] = next(iter(sums))[0]
    return rule, params, reads


def _check_dtype(var: Any) -> bool:
    """Whether a value is a real float (differentiated), raising `_Unsupported` for dtypes other than those and
    integers or booleans."""
    try:
        dtype = np.dtype(var.aval.dtype)
    except (AttributeError, TypeError):  # (no dtype, or one NumPy has not: a random key)
        raise _Unsupported from None
    if dtype in FLOATS:
        return True
    if dtype in _OTHERS:
        return False
    raise _Unsupported


class _Aval:
    """A value's stand-in where the backward rules read only its shape and dtype (its forward step is skipped)."""

    __slots__ = ("shape", "dtype", "ndim")

    def __init__(self, aval: Any) -> None:
        self.shape = tuple(aval.shape)
        self.dtype = np.dtype(aval.dtype)
        self.ndim = len(self.shape)


class _Plan:
    """A forward jaxpr lowered for its VJP: forward steps over numbered slots (calls inlined), each with its
    backward rule; called with the forward inputs and the given outputs' cotangents, it returns the floating
    inputs' cotangents. Only the forward steps whose values a backward rule reads run (`_READS`); the others'
    values are `_Aval` stand-ins."""

    __slots__ = (
        "template", "in_slots", "steps", "forward", "seeds", "results", "float_slots", "live", "fold", "kept",
        "zeros", "traced_products",
    )  # fmt: skip

    def __init__(
        self,
        closed: jax_core.ClosedJaxpr,
        given: Sequence[bool],
        wanted: Sequence[int] | None = None,
        kept: Sequence[int] = (),
        zero_inputs: bool = False,
    ) -> None:
        """`wanted`: the inputs whose cotangents it returns (None: every floating one). Given, only the values
        computed from them carry cotangents (`live`): an equation computing from the other inputs alone (a
        program's data, its constants) needs no rule, and no cotangent flows to them. `zero_inputs`: the
        wanted inputs are zeros at every call (a gradient program's perturbations), which an `add` returns its
        other operand beside, as XLA folds `x + 0` (keeping a negative zero's sign), as do constant zeros.
        `kept`: outputs whose values it returns too, after the cotangents."""
        self.template: list = []
        self.steps: list = []
        self.float_slots: set[int] = set()
        self.zeros: set[int] = set()  # slots holding zeros at every call (`wanted` inputs, constants)
        self.traced_products = 0  # multiply-adds of the traced rules' products (`host_vjp_traced`) per call
        invars = closed.jaxpr.invars
        self.live = wanted is not None
        self.fold = zero_inputs
        wanted = range(len(invars)) if wanted is None else wanted
        self.in_slots = [self._new(var, k in wanted) for k, var in enumerate(invars)]
        if zero_inputs:
            self.zeros.update(self.in_slots[k] for k in wanted)
        outs = self._inline(closed, self.in_slots)
        self.seeds = [slot for slot, has in zip(outs, given) if has]
        self.results = [self.in_slots[k] for k in wanted if _check_dtype(invars[k])]
        self.kept = [outs[k] for k in kept]
        needed: set[int] = set(self.kept)  # the slots whose values a backward rule reads, and the kept outputs
        for _, _, step_ins, step_outs, _, _, rule, _, reads in self.steps:
            if rule is not None and reads in ("ins", "both"):
                needed.update(step_ins)
            if rule is not None and reads in ("outs", "both"):
                needed.update(step_outs)
        forward = []  # the steps that compute them
        for step in reversed(self.steps):
            if any(slot in needed for slot in step[3]):
                forward.append(step[:6])
                needed.update(step[2])
        self.forward = forward[::-1]

    def _new(self, var: Any, live: bool = True) -> int:
        if _check_dtype(var) and live:
            self.float_slots.add(len(self.template))
        self.template.append(_Aval(var.aval))
        return len(self.template) - 1

    def _fixed(self, value: Any) -> int:
        if self.fold and interpret_plan.all_zero(value):
            self.zeros.add(len(self.template))
        self.template.append(value)
        return len(self.template) - 1

    def _inline(self, closed: jax_core.ClosedJaxpr, arg_slots: list) -> list:
        """Appends the steps of `closed` (called on `arg_slots`); returns its outputs' slots."""
        jaxpr = closed.jaxpr
        if jaxpr.effects:
            raise _Unsupported
        slots: dict = dict(zip(jaxpr.invars, arg_slots))
        for var, const in zip(jaxpr.constvars, closed.consts):
            _check_dtype(var)
            slots[var] = self._fixed(flush_subnormals(np.asarray(const)))

        def slot_of(var: Any) -> int:
            if isinstance(var, jax_core.Literal):
                return self._fixed(np.asarray(var.val, dtype=getattr(var.aval, "dtype", None)))
            return slots[var]

        for eqn in jaxpr.eqns:
            ins = [slot_of(var) for var in eqn.invars]
            name = eqn.primitive.name
            called = interpret_plan.called_jaxpr(eqn)
            custom = name in ("custom_jvp_call", "custom_vjp_call")
            if called is not None and not custom:
                if name not in ("pjit", "jit", "closed_call", "core_call"):
                    raise _Unsupported  # (a custom VJP, a remat)
                for var, slot in zip(eqn.outvars, self._inline(called, ins)):
                    slots[var] = slot
                continue
            live = not self.live or any(slot in self.float_slots for slot in ins)
            outs = [self._new(var, live) for var in eqn.outvars]
            for var, slot in zip(eqn.outvars, outs):
                slots[var] = slot
            for var in eqn.invars:
                _check_dtype(var)
            differentiable = any(slot in self.float_slots for slot in outs)
            if called is not None:  # (a custom JVP or VJP call; one no cotangent reaches needs only its forward)
                rule, rule_params, reads = _custom_rule(eqn, called) if differentiable else (None, {}, "none")
                if not interpret.supported(called):
                    raise _Unsupported
            else:
                rule = _RULES.get(name)
                if name not in interpret_rules.RULES:
                    raise _Unsupported
                applies = _APPLIES.get(name)
                if applies is not None and differentiable and not applies(eqn):
                    raise _Unsupported
                check = interpret_rules.SUPPORTED.get(name)
                if check is not None and not check(eqn.params):
                    raise _Unsupported
                rule_params, reads = eqn.params, _READS.get(name, "both")
                if rule is None and differentiable:  # (JAX's VJP of the equation, traced: a convolution)
                    traced = host_vjp_traced.rule_of(eqn, [slot in self.float_slots for slot in ins])
                    if traced is None:
                        raise _Unsupported
                    (rule, rule_params), reads = traced, "ins"
                    self.traced_products += rule_params["products"]
                live_operands = tuple(slot in self.float_slots for slot in ins)
                if isinstance(rule, _Elementwise) and differentiable:
                    rule = rule.for_live(live_operands)
                if name == "dot_general" and self.live and differentiable and not all(live_operands):
                    # (a layer's weights beside its data: one product, not two)
                    rule_params = {**eqn.params, "live_operands": live_operands}
            run, params, _ = interpret_plan.lowered(eqn)
            out_dtypes = [np.dtype(var.aval.dtype) for var in eqn.outvars]
            # (the levels of `interpret_plan._flushes`: `__call__` flushes those above its thread's level)
            flush = (
                2 if name in interpret_fpmode.ALWAYS_FLUSHED else int(name in interpret_plan.MAKE_SUBNORMALS or custom)
            )
            if self.fold:  # (XLA's folds of zeros: `x + 0` is `x`)
                if name in interpret_plan.ZERO_PRESERVING and ins[0] in self.zeros:
                    self.zeros.add(outs[0])
                kept = interpret_plan.kept_input(eqn, ins, self.zeros)
                if kept is not None:
                    run, params, flush = interpret_plan.copy_input, kept, 0
            self.steps.append(
                (run, params, ins, outs, out_dtypes, flush, rule if differentiable else None, rule_params, reads)
            )
        return [slot_of(var) for var in jaxpr.outvars]

    def __call__(self, args: list, budget: interpret_plan.Budget) -> list:
        env = list(self.template)
        n_inputs = len(self.in_slots)
        for index, value in zip(self.in_slots, args[:n_inputs]):
            env[index] = value
        level = interpret_fpmode.flush_level()  # (the results of steps flushing above it: flushed here)
        for run, params, ins, outs, out_dtypes, flush in self.forward:
            values = run([env[k] for k in ins], params, budget)
            for index, value, dtype in zip(outs, values, out_dtypes):
                value = np.asarray(value)
                if value.dtype != dtype:
                    value = value.astype(dtype)
                env[index] = flush_subnormals(value) if flush > level and dtype.kind == "f" else value
        cotangents: dict[int, np.ndarray] = {}
        for slot, seed in zip(self.seeds, args[n_inputs:]):
            _accumulate(cotangents, slot, np.asarray(seed), env[slot])
        float_slots = self.float_slots
        for _, _, ins, outs, _, _, rule, rule_params, _ in reversed(self.steps):
            if rule is None:
                continue
            if len(outs) == 1:
                g = cotangents.get(outs[0])
                if g is None:
                    continue
                grads = rule([g], [env[k] for k in ins], [env[outs[0]]], rule_params)
            else:
                cts = [cotangents.get(k) for k in outs]
                if all(g is None for g in cts):
                    continue
                grads = rule(cts, [env[k] for k in ins], [env[k] for k in outs], rule_params)
            for slot, grad in zip(ins, grads):
                if grad is not None and slot in float_slots:
                    _accumulate(cotangents, slot, grad, env[slot])
        results = []
        for slot in self.results:
            total = cotangents.get(slot)
            if total is None:
                total = np.zeros(env[slot].shape, env[slot].dtype)
            elif not total.flags.c_contiguous:  # (a broadcast view)
                total = np.array(total, order="C")
            results.append(total)
        return results + [env[slot] for slot in self.kept]


def _accumulate(cotangents: dict, slot: int, grad: np.ndarray, primal: np.ndarray) -> None:
    """Adds a cotangent (cast to its primal's dtype and flushed, as XLA's) to a slot's total."""
    if grad.dtype != primal.dtype:
        grad = grad.astype(primal.dtype)
    previous = cotangents.get(slot)
    cotangents[slot] = software_flush(grad if previous is None else previous + grad)


def vjp_plan(closed: jax_core.ClosedJaxpr, given: Sequence[bool], wanted: Sequence[int], kept: Sequence[int]) -> _Plan:
    """The VJP of `closed` computed on the host: `plan(inputs + the given outputs' cotangents, budget)` returns
    the `wanted` inputs' cotangents, then the `kept` outputs' values (`_Plan`; its `traced_products`: see
    `host_vjp_costs.products_fit`).

    Raises:
      Exception: where an operation has no host rule here (the caller traces the VJP instead).
    """
    return _Plan(closed, given, wanted, kept, zero_inputs=True)


def program(
    forward: Any, inputs: Sequence[Any], given: Sequence[bool], wanted: Sequence[bool] | None = None
) -> interpret.Prepared | None:
    """The host program of a VJP kernel's signature, `(inputs, cotangents) -> {position: input cotangent}` over
    the floating inputs, from the op's forward kernel (`forward`, a jitted function whose trace for `inputs`
    JAX has cached), or None where it does not qualify (the VJP is traced as before).

    Args:
      forward: the op's jitted kernel (`registry._Kernel.jitted`): `forward(*inputs)` returns its outputs.
      inputs: the forward inputs (host or device arrays).
      given: which of the forward's outputs get a cotangent.
      wanted: which inputs' cotangents it gives (None: every floating input's); a product's data then costs
        no product.
    """
    if not interpret.enabled():
        return None
    try:
        closed = forward.trace(*inputs).jaxpr
    except Exception:  # noqa: BLE001 - the forward kernel's own trace fails: the VJP kernel raises as before
        return None
    return program_of(closed, inputs, given, wanted)


def program_of(
    closed: jax_core.ClosedJaxpr, inputs: Sequence[Any], given: Sequence[bool], wanted: Sequence[bool] | None = None
) -> interpret.Prepared | None:
    """`program` from the forward's jaxpr on `inputs` (`closed`: a kernel's trace, or a Keras call family's
    made concrete for their sizes: `keras_program_families`)."""
    jaxpr = closed.jaxpr
    if len(jaxpr.invars) != len(inputs) or len(jaxpr.outvars) != len(given):
        return None
    if any(getattr(var.aval, "weak_type", False) for var in jaxpr.invars):
        return None  # (a weak input's cotangent is weak: NumPy's results are never weak)
    costs = host_vjp_costs.vjp_costs(closed)
    if costs is None:
        return None
    work, equations, products, core_price_s = costs
    try:
        plan = _Plan(closed, given, None if wanted is None else [k for k, w in enumerate(wanted) if w])
    except Exception:  # noqa: BLE001 - `_Unsupported`, or parameters a rule's lowering does not know: traced
        return None
    if not host_vjp_costs.products_fit(products, plan.traced_products):
        return None
    in_avals = [var.aval for var in jaxpr.invars] + [var.aval for var, has in zip(jaxpr.outvars, given) if has]
    floating = [
        k for k, var in enumerate(jaxpr.invars) if np.dtype(var.aval.dtype) in FLOATS and (wanted is None or wanted[k])
    ]
    out_tree = jax.tree.structure({k: 0 for k in floating})
    stats["host_vjp_plans"] += 1
    return interpret.Prepared.of_plan(
        plan,  # type: ignore[arg-type]
        work,
        in_avals,
        out_tree,
        equations,
        core_price_s,
    )
