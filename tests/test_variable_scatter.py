"""`tf.Variable`'s sparse methods (`scatter_update`, `scatter_nd_add`, `sparse_read`, ...) against real
TensorFlow: eagerly, inside a function, and under a tape."""

import numpy as np
import pytest

from oracle import check, check_raises


def _table(tf, start=0):
    return tf.Variable(np.arange(start, start + 12, dtype=np.float32).reshape(4, 3))


def _slices(tf, values, indices, dtype=None):
    return tf.IndexedSlices(tf.constant(values, dtype or tf.float32), tf.constant(indices))


def check_update(update, table=_table):
    """`update(tf, variable)` against TF: eagerly (and what it returns) and twice inside a function."""

    def body(tf):
        eager = table(tf)
        returned = update(tf, eager)
        traced = table(tf)
        update_in_function = tf.function(lambda: update(tf, traced).read_value())
        return returned.read_value(), eager, update_in_function(), update_in_function(), traced

    check(body)


_UPDATES = {
    "scatter_update": lambda tf, v: v.scatter_update(_slices(tf, [[9, 9, 9], [7, 7, 7]], [1, 3])),
    "scatter_add_repeated_rows": lambda tf, v: v.scatter_add(_slices(tf, [[1, 1, 1], [1, 1, 1]], [0, 0])),
    "scatter_sub": lambda tf, v: v.scatter_sub(_slices(tf, [[1, 1, 1]], [2])),
    "scatter_max": lambda tf, v: v.scatter_max(_slices(tf, [[100, 0, 100]], [1])),
    "scatter_min": lambda tf, v: v.scatter_min(_slices(tf, [[-1, 100, -1]], [1])),
    "scatter_nd_update": lambda tf, v: v.scatter_nd_update([[0, 1], [2, 2]], [50.0, 60.0]),
    "scatter_nd_add": lambda tf, v: v.scatter_nd_add([[1]], [[1.0, 2.0, 3.0]]),
    "scatter_nd_sub": lambda tf, v: v.scatter_nd_sub([[1, 1]], [5.0]),
}


@pytest.mark.parametrize("name", sorted(_UPDATES))
def test_sparse_updates(name):
    check_update(_UPDATES[name])


def test_sparse_read_and_its_gradient():
    def body(tf):
        table = _table(tf)
        with tf.GradientTape() as tape:
            rows = table.sparse_read([1, 1, 3])
            loss = tf.reduce_sum(rows * 2.0)
        gradient = tape.gradient(loss, table)
        return rows, isinstance(gradient, tf.IndexedSlices), tf.convert_to_tensor(gradient)

    check(body)


def test_scatter_update_takes_indexed_slices_only():
    check_raises(lambda tf: _table(tf).scatter_update(tf.constant([1.0])))
    check_raises(lambda tf: _table(tf).scatter_update(_slices(tf, [[1, 1, 1]], [7])))
