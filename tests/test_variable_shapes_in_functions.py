"""Variables declared with unknown dimensions (`shape=tf.TensorShape(None)`, `shape=[None, 3]`) assigned values of
another shape inside a `tf.function`, compared with real TensorFlow."""

import numpy as np

from oracle import check, check_raises


def test_a_function_assigns_a_value_of_another_shape_to_a_variable_of_unknown_shape():
    def body(tf):
        v = tf.Variable(tf.zeros([2]), shape=tf.TensorShape(None))

        @tf.function
        def grow(x):
            v.assign(x)
            return v.read_value() * 2.0

        out = [grow(tf.ones([3])), v.shape.as_list() if v.shape.rank is not None else None, v.numpy()]
        out += [grow(tf.range(5.0)), v.numpy(), tf.reduce_sum(v * 2.0)]
        return out

    check(body)


def test_a_function_assigns_rows_to_a_variable_with_an_unknown_first_dimension():
    def body(tf):
        v = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])

        @tf.function
        def store(x):
            v.assign(x)
            return tf.reduce_sum(v, axis=0)

        out = [store(tf.ones([4, 3])), v.shape.as_list(), v.numpy().shape]
        out += [store(tf.constant(np.arange(3.0, dtype=np.float32).reshape(1, 3))), v.numpy()]
        with tf.GradientTape() as tape:
            x = tf.constant(np.full((2, 3), 0.5, np.float32))
            tape.watch(x)
            y = store(x * 3.0)
        out += [y, v.numpy(), tape.gradient(y, x)]
        return out

    check(body)


def test_an_incompatible_shape_still_raises_inside_a_function():
    def body(tf):
        v = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])

        @tf.function
        def store(x):
            v.assign(x)
            return v.read_value()

        return store(tf.ones([4, 2]))

    check_raises(body)


def test_an_update_of_another_shape_still_raises_inside_a_function():
    def body(tf):
        v = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])

        @tf.function
        def add(x):
            v.assign_add(x)
            return v.read_value()

        return add(tf.ones([1, 3]))

    check_raises(body)


def test_an_update_after_an_assignment_of_another_shape_inside_a_function():
    # The update is checked against the shape the assignment gave (TF's graph checks it at run time)
    def body(tf):
        v = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])

        @tf.function
        def reset_then_add(x):
            v.assign(x)
            v.assign_add(tf.ones_like(x))
            v.assign_sub(0.5 * tf.ones_like(x))
            return v.read_value()

        first = reset_then_add(tf.ones([4, 3]))
        second = reset_then_add(tf.fill([1, 3], 3.0))
        return first, second, v.shape

    check(body)


def test_an_update_of_a_third_shape_after_an_assignment_still_raises():
    def body(tf):
        v = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])

        @tf.function
        def reset_then_add(x, delta):
            v.assign(x)
            v.assign_add(delta)
            return v.read_value()

        return reset_then_add(tf.ones([4, 3]), tf.ones([2, 3]))

    check_raises(body)
