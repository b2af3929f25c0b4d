"""Two compile tiers for the eager engine's programs: a quick compile first, the optimized one once it pays.

A plan compiled on its first or second sighting (`replay.compile_now`) is
compiled first with XLA's backend optimizations off and its CPU fusion
emitters off (`BASELINE_OPTIONS`). On the 2-core development machine that cut
the compile of a small MLP's forward-and-gradient program from 165 ms to 45 ms
and first steps by 1.5-2x (`benchmarks/bench_engine.py`). The quick program
runs slower where it loops over many elements (its elementwise loops are not
vectorized): the MLP's 32 us became 62 us, about 1.5 ns per element its
operations produce. So the program is compiled again with XLA's defaults once
its calls times its work (the elements its operations produce, counted in its
jaxpr) reach `WORK_BUDGET`: a rent-or-buy rule with the optimized compile
(about 0.3 s) as the price, and a program that runs a few times (a first step,
an episode of a new length) never pays for it. A program producing
`HEAVY_WORK` elements or more per call (a compute-bound step) compiles
optimized at once: its first trace counts its work before anything compiles.
A small MLP step tiers up after about 2,300 calls, a Keras CNN step after
about 175. The rule counts calls and elements, not seconds: when a program
compiles again does not depend on the machine's load.

Per-op kernels (one op each, compiled once per op and shape) compile with the
CPU fusion emitters off only (`KERNEL_OPTIONS`): measured on single ops, that
compiles 25-50% faster and runs as fast or faster (an elementwise `tanh` over
a million floats: 452 us against 798 us).

Only on the CPU backend (XLA's GPU compiles differ), and only where this
XLA accepts the options: an XLA that refuses one (`refused`) compiles that
program, and all later ones, with its defaults.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Any, Callable, Iterator

import jax

BASELINE_OPTIONS = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}
KERNEL_OPTIONS = {"xla_cpu_use_fusion_emitters": False}  # a subset of BASELINE_OPTIONS
WORK_BUDGET = 1e8
"""Calls times elements produced after which a quick program is compiled optimized: at the measured 1.5 ns
per element that the quick program loses, 0.15 s, half what an optimized compile of a training step costs."""
HEAVY_WORK = 1e6
"""Elements produced per call from which a program compiles optimized at once: the quick program would lose
a millisecond or more per call (a compute-bound MLP step, batch 512: 12 ms against 8.2 ms), more than TF
eager's own margin."""

HOST_CALL_PENALTY_S = 40e-6
HOST_EQUATION_PENALTY_S = 4e-6
HOST_ELEMENT_PENALTY_S = 1.5e-9
"""What a call computed by the host interpreter costs more than the compiled program's (`calls_before_compile`),
measured on the 2-core development machine: about 40 us per call, which the compiled program's asynchronous
dispatch hides and the host's synchronous call does not (a small MLP step's four eager update ops cost 0.2 ms
more per step on the host: 0.43-0.49 ms against 0.22-0.24 ms), about 4 us per operation of the program run
(its forward-and-gradient program, 56 operations with its nested calls': 290 us on the host, 50-118 us
compiled), and 1.5 ns per element its operations produce (NumPy's unfused temporaries against XLA's fused
loops)."""
COMPILE_PRICE_S = 4e-3
COMPILE_EQUATION_PRICE_S = 0.2e-3
"""What a compile in the background thread costs the calling thread: its lowering runs Python (JAX's MLIR
lowering) beside the caller's, sharing the GIL, and each of the caller's GIL releases (a NumPy product) then
waits for the lowering's switch interval. Measured on the small MLP step: 3.5-4 ms per one-operation kernel,
14-22 ms for its 56-operation program (XLA's own compile releases the GIL and runs on the other core)."""
COMPILE_CORE_PRICE_S = 25e-3
COMPILE_CORE_EQUATION_PRICE_S = 1.25e-3
"""What XLA's compile itself costs a thread that computes on every core (its products split over them:
`interpret_blas.computing_on_every_core`): the compile's CPU time, which it takes from those cores while it
runs, about 25 ms for a one-operation kernel and 1.25 ms more per equation. Measured on a compute-bound MLP
step (batch 512): its forward-and-gradient program's compile (87 equations) took 133 ms of CPU alone, and its
host calls went from 12.6 ms to 18-20 ms for the 10 calls it compiled beside them (40 ms more in the call
that submitted it); each weight update's kernel compile (25 ms) cost a call 5-15 ms. A thread computing on one
core leaves the others to the compile (`COMPILE_PRICE_S` only)."""
COMPILE_CORE_PRIMITIVE_PRICES_S = {"conv_general_dilated": 40e-3, "select_and_scatter_add": 200e-3}
"""Operations XLA compiles far slower than `COMPILE_CORE_EQUATION_PRICE_S`: their compile's CPU time each, on top
(where the calling thread computes on every core). Measured on the 2-core machine with XLA's default options: a
convolution's forward 18-50 ms, with its two cotangents 138-151 ms; a max pooling's forward 17-52 ms, with its
gradient (`select_and_scatter_add`) 233-380 ms. TF's CNN tutorial's training step (three convolutions, two max
poolings; 159 equations) compiled in 1.5 s, where the per-equation price counted 0.22 s: its compile, submitted
at the 14th host call, slowed the host calls beside it from 55-65 ms to 94-167 ms for 1.5 s and landed after the
tutorial's 20 steps."""
COMPILE_CORE_GRADIENT_PRICES_S = {
    "conv_general_dilated": 3 * COMPILE_CORE_PRIMITIVE_PRICES_S["conv_general_dilated"],
    "reduce_window_max": COMPILE_CORE_PRIMITIVE_PRICES_S["select_and_scatter_add"],
    "reduce_window_min": COMPILE_CORE_PRIMITIVE_PRICES_S["select_and_scatter_add"],
}
"""`COMPILE_CORE_PRIMITIVE_PRICES_S` counted in a forward whose VJP compiles with it (`host_vjp_costs`): a
convolution with its two cotangents' convolutions, a max or min pooling with its `select_and_scatter_add`."""
COMPILE_DEFAULTS_EQUATION_SPILL_S = 3e-3
"""What a compile with XLA's default options takes from the calling thread's core per equation, beyond
`COMPILE_EQUATION_PRICE_S`, where that thread computes on one core (`calls_before_compile`'s `spill_share`): XLA's
default CPU pipeline compiles a program of several fusions on more than one thread, and on two cores the threads
beyond its first take the caller's. Measured on the 2-core development machine (jax 0.10.2), CPU time beyond the
compile's wall time: training steps of 25-101 equations 208-350 ms (compiled in 334-454 ms), an unrolled LSTM's
step of 87 equations 140 ms, programs of 15-17 equations 32-47 ms; with the quick tier's options
(`BASELINE_OPTIONS`) 20-41 ms for the steps (the per-equation price covers them), and none for a one-operation
kernel. A `tapeshim.function` step (78 equations: a product, a sparse cross-entropy, its gradient and an SGD
update) submitted its compile at its 51st call: that call took 66 ms (the compile's trace and lowering) and the
host calls beside the compile slowed from 0.49 ms to 1.25 ms, about 250 ms in all where the price counted 20 ms;
the 300-call program took 1.1-1.6x TF's time, its compile landing after its last call."""
MAX_HOST_CALLS = 3000


def calls_before_compile(
    equations: int,
    work: int,
    loop_equations: int = 0,
    on_every_core: bool = False,
    core_price_s: float = 0.0,
    spill_share: float = 0.0,
    executed: int | None = None,
) -> int:
    """Calls of one program (or eager op kernel) signature computed on the host before it compiles: a ski
    rental whose rent is a host call's extra cost (`HOST_CALL_PENALTY_S`, per operation and per element of
    `work`) and whose price is what the compile costs the calling thread (`COMPILE_PRICE_S`). A program that
    runs a few times (a short script, a training step of a new shape, the first steps of a loop) never pays
    for a compile it would not win back; a steady loop compiles after paying at most the compile twice over:
    a small MLP step after about 45 host calls, an eager op on small tensors after about 90, a compute-bound
    step (several million elements) or a loop of many iterations after one or two. Counted in operations and
    elements, not seconds, so when a program compiles does not depend on the machine's load.

    Args:
      equations: the program's operations (its jaxpr's equations, nested calls' included, loop bodies once:
        `interpret.Prepared.equations`): what its compile lowers, and what each host call runs.
      work: the elements its operations produce per call (`produced_elements`).
      loop_equations: the loop-body equations a host call ran (`interpret.Prepared.loop_equations`): each
        host call runs them, its compile lowers them once.
      on_every_core: whether the calling thread computes on every core
        (`interpret_blas.computing_on_every_core`): the compile's own CPU time is then part of its price
        (`COMPILE_CORE_PRICE_S`, and `core_price_s`).
      core_price_s: the compile CPU time of the program's slow-to-compile operations
        (`core_compile_price`), on top of their equations' price.
      spill_share: for a program compiled with XLA's default options, the share of that compile's CPU time beyond
        one core that lands on the calling thread's core (`interpret_blas.compile_spill_share`: all of it on two
        cores); `COMPILE_DEFAULTS_EQUATION_SPILL_S` per equation times it is part of the price where the thread
        computes on one core. 0 for the quick tier's and the per-op kernels' options.
      executed: the operations a host call runs, where fewer than `equations` (the host's plan computes each
        value once and skips results no output reads: `interpret_plan.HostPlan.run_cost`); None: `equations`.
    """
    if not renting[0]:
        return 1
    executed = (equations if executed is None else executed) + loop_equations
    rent = HOST_CALL_PENALTY_S + HOST_EQUATION_PENALTY_S * executed + HOST_ELEMENT_PENALTY_S * work
    price = COMPILE_PRICE_S + COMPILE_EQUATION_PRICE_S * equations
    if on_every_core:
        price += COMPILE_CORE_PRICE_S + COMPILE_CORE_EQUATION_PRICE_S * equations + core_price_s
    else:
        price += COMPILE_DEFAULTS_EQUATION_SPILL_S * equations * spill_share
    return max(1, min(MAX_HOST_CALLS, int(price / rent)))


renting = [True]
"""Whether repeating programs rent (`calls_before_compile`); `compiles_on_repeat` turns it off."""


@contextlib.contextmanager
def compiles_on_repeat() -> Iterator[None]:
    """Within it, programs and eager op kernels compile from their second call (no rental: `calls_before_compile`
    gives 1, and an eager op's signature that started renting before compiles on its next call), as they did
    before the rental. For tests whose compile counts are about something else (a steady loop compiles once,
    not once per value), so that a loop of a few steps shows them."""
    was = renting[0]
    renting[0] = False
    try:
        yield
    finally:
        renting[0] = was


stats = {"programs_tiered_up": 0}


_refused: set = set()
"""Option names this XLA refused (`refused`): options holding one are not asked for again."""


def _applicable(options: dict) -> dict | None:
    """`options` where the default backend is the CPU and XLA has not refused any of them, else None."""
    if not on_cpu() or _refused.intersection(options):
        return None
    return dict(options)


@functools.cache
def on_cpu() -> bool:
    """Whether JAX's default backend is the CPU (asked once: the backend is fixed once JAX has started)."""
    return jax.default_backend() == "cpu"


def baseline_options() -> dict | None:
    """`BASELINE_OPTIONS` where they apply (see the module docstring), else None."""
    return _applicable(BASELINE_OPTIONS)


def kernel_options() -> dict | None:
    """`KERNEL_OPTIONS` where they apply (see the module docstring), else None."""
    return _applicable(KERNEL_OPTIONS)


def refused(error: Exception, options: dict) -> bool:
    """Whether `error` (from a compile with `options`) is XLA refusing one of them, as an XLA without that
    option does; the option is then left out from now on, and the caller compiles with XLA's defaults."""
    text = str(error)
    if "No such compile option" not in text:
        return False
    _refused.update(name for name in options if name in text)
    return True


def produced_elements(closed_jaxpr: Any) -> int:
    """The elements a program's operations produce per call, counted in its jaxpr: the work measure of the
    tiers (here) and of the host interpreter's ski rental (`kernel_calls.host_calls_before_compile`; a trace
    with symbolic dimensions counts them per call's sizes: `interpret.BoundTemplate`)."""
    shapes = (getattr(var.aval, "shape", ()) for eqn in closed_jaxpr.jaxpr.eqns for var in eqn.outvars)
    return sum(math.prod(shape) for shape in shapes)


def core_compile_price(
    closed_jaxpr: Any, inner_jaxprs: Callable[[Any], list | None], prices: dict[str, float] | None = None
) -> float:
    """The compile CPU seconds of a program's slow-to-compile operations (`COMPILE_CORE_PRIMITIVE_PRICES_S`, or
    `prices`), counted in its jaxpr and the jaxprs its equations call (`inner_jaxprs(eqn)`: a loop's body once)."""
    prices = COMPILE_CORE_PRIMITIVE_PRICES_S if prices is None else prices
    total = 0.0
    for eqn in closed_jaxpr.jaxpr.eqns:
        total += prices.get(eqn.primitive.name, 0.0)
        for inner in inner_jaxprs(eqn) or ():
            total += core_compile_price(inner, inner_jaxprs, prices)
    return total


class QuickTier:
    """The calls and the work per call of a program compiled with `BASELINE_OPTIONS`."""

    __slots__ = ("calls", "work")

    def __init__(self) -> None:
        self.calls = 0
        self.work = 0  # elements its operations produce per call, from its jaxpr (`traced`)

    def traced(self, closed_jaxpr: Any) -> bool:
        """Counts the elements the program's operations produce (its first call traced it, before compiling);
        True when the program is heavy enough to compile optimized at once (`HEAVY_WORK`)."""
        self.work = produced_elements(closed_jaxpr)
        return self.heavy

    @property
    def heavy(self) -> bool:
        """Whether the program compiled optimized at once (`HEAVY_WORK`)."""
        return self.work >= HEAVY_WORK

    def after_call(self) -> bool:
        """Counts a call of a program that is not `heavy`; True when it should be compiled optimized for its
        next call."""
        self.calls += 1
        return self.calls * self.work >= WORK_BUDGET


def quick_jit(fn: Callable[..., Any], jit: Callable[..., Any]) -> tuple[Any, QuickTier | None]:
    """`jit(fn, options, traced)` with the quick tier's options (`baseline_options`, asked for at the first
    compile) and its account (`traced` receives the program's jaxpr before its first compile, and says
    whether to compile it optimized instead), or `jit(fn, None, None)` and None off the CPU backend."""
    if jax.default_backend() != "cpu":
        return jit(fn, None, None), None
    tier = QuickTier()
    return jit(fn, baseline_options, tier.traced), tier
