"""Subnormals flushed by the CPU's own modes while the host interpreter computes
(`tapeshim/_src/interpret_fpmode.py`), as XLA's CPU runs its programs: an arithmetic operation reads a
subnormal operand as a zero and writes a subnormal result as one, intermediate values included (a product's
partial sums), while an operation that only moves values (a negation, a transpose, a `select`) keeps a
subnormal's bits. Each case is compared with XLA's compiled program bit for bit. The modes hold only while a
program's operations are evaluated, on the main thread and on the helper threads of its split products;
user code (a custom gradient's `grad_fn`) never runs inside them.
"""

import platform
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oracle import check
from tapeshim._src import interpret, interpret_blas, interpret_fpmode

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

TINY32 = np.finfo(np.float32).tiny
TINY64 = np.finfo(np.float64).tiny
SUBNORMALS32 = np.array([TINY32 / 4, -TINY32 / 3, 1.0, -0.0, 0.0, 2.5, -TINY32 / 1000, TINY32], np.float32)
SUBNORMALS64 = np.array([TINY64 / 4, -TINY64 / 3, 1.0, -0.0, 0.0, 2.5, -TINY64 / 1000, TINY64], np.float64)


def test_x86_64_linux_flushes_in_hardware():
    # CI's platform: the software flush (`interpret_flush`) serves only where the modes cannot be set
    glibc = platform.libc_ver()[0] == "glibc"
    if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64") and glibc:
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
    # rules that give back an operand's element where XLA computes one: flushed all the same
    "sign": (lambda v: (jnp.sign(v), jnp.sign(v.astype(jnp.float64))), (SUBNORMALS32,)),
    "cumulative": (lambda v: (jnp.cumsum(v), jnp.cumprod(v), jnp.cumsum(v[::-1])), (SUBNORMALS32,)),
    # a program's constants, flushed where the plan is made (a plan serves every thread)
    "subnormal_constant": (
        lambda v: (v * jnp.asarray(SUBNORMALS32), v + jnp.asarray(SUBNORMALS32)),
        (SUBNORMALS32 * 0 + 1e10,),
    ),
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


def test_eager_ops_on_subnormals_give_tfs_values():
    # The oracle: TF's own kernels run flushing too, and move a subnormal as it is (a negation, a transpose, a
    # select, a concatenation). Each op's first call here is computed on the host
    def body(tf):
        x = tf.constant(np.array([TINY32 / 4, -TINY32 / 3, 1.0, -0.0, 2.5, -TINY32 / 1000], np.float32))
        a = tf.constant(np.full((4, 40), 1e-20, np.float32))  # (subnormal partial products, a normal sum)
        b = tf.constant(np.full((40, 3), 1e-19, np.float32))
        return {
            "negate": -x,
            "transpose": tf.transpose(tf.reshape(x, (2, 3))),
            "select": tf.where(x > -1.0, x, 2.0),
            "concatenate": tf.concat([x, x[::-1]], 0),
            "double": x * 2.0,
            "compare": x > 0,
            "sign": tf.sign(x),
            "cumsum": tf.math.cumsum(x),
            "cumprod": tf.math.cumprod(x),
            "product_of_normals": tf.constant([1e-20], tf.float32) * tf.constant([1e-19], tf.float32),
            "matmul": tf.matmul(a, b),
            "sum": tf.reduce_sum(x),
        }

    check(body, rtol=0)  # (exactly: a subnormal against a zero is within any tolerance)


def _subnormal_product_now():
    """A product of two normal float32s whose result is subnormal, computed on the calling thread as it is."""
    return np.array([1e-20], np.float32) * np.array([1e-19], np.float32)


def test_the_modes_hold_inside_a_host_evaluation_only():
    # outside one (after one, after one that failed, on another thread) NumPy computes subnormals
    flushed = 0 if interpret_fpmode.HARDWARE_FLUSH else _subnormal_product_now()[0]
    assert _subnormal_product_now()[0] != 0
    with interpret_fpmode.FLUSHING:
        assert _subnormal_product_now()[0] == flushed
        with interpret_fpmode.FLUSHING:  # (nested: the outer one holds the mode)
            assert _subnormal_product_now()[0] == flushed
        assert _subnormal_product_now()[0] == flushed
    assert _subnormal_product_now()[0] != 0
    with pytest.raises(RuntimeError), interpret_fpmode.FLUSHING:
        raise RuntimeError("a host evaluation that fails")
    assert _subnormal_product_now()[0] != 0
    seen = []

    def on_another_thread():
        with interpret_fpmode.FLUSHING:
            seen.append(_subnormal_product_now()[0])
        seen.append(_subnormal_product_now()[0])

    other = threading.Thread(target=on_another_thread)
    other.start()
    other.join()
    assert seen[0] == seen[1] != 0, "off the main thread the interpreter flushes in software"
    assert _subnormal_product_now()[0] != 0


@pytest.mark.skipif(not interpret_fpmode.HARDWARE_FLUSH, reason="the software flush leaves partial products")
def test_split_products_flush_on_every_part():
    # A product large enough to split over the cores (`interpret_blas.matmul`) in a host program: the helper
    # threads' parts flush their subnormal partial products too, as XLA's product does (all zeros)
    lhs = np.full((512, 512), 1e-20, np.float32)
    rhs = np.full((512, 1024), 1e-19, np.float32)
    interpret_blas.forget_splits()
    split = interpret.run(jax.jit(jnp.matmul).trace(lhs, rhs), (lhs, rhs))
    assert interpret_blas.computing_on_every_core() == (interpret_blas._THREADS > 1), "it split over the cores"
    expected = np.asarray(jax.jit(jnp.matmul)(lhs, rhs))
    assert not expected.any(), "XLA flushes the partial products"
    assert np.asarray(split).tobytes() == expected.tobytes()
    assert np.matmul(lhs[:1], rhs[:, :1])[0, 0] != 0, "outside a host computation NumPy computes them"


def test_the_helper_threads_flush_from_their_start():
    # The helpers' threads set the modes when they start (a pool made outside any host computation)
    helpers = interpret_blas._Helpers()
    pool = helpers.pool()
    try:
        flushed = pool.submit(lambda: _subnormal_product_now()[0]).result()
    finally:
        pool.shutdown()
    assert flushed == (0 if interpret_fpmode.HARDWARE_FLUSH else _subnormal_product_now()[0])
    assert _subnormal_product_now()[0] != 0


def test_user_code_runs_outside_the_modes():
    # A custom gradient's grad_fn runs in the per-op tier's gradient (a host computation) and sees NumPy's own
    # arithmetic, as it does in TF; the program's values are flushed as XLA's
    import tapeshim as tf

    seen = []

    @tf.custom_gradient
    def scaled(x):
        def grad_fn(upstream):
            seen.append(float(_subnormal_product_now()[0]))
            return upstream * 2.0

        return x * 1.0, grad_fn

    w = tf.Variable(np.ones(4, np.float32))
    with tf.GradientTape() as tape:
        h = w * 1.0
        for _ in range(60):  # (a larger structure: per op on its first run)
            h = tf.sin(h) * 0.9
        loss = tf.reduce_sum(scaled(h))
    tape.gradient(loss, w)
    assert seen and all(value != 0 for value in seen)


def test_products_off_the_main_thread_flush_their_results():
    # Off the main thread the BLAS's own threads may compute a product, without the modes: its result is
    # flushed in software (`interpret_fpmode.flushes_here`), not its partial products. Here each partial
    # product and the result are subnormal
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


def test_a_plan_made_on_the_main_thread_flushes_on_another():
    # A plan (its constants, its flushing steps) is made once and serves every thread: on another thread it
    # flushes in software what the main thread's modes flush
    constant = np.array([TINY32 / 4, 1e-30, -TINY32 / 3, 2.0], np.float32)
    x = np.array([1e10, 1e-10, 1.0, 1e-20], np.float32)

    def fn(v):
        return v * constant, jnp.sign(v * 1e-30), v[::-1] * constant

    program = interpret.prepare(jax.jit(fn).trace(x))
    on_main = program((x,), [x])
    results = []
    other = threading.Thread(target=lambda: results.append(program((x,), [x])))
    other.start()
    other.join()
    expected = jax.jit(fn)(x)
    for got in (on_main, results[0]):
        for value, want in zip(jax.tree.leaves(got), jax.tree.leaves(expected)):
            assert np.asarray(value).tobytes() == np.asarray(want).tobytes(), (value, want)
