"""TensorArrays written in AutoGraph's loops and branches against TF's: loops over a dataset's runs
(full batches, then a smaller last one), loops with a `break`, and tensor `if`s that write."""

import numpy as np

from oracle import check, check_raises


def _batches(tf, rows):
    return tf.data.Dataset.from_tensor_slices(np.arange(rows, dtype=np.float32)).batch(4)


def test_dynamic_tensor_array_over_a_dataset_with_a_smaller_last_batch():
    def body(tf):
        @tf.function
        def over_iterator(iterator):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            i = 0
            for batch in iterator:
                ta = ta.write(i, tf.reduce_sum(batch))
                i += 1
            return ta.stack(), ta.size()

        @tf.function
        def over_dataset(rows):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            ta = ta.write(0, -1.0)
            i = tf.constant(1)
            for batch in _batches(tf, rows):
                ta = ta.write(i, tf.reduce_max(batch))
                i += 1
            return ta.stack()

        return (
            over_iterator(iter(_batches(tf, 10))),
            over_iterator(iter(_batches(tf, 13))),
            over_dataset(10),
            over_dataset(8),
        )

    check(body)


def test_dynamic_tensor_array_in_a_loop_with_a_break():
    def body(tf):
        @tf.function
        def up_to(n, x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(10):
                if i >= n:
                    break
                ta = ta.write(i, tf.cast(i, tf.float32) * x)
            return ta.stack(), ta.size()

        @tf.function
        def rows_until_negative(x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for row in x:
                if tf.reduce_min(row) < 0.0:
                    break
                ta = ta.write(ta.size(), row * 2.0)
            return ta.stack()

        x = tf.constant([[1.0, 2.0], [3.0, 4.0], [-1.0, 5.0], [6.0, 7.0]])
        runs = [up_to(tf.constant(n), tf.constant(2.0)) for n in (4, 7, 0, 10, 4)]
        return runs, rows_until_negative(x), rows_until_negative(tf.abs(x)), up_to.experimental_get_tracing_count()

    check(body)


def test_gradient_through_tensor_array_writes_in_a_loop_with_a_break():
    def body(tf):
        @tf.function
        def f(n, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                h = x
                for i in tf.range(8):
                    if i >= n:
                        break
                    h = tf.sin(h) * x
                    ta = ta.write(i, h)
                loss = tf.reduce_sum(ta.stack() ** 2)
            return loss, tape.gradient(loss, x)

        x = tf.constant([0.5, -0.25])
        return f(tf.constant(3), x), f(tf.constant(5), x)

    check(body)


def test_tensor_array_written_in_the_branches_of_a_tensor_if():
    def body(tf):
        @tf.function
        def f(x):
            ta = tf.TensorArray(tf.float32, size=3)
            ta = ta.write(0, x)
            if tf.reduce_sum(x) > 0.0:
                ta = ta.write(1, x * 2.0)
            else:
                ta = ta.write(2, -x)
            return ta.stack()

        @tf.function
        def in_a_loop(n):
            ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
            for i in tf.range(n):
                if i % 2 == 0:
                    ta = ta.write(i, i * 10)
                else:
                    ta = ta.write(i, -i)
            return ta.stack()

        return f(tf.constant([1.0, 2.0])), f(tf.constant([-1.0, -2.0])), in_a_loop(tf.constant(5))

    check(body)


def test_tensor_array_of_another_length_after_each_branch_runs_eagerly_as_tf():
    def body(tf):
        @tf.function
        def f(x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            if x > 0.0:
                ta = ta.write(0, x)
                ta = ta.write(1, x + 1.0)
            else:
                ta = ta.write(0, -x)
            return ta.stack()

        return f(tf.constant(2.0)), f(tf.constant(-3.0))

    check(body)


def test_tensor_arrays_from_tf_cond_and_loops_with_continue_or_a_while_break():
    def body(tf):
        @tf.function
        def chosen(x):
            ta = tf.TensorArray(tf.float32, size=2)
            ta = tf.cond(x > 0, lambda: ta.write(0, x), lambda: ta.write(1, -x))
            pair = tf.cond(x > 1, lambda: (ta.write(1, x * 3.0), x), lambda: (ta, -x))
            return ta.stack(), pair[0].stack(), pair[1]

        @tf.function
        def skipping(n):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(n):
                if i % 3 == 2:
                    continue
                ta = ta.write(i, tf.cast(i, tf.float32))
            return ta.stack()

        @tf.function
        def until_three(n):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            k = tf.constant(0)
            while k < n:
                if k == 3:
                    break
                ta = ta.write(k, tf.cast(k, tf.float32))
                k += 1
            return ta.stack()

        return (
            [chosen(tf.constant(v)) for v in (2.0, 0.5, -1.0)],
            [skipping(tf.constant(n)) for n in (6, 5, 2)],
            [until_three(tf.constant(n)) for n in (7, 2)],
        )

    check(body)


def test_tensor_array_whose_size_is_a_tensor_argument():
    def body(tf):
        @tf.function
        def ramp(n, x):
            ta = tf.TensorArray(tf.float32, size=n)
            for i in tf.range(n):
                ta = ta.write(i, x * tf.cast(i, tf.float32))
            return ta.stack(), ta.size()

        @tf.function
        def partly_written(n):
            ta = tf.TensorArray(tf.int32, size=n, element_shape=[])
            ta = ta.write(0, 7)
            return ta.stack(), ta.read(0)

        @tf.function
        def grown(n):
            ta = tf.TensorArray(tf.float32, size=n, dynamic_size=True)
            for i in tf.range(n + 2):
                ta = ta.write(i, tf.cast(i, tf.float32) * 2.0)
            return ta.stack()

        @tf.function
        def gradient(n, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                ta = tf.TensorArray(tf.float32, size=n)
                h = x
                for i in tf.range(n):
                    h = tf.sin(h) * x
                    ta = ta.write(i, h)
                loss = tf.reduce_sum(ta.stack())
            return loss, tape.gradient(loss, x)

        x = tf.constant([0.5, -1.0])
        return (
            [ramp(tf.constant(n), x) for n in (3, 5, 3, 0)],
            [partly_written(tf.constant(n)) for n in (1, 4)],
            [grown(tf.constant(n)) for n in (1, 3)],
            gradient(tf.constant(4), x),
        )

    check(body)


def test_dynamic_tensor_array_carried_through_two_tensor_bound_loops():
    def body(tf):
        @tf.function
        def f(n, m):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(n):
                ta = ta.write(i, tf.cast(i, tf.float32))
            first = ta.stack()
            for j in tf.range(m):
                ta = ta.write(ta.size(), tf.cast(j, tf.float32) * 10.0)
            return first, ta.stack()

        return [f(tf.constant(n), tf.constant(m)) for n, m in ((2, 3), (2, 5), (4, 1), (2, 3))]

    check(body)


def test_tensor_arrays_as_tf_while_loop_variables_and_inside_loop_state_structures():
    def body(tf):
        x = tf.constant([1.0, 2.0, 3.0, 4.0])

        def guide_loop(n):  # TF's TensorArray guide: the array is a loop variable of tf.while_loop
            def step(i, ta):
                return i + 1, ta.write(i, x[i] * 2.0)

            _, ta = tf.while_loop(lambda i, ta: i < n, step, (tf.constant(0), tf.TensorArray(tf.float32, size=4)))
            return ta.stack()

        @tf.function
        def grown(n):
            _, ta = tf.while_loop(
                lambda i, ta: i < n,
                lambda i, ta: (i + 1, ta.write(i, tf.cast(i * i, tf.float32))),
                [tf.constant(0), tf.TensorArray(tf.float32, size=0, dynamic_size=True)],
            )
            return ta.stack(), ta.size()

        @tf.function
        def in_a_tuple_and_a_dict():
            state = (tf.constant(0), tf.TensorArray(tf.int32, size=3))
            named = {"rows": tf.TensorArray(tf.float32, size=3, element_shape=[2]), "sum": tf.constant(0.0)}
            for i in tf.range(3):
                state = (state[0] + i, state[1].write(i, i * 10))
                named = {
                    "rows": named["rows"].write(i, tf.fill([2], tf.cast(i, tf.float32))),
                    "sum": named["sum"] + 1.0,
                }
            return state[0], state[1].stack(), named["rows"].stack(), named["sum"]

        @tf.function
        def gradient(v):
            with tf.GradientTape() as tape:
                tape.watch(v)

                def step(i, acc, ta):
                    acc = acc * v
                    return i + 1, acc, ta.write(i, acc)

                loop_vars = (0, v, tf.TensorArray(tf.float32, size=3))
                _, _, ta = tf.while_loop(lambda i, a, t: i < 3, step, loop_vars, maximum_iterations=3)
                loss = tf.reduce_sum(ta.stack())
            return loss, tape.gradient(loss, v)

        return (
            guide_loop(tf.constant(3)),
            tf.function(guide_loop)(tf.constant(4)),
            [grown(tf.constant(n)) for n in (3, 1, 4)],
            in_a_tuple_and_a_dict(),
            gradient(tf.constant([0.5, 2.0])),
        )

    check(body)


def test_tensor_array_without_inferred_shapes_and_tf_errors_for_bad_writes():
    def body(tf):
        ta = tf.TensorArray(tf.float32, size=2, infer_shape=False)
        ta = ta.write(0, [1.0, 2.0, 3.0]).write(1, [4.0])
        return ta.concat(), ta.read(1), ta.element_shape, ta.size()

    check(body)
    check_raises(
        lambda tf: tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.0]).write(1, [2.0, 3.0]).stack()
    )
    check_raises(lambda tf: tf.TensorArray(tf.float32, size=2).write(5, 1.0), messages=True)
    check_raises(lambda tf: tf.TensorArray(tf.float32, size=1).write(0, tf.constant(1)), messages=True)


def test_tensor_array_without_inferred_shapes_written_in_a_tensor_loop():
    def body(tf):
        @tf.function
        def rows(n):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
            for i in tf.range(n):
                ta = ta.write(i, tf.fill([2], tf.cast(i, tf.float32)))
            return ta.stack()

        return rows(tf.constant(3))

    check(body)
