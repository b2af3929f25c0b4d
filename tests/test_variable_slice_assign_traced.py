"""`v[i].assign(x)` with a tensor index inside `tf.function` (a loop over `tf.range(n)`, a function argument),
compared with real TensorFlow: values, and TF's error for an index out of bounds when the call runs."""

import numpy as np

from oracle import check, check_raises


def test_a_loop_assigns_variable_elements_by_its_tensor_index():
    def body(tf):
        v = tf.Variable(tf.zeros([4]))

        @tf.function
        def fill():
            for i in tf.range(4):
                v[i].assign(tf.cast(i, tf.float32) * 2.0)
            return v.read_value()

        return [fill(), v.numpy()]

    check(body)


def test_tensor_indices_with_slices_negative_indices_and_ellipsis():
    def body(tf):
        m = tf.Variable(tf.zeros([3, 4]))
        cube = tf.Variable(tf.zeros([2, 3, 2]))

        @tf.function
        def write(i, j, x):
            m[i, 1:3].assign(x)
            m[:, j].assign(tf.ones([3]) * 5.0)
            cube[..., i, 0].assign(tf.fill([2], 7.0))
            cube[j, tf.newaxis, i].assign([[1.0, 2.0]])
            return m.read_value(), cube.read_value()

        x = tf.constant([1.0, 2.0])
        return [write(tf.constant(1), tf.constant(-1), x), write(tf.constant(2), tf.constant(0), x * 3.0)]

    check(body)


def test_a_tensor_index_out_of_bounds_raises_when_the_call_runs():
    def body(tf):
        v = tf.Variable(tf.zeros([4]))

        @tf.function
        def put(i):
            v[i].assign(9.0)
            return v.read_value()

        put(tf.constant(3))
        return put(tf.constant(7))

    check_raises(body)


def test_gradients_around_an_element_assignment_in_a_function():
    def body(tf):
        w = tf.Variable([1.0, 2.0, 3.0])

        @tf.function
        def step(i):
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(w * w)
            w[i].assign(0.0)
            with tf.GradientTape() as tape2:
                z = tf.reduce_sum(w * np.float32(3.0))
            return tape.gradient(y, w), tape2.gradient(z, w), w.read_value()

        return [step(tf.constant(1)), step(tf.constant(2))]

    check(body)
