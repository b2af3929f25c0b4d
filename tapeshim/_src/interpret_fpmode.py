"""Subnormals flushed by the CPU itself while the host interpreter computes, as XLA's CPU runs.

XLA's CPU runs its programs with the processor's flush-to-zero and denormals-are-zero modes on (the MXCSR's
FTZ and DAZ bits on x86-64), as TF's kernels do: a subnormal operand of an arithmetic instruction reads as a
zero of its sign, and a subnormal result is written as one. The host interpreter computes with NumPy, so it
sets the same two bits on the calling thread for the time it computes (`FlushingMode`, entered by the
outermost `interpret_blas.host_errors_ignored`) and on the threads that compute parts of its products
(`flush_on_this_thread`). Then its values follow XLA's where the software flush could not: an operation's
intermediate values flush too (the partial sums of a product), and a subnormal that an operation only moves
(a copy, a transpose, a `select`) stays one, as it does in XLA's code.

Only on the main thread (`flushes_here`): elsewhere the BLAS's own threads may compute a large product (the
host's limit of the BLAS to one thread does not hold reliably off the main thread), and they would run without
the modes, so there the interpreter flushes in software, as it does where the modes cannot be set. (The
software flush compares magnitudes, which must not run inside the modes: a subnormal compares as a zero.)

Where the modes cannot be set (a platform other than x86-64 Linux with glibc's `fegetmode`/`fesetmode`, or a
NumPy whose arithmetic does not follow them, found by `_probe` at import), `HARDWARE_FLUSH` is False and the
interpreter checks and flushes its arguments and results instead (`interpret_flush.flush_subnormals`): that
check cost a small MLP step's host call about 10% of its time, and a compute-bound step's two ReLU outputs
0.4 ms.
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
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
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
    `leave`, which restores the mode `enter` found. One object serves one thread's outermost host context."""

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
