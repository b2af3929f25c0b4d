"""Compiles in a background thread while the host interpreter serves the calls.

A program (a recorded structure, a `tapeshim.function` trace, a Keras call)
runs its first calls on the host (`interpret.py`) and compiles when it keeps
repeating (`compile_tiers.calls_before_compile`). That compile (15-400 ms on a
CPU) used to stall the repeating call: a `tapeshim.function` step's second
call took 240-390 ms where TF's takes 1 ms. Now the call that ends the host's
rental submits the compile here and is computed on the host again, as is every
later call until the compile is done; the call after that runs the compiled
program (JAX finds the executable this thread compiled in its cache). XLA
releases the GIL while it compiles, so the host calls go on beside it (the
lowering before it runs Python, and takes the GIL from them: that is the
rental's price).

The thread also runs a compiled program once, on the arguments of the call
that submitted it, and drops the result: XLA's CPU runtime finishes loading a
program's code on its first run (28-47 ms for a small training step's program,
measured), which would otherwise stall the first compiled call. Only programs
without side effects are run so (those the host interpreter can run: it runs
no callback); a caller that submits another (the quick tier's tier-up of a
program that prints) passes no arguments. The queue holds at most
`HELD_BYTES` of arguments; past that a queued compile holds its arguments
weakly, and skips the run when the caller has dropped one (its first compiled
call then loads the code).

Only the compile and that run happen here: the trace was made on the calling
thread, of concrete arguments. A compile that fails here is dropped: the
calling thread then compiles the program itself and sees the error, as
without this thread. Compiles run one at a time, in the order submitted, so a
call that must wait for one waits for those ahead of it too (callers wait
only when the host cannot compute a call of the signature being compiled). At
exit, compiles still queued are dropped and the one running is awaited.

`wait()` blocks until every submitted compile has finished: tests that count
compiles, and benchmarks, call it where a synchronous engine would have
compiled. `set_enabled(False)` compiles on the calling thread again.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import queue
import threading
import time
import weakref
from typing import Any

import jax
import jax.extend.mlir.dialects.builtin  # noqa: F401 - see `_load_lowering`
import numpy as np

with contextlib.suppress(ImportError):  # (a jaxlib without it: `_load_lowering` loads what lowering needs)
    import jaxlib.mlir.dialects.mhlo  # noqa: F401 - see `_load_lowering`

_SHUTDOWN = object()

HELD_BYTES = 64 * 2**20
"""The most bytes of arguments the queued compiles hold for their first run (see the module docstring)."""


class Pending:
    """A compile submitted to the background thread."""

    __slots__ = ("_done", "seconds")

    def __init__(self) -> None:
        self._done = threading.Event()
        self.seconds: float | None = None
        """How long the compile took, once it has compiled (None if it failed or was dropped)."""

    def done(self) -> bool:
        """Whether the compile has finished (compiled, failed or dropped)."""
        return self._done.is_set()

    def wait(self) -> None:
        """Blocks until the compile has finished."""
        self._done.wait()


class _Worker:
    """One daemon thread compiling the traces it is given, in order."""

    def __init__(self) -> None:
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._held = 0  # bytes of arguments the queue holds

    def submit(self, traced: Any, args: tuple | None) -> Pending:
        pending = Pending()
        with self._lock:
            if self._closed:
                pending._done.set()
                return pending
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="tapeshim-compile", daemon=True)
                self._thread.start()
            self._queue.put((traced, self._arguments(args), pending))
        return pending

    def _arguments(self, args: tuple | None) -> Any:
        """`(treedef, leaves or weak references to them, bytes held)`, or None where there are none to run on
        (see the module docstring)."""
        if args is None:
            return None
        leaves, treedef = jax.tree.flatten(args)
        size = sum(getattr(leaf, "nbytes", 0) for leaf in leaves)
        if self._held + size <= HELD_BYTES:
            self._held += size
            return treedef, leaves, size
        try:
            return treedef, [weakref.ref(leaf) for leaf in leaves], 0
        except TypeError:  # a leaf that takes no weak reference
            return None

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _SHUTDOWN:
                    return
                self._compile(*item)
            finally:
                item = None  # an idle thread holds nothing of the last item
                self._queue.task_done()

    def _compile(self, traced: Any, arguments: Any, pending: Pending) -> None:
        try:
            if not self._closed:
                start = time.perf_counter()
                compiled = traced.lower().compile()
                pending.seconds = time.perf_counter() - start
                stats["compiled"] += 1
                _first_run(compiled, arguments)
        except Exception:  # noqa: BLE001 - the calling thread compiles it again and sees the error
            stats["failed"] += 1
        finally:
            if arguments is not None:
                with self._lock:
                    self._held -= arguments[2]
            pending._done.set()

    def wait(self) -> None:
        if self._thread is not None:
            self._queue.join()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(_SHUTDOWN)
            thread.join()


def _first_run(compiled: Any, arguments: Any) -> None:
    """Runs `compiled` once on the arguments (`_Worker._arguments`) and drops the result: its first run loads
    its code (see the module docstring)."""
    if arguments is None:
        return
    treedef, held, _ = arguments
    leaves = [leaf() if isinstance(leaf, weakref.ref) else leaf for leaf in held]
    if any(leaf is None for leaf in leaves):
        return
    try:
        jax.block_until_ready(compiled(*jax.tree.unflatten(treedef, leaves)))
    except Exception:  # noqa: BLE001 - the calling thread's first compiled call loads the code instead
        pass


_worker = _Worker()
_enabled = [True]
stats = {"submitted": 0, "compiled": 0, "failed": 0}


def enabled() -> bool:
    """Whether repeating programs compile in the background (see the module docstring)."""
    return _enabled[0]


def set_enabled(on: bool) -> None:
    """Turns background compiles on or off; off, a program compiles on the call that needs it."""
    if not on:
        wait()
    _enabled[0] = bool(on)


@functools.cache
def _load_lowering() -> None:
    """Lowers a trivial program on the calling thread, once, before the first compile is submitted.

    A process's first lowering loads MLIR's dialects into its context, calls that release the GIL. In the
    background thread, beside a training loop whose host calls hold the GIL (pure Python and small NumPy),
    each such release waits out the interpreter's switch interval (5 ms) to take the GIL back: the first
    compile took 0.6 s to more than 1.4 s to finish there, measured, where it takes about 0.1 s after this
    (6-10 ms here; the dialects' Python modules are imported with this module, 16 ms, without starting a
    backend)."""
    jax.jit(_unit).trace(np.float32(0)).lower()


def _unit(x: Any) -> Any:
    return x


def submit(traced: Any, args: tuple | None) -> Pending:
    """Compiles `traced` in the background.

    Args:
      traced: a `jax.stages.Traced` of the jitted function the caller will call, made of concrete arguments
        (never tracers).
      args: arguments of the traced signature to run the compiled program on once (loading its code), for a
        program without side effects (one the host interpreter can run); None: no run.
    """
    stats["submitted"] += 1
    _load_lowering()
    return _worker.submit(traced, args)


def wait() -> None:
    """Blocks until every compile submitted so far has finished."""
    _worker.wait()


atexit.register(_worker.close)
