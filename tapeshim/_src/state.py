"""Per-thread state: what records, where variables read and write, the name scope, the differentiation mode.

TF's tapes are per thread: a tape records only the ops its own thread runs. The
`recorders` list holds the recording tapes and forward accumulators of the
calling thread, outermost first; `trace` is the `tapeshim.function` trace being
recorded, if any.

Where a `Variable` reads and writes is decided by explicit scope objects,
entered with `with` (as Keras's `StatelessScope`): a `StatelessScope` stands for
a JAX function being traced (a custom gradient's, a Keras call's), and carries
the values its variables read and the writes it collects as data. The name
scope stack (`tf.name_scope`) and the differentiation mode (`DifferentiationMode`,
which picks the gradient rule of ops whose TF rule JAX cannot do in forward
mode) live here too.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jax

    from tapeshim._src.variable import Variable


class StatelessScope:
    """Runs user code inside a JAX function's trace, as Keras's `StatelessScope`.

    Inside, no tape records (except `collector`, which only notes the variables
    read), no `tapeshim.function` trace is active, and a variable whose id is in
    `values` reads that JAX value (an input of the JAX function) instead of its
    own. With `writes`, an assignment stores the new value in `values` and notes
    the variable in `writes` (the JAX function returns the new values) instead of
    storing a traced value in the variable; without it, assignments write the
    variable as outside.

    Args:
      values: variable id -> the JAX value the variable reads inside; None reads
        every variable's own value.
      collector: a recorder that notes the variables read (`_variable_read`) and, before
        each assignment inside, the variable assigned (`before_write(variable, value)`),
        or None (`custom_gradient._VariableCollector`).
      writes: variable id -> variable, filled with the variables assigned inside;
        None for a function whose assignments write the variables directly.
    """

    __slots__ = ("values", "writes", "collector", "_saved")

    def __init__(
        self,
        values: dict[int, jax.Array] | None = None,
        collector: Any = None,
        writes: dict[int, Variable] | None = None,
    ) -> None:
        self.values = values
        self.writes = writes
        self.collector = collector
        self._saved: tuple = ()

    def __enter__(self) -> StatelessScope:
        state = _thread_state
        self._saved = (state.recorders, state.trace, state.stateless_scope)
        state.recorders = [self.collector] if self.collector is not None else []
        state.trace = None
        state.stateless_scope = self
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        state = _thread_state
        state.recorders, state.trace, state.stateless_scope = self._saved
        self._saved = ()


class DifferentiationMode:
    """Sets whether the program being traced is differentiated in forward mode (`jax.jvp`).

    Ops whose TF gradient is a reverse-mode rule (`jax.custom_vjp`, which JAX
    cannot differentiate in forward mode) read `in_forward_mode()` while they
    are traced and use JAX's rule in forward mode. A program traced in one mode
    is only reused in that mode: the differentiated programs are keyed by it.

    Args:
      forward: True while a forward-mode program is traced, False for reverse mode.
      inline_kernels: whether ops' kernels are their cached `jit` traces, inlined (`registry._Kernel`): a long
        reverse-mode program's (never in forward mode, where a cached trace would hold reverse-mode rules).
    """

    __slots__ = ("forward", "inline_kernels", "_saved")

    def __init__(self, forward: bool, inline_kernels: bool = False) -> None:
        self.forward = forward
        self.inline_kernels = inline_kernels and not forward
        self._saved = (False, False)

    def __enter__(self) -> DifferentiationMode:
        state = _thread_state
        self._saved = (state.forward_mode, state.inline_kernels)
        state.forward_mode, state.inline_kernels = self.forward, self.inline_kernels
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        _thread_state.forward_mode, _thread_state.inline_kernels = self._saved


class HostRulesTrace:
    """Names the trace (`trace`, JAX's) whose jaxpr only the host's VJP rules read (`host_gradient.FirstCalls`):
    JAX neither runs nor differentiates it. A Keras call's family program binds its symbolic jaxpr there with
    the trace's sizes put in (`keras_program_families`, `jaxpr_specialize`), where another trace would run its
    Python. Only values of that very trace qualify: a gradient taken inside the forward (a gradient penalty)
    differentiates its own trace's values."""

    __slots__ = ("_trace", "_saved")

    def __init__(self, trace: Any) -> None:
        self._trace = trace
        self._saved: Any = None

    def __enter__(self) -> HostRulesTrace:
        self._saved, _thread_state.host_rules_trace = _thread_state.host_rules_trace, self._trace
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        _thread_state.host_rules_trace = self._saved


class _ThreadState(threading.local):
    def __init__(self) -> None:
        super().__init__()
        self.recorders: list[Any] = []
        self.trace: Any = None  # the `tapeshim.function` trace being recorded, if any
        self.stateless_scope: StatelessScope | None = None  # the innermost JAX function being traced, if any
        self.name_stack: list[str] = []  # the `tf.name_scope` names, outermost first
        self.forward_mode = False  # see `DifferentiationMode`
        self.inline_kernels = False  # see `DifferentiationMode`
        self.host_rules_trace: Any = None  # see `HostRulesTrace`
        # While a mapped dataset's element spec is computed from a run on its first element: tensor id -> the
        # shape TF's graph knows for it (a `py_function` output's is unknown until `set_shape`)
        self.graph_shapes: dict[int, Any] | None = None
        # Where random ops (`seed -> key tensor`) and `tf.random.Generator` draws (`draw -> key tensor`) take
        # their keys inside a JAX function being traced (a Keras call's, a custom gradient's); None: drawn anew
        self.random_key_source: Any = None
        self.generator_key_source: Any = None
        # Inside a user's Keras `call` being traced: tapeshim ops on concrete values are computed at once,
        # as TF's shape inference folds constants (`tf.reshape(x, (tf.shape(x)[0], -1))`); see `registry.apply`
        self.fold_constants = False


_thread_state = _ThreadState()


def stateless_scope() -> StatelessScope | None:
    """The innermost `StatelessScope` of this thread, or None."""
    return _thread_state.stateless_scope


def in_forward_mode() -> bool:
    """Whether a forward-mode (jvp) program is being traced on this thread (see `DifferentiationMode`)."""
    return _thread_state.forward_mode


def current_name_scope() -> str:
    """The active name scope, `"a/b/"`, or `""`."""
    return "".join(f"{s}/" for s in _thread_state.name_stack)


def enter_name_scope(name: str) -> list[str] | None:
    """Enters name scope `name` (one ending in "/" replaces the whole stack).

    Returns:
      What `exit_name_scope` needs to restore the stack: the replaced stack, or
      None when `name` was pushed.
    """
    stack = _thread_state.name_stack
    if name.endswith("/"):
        saved = list(stack)
        stack[:] = [part for part in name.split("/") if part]
        return saved
    stack.append(name)
    return None


def exit_name_scope(saved: list[str] | None) -> None:
    """Leaves the name scope entered by the `enter_name_scope` call that returned `saved`."""
    stack = _thread_state.name_stack
    if saved is not None:
        stack[:] = saved
    else:
        stack.pop()


next_tensor_id = itertools.count(1).__next__
"""Returns a fresh id for a tensor. Ids are never reused, unlike `id()`."""


class Epoch:
    """One recording of a tape: `done` once the tape released what it recorded (after `gradient`).

    A lazy tensor whose node belongs to a finished epoch is left over from an
    earlier step (`total = total + loss` across steps): the next op that uses it
    forces it first, so no lazy graph spans more than one step.
    """

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = False


class LiveRecorders:
    """Every tape and accumulator alive (of any thread), held weakly.

    A `weakref.WeakSet` iterates through a guarded generator; `release` reads
    this set after every gradient, so it keeps one weak reference per recorder
    in a dict (removed when the recorder dies) and hands out a list.
    """

    __slots__ = ("_refs",)

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}

    def add(self, recorder: Any) -> None:
        """Adds `recorder` until it dies."""
        refs = self._refs
        key = id(recorder)

        def forget(_: weakref.ref, key: int = key) -> None:
            refs.pop(key, None)

        refs[key] = weakref.ref(recorder, forget)

    def alive(self) -> list[Any]:
        """The recorders alive now."""
        found = []
        for ref in list(self._refs.values()):
            recorder = ref()
            if recorder is not None:
                found.append(recorder)
        return found

    def __len__(self) -> int:
        return len(self.alive())


live_recorders = LiveRecorders()
"""Every tape and accumulator alive (of any thread): a forced tensor keeps its node while one needs it."""
