"""tf.nn.convolution / conv3d / max_pool / avg_pool (N-D) / *_pool3d, tf.tensor_scatter_nd_max/min/sub and the
added tf.debugging assertions, against TF."""

import numpy as np
import pytest

from oracle import check, check_raises, run_taped, squared_sum

RNG = np.random.default_rng(3)
X1 = RNG.normal(size=(2, 7, 3)).astype(np.float32)
X2 = RNG.normal(size=(2, 6, 5, 3)).astype(np.float32)
X3 = RNG.normal(size=(1, 4, 5, 4, 2)).astype(np.float32)
W1 = RNG.normal(size=(3, 3, 4)).astype(np.float32)
W2 = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)
W3 = RNG.normal(size=(2, 3, 2, 2, 3)).astype(np.float32)


def _grad(tf, fn, *arrays):
    return run_taped(tf, lambda tf, *xs: fn(*xs), arrays, loss=squared_sum)


CONV = {
    "convolution_1d": lambda tf: _grad(tf, lambda x, w: tf.nn.convolution(x, w, padding="SAME"), X1, W1),
    "convolution_2d": lambda tf: _grad(tf, lambda x, w: tf.nn.convolution(x, w, strides=2), X2, W2),
    "convolution_2d_dilated": lambda tf: _grad(
        tf, lambda x, w: tf.nn.convolution(x, w, dilations=[2, 1], padding="SAME"), X2, W2
    ),
    # (TF 2.21's 3-D pooling and convolution gradients fail on its portable CPU kernels: values only)
    "convolution_3d": lambda tf: tf.nn.convolution(tf.constant(X3), tf.constant(W3), padding="SAME"),
    "conv3d": lambda tf: _grad(tf, lambda x, w: tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "VALID"), X3, W3),
    "max_pool_1d": lambda tf: _grad(tf, lambda x: tf.nn.max_pool(x, 2, 2, "VALID"), X1),
    "max_pool_2d": lambda tf: _grad(tf, lambda x: tf.nn.max_pool(x, [3, 2], [1, 2], "SAME"), X2),
    "max_pool_3d": lambda tf: tf.nn.max_pool(tf.constant(X3), 2, 2, "SAME"),
    "avg_pool_1d": lambda tf: _grad(tf, lambda x: tf.nn.avg_pool(x, 3, 1, "SAME"), X1),
    "avg_pool_2d": lambda tf: _grad(tf, lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), X2),
    "avg_pool_3d": lambda tf: tf.nn.avg_pool(tf.constant(X3), 2, 1, "VALID"),
    "max_pool3d": lambda tf: _grad(tf, lambda x: tf.nn.max_pool3d(x, 2, 2, "VALID"), X3),
    "avg_pool3d": lambda tf: _grad(tf, lambda x: tf.nn.avg_pool3d(x, [2, 2, 2], [1, 1, 1], "SAME"), X3),
}


@pytest.mark.parametrize("name", sorted(CONV))
def test_conv_and_pool_against_tf(name):
    check(CONV[name])


CONV_ERRORS = {
    "convolution_rank": lambda tf: tf.nn.convolution(tf.zeros([2, 3]), tf.zeros([1, 3, 2])),
    "max_pool_rank": lambda tf: tf.nn.max_pool(tf.zeros([2, 3]), 2, 2, "VALID"),
    "max_pool_format": lambda tf: tf.nn.max_pool(tf.constant(X2), 2, 2, "VALID", data_format="NWC"),
    "max_pool_padding": lambda tf: tf.nn.max_pool(tf.constant(X2), 2, 2, "FULL"),
}


@pytest.mark.parametrize("name", sorted(CONV_ERRORS))
def test_conv_and_pool_errors_against_tf(name):
    check_raises(CONV_ERRORS[name])


T = np.array([[1.0, 5.0], [3.0, -2.0], [0.0, 4.0]], np.float32)
SCATTER = {
    "max": lambda tf: _grad(
        tf, lambda t, u: tf.tensor_scatter_nd_max(t, [[0], [2]], u), T, np.array([[2.0, 4.5], [-1.0, 6.0]], np.float32)
    ),
    "min": lambda tf: _grad(
        tf, lambda t, u: tf.tensor_scatter_nd_min(t, [[0, 1], [1, 0]], u), T, np.array([2.0, 4.0], np.float32)
    ),
    "sub": lambda tf: _grad(
        tf, lambda t, u: tf.tensor_scatter_nd_sub(t, [[1], [1]], u), T, np.array([[2.0, 4.0], [1.0, 1.0]], np.float32)
    ),
    "max_int": lambda tf: tf.tensor_scatter_nd_max(tf.constant([1, 5, 3]), [[0], [1], [0]], [4, 2, 7]),
    "min_int64": lambda tf: tf.tensor_scatter_nd_min(
        tf.constant([1, 5, 3], tf.int64), [[2]], tf.constant([0], tf.int64)
    ),
}


@pytest.mark.parametrize("name", sorted(SCATTER))
def test_scatter_against_tf(name):
    check(SCATTER[name])


SCATTER_ERRORS = {
    "out_of_range": lambda tf: tf.tensor_scatter_nd_max(tf.constant(T), [[5]], tf.zeros([1, 2])),
    "updates_shape": lambda tf: tf.tensor_scatter_nd_min(tf.constant(T), [[0]], tf.zeros([2, 2])),
    "updates_dtype": lambda tf: tf.tensor_scatter_nd_max(tf.constant(T), [[0]], tf.zeros([1, 2], tf.float64)),
    "float_indices": lambda tf: tf.tensor_scatter_nd_sub(tf.constant(T), [[0.0]], tf.zeros([1, 2])),
}


@pytest.mark.parametrize("name", sorted(SCATTER_ERRORS))
def test_scatter_errors_against_tf(name):
    check_raises(SCATTER_ERRORS[name])


X = np.array([1.0, 2.0], np.float32)
ASSERTS = {
    "greater_equal": lambda tf: tf.debugging.assert_greater_equal(tf.constant(X), 1.0),
    "greater_equal_fails": lambda tf: tf.debugging.assert_greater_equal(tf.constant(X), 2.0),
    "less_equal_fails": lambda tf: tf.debugging.assert_less_equal(tf.constant(X), 1.0),
    "less_equal": lambda tf: tf.debugging.assert_less_equal(tf.constant(X), [2.0, 2.0]),
    "none_equal": lambda tf: tf.debugging.assert_none_equal(tf.constant(X), 3.0),
    "none_equal_fails": lambda tf: tf.debugging.assert_none_equal(tf.constant(X), 2.0),
    "compare_shapes": lambda tf: tf.debugging.assert_greater_equal(tf.constant(X), tf.constant([1.0, 2.0, 3.0])),
    "compare_dtypes": lambda tf: tf.debugging.assert_greater_equal(tf.constant(X), tf.constant([1, 2])),
    "negative_fails": lambda tf: tf.debugging.assert_negative(tf.constant(X)),
    "negative": lambda tf: tf.debugging.assert_negative(-tf.constant(X)),
    "non_positive_fails": lambda tf: tf.debugging.assert_non_positive(tf.constant(X)),
    "non_positive": lambda tf: tf.debugging.assert_non_positive(tf.constant([0, -1])),
    "all_finite": lambda tf: tf.debugging.assert_all_finite(tf.constant(X), "m"),
    "all_finite_fails": lambda tf: tf.debugging.assert_all_finite(tf.constant(X) / 0.0, "m"),
    "integer": lambda tf: tf.debugging.assert_integer(tf.constant([1])),
    "integer_fails": lambda tf: tf.debugging.assert_integer(tf.constant(X)),
    "type": lambda tf: tf.debugging.assert_type(tf.constant(X), tf.float32),
    "type_fails": lambda tf: tf.debugging.assert_type(tf.constant(X), tf.int32),
    "scalar": lambda tf: tf.debugging.assert_scalar(tf.constant(1.0)),
    "scalar_fails": lambda tf: tf.debugging.assert_scalar(tf.constant(X)),
    "rank_at_least": lambda tf: tf.debugging.assert_rank_at_least(tf.constant(X), 1),
    "rank_at_least_fails": lambda tf: tf.debugging.assert_rank_at_least(tf.constant(X), 2),
    "rank_in": lambda tf: tf.debugging.assert_rank_in(tf.constant(X), [1, 2]),
    "rank_in_fails": lambda tf: tf.debugging.assert_rank_in(tf.constant(X), [0, 2]),
    "same_float_dtype": lambda tf: tf.debugging.assert_same_float_dtype([tf.constant(X), tf.constant(X)]),
    "same_float_dtype_none": lambda tf: tf.debugging.assert_same_float_dtype(),
    "same_float_dtype_fails": lambda tf: tf.debugging.assert_same_float_dtype(
        [tf.constant(X), tf.constant([1.0], tf.float64)]
    ),
    "same_float_dtype_int": lambda tf: tf.debugging.assert_same_float_dtype([tf.constant([1])]),
    "proper_iterable": lambda tf: tf.debugging.assert_proper_iterable([1]),
    "proper_iterable_tensor": lambda tf: tf.debugging.assert_proper_iterable(tf.constant(X)),
    "proper_iterable_str": lambda tf: tf.debugging.assert_proper_iterable("ab"),
}
# besides the "_fails" cases, the ones whose point is TF's error
ASSERTS_RAISING = {
    "compare_shapes",
    "compare_dtypes",
    "same_float_dtype_int",
    "proper_iterable_tensor",
    "proper_iterable_str",
}


@pytest.mark.parametrize("name", sorted(ASSERTS))
def test_asserts_against_tf(name):
    check(
        ASSERTS[name],
        messages=name.endswith(("scalar_fails", "type_fails", "integer_fails")),
        raises=name.endswith("_fails") or name in ASSERTS_RAISING,
    )


def test_static_asserts_in_function():
    check(
        lambda tf: tf.function(
            lambda x: (
                tf.debugging.assert_rank_at_least(x, 1),
                tf.debugging.assert_type(x, tf.float32),
                tf.debugging.assert_greater_equal(x, 0.0),
                x * 2,
            )[-1]
        )(tf.constant(X))
    )
    check_raises(lambda tf: tf.function(lambda x: tf.debugging.assert_scalar(x))(tf.constant(X)))
