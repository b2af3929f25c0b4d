"""Functions whose results TF gives an unknown shape, against TF: `tf.cond`/`tf.switch_case` with branches
of different shapes, `tf.while_loop` variables changing shape within their `shape_invariants`, AutoGraph
loops with `tf.autograph.experimental.set_loop_options`. XLA needs static shapes, so tapeshim runs such a
function eagerly; values, gradients, tracing counts and errors are TF's."""

import pytest

import tapeshim
from oracle import check, check_raises, real_tf


def test_cond_with_branches_of_different_shapes():
    def body(tf):
        @tf.function
        def f(x):
            return tf.cond(tf.reduce_sum(x) > 0, lambda: x[:2] * 2.0, lambda: tf.reshape(x, (3, 1)))

        x = tf.constant([1.0, 2.0, 3.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            positive = f(x)
            negative = f(-x)
        return (
            positive,
            negative,
            tape.gradient(positive, x),
            tape.gradient(negative, x),
            f.experimental_get_tracing_count(),
        )

    check(body)


def test_switch_case_with_branches_of_different_shapes():
    def body(tf):
        @tf.function
        def f(index, x):
            return tf.switch_case(index, [lambda: x, lambda: x[:1], lambda: tf.concat([x, x], 0)])

        x = tf.constant([1.0, 2.0])
        return [f(tf.constant(i), x) for i in (0, 1, 2, 7)]

    check(body)


def test_cond_with_branches_of_different_dtypes_is_tfs_type_error():
    def body(tf):
        @tf.function
        def f(x):
            return tf.cond(x[0] > 0, lambda: x[:2], lambda: tf.cast(x, tf.int32))

        return f(tf.constant([1.0, 2.0, 3.0]))

    check_raises(body)


def _growing(tf, invariant):
    @tf.function
    def f(n):
        x = tf.zeros((0,))
        i = tf.constant(0)
        kwargs = {} if invariant is None else {"shape_invariants": (invariant(tf), i.shape)}
        x, i = tf.while_loop(
            lambda x, i: i < n,
            lambda x, i: (tf.concat([x, [tf.cast(i, tf.float32) * 2.0]], 0), i + 1),
            (x, i),
            **kwargs,
        )
        return x, i

    return f


def test_while_loop_variable_growing_within_its_shape_invariant():
    def body(tf):
        f = _growing(tf, lambda tf: tf.TensorShape([None]))
        return [f(tf.constant(n)) for n in (0, 3, 5)], f.experimental_get_tracing_count()

    check(body)


@pytest.mark.parametrize("invariant", [None, lambda tf: tf.TensorShape([1])], ids=["none", "too_narrow"])
def test_while_loop_variable_changing_shape_outside_its_invariant_is_tfs_error(invariant):
    check_raises(lambda tf: _growing(tf, invariant)(tf.constant(2)))


def test_set_loop_options_shape_invariants_and_maximum_iterations():
    def body(tf):
        @tf.function
        def collect(n):
            x = tf.zeros((0, 2))
            for i in tf.range(n):
                tf.autograph.experimental.set_loop_options(shape_invariants=[(x, tf.TensorShape([None, 2]))])
                x = tf.concat([x, tf.fill((1, 2), tf.cast(i, tf.float32))], 0)
            return x

        @tf.function
        def bounded(n):
            i = tf.constant(0)
            total = tf.constant(0.0)
            while i < n:
                tf.autograph.experimental.set_loop_options(maximum_iterations=3, parallel_iterations=4)
                total += tf.cast(i, tf.float32)
                i += 1
            return i, total

        @tf.function
        def python_loop(x):  # a loop on Python values: the options change nothing
            for _ in range(2):
                tf.autograph.experimental.set_loop_options(maximum_iterations=1)
                x = x * 2.0
            return x

        return (
            [collect(tf.constant(n)) for n in (0, 2, 4)],
            [bounded(tf.constant(n)) for n in (1, 5)],
            python_loop(tf.constant(1.5)),
            tf.autograph.experimental.set_loop_options(maximum_iterations=2),  # eagerly: nothing
        )

    check(body)


def test_fallback_keeps_variables_and_the_outer_tape():
    def body(tf):
        class Model(tf.Module):
            def __init__(self):
                self.w = None

            @tf.function
            def __call__(self, x):
                if self.w is None:
                    self.w = tf.Variable(tf.ones((3,)) * 0.5)
                if tf.reduce_sum(x) > 0:
                    y = x * self.w
                else:
                    y = (x * self.w)[:1]
                return tf.reduce_sum(y * y)

        model = Model()
        x = tf.constant([1.0, -2.0, 3.0])
        results = []
        for sign in (1.0, -1.0, 1.0):
            with tf.GradientTape() as tape:
                loss = model(x * sign)
            (grad,) = tape.gradient(loss, [model.w])
            model.w.assign_sub(0.1 * grad)
            results.append((loss, grad))
        return results, model.w, len(model.trainable_variables)

    check(body)


def test_fallback_is_reported_once_and_the_function_stays_eager(caplog):
    prints = []

    @tapeshim.function
    def f(x):
        prints.append(1)
        return tapeshim.cond(x[0] > 0, lambda: x[:1], lambda: x)

    x = tapeshim.constant([1.0, 2.0])
    with caplog.at_level("WARNING"):
        f(x), f(-x), f(x)
    assert sum("runs eagerly" in record.getMessage() for record in caplog.records) == 1
    # the failed trace ran the Python function once, then each call eagerly (TF: once, at its trace)
    assert len(prints) == 4

    @real_tf.function
    def g(x):
        return real_tf.cond(x[0] > 0, lambda: x[:1], lambda: x)

    y = real_tf.constant([1.0, 2.0])
    g(y), g(-y), g(y)
    assert f.experimental_get_tracing_count() == g.experimental_get_tracing_count()


def test_get_concrete_function_says_what_to_change():
    @tapeshim.function
    def f(x):
        return tapeshim.cond(x[0] > 0, lambda: x[:1], lambda: x)

    with pytest.raises(ValueError, match="unknown shape.*make the shapes agree"):
        f.get_concrete_function(tapeshim.TensorSpec((2,), tapeshim.float32))
    assert real_tf.function(lambda x: real_tf.cond(x[0] > 0, lambda: x[:1], lambda: x)).get_concrete_function(
        real_tf.TensorSpec((2,), real_tf.float32)
    ).structured_outputs.shape.as_list() == [None]


def test_while_loop_variable_changing_dtype_is_tfs_type_error():
    def body(tf):
        @tf.function
        def f(n):
            return tf.while_loop(lambda x: x < n, lambda x: tf.cast(x, tf.float32) + 1, [tf.constant(0)])

        return f(tf.constant(3))

    check_raises(body)


def test_sizes_given_by_a_tensor_argument_run_the_function_eagerly():
    def body(tf):
        x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        functions = [
            tf.function(lambda n: tf.zeros([n, 2])),
            tf.function(lambda n: tf.range(n)),
            tf.function(lambda n: x[:n]),
            tf.function(lambda n: tf.one_hot([0, 1], n)),
            tf.function(lambda n: tf.reshape(tf.range(6), [n, -1])),
            tf.function(lambda n: tf.tile(x, [n, 1])),
            tf.function(lambda v: tf.where(x > v)),
        ]
        results = [[f(tf.constant(n)) for n in (2, 3)] for f in functions[:-1]]
        results.append([functions[-1](tf.constant(v)) for v in (1.0, 2.0)])
        return results, [f.experimental_get_tracing_count() for f in functions]

    check(body)


def test_python_bool_of_a_traced_tensor_in_user_code_stays_tf_error():
    def body(tf):
        def f(n):
            if n > 1:  # (not converted: autograph=False)
                return tf.zeros([2])
            return tf.ones([2])

        return tf.function(f, autograph=False)(tf.constant(2))

    check_raises(body)
