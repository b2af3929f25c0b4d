"""Sorted segment reductions, unsorted_segment_min/sqrt_n, in_top_k, unique_with_counts and saturate_cast
against real TensorFlow: values, dtypes, TF's errors, and gradients under a tape."""

import numpy as np
import pytest

from oracle import check, check_raises

_DATA = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 9.0]], np.float32)
_SCORES = np.array([[0.1, 0.9, 0.5], [0.3, 0.3, 0.3], [0.2, np.nan, 0.1]], np.float32)

_CASES = {
    "segment_mean": lambda tf: tf.math.segment_mean(_DATA, [0, 0, 2, 2]),
    "segment_max": lambda tf: tf.math.segment_max(_DATA, [0, 0, 2, 2]),
    "segment_min": lambda tf: tf.math.segment_min(_DATA, [0, 1, 1, 3]),
    "segment_mean_of_ints": lambda tf: tf.math.segment_mean(tf.constant([1, 2, -3, -4, 7]), [0, 0, 1, 1, 1]),
    "unsorted_segment_min": lambda tf: tf.math.unsorted_segment_min(_DATA, [0, 2, 0, 2], 4),
    "unsorted_segment_sqrt_n": lambda tf: tf.math.unsorted_segment_sqrt_n(_DATA, [0, 2, 0, 0], 4),
    "in_top_k_ties_and_nan": lambda tf: tf.math.in_top_k([0, 2, 1], _SCORES, 2),
    "nn_in_top_k_out_of_range": lambda tf: tf.nn.in_top_k([1, 3], _SCORES[:2], 1),
    "unique_with_counts": lambda tf: tf.unique_with_counts(tf.constant([4, 1, 4, 4, 2, 1])),
    "unique_with_counts_int64": lambda tf: tf.unique_with_counts(tf.constant([4.0, 1.0, 4.0]), out_idx=tf.int64),
    "saturate_cast_to_uint8": lambda tf: tf.dtypes.saturate_cast(tf.constant([-5.0, 3.7, 300.0, 1e10]), tf.uint8),
    "saturate_cast_int_to_int16": lambda tf: tf.saturate_cast(tf.constant([-70000, 5, 70000]), tf.int16),
    "saturate_cast_float_to_int32": lambda tf: tf.saturate_cast(tf.constant([1e10, -1e10]), tf.int32),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_values(name):
    check(_CASES[name])


def test_gradients():
    def body(tf):
        v = tf.Variable(_DATA)
        with tf.GradientTape(persistent=True) as tape:
            mean = tf.reduce_sum(tf.math.segment_mean(v, [0, 0, 2, 2]) * [1.0, 2.0])
            largest = tf.reduce_sum(tf.math.segment_max(v, [0, 0, 1, 1]))
            smallest = tf.reduce_sum(tf.math.unsorted_segment_min(v, [0, 1, 1, 1], 2))
            scaled = tf.reduce_sum(tf.math.unsorted_segment_sqrt_n(v, [0, 1, 1, 1], 2))
        return [tape.gradient(target, v) for target in (mean, largest, smallest, scaled)]

    check(body)


def test_errors():
    check_raises(lambda tf: tf.math.segment_max(_DATA, [1, 0, 2, 2]))  # not sorted
    check_raises(lambda tf: tf.math.in_top_k([0, 1], _SCORES, 1))  # one target per row
    check_raises(lambda tf: tf.math.in_top_k([0], _SCORES[0], 1))  # a vector of predictions
