"""What `GradientTape.explain` needs to remember while a tape records (no heavy imports).

The tape and tensor modules call these hooks at a few rare moments: a tape is
entered or exited, `stop_recording` pauses it, `gradient` returns, and a
tracked tensor leaves the tape through `.numpy()`, `float()` or a numpy/JAX
call. Each event keeps the file and line of the user's code. With
`tapeshim.experimental.explain_none_gradients(True)`, every tensor created
while a tape records also keeps its line and the op that made it, so
explanations can name the op that cut a path (`tf.round`, `tf.argmax`, ...).

This module imports only `state`, so `tensor.py` and `tape.py` can import it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, NamedTuple

from tapeshim._src.node import OpKey, op_type_of
from tapeshim._src.state import _thread_state, next_tensor_id

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_CONTEXTLIB = os.path.abspath(contextlib.__file__)
_MAX_EXITS = 32
_MAX_SITES = 50_000


class Site:
    """A place in the user's code (its line is worked out only when read)."""

    __slots__ = ("_code", "_lasti")

    def __init__(self, code: Any, lasti: int) -> None:
        self._code = code
        self._lasti = lasti

    @property
    def filename(self) -> str:
        return self._code.co_filename

    @property
    def function(self) -> str:
        return self._code.co_name

    @property
    def lineno(self) -> int:
        line = self._code.co_firstlineno
        for start, end, number in self._code.co_lines():
            if start <= self._lasti < end and number is not None:
                return number
        return line

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Site) and (self.filename, self.lineno) == (other.filename, other.lineno)

    def __hash__(self) -> int:
        return hash((self.filename, self.lineno))

    def __repr__(self) -> str:
        return f"Site({self.filename!r}, {self.lineno}, {self.function!r})"

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"


class Options:
    """Switches of `tapeshim.experimental.explain_none_gradients` (module-wide)."""

    log_none = False  # log an explanation whenever `gradient` returns a None
    sites = False  # keep the line and op of every tensor created while a tape records


options = Options()
active = False  # read by `Tensor.__init__`: a tape records somewhere, or sites are kept
_open = 0  # recording windows open (a tape dropped while recording leaves one open: only slower)


def _update() -> None:
    global active
    active = bool(options.sites or _open > 0)


def set_sites(enabled: bool) -> None:
    """Keeps (or stops keeping) the line and op of every tensor created while a tape records."""
    options.sites = bool(enabled)
    _update()


def user_site(depth: int = 1) -> tuple[Site | None, str | None]:
    """The first frame outside tapeshim, and the name of the outermost tapeshim function above it."""
    frame: Any = sys._getframe(depth)
    outer = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_PACKAGE) or filename == _CONTEXTLIB):
            return Site(frame.f_code, frame.f_lasti), outer
        if filename.startswith(_PACKAGE):
            outer = frame.f_code.co_name
        frame = frame.f_back
    return None, outer


class Exit(NamedTuple):
    """A tracked tensor that left the tape (its value went to Python, numpy or JAX)."""

    tensor: Any
    site: Site | None
    how: str


class Window:
    """A stretch of recording: tensors with ids in `[start, end)` were created while the tape recorded."""

    __slots__ = ("start", "end", "site")

    def __init__(self, start: int, end: int | None, site: Site | None) -> None:
        self.start = start
        self.end = end
        self.site = site


class Pause(Window):
    """A `stop_recording` block: tensors with ids in `[start, end)` were created inside it."""

    __slots__ = ()


class Snapshot(NamedTuple):
    """A tape's recording state at its last `gradient` call (a one-shot tape clears its own)."""

    tracked: set
    produced: set
    var_reads: dict
    watched_vars: dict
    explicit_vars: set
    watch_accessed: bool
    targets: Any
    sources: Any
    nodes: dict  # target id -> node, kept only when a result was None (what `explain` is for) or sites are on
    given: tuple  # per flattened source, whether `gradient` returned a value (not None)


class TapeLog:
    """Everything `explain` reads about one tape beyond its own state."""

    def __init__(self) -> None:
        self.windows: list[Window] = []
        self.pauses: list[Pause] = []
        self.exits: list[Exit] = []
        self.snapshot: Snapshot | None = None


_sites: dict[int, tuple[Site | None, str | None, str | None, tuple]] = {}


def log_of(tape: Any) -> TapeLog:
    """The log of `tape` (a recorder; an empty log if it never recorded), held by the tape itself."""
    log: TapeLog | None = tape._explain_log
    if log is None:
        log = tape._explain_log = TapeLog()
    return log


def _now() -> int:
    return next_tensor_id()  # ids only grow: every later tensor has a larger one


def _opened(log: TapeLog, site: Site | None) -> None:
    global _open, active
    log.windows.append(Window(_now(), None, site))
    _open += 1
    active = True


def entered(tape: Any) -> None:
    """`with tape:` starts a recording window (a used one-shot tape starts a fresh log)."""
    if tape._used:
        log = tape._explain_log = TapeLog()
    else:
        log = log_of(tape)
    site, _ = user_site(2)
    _opened(log, site)


def _close(tape: Any, log: TapeLog | None = None) -> None:
    global _open
    log = log or log_of(tape)
    windows = log.windows
    if windows and windows[-1].end is None:
        windows[-1].end = _now()
        _open -= 1
        _update()


def exited(tape: Any) -> None:
    """The `with` block ended."""
    _close(tape)


def paused(tape: Any) -> None:
    """`stop_recording` began."""
    _close(tape)
    site, _ = user_site(2)
    log_of(tape).pauses.append(Pause(_now(), None, site))


def resumed(tape: Any) -> None:
    """`stop_recording` ended: recording continues."""
    log = log_of(tape)
    if log.pauses and log.pauses[-1].end is None:
        log.pauses[-1].end = _now()
    _opened(log, log.windows[-1].site if log.windows else None)


def after_gradient(tape: Any, target: Any, sources: Any, results: list) -> None:
    """`gradient` is about to return `results`: remember the state; log Nones if asked."""
    log = log_of(tape)
    if not tape._recording:  # a one-shot tape stops recording when it computes inside its block
        _close(tape, log)
    given = tuple([r is not None for r in results])
    some_none = False in given
    log.snapshot = Snapshot(
        tape._tracked,
        tape._produced,
        tape._var_reads,
        dict(tape._watched_vars),
        set(tape._explicit_vars),
        tape._watch_accessed,
        target,
        sources,
        _nodes_of(target) if options.sites or some_none else {},
        given,
    )
    if options.log_none and some_none:
        from tapeshim._src import explain  # import cycle: explain_hooks <-> explain (via tensor)

        explain.log_nones(tape, target, sources, results)


def _nodes_of(target: Any) -> dict:
    """The targets' nodes (a released graph stays explainable; only kept when some gradient was None)."""
    found = {}
    stack = [target]
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif getattr(value, "_node", None) is not None and hasattr(value, "_tid"):
            found[value._tid] = value._node
    return found


_HOW = {
    "numpy": ".numpy()",
    "__float__": "float()",
    "__int__": "int()",
    "__bool__": "bool() (an `if` on a tensor)",
    "__array__": "a numpy call (np.asarray, np.* functions)",
    "__jax_array__": "a jax.numpy call",
    "__index__": "an index conversion",
    "__complex__": "complex()",
}


def left_tape(tensor: Any, method: str) -> None:
    """A tensor's value is being handed to Python/numpy/JAX while tapes record."""
    watching = [r for r in _thread_state.recorders if tensor._tid in r._tracked]
    if not watching:
        return
    site, outer = user_site(2)
    how = _HOW.get(outer or method, _HOW.get(method, method))
    for recorder in watching:
        exits = log_of(recorder).exits
        if len(exits) < _MAX_EXITS:
            exits.append(Exit(tensor, site, how))


_dispatch_code: Any = None
CUTTING_OPS = frozenset(
    {
        "Round",
        "Floor",
        "Ceil",
        "Rint",
        "Sign",
        "StopGradient",
        "ArgMax",
        "ArgMin",
        "Less",
        "LessEqual",
        "Greater",
        "GreaterEqual",
        "Equal",
        "NotEqual",
        "FloorDiv",
        "OneHot",
        "ZerosLike",
        "OnesLike",
        "IsNan",
        "IsInf",
        "IsFinite",
        "Bitcast",
    }
)  # TF ops without gradient (or with a zero one): a lazy result keeps the user's line for `explain`


def _is_dispatch(code: Any) -> bool:
    """Whether `code` is `registry.apply`'s (found by name once, then compared by identity)."""
    global _dispatch_code
    if code is _dispatch_code:
        return True
    if _dispatch_code is None and code.co_name == "apply" and code.co_filename.endswith("registry.py"):
        _dispatch_code = code
        return True
    return False


def created(tensor: Any) -> None:
    """A tensor was created while a tape records (or while sites are kept).

    An op run at once on a tracked tensor (an op without gradient on a concrete
    watched value, which the tape does not record) keeps its op, inputs and the
    user's line, so `explain` can name it. With sites on, every tensor keeps
    its line and op.
    """
    node = tensor._node
    if node is not None and not options.sites:
        key = node.key  # not the `Node.op_type` property: this runs for every recorded tensor
        op = key[0] if key.__class__ is OpKey else op_type_of(key)
        if tensor._dtype._trainable and op not in CUTTING_OPS:
            return  # a recorded op: its node already says what made it
        if not _thread_state.recorders:
            return
        site, outer = user_site(2)  # an op that cuts the path: keep its line
        _remember(tensor._tid, (site, outer, op, ()))
        return
    frame: Any = sys._getframe(2)  # the caller of `Tensor.__init__`
    if not options.sites:
        code = frame.f_code
        if code is not _dispatch_code and (_dispatch_code is not None or not _is_dispatch(code)):
            return  # not an op's result (a constant, a variable read)
    if not _thread_state.recorders:
        return
    op_name = None
    inputs: tuple = ()
    if not options.sites:
        if tensor._value is None:
            return
        local = frame.f_locals
        inputs = tuple((t._tid, t._dtype._trainable) for t in local.get("inputs", ()))
        op_name = getattr(local.get("op"), "name", None)
    else:
        while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
            if _is_dispatch(frame.f_code):
                local = frame.f_locals
                op_name = getattr(local.get("op"), "name", None)
                if tensor._node is None:
                    inputs = tuple((t._tid, t._dtype._trainable) for t in local.get("inputs", ()))
                break
            frame = frame.f_back
    site, outer = user_site(2)
    _remember(tensor._tid, (site, outer, op_name, inputs))


def _remember(tid: int, entry: tuple[Site | None, str | None, str | None, tuple]) -> None:
    if len(_sites) >= _MAX_SITES:
        _sites.clear()
    _sites[tid] = entry


def site_of(tid: int) -> tuple[Site | None, str | None, str | None, tuple]:
    """`(site, public function, TF op, inputs)` of a tensor `created` noted, else empty.

    `inputs` holds `(id, trainable dtype)` per input of an op run at once (not
    recorded) while a tape recorded.
    """
    return _sites.get(tid, (None, None, None, ()))


def eager_ops_between(start: int, end: int) -> list[tuple[int, tuple]]:
    """`(output id, input ids)` of the ops run at once while a tape recorded, with outputs in `[start, end)`."""
    return [(tid, tuple(i for i, _ in entry[3])) for tid, entry in _sites.items() if start <= tid < end and entry[3]]
