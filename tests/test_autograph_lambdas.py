"""Lambdas under AutoGraph, against TF: a lambda given to `tf.function`, and lambdas inside converted code, are
converted (their `a if c else b`, `and`/`or`/`not` on tensors, and the calls they make); `tf.map_fn` converts the
function it is given inside a function traced with AutoGraph, as TF's does, and the other higher-order ops do
not (TF's `OperatorNotAllowedInGraphError` for a Python `if` in a function passed to them directly)."""

import pytest

import tapeshim
from oracle import check, check_raises, run


def _absolute(x):
    if x > 0:
        return x * 2.0
    return -x


def _accumulate(total, x):
    if x > 0:
        return total + x * 2.0
    return total - x


def test_a_lambda_given_to_tf_function():
    def body(tf):
        magnitude = tf.function(lambda x: x if x > 0 else -x * 10.0)
        in_range = tf.function(lambda x: x > 0 and x < 5 or not x < 100)
        negative, positive = tf.function(lambda x: x if x < 0 else -x), tf.function(lambda y: y if y > 0 else -y)
        values = [tf.constant(v) for v in (-2.0, 3.0, 200.0)]
        return [(magnitude(v), in_range(v), negative(v), positive(v)) for v in values]

    check(body)


def test_lambdas_with_one_signature_on_one_line_run_unconverted_with_tfs_warning(caplog):
    def body(tf):
        first, _ = tf.function(lambda x: x if x < 0 else -x), tf.function(lambda x: x if x > 0 else -x)
        return first(tf.constant(1.0))

    assert check_raises(body).name == "OperatorNotAllowedInGraphError"
    caplog.clear()
    run(body, tapeshim)  # tapeshim's own warning
    assert "found multiple definitions with identical signatures at the location" in caplog.text


def test_lambdas_inside_a_converted_function():
    def body(tf):
        @tf.function
        def f(x, v):
            magnitude = lambda y: y if y > 0 else -y  # noqa: E731
            return (
                magnitude(x),
                tf.map_fn(lambda y: y * 2 if y > 0 else -y, v),
                tf.cond(x > 0, lambda: _absolute(x), lambda: x),
                tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, _absolute(s)), (0, x)),
                tf.nest.map_structure(lambda y: y if y > 0 else -y, [x, -x]),
                tf.foldl(lambda a, y: a + (y if y > 0 else -y), v),
                tf.recompute_grad(lambda y: y if y > 0 else -y)(x),
                tf.switch_case(tf.constant(0), [lambda: _absolute(x), lambda: x]),
            )

        return [f(tf.constant(s), tf.constant([-1.0, 2.0])) for s in (-1.5, 2.5)]

    check(body)


def test_gradients_through_a_converted_lambda():
    def body(tf):
        w = tf.Variable(-2.0)

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = (lambda y: y * y if y > 0 else -3.0 * y)(w)
            return loss, tape.gradient(loss, w)

        first = step()
        w.assign(4.0)
        return first, step()

    check(body)


def test_a_custom_gradient_forward_with_a_conditional_expression():
    def body(tf):
        @tf.function
        def f(x):
            @tf.custom_gradient
            def clipped(y):
                z = y if y > 0 else -y
                return z, lambda dy: dy * 3.0

            with tf.GradientTape() as tape:
                tape.watch(x)
                out = clipped(x)
            return out, tape.gradient(out, x)

        return f(tf.constant(-1.5)), f(tf.constant(2.0))

    check(body)


def test_map_fn_converts_the_function_it_is_given():
    def body(tf):
        converted = tf.function(lambda v: tf.map_fn(_absolute, v))
        return converted(tf.constant([-1.0, 2.0])), tf.map_fn(_absolute, tf.constant([-3.0, 4.0]))

    check(body)


def test_map_fn_in_a_function_without_autograph_does_not_convert():
    def body(tf):
        return tf.function(lambda v: tf.map_fn(_absolute, v), autograph=False)(tf.constant([-1.0, 2.0]))

    assert check_raises(body).name == "OperatorNotAllowedInGraphError"


@pytest.mark.parametrize("op", ["scan", "foldl", "vectorized_map", "cond"])
def test_other_ops_do_not_convert_a_function_given_directly(op):
    def body(tf):
        calls = {
            "scan": lambda v: tf.scan(_accumulate, v),
            "foldl": lambda v: tf.foldl(_accumulate, v),
            "vectorized_map": lambda v: tf.vectorized_map(_absolute, v),
            "cond": lambda v: tf.cond(v[0] > 0, lambda: _absolute(v[1]), lambda: v[1]),
        }
        if op == "cond":  # (a lambda calling the function converts the call: TF's value)
            return tf.function(calls[op])(tf.constant([-1.0, 2.0]))
        return tf.function(calls[op])(tf.constant([-1.0, 2.0]))

    if op == "cond":
        check(body)
    else:
        assert check_raises(body).name == "OperatorNotAllowedInGraphError"


def test_a_custom_gradient_forward_with_an_if_statement():
    # defined inside the converted function, the forward is converted with it: its `if` on a tensor is a cond
    def body(tf):
        @tf.function
        def f(x):
            @tf.custom_gradient
            def scaled(y):
                if tf.reduce_sum(y) > 0:
                    z = y * 2.0
                elif tf.reduce_sum(y) < -1.0:
                    z = -y
                else:
                    z = y + 1.0
                return z, lambda dy: dy * 3.0

            with tf.GradientTape() as tape:
                tape.watch(x)
                out = scaled(x)
            return out, tape.gradient(out, x)

        return [f(tf.constant(v)) for v in ([1.0, 2.0], [-1.5, -2.0], [0.5, -0.75])]

    check(body)


def test_an_if_statement_in_a_module_level_custom_gradient_is_not_converted():
    # as TF: a custom gradient defined outside the function is not converted (its `if` on a tensor raises)
    def body(tf):
        @tf.custom_gradient
        def scaled(y):
            if tf.reduce_sum(y) > 0:
                return y * 2.0, lambda dy: dy
            return y, lambda dy: dy

        return tf.function(scaled)(tf.constant([1.0]))

    assert check_raises(body).name == "OperatorNotAllowedInGraphError"


def test_a_custom_gradient_forward_with_a_while_loop():
    def body(tf):
        @tf.function
        def f(x):
            @tf.custom_gradient
            def doubled_until(y):
                z, steps = y, 0
                while tf.reduce_sum(z) < 10.0:
                    scratch = z * 2.0  # (first assigned in the body: local to it)
                    z = scratch
                    steps += 1
                return (z, steps), lambda dz, dsteps: dz * 3.0

            with tf.GradientTape() as tape:
                tape.watch(x)
                out, steps = doubled_until(x)
            return out, steps, tape.gradient(out, x)

        return f(tf.constant([1.5, 0.5])), f(tf.constant([20.0, 1.0]))

    check(body)
