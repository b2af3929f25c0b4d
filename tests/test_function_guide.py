"""TF's guide "Better performance with tf.function" (tensorflow/docs, site/en/guide/function.ipynb), cell by cell.

Each test is one cell (or a few that build on each other), written as a body of the module
and run with real TensorFlow and with tapeshim: the returned values, what the cell prints
(Python `print`s, which show when tracing happens, and `tf.print`s, which show each call)
and the errors it expects must match. Cells with string tensors and Keras optimizers are left
out.
"""

import contextlib
import re

import numpy as np
import pytest

import tapeshim
from oracle import TOLERANCE, assert_same, describe, real_tf, run, uniform

_LOG_LINE = re.compile(r"^([WIE]\d{4} |WARNING|.*cpu_feature_guard|.*oneDNN|.*rebuild TensorFlow)")


def _lines(text):
    return [line for line in text.splitlines() if line.strip() and not _LOG_LINE.match(line)]


def _run_with_output(body, capfd):
    """`body` run with TF and with tapeshim: per module, its described result, printed lines and tf.print lines."""
    outcomes = []
    for module in (real_tf, tapeshim):
        capfd.readouterr()
        result = run(body, module)
        captured = capfd.readouterr()
        outcomes.append((describe(result), _lines(captured.out), _lines(captured.err)))
    return outcomes


def guide_cell(body, capfd, compare_stdout=True):
    """Runs `body` with TF and tapeshim; results, printed lines and tf.print lines must match."""
    outcomes = _run_with_output(body, capfd)
    (expected, tf_out, tf_err), (actual, ts_out, ts_err) = outcomes
    assert_same(expected, actual)
    if compare_stdout:
        assert ts_out == tf_out, f"printed lines differ:\nTF:       {tf_out}\ntapeshim: {ts_out}"
    assert ts_err == tf_err, f"tf.print lines differ:\nTF:       {tf_err}\ntapeshim: {ts_err}"
    return outcomes


@contextlib.contextmanager
def assert_raises(error_class):
    """The guide's helper, printing the expected class's name (not its module path)."""
    try:
        yield
    except error_class:
        print(f"Caught expected exception {error_class.__name__}")
    else:
        raise Exception(f"Expected {error_class} to be raised but no error was raised!")


# -- Basics ------------------------------------------------------------------------------
def test_usage_add_gradient_and_nesting(capfd):
    def body(tf):
        @tf.function
        def add(a, b):
            return a + b

        first = add(tf.ones([2, 2]), tf.ones([2, 2]))
        v = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            result = add(v, 1.0)
        grad = tape.gradient(result, v)

        @tf.function
        def dense_layer(x, w, b):
            return add(tf.matmul(x, w), b)

        return first, grad, dense_layer(tf.ones([3, 2]), tf.ones([2, 2]), tf.ones([2]))

    guide_cell(body, capfd)


# -- Tracing -----------------------------------------------------------------------------
def test_tracing_prints_once_per_signature(capfd):
    # The guide's cell traces int32, float32 and string tensors; tapeshim has no string tensors, so
    # the third type here is float64.
    def body(tf):
        @tf.function
        def double(a):
            print("Tracing with", a)
            return a + a

        print(double(tf.constant(1)))
        print()
        print(double(tf.constant(1.1)))
        print()
        print(double(tf.constant(1.5, tf.float64)))
        print()
        print(double(tf.constant(2.5, tf.float64)))  # no 'Tracing with ...'
        print(double.pretty_printed_concrete_signatures())
        return double.experimental_get_tracing_count()

    guide_cell(body, capfd)


def test_input_signature_rejects_other_shapes_and_dtypes(capfd):
    def body(tf):
        @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
        def next_collatz(x):
            return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

        print(next_collatz(tf.constant([1, 2])))
        with assert_raises(TypeError):
            next_collatz(tf.constant([[1, 2], [3, 4]]))
        with assert_raises(TypeError):
            next_collatz(tf.constant([1.0, 2.0]))
        return next_collatz.experimental_get_tracing_count()

    guide_cell(body, capfd)


def test_unknown_dimensions_and_reduce_retracing_values_and_counts(capfd):
    # TF traces a `None` dimension symbolically; tapeshim compiles each concrete shape and runs the
    # Python function again for it, so the 'Tracing with' lines differ (docs/function.md); the values
    # and TF's tracing counts match.
    def body(tf):
        @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
        def g(x):
            return x

        out = [g(tf.constant([1, 2, 3])), g(tf.constant([1, 2, 3, 4, 5]))]

        @tf.function(reduce_retracing=True)
        def h(x):
            return x

        out += [h(tf.constant(list(range(n)))) for n in (3, 5, 7, 9)]
        return out, g.experimental_get_tracing_count(), h.experimental_get_tracing_count()

    guide_cell(body, capfd)


def test_new_function_objects_trace_again(capfd):
    def body(tf):
        def f():
            print("Tracing!")
            tf.print("Executing")

        tf.function(f)()
        tf.function(f)()

    guide_cell(body, capfd)


def test_python_arguments_retrace_and_tensor_arguments_do_not(capfd):
    def body(tf):
        def train_one_step():
            pass

        @tf.function
        def train(num_steps):
            print("Tracing with num_steps = ", num_steps)
            tf.print("Executing with num_steps = ", num_steps)
            for _ in tf.range(num_steps):
                train_one_step()

        print("Retracing occurs for different Python arguments.")
        train(num_steps=10)
        train(num_steps=20)
        print()
        print("Traces are reused for Tensor arguments.")
        train(num_steps=tf.constant(10))
        train(num_steps=tf.constant(20))
        return train.experimental_get_tracing_count()

    guide_cell(body, capfd)


def test_trace_type_protocol(capfd):
    def body(tf):
        @tf.function
        def get_mixed_flavor(fruit_a, fruit_b):
            return fruit_a.flavor + fruit_b.flavor

        class Fruit:
            flavor = tf.constant([0, 0])

        class Apple(Fruit):
            flavor = tf.constant([1, 2])

        class Mango(Fruit):
            flavor = tf.constant([3, 4])

        results = [get_mixed_flavor(Apple(), Mango()), get_mixed_flavor(Apple(), Mango())]
        plain_count = get_mixed_flavor.experimental_get_tracing_count()

        class FruitTraceType(tf.types.experimental.TraceType):
            def __init__(self, fruit):
                self.fruit_type = type(fruit)
                self.fruit_value = fruit

            def is_subtype_of(self, other):
                return type(other) is FruitTraceType and self.fruit_type is other.fruit_type

            def most_specific_common_supertype(self, others):
                return self if all(self == other for other in others) else None

            def placeholder_value(self, placeholder_context=None):
                return self.fruit_value

            def __eq__(self, other):
                return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

            def __hash__(self):
                return hash(self.fruit_type)

        class FruitWithTraceType:
            def __tf_tracing_type__(self, context):
                return FruitTraceType(self)

        class AppleWithTraceType(FruitWithTraceType):
            flavor = tf.constant([1, 2])

        class MangoWithTraceType(FruitWithTraceType):
            flavor = tf.constant([3, 4])

        results.append(get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType()))
        results.append(get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType()))
        return results, plain_count, get_mixed_flavor.experimental_get_tracing_count()

    guide_cell(body, capfd)


# -- Concrete functions and graphs -------------------------------------------------------
def _double(tf):
    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a

    return double


def test_obtaining_and_calling_concrete_functions(capfd):
    # The guide's `double_strings`, with float tensors in place of strings.
    def body(tf):
        double = _double(tf)
        print("Obtaining concrete trace")
        double_floats = double.get_concrete_function(tf.constant(1.5))
        print("Executing traced function")
        print(double_floats(tf.constant(1.5)))
        print(double_floats(a=tf.constant(2.5)))
        from_spec = double.get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.float32))
        print(from_spec(tf.constant(3.5)))
        print(double_floats)
        print(double_floats.function_type)
        with assert_raises(tf.errors.InvalidArgumentError):
            double_floats(tf.constant(1))
        return double.experimental_get_tracing_count()

    guide_cell(body, capfd)


def test_concrete_function_with_a_python_argument(capfd):
    def body(tf):
        @tf.function
        def pow(a, b):
            return a**b

        square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
        results = [square(tf.constant(10.0)), square(tf.constant([1.0, 3.0])), square(tf.constant(10.0), 2)]
        assert square(tf.constant(10.0)) == 100
        with assert_raises(TypeError):
            square(tf.constant(10.0), b=3)
        return results

    guide_cell(body, capfd)


def test_concrete_function_signature_text(capfd):
    def body(tf):
        @tf.function
        def pow(a, b):
            return a**b

        square = pow.get_concrete_function(a=tf.TensorSpec([2], tf.float32), b=2)
        print(square)
        print(square.function_type)
        print(pow.pretty_printed_concrete_signatures())

    guide_cell(body, capfd)


def test_obtaining_graphs(capfd):
    def body(tf):
        double = _double(tf)
        graph = double.get_concrete_function(tf.constant(1.5)).graph
        nodes = graph.as_graph_def().node
        names = {node.name for node in nodes}
        operations = graph.get_operations()
        return (
            nodes[0].name,
            nodes[0].op,
            list(nodes[0].input),
            nodes[-1].op,
            len(nodes[-1].input),
            all(name.split(":")[0] in names for node in nodes for name in node.input),
            [op.name for op in operations] == [node.name for node in nodes],
            operations[-1].outputs[0].dtype == tf.float32,
        )

    guide_cell(body, capfd)


def test_graph_size_grows_with_unrolled_python_data(capfd):
    def body(tf):
        def graph_size(f, *args):
            return len(f.get_concrete_function(*args).graph.as_graph_def().node)

        @tf.function
        def train(dataset):
            loss = tf.constant(0)
            for x, y in dataset:
                loss += tf.abs(y - x)
            return loss

        small, big = graph_size(train, [(1, 1)] * 3), graph_size(train, [(1, 1)] * 10)
        return big > small, train([(1, 2)] * 3)

    guide_cell(body, capfd)


def test_graph_size_stays_the_same_for_datasets(capfd):
    def body(tf):
        def graph_size(f, *args):
            return len(f.get_concrete_function(*args).graph.as_graph_def().node)

        @tf.function
        def train(dataset):
            loss = tf.constant(0)
            for x, y in dataset:
                loss += tf.abs(y - x)
            return loss

        small_data, big_data = [(1, 1)] * 3, [(1, 1)] * 10
        small = graph_size(train, tf.data.Dataset.from_generator(lambda: small_data, (tf.int32, tf.int32)))
        big = graph_size(train, tf.data.Dataset.from_generator(lambda: big_data, (tf.int32, tf.int32)))
        return big == small, train(tf.data.Dataset.from_generator(lambda: [(1, 3)] * 4, (tf.int32, tf.int32)))

    guide_cell(body, capfd)


def test_inference_fn(capfd):
    def body(tf):
        double = _double(tf)
        atomic_fn = double.get_concrete_function(tf.constant(1.5)).inference_fn
        return atomic_fn(tf.constant(2.0))

    guide_cell(body, capfd)


# -- Limitations: Python side effects -------------------------------------------------------
def test_python_side_effects_run_while_tracing(capfd):
    def body(tf):
        @tf.function
        def f(x):
            print("Traced with", x)
            tf.print("Executed with", x)

        f(1)
        f(1)
        f(2)

        external_list = []

        @tf.function
        def side_effect(x):
            print("Python side effect")
            external_list.append(x)

        side_effect(1)
        side_effect(1)
        side_effect(1)
        return len(external_list)

    guide_cell(body, capfd)


def test_py_function_executes_every_call(capfd):
    def body(tf):
        @tf.py_function(Tout=tf.float32)
        def py_plus(x, y):
            print("Executing eagerly.")
            return x + y

        @tf.function
        def tf_wrapper(x, y):
            print("Tracing.")
            return py_plus(x, y)

        first = tf_wrapper(tf.constant(1.0), tf.constant(2.0)).numpy()
        second = tf_wrapper(tf.constant(1.0), tf.constant(2.0)).numpy()
        third = tf_wrapper(tf.constant(4.0), tf.constant(2.0)).numpy()
        return first, second, third

    guide_cell(body, capfd)


def test_py_function_runs_every_call_with_its_results_unused(capfd):
    # TF's py_function and numpy_function are stateful ops: they run on every call of a function, in program
    # order, whether or not anything uses their results (Tout=[]), also inside tf.cond branches and loops
    def body(tf):
        calls = []

        @tf.function
        def step(x):
            # (first: one with results runs at the trace, before the first call's others, where TF runs it in
            # program order)
            tf.numpy_function(lambda v: calls.append(("numpy", float(v))) or v, [x], tf.float32)
            tf.py_function(lambda v: calls.append(("none", float(v))), [x], [])
            tf.py_function(lambda v: v * 10.0, [x], tf.float32)  # (an unused result)
            if x > 1.0:
                tf.py_function(lambda v: calls.append(("branch", float(v))), [x], [])
            for i in tf.range(2):
                tf.py_function(lambda v, j: calls.append(("loop", float(v), int(j))), [x, i], [])
            return x + 1.0

        results = [step(tf.constant(float(i))) for i in range(3)]
        return results, calls

    guide_cell(body, capfd)


def test_py_function_in_a_function_an_outer_tape_differentiates(capfd):
    # the host call has no gradient and no JVP: a tape around the function differentiates the rest
    def body(tf):
        calls = []

        @tf.function
        def f(x):
            tf.py_function(lambda v: calls.append(float(v)), [x], [])
            tf.py_function(lambda v: v + 1.0, [x], tf.float32)
            tf.numpy_function(lambda v: v * 2.0, [x], tf.float32, stateful=False)  # (pure, by its contract)
            return x * x

        grads = []
        for value in (3.0, 4.0):
            x = tf.constant(value)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            grads.append(tape.gradient(y, x))
        return grads, calls

    guide_cell(body, capfd)


@pytest.mark.parametrize("tout", ["float32", "int64", "pair"])
def test_py_function_outputs(tout, capfd):
    def body(tf):
        @tf.function
        def wrapper(x):
            if tout == "pair":
                return tf.py_function(lambda a: (a * 2, a + 1), [x], [tf.int32, tf.int32])
            return tf.py_function(lambda a: 2, [x], getattr(tf, tout)) + tf.cast(x[0], getattr(tf, tout))

        return wrapper(tf.constant([1, 2])), wrapper(tf.constant([5, 6]))

    guide_cell(body, capfd)


def test_py_function_with_the_wrong_output_dtype(capfd):
    check_body = lambda tf: tf.py_function(lambda a: a, [tf.constant([1, 2])], tf.float32)  # noqa: E731
    guide_cell(check_body, capfd, compare_stdout=False)


def test_counter_side_effect_and_init_scope(capfd):
    def body(tf):
        class Model(tf.Module):
            def __init__(self):
                self.v = tf.Variable(0)
                self.counter = 0

            @tf.function
            def __call__(self):
                if self.counter == 0:
                    self.counter += 1
                    self.v.assign_add(1)
                return self.v

        m = Model()
        for _ in range(3):
            print(m().numpy())  # prints 1, 2, 3

        class InitScopeModel(tf.Module):
            def __init__(self):
                self.v = tf.Variable(0)
                self.counter = 0

            @tf.function
            def __call__(self):
                if self.counter == 0:
                    with tf.init_scope():
                        self.counter += 1
                        self.v.assign_add(1)
                return self.v

        m = InitScopeModel()
        for _ in range(3):
            print(m().numpy())  # prints 1, 1, 1

    guide_cell(body, capfd)


# -- Limitations: iterators and generators --------------------------------------------------
def test_python_iterator_versus_tf_data_iterator(capfd):
    def body(tf):
        @tf.function
        def buggy_consume_next(iterator):
            tf.print("Value:", next(iterator))

        iterator = iter([1, 2, 3])
        buggy_consume_next(iterator)
        buggy_consume_next(iterator)
        buggy_consume_next(iterator)

        @tf.function
        def good_consume_next(iterator):
            tf.print("Value:", next(iterator))

        ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
        iterator = iter(ds)
        good_consume_next(iterator)
        good_consume_next(iterator)
        good_consume_next(iterator)
        return buggy_consume_next.experimental_get_tracing_count(), good_consume_next.experimental_get_tracing_count()

    guide_cell(body, capfd)


def test_all_outputs_must_be_return_values(capfd):
    def body(tf):
        leaked = {}

        @tf.function
        def leaky_function(a):
            leaked["x"] = a + 1  # Bad - leaks local tensor
            return a + 2

        correct_a = leaky_function(tf.constant(1))
        print(correct_a.numpy())
        try:
            leaked["x"].numpy()
        except AttributeError as expected:
            print(expected)

        @tf.function
        def leaky_returned(a):
            leaked["x"] = a + 1
            return leaked["x"]

        print(leaky_returned(tf.constant(1)).numpy())
        try:
            leaked["x"].numpy()
        except AttributeError as expected:
            print(expected)

        @tf.function
        def captures_leaked_tensor(b):
            b += leaked["x"]
            return b

        with assert_raises(TypeError):
            captures_leaked_tensor(tf.constant(2))

    guide_cell(body, capfd)


def test_recursive_functions(capfd):
    def body(tf):
        @tf.function
        def recursive_fn(n):
            if n > 0:
                return recursive_fn(n - 1)
            else:
                return 1

        with assert_raises(Exception):
            recursive_fn(tf.constant(5))

        @tf.function
        def traced_recursive_fn(n):
            if n > 0:
                print("tracing")
                return traced_recursive_fn(n - 1)
            else:
                return 1

        return traced_recursive_fn(5)

    guide_cell(body, capfd)


# -- Known issues: globals and Python objects ----------------------------------------------
def test_python_globals_are_captured_while_tracing(capfd):
    def body(tf):
        state = {"foo": 1}

        @tf.function
        def buggy_add():
            return 1 + state["foo"]

        @tf.function
        def recommended_add(foo):
            return 1 + foo

        print("Buggy:", buggy_add())
        print("Correct:", recommended_add(state["foo"]))
        print("Updating the value of `foo` to 100!")
        state["foo"] = 100
        print("Buggy:", buggy_add())
        print("Correct:", recommended_add(state["foo"]))

        foo = tf.Variable(1)

        @tf.function
        def variable_add():
            return 1 + foo

        print("Variable:", variable_add())
        print("Updating the value of `foo` to 100!")
        foo.assign(100)
        print("Variable:", variable_add())

    guide_cell(body, capfd)


def test_python_object_arguments(capfd):
    def body(tf):
        class SimpleModel(tf.Module):
            def __init__(self):
                self.bias = 0.0
                self.weight = 2.0

        @tf.function
        def evaluate(model, x):
            return model.weight * x + model.bias

        simple_model = SimpleModel()
        x = tf.constant(10.0)
        print(evaluate(simple_model, x))
        print("Adding bias!")
        simple_model.bias += 5.0
        print(evaluate(simple_model, x))  # Didn't change :(

        def plain_evaluate(model, x):
            return model.weight * x + model.bias

        new_model = SimpleModel()
        evaluate_no_bias = tf.function(plain_evaluate).get_concrete_function(new_model, x)
        print(evaluate_no_bias(x))
        print("Adding bias!")
        new_model.bias += 5.0
        evaluate_with_bias = tf.function(plain_evaluate).get_concrete_function(new_model, x)
        print(evaluate_with_bias(x))

        class BetterModel:
            def __init__(self):
                self.bias = tf.Variable(0.0)
                self.weight = tf.Variable(2.0)

        better_model = BetterModel()
        print(evaluate(better_model, x))
        print("Adding bias!")
        better_model.bias.assign_add(5.0)
        print(evaluate(better_model, x))  # This works!

    guide_cell(body, capfd)


# -- Creating tf.Variables ------------------------------------------------------------------
def test_creating_variables(capfd):
    def body(tf):
        @tf.function
        def f(x):
            v = tf.Variable(1.0)
            return v

        with assert_raises(ValueError):
            f(1.0)

        class Count(tf.Module):
            def __init__(self):
                self.count = None

            @tf.function
            def __call__(self):
                if self.count is None:
                    self.count = tf.Variable(0)
                return self.count.assign_add(1)

        c = Count()
        print(c())
        print(c())
        return c.count

    guide_cell(body, capfd)


def test_trace_counts_of_the_lazy_variable_pattern(capfd):
    def body(tf):
        class Count(tf.Module):
            def __init__(self):
                self.count = None
                self.traces = 0

            @tf.function
            def __call__(self, step):
                self.traces += 1
                if self.count is None:
                    self.count = tf.Variable(np.float32(0.0))
                return self.count.assign_add(step)

        c = Count()
        values = [c(tf.constant(1.5)), c(tf.constant(2.0))]
        return values, c.traces, c.__call__.experimental_get_tracing_count()

    guide_cell(body, capfd)


# -- AutoGraph transformations ------------------------------------------------------------
def _uniform(shape, seed):
    """Seeded float32 values in [0, 1), in place of the guide's `tf.random.uniform(shape)` (tapeshim's
    random streams are not TF's)."""
    return uniform(shape, seed)


def _simple_loop(tf):
    @tf.function
    def f(x):
        while tf.reduce_sum(x) > 1:
            tf.print(x)
            x = tf.tanh(x)
        return x

    return f


def test_autograph_simple_loop(capfd):
    # `tf.print(x)` prints float32 values with 9 digits, and XLA's tanh and TF's (Eigen's) differ in
    # the last bit: the printed lines (one per iteration) must match in number and text layout, and
    # their values at the float32 tolerance the returned values are compared with (tests/oracle.py).
    def body(tf):
        f = _simple_loop(tf)
        return f(tf.constant(_uniform([5], 0))), f.experimental_get_tracing_count()

    (expected, tf_out, tf_err), (actual, ts_out, ts_err) = _run_with_output(body, capfd)
    assert_same(expected, actual)
    assert ts_out == tf_out
    assert len(ts_err) == len(tf_err) > 1, (tf_err, ts_err)
    assert ts_err[0] == tf_err[0]  # the input, before any tanh
    tolerance = TOLERANCE["float32"]
    for tf_line, ts_line in zip(tf_err, ts_err):
        assert re.fullmatch(r"\[\S+( \S+){4}\]", ts_line), ts_line
        np.testing.assert_allclose(
            np.array(ts_line[1:-1].split(), np.float64),
            np.array(tf_line[1:-1].split(), np.float64),
            rtol=tolerance,
            atol=tolerance,
        )


def test_autograph_to_code(capfd):
    # The guide prints the converted code; its text is each library's own (TF's `ag__` runtime
    # calls), so what is compared is that it is the source of one function, with the loop converted.
    def body(tf):
        import ast

        code = tf.autograph.to_code(_simple_loop(tf).python_function)
        tree = ast.parse(code)
        return (
            isinstance(code, str),
            [type(node).__name__ for node in tree.body],
            "while_stmt" in code,
            "while " in code,
        )

    guide_cell(body, capfd)


def test_autograph_conditionals_fizzbuzz(capfd):
    def body(tf):
        @tf.function
        def fizzbuzz(n):
            for i in tf.range(1, n + 1):
                print("Tracing for loop")
                if i % 15 == 0:
                    print("Tracing fizzbuzz branch")
                    tf.print("fizzbuzz")
                elif i % 3 == 0:
                    print("Tracing fizz branch")
                    tf.print("fizz")
                elif i % 5 == 0:
                    print("Tracing buzz branch")
                    tf.print("buzz")
                else:
                    print("Tracing default branch")
                    tf.print(i)

        fizzbuzz(tf.constant(5))
        fizzbuzz(tf.constant(20))
        return fizzbuzz.experimental_get_tracing_count()

    guide_cell(body, capfd)


def test_autograph_tensor_array_in_a_loop(capfd):
    def body(tf):
        batch_size = 2
        seq_len = 3
        feature_size = 4

        def rnn_step(inp, state):
            return inp + state

        @tf.function
        def dynamic_rnn(rnn_step, input_data, initial_state):
            # [batch, time, features] -> [time, batch, features]
            input_data = tf.transpose(input_data, [1, 0, 2])
            max_seq_len = input_data.shape[0]

            states = tf.TensorArray(tf.float32, size=max_seq_len)
            state = initial_state
            for i in tf.range(max_seq_len):
                state = rnn_step(input_data[i], state)
                states = states.write(i, state)
            return tf.transpose(states.stack(), [1, 0, 2])

        result = dynamic_rnn(
            rnn_step,
            tf.constant(_uniform([batch_size, seq_len, feature_size], 1)),
            tf.zeros([batch_size, feature_size]),
        )
        return result, dynamic_rnn.experimental_get_tracing_count()

    guide_cell(body, capfd)
