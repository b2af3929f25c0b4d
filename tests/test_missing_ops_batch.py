"""tf.nn.conv_transpose (conv1d/conv3d_transpose), tf.nn.pool, tf.linalg.sqrtm/logm/tridiagonal_solve/
banded_triangular_solve, tf.quantization.fake_quant_*, tf.math.approx_max_k/approx_min_k against TF.

Values, dtypes and shapes eagerly; gradients under a GradientTape; one case per op inside `tf.function`; TF's
error class for bad input. `approx_min_k` and `approx_max_k` along another dimension have no TF CPU kernel: they
are compared with TF's XLA kernel (`jit_compile=True`), which TF runs for them elsewhere.
"""

import numpy as np
import pytest

from oracle import check, check_raises, run_taped, squared_sum

RNG = np.random.default_rng(7)


def _f32(*shape, scale=1.0):
    return (RNG.normal(size=shape) * scale).astype(np.float32)


def _grad(tf, fn, *arrays, loss=squared_sum):
    return run_taped(tf, lambda tf, *xs: fn(*xs), arrays, loss=loss)


def _cast(tf, dtype, *arrays):
    return [tf.cast(tf.constant(a), getattr(tf, dtype)) for a in arrays]


# -- conv_transpose ------------------------------------------------------------------------------------
X1, W1 = _f32(2, 5, 3), _f32(3, 4, 3)
X2, W2 = _f32(2, 4, 4, 3), _f32(3, 3, 2, 3)
X3, W3 = _f32(1, 3, 4, 4, 2), _f32(2, 2, 2, 5, 2)

# -- pool ----------------------------------------------------------------------------------------------
P1, P2, P3 = _f32(2, 9, 3), _f32(2, 7, 6, 3), _f32(1, 5, 6, 5, 2)

# -- linalg --------------------------------------------------------------------------------------------
SPD = (RNG.normal(size=(2, 3, 3)) / 4 + np.eye(3)).astype(np.float64)
SQ4 = (RNG.normal(size=(4, 4)) / 5 + np.eye(4)).astype(np.float64)
DIAGS = _f32(2, 3, 5)
DIAGS[:, 1] += 4.0
RHS = _f32(2, 5, 2)
BANDS = _f32(2, 3, 5)
BANDS[:, 0] += 3.0
UPPER_BANDS = BANDS[:, ::-1].copy()
TRI_MATRIX = (RNG.normal(size=(2, 5, 5)) + 5 * np.eye(5)).astype(np.float32)

# -- quantization and top-k ----------------------------------------------------------------------------
Q = (RNG.uniform(-4, 4, size=(3, 7))).astype(np.float32)
V = _f32(3, 10)
V3 = _f32(2, 6, 4)


def _complex(tf, re, im):
    return tf.complex(tf.constant(re), tf.constant(im))


CASES = {
    # conv_transpose: 1-D, 2-D, 3-D by output_shape's length; padding, strides, tensor output_shape, dtypes
    "ct1_same": lambda tf: _grad(tf, lambda x, w: tf.nn.conv_transpose(x, w, [2, 10, 4], 2), X1, W1),
    "ct1_valid": lambda tf: _grad(tf, lambda x, w: tf.nn.conv_transpose(x, w, [2, 11, 4], [2], "VALID"), X1, W1),
    "ct1_shape_tensor": lambda tf: tf.nn.conv_transpose(X1, W1, tf.constant([2, 9, 4]), 2),
    "ct1_f64": lambda tf: tf.nn.conv_transpose(X1.astype(np.float64), W1.astype(np.float64), [2, 5, 4], 1),
    "ct1_f16": lambda tf: tf.nn.conv_transpose(*_cast(tf, "float16", X1, W1), [2, 10, 4], 2),
    "ct1_direct": lambda tf: _grad(tf, lambda x, w: tf.nn.conv1d_transpose(x, w, [2, 10, 4], 2, "SAME"), X1, W1),
    "ct2_same": lambda tf: _grad(tf, lambda x, w: tf.nn.conv_transpose(x, w, [2, 8, 8, 2], 2), X2, W2),
    "ct2_valid": lambda tf: _grad(tf, lambda x, w: tf.nn.conv_transpose(x, w, [2, 9, 6, 2], [2, 1], "VALID"), X2, W2),
    "ct2_explicit": lambda tf: tf.nn.conv_transpose(X2, W2, [2, 7, 7, 2], 2, [[0, 0], [1, 1], [1, 1], [0, 0]]),
    "ct2_full_strides": lambda tf: tf.nn.conv_transpose(X2, W2, [2, 8, 4, 2], [1, 2, 1, 1]),
    "ct3_same": lambda tf: _grad(tf, lambda x, w: tf.nn.conv_transpose(x, w, [1, 6, 8, 8, 5], 2), X3, W3),
    "ct3_valid": lambda tf: _grad(tf, lambda x, w: tf.nn.conv_transpose(x, w, [1, 4, 5, 5, 5], 1, "VALID"), X3, W3),
    "ct3_direct": lambda tf: tf.nn.conv3d_transpose(X3.astype(np.float64), W3.astype(np.float64), [1, 5, 8, 7, 5], 2),
    # pool: MAX / AVG, 1-D to 3-D, strides, SAME / VALID, dilations
    "pool1_max": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [3], "MAX", strides=[2], padding="SAME"), P1),
    "pool1_avg_dil": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [2], "AVG", dilations=[3]), P1),
    "pool2_max": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [2, 2], "MAX", strides=[2, 2], padding="SAME"), P2),
    "pool2_avg_same": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [3, 2], "AVG", strides=[2, 1], padding="SAME"), P2),
    "pool2_avg_dil": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [2, 2], "AVG", dilations=[2, 2]), P2),
    "pool2_max_dil": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [3, 2], "MAX", dilations=[2, 1]), P2),
    "pool2_dil_too_big": lambda tf: tf.nn.pool(P2[:, :6], [3, 3], "MAX", dilations=[3, 3]),
    "pool2_int_max": lambda tf: tf.nn.pool(tf.constant((P2 * 4).astype(np.int32)), [2, 2], "MAX"),
    "pool2_f64": lambda tf: tf.nn.pool(P2.astype(np.float64), [3, 3], "AVG", strides=[3, 2], padding="SAME"),
    "pool2_f16_dil": lambda tf: tf.nn.pool(tf.constant(P2.astype(np.float16)), [2, 2], "MAX", dilations=[1, 2]),
    "pool3_avg": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [2, 3, 2], "AVG", [2, 2, 1], "SAME"), P3),
    "pool3_max_dil": lambda tf: _grad(tf, lambda x: tf.nn.pool(x, [2, 2, 2], "MAX", dilations=[1, 2, 2]), P3),
    # sqrtm / logm
    "sqrtm_f64": lambda tf: _grad(tf, lambda a: tf.linalg.sqrtm(a), SPD),
    "sqrtm_f32": lambda tf: _grad(tf, lambda a: tf.linalg.sqrtm(a), SPD.astype(np.float32)),
    "sqrtm_single": lambda tf: tf.linalg.sqrtm(SQ4),
    "sqrtm_complex": lambda tf: tf.linalg.sqrtm(_complex(tf, SPD, SPD / 3)),
    "sqrtm_complex_gradient": lambda tf: _grad(tf, lambda a: tf.linalg.sqrtm(a), _cplx(SPD), loss=_complex_loss),
    "sqrtm_complex64": lambda tf: tf.linalg.sqrtm(_complex(tf, SQ4.astype(np.float32), -SQ4.astype(np.float32) / 4)),
    "sqrtm_scaled": lambda tf: tf.linalg.sqrtm(SPD * 250.0),
    "sqrtm_empty": lambda tf: tf.linalg.sqrtm(np.zeros((2, 0, 0), np.float32)),
    "logm_c128": lambda tf: tf.linalg.logm(_complex(tf, SPD, SPD / 3)),
    "logm_c64": lambda tf: tf.linalg.logm(_complex(tf, SQ4.astype(np.float32), SQ4.astype(np.float32) / 5)),
    "logm_far": lambda tf: tf.linalg.logm(_complex(tf, SPD * 40.0, SPD)),
    "logm_rotation": lambda tf: tf.linalg.logm(tf.complex(tf.constant([[0.0, -1.0], [1.0, 0.0]]), tf.zeros([2, 2]))),
    "logm_empty": lambda tf: tf.linalg.logm(tf.zeros((2, 0, 0), tf.complex64)),
    # tridiagonal_solve: compact / sequence / matrix, vector rhs, transpose/conjugate, pivoting
    "tri_compact": lambda tf: _grad(tf, lambda d, r: tf.linalg.tridiagonal_solve(d, r), DIAGS, RHS),
    "tri_vector": lambda tf: _grad(tf, lambda d, r: tf.linalg.tridiagonal_solve(d, r), DIAGS, RHS[..., 0]),
    "tri_no_pivot": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGS), tf.constant(RHS), partial_pivoting=False
    ),
    "tri_transpose": lambda tf: _grad(
        tf, lambda d, r: tf.linalg.tridiagonal_solve(d, r, transpose_rhs=True), DIAGS, np.swapaxes(RHS, -1, -2)
    ),
    "tri_f64": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGS[0].astype(float)), tf.constant(RHS[0].astype(float))
    ),
    "tri_sequence": lambda tf: _grad(
        tf,
        lambda u, m, lo, r: tf.linalg.tridiagonal_solve([u, m, lo], r, diagonals_format="sequence"),
        DIAGS[:, 0, :4],
        DIAGS[:, 1],
        DIAGS[:, 2, 1:],
        RHS,
    ),
    "tri_matrix": lambda tf: _grad(
        tf,
        lambda a, r: tf.linalg.tridiagonal_solve(a, r, diagonals_format="matrix"),
        TRI_MATRIX,
        RHS,
    ),
    "tri_complex_conj": lambda tf: tf.linalg.tridiagonal_solve(
        _complex(tf, DIAGS, DIAGS / 2), _complex(tf, RHS, -RHS), conjugate_rhs=True
    ),
    "tri_complex_t_conj": lambda tf: tf.linalg.tridiagonal_solve(
        _complex(tf, DIAGS, DIAGS / 2),
        _complex(tf, np.swapaxes(RHS, -1, -2), np.swapaxes(RHS, -1, -2)),
        transpose_rhs=True,
        conjugate_rhs=True,
    ),
    "tri_perturb": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(DIAGS), tf.constant(RHS), perturb_singular=True),
    # banded_triangular_solve
    "band_lower": lambda tf: _grad(tf, lambda b, r: tf.linalg.banded_triangular_solve(b, r), BANDS, RHS),
    "band_upper": lambda tf: _grad(
        tf, lambda b, r: tf.linalg.banded_triangular_solve(b, r, lower=False), UPPER_BANDS, RHS
    ),
    "band_adjoint": lambda tf: _grad(
        tf, lambda b, r: tf.linalg.banded_triangular_solve(b, r, adjoint=True), BANDS, RHS
    ),
    "band_upper_adjoint": lambda tf: tf.linalg.banded_triangular_solve(UPPER_BANDS, RHS, lower=False, adjoint=True),
    "band_broadcast": lambda tf: _grad(tf, lambda b, r: tf.linalg.banded_triangular_solve(b, r), BANDS[0], RHS),
    "band_one_band": lambda tf: tf.linalg.banded_triangular_solve(BANDS[:, :1].astype(np.float64), RHS[0, None]),
    "band_complex": lambda tf: tf.linalg.banded_triangular_solve(
        _complex(tf, BANDS, BANDS / 3), _complex(tf, RHS, RHS), adjoint=True
    ),
    # fake quantization
    "fq_args": lambda tf: _grad(
        tf, lambda x: tf.quantization.fake_quant_with_min_max_args(x, -2.0, 3.0, num_bits=4), Q
    ),
    "fq_args_default": lambda tf: tf.quantization.fake_quant_with_min_max_args(Q),
    "fq_args_narrow": lambda tf: _grad(
        tf,
        lambda x: tf.quantization.fake_quant_with_min_max_args(x, -1.5, 2.5, num_bits=6, narrow_range=True),
        Q,
    ),
    "fq_args_positive_min": lambda tf: tf.quantization.fake_quant_with_min_max_args(Q, 0.5, 2.0),
    "fq_vars": lambda tf: _grad(
        tf,
        lambda x, lo, hi: tf.quantization.fake_quant_with_min_max_vars(x, lo, hi, num_bits=5),
        Q,
        np.float32(-2.2),
        np.float32(2.9),
    ),
    "fq_vars_narrow": lambda tf: _grad(
        tf,
        lambda x, lo, hi: tf.quantization.fake_quant_with_min_max_vars(x, lo, hi, 3, narrow_range=True),
        Q,
        np.float32(-1.0),
        np.float32(3.3),
    ),
    "fq_vars_zero_range": lambda tf: _grad(
        tf, lambda x, lo, hi: tf.quantization.fake_quant_with_min_max_vars(x, lo, hi), Q, np.float32(0), np.float32(0)
    ),
    "fq_vars_16_bits": lambda tf: tf.quantization.fake_quant_with_min_max_vars(Q, -3.0, 3.0, num_bits=16),
    "fq_vars_variables": lambda tf: _fq_variables(tf),
    "fq_vars_gradient_op": lambda tf: tf.quantization.fake_quant_with_min_max_vars_gradient(
        Q * 2, Q, -1.0, 1.5, num_bits=4
    ),
    "fq_args_gradient_op": lambda tf: tf.quantization.fake_quant_with_min_max_args_gradient(Q * 2, Q, -1.0, 1.5),
    # approx_max_k / approx_min_k
    "amax": lambda tf: _grad(tf, lambda v: tf.math.approx_max_k(v, 3)[0], V),
    "amax_indices": lambda tf: tf.math.approx_max_k(V, 4),
    "amax_nn": lambda tf: tf.nn.approx_max_k(V[0], 10, recall_target=0.5, aggregate_to_topk=False),
    "amax_f16": lambda tf: tf.math.approx_max_k(tf.constant(V.astype(np.float16)), 2),
    "amax_bf16": lambda tf: tf.math.approx_max_k(tf.cast(V, tf.bfloat16), 5),
    "amax_k0": lambda tf: tf.math.approx_max_k(V, 0),
    "amax_ties": lambda tf: tf.math.approx_max_k(np.array([1.0, 3, 3, 2, 3], np.float32), 2),
    "amax_3d": lambda tf: _grad(tf, lambda v: tf.math.approx_max_k(v, 2, reduction_dimension=-1).values, V3),
    "amin_xla": lambda tf: _xla(tf, lambda v: tf.math.approx_min_k(v, 3), V),
    "amin_xla_dim0": lambda tf: _xla(tf, lambda v: tf.math.approx_min_k(v, 2, reduction_dimension=0), V),
    "amax_xla_dim1": lambda tf: _xla(tf, lambda v: tf.math.approx_max_k(v, 3, reduction_dimension=1), V3),
    "amin_xla_grad": lambda tf: _xla(tf, lambda v: _min_k_gradient(tf, v), V3),
}


def _fq_variables(tf):
    x = tf.constant(Q)
    low, high = tf.Variable(-1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.quantization.fake_quant_with_min_max_vars(x, low, high, num_bits=8)
        loss = tf.reduce_sum(y * tf.constant(Q))
    return y, tape.gradient(loss, [low, high])


def _xla(tf, fn, *arrays):
    return tf.function(fn, jit_compile=True)(*[tf.constant(a) for a in arrays])


def _min_k_gradient(tf, v):
    with tf.GradientTape() as tape:
        tape.watch(v)
        values = tf.math.approx_min_k(v, 2, reduction_dimension=1).values
        loss = tf.reduce_sum(values * values)
    return values, tape.gradient(loss, v)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_tf(name):
    check(CASES[name])


def _traced(tf, fn, *arrays):
    def body(*xs):
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = fn(*xs)
            loss = tf.reduce_sum(y * y)
        return y, tape.gradient(loss, list(xs))

    return tf.function(body)(*[tf.constant(a) for a in arrays])


TRACED = {
    "conv_transpose": lambda tf: _traced(tf, lambda x, w: tf.nn.conv_transpose(x, w, [2, 8, 8, 2], 2), X2, W2),
    "conv_transpose_1d": lambda tf: _traced(tf, lambda x, w: tf.nn.conv_transpose(x, w, [2, 10, 4], 2), X1, W1),
    "pool": lambda tf: _traced(tf, lambda x: tf.nn.pool(x, [2, 2], "AVG", dilations=[2, 1]), P2),
    "pool_max": lambda tf: _traced(tf, lambda x: tf.nn.pool(x, [2, 2], "MAX", [2, 2], "SAME"), P2),
    "sqrtm": lambda tf: _traced(tf, tf.linalg.sqrtm, SPD),
    "logm": lambda tf: tf.function(tf.linalg.logm)(_complex(tf, SPD, SPD / 3)),
    "tridiagonal_solve": lambda tf: _traced(tf, lambda d, r: tf.linalg.tridiagonal_solve(d, r), DIAGS, RHS),
    "banded_triangular_solve": lambda tf: _traced(tf, lambda b, r: tf.linalg.banded_triangular_solve(b, r), BANDS, RHS),
    "fake_quant_args": lambda tf: _traced(
        tf, lambda x: tf.quantization.fake_quant_with_min_max_args(x, -2.0, 2.0, num_bits=5), Q
    ),
    "fake_quant_vars": lambda tf: _traced(
        tf, lambda x, lo, hi: tf.quantization.fake_quant_with_min_max_vars(x, lo, hi), Q, np.float32(-1), np.float32(2)
    ),
    "fake_quant_vars_gradient": lambda tf: tf.function(tf.quantization.fake_quant_with_min_max_vars_gradient)(
        tf.constant(Q), tf.constant(Q), tf.constant(-1.0), tf.constant(1.0)
    ),
    "approx_max_k": lambda tf: _traced(tf, lambda v: tf.math.approx_max_k(v, 3).values, V),
}


@pytest.mark.parametrize("name", sorted(TRACED))
def test_in_function(name):
    check(TRACED[name])


ERRORS = {
    # conv_transpose
    "ct_output_shape_len": lambda tf: tf.nn.conv_transpose(X1, W1, [2, 10, 4, 1, 1, 1], 2),
    "ct_output_shape_int": lambda tf: tf.nn.conv_transpose(X1, W1, 5, 2),
    "ct1_data_format": lambda tf: tf.nn.conv_transpose(X1, W1, [2, 10, 4], 2, data_format="NHWC"),
    "ct1_depth": lambda tf: tf.nn.conv_transpose(X1, W1[:, :, :2], [2, 10, 4], 2),
    "ct1_out_size": lambda tf: tf.nn.conv_transpose(X1, W1, [2, 13, 4], 2),
    "ct1_strides_len": lambda tf: tf.nn.conv_transpose(X1, W1, [2, 10, 4], [1, 2]),
    "ct1_dtypes": lambda tf: tf.nn.conv_transpose(tf.constant(X1.astype(np.float64)), tf.constant(W1), [2, 10, 4], 2),
    "ct1_padding": lambda tf: tf.nn.conv_transpose(X1, W1, [2, 10, 4], 2, padding="FOO"),
    "ct1_explicit_padding": lambda tf: tf.nn.conv_transpose(X1, W1, [2, 10, 4], 2, padding=[[0, 0]] * 3),
    "ct1_filter_rank": lambda tf: tf.nn.conv_transpose(X1, W3, [2, 10, 4], 2),
    "ct2_out_depth": lambda tf: tf.nn.conv_transpose(X2, W2, [2, 8, 8, 3], 2),
    "ct2_padding": lambda tf: tf.nn.conv_transpose(X2, W2, [2, 8, 8, 2], 2, padding="same"),
    "ct3_depth": lambda tf: tf.nn.conv_transpose(X3, W3[..., :1], [1, 6, 8, 8, 5], 2),
    "ct3_rank": lambda tf: tf.nn.conv_transpose(X3[0], W3, [1, 6, 8, 8, 5], 2),
    "ct3_explicit_padding": lambda tf: tf.nn.conv_transpose(X3, W3, [1, 6, 8, 8, 5], 2, padding=[[0, 0]] * 5),
    "ct3_padding": lambda tf: tf.nn.conv_transpose(X3, W3, [1, 6, 8, 8, 5], 2, padding="FOO"),
    # pool
    "pool_type": lambda tf: tf.nn.pool(P2, [2, 2], "MIN"),
    "pool_type_lower": lambda tf: tf.nn.pool(P2, [2, 2], "max"),
    "pool_window_len": lambda tf: tf.nn.pool(P2, [2, 2, 2, 2], "MAX"),
    "pool_rank": lambda tf: tf.nn.pool(P2, [2], "MAX"),
    "pool_stride_gt_window": lambda tf: tf.nn.pool(P2, [2, 2], "MAX", strides=[3, 3]),
    "pool_stride_and_dilation": lambda tf: tf.nn.pool(P2, [2, 2], "MAX", strides=[2, 2], dilations=[2, 2]),
    "pool_same_dilation": lambda tf: tf.nn.pool(P2, [2, 2], "AVG", padding="SAME", dilations=[2, 2]),
    "pool_stride_zero": lambda tf: tf.nn.pool(P2, [2, 2], "MAX", strides=[0, 1]),
    "pool_dilation_zero": lambda tf: tf.nn.pool(P2, [2, 2], "MAX", dilations=[0, 1]),
    "pool_strides_len": lambda tf: tf.nn.pool(P2, [2, 2], "MAX", strides=[1]),
    "pool_1d_format": lambda tf: tf.nn.pool(P1, [2], "MAX", data_format="NHWC"),
    "pool_int_avg": lambda tf: tf.nn.pool(tf.constant((P2 * 4).astype(np.int32)), [2, 2], "AVG"),
    "pool_padding": lambda tf: tf.nn.pool(P2, [2, 2], "MAX", padding="FOO"),
    "pool_padding_lower": lambda tf: tf.nn.pool(P2, [2, 2], "MAX", padding="same"),
    # sqrtm / logm
    "sqrtm_int": lambda tf: tf.linalg.sqrtm(np.eye(3, dtype=np.int32)),
    "sqrtm_f16": lambda tf: tf.linalg.sqrtm(SPD.astype(np.float16)),
    "sqrtm_rank1": lambda tf: tf.linalg.sqrtm(SPD[0, 0]),
    "sqrtm_non_square": lambda tf: tf.linalg.sqrtm(SPD[:, :2]),
    "logm_real": lambda tf: tf.linalg.logm(SPD),
    "logm_float32": lambda tf: tf.linalg.logm(SPD.astype(np.float32)),
    "logm_rank1": lambda tf: tf.linalg.logm(_complex(tf, SPD[0, 0], SPD[0, 0])),
    "logm_non_square": lambda tf: tf.linalg.logm(_complex(tf, SPD[:, :2], SPD[:, :2])),
    "logm_gradient": lambda tf: _grad(tf, lambda a: tf.math.real(tf.linalg.logm(a)), _cplx(SPD)),
    # tridiagonal_solve
    "tri_format": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(DIAGS), tf.constant(RHS), diagonals_format="x"),
    "tri_four_diagonals": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(np.concatenate([DIAGS, DIAGS[:, :1]], 1)), tf.constant(RHS)
    ),
    "tri_rank1": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(DIAGS[0, 0]), tf.constant(RHS)),
    "tri_rhs_rank": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(DIAGS), tf.constant(RHS[None])),
    "tri_sizes": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(DIAGS), tf.constant(RHS[:, :3])),
    "tri_batch": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(DIAGS), tf.constant(RHS[:1])),
    "tri_int": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGS.astype(np.int32)), tf.constant(RHS.astype(int))
    ),
    "tri_f16": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGS.astype(np.float16)), tf.constant(RHS.astype(np.float16))
    ),
    "tri_dtypes": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(DIAGS.astype(float)), tf.constant(RHS)),
    "tri_sequence_len": lambda tf: tf.linalg.tridiagonal_solve(
        [tf.constant(DIAGS[:, 0]), tf.constant(DIAGS[:, 1])], tf.constant(RHS), diagonals_format="sequence"
    ),
    "tri_sequence_size": lambda tf: tf.linalg.tridiagonal_solve(
        [tf.constant(DIAGS[:, 0, :2]), tf.constant(DIAGS[:, 1]), tf.constant(DIAGS[:, 2])],
        tf.constant(RHS),
        diagonals_format="sequence",
    ),
    "tri_matrix_non_square": lambda tf: tf.linalg.tridiagonal_solve(
        tf.zeros((5, 4)), tf.constant(RHS[0]), diagonals_format="matrix"
    ),
    "tri_perturb_without_pivoting": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGS), tf.constant(RHS), partial_pivoting=False, perturb_singular=True
    ),
    # banded_triangular_solve
    "band_int": lambda tf: tf.linalg.banded_triangular_solve(BANDS.astype(np.int32), RHS.astype(np.int32)),
    "band_f16": lambda tf: tf.linalg.banded_triangular_solve(BANDS.astype(np.float16), RHS.astype(np.float16)),
    "band_sizes": lambda tf: tf.linalg.banded_triangular_solve(BANDS, RHS[:, :3]),
    "band_rank1": lambda tf: tf.linalg.banded_triangular_solve(BANDS[0, 0], RHS),
    "band_rhs_rank1": lambda tf: tf.linalg.banded_triangular_solve(BANDS, RHS[0, 0]),
    "band_batch": lambda tf: tf.linalg.banded_triangular_solve(np.ones((3, 2, 5), np.float32), RHS),
    "band_singular": lambda tf: tf.linalg.banded_triangular_solve(np.zeros((2, 5), np.float32), RHS[0]),
    "band_dtypes": lambda tf: tf.linalg.banded_triangular_solve(tf.constant(BANDS.astype(float)), tf.constant(RHS)),
    # fake quantization
    "fq_args_bits_low": lambda tf: tf.quantization.fake_quant_with_min_max_args(Q, num_bits=1),
    "fq_args_bits_high": lambda tf: tf.quantization.fake_quant_with_min_max_args(Q, num_bits=17),
    "fq_args_min_max": lambda tf: tf.quantization.fake_quant_with_min_max_args(Q, 3.0, 2.0),
    "fq_args_float64": lambda tf: tf.quantization.fake_quant_with_min_max_args(tf.constant(Q.astype(np.float64))),
    "fq_vars_bits": lambda tf: tf.quantization.fake_quant_with_min_max_vars(Q, -1.0, 1.0, num_bits=1),
    "fq_vars_min_rank": lambda tf: tf.quantization.fake_quant_with_min_max_vars(Q, [-1.0], [1.0]),
    "fq_vars_float64": lambda tf: tf.quantization.fake_quant_with_min_max_vars(
        tf.constant(Q.astype(np.float64)), -1.0, 1.0
    ),
    # approx top-k
    "amax_float64": lambda tf: tf.math.approx_max_k(V.astype(np.float64), 3),
    "amax_int": lambda tf: tf.math.approx_max_k(V.astype(np.int32), 3),
    "amax_k_big": lambda tf: tf.math.approx_max_k(V, 11),
    "amax_k_negative": lambda tf: tf.math.approx_max_k(V, -1),
    "amax_scalar": lambda tf: tf.math.approx_max_k(np.float32(3.0), 1),
    "amin_k_big_xla": lambda tf: _xla(tf, lambda v: tf.math.approx_min_k(v, 11), V),
}


def _complex_loss(tf, y):
    return tf.reduce_sum(tf.math.real(y * tf.math.conj(y)) + tf.math.imag(y))


def _cplx(a):
    return (a + 1j * a / 3).astype(np.complex128)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_class(name):
    check_raises(ERRORS[name])
