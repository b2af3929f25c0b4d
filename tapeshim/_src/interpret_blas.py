"""The host interpreter's context: NumPy's floating-point warnings off, and its BLAS on one thread where a
product would split over threads (`interpret.py` computes inside it); a large product is then split over the
host's cores by tapeshim's own threads (`matmul`), as is a large copy (`contiguous`)."""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor  # (its module at import, not at the first split product)
from typing import Any

import numpy as np
import threadpoolctl

from tapeshim._src import interpret_fpmode


def host_errors_ignored(flushing: bool = False) -> "HostContext":
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

    With `flushing`, the thread's floating-point modes also flush subnormals inside it
    (`interpret_fpmode.FLUSHING`, entered last and left first).
    """
    return HostContext(flushing)


class HostContext:
    """`host_errors_ignored`'s context: a class rather than a generator context, as each host call of an eager
    op enters one (`contextlib`'s generator and the nested contexts cost about 2 of the 5.5 us it took)."""

    __slots__ = ("_errstate", "_blas", "_flushing")

    def __init__(self, flushing: bool = False) -> None:
        self._errstate: Any = None
        self._blas: _BlasLimit | None = None
        self._flushing = flushing

    def __enter__(self) -> None:
        errstate = self._errstate = np.errstate(all="ignore")
        errstate.__enter__()
        if _blas_limited.outer is None:  # (nested: the outer context holds the limit)
            blas = self._blas = _BlasLimit()
            blas.__enter__()
        if self._flushing:
            try:
                interpret_fpmode.FLUSHING.__enter__()
            except BaseException:
                self._leave_blas_and_errstate()
                raise

    def __exit__(self, *exc: Any) -> None:
        if self._flushing:
            try:
                interpret_fpmode.FLUSHING.__exit__(*exc)
            finally:
                self._leave_blas_and_errstate()
        else:
            self._leave_blas_and_errstate()

    def _leave_blas_and_errstate(self) -> None:
        try:
            if self._blas is not None:
                self._blas.__exit__()
        finally:
            self._errstate.__exit__(None, None, None)


BLAS_THREADED_MULTIPLY_ADDS = 2**13
"""The (weighted, `interpret_cost.COUNTED`) multiply-adds of a convolution from which the host limits BLAS to
one thread (its patch-matrix product; matrix products: `interpret_cost.blas_may_split`). A host evaluation
without such a product leaves the BLAS as it is: it never sets and restores the limit (40-45 us a call,
measured on a small MLP step's host call of 0.47 ms)."""
GEMV_THREADED_MULTIPLY_ADDS = 9216
"""OpenBLAS splits a matrix-vector product (or a dot product) over threads from these multiply-adds on."""
GEMM_THREADED_MULTIPLY_ADDS = 2**18
"""OpenBLAS splits a matrix product (M and N over 1) over threads from these multiply-adds on (M * N * K), and
computes smaller ones on the calling thread: a small MLP's products (64 x 32 x 64) never split."""


_BLAS_CONTROLLER = threadpoolctl.ThreadpoolController()
"""threadpoolctl's controller of the BLAS libraries loaded (NumPy's, loaded with NumPy before tapeshim), made at
import: it scans the process's libraries (3.4 ms beside JAX's, 12 ms with TF's loaded too), a cost of the import,
where made at the first large product it was a cost of that step (a compute-bound MLP's first training step in a
new process: a median of 34 -> 31 ms over eight)."""


def limit_blas_threads() -> None:
    """Limits the BLAS to one thread until the outermost `host_errors_ignored()` of this thread exits (a
    product of `BLAS_THREADED_MULTIPLY_ADDS` or more is about to run there; outside one, nothing)."""
    outer = _blas_limited.outer
    if outer is not None and outer.limit is None:
        outer.limit = _BLAS_CONTROLLER.limit(limits=1, user_api="blas")


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


def in_host_context() -> bool:
    """Whether the calling thread is inside a `host_errors_ignored()`."""
    return _blas_limited.outer is not None


RECENT_HOST_CALLS = 16
"""How many host calls back a split product still marks a thread as computing on every core
(`computing_on_every_core`): a compute-bound training step makes a few (its forward-and-gradient program,
its weight updates' kernels), so a loop of such steps stays marked, and a loop of small programs after it is
unmarked before its programs' rentals end."""


class _BlasState(threading.local):
    outer: _BlasLimit | None = None
    host_calls = 0
    """The host calls this thread has made (`note_host_call`)."""
    split_at = -RECENT_HOST_CALLS
    """`host_calls` when this thread last split a product over the cores (`matmul`)."""


_blas_limited = _BlasState()


SPLIT_MULTIPLY_ADDS = 2**21
"""The multiply-adds each part of a split product computes at least (`matmul`): about 0.1 ms on one core,
where handing a part to another thread costs tens of microseconds."""
_ALIGNMENT = 16
"""Parts of a split product start at multiples of this many rows (or columns)."""
_SPLIT_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def _cores() -> int:
    """The cores this process may run on: its CPU affinity, and a cgroup's CPU quota where one is set (a
    container limited to 2 CPUs of a larger machine)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on this platform)
        cores = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as quota_file:
            quota, period = quota_file.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):  # (no cgroup v2 quota here)
        pass
    return cores


CORES = _cores()
"""The cores this process may run on (`_cores`)."""


def compile_spill_share() -> float:
    """The share of a multithreaded compile's CPU time beyond its first core that lands on the calling thread's
    core while that thread computes on one (`compile_tiers.COMPILE_DEFAULTS_EQUATION_SPILL_S`): all of it on two cores,
    spread over the cores other than the compile's own elsewhere."""
    return 1.0 / max(1, CORES - 1)


_THREADS = min(CORES, 8)
"""The parts a large product is split into, and the threads that compute them (the calling thread among
them): one per core, at most 8. Fewer, larger parts are faster: each part's BLAS call packs the whole of the
other operand again (a 512 x 512 by 512 x 1024 float32 product on the 2-core development machine: 2.1 ms in
two parts, 3.5 ms in four, 4.5 ms in eight, 3.6 ms unsplit)."""


class _Helpers:
    """The threads that compute the other parts of split products and copies, started on first use (again in a
    forked child, whose copy of the pool has no threads)."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def pool(self) -> ThreadPoolExecutor:
        pid = os.getpid()
        if self._pool is None or self._pid != pid:
            with self._lock:
                if self._pool is None or self._pid != pid:
                    self._pool = ThreadPoolExecutor(
                        _THREADS - 1,
                        thread_name_prefix="tapeshim-blas",
                        initializer=interpret_fpmode.flush_on_this_thread,  # (its parts flush as the caller's)
                    )
                    self._pid = pid
        return self._pool


_helpers = _Helpers()


def _run_parts(part: Any, bounds: list, threaded: bool) -> None:
    """`part(start, stop)` for each of `bounds`: the first on the calling thread, the others on the helper
    threads where `threaded` (on the calling thread where a helper cannot take one: at interpreter exit)."""
    others = []
    if threaded:
        pool = _helpers.pool()
        for bound in bounds[1:]:
            try:
                others.append(pool.submit(part, *bound))
            except RuntimeError:  # (the pool is shut down: the interpreter is exiting)
                part(*bound)
    else:
        for bound in bounds[1:]:
            part(*bound)
    part(*bounds[0])
    for other in others:
        other.result()


def _bounds(extent: int, parts: int, alignment: int) -> list:
    """`parts` ranges covering `range(extent)`, as even as their starts at multiples of `alignment` allow."""
    starts = sorted({k * extent // parts // alignment * alignment for k in range(parts)})
    return list(zip(starts, [*starts[1:], extent]))


def matmul(lhs: Any, rhs: Any) -> Any:
    """`np.matmul(lhs, rhs)`, a large product split into parts computed on the host's cores, where this thread's
    host context runs the BLAS on one thread (`limit_blas_threads`).

    OpenBLAS's own threads wait for each other spinning, so a core taken by a background compile stalls them
    (`host_errors_ignored`); here each part is one single-threaded BLAS call on a thread of its own, and a busy
    core only delays its part. The parts split the rows of `lhs` (or, where it has fewer, the columns of
    `rhs`), one per core (`_THREADS`) as far as the product's size allows (`SPLIT_MULTIPLY_ADDS`), starting at
    even multiples of 16. Values are NumPy's own product's to rounding: OpenBLAS picks its kernels per part,
    and rows near a part's edge may be rounded differently in the last bits, so they depend on the machine's
    cores (as TF's multi-threaded kernels' do), never on timing. On a thread other than the main one, whose
    BLAS limit threadpoolctl cannot set, the same parts are computed one after the other. A compute-bound
    training step's products on the 2-core development machine: 3.8 -> 2.1 ms each (512 x 512 by 512 x 1024,
    float32)."""
    outer = _blas_limited.outer
    if (
        outer is None
        or outer.limit is None
        or lhs.ndim < 2
        or rhs.ndim < 2
        or lhs.dtype != rhs.dtype
        or lhs.dtype not in _SPLIT_DTYPES
    ):
        return np.matmul(lhs, rhs)
    rows, inner, columns = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    batch = np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2])
    by_rows = rows >= columns
    extent = rows if by_rows else columns
    parts = min(_THREADS, math.prod(batch) * rows * inner * columns // SPLIT_MULTIPLY_ADDS, extent // _ALIGNMENT)
    if parts < 2:
        return np.matmul(lhs, rhs)
    threaded = threading.current_thread() is threading.main_thread()
    if threaded:
        _blas_limited.split_at = _blas_limited.host_calls
    out = np.empty((*batch, rows, columns), lhs.dtype)

    def part(start: int, stop: int) -> None:
        with np.errstate(all="ignore"):  # (NumPy's error state is the thread's own)
            if by_rows:
                np.matmul(lhs[..., start:stop, :], rhs, out=out[..., start:stop, :])
            else:
                np.matmul(lhs, rhs[..., start:stop], out=out[..., start:stop])

    _run_parts(part, _bounds(extent, parts, _ALIGNMENT), threaded)
    return out


SPLIT_COPY_BYTES = 2**20
"""The bytes each thread of a split copy (`contiguous`) moves at least: about 0.1 ms."""


def contiguous(view: Any) -> Any:
    """`np.ascontiguousarray(view)`, its copy split over the host's cores as `matmul` splits a product (a
    convolution's patch matrix: a strided view of its input copied once per call, 0.9 -> 0.56 ms for a 15 MB
    one on the 2-core development machine). Split along the first axis with a part for each thread; a copy
    moves each element as it is, so the result is the unsplit copy's."""
    outer = _blas_limited.outer
    if _THREADS < 2 or outer is None or outer.limit is None or view.flags.c_contiguous or view.dtype.hasobject:
        return np.ascontiguousarray(view)
    parts = min(_THREADS, view.nbytes // SPLIT_COPY_BYTES)
    axis = next((k for k, size in enumerate(view.shape) if size >= parts), None)
    if parts < 2 or axis is None:
        return np.ascontiguousarray(view)
    out = np.empty(view.shape, view.dtype)
    lead = (slice(None),) * axis

    def part(start: int, stop: int) -> None:
        where = lead + (slice(start, stop),)
        np.copyto(out[where], view[where])

    _run_parts(part, _bounds(view.shape[axis], parts, 1), True)
    return out


def note_host_call() -> None:
    """Counts a host call of this thread (a program or kernel computed by the interpreter)."""
    _blas_limited.host_calls += 1


def computing_on_every_core() -> bool:
    """Whether this thread split a product over the cores (`matmul`) within its last `RECENT_HOST_CALLS` host
    calls: its computation then runs on every core, and a compile in the background takes cores from it
    (`compile_tiers.calls_before_compile`'s `on_every_core`). Counted in calls, not seconds, so when a
    program compiles does not depend on the machine's load."""
    return _blas_limited.host_calls - _blas_limited.split_at < RECENT_HOST_CALLS


def forget_splits() -> None:
    """This thread computes as a new thread does: no split product in its recent host calls (for tests whose
    compile counts must not depend on an earlier test's products)."""
    _blas_limited.split_at = _blas_limited.host_calls - RECENT_HOST_CALLS
