"""A `dynamic_size` TensorArray written by nested tensor loops inside `tf.function`, against TF's: static and
tensor trip counts, writes before and after the inner loop, explicit `tf.while_loop`s, and gradients."""

import numpy as np

from oracle import check


def test_nested_loops_write_one_dynamic_array():
    def body(tf):
        @tf.function
        def grid():
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            k = 0
            for i in tf.range(3):
                for j in tf.range(2):
                    ta = ta.write(k, tf.cast(i * 10 + j, tf.float32))
                    k += 1
            return ta.stack()

        @tf.function
        def grid_of(n, m):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            k = 0
            for i in tf.range(n):
                for j in tf.range(m):
                    ta = ta.write(k, tf.cast(i * 10 + j, tf.float32))
                    k += 1
            return ta.stack(), ta.size()

        out = [grid(), grid_of(tf.constant(3), tf.constant(2)), grid_of(tf.constant(2), tf.constant(4))]
        out += [grid_of(tf.constant(0), tf.constant(4)), grid_of(tf.constant(1), tf.constant(1))]
        return out + [grid_of.experimental_get_tracing_count()]

    check(body)


def test_writes_before_and_after_an_inner_loop():
    def body(tf):
        @tf.function
        def headed(n, x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(n):
                ta = ta.write(ta.size(), tf.cast(i, tf.float32))
                for j in tf.range(2):
                    ta = ta.write(ta.size(), x[j] * tf.cast(i + 1, tf.float32))
                ta = ta.write(ta.size(), -1.0)
            return ta.stack()

        x = tf.constant([0.5, 2.0])
        return [headed(tf.constant(3), x), headed(tf.constant(1), x), headed(tf.constant(4), x)]

    check(body)


def test_three_levels_and_a_rows_loop():
    def body(tf):
        @tf.function
        def cube(x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for row in x:
                for i in tf.range(2):
                    for j in tf.range(tf.shape(row)[0]):
                        ta = ta.write(ta.size(), row[j] + tf.cast(i, tf.float32))
            return ta.stack()

        return [cube(tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))), cube(tf.ones([1, 2]))]

    check(body)


def test_nested_while_loops_with_an_array_loop_variable():
    def body(tf):
        @tf.function
        def pairs(n):
            def outer_body(i, ta):
                def inner_body(j, ta):
                    return j + 1, ta.write(ta.size(), i * 10 + j)

                _, ta = tf.while_loop(lambda j, ta: j < i, inner_body, (0, ta))
                return i + 1, ta

            _, ta = tf.while_loop(lambda i, ta: i < n, outer_body, (0, tf.TensorArray(tf.int32, 0, dynamic_size=True)))
            return ta.stack()

        return [pairs(tf.constant(4)), pairs(tf.constant(2))]

    check(body)


def test_gradient_through_nested_loops_writing_an_array():
    def body(tf):
        w = tf.Variable([1.5, -0.5])

        @tf.function
        def step(n):
            with tf.GradientTape() as tape:
                ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                for i in tf.range(n):
                    for j in tf.range(2):
                        ta = ta.write(ta.size(), w[j] * tf.cast(i + 1, tf.float32))
                loss = tf.reduce_sum(ta.stack() ** 2)
            return loss, tape.gradient(loss, w)

        return [step(tf.constant(3)), step(tf.constant(2))]

    check(body)
