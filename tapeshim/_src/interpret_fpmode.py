"""Subnormals flushed by the CPU itself while the host interpreter computes, as XLA's CPU runs.

XLA's CPU runs its programs with the processor's flush-to-zero and denormals-are-zero modes on (the MXCSR's
FTZ and DAZ bits on x86-64), as TF's kernels do: a subnormal operand of an arithmetic instruction reads as a
zero of its sign, and a subnormal result is written as one. The host interpreter computes with NumPy, so it
sets the same two bits on the calling thread while it evaluates a program (`FLUSHING`, entered around a
plan's evaluation by `interpret.Prepared`, and around the per-op tier's sums of cotangents), and on the
threads that compute parts of its products (`flush_on_this_thread`). Nothing else runs inside: no user code
(a custom gradient's `grad_fn`), no JAX trace, no thread started. Then the values follow XLA's where the
software flush could not: an operation's intermediate values flush too (the partial sums of a product), and
a subnormal that an operation only moves (a copy, a transpose, a `select`) stays one, as it does in XLA's
code. A few rules give back an operand's element where XLA computes one (`sign`, the first element of a
cumulative sum or product): their results are still flushed (`ALWAYS_FLUSHED`).

Only on the main thread (`flushes_here`): elsewhere the BLAS's own threads may compute a large product (the
host's limit of the BLAS to one thread does not hold reliably off the main thread), and they would run without
the modes, so there the interpreter flushes in software, as it does where the modes cannot be set (a platform
other than x86-64 Linux with glibc's `fegetmode`/`fesetmode`, or a NumPy whose arithmetic does not follow
them, found by `_probe` at import: `HARDWARE_FLUSH` False). That check cost a small MLP step's host calls
about 10% of their time, and a compute-bound step's two ReLU outputs 0.4 ms a call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import sys
import threading
from typing import Any

import numpy as np

_FLUSH_BITS = 0x8040
"""The MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) bits."""


class _Mode(ctypes.Structure):
    """glibc's `femode_t` on x86-64: the x87 control word, and the MXCSR."""

    _fields_ = [("control_word", ctypes.c_uint16), ("reserved", ctypes.c_uint16), ("mxcsr", ctypes.c_uint32)]


def _mode_functions() -> tuple[Any, Any] | None:
    """glibc's `fegetmode` and `fesetmode`, or None where this is not x86-64 Linux with them."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        # (a `PyDLL` calls them holding the GIL: a call that released it would wait up to the switch interval,
        # 5 ms, to take it back while the background thread compiles)
        libm = ctypes.PyDLL(ctypes.util.find_library("m") or "libm.so.6")
        get_mode, set_mode = libm.fegetmode, libm.fesetmode
    except (OSError, AttributeError):  # (no libm, or a C library older than glibc 2.25)
        return None
    for function in (get_mode, set_mode):
        function.argtypes = [ctypes.c_void_p]
        function.restype = ctypes.c_int
    return get_mode, set_mode


_functions = _mode_functions()


class FlushingMode:
    """The calling thread's floating-point mode with subnormals flushed (FTZ and DAZ on) from `enter` to
    `leave`, which restores the mode `enter` found."""

    __slots__ = ("_saved", "_flushing", "_saved_address", "_flushing_address")

    def __init__(self) -> None:
        self._saved, self._flushing = _Mode(), _Mode()
        self._saved_address = ctypes.addressof(self._saved)
        self._flushing_address = ctypes.addressof(self._flushing)

    def enter(self) -> None:
        assert _functions is not None
        get_mode, set_mode = _functions
        get_mode(self._saved_address)
        self._flushing.control_word = self._saved.control_word
        self._flushing.mxcsr = self._saved.mxcsr | _FLUSH_BITS
        set_mode(self._flushing_address)

    def leave(self) -> None:
        assert _functions is not None
        _functions[1](self._saved_address)


class _ThreadState(threading.local):
    depth = 0
    """How many `FLUSHING` contexts the thread is in."""
    switch: FlushingMode | None = None
    """The thread's mode switch (made at its first use)."""
    entered = False
    """Whether the thread's outermost context set the modes."""


_state = _ThreadState()


class _Flushing:
    """The context of a host evaluation: the calling thread's modes flush subnormals inside its outermost
    entry where `flushes_here()`, else nothing changes. Reentrant; the modes the thread had come back at its
    exit, whatever ends it."""

    __slots__ = ()

    def __enter__(self) -> None:
        state = _state
        if state.depth == 0 and flushes_here():
            switch = state.switch
            if switch is None:
                switch = state.switch = FlushingMode()
            try:
                switch.enter()
                state.entered = True
                state.depth = 1
            except BaseException:  # (an interrupt between setting the modes and counting the context)
                switch.leave()
                state.entered = False
                raise
            return
        state.depth += 1

    def __exit__(self, *exc: Any) -> None:
        state = _state
        state.depth -= 1
        if state.depth == 0 and state.entered:
            state.entered = False
            assert state.switch is not None
            state.switch.leave()


FLUSHING = _Flushing()
"""`with FLUSHING:` around NumPy's evaluation of a program's operations (see the module docstring)."""

ALWAYS_FLUSHED = frozenset(("sign", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"))
"""Primitives whose NumPy rules give back an operand's element where XLA's code computes one, so a subnormal
operand would come back as it is: `sign` (NumPy returns a zero or NaN operand itself) and the first element
of a cumulative operation. Their float results are flushed even where the modes flush the rest."""


def flush_level() -> int:
    """The `interpret_plan` flush levels an evaluation applies above: 1 where the calling thread's modes flush
    now (inside an entered `FLUSHING`: level 2 only), else 0 (every level-1 and level-2 step's results)."""
    return 1 if _state.entered else 0


def flushing_now() -> bool:
    """Whether the calling thread's modes flush subnormals now (inside a `FLUSHING` that set them)."""
    return _state.entered


def flush_on_this_thread() -> None:
    """Turns FTZ and DAZ on for the rest of the calling thread's life (a thread that only computes the host
    interpreter's work: `interpret_blas`'s helpers); nothing where `HARDWARE_FLUSH` is False."""
    if HARDWARE_FLUSH:
        FlushingMode().enter()


def _probe() -> bool:
    """Whether NumPy's arithmetic on this thread flushes subnormals inside a `FlushingMode` (a subnormal operand
    and a subnormal result, in float32 and float64, of a product, a comparison and a matrix product), and
    computes them again after it."""
    if _functions is None:
        return False
    single = np.array([1e-39, 1e-20, 1e-19], np.float32)
    double = np.array([1e-310, 1e-160, 1e-150], np.float64)

    def subnormals() -> list:
        with np.errstate(all="ignore"):
            return [
                (single[:1] * np.float32(1))[0],  # a subnormal operand
                float((single[:1] > 0)[0]),
                (single[1:2] * single[2:])[0],  # a subnormal result
                (double[:1] * 1.0)[0],
                (double[1:2] * double[2:])[0],
                np.matmul(single[None, 1:2], single[2:, None])[0, 0],
            ]

    mode = FlushingMode()
    try:
        mode.enter()
        try:
            inside = subnormals()
        finally:
            mode.leave()
    except Exception:  # noqa: BLE001 - a C library whose mode functions fail: the software flush
        return False
    return all(value == 0 for value in inside) and all(value != 0 for value in subnormals())


HARDWARE_FLUSH = _probe()
"""Whether the host interpreter's subnormals are flushed by the CPU's modes (`FlushingMode`), else by
`interpret_flush.flush_subnormals`."""


def flushes_here() -> bool:
    """Whether the calling thread's host computations flush subnormals in hardware alone: `HARDWARE_FLUSH`, on
    the main thread (see the module docstring); elsewhere `interpret_flush.flush_subnormals` flushes results."""
    return HARDWARE_FLUSH and threading.get_ident() == threading.main_thread().ident
