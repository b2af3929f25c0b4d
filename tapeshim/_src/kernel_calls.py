"""Per-signature calls of a jitted kernel: computed on the host first, compiled once they repeat.

An eager op's kernel (`registry`), a variable update's and the per-op tier's forward and VJP kernels
(`replay_eager`) are called through `KernelCalls`: the first calls of each argument signature run in the host
interpreter (`interpret`), new sizes of a structure from its shape family's one symbolic trace
(`kernel_families`, `interpret.BoundTemplate`), and the signature compiles in the background thread once its
host calls would have paid for the compile (`host_calls_before_compile`).
"""

from __future__ import annotations

from typing import Any, Callable

import jax

from tapeshim._src import background_compile, compile_tiers, interpret, kernel_families

KERNEL_COMPILE_S = 0.03
"""What compiling one per-op kernel costs (the kernel options of `compile_tiers`: 25-35 ms measured on the
2-core development machine for an elementwise op or its VJP)."""

HOST_CALL_PENALTY_S = 10e-6
HOST_ELEMENT_PENALTY_S = 1.5e-9
"""What a host call of a per-op kernel costs more than its compiled call: 6-17 us per call on small arrays
(NumPy's dispatch and the interpreter's bookkeeping against XLA's cached executable), plus up to 2 ns per
element the kernel's operations produce (NumPy's unfused temporaries against XLA's fused loop)."""

MAX_HOST_CALLS = 3000

UNTRACED_CALLS = 256
"""Host calls of a signature served by a program made without the kernel's trace (`KernelCalls`' `untraced`:
a VJP kernel's from its forward jaxpr, `host_vjp`) before the kernel is traced: that program saves a trace of
5-20 ms and costs up to a few tens of us a call more than the trace's (it computes again the forward values its
rules read, unfused, where the trace's program keeps only what the VJP needs), so a signature called this often is
traced, as a ski rental."""


def host_calls_before_compile(work: int) -> int:
    """Calls of one per-op kernel signature computed on the host before it compiles: a ski rental, whose rent
    is a host call's extra cost (`HOST_CALL_PENALTY_S`, `HOST_ELEMENT_PENALTY_S` per element of `work`) and
    whose price is the compile (`KERNEL_COMPILE_S`). A plan run per op (`replay_eager`) calls the same
    kernels many times (a 200-op chain, an episode's time steps): a small kernel runs about 3,000 host calls
    before it compiles, one over a million elements about 20. Counted in calls and elements, not seconds, so
    when a kernel compiles does not depend on the machine's load. An eager op's kernel and a program rent
    for fewer calls (`compile_tiers.calls_before_compile`: their compile's price is the time it takes from the
    calling thread, the rest running in the background)."""
    penalty = HOST_CALL_PENALTY_S + HOST_ELEMENT_PENALTY_S * work
    return max(2, min(MAX_HOST_CALLS, int(KERNEL_COMPILE_S / penalty)))


_FIRST_CALL_LIMITS = (1, 1)
"""A new signature's limits until its first host call has run (`KernelCalls.call` then sets its own)."""


class KernelCalls:
    """The calls of one jitted kernel per argument signature, with the signature's trace: the first calls of a
    signature may run on the host (`call`; how many: `host_calls_before_compile` from the per-op tier,
    `compile_tiers.calls_before_compile` from an eager op), later ones compile: in the background thread
    (`background_compile`), the calls running on the host until it is done. A bounded map (the least
    recently called signature goes when it is full)."""

    __slots__ = ("_entries", "open", "_families", "on_compile", "_untraced")
    _SIZE = 1024
    """Signatures kept per kernel, the least recently called going first. An eager op's signature rents for up
    to about 90 calls: a model calling one op at a hundred shapes in each step (an eager ResNet's additions)
    must keep each signature's count until it compiles, or it would run on the host, traced again, for ever
    (it kept 64, cleared when full, when a signature compiled on its second call)."""

    def __init__(
        self, families: bool = False, untraced: Callable[[tuple], interpret.Prepared | None] | None = None
    ) -> None:
        """`families`: whether new sizes of a signature's structure may share a symbolic trace
        (`kernel_families`: only for tapeshim's own kernels, whose Python decides nothing a symbolic trace
        cannot follow). `untraced(args)`: a new signature's host program made without tracing the kernel, or
        None (a VJP kernel's from its op's forward jaxpr: `host_vjp`); its compile traces the kernel."""
        self._entries: dict = {}
        self._families: kernel_families.Families | None = kernel_families.Families() if families else None
        self._untraced = untraced
        self.open = False
        """Whether the signature of the last `call` may still run on the host (its later calls must then go
        through `call`, which submits its compile and serves them while it runs)."""
        self.on_compile: Callable[[Any], None] | None = None
        """Called with a call's `leaves` where an eager op's call starts its signature's compile, on the caller
        or in the background: the recompile warning counts compiles, not new signatures, which the host
        serves. The per-op tier's compiles belong to its plans, not to the user's
        line that ran one (a `tape.gradient` compiling a product kernel per weight shape, once)."""

    def call(self, jitted: Any, args: tuple, leaves: Any, eager: bool, host: bool = False) -> Any | None:
        """`jitted(*args)` computed on the host until its signature's calls have paid for its compile, or while
        its compile, submitted by the next call, runs in the background (and where the interpreter can run
        it); else None: the caller calls `jitted`, which compiles from this trace or finds it compiled.

        Args:
          jitted: a `jax.jit` function, or anything with its `trace` (`runtime_checks.CheckedProgram`).
          args: its positional arguments.
          leaves: the arrays among them, flat.
          eager: whether an eager op calls it: a signature then runs on the host for as many calls as
            `compile_tiers.calls_before_compile` gives its program (the compile's price there is the time its
            lowering takes from the calling thread); else (the per-op tier) as many as
            `host_calls_before_compile` gives (its price is the whole compile).
          host: whether outputs computed on the host stay NumPy arrays (see `interpret.Prepared`).
        """
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            # (inside another trace, a custom gradient's shape evaluation: the caller traces the kernel there;
            # noted as a signature, its entry would have no host program, and its concrete calls would compile;
            # `open`: the eager op's later concrete calls still come here first)
            self.open = True
            return None
        key = interpret.signature(leaves)
        entries = self._entries
        entry = entries.pop(key, None)
        if entry is not None:
            entries[key] = entry  # (the most recently called last)
        else:
            if len(entries) >= self._SIZE:  # the least recently called goes (its rental or its dropped trace)
                del entries[next(iter(entries))]
            program = None
            checked = False  # a kernel with runtime checks (an index bound): it compiles under checkify
            untraced = False
            if interpret.enabled() and interpret.host_readable(leaves):
                program = self._family_program(jitted, args, leaves)
                if program is None and self._untraced is not None:
                    program = self._untraced(args)
                    untraced = program is not None
                if program is None:
                    traced = jitted.trace(*args)
                    checked = any(interpret.is_check_effect(effect) for effect in traced.jaxpr.effects)
                    program = interpret.prepare(traced, checks=checked)
            # the calls before it compiles, from the per-op tier and from an eager op: set after its first call
            entry = entries[key] = [0, program, _FIRST_CALL_LIMITS, None, checked, untraced]
            if program is None:
                self._compiling(leaves, eager)  # (the caller compiles it now)
        program = entry[1]
        self.open = program is not None
        if program is None:
            return None
        entry[0] += 1
        if entry[5] and entry[0] > UNTRACED_CALLS:  # (the kernel's trace now pays: its host program is faster)
            entry[5] = False
            traced_program = interpret.prepare(jitted.trace(*args))
            if traced_program is not None:
                entry[1] = program = traced_program
        limit = entry[2][eager] if not eager or compile_tiers.renting[0] else 1
        if entry[0] > limit and eager and compile_tiers.renting[0]:
            # (the rental ends: longer where this thread computes on every core; once)
            limit += program.extension()
            entry[2] = (entry[2][0], limit)
        if entry[0] > limit:
            if not background_compile.enabled() or entry[4]:  # (a checked kernel compiles on its caller)
                self._compiling(leaves, eager)
                self._drop(entry)
                return None
            pending = entry[3]
            if pending is None:
                if not interpret.host_readable(leaves):  # (tracers: compiled inside the trace that holds them)
                    self._drop(entry)
                    return None
                self._compiling(leaves, eager)
                pending = entry[3] = background_compile.submit(jitted.trace(*args), args)
            if pending.done():
                self._drop(entry)
                return None
        try:
            result = program(args, leaves, host)
        except interpret.CheckFailed as failed:  # TF's error, as the kernel's compiled call raises it
            raise interpret.check_error(str(failed)) from None
        if result is None:  # (the host cannot compute it after all: the caller compiles it, or has)
            if entry[3] is not None:
                entry[3].wait()  # (each executable compiles once)
            else:
                self._compiling(leaves, eager)
            self._drop(entry)
            return None
        if entry[0] == 1:  # (after its first call: the loop-body equations it ran count in an eager op's rent)
            entry[2] = (host_calls_before_compile(program.work), program.calls_before_compile())
        return result

    def _family_program(self, jitted: Any, args: tuple, leaves: Any) -> interpret.Prepared | None:
        """The host program of a new signature from its shape family's symbolic trace (`kernel_families`), or
        None: the caller traces the signature's own shapes."""
        if self._families is None:
            return None
        flat = list(leaves)
        found = self._families.find(args, flat, lambda symbolic: interpret.BoundTemplate(jitted.trace(*symbolic)))
        if found is None:
            return None
        template, sizes = found
        program = template.bind(sizes)
        if program is None and not template.heavy(sizes):  # (the interpreter cannot run the trace at any size)
            self._families.failed(args, flat)
        return program

    def run(self, jitted: Any, args: tuple, leaves: Any, eager: bool, host: bool = False) -> Any:
        """`call`, or `jitted(*args)` where it gives None: the kernel's outputs either way."""
        result = self.call(jitted, args, leaves, eager, host)
        return jitted(*args) if result is None else result

    def _compiling(self, leaves: Any, eager: bool) -> None:
        if self.on_compile is not None and eager:
            self.on_compile(leaves)

    def _drop(self, entry: list) -> None:
        """The signature's calls compile from now on: its trace is no longer needed here."""
        entry[1] = entry[3] = None
        self.open = False
