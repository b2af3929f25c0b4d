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
`interpret_plan.STEP_BUDGET` equations (compiled code serves a long loop better), and one
whose matrix products and convolutions take more arithmetic than a compile
costs (`interpret_cost`): that evaluation is abandoned, or never started, and
the program compiles, with nothing the user sees but the time.

Values are XLA's to the rounding of the operations: NumPy's `exp`, `tanh` and
sums are not XLA's bit for bit, so a structure's first call and its compiled
calls can differ in the last bits (as TF's eager and graph results do). The
interpreter follows XLA where IEEE arithmetic would give another value:
subnormals flush to zero (`interpret_fpmode`), `x + 0` is `x` (XLA's simplifier keeps a
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

from tapeshim._src import (
    compile_tiers,
    errors,
    interpret_cost,
    interpret_plan,
    interpret_random,
    interpret_rules,
    symbolic_dims,
)
from tapeshim._src.interpret_blas import (
    compile_spill_share,
    computing_on_every_core,
    host_errors_ignored,
    in_host_context,
    note_host_call,
)
from tapeshim._src.interpret_flush import flush_subnormals, host_array, host_input, mark_clean
from tapeshim._src.interpret_fpmode import FLUSHING, flushes_here
from tapeshim._src.interpret_plan import (
    Budget,
    HostPlan,
    Unbindable,
    called_jaxpr,
    holds_symbolic,
    inner_jaxprs,
    sized_names,
)

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

stats = {"interpreted_calls": 0, "abandoned_calls": 0}


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
        inner = inner_jaxprs(eqn)
        if inner is not None and any(has_loop(sub) for sub in inner):
            return True
    return False


def _key_or_aval_ok(aval: Any) -> bool:
    """`_aval_ok`, or a threefry key (which the host holds as its data: `interpret_random`)."""
    return _aval_ok(aval) or interpret_random.is_threefry_key(getattr(aval, "dtype", None))


def supported(closed: jax_core.ClosedJaxpr, checks: bool = False, late: bool = False, keys: bool = False) -> bool:
    """Whether every equation of `closed` (and of the jaxprs it calls) has a rule for its parameters and
    every value a dtype NumPy computes as XLA does; with `checks`, runtime checks (`checkify.check`) are
    allowed, and a failing one raises `CheckFailed`. With `late` (a trace with symbolic dimensions), a rule's
    parameter check is left to `HostPlan.bound` where its parameters hold them (`BoundTemplate`).

    Threefry keys may flow between the random-number rules (`interpret_random.KEY_PRIMITIVES`) and through
    calls (`keys`: `closed` is a called jaxpr, whose operands and results may be keys); a program's own
    arguments, results and constants, and every other equation's values, are arrays of `_DTYPES`."""
    jaxpr = closed.jaxpr
    if jaxpr.effects and not (checks and all(is_check_effect(effect) for effect in jaxpr.effects)):
        return False
    ends_ok = _key_or_aval_ok if keys else _aval_ok
    if not all(ends_ok(v.aval) for v in (*jaxpr.invars, *jaxpr.outvars)):
        return False
    if not all(_aval_ok(v.aval) for v in jaxpr.constvars):
        return False
    for eqn in jaxpr.eqns:
        called = called_jaxpr(eqn)
        call = called is not None
        name = eqn.primitive.name
        values_ok = _key_or_aval_ok if call or name in interpret_random.KEY_PRIMITIVES else _aval_ok
        if not all(values_ok(v.aval) for v in (*eqn.invars, *eqn.outvars)):
            return False
        inner = [called] if called is not None else inner_jaxprs(eqn)
        if inner is not None:
            if not all(supported(sub, checks, late, call) for sub in inner):
                return False
            continue
        if name not in interpret_rules.RULES:
            return False
        rule_ok = interpret_rules.SUPPORTED.get(name)
        if rule_ok is not None and not (late and sized_names(eqn.params)) and not rule_ok(eqn.params):
            return False
    return True


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

    __slots__ = (
        "_plan",
        "_in_avals",
        "_out_tree",
        "work",
        "equations",
        "host_equations",
        "loop_equations",
        "core_price_s",
        "_extension_asked",
    )

    def __init__(self, traced: Any, work: int | None = None) -> None:
        """`work`: the elements the program's operations produce per call, where the caller counted them."""
        closed = traced.jaxpr
        self._plan = HostPlan(closed)
        self.work = compile_tiers.produced_elements(closed) if work is None else work
        self.equations = self._plan.cost  # (nested calls' included, loop bodies once)
        self.host_equations = self._plan.run_cost  # (the steps a host call runs: each value once, none unread)
        self.loop_equations = 0  # the loop-body equations its last call ran (`calls_before_compile`)
        self.core_price_s = compile_tiers.core_compile_price(closed, inner_jaxprs)  # (slow-to-compile operations)
        self._extension_asked = False
        self._in_avals = [var.aval for var in closed.jaxpr.invars]
        self._out_tree = traced.out_tree

    @classmethod
    def of_plan(
        cls,
        plan: "HostPlan",
        work: int,
        in_avals: list,
        out_tree: Any,
        equations: int | None = None,
        core_price_s: float = 0.0,
    ) -> "Prepared":
        """A program from its lowered plan (`BoundTemplate.bind`); `equations`: its count where the plan has
        none of its own (else the plan's); `core_price_s`: its slow-to-compile operations' compile CPU time
        (`compile_tiers.core_compile_price`)."""
        program = cls.__new__(cls)
        program._plan, program.work, program._in_avals, program._out_tree = plan, work, in_avals, out_tree
        program.equations = plan.cost if equations is None else equations
        program.host_equations = plan.run_cost if equations is None else equations
        program.core_price_s = core_price_s
        program.loop_equations = 0
        program._extension_asked = False
        return program

    def calls_before_compile(self, defaults: bool = False) -> int:
        """The calls of this program the host computes before it compiles (`compile_tiers.calls_before_compile`
        of its equations, work, and the loop-body equations its last call ran: asked after its first call);
        `defaults`: whether it compiles with XLA's default options (a multithreaded compile:
        `compile_tiers.COMPILE_DEFAULTS_EQUATION_SPILL_S`)."""
        spill_share = compile_spill_share() if defaults else 0.0
        return compile_tiers.calls_before_compile(
            self.equations, self.work, self.loop_equations, spill_share=spill_share, executed=self.host_equations
        )

    def extension(self, defaults: bool = False) -> int:
        """The calls the host computes beyond `calls_before_compile` where this thread computes on every core as
        that rental ends (`interpret_blas.computing_on_every_core`: a compile would take cores from it), else 0.
        Only the first ask extends: the renter asks each call past its rental, and the rental ends once.
        `defaults`: as `calls_before_compile`'s."""
        if self._extension_asked:
            return 0
        self._extension_asked = True
        if not computing_on_every_core():
            return 0
        on_every_core = compile_tiers.calls_before_compile(
            self.equations, self.work, self.loop_equations, True, self.core_price_s, executed=self.host_equations
        )
        return max(0, on_every_core - self.calls_before_compile(defaults))

    def __call__(self, args: tuple, leaves: list, host: bool = False) -> Any | None:
        """The outputs on `args` (of the traced signature), computed with NumPy; None when the arguments
        cannot be read on the host or the evaluation ran past `interpret_plan.STEP_BUDGET`.

        `leaves` are the arrays among `args`, flat. With `host`, the outputs stay NumPy arrays (the per-op
        tier passes them on to the next kernel; see `to_device`), else they are made tensor values for the
        device `jax.jit` would place them on (`_placed`). A `host` caller runs inside `host_errors_ignored()`
        (NumPy's floating-point warnings off, as XLA raises none), entered once for all its calls (a call
        outside one enters its own). The plan's evaluation runs with subnormals flushed as XLA's CPU flushes
        them (`interpret_fpmode.FLUSHING`).
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
            # (unchecked where the evaluation's modes flush as XLA's: `interpret_fpmode`)
            read = host_array if flushes_here() else host_input
            host_args = [read(leaf, aval) for leaf, aval in zip(leaves, self._in_avals)]
        if _debugging_values():  # JAX's NaN and inf checks run on compiled programs
            return None
        budget = Budget()
        note_host_call()
        try:
            if host and in_host_context():  # (inside the caller's `host_errors_ignored()`)
                with FLUSHING:  # (NumPy's arithmetic flushes subnormals as XLA's: `interpret_fpmode`)
                    outputs = self._plan(host_args, budget)
            else:
                with host_errors_ignored(flushing=True):
                    outputs = self._plan(host_args, budget)
        except CheckFailed:
            raise
        except Exception:  # noqa: BLE001 - past the budget (`Abandon`), or a rule NumPy cannot follow here
            stats["abandoned_calls"] += 1
            return None
        stats["interpreted_calls"] += 1
        self.loop_equations = interpret_plan.STEP_BUDGET - budget.left
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
        interpret_cost.program_multiply_adds(closed, inner_jaxprs) > interpret_cost.HOST_MULTIPLY_ADDS
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

    The plan is lowered once with its dimensions symbolic (`HostPlan` made `late`); a call's sizes resolve only
    the steps whose parameters hold symbolic dimensions (`HostPlan.bound`). Lowering the whole plan again for
    each new size cost a per-op kernel 0.2-0.5 ms, more than half of an eager step over a batch of a new size.
    """

    __slots__ = ("_plan", "_in_avals", "_out_tree", "_fixed_work", "_sized_shapes", "_core_price_s")

    def __init__(self, traced: Any, checks: bool = False) -> None:
        """`checks`: runtime checks are allowed, and a failing one raises `CheckFailed` (see `prepare`)."""
        closed = traced.jaxpr
        self._plan: HostPlan | None = None  # None: the interpreter cannot run the trace at any size
        self._in_avals = [var.aval for var in closed.jaxpr.invars]
        self._out_tree = traced.out_tree
        shapes = [tuple(getattr(var.aval, "shape", ())) for eqn in closed.jaxpr.eqns for var in eqn.outvars]
        # each sized shape once, with how many results have it: a call's sizes resolve a few shapes, not every
        # result's (a small training step's 43 results have 4)
        self._sized_shapes = list(collections.Counter(shape for shape in shapes if holds_symbolic(shape)).items())
        self._fixed_work = sum(math.prod(shape) for shape in shapes if not holds_symbolic(shape))
        self._core_price_s = compile_tiers.core_compile_price(closed, inner_jaxprs)
        in_tree = traced.in_tree
        positional = len(in_tree.children()) == 2 and not in_tree.children()[1].num_leaves
        if not positional or len(self._in_avals) != in_tree.num_leaves:
            return
        if _outputs_ok(closed) and supported(closed, checks, late=True):
            self._plan = HostPlan(closed, late=True)

    def bind(self, sizes: dict[str, int]) -> Prepared | None:
        """The program where the trace's symbols have `sizes` (one call's), or None where the interpreter cannot
        run it at these sizes (a rule's parameters it does not handle, a dimension it cannot evaluate)."""
        if self._plan is None:
            return None
        resolve = symbolic_dims.resolver(sizes)
        try:
            plan = self._plan.bound(resolve)
            work = self._work(resolve)
        except (symbolic_dims.Unresolved, Unbindable):
            return None
        if work > interpret_cost.HOST_ELEMENTS:
            return None  # (its products are counted as it runs)
        return Prepared.of_plan(plan, work, self._in_avals, self._out_tree, core_price_s=self._core_price_s)

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
    array = np.asarray(value)
    return array if flushes_here() else flush_subnormals(array)  # (read where the modes flush: unchecked)


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
