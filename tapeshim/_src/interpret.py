"""The host interpreter: new programs and kernels computed with NumPy instead of compiling them first.

TF eager runs a new op or a new graph structure at once, with precompiled
kernels. tapeshim compiles each new program (a recorded structure, a per-op
kernel, a `tapeshim.function` trace) with XLA, which costs 10-150 ms per
program on a CPU: most of a first training step's time, and all the time of
a structure that never repeats. So on the CPU backend a program whose jaxpr
this module can evaluate runs here first: each equation by its NumPy rule
(`interpret_rules.RULES`), on the arrays' host memory (CPU arrays are read
without a copy). It compiles when it repeats, from the trace made here, in
the background thread (`background_compile`), its calls running here until
that compile is done:

* a program (replay, `tapeshim.function`, control flow): its first call runs
  here, its second submits its compile (`runtime_checks.CheckedProgram`);
* an eager op's kernel: the first call of each argument signature
  (`registry._Kernel.call`, `variable._update_kernel`), the second submitting
  its compile;
* a kernel of the per-op tier (`replay_eager`), whose plans call the same
  kernels many times: the first calls of a signature, until their extra
  cost would have paid for the compile (`host_calls_before_compile`),
  their results staying NumPy arrays from kernel to kernel (`to_device`).

What is not interpreted (it compiles at once, as before): a jaxpr with
host callbacks (runtime checks are interpreted where the caller allows them),
a primitive without a rule or with parameters its rule does not handle
(pooling windows, random bits, `erf`), dtypes NumPy computes differently (`bfloat16`, `float16`,
extended key types), weakly typed results, arguments that are tracers or live
on another backend or device set, and a program whose loops run past
`STEP_BUDGET` equations (compiled code serves a long loop better): that
evaluation is abandoned and the program compiles, with nothing the user sees
but the time.

Values are XLA's to the rounding of the operations: NumPy's `exp`, `tanh` and
sums are not XLA's bit for bit, so a structure's first call and its compiled
calls can differ in the last bits (as TF's eager and graph results do). The
interpreter follows XLA where IEEE arithmetic would give another value:
subnormals flush to zero (`_flush`), `x + 0` is `x` (XLA's simplifier keeps a
negative zero's sign), -0 orders below +0 in `max` and `min`, integer division
truncates, float-to-integer conversion saturates. Dtypes and shapes are the
program's exactly. A rule that raises for some input (NumPy's limits) abandons
the host call: the program compiles.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

import jax
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import background_compile, compile_tiers, errors, interpret_rules, kernel_families, symbolic_dims

KERNEL_COMPILE_S = 0.03
"""What compiling one per-op kernel costs (the kernel options of `compile_tiers`: 25-35 ms measured on the
2-core development machine for an elementwise op or its VJP)."""

HOST_CALL_PENALTY_S = 10e-6
HOST_ELEMENT_PENALTY_S = 1.5e-9
"""What a host call of a per-op kernel costs more than its compiled call: 6-17 us per call on small arrays
(NumPy's dispatch and the interpreter's bookkeeping against XLA's cached executable), plus up to 2 ns per
element the kernel's operations produce (NumPy's unfused temporaries against XLA's fused loop)."""

MAX_HOST_CALLS = 3000


def host_calls_before_compile(work: int) -> int:
    """Calls of one per-op kernel signature computed on the host before it compiles: a ski rental, whose rent
    is a host call's extra cost (`HOST_CALL_PENALTY_S`, `HOST_ELEMENT_PENALTY_S` per element of `work`) and
    whose price is the compile (`KERNEL_COMPILE_S`). A plan run per op (`replay_eager`) calls the same
    kernels many times (a 200-op chain, an episode's time steps): a small kernel runs about 3,000 host calls
    before it compiles, one over a million elements about 20. Counted in calls and elements, not seconds, so
    when a kernel compiles does not depend on the machine's load. Other kernels and programs compile on their
    second call."""
    penalty = HOST_CALL_PENALTY_S + HOST_ELEMENT_PENALTY_S * work
    return max(2, min(MAX_HOST_CALLS, int(KERNEL_COMPILE_S / penalty)))


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


def _inner_jaxprs(eqn: Any) -> list | None:
    """The jaxprs a call, custom-derivative call, remat or control-flow equation evaluates; None for others."""
    name, params = eqn.primitive.name, eqn.params
    if name in _CALLS:
        return [_closed_of(params[_CALLS[name]])]
    if name in _CUSTOM:
        return [_closed_of(params[_CUSTOM[name]])]
    if name in _REMAT or name == "scan":
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


def _same(value: Any) -> Any:
    return value


def has_loop(closed: jax_core.ClosedJaxpr) -> bool:
    """Whether `closed` (or a jaxpr it calls) holds a `while` loop."""
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive.name == "while":
            return True
        inner = _inner_jaxprs(eqn)
        if inner is not None and any(has_loop(sub) for sub in inner):
            return True
    return False


def supported(closed: jax_core.ClosedJaxpr, checks: bool = False, resolve: Callable[[Any], Any] = _same) -> bool:
    """Whether every equation of `closed` (and of the jaxprs it calls) has a rule for its parameters and
    every value a dtype NumPy computes as XLA does; with `checks`, runtime checks (`checkify.check`) are
    allowed, and a failing one raises `CheckFailed`. `resolve` gives symbolic dimensions their sizes
    (`prepare_bound`)."""
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
            if not all(supported(sub, checks, resolve) for sub in inner):
                return False
            continue
        name = eqn.primitive.name
        rule_ok = interpret_rules.SUPPORTED.get(name)
        if name not in interpret_rules.RULES or (rule_ok is not None and not rule_ok(_params(eqn, resolve))):
            return False
    return True


def _params(eqn: Any, resolve: Callable[[Any], Any]) -> dict:
    """An equation's parameters with their symbolic dimensions resolved (nested jaxprs are left as they are)."""
    if resolve is _same:
        return eqn.params
    return {name: resolve(value) for name, value in eqn.params.items()}


class _Budget:
    """The loop-body equations an evaluation may still run (straight-line code is never cut short)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = STEP_BUDGET

    def spend(self, equations: int) -> None:
        self.left -= equations
        if self.left < 0:
            raise _Abandon


_ZERO_PRESERVING = frozenset(
    ("broadcast_in_dim", "reshape", "convert_element_type", "transpose", "squeeze", "copy", "copy_p", "rev")
)
"""Primitives whose output is all zeros when their one operand is (XLA folds them into a zero constant)."""

_MAKE_SUBNORMALS = frozenset(
    (
        "add", "add_any", "sub", "mul", "div", "dot_general", "reduce_sum", "reduce_prod", "cumsum", "cumprod",
        "exp", "exp2", "expm1", "pow", "integer_pow", "logistic", "convert_element_type", "scatter-add",
        "scatter_add", "scatter-sub", "scatter_sub", "scatter-mul", "scatter_mul", "atan2", "nextafter", "rem",
        "square", "sinh", "tanh", "sin", "tan", "asin", "atan", "asinh", "atanh", "log1p", "log", "rsqrt",
        "cbrt", "sqrt", "conv_general_dilated", "real", "imag",
    )
)  # fmt: skip
"""Primitives that can make a subnormal float from normal operands (a product, a difference, an exponential
of a large negative value, a narrowing conversion): their float outputs are flushed (`_flush`). Every other
rule returns operand values or exact functions of them, which stay flushed (the per-op tier relies on this:
its host values pass from kernel to kernel unchecked, `Prepared`)."""

_TINY = {np.dtype(np.float32): np.finfo(np.float32).tiny, np.dtype(np.float64): np.finfo(np.float64).tiny}


def _all_zero(value: Any) -> bool:
    """Whether a small numeric constant holds only zeros (of either sign): XLA folds `x + it` to `x`."""
    return value.dtype.kind in "iufc" and value.size <= 4096 and not np.any(value)


_min_of = np.minimum.reduce  # (`ndarray.min` adds a Python wrapper's call to each check)


def _flush(value: Any) -> Any:
    """XLA's CPU flushes subnormal floats to (signed) zero, on input and output of every operation (as TF's
    kernels do); NumPy computes them. A float value with subnormals gets them flushed."""
    tiny = _TINY.get(value.dtype)
    if tiny is None or not value.size:
        return value
    if value.size == 1:  # a scalar: compared in Python (NaN looks further)
        if abs(value.item()) >= tiny:
            return value
        magnitude = np.abs(value)
    else:
        magnitude = np.abs(value)
        if _min_of(magnitude, axis=None) >= tiny:  # the common case: no zero, no subnormal (NaN looks further)
            return value
    subnormal = (magnitude < tiny) & (magnitude > 0)
    if subnormal.any():  # each becomes a zero of its sign
        return np.where(subnormal, np.copysign(value.dtype.type(0), value), value)
    return value


_PLAIN = object()
"""A `_HostPlan` step's parameters where its rule is one NumPy function of the operands (`interpret_rules.PLAIN`)."""


class _HostPlan:
    """A closed jaxpr lowered for repeated evaluation: steps over numbered slots, each a NumPy rule (or a
    nested plan) with its parameters, input and output slots, output dtypes and whether to flush subnormals;
    `cost` counts its equations, nested plans' included (a loop spends it per iteration of `STEP_BUDGET`)."""

    __slots__ = ("size", "fixed", "in_slots", "steps", "out_slots", "cost")

    def __init__(self, closed: jax_core.ClosedJaxpr, resolve: Callable[[Any], Any] = _same) -> None:
        jaxpr = closed.jaxpr
        slots: dict = {}
        self.fixed: list = []  # (slot, value): constants and literals
        zeros: set = set()  # slots holding only zeros (see `_kept_input`)
        self.cost = 0

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
            fixed_slot(_flush(np.asarray(const)), var)
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
            flush = name in _MAKE_SUBNORMALS and any(dtype.kind == "f" for dtype in out_dtypes)
            plain = interpret_rules.PLAIN.get(name)
            if plain is not None and len(outs) == 1:  # one NumPy call, without the rule's wrapper
                self.steps.append((plain, _PLAIN, ins, outs[0], out_dtypes[0], flush))
                continue
            run, params, inner_cost = _lowered(eqn, resolve)
            self.cost += inner_cost
            self.steps.append((run, params, ins, outs, out_dtypes, flush))
        self.out_slots = [slot_of(var) for var in jaxpr.outvars]
        self.size = len(slots) + len(self.fixed)

    def __call__(self, args: list, budget: "_Budget") -> list:
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
                env[outs] = _flush(value) if flush else value
                continue
            values = run([env[k] for k in ins], params, budget)
            for index, value, dtype in zip(outs, values, out_dtypes):
                if dtype is not None and value.dtype != dtype:
                    value = np.asarray(value).astype(dtype)
                env[index] = _flush(value) if flush else value
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


def _copy_input(inputs: list, position: int, budget: "_Budget") -> list:
    return [inputs[position]]


def _lowered(eqn: Any, resolve: Callable[[Any], Any]) -> tuple[Callable[[list, Any, "_Budget"], list], Any, int]:
    """`(run, params, cost)` for one equation: `run(inputs, params, budget)` gives its outputs as a list;
    `cost` counts the nested equations it runs once (a loop spends its body's per iteration instead)."""
    name, params = eqn.primitive.name, _params(eqn, resolve)
    inner = _inner_jaxprs(eqn)
    if inner is None:
        rule = interpret_rules.RULES[name]
        if eqn.primitive.multiple_results:
            return (lambda inputs, kwargs, budget: list(rule(*inputs, **kwargs))), params, 0
        return (lambda inputs, kwargs, budget: [rule(*inputs, **kwargs)]), params, 0
    plans = [_HostPlan(sub, resolve) for sub in inner]
    if name == "cond":
        return _cond, plans, max(plan.cost for plan in plans)
    if name == "while":
        return _while, (plans, params["cond_nconsts"], params["body_nconsts"]), 0
    if name == "scan":
        ys = inner[0].jaxpr.outvars[params["num_carry"] :]
        return _scan, (plans[0], params, [jax.ShapeDtypeStruct(resolve(v.aval.shape), v.aval.dtype) for v in ys]), 0
    return (lambda inputs, plan, budget: plan(inputs, budget)), plans[0], plans[0].cost


def _cond(inputs: list, branches: list, budget: "_Budget") -> list:
    index = min(max(int(inputs[0]), 0), len(branches) - 1)
    return branches[index](inputs[1:], budget)


def _while(inputs: list, lowered: tuple, budget: "_Budget") -> list:
    (cond, body), n_cond, n_body = lowered
    cond_consts, body_consts, carry = inputs[:n_cond], inputs[n_cond : n_cond + n_body], inputs[n_cond + n_body :]
    per_iteration = cond.cost + body.cost + 1
    while bool(cond([*cond_consts, *carry], budget)[0]):
        budget.spend(per_iteration)
        carry = body([*body_consts, *carry], budget)
    return carry


def _scan(inputs: list, lowered: tuple, budget: "_Budget") -> list:
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


def _host_array(leaf: Any, aval: Any) -> Any:
    if isinstance(leaf, jax.Array):
        return np.asarray(leaf)
    return np.asarray(leaf, dtype=aval.dtype)


def _placement(leaves: list) -> tuple[bool, Any]:
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


def host_errors_ignored() -> Any:
    """A context in which NumPy's floating-point warnings are off, as XLA's arithmetic raises none."""
    return np.errstate(all="ignore")


class Prepared:
    """A traced program the interpreter can run (`prepare`), lowered once for any number of calls."""

    __slots__ = ("_plan", "_in_avals", "_out_tree", "work")

    def __init__(self, traced: Any, resolve: Callable[[Any], Any] = _same) -> None:
        closed = traced.jaxpr
        self._plan = _HostPlan(closed, resolve)
        self.work = compile_tiers.produced_elements(closed, None if resolve is _same else resolve)
        self._in_avals = [var.aval for var in closed.jaxpr.invars]
        self._out_tree = traced.out_tree

    def __call__(self, args: tuple, leaves: list, host: bool = False) -> Any | None:
        """The outputs on `args` (of the traced signature), computed with NumPy; None when the arguments
        cannot be read on the host or the evaluation ran past `STEP_BUDGET`.

        `leaves` are the arrays among `args`, flat. With `host`, the outputs stay NumPy arrays (the per-op
        tier passes them on to the next kernel; see `to_device`), else they are placed on the device `jax.jit`
        would place them on. A `host` caller runs inside `host_errors_ignored()` (NumPy's floating-point
        warnings off: XLA raises none), entered once for all its calls.
        """
        if len(leaves) != len(self._in_avals):
            return None
        if host and all(type(leaf) is np.ndarray for leaf in leaves):
            # the per-op tier's values between kernels: outputs of host kernels, flushed, of the signature's
            # dtypes (`KernelCalls` keys entries by dtype)
            device, host_args = None, leaves
        else:
            usable, device = _placement(leaves)
            if not usable or (host and device is not None):
                return None  # (NumPy results would lose the device committed arguments place them on)
            host_args = [_flush(_host_array(leaf, aval)) for leaf, aval in zip(leaves, self._in_avals)]
        if _debugging_values():  # JAX's NaN and inf checks run on compiled programs
            return None
        try:
            if host:
                outputs = self._plan(host_args, _Budget())
            else:
                with host_errors_ignored():
                    outputs = self._plan(host_args, _Budget())
        except CheckFailed:
            raise
        except Exception:  # noqa: BLE001 - past the budget (`_Abandon`), or a rule NumPy cannot follow here
            stats["abandoned_calls"] += 1
            return None
        stats["interpreted_calls"] += 1
        # an output that is an argument itself (`x + 0`) would share the caller's NumPy memory
        given = {id(arg) for arg in host_args}
        outputs = [np.array(out) if id(out) in given else out for out in outputs]
        if host:
            return jax.tree.unflatten(self._out_tree, [np.asarray(out) for out in outputs])
        return jax.tree.unflatten(self._out_tree, _placed(outputs, device))


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
    return Prepared(traced) if supported(closed, checks) else None


def _outputs_ok(closed: jax_core.ClosedJaxpr) -> bool:
    """Whether the program's outputs can be NumPy's: strongly typed (NumPy's results are never weak), and no
    `float0` (which only flows inside a VJP kernel)."""
    return not any(
        getattr(v.aval, "weak_type", False) or getattr(v.aval, "dtype", None) == jax.dtypes.float0
        for v in closed.jaxpr.outvars
    )


def prepare_bound(traced: Any, sizes: dict[str, int], checks: bool = False) -> Prepared | None:
    """`prepare` for a trace with symbolic dimensions (`function_symbolic`), computed where its symbols have
    `sizes` (one call's): None where the interpreter cannot run it, or a dimension cannot be evaluated."""
    resolve = symbolic_dims.resolver(sizes)
    closed = traced.jaxpr
    try:
        if len(traced.in_tree.children()) != 2 or traced.in_tree.children()[1].num_leaves:
            return None
        if not _outputs_ok(closed):
            return None
        return Prepared(traced, resolve) if supported(closed, checks, resolve) else None
    except symbolic_dims.Unresolved:
        return None


def _placed(outputs: list, device: Any) -> list:
    """NumPy `outputs` as JAX arrays (one transfer for all); a view of another array is copied first, since
    a CPU array made from NumPy memory shares it."""
    owned = [out if isinstance(out, np.ndarray) and out.flags.owndata else np.array(out) for out in outputs]
    return jax.device_put(owned, device) if device is not None else jax.device_put(owned)


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
    return _flush(np.asarray(value))


def to_device(values: list) -> list:
    """`values` with the NumPy arrays among them (results computed with `host=True`) made JAX arrays."""
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
    concrete arrays on one CPU device (see `_placement`)."""
    return _placement(leaves)[0]


def host_program(traced: Any, leaves: list, checks: bool = False) -> Prepared | None:
    """`prepare(traced, checks)` where the arguments (`leaves`, flat) can be read on the host, else None."""
    return prepare(traced, checks) if host_readable(leaves) else None


def signature(leaves: Any) -> tuple:
    """What a jitted function's compile depends on for flat array arguments: shape, dtype, weak type."""
    return tuple(
        (getattr(a, "shape", ()), getattr(a, "dtype", type(a)), getattr(a, "weak_type", False)) for a in leaves
    )


class _TraceParts:
    """What `prepare_bound` reads of a trace (a family keeps this, not the trace with its function)."""

    __slots__ = ("jaxpr", "in_tree", "out_tree")

    def __init__(self, traced: Any) -> None:
        self.jaxpr, self.in_tree, self.out_tree = traced.jaxpr, traced.in_tree, traced.out_tree


class KernelCalls:
    """The calls of one jitted kernel per argument signature, with the signature's trace: the first `limit`
    calls of a signature may run on the host (`call`), later ones compile: in the background thread
    (`background_compile`), the calls running on the host until it is done. A bounded map (cleared when
    full)."""

    __slots__ = ("_entries", "open", "_families")
    _SIZE = 64

    def __init__(self, families: bool = False) -> None:
        """`families`: whether new sizes of a signature's structure may share a symbolic trace
        (`kernel_families`: only for tapeshim's own kernels, whose Python decides nothing a symbolic trace
        cannot follow)."""
        self._entries: dict = {}
        self._families: kernel_families.Families | None = kernel_families.Families() if families else None
        self.open = False
        """Whether the signature of the last `call` may still run on the host (its later calls must then go
        through `call`, which submits its compile and serves them while it runs)."""

    def call(self, jitted: Any, args: tuple, leaves: Any, limit: int | None, host: bool = False) -> Any | None:
        """`jitted(*args)` computed on the host while its signature has had at most `limit` calls, or while
        its compile, submitted by the next call, runs in the background (and where the interpreter can run
        it); else None: the caller calls `jitted`, which compiles from this trace or finds it compiled.

        Args:
          jitted: a `jax.jit` function, or anything with its `trace` (`runtime_checks.CheckedProgram`).
          args: its positional arguments.
          leaves: the arrays among them, flat.
          limit: the calls of one signature that may run on the host before it compiles; None: as many as a
            per-op kernel of its work (`host_calls_before_compile`).
          host: whether outputs computed on the host stay NumPy arrays (see `Prepared`).
        """
        key = signature(leaves)
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= self._SIZE:
                self._entries.clear()
            program = None
            checked = False  # a kernel with runtime checks (an index bound): it compiles under checkify
            if enabled() and host_readable(leaves):
                program = self._family_program(jitted, args, leaves)
                if program is None:
                    traced = jitted.trace(*args)
                    checked = any(is_check_effect(effect) for effect in traced.jaxpr.effects)
                    program = prepare(traced, checks=checked)
            work_limit = 0 if program is None else host_calls_before_compile(program.work)
            entry = self._entries[key] = [0, program, work_limit, None, checked]
        program = entry[1]
        self.open = program is not None
        if program is None:
            return None
        entry[0] += 1
        if entry[0] > (entry[2] if limit is None else limit):
            if not background_compile.enabled() or entry[4]:  # (a checked kernel compiles on its caller)
                self._drop(entry)
                return None
            pending = entry[3]
            if pending is None:
                if not host_readable(leaves):  # (tracers: compiled inside the trace that holds them)
                    self._drop(entry)
                    return None
                pending = entry[3] = background_compile.submit(jitted.trace(*args), args)
            if pending.done():
                self._drop(entry)
                return None
        try:
            result = program(args, leaves, host)
        except CheckFailed as failed:  # TF's error, as the kernel's compiled call raises it
            raise check_error(str(failed)) from None
        if result is None:
            if entry[3] is not None:
                entry[3].wait()  # (each executable compiles once)
            self._drop(entry)
            return None
        return result

    def _family_program(self, jitted: Any, args: tuple, leaves: Any) -> Prepared | None:
        """The host program of a new signature from its shape family's symbolic trace (`kernel_families`), or
        None: the caller traces the signature's own shapes."""
        if self._families is None:
            return None
        flat = list(leaves)
        found = self._families.find(args, flat, lambda symbolic: _TraceParts(jitted.trace(*symbolic)))
        if found is None:
            return None
        traced, sizes = found
        program = None
        if len(traced.jaxpr.jaxpr.invars) == traced.in_tree.num_leaves:
            program = prepare_bound(traced, sizes)
        if program is None:  # (the interpreter cannot run the trace at any size)
            self._families.failed(args, flat)
        return program

    def run(self, jitted: Any, args: tuple, leaves: Any, limit: int | None, host: bool = False) -> Any:
        """`call`, or `jitted(*args)` where it gives None: the kernel's outputs either way."""
        result = self.call(jitted, args, leaves, limit, host)
        return jitted(*args) if result is None else result

    def _drop(self, entry: list) -> None:
        """The signature's calls compile from now on: its trace is no longer needed here."""
        entry[1] = entry[3] = None
        self.open = False
