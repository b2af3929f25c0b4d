"""tf.sparse.SparseTensor and the tf.sparse ops against TF: values, dtypes, shapes, errors, gradients."""

import pytest

import tapeshim
from oracle import check, check_raises, real_tf


def _s(x):
    """A sparse tensor's comparable parts (a dense result passes through)."""
    if hasattr(x, "dense_shape"):
        return (x.indices, x.values, x.dense_shape, x.dtype, x.shape)
    return x


def _sp(tf, indices=((0, 1), (1, 0)), values=(1.0, 2.0), shape=(2, 3)):
    return tf.sparse.SparseTensor([list(i) for i in indices], list(values), list(shape))


CASES = {
    "construct": lambda tf: _s(_sp(tf)),
    "int_values": lambda tf: _s(_sp(tf, values=(1, 2))),
    "string_values": lambda tf: _s(_sp(tf, values=("a", "b"))),
    "str": lambda tf: str(_sp(tf)),
    "repr": lambda tf: repr(_sp(tf)),
    "get_shape": lambda tf: _sp(tf).get_shape(),
    "with_values": lambda tf: _s(_sp(tf).with_values(tf.constant([5.0, 6.0]))),
    "mul_scalar": lambda tf: _s(_sp(tf) * 2),
    "mul_dense": lambda tf: _s(_sp(tf) * tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])),
    "to_dense": lambda tf: tf.sparse.to_dense(_sp(tf)),
    "to_dense_default": lambda tf: tf.sparse.to_dense(_sp(tf), default_value=7.0),
    "to_dense_strings": lambda tf: tf.sparse.to_dense(_sp(tf, values=("a", "b"))),
    "to_dense_empty": lambda tf: tf.sparse.to_dense(
        tf.sparse.SparseTensor(tf.zeros([0, 2], tf.int64), tf.zeros([0]), [2, 2])
    ),
    "to_dense_unordered_unvalidated": lambda tf: tf.sparse.to_dense(
        _sp(tf, indices=((1, 0), (0, 1))), validate_indices=False
    ),
    "from_dense": lambda tf: _s(tf.sparse.from_dense(tf.constant([[0, 1], [2, 0]]))),
    "from_dense_strings": lambda tf: _s(tf.sparse.from_dense(tf.constant([["", "a"]]))),
    "from_dense_float_3d": lambda tf: _s(tf.sparse.from_dense(tf.constant([[[0.0, 1.5]], [[2.0, 0.0]]]))),
    "reduce_sum": lambda tf: tf.sparse.reduce_sum(_sp(tf)),
    "reduce_sum_axis": lambda tf: tf.sparse.reduce_sum(_sp(tf), axis=1),
    "reduce_sum_keepdims": lambda tf: tf.sparse.reduce_sum(_sp(tf), axis=1, keepdims=True),
    "reduce_sum_axis0": lambda tf: tf.sparse.reduce_sum(_sp(tf), axis=0),
    "reduce_sum_sparse": lambda tf: _s(tf.sparse.reduce_sum(_sp(tf), axis=1, output_is_sparse=True)),
    "add_sparse": lambda tf: _s(tf.sparse.add(_sp(tf), _sp(tf))),
    "add_dense": lambda tf: tf.sparse.add(_sp(tf), tf.ones([2, 3])),
    "add_dense_first": lambda tf: tf.sparse.add(tf.ones([2, 3]), _sp(tf)),
    "add_union": lambda tf: _s(tf.sparse.add(_sp(tf), _sp(tf, ((0, 1), (1, 2)), (-1.0, 2.0)))),
    "add_threshold": lambda tf: _s(tf.sparse.add(_sp(tf), _sp(tf, ((0, 1), (1, 2)), (-0.5, 2.0)), threshold=0.6)),
    "matmul": lambda tf: tf.sparse.sparse_dense_matmul(_sp(tf), tf.ones([3, 2])),
    "matmul_adjoint_a": lambda tf: tf.sparse.sparse_dense_matmul(_sp(tf), tf.ones([2, 2]), adjoint_a=True),
    "matmul_adjoint_b": lambda tf: tf.sparse.sparse_dense_matmul(
        _sp(tf), tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), adjoint_b=True
    ),
    "matmul_dense_sparse": lambda tf: tf.sparse.sparse_dense_matmul(tf.constant([[1.0, 2.0], [3.0, 4.0]]), _sp(tf)),
    "reorder": lambda tf: _s(tf.sparse.reorder(_sp(tf, indices=((1, 0), (0, 1))))),
    "to_indicator": lambda tf: tf.sparse.to_indicator(
        tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 3, 2], [2, 2]), 4
    ),
    "to_indicator_float": lambda tf: tf.sparse.to_indicator(_sp(tf), 4),
    "is_tensor": lambda tf: (isinstance(_sp(tf), tf.Tensor), tf.SparseTensor is tf.sparse.SparseTensor),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse(name):
    check(CASES[name])


ERRORS = {
    "indices_rank": lambda tf: tf.sparse.SparseTensor([0, 1], [1.0], [2, 3]),
    "count": lambda tf: tf.sparse.SparseTensor([[0, 1]], [1.0, 2.0], [2, 3]),
    "values_rank": lambda tf: tf.sparse.SparseTensor([[0, 1]], [[1.0]], [2, 3]),
    "float_indices": lambda tf: tf.sparse.SparseTensor([[0.5, 1]], [1.0], [2, 3]),
    "int32_shape_tensor": lambda tf: tf.sparse.SparseTensor([[0, 1]], [1.0], tf.constant([2, 3])),
    "unordered": lambda tf: tf.sparse.to_dense(_sp(tf, indices=((1, 0), (0, 1)))),
    "out_of_bounds": lambda tf: tf.sparse.to_dense(_sp(tf, indices=((5, 0),), values=(1.0,))),
    "repeated": lambda tf: tf.sparse.to_dense(_sp(tf, indices=((0, 0), (0, 0)))),
    "matmul_inner": lambda tf: tf.sparse.sparse_dense_matmul(_sp(tf), tf.ones([2, 2])),
    "to_indicator_strings": lambda tf: tf.sparse.to_indicator(_sp(tf, values=("a", "b")), 4),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_sparse_errors(name):
    check_raises(ERRORS[name])


def test_messages():
    for name in ("unordered", "out_of_bounds", "repeated"):
        tf_message = str(_raised(ERRORS[name], real_tf)).split("}} ")[-1].split(" [Op:")[0]
        assert tf_message.strip() in str(_raised(ERRORS[name], tapeshim)), name


def _raised(body, module):
    with pytest.raises(Exception) as info:
        body(module)
    return info.value


def test_gradients_through_values_and_dense_operand():
    def body(tf):
        x = tf.Variable([1.0, 2.0])
        b = tf.Variable(tf.ones([3, 2]))
        with tf.GradientTape() as tape:
            s = tf.sparse.SparseTensor([[0, 1], [1, 0]], x, [2, 3])
            y = (
                tf.reduce_sum(tf.sparse.sparse_dense_matmul(s, b) * tf.constant([[1.0, 2.0], [3.0, 4.0]]))
                + tf.reduce_sum(tf.sparse.to_dense(s) ** 2)
                + tf.sparse.reduce_sum(s * tf.fill([2, 3], 3.0))
            )
        return tape.gradient(y, [x, b])

    check(body)
