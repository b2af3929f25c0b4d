"""The host interpreter: new programs and kernels computed with NumPy instead of compiling them first.

TF eager runs a new op or a new graph structure at once, with precompiled
kernels. tapeshim compiles each new program (a recorded structure, a per-op
kernel, a `tapeshim.function` trace) with XLA, which costs 10-150 ms per
program on a CPU: most of a first training step's time, and all the time of
a structure that never repeats. So on the CPU backend a program whose jaxpr
this module can evaluate runs here first: each equation by its NumPy rule
(`interpret_rules.RULES`), on the arrays' host memory (CPU arrays are read
without a copy). It compiles when it keeps repeating, from the trace made
here, in the background thread (`background_compile`), its calls running here
until that compile is done:

* a program (replay, `tapeshim.function`, control flow): its first calls run
  here until their extra cost would have paid for the compile (a ski rental,
  `compile_tiers.calls_before_compile`: about 45 calls of a small MLP step, one
  or two of a compute-bound one); the next submits its compile
  (`runtime_checks.CheckedProgram`);
* an eager op's kernel: the first calls of each argument signature
  (`registry._Kernel.call`, `variable._update_kernel`), by the same rule (about
  90 calls on small tensors), the next submitting its compile;
* a kernel of the per-op tier (`replay_eager`), whose plans call the same
  kernels many times: the first calls of a signature, until their extra
  cost would have paid for the compile (`kernel_calls.host_calls_before_compile`),
  their results staying NumPy arrays from kernel to kernel (`to_device`).

What is not interpreted (it compiles at once, as before): a jaxpr with
host callbacks (runtime checks are interpreted where the caller allows them),
a primitive without a rule or with parameters its rule does not handle
(pooling windows, random bits, `erf`), dtypes NumPy computes differently (`bfloat16`, `float16`,
extended key types), weakly typed results, arguments that are tracers or live
on another backend or device set, a program whose loops run past
`STEP_BUDGET` equations (compiled code serves a long loop better), and one
whose matrix products and convolutions take more arithmetic than a compile
costs (`interpret_cost`): that evaluation is abandoned, or never started, and
the program compiles, with nothing the user sees but the time.

Values are XLA's to the rounding of the operations: NumPy's `exp`, `tanh` and
sums are not XLA's bit for bit, so a structure's first call and its compiled
calls can differ in the last bits (as TF's eager and graph results do). The
interpreter follows XLA where IEEE arithmetic would give another value:
subnormals flush to zero (`flush_subnormals`), `x + 0` is `x` (XLA's simplifier keeps a
negative zero's sign), -0 orders below +0 in `max` and `min`, integer division
truncates, float-to-integer conversion saturates. Dtypes and shapes are the
program's exactly. A rule that raises for some input (NumPy's limits) abandons
the host call: the program compiles.
"""

from __future__ import annotations

import collections
import functools
import math
import re
from typing import Any, Callable

import jax
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import compile_tiers, errors, interpret_cost, interpret_rules, symbolic_dims
from tapeshim._src.interpret_blas import BLAS_THREADED_MULTIPLY_ADDS, host_errors_ignored, limit_blas_threads
from tapeshim._src.interpret_flush import flush_subnormals, host_input, mark_clean

STEP_BUDGET = 10_000
"""Loop-body equations one interpreted call may evaluate (counted per iteration of a `while` or `scan`)
before it is abandoned and the program compiles: a long loop is served better by compiled code."""

_DTYPES = frozenset(
    np.dtype(name)
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
) | {np.dtype(jax.dtypes.float0)}  # (the cotangent of an integer input, carried through a VJP kernel)
_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr"}
_CUSTOM = {"custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr"}

stats = {"interpreted_calls": 0, "abandoned_calls": 0}


class _Abandon(Exception):
    """The evaluation went past its budget: the program compiles instead."""


@functools.cache
def enabled() -> bool:
    """Whether first calls may be interpreted: only where JAX's default backend is the CPU."""
    return jax.default_backend() == "cpu"


def _aval_ok(aval: Any) -> bool:
    """Whether values of `aval` are arrays of a dtype NumPy computes as XLA does."""
    dtype = getattr(aval, "dtype", None)
    try:
        return dtype is not None and np.dtype(dtype) in _DTYPES
    except TypeError:  # an extended dtype (a PRNG key)
        return False


def _closed_of(value: Any) -> jax_core.ClosedJaxpr:
    return value if isinstance(value, jax_core.ClosedJaxpr) else jax_core.ClosedJaxpr(value, ())


_REMAT = ("remat", "remat2", "checkpoint")


def called_jaxpr(eqn: Any) -> jax_core.ClosedJaxpr | None:
    """The one jaxpr a call, custom-derivative call or remat equation computes its outputs by, from its
    operands (its forward computation); None for other equations."""
    name, params = eqn.primitive.name, eqn.params
    field = _CALLS.get(name) or _CUSTOM.get(name) or ("jaxpr" if name in _REMAT else None)
    return None if field is None else _closed_of(params[field])


def _inner_jaxprs(eqn: Any) -> list | None:
    """The jaxprs a call, custom-derivative call, remat or control-flow equation evaluates; None for others."""
    name, params = eqn.primitive.name, eqn.params
    called = called_jaxpr(eqn)
    if called is not None:
        return [called]
    if name == "scan":
        return [_closed_of(params["jaxpr"])]
    if name == "cond":
        return list(params["branches"])
    if name == "while":
        return [params["cond_jaxpr"], params["body_jaxpr"]]
    return None


CheckFailed = interpret_rules.CheckFailed


_CHECK_SUFFIX = re.compile(r"\s*\(`check` failed\)\s*$")
_LABEL_VALUES = re.compile(r"(Label values: )(.*?)( \[Op:)", re.DOTALL)


def _label_values(found: re.Match) -> str:
    """TF's `Label values: 0 7` for NumPy's printed array `[[0 7]]` (its brackets and line breaks dropped)."""
    return found.group(1) + " ".join(found.group(2).replace("[", " ").replace("]", " ").split()) + found.group(3)


def check_error(message: str) -> errors.InvalidArgumentError:
    """TF's error for a failed runtime check, from checkify's message (a compiled program's or a host call's)."""
    return errors.InvalidArgumentError(None, None, _LABEL_VALUES.sub(_label_values, _CHECK_SUFFIX.sub("", message)))


def is_check_effect(effect: Any) -> bool:
    """Whether `effect` is checkify's error effect: a runtime check (`checkify.check`) in the program."""
    return type(effect).__name__ == "ErrorEffect"


def has_loop(closed: jax_core.ClosedJaxpr) -> bool:
    """Whether `closed` (or a jaxpr it calls) holds a `while` loop."""
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive.name == "while":
            return True
        inner = _inner_jaxprs(eqn)
        if inner is not None and any(has_loop(sub) for sub in inner):
            return True
    return False


def supported(closed: jax_core.ClosedJaxpr, checks: bool = False, late: bool = False) -> bool:
    """Whether every equation of `closed` (and of the jaxprs it calls) has a rule for its parameters and
    every value a dtype NumPy computes as XLA does; with `checks`, runtime checks (`checkify.check`) are
    allowed, and a failing one raises `CheckFailed`. With `late` (a trace with symbolic dimensions), a rule's
    parameter check is left to `_HostPlan.bound` where its parameters hold them (`BoundTemplate`)."""
    jaxpr = closed.jaxpr
    if jaxpr.effects and not (checks and all(is_check_effect(effect) for effect in jaxpr.effects)):
        return False
    if not all(_aval_ok(v.aval) for v in (*jaxpr.invars, *jaxpr.constvars, *jaxpr.outvars)):
        return False
    for eqn in jaxpr.eqns:
        if not all(_aval_ok(v.aval) for v in (*eqn.invars, *eqn.outvars)):
            return False
        inner = _inner_jaxprs(eqn)
        if inner is not None:
            if not all(supported(sub, checks, late) for sub in inner):
                return False
            continue
        name = eqn.primitive.name
        if name not in interpret_rules.RULES:
            return False
        rule_ok = interpret_rules.SUPPORTED.get(name)
        if rule_ok is not None and not (late and _sized_names(eqn.params)) and not rule_ok(eqn.params):
            return False
    return True


def _holds_symbolic(value: Any) -> bool:
    """Whether `value` holds a symbolic dimension where `symbolic_dims.resolver` resolves one: itself, or in a
    tuple or list (not a named tuple)."""
    if value.__class__ is int:
        return False
    if symbolic_dims.is_symbolic(value):
        return True
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return any(_holds_symbolic(v) for v in value)
    return False


def _params(eqn: Any, resolve: Callable[[Any], Any], names: tuple[str, ...]) -> dict:
    """An equation's parameters with the symbolic dimensions of those named (`_sized_names`) resolved."""
    params = dict(eqn.params)
    for name in names:
        params[name] = resolve(params[name])
    return params


def _sized_names(params: dict) -> tuple[str, ...]:
    """The names of the parameters that hold a symbolic dimension (nested jaxprs are left as they are): found
    once, where a plan is made, since its sized steps are bound at every new size and most of their parameters
    hold none."""
    return tuple(name for name, value in params.items() if _holds_symbolic(value))


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
            raise _Abandon

    def spend_products(self, multiply_adds: int) -> None:
        self.products_left -= multiply_adds
        if self.products_left < 0:
            raise _Abandon


_ZERO_PRESERVING = frozenset(
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


def _all_zero(value: Any) -> bool:
    """Whether a small numeric constant holds only zeros (of either sign): XLA folds `x + it` to `x`."""
    return value.dtype.kind in "iufc" and value.size <= 4096 and not np.any(value)


_PLAIN = object()
"""A `_HostPlan` step's parameters where its rule is one NumPy function of the operands (`interpret_rules.PLAIN`)."""

_COUNTED = object()
"""The `sized` entry's names of a product step whose shapes are symbolic: `bound` counts its multiply-adds."""


class _HostPlan:
    """A closed jaxpr lowered for repeated evaluation: steps over numbered slots, each a NumPy rule (or a
    nested plan) with its parameters, input and output slots, output dtypes and whether to flush subnormals;
    `cost` counts its equations, nested plans' included (a loop spends it per iteration of `STEP_BUDGET`)."""

    __slots__ = ("size", "fixed", "in_slots", "steps", "out_slots", "cost", "sized")

    def __init__(self, closed: jax_core.ClosedJaxpr, late: bool = False) -> None:
        """`late`: the jaxpr's symbolic dimensions stay symbolic here, and the steps whose parameters (or nested
        plans) hold them are listed in `sized`, for `bound` to resolve per call (`BoundTemplate`)."""
        jaxpr = closed.jaxpr
        slots: dict = {}
        self.fixed: list = []  # (slot, value): constants and literals
        zeros: set = set()  # slots holding only zeros (see `_kept_input`)
        self.cost = 0
        self.sized: list = []  # (step index, equation, `_sized_names` of its parameters) of the steps `bound` resolves

        def new_slot(var: Any) -> int:
            slots[var] = index = len(slots) + len(self.fixed)
            return index

        def fixed_slot(value: Any, var: Any = None) -> int:
            index = len(slots) + len(self.fixed) if var is None else new_slot(var)
            self.fixed.append((index, value))
            if _all_zero(value):
                zeros.add(index)
            return index

        def slot_of(var: Any) -> int:
            if isinstance(var, jax_core.Literal):
                return fixed_slot(np.asarray(var.val, dtype=getattr(var.aval, "dtype", None)))
            return slots[var]

        for var, const in zip(jaxpr.constvars, closed.consts):
            fixed_slot(flush_subnormals(np.asarray(const)), var)
        self.in_slots = [new_slot(var) for var in jaxpr.invars]
        self.steps: list = []
        for eqn in jaxpr.eqns:
            if eqn.outvars and not eqn.effects and all(isinstance(var, jax_core.DropVar) for var in eqn.outvars):
                continue  # a result nothing reads (a VJP kernel's forward value its pullback does not use)
            ins = [slot_of(var) for var in eqn.invars]
            outs = [new_slot(var) for var in eqn.outvars]
            kept = _kept_input(eqn, ins, zeros)
            self.cost += 1
            if kept is not None:
                self.steps.append((_copy_input, kept, ins, outs, [None], False))
                continue
            name = eqn.primitive.name
            if name in _ZERO_PRESERVING and ins[0] in zeros:
                zeros.add(outs[0])
            out_dtypes = [np.dtype(getattr(var.aval, "dtype", None)) for var in eqn.outvars]
            flush = name in MAKE_SUBNORMALS and any(dtype.kind == "f" for dtype in out_dtypes)
            plain = interpret_rules.PLAIN.get(name)
            if plain is not None and len(outs) == 1:  # one NumPy call, without the rule's wrapper
                self.steps.append((plain, _PLAIN, ins, outs[0], out_dtypes[0], flush))
                continue
            run, params, inner_cost = lowered(eqn, late)
            self.cost += inner_cost
            if late and _step_sized(eqn, params):
                self.sized.append((len(self.steps), eqn, _sized_names(eqn.params)))
            elif late and isinstance(run, functools.partial) and run.func is _counted:
                self.sized.append((len(self.steps), eqn, _COUNTED))  # (its multiply-adds counted per size)
            self.steps.append((run, params, ins, outs, out_dtypes, flush))
        self.out_slots = [slot_of(var) for var in jaxpr.outvars]
        self.size = len(slots) + len(self.fixed)

    def bound(self, resolve: Callable[[Any], Any]) -> "_HostPlan":
        """This plan (made `late`) with its symbolic dimensions resolved: the steps in `sized` get their
        parameters (and nested plans) for one call's sizes, the others are shared.

        Raises:
          _Unbindable: a rule's parameter check fails at these sizes.
          symbolic_dims.Unresolved: a dimension's expression cannot be evaluated.
        """
        if not self.sized:
            return self
        plan = object.__new__(_HostPlan)
        plan.size, plan.fixed, plan.in_slots, plan.out_slots, plan.cost = (
            self.size, self.fixed, self.in_slots, self.out_slots, self.cost
        )  # fmt: skip
        plan.sized = []
        plan.steps = steps = list(self.steps)
        for index, eqn, names in self.sized:
            run, params, ins, outs, out_dtypes, flush = steps[index]
            if names is _COUNTED:  # a product of symbolic shapes: its multiply-adds at these sizes, counted once
                rule, count = run.args
                shapes = [resolve(tuple(var.aval.shape)) for var in eqn.invars]
                known = count(shapes, params, np.dtype(eqn.invars[0].aval.dtype))
                run = functools.partial(_counted_known, rule, known)
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
        for run, params, ins, outs, out_dtypes, flush in self.steps:
            if params is _PLAIN:  # (`outs` is the output's slot, `out_dtypes` its dtype)
                value = run(*[env[k] for k in ins])
                if value.dtype != out_dtypes:
                    value = np.asarray(value).astype(out_dtypes)
                env[outs] = flush_subnormals(value) if flush else value
                continue
            values = run([env[k] for k in ins], params, budget)
            for index, value, dtype in zip(outs, values, out_dtypes):
                if dtype is not None and value.dtype != dtype:
                    value = np.asarray(value).astype(dtype)
                env[index] = flush_subnormals(value) if flush else value
        return [env[k] for k in self.out_slots]


def _kept_input(eqn: Any, ins: list, zeros: set) -> int | None:
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


def _copy_input(inputs: list, position: int, budget: "Budget") -> list:
    return [inputs[position]]


def lowered(eqn: Any, late: bool = False) -> tuple[Callable[[list, Any, "Budget"], list], Any, int]:
    """`(run, params, cost)` for one equation: `run(inputs, params, budget)` gives its outputs as a list;
    `cost` counts the nested equations it runs once (a loop spends its body's per iteration instead).
    `late`: nested plans are made `late` too (see `_HostPlan`)."""
    name, params = eqn.primitive.name, eqn.params
    inner = _inner_jaxprs(eqn)
    if inner is None:
        rule = interpret_rules.RULES[name]
        count = interpret_cost.COUNTED.get(name)
        if count is not None:
            shapes = [v.aval.shape for v in eqn.invars]
            if all(type(d) is int for shape in shapes for d in shape):  # (counted once, where no size is symbolic)
                known = count(shapes, params, np.dtype(eqn.invars[0].aval.dtype))
                return functools.partial(_counted_known, rule, known), params, 0
            return functools.partial(_counted, rule, count), params, 0
        if eqn.primitive.multiple_results:
            return (lambda inputs, kwargs, budget: list(rule(*inputs, **kwargs))), params, 0
        return (lambda inputs, kwargs, budget: [rule(*inputs, **kwargs)]), params, 0
    plans = [_HostPlan(sub, late) for sub in inner]
    if name == "cond":
        return _cond, plans, max(plan.cost for plan in plans)
    if name == "while":
        return _while, (plans, params["cond_nconsts"], params["body_nconsts"]), 0
    if name == "scan":
        ys = inner[0].jaxpr.outvars[params["num_carry"] :]
        return _scan, (plans[0], params, [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in ys]), 0
    return (lambda inputs, plan, budget: plan(inputs, budget)), plans[0], plans[0].cost


def _counted(
    rule: Callable[..., Any], count: Callable[[list, dict, Any], int], inputs: list, params: dict, budget: Budget
) -> list:
    """A product's rule, run once the budget has its multiply-adds (else the evaluation is abandoned)."""
    multiply_adds = count([np.shape(value) for value in inputs], params, np.result_type(inputs[0]))
    return _counted_known(rule, multiply_adds, inputs, params, budget)


def _counted_known(rule: Callable[..., Any], multiply_adds: int, inputs: list, params: dict, budget: Budget) -> list:
    """`_counted` with the product's multiply-adds counted when its plan was made (its shapes are static)."""
    budget.spend_products(multiply_adds)
    if multiply_adds >= BLAS_THREADED_MULTIPLY_ADDS:
        limit_blas_threads()
    return [rule(*inputs, **params)]


class _Unbindable(Exception):
    """A late plan's rule parameter check fails at one call's sizes (`_HostPlan.bound`)."""


def _step_sized(eqn: Any, params: Any) -> bool:
    """Whether a late plan's step for `eqn` (its parameters as `lowered` made them) depends on the sizes."""
    name = eqn.primitive.name
    if name == "cond":
        return any(plan.sized for plan in params)
    if name == "while":
        return any(plan.sized for plan in params[0])
    if name == "scan":
        plan, scan_params, y_structs = params
        return bool(plan.sized) or bool(_sized_names(scan_params)) or _holds_symbolic([s.shape for s in y_structs])
    if isinstance(params, _HostPlan):  # a call, custom-derivative call or remat
        return bool(params.sized)
    return bool(_sized_names(params))


def _bound_params(eqn: Any, params: Any, resolve: Callable[[Any], Any], names: tuple[str, ...]) -> Any:
    """A sized step's parameters (`_step_sized`) for one call's sizes (`names`: `_sized_names` of `eqn`'s)."""
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
    if isinstance(params, _HostPlan):
        return params.bound(resolve)
    resolved = _params(eqn, resolve, names)
    rule_ok = interpret_rules.SUPPORTED.get(name)
    if rule_ok is not None and not rule_ok(resolved):
        raise _Unbindable(name)
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


def _debugging_values() -> bool:
    """Whether `jax_debug_nans` or `jax_debug_infs` is on (the flags have no typed accessor)."""
    return bool(getattr(jax.config, "jax_debug_nans", False) or getattr(jax.config, "jax_debug_infs", False))


def placement(leaves: list) -> tuple[bool, Any]:
    """`(usable, device)`: whether the arrays live on one CPU device the outputs can go to, and that device
    when an argument is committed to it (None: the outputs stay uncommitted, as `jax.jit`'s would)."""
    committed = None
    for leaf in leaves:
        if isinstance(leaf, jax.core.Tracer):
            return False, None
        if isinstance(leaf, jax.Array):
            devices = leaf.devices()
            if len(devices) != 1:
                return False, None
            (device,) = devices
            if device.platform != "cpu":
                return False, None
            if leaf.committed:
                if committed is not None and committed != device:
                    return False, None
                committed = device
    return True, committed


class Prepared:
    """A traced program the interpreter can run (`prepare`), lowered once for any number of calls."""

    __slots__ = ("_plan", "_in_avals", "_out_tree", "work", "equations", "loop_equations")

    def __init__(self, traced: Any, work: int | None = None) -> None:
        """`work`: the elements the program's operations produce per call, where the caller counted them."""
        closed = traced.jaxpr
        self._plan = _HostPlan(closed)
        self.work = compile_tiers.produced_elements(closed) if work is None else work
        self.equations = self._plan.cost  # (nested calls' included, loop bodies once)
        self.loop_equations = 0  # the loop-body equations its last call ran (`calls_before_compile`)
        self._in_avals = [var.aval for var in closed.jaxpr.invars]
        self._out_tree = traced.out_tree

    @classmethod
    def of_plan(
        cls, plan: "_HostPlan", work: int, in_avals: list, out_tree: Any, equations: int | None = None
    ) -> "Prepared":
        """A program from its lowered plan (`BoundTemplate.bind`); `equations`: its count where the plan has
        none of its own (else the plan's)."""
        program = cls.__new__(cls)
        program._plan, program.work, program._in_avals, program._out_tree = plan, work, in_avals, out_tree
        program.equations = plan.cost if equations is None else equations
        program.loop_equations = 0
        return program

    def calls_before_compile(self) -> int:
        """The calls of this program the host computes before it compiles (`compile_tiers.calls_before_compile`
        of its equations, work, and the loop-body equations its last call ran: asked after its first call)."""
        return compile_tiers.calls_before_compile(self.equations, self.work, self.loop_equations)

    def __call__(self, args: tuple, leaves: list, host: bool = False) -> Any | None:
        """The outputs on `args` (of the traced signature), computed with NumPy; None when the arguments
        cannot be read on the host or the evaluation ran past `STEP_BUDGET`.

        `leaves` are the arrays among `args`, flat. With `host`, the outputs stay NumPy arrays (the per-op
        tier passes them on to the next kernel; see `to_device`), else they are made tensor values for the
        device `jax.jit` would place them on (`_placed`). A `host` caller runs inside `host_errors_ignored()`
        (NumPy's floating-point warnings off: XLA raises none), entered once for all its calls.
        """
        if len(leaves) != len(self._in_avals):
            return None
        if host and all(type(leaf) is np.ndarray for leaf in leaves):
            # the per-op tier's values between kernels: outputs of host kernels, flushed, of the signature's
            # dtypes (`kernel_calls.KernelCalls` keys entries by dtype)
            device, host_args = None, leaves
        else:
            usable, device = placement(leaves)
            if not usable or (host and device is not None):
                return None  # (NumPy results would lose the device committed arguments place them on)
            host_args = [host_input(leaf, aval) for leaf, aval in zip(leaves, self._in_avals)]
        if _debugging_values():  # JAX's NaN and inf checks run on compiled programs
            return None
        budget = Budget()
        try:
            if host:  # (inside the caller's `host_errors_ignored()`)
                outputs = self._plan(host_args, budget)
            else:
                with host_errors_ignored():
                    outputs = self._plan(host_args, budget)
        except CheckFailed:
            raise
        except Exception:  # noqa: BLE001 - past the budget (`_Abandon`), or a rule NumPy cannot follow here
            stats["abandoned_calls"] += 1
            return None
        stats["interpreted_calls"] += 1
        self.loop_equations = STEP_BUDGET - budget.left
        # an output that is an argument itself (`x + 0`) would share the caller's NumPy memory
        given = {id(arg) for arg in host_args}
        outputs = [np.array(out) if id(out) in given else out for out in outputs]
        if host:
            return jax.tree.unflatten(self._out_tree, [np.asarray(out) for out in outputs])
        placed = _placed(outputs, device)
        if device is None:  # the outputs of flushed arguments: free of subnormals (`mark_clean`)
            for value in placed:
                mark_clean(value)
        return jax.tree.unflatten(self._out_tree, placed)


def prepare(traced: Any, checks: bool = False) -> Prepared | None:
    """The traced program (`jax.jit(...).trace(...)`) made ready for the interpreter, or None when it cannot
    run it: its arguments must be positional arrays, its outputs strongly typed, and every equation must have
    a rule (`supported`; with `checks`, a failing runtime check raises `CheckFailed`)."""
    closed = traced.jaxpr
    if len(traced.in_tree.children()) != 2 or traced.in_tree.children()[1].num_leaves:
        return None
    if len(closed.jaxpr.invars) != traced.in_tree.num_leaves:
        return None
    if not _outputs_ok(closed):
        return None
    work = compile_tiers.produced_elements(closed)
    if work > interpret_cost.HOST_ELEMENTS or (
        interpret_cost.program_multiply_adds(closed, _inner_jaxprs) > interpret_cost.HOST_MULTIPLY_ADDS
    ):
        return None  # more work than a compile costs (`interpret_cost`)
    return Prepared(traced, work) if supported(closed, checks) else None


def _outputs_ok(closed: jax_core.ClosedJaxpr) -> bool:
    """Whether the program's outputs can be NumPy's: strongly typed (NumPy's results are never weak), and no
    `float0` (which only flows inside a VJP kernel)."""
    return not any(
        getattr(v.aval, "weak_type", False) or getattr(v.aval, "dtype", None) == jax.dtypes.float0
        for v in closed.jaxpr.outvars
    )


class BoundTemplate:
    """A trace with symbolic dimensions (a kernel family's, a `tapeshim.function`'s for every size) made ready
    for the interpreter once: `bind(sizes)` gives its `Prepared` program for one call's sizes.

    The plan is lowered once with its dimensions symbolic (`_HostPlan` made `late`); a call's sizes resolve only
    the steps whose parameters hold symbolic dimensions (`_HostPlan.bound`). Lowering the whole plan again for
    each new size cost a per-op kernel 0.2-0.5 ms, more than half of an eager step over a batch of a new size.
    """

    __slots__ = ("_plan", "_in_avals", "_out_tree", "_fixed_work", "_sized_shapes")

    def __init__(self, traced: Any, checks: bool = False) -> None:
        """`checks`: runtime checks are allowed, and a failing one raises `CheckFailed` (see `prepare`)."""
        closed = traced.jaxpr
        self._plan: _HostPlan | None = None  # None: the interpreter cannot run the trace at any size
        self._in_avals = [var.aval for var in closed.jaxpr.invars]
        self._out_tree = traced.out_tree
        shapes = [tuple(getattr(var.aval, "shape", ())) for eqn in closed.jaxpr.eqns for var in eqn.outvars]
        # each sized shape once, with how many results have it: a call's sizes resolve a few shapes, not every
        # result's (a small training step's 43 results have 4)
        self._sized_shapes = list(collections.Counter(shape for shape in shapes if _holds_symbolic(shape)).items())
        self._fixed_work = sum(math.prod(shape) for shape in shapes if not _holds_symbolic(shape))
        in_tree = traced.in_tree
        positional = len(in_tree.children()) == 2 and not in_tree.children()[1].num_leaves
        if not positional or len(self._in_avals) != in_tree.num_leaves:
            return
        if _outputs_ok(closed) and supported(closed, checks, late=True):
            self._plan = _HostPlan(closed, late=True)

    def bind(self, sizes: dict[str, int]) -> Prepared | None:
        """The program where the trace's symbols have `sizes` (one call's), or None where the interpreter cannot
        run it at these sizes (a rule's parameters it does not handle, a dimension it cannot evaluate)."""
        if self._plan is None:
            return None
        resolve = symbolic_dims.resolver(sizes)
        try:
            plan = self._plan.bound(resolve)
            work = self._work(resolve)
        except (symbolic_dims.Unresolved, _Unbindable):
            return None
        if work > interpret_cost.HOST_ELEMENTS:
            return None  # (its products are counted as it runs)
        return Prepared.of_plan(plan, work, self._in_avals, self._out_tree)

    def heavy(self, sizes: dict[str, int]) -> bool:
        """Whether `bind` refuses these sizes only for their work (too much for the host): other sizes may bind."""
        try:
            return self._work(symbolic_dims.resolver(sizes)) > interpret_cost.HOST_ELEMENTS
        except symbolic_dims.Unresolved:
            return False

    def _work(self, resolve: Callable[[Any], Any]) -> int:
        """The elements the program's operations produce at one call's sizes (`resolve`)."""
        return self._fixed_work + sum(math.prod(resolve(shape)) * count for shape, count in self._sized_shapes)


def _placed(outputs: list, device: Any) -> list:
    """NumPy `outputs` as the values of tensors: C-ordered arrays of their own (a view of another array, or
    an array of another order, is copied first).

    Outputs committed to a `device`, or made where `tf.device` (`jax.default_device`) names one, are JAX
    arrays there (one transfer for all). Others stay NumPy arrays, read-only as a constant's
    (`tensor.host_constant`: a view of a read-only base, which cannot be made writable again): the CPU's
    memory is the device's, and a compiled program takes them as it takes CPU arrays. A transfer would
    release the GIL and, while the background thread compiles, wait up to the interpreter's switch interval
    (5 ms) to take it back: a small step's host call took 5-16 ms so, where it takes 0.5 ms without."""
    owned = [out if _own_c_array(out) else np.array(out, order="C") for out in outputs]
    if device is not None:
        return jax.device_put(owned, device)
    if getattr(jax.config, "jax_default_device", None) is not None:  # (`tf.device` names one)
        return jax.device_put(owned)
    placed = []
    for array in owned:
        array.flags.writeable = False
        placed.append(array.view())
    return placed


def _own_c_array(value: Any) -> bool:
    """Whether `value` is a C-ordered NumPy array that owns its memory (a tensor can keep it as it is)."""
    return isinstance(value, np.ndarray) and value.flags.owndata and value.flags.c_contiguous


def host_value(value: Any) -> Any:
    """A leaf value for the per-op tier's host calls (where `enabled()`): an uncommitted, strongly typed array
    on the CPU as a
    flushed NumPy array (read once, where each kernel call would read it again; see `Prepared`), else `value`
    as it is (it keeps its device, and its weak type, which the kernels' dtypes depend on)."""
    if (
        type(value) is np.ndarray
        or not isinstance(value, jax.Array)
        or isinstance(value, jax.core.Tracer)
        or value.committed
        or value.weak_type
        or value.dtype not in _DTYPES
    ):
        return value
    devices = value.devices()
    if len(devices) != 1 or next(iter(devices)).platform != "cpu":
        return value
    return flush_subnormals(np.asarray(value))


def to_device(values: list) -> list:
    """`values` with the NumPy arrays among them (results computed with `host=True`) made tensor values
    (`_placed`: read-only arrays the caller's tensors own)."""
    positions = [k for k, value in enumerate(values) if isinstance(value, np.ndarray)]
    if not positions:
        return values
    placed = _placed([values[k] for k in positions], None)
    result = list(values)
    for k, array in zip(positions, placed):
        result[k] = array
    return result


def run(traced: Any, args: tuple, checks: bool = False) -> Any | None:
    """The outputs of the traced program (`jax.jit(...).trace(*args)`) on `args`, computed with NumPy;
    None when the program or its arguments are not interpretable (the caller compiles it).

    Args:
      traced: the program's trace (a `jax.stages.Traced`).
      args: the positional arguments it was traced with.
      checks: whether the program may hold runtime checks (`checkify.check`); a failing one raises
        `CheckFailed` with checkify's message.
    """
    leaves = jax.tree.leaves(args)
    program = host_program(traced, leaves, checks)
    return None if program is None else program(args, leaves)


def host_readable(leaves: list) -> bool:
    """Whether the arrays (`leaves`, flat) can be read on the host and the outputs placed as `jax.jit` would:
    concrete arrays on one CPU device (see `placement`)."""
    return placement(leaves)[0]


def host_program(traced: Any, leaves: list, checks: bool = False) -> Prepared | None:
    """`prepare(traced, checks)` where the arguments (`leaves`, flat) can be read on the host, else None."""
    return prepare(traced, checks) if host_readable(leaves) else None


def signature(leaves: Any) -> tuple:
    """What a jitted function's compile depends on for flat array arguments: shape, dtype, weak type."""
    return tuple(
        (getattr(a, "shape", ()), getattr(a, "dtype", type(a)), getattr(a, "weak_type", False)) for a in leaves
    )
