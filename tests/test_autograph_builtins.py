"""Python builtins and operators on tensors in converted code, against TF's AutoGraph: `int(t)` and `float(t)`
are `tf.cast`s to int32 and float32 (TF's `py_builtins.int_`/`float_`); `int(t, base)` raises TF's error; a
chained comparison `a < b < c` is `a < b and b < c` (`tf.logical_and` for tensors; `b` evaluated twice, as TF);
`a and b` on a known (eager) tensor runs one side, as TF's eager `tf.cond`."""

from oracle import check, check_raises


def test_int_and_float_of_tensors_are_casts():
    def body(tf):
        @tf.function
        def f(x, n):
            steps = tf.constant(0)
            for _ in range(int(n)):  # a tensor bound: a tensor loop, as TF's
                steps += 1
            return int(x), float(n), int(x * 2.0) + 1, float(x) / 2.0, steps, int(3.9), float("2.5")

        return f(tf.constant(-2.7), tf.constant(4)), f(tf.constant(5.5), tf.constant(2))

    check(body)


def test_int_of_a_tensor_with_a_base_raises_tfs_error():
    def body(tf):
        return tf.function(lambda x: int(x, 2))(tf.constant(1))

    raised = check_raises(body)
    assert raised.name == "NotImplementedError" and raised.message == "base 2 not supported for int"


def test_chained_comparisons_of_tensors():
    def body(tf):
        calls = []

        def middle(x):
            calls.append(1)
            return x

        @tf.function
        def f(x, n):
            if 0 < x < 5:
                y = x
            else:
                y = -x
            inside = -1.0 < middle(x) <= 10.0 < 20.0
            python_chain = 1 < 2 < n.shape.rank + 3  # Python values stay Python
            return y, inside, python_chain, 0 < n < 3 != 4

        return [f(tf.constant(v), tf.constant(2)) for v in (2.0, 7.0, 30.0)], len(calls)

    check(body)


def test_and_or_of_known_tensors_in_a_py_functions_body_run_one_side():
    # the lambda given to py_function is converted with the function; there its tensors are eager, so `a and b`
    # is TF's eager `tf.cond(a, b, lambda: a)`: b's value (any Python value) or a, by a's truth
    def body(tf):
        seen = []

        def record(v):
            seen.extend([v and None, v or 7, (v * 0.0) and 3, (v * 0.0) or 3, tf.Variable(1.0) and "s"])
            return v

        f = tf.function(lambda x: (tf.py_function(lambda v: record(v) and None, [x], []), x + 1.0)[1])
        return f(tf.constant(2.0)), seen

    check(body)


def test_and_of_a_known_tensor_with_several_elements_raises_tfs_error():
    def body(tf):
        f = tf.function(lambda x: (tf.py_function(lambda v: tf.constant([1.0, 2.0]) and 3, [x], []), x)[1])
        return f(tf.constant(2.0))

    check_raises(body)
