"""Nested tapes whose outer tape watches a lazy tensor (a variable read after an assignment in a
`tapeshim.function`, a tensor computed under another tape), against real TensorFlow.

The inner gradient must be recorded on the outer tape with that tensor as its input, so the
outer gradient flows through it: a second training step in one function call, and a watched
lazy tensor eagerly, gave `None` before.
"""

import pytest

from oracle import check


def _step_body(persistent, two_variables, in_function, iterations=2):
    """A body that runs `iterations` steps of {inner gradient, outer gradient of a loss of it, assign_sub}."""

    def body(tf):
        w = tf.Variable(2.0)
        v = tf.Variable(0.5)
        x = tf.constant(3.0)
        grads = []

        def step():
            loss = None
            for _ in range(iterations):
                with tf.GradientTape(persistent=persistent) as tape:
                    with tf.GradientTape() as inner:
                        inner.watch(x)
                        y = w * x * x + (v * v * x if two_variables else 0.0)
                    g = inner.gradient(y, x)  # 2 w x (+ v v)
                    loss = g * g
                variables = [w, v] if two_variables else [w]
                dw = tape.gradient(loss, variables)
                grads.append(dw)
                for variable, d in zip(variables, dw):
                    variable.assign_sub(0.01 * d)
                if persistent:
                    grads.append(tape.gradient(g, variables))
            return loss

        run = tf.function(step) if in_function else step
        losses = [run() for _ in range(2)]
        if in_function:  # the gradients of the traced calls are graph tensors: compare what came out
            grads = []
        return losses, grads, w.read_value(), v.read_value()

    return body


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("persistent", [False, True], ids=["one_shot", "persistent"])
@pytest.mark.parametrize("two_variables", [False, True], ids=["one_variable", "two_variables"])
def test_two_steps_of_gradient_of_gradient(in_function, persistent, two_variables):
    check(_step_body(persistent, two_variables, in_function))


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
def test_three_steps_in_one_call(in_function):
    check(_step_body(False, True, in_function, iterations=3))


def test_issue_repro_in_function():
    def body(tf):
        w = tf.Variable(2.0)
        x = tf.constant(3.0)

        @tf.function
        def step():
            for _ in range(2):
                with tf.GradientTape() as tape:
                    with tf.GradientTape() as inner:
                        inner.watch(x)
                        y = w * x * x
                    g = inner.gradient(y, x)
                    loss = g * g
                w.assign_sub(0.01 * tape.gradient(loss, w))
            return loss

        return [step() for _ in range(3)], w.read_value()

    check(body)


def test_gradients_returned_from_function_after_assign():
    """The outer gradient after an assignment in the same call, returned from the function."""

    def body(tf):
        w = tf.Variable(2.0)
        v = tf.Variable([1.0, -2.0])
        x = tf.constant([3.0, 0.5])

        @tf.function
        def step():
            w.assign(w * 1.5)
            v.assign_add(tf.ones([2]))
            with tf.GradientTape(persistent=True) as tape:
                with tf.GradientTape() as inner:
                    inner.watch(x)
                    y = tf.reduce_sum(w * x * x + tf.sin(v * x))
                g = inner.gradient(y, x)
                loss = tf.reduce_sum(g * g)
            return loss, tape.gradient(loss, [w, v]), tape.gradient(g, w)

        return step(), step()

    check(body)


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
def test_outer_tape_watches_lazy_tensor(in_function):
    """Plain ops: the outer tape watches a tensor computed (lazily) under another tape."""

    def body(tf):
        x = tf.constant(3.0)
        z = tf.constant(5.0)

        def compute():
            with tf.GradientTape() as first:
                first.watch(x)
                a = x * 2.0
            with tf.GradientTape() as outer:
                outer.watch(a)
                with tf.GradientTape() as inner:
                    inner.watch(z)
                    y = a * a * z
                g = inner.gradient(y, z)  # a * a
            return g, outer.gradient(g, a), first.gradient(a, x)

        return (tf.function(compute) if in_function else compute)()

    check(body)


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
def test_persistent_tape_inside_its_context_watches_lazy_tensor(in_function):
    """A persistent tape takes a gradient inside its context (recorded on itself) of a lazy watched tensor."""

    def body(tf):
        x = tf.constant(3.0)

        def compute():
            with tf.GradientTape() as first:
                first.watch(x)
                a = tf.exp(x * 0.5)
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(a)
                y = a * a * a
                g = tape.gradient(y, a)  # 3 a^2
            return g, tape.gradient(g, a), first.gradient(a, x)

        return (tf.function(compute) if in_function else compute)()

    check(body)


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
def test_forward_accumulator_over_inner_gradient_of_lazy_primal(in_function):
    """Forward over backward where the accumulator's primal is a lazy tensor."""

    def body(tf):
        x = tf.constant(3.0)

        def compute():
            with tf.GradientTape() as first:
                first.watch(x)
                a = x * x
            with tf.autodiff.ForwardAccumulator(a, tf.constant(1.0)) as acc:
                with tf.GradientTape() as inner:
                    inner.watch(a)
                    y = a * a * a
                g = inner.gradient(y, a)  # 3 a^2
            return g, acc.jvp(g), first.gradient(a, x)

        return (tf.function(compute) if in_function else compute)()

    check(body)


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
def test_outer_tape_watches_one_output_of_a_lazy_multi_output_op(in_function):
    """The outer tape watches one output of a lazy split; the inner tape uses both outputs."""

    def body(tf):
        x = tf.constant([3.0, 4.0])
        z = tf.constant(5.0)

        def compute():
            with tf.GradientTape() as first:
                first.watch(x)
                a, b = tf.split(x * 2.0, 2)
            with tf.GradientTape() as outer:
                outer.watch(b)
                with tf.GradientTape() as inner:
                    inner.watch(z)
                    y = z * a * b * b
                g = inner.gradient(y, z)  # a b^2
            return g, outer.gradient(g, b), first.gradient(a, x)

        return (tf.function(compute) if in_function else compute)()

    check(body)


def test_a_tape_around_a_branch_reading_a_variable_the_loop_assigns():
    def body(tf):
        w = tf.Variable(1.0)

        @tf.function
        def with_if(n):
            for step in tf.range(n):
                with tf.GradientTape() as tape:
                    loss = w * w
                    if step > 0:
                        loss += 0.1 * w
                w.assign_sub(0.1 * tape.gradient(loss, w))
            return w.read_value()

        @tf.function
        def with_cond(n):
            for step in tf.range(n):
                with tf.GradientTape() as tape:
                    loss = tf.cond(step > 0, lambda: w * w + 0.1 * w, lambda: w * w)
                w.assign_sub(0.1 * tape.gradient(loss, w))
            return w.read_value()

        @tf.function
        def after_an_assign(x):
            w.assign(x)
            with tf.GradientTape() as tape:
                loss = tf.cond(x > 0.0, lambda: w * w * 3.0, lambda: w)
                loss += w
            return tape.gradient(loss, w)

        first = with_if(tf.constant(3))
        w.assign(1.0)
        second = with_cond(tf.constant(3))
        return first, second, after_an_assign(tf.constant(2.0)), after_an_assign(tf.constant(-1.0))

    check(body)
