"""tf.RaggedTensor and tf.ragged against TF: construction, structure, padding, indexing, operators, errors."""

import pytest

import tapeshim
from oracle import check, check_raises, raising, real_tf


def _r(x):
    """A ragged tensor's comparable parts (a dense result passes through)."""
    if not hasattr(x, "nested_row_splits"):
        return x
    return (x.to_list(), x.dtype, x.shape, list(x.nested_row_splits), x.flat_values, x.ragged_rank)


def _c(tf, value, **kw):
    return tf.ragged.constant(value, **kw)


CASES = {
    "int": lambda tf: _r(_c(tf, [[1, 2], [3]])),
    "float": lambda tf: _r(_c(tf, [[1.5, 2], [3.0]])),
    "dtype": lambda tf: _r(_c(tf, [[1, 2], [3]], dtype=tf.float64)),
    "strings": lambda tf: _r(_c(tf, [["a"], ["b", "c"]])),
    "empty_rows": lambda tf: _r(_c(tf, [[], []])),
    "flat_is_dense": lambda tf: _r(_c(tf, [1, 2])),
    "empty_is_dense": lambda tf: _r(_c(tf, [])),
    "rank3": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [5, 6]]])),
    "ragged_rank1_uniform_inner": lambda tf: _r(_c(tf, [[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)),
    "row_splits_int32": lambda tf: _r(_c(tf, [[1, 2], [3]], row_splits_dtype=tf.int32)),
    "from_row_lengths": lambda tf: _r(tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, 0, 1])),
    "from_row_lengths_int32": lambda tf: _r(tf.RaggedTensor.from_row_lengths([1, 2, 3], tf.constant([2, 1]))),
    "from_row_splits": lambda tf: _r(tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 2, 3])),
    "from_value_rowids": lambda tf: _r(tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2])),
    "from_value_rowids_nrows": lambda tf: _r(tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=4)),
    "from_nested_row_lengths": lambda tf: _r(
        tf.RaggedTensor.from_nested_row_lengths([1, 2, 3, 4], [[2, 1], [1, 2, 1]])
    ),
    "from_tensor_padding": lambda tf: _r(tf.RaggedTensor.from_tensor([[1, 0], [2, 3]], padding=0)),
    "from_tensor_lengths": lambda tf: _r(tf.RaggedTensor.from_tensor([[1, 0], [2, 3]], lengths=[1, 2])),
    "from_tensor": lambda tf: _r(tf.RaggedTensor.from_tensor([[1, 0], [2, 3]])),
    "to_tensor": lambda tf: _c(tf, [[1, 2], [3]]).to_tensor(),
    "to_tensor_default_shape": lambda tf: _c(tf, [[1, 2], [3]]).to_tensor(default_value=9, shape=[3, 1]),
    "to_tensor_strings": lambda tf: _c(tf, [["a"], ["b", "c"]]).to_tensor(),
    "to_tensor_rank3": lambda tf: _c(tf, [[[1, 2]], [[3], [5, 6]]]).to_tensor(),
    "to_tensor_uniform_inner": lambda tf: _c(tf, [[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).to_tensor(),
    "row_lengths": lambda tf: _c(tf, [[1, 2], [], [3]]).row_lengths(),
    "row_lengths_axis2": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [5, 6]]]).row_lengths(axis=2)),
    "nested_row_lengths": lambda tf: _c(tf, [[[1, 2]], [[3], [5, 6]]]).nested_row_lengths(),
    "nested_row_splits": lambda tf: _c(tf, [[[1, 2]], [[3], [5, 6]]]).nested_row_splits,
    "values": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [5, 6]]]).values),
    "nrows": lambda tf: _c(tf, [[1, 2], [3]]).nrows(),
    "value_rowids": lambda tf: _c(tf, [[1, 2], [3]]).value_rowids(),
    "bounding_shape": lambda tf: _c(tf, [[[1, 2]], [[3], [5, 6]]]).bounding_shape(),
    "row_starts_limits": lambda tf: (_c(tf, [[1, 2], [3]]).row_starts(), _c(tf, [[1, 2], [3]]).row_limits()),
    "to_list": lambda tf: _c(tf, [["a"], ["b", "c"]]).to_list(),
    "str": lambda tf: str(_c(tf, [[1, 2], [3]])),
    "repr_strings": lambda tf: repr(_c(tf, [[b"a"], []])),
    "index_row": lambda tf: _c(tf, [[1, 2], [3]])[0],
    "index_negative": lambda tf: _c(tf, [[1, 2], [3]])[-1],
    "index_element": lambda tf: _c(tf, [[1, 2], [3]])[0, 1],
    "slice_rows": lambda tf: _r(_c(tf, [[1, 2], [3], [4, 5]])[1:]),
    "slice_rank3": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [5, 6]]])[1:]),
    "row_of_rank3": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [5, 6]]])[1]),
    "mul_scalar": lambda tf: _r(_c(tf, [[1, 2], [3]]) * 2),
    "add_ragged": lambda tf: _r(_c(tf, [[1, 2], [3]]) + _c(tf, [[1, 2], [3]])),
    "rsub": lambda tf: _r(10 - _c(tf, [[1, 2], [3]])),
    "neg": lambda tf: _r(-_c(tf, [[1.0, 2.0], [3.0]])),
    "map_flat_values": lambda tf: _r(tf.ragged.map_flat_values(tf.math.square, _c(tf, [[1, 2], [3]]))),
    "range": lambda tf: _r(tf.ragged.range([3, 1])),
    "range_starts": lambda tf: _r(tf.ragged.range([0, 2], [3, 5], 2)),
    "is_tensor": lambda tf: isinstance(_c(tf, [[1], []]), tf.Tensor),
    "len": raising(lambda tf: len(_c(tf, [[1, 2], [3]]))),  # (TF's ragged tensors have no len)
    "to_tensor_crop": lambda tf: _c(tf, [[[1, 2]], [[3], [5, 6]]]).to_tensor(default_value=-1, shape=[2, 1, 1]),
    "to_tensor_pad_inner": lambda tf: _c(tf, [[[1, 2]], [[3, 4]]], ragged_rank=1).to_tensor(shape=[3, 2, 2]),
    "from_tensor_to_tensor": lambda tf: tf.RaggedTensor.from_tensor([[1, 0], [2, 3]], padding=0).to_tensor(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ragged(name):
    check(CASES[name])


ERRORS = {
    "depth": lambda tf: _c(tf, [[1, [2]]]),
    "inner_shape": lambda tf: _c(tf, [[[1, 2]], [[3], [5, 6]]], ragged_rank=1),
    "mixed": lambda tf: _c(tf, [[1, "a"], [3]]),
    "lengths_sum": lambda tf: tf.RaggedTensor.from_row_lengths([1, 2, 3], [2, 2]),
    "lengths_negative": lambda tf: tf.RaggedTensor.from_row_lengths([1, 2, 3], [-1, 4]),
    "splits_zero": lambda tf: tf.RaggedTensor.from_row_splits([1, 2, 3], [1, 3]),
    "splits_end": lambda tf: tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 1, 2]),
    "splits_monotonic": lambda tf: tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 1, 3]),
    "row_out_of_range": lambda tf: _c(tf, [[1, 2], [3]])[5],
    "inner_ragged_index": lambda tf: _c(tf, [[1, 2], [3]])[:, 0],
    "from_sparse_gap": lambda tf: tf.RaggedTensor.from_sparse(tf.sparse.SparseTensor([[0, 1]], [1.0], [2, 2])),
    "from_sparse_repeated": lambda tf: tf.RaggedTensor.from_sparse(
        tf.sparse.SparseTensor([[0, 0], [0, 0]], [1.0, 2.0], [2, 2])
    ),
    "add_other_rows": lambda tf: _c(tf, [[1, 2], [3]]) + _c(tf, [[1], [2, 3]]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_ragged_errors(name):
    check_raises(ERRORS[name])


def test_gradient_through_ragged_values():
    def body(tf):
        x = tf.Variable([1.0, 2.0, 3.0])
        with tf.GradientTape() as tape:
            rt = tf.RaggedTensor.from_row_lengths(x, [2, 1])
            y = tf.reduce_sum((rt * rt).to_tensor() * tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        return tape.gradient(y, x)

    check(body)


def test_namespaces():
    assert not hasattr(real_tf.ragged, "RaggedTensor") and not hasattr(tapeshim.ragged, "RaggedTensor")


MORE = {
    "to_sparse": lambda tf: (lambda s: (s.indices, s.values, s.dense_shape))(_c(tf, [[1, 2], [3]]).to_sparse()),
    "to_sparse_rank3": lambda tf: (lambda s: (s.indices, s.values, s.dense_shape))(
        _c(tf, [[[1, 2]], [[3], [4, 5]]]).to_sparse()
    ),
    "to_sparse_inner": lambda tf: (lambda s: (s.indices, s.values, s.dense_shape))(
        _c(tf, [[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).to_sparse()
    ),
    "from_sparse": lambda tf: _r(
        tf.RaggedTensor.from_sparse(tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0]], [1, 2, 3], [3, 4]))
    ),
    "merge_dims_01": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [4]]]).merge_dims(0, 1)),
    "merge_dims_all": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [4]]]).merge_dims(0, -1)),
    "merge_dims_12": lambda tf: _r(_c(tf, [[[1, 2]], [[3], [4]]]).merge_dims(1, 2)),
    "merge_dims_uniform_inner": lambda tf: _r(_c(tf, [[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).merge_dims(1, 2)),
    "stack": lambda tf: _r(tf.ragged.stack([_c(tf, [[1, 2], [3]]), _c(tf, [[4]])])),
    "stack_dense": lambda tf: _r(tf.ragged.stack([tf.constant([[1, 2]]), tf.constant([[3, 4], [5, 6]])])),
    "stack_strings": lambda tf: _r(tf.ragged.stack([_c(tf, [["a"], []]), _c(tf, [["b", "c"]])])),
    "stack_vectors": lambda tf: _r(
        tf.ragged.stack([tf.constant([1.0]), tf.constant([], tf.float32), tf.constant([2.0, 3.0])])
    ),
    "stack_string_vectors": lambda tf: _r(tf.ragged.stack([tf.constant(["a", "b"]), tf.constant(["c"])])),
    "boolean_mask": lambda tf: _r(
        tf.ragged.boolean_mask(tf.constant([[1, 2], [3, 4]]), tf.constant([[True, False], [True, True]]))
    ),
    "boolean_mask_rank1": lambda tf: _r(tf.ragged.boolean_mask(tf.constant([1, 2, 3]), [True, False, True])),
    "inner_slice": lambda tf: _r(_c(tf, [[1, 2, 3], [4], []])[:, 1:]),
    "inner_slice_negative": lambda tf: _r(_c(tf, [[1, 2, 3], [4], []])[:, -2:]),
    "inner_slice_rows": lambda tf: _r(_c(tf, [[1, 2, 3], [4], [5, 6]])[1:, :1]),
    "inner_slice_strings": lambda tf: _r(_c(tf, [["a", "b"], ["c"]])[:, :1]),
    "inner_slice_rank3": lambda tf: _r(_c(tf, [[[1, 2], [3]], [[4]], [[5], [6, 7], [8]]])[:, 1:]),
    "inner_slice_uniform": lambda tf: _r(_c(tf, [[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)[:, -1:]),
    "row_splits_to_segment_ids": lambda tf: tf.ragged.row_splits_to_segment_ids([0, 2, 2, 3]),
    "segment_ids_to_row_splits": lambda tf: tf.ragged.segment_ids_to_row_splits([0, 0, 2]),
    "segment_ids_to_row_splits_n": lambda tf: tf.ragged.segment_ids_to_row_splits([0, 0, 2], num_segments=5),
    "gt": lambda tf: _r(_c(tf, [[1, 2], [3]]) > 1),
    "eq_scalar": lambda tf: _r(_c(tf, [[1, 2], [3]]) == 1),
    "eq_ragged": lambda tf: _r(_c(tf, [[1, 2], [3]]) == _c(tf, [[1, 0], [3]])),
    "ne_le_ge": lambda tf: [
        _r(_c(tf, [[1, 2], [3]]) != 2),
        _r(_c(tf, [[1, 2], [3]]) <= 2),
        _r(_c(tf, [[1, 2], [3]]) >= 2),
    ],
    "floordiv_mod_pow": lambda tf: [
        _r(_c(tf, [[1, 2], [3]]) // 2),
        _r(_c(tf, [[1, 2], [3]]) % 2),
        _r(_c(tf, [[1, 2], [3]]) ** 2),
    ],
    "abs": lambda tf: _r(abs(-_c(tf, [[1, 2], [3]]))),
    "truediv": lambda tf: [_r(_c(tf, [[1, 2], [3]]) / 2), _r(2 / _c(tf, [[1, 2], [3]]))],
    "logical": lambda tf: [
        _r((_c(tf, [[1, 2], [3]]) > 1) & (_c(tf, [[1, 2], [3]]) < 3)),
        _r(~(_c(tf, [[1, 2], [3]]) > 1)),
        _r((_c(tf, [[1], [3]]) > 1) | (_c(tf, [[1], [3]]) < 2)),
    ],
    "bool": raising(lambda tf: bool(_c(tf, [[1]]))),
    "boolean_mask_strings": lambda tf: _r(tf.ragged.boolean_mask(tf.constant([["a", "b"]]), [[False, True]])),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_ragged_more(name):
    check(MORE[name])
