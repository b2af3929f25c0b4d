"""RaggedTensors through `tf.function`, against real TensorFlow: functions returning RaggedTensors (alone or in
nests) and their concrete functions' output types, the tracing count of ragged arguments without an
`input_signature` (TF traces once per `RaggedTensorSpec`: the number of rows is part of it, row lengths are not),
`reduce_retracing`, `tf.reshape`/`tf.broadcast_to`/`tf.zeros`/`tf.ones`/`tf.fill` of a
`tf.experimental.DynamicRaggedShape`, and gradients through functions taking and returning ragged tensors.

Every body runs with `tensorflow` and with `tapeshim`; results are compared by `_d`: a RaggedTensor as its type,
dtype, ragged rank, shape, nested row splits and flat values (a Tensor stays a Tensor, so a Tensor where TF gives a
RaggedTensor fails), a spec by its printed form.
"""

import numpy as np
import pytest
from ragged_describe import describe as _d

from oracle import check, check_raises


def _rt(tf):
    return tf.ragged.constant([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0], [7.0]])


def _same_rows(tf):  # 4 rows, other lengths: the same RaggedTensorSpec as _rt
    return tf.ragged.constant([[1.0], [3.0, 4.0], [], [7.0, 8.0, 9.0, 10.0]])


def _two_rows(tf):
    return tf.ragged.constant([[1.0], [3.0, 4.0]])


def _rt2(tf):
    return tf.ragged.constant([[[1.0, 2.0], [3.0]], [[4.0]], [[5.0], [], [6.0]]])


def _uniform_inner(tf):
    return tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]], []], ragged_rank=1)


# -- returning RaggedTensors ------------------------------------------------------------------------------
RETURNS = {
    "identity": lambda tf, x: x,
    "scaled": lambda tf, x: x * 2.0 + 1.0,
    "dict_and_tuple": lambda tf, x: {"r": tf.nn.relu(x - 2.0), "n": x.nrows(), "t": (x, 1, None)},
    "list": lambda tf, x: [x, tf.reduce_sum(x, axis=1), x.row_lengths()],
    "sliced_rows": lambda tf, x: x[1:],
    "concat_rows": lambda tf, x: tf.concat([x, x], axis=0),
    "concat_columns": lambda tf, x: tf.concat([x, x], axis=1),
    "constant": lambda tf, x: tf.ragged.constant([[1], [2, 3]]),
    "from_row_lengths": lambda tf, x: tf.RaggedTensor.from_row_lengths(x.flat_values * 3.0, x.row_lengths()),
    "int32_splits": lambda tf, x: x.with_row_splits_dtype(tf.int32),
    "to_tensor_and_back": lambda tf, x: tf.RaggedTensor.from_tensor(x.to_tensor(), lengths=x.row_lengths()),
    "map_flat_values": lambda tf, x: tf.ragged.map_flat_values(tf.math.square, x),
    "value_dependent_mask": lambda tf, x: tf.ragged.boolean_mask(x, x > 2.5),
    "strings": lambda tf, x: tf.ragged.constant([["a", "b"], ["c"]]),
}


@pytest.mark.parametrize("name", sorted(RETURNS))
def test_returns_ragged(name):
    fn = RETURNS[name]

    def body(tf):
        f = tf.function(lambda x: fn(tf, x))
        # the same partition twice with other values: the second call reuses the first trace
        return _d([f(_rt(tf)), f(_rt(tf) * -1.0), f(_same_rows(tf))]), f.experimental_get_tracing_count()

    check(body)


ARGUMENTS = {
    "rank3": (_rt2, lambda tf, x: x * 2.0),
    "uniform_inner": (_uniform_inner, lambda tf, x: x + 1),
    "uniform_row_length": (
        lambda tf: tf.RaggedTensor.from_uniform_row_length(tf.range(6.0), 2),
        lambda tf, x: (x * 2.0, tf.reduce_sum(x, axis=1)),
    ),
    "nested_argument": (
        lambda tf: {"a": _rt(tf), "b": (_two_rows(tf), tf.constant(2.0))},
        lambda tf, d: (d["a"] * d["b"][1], tf.reduce_max(d["b"][0], axis=1)),
    ),
}


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_ragged_arguments_and_results(name):
    value, fn = ARGUMENTS[name]

    def body(tf):
        f = tf.function(lambda x: fn(tf, x))
        return _d([f(value(tf)), f(value(tf))]), f.experimental_get_tracing_count()

    check(body)


def test_returns_ragged_with_input_signature():
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32), tf.TensorSpec([None])])
        def f(x, y):
            return x * 2.0, tf.reduce_sum(x, axis=1) + y[: x.nrows()]

        calls = [
            f(_rt(tf), tf.ones([4])),
            f(_two_rows(tf), tf.constant([1.0, 2.0])),
            f(_same_rows(tf), tf.constant([1.0, 2.0, 3.0, 4.0])),
        ]
        return _d(calls), f.experimental_get_tracing_count()

    check(body)


# -- concrete functions: the output type --------------------------------------------------------------------
def test_output_type_of_a_value_trace():
    def body(tf):
        @tf.function
        def f(x):
            return {"r": x * 2.0, "n": x.nrows(), "c": tf.ragged.constant([[1], [2, 3]])}

        concrete = f.get_concrete_function(_rt(tf))
        outputs = concrete.structured_outputs  # (TF's holds graph tensors, tapeshim's specs: not compared)
        types = {k: (v.dtype.name, repr(v.shape)) for k, v in outputs.items()}
        ragged = {k: outputs[k].ragged_rank for k in ("r", "c")}
        return concrete.pretty_printed_signature(), types, ragged, _d(concrete.structured_input_signature)

    check(body)


def test_output_type_of_a_spec_trace():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2.0, x[1:], tf.concat([x, x], axis=1)

        concrete = f.get_concrete_function(tf.RaggedTensorSpec([None, None], tf.float32))
        return concrete.pretty_printed_signature(), _d(concrete(_rt(tf))), f.experimental_get_tracing_count()

    check(body)


def test_output_type_of_a_signature_trace():
    def body(tf):
        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None, 2], tf.int32, 1)])
        def f(x):
            return x + 1

        return f.get_concrete_function().pretty_printed_signature(), _d(f(_uniform_inner(tf)))

    check(body)


def test_concrete_function_of_a_value_binds_its_number_of_rows():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2.0

        concrete = f.get_concrete_function(_rt(tf))
        return _d(concrete(_same_rows(tf))), f.experimental_get_tracing_count()

    check(body)


def test_concrete_function_of_a_value_refuses_other_rows():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2.0

        return f.get_concrete_function(_rt(tf))(_two_rows(tf))

    check_raises(body)


# -- tracing counts ------------------------------------------------------------------------------------------
def _calls(tf):
    return [
        _rt(tf),
        _same_rows(tf),  # other row lengths: the same spec
        _rt(tf) * 3.0,
        _two_rows(tf),  # another number of rows
        _two_rows(tf).with_row_splits_dtype(tf.int32),
        tf.ragged.constant([[1], [3, 4]]),  # another dtype
        _rt2(tf),  # another ragged rank
        _two_rows(tf) + 1.0,
    ]


@pytest.mark.parametrize("reduce_retracing", [False, True])
def test_tracing_count_per_spec(reduce_retracing):
    def body(tf):
        @tf.function(reduce_retracing=reduce_retracing)
        def f(x):
            return tf.reduce_sum(x)

        counts, results = [], []
        for value in _calls(tf):
            results.append(f(value))
            counts.append(f.experimental_get_tracing_count())
        return counts, results

    check(body)


def test_reduce_retracing_signatures():
    def body(tf):
        @tf.function(reduce_retracing=True)
        def f(x):
            return x.flat_values

        results = [f(_rt(tf)), f(_same_rows(tf)), f(_two_rows(tf)), f(_rt2(tf)[:2])]
        return results, f.experimental_get_tracing_count(), f.pretty_printed_concrete_signatures().count("None, None")

    check(body)


def test_spec_trace_serves_calls():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2.0

        f.get_concrete_function(tf.RaggedTensorSpec([None, None], tf.float32))
        results = [f(_rt(tf)), f(_two_rows(tf))]
        return _d(results), f.experimental_get_tracing_count()

    check(body)


def test_ragged_with_python_and_tensor_arguments():
    def body(tf):
        @tf.function
        def f(x, scale, power=1):
            return (x * scale) ** power

        calls = [f(_rt(tf), tf.constant(2.0)), f(_rt(tf), tf.constant(3.0)), f(_rt(tf), 2.0, power=2)]
        return _d(calls), f.experimental_get_tracing_count()

    check(body)


def test_ragged_string_arguments():
    def body(tf):
        @tf.function
        def f(x):
            return tf.strings.reduce_join(x, axis=1, separator="-"), x

        calls = [f(tf.ragged.constant([["a", "b"], ["c"]])), f(tf.ragged.constant([["d"], ["e", "f"]]))]
        return _d(calls), f.experimental_get_tracing_count()

    check(body)


# -- DynamicRaggedShape as an op's shape -------------------------------------------------------------------
def _shape(tf):
    return tf.shape(_rt(tf))


def _lengths(tf, lengths):
    return tf.experimental.DynamicRaggedShape.from_lengths(lengths)


SHAPE_OPS = {
    "reshape": lambda tf: tf.reshape(tf.range(7.0), _shape(tf)),
    "reshape_ragged": lambda tf: tf.reshape(_rt(tf) * 2.0, _shape(tf)),
    "reshape_inner": lambda tf: tf.reshape(tf.ones([3, 2]), _lengths(tf, [2, (2, 1), 2])),
    "broadcast_scalar": lambda tf: tf.broadcast_to(tf.constant(3.0), _shape(tf)),
    "broadcast_column": lambda tf: tf.broadcast_to(tf.constant([[1.0], [2.0], [3.0], [4.0]]), _shape(tf)),
    "broadcast_from_lengths": lambda tf: tf.broadcast_to(tf.constant([[1], [2]]), _lengths(tf, [2, (2, 1)])),
    "ones": lambda tf: tf.ones(_shape(tf)),
    "zeros_int": lambda tf: tf.zeros(_shape(tf), tf.int32),
    "fill": lambda tf: tf.fill(_shape(tf), 2.5),
    "dense_shape": lambda tf: tf.reshape(tf.range(6), _lengths(tf, [2, 3])),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_ops_of_ragged_shapes(name):
    check(lambda tf: _d(SHAPE_OPS[name](tf)))


@pytest.mark.parametrize("name", ["reshape", "broadcast_scalar", "ones", "fill"])
def test_ops_of_ragged_shapes_inside_function(name):
    def body(tf):
        @tf.function
        def f(x):
            shape = tf.shape(x, out_type=tf.int64)  # (the row-splits dtype of x)
            return {
                "reshape": lambda: tf.reshape(tf.range(7.0), shape),
                "broadcast_scalar": lambda: tf.broadcast_to(tf.reduce_sum(x), shape),
                "ones": lambda: tf.ones(shape) + x,
                "fill": lambda: tf.fill(shape, 2.0) * x,
            }[name]()

        return _d([f(_rt(tf)), f(_rt(tf) * 2.0)])

    check(body)


SHAPE_ERRORS = {
    "reshape_count": lambda tf: tf.reshape(tf.range(6.0), _shape(tf)),
    "broadcast_rows": lambda tf: tf.broadcast_to(tf.constant([1.0, 2.0]), _shape(tf)),
}


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_ops_of_ragged_shapes_errors(name):
    check_raises(SHAPE_ERRORS[name])


# -- gradients ------------------------------------------------------------------------------------------------
def test_gradient_through_function_of_ragged():
    def body(tf):
        v = tf.Variable([1.0, 2.0, 3.0])

        @tf.function
        def f(x, w):
            return x * w, tf.reduce_sum(x * x)

        flat = tf.constant([1.0, 2.0, 3.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(flat)
            x = tf.RaggedTensor.from_row_lengths(flat, [2, 1])
            out, total = f(x, 3.0)
            loss = tf.reduce_sum(out.flat_values * v)
        return (
            tape.gradient(loss, [flat, v]),
            tape.gradient(total, flat),
            tape.gradient(out.flat_values, v),
            tape.gradient(total, v),
        )

    check(body)


def test_gradient_of_variable_inside_ragged_result():
    def body(tf):
        v = tf.Variable([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
        u = tf.Variable(2.0)

        @tf.function
        def f(x):
            return x.with_flat_values(x.flat_values * v), tf.reduce_max(x * u, axis=1)

        with tf.GradientTape() as tape:
            r, m = f(_rt(tf))
            loss = tf.reduce_sum(r * r) + tf.reduce_sum(m)
        return tape.gradient(loss, [v, u]), _d(r)

    check(body)


def test_gradient_taken_inside_function():
    def body(tf):
        v = tf.Variable(1.5)

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(tf.reduce_mean(x * v, axis=1) ** 2)
            (grad,) = tape.gradient(y, [v])
            v.assign_sub(0.1 * grad)
            return y, grad

        results = [step(_rt(tf)), step(_same_rows(tf)), step(_two_rows(tf))]
        return results, v.numpy(), step.experimental_get_tracing_count()

    check(body)


def test_gradient_unconnected_is_none():
    def body(tf):
        flat = tf.constant([1.0, 2.0, 3.0])

        @tf.function
        def f(x):
            return x.row_lengths(), tf.cast(x.nrows(), tf.float32)

        with tf.GradientTape(persistent=True) as tape:
            tape.watch(flat)
            lengths, rows = f(tf.RaggedTensor.from_row_lengths(flat, [1, 2]))
        return tape.gradient(rows, flat), tape.gradient(lengths, flat), _d(lengths)

    check(body)


def test_ragged_training_loop_values():
    def body(tf):
        w = tf.Variable(np.ones([3, 2], np.float32))

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                pooled = tf.reduce_mean(x, axis=1)  # [rows, 3]
                loss = tf.reduce_mean((tf.matmul(pooled, w) - y) ** 2)
            w.assign_sub(0.05 * tape.gradient(loss, w))
            return loss

        batches = [
            tf.RaggedTensor.from_row_lengths(tf.reshape(tf.range(15.0), [5, 3]) / 10.0, [2, 3]),
            tf.RaggedTensor.from_row_lengths(tf.reshape(tf.range(15.0), [5, 3]) / 20.0, [1, 4]),
            tf.RaggedTensor.from_row_lengths(tf.reshape(tf.range(9.0), [3, 3]) / 5.0, [1, 1, 1]),
        ]
        losses = [step(b, tf.ones([b.nrows(), 2])) for b in batches]
        return losses, w.numpy(), step.experimental_get_tracing_count()

    check(body)
