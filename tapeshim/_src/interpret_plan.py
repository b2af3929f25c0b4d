"""The host interpreter's plans: a closed jaxpr lowered for repeated evaluation with NumPy (`HostPlan`).

A plan numbers the jaxpr's values as slots and makes each equation a step: its NumPy rule
(`interpret_rules.RULES`) with its parameters, its input and output slots, its output dtypes and whether its
float results are flushed (`interpret_flush`). Calls (a `jnp` function's `jit`, a custom derivative's
forward, remat) are inlined: their equations become steps of the calling plan, over its slots. An equation
whose primitive, parameters and input slots an earlier one had reuses that step's results (a gradient traced
inside a `tapeshim.function` repeats its forward), and steps no output depends on are dropped. Control flow
(`cond`, `while`, `scan`) keeps a nested plan per branch or body, and a `Budget` bounds what loops and
matrix products may cost before the evaluation is abandoned (`Abandon`: the program compiles instead).
`interpret.py` runs plans on a program's arguments (`Prepared`, `BoundTemplate`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import interpret_cost, interpret_fpmode, interpret_rules, symbolic_dims
from tapeshim._src.interpret_blas import limit_blas_threads
from tapeshim._src.interpret_flush import flush_subnormals
from tapeshim._src.interpret_random import host_dtype

STEP_BUDGET = 10_000
"""Loop-body equations one interpreted call may evaluate (counted per iteration of a `while` or `scan`)
before it is abandoned and the program compiles: a long loop is served better by compiled code."""


CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr"}
"""Call primitives -> the parameter holding the jaxpr they call (evaluated in line here, and by `jaxpr_inline`)."""
_CUSTOM = {"custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr"}


class Abandon(Exception):
    """The evaluation went past its budget: the program compiles instead."""


def closed_of(value: Any) -> jax_core.ClosedJaxpr:
    """`value`, a jaxpr an equation calls, as a closed jaxpr (an open one has no constants)."""
    return value if isinstance(value, jax_core.ClosedJaxpr) else jax_core.ClosedJaxpr(value, ())


_REMAT = ("remat", "remat2", "checkpoint")


def called_jaxpr(eqn: Any) -> jax_core.ClosedJaxpr | None:
    """The one jaxpr a call, custom-derivative call or remat equation computes its outputs by, from its
    operands (its forward computation); None for other equations."""
    name, params = eqn.primitive.name, eqn.params
    field = CALLS.get(name) or _CUSTOM.get(name) or ("jaxpr" if name in _REMAT else None)
    return None if field is None else closed_of(params[field])


def inner_jaxprs(eqn: Any) -> list | None:
    """The jaxprs a call, custom-derivative call, remat or control-flow equation evaluates; None for others."""
    name, params = eqn.primitive.name, eqn.params
    called = called_jaxpr(eqn)
    if called is not None:
        return [called]
    if name == "scan":
        return [closed_of(params["jaxpr"])]
    if name == "cond":
        return list(params["branches"])
    if name == "while":
        return [params["cond_jaxpr"], params["body_jaxpr"]]
    return None


def holds_symbolic(value: Any) -> bool:
    """Whether `value` holds a symbolic dimension where `symbolic_dims.resolver` resolves one: itself, or in a
    tuple or list (not a named tuple)."""
    if value.__class__ is int:
        return False
    if symbolic_dims.is_symbolic(value):
        return True
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return any(holds_symbolic(v) for v in value)
    return False


def _params(eqn: Any, resolve: Callable[[Any], Any], names: tuple[str, ...]) -> dict:
    """An equation's parameters with the symbolic dimensions of those named (`sized_names`) resolved."""
    params = dict(eqn.params)
    for name in names:
        params[name] = resolve(params[name])
    return params


def sized_names(params: dict) -> tuple[str, ...]:
    """The names of the parameters that hold a symbolic dimension (nested jaxprs are left as they are): found
    once, where a plan is made, since its sized steps are bound at every new size and most of their parameters
    hold none."""
    return tuple(name for name, value in params.items() if holds_symbolic(value))


class Budget:
    """The loop-body equations an evaluation may still run (straight-line code is never cut short), and the
    multiply-adds of matrix products and convolutions it may still compute (`interpret_cost`)."""

    __slots__ = ("left", "products_left")

    def __init__(self) -> None:
        self.left = STEP_BUDGET
        self.products_left = interpret_cost.HOST_MULTIPLY_ADDS

    def spend(self, equations: int) -> None:
        self.left -= equations
        if self.left < 0:
            raise Abandon

    def spend_products(self, multiply_adds: int) -> None:
        self.products_left -= multiply_adds
        if self.products_left < 0:
            raise Abandon


ZERO_PRESERVING = frozenset(
    ("broadcast_in_dim", "reshape", "convert_element_type", "transpose", "squeeze", "copy", "copy_p", "rev")
)
"""Primitives whose output is all zeros when their one operand is (XLA folds them into a zero constant)."""

MAKE_SUBNORMALS = frozenset(
    (
        "add", "add_any", "sub", "mul", "div", "dot_general", "reduce_sum", "reduce_prod", "cumsum", "cumprod",
        "exp", "exp2", "expm1", "pow", "integer_pow", "logistic", "convert_element_type", "scatter-add",
        "scatter_add", "scatter-sub", "scatter_sub", "scatter-mul", "scatter_mul", "atan2", "nextafter", "rem",
        "square", "sinh", "tanh", "sin", "tan", "asin", "atan", "asinh", "atanh", "log1p", "log", "rsqrt",
        "cbrt", "sqrt", "conv_general_dilated", "real", "imag",
    )
)  # fmt: skip
"""Primitives that can make a subnormal float from normal operands (a product, a difference, an exponential
of a large negative value, a narrowing conversion): their float outputs are flushed (`flush_subnormals`). Every
other rule returns operand values or exact functions of them, which stay flushed (the per-op tier relies on this:
its host values pass from kernel to kernel unchecked, `Prepared`)."""


def _flushes(eqn: Any, name: str, out_dtypes: list) -> int:
    """At which level a step's float results are flushed (`HostPlan.__call__` flushes those above its thread's
    `interpret_fpmode.flush_level()`): 2 for a rule that gives back an operand's element where XLA computes one
    (`interpret_fpmode.ALWAYS_FLUSHED`: flushed wherever), 1 for one that can make a subnormal from normal
    operands (`MAKE_SUBNORMALS`: flushed where the CPU's modes do not flush), else 0; a conversion's not from an
    integer or a bool, which makes no subnormal (a one-hot mask's conversion cost its check)."""
    if not any(dtype.kind == "f" for dtype in out_dtypes):
        return 0
    if name in interpret_fpmode.ALWAYS_FLUSHED:
        return 2
    if name not in MAKE_SUBNORMALS:
        return 0
    return int(name != "convert_element_type" or np.dtype(eqn.invars[0].aval.dtype).kind not in "biu")


def _folded_broadcast(eqn: Any) -> np.ndarray | None:
    """The result of a `broadcast_in_dim` of a scalar literal to a static shape (ReLU's zeros, `jnp.full`'s fill),
    made once with its plan by the rule (a read-only view with every stride 0, which the rules that take it read
    as its one value: `interpret_rules._one_value`), else None."""
    if eqn.primitive.name != "broadcast_in_dim" or not isinstance(eqn.invars[0], jax_core.Literal):
        return None
    if eqn.params.get("sharding") is not None or not all(type(d) is int for d in eqn.params["shape"]):
        return None
    value = np.asarray(eqn.invars[0].val, dtype=getattr(eqn.invars[0].aval, "dtype", None))
    if value.shape or value.dtype != getattr(eqn.outvars[0].aval, "dtype", None):
        return None
    return interpret_rules.RULES["broadcast_in_dim"](value, **eqn.params)


def all_zero(value: Any) -> bool:
    """Whether a small numeric constant holds only zeros (of either sign): XLA folds `x + it` to `x`."""
    return value.dtype.kind in "iufc" and value.size <= 4096 and not np.any(value)


_DIRECT = (
    frozenset(interpret_rules.RULES)
    - frozenset(interpret_cost.COUNTED)
    - frozenset(("cond", "while", "scan", *CALLS, *_CUSTOM, *_REMAT))
)
"""Primitives whose rule a `HostPlan` step calls directly with the equation's parameters (no budget, no nested
plan, no multiply-adds to count)."""

_NO_PARAMS: dict = {}
"""A `HostPlan` step's parameters where its rule is one NumPy function of the operands (`interpret_rules.PLAIN`)."""

_COUNTED = object()
"""The `sized` entry's names of a product step whose shapes are symbolic: `bound` counts its multiply-adds."""


class HostPlan:
    """A closed jaxpr lowered for repeated evaluation: steps over numbered slots, each a NumPy rule (or a
    control-flow rule with nested plans) with its parameters, input and output slots, output dtypes and whether
    to flush subnormals. A step with one result keeps its slot and dtype (not lists) and calls its rule with the
    parameters directly; a called jaxpr's equations are steps of this plan. `cost` counts its equations,
    nested ones included (a loop spends it per iteration of `STEP_BUDGET`; what a compile lowers); `run_cost`
    the steps one evaluation runs (each value once, none that no output reads; a `cond`'s largest branch)."""

    __slots__ = ("size", "fixed", "in_slots", "steps", "out_slots", "cost", "run_cost", "sized")

    def __init__(self, closed: jax_core.ClosedJaxpr, late: bool = False) -> None:
        """`late`: the jaxpr's symbolic dimensions stay symbolic here, and the steps whose parameters (or nested
        plans) hold them are listed in `sized`, for `bound` to resolve per call (`BoundTemplate`)."""
        jaxpr = closed.jaxpr
        slots: dict = {}
        self.fixed: list = []  # (slot, value): constants and literals
        zeros: set = set()  # slots holding only zeros (see `kept_input`)
        self.cost = 0
        self.sized: list = []  # (step index, equation, `sized_names` of its parameters) of the steps `bound` resolves

        count = [0]  # slots made

        def new_slot(var: Any = None) -> int:
            index = count[0]
            count[0] += 1
            if var is not None:
                slots[var] = index
            return index

        def fixed_slot(value: Any, var: Any = None) -> int:
            index = new_slot(var)
            self.fixed.append((index, value))
            if all_zero(value):
                zeros.add(index)
            return index

        literals: dict = {}  # (dtype, shape, bytes) -> the fixed slot of a literal with that value
        computed: dict = {}  # `_step_key` -> the output slots of the step that computes it (or its constant's)
        nested_cost: dict = {}  # `_step_key` -> the nested equations its step counted (a `cond`'s branches)
        run_costs: dict = {}  # step index -> the nested equations the step runs per evaluation (`run_cost`)
        effectful: list = []  # indices of the steps with effects (`check`): kept whether or not anything reads them

        def slot_of(var: Any) -> int:
            if isinstance(var, jax_core.Literal):
                value = np.asarray(var.val, dtype=getattr(var.aval, "dtype", None))
                key = (value.dtype, value.shape, value.tobytes())  # (bytes: -0.0 is not 0.0)
                index = literals.get(key)
                if index is None:
                    index = literals[key] = fixed_slot(value)
                return index
            return slots[var]

        def lower(eqns: Any) -> None:
            for eqn in eqns:
                if eqn.outvars and not eqn.effects and all(isinstance(var, jax_core.DropVar) for var in eqn.outvars):
                    continue  # a result nothing reads (a VJP kernel's forward value its pullback does not use)
                called = called_jaxpr(eqn)
                if called is not None:  # a call (a jnp function's jit, a custom derivative's forward): inlined
                    inline(eqn, called)
                    continue
                ins = [slot_of(var) for var in eqn.invars]
                key = _step_key(eqn, ins)
                known = computed.get(key) if key is not None else None
                if known is not None:  # computed already, from the same slots (a forward traced twice: below)
                    for var, index in zip(eqn.outvars, known):
                        slots[var] = index
                    self.cost += 1 + nested_cost.get(key, 0)
                    continue
                folded = _folded_broadcast(eqn)
                if folded is not None:  # a constant: made once, a view without a copy
                    index = fixed_slot(folded, eqn.outvars[0])
                    if ins[0] in zeros:  # (zeros at any size, as `ZERO_PRESERVING` marks them)
                        zeros.add(index)
                    if key is not None:
                        computed[key] = [index]
                    self.cost += 1
                    continue
                kept = kept_input(eqn, ins, zeros)
                self.cost += 1
                if kept is not None:  # `x + 0`: the result is the input's value
                    slots[eqn.outvars[0]] = ins[kept]
                    continue
                outs = [new_slot(var) for var in eqn.outvars]
                if key is not None:
                    computed[key] = outs
                if eqn.effects:
                    effectful.append(len(self.steps))
                name = eqn.primitive.name
                if name in ZERO_PRESERVING and ins[0] in zeros:
                    zeros.add(outs[0])
                out_dtypes = [host_dtype(getattr(var.aval, "dtype", None)) for var in eqn.outvars]
                flush = _flushes(eqn, name, out_dtypes)
                plain = interpret_rules.PLAIN.get(name)
                if plain is not None and len(outs) == 1:  # one NumPy call, without the rule's wrapper
                    self.steps.append((plain, _NO_PARAMS, ins, outs[0], out_dtypes[0], flush))
                    continue
                if len(outs) == 1 and not eqn.primitive.multiple_results and name in _DIRECT:
                    # the rule called with the parameters, one result (`outs` its slot, `out_dtypes` its dtype)
                    if late and sized_names(eqn.params):
                        self.sized.append((len(self.steps), eqn, sized_names(eqn.params)))
                    self.steps.append((interpret_rules.RULES[name], eqn.params, ins, outs[0], out_dtypes[0], flush))
                    continue
                run, params, inner_cost = lowered(eqn, late)
                self.cost += inner_cost
                if key is not None:
                    nested_cost[key] = inner_cost
                run_costs[len(self.steps)] = _nested_run_cost(run, params)
                if late and _step_sized(eqn, params):
                    self.sized.append((len(self.steps), eqn, sized_names(eqn.params)))
                elif late and isinstance(run, functools.partial) and run.func is _counted:
                    self.sized.append((len(self.steps), eqn, _COUNTED))  # (its multiply-adds counted per size)
                self.steps.append((run, params, ins, outs, out_dtypes, flush))

        def inline(eqn: Any, called: jax_core.ClosedJaxpr) -> None:
            """The called jaxpr's equations as steps of this plan, over its operands' slots: a nested plan
            costs a call of its own per evaluation (its environment, its arguments' and results' lists)."""
            inner = called.jaxpr
            for var, const in zip(inner.constvars, called.consts):
                fixed_slot(flush_subnormals(np.asarray(const)), var)
            for var, operand in zip(inner.invars, eqn.invars):
                slots[var] = slot_of(operand)  # (a jaxpr called twice maps its variables again: steps hold slots)
            self.cost += 1
            lower(inner.eqns)
            for var, result in zip(eqn.outvars, inner.outvars):
                if not isinstance(var, jax_core.DropVar):
                    slots[var] = slot_of(result)

        for var, const in zip(jaxpr.constvars, closed.consts):
            fixed_slot(flush_subnormals(np.asarray(const)), var)
        self.in_slots = [new_slot(var) for var in jaxpr.invars]
        self.steps: list = []
        lower(jaxpr.eqns)
        self.out_slots = [slot_of(var) for var in jaxpr.outvars]
        self.size = count[0]
        kept = self._drop_unread(set(effectful))
        self.run_cost = len(self.steps) + sum(run_costs.get(index, 0) for index in kept)

    def _drop_unread(self, effectful: set) -> list:
        """Drops the steps whose results no output depends on (and that have no effects), and the constants
        only they read: a VJP's forward values its pullback does not read, a result read only by such a step.
        `cost` still counts them; `run_cost` does not. Returns the kept steps' indices before the drop."""
        live = set(self.out_slots)
        kept: list = []
        for index in range(len(self.steps) - 1, -1, -1):
            ins, outs = self.steps[index][2], self.steps[index][3]
            if index in effectful or (outs in live if outs.__class__ is int else not live.isdisjoint(outs)):
                kept.append(index)
                live.update(ins)
        kept.reverse()
        self.fixed = [(index, value) for index, value in self.fixed if index in live]
        if len(kept) < len(self.steps):
            position = {old: new for new, old in enumerate(kept)}
            self.steps = [self.steps[index] for index in kept]
            self.sized = [(position[index], eqn, names) for index, eqn, names in self.sized if index in position]
        return kept

    def bound(self, resolve: Callable[[Any], Any]) -> "HostPlan":
        """This plan (made `late`) with its symbolic dimensions resolved: the steps in `sized` get their
        parameters (and nested plans) for one call's sizes, the others are shared.

        Raises:
          Unbindable: a rule's parameter check fails at these sizes.
          symbolic_dims.Unresolved: a dimension's expression cannot be evaluated.
        """
        if not self.sized:
            return self
        plan = object.__new__(HostPlan)
        plan.size, plan.fixed, plan.in_slots, plan.out_slots, plan.cost, plan.run_cost = (
            self.size, self.fixed, self.in_slots, self.out_slots, self.cost, self.run_cost
        )  # fmt: skip
        plan.sized = []
        plan.steps = steps = list(self.steps)
        for index, eqn, names in self.sized:
            run, params, ins, outs, out_dtypes, flush = steps[index]
            if names is _COUNTED:  # a product of symbolic shapes: its multiply-adds at these sizes, counted once
                rule, name = run.args
                shapes = [resolve(tuple(var.aval.shape)) for var in eqn.invars]
                costs = interpret_cost.product_costs(name, shapes, params, np.dtype(eqn.invars[0].aval.dtype))
                run = functools.partial(_counted_known, rule, *costs)
            else:
                params = _bound_params(eqn, params, resolve, names)
            steps[index] = (run, params, ins, outs, out_dtypes, flush)
        return plan

    def __call__(self, args: list, budget: "Budget") -> list:
        env: list = [None] * self.size
        for index, value in self.fixed:
            env[index] = value
        for index, value in zip(self.in_slots, args):
            env[index] = value
        level = interpret_fpmode.flush_level()  # (the results of steps that `_flushes` above it: flushed here)
        for run, params, ins, outs, out_dtypes, flush in self.steps:
            if outs.__class__ is int:  # one result (`outs` is its slot, `out_dtypes` its dtype)
                value = run(*[env[k] for k in ins], **params)
                if value.dtype != out_dtypes:
                    value = np.asarray(value).astype(out_dtypes)
                env[outs] = flush_subnormals(value) if flush > level else value
                continue
            values = run([env[k] for k in ins], params, budget)
            for index, value, dtype in zip(outs, values, out_dtypes):
                if dtype is not None and value.dtype != dtype:
                    value = np.asarray(value).astype(dtype)
                env[index] = flush_subnormals(value) if flush > level else value
        return [env[k] for k in self.out_slots]


def _step_key(eqn: Any, ins: list) -> tuple | None:
    """What an equation computes, as a `HostPlan` compares equations: its primitive, its parameters and its input
    slots; None for one never computed once for two equations (effects, unhashable or float parameters).

    A gradient traced inside a `tapeshim.function` (a Keras `train_step`'s trace) replays the forward its
    caller traced already: the forward's equations appear twice over the same slots (XLA's common-subexpression
    elimination merges them in the compiled program). The plan computes each once."""
    if eqn.effects:
        return None
    params = tuple(sorted(eqn.params.items()))
    if any(isinstance(value, float) for _, value in params):  # (0.0 == -0.0, NaN != NaN: not told apart)
        return None
    key = (eqn.primitive, tuple(ins), params)
    try:
        hash(key)
    except TypeError:  # (an array or a list among the parameters)
        return None
    return key


def kept_input(eqn: Any, ins: list, zeros: set) -> int | None:
    """XLA's algebraic simplification `x + 0 -> x` (and `0 + x`, `x - 0`), which keeps the sign of a negative
    zero that IEEE addition would drop: which input an `add` or `sub` returns unchanged, else None."""
    name = eqn.primitive.name
    if name not in ("add", "add_any", "sub"):
        return None
    out_aval = eqn.outvars[0].aval
    positions = (0,) if name == "sub" else (0, 1)  # 0 - x is -x, not x
    for position in positions:
        operand = eqn.invars[position].aval
        if ins[1 - position] in zeros and operand.shape == out_aval.shape and operand.dtype == out_aval.dtype:
            return position
    return None


def copy_input(inputs: list, position: int, budget: "Budget") -> list:
    return [inputs[position]]


def lowered(eqn: Any, late: bool = False) -> tuple[Callable[[list, Any, "Budget"], list], Any, int]:
    """`(run, params, cost)` for one equation: `run(inputs, params, budget)` gives its outputs as a list;
    `cost` counts the nested equations it runs once (a loop spends its body's per iteration instead).
    `late`: nested plans are made `late` too (see `HostPlan`)."""
    name, params = eqn.primitive.name, eqn.params
    inner = inner_jaxprs(eqn)
    if inner is None:
        rule = interpret_rules.RULES[name]
        if name in interpret_cost.COUNTED:
            shapes = [v.aval.shape for v in eqn.invars]
            if all(type(d) is int for shape in shapes for d in shape):  # (counted once, where no size is symbolic)
                costs = interpret_cost.product_costs(name, shapes, params, np.dtype(eqn.invars[0].aval.dtype))
                return functools.partial(_counted_known, rule, *costs), params, 0
            return functools.partial(_counted, rule, name), params, 0
        if eqn.primitive.multiple_results:
            return (lambda inputs, kwargs, budget: list(rule(*inputs, **kwargs))), params, 0
        return (lambda inputs, kwargs, budget: [rule(*inputs, **kwargs)]), params, 0
    plans = [HostPlan(sub, late) for sub in inner]
    if name == "cond":
        return _cond, plans, max(plan.cost for plan in plans)
    if name == "while":
        return _while, (plans, params["cond_nconsts"], params["body_nconsts"]), 0
    if name == "scan":
        ys = inner[0].jaxpr.outvars[params["num_carry"] :]
        return _scan, (plans[0], params, [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in ys]), 0
    return (lambda inputs, plan, budget: plan(inputs, budget)), plans[0], plans[0].cost


def _nested_run_cost(run: Any, params: Any) -> int:
    """The nested equations a `lowered` step runs per evaluation, as `HostPlan.run_cost` counts them: a `cond`'s
    largest branch, a called plan's; none for a loop (its iterations are counted as they run) or a product."""
    if run is _cond:
        return max(plan.run_cost for plan in params)
    if isinstance(params, HostPlan):
        return params.run_cost
    return 0


def _counted(rule: Callable[..., Any], name: str, inputs: list, params: dict, budget: Budget) -> list:
    """A product's rule, run once the budget has its multiply-adds (else the evaluation is abandoned)."""
    costs = interpret_cost.product_costs(name, [np.shape(value) for value in inputs], params, np.result_type(inputs[0]))
    return _counted_known(rule, *costs, inputs, params, budget)


def _counted_known(
    rule: Callable[..., Any], multiply_adds: int, split: bool, inputs: list, params: dict, budget: Budget
) -> list:
    """`_counted` with the product's multiply-adds counted, and whether the BLAS may split it over threads
    (`interpret_cost.blas_may_split`), when its plan was made (its shapes are static)."""
    budget.spend_products(multiply_adds)
    if split:
        limit_blas_threads()
    return [rule(*inputs, **params)]


class Unbindable(Exception):
    """A late plan's rule parameter check fails at one call's sizes (`HostPlan.bound`)."""


def _step_sized(eqn: Any, params: Any) -> bool:
    """Whether a late plan's step for `eqn` (its parameters as `lowered` made them) depends on the sizes."""
    name = eqn.primitive.name
    if name == "cond":
        return any(plan.sized for plan in params)
    if name == "while":
        return any(plan.sized for plan in params[0])
    if name == "scan":
        plan, scan_params, y_structs = params
        return bool(plan.sized) or bool(sized_names(scan_params)) or holds_symbolic([s.shape for s in y_structs])
    if isinstance(params, HostPlan):  # a call, custom-derivative call or remat
        return bool(params.sized)
    return bool(sized_names(params))


def _bound_params(eqn: Any, params: Any, resolve: Callable[[Any], Any], names: tuple[str, ...]) -> Any:
    """A sized step's parameters (`_step_sized`) for one call's sizes (`names`: `sized_names` of `eqn`'s)."""
    name = eqn.primitive.name
    if name == "cond":
        return [plan.bound(resolve) for plan in params]
    if name == "while":
        plans, n_cond, n_body = params
        return [plan.bound(resolve) for plan in plans], n_cond, n_body
    if name == "scan":
        plan, scan_params, y_structs = params
        y_bound = [jax.ShapeDtypeStruct(resolve(tuple(s.shape)), s.dtype) for s in y_structs]
        return plan.bound(resolve), _params(eqn, resolve, names), y_bound
    if isinstance(params, HostPlan):
        return params.bound(resolve)
    resolved = _params(eqn, resolve, names)
    rule_ok = interpret_rules.SUPPORTED.get(name)
    if rule_ok is not None and not rule_ok(resolved):
        raise Unbindable(name)
    return resolved


def _cond(inputs: list, branches: list, budget: "Budget") -> list:
    index = min(max(int(inputs[0]), 0), len(branches) - 1)
    return branches[index](inputs[1:], budget)


def _while(inputs: list, lowered: tuple, budget: "Budget") -> list:
    (cond, body), n_cond, n_body = lowered
    cond_consts, body_consts, carry = inputs[:n_cond], inputs[n_cond : n_cond + n_body], inputs[n_cond + n_body :]
    per_iteration = cond.cost + body.cost + 1
    while bool(cond([*cond_consts, *carry], budget)[0]):
        budget.spend(per_iteration)
        carry = body([*body_consts, *carry], budget)
    return carry


def _scan(inputs: list, lowered: tuple, budget: "Budget") -> list:
    body, params, y_avals = lowered
    n_consts, n_carry, length = params["num_consts"], params["num_carry"], params["length"]
    consts, carry, xs = inputs[:n_consts], inputs[n_consts : n_consts + n_carry], inputs[n_consts + n_carry :]
    ys_steps: list = []
    steps = range(length - 1, -1, -1) if params["reverse"] else range(length)
    for step in steps:
        budget.spend(body.cost + 1)
        out = body([*consts, *carry, *(x[step] for x in xs)], budget)
        carry, ys = out[:n_carry], out[n_carry:]
        ys_steps.append(ys)
    if params["reverse"]:
        ys_steps.reverse()
    stacked = [
        np.stack([step[k] for step in ys_steps]) if ys_steps else np.zeros((0, *aval.shape), aval.dtype)
        for k, aval in enumerate(y_avals)
    ]
    return [*carry, *stacked]
