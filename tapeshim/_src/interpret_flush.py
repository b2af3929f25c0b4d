"""Subnormal floats on the host interpreter's inputs and outputs, as XLA's CPU treats them.

XLA's CPU flushes subnormal floats to (signed) zero on the input and output of every operation, as TF's
kernels do; NumPy computes them. Where the CPU's own modes flush them while the host computes
(`interpret_fpmode.flushes_here`), only a plan's constants and the results of the few rules
`interpret_fpmode.ALWAYS_FLUSHED` names are flushed here (`software_flush` and `mark_clean` do nothing, and
`host_input` is not called). Elsewhere the interpreter (`interpret.py`) flushes its arguments and the results of the
operations that can make a subnormal (`flush_subnormals`), as follows.

An argument is checked on every host call that takes it, and an eager kernel's host calls take the same
tensors again and again (an indexing loop reads one constant 300 times while its kernel compiles). Checking
an array of a few hundred elements or more costs a NumPy call that releases the GIL, and while the
background thread compiles, the calling thread then waits up to the switch interval (5 ms) to take it back.
So an argument that cannot change and was found clean (a tensor's own read-only NumPy value: `_immutable`)
is remembered (`host_input`), by identity and weakly, and not checked again while it lives.
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any

import jax
import numpy as np

from tapeshim._src import interpret_fpmode

_TINY = {np.dtype(np.float32): np.finfo(np.float32).tiny, np.dtype(np.float64): np.finfo(np.float64).tiny}

_min_of = np.minimum.reduce  # (`ndarray.min` adds a Python wrapper's call to each check)

CHUNK_BYTES = 512 * 2**10
"""The size of the pieces a large array is checked in (`_all_at_least`)."""

_scratch = threading.local()

CLEAN_MIN_SIZE = 64
"""The fewest elements of an argument `host_input` remembers as clean (a smaller check costs about what the
lookup does, and releases no GIL)."""

_CLEAN_SIZE = 256
_clean: dict[int, tuple[weakref.ref, np.dtype]] = {}
"""id(argument) -> (a weak reference to it, the dtype it was read as), for immutable arguments found without
subnormals. An entry goes when its argument does (and all of them past `_CLEAN_SIZE` entries)."""


def software_flush(value: Any) -> Any:
    """`flush_subnormals(value)` of a result computed just now, or `value` itself where the calling thread's
    modes flushed its subnormals as it was computed (`interpret_fpmode.flushing_now`)."""
    return value if interpret_fpmode.flushing_now() else flush_subnormals(value)


def flush_subnormals(value: Any) -> Any:
    """`value` (a NumPy array), with its subnormal floats (if any) made zeros of their sign. Right inside the
    CPU's flushing modes too (`interpret_fpmode.FLUSHING`, where a subnormal compares as a zero): the quick
    checks only pass arrays whose magnitudes all compare at least the smallest normal, and the subnormals are
    found from their bits."""
    tiny = _TINY.get(value.dtype)
    if tiny is None or not value.size:
        return value
    if value.size == 1:  # a scalar: compared in Python (NaN looks further)
        if abs(value.item()) >= tiny:
            return value
    elif _all_at_least(value, tiny):  # the common case: no zero, no subnormal (NaN looks further)
        return value
    elif value.nbytes > CHUNK_BYTES and value.flags.c_contiguous and not _any_subnormal(value):
        return value  # (zeros or NaNs, no subnormal: a ReLU's output)
    unsigned, magnitude_mask, largest = _BITS[value.dtype]
    magnitudes = np.bitwise_and(value.view(unsigned), unsigned.type(magnitude_mask))
    subnormal = (magnitudes != 0) & (magnitudes <= unsigned.type(largest))
    if subnormal.any():  # each becomes a zero of its sign (`copysign` moves the sign bit: no arithmetic)
        return np.where(subnormal, np.copysign(value.dtype.type(0), value), value)
    return value


def _scratch_buffer() -> np.ndarray:
    """The calling thread's scratch buffer of `CHUNK_BYTES` for a check's pieces."""
    buffer = getattr(_scratch, "buffer", None)
    if buffer is None:
        buffer = _scratch.buffer = np.empty(CHUNK_BYTES, np.uint8)
    return buffer


def _all_at_least(value: np.ndarray, tiny: float) -> bool:
    """Whether every element of `value` has a magnitude of `tiny` or more (False where one is NaN).

    A large array is checked in pieces of `CHUNK_BYTES`, each made absolute into the calling thread's scratch
    buffer, which stays in the CPU's cache: 119 us over 0.5M floats where one `abs` over a new array and its
    reduction take 227 us, measured (a compute-bound step checks its products' outputs on every host call)."""
    if value.nbytes <= CHUNK_BYTES or not value.flags.c_contiguous:
        return bool(_min_of(np.abs(value), axis=None) >= tiny)
    pieces = _scratch_buffer().view(value.dtype)
    flat = value.reshape(-1)
    for start in range(0, flat.size, pieces.size):
        part = flat[start : start + pieces.size]
        if not _min_of(np.abs(part, out=pieces[: part.size])) >= tiny:
            return False
    return True


_BITS: dict[np.dtype, tuple[Any, int, int]] = {
    np.dtype(np.float32): (np.dtype(np.uint32), 0x7FFFFFFF, 0x007FFFFF),
    np.dtype(np.float64): (np.dtype(np.uint64), 0x7FFFFFFFFFFFFFFF, 0x000FFFFFFFFFFFFF),
}
"""Per float dtype: the unsigned integer of its width, the mask of its bits but the sign, and the largest
subnormal's bits (a subnormal's magnitude bits are 1 to that)."""


def _any_subnormal(value: np.ndarray) -> bool:
    """Whether the C-contiguous float array `value` holds a subnormal, from its bits: a magnitude of 1 to the
    largest subnormal's, in pieces of `CHUNK_BYTES` in the calling thread's scratch buffers. An array with zeros
    or NaNs (a ReLU's output, half zeros) fails `_all_at_least` at once, and an `abs` pass with two
    comparisons over new arrays then took 390 us for 0.5M floats, where this takes 170 us (210 us with the
    failed `_all_at_least` before it)."""
    unsigned, magnitude_mask, largest = _BITS[value.dtype]
    bits = value.reshape(-1).view(unsigned)
    words = _scratch_buffer().view(unsigned)  # (free again: `_all_at_least` ran before)
    flags = getattr(_scratch, "flags", None)
    if flags is None:
        flags = _scratch.flags = np.empty(CHUNK_BYTES // 4, np.bool_)
    mask, one, bound = unsigned.type(magnitude_mask), unsigned.type(1), unsigned.type(largest)
    for start in range(0, bits.size, words.size):
        part = bits[start : start + words.size]
        size = part.size
        magnitudes = words[:size]
        np.bitwise_and(part, mask, out=magnitudes)
        np.subtract(magnitudes, one, out=magnitudes)  # (a zero wraps round to the largest unsigned)
        below = flags[:size]
        np.less(magnitudes, bound, out=below)
        if below.any():
            return True
    return False


def host_array(leaf: Any, aval: Any) -> np.ndarray:
    """A program's argument `leaf` (a CPU `jax.Array` or a NumPy value) as a NumPy array of `aval`'s dtype."""
    if isinstance(leaf, jax.Array):
        return np.asarray(leaf)
    return np.asarray(leaf, dtype=aval.dtype)


def host_input(leaf: Any, aval: Any) -> np.ndarray:
    """`host_array(leaf, aval)` flushed (`flush_subnormals`); checked once while it lives where `leaf` cannot change.
    (Where the CPU's modes flush as the thread computes, `interpret.Prepared` takes `host_array` instead.)"""
    array = host_array(leaf, aval)
    key = id(leaf)
    entry = _clean.get(key)
    if entry is not None and entry[0]() is leaf and entry[1] == array.dtype:
        return array
    flushed = flush_subnormals(array)
    if flushed is array and array.size >= CLEAN_MIN_SIZE and _immutable(leaf):
        _remember(leaf, array.dtype)
    return flushed


def mark_clean(array: np.ndarray) -> None:
    """Remembers `array`, an output of the host interpreter made a tensor's read-only value (`interpret._placed`),
    as clean: outputs computed from flushed arguments (`host_input`) have no subnormals (the interpreter
    flushes the results of the operations that can make one), so a later host call that takes it need not
    check it again. (The per-op tier's values are not marked: its leaves reach it unchecked.) A training
    step's new weights and gradients are such outputs: checking them cost each step an `abs` pass and a
    reduction per array, and while the background thread compiles, each of those NumPy calls waits up to the
    switch interval to take the GIL back."""
    if interpret_fpmode.HARDWARE_FLUSH:  # (outputs on the main thread may keep subnormals they only moved)
        return
    if array.size >= CLEAN_MIN_SIZE and array.dtype in _TINY and _immutable(array):
        _remember(array, array.dtype)


def _remember(leaf: np.ndarray, dtype: np.dtype) -> None:
    key = id(leaf)
    if len(_clean) >= _CLEAN_SIZE:
        _clean.clear()
    _clean[key] = (weakref.ref(leaf, functools.partial(_forget, key)), dtype)


def _forget(key: int, _reference: weakref.ref) -> None:
    _clean.pop(key, None)


def _immutable(leaf: Any) -> bool:
    """Whether `leaf`'s elements cannot change: a read-only NumPy view of a read-only array that owns its memory
    and is no view itself, the form of a tensor's own value (`tensor.host_constant`, `interpret._placed`, whose
    base no caller holds). A view whose base does not own its memory (`sliding_window_view` of a writable array,
    `np.frombuffer` over a `bytearray`) can change beneath it, and so can a `jax.Array` on the CPU (one made
    with `jax.dlpack.from_dlpack`, or `jax.device_put` of an aligned array, shares a NumPy array's memory)."""
    if type(leaf) is not np.ndarray or leaf.flags.writeable:
        return False
    base = leaf.base
    return type(base) is np.ndarray and base.base is None and base.flags.owndata and not base.flags.writeable
