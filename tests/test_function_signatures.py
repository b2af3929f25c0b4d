"""Concrete functions and signatures of `tapeshim.function` against `tf.function`: specs given to
`get_concrete_function`, `input_signature`s with unknown dimensions, `reduce_retracing`, the printed
signatures, custom `TraceType`s and tensors leaked out of a trace."""

import numpy as np
import pytest

import tapeshim
from oracle import backend_compiles, check, check_raises
from tapeshim._src import background_compile, function_symbolic


def test_get_concrete_function_with_a_spec_and_a_bound_python_argument():
    def body(tf):
        @tf.function
        def scale(a, b):
            return a * b

        concrete = scale.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
        return (
            concrete(tf.constant([1.0, 2.0])),
            concrete(a=tf.constant(3.0)),
            concrete(tf.constant([[1.0]]), b=2),
            scale.experimental_get_tracing_count(),
            str(concrete.structured_input_signature),
        )

    check(body)


def test_specs_in_the_structured_input_signature_are_named_after_their_parameters():
    def body(tf):
        @tf.function
        def f(a, b, c=None):
            return a + b

        named = f.get_concrete_function(tf.TensorSpec([2], tf.float32), tf.TensorSpec([2], tf.float32, name="bee"))
        from_tensors = f.get_concrete_function(tf.constant([1.0]), tf.constant(2.0))
        return str(named.structured_input_signature), str(from_tensors.structured_input_signature)

    check(body)


def test_input_signature_with_unknown_dimensions_is_one_trace_for_all_shapes():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def total(x):
            return tf.reduce_sum(x), tf.shape(x)

        results = [total(tf.range(n, dtype=tf.float32)) for n in (1, 2, 5, 2)]
        return results, total.experimental_get_tracing_count()

    check(body)


def test_reduce_retracing_counts_traces_as_tf():
    def body(tf):
        @tf.function(reduce_retracing=True)
        def total(x):
            return tf.reduce_sum(x)

        counts = []
        for shape in ([1], [2], [3], [4], [2, 1], [2, 2], [2, 3]):
            total(tf.ones(shape))
            counts.append(total.experimental_get_tracing_count())
        return counts

    check(body)


def test_pretty_printed_concrete_signatures():
    def body(tf):
        @tf.function
        def add(x, y=1):
            return x + y

        add(tf.constant(1.0))
        add(tf.constant([1, 2]), 3)
        add.get_concrete_function(tf.TensorSpec([None, 2], tf.float32, name="z"), y=2)
        return add.pretty_printed_concrete_signatures()

    check(body, messages=True)


def test_function_type_of_a_function_and_of_its_concrete_functions():
    def body(tf):
        @tf.function
        def f(x, y=1, *args, z=3, **options):
            return x

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)])
        def g(x, n):
            return x * tf.cast(n, tf.float32)

        @tf.function
        def h(a, b):
            return a * b

        concrete = h.get_concrete_function(tf.TensorSpec([3], tf.float32), b=2.0)
        return str(f.function_type), str(g.function_type), str(concrete.function_type)

    check(body)


def test_trace_type_protocol_decides_retracing():
    def body(tf):
        class ShapeKind(tf.types.experimental.TraceType):
            def __init__(self, kind):
                self.kind = kind

            def is_subtype_of(self, other):
                return type(other) is ShapeKind and self.kind == other.kind

            def most_specific_common_supertype(self, others):
                return self if all(self == other for other in others) else None

            def placeholder_value(self, placeholder_context):
                return self.kind

            def __eq__(self, other):
                return type(other) is ShapeKind and self.kind == other.kind

            def __hash__(self):
                return hash(self.kind)

        class Config:
            def __init__(self, kind, size):
                self.kind, self.size = kind, size

            def __tf_tracing_type__(self, context):
                return ShapeKind(self.kind)

        traced = []

        @tf.function
        def f(config, x):
            traced.append(config)  # the placeholder value the type gave
            return x * (2.0 if config == "double" else 3.0)

        values = [
            f(Config("double", 1), tf.constant(1.0)),
            f(Config("double", 7), tf.constant(2.0)),
            f(Config("triple", 1), tf.constant(2.0)),
        ]
        return values, traced, f.experimental_get_tracing_count()

    check(body)


def _leaked(tf):
    leaked = []

    @tf.function
    def f(x):
        y = x * 2.0
        leaked.append(y)
        return y

    f(tf.constant(1.0))
    return leaked[0]


def test_a_leaked_tensor_used_by_an_op_is_out_of_scope():
    check_raises(lambda tf: _leaked(tf) + 1.0)
    check_raises(lambda tf: tf.reduce_sum(_leaked(tf)))


def test_a_leaked_tensor_has_no_value():
    check_raises(lambda tf: _leaked(tf).numpy())
    check_raises(lambda tf: float(_leaked(tf)))
    check_raises(lambda tf: tf.constant(_leaked(tf)))
    check_raises(lambda tf: np.asarray(_leaked(tf)))


def test_a_leaked_tensor_prints_as_a_graph_tensor():
    def body(tf):
        leaked = _leaked(tf)
        text, representation = str(leaked), repr(leaked)
        # (the op names differ: TF's graph names the op "mul", tapeshim's tensor has its type, "Mul")
        return (
            text.startswith('Tensor("') and text.endswith(':0", shape=(), dtype=float32)'),
            representation.startswith("<tf.Tensor '") and representation.endswith(":0' shape=() dtype=float32>"),
        )

    check(body)


def test_a_leaked_tensor_captured_by_another_function():
    def body(tf):
        leaked = _leaked(tf)

        @tf.function
        def g():
            return leaked + 1.0

        return g()

    check_raises(body)


def test_a_concrete_function_from_specs_runs_numpy_inputs():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2.0

        concrete = f.get_concrete_function(tf.TensorSpec([None, 2], tf.float32))
        return concrete(tf.constant(np.ones((3, 2), np.float32))), f.experimental_get_tracing_count()

    check(body)


def test_a_concrete_function_refuses_another_python_value_and_dtype():
    def body(tf):
        @tf.function
        def scale(a, b):
            return a * b

        concrete = scale.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
        outcomes = []
        for call in (lambda: concrete(tf.constant(1.0), b=3), lambda: concrete(tf.constant(1, tf.int32))):
            try:
                outcomes.append(call())
            except Exception as exc:  # noqa: BLE001 - the class is compared with TF's
                outcomes.append(type(exc).__name__)
        return outcomes

    check(body)


def test_the_concrete_function_of_an_input_signature_with_unknown_dimensions():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([], tf.int32)])
        def f(x, n):
            return tf.reduce_sum(x, axis=1) * tf.cast(n, tf.float32), x[:, :2]

        concrete = f.get_concrete_function()
        return (
            str(concrete.structured_input_signature),
            str(concrete.function_type),
            [(o.shape.as_list(), o.dtype.name) for o in concrete.structured_outputs],
            concrete(tf.ones([4, 3]), tf.constant(2)),
        )

    check(body)


def test_reduce_retracing_prints_the_generalised_signature():
    def body(tf):
        @tf.function(reduce_retracing=True)
        def total(x, scale):
            return tf.reduce_sum(x, axis=0) * scale

        for rows in (1, 2, 3):
            total(tf.ones([rows, 2]), 2.0)
        return total.pretty_printed_concrete_signatures(), total.experimental_get_tracing_count()

    check(body, messages=True)


def test_calls_covered_by_a_spec_trace_are_not_retraces():
    def body(tf):
        @tf.function
        def scale(a, b):
            return a * b

        scale.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
        out = [scale(tf.constant([1.0, 2.0]), 2), scale(tf.constant(3.0), b=2), scale.experimental_get_tracing_count()]
        out += [scale(tf.constant(3.0), 3), scale.experimental_get_tracing_count()]
        out += [scale(tf.constant([1, 2]), 2), scale.experimental_get_tracing_count()]
        return out

    check(body)


def test_input_signature_with_unknown_dimensions_runs_the_python_function_once():
    # one symbolic trace serves every size: the function sees None, prints once, and its variable updates,
    # outputs' signature and gradients are TF's for each size
    def body(tf):
        printed = []
        w = tf.Variable(np.full((3, 2), 0.5, np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def step(x):
            printed.append(str(x.shape))
            y = tf.nn.relu(tf.matmul(x, w)) + 1.0
            w.assign_add(tf.ones((3, 2)) * 0.01)
            return tf.reduce_sum(y, axis=1), tf.reduce_mean(y), tf.shape(x)

        results = [step(tf.constant(np.arange(n * 3, dtype=np.float32).reshape(n, 3) / 4)) for n in (2, 5, 2, 1)]
        x = tf.constant(np.ones((4, 3), np.float32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, mean, _ = step(x)
        gradients = tape.gradient(mean, [x, w])
        concrete = step.get_concrete_function()
        return (
            results,
            gradients,
            printed,
            step.experimental_get_tracing_count(),
            [str(spec.shape) for spec in concrete.structured_outputs],
            w,
        )

    check(body)


def test_a_trace_that_needs_concrete_sizes_is_traced_per_shape_with_tf_values():
    # `tf.shape(x)[0]` as a reshape target needs a number: traced again per shape (TF: once), values as TF's
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
        def pairs(x):
            n = tf.shape(x)[0]
            return tf.reshape(x, [n * 2, 2]), tf.cast(n, tf.float32) * 2.0

        return [pairs(tf.reshape(tf.range(4 * n, dtype=tf.float32), (n, 4))) for n in (3, 1, 3)], (
            pairs.experimental_get_tracing_count()
        )

    check(body)


def test_an_out_of_range_index_in_a_trace_for_every_size_raises_tf_error():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None], tf.int32)])
        def pick(x, i):
            return tf.gather(x, i), tf.reduce_sum(x, axis=0)

        pick(tf.ones((4, 3)), tf.constant([0, 3, 1, 2]))
        return pick(tf.ones((4, 3)), tf.constant([0, 9, 1, 2]))

    check_raises(body)


@pytest.mark.usefixtures("compiles_on_repeat")  # (each size compiles on its second call)
def test_a_trace_for_every_size_compiles_once_per_size_and_never_traces_again():
    compiles = backend_compiles()
    w = tapeshim.Variable(np.full((3, 2), 0.5, np.float32))

    @tapeshim.function(input_signature=[tapeshim.TensorSpec([None, 3], tapeshim.float32)])
    def step(x):
        w.assign_sub(0.01 * tapeshim.reduce_mean(tapeshim.matmul(x, w)) * tapeshim.ones((3, 2)))
        return tapeshim.reduce_sum(tapeshim.matmul(x, w))

    batches = [tapeshim.ones((n, 3)) for n in (4, 4, 7, 4, 7, 2)]
    step(batches[0])
    before = len(compiles)
    for batch in batches[1:]:
        step(batch)
    assert len(compiles) - before == 2  # sizes 7 and 2: the variables' new values compile nothing more
    assert step.experimental_get_tracing_count() == 1
    assert function_symbolic.stats["symbolic_traces"] >= 1


def test_a_trace_for_every_size_computes_shape_arithmetic_per_call():
    # dimensions derived from the unknown one (concat, flatten, slices, padding, tf.shape arithmetic), at
    # each size: the first call of a size is computed on the host, from the trace's symbolic dimensions
    def body(tf):
        printed = []

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def shapes(x):
            printed.append(str(x.shape))
            doubled = tf.concat([x, x * 2.0], axis=0)
            flat = tf.reshape(doubled, [-1])
            padded = tf.pad(x[1:], [[1, 2], [0, 0]])
            count = tf.cast(tf.shape(doubled)[0] * 3 + 1, tf.float32)
            return flat, padded, count, tf.reduce_max(tf.cumsum(x, axis=0), axis=0), tf.size(flat)

        results = [shapes(tf.reshape(tf.range(2 * n, dtype=tf.float32), (n, 2))) for n in (3, 1, 4, 3)]
        return results, printed, [str(spec.shape) for spec in shapes.get_concrete_function().structured_outputs]

    check(body)


def test_a_new_size_of_a_trace_for_every_size_is_computed_on_the_host_first():
    from tapeshim._src import interpret

    @tapeshim.function(input_signature=[tapeshim.TensorSpec([None, 3], tapeshim.float32)])
    def total(x):
        return tapeshim.reduce_sum(tapeshim.tanh(x) * 2.0, axis=1)

    total(tapeshim.ones((2, 3)))
    before = interpret.stats["interpreted_calls"]
    values = total(tapeshim.ones((5, 3))).numpy()
    assert interpret.stats["interpreted_calls"] == before + 1
    np.testing.assert_allclose(values, np.full(5, 6 * np.tanh(1.0), np.float32), rtol=1e-6)
    assert total.experimental_get_tracing_count() == 1


def test_shape_arithmetic_as_a_shape_in_a_trace_for_every_size():
    # `tf.shape(x)[0]` (and arithmetic on it) where a shape is expected: symbolic dimensions, one trace
    def body(tf):
        printed = []

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
        def shaped(x):
            printed.append(str(x.shape))
            n = tf.shape(x)[0]
            pairs = tf.reshape(x, [n * 2, 2])
            state = tf.zeros([n, 3]) + tf.reduce_sum(x)
            ones = tf.ones(tf.shape(x)) * x
            flipped = tf.where(x > 1.0, x, -x) + tf.zeros_like(x)
            total = tf.zeros((4,))
            for i in tf.range(n):
                total += x[i]
            return pairs, state, ones, flipped, total, tf.shape(tf.random.normal(tf.shape(pairs), seed=1))

        results = [shaped(tf.reshape(tf.range(4 * n, dtype=tf.float32), (n, 4)) / 5) for n in (3, 1, 2, 3)]
        return results, printed, shaped.experimental_get_tracing_count()

    check(body)


def test_traces_for_every_size_of_two_instances_and_under_a_tape():
    # two objects' functions of one structure are traced once each; a tape differentiates through a
    # symbolic reshape at each size
    def body(tf):
        class Scaler(tf.Module):
            def __init__(self, scale):
                self.scale = tf.Variable(scale)

            @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
            def __call__(self, x):
                return tf.reshape(x, [tf.shape(x)[0] * 2, 2]) * self.scale

        first, second = Scaler(2.0), Scaler(3.0)
        results = []
        for n in (3, 1):
            x = tf.reshape(tf.range(4 * n, dtype=tf.float32), (n, 4))
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(first(x) * second(x))
            results.append((y, tape.gradient(y, [x, first.scale])))
        return (
            results,
            first.__call__.experimental_get_tracing_count(),
            (second.__call__.experimental_get_tracing_count()),
        )

    check(body)


def test_calls_a_trace_for_every_size_does_not_fit_and_transformations_through_it():
    # leading sizes that differ and empty batches get traces of their own; jacobians and forward mode
    # through the function; piecewise shape arithmetic and squeezes TF decides per run: traced per shape
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None, 3], tf.float32)])
        def pair(x, y):
            return tf.reduce_sum(x, 0) + tf.reduce_sum(y, 0)

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def squared(x):
            return x * x

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def piecewise(x):
            n = tf.shape(x)[0]
            return tf.zeros([tf.maximum(n - 1, 1)]), tf.squeeze(tf.expand_dims(x, 0))

        sums = [pair(tf.ones((2, 3)), tf.ones((5, 3))), pair(tf.ones((0, 3)), tf.ones((0, 3)))]
        sums += [pair(tf.ones((0, 3)), tf.ones((0, 3))), pair(tf.ones((2, 3)), tf.ones((2, 3)))]
        x = tf.reshape(tf.range(6, dtype=tf.float32), (3, 2))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = squared(x)
        jacobian = tape.jacobian(y, x)
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as accumulator:
            z = squared(x)
        shapes = [[t.shape for t in piecewise(tf.ones((n,)))] for n in (4, 1, 0)]
        return sums, jacobian, accumulator.jvp(z), shapes

    check(body)


def test_sizes_that_outnumber_the_tracked_ones_compile_once_each(monkeypatch):
    monkeypatch.setattr(function_symbolic.ExportedProgram, "_SIGNATURES", 4)
    compiles = backend_compiles()

    @tapeshim.function(input_signature=[tapeshim.TensorSpec([None, 3], tapeshim.float32)])
    def total(x):
        return tapeshim.reduce_sum(x * 2.0, axis=0)

    batches = [tapeshim.ones((n, 3)) for n in range(1, 7)]
    for _ in range(2):  # first calls on the host, second calls compile (in the background)
        for batch in batches:
            total(batch)
    before = len(compiles)
    for _ in range(2):
        values = [total(batch).numpy() for batch in batches]
    assert len(compiles) == before  # each size's entry was dropped and came back: compiled already
    np.testing.assert_allclose(values, [np.full(3, 2.0 * n) for n in range(1, 7)])


def test_generalised_and_spec_traces_serve_every_size_without_running_python_again():
    # reduce_retracing's generalised signature and a get_concrete_function spec with None dimensions are
    # traced for every size: later sizes run no Python (as TF)
    def body(tf):
        printed = []

        @tf.function(reduce_retracing=True)
        def total(x, scale):
            printed.append(str(x.shape))
            return tf.reduce_sum(x) * scale

        @tf.function
        def scaled(a, b):
            printed.append("scaled " + str(a.shape))
            return a * b

        sums = [total(tf.ones(shape), 2.0) for shape in ([1], [2], [3], [4], [7])]
        concrete = scaled.get_concrete_function(tf.TensorSpec([None, 2], tf.float32), 2)
        shapes = [concrete(tf.ones((3, 2))).shape, scaled(tf.ones((4, 2)), 2).shape, scaled(tf.ones((5, 2)), 2)]
        counts = total.experimental_get_tracing_count(), scaled.experimental_get_tracing_count()
        return sums, shapes, printed, counts

    check(body)


@pytest.mark.usefixtures("compiles_on_repeat")  # (each size compiles on its second call)
def test_a_trace_for_every_size_jax_cannot_export_runs_traces_for_the_calls_shapes(monkeypatch):
    # the export happens when a size compiles from it (here every size: see test_function_sized.py for the first
    # sizes, which compile without it) or under a tape: if JAX refuses it, calls run traces of their own shapes,
    # with the same values
    def refuse(*args, **kwargs):
        raise ValueError("an op whose lowering needs its sizes")

    monkeypatch.setattr(function_symbolic.export, "export", refuse)
    monkeypatch.setattr(function_symbolic.ExportedProgram, "SIZED_COMPILES", 0)
    printed = []

    @tapeshim.function(input_signature=[tapeshim.TensorSpec([None, 2], tapeshim.float32)])
    def double(x):
        printed.append(str(x.shape))
        return x * 2.0

    values = [double(tapeshim.ones((n, 2))).numpy() for n in (3, 3)]  # the host, then the compile submitted
    background_compile.wait()  # (it failed: the export was refused)
    values += [double(tapeshim.ones((n, 2))).numpy() for n in (3, 4, 4)]
    with tapeshim.GradientTape() as tape:
        x = tapeshim.ones((2, 2))
        tape.watch(x)
        y = tapeshim.reduce_sum(double(x))
    assert tape.gradient(y, x).numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert [v.shape for v in values] == [(3, 2), (3, 2), (3, 2), (4, 2), (4, 2)]
    assert printed[0] == "(None, 2)" and "(3, 2)" in printed  # the symbolic trace, then per-shape ones
    assert double.experimental_get_tracing_count() == 1


def test_ensure_shape_on_a_size_a_trace_for_every_size_does_not_know_checks_it_per_call():
    def body(tf):
        printed = []

        @tf.function(input_signature=[tf.TensorSpec([None, None])])
        def doubled(x):
            printed.append(str(x.shape))
            checked = tf.ensure_shape(x, [None, 3])
            printed.append(str(checked.shape))  # refined to TF's (None, 3)
            return checked * 2.0

        x = tf.ones((2, 3))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(doubled(x))
        return doubled(tf.ones((4, 3))), tape.gradient(y, x), printed, doubled

    check(lambda tf: body(tf)[:3])
    raised = check_raises(lambda tf: body(tf)[3](tf.ones((2, 5))))
    assert "Shape of tensor x [2,5] is not compatible with expected shape [?,3]." in raised.message


def test_ensure_shape_gives_later_code_its_static_size_in_a_trace_for_every_size():
    fallbacks = function_symbolic.stats["symbolic_fallbacks"]

    def body(tf):
        traces = []

        @tf.function(input_signature=[tf.TensorSpec([None, None])])
        def project(x):
            traces.append(1)
            checked = tf.ensure_shape(x, [None, 3])
            return tf.matmul(checked, tf.ones([checked.shape[1], 2]))  # a Python int, as TF's refined shape

        return project(tf.ones((2, 3))), project(tf.ones((5, 3))), len(traces)

    check(body)
    assert function_symbolic.stats["symbolic_fallbacks"] == fallbacks


def test_a_spec_of_unknown_rank_is_one_trace_for_the_sizes_of_one_rank():
    def body(tf):
        runs = []

        @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
        def scaled_rows(x):
            runs.append(1)
            return tf.reduce_sum(x, axis=-1) * tf.cast(tf.size(x), tf.float32), tf.shape(x)

        results = [scaled_rows(tf.ones(shape)) for shape in ([2, 3], [4, 5], [1, 7], [4, 5])]
        return results, len(runs), scaled_rows.experimental_get_tracing_count()

    check(body)
    # Another rank runs the Python function again (TF's one trace takes any rank): one trace for every size
    # of each rank, TF's values and tracing count
    runs = []

    def ranks(tf):
        runs.clear()

        @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
        def doubled(x):
            runs.append(1)
            return tf.reduce_sum(x * 2.0), tf.shape(x)

        shapes = ([2, 3], [5, 1], [3], [4], [1, 1, 2], [2, 2, 2], [6], [3, 3])
        return [doubled(tf.ones(shape)) for shape in shapes], doubled.experimental_get_tracing_count()

    check(ranks)
    assert len(runs) == 3  # (TF: 1)


def test_a_first_call_that_raises_leaves_no_trace_behind():
    # Leading sizes 3 and 4 cannot be added: symbols of their own fail, a shared one traces, this call's own
    # trace raises (tapeshim's ValueError while tracing, TF's InvalidArgumentError when its graph runs); the
    # next calls use one trace, counted as TF's one trace.
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 2]), tf.TensorSpec([None, 2])])
        def add(x, y):
            return x + y

        try:
            add(tf.ones([3, 2]), tf.ones([4, 2]))
            raised = False
        except (ValueError, tf.errors.InvalidArgumentError):
            raised = True
        later = [add(tf.ones([n, 2]), tf.ones([n, 2])) for n in (3, 5)]
        return raised, later, add.experimental_get_tracing_count()

    raised, _, count = check(body)
    assert raised and count == 1


def test_an_input_signature_over_the_leading_parameters_binds_the_rest_to_their_defaults():
    """`@tf.function(input_signature=[spec]) def f(x, scale=2.0, training=False)`: calls that leave the rest at
    their defaults run; another value raises TF's TypeError."""

    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def scaled(x, scale=2.0, training=False):
            return x * scale if not training else x

        results = [scaled(tf.ones([2, 3])), scaled(x=tf.ones([1, 3])), scaled(tf.ones([1, 3]), 2.0)]
        for call in (lambda: scaled(tf.ones([1, 3]), scale=3.0), lambda: scaled(tf.ones([1, 3]), 3.0)):
            try:
                results.append(call())
            except TypeError as error:
                results.append(type(error).__name__)
        return results

    check(body)


@pytest.mark.parametrize(
    "op, shapes",
    [
        ("add", ([2], [3])),
        ("add_known_sizes", ([2, 3], [2, 4])),
        ("matmul", ([2, 3], [4, 2])),
        ("concat", ([2, 3], [2, 4])),
    ],
)
def test_a_shape_mismatch_at_unknown_sizes_is_tfs_runtime_error(op, shapes):
    """Sizes the signature leaves unknown are checked when TF's graph runs (InvalidArgumentError); a mismatch of
    known sizes is found while tracing (ValueError). A valid call afterwards runs."""

    def body(tf):
        unknown, known = tf.TensorSpec([None], tf.float32), tf.TensorSpec([None, None], tf.float32)
        functions = {
            "add": (lambda a, b: a + b, [unknown, unknown]),
            "add_known_sizes": (lambda a, b: a + b, [tf.TensorSpec([None, 3]), tf.TensorSpec([None, 4])]),
            "matmul": (lambda a, b: tf.matmul(a, b), [known, known]),
            "concat": (lambda a, b: tf.concat([a, b], 0), [known, known]),
        }
        fn, signature = functions[op]
        f = tf.function(fn, input_signature=signature)
        results = []
        for call in (shapes, shapes, [shapes[0], shapes[0]] if op != "matmul" else [[2, 3], [3, 2]]):
            try:
                results.append(f(*[tf.ones(s) for s in call]))
            except (TypeError, ValueError, tf.errors.InvalidArgumentError) as error:  # TypeError: off the signature
                results.append(type(error).__name__)
        return results

    check(body)
