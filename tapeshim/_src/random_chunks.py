"""Random draws of any shape from one compiled kernel per distribution, with `jax.random`'s exact values.

`jax.random.normal(key, shape)` compiles one XLA program per shape: 0.3-1 s each on a CPU. Building a
model draws its weights once per shape, so each new weight shape paid a compile (Pix2Pix's generator
took 16 s to build where TF takes 1.6 s). With JAX's partitionable Threefry (its default), element
`i` of a draw (in row-major order) is a function of the key and `i` alone: the hash of the counter `i`,
mapped to a float by a per-element transform. So a draw of any size is the concatenation of fixed-size
chunks whose counters start at `0, CHUNK, 2 * CHUNK, ...`; each chunk comes from one kernel compiled
once per distribution and dtype, its key carrying the chunk's first counter. The chunks use a PRNG
implementation (`jax.extend.random.define_prng_impl`) whose bits are Threefry's at counters from that
offset, and `jax.random`'s own transforms (uniform, normal, truncated normal) map them to floats, so
every value is `jax.random`'s for the whole shape, bit for bit (`tests/test_keras_initial_values.py`).

Where JAX is configured otherwise (the legacy non-partitionable Threefry, another default PRNG),
`draw` returns None and the caller draws as before.

A kernel's compile still took 0.2 s of a program's first second (a Keras model's Glorot-uniform weights,
`tf.random.uniform`), where TF eager's whole model build takes 0.05 s. So `float32` uniform draws come from
the host first (`_host_uniform`: NumPy's Threefry, `threefry.py`, and the kernel's arithmetic, its fused
multiply-add included, so the values are the kernel's bit for bit) until the elements drawn there have paid
for the kernel's compile (`HOST_ELEMENTS`, a ski rental). A normal's inverse error function would round
differently in NumPy, so normal draws compile as before. The kernels are compiled ahead and called as
executables (`_kernel`), so a draw inside a caller's JAX trace is computed, not staged.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import random as jax_random

from tapeshim._src import interpret
from tapeshim._src.threefry import threefry

CHUNK = 2**16
"""Elements per call of the small kernel: a draw of n elements takes ceil(n / CHUNK) calls."""

MAX_ELEMENTS = 2**26
"""The largest draw made from chunks (256 MiB of float32): the chunks, their host copies and the result hold
it up to three times over, and a larger draw's own compile costs little beside its work."""

LARGE_CHUNK = 2**20
"""Elements per call of the large kernel, which serves draws of at least this size (a call of the small
kernel costs a dispatch per 65536 values: a third of the time of drawing a large weight)."""

_KINDS = ("uniform", "normal", "truncated_normal")

HOST_ELEMENTS = 2**23
"""Elements of `float32` uniform draws made on the host per kernel before that kernel compiles: about a compile's
time (0.2 s) of NumPy's Threefry (about 25 ns an element), a draw counting at least `_HOST_CALL_ELEMENTS`
(a call's overhead). Counted in elements, not seconds: when a kernel compiles does not depend on the load.
The draw past it compiles the kernel, on the caller (a ski rental: at most twice the better choice's time)."""

_HOST_CALL_ELEMENTS = 4096

_host_elements: dict[tuple, int] = {}
"""Per kernel (`_kernel`'s arguments): the elements drawn on the host in its stead."""


def _counted_bits(key: jax.Array, bit_width: int, shape: tuple) -> jax.Array:
    """Threefry's bits for the counters `offset + i` (key: `[k1, k2, offset_high, offset_low]`), as the
    partitionable Threefry gives them for counter `i` of a draw: two hashes, combined to `bit_width`."""
    size = math.prod(shape)
    low = jax.lax.iota(jnp.uint32, size) + key[3]
    high = jnp.full((size,), key[2], jnp.uint32) + (low < key[3]).astype(jnp.uint32)  # (the carry)
    bits1, bits2 = jax_random.threefry2x32_p.bind(key[0], key[1], high, low)
    if bit_width == 64:
        bits = (bits1.astype(jnp.uint64) << jnp.uint64(32)) | bits2.astype(jnp.uint64)
    else:
        bits = (bits1 ^ bits2).astype({8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}[bit_width])
    return bits.reshape(shape)


def _not_drawn(*_: Any) -> jax.Array:
    raise NotImplementedError("chunk keys are only drawn from (random_chunks)")


_OFFSET_THREEFRY = jax_random.define_prng_impl(
    key_shape=(4,),
    seed=_not_drawn,
    split=_not_drawn,
    random_bits=_counted_bits,
    fold_in=_not_drawn,
    name="threefry2x32_from_offset",
    tag="tso",
)


_kernels: dict[tuple, Any] = {}
_kernels_lock = threading.Lock()


def _kernel(kind: str, dtype: np.dtype, chunk_size: int) -> Any:
    """The compiled chunk kernel of one distribution, dtype and chunk size: `(key4, a, b) -> chunk_size values`,
    where `a` and `b` are the uniform's bounds or the truncated normal's (unused for the normal). Compiled once:
    threads drawing at once wait for the first one's compile."""
    key = (kind, dtype, chunk_size)
    kernel = _kernels.get(key)
    if kernel is None:
        with _kernels_lock:
            kernel = _kernels.get(key)
            if kernel is None:
                kernel = _kernels[key] = _compiled_kernel(kind, dtype, chunk_size)
    return kernel


def _compiled_kernel(kind: str, dtype: np.dtype, chunk_size: int) -> Any:
    """`_kernel`'s executable, compiled now."""

    def chunk(key4: jax.Array, a: jax.Array, b: jax.Array) -> jax.Array:
        key = jax.random.wrap_key_data(key4, impl=_OFFSET_THREEFRY)
        if kind == "uniform":
            return jax.random.uniform(key, (chunk_size,), dtype, a, b)
        if kind == "normal":
            return jax.random.normal(key, (chunk_size,), dtype)
        return jax.random.truncated_normal(key, a, b, (chunk_size,), dtype)

    # (compiled ahead, and called as such: outside `ensure_compile_time_eval`, which a jitted call inside a
    # caller's trace needs, and under which the Threefry's lowering computed its counters then, compiling two
    # kernels of its own and embedding the counters as constants)
    words, bound = jax.ShapeDtypeStruct((4,), np.uint32), jax.ShapeDtypeStruct((), dtype)
    return jax.jit(chunk).trace(words, bound, bound).lower().compile()


def usable() -> bool:
    """Whether JAX's default keys hash counters as `_counted_bits` does (partitionable Threefry)."""
    flags = jax.config.values
    return bool(flags["jax_threefry_partitionable"]) and flags["jax_default_prng_impl"] == "threefry2x32"


def draw(kind: str, key: Any, shape: tuple, dtype: Any, a: float = 0.0, b: float = 1.0) -> np.ndarray | None:
    """`jax.random.<kind>(key, shape, dtype, ...)`'s values as a NumPy array, from chunk kernels.

    Args:
      kind: "uniform" (bounds `a`, `b`), "normal", or "truncated_normal" (bounds `a`, `b`, in standard
        deviations).
      key: a raw Threefry key (`uint32[2]`, as `jax.random.PRNGKey` gives), concrete.
      shape: the draw's shape (Python ints).
      dtype: a floating dtype.
      a: the lower bound, where the distribution has one.
      b: the upper bound, where the distribution has one.

    Returns:
      The values, or None where they cannot be drawn so (JAX configured with another PRNG, a key that is
      not a raw concrete Threefry key, a dtype that is not a float, more than `MAX_ELEMENTS`, a draw the
      kernels would serve under `jax.disable_jit`): the caller draws them itself.
    """
    dtype = np.dtype(dtype)
    if kind not in _KINDS or not jnp.issubdtype(dtype, jnp.floating) or not usable():
        return None
    if dtype.itemsize == 8 and jax.dtypes.canonicalize_dtype(dtype) != dtype:
        return None  # (JAX draws float32 then)
    if isinstance(key, jax.core.Tracer) or getattr(key, "shape", None) != (2,) or key.dtype != np.uint32:
        return None
    size = math.prod(shape)
    if size > MAX_ELEMENTS:
        return None
    k1, k2 = (int(word) for word in np.asarray(key))
    chunk_size = LARGE_CHUNK if size >= LARGE_CHUNK else CHUNK
    bounds = (np.asarray(a, dtype), np.asarray(b, dtype))
    if kind == "uniform" and _on_host((kind, dtype, chunk_size), size, bounds):
        return _host_uniform(k1, k2, size, *bounds).reshape(shape)
    config: Any = jax.config  # (its context-managed flags are attributes its stubs do not name)
    if config.jax_disable_jit:  # (JAX compiles nothing ahead then: the caller draws with `jax.random`)
        return None
    kernel = _kernel(kind, dtype, chunk_size)  # (a compiled executable: computed now, also inside a caller's trace)
    chunks = [  # (all dispatched before the first is read: the calls overlap)
        kernel(np.array([k1, k2, offset >> 32, offset & 0xFFFFFFFF], np.uint32), *bounds)
        for offset in range(0, size, chunk_size)
    ]
    values = np.concatenate([np.asarray(chunk) for chunk in chunks])[:size] if chunks else np.zeros((0,), dtype)
    return values.reshape(shape)


def _on_host(kernel_key: tuple, size: int, bounds: tuple) -> bool:
    """Whether this uniform draw comes from the host: a `float32` one, of bounds `_host_uniform` computes as
    XLA does, while its kernel's rent is unpaid (the draw after that compiles the kernel, on the caller)."""
    low, high = bounds
    if low.dtype != np.float32 or size > LARGE_CHUNK or not interpret.enabled() or not _host_bounds(low, high):
        return False
    drawn = _host_elements.get(kernel_key, 0)
    if drawn >= HOST_ELEMENTS:
        return False
    _host_elements[kernel_key] = drawn + max(size, _HOST_CALL_ELEMENTS)
    return True


def _host_bounds(low: np.ndarray, high: np.ndarray) -> bool:
    """Whether `_host_uniform` draws between these `float32` bounds as XLA does: finite, far from overflow, and
    far enough from zero that no value is subnormal (XLA's CPU flushes those to zero; a nonzero value is a
    multiple of 2**-23 * (high - low)'s and `low`'s last places, both at least 2**-126 here)."""
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.float32(high - low)
    finite = bool(np.isfinite(low) and np.isfinite(high) and np.isfinite(span))
    return (
        finite
        and max(abs(float(low)), abs(float(high))) <= 2.0**120
        and abs(float(span)) >= 2.0**-78
        and (float(low) == 0 or abs(float(low)) >= 2.0**-100)
    )


def _host_uniform(k1: int, k2: int, size: int, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """`jax.random.uniform(key, (size,), float32, low, high)` for the key `[k1, k2]`, with NumPy: the
    partitionable Threefry's bits at counters `0 .. size - 1` (two words xor-ed), their top 23 bits as a float
    in [1, 2) less 1, then `floats * (high - low) + low` as XLA's fused multiply-add (one rounding), no
    lower than `low`."""
    counters = np.arange(size, dtype=np.uint32)
    bits1, bits2 = threefry(np.uint32(k1), np.uint32(k2), np.zeros_like(counters), counters)
    floats = ((bits1 ^ bits2) >> np.uint32(9) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    values = _fused_multiply_add(floats, np.float32(high - low), low)
    return np.where(values < low, low, values)  # (XLA's `max`: `low` = -0 keeps a +0 value's sign)


def _fused_multiply_add(x: np.ndarray, y: np.float32, z: np.ndarray) -> np.ndarray:
    """`x * y + z` for `float32` values, rounded once, as an FMA instruction (XLA's CPU code fuses the
    uniform's scaling into one): the product is exact in `float64`; the sum is rounded to odd there (its
    rounding error, from Knuth's TwoSum, moves a value whose last bit is even to the odd neighbour towards
    the exact sum), and rounding to odd in 53 bits then to nearest in 24 is rounding to nearest once. (XLA
    lets LLVM fuse where the CPU has an FMA instruction: on an x86 CPU without one, from before 2013, a
    compiled draw would round twice, and differ from this in the last bit of some values.)"""
    product = x.astype(np.float64) * np.float64(y)
    addend = np.float64(z)
    total = product + addend
    virtual = total - product
    error = (product - (total - virtual)) + (addend - virtual)
    even = (total.view(np.uint64) & np.uint64(1)) == 0
    towards = np.where(error > 0, np.inf, -np.inf)
    odd = np.where((error != 0) & even, np.nextafter(total, towards), total)
    return odd.astype(np.float32)
