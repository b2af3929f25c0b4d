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

import functools
import math
from typing import Any, Callable

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
