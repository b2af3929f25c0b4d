"""`tapeshim.function` against `tf.function`: tracing, variables, signatures, control flow, gradients."""

import numpy as np
import pytest

import tapeshim
from oracle import backend_compiles, check, check_raises, program_lowerings, real_tf


def test_values_and_tracing_count():
    def body(tf):
        @tf.function
        def f(x, y):
            return x * x + y, tf.reduce_sum(x)

        a = f(tf.constant([1.0, 2.0]), tf.constant(1.0))
        b = f(tf.constant([3.0, 4.0]), tf.constant(2.0))
        return a, b, f.experimental_get_tracing_count()

    check(body)


@pytest.mark.parametrize(
    "calls",
    [
        lambda tf: [tf.constant(1.0), tf.constant(2.0), tf.constant([1.0]), tf.constant([1.0, 2.0]), tf.constant(1)],
        lambda tf: [1, 2, 1, 2.0, 3],
        lambda tf: [tf.constant(1.0), 1.0, tf.constant(2.0), 2.0],
        lambda tf: [[tf.constant(1.0)], (tf.constant(1.0),), [tf.constant(2.0)], [tf.constant(1.0), tf.constant(1.0)]],
        lambda tf: [{"a": tf.constant(1.0)}, {"a": tf.constant(2.0)}, {"b": tf.constant(1.0)}],
    ],
)
def test_retracing_rules(calls):
    def body(tf):
        traces = []

        @tf.function
        def f(x):
            traces.append(1)  # a Python side effect: runs only while tracing
            return tf.nest.map_structure(lambda v: v * 2, x)

        results = [f(value) for value in calls(tf)]
        return results, f.experimental_get_tracing_count(), len(traces)

    check(body)


def test_retrace_reason_names_the_argument():
    @tapeshim.function
    def step(x, scale):
        return x * scale

    step(tapeshim.ones([64, 32]), 2.0)
    step(tapeshim.ones([50, 32]), 2.0)
    assert (
        tapeshim.experimental.compile_stats()["last_retrace_reason"]
        == "step retraced because argument `x` changed shape from (64, 32) to (50, 32)"
    )
    step(tapeshim.ones([50, 32]), 3.0)
    assert (
        "argument `scale` changed from the Python value 2.0 to the Python value 3.0"
        in (tapeshim.experimental.compile_stats()["last_retrace_reason"])
    )


def test_tf_print_runs_every_call(capfd):
    def body(tf):
        @tf.function
        def f(x):
            tf.print("value:", x, tf.reduce_sum(x))
            return x + 1

        for i in range(3):
            f(tf.constant([1.5, float(i), 3.0]))
        f(tf.constant(7))

    body(real_tf)
    expected = capfd.readouterr().err
    body(tapeshim)
    actual = capfd.readouterr().err
    assert [line for line in actual.splitlines() if line] == [line for line in expected.splitlines() if line]


def test_variable_reads_and_write_back():
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        counter = tf.Variable(0)

        @tf.function
        def step(x):
            v.assign_add(x)
            counter.assign_add(1)
            doubled = v * 2.0
            v.assign_sub(tf.ones([2]))
            return doubled, v.read_value()

        results = [step(tf.constant([0.5, 0.5])) for _ in range(3)]
        return results, v, counter, step.experimental_get_tracing_count()

    check(body)


def test_variable_created_on_first_call_only():
    def body(tf):
        holder = []

        @tf.function
        def f(x):
            if not holder:
                holder.append(tf.Variable(tf.ones([2]) * 3.0))
            holder[0].assign_add(x)
            return holder[0] * 1.0

        return f(tf.constant([1.0, 1.0])), f(tf.constant([1.0, 1.0])), holder[0]

    check(body)


def test_variable_created_on_a_later_trace_raises():
    def body(tf):
        @tf.function
        def f(x):
            v = tf.Variable(x)
            return v + 1.0

        try:
            f(tf.constant(1.0))
        except ValueError:
            pass  # TF refuses even here: it traces twice on the first call
        return f(tf.constant([1.0, 2.0]))

    check_raises(body)


def test_input_signature():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def f(x):
            return x * 2.0

        return f(tf.constant([1.0])), f(tf.constant([1.0, 2.0, 3.0])), f.experimental_get_tracing_count()

    check(body)


@pytest.mark.parametrize(
    "call",
    [
        lambda tf, f: f(tf.constant([1, 2])),
        lambda tf, f: f(tf.constant([[1.0]])),
        lambda tf, f: f(tf.constant([1.0]), tf.constant([1.0])),
    ],
)
def test_input_signature_rejects_incompatible_calls(call):
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def f(x):
            return x * 2.0

        return call(tf, f)

    check_raises(body)


def test_python_if_on_traced_tensor_raises():
    def body(tf):
        @tf.function(autograph=False)
        def f(x):
            if x > 0:
                return x
            return -x

        return f(tf.constant(1.0))

    raised = check_raises(body)
    assert "tf.cond" in raised.message and "line" in raised.message


def test_non_tensor_output_raises():
    def body(tf):
        @tf.function
        def f(x):
            return object()

        return f(tf.constant(1.0))

    check_raises(body)


def test_python_scalar_and_none_outputs():
    def body(tf):
        @tf.function
        def f(x):
            return {"a": x * 2, "b": None, "c": 3.0}

        return f(tf.constant(1.0))

    check(body)


def test_methods_are_bound_per_instance():
    def body(tf):
        class Model:
            def __init__(self, scale):
                self.scale = tf.Variable(scale)

            @tf.function
            def __call__(self, x):
                return x * self.scale

        a, b = Model(2.0), Model(3.0)
        results = [a(tf.constant(1.0)), b(tf.constant(1.0)), a(tf.constant(2.0))]
        return results, a.__call__.experimental_get_tracing_count(), b.__call__.experimental_get_tracing_count()

    check(body)


def test_function_inside_a_tape_is_differentiable():
    def body(tf):
        @tf.function
        def cube(x):
            return x * x * x

        x = tf.constant(2.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = cube(x)
        return y, t.gradient(y, x)

    check(body)


def test_tape_jacobian_and_nested_tapes_inside_function():
    def body(tf):
        w = tf.Variable([1.0, 2.0])

        @tf.function
        def f(x):
            with tf.GradientTape() as outer:
                with tf.GradientTape() as inner:
                    y = tf.reduce_sum(w * w * x)
                g = inner.gradient(y, w)
            return g, outer.jacobian(g, w)

        return f(tf.constant(3.0))

    check(body)


def test_training_step_matches_eager_and_tf():
    rng = np.random.default_rng(0)
    data = {k: rng.normal(size=s).astype(np.float32) for k, s in (("x", (8, 4)), ("w1", (4, 6)), ("w2", (6, 3)))}
    labels = rng.integers(0, 3, size=8).astype(np.int32)

    def run(tf, compiled):
        w1, w2 = tf.Variable(data["w1"]), tf.Variable(data["w2"])
        x, y = tf.constant(data["x"]), tf.constant(labels)

        def step():
            with tf.GradientTape() as tape:
                logits = tf.nn.relu(x @ w1) @ w2
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            g1, g2 = tape.gradient(loss, [w1, w2])
            w1.assign_sub(0.1 * g1)
            w2.assign_sub(0.1 * g2)
            return loss

        step = tf.function(step, jit_compile=True) if compiled else step
        return [step() for _ in range(5)], w1, w2

    check(lambda tf: run(tf, True), rtol=1e-5)
    eager = run(tapeshim, False)
    compiled = run(tapeshim, True)
    for a, b in zip(eager[0], compiled[0]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)


def test_steady_compiled_loop_compiles_once():
    compiles = backend_compiles()
    w = tapeshim.Variable(np.ones((4, 4), np.float32))

    @tapeshim.function
    def step(x):
        with tapeshim.GradientTape() as tape:
            loss = tapeshim.reduce_sum(tapeshim.tanh(x @ w))
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    x = tapeshim.ones([2, 4])
    warm = len(program_lowerings())  # (a program compiled before may come from the disk cache: it lowers)
    step(x)  # traced; computed on the host (interpret.py)
    for _ in range(1500):  # computed on the host, then compiled (`compile_tiers.calls_before_compile`)
        step(x)
    assert len(program_lowerings()) > warm, "the warm-up compiled the step"
    before = len(compiles)
    for _ in range(200):
        step(x)
    assert len(compiles) == before
    assert step.experimental_get_tracing_count() == 1


def test_get_concrete_function_and_python_function():
    def body(tf):
        def plain(x):
            return x + 1.0

        f = tf.function(plain)
        concrete = f.get_concrete_function(tf.constant([1.0, 2.0]))
        return f.python_function is plain, concrete(tf.constant([3.0, 4.0])), f.experimental_get_tracing_count()

    check(body)


def test_nested_functions_inline():
    def body(tf):
        @tf.function
        def inner(x):
            return x * 3.0

        @tf.function
        def outer(x):
            return inner(x) + inner(x * 2.0)

        return outer(tf.constant(1.0)), outer.experimental_get_tracing_count()

    check(body)


# -- control flow -------------------------------------------------------------------------
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("value", [2.0, -3.0])
def test_cond_with_gradients(compiled, value):
    def body(tf):
        def f(x):
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.cond(x > 0, lambda: x * x, lambda: -x * 3.0)
            return y, t.gradient(y, x)

        f = tf.function(f) if compiled else f
        return f(tf.constant(value))

    check(body)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_while_loop_with_gradients(compiled):
    def body(tf):
        def f(x, n):
            with tf.GradientTape() as t:
                t.watch(x)
                _, y = tf.while_loop(
                    lambda i, acc: i < n,
                    lambda i, acc: (i + 1, acc * x),
                    (tf.constant(0), tf.constant(1.0)),
                    maximum_iterations=10,
                )
            return y, t.gradient(y, x)

        f = tf.function(f) if compiled else f
        return f(tf.constant(1.5), tf.constant(4))

    check(body)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_while_loop_forward_without_maximum_iterations(compiled):
    def body(tf):
        def f(n):
            return tf.while_loop(
                lambda i, s: i < n, lambda i, s: (i + 1, s + tf.cast(i, tf.float32)), [tf.constant(0), tf.constant(0.0)]
            )

        f = tf.function(f) if compiled else f
        return f(tf.constant(5)), f(tf.constant(7))

    check(body)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("value", [-1.0, 0.5, 5.0])
def test_case_with_gradients(compiled, value):
    def body(tf):
        def f(x):
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * x)], default=lambda: x * 10.0)
            return y, t.gradient(y, x)

        f = tf.function(f) if compiled else f
        return f(tf.constant(value))

    check(body)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("index", [0, 1, 2, 7])
def test_switch_case_with_gradients(compiled, index):
    def body(tf):
        def f(i, x):
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.switch_case(i, [lambda: x * 2.0, lambda: x * x, lambda: tf.sin(x)])
            return y, t.gradient(y, x)

        f = tf.function(f) if compiled else f
        return f(tf.constant(index), tf.constant(1.5))

    check(body)


def test_cond_branches_must_match():
    # TF fails here with an internal AssertionError; tapeshim says what differs.
    @tapeshim.function
    def f(x):
        return tapeshim.cond(x > 0, lambda: x, lambda: (x, x))

    with pytest.raises(ValueError, match="same number, type, and overall structure"):
        f(tapeshim.constant(1.0))


def test_keyword_and_positional_calls_share_a_trace():
    def body(tf):
        @tf.function
        def f(x, scale=2.0):
            return x * scale

        results = [f(tf.constant(1.0)), f(x=tf.constant(2.0)), f(tf.constant(3.0), scale=2.0), f(tf.constant(1.0), 3.0)]
        return results, f.experimental_get_tracing_count()

    check(body)


# -- regressions found in review ---------------------------------------------------------
def test_state_stops_gradients_inside_functions():
    def body(tf):
        v = tf.Variable(1.0)
        q = tf.Variable(0.0)

        @tf.function
        def inside():
            with tf.GradientTape() as t:
                y = v * 2.0
                v.assign(y)
                z = v * 3.0
            return t.gradient(z, v)

        @tf.function
        def outside():
            v.assign(v * 2.0)
            return v * 3.0

        @tf.function
        def from_watched(x):
            q.assign(x * 2.0)
            return q * 1.0 + x

        x = tf.constant(1.0)
        first = inside()
        with tf.GradientTape() as t:
            y = outside()
        second = t.gradient(y, v)
        with tf.GradientTape() as t:
            t.watch(x)
            y = from_watched(x)
        return first, second, t.gradient(y, x)

    check(body)


def test_captured_tensors_and_unused_arguments_under_a_tape():
    def body(tf):
        x = tf.constant(2.0)
        c = tf.constant(5.0)

        @tf.function
        def captured():
            return x * x

        @tf.function
        def ignores(a):
            return c * 3.0

        a = tf.constant(1.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, a])
            y = captured()
            z = ignores(a)
        return t.gradient(y, x), t.gradient(z, a)

    check(body)


def test_variable_arguments_share_a_trace_and_state_stops_gradients():
    def body(tf):
        @tf.function
        def upd(var, x):
            var.assign_add(x)
            return var * 2.0

        @tf.function
        def read(var):
            return var * 1.0

        v1, v2 = tf.Variable(1.0), tf.Variable(10.0)
        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = upd(v1, x) + upd(v2, x)
        reads = [read(v) for v in (tf.Variable(1.0), tf.Variable(2.0), tf.Variable([1.0]), tf.Variable(3.0))]
        return y, v1, v2, t.gradient(y, [x, v1, v2]), reads, read.experimental_get_tracing_count()

    check(body)


@pytest.mark.parametrize("predicate", [lambda tf: tf.constant(1), lambda tf: tf.constant(1.0)])
def test_cond_predicate_must_be_bool_inside_function(predicate):
    def body(tf):
        @tf.function
        def f(p):
            return tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))

        return f(predicate(tf))

    check_raises(body)


def test_while_loop_gradient_after_the_loop_stops():
    def body(tf):
        @tf.function
        def f(x):
            with tf.GradientTape() as t:
                t.watch(x)
                _, y = tf.while_loop(
                    lambda i, y: y > 0.0,
                    lambda i, y: (i + 1, tf.sqrt(y) - 1.0),
                    [tf.constant(0), x],
                    maximum_iterations=10,
                )
            return y, t.gradient(y, x)

        return f(tf.constant(5.0))

    check(body, rtol=1e-5)


def test_while_loop_with_tensor_maximum_iterations():
    def body(tf):
        @tf.function
        def f(x, n):
            return tf.while_loop(
                lambda i, y: i < 100, lambda i, y: (i + 1, y * 2.0), [tf.constant(0), x], maximum_iterations=n
            )

        return f(tf.constant(1.0), tf.constant(3))

    check(body)


def test_numpy_scalars_are_tensors_and_keyword_only_defaults():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2

        @tf.function
        def kw(x, scale=2.0, *, shift=0.0):
            return x * scale + shift

        t = tf.constant(1.0)
        out = [f(2), f(np.float32(2.0)), kw(t), kw(t, 2.0), kw(x=t, scale=3.0), kw(t, shift=1.0)]
        return out, f.experimental_get_tracing_count(), kw.experimental_get_tracing_count()

    check(body)


def test_input_signature_converts_python_lists():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def f(x):
            return tf.reduce_sum(x)

        return f([1.0]), f([1.0, 2.0])

    check(body)


def test_shape_errors_while_tracing_are_value_errors():
    def body(tf):
        @tf.function
        def f(x):
            return tf.matmul(x, x)

        return f(tf.constant([1.0, 2.0]))

    check_raises(body)


def test_get_concrete_function_inside_a_trace():
    def body(tf):
        @tf.function
        def inner(x):
            return x + 1.0

        @tf.function
        def outer(x):
            inner.get_concrete_function(x)
            return x * 2.0 + 1.0

        return outer(tf.constant(1.0))

    check(body)


def test_assignment_inside_a_cond_branch():
    def body(tf):
        v = tf.Variable(0.0)

        @tf.function
        def assign_in_branch(p):
            v.assign(1.0)
            return tf.cond(p, lambda: v.assign(2.0) * 1.0, lambda: v.assign(3.0) * 1.0)

        return assign_in_branch(tf.constant(True)), v.read_value(), assign_in_branch(tf.constant(False)), v

    check(body)


def test_unsupported_constructs_say_so():
    @tapeshim.function
    def unbounded(x):
        return tapeshim.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), [tapeshim.constant(0), x])[1]

    x = tapeshim.constant(1.5)
    with tapeshim.GradientTape() as tape:
        tape.watch(x)
        y = unbounded(x)
    with pytest.raises(ValueError, match="maximum_iterations"):
        tape.gradient(y, x)


def test_first_call_creating_variables_is_traced_twice_as_tf():
    def body(tf):
        runs = []

        class Counter(tf.Module):
            def __init__(self):
                self.v = None

            @tf.function
            def __call__(self, x):
                runs.append(1)  # a Python side effect: once per trace
                if self.v is None:
                    self.v = tf.Variable(1.0)
                return self.v * x

        counter = Counter()
        results = [counter(tf.constant(2.0)), counter(tf.constant(3.0)), counter(4.0)]
        return results, len(runs), counter.__call__.experimental_get_tracing_count()

    check(body)
