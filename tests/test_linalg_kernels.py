"""TF's CPU kernels of the linear-algebra ops, against TF: which dtypes compute, which are the attr error (bfloat16,
integers) and which have no kernel (float16: `NotFoundError` eagerly, the graph's `InvalidArgumentError` inside a
function). These crashed inside JAX's LAPACK calls (`NotImplementedError`), or computed where TF refuses
(half-precision determinants, integer triangular solves and least squares). And the other ops TF's CPU has no
kernel for raise the graph's `InvalidArgumentError` inside a function (they raised `NotFoundError` there, or
computed: an unsigned `tf.matmul`, an integer `tf.einsum`)."""

import numpy as np
import pytest

from oracle import check, check_raises

_MATRIX = np.array([[2.0, 0.5], [0.5, 1.5]], np.float32)

LINALG = {
    "svd": lambda tf, a: tf.linalg.svd(a)[0],
    "svd_values": lambda tf, a: tf.linalg.svd(a, compute_uv=False),
    "qr": lambda tf, a: tf.abs(tf.linalg.qr(a)[1]),
    "det": lambda tf, a: tf.linalg.det(a),
    "slogdet": lambda tf, a: tf.linalg.slogdet(a),
    "logdet": lambda tf, a: tf.linalg.logdet(a),
    "inv": lambda tf, a: tf.linalg.inv(a),
    "cholesky": lambda tf, a: tf.linalg.cholesky(a),
    "solve": lambda tf, a: tf.linalg.solve(a, a),
    "solve_adjoint": lambda tf, a: tf.linalg.solve(a, a, adjoint=True),
    "triangular_solve": lambda tf, a: tf.linalg.triangular_solve(a, a),
    "lstsq": lambda tf, a: tf.linalg.lstsq(a, a),
    "lstsq_slow": lambda tf, a: tf.linalg.lstsq(a, a, fast=False),
    "eigh": lambda tf, a: tf.linalg.eigh(a)[0],
    "eigvalsh": lambda tf, a: tf.linalg.eigvalsh(a),
    "expm": lambda tf, a: tf.linalg.expm(a),
    "pinv": lambda tf, a: tf.linalg.pinv(a),
    "matrix_rank": lambda tf, a: tf.linalg.matrix_rank(a),
    "norm_2": lambda tf, a: tf.norm(a, ord=2, axis=[-2, -1]),
    "cholesky_solve": lambda tf, a: tf.linalg.cholesky_solve(a, a),
}
_COMPUTES = {
    "float32": set(LINALG),
    "float16": {"qr", "inv"},  # TF's CPU has half kernels for these two only
    "bfloat16": set(),
    "int32": set(),
}


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("dtype", sorted(_COMPUTES))
@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_ops_have_tfs_cpu_kernels(name, dtype, in_function):
    def body(tf):
        a = tf.cast(tf.constant(_MATRIX), dtype) if dtype != "int32" else tf.constant([[2, 0], [1, 1]])

        def op():
            return LINALG[name](tf, a)

        return tf.function(op)() if in_function else op()

    check(body, raises=name not in _COMPUTES[dtype])


KERNELLESS = {
    "matmul_uint8": lambda tf: tf.matmul(tf.ones((2, 2), tf.uint8), tf.ones((2, 2), tf.uint8)),
    "batch_matmul_uint32": lambda tf: tf.matmul(tf.ones((1, 2, 2), tf.uint32), tf.ones((1, 2, 2), tf.uint32)),
    "einsum_int8": lambda tf: tf.einsum("ij,jk->ik", tf.ones((2, 2), tf.int8), tf.ones((2, 2), tf.int8)),
    "einsum_bool": lambda tf: tf.einsum("ij,jk->ik", tf.ones((2, 2), tf.bool), tf.ones((2, 2), tf.bool)),
    "erfinv_half": lambda tf: tf.math.erfinv(tf.constant([0.5], tf.float16)),
    "lrn_bfloat16": lambda tf: tf.nn.local_response_normalization(tf.ones((1, 2, 2, 3), tf.bfloat16)),
    "lu_half": lambda tf: tf.linalg.lu(tf.eye(2, dtype=tf.float16))[0],
    "sqrtm_half": lambda tf: tf.linalg.sqrtm(tf.eye(2, dtype=tf.float16)),
    "reciprocal_int32": lambda tf: tf.math.reciprocal(tf.constant([2], tf.int32)),
    "space_to_batch_bool": lambda tf: tf.space_to_batch(tf.ones((1, 2, 2, 1), tf.bool), [2, 2], [[0, 0], [0, 0]]),
    "igamma_half": lambda tf: tf.math.igamma(tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16)),
}


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(KERNELLESS))
def test_ops_without_a_cpu_kernel_raise_tfs_error(name, in_function):
    def body(tf):
        return tf.function(lambda: KERNELLESS[name](tf))() if in_function else KERNELLESS[name](tf)

    check_raises(body)


def test_half_precision_inverse_and_qr_compute_as_tf():
    def body(tf):
        a = tf.constant([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], tf.float16)
        q, r = tf.linalg.qr(a)
        return tf.linalg.inv(a), tf.abs(q), tf.abs(r), tf.matmul(q, r)

    check(body)


# -- tf.linalg.eig / eigvals (were missing) ----------------------------------------------------------------
_NONSYMMETRIC = [
    [[1.0, 2.0], [3.0, 4.0]],
    [[0.0, -1.0], [1.0, 0.0]],  # a complex pair
    [[2.0, 1.0, 0.0], [0.5, -1.0, 0.25], [0.0, 3.0, 1.5]],
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("index", range(len(_NONSYMMETRIC)))
def test_eig_values_and_vectors_as_tf(index, dtype):
    def body(tf):
        a = tf.cast(tf.constant(_NONSYMMETRIC[index]), dtype)
        e, v = tf.linalg.eig(a)
        residual = tf.abs(tf.matmul(tf.cast(a, e.dtype), v) - v * e[None, :])
        # TF's Eigen solver and LAPACK may order the eigenvalues differently, and each eigenvector's phase may
        # differ: compared in one order, and by magnitude
        order = tf.argsort(tf.math.real(e) * 1000.0 + tf.math.imag(e))
        values = tf.gather(e, order)
        in_function = tf.gather(tf.function(tf.linalg.eigvals)(a), order)
        return values, tf.gather(tf.abs(v), order, axis=1), tf.reduce_max(residual) < 1e-4, in_function

    check(body)


def test_eig_of_a_batch_and_its_gradient_as_tf():
    def body(tf):
        m = tf.constant([[[1.0, 2.0], [3.0, 4.0]], [[2.0, 0.5], [0.25, -1.0]]])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(m)
            e = tf.linalg.eig(m)[0]
            loss = tf.reduce_sum(tf.math.real(e) ** 2 + tf.math.imag(e) * 3.0)
            weighted = tf.reduce_sum(tf.math.real(tf.linalg.eigvals(m)) * [1.0, 2.0])
        return e, tape.gradient(loss, m), tape.gradient(weighted, m)

    check(body)


EIG_ERRORS = {
    "not_square": lambda tf: tf.linalg.eig(tf.ones((2, 3))),
    "rank_1": lambda tf: tf.linalg.eigvals(tf.ones((3,))),
    "int32": lambda tf: tf.linalg.eig(tf.constant([[1, 2], [3, 4]])),
    "float16": lambda tf: tf.linalg.eigvals(tf.eye(2, dtype=tf.float16)),
}


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(EIG_ERRORS))
def test_eig_errors_as_tf(name, in_function):
    check_raises(lambda tf: tf.function(lambda: EIG_ERRORS[name](tf))() if in_function else EIG_ERRORS[name](tf))


# -- a dtype without a kernel and bad shapes: which error comes first --------------------------------------
# Eagerly TF looks the kernel up first (`NotFoundError`, or the attr error); inside a function its shape
# inference runs when the graph is built (`ValueError`) and the missing kernel only when it runs.
BAD_SHAPES = {
    "matmul_uint8": lambda tf: tf.matmul(tf.ones((2, 3), tf.uint8), tf.ones((4, 2), tf.uint8)),
    "einsum_int8": lambda tf: tf.einsum("ij,jk->ik", tf.ones((2, 3), tf.int8), tf.ones((4, 2), tf.int8)),
    "svd_half_rank_1": lambda tf: tf.linalg.svd(tf.ones((3,), tf.float16), compute_uv=False),
    "solve_half": lambda tf: tf.linalg.solve(tf.ones((2, 3), tf.float16), tf.ones((2, 1), tf.float16)),
    "cholesky_half": lambda tf: tf.linalg.cholesky(tf.ones((2, 3), tf.float16)),
    "det_half": lambda tf: tf.linalg.det(tf.ones((2, 3), tf.float16)),
    "eigh_half": lambda tf: tf.linalg.eigh(tf.ones((2, 3), tf.float16))[0],
    "triangular_solve_half": lambda tf: tf.linalg.triangular_solve(
        tf.ones((2, 3), tf.float16), tf.ones((2, 1), tf.float16)
    ),
    "lstsq_half": lambda tf: tf.linalg.lstsq(tf.ones((2, 2), tf.float16), tf.ones((3, 1), tf.float16)),
    "inv_bfloat16": lambda tf: tf.linalg.inv(tf.ones((2, 3), tf.bfloat16)),
    "qr_int32_rank_1": lambda tf: tf.linalg.qr(tf.ones((3,), tf.int32))[0],
    "eigvalsh_half": lambda tf: tf.linalg.eigvalsh(tf.ones((2, 3), tf.float16)),
    "logdet_half": lambda tf: tf.linalg.logdet(tf.ones((2, 3), tf.float16)),
    "slogdet_half": lambda tf: tf.linalg.slogdet(tf.ones((2, 3), tf.float16))[1],
    "cholesky_solve_half": lambda tf: tf.linalg.cholesky_solve(
        tf.ones((2, 2), tf.float16), tf.ones((3, 1), tf.float16)
    ),
    "pinv_half": lambda tf: tf.linalg.pinv(tf.ones((3,), tf.float16)),
}


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(BAD_SHAPES))
def test_missing_kernel_and_bad_shapes_raise_tfs_first_error(name, in_function):
    check_raises(lambda tf: tf.function(lambda: BAD_SHAPES[name](tf))() if in_function else BAD_SHAPES[name](tf))
