"""`tf.IndexedSlices` gradients (section 14) against real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises


def _table(tf):
    return tf.Variable([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])


def test_gather_from_variable_gives_indexed_slices():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape() as t:
            y = tf.gather(v, [0, 2, 0]) * 2
        g = t.gradient(y, v)
        return type(g).__name__, g, g.dense_shape, tf.convert_to_tensor(g), isinstance(g, tf.Tensor)

    check(body)


def test_watched_constant_and_embedding_lookup():
    def body(tf):
        c = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with tf.GradientTape(persistent=True) as t:
            t.watch(c)
            y = tf.nn.embedding_lookup(c, [1, 1])
            z = tf.gather(c, tf.constant([[0, 2]])) * 3.0
        return t.gradient(y, c), t.gradient(z, c), tf.convert_to_tensor(t.gradient(z, c))

    check(body)


def test_aggregation_of_sparse_and_dense_contributions():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape(persistent=True) as t:
            two_sparse = tf.reduce_sum(tf.gather(v, [0])) + tf.reduce_sum(tf.gather(v, [2]))
            mixed = tf.reduce_sum(tf.gather(v, [0])) + tf.reduce_sum(v)
        return t.gradient(two_sparse, v), t.gradient(mixed, v)

    check(body)


def test_dense_cases():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape(persistent=True) as t:
            axis1 = tf.gather(v, [1], axis=1)
            intermediate = tf.gather(v * 2, [0])
            sliced = v[1]
        return t.gradient(axis1, v), t.gradient(intermediate, v), t.gradient(sliced, v)

    check(body)


def test_indexed_slices_in_updates_and_ops():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.gather(v, [0, 0]) * tf.constant([[1.0], [2.0]]))
        g = t.gradient(y, v)
        v.assign_sub(0.1 * tf.convert_to_tensor(g))
        return v, g.values, g.indices

    check(body)


def test_variables_accept_indexed_slices_updates():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.gather(v, [1, 1]))
        g = t.gradient(y, v)
        v.assign_sub(g)
        return v, g

    check(body)


def test_negated_indexed_slices_stay_sparse():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.gather(v, [2]))
        negated = -t.gradient(y, v)
        return type(negated).__name__, negated, tf.convert_to_tensor(negated)

    check(body)


def test_gradients_inside_a_function_are_indexed_slices():
    def body(tf):
        v = _table(tf)
        w = tf.Variable(2.0)

        @tf.function
        def step(unconnected):
            with tf.GradientTape() as t:
                y = tf.reduce_sum(tf.gather(v, [0, 2, 0])) * w
            g = t.gradient(y, [v, w], unconnected_gradients=unconnected)
            return g, g[0].dense_shape, tf.convert_to_tensor(g[0]), g[0].shape

        none, zero = step(tf.UnconnectedGradients.NONE), step(tf.UnconnectedGradients.ZERO)
        return [isinstance(g, tf.IndexedSlices) for g in none[0]], none, zero

    check(body)


def test_indexed_slices_used_inside_a_function():
    def body(tf):
        v = _table(tf)

        @tf.function
        def clipped_and_applied():
            with tf.GradientTape() as t:
                y = tf.reduce_sum(tf.gather(v, [0, 2, 0]) * tf.constant([[3.0, 4.0]]))
            (g,) = t.gradient(y, [v])
            (clipped,), norm = tf.clip_by_global_norm([g], 2.0)
            v.assign_sub(clipped)
            return clipped, norm, -g, tf.reduce_sum(tf.convert_to_tensor(g) * 2.0)

        first, second = clipped_and_applied(), clipped_and_applied()
        return isinstance(first[0], tf.IndexedSlices), first, second, v

    check(body, rtol=1e-5)


def test_second_derivatives_through_indexed_slices():
    def body(tf):
        v = _table(tf)
        with tf.GradientTape(persistent=True) as outer:
            with tf.GradientTape() as inner:
                y = tf.reduce_sum(tf.gather(v, [0, 2, 0]) ** 3)
            g = inner.gradient(y, v)
            dense = tf.reduce_sum(tf.convert_to_tensor(g) * tf.constant([[1.0, 2.0]]))
            rows = tf.reduce_sum(g.values)
        # (TF's second derivatives are IndexedSlices too; tapeshim's are dense: their values are compared)
        second = [tf.convert_to_tensor(outer.gradient(target, v)) for target in (dense, rows)]
        return isinstance(g, tf.IndexedSlices), g, second

    check(body)


def test_converting_constructed_indexed_slices():
    def body(tf):
        ints = tf.IndexedSlices(tf.constant([[1, 2], [3, 4]]), tf.constant([0, 0]), tf.constant([3, 2]))
        return ints.shape, tf.convert_to_tensor(ints), tf.reduce_sum(ints)

    check(body)
    check_raises(lambda tf: tf.convert_to_tensor(tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([0]))))
    check_raises(
        lambda tf: tf.convert_to_tensor(
            tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([5]), tf.constant([3, 2]))
        )
    )


@pytest.mark.parametrize("dense_shape", [[3, 2], (3, 2), np.array([3, 2])], ids=["list", "tuple", "ndarray"])
def test_shape_of_indexed_slices_with_a_dense_shape_not_a_tensor_raises_tf_error(dense_shape):
    def slices(tf):
        return tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([0]), dense_shape)

    check(lambda tf: (slices(tf).dense_shape, tf.convert_to_tensor(slices(tf))))
    check_raises(lambda tf: slices(tf).shape, messages=True)
