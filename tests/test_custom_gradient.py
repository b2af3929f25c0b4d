"""`tf.custom_gradient` (section 9) against real TensorFlow, and JAX functions as tapeshim ops."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeshim
from oracle import check, check_printed, check_raises


def _clip(tf):
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)

        return y, backward

    return clip_gradients


def test_guide_clip_gradients_and_forward_only():
    def body(tf):
        clip = _clip(tf)
        v = tf.Variable(2.0)
        with tf.GradientTape() as t:
            out = clip(v * v)
        w = tf.Variable([3.0, 4.0])
        with tf.GradientTape() as t2:
            out2 = clip(w * 2.0)
        return t.gradient(out, v), t2.gradient(out2, w), clip(tf.constant(6.0))

    check(body)


def test_log1pexp_is_stable():
    def body(tf):
        @tf.custom_gradient
        def log1pexp(x):
            e = tf.exp(x)

            def grad(upstream):
                return upstream * (1 - 1 / (1 + e))

            return tf.math.log(1 + e), grad

        x = tf.constant(100.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = log1pexp(x)
        return y, t.gradient(y, x)

    check(body)


def test_none_gradient_and_keyword_arguments():
    def body(tf):
        @tf.custom_gradient
        def f(x, y, scale=1.0):
            def grad(dz):
                return dz * 10.0, None

            return x * y * scale, grad

        x, y = tf.constant(2.0), tf.constant(3.0)
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = f(x, y, scale=tf.constant(2.0))
        return t.gradient(z, [x, y])

    check(body)


def test_python_scalar_argument_needs_a_slot():
    def body(tf):
        @tf.custom_gradient
        def f(x, k):
            def grad(dz):
                return dz * k, None

            return x * k, grad

        x = tf.constant(2.0)
        with tf.GradientTape() as t:
            t.watch(x)
            z = f(x, 3.0)
        return t.gradient(z, x)

    check(body)


@pytest.mark.parametrize("returned", [lambda tf, dz: [dz], lambda tf, dz: []])
def test_wrong_number_of_gradients(returned):
    def body(tf):
        @tf.custom_gradient
        def f(x, y):
            def grad(dz):
                return returned(tf, dz)

            return x * y, grad

        x, y = tf.constant(2.0), tf.constant(3.0)
        with tf.GradientTape() as t:
            t.watch([x, y])
            z = f(x, y)
        return t.gradient(z, [x, y])

    def single(tf):
        @tf.custom_gradient
        def f(x):
            def grad(dz):
                return returned(tf, dz) if returned(tf, dz) else []

            return x * 2.0, grad

        x = tf.constant(2.0)
        with tf.GradientTape() as t:
            t.watch(x)
            z = f(x)
        return t.gradient(z, x)

    check_raises(body, messages=True)


def test_exception_in_grad_fn_propagates():
    def body(tf):
        @tf.custom_gradient
        def f(x):
            def grad(dz):
                raise RuntimeError("boom")

            return x * 2.0, grad

        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            z = f(x)
        return t.gradient(z, x)

    raised = check_raises(body, messages=True)
    assert raised.message == "boom"


def test_variables_protocol():
    def body(tf):
        weights = [tf.Variable(1.0), tf.Variable(2.0)]

        @tf.custom_gradient
        def linear_poly(x):
            poly = weights[1] * x + weights[0]

            def grad_fn(dpoly, variables):
                grad_vars = [tf.reduce_sum(dpoly * x) if v is weights[1] else tf.reduce_sum(dpoly) for v in variables]
                return dpoly * weights[1], grad_vars

            return poly, grad_fn

        x = tf.constant([1.0, 2.0, 3.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            poly = linear_poly(x)
        return poly, tape.gradient(poly, x), tape.gradient(poly, weights)

    check(body)


def test_variables_without_variables_parameter_raises_at_forward():
    def body(tf):
        v = tf.Variable(2.0)

        @tf.custom_gradient
        def f(x):
            def grad(dz):
                return dz

            return x * v, grad

        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            return f(x)

    check_raises(body)


def test_multiple_outputs():
    def body(tf):
        @tf.custom_gradient
        def f(x):
            def grad(da, db):
                return da + 100.0 * db

            return [x * 1.0, x * 2.0], grad

        x = tf.constant(1.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            a, b = f(x)
            pair = f(x)
        return t.gradient(a, x), t.gradient(b, x), t.gradient([a, b], x), type(pair).__name__

    check(body)


def test_second_order_through_grad_fn():
    def body(tf):
        @tf.custom_gradient
        def cube(x):
            def grad(dy):
                return dy * 3.0 * x * x

            return x * x * x, grad

        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = cube(x)
            g = inner.gradient(y, x)
        return g, outer.gradient(g, x)

    check(body)


def test_custom_gradient_inside_function():
    def body(tf):
        clip = _clip(tf)
        v = tf.Variable(2.0)

        @tf.function
        def step():
            with tf.GradientTape() as t:
                out = clip(v * v)
            return t.gradient(out, v)

        return step(), step()

    check(body)


def test_jax_op_on_the_tape():
    softplus = tapeshim.experimental.jax_op(lambda x: jnp.logaddexp(x, 0.0), name="Softplus")
    split = tapeshim.experimental.jax_op(lambda x: (x * 2.0, jnp.sin(x)))
    x = tapeshim.constant([0.5, -1.0])
    with tapeshim.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = softplus(x)
        a, b = split(y)
        total = tapeshim.reduce_sum(a + b)
    expected = jax.grad(lambda z: jnp.sum(2 * jnp.logaddexp(z, 0.0) + jnp.sin(jnp.logaddexp(z, 0.0))))(
        jnp.asarray([0.5, -1.0])
    )
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), expected, rtol=1e-6)
    assert isinstance(y, tapeshim.Tensor) and isinstance(a, tapeshim.Tensor)
    blocked = tapeshim.experimental.jax_op(jnp.floor, differentiable=False)
    with tapeshim.GradientTape() as tape:
        tape.watch(x)
        z = blocked(x)
    assert tape.gradient(z, x) is None


def test_forward_mode_through_custom_gradient_whose_forward_takes_sqrt():
    # tf.sqrt's kernel holds a reverse-mode-only gradient rule; inside a forward-mode program the
    # eager kernel must be traced afresh, not reused from a reverse-mode trace.
    def body(tf):
        x = tf.constant([4.0, 9.0])

        @tf.custom_gradient
        def f(x):
            y = tf.sqrt(x)
            return y, lambda dy: dy * 0.5 / y

        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
            y = f(x)
        return y, acc.jvp(y)

    check(body)


class _Layer:
    """Holds the variable a custom-gradient function reads (keyed by identity, so it can be switched)."""

    def __init__(self, variable):
        self.kernel = variable


def test_repeated_calls_run_the_forward_once_each_and_match_tf():
    # Calls after the first that compute the same thing run the forward lazily on the tensors (no JAX trace);
    # a call reading another variable, or one whose forward hands a value to Python, is traced again.
    def body(tf):
        runs = _Layer(None)
        runs.count = 0
        first, second = tf.Variable([1.0, -2.0, 3.0]), tf.Variable([0.5, 0.25, -4.0])
        layer = _Layer(first)

        @tf.custom_gradient
        def scaled(x):
            runs.count += 1
            y = x * layer.kernel

            def grad_fn(upstream, variables):
                return upstream * layer.kernel, [tf.clip_by_value(upstream * x, -1.0, 1.0)]

            return tf.tanh(y), grad_fn

        @tf.custom_gradient
        def noisy(x):
            scale = float(tf.reduce_max(tf.abs(x)).numpy())  # leaves the tape on every call

            def grad_fn(upstream):
                return upstream * scale

            return x * 2.0, grad_fn

        w = tf.Variable([0.3, -0.7, 1.1])
        results = []
        for step in range(6):
            if step == 4:
                layer.kernel = second
            with tf.GradientTape() as tape:
                x = w * float(step % 2 + 1)
                loss = tf.reduce_sum(scaled(x)) + tf.reduce_sum(noisy(x * x))
            results.append((loss, tape.gradient(loss, [w, first, second])))
        assert runs.count >= 6
        return results

    check(body)


def test_repeated_calls_keep_python_side_effects_per_call():
    def body(tf):
        seen = _Layer(None)
        seen.shapes = []

        @tf.custom_gradient
        def double(x):
            seen.shapes.append(tuple(x.shape))

            def grad_fn(upstream):
                return upstream * 2.0

            return x * 2.0, grad_fn

        w = tf.Variable(np.ones((2, 3), np.float32))
        grads = []
        for _ in range(4):
            with tf.GradientTape() as tape:
                y = double(w * 3.0)
            grads.append(tape.gradient(y, w))
        return grads, seen.shapes[:4]

    check(body)


def _noisy(tf):
    @tf.custom_gradient
    def noisy(x):
        noise = tf.random.uniform(tf.shape(x))

        def grad_fn(upstream):
            return upstream * noise

        return x * noise, grad_fn

    return noisy


def test_random_ops_in_the_forward_draw_once_per_call_for_both_passes():
    # The forward's random numbers are the ones its grad_fn sees, and every call draws new ones: eagerly,
    # in a function and with no tape (random streams differ from TF's, so only these facts are compared).
    def body(tf):
        tf.random.set_seed(7)
        noisy = _noisy(tf)
        x = tf.Variable([1.0, 2.0, 3.0])

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                y = noisy(x)
            return y, tape.gradient(y, x)

        facts = []
        for run in (lambda: None, step):
            grads = []
            for _ in range(3):
                if run() is None:
                    with tf.GradientTape() as tape:
                        y = noisy(x)
                    grad = tape.gradient(y, x)
                else:
                    y, grad = run()
                facts.append(bool(np.allclose(y.numpy(), grad.numpy() * x.numpy())))
                grads.append(grad.numpy())
            facts.append(not np.allclose(grads[0], grads[1]) and not np.allclose(grads[1], grads[2]))
        facts.append(not np.allclose(noisy(x).numpy(), noisy(x).numpy()))
        return facts

    check(body)


def _counting(tf, counter):
    @tf.custom_gradient
    def counting(x):
        counter.assign_add(1.0)

        def grad_fn(upstream, variables=None):
            return upstream * 3.0, [None] * len(variables)

        return x * 3.0 + counter, grad_fn

    return counting


def test_assignments_in_the_forward_happen_once_per_call():
    # TF runs the forward once per call: the assignment happens once, the variable counts as read (grad_fn
    # gets it in `variables`), and the output sees the new value. Eagerly, under a tape that tracks the call
    # and one that does not, and in a function.
    def body(tf):
        counter = tf.Variable(0.0)
        counting = _counting(tf, counter)
        x = tf.Variable([1.0, 2.0])
        results = []
        for _ in range(3):
            with tf.GradientTape() as tape:
                y = counting(x)
                unwatched = counting(tf.constant([5.0, 6.0]))
            results.append((y, unwatched, tape.gradient(y, x), counter.read_value()))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                y = counting(x)
            return y, tape.gradient(y, x)

        for _ in range(3):
            results.append((step(), counter.read_value()))
        results.append((counting(x), counter.read_value()))
        return results

    check(body)


def test_an_assignment_that_reads_its_value_is_watched():
    def body(tf):
        added, assigned, quiet = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
        with tf.GradientTape() as tape:
            added.assign_add(1.0)
            assigned.assign(5.0)
            quiet.assign_sub(1.0, read_value=False)
        return [v.numpy() for v in tape.watched_variables()]

    check(body)


def test_assigning_a_keras_variable_inside_a_layers_custom_gradient_is_a_clear_error():
    # (TF assigns it; tapeshim would have to route Keras's own StatelessScope writes out of the recorded op.)
    tf = tapeshim

    class Counting(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.calls = self.add_weight(shape=(), initializer="zeros", trainable=False)

        def call(self, x):
            @tf.custom_gradient
            def count(x):
                self.calls.assign_add(1.0)
                return x * 3.0, lambda upstream, variables=None: upstream * 3.0

            return count(x)

    with pytest.raises(NotImplementedError, match="Keras variables"):
        Counting()(tf.constant([1.0, 2.0]))


def test_assignments_that_tf_does_not_watch_run_once_and_need_no_variables_parameter():
    # An assignment with read_value=False, and any assignment of a non-trainable variable, are not accesses
    # TF's variable watcher sees: grad_fn needs no `variables` parameter, and the assignment still happens once.
    def body(tf):
        quiet, frozen = tf.Variable(0.0), tf.Variable(0.0, trainable=False)

        @tf.custom_gradient
        def counted(x):
            quiet.assign_add(1.0, read_value=False)
            frozen.assign_add(1.0)
            return x * 3.0, lambda upstream: upstream * 2.0

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = counted(x)
            return y, tape.gradient(y, x)

        x = tf.constant([1.0, 2.0])
        results = []
        for _ in range(2):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = counted(x)
            results.append((y, tape.gradient(y, x), quiet.read_value(), frozen.read_value()))
            results.append((step(x), quiet.read_value(), frozen.read_value()))
        return results

    check(body)


def test_a_generator_in_the_forward_draws_once_per_call_for_both_passes():
    def body(tf):
        generator = tf.random.Generator.from_seed(1)

        @tf.custom_gradient
        def noisy(x):
            noise = generator.uniform([2])
            return x * noise, lambda upstream: upstream * noise

        x = tf.constant([1.0, 2.0])
        facts, grads = [], []
        for _ in range(3):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = noisy(x)
            grad = tape.gradient(y, x)
            facts.append(bool(np.allclose(y.numpy(), grad.numpy() * x.numpy())))
            grads.append(grad.numpy())
        facts.append(not np.allclose(grads[0], grads[1]))
        return facts

    check(body)


def test_an_attribute_the_function_reads_that_changes_between_calls_changes_its_values():
    # A gradient reversal layer whose lambda a schedule raises each step, read as an object's attribute: each
    # call computes with the attribute's value at that call, forward and gradient, as TF's eager run does
    # (the recorded op's key once held the object by identity only, and every call reused the first value).
    def body(tf):
        class Schedule:
            def __init__(self):
                self.rate = 2.0
                self.name = "reversal"

        schedule = Schedule()

        class Reversal:
            def __init__(self):
                self.lam = 0.5

            def __call__(self, x):
                @tf.custom_gradient
                def reverse(x):
                    def grad(dy):
                        return -self.lam * dy

                    return x * schedule.rate, grad

                return reverse(x)

        layer = Reversal()
        x = tf.constant([1.0, -2.0])
        results = []
        for _ in range(4):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = layer(x)
            results.append((y, tape.gradient(y, x)))
            schedule.rate += 1.0
            layer.lam *= 2.0
        return results

    check(body)


def test_state_that_changes_after_the_call_does_not_change_its_outputs():
    # TF runs the forward at the call: a Python value it reads there, and a tensor a global list holds, are
    # the call's, even when they change before the lazy output is read (the recorded op once ran the forward
    # again then, with the later values). grad_fn runs at the gradient in TF, and reads its state there.
    def body(tf):
        state = {"scale": 2.0, "slope": 1.0}
        holder = [tf.constant(2.0)]

        @tf.custom_gradient
        def scaled(x):
            def grad(dy):
                return dy * state["slope"]

            return x * state["scale"], grad

        @tf.custom_gradient
        def held(x):
            s = holder[0]
            return x * s, lambda dy: dy

        x = tf.constant([3.0, -1.0])
        results = []
        for _ in range(3):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = scaled(x)
                z = held(x)
            state["scale"] += 1.0
            state["slope"] += 2.0
            holder[0] = holder[0] + 1.0
            results.append((y, z, tape.gradient(y, x), tape.gradient(z, x)))
        return results

    check(body)


def test_an_integer_output_gets_a_zero_upstream_of_its_dtype():
    # TF hands grad_fn a zero of an integer output's dtype as its upstream; JAX's cotangent there is float0
    # (tapeshim crashed turning it into a tensor).
    def body(tf):
        upstream_dtypes = []

        @tf.custom_gradient
        def f(x):
            def grad(dy, dn):
                upstream_dtypes.append(dn.dtype.name)
                return dy * 7.0 + tf.cast(dn, tf.float32)

            return (x * 2.0, tf.constant([3, 4], tf.int32)), grad

        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y, n = f(x)
        return tape.gradient(y, x), n, upstream_dtypes[-1]

    check(body)


def test_random_ops_in_grad_fn_draw_new_numbers_at_every_gradient():
    def body(tf):
        tf.random.set_seed(3)

        @tf.custom_gradient
        def gradient_noise(x):
            def grad(upstream):
                return upstream + tf.random.normal(tf.shape(upstream), stddev=0.1)

            return tf.identity(x), grad

        x = tf.Variable([1.0, 2.0])

        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(gradient_noise(x * 1.0))
            return tape.gradient(loss, x)

        eager = [step().numpy() for _ in range(4)]
        traced = tf.function(step)
        in_function = [traced().numpy() for _ in range(3)]
        facts = []
        for grads in (eager, in_function):
            facts.append(len({g.tobytes() for g in grads}) == len(grads))  # new noise at every gradient
            facts.append(all(g.shape == (2,) and bool(np.all(np.abs(g - 1.0) < 1.0)) for g in grads))
        return facts, traced.experimental_get_tracing_count()

    check(body)


def test_tf_print_in_grad_fn_prints_at_every_gradient(capfd):
    def body(tf):
        @tf.custom_gradient
        def shown(x):
            def grad(upstream):
                tf.print("upstream", upstream)
                tf.print("doubled", upstream * 2.0)
                return upstream * 2.0

            return x * 1.0, grad

        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(shown(x) * 3.0)
            return tape.gradient(loss, x)

        x = tf.constant([1.0, 2.0])
        eager = [step(x).numpy() for _ in range(2)]
        return eager, tf.function(step)(x)

    check_printed(body, capfd)


def test_grad_fn_reading_a_value_in_python_raises_a_clear_error():
    import tapeshim as tf

    @tf.custom_gradient
    def read(x):
        def grad(upstream):
            return upstream * float(upstream.numpy().sum())

        return x * 1.0, grad

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(read(x))
    with pytest.raises(NotImplementedError, match="grad_fn handed a tensor's value to Python"):
        tape.gradient(loss, x)


def test_grad_fn_returning_none_for_a_variable_leaves_it_unconnected():
    # TF: a variable whose grad_fn gradient is None gets None from the tape (unless another path reaches it),
    # eagerly (first and later calls: traced, then run lazily), persistent tapes, in a function, in a layer.
    def body(tf):
        v, w = tf.Variable(2.0), tf.Variable([5.0, 6.0])
        x = tf.constant([3.0, 4.0])

        @tf.custom_gradient
        def f(x):
            y = x * v * w

            def grad(dy, variables):
                return dy * v, [None, dy * 7.0]

            return y, grad

        results = []
        for _ in range(3):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = f(x)
                z = y + v
            results += [tape.gradient(y, [x, v, w]), tape.gradient(z, [x, v, w])]

        @tf.function
        def in_function():
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            return tape.gradient(y, [x, v, w])

        class Scaled(tf.Module):
            def __init__(self):
                self.kernel = tf.Variable([1.5, -0.5])
                self.bias = tf.Variable(0.25)

            def __call__(self, x):
                @tf.custom_gradient
                def scaled(x):
                    def grad(dy, variables):
                        return dy * self.kernel, [dy * x, None]

                    return x * self.kernel + self.bias, grad

                return scaled(x)

        layer = Scaled()
        with tf.GradientTape() as tape:
            out = tf.reduce_sum(layer(x) ** 2)
        results.append(tape.gradient(out, layer.trainable_variables))
        return results, in_function(), in_function()

    check(body)


def test_none_variable_gradients_follow_the_variables_order_first_calls_and_forward_mode():
    # grad_fn's `variables` come in the op's order (a write before the reads); a first call whose inputs are
    # all cut records nothing of f; a forward accumulator still differentiates the forward's ops (TF: 4.5)
    def body(tf):
        v, w = tf.Variable(2.0), tf.Variable(3.0)
        x = tf.constant(1.5)

        @tf.custom_gradient
        def f(x):
            w.assign(3.0, read_value=False)
            y = x * v * w

            def grad(dy, variables):
                return dy, [None if var is v else dy * 10.0 for var in variables]

            return y, grad

        @tf.custom_gradient
        def g(x):
            y = x * v * 3.0

            def grad(dy, variables):
                return dy * 6.0, [None]

            return y, grad

        ordered = []
        for _ in range(2):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            ordered.append(tape.gradient(y, [x, v, w]))
        cut = []
        for _ in range(2):
            with tf.GradientTape() as tape:
                y = g(x)
            cut.append(tape.gradient(y, v))
        with tf.autodiff.ForwardAccumulator(v, tf.constant(1.0)) as accumulator:
            y = g(x)
        return ordered, cut, accumulator.jvp(y)

    check(body)


def test_a_first_gradient_traces_no_kernel_of_the_custom_op():
    # The per-op tier computes a custom gradient's first gradient on the host from the traces its call made (its
    # forward, at the call) and its gradient made before it traced anything else (its backward): no kernel of the
    # op is traced. Traced inside the gradient, the backward found none of its ops' traces in JAX's cache (another
    # trace context there) and traced each again.
    traced: list = []

    def listener(event: str, duration: float, **kwargs) -> None:
        if event == "/jax/core/compile/jaxpr_trace_duration":
            traced.append(kwargs.get("fun_name"))

    @tapeshim.custom_gradient
    def clipped(x):
        def grad_fn(upstream):
            return tapeshim.clip_by_value(upstream, -0.5, 0.5) * 2.0

        return tapeshim.identity(x) * 3.0, grad_fn

    w = tapeshim.Variable(np.arange(-3.0, 4.0, dtype=np.float32).reshape(7, 1))
    runs = tapeshim_replay_eager().stats["per_op_runs"]
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        with tapeshim.GradientTape() as tape:
            x = w
            for _ in range(70):  # (a plan too long to compile at its first sighting: it runs per op)
                x = x * 1.0
            loss = tapeshim.reduce_sum(clipped(x))
        gradient = tape.gradient(loss, w)
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    np.testing.assert_allclose(gradient.numpy(), np.ones((7, 1), np.float32))
    assert tapeshim_replay_eager().stats["per_op_runs"] > runs  # (the per-op tier served it)
    assert "node_fn" not in traced and "vjp" not in traced, traced


def tapeshim_replay_eager():
    from tapeshim._src import replay_eager

    return replay_eager


def test_first_gradients_on_the_host_with_two_outputs_and_a_variable():
    # The per-op tier's host kernels of a custom gradient (its pinned forward, its backward's trace): an output
    # without a cotangent (the backward's trace takes them all: the op's VJP is traced), and a variable the
    # forward reads (an input of the op whose gradient grad_fn returns), over steps of a plan long enough to run
    # per op at its first sighting.
    def body(tf):
        scale = tf.Variable([[0.5], [2.0], [-1.0]])

        @tf.custom_gradient
        def split(x):
            y = x * scale

            def grad_fn(up_first, up_second, variables):
                return up_first * 2.0 + up_second, [tf.reduce_sum(up_first * x, axis=1, keepdims=True)]

            return (tf.tanh(y), y * y), grad_fn

        w = tf.Variable(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4))
        results = []
        for step in range(3):
            with tf.GradientTape(persistent=True) as tape:
                x = w
                for _ in range(70):
                    x = x * 1.0
                first, second = split(x)
                loss_first = tf.reduce_sum(first)
                loss_both = loss_first + tf.reduce_sum(second) * float(step + 1)
            results.append((tape.gradient(loss_first, [w, scale]), tape.gradient(loss_both, [w, scale])))
            w.assign_sub(0.1 * results[-1][1][0])
        return results

    check(body)


@pytest.fixture
def compiled_tier(monkeypatch):
    """Gradients run compiled programs (`replay.compile_now`): what a new program's trace does. (The per-op tier
    shares one trace of a call's VJP among the calls computing the same thing, as before: a variable only grad_fn
    reads, a key it draws, are those of the first trace there.)"""
    from tapeshim._src import replay

    monkeypatch.setattr(replay, "compile_now", lambda key, plan, extends=None: True)


def test_grad_fn_reads_its_state_when_a_new_program_differentiates_the_call(compiled_tier):
    # A new gradient program traces each call's backward afresh: a variable only grad_fn reads, assigned between
    # gradients, is read at the gradient, as TF runs grad_fn there (a trace shared by every call computing the
    # same thing gave the first gradient's value for good). (A program that repeats keeps the value its trace
    # read, as before.)
    def body(tf):
        scale = tf.Variable(1.0, trainable=False)

        @tf.custom_gradient
        def f(x):
            return x * 2.0, lambda dy: dy * scale

        x = tf.constant(3.0)
        results = []
        for then in (tf.identity, lambda y: y * 3.0, lambda y: tf.sin(y) + y):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = then(f(x))
            results.append(tape.gradient(y, x))
            scale.assign(scale * 5.0)
        return results

    check(body)


def test_grad_fn_runs_where_a_gradient_reaches_the_call(compiled_tier):
    # TF calls grad_fn where its upstream gradient is a tensor (through tf.sign: zeros), not where it is None
    # (through an integer cast).
    def body(tf):
        runs = []

        @tf.custom_gradient
        def f(x):
            def grad_fn(dy):
                runs.append(1)
                return dy

            return x * 2.0, grad_fn

        x = tf.constant([3.0, 4.0])
        with tf.GradientTape() as tape:  # (tapeshim's first call probes grad_fn's None pattern: not counted)
            tape.watch(x)
            f(x)
        counts = []
        for through in (lambda y: tf.cast(tf.cast(y, tf.int32), tf.float32), tf.sign, tf.identity):
            runs.clear()
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(through(f(x))) + tf.reduce_sum(x)
            gradient = tape.gradient(loss, x)
            counts.append((gradient, len(runs)))
        return counts

    check(body)


def test_calls_in_one_gradient_draw_their_own_numbers_in_grad_fn(compiled_tier):
    tapeshim.random.set_seed(0)

    @tapeshim.custom_gradient
    def f(x):
        return x * 2.0, lambda dy: dy * tapeshim.random.uniform([])

    a, b = tapeshim.constant(3.0), tapeshim.constant(4.0)
    with tapeshim.GradientTape() as tape:
        tape.watch([a, b])
        y = f(a) + f(b)
    first, second = tape.gradient(y, [a, b])
    assert first.numpy() != second.numpy()


def test_a_variable_gradient_of_another_shape_raises_on_the_host_tier_too():
    # The per-op tier's host backward keeps JAX's check of grad_fn's gradients (a custom_vjp rule's outputs must
    # have its inputs' types), where it handed back a tensor whose shape was not its value's. (TF hands the [1, 4]
    # gradient back as it is; tapeshim raises in both tiers, as its compiled program always did.)
    scale = tapeshim.Variable([[0.5], [2.0], [-1.0]])

    @tapeshim.custom_gradient
    def split(x):
        def grad_fn(upstream, variables):
            return upstream * 2.0, [tapeshim.reduce_sum(upstream * x, axis=0, keepdims=True)]

        return tapeshim.tanh(x * scale), grad_fn

    w = tapeshim.Variable(np.ones((3, 4), np.float32))
    with tapeshim.GradientTape() as tape:
        x = w
        for _ in range(70):  # (a plan run per op at its first sighting)
            x = x * 1.0
        loss = tapeshim.reduce_sum(split(x))
    with pytest.raises(ValueError, match="Custom VJP bwd rule"):
        tape.gradient(loss, [w, scale])
