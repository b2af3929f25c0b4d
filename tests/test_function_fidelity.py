"""`tapeshim.function` against `tf.function`: host state read inside a function (iterators, random
generators) advances on every call, as in TF."""

import numpy as np
import pytest

from oracle import check


def _numbers(tf, batch=2, count=6):
    return tf.data.Dataset.from_tensor_slices(np.arange(count, dtype=np.float32)).batch(batch)


def _until_end(step, *args, calls=6):
    """Calls `step` until it raises; the values, and the class of what ended the run."""
    values = []
    for _ in range(calls):
        try:
            values.append(step(*args))
        except Exception as exc:  # noqa: BLE001 - the class is compared with TF's
            return values, type(exc).__name__
    return values, None


def test_next_of_an_iterator_argument_advances_every_call():
    def body(tf):
        iterator = iter(_numbers(tf))

        @tf.function
        def step(it):
            return tf.reduce_sum(next(it))

        return [step(iterator) for _ in range(3)], step.experimental_get_tracing_count()

    check(body)


def test_a_captured_iterator_advances_and_ends_with_out_of_range():
    def body(tf):
        iterator = iter(_numbers(tf))

        @tf.function
        def step():
            return next(iterator) * 2.0

        values, ended = _until_end(step)
        return values, ended, isinstance(step.python_function, object)

    check(body)


def test_out_of_range_error_class_inside_a_function():
    def body(tf):
        iterator = iter(_numbers(tf, count=2))

        @tf.function
        def step(it):
            return next(it)

        step(iterator)
        try:
            step(iterator)
        except tf.errors.OutOfRangeError:
            return "OutOfRangeError"
        return "no error"

    check(body)


def test_several_pulls_per_call_and_a_smaller_last_batch():
    def body(tf):
        iterator = iter(_numbers(tf, batch=4, count=14))

        @tf.function
        def step(it):
            first = it.get_next()
            second = next(it)
            return tf.reduce_sum(first) - tf.reduce_max(second), tf.shape(second)

        values, ended = _until_end(step, iterator)
        return values, ended, step.experimental_get_tracing_count()

    check(body)


def test_new_iterators_share_a_trace_by_element_spec():
    def body(tf):
        @tf.function
        def step(it):
            return next(it) + next(it)

        first = [step(iter(tf.data.Dataset.range(10))) for _ in range(2)]
        count_same_spec = step.experimental_get_tracing_count()
        other = step(iter(tf.data.Dataset.range(10).batch(2)))
        return first, count_same_spec, other, step.experimental_get_tracing_count()

    check(body)


def test_dict_elements_of_a_mapped_dataset():
    def body(tf):
        features = np.arange(12, dtype=np.float32).reshape(6, 2)
        labels = np.arange(6, dtype=np.int32)
        dataset = (
            tf.data.Dataset.from_tensor_slices({"x": features, "y": labels})
            .map(lambda item: {"x": item["x"] * 2.0, "y": item["y"] + 1})
            .batch(3)
        )
        iterator = iter(dataset)

        @tf.function
        def step(it):
            item = next(it)
            return tf.reduce_sum(item["x"], axis=1), item["y"]

        return [step(iterator) for _ in range(2)]

    check(body)


def test_training_step_pulls_a_batch_per_call():
    def body(tf):
        features = np.linspace(-1.0, 1.0, 16, dtype=np.float32).reshape(8, 2)
        targets = (features @ np.array([[2.0], [-1.0]], np.float32)).astype(np.float32)
        iterator = iter(tf.data.Dataset.from_tensor_slices((features, targets)).batch(2))
        w = tf.Variable(tf.zeros([2, 1]))

        @tf.function
        def step(it):
            x, y = next(it)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(x @ w - y))
            w.assign_sub(0.5 * tape.gradient(loss, w))
            return loss

        losses = [step(iterator) for _ in range(4)]
        return losses, w, step.experimental_get_tracing_count()

    check(body)


def test_a_function_that_pulls_raises_lookup_error_under_a_tape():
    def body(tf):
        iterator = iter(_numbers(tf))
        v = tf.Variable(3.0)

        @tf.function
        def step(it):
            return tf.reduce_sum(next(it)) * v

        outcomes = []
        for _ in range(2):
            try:
                with tf.GradientTape() as tape:
                    out = step(iterator)
                outcomes.append((out, tape.gradient(out, v)))
            except LookupError:  # TF has no gradient for IteratorGetNext, even towards `v`
                outcomes.append("LookupError")
        outcomes.append(step(iterator))  # the failed calls pulled nothing
        other = tf.Variable(1.0)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(other)
            unwatched = step(iterator)  # a tape that watches nothing the call reads records nothing
        return outcomes, unwatched

    check(body)


def test_get_next_as_optional_inside_a_function():
    def body(tf):
        iterator = iter(_numbers(tf, count=4))

        @tf.function
        def step(it):
            optional = it.get_next_as_optional()
            return optional.has_value()

        return [step(iterator) for _ in range(4)]

    check(body)


def test_optional_get_value_inside_a_function_and_its_end():
    def body(tf):
        iterator = iter(_numbers(tf, count=4))

        @tf.function
        def step(it):
            optional = it.get_next_as_optional()
            return optional.get_value() + 1.0

        return _until_end(step, iterator)

    check(body)


@pytest.mark.parametrize("pull", ["next", "get_next", "optional"])
def test_iterators_outside_functions(pull):
    def body(tf):
        iterator = iter(_numbers(tf, count=3))
        out = []
        for _ in range(3):
            try:
                if pull == "next":
                    out.append(next(iterator))
                elif pull == "get_next":
                    out.append(iterator.get_next())
                else:
                    optional = iterator.get_next_as_optional()
                    out.append(optional.has_value())
                    out.append(optional.get_value())
            except Exception as exc:  # noqa: BLE001 - compared with TF's class
                out.append(type(exc).__name__)
                break
        return out, iterator.element_spec

    check(body)


def test_an_iterator_made_inside_a_function_starts_over_each_call():
    def body(tf):
        dataset = _numbers(tf)

        @tf.function
        def step():
            return next(iter(dataset))

        return [step() for _ in range(3)]

    check(body)


def test_a_python_iterator_is_read_once_while_tracing():
    def body(tf):
        values = iter([1, 2, 3])

        @tf.function
        def step(it):
            return tf.constant(next(it))

        return [step(values) for _ in range(3)]

    check(body)


def test_isinstance_of_tf_data_iterator():
    check(lambda tf: isinstance(iter(_numbers(tf)), tf.data.Iterator))


def test_random_ops_give_new_values_on_every_call():
    def body(tf):
        @tf.function
        def step():
            return tf.random.uniform([3]), tf.random.normal([2], seed=7)

        first, second = step(), step()
        return [bool(tf.reduce_any(a != b)) for a, b in zip(first, second)], step.experimental_get_tracing_count()

    check(body)


def test_a_random_generator_advances_on_every_call():
    def body(tf):
        generator = tf.random.Generator.from_seed(5)

        @tf.function
        def step():
            return generator.normal([3]), generator.uniform([2])

        first, second, third = step(), step(), step()
        changed = [bool(tf.reduce_any(a != b)) for a, b in zip(first + second, second + third)]
        return changed, step.experimental_get_tracing_count(), first[0].shape, first[1].dtype

    check(body)


def test_optional_from_value_and_empty():
    def body(tf):
        full = tf.experimental.Optional.from_value((tf.constant([1.0, 2.0]), tf.constant(3)))
        empty = tf.experimental.Optional.empty(tf.TensorSpec([2], tf.float32))
        try:
            empty.get_value()
            error = None
        except tf.errors.InvalidArgumentError:
            error = "InvalidArgumentError"
        return full.has_value(), full.get_value(), full.element_spec, empty.has_value(), error

    check(body)


def _generated(tf):
    def gen():
        for i in range(5):
            yield i, np.full([i % 2 + 1], float(i), np.float32)

    return tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec([], tf.int32), tf.TensorSpec([None], tf.float32))
    )


def test_a_generator_dataset_is_pulled_on_every_call():
    def body(tf):
        dataset = _generated(tf)
        iterator = iter(dataset)

        @tf.function
        def step(it):
            index, values = next(it)
            return index * 10, tf.reduce_sum(values), tf.shape(values)

        values, ended = _until_end(step, iterator, calls=7)
        return values, ended, step.experimental_get_tracing_count(), dataset.element_spec, dataset.cardinality()

    check(body)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.data.Dataset.from_generator(lambda: [(1, 1)] * 3, (tf.int32, tf.int32)),
        lambda tf: tf.data.Dataset.from_generator(
            lambda: iter([[1.0, 2.0]]), output_types=tf.float32, output_shapes=[2]
        ),
        lambda tf: tf.data.Dataset.from_generator(lambda: iter([{"a": 1.5}]), output_types={"a": tf.float64}),
        lambda tf: tf.data.Dataset.from_generator(lambda n: iter(range(n)), output_types=tf.int64, args=(3,)),
    ],
)
def test_from_generator_elements_and_specs(make):
    check(lambda tf: (list(make(tf)), make(tf).element_spec))


def test_from_generator_errors():
    def body(tf):
        outcomes = []
        try:
            tf.data.Dataset.from_generator(lambda: iter([1]))
        except TypeError:
            outcomes.append("TypeError")
        bad_shape = tf.data.Dataset.from_generator(
            lambda: iter([[1.0, 2.0, 3.0]]), output_types=tf.float32, output_shapes=[2]
        )
        try:
            list(bad_shape)
        except tf.errors.InvalidArgumentError:
            outcomes.append("InvalidArgumentError")
        return outcomes

    check(body)


def test_a_pull_inside_a_cond_branch_happens_only_when_it_runs():
    def body(tf):
        iterator = iter(tf.data.Dataset.range(10))

        @tf.function
        def pick(flag):
            return tf.cond(flag, lambda: next(iterator), lambda: tf.constant(-1, tf.int64))

        return [pick(tf.constant(flag)) for flag in (True, False, True, True)], pick.experimental_get_tracing_count()

    check(body)


@pytest.mark.parametrize("size", [8, 6])  # 6: the data ends inside the loop
def test_pulls_inside_a_while_loop_body_take_one_element_per_iteration(size):
    def body(tf):
        iterator = iter(tf.data.Dataset.range(size))

        @tf.function
        def total(it, steps):
            first = next(it)
            loop = tf.while_loop(
                lambda i, s: i < steps, lambda i, s: (i + 1, s + it.get_next()), (tf.constant(0), first)
            )
            return loop[1]

        return _until_end(total, iterator, tf.constant(3), calls=4)

    check(body)


def test_an_optional_pulled_inside_a_loop():
    def body(tf):
        iterator = iter(tf.data.Dataset.range(3))

        @tf.function
        def count_present():
            return tf.while_loop(
                lambda i, n: i < 5,
                lambda i, n: (i + 1, n + tf.cast(iterator.get_next_as_optional().has_value(), tf.int32)),
                (tf.constant(0), tf.constant(0)),
            )[1]

        return count_present(), count_present()

    check(body)


def test_iterators_in_nests_shared_and_in_nested_functions():
    def body(tf):
        shared = iter(tf.data.Dataset.range(6))

        @tf.function
        def a():
            return next(shared)

        @tf.function
        def b():
            return next(shared) * 10

        @tf.function
        def outer():
            return a() + a()

        @tf.function
        def from_dict(d):
            return next(d["it"]) * 2

        in_dict = iter(tf.data.Dataset.range(5))
        return ([a(), b(), a(), b(), outer()], [from_dict({"it": in_dict}) for _ in range(3)])

    check(body)


def test_a_variable_created_lazily_from_the_first_argument():
    def body(tf):
        class Accumulator(tf.Module):
            def __init__(self):
                self.total = None

            @tf.function
            def __call__(self, x):
                if self.total is None:
                    self.total = tf.Variable(tf.zeros_like(x) + 1.0)
                self.total.assign_add(x)
                return self.total.read_value()

        accumulate = Accumulator()
        values = [accumulate(tf.constant([1.0, 2.0])) for _ in range(3)]
        return values, accumulate.__call__.experimental_get_tracing_count()

    check(body)


@pytest.mark.parametrize("source", ["op", "generator"])
def test_random_draws_inside_a_loop_body_differ_per_iteration(source):
    def body(tf):
        generator = tf.random.Generator.from_seed(3)

        def draw():
            return tf.random.uniform([2]) if source == "op" else generator.uniform([2])

        @tf.function
        def two_draws():
            def step(i, first, second):
                r = draw()
                return i + 1, tf.where(tf.equal(i, 0), r, first), tf.where(tf.equal(i, 1), r, second)

            zeros = tf.zeros([2])
            _, first, second = tf.while_loop(lambda i, a, b: i < 2, step, (tf.constant(0), zeros, zeros))
            return first, second

        first, second = two_draws()
        again, _ = two_draws()
        return bool(tf.reduce_all(first != second)), bool(tf.reduce_all(first != again)), first.shape

    check(body)


def test_optional_value_used_under_its_has_value_condition():
    def body(tf):
        iterator = iter(_numbers(tf, count=4))

        @tf.function
        def step(it):
            optional = it.get_next_as_optional()
            return tf.cond(optional.has_value(), lambda: tf.reduce_sum(optional.get_value()), lambda: tf.constant(-1.0))

        return [step(iterator) for _ in range(4)]

    check(body)


def test_python_string_arguments_select_a_trace_by_value(capfd):
    def body(tf):
        @tf.function
        def activate(x, kind):
            print("Tracing", kind)
            return tf.nn.relu(x) if kind == "relu" else tf.sigmoid(x)

        x = tf.constant([-1.0, 2.0])
        results = [activate(x, "relu"), activate(x, "sigmoid"), activate(x, kind="relu"), activate(x, "sigmoid")]
        concrete = activate.get_concrete_function(x, "relu")
        return results, activate.experimental_get_tracing_count(), str(concrete.function_type), concrete(x)

    check(body)
    printed = capfd.readouterr().out.splitlines()
    assert [line for line in printed if line.startswith("Tracing")] == ["Tracing relu", "Tracing sigmoid"] * 2


def test_reduce_retracing_counts_generalised_traces():
    def body(tf):
        @tf.function(reduce_retracing=True)
        def f(x, scale):
            return x * scale

        calls = [
            (tf.ones([3]), 2.0),
            (tf.ones([5]), 2.0),
            (tf.ones([7]), 2.0),
            (tf.ones([2, 2]), 2.0),
            (tf.ones([2, 3]), 2.0),
            (tf.ones([4, 4]), 2.0),
            (tf.ones([3]), 3.0),
            (tf.ones([3], tf.int32), 2),
            (tf.ones([4, 4, 4]), 2.0),
            (tf.ones([5]), 3.0),
            (tf.ones([2], tf.int32), 2),
        ]
        counts = []
        for x, scale in calls:
            f(x, scale)
            counts.append(f.experimental_get_tracing_count())
        return counts

    check(body)


def test_string_outputs_of_a_function():
    def body(tf):
        @tf.function
        def f(x):
            return x + 1.0, "done", tf.constant(["a", "b"]), tf.strings.join(["x", "y"], separator="-")

        return f(tf.constant(1.0)), f(tf.constant(2.0))

    check(body)
