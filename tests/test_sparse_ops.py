"""tf.sparse reshape/concat/slice/expand_dims/retain/transpose/fill_empty_rows/reduce_max/eye against TF."""

import pytest

from oracle import check, check_raises


def _s(x):
    if isinstance(x, tuple):
        return tuple(_s(v) for v in x)
    if hasattr(x, "dense_shape"):
        return (x.indices, x.values, x.dense_shape)
    return x


def _d(tf):
    return tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def _a(tf):
    return tf.sparse.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 3])


def _b(tf):
    return tf.sparse.SparseTensor([[0, 0], [1, 2]], [3.0, 4.0], [2, 3])


CASES = {
    "concat_axis1": lambda tf: _s(tf.sparse.concat(1, [_a(tf), _b(tf)])),
    "concat_axis0": lambda tf: _s(tf.sparse.concat(0, [_a(tf), _b(tf)])),
    "concat_expand": lambda tf: _s(
        tf.sparse.concat(1, [_a(tf), tf.sparse.SparseTensor([[2, 0]], [5.0], [3, 1])], expand_nonconcat_dims=True)
    ),
    "concat_strings": lambda tf: _s(
        tf.sparse.concat(
            0, [tf.sparse.SparseTensor([[0, 1]], ["a"], [1, 2]), tf.sparse.SparseTensor([[0, 0]], ["b"], [1, 2])]
        )
    ),
    "reshape": lambda tf: _s(tf.sparse.reshape(_a(tf), [3, 2])),
    "reshape_minus_one": lambda tf: _s(tf.sparse.reshape(_a(tf), [-1])),
    "reshape_3d": lambda tf: _s(tf.sparse.reshape(_a(tf), [1, -1, 2])),
    "slice": lambda tf: _s(tf.sparse.slice(_a(tf), [0, 1], [2, 5])),
    "slice_rows": lambda tf: _s(tf.sparse.slice(_b(tf), [1, 0], [1, 3])),
    "expand_dims": lambda tf: _s(tf.sparse.expand_dims(_a(tf), 1)),
    "expand_dims_last": lambda tf: _s(tf.sparse.expand_dims(_a(tf), -1)),
    "retain": lambda tf: _s(tf.sparse.retain(_a(tf), [False, True])),
    "transpose": lambda tf: _s(tf.sparse.transpose(_a(tf))),
    "transpose_perm": lambda tf: _s(tf.sparse.transpose(tf.sparse.expand_dims(_a(tf), 0), [2, 0, 1])),
    "fill_empty_rows": lambda tf: _s(
        tf.sparse.fill_empty_rows(tf.sparse.SparseTensor([[1, 0], [3, 1]], [1.0, 2.0], [5, 3]), -1.0)
    ),
    "fill_empty_rows_strings": lambda tf: _s(
        tf.sparse.fill_empty_rows(tf.sparse.SparseTensor([[1, 0]], ["x"], [2, 3]), "?")
    ),
    "reduce_max_axis": lambda tf: tf.sparse.reduce_max(
        tf.sparse.SparseTensor([[1, 0], [1, 1]], [-1.0, -2.0], [3, 2]), axis=1
    ),
    "reduce_max_int": lambda tf: tf.sparse.reduce_max(
        tf.sparse.SparseTensor([[1, 0], [1, 1]], [-1, -2], [3, 2]), axis=1
    ),
    "reduce_max_all": lambda tf: tf.sparse.reduce_max(tf.sparse.SparseTensor([[1, 0], [1, 1]], [-1.0, -2.0], [3, 2])),
    "reduce_max_keepdims": lambda tf: tf.sparse.reduce_max(_a(tf), axis=0, keepdims=True),
    "segment_sum": lambda tf: tf.sparse.segment_sum(_d(tf), [0, 2, 1], [0, 0, 1]),
    "segment_mean": lambda tf: tf.sparse.segment_mean(_d(tf), [0, 2, 1], [0, 0, 1]),
    "segment_sqrt_n": lambda tf: tf.sparse.segment_sqrt_n(_d(tf), [0, 2, 1], [0, 0, 1]),
    "segment_sum_gap": lambda tf: tf.sparse.segment_sum(_d(tf), [0, 2], [0, 2]),
    "segment_sum_num_segments": lambda tf: tf.sparse.segment_sum(_d(tf), [0, 2], [0, 2], num_segments=4),
    "segment_mean_gap": lambda tf: tf.sparse.segment_mean(_d(tf), [0, 2], [0, 2]),
    "segment_sum_vector": lambda tf: tf.sparse.segment_sum(tf.constant([1.0, 2.0, 4.0]), [2, 1, 0], [0, 1, 1]),
    "div_scalar": lambda tf: _s(_a(tf) / 2),
    "div_dense": lambda tf: _s(_a(tf) / tf.constant([[1.0, 2.0, 4.0], [8.0, 1.0, 1.0]])),
    "maximum": lambda tf: _s(tf.sparse.maximum(_a(tf), tf.sparse.SparseTensor([[0, 1], [1, 1]], [-1.0, 3.0], [2, 3]))),
    "minimum": lambda tf: _s(tf.sparse.minimum(_a(tf), tf.sparse.SparseTensor([[0, 1], [1, 1]], [-1.0, 3.0], [2, 3]))),
    "softmax": lambda tf: _s(
        tf.sparse.softmax(tf.sparse.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0], [2, 3]))
    ),
    "softmax_3d": lambda tf: _s(
        tf.sparse.softmax(tf.sparse.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 1]], [1.0, -2.0, 3.0], [2, 1, 2]))
    ),
    "eye": lambda tf: _s(tf.sparse.eye(2)),
    "eye_rect": lambda tf: _s(tf.sparse.eye(2, 3, dtype=tf.int32)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_ops(name):
    check(CASES[name])


ERRORS = {
    "reshape_size": lambda tf: tf.sparse.reshape(_a(tf), [4]),
    "segment_index_range": lambda tf: tf.sparse.segment_sum(_d(tf), [0, 5], [0, 0]),
    "segment_ids_order": lambda tf: tf.sparse.segment_sum(_d(tf), [0, 1], [1, 0]),
    "add_operator": lambda tf: _a(tf) + _a(tf),
    "neg_operator": lambda tf: -_a(tf),
    "mul_sparse": lambda tf: _a(tf) * _a(tf),
    "concat_shapes": lambda tf: tf.sparse.concat(1, [_a(tf), tf.sparse.SparseTensor([[0, 0]], [5.0], [3, 1])]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_sparse_ops_errors(name):
    check_raises(ERRORS[name])


def test_gradient_through_slice_transpose():
    def body(tf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as tape:
            s = tf.sparse.SparseTensor([[0, 1], [1, 0]], x * x, [2, 3])
            t = tf.sparse.transpose(s)
            dense = tf.sparse.to_dense(tf.sparse.slice(t, [0, 0], [3, 1]))
            y = tf.reduce_sum(dense * tf.constant([[1.0], [2.0], [3.0]]))
        return tape.gradient(y, x)

    check(body)


GRADIENTS = {
    "transpose": lambda tf, s: tf.sparse.transpose(s),
    "slice": lambda tf, s: tf.sparse.slice(s, [0, 0], [2, 2]),
    "reshape": lambda tf, s: tf.sparse.reshape(s, [-1]),
    "expand_dims": lambda tf, s: tf.sparse.expand_dims(s, 0),
    "retain": lambda tf, s: tf.sparse.retain(s, [True, False]),
    "fill_empty_rows": lambda tf, s: tf.sparse.fill_empty_rows(s, 0.0)[0],
    "from_dense": lambda tf, s: tf.sparse.from_dense(tf.sparse.to_dense(s)),
    "add_sparse": lambda tf, s: tf.sparse.add(s, s),
    "concat_none": lambda tf, s: tf.sparse.concat(0, [s, s]),
    "reorder": lambda tf, s: tf.sparse.reorder(s),
    "ragged_to_sparse": lambda tf, s: tf.RaggedTensor.from_row_lengths(s.values, [1, 1]).to_sparse(),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_value_gradients(name):
    def body(tf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as tape:
            s = tf.sparse.SparseTensor([[0, 1], [1, 0]], x * x, [2, 3])
            y = tf.reduce_sum(GRADIENTS[name](tf, s).values * 3.0)
        return tape.gradient(y, x)

    check(body)


def test_reduce_max_gradient_is_lookup_error():
    def body(tf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.sparse.reduce_max(tf.sparse.SparseTensor([[0, 1], [1, 0]], x, [2, 3]), axis=1))
        return tape.gradient(y, x)

    check_raises(body)


def test_segment_mean_gradient_is_dense():
    def body(tf):
        x = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.sparse.segment_mean(x, [0, 2, 1], [0, 0, 1]) * tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        return tape.gradient(y, x)

    check(body)


def test_softmax_gradient():
    def body(tf):
        x = tf.Variable([1.0, 2.0, 3.0])
        with tf.GradientTape() as tape:
            sp = tf.sparse.softmax(tf.sparse.SparseTensor([[0, 0], [0, 2], [1, 1]], x, [2, 3]))
            y = tf.reduce_sum(sp.values * tf.constant([1.0, 2.0, 3.0]))
        return tape.gradient(y, x)

    check(body)


# -- output_is_sparse keeps explicit zeros (the sparse tensor guide); map_values; split -----------------------
def _guide_sparse(tf):
    return tf.sparse.SparseTensor(indices=[[0, 3], [2, 4], [2, 7]], values=[-5, 0, 0], dense_shape=[3, 10])


@pytest.mark.parametrize("reduce", ("reduce_sum", "reduce_max"))
@pytest.mark.parametrize("axis, keepdims", [(1, False), (0, False), (1, True), (None, False), ([0, 1], False)])
def test_sparse_reduction_output_is_sparse_keeps_zero_results(reduce, axis, keepdims):
    def body(tf):
        out = getattr(tf.sparse, reduce)(_guide_sparse(tf), axis=axis, keepdims=keepdims, output_is_sparse=True)
        return out.indices, out.values, out.dense_shape

    check(body)


def test_sparse_map_values():
    def body(tf):
        a = tf.sparse.SparseTensor([[0, 1], [2, 0]], [1.0, -2.0], [3, 3])
        b = tf.sparse.SparseTensor([[0, 1], [2, 0]], [3.0, 4.0], [3, 3])
        summed = tf.sparse.map_values(tf.add, a, b)
        scaled = tf.sparse.map_values(tf.math.multiply, a, 10.0)
        ones = tf.sparse.map_values(tf.ones_like, a)
        return [(s.indices, s.values, s.dense_shape) for s in (summed, scaled, ones)]

    check(body)


def test_sparse_map_values_gradient():
    def body(tf):
        values = tf.Variable([1.0, -2.0])
        with tf.GradientTape() as tape:
            a = tf.sparse.SparseTensor([[0, 1], [2, 0]], values, [3, 3])
            loss = tf.reduce_sum(tf.sparse.map_values(tf.square, a).values)
        return tape.gradient(loss, values)

    check(body)


@pytest.mark.parametrize(
    "case",
    [
        lambda tf: tf.sparse.map_values(tf.add, 1.0, 2.0),
        lambda tf: tf.sparse.map_values(
            tf.add,
            tf.sparse.SparseTensor([[0, 1]], [1.0], [3, 3]),
            tf.sparse.SparseTensor([[1, 1]], [1.0], [3, 3]),
        ),
    ],
)
def test_sparse_map_values_errors(case):
    check_raises(case)


@pytest.mark.parametrize("num_split, axis", [(2, 1), (3, 1), (3, 0), (1, 0), (4, -1)])
def test_sparse_split(num_split, axis):
    def body(tf):
        sp = tf.sparse.SparseTensor([[0, 0], [0, 4], [1, 2], [2, 6], [2, 1]], [1, 2, 3, 4, 5], [3, 7])
        pieces = tf.sparse.split(sp_input=tf.sparse.reorder(sp), num_split=num_split, axis=axis)
        return [(p.indices, p.values, p.dense_shape) for p in pieces]

    check(body)


def test_sparse_split_strings_and_errors():
    def strings(tf):
        sp = tf.sparse.SparseTensor([[0, 0], [1, 3]], ["a", "b"], [2, 4])
        return [(p.indices, p.values, p.dense_shape) for p in tf.sparse.split(sp_input=sp, num_split=2, axis=1)]

    check(strings)
    check_raises(
        lambda tf: tf.sparse.split(sp_input=tf.sparse.SparseTensor([[0, 0]], [1], [2, 2]), num_split=3, axis=1)
    )
    check_raises(
        lambda tf: tf.sparse.split(sp_input=tf.sparse.SparseTensor([[0, 0]], [1], [2, 2]), num_split=1, axis=2)
    )
