"""Tape lifecycle, forward accumulators and custom gradients, each compared with real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises, raising, real_tf, run


# -- a used one-shot tape records afresh when entered again -----------------
def _reentered(tf, rewatch=True, variable=False):
    x = tf.Variable(3.0) if variable else tf.constant(3.0)
    tape = tf.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    first = tape.gradient(y, x)
    with tape:
        if rewatch:
            tape.watch(x)
        z = x * x * x
    return first, tape.gradient(z, x), tape.watched_variables()


def _gradient_in_stop_recording(tf):
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            first = tape.gradient(y, x)
        z = y * x
    return first, tape.gradient(z, x)


def _old_target_after_reentry(tf):
    x = tf.Variable(3.0)
    tape = tf.GradientTape()
    with tape:
        y = x * x
    tape.gradient(y, x)
    with tape:
        x * x * x
    return tape.gradient(y, x)


def _third_gradient(tf):
    x = tf.Variable(3.0)
    tape = tf.GradientTape()
    with tape:
        y = x * x
    tape.gradient(y, x)
    with tape:
        z = x * x * x
    tape.gradient(z, x)
    return tape.gradient(z, x)


def _watch_after_use(tf):
    x = tf.constant(3.0)
    tape = tf.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    tape.watch(x)


def _jacobians_after_reentry(tf):
    x = tf.constant([[1.0, 2.0]])
    tape = tf.GradientTape(watch_accessed_variables=False)
    with tape:
        tape.watch(x)
        y = x * x
    first = tape.jacobian(y, x)
    with tape:
        tape.watch(x)
        z = x * x * x
    return first, tape.batch_jacobian(z, x)


@pytest.mark.parametrize(
    "body",
    [
        _reentered,
        lambda tf: _reentered(tf, rewatch=False),
        lambda tf: _reentered(tf, rewatch=False, variable=True),
        _gradient_in_stop_recording,
        _old_target_after_reentry,
        raising(_third_gradient),
        raising(_watch_after_use),
        _jacobians_after_reentry,
    ],
)
def test_used_tape_entered_again_records_afresh(body):
    check(body)


# -- forward accumulators: tangents are computed while the ops run ----------
def _nested_accumulators(tf, call_inside):
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as inner:
            y = tf.sin(x) * x**3
        if call_inside:
            return inner.jvp(y), outer.jvp(inner.jvp(y))
    return inner.jvp(y), outer.jvp(y), outer.jvp(inner.jvp(y)), inner.jvp(outer.jvp(y))


def _mixed_partial(tf):
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant([0.0, 1.0])) as inner:
            y = tf.reduce_sum(x**3) * x[0]
    return outer.jvp(inner.jvp(y))


def _tape_around_accumulator(tf, persistent):
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=persistent) as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
            y = x**3
    tangent = acc.jvp(y)
    return tangent, tape.gradient(tangent, x)


def _tape_inside_accumulator(tf, jvp_inside_tape):
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x**3
            if jvp_inside_tape:
                tangent = acc.jvp(y)
    if not jvp_inside_tape:
        tangent = acc.jvp(y)
    return tangent, tape.gradient(tangent, x)


def _tape_after_accumulator(tf):
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = x**3
    with tf.GradientTape() as tape:
        tape.watch(x)
        tangent = acc.jvp(y)
    return tangent, tape.gradient(tangent, x)


def _sequential_accumulators(tf):
    x = tf.constant(2.0)
    first = tf.autodiff.ForwardAccumulator(x, tf.constant(1.0))
    second = tf.autodiff.ForwardAccumulator(x, tf.constant(1.0))
    with first:
        y = x**3
    with second:
        z = y * x
    return first.jvp(z), second.jvp(z), second.jvp(first.jvp(y)), first.jvp(second.jvp(z))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: _nested_accumulators(tf, call_inside=False),
        lambda tf: _nested_accumulators(tf, call_inside=True),
        _mixed_partial,
        lambda tf: _tape_around_accumulator(tf, persistent=False),
        lambda tf: _tape_around_accumulator(tf, persistent=True),
        lambda tf: _tape_inside_accumulator(tf, jvp_inside_tape=False),
        lambda tf: _tape_inside_accumulator(tf, jvp_inside_tape=True),
        _tape_after_accumulator,
        _sequential_accumulators,
    ],
)
def test_tangents_are_recorded_by_the_recorders_around_the_accumulator(body):
    check(body, rtol=1e-5)


# -- custom gradients inside custom gradients, and in forward mode ----------
def _override_second_order(tf):
    """TF's backprop_test testOverrideSecondOrderWithCustomGradient."""

    @tf.custom_gradient
    def f(x):
        def first_order_grad(dz):
            @tf.custom_gradient
            def first_order_custom(unused_x):
                def h(ddz):
                    return -2.1 * ddz

                return -1.1, h

            return dz * first_order_custom(x)

        return x + 10.0, first_order_grad

    c = tf.constant(1.0)
    with tf.GradientTape() as outer:
        outer.watch(c)
        with tf.GradientTape() as inner:
            inner.watch(c)
            d = f(c) ** 4.0
        dd = inner.gradient(d, c)
    return dd, outer.gradient(dd, c)


def _custom_gradient_of_custom_gradient(tf):
    """TF's backprop_test testCustomGradientForwardprop (a grad_fn that is itself a custom gradient)."""

    @tf.custom_gradient
    def f(x):
        def g(dz):
            @tf.custom_gradient
            def first_order(unused_x, unused_dz):
                def second_order_and_transpose(unused_ddz):
                    return 2.2, 3.1

                return 2.1, second_order_and_transpose

            return first_order(x, dz)

        return 2.0 * x, g

    with tf.GradientTape(persistent=True) as t:
        with tf.GradientTape() as tt:
            c = tf.constant(1.0)
            t.watch(c)
            tt.watch(c)
            output_grad = tf.ones([])
            t.watch(output_grad)
            output = f(c)
        gc = tt.gradient(output, c, output_gradients=output_grad)
    # TF hands back grad_fn's Python floats as they are; compare them as tensors
    return output, gc, tf.convert_to_tensor(t.gradient(gc, c)), tf.convert_to_tensor(t.gradient(gc, output_grad))


def _custom_gradient_used_in_grad_fn(tf):
    @tf.custom_gradient
    def scaled_sin(x):
        return tf.sin(x), lambda dy: dy * 100.0

    @tf.custom_gradient
    def f(x):
        return x * 1.0, lambda dz: dz * scaled_sin(x)

    c = tf.constant(1.0)
    with tf.GradientTape() as outer:
        outer.watch(c)
        with tf.GradientTape() as inner:
            inner.watch(c)
            d = f(c) * 3.0
        dd = inner.gradient(d, c)
    return dd, outer.gradient(dd, c)


def _forward_mode_through_custom_gradient(tf, stop):
    @tf.custom_gradient
    def f(x):
        first = tf.stop_gradient(x) if stop else x
        return first * x, lambda dz: dz * 100.0

    x = tf.constant(3.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = f(x)
        z = y * 2.0
    return acc.jvp(y), acc.jvp(z)


def _forward_mode_custom_gradient_with_variable(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def g(dz, variables=None):
            return dz * 100.0, [dz * 7.0]

        return x * v, g

    with tf.autodiff.ForwardAccumulator(v, tf.constant(1.0)) as acc:
        y = f(tf.constant(3.0))
    return acc.jvp(y)


def _forward_over_backward_custom_gradient(tf, grad_uses_x):
    @tf.custom_gradient
    def f(x):
        def g(dz):
            return dz * 100.0 * x if grad_uses_x else dz * 100.0

        return x * x, g

    x = tf.constant(3.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        grad = tape.gradient(y, x)
    return grad, acc.jvp(grad), acc.jvp(y)


def _forward_over_backward_sqrt(tf):
    x = tf.constant([1.0, 4.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sqrt(x) * tf.constant([2.0, 1.0])
        grad = tape.gradient(y, x)
    return grad, acc.jvp(grad)


@pytest.mark.parametrize(
    "body",
    [
        _override_second_order,
        _custom_gradient_of_custom_gradient,
        _custom_gradient_used_in_grad_fn,
        lambda tf: _forward_mode_through_custom_gradient(tf, stop=False),
        lambda tf: _forward_mode_through_custom_gradient(tf, stop=True),
        _forward_mode_custom_gradient_with_variable,
        lambda tf: _forward_over_backward_custom_gradient(tf, grad_uses_x=False),
        lambda tf: _forward_over_backward_custom_gradient(tf, grad_uses_x=True),
        _forward_over_backward_sqrt,
    ],
)
def test_custom_gradients_nested_and_in_forward_mode(body):
    check(body, rtol=1e-5)


def _numpy_forward_two_inputs(tf):
    calls = []

    @tf.custom_gradient
    def f(x, y):
        calls.append(1)
        value = np.square(x.numpy()) * y.numpy()

        def grad(dy):
            return dy * 2.0 * x * y, tf.reduce_sum(dy * x * x)

        return tf.constant(value), grad

    x = tf.constant([1.0, 2.0])
    y = tf.constant(3.0)
    plain = f(x, y)
    calls_without_tape = len(calls)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        out = f(x, y)
        loss = tf.reduce_sum(out * out)
    return plain, calls_without_tape, out, tape.gradient(loss, [x, y]), tape.gradient(out, x)


def _numpy_forward_with_variable(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x]

        return tf.constant(x.numpy() * v.numpy()), grad

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = f(x) * 2.0
    return out, tape.gradient(out, [x, v])


def _python_float_forward_of_lazy_input(tf):
    @tf.custom_gradient
    def f(x):
        return tf.constant(float(x) ** 2), lambda dy: dy * 2.0 * x

    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        out = f(x * 1.0)
    return out, tape.gradient(out, x)


def _numpy_forward_in_forward_mode(tf):
    @tf.custom_gradient
    def f(x):
        return tf.constant(x.numpy() * 2), lambda dy: dy * [10.0, 100.0]

    x = tf.constant([3.0, 4.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0])) as acc:
        y = f(x)
    return y, acc.jvp(y)  # TF transposes grad_fn when the forward leaves TF


def _forward_runs_once_without_a_tape(tf):
    calls = []

    @tf.custom_gradient
    def f(x):
        calls.append(1)
        return x * 2.0, lambda dy: dy

    return f(tf.constant(1.0)), len(calls)


@pytest.mark.parametrize(
    "body",
    [
        _numpy_forward_two_inputs,
        _numpy_forward_with_variable,
        _python_float_forward_of_lazy_input,
        _numpy_forward_in_forward_mode,
        _forward_runs_once_without_a_tape,
    ],
)
def test_custom_gradient_whose_forward_leaves_tensors(body):
    check(body, rtol=1e-5)


# -- the same under jacobians, tf.function and variables ---------------------
def _jacobian_of_custom_gradient(tf):
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 100.0

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.jacobian(y, x)


def _batch_jacobian_of_custom_gradient(tf):
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 100.0

    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.batch_jacobian(y, x)


def _nested_custom_gradients_in_function(tf):
    @tf.custom_gradient
    def inner_cg(x):
        return tf.sin(x), lambda dy: dy * 100.0

    @tf.custom_gradient
    def f(x):
        return x * 1.0, lambda dz: dz * inner_cg(x)

    @tf.function
    def step(c):
        with tf.GradientTape() as outer:
            outer.watch(c)
            with tf.GradientTape() as inner:
                inner.watch(c)
                d = f(c) * 3.0
            dd = inner.gradient(d, c)
        return dd, outer.gradient(dd, c)

    return step(tf.constant(1.0))


def _forward_mode_custom_gradient_in_function(tf):
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 100.0

    @tf.function
    def step(x):
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
            y = f(x)
        return acc.jvp(y)

    return step(tf.constant(3.0))


def _nested_accumulators_in_function(tf):
    @tf.function
    def step(x):
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as outer:
            with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as inner:
                y = x**3
        return outer.jvp(inner.jvp(y))

    return step(tf.constant(2.0))


def _custom_gradient_with_variable_second_order(tf):
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def g(dy, variables=None):
            return dy * v * 3.0, [dy * x * 3.0]

        return x * v * 3.0, g

    x = tf.constant(1.5)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x) * x
        gx = inner.gradient(y, x)
    return gx, outer.gradient(gx, v)


@pytest.mark.parametrize(
    "body",
    [
        _jacobian_of_custom_gradient,
        _batch_jacobian_of_custom_gradient,
        _nested_custom_gradients_in_function,
        _forward_mode_custom_gradient_in_function,
        _nested_accumulators_in_function,
        _custom_gradient_with_variable_second_order,
    ],
)
def test_custom_gradients_and_accumulators_in_jacobians_and_functions(body):
    check(body, rtol=1e-5)


def _gradient_with_seed(tf, seed, dtype):
    x = tf.constant(3.0, dtype)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.gradient(y, x, output_gradients=seed)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: _gradient_with_seed(tf, 2, "float32"),
        lambda tf: _gradient_with_seed(tf, tf.constant(2.0, tf.float64), "float32"),
        lambda tf: _gradient_with_seed(tf, np.float64(2.0), "float32"),
        lambda tf: _gradient_with_seed(tf, 0.1, "float64"),
        lambda tf: _gradient_with_seed(tf, 1e39, "float32"),
    ],
)
def test_seed_dtype_errors_name_the_seed_first(body):
    raised = check_raises(body)
    expected = run(body, real_tf)
    assert raised.message.split(" [Op:")[0] == expected.message.split(" [Op:")[0]
