"""AutoGraph in `tapeshim.function` against TF's: Python control flow over tensors, converted."""

import sys

import pytest

import tapeshim
from oracle import check, check_printed, check_raises, real_tf


def check_autograph_error(body):
    """TF's error class, and TF's AutoGraph message (TF prefixes it with an "in user code:" frame list)."""
    raised = check_raises(body)
    tf_message = str(__import__("oracle").run(body, real_tf).exc)
    assert tf_message.rstrip().endswith(f"{raised.name}: {raised.message}"), (tf_message, raised.message)
    return raised


# -- if ----------------------------------------------------------------------------------
def test_if_elif_else_on_tensors():
    def body(tf):
        traces = []

        @tf.function
        def f(x):
            traces.append(1)
            if x > 2.0:
                y = x * 10.0
            elif x > 0.0:
                y = x + 1.0
            else:
                y = -x
            return y

        return [f(tf.constant(v)) for v in (3.0, 1.0, -2.0)], len(traces), f.experimental_get_tracing_count()

    check(body)


def test_if_with_and_or_not_on_tensors():
    def body(tf):
        @tf.function
        def f(x, y):
            if x > 0 and not y < 0 or x < -5:
                z = x + y
            else:
                z = x - y
            return z, (x > 0) and (y > 0), not (x > 0)

        return [f(tf.constant(a), tf.constant(b)) for a, b in ((1, 2), (1, -2), (-6, 1), (-1, 1))]

    check(body)


def test_python_conditions_stay_python():
    def body(tf):
        traces = []

        @tf.function
        def f(x, training):
            traces.append(training)
            if training:  # a Python bool: only the branch taken is traced
                x = x * 2.0
            for _ in range(3):  # a Python range: unrolled
                x = x + 1.0
            if x.shape[0] == 2:
                x = x * 10.0
            return x

        return f(tf.constant([1.0, 2.0]), True), f(tf.constant([1.0, 2.0]), False), traces

    check(body)


def test_variable_defined_in_one_branch_raises_tf_error():
    def body(tf):
        @tf.function
        def f(x):
            if x > 0:
                y = x
            return y

        return f(tf.constant(1.0))

    assert check_autograph_error(body).name == "ValueError"


def test_variable_local_to_one_branch_is_fine():
    def body(tf):
        @tf.function
        def f(x):
            if x > 0:
                y = x * 2.0
                x = y + 1.0
            return x

        return f(tf.constant(1.0)), f(tf.constant(-1.0))

    check(body)


@pytest.mark.parametrize("case", ["dtype", "none"])
def test_branch_disagreement_raises_tf_error(case):
    def body(tf):
        @tf.function
        def f(x):
            if case == "dtype":
                if x > 0:
                    y = 1
                else:
                    y = 2.5
            else:
                y = None
                if x > 0:
                    y = x
            return y

        return f(tf.constant(1.0))

    check_autograph_error(body)


def test_return_inside_if():
    def body(tf):
        @tf.function
        def f(x):
            if x > 0:
                return x * 2.0
            return -x

        @tf.function
        def g(x):
            if x > 0:
                if x > 10:
                    return x
                else:
                    return x + 1
            else:
                return x - 1

        return [f(tf.constant(v)) for v in (3.0, -3.0)] + [g(tf.constant(v)) for v in (11.0, 3.0, -3.0)]

    check(body)


def test_return_in_one_branch_only_raises_tf_error():
    def body(tf):
        @tf.function
        def f(x):
            if x > 0:
                return x

        return f(tf.constant(1.0))

    check_autograph_error(body)


# -- while -------------------------------------------------------------------------------
def test_while_on_tensor_condition():
    def body(tf):
        @tf.function
        def collatz(n):
            steps = 0
            while n != 1:
                if n % 2 == 0:
                    n = n // 2
                else:
                    n = 3 * n + 1
                steps += 1
            return steps, n

        return [collatz(tf.constant(v)) for v in (1, 6, 27)]

    check(body)


def test_while_with_break_and_continue():
    def body(tf):
        @tf.function
        def f(n):
            s = 0
            i = 0
            while i < n:
                i += 1
                if i % 2 == 0:
                    continue
                if i > 7:
                    break
                s += i
            return s, i

        return f(tf.constant(20)), f(tf.constant(4))

    check(body)


@pytest.mark.parametrize("case", ["dtype", "shape"])
def test_loop_variable_changing_raises_tf_error(case):
    def body(tf):
        @tf.function
        def f(x):
            i = tf.constant(0)
            while i < 3:
                if case == "dtype":
                    i = tf.cast(i, tf.float32) + 1.5
                else:
                    x = tf.concat([x, x], 0)
                    i += 1
            return i, x

        return f(tf.constant([1.0]))

    check_autograph_error(body)


def test_return_inside_tensor_loop_raises_tf_error():
    def body(tf):
        @tf.function
        def f(n):
            for i in tf.range(n):
                if i > 3:
                    return i
            return -1

        return f(tf.constant(10))

    check_autograph_error(body)


def test_return_inside_python_loop():
    def body(tf):
        @tf.function
        def f(x):
            for i in range(5):
                if i == 2:
                    return x * i
            return x

        return f(tf.constant(3.0))

    check(body)


# -- for ---------------------------------------------------------------------------------
def test_for_over_tf_range_with_tensor_bound():
    def body(tf):
        traces = []

        @tf.function
        def f(n):
            traces.append(1)
            total = tf.constant(0.0)
            for i in tf.range(n):
                total += tf.cast(i, tf.float32) ** 2
            for j in tf.range(1, n, 2):
                total += tf.cast(j, tf.float32)
            for _ in range(n):  # Python range over a tensor: converted as tf.range
                total -= 1.0
            return total

        return f(tf.constant(5)), f(tf.constant(0)), f(tf.constant(3)), len(traces)

    check(body)


def test_for_over_tensor_rows_and_loop_defined_variable():
    def body(tf):
        @tf.function
        def f(x):
            s = 0.0
            for row in x:
                last = row * 2.0
                s += tf.reduce_sum(row)
            return s, last

        return f(tf.reshape(tf.range(6.0), [3, 2]))

    check(body)


def test_for_with_break_on_tensor():
    def body(tf):
        @tf.function
        def f(x):
            s = tf.constant(0.0)
            for v in x:
                if v < 0:
                    break
                s += v
            return s

        return f(tf.constant([1.0, 2.0, -1.0, 4.0])), f(tf.constant([1.0, 2.0]))

    check(body)


def test_for_over_dataset():
    def body(tf):
        @tf.function
        def f(ds):
            s = tf.constant(0)
            for batch in ds:
                s += tf.reduce_sum(batch)
            return s

        return f(tf.data.Dataset.range(10).batch(3).map(lambda b: tf.cast(b, tf.int32)))

    check(body)


# -- effects inside converted branches and loops ----------------------------------------
def test_variable_assignment_and_print_inside_converted_control_flow(capfd):
    def body(tf):
        v = tf.Variable(1.0)
        counter = tf.Variable(0)

        @tf.function
        def f(x):
            if x > 0:
                v.assign_add(x)
                tf.print("positive", x)
            else:
                v.assign(-1.0)
            for i in tf.range(3):
                counter.assign_add(i)
                tf.print("step", i, v)
                v.assign(v * 2.0)
            return v.read_value(), counter.read_value()

        return f(tf.constant(2.0)), f(tf.constant(-2.0)), v, counter

    check_printed(body, capfd)


def test_loop_body_that_prints_is_traced_once(capfd):
    # A tensor loop whose body calls tf.print (and assigns no variable) runs its Python once while
    # tracing, as TF's: the guide's fizzbuzz prints each "Tracing ... branch" line once.
    def body(tf):
        traces = []

        @tf.function
        def f(n):
            for i in tf.range(n):
                traces.append("for")
                if i % 2 == 0:
                    traces.append("even")
                    tf.print("even", i)
                else:
                    traces.append("odd")
                    tf.print(i)
            k = tf.constant(0)
            while k < n:
                traces.append("while")
                tf.print("k", k)
                k += 1
            return k

        return [f(tf.constant(3)), f(tf.constant(4))], traces, f.experimental_get_tracing_count()

    check_printed(body, capfd)


def test_tf_print_float_digits(capfd):
    # TF prints a float with 6 significant digits when they read back as the same value, else 9
    # (float64: 15, else 17); float16 and bfloat16 print as float32.
    def body(tf):
        values = [
            0.636961699,
            1e-9,
            3.0,
            0.1,
            1 / 3,
            123456789.0,
            1e20,
            -2.5e-7,
            float("nan"),
            float("-inf"),
            100000.0,
            1234567.0,
            1e-5,
            -0.0,
        ]
        for dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64):
            tf.print(dtype.name, tf.constant(values, dtype), summarize=-1)

        @tf.function
        def f(x):
            while tf.reduce_sum(x) > 1:
                tf.print(x)
                x = x * 0.7
            return x

        return f(tf.constant([0.636961699, 0.269786716, 0.81327021]))

    check_printed(body, capfd)


# -- gradients ---------------------------------------------------------------------------
def test_gradient_through_converted_branch_and_static_loop():
    def body(tf):
        w = tf.Variable(0.5)

        @tf.function
        def f(x):
            with tf.GradientTape() as tape:
                y = x
                for _ in tf.range(3):
                    y = y * w
                if y > 0.1:
                    loss = y * y
                else:
                    loss = -y
            return loss, tape.gradient(loss, w)

        return f(tf.constant(2.0)), f(tf.constant(0.1))

    check(body)


def test_gradient_through_loop_over_tensor_rows():
    def body(tf):
        @tf.function
        def f(x, w):
            with tf.GradientTape() as tape:
                tape.watch(w)
                h = tf.zeros([2])
                for row in x:
                    h = tf.tanh(row * w + h)
                loss = tf.reduce_sum(h)
            return loss, tape.gradient(loss, w)

        return f(tf.reshape(tf.range(6.0), [3, 2]) / 6.0, tf.constant([0.3, -0.2]))

    check(body)


# -- conversion rules --------------------------------------------------------------------
def _helper_with_loop(x, n):
    while x < n:
        x = x * 2.0
    return x


def test_called_user_functions_are_converted():
    def body(tf):
        scale = tf.constant(3.0)

        def closure(x):
            if x > 0:  # a closure: keeps `scale`
                return x * scale
            return x

        class Model:
            def __init__(self):
                self.offset = 1.0

            def apply(self, x):
                if x > 5.0:
                    x = x - self.offset
                return x

        model = Model()

        @tf.function
        def f(x):
            return model.apply(closure(_helper_with_loop(x, tf.constant(10.0))))

        return f(tf.constant(1.5)), f(tf.constant(0.25)), f(tf.constant(20.0))

    check(body)


def test_tf_function_method_is_converted():
    def body(tf):
        class Counter(tf.Module):
            def __init__(self):
                self.limit = tf.constant(4)

            @tf.function
            def __call__(self, x):
                i = 0
                while i < self.limit:
                    x = x + 1.0
                    i += 1
                return x

        return Counter()(tf.constant(1.0))

    check(body)


def test_do_not_convert_and_autograph_false_raise_as_tf():
    def body(tf):
        @tf.autograph.experimental.do_not_convert
        def helper(x):
            if x > 0:
                return x
            return -x

        @tf.function
        def f(x):
            return helper(x)

        @tf.function(autograph=False)
        def g(x):
            if x > 0:
                return x
            return -x

        results = []
        for fn in (f, g):
            try:
                results.append(fn(tf.constant(1.0)))
            except Exception as exc:  # noqa: BLE001 - the class is compared with TF's
                results.append(type(exc).__name__)
        return results

    check(body)


def test_lambdas_and_builtins_run_unconverted():
    def body(tf):
        double = lambda x: x * 2.0  # noqa: E731

        @tf.function
        def f(x):
            y = tf.nest.map_structure(double, [x, x])
            return max(len(y), 1), sum(y), abs(x)

        return f(tf.constant(-1.5))

    check(body)


def test_to_code_and_to_graph():
    def body(tf):
        def f(x):
            if x > 0:
                x = x * 2
            return x

        code = tf.autograph.to_code(f)
        converted = tf.autograph.to_graph(f)
        return isinstance(code, str), "ag__" in code, "def " in code, converted(tf.constant(2)), converted(-3)

    check(body)


def test_errors_point_at_the_users_line():
    @tapeshim.function
    def f(x):
        while x < 3:
            x = x + 1.5
        return x

    with pytest.raises(TypeError) as info:
        f(tapeshim.constant(0))
    frames = [(frame.f_code.co_filename, lineno) for frame, lineno in __import__("traceback").walk_tb(info.tb)]
    line = f.python_function.__code__.co_firstlineno + 3
    assert (__file__, line) in frames, frames


def test_steady_loop_compiles_once_and_converts_once():
    from tapeshim._src.autograph import conversion

    @tapeshim.function
    def step(x, n):
        for i in tapeshim.range(n):
            if x > 100.0:
                break
            x = x * 2.0 + tapeshim.cast(i, tapeshim.float32)
        return x

    step(tapeshim.constant(1.0), tapeshim.constant(3))
    converted = conversion._function_cache[step.python_function]
    before = tapeshim.experimental.compile_stats()["function_traces"]
    for v in range(5):
        step(tapeshim.constant(float(v)), tapeshim.constant(v))
    assert tapeshim.experimental.compile_stats()["function_traces"] == before
    assert conversion._function_cache[step.python_function] is converted
    assert step.experimental_get_tracing_count() == 1
    assert sys.getrefcount(converted) > 1


def test_list_appended_in_tensor_loop_raises_tf_error():
    def body(tf):
        @tf.function
        def f(n):
            values = []
            for i in tf.range(n):
                values.append(i * 2)
            return tf.stack(values)

        return f(tf.constant(3))

    assert check_raises(body).name == "InaccessibleTensorError"


def test_list_appended_in_python_loop_is_fine():
    def body(tf):
        @tf.function
        def f(x):
            values = []
            for i in range(3):
                values.append(x * i)
            return tf.stack(values)

        return f(tf.constant(1.5))

    check(body)


def test_gradient_through_loops_with_a_tensor_bound():
    def body(tf):
        w = tf.Variable([0.5, -0.25])

        @tf.function
        def f(x, n):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                h = x
                for i in tf.range(n):
                    h = tf.tanh(h * w + tf.cast(i, tf.float32))
                k = tf.constant(0)
                y = tf.reduce_sum(h)
                while k < n:
                    y = y * 0.5 + tf.reduce_sum(w)
                    k += 1
            return y, tape.gradient(y, [x, w]), tape.gradient(h, w)

        return [f(tf.constant([1.0, 2.0]), tf.constant(v)) for v in (0, 1, 4)]

    check(body)


def test_methods_using_super_are_converted():
    def body(tf):
        class Base:
            def scale(self, x):
                return x * 2.0

        class Child(Base):
            def scale(self, x):
                if x > 0:
                    x = super().scale(x)
                return x + 1.0

        child = Child()

        @tf.function
        def f(x):
            return child.scale(x)

        return f(tf.constant(2.0)), f(tf.constant(-2.0))

    check(body)


def test_conditional_expression_on_tensor():
    def body(tf):
        @tf.function
        def f(x, training):
            y = x * 2.0 if x > 0 else -x
            z = y + 1.0 if training else y
            return y, z

        return f(tf.constant(3.0), True), f(tf.constant(-3.0), False)

    check(body)


def test_tensor_array_in_converted_loops():
    def body(tf):
        @tf.function
        def f(n, x):
            squares = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(4):
                squares = squares.write(i, tf.cast(i, tf.float32) ** 2)
            rows = tf.TensorArray(tf.float32, size=3)
            for i in tf.range(n):
                rows = rows.write(i, tf.ones([2]) * tf.cast(i, tf.float32))
            doubled = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i, row in enumerate(tf.unstack(x)):  # a Python loop: the array stays a list
                doubled = doubled.write(i, row * 2.0)
            return squares.stack(), squares.size(), rows.stack(), rows.read(1), doubled.stack(), doubled.size()

        return f(tf.constant(3), tf.reshape(tf.range(4.0), [2, 2])), f(tf.constant(2), tf.ones([1, 2]))

    check(body)


def test_nested_function_passed_to_while_loop_is_converted():
    def body(tf):
        @tf.function
        def f(x):
            def step(i, s):
                if s > 10.0:
                    s = s - 1.0
                else:
                    s = s * 3.0
                return i + 1, s

            return tf.while_loop(lambda i, s: i < 4, step, [tf.constant(0), x])

        return f(tf.constant(2.0))

    check(body)


def test_name_deleted_inside_a_loop_body_is_not_loop_state():
    def body(tf):
        w = tf.Variable(2.0)

        @tf.function
        def step(n):
            for _ in range(2):  # a Python loop: the body is converted as a function of its state
                with tf.GradientTape(persistent=True) as tape:
                    y = w * w
                g = tape.gradient(y, w)
                del tape
                w.assign_sub(0.1 * g)
            total = tf.constant(0.0)
            for i in tf.range(n):  # a tensor loop whose body deletes a temporary
                scratch = tf.cast(i, tf.float32)
                total += scratch
                del scratch
            return w.read_value(), total

        return step(tf.constant(3))

    check(body)
