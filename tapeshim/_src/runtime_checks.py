"""TF's `InvalidArgumentError` for out-of-range indices that are only known when a program runs.

On CPU, TF raises `InvalidArgumentError` for an index outside its range in
`gather`, `gather_nd`, `scatter_nd`, `tensor_scatter_nd_*` and
`unsorted_segment_*`; XLA clamps or drops such indices silently. tapeshim checks
indices in two places:

* **on the host**, when the indices are concrete at the op call (eager code, and
  tape code whose indices come from data): the op raises at once, as in TF;
* **inside the compiled program**, when the indices are symbolic (an argument of
  a `tapeshim.function`, or a lazy tensor computed inside a tape). The op row
  then gets the static argument `checked=True` and its implementation calls
  `require`, a `checkify.check`. `CheckedProgram` traces a program once with
  plain `jax.jit`; only if the trace holds a check does it run the program as
  `jax.jit(checkify.checkify(program))`, read the error after each run and raise
  `InvalidArgumentError`. Programs without such checks run as plain `jax.jit`
  programs, without waiting for their results.
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from typing import Any, Callable, Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from tapeshim._src import background_compile, compile_tiers, errors, interpret, symbolic_dims
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def require(ok: jax.Array, message: str, **values: jax.Array) -> None:
    """Inside an op implementation: a runtime check that `ok` holds (a `checkify.check`).

    Args:
      ok: a boolean scalar, False when the op's input is invalid.
      message: TF's message, with `{name}` fields filled from `values` when the
        check fails.
      **values: the scalars the message names (the bad index, its position).
    """
    checkify.check(ok, message, **values)  # type: ignore[arg-type]  # `values` never names check's `debug` flag


def _has_checks(effects: Any) -> bool:
    """Whether a jaxpr's effects include checkify's error effect (it must then run under checkify)."""
    return any(interpret.is_check_effect(effect) for effect in effects)


def runtime_check_needed(indices: Tensor) -> bool:
    """Whether `indices` must be checked inside the program (True), or on the host now (False).

    Lazy indices that would run at once (no tape records them and no function is
    being traced) are computed here, so the host can check them.
    """
    trace = _thread_state.trace
    if trace is not None:
        return trace.is_symbolic(indices)
    if indices._value is None:
        if _thread_state.recorders:
            return True
        indices.value  # noqa: B018 - forces the lazy value for the host check
    return False


@functools.cache
def checks_enabled() -> bool:
    """Whether index and divisor values are checked: on CPU, as TF's CPU kernels check them.

    TF's GPU kernels do not (an out-of-range gather gives zeros, a bad label a NaN
    loss), and on an accelerator a check would wait for the device on every call;
    there tapeshim leaves the values unchecked, as TF does.
    """
    return jax.default_backend() == "cpu"


def checked_static(indices: Tensor, host_check: Callable[[Any], None], bounds: Sequence[Any] = ()) -> tuple:
    """The op's static `(("checked", True),)` when `indices` is checked in the program, else `()`.

    Concrete indices are checked now by `host_check(value)`, unless one of the
    `bounds` it checks them against is a symbolic dimension (a trace for every
    size: known per call); indices that are tracers of a JAX transformation
    tapeshim does not run (a Keras layer's JAX call) cannot be checked. Off the
    CPU nothing is checked (`checks_enabled`).
    """
    if not checks_enabled():
        return ()
    if runtime_check_needed(indices) or any(symbolic_dims.is_symbolic(bound) for bound in bounds):
        return (("checked", True),)
    value = indices._value
    if not isinstance(value, jax.core.Tracer):
        key = _verdict_key(value, host_check)
        if key is None:
            host_check(value)
        elif key not in _passed or _passed[key]() is not value:
            host_check(value)  # raises for bad values: only values that passed are remembered
            if len(_passed) >= _PASSED_SIZE:
                _passed.clear()
            _passed[key] = weakref.ref(value)
    return ()


_PASSED_SIZE = 1024
_passed: dict = {}
"""Arrays that passed a host check, by array id and check: a training loop that feeds the same
labels tensor every step checks it once, not with a device-to-host copy every step (arrays are
immutable; a weak reference tells a reused id apart)."""


def _verdict_key(value: Any, host_check: Callable[[Any], None]) -> Any:
    """`(id(value), what the check computes)`, or None when the check cannot be keyed."""
    code = getattr(host_check, "__code__", None)
    if code is None:
        return None
    try:
        cells = tuple(cell.cell_contents for cell in (host_check.__closure__ or ()))
        key = (id(value), code, cells)
        hash(key)
    except (TypeError, ValueError):
        return None
    if not all(isinstance(c, (int, str, bytes, bool, type(None), tuple)) for c in cells):
        return None
    return key


_Tracer = jax.core.Tracer

_functionalizing = threading.local()


def checks_functionalized() -> bool:
    """Whether the JAX trace under way is one that `CheckedProgram` runs under `checkify` when it holds checks.

    Code that sees only a JAX transformation's tracers (a Keras call the bridge compiles) may then `require`;
    inside other JAX traces (Keras's own `fit` step, a user's `jax.jit`) a check could not be lowered, and it
    must not.
    """
    return getattr(_functionalizing, "depth", 0) > 0


def _traced(arg: Any) -> bool:
    if isinstance(arg, (list, tuple, dict)):
        return any(isinstance(leaf, _Tracer) for leaf in jax.tree.leaves(arg))
    return isinstance(arg, _Tracer)


class _Functionalizing:
    """While tracing a top-level program of `CheckedProgram` (`checks_functionalized`); not with tracer
    arguments (a call inside another JAX trace, which may not run under `checkify`)."""

    __slots__ = ("_on",)

    def __init__(self, args: tuple) -> None:
        self._on = not any(_traced(arg) for arg in args)

    def __enter__(self) -> None:
        if self._on:
            _functionalizing.depth = getattr(_functionalizing, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        if self._on:
            _functionalizing.depth -= 1


Options = Union[dict, Callable[[], Optional[dict]], None]
"""XLA compile options: a dict, None (XLA's defaults), or a function giving either, asked at the first compile."""


class _TopLevelOptions:
    """`jax.jit(fn, compiler_options=options)`; called inside another trace (where JAX refuses compile options
    on a nested jit) it is the plain `jax.jit(fn)`, inlined into that trace. Options given as a function are
    asked for at the first call; options this XLA refuses (`compile_tiers.refused`) give way to its defaults."""

    __slots__ = ("_fn", "_options", "_jitted", "_nested")

    def __init__(self, fn: Callable[..., Any], options: Options) -> None:
        self._fn = fn
        self._options = options
        self._jitted: Any = None
        self._nested = jax.jit(fn)

    def _top_level(self) -> Any:
        jitted = self._jitted
        if jitted is None:
            if callable(self._options):
                self._options = self._options()
            options = self._options
            jitted = self._jitted = self._nested if options is None else jax.jit(self._fn, compiler_options=options)
        return jitted

    def __call__(self, *args: Any) -> Any:
        if args and isinstance(args[0], _Tracer):  # inside another trace: spares the refused call's exception
            return self._nested(*args)
        jitted = self._top_level()
        try:
            return jitted(*args)
        except ValueError as exc:
            if "only be passed to top-level" not in str(exc):
                raise
            return self._nested(*args)
        except jax.errors.JaxRuntimeError as exc:
            options = self._options if isinstance(self._options, dict) else {}  # resolved by the first call
            if jitted is self._nested or not compile_tiers.refused(exc, options):
                raise
            self._jitted = self._nested  # an XLA without one of the options: its defaults
            return self._nested(*args)

    def trace(self, *args: Any) -> Any:
        """The trace the call with `args` compiles from (the call then reuses it)."""
        if args and isinstance(args[0], _Tracer):
            return self._nested.trace(*args)
        return self._top_level().trace(*args)


def jit_with_options(fn: Callable[..., Any], options: Options) -> Callable[..., Any]:
    """`jax.jit(fn)` compiled with XLA's `options` (None: the defaults) when called at the top level."""
    return jax.jit(fn) if options is None else _TopLevelOptions(fn, options)


class CheckedProgram:
    """`jax.jit(fn)`, run under `checkify` when `fn`'s trace holds runtime checks.

    The first call traces `fn`; without checks the plain jitted function is used
    from then on (it reuses that trace, so nothing is traced twice), and
    `settled(plain)` lets the owner call it directly, without this wrapper.
    Where the host interpreter can run it, the first calls are computed on the host
    until their extra cost would have paid for the compile (a ski rental:
    `compile_tiers.calls_before_compile`); the next submits the compile to the
    background thread (`background_compile`), calls being computed on the host
    until it is done (a call of another signature ends the rental). A
    program with checks compiles under checkify there too (the host computes its
    checks meanwhile, raising TF's error as the compiled program would). A
    heavy program (`traced` says so) is hosted and compiled in the background
    too, with XLA's default options (traced again for them when submitted).
    Where the host cannot compute it (off the CPU) and its caller has a per-op
    tier (`meanwhile`), the first call submits the compile to the background
    thread and returns `NOT_READY`, as does every call of its signature until
    the compile is done: the caller runs those per op.
    """

    __slots__ = (
        "_fn", "_plain", "_checked", "_call", "_settled", "_options", "_traced", "_interpret_first", "_hosting",
        "_compiled", "_may_check", "_rent", "_meanwhile", "_host_first", "_untraced", "_compiling", "_host_only",
    )  # fmt: skip

    def __init__(
        self,
        fn: Callable[..., Any],
        settled: Callable[[Callable[..., Any]], None] | None = None,
        compiler_options: Options = None,
        traced: Callable[[Any], bool] | None = None,
        interpret_first: bool = True,
        compiled: Callable[[float], None] | None = None,
        may_check: bool = False,
        rent: bool = True,
        meanwhile: bool = False,
        compiling: Callable[[], None] | None = None,
        host_only: bool = False,
    ) -> None:
        self._fn = fn
        self._host_only = host_only
        self._compiling = compiling
        self._rent = rent
        self._meanwhile = meanwhile
        self._may_check = may_check
        self._interpret_first = interpret_first
        self._options = compiler_options
        self._traced = traced
        self._compiled = compiled
        self._plain: Any = jit_with_options(fn, compiler_options)
        self._checked: Any = None  # (a jitted function: `trace`d for the background compile)
        self._call: Callable[..., Any] = self._first_call
        self._settled = settled
        self._hosting: _Hosting | None = None
        self._host_first: Callable[[tuple], interpret.Prepared | None] | None = getattr(fn, "host_first", None)
        self._untraced = False  # (its first calls were computed from `host_first`: nothing traced yet)

    def __call__(self, *args: Any) -> Any:
        return self._call(*args)

    def _hosted_without_trace(self, args: tuple) -> Any:
        """The first call computed on the host from `fn.host_first(args)` (a gradient program's forward jaxpr and
        the host's VJP rules, `host_gradient`), without the program's JAX trace, or `NOT_READY` where it gives
        none. The trace is made when the compile is submitted (`_trace_untraced`): a program that runs a few
        times never pays for it."""
        leaves = jax.tree.leaves(args)
        if not interpret.host_readable(leaves):
            return NOT_READY
        with _Functionalizing(args):
            program = self._host_first(args)  # type: ignore[misc]
        if program is None:
            return NOT_READY
        result = host_call(program, args, leaves)
        if result is None:
            return NOT_READY
        self._untraced = True  # (before `_call` changes: another thread's call then sees it)
        self._rent_on_host(program, leaves, None)
        return result

    def _rent_on_host(self, program: interpret.Prepared, leaves: list, traced: Any) -> None:
        """The host computes the next calls of this signature until they have paid for the compile (the ski
        rental, `compile_tiers.calls_before_compile`; its first call already computed); `traced`: the trace the
        compile is submitted from (None: traced when it is submitted)."""
        rent = program.calls_before_compile(self._options is None) if self._rent else 1
        self._hosting = _Hosting(program, interpret.signature(leaves), traced, rent - 1)
        self._call = self._submit_compile

    def _heavy(self, jaxpr: Any) -> bool:
        """Whether the traced program is heavy (`traced` says so); a heavy one compiles with XLA's defaults."""
        heavy = self._traced is not None and self._traced(jaxpr)
        if heavy:
            self._options = None
            self._plain = jax.jit(self._fn)
        return heavy

    def _trace_untraced(self, args: tuple) -> Any:
        """The first trace of a program whose first calls `host_first` served: its checks and its work decide
        what compiles, as `_first_call` decides from its trace."""
        self._untraced = False
        with _Functionalizing(args):
            traced = self._plain.trace(*args)
        heavy = self._heavy(traced.jaxpr)
        checks = _has_checks(traced.jaxpr.effects)
        if checks:
            self._checked = jit_with_options(checkify.checkify(self._fn), self._options)
        return self._compiling_trace(args) if heavy or checks else traced

    def trace(self, *args: Any) -> Any:
        """The program's trace for `args` (`jax.jit(fn).trace`); a later call reuses it."""
        with _Functionalizing(args):
            return self._plain.trace(*args)

    def _first_call(self, *args: Any) -> Any:
        if self._host_first is not None and self._interpret_first and not self._may_check and interpret.enabled():
            result = self._hosted_without_trace(args)
            if result is not NOT_READY:
                return result
        with _Functionalizing(args):
            traced = self._plain.trace(*args)
        jaxpr = traced.jaxpr
        heavy = self._heavy(jaxpr)
        checks = _has_checks(jaxpr.effects)
        compile_now = self._start_checked if checks or self._may_check else self._settle_plain
        self._call = compile_now  # unless the host computes this call: the next call compiles
        if self._interpret_first and interpret.enabled():
            leaves = jax.tree.leaves(args)
            program = interpret.host_program(traced, leaves, checks)
            if program is not None:
                result = host_call(program, args, leaves)
                if result is not None:
                    if not self._may_check:
                        if checks:  # (compiled under checkify: traced so when the compile is submitted)
                            self._checked = jit_with_options(checkify.checkify(self._fn), self._options)
                        # (a heavy program compiles with XLA's defaults: its `_plain` is traced again when submitted)
                        self._rent_on_host(program, leaves, None if checks or heavy else traced)
                    return result
        if self._host_only:  # (the caller drops the program: its per-op tier serves, nothing compiles)
            self._call = self._first_call  # (a call from another holder of the program compiles nothing either)
            return NOT_HOSTED
        if self._meanwhile and _per_op_meanwhile.accepted and background_compile.enabled():
            leaves = jax.tree.leaves(args)
            if _concrete(leaves):
                if checks or self._may_check:  # (compiled under checkify)
                    self._checked = jit_with_options(checkify.checkify(self._fn), self._options)
                if checks or self._may_check or heavy:  # (or with XLA's defaults: traced again)
                    traced = self._compiling_trace(args)
                hosting = self._hosting = _Hosting(None, interpret.signature(leaves), traced, 0)
                # (run once in the background only without side effects: a program the host could interpret)
                self._note_compiling()
                hosting.submit(args if interpret.supported(traced.jaxpr, checks) else None)
                self._call = self._while_compiling
                return NOT_READY
        return compile_now(*args)

    def _submit_compile(self, *args: Any) -> Any:
        hosting = self._hosting
        leaves = jax.tree.leaves(args)
        if hosting is not None and hosting.program is not None and hosting.rented_calls == 0 and self._rent:
            # (the rental ends: longer where this thread computes on every core; once)
            hosting.rented_calls = hosting.program.extension(self._options is None)
        if hosting is not None and hosting.program is not None and hosting.rented_calls > 0:  # the host serves it
            if interpret.signature(leaves) == hosting.signature and interpret.host_readable(leaves):
                result = host_call(hosting.program, args, leaves)
                if result is not None:
                    hosting.rented_calls -= 1
                    return result
        if not background_compile.enabled():  # compiles on this call (a hosted program has checks iff `_checked`)
            if self._untraced:
                self._trace_untraced(args)
            self._hosting = None
            self._call = self._settle_plain if self._checked is None else self._start_checked
            return self._call(*args)
        if hosting is not None and hosting.traced is None and interpret.signature(leaves) != hosting.signature:
            # another signature before the hosted one's trace is made (`host_first`, checks, heavy): it compiles
            # on this call, and the hosted signature is traced when its own call submits its compile
            if self._untraced:
                self._trace_untraced(args)  # (its checks and work decide how it compiles)
            return self._compiled_call()(*args)
        if hosting is not None and interpret.host_readable(leaves):
            with _HOSTING_LOCK:  # (user threads may call one program at once: one submits)
                if hosting.pending is None:
                    if self._untraced:
                        hosting.traced = self._trace_untraced(args)
                    elif hosting.traced is None:  # a program with checks (its checkify program compiles), or heavy
                        hosting.traced = self._compiling_trace(args)
                    self._note_compiling()
                    hosting.submit(args)
                self._call = self._while_compiling
        return self._while_compiling(*args)

    def _compiling_trace(self, args: tuple) -> Any:
        """The trace of what compiles for `args`: the checkify program where there is one, else the plain one."""
        with _Functionalizing(args):
            return (self._plain if self._checked is None else self._checked).trace(*args)

    def _compiled_call(self) -> Callable[..., Any]:
        """The compiled program's call: under checkify where the program holds checks."""
        return self._plain if self._checked is None else self._run_checked

    def _while_compiling(self, *args: Any) -> Any:
        hosting = self._hosting
        if hosting is None or hosting.pending is None:  # settled by another thread, or called inside a trace
            return self._compiled_call()(*args)
        pending = hosting.pending
        if not pending.done():
            leaves = jax.tree.leaves(args)
            if hosting.program is None:  # (`meanwhile`: the caller's per-op tier serves calls of its signature)
                if interpret.signature(leaves) != hosting.signature or not _concrete(leaves):
                    return self._compiled_call()(*args)
                if _per_op_meanwhile.accepted:
                    return NOT_READY
                pending.wait()  # (a caller that must not switch tiers, a persistent tape's: the compile serves it)
            elif interpret.signature(leaves) != hosting.signature or not interpret.host_readable(leaves):
                return self._compiled_call()(*args)  # another signature (or a tracer) compiles on this thread
            else:
                result = host_call(hosting.program, args, leaves)
                if result is not None:
                    return result
                pending.wait()  # the host cannot compute it: the compile under way serves it
        self._hosting = None
        if self._compiled is not None and pending.seconds is not None:
            self._compiled(pending.seconds)
            self._compiled = None
        if self._checked is not None:
            self._call = self._run_checked
            return self._run_checked(*args)
        return self._settle_plain(*args)

    def _start_checked(self, *args: Any) -> Any:
        self._checked = jit_with_options(checkify.checkify(self._fn), self._options)
        self._call = self._run_checked
        return self._timed(self._run_checked, args)

    def _settle_plain(self, *args: Any) -> Any:
        self._call = self._plain
        if self._settled is not None:
            self._settled(self._plain)
        return self._timed(self._plain, args)

    def _note_compiling(self) -> None:
        """Tells `compiling` (once) that the program's compile starts: on this call, or submitted from it."""
        compiling, self._compiling = self._compiling, None
        if compiling is not None:
            compiling()

    def _timed(self, call: Callable[..., Any], args: tuple) -> Any:
        """`call(*args)`, the call that compiles the program: its duration goes to `compiled` (once)."""
        self._note_compiling()  # (unless its compile was submitted to the background thread: noted there)
        report = self._compiled
        if report is None:
            return call(*args)
        self._compiled = None
        start = time.perf_counter()
        result = call(*args)
        report(time.perf_counter() - start)
        return result

    def settled_on_compiled(self) -> bool:
        """Whether its calls run the compiled program from now on (the plain one or under `checkify`), not the
        host's (`device_leaves`)."""
        call = self._call
        return call is self._plain or call == self._run_checked

    def _run_checked(self, *args: Any) -> Any:
        assert self._checked is not None, "set before _run_checked becomes the call"
        with _Functionalizing(args):  # (its first call, or one with new shapes, traces `fn` under checkify)
            error, out = self._checked(*args)
        message = error.get()
        if message is not None:
            raise interpret.check_error(message)
        return out


class Upgrade:
    """A program that is recompiled with XLA's defaults (`compile_tiers`' tier-up) in the background thread:
    its calls run the program compiled before (`current`) until the new one has compiled; then `settled`
    receives the new jitted function, which serves from then on."""

    __slots__ = ("_current", "_next", "_pending", "_settled")

    def __init__(self, current: Callable[..., Any], fn: Callable[..., Any], settled: Callable[[Any], None]) -> None:
        self._current = current
        self._next = jax.jit(fn)
        self._pending: Any = None
        self._settled = settled

    def __call__(self, *args: Any) -> Any:
        pending = self._pending
        if pending is None:
            if not interpret.host_readable(jax.tree.leaves(args)):  # inside another trace: not from here
                return self._current(*args)
            traced = self._next.trace(*args)
            # run once in the background only without side effects (a program that prints is not interpretable)
            self._pending = background_compile.submit(traced, args if interpret.supported(traced.jaxpr) else None)
        elif pending.done():
            self._settled(self._next)
            return self._next(*args)
        return self._current(*args)


_HOSTING_LOCK = threading.Lock()


NOT_READY = object()
"""What a `meanwhile` program's call returns while its compile runs in the background (see `CheckedProgram`),
where its caller accepts it (`accepting_not_ready`)."""


NOT_HOSTED = object()
"""What a `host_only` program's call returns where the host interpreter cannot compute it: nothing was compiled,
and the caller runs the call per op."""


class _PerOpMeanwhile(threading.local):
    accepted = False


_per_op_meanwhile = _PerOpMeanwhile()


def accepting_not_ready(accepted: bool, call: Callable[[], Any]) -> Any:
    """`call()`, within which a `meanwhile` program's calls may return `NOT_READY` (`accepted`: the caller then
    runs that call per op) or not (they wait for the compile under way: a persistent tape's requests must not
    switch tiers between one answer and the next)."""
    was = _per_op_meanwhile.accepted
    _per_op_meanwhile.accepted = accepted
    try:
        return call()
    finally:
        _per_op_meanwhile.accepted = was


def _concrete(leaves: list) -> bool:
    """Whether no leaf is a tracer (a call from inside another trace compiles, as `jax.jit` would)."""
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in leaves)


class _Hosting:
    """A program computed on the host until its compile is submitted (its rental) and while it compiles; with
    no host program, one whose caller computes its calls per op while it compiles (`meanwhile`)."""

    __slots__ = ("program", "signature", "traced", "pending", "rented_calls")

    def __init__(self, program: interpret.Prepared | None, signature: tuple, traced: Any, rented_calls: int) -> None:
        """`rented_calls`: the calls of `signature` the host computes before one submits the compile (the ski
        rental of `compile_tiers.calls_before_compile`, less the first call)."""
        self.program = program
        self.signature = signature
        self.traced: Any = traced
        self.pending: Any = None
        self.rented_calls = rented_calls

    def submit(self, args: tuple | None) -> None:
        # (an interpretable program: no side effects; a checkify program's run returns its error, dropped)
        self.pending = background_compile.submit(self.traced, args)
        self.traced = None  # the background thread holds it until it has compiled


def host_call(program: interpret.Prepared, args: tuple, leaves: list) -> Any | None:
    """`program(args)` computed on the host (None: it cannot be), with TF's error for a failed check."""
    try:
        return program(args, leaves)
    except interpret.CheckFailed as failed:
        raise interpret.check_error(str(failed)) from None


def raise_failed(error: Any) -> None:
    """Raises TF's `InvalidArgumentError` for a `checkify` error value whose check failed (else nothing)."""
    message = error.get()
    if message is not None:
        raise interpret.check_error(message)


def jit(
    fn: Callable[..., Any],
    settled: Callable[[Callable[..., Any]], None] | None = None,
    compiler_options: Options = None,
    traced: Callable[[Any], bool] | None = None,
    interpret_first: bool = True,
    compiled: Callable[[float], None] | None = None,
    may_check: bool = False,
    rent: bool = True,
    meanwhile: bool = False,
    compiling: Callable[[], None] | None = None,
    host_only: bool = False,
) -> CheckedProgram:
    """`jax.jit(fn)` that raises TF's `InvalidArgumentError` when a runtime index check fails.

    Args:
      fn: the program.
      settled: called with the plain `jax.jit(fn)` once the first call found no
        checks in the program, so the caller can keep that instead.
      compiler_options: XLA's compile options for it (`jax.jit`'s `compiler_options`), or a function giving
        them at the first compile.
      traced: called with the program's closed jaxpr when its first call traces it, before it compiles;
        True drops `compiler_options` (the program compiles with XLA's defaults).
      interpret_first: whether the first calls may be computed by the host interpreter (`interpret.py`),
        the program then compiling once they have paid for it (`compile_tiers.calls_before_compile`; in the
        background, `background_compile`, or on the next call without that thread); False compiles on the
        first call.
      compiled: called once with the seconds the program's compile took (measured on the call that compiled
        it, or in the background thread).
      may_check: whether other argument signatures than the first may trace runtime checks (a kernel whose
        check an empty input skips): the program then always runs under `checkify`, never settling on the
        plain `jax.jit`, which cannot trace a check.
      rent: whether the host computes its first calls until they have paid for the compile (else only the
        first, the second submitting it): False for a program whose structure already ran per op until that
        paid for its compile (`replay.compile_now`).
      meanwhile: whether the caller computes a call per op when the call returns `NOT_READY`: where the host
        interpreter cannot compute the first calls (off the CPU), the first call then submits the compile to
        the background thread, and the calls of its signature return `NOT_READY` until it is done, where their
        caller accepts it (`accepting_not_ready`; other calls wait for the compile).
      compiling: called once where the program's first compile starts, on the calling thread: the call that
        compiles it, or that submits its compile to the background thread (the recompile warning's count).
      host_only: whether a call returns `NOT_HOSTED`, compiling nothing, where the host interpreter cannot
        compute it: a program made only because the host would compute it faster than the caller's per-op
        tier (`replay.compile_now`), whose caller then runs the call per op.
    """
    return CheckedProgram(
        fn,
        settled,
        compiler_options,
        traced,
        interpret_first,
        compiled,
        may_check,
        rent,
        meanwhile,
        compiling,
        host_only,
    )


# -- the checks ------------------------------------------------------------------------------
def _indexed(name: str, position: tuple[int, ...]) -> str:
    """`name[i,j]` as TF's range messages write an element's position; a scalar is just `name`."""
    return f"{name}[{','.join(map(str, position))}]" if position else name


def shape_fields(shape: tuple, prefix: str) -> tuple[str, dict[str, Any]]:
    """A shape as TF's check messages write it (`2,5`, without brackets), its symbolic dimensions (a trace for
    every size) as `{<prefix><axis>}` fields, and those fields' dimensions (`jnp.asarray` them inside the
    program for `require`: the call's sizes)."""
    parts, fields = [], {}
    for axis, d in enumerate(shape):
        if symbolic_dims.is_symbolic(d):
            fields[f"{prefix}{axis}"] = d
            parts.append("{" + f"{prefix}{axis}" + "}")
        else:
            parts.append(str(d))
    return ",".join(parts), fields


def with_size(x: jax.Array, axis: int, size: Any) -> jax.Array:
    """`x`, whose symbolic dimension `axis` a runtime check has found to be `size`, with that static size (cut
    from a padded copy: XLA cannot prove the dimension `>= size`)."""
    padding = [(0, 0, 0)] * x.ndim
    padding[axis] = (0, size, 0)
    return jax.lax.slice_in_dim(jax.lax.pad(x, jnp.zeros((), x.dtype), padding), 0, size, axis=axis)


def _sized(shape: tuple) -> bool:
    return all(d.__class__ is int for d in shape)


def first_bad(bad: jax.Array, values: jax.Array, trailing: int = 0) -> tuple[jax.Array, jax.Array]:
    """The row-major position of the first True of `bad` (0 where there is none), and the element of `values`
    there (with `trailing` axes after `bad`'s, the slice there)."""
    if _sized(bad.shape):
        first = jnp.argmax(bad.reshape(-1))
        return first, values.reshape((-1, *values.shape[values.ndim - trailing :]))[first]
    # Symbolic dimensions (a trace for every size): JAX cannot always prove a flattened size non-negative
    # (`b * (n - 1)`), nor an axis non-empty, so positions are counted and picked without flattening.
    positions = jnp.zeros(bad.shape, jnp.int32)
    stride: Any = 1
    for axis in reversed(range(bad.ndim)):
        positions = positions + jax.lax.broadcasted_iota(jnp.int32, bad.shape, axis) * jnp.asarray(stride, jnp.int32)
        stride = stride * bad.shape[axis]
    none = jnp.iinfo(jnp.int32).max
    first = jnp.min(jnp.where(bad, positions, none), initial=none)  # (`initial`: a size JAX cannot prove >= 1)
    first = jnp.where(jnp.any(bad), first, 0)
    at = (positions == first).reshape(bad.shape + (1,) * trailing)
    lowest = jnp.iinfo(values.dtype).min if jnp.issubdtype(values.dtype, jnp.integer) else -jnp.inf
    element = jnp.max(jnp.where(at, values, lowest), axis=tuple(range(bad.ndim)), initial=lowest)
    return first, element


def check_range_host(values: Any, bound: int, name: str, op_name: str, segment: bool = False) -> None:
    """Raises TF's error if a concrete index in `values` is outside [0, bound).

    With `segment`, negative ids are allowed (TF drops them) and the message is
    the segment ops' one.
    """
    values = np.asarray(values)
    bad = values >= bound if segment else (values < 0) | (values >= bound)
    if bad.any():
        position = tuple(int(k) for k in np.argwhere(bad)[0])
        if segment:
            flat = int(np.ravel_multi_index(position, values.shape)) if values.ndim else 0
            text = f"{name}[{flat}] = {values[position]} is out of range [0, {bound})"
        else:
            text = f"{_indexed(name, position)} = {values[position]} is not in [0, {bound})"
        raise errors.invalid_argument(text, op_name)


def check_range_traced(values: jax.Array, bound: int, name: str, op_name: str, segment: bool = False) -> None:
    """The runtime form of `check_range_host`, inside an op implementation."""
    if values.size == 0:
        return
    bad = values >= bound if segment else (values < 0) | (values >= bound)
    first, value = first_bad(bad, values)
    # A symbolic bound (a `tapeshim.function` traced for every size) is a field: its size on the call.
    bound_fields: dict[str, Any] = {} if isinstance(bound, int) else {"bound": jnp.asarray(bound)}
    limit = "{bound}" if bound_fields else _escape(str(bound))
    if segment:
        require(
            ~jnp.any(bad),
            _escape(f"{name}[")
            + "{p0}"
            + _escape("] = ")
            + "{value}"
            + " is out of range [0, "
            + limit
            + _escape(f") [Op:{op_name}]"),
            p0=first,
            value=value,
            **bound_fields,
        )
        return
    fields = {f"p{k}": p for k, p in enumerate(jnp.unravel_index(first, values.shape))}
    position = _escape(name) + ("[" + ",".join("{" + f + "}" for f in fields) + "]" if fields else "")
    require(
        ~jnp.any(bad),
        position + " = {value} is not in [0, " + limit + _escape(f") [Op:{op_name}]"),
        value=value,
        **fields,
        **bound_fields,
    )


def _index_vector_bad(indices: Any, shape: tuple[int, ...], xp: Any) -> Any:
    """Per index vector (last axis of `indices`), whether it falls outside `shape`."""
    depth = indices.shape[-1]
    bounds = xp.asarray(shape[:depth], dtype=indices.dtype) if depth else xp.zeros((0,), indices.dtype)
    return xp.any((indices < 0) | (indices >= bounds), axis=-1)


def _vector_message(what: str, dims: str, op_name: str, escape: Callable[[str], str] = str) -> str:
    """TF's message after an index vector, around the shape's text `dims` (`escape` applies to the rest)."""
    if op_name == "GatherNd":
        return escape(" does not index into param shape [") + dims + escape(f"], node name: {op_name}")
    return escape(f" does not index into {what} [") + dims + escape("]")


def check_vectors_host(indices: Any, shape: tuple[int, ...], op_name: str) -> None:
    """Raises TF's error if an index vector (last axis of concrete `indices`) falls outside `shape`."""
    indices = np.asarray(indices)
    if indices.size == 0 or indices.shape[-1] > len(shape):
        return
    bad = _index_vector_bad(indices, shape, np).reshape(-1)
    if bad.any():
        flat = int(np.argmax(bad))
        vector = indices.reshape(-1, indices.shape[-1])[flat]
        raise errors.invalid_argument(
            f"indices[{flat}] = [{', '.join(str(int(v)) for v in vector)}]"
            + _vector_message("shape", ",".join(map(str, shape)), op_name),
            op_name,
        )


def check_vectors_traced(indices: jax.Array, shape: tuple[int, ...], op_name: str) -> None:
    """The runtime form of `check_vectors_host`, inside an op implementation."""
    if indices.size == 0 or indices.shape[-1] > len(shape):
        return
    bad = _index_vector_bad(indices, shape, jnp)
    first, vector = first_bad(bad, indices, trailing=1)
    fields = {f"v{k}": vector[k] for k in range(indices.shape[-1])}
    text = "indices[{position}] = [" + ", ".join("{" + f + "}" for f in fields) + "]"
    # A symbolic dimension (a trace for every size) is a field: the call's size, as TF's message names it.
    dims, sizes = shape_fields(shape, "s")
    tail = _vector_message("shape", dims, op_name, _escape) + _escape(f" [Op:{op_name}]")
    require(~jnp.any(bad), text + tail, position=first, **fields, **{k: jnp.asarray(d) for k, d in sizes.items()})
