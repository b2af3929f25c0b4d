"""`tf.Variable`'s `scatter_mul`, `scatter_div`, `scatter_nd_max`, `scatter_nd_min`, `gather_nd` and
`batch_scatter_update` against real TensorFlow: eagerly, inside a function, under a tape, and their errors."""

import numpy as np
import pytest
from test_variable_scatter import _slices, check_update
from test_variable_scatter import _table as _table_from

from oracle import check, check_raises


def _table(tf):
    return _table_from(tf, start=1)  # (no zero: the divisions and products below stay finite)


_UPDATES = {
    "scatter_mul": lambda tf, v: v.scatter_mul(_slices(tf, [[2, 3, 4], [0.5, 0.5, 0.5]], [1, 3])),
    "scatter_mul_repeated_rows": lambda tf, v: v.scatter_mul(_slices(tf, [[2, 2, 2], [3, 3, 3]], [0, 0])),
    "scatter_mul_scalar": lambda tf, v: v.scatter_mul(_slices(tf, 3.0, [1, 2])),
    "scatter_div": lambda tf, v: v.scatter_div(_slices(tf, [[2, 4, 8]], [2])),
    "scatter_div_repeated_rows": lambda tf, v: v.scatter_div(_slices(tf, [[2, 2, 2], [4, 4, 4]], [1, 1])),
    "scatter_nd_max": lambda tf, v: v.scatter_nd_max([[0, 1], [0, 1], [3, 0]], [5.0, 7.0, 0.5]),
    "scatter_nd_max_rows": lambda tf, v: v.scatter_nd_max([[2]], [[100.0, 0.0, 9.0]]),
    "scatter_nd_min": lambda tf, v: v.scatter_nd_min([[2]], [[5.0, 0.5, 100.0]]),
    "scatter_nd_min_elements": lambda tf, v: v.scatter_nd_min([[1, 1], [3, 2]], [-1.0, -2.0]),
    "batch_scatter_update": lambda tf, v: v.batch_scatter_update(
        _slices(tf, [[9, 9], [8, 8], [7, 7], [6, 6]], [[0, 2], [1, 1], [2, 0], [0, 0]])
    ),
    "batch_scatter_update_prefix_rows": lambda tf, v: v.batch_scatter_update(_slices(tf, [[9], [8]], [[0], [2]])),
    "batch_scatter_update_vector_indices": lambda tf, v: v.batch_scatter_update(_slices(tf, [[9, 9, 9]], [1])),
}


@pytest.mark.parametrize("name", sorted(_UPDATES))
def test_sparse_updates(name):
    check_update(_UPDATES[name], _table)


def test_integer_scatter_div_truncates():
    def body(tf):
        v = tf.Variable([-7, 7, 9, 100])
        v.scatter_div(tf.IndexedSlices(tf.constant([2, -2, 3, 3]), tf.constant([0, 1, 3, 3])))
        w = tf.Variable(np.array([[5, 6], [7, 8]], np.int64))
        w.scatter_mul(tf.IndexedSlices(tf.constant([[2, 3]], tf.int64), tf.constant([1], tf.int64)))
        return v, w

    check(body)


def test_complex_scatter_mul():
    check(lambda tf: tf.Variable([1 + 1j, 2.0]).scatter_mul(tf.IndexedSlices(tf.constant([2j]), tf.constant([0]))))


def test_int_variable_nd_max_and_min():
    def body(tf):
        v = tf.Variable([[1, 5], [3, 2]])
        v.scatter_nd_max([[0, 0], [1, 1]], [4, 1])
        v.scatter_nd_min([[0, 1]], [-3])
        return v

    check(body)


def test_gather_nd_values_and_dense_gradient():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape() as tape:
            picked = v.gather_nd([[1, 2], [0, 0], [1, 2]])
            rows = v.gather_nd([[3]])
            loss = tf.reduce_sum(picked * 2.0) + tf.reduce_sum(rows)
        gradient = tape.gradient(loss, v)
        return picked, rows, isinstance(gradient, tf.IndexedSlices), gradient

    check(body)


def test_gather_nd_in_a_function():
    def body(tf):
        v = _table(tf)
        f = tf.function(lambda i: v.gather_nd(i))
        return f(tf.constant([[2, 1]])), f(tf.constant([[0, 0], [3, 2]], tf.int64))

    check(body)


def test_updates_cut_the_tape():
    """A write is not differentiable: the updates get no gradient, the variable's later reads get theirs."""

    def body(tf):
        v = _table(tf)
        u = tf.constant([[2.0, 3.0, 4.0]])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(u)
            v.scatter_mul(tf.IndexedSlices(u, tf.constant([1])))
            v.scatter_nd_max([[0]], u)
            loss = tf.reduce_sum(v * v)
        return tape.gradient(loss, [v, u])

    check(body)


def test_updates_inside_a_function_under_a_tape():
    def body(tf):
        v = _table(tf)
        x = tf.constant([[2.0, 2.0, 2.0]])

        @tf.function
        def step(x):
            v.scatter_div(tf.IndexedSlices(x, tf.constant([2])))
            return tf.reduce_sum(v.gather_nd([[2]]) * x)

        with tf.GradientTape() as tape:
            tape.watch(x)
            y = step(x)
        dx, dv = tape.gradient(y, [x, v])
        # (TF's function gradient of the variable is an `IndexedSlices`, tapeshim's a dense tensor: compared dense)
        return y, dx, tf.convert_to_tensor(dv), v

    check(body)


_ERRORS = {
    "scatter_mul_not_indexed_slices": lambda tf, v: v.scatter_mul(tf.constant(1.0)),
    "scatter_div_not_indexed_slices": lambda tf, v: v.scatter_div([1.0]),
    "batch_scatter_not_indexed_slices": lambda tf, v: v.batch_scatter_update(tf.constant(1.0)),
    "scatter_mul_index_out_of_range": lambda tf, v: v.scatter_mul(_slices(tf, [[2, 2, 2]], [-1])),
    "scatter_div_index_out_of_range": lambda tf, v: v.scatter_div(_slices(tf, [[2, 2, 2]], [4])),
    "scatter_mul_bad_shape": lambda tf, v: v.scatter_mul(_slices(tf, [2.0], [1])),
    "scatter_div_bad_index_rank": lambda tf, v: v.scatter_div(_slices(tf, [[2, 2, 2]], [[1]])),
    "scatter_div_float_indices": lambda tf, v: v.scatter_div(_slices(tf, [[2, 2, 2]], [1.5])),
    "scatter_mul_other_dtype": lambda tf, v: v.scatter_mul(_slices(tf, [[2, 2, 2]], [1], tf.int32)),
    "scatter_nd_max_out_of_range": lambda tf, v: v.scatter_nd_max([[7]], [[1.0, 2.0, 3.0]]),
    "scatter_nd_min_bad_shape": lambda tf, v: v.scatter_nd_min([[2]], [5.0, 0.5, 100.0]),
    "gather_nd_out_of_range": lambda tf, v: v.gather_nd([[2, 5]]),
    "gather_nd_scalar_indices": lambda tf, v: v.gather_nd(2),
    "gather_nd_float_indices": lambda tf, v: v.gather_nd([[2.0, 1.0]]),
    "batch_scatter_out_of_range": lambda tf, v: v.batch_scatter_update(_slices(tf, [[9, 9], [8, 8]], [[0, 5], [1, 1]])),
    "int_scatter_div_by_zero": lambda tf, v: tf.Variable([4, 5]).scatter_div(
        tf.IndexedSlices(tf.constant([0]), tf.constant([1]))
    ),
    "bool_scatter_mul": lambda tf, v: tf.Variable([True]).scatter_mul(
        tf.IndexedSlices(tf.constant([True]), tf.constant([0]))
    ),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_errors(name):
    check_raises(lambda tf: _ERRORS[name](tf, _table(tf)))


def test_error_messages():
    check_raises(lambda tf: _table(tf).scatter_mul(tf.constant(1.0)), messages=True)


@pytest.mark.parametrize("case", ["mul_range", "div_zero", "gather_nd_range"])
def test_runtime_checks_inside_a_function(case):
    """Indices (and integer divisors) that are arguments of a function are checked when it runs."""

    def body(tf):
        v = tf.Variable([[4, 5], [6, 7]])

        @tf.function
        def step(i, d):
            if case == "gather_nd_range":
                return v.gather_nd(tf.reshape(i, [1, 1]))
            if case == "mul_range":
                return v.scatter_mul(tf.IndexedSlices(d, i)).read_value()
            return v.scatter_div(tf.IndexedSlices(d, i)).read_value()

        good = step(tf.constant([1]), tf.constant([[2, 3]]))
        bad = (
            (tf.constant([2]), tf.constant([[2, 3]]))
            if case != "div_zero"
            else (tf.constant([0]), tf.constant([[0, 3]]))
        )
        return good, step(*bad)

    check_raises(body)
