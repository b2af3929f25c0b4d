"""Bad input to ops raises TF's error class, eagerly, inside a tape and inside `tf.function`.

Each body runs with real TensorFlow and with tapeshim (tests/oracle.py). Out-of-range
indices are checked on the host when they are concrete and inside the compiled
program when they are symbolic (a function argument, a lazily computed tensor).
"""

import numpy as np
import pytest

from oracle import check, check_raises

# -- out-of-range indices, eager -------------------------------------------------------------
OUT_OF_RANGE = {
    "gather": lambda tf: tf.gather(tf.constant([1.0, 2.0, 3.0]), [0, 5]),
    "gather_negative": lambda tf: tf.gather(tf.constant([1.0, 2.0, 3.0]), [-1]),
    "gather_axis1": lambda tf: tf.gather(tf.ones([2, 3]), [3], axis=1),
    "gather_batch_dims": lambda tf: tf.gather(tf.ones([2, 3]), [[0], [3]], batch_dims=1),
    "gather_nd": lambda tf: tf.gather_nd(tf.ones([2, 3]), [[0, 3]]),
    "gather_nd_negative": lambda tf: tf.gather_nd(tf.ones([2, 3]), [[-1, 0]]),
    "gather_nd_batch_dims": lambda tf: tf.gather_nd(tf.ones([2, 3]), [[1], [3]], batch_dims=1),
    "scatter_nd": lambda tf: tf.scatter_nd([[5]], [1.0], [3]),
    "tensor_scatter_nd_update": lambda tf: tf.tensor_scatter_nd_update(tf.ones([3]), [[3]], [1.0]),
    "tensor_scatter_nd_add_negative": lambda tf: tf.tensor_scatter_nd_add(tf.ones([3]), [[-1]], [1.0]),
    "unsorted_segment_sum": lambda tf: tf.math.unsorted_segment_sum(tf.ones([3]), [0, 1, 4], 3),
    "unsorted_segment_mean": lambda tf: tf.math.unsorted_segment_mean(tf.ones([3]), [0, 1, 3], 3),
    "unsorted_segment_max": lambda tf: tf.math.unsorted_segment_max(tf.ones([3]), [3, 1, 0], 3),
    "segment_sum_unsorted": lambda tf: tf.math.segment_sum(tf.ones([3]), [1, 0, 2]),
    "segment_sum_negative": lambda tf: tf.math.segment_sum(tf.ones([3]), [-1, 0, 0]),
    "embedding_lookup": lambda tf: tf.nn.embedding_lookup(tf.ones([3, 2]), [3]),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_RANGE))
def test_out_of_range_indices_raise_eagerly(name):
    check_raises(OUT_OF_RANGE[name])


def test_in_range_index_ops_and_dropped_negative_segment_ids():
    def body(tf):
        x = tf.reshape(tf.range(6.0), [2, 3])
        return (tf.gather(x, [[0], [2]], batch_dims=1), tf.gather(x, [2, 0], axis=1),
                tf.gather_nd(x, [[1], [0]], batch_dims=1), tf.gather_nd(x, [[1, 2], [0, 0]]),
                tf.scatter_nd([[1], [1]], [1.0, 2.0], [3]),
                tf.tensor_scatter_nd_update(tf.ones([3]), [[2]], [5.0]),
                tf.math.unsorted_segment_sum(tf.ones([3]), [0, -1, 2], 3),
                tf.math.unsorted_segment_max(tf.ones([3]), [0, -1, 2], 3),
                tf.math.segment_sum(tf.ones([3]), [0, 0, 2]))
    check(body)


# -- out-of-range indices only known when the program runs -------------------------------------
FUNCTION_CASES = {
    "gather": (lambda tf, i: tf.gather(tf.constant([1.0, 2.0, 3.0]), i), [0, 2], [0, 5]),
    "gather_negative": (lambda tf, i: tf.gather(tf.constant([1.0, 2.0, 3.0]), i), [1], [-1]),
    "gather_axis1": (lambda tf, i: tf.gather(tf.ones([2, 3]), i, axis=1), [[2, 1]], [[0, 3]]),
    "gather_nd": (lambda tf, i: tf.gather_nd(tf.ones([2, 3]), i), [[1, 2]], [[2, 0]]),
    "scatter_nd": (lambda tf, i: tf.scatter_nd(i, [1.0], [3]), [[2]], [[3]]),
    "tensor_scatter_nd_update": (lambda tf, i: tf.tensor_scatter_nd_update(tf.ones([3]), i, [4.0]), [[0]], [[-1]]),
    "tensor_scatter_nd_add": (lambda tf, i: tf.tensor_scatter_nd_add(tf.ones([3]), i, [4.0]), [[1]], [[7]]),
    "unsorted_segment_sum": (lambda tf, i: tf.math.unsorted_segment_sum(tf.ones([3]), i, 3), [0, -1, 2],
                             [0, 1, 3]),
    "embedding_lookup": (lambda tf, i: tf.nn.embedding_lookup(tf.ones([3, 2]), i), [2, 0], [1, 3]),
}


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_out_of_range_indices_raise_inside_function_on_a_later_call(name):
    op, good, bad = FUNCTION_CASES[name]

    def body(tf):
        f = tf.function(lambda i: op(tf, i))
        first = f(tf.constant(good))
        try:
            f(tf.constant(bad))
        except tf.errors.InvalidArgumentError:
            return first, "InvalidArgumentError"
        return first, "no error"
    check(body)


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_out_of_range_indices_computed_inside_a_tape(name):
    op, _, bad = FUNCTION_CASES[name]

    def body(tf):
        x = tf.Variable(np.asarray(bad, np.float32))
        with tf.GradientTape() as tape:
            indices = tf.cast(x * 1.0, tf.int32)  # computed from a watched value: lazy in tapeshim
            y = op(tf, indices)
            loss = tf.reduce_sum(y) + tf.reduce_sum(x)
        return tape.gradient(loss, x)
    check_raises(body)


def test_lazy_in_range_indices_give_tf_gradients():
    def body(tf):
        x = tf.Variable([2.0, 0.0, 1.0])
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with tf.GradientTape(persistent=True) as tape:
            indices = tf.cast(x, tf.int32)
            rows = tf.gather(w, indices)
            loss = tf.reduce_sum(rows * rows) + tf.reduce_sum(tf.gather_nd(w, tf.stack([indices, indices * 0], 1)))
        dw = tape.gradient(loss, w)
        return tf.convert_to_tensor(dw), loss, tape.jacobian(rows, w)
    check(body)


def test_function_gradient_through_checked_gather_and_cond():
    def body(tf):
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

        @tf.function
        def step(ids, flag):
            with tf.GradientTape() as tape:
                rows = tf.cond(flag, lambda: tf.gather(w, ids), lambda: tf.gather(w, ids) * 2.0)
                loss = tf.reduce_sum(rows * rows)
            return loss, tf.convert_to_tensor(tape.gradient(loss, w))

        good = step(tf.constant([2, 0]), tf.constant(True)), step(tf.constant([1, 1]), tf.constant(False))
        try:
            step(tf.constant([1, 3]), tf.constant(False))
        except tf.errors.InvalidArgumentError:
            return good, "InvalidArgumentError"
        return good, "no error"
    check(body)


def test_function_called_under_a_tape_with_bad_indices():
    def body(tf):
        w = tf.Variable([1.0, 2.0, 3.0])
        f = tf.function(lambda ids: tf.reduce_sum(tf.gather(w, ids)))
        with tf.GradientTape() as tape:
            y = f(tf.constant([0, 2]))
        good = tape.gradient(y, w)
        with tf.GradientTape() as tape:
            y = f(tf.constant([0, 4]))
        return tf.convert_to_tensor(good), tape.gradient(y, w)
    check_raises(body)
