"""Host VJP rules traced from JAX's own, for the primitives `host_vjp` has no NumPy rule for (a convolution).

`host_vjp` computes a VJP on the host with a NumPy rule per primitive. A primitive without one (a
convolution: its input and filter cotangents are convolutions of their own, with dilations and groups) made
the whole program fall back to its JAX trace: a Keras CNN step's first call traced its whole VJP (about 17 ms)
after a forward trace spent for nothing. Here such an equation gets a rule from JAX: the VJP of that one
equation (`jax.vjp` of the primitive bound with the equation's parameters) is traced once per primitive,
parameters, argument types and differentiated operands, and its jaxpr runs in the host interpreter
(`interpret_plan.HostPlan`). It computes the VJP the compiled program computes for that equation, with the
interpreter's rounding (a convolution's cotangents by its convolution rule, which sums in another order than
XLA's: TF's values to rounding). An equation whose VJP the interpreter cannot run (or JAX cannot trace) has no
rule: the caller traces as before.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import host_vjp_costs, interpret, interpret_cost, interpret_plan, jaxpr_inline

_SIZE = 256
_plans: OrderedDict = OrderedDict()
"""(primitive, parameters, argument types, differentiated operands) -> its VJP's host plan and its products'
multiply-adds, or None (none)."""
_lock = threading.Lock()  # (plans are made on any thread that differentiates)

stats = {"traced_vjp_rules": 0, "rebound_vjp_rules": 0}
"""Equations' VJPs traced here (each a primitive's VJP at one set of parameters and argument types), and those
bound at new sizes from an earlier trace's equations (`_rebound`)."""


def rule_of(eqn: Any, live_operands: Sequence[bool]) -> tuple[Callable[[list, list, list, dict], list], dict] | None:
    """`(rule, rule parameters)` for `eqn` (a `host_vjp.Rule` computing the cotangents of its live floating
    operands, reading its inputs; its parameters' `products`: the multiply-adds of its products per call), or
    None where its VJP cannot be computed on the host.

    Args:
      eqn: a forward equation with no NumPy VJP rule (no effects, no called jaxprs).
      live_operands: which operands carry cotangents, real floats only (`host_vjp._Plan`'s floating slots; the
        others get none: a convolution's data operand).
    """
    if eqn.effects or interpret_plan.inner_jaxprs(eqn) is not None:
        return None
    floats = tuple(k for k, live in enumerate(live_operands) if live)
    if not floats:
        return None
    key = _key(eqn, floats)
    with _lock:
        known = key is not None and key in _plans
        if known:
            _plans.move_to_end(key)
            plan = _plans[key]
    if not known:
        plan = _traced_plan(eqn, floats, key)
        if key is not None:
            with _lock:
                _plans[key] = plan
                if len(_plans) > _SIZE:
                    _plans.popitem(last=False)
    if plan is None:
        return None
    outs = [(tuple(var.aval.shape), np.dtype(var.aval.dtype)) for var in eqn.outvars]
    return _apply, {"plan": plan[0], "floats": floats, "outs": outs, "products": plan[1]}


def _key(eqn: Any, floats: tuple) -> tuple | None:
    """The cache key of an equation's VJP, or None where its parameters cannot be hashed."""
    avals = tuple(
        (tuple(v.aval.shape), np.dtype(v.aval.dtype), getattr(v.aval, "weak_type", False)) for v in eqn.invars
    )
    key = (eqn.primitive, tuple(sorted(eqn.params.items())), avals, floats)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class _Sizes:
    """The VJPs traced of one convolution at sizes that set no parameter of its VJP (`_batchless`): the first
    one's jaxpr and argument shapes, and whether the second, at other sizes, had the same equations with the
    same parameters (None: no second yet)."""

    __slots__ = ("closed", "shapes", "size_free")

    def __init__(self, closed: jax_core.ClosedJaxpr, shapes: tuple) -> None:
        self.closed = closed
        self.shapes = shapes
        self.size_free: bool | None = None


_sizes: OrderedDict = OrderedDict()
"""A convolution's `_key` without its free sizes (`_batchless`) -> its `_Sizes` (an LRU bounded as `_plans`)."""


def _batchless(eqn: Any, key: tuple | None) -> tuple | None:
    """`key` (a convolution's) with its input's batch size erased, and its spatial sizes where its strides and
    input dilations are 1, every other size kept; None for other primitives, whose sizes are not known to be free.

    A filter's size sets the cotangents' padding, and so does a spatial size where the convolution strides: JAX
    pads the input's cotangent by the window less the forward's padding and the filter's by the output's size
    against the input's, which with strides of 1 is the forward's padding again (a text model's convolution
    over a new length: 2.7 ms of its step for the trace)."""
    if key is None or eqn.primitive.name != "conv_general_dilated":
        return None
    params = eqn.params
    spec = params["dimension_numbers"].lhs_spec
    free = {spec[0]}
    if all(s == 1 for s in params["window_strides"]) and all(d == 1 for d in params["lhs_dilation"]):
        free.update(spec[2:])
    (lhs_shape, *lhs_rest), *others = key[2]
    erased = tuple(-1 if axis in free else size for axis, size in enumerate(lhs_shape))
    return (*key[:2], ((erased, *lhs_rest), *others), key[3])


def _traced_plan(eqn: Any, floats: tuple, key: tuple | None) -> tuple[interpret_plan.HostPlan, int] | None:
    """The host plan of `(inputs, output cotangents) -> the cotangents of the operands at `floats``, traced from
    JAX's VJP of the equation, and the multiply-adds of its products; None where JAX cannot trace it or the
    interpreter cannot run it.

    A convolution at a new batch size (or length) whose VJP was traced at two other sizes with the same equations and
    parameters (its cotangents' convolutions take the same parameters) binds those equations at the new sizes
    (`_rebound`, 0.3 ms) instead of tracing JAX's VJP again (3-4 ms).
    """
    in_structs = [_struct(var.aval) for var in eqn.invars]
    out_structs = [_struct(var.aval) for var in eqn.outvars]
    batchless = _batchless(eqn, key)
    with _lock:
        known = _sizes.get(batchless) if batchless is not None else None
        if known is not None:
            _sizes.move_to_end(batchless)
    if known is not None and known.size_free:
        closed = _rebound(known.closed, in_structs, out_structs, [in_structs[k] for k in floats])
        if closed is not None:
            with _lock:
                stats["rebound_vjp_rules"] += 1
            return interpret_plan.HostPlan(closed), interpret_cost.program_multiply_adds(
                closed, host_vjp_costs.called_jaxprs
            )
    closed = _vjp_jaxpr(eqn, floats, in_structs, out_structs)
    if closed is None:
        return None
    if batchless is not None and key is not None:
        shapes = tuple(shape for shape, _, _ in key[2])
        with _lock:
            if known is None:
                _sizes[batchless] = _Sizes(closed, shapes)
                if len(_sizes) > _SIZE:
                    _sizes.popitem(last=False)
            elif known.size_free is None and shapes != known.shapes:  # (the same sizes again prove nothing)
                known.size_free = _same_equations(known.closed, closed)
    with _lock:
        stats["traced_vjp_rules"] += 1
    products = interpret_cost.program_multiply_adds(closed, host_vjp_costs.called_jaxprs)
    return interpret_plan.HostPlan(closed), products


def _rebound(
    closed: jax_core.ClosedJaxpr, in_structs: list, out_structs: list, wanted: list
) -> jax_core.ClosedJaxpr | None:
    """`closed`'s equations bound at the sizes of `in_structs` and `out_structs`, or None where they do not
    bind there or give cotangents of other types than `wanted`'s."""
    try:
        rebound = jax.make_jaxpr(lambda inputs, cotangents: jaxpr_inline.inline(closed, [*inputs, *cotangents]))(
            in_structs, out_structs
        )
    except Exception:  # noqa: BLE001 - a size the equations do not take: traced instead
        return None
    got = [var.aval for var in rebound.jaxpr.outvars]
    if (
        not interpret.supported(rebound)
        or not all(_keeps_elements(eqn) for eqn in rebound.jaxpr.eqns)
        or len(got) != len(wanted)
        or any(tuple(a.shape) != tuple(w.shape) or a.dtype != w.dtype for a, w in zip(got, wanted))
    ):
        return None
    return rebound


def _keeps_elements(eqn: Any) -> bool:
    """Whether a bound equation is no `reshape` to another number of elements (JAX binds one unchecked)."""
    if eqn.primitive.name != "reshape":
        return True
    return math.prod(eqn.invars[0].aval.shape) == math.prod(eqn.outvars[0].aval.shape)


def _same_equations(first: jax_core.ClosedJaxpr, second: jax_core.ClosedJaxpr) -> bool:
    """Whether two jaxprs (traced at different sizes) run the same equations with the same parameters on the
    same variables: then no parameter depends on those sizes. Constants (arrays of a size) make them differ."""
    a, b = first.jaxpr, second.jaxpr
    if first.consts or second.consts or len(a.eqns) != len(b.eqns) or len(a.invars) != len(b.invars):
        return False
    names_a = {var: k for k, var in enumerate(a.invars)}
    names_b = {var: k for k, var in enumerate(b.invars)}

    def same_operands(left: Sequence[Any], right: Sequence[Any]) -> bool:
        if len(left) != len(right):
            return False
        for x, y in zip(left, right):
            if isinstance(x, jax_core.Literal) or isinstance(y, jax_core.Literal):
                if not (isinstance(x, jax_core.Literal) and isinstance(y, jax_core.Literal)):
                    return False
                if not (np.shape(x.val) == np.shape(y.val) and np.array_equal(x.val, y.val)):
                    return False
            elif names_a.get(x, -1) != names_b.get(y, -2):
                return False
        return True

    try:
        for eqn_a, eqn_b in zip(a.eqns, b.eqns):
            if eqn_a.primitive is not eqn_b.primitive or not same_operands(eqn_a.invars, eqn_b.invars):
                return False
            if sorted(eqn_a.params) != sorted(eqn_b.params) or any(
                not bool(eqn_a.params[name] == eqn_b.params[name]) for name in eqn_a.params
            ):
                return False
            for x, y in zip(eqn_a.outvars, eqn_b.outvars):
                names_a[x] = names_b[y] = len(names_a)  # (a new name for each output, the same in both)
        return same_operands(a.outvars, b.outvars)
    except Exception:  # noqa: BLE001 - parameters that do not compare (arrays): not known to be the same
        return False


def _vjp_jaxpr(eqn: Any, floats: tuple, in_structs: list, out_structs: list) -> jax_core.ClosedJaxpr | None:
    """JAX's VJP of the equation (its operands at `floats`) as a jaxpr without dead equations, or None where JAX
    cannot trace it or the interpreter cannot run it."""
    primitive, params = eqn.primitive, eqn.params

    def vjp(inputs: list, cotangents: list) -> list:
        def of_floats(*chosen: Any) -> list:
            full = list(inputs)
            for position, value in zip(floats, chosen):
                full[position] = value
            out = primitive.bind(*full, **params)
            return list(out) if primitive.multiple_results else [out]

        _, pullback = jax.vjp(of_floats, *[inputs[k] for k in floats])
        return list(pullback(list(cotangents)))

    try:
        closed = jax.make_jaxpr(vjp)(in_structs, out_structs)
    except Exception:  # noqa: BLE001 - a primitive JAX cannot differentiate here: no rule
        return None
    if not interpret.supported(closed):
        return None
    return _without_dead_equations(closed)


def _without_dead_equations(closed: jax_core.ClosedJaxpr) -> jax_core.ClosedJaxpr:
    """`closed` without the equations no output reads: JAX's VJP trace keeps the forward equation whose value
    it does not use (a convolution computed again on every call for nothing)."""
    jaxpr = closed.jaxpr
    needed = {var for var in jaxpr.outvars if not isinstance(var, jax_core.Literal)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(var in needed for var in eqn.outvars):
            kept.append(eqn)
            needed.update(var for var in eqn.invars if not isinstance(var, jax_core.Literal))
    if len(kept) == len(jaxpr.eqns):
        return closed
    return jax_core.ClosedJaxpr(jaxpr.replace(eqns=kept[::-1]), closed.consts)


def _struct(aval: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=getattr(aval, "weak_type", False))


def _apply(cotangents: list, inputs: list, outputs: list, params: dict) -> list:
    """The traced VJP run on the host: a cotangent per operand at `floats`, None for the others."""
    given = [np.zeros(shape, dtype) if g is None else g for g, (shape, dtype) in zip(cotangents, params["outs"])]
    grads = params["plan"](list(inputs) + given, interpret_plan.Budget())
    result: list = [None] * len(inputs)
    for position, grad in zip(params["floats"], grads):
        result[position] = grad
    return result
