"""Subnormals flushed by the CPU's own modes while the host interpreter computes
(`tapeshim/_src/interpret_fpmode.py`), as XLA's CPU runs its programs: an arithmetic operation reads a
subnormal operand as a zero and writes a subnormal result as one, intermediate values included (a product's
partial sums), while an operation that only moves values (a negation, a transpose, a `select`) keeps a
subnormal's bits. Each case is compared with XLA's compiled program bit for bit. The modes hold only inside a
host computation, on the thread that runs it and on the helper threads of its split products.
"""

import platform
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tapeshim._src import interpret, interpret_blas, interpret_fpmode

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

TINY32 = np.finfo(np.float32).tiny
TINY64 = np.finfo(np.float64).tiny
SUBNORMALS32 = np.array([TINY32 / 4, -TINY32 / 3, 1.0, -0.0, 0.0, 2.5, -TINY32 / 1000, TINY32], np.float32)
SUBNORMALS64 = np.array([TINY64 / 4, -TINY64 / 3, 1.0, -0.0, 0.0, 2.5, -TINY64 / 1000, TINY64], np.float64)


def test_x86_64_linux_flushes_in_hardware():
    # CI's platform: the software flush (`interpret_flush`) serves only where the modes cannot be set
    if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64"):
        assert interpret_fpmode.HARDWARE_FLUSH
    else:
        assert interpret_fpmode.HARDWARE_FLUSH in (True, False)


CASES = {
    "negate": (lambda v: -v, (SUBNORMALS32,)),
    "transpose": (lambda v: v.reshape(2, 4).T, (SUBNORMALS32,)),
    "select": (lambda v: jnp.where(v > -1.0, v, 2.0), (SUBNORMALS32,)),
    "concatenate": (lambda v: jnp.concatenate([v, v[::-1]]), (SUBNORMALS32,)),
    "double": (lambda v: v * 2.0, (SUBNORMALS32,)),
    "compare": (lambda v: (v > 0, v == 0, v < 0), (SUBNORMALS32,)),
    "maximum": (lambda v: jnp.maximum(v, -1.0), (SUBNORMALS32,)),
    "sum": (lambda v: (jnp.sum(v), v + v), (SUBNORMALS32,)),
    "product_of_normals": (
        lambda x, y: x * y,
        (np.array([1e-20, -1e-20, 3e-19, 1e-10], np.float32), np.array([1e-19, 2e-19, 1e-20, 1e-10], np.float32)),
    ),
    # each partial product is subnormal, their sum is not: XLA's flushed partial products sum to zero
    "dot_partial_products": (
        lambda x, y: x @ y,
        (np.full((4, 40), 1e-20, np.float32), np.full((40, 3), 1e-19, np.float32)),
    ),
    "exp_underflow": (jnp.exp, (np.array([-104.0, -100.0, -90.0, -88.9, 0.0], np.float32),)),
    "double_precision": (lambda v: (v * 2.0, -v, v > 0, v @ v), (SUBNORMALS64,)),
    "double_product_of_normals": (
        lambda x, y: x * y,
        (np.array([1e-160, -1e-160, 2e-150], np.float64), np.array([1e-150, 1e-150, 1e-160], np.float64)),
    ),
}


@pytest.mark.skipif(
    not interpret_fpmode.HARDWARE_FLUSH,
    reason="where the CPU's modes cannot be set the interpreter flushes in software (tests/test_interpret.py)",
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_host_programs_treat_subnormals_as_xla_does(case):
    fn, args = CASES[case]
    traced = jax.jit(fn).trace(*args)  # (tapeshim runs JAX with 64-bit types on, as TF has them)
    host = interpret.run(traced, args)
    compiled = jax.jit(fn)(*args)
    assert host is not None, "the interpreter runs it"
    host_leaves, compiled_leaves = jax.tree.leaves(host), jax.tree.leaves(compiled)
    assert len(host_leaves) == len(compiled_leaves)
    for got, want in zip(host_leaves, compiled_leaves):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), (case, got, want)


def _subnormal_product_now():
    """A product of two normal float32s whose result is subnormal, computed on the calling thread as it is."""
    return np.array([1e-20], np.float32) * np.array([1e-19], np.float32)


def test_the_mode_is_the_host_computations_only():
    # outside a host computation (after one, after one that failed, on another thread) NumPy computes subnormals
    flushed = 0 if interpret_fpmode.HARDWARE_FLUSH else _subnormal_product_now()[0]
    assert _subnormal_product_now()[0] != 0
    with interpret_blas.host_errors_ignored():
        assert _subnormal_product_now()[0] == flushed
        with interpret_blas.host_errors_ignored():  # (nested: the outer one holds the mode)
            assert _subnormal_product_now()[0] == flushed
        assert _subnormal_product_now()[0] == flushed
    assert _subnormal_product_now()[0] != 0
    with pytest.raises(RuntimeError), interpret_blas.host_errors_ignored():
        raise RuntimeError("a host computation that fails")
    assert _subnormal_product_now()[0] != 0
    seen = []

    def on_another_thread():
        with interpret_blas.host_errors_ignored():
            seen.append(_subnormal_product_now()[0])
        seen.append(_subnormal_product_now()[0])

    other = threading.Thread(target=on_another_thread)
    other.start()
    other.join()
    assert seen[0] == seen[1] != 0, "off the main thread the interpreter flushes in software"
    assert _subnormal_product_now()[0] != 0


@pytest.mark.skipif(not interpret_fpmode.HARDWARE_FLUSH, reason="the software flush leaves partial products")
def test_split_products_flush_on_every_part():
    # A product large enough to split over the cores (`interpret_blas.matmul`): the helper threads' parts flush
    # their subnormal partial products too, as XLA's product does (all zeros)
    lhs = np.full((512, 512), 1e-20, np.float32)
    rhs = np.full((512, 1024), 1e-19, np.float32)
    with interpret_blas.host_errors_ignored():
        interpret_blas.limit_blas_threads()  # (as a host evaluation does before such a product)
        split = interpret_blas.matmul(lhs, rhs)
    expected = np.asarray(jax.jit(jnp.matmul)(lhs, rhs))
    assert not expected.any(), "XLA flushes the partial products"
    assert split.tobytes() == expected.tobytes()
    assert np.matmul(lhs[:1], rhs[:, :1])[0, 0] != 0, "outside a host computation NumPy computes them"


def test_products_off_the_main_thread_flush_their_results():
    # Off the main thread the BLAS's own threads may compute a product, without the modes: its result is
    # flushed in software (`interpret_fpmode.flushes_here`). Each partial product and the result are subnormal
    lhs = np.full((512, 512), 1e-20, np.float32)
    rhs = np.full((512, 1024), 1e-21, np.float32)
    traced = jax.jit(jnp.matmul).trace(lhs, rhs)
    results = []
    for _ in range(2):  # (a second call: the BLAS's limit, set and restored by the first, changes nothing)
        other = threading.Thread(target=lambda: results.append(interpret.run(traced, (lhs, rhs))))
        other.start()
        other.join()
    expected = np.asarray(jax.jit(jnp.matmul)(lhs, rhs))
    assert not expected.any()
    for result in results:
        assert result is not None and np.asarray(result).tobytes() == expected.tobytes()
