"""tf.searchsorted, tf.histogram_fixed_width(_bins), tf.unravel_index, tf.bitwise.*, tf.sets.* against TF."""

import numpy as np
import pytest

from oracle import check, check_raises

S = np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], np.float32)
H = np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0, 4.99, 0.999], np.float32)

CASES = {
    "searchsorted_left": lambda tf: tf.searchsorted(tf.constant(S), tf.constant([[2.0, 5.0], [0.0, 7.0]])),
    "searchsorted_right": lambda tf: tf.searchsorted(
        tf.constant(S), tf.constant([[3.0, 5.0], [0.0, 7.0]]), side="right", out_type=tf.int64
    ),
    "searchsorted_1d_int": lambda tf: tf.searchsorted(tf.constant([1, 2, 2, 3]), tf.constant([2, 9, 0])),
    "searchsorted_3d": lambda tf: tf.searchsorted(
        tf.reshape(tf.range(12), [2, 2, 3]), tf.ones([2, 2, 1], tf.int32) * 4
    ),
    "histogram": lambda tf: tf.histogram_fixed_width(tf.constant(H), [0.0, 5.0], nbins=5),
    "histogram_2d_int64": lambda tf: tf.histogram_fixed_width(
        tf.reshape(tf.constant(H), [2, 4]), tf.constant([-2.0, 3.0]), nbins=7, dtype=tf.int64
    ),
    "histogram_int": lambda tf: tf.histogram_fixed_width(tf.constant([1, 2, 3, 9]), [0, 5], nbins=5),
    "histogram_f64": lambda tf: tf.histogram_fixed_width(tf.constant(H, tf.float64), [0.0, 1.0], nbins=3),
    "histogram_bins": lambda tf: tf.histogram_fixed_width_bins(tf.constant(H), [0.0, 5.0], nbins=5),
    "unravel": lambda tf: tf.unravel_index(tf.constant([1, 5, 7]), tf.constant([2, 4])),
    "unravel_scalar": lambda tf: tf.unravel_index(tf.constant(5), tf.constant([2, 4])),
    "unravel_int64_3d": lambda tf: tf.unravel_index(
        tf.constant([0, 23, 11], tf.int64), tf.constant([2, 3, 4], tf.int64)
    ),
    "unravel_negative": lambda tf: tf.unravel_index(tf.constant([-1]), tf.constant([2, 4])),
    "bitwise": lambda tf: (
        tf.bitwise.bitwise_and(tf.constant([5, 3]), 6),
        tf.bitwise.bitwise_or(tf.constant([5], tf.uint8), tf.constant([2], tf.uint8)),
        tf.bitwise.bitwise_xor(tf.constant([[5], [1]], tf.int64), tf.constant([3, 4], tf.int64)),
        tf.bitwise.invert(tf.constant([5, -1], tf.int8)),
        tf.bitwise.invert(tf.constant([5], tf.uint16)),
        tf.bitwise.left_shift(tf.constant([1, 2, 3]), tf.constant([3, 40, -1])),
        tf.bitwise.right_shift(tf.constant([-8, 8, -8]), tf.constant([1, 70, 70])),
        tf.bitwise.right_shift(tf.constant([200], tf.uint8), tf.constant([3], tf.uint8)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ops_against_tf(name):
    check(CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_ops_in_function(name):
    check(lambda tf: tf.function(lambda: CASES[name](tf))())


ERRORS = {
    "searchsorted_leading": lambda tf: tf.searchsorted(tf.constant(S), tf.constant([[2.0], [0.0], [1.0]])),
    "searchsorted_side": lambda tf: tf.searchsorted(tf.constant(S), tf.constant(S), side="middle"),
    "searchsorted_out_type": lambda tf: tf.searchsorted(tf.constant(S), tf.constant(S), out_type=tf.float32),
    "searchsorted_scalar": lambda tf: tf.searchsorted(tf.constant(1.0), tf.constant(1.0)),
    "searchsorted_dtypes": lambda tf: tf.searchsorted(tf.constant(S), tf.constant([[1, 2], [3, 4]])),
    "histogram_range": lambda tf: tf.histogram_fixed_width(tf.constant([1.0]), [5.0, 0.0], nbins=5),
    "histogram_nbins": lambda tf: tf.histogram_fixed_width(tf.constant([1.0]), [0.0, 5.0], nbins=0),
    "histogram_bins_int": lambda tf: tf.histogram_fixed_width_bins(tf.constant([1, 2, 3, 9]), [0, 5], nbins=3),
    "histogram_dtype": lambda tf: tf.histogram_fixed_width(tf.constant([1.0]), [0.0, 5.0], nbins=3, dtype=tf.float32),
    "unravel_out_of_bound": lambda tf: tf.unravel_index(tf.constant([8]), tf.constant([2, 4])),
    "unravel_float": lambda tf: tf.unravel_index(tf.constant([1.0]), tf.constant([2, 4])),
    "unravel_mixed": lambda tf: tf.unravel_index(tf.constant([1], tf.int64), tf.constant([2, 4])),
    "unravel_rank2": lambda tf: tf.unravel_index(tf.constant([[1, 2]]), tf.constant([2, 4])),
    "bitwise_float": lambda tf: tf.bitwise.bitwise_and(tf.constant([5.0]), tf.constant([1.0])),
    "bitwise_mixed": lambda tf: tf.bitwise.bitwise_and(tf.constant([5]), tf.constant([1], tf.int64)),
    "bitwise_shapes": lambda tf: tf.bitwise.bitwise_and(tf.constant([5, 1]), tf.constant([1, 2, 3])),
    "bitwise_bool": lambda tf: tf.bitwise.invert(tf.constant([True])),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_against_tf(name):
    check_raises(ERRORS[name])


def test_no_gradients():
    def body(tf):
        x = tf.constant([0.5, 2.5])
        with tf.GradientTape() as tape:
            tape.watch(x)
            i = tf.searchsorted(tf.constant([1.0, 2.0, 3.0]), x)
            h = tf.histogram_fixed_width(x, [0.0, 3.0], nbins=3)
        return i, h, tape.gradient(tf.cast(i, tf.float32), x)

    check(body)


def _sparse(sp):
    return sp.indices, sp.values, sp.dense_shape


A = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
C = np.array([[2, 3, 9], [4, 4, 7]], np.int32)
SETS = {
    "intersection": lambda tf: tf.sets.intersection(tf.constant(A), tf.constant(C)),
    "union": lambda tf: tf.sets.union(tf.constant(A), tf.constant(C)),
    "difference": lambda tf: tf.sets.difference(tf.constant(A), tf.constant(C)),
    "difference_b": lambda tf: tf.sets.difference(tf.constant(A), tf.constant(C), aminusb=False),
    "sparse_dense": lambda tf: tf.sets.intersection(
        tf.sparse.from_dense(tf.constant([[1, 0, 4], [0, 4, 4]])), tf.constant(C)
    ),
    "dense_sparse": lambda tf: tf.sets.difference(tf.constant(C), tf.sparse.from_dense(tf.constant([[2, 0], [0, 4]]))),
    "sparse_sparse": lambda tf: tf.sets.union(
        tf.sparse.from_dense(tf.constant([[2, 0], [0, 4]])), tf.sparse.from_dense(tf.constant([[0, 1], [0, 0]]))
    ),
    "rank3": lambda tf: tf.sets.union(
        tf.constant([[[1, 1]], [[2, 3]]], tf.int64), tf.constant([[[1, 5]], [[2, 2]]], tf.int64)
    ),
    "empty": lambda tf: tf.sets.intersection(tf.constant([[1]], tf.uint8), tf.constant([[2]], tf.uint8)),
    "strings": lambda tf: tf.sets.union(tf.constant([["a", "b"]]), tf.constant([["b", "c"]])),
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_sets_against_tf(name):
    check(lambda tf: _sparse(SETS[name](tf)))


def test_sets_size():
    check(lambda tf: tf.sets.size(tf.sparse.from_dense(tf.constant([[1, 0, 1], [0, 3, 3]]))))
    check(lambda tf: tf.sets.size(tf.sparse.from_dense(tf.constant([[[1, 2]], [[0, 0]]]))))
    check_raises(lambda tf: tf.sets.size(tf.constant([[1, 2]])))


SET_ERRORS = {
    "rank1": lambda tf: tf.sets.intersection(tf.constant([1, 2]), tf.constant([2, 3])),
    "float": lambda tf: tf.sets.intersection(tf.constant([[1.0, 2.0]]), tf.constant([[2.0, 3.0]])),
    "dtypes": lambda tf: tf.sets.union(tf.constant(A), tf.constant([[1, 2, 3]], tf.int64)),
    "shapes": lambda tf: tf.sets.union(tf.constant(A), tf.constant([[1, 2, 3]])),
}


@pytest.mark.parametrize("name", sorted(SET_ERRORS))
def test_set_errors_against_tf(name):
    check_raises(SET_ERRORS[name])
