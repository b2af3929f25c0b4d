"""reciprocal_no_nan, multiply_no_nan, scalar_mul, erfinv, segment_prod, unsorted_segment_prod,
cumulative_logsumexp, polyval and confusion_matrix against real TF: values, gradients and errors."""

import numpy as np
import pytest

from oracle import check, check_raises, jvp_body, taped_body, traced_body

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_FLOATS_COMPLEX = _FLOATS + ("complex64", "complex128")
_SEGMENT_TYPES = ("float16", "float32", "float64", "complex64", "int32", "int64", "int8", "uint8", "uint32")
_DATA = np.array([2.0, 0.0, 3.0, 0.0, 0.0, 5.0, -1.5])
_UPSTREAM = np.array([1.0, -2.0, 0.5])


# -- values over dtypes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", _FLOATS_COMPLEX)
def test_reciprocal_no_nan(dtype):
    check(lambda tf: tf.math.reciprocal_no_nan(tf.constant([0.0, 2.0, -4.0, 0.5], getattr(tf, dtype))))


@pytest.mark.parametrize("dtype", _FLOATS_COMPLEX)
def test_multiply_no_nan(dtype):
    x = np.array([[np.inf, 2.0, np.nan], [1.0, -3.0, 0.5]]).astype("float32" if dtype == "bfloat16" else dtype)
    check(lambda tf: tf.math.multiply_no_nan(tf.constant(x, getattr(tf, dtype)), tf.constant([0.0, 4.0, 0.0], dtype)))


def test_multiply_no_nan_python_operands():
    check(lambda tf: tf.math.multiply_no_nan(2.0, tf.constant([1.0, 0.0])))
    check(lambda tf: tf.math.multiply_no_nan(tf.constant([1.0, 3.0]), 2))


@pytest.mark.parametrize("dtype", ("float16", "int32", "float32", "float64", "complex64"))
def test_scalar_mul(dtype):
    check(lambda tf: tf.scalar_mul(2, tf.constant([1, -2, 3], getattr(tf, dtype))))
    check(lambda tf: tf.math.scalar_mul(tf.constant(3, getattr(tf, dtype)), tf.constant([[1, 2]], getattr(tf, dtype))))


def test_scalar_mul_variable_and_indexed_slices():
    check(lambda tf: tf.scalar_mul(np.float32(2.5), tf.Variable([1.0, 2.0])))

    def slices(tf):
        values = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
        out = tf.scalar_mul(2.0, values)
        return type(out).__name__, out.values, out.indices, out.dense_shape

    check(slices)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_erfinv(dtype):
    check(lambda tf: tf.math.erfinv(tf.constant([0.0, 0.5, -0.9, 0.999, 1.0, -1.0, 1.5, np.nan], getattr(tf, dtype))))


@pytest.mark.parametrize("dtype", _SEGMENT_TYPES)
def test_segment_prod(dtype):
    data = np.array([[1, 2], [3, 0], [2, 2], [4, 1], [1, 3]])
    check(lambda tf: tf.math.segment_prod(tf.constant(data, getattr(tf, dtype)), [0, 0, 2, 2, 3]))
    check(lambda tf: tf.math.unsorted_segment_prod(tf.constant(data, getattr(tf, dtype)), [3, 0, -1, 3, 0], 5))


def test_unsorted_segment_prod_multi_dimensional_ids():
    data = np.arange(1.0, 13.0).reshape(2, 3, 2)
    check(lambda tf: tf.math.unsorted_segment_prod(data, tf.constant([[0, 1, 0], [2, 2, 1]], tf.int64), 3))
    check(lambda tf: tf.math.segment_prod(tf.zeros([0, 2]), tf.zeros([0], tf.int32)))


@pytest.mark.parametrize("dtype", _FLOATS)
@pytest.mark.parametrize("exclusive", (False, True))
@pytest.mark.parametrize("reverse", (False, True))
def test_cumulative_logsumexp(dtype, exclusive, reverse):
    x = np.array([[0.0, 0.5, -0.9, 3.0], [-2.0, 1.0, 1.0, 0.25]])
    check(
        lambda tf: tf.math.cumulative_logsumexp(
            tf.constant(x, getattr(tf, dtype)), axis=1, exclusive=exclusive, reverse=reverse
        )
    )
    check(lambda tf: tf.math.cumulative_logsumexp(tf.constant(x, getattr(tf, dtype)), exclusive=exclusive))


def test_cumulative_logsumexp_edges():
    check(lambda tf: tf.math.cumulative_logsumexp(tf.constant([-np.inf, -np.inf, 1.0, np.inf])))
    check(lambda tf: tf.math.cumulative_logsumexp(tf.zeros([0, 3]), axis=tf.constant(-1)))
    check(lambda tf: tf.math.cumulative_logsumexp(tf.constant([[1.0, 2.0]]), axis=-1, exclusive=True))


def test_polyval():
    check(lambda tf: tf.math.polyval([1.0, 2.0, 3.0], tf.constant([1.0, -2.0, 0.5])))
    check(lambda tf: tf.math.polyval([1, -2, 0, 3], tf.constant([[1, 2], [3, 4]])))
    check(lambda tf: tf.math.polyval([], tf.constant([1.0, 2.0], tf.float64)))
    check(lambda tf: tf.math.polyval([3.0], tf.constant([1.0, 2.0])))
    check(lambda tf: tf.math.polyval([tf.constant([1.0, 2.0]), tf.constant(3.0)], tf.constant([[1.0], [2.0]])))
    check(lambda tf: tf.math.polyval([1.0, 2.0], [3.0, 4.0]))
    check(lambda tf: tf.math.polyval([np.float64(0.5), np.float64(2.0)], tf.constant([2.0], tf.float64)))


def test_confusion_matrix():
    check(lambda tf: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]))
    check(lambda tf: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=6))
    check(lambda tf: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=tf.constant(5, tf.int64)))
    check(lambda tf: tf.math.confusion_matrix([1, 2, 1], [2, 2, 2], weights=[1.0, 2.0, 3.5], dtype=tf.float32))
    check(lambda tf: tf.math.confusion_matrix([1, 2, 1], [2, 2, 2], weights=[1.0, 2.0, 3.5]))
    check(lambda tf: tf.math.confusion_matrix([1.5, 2.0], [1.0, 0.0], dtype=tf.float64))
    check(lambda tf: tf.math.confusion_matrix([[1], [2]], [1, 0]))
    check(lambda tf: tf.math.confusion_matrix(tf.constant([1, 2], tf.int64), [[1], [0]], num_classes=3.0))
    check(lambda tf: tf.math.confusion_matrix([True, False], [True, True]))
    check(lambda tf: tf.math.confusion_matrix(tf.zeros([0], tf.int32), tf.zeros([0], tf.int32), num_classes=2))


# -- gradients ----------------------------------------------------------------------------------------------
def test_no_nan_gradients():
    x, y = np.array([np.nan, 2.0, 3.0, np.inf]), np.array([0.0, 0.0, 4.0, 1.0])
    check(taped_body(lambda tf, a, b: tf.math.multiply_no_nan(a, b), x, y))
    check(taped_body(lambda tf, a, b: tf.math.multiply_no_nan(a, b), [[1.0, 2.0], [3.0, 4.0]], [0.0, 5.0]))
    check(
        taped_body(
            lambda tf, a, b: tf.math.multiply_no_nan(a, b),
            np.array([1 + 2j, 2.0]),
            np.array([3 - 1j, 0j]),
            output_gradients=np.array([1 - 1j, 2 + 0.5j]),
        )
    )
    upstream = np.array([1.0, 0.0, 2.0], np.float32)
    check(
        taped_body(
            lambda tf, a, b: tf.math.multiply_no_nan(a, b),
            np.array([np.nan, 2.0, 1.0], np.float32),
            np.array([3.0, 1.0, 0.0], np.float32),
            output_gradients=upstream,
        )
    )
    check(taped_body(lambda tf, a: tf.math.reciprocal_no_nan(a), np.array([0.0, 2.0, -0.5])))
    check(taped_body(lambda tf, a: tf.math.reciprocal_no_nan(a), np.array([0j, 2.0 + 1j])))


def test_scalar_mul_and_polyval_gradients():
    check(taped_body(lambda tf, s, x: tf.scalar_mul(s, x), np.float32(2.0), np.array([1.0, 2.0], np.float32)))
    check(
        taped_body(
            lambda tf, c0, c1, x: tf.math.polyval([c0, c1, 3.0], x),
            np.float32(2.0),
            np.float32(1.0),
            np.array([1.0, -2.0], np.float32),
        )
    )


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_erfinv_gradient(dtype):
    check(taped_body(lambda tf, x: tf.math.erfinv(x), np.array([0.0, 0.5, -0.9, 1.0, 2.0]), dtype=dtype))
    check(jvp_body(lambda tf, x: tf.math.erfinv(x), [0.0, 0.5, -0.25], dtype=dtype))


def test_segment_prod_gradients():
    ids = [0, 0, 0, 1, 1, 2, 2]
    check(taped_body(lambda tf, d: tf.math.segment_prod(d, ids) * [1.0, 2.0, 3.0], _DATA))
    check(taped_body(lambda tf, d: tf.math.unsorted_segment_prod(d, ids, 4) * [1.0, 2.0, 3.0, 4.0], _DATA))
    check(taped_body(lambda tf, d: tf.math.unsorted_segment_prod(d, [0, -1, 0, 1, 1, 3, 2], 4), _DATA + 1))
    check(taped_body(lambda tf, d: tf.math.unsorted_segment_prod(d, [[0, 1], [0, 2]], 3), [[2.0, 7.0], [3.0, 4.0]]))
    check(
        taped_body(
            lambda tf, d: tf.math.unsorted_segment_prod(d, [0, 0, 1], 2),
            np.array([2 + 1j, 3 - 1j, 1j]),
            output_gradients=np.array([1 + 1j, 2 - 1j]),
        )
    )
    check(taped_body(lambda tf, d: tf.math.segment_prod(d, [0, 0, 1]), np.array([2, 3, 4], np.int32)))
    check(taped_body(lambda tf, d: tf.math.segment_prod(d, [0, 0, 1]), np.array([2.0, 3.0, 4.0]), dtype="float16"))


@pytest.mark.parametrize("exclusive", (False, True))
@pytest.mark.parametrize("reverse", (False, True))
def test_cumulative_logsumexp_gradient(exclusive, reverse):
    def fn(tf, x):
        return tf.math.cumulative_logsumexp(x, exclusive=exclusive, reverse=reverse)

    x = np.array([0.0, 0.5, -0.9, 2.0], np.float32)
    check(taped_body(fn, x, output_gradients=np.array([1.0, -2.0, 0.0, 3.0], np.float32)))
    check(taped_body(fn, x, dtype="float64"))
    check(taped_body(fn, x, dtype="float16"))
    if not exclusive:  # (TF's forward mode of the exclusive scan is nan at its -inf start; JAX's is 0)
        check(jvp_body(fn, [0.0, 0.5, -0.9, 2.0], dtype="float64"))


def test_cumulative_logsumexp_gradient_at_minus_inf():
    x = np.array([-np.inf, 0.5, -0.9], np.float32)
    check(taped_body(lambda tf, a: tf.math.cumulative_logsumexp(a), x))


def test_confusion_matrix_gradients():
    def weighted(dtype):
        return lambda tf, w: tf.math.confusion_matrix([1, 2, 1], [2, 2, 2], weights=w, dtype=dtype)

    w = np.array([1.0, 2.0, 3.0], np.float32)
    check(taped_body(lambda tf, w: weighted(tf.float32)(tf, w), w))
    check(taped_body(lambda tf, w: weighted(tf.float64)(tf, w), w))
    check(taped_body(lambda tf, w: weighted(tf.int32)(tf, w), w))
    check(taped_body(lambda tf, labels: tf.math.confusion_matrix(labels, [2, 2, 2], dtype=tf.float32), w))


# -- errors -------------------------------------------------------------------------------------------------
_ERRORS = {
    "reciprocal_no_nan_int": lambda tf: tf.math.reciprocal_no_nan(tf.constant([0, 2])),
    "multiply_no_nan_int": lambda tf: tf.math.multiply_no_nan(tf.constant([1, 2]), tf.constant([0, 2])),
    "multiply_no_nan_shapes": lambda tf: tf.math.multiply_no_nan(tf.ones([2]), tf.ones([3])),
    "multiply_no_nan_dtypes": lambda tf: tf.math.multiply_no_nan(tf.ones([2]), tf.ones([2], tf.float64)),
    "scalar_mul_vector": lambda tf: tf.scalar_mul([2.0, 3.0], tf.constant([1.0, 2.0])),
    "scalar_mul_float_into_int": lambda tf: tf.scalar_mul(2.5, tf.constant([1, 2])),
    "scalar_mul_tensor_dtype": lambda tf: tf.scalar_mul(tf.constant(2), tf.constant([1.0, 2.0])),
    "scalar_mul_bool": lambda tf: tf.scalar_mul(True, tf.constant([True])),
    "erfinv_half": lambda tf: tf.math.erfinv(tf.constant([0.5], tf.float16)),
    "erfinv_bfloat16": lambda tf: tf.math.erfinv(tf.constant([0.5], tf.bfloat16)),
    "erfinv_int": lambda tf: tf.math.erfinv(tf.constant([0], tf.int32)),
    "segment_prod_unsorted": lambda tf: tf.math.segment_prod(tf.constant([1.0, 2.0]), [1, 0]),
    "segment_prod_negative": lambda tf: tf.math.segment_prod(tf.constant([1.0, 2.0]), [-1, 0]),
    "segment_prod_float_ids": lambda tf: tf.math.segment_prod(tf.constant([1.0, 2.0]), [0.0, 0.0]),
    "segment_prod_bool": lambda tf: tf.math.segment_prod(tf.constant([True]), [0]),
    "unsorted_segment_prod_range": lambda tf: tf.math.unsorted_segment_prod(tf.constant([1.0, 2.0]), [0, 5], 2),
    "unsorted_segment_prod_shape": lambda tf: tf.math.unsorted_segment_prod(tf.constant([1.0, 2.0]), [0, 0, 1], 2),
    "cumulative_logsumexp_axis": lambda tf: tf.math.cumulative_logsumexp(tf.constant([0.0, 1.0]), axis=1),
    "cumulative_logsumexp_scalar": lambda tf: tf.math.cumulative_logsumexp(tf.constant(1.0)),
    "cumulative_logsumexp_int": lambda tf: tf.math.cumulative_logsumexp(tf.constant([0, 1])),
    "cumulative_logsumexp_complex": lambda tf: tf.math.cumulative_logsumexp(tf.constant([0j, 1j])),
    "polyval_not_list": lambda tf: tf.math.polyval(tf.constant([1.0, 2.0]), tf.constant([1.0])),
    "polyval_tuple": lambda tf: tf.math.polyval((1.0, 2.0), 3.0),
    "polyval_dtypes": lambda tf: tf.math.polyval([1.0, 2.0], tf.constant([1.0, 2.0], tf.float64)),
    "polyval_int_x": lambda tf: tf.math.polyval([1.0, 2.0], 3),
    "confusion_matrix_negative": lambda tf: tf.math.confusion_matrix([1, -2, 4], [2, 2, 4]),
    "confusion_matrix_negative_prediction": lambda tf: tf.math.confusion_matrix([1, 2], [2, -2], num_classes=5),
    "confusion_matrix_out_of_bound": lambda tf: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=3),
    "confusion_matrix_shapes": lambda tf: tf.math.confusion_matrix([1, 2, 3], [1, 0]),
    "confusion_matrix_weights": lambda tf: tf.math.confusion_matrix([1, 2, 1], [2, 2, 2], weights=[1.0, 2.0]),
    "confusion_matrix_empty": lambda tf: tf.math.confusion_matrix(tf.zeros([0], tf.int32), tf.zeros([0], tf.int32)),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_errors(name):
    check_raises(_ERRORS[name])


def test_error_messages():
    check_raises(lambda tf: tf.scalar_mul([2.0, 3.0], tf.constant([1.0, 2.0])), messages=True)
    check_raises(lambda tf: tf.math.polyval((1.0, 2.0), 3.0), messages=True)
    check_raises(lambda tf: tf.math.confusion_matrix([1, 2, 1], [2, 2, 2], weights=[1.0, 2.0]), messages=True)


def test_inside_function():
    check(traced_body(lambda tf, a, b: tf.math.multiply_no_nan(a, b), [np.inf, 2.0], [0.0, 3.0]))
    check(traced_body(lambda tf, a: tf.math.reciprocal_no_nan(a), [0.0, 2.0]))
    check(traced_body(lambda tf, a: tf.math.erfinv(a), [0.0, 0.5]))
    check(traced_body(lambda tf, a: tf.scalar_mul(3.0, a), [1.0, 2.0]))
    check(traced_body(lambda tf, a: tf.math.cumulative_logsumexp(a, reverse=True), [0.0, 0.5, 2.0]))
    check(traced_body(lambda tf, a: tf.math.polyval([a, 2.0], a), [1.0, 2.0]))
    check(traced_body(lambda tf, d: tf.math.unsorted_segment_prod(d, [0, 1, 0], 2), _DATA[:3] + 1))
    check(traced_body(lambda tf, d: tf.math.segment_prod(d, [0, 0, 1]), _DATA[:3] + 1))

    def confusion(tf, labels, weights):
        return tf.math.confusion_matrix(labels, [2, 2, 0], num_classes=3, weights=weights, dtype=tf.float32)

    check(traced_body(confusion, np.array([1, 2, 0], np.int32), np.array([1.0, 2.0, 3.0], np.float32)))
