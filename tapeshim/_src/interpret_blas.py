"""The host interpreter's context: NumPy's floating-point warnings off, and its BLAS on one thread where a
product would split over threads (`interpret.py` computes inside it)."""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, Iterator

import numpy as np
import threadpoolctl


@contextlib.contextmanager
def host_errors_ignored() -> Iterator[None]:
    """The context of host computation: NumPy's floating-point warnings are off, as XLA's arithmetic raises
    none, and NumPy's BLAS runs on one thread from the first product that would use more
    (`limit_blas_threads`).

    The host computes while a compile runs in the background (and XLA's own threads run): a BLAS that
    splits a product over every core then waits on cores that are busy. A convolution's products of a
    small GAN's step took 68-170 ms each with OpenBLAS's two threads on the loaded 2-core development
    machine, 1.7 ms on one. It is limited whether or not a compile runs: OpenBLAS rounds some products
    differently on two threads (a 128 x 700 by 700 x 500 product, by up to 3.4e-5), and a host call's values
    must not depend on when a compile ran (with two threads where none ran, a TF guide's MLP training
    accuracy moved by one prediction against TF's; a compute-bound step's first call would have gained
    10 ms).
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
    """Limits the BLAS to one thread until the outermost `host_errors_ignored()` of this thread exits (a
    product of `BLAS_THREADED_MULTIPLY_ADDS` or more is about to run there; outside one, nothing)."""
    outer = _blas_limited.outer
    if outer is not None and outer.limit is None:
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
