"""The host interpreter's context: NumPy's floating-point warnings off, and its BLAS on one thread where a
product would split over threads while a compile runs in the background (`interpret.py` computes inside it)."""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, Iterator

import numpy as np
import threadpoolctl

from tapeshim._src import background_compile


@contextlib.contextmanager
def host_errors_ignored() -> Iterator[None]:
    """The context of host computation: NumPy's floating-point warnings are off, as XLA's arithmetic raises
    none, and while a compile runs in the background NumPy's BLAS runs on one thread from the first product
    that would use more (`limit_blas_threads`).

    The host computes while a compile runs in the background: a BLAS that splits a product over every core
    then waits on a core that is busy. A convolution's products of a small GAN's step took 68-170 ms each
    with OpenBLAS's two threads on the 2-core development machine while a compile ran, 1.7 ms on one. With
    no compile under way the BLAS keeps its threads, as it has outside the host interpreter (and TF eager's
    kernels use every core): a compute-bound MLP step's two large products (batch 512, 512-1024) took
    7.9 ms on one thread, 4.2 ms on two.
    """
    with np.errstate(all="ignore"), _one_blas_thread():
        yield


BLAS_THREADED_MULTIPLY_ADDS = 2**13
"""The (weighted, `interpret_cost.COUNTED`) multiply-adds of a convolution from which the host limits BLAS to
one thread (its patch-matrix product; matrix products: `interpret_cost.blas_may_split`). A host evaluation
without such a product leaves the BLAS as it is, so it never makes threadpoolctl's controller (it scans the
process's libraries: 14 ms of a small custom-gradient step's first call) nor sets and restores the limit
(40-45 us a call, measured on a small MLP step's host call of 0.47 ms)."""
GEMV_THREADED_MULTIPLY_ADDS = 9216
"""OpenBLAS splits a matrix-vector product (or a dot product) over threads from these multiply-adds on."""
GEMM_THREADED_MULTIPLY_ADDS = 2**18
"""OpenBLAS splits a matrix product (M and N over 1) over threads from these multiply-adds on (M * N * K), and
computes smaller ones on the calling thread: a small MLP's products (64 x 32 x 64) never split."""


@functools.cache
def _blas_controller() -> Any:
    """threadpoolctl's controller of the BLAS libraries loaded (NumPy's), made once (it scans them)."""
    return threadpoolctl.ThreadpoolController()


def _one_blas_thread() -> Any:
    if _blas_limited.outer is not None:  # (nested: the outer context holds the limit)
        return contextlib.nullcontext()
    return _BlasLimit()


def limit_blas_threads() -> None:
    """Limits the BLAS to one thread until the outermost `host_errors_ignored()` of this thread exits, where
    a compile runs in the background (a product the BLAS would split is about to run there; outside one, or
    with no compile under way, nothing)."""
    outer = _blas_limited.outer
    if outer is not None and outer.limit is None and not background_compile.idle():
        outer.limit = _blas_controller().limit(limits=1, user_api="blas")


class _BlasLimit:
    """The outermost host context of a thread: BLAS runs on one thread inside it from the first product that
    would split over threads (`limit_blas_threads`) to its exit."""

    def __init__(self) -> None:
        self.limit: Any = None

    def __enter__(self) -> None:
        _blas_limited.outer = self

    def __exit__(self, *exc: Any) -> None:
        _blas_limited.outer = None
        if self.limit is not None:
            self.limit.restore_original_limits()


class _BlasState(threading.local):
    outer: _BlasLimit | None = None


_blas_limited = _BlasState()
