"""Shape tensors as op arguments inside `tapeshim.function`, against `tf.function`: `tf.range(tf.shape(x)[1])`,
`x[:tf.shape(x)[0] - 1]`, `tf.one_hot(..., depth=tf.shape(x)[1])` and their kin, traced per shape and in a
trace for every size (an `input_signature` with `None` dimensions), where TF's graph computes them per run."""

import numpy as np
import pytest

from oracle import check, check_raises
from tapeshim._src import function_symbolic

# name -> fn(tf, x) for x of shape (batch, 3); each is one argument TF takes as a tensor and XLA needs known.
_CASES = {
    "range": lambda tf, x: tf.range(tf.shape(x)[0]),
    "range_start_limit_delta": lambda tf, x: tf.range(1, tf.shape(x)[0] + 2, 2),
    "range_reversed": lambda tf, x: tf.range(tf.shape(x)[0] - 1, -1, -1),
    "range_int64": lambda tf, x: tf.range(tf.shape(x, out_type=tf.int64)[0]),
    "range_as_float": lambda tf, x: tf.range(tf.shape(x)[0], dtype=tf.float32),
    "slice_stop": lambda tf, x: x[: tf.shape(x)[0] - 1],
    "slice_start": lambda tf, x: x[1 : tf.shape(x)[0]],
    "one_hot_depth": lambda tf, x: tf.one_hot(tf.constant([0, 2]), depth=tf.shape(x)[0]),
    "eye": lambda tf, x: tf.eye(tf.shape(x)[0], dtype=tf.int32),
    "sequence_mask": lambda tf, x: tf.sequence_mask([1, 2], tf.shape(x)[0]),
    "meshgrid": lambda tf, x: tf.meshgrid(tf.range(tf.shape(x)[0]), tf.range(tf.shape(x)[1]))[0],
    "gather_range": lambda tf, x: tf.gather(x, tf.range(tf.shape(x)[0] - 1, -1, -1)),
    "linspace": lambda tf, x: tf.linspace(0.0, 1.0, tf.shape(x)[0]),
    "unsorted_segment_sum": lambda tf, x: tf.math.unsorted_segment_sum(
        x, tf.range(tf.shape(x)[0]) // 2, tf.shape(x)[0]
    ),
    "pad_to_length": lambda tf, x: tf.pad(x, [[0, 4 - tf.shape(x)[0]], [0, 0]]),
    "range_of_cast": lambda tf, x: tf.range(tf.cast(tf.shape(x)[0], tf.float32)),
    "gather_nd_of_stacked_range": lambda tf, x: tf.gather_nd(
        x, tf.stack([tf.range(tf.shape(x)[0]), tf.argmax(x, 1, output_type=tf.int32)], axis=1)
    ),
    "tensor_array_size": lambda tf, x: tf.TensorArray(tf.float32, size=tf.shape(x)[0]).unstack(x).stack(),
    "resize_size": lambda tf, x: tf.image.resize(x[None, :, :, None], [tf.shape(x)[0] * 2, 6]),
    "top_k": lambda tf, x: tf.math.top_k(x, k=tf.shape(x)[1] - 1).values,
    "fill": lambda tf, x: tf.fill([tf.shape(x)[0], 2], 1.5),
    "tensor_scatter_nd_update": lambda tf, x: tf.tensor_scatter_nd_update(x, [[1]], [[9.0, 9.0, 9.0]]),
}
# The cases a trace for every size computes without falling back to a trace per shape.
_SYMBOLIC = {
    "range",
    "range_start_limit_delta",
    "range_reversed",
    "range_int64",
    "range_as_float",
    "slice_stop",
    "slice_start",
    "one_hot_depth",
    "eye",
    "sequence_mask",
    "meshgrid",
    "gather_range",
    "gather_nd_of_stacked_range",
    "top_k",
    "fill",
    "tensor_scatter_nd_update",
    "pad_to_length",
    "unsorted_segment_sum",
    "linspace",
    "tensor_array_size",
    "resize_size",
}


@pytest.mark.parametrize("signature", [False, True], ids=["per_shape", "every_size"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_shape_tensor_arguments_match_tf(name, signature):
    op = _CASES[name]

    def body(tf):
        static_shapes = []

        def fn(x):
            out = op(tf, x)
            static_shapes.append(str(out.shape))
            return out

        spec = [tf.TensorSpec([None, 3], tf.float32)] if signature else None
        f = tf.function(fn, input_signature=spec)
        x = np.arange(12, dtype=np.float32).reshape(4, 3)
        results = [f(tf.constant(x[:n])) for n in (3, 2, 3, 4)]  # (a first call of each size is on the host)
        # A trace per shape (the fallback) knows sizes that TF's trace for every size shows as None; TF's
        # `TensorArray.stack` does not take its size from `size`, even where it is known (a trace per shape
        # knows it); a symbolic padding `4 - n` of a size n gives 4 rows, where TF's shape inference gives None.
        compared = (name in _SYMBOLIC or not signature) and (signature or name != "tensor_array_size")
        compared = compared and not (signature and name == "pad_to_length")
        return results, static_shapes[:1] if compared else None

    stats = dict(function_symbolic.stats)
    check(body)
    if signature:
        fell_back = function_symbolic.stats["symbolic_fallbacks"] - stats["symbolic_fallbacks"]
        assert fell_back == (0 if name in _SYMBOLIC else 1)


def test_positional_embedding_trains_in_a_trace_for_every_size():
    """The keras.io transformer's token-and-position embedding, written with `tf.range(tf.shape(x)[-1])`, in a
    training step whose sequence length varies; its gradient reaches the rows of the positions used."""

    def body(tf):
        table = tf.Variable(np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3))
        traces = []

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
        def step(x):
            traces.append(1)
            with tf.GradientTape() as tape:
                positions = tf.range(start=0, limit=tf.shape(x)[-1], delta=1)
                embedded = tf.gather(table, positions)
                causal = tf.linalg.band_part(tf.ones((tf.shape(x)[-1], tf.shape(x)[-1])), -1, 0)
                loss = tf.reduce_sum(tf.matmul(causal, embedded) * tf.reduce_mean(x))
            gradient = tape.gradient(loss, table)
            table.assign_sub(0.1 * tf.convert_to_tensor(gradient))
            return loss

        losses = [step(tf.ones([2, n])) for n in (3, 5, 3, 8)]
        return losses, table, len(traces)

    check(body)


def test_a_scatter_index_out_of_a_size_known_per_call_raises_when_the_call_runs():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def f(x):
            return tf.tensor_scatter_nd_update(x, [[2]], [[9.0, 9.0, 9.0]])

        return f(tf.ones([3, 3])), f(tf.ones([2, 3]))

    check_raises(body)


def test_a_padding_computed_from_a_size_known_per_call_is_checked_when_the_call_runs():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def to_four_rows(x):
            return tf.pad(x, [[0, 4 - tf.shape(x)[0]], [1, 0]], constant_values=7.0)

        return to_four_rows(tf.ones([2, 3])), to_four_rows(tf.ones([4, 3])), to_four_rows(tf.ones([5, 3]))

    check_raises(body)


def test_graph_convolution_messages_summed_per_node_in_a_trace_for_every_size():
    """keras.io's GNN node classification aggregates messages with `unsorted_segment_sum(..., num_segments=
    tf.shape(nodes)[0])`; graphs of different sizes share one trace, and the gradient reaches the weights."""

    def body(tf):
        weights = tf.Variable(np.linspace(-0.5, 0.5, 6, dtype=np.float32).reshape(3, 2))
        traces = []

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None, 2], tf.int32)])
        def loss_and_gradient(nodes, edges):
            traces.append(1)
            with tf.GradientTape() as tape:
                messages = tf.matmul(tf.gather(nodes, edges[:, 1]), weights)
                summed = tf.math.unsorted_segment_sum(messages, edges[:, 0], num_segments=tf.shape(nodes)[0])
                loss = tf.reduce_sum(tf.nn.relu(summed) ** 2)
            return loss, tape.gradient(loss, weights)

        rng = np.random.default_rng(5)
        results = []
        for n_nodes, n_edges in ((4, 6), (7, 6), (5, 9)):
            nodes = rng.normal(size=(n_nodes, 3)).astype(np.float32)
            edges = rng.integers(0, n_nodes, size=(n_edges, 2)).astype(np.int32)
            results.append(loss_and_gradient(tf.constant(nodes), tf.constant(edges)))
        return results, len(traces)

    check(body, rtol=1e-5)


_NEGATIVE_ON_SMALL_CALLS = {
    "range": lambda tf, x: tf.range(tf.shape(x)[0] - 3),
    "range_from_two": lambda tf, x: tf.range(2, tf.shape(x)[0]),
    "range_down": lambda tf, x: tf.range(0, tf.shape(x)[0], -1),
    "sequence_mask": lambda tf, x: tf.sequence_mask([1, 2], tf.shape(x)[0] - 3),
    "one_hot": lambda tf, x: tf.one_hot([0, 1], depth=tf.shape(x)[0] - 3),
    "eye": lambda tf, x: tf.eye(2, tf.shape(x)[0] - 3),
    "pad": lambda tf, x: tf.pad(x, [[0, tf.shape(x)[0] - 3], [0, 0]]),
    "linspace": lambda tf, x: tf.linspace(tf.constant([0.0, 10.0]), 1.0, tf.shape(x)[0] - 3, axis=1),
    "tensor_array": lambda tf, x: tf.TensorArray(tf.float32, size=tf.shape(x)[0] - 3, element_shape=[2]).stack(),
}


@pytest.mark.parametrize("name", sorted(_NEGATIVE_ON_SMALL_CALLS))
def test_a_size_known_per_call_that_goes_negative_raises_on_that_call_only(name):
    op = _NEGATIVE_ON_SMALL_CALLS[name]

    def body(tf):
        f = tf.function(lambda x: op(tf, x), input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        results = []
        for n in (4, 1, 5, 3):
            try:
                results.append(f(tf.ones([n, 2])))
            except tf.errors.InvalidArgumentError as error:  # TF's kernel checks the size when the graph runs
                results.append(type(error).__name__)
        return results

    stats = dict(function_symbolic.stats)
    check(body)
    assert function_symbolic.stats["symbolic_fallbacks"] == stats["symbolic_fallbacks"]


@pytest.mark.parametrize(
    "op",
    [
        lambda tf, x: tf.math.top_k(x, tf.shape(x)[0] - 3).values,  # TF's shape inference: ValueError
        lambda tf, x: tf.linspace(0.0, 1.0, tf.shape(x)[0] - 3),  # ValueError
        lambda tf, x: tf.TensorArray(tf.float32, size=tf.shape(x)[0] - 3).stack(),  # InvalidArgumentError
    ],
    ids=["top_k", "linspace", "tensor_array"],
)
def test_a_negative_size_folded_in_a_trace_per_shape_raises_tfs_error(op):
    check_raises(lambda tf: tf.function(lambda x: op(tf, x))(tf.ones([1, 2])))


def test_leading_sizes_equal_on_the_first_call_and_different_later_share_one_more_trace():
    """A graph whose first call has as many edges as nodes: the shared leading symbol does not fit the next
    graph, which is traced once more for every size with symbols of its own (TF: one trace); values as TF's."""
    runs = []

    def body(tf):
        runs.clear()

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None], tf.int32)])
        def aggregate(nodes, edges):
            runs.append(1)
            return tf.math.unsorted_segment_sum(tf.gather(nodes, edges), edges, tf.shape(nodes)[0])

        sizes = [(4, 4), (5, 7), (6, 3), (8, 2), (5, 7)]
        return [aggregate(tf.ones([n, 2]), tf.range(e) % n) for n, e in sizes]

    stats = dict(function_symbolic.stats)
    check(body)
    assert len(runs) == 2
    assert function_symbolic.stats["symbolic_fallbacks"] == stats["symbolic_fallbacks"]


def test_a_table_sliced_to_a_length_known_per_call_adds_to_it_and_raises_past_the_table():
    """`x + pos_encoding[:, :tf.shape(x)[1], :]`: the slice's rows are `min(4, n)`, the input's `n`; TF's graph
    checks that they agree when it runs, and so does the trace for every size (no trace per shape)."""

    def body(tf):
        table = tf.constant(np.arange(12, dtype=np.float32).reshape(1, 4, 3))
        f = tf.function(lambda x: x + table[:, : tf.shape(x)[1], :], input_signature=[tf.TensorSpec([None, None, 3])])
        results = []
        for n in (2, 4, 6, 3):
            try:
                results.append(f(tf.ones([2, n, 3])))
            except tf.errors.InvalidArgumentError as error:
                results.append(type(error).__name__)
        return results

    stats = dict(function_symbolic.stats)
    check(body)
    assert function_symbolic.stats["symbolic_fallbacks"] == stats["symbolic_fallbacks"]


def _transformer_step(tf):
    """TF's transformer tutorial, reduced: positional encoding sliced to the sequence, look-ahead and padding
    masks from `tf.shape`, multi-head attention reshaping with `tf.shape(q)[0]`, a sparse cross-entropy, in a
    training step with a `(None, None)` signature called with batches of several shapes."""

    def positional_encoding(length, depth):
        positions = np.arange(length)[:, None]
        rates = 1 / np.power(10000, (2 * (np.arange(depth)[None, :] // 2)) / np.float32(depth))
        angles = positions * rates
        angles[:, 0::2], angles[:, 1::2] = np.sin(angles[:, 0::2]), np.cos(angles[:, 1::2])
        return tf.cast(angles[None, ...], tf.float32)

    rng = np.random.default_rng(1)
    d_model, heads, vocab = 8, 2, 20
    embedding = tf.Variable(rng.normal(size=(vocab, d_model)).astype(np.float32) * 0.3)
    projections = [tf.Variable(rng.normal(size=(d_model, d_model)).astype(np.float32) * 0.2) for _ in range(4)]
    encoding = positional_encoding(50, d_model)
    traces = []

    def split_heads(x, batch_size):
        return tf.transpose(tf.reshape(x, (batch_size, -1, heads, d_model // heads)), perm=[0, 2, 1, 3])

    @tf.function(input_signature=[tf.TensorSpec((None, None), tf.int64)])
    def train_step(tokens):
        traces.append(1)
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        length = tf.shape(inputs)[1]
        look_ahead = 1 - tf.linalg.band_part(tf.ones((length, length)), -1, 0)
        padding = tf.cast(tf.math.equal(inputs, 0), tf.float32)[:, tf.newaxis, tf.newaxis, :]
        mask = tf.maximum(padding, look_ahead)
        with tf.GradientTape() as tape:
            x = tf.gather(embedding, inputs) * tf.math.sqrt(tf.cast(d_model, tf.float32))
            x += encoding[:, :length, :]
            batch_size = tf.shape(x)[0]
            q, k, v = (split_heads(tf.matmul(x, w), batch_size) for w in projections[:3])
            scores = tf.matmul(q, k, transpose_b=True) / tf.math.sqrt(tf.cast(tf.shape(k)[-1], tf.float32))
            attended = tf.matmul(tf.nn.softmax(scores + mask * -1e9, axis=-1), v)
            merged = tf.reshape(tf.transpose(attended, perm=[0, 2, 1, 3]), (batch_size, -1, d_model))
            logits = tf.matmul(tf.matmul(merged, projections[3]), embedding, transpose_b=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
        variables = [embedding, *projections]
        for variable, gradient in zip(variables, tape.gradient(loss, variables)):
            variable.assign_sub(0.1 * tf.convert_to_tensor(gradient))
        return loss

    losses = []
    for batch, length in ((4, 7), (2, 9), (4, 7), (3, 5)):
        tokens = rng.integers(1, vocab, size=(batch, length)).astype(np.int64)
        tokens[0, -2:] = 0
        losses.append(train_step(tf.constant(tokens)))
    return losses, len(traces)


def test_the_transformer_tutorials_train_step_with_a_none_signature_is_traced_once():
    stats = dict(function_symbolic.stats)
    check(_transformer_step, rtol=1e-5)
    assert function_symbolic.stats["symbolic_fallbacks"] == stats["symbolic_fallbacks"]


def _running_rows(tf, x):
    """The RNN-style loop: a TensorArray of `tf.shape(x)[0]` rows written at each step of `for i in tf.range(n)`;
    returns it and the last running total."""
    n = tf.shape(x)[0]
    rows = tf.TensorArray(tf.float32, size=n)
    total = tf.zeros([3])
    for i in tf.range(n):
        total = total * 0.5 + x[i]
        rows = rows.write(i, tf.tanh(total))
    return rows, total


def test_a_tensor_array_sized_per_call_written_in_a_loop():
    """An RNN-style loop inside a function traced once for every size: a TensorArray of `tf.shape(x)[0]` rows
    written at each step of `for i in tf.range(n)`, stacked; gradients through it under a tape."""
    runs = []

    def body(tf):
        runs.clear()

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def running(x):
            runs.append(1)
            rows, _ = _running_rows(tf, x)
            return rows.stack(), rows.size(), rows.read(tf.shape(x)[0] - 1)

        x = np.linspace(-1.0, 1.0, 15, dtype=np.float32).reshape(5, 3)
        results = [running(tf.constant(x[:n])) for n in (5, 2, 4, 5)]
        variable = tf.Variable(x[:4])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(running(variable)[0] ** 2)
        return results, tape.gradient(loss, variable), str(running.get_concrete_function().structured_outputs[0].shape)

    stats = dict(function_symbolic.stats)
    check(body, rtol=1e-5)
    assert function_symbolic.stats["symbolic_fallbacks"] == stats["symbolic_fallbacks"]
    # TF runs the Python function once; tapeshim once for all sizes, and once more for the call under the tape
    # (JAX cannot differentiate an exported loop: that call runs a trace for its own shapes)
    assert len(runs) == 2


def test_a_tensor_array_loop_over_no_rows():
    """The RNN-style loop on a 0-row input, with a `None` signature and without: the body is traced, never run
    (its `x[i]` must not be checked against the empty axis while tracing)."""

    def body(tf):
        def running(x):
            rows, total = _running_rows(tf, x)
            return rows.stack(), rows.size(), total

        signed = tf.function(running, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        unsigned = tf.function(running)
        x = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
        return [f(tf.constant(x[:n])) for f in (signed, unsigned) for n in (2, 0, 1)]

    check(body)


def test_gradients_through_a_loop_over_a_size_known_per_call():
    """A loop whose trip count is `tf.shape(x)[0]` in a trace for every size, differentiated by a tape (JAX's
    VJP of the exported loop raised its own ValueError)."""

    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def decayed(x):
            total = tf.zeros([3])
            for i in tf.range(tf.shape(x)[0]):
                total = total * 0.5 + tf.sin(x[i])
            return total

        variable = tf.Variable(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))
        gradients = []
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(decayed(variable) ** 2)
            gradients.append(tape.gradient(loss, variable))
        return decayed(tf.ones([2, 3])), gradients

    check(body, rtol=1e-5)
