"""Elementwise ops on RaggedTensors against TF: values on the flat values, the row partition kept, TF's errors."""

import functools

import pytest

from oracle import check, check_raises


def _r(x):
    """A ragged tensor's comparable parts (a dense result passes through)."""
    if not hasattr(x, "nested_row_splits"):
        return x
    return (x.to_list(), x.dtype, list(x.nested_row_splits), x.flat_values, x.ragged_rank)


def _op(tf, path):
    return functools.reduce(getattr, path.split("."), tf)


def _rt(tf, dtype=None):
    return tf.ragged.constant([[1.0, 4.0, 9.0], [], [16.0], [0.25, 2.0]], dtype=dtype or tf.float32)


UNARY = [
    "math.square",
    "math.abs",
    "math.sqrt",
    "math.exp",
    "math.log",
    "math.negative",
    "math.sin",
    "math.tanh",
    "math.sigmoid",
    "math.is_nan",
    "math.is_finite",
    "math.round",
    "math.floor",
    "square",
    "abs",
]


@pytest.mark.parametrize("path", UNARY)
def test_unary(path):
    check(lambda tf: _r(_op(tf, path)(_rt(tf))))


def test_unary_rank3_and_int32_splits():
    check(
        lambda tf: _r(
            _op(tf, "math.square")(tf.ragged.constant([[[1, 2]], [[3], [4, 5, 6]]], row_splits_dtype=tf.int32))
        )
    )


def test_unary_uniform_inner_dimension():
    check(lambda tf: _r(_op(tf, "math.negative")(tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1))))


def test_logical_not():
    check(lambda tf: _r(_op(tf, "math.logical_not")(tf.ragged.constant([[True, False], [False]]))))


def test_cast():
    check(lambda tf: _r(_op(tf, "cast")(tf.ragged.constant([[1, 2, 3], [4]]), tf.float64)))


def test_unary_bad_dtype_raises_as_tf():
    check_raises(lambda tf: _op(tf, "math.sqrt")(tf.ragged.constant([[1, 2], [3]])))


BINARY = ["add", "math.multiply", "math.subtract", "math.maximum", "math.minimum", "math.equal", "math.less"]


@pytest.mark.parametrize("path", BINARY)
def test_binary_scalar(path):
    check(lambda tf: _r(_op(tf, path)(_rt(tf), 2.0)))


@pytest.mark.parametrize("path", BINARY)
def test_binary_same_splits(path):
    check(lambda tf: _r(_op(tf, path)(_rt(tf), _rt(tf) * 0.5 + 1.0)))


@pytest.mark.parametrize("path", BINARY)
def test_binary_dense_per_row(path):
    check(lambda tf: _r(_op(tf, path)(_rt(tf), tf.constant([[1.0], [2.0], [3.0], [4.0]]))))


def test_binary_dense_first():
    check(lambda tf: _r(_op(tf, "math.multiply")([[10.0], [20.0], [30.0], [40.0]], _rt(tf))))


def test_binary_dense_matching_row_lengths():
    check(lambda tf: _r(_op(tf, "add")(tf.ragged.constant([[1, 2], [3, 4]]), [[10, 20], [30, 40]])))


def test_binary_dense_inner_dimension():
    check(lambda tf: _r(_op(tf, "add")(tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1), [10, 20])))


def test_binary_strings_equal():
    check(lambda tf: _r(_op(tf, "math.equal")(tf.ragged.constant([["a", "b"], ["c"]]), "b")))


def test_binary_mismatched_trailing_dims_raises():
    check_raises(lambda tf: _op(tf, "add")(_rt(tf), tf.constant([[1.0, 2.0]] * 4)))


def test_binary_mismatched_rows_raises():
    check_raises(lambda tf: _op(tf, "add")(_rt(tf), tf.constant([[1.0], [2.0]])))


def test_binary_other_splits_raises():
    check_raises(lambda tf: _op(tf, "add")(_rt(tf), tf.ragged.constant([[1.0], [2.0], [3.0], [4.0]])))


def test_binary_dtype_mismatch_raises():
    check_raises(lambda tf: _op(tf, "add")(_rt(tf), tf.constant([[1], [2], [3], [4]])))


def test_where_three_arguments():
    check(lambda tf: _r(_op(tf, "where")(_rt(tf) > 2.0, _rt(tf), -_rt(tf))))


# -- Python operators follow the same rules -------------------------------------------------------------------
def test_operator_dense_per_row():
    check(lambda tf: _r(tf.ragged.constant([[1, 2, 3], [4], [5, 6]]) + [[1000], [2000], [3000]]))


def test_operator_dense_tensor_per_row():
    check(lambda tf: _r(tf.ragged.constant([[1, 2, 3], [4], [5, 6]]) * tf.constant([[2], [3], [4]])))


def test_operator_reflected_dense():
    check(lambda tf: _r([[1000], [2000], [3000]] - tf.ragged.constant([[1, 2, 3], [4], [5, 6]])))


def test_operator_comparison_per_row():
    check(lambda tf: _r(tf.ragged.constant([[1, 2, 3], [4], [5, 6]]) > [[1], [5], [5]]))


def test_operator_mismatched_trailing_dims_raises():
    check_raises(lambda tf: tf.ragged.constant([[1, 2, 3], [4], [5, 6]]) + [[1, 2], [3, 4], [5, 6]])


def test_operator_other_splits_raises():
    check_raises(lambda tf: tf.ragged.constant([[1, 2, 3], [4], [5, 6]]) + tf.ragged.constant([[1], [2], [3]]))


# -- RaggedTensor.from_uniform_row_length ------------------------------------------------------------------------
def test_from_uniform_row_length():
    check(lambda tf: _r(tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 2)))


def test_from_uniform_row_length_shape():
    check(lambda tf: tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 3).shape)


def test_from_uniform_row_length_ragged_values():
    check(lambda tf: _r(tf.RaggedTensor.from_uniform_row_length(tf.ragged.constant([[1, 2], [3], [], [4, 5, 6]]), 2)))


def test_from_uniform_row_length_zero_with_nrows():
    check(lambda tf: _r(tf.RaggedTensor.from_uniform_row_length(tf.zeros([0], tf.int32), 0, nrows=3)))


def test_from_uniform_row_length_int32():
    check(lambda tf: _r(tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4], tf.constant(2, tf.int32))))


def test_from_uniform_row_length_not_dividing_raises():
    check_raises(lambda tf: tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5], 2))
