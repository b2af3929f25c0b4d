"""The host interpreter's large matrix products, split over the cores by tapeshim's threads
(`tapeshim/_src/interpret_blas.py`, `matmul`).

Inside a host computation NumPy's BLAS runs on one thread; a large product is split into parts of rows (or
columns), one per core, each one single-threaded BLAS call: the calling thread computes one part and helper
threads the others (off the main thread, it computes them one after the other). The results are NumPy's own
product's to rounding; through tapeshim, a compute-bound training step's first (host) steps give TF's
values.
"""

import subprocess
import sys
import threading

import jax
import numpy as np
import pytest

from oracle import check
from tapeshim._src import interpret, interpret_blas

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

rng = np.random.default_rng(7)


def _product(lhs_shape, rhs_shape, dtype, transposed=False):
    lhs = rng.normal(size=lhs_shape).astype(dtype)
    rhs = rng.normal(size=rhs_shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        lhs = lhs + 1j * rng.normal(size=lhs_shape).astype(dtype)
        rhs = rhs + 1j * rng.normal(size=rhs_shape).astype(dtype)
    if transposed:  # (a layer's gradient reads its input transposed: a strided view)
        lhs = np.ascontiguousarray(np.swapaxes(lhs, -1, -2)).swapaxes(-1, -2)
    return lhs, rhs


@pytest.mark.parametrize(
    "lhs_shape, rhs_shape, dtype, transposed",
    [
        ((512, 512), (512, 1024), np.float32, False),  # a compute-bound layer: split by rows
        ((512, 512), (512, 1024), np.float32, True),
        ((40, 2048), (2048, 1000), np.float32, False),  # few rows, many columns: split by columns
        ((1000, 333), (333, 130), np.float64, False),  # rows that do not divide evenly
        ((777, 129), (129, 511), np.float64, False),
        ((40, 6560), (6560, 16), np.float32, False),  # parts of 16 and 24 rows
        ((1, 8192), (8192, 600), np.float32, False),  # a batch of one through a wide layer
        ((3, 300, 200), (3, 200, 100), np.float32, False),  # a batch of products
        ((300, 200), (4, 200, 100), np.float32, False),  # broadcast over the batch
        ((256, 256), (256, 256), np.complex64, False),
    ],
)
def test_split_products_are_numpys_to_rounding_on_any_thread(lhs_shape, rhs_shape, dtype, transposed):
    # The parts computed at once by the helper threads, the same bits each call; NumPy's own product, to
    # rounding (OpenBLAS picks its kernels per part). Off the main thread the parts are computed one after the
    # other (its BLAS limit cannot be set there, and OpenBLAS's own threads may round them otherwise)
    lhs, rhs = _product(lhs_shape, rhs_shape, dtype, transposed)
    results = []

    def product():
        with interpret_blas.host_errors_ignored():
            interpret_blas.limit_blas_threads()  # (as a host evaluation does before such a product)
            results.append(interpret_blas.matmul(lhs, rhs))

    product()
    product()
    other = threading.Thread(target=product)
    other.start()
    other.join()
    unsplit = np.matmul(lhs, rhs)
    np.testing.assert_array_equal(results[1], results[0])
    tolerance = 1e-12 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-5
    for split in results:
        assert split.dtype == unsplit.dtype and split.shape == unsplit.shape
        np.testing.assert_allclose(split, unsplit, rtol=tolerance, atol=tolerance * np.abs(unsplit).max())


def test_parts_are_even_and_start_at_multiples_of_sixteen():
    assert interpret_blas._bounds(34, 2, 16) == [(0, 16), (16, 34)]
    assert interpret_blas._bounds(1000, 8, 16) == [
        (0, 112),
        (112, 240),
        (240, 368),
        (368, 496),
        (496, 624),
        (624, 736),
        (736, 864),
        (864, 1000),
    ]
    assert interpret_blas._bounds(5, 2, 1) == [(0, 2), (2, 5)]


def test_products_outside_a_limited_host_context_are_numpys():
    # Outside a host computation (or before its BLAS is limited) the BLAS's own threads compute the product
    lhs, rhs = _product((512, 512), (512, 512), np.float32)
    np.testing.assert_array_equal(interpret_blas.matmul(lhs, rhs), np.matmul(lhs, rhs))
    with interpret_blas.host_errors_ignored():
        np.testing.assert_array_equal(interpret_blas.matmul(lhs, rhs), np.matmul(lhs, rhs))
    # small products, integers and mixed dtypes are never split
    with interpret_blas.host_errors_ignored():
        interpret_blas.limit_blas_threads()
        small = _product((16, 16), (16, 16), np.float32)
        np.testing.assert_array_equal(interpret_blas.matmul(*small), np.matmul(*small))
        ints = np.arange(512 * 512, dtype=np.int32).reshape(512, 512) % 7
        np.testing.assert_array_equal(interpret_blas.matmul(ints, ints), np.matmul(ints, ints))
        mixed = np.matmul(lhs, rhs.astype(np.float64))
        assert interpret_blas.matmul(lhs, rhs.astype(np.float64)).dtype == mixed.dtype


def test_split_copies_equal_numpys_own():
    # A convolution's patch matrix: a strided view of its input, copied in parts along its first long axis
    images = rng.normal(size=(47, 26, 26, 16)).astype(np.float32)
    windows = np.lib.stride_tricks.sliding_window_view(images, (3, 3), axis=(1, 2))[None]
    view = np.transpose(windows, (0, 1, 2, 3, 5, 6, 4))  # (1, N, out rows, out columns, 3, 3, channels)
    with interpret_blas.host_errors_ignored():
        interpret_blas.limit_blas_threads()
        copied = interpret_blas.contiguous(view)
    assert copied.flags.c_contiguous and copied.dtype == view.dtype
    np.testing.assert_array_equal(copied, view)
    np.testing.assert_array_equal(interpret_blas.contiguous(view), view)  # (outside a host context: NumPy's)


def test_a_large_convolution_on_the_host_matches_xlas():
    # Its patch matrix is copied in parts and its product split: XLA's values, to float32 rounding
    images = rng.normal(size=(40, 28, 28, 8)).astype(np.float32)
    kernel = (rng.normal(size=(3, 3, 8, 16)) / 8).astype(np.float32)
    jitted = jax.jit(
        lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    )
    got = interpret.run(jitted.trace(images, kernel), (images, kernel))
    want = jitted(images, kernel)
    assert got is not None and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_compute_bound_steps_host_gradients_match_tfs():
    # A layer of 256 x 512 by 512 x 768 (10^8 multiply-adds): its first steps are computed on the host, their
    # products split; values, dtypes and shapes as TF's
    x0 = rng.normal(size=(256, 512)).astype(np.float32)
    w0 = (rng.normal(size=(512, 768)) / 20).astype(np.float32)
    v0 = (rng.normal(size=(768, 10)) / 20).astype(np.float32)

    def body(tf):
        w, v = tf.Variable(w0), tf.Variable(v0)
        x = tf.constant(x0)
        out = []
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w)), v)))
            gw, gv = tape.gradient(loss, [w, v])
            w.assign_sub(0.1 * gw)
            v.assign_sub(0.1 * gv)
            out += [loss, gw, gv]
        return out

    check(body, rtol=2e-4)


def test_split_products_work_in_a_forked_child():
    # A forked child has the pool's object but not its threads: it starts a pool of its own
    script = (
        "import os, sys, numpy as np\n"
        "from tapeshim._src import interpret_blas\n"
        "a = np.ones((512, 512), np.float32)\n"
        "def product():\n"
        "    with interpret_blas.host_errors_ignored():\n"
        "        interpret_blas.limit_blas_threads()\n"
        "        return interpret_blas.matmul(a, a)\n"
        "assert (product() == 512).all()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if (product() == 512).all() else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
