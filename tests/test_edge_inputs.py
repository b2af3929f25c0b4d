"""Edge inputs real programs hit (empty batches, one-element vectors, scalars where vectors are usual), against
real TensorFlow: the values TF returns, or TF's error class where TF raises (never an error from inside JAX)."""

import numpy as np
import pytest

from oracle import check, check_raises

_VALUES = {
    "reshape_empty_rows": lambda tf: tf.reshape(tf.zeros([0, 3]), [-1, 3]),
    "reshape_empty_flat": lambda tf: tf.reshape(tf.zeros([0]), [-1]),
    "reshape_empty_middle": lambda tf: tf.reshape(tf.zeros([2, 0, 3]), [3, -1]),
    "reshape_zero_requested": lambda tf: tf.reshape(tf.zeros([2, 0]), [0, -1]),
    "reshape_empty_in_a_function": lambda tf: tf.function(lambda x: tf.reshape(x, [-1, 3]))(tf.zeros([0, 3])),
    "boolean_mask_empty": lambda tf: tf.boolean_mask(tf.zeros([0]), tf.zeros([0]) > 0),
    "reduce_max_empty_axis": lambda tf: tf.reduce_max(tf.zeros([0, 3]), axis=0),
    "reduce_min_empty_axis_ints": lambda tf: tf.reduce_min(tf.zeros([0, 3], tf.int32), axis=0),
    "reduce_max_empty_in_a_function": lambda tf: tf.function(lambda x: tf.reduce_max(x, 1))(tf.zeros([2, 0])),
    "xent_int_labels": lambda tf: tf.nn.softmax_cross_entropy_with_logits(labels=[[0, 1]], logits=[[1.0, 2.0]]),
    "xent_float64_labels": lambda tf: tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.constant([[0.0, 1.0]], tf.float64), logits=[[1.0, 2.0]]
    ),
    "xent_broadcast_labels": lambda tf: tf.nn.softmax_cross_entropy_with_logits(
        labels=[[0.0, 1.0]], logits=[[1.0, 2.0], [3.0, 4.0]]
    ),
    "stack_no_values": lambda tf: tf.stack([]),
    "stack_python_numbers": lambda tf: tf.stack([1, 2.5]),
    "expand_dims_one_element_list": lambda tf: tf.expand_dims(tf.ones([2]), [0]),
    "range_of_a_one_element_vector": lambda tf: tf.range(tf.constant([3])),
    "unique_empty_ints": lambda tf: tf.unique(tf.zeros([0], tf.int32)),
    "indexed_slices_without_a_dense_shape_shape": lambda tf: str(tf.IndexedSlices(tf.ones([1, 2]), [0]).shape),
    "indexed_slices_of_python_lists": lambda tf: tf.convert_to_tensor(tf.IndexedSlices([[1.0, 2.0]], [1], [3, 2])),
    "einsum_of_int64_and_half": lambda tf: (
        tf.einsum("ij,jk->ik", tf.ones([2, 2], tf.int64), tf.ones([2, 2], tf.int64)),
        tf.einsum("ij->j", tf.ones([2, 2], tf.float16)),
    ),
    "batched_matmul_of_int16": lambda tf: tf.ones([3, 2, 2], tf.int16) @ tf.ones([2, 2], tf.int16),
    "einsum_broadcasting_dots": lambda tf: tf.einsum("...ij,...jk->...ik", tf.ones([2, 3, 4]), tf.ones([4, 5])),
    "einsum_dots_over_no_dimensions": lambda tf: (
        tf.einsum("i...j->ij", tf.ones([2, 3])),
        tf.einsum("ij...", tf.ones([2, 3, 4])),
    ),
    "scatter_nd_bools": lambda tf: tf.scatter_nd([[1], [1]], [True, True], [3]),
    "gather_nd_empty_index_vectors": lambda tf: tf.gather_nd(tf.ones([2, 2]), tf.zeros([3, 0], tf.int32)),
    "gather_negative_batch_dims": lambda tf: tf.gather(tf.ones([2, 3]), tf.constant([[0], [1]]), batch_dims=-1),
    "argmax_of_bools": lambda tf: tf.argmax(tf.constant([False, True])),
    "invert_of_ints": lambda tf: (~tf.constant([1]), ~tf.constant([1], tf.uint8), ~tf.Variable([3])),
}

_ERRORS = {
    "argmax_of_a_scalar": lambda tf: tf.argmax(tf.constant(1.0)),
    "argmin_of_a_scalar": lambda tf: tf.argmin(tf.constant(1.0), axis=-1),
    "gather_nd_scalar_indices": lambda tf: tf.gather_nd(tf.ones([2, 2]), 1),
    "add_n_of_nothing": lambda tf: tf.add_n([]),
    "range_of_a_vector": lambda tf: tf.range(tf.constant([3, 4])),
    "expand_dims_two_axes": lambda tf: tf.expand_dims(tf.ones([2]), [0, 1]),
    "tensor_array_read_past_the_end": lambda tf: tf.TensorArray(tf.float32, size=2).write(0, 1.0).read(2),
    "tensor_array_read_negative": lambda tf: tf.TensorArray(tf.float32, size=2).write(1, 2.0).read(-1),
    "tensor_array_write_negative": lambda tf: tf.TensorArray(tf.float32, size=2).write(-1, 1.0),
    "xent_labels_not_broadcastable": lambda tf: tf.nn.softmax_cross_entropy_with_logits(
        labels=[[0.0, 1.0, 0.0]], logits=[[1.0, 2.0], [3.0, 4.0]]
    ),
    "conv2d_stride_0": lambda tf: tf.nn.conv2d(tf.ones([1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), 0, "SAME"),
    "conv1d_stride_0": lambda tf: tf.nn.conv1d(tf.ones([1, 5, 1]), tf.ones([2, 1, 1]), 0, "SAME"),
    "conv3d_stride_0": lambda tf: tf.nn.conv3d(
        tf.ones([1, 4, 4, 4, 1]), tf.ones([2, 2, 2, 1, 1]), [1, 0, 1, 1, 1], "SAME"
    ),
    "conv2d_dilation_0": lambda tf: tf.nn.conv2d(tf.ones([1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), 1, "SAME", dilations=0),
    "conv2d_lowercase_padding": lambda tf: tf.nn.conv2d(tf.ones([1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), 1, "same"),
    "max_pool_window_0": lambda tf: tf.nn.max_pool2d(tf.ones([1, 4, 4, 1]), 0, 1, "VALID"),
    "max_pool_stride_0": lambda tf: tf.nn.max_pool2d(tf.ones([1, 4, 4, 1]), 2, 0, "VALID"),
    "avg_pool_of_ints": lambda tf: tf.nn.avg_pool2d(tf.ones([1, 4, 4, 1], tf.int32), 2, 2, "VALID"),
    "add_n_of_different_shapes": lambda tf: tf.add_n([tf.ones([2, 2]), tf.ones([2])]),
    "where_of_a_scalar": lambda tf: tf.where(tf.constant(True)),
    "matmul_transposed_and_adjoint": lambda tf: tf.matmul(
        tf.ones([2, 2]), tf.ones([2, 2]), transpose_a=True, adjoint_a=True
    ),
    "negative_of_unsigned": lambda tf: -tf.constant([1], tf.uint8),
    "stack_of_a_bool_and_an_int": lambda tf: tf.stack([True, 1]),
    "stack_of_ragged_lists": lambda tf: tf.stack([[1, 2], [3]]),
    "tensor_scatter_nd_add_of_bools": lambda tf: tf.tensor_scatter_nd_add(tf.constant([True, False]), [[1]], [True]),
    "matmul_of_int8": lambda tf: tf.matmul(tf.ones([1, 2], tf.int8), tf.ones([2, 1], tf.int8)),
    "einsum_of_int8": lambda tf: tf.einsum("ij,jk->ik", tf.ones([2, 2], tf.int8), tf.ones([2, 2], tf.int8)),
    "einsum_of_bools": lambda tf: tf.einsum("ij->ji", tf.ones([2, 2], tf.bool)),
    "tensordot_of_int16": lambda tf: tf.tensordot(tf.ones([2, 2], tf.int16), tf.ones([2, 2], tf.int16), 1),
    "matmul_of_uint8": lambda tf: tf.matmul(tf.ones([1, 2], tf.uint8), tf.ones([2, 1], tf.uint8)),
    "batched_matmul_of_uint16": lambda tf: tf.ones([2, 2, 2], tf.uint16) @ tf.ones([2, 2, 2], tf.uint16),
    "batched_matmul_of_int8": lambda tf: tf.matmul(tf.ones([3, 2, 2], tf.int8), tf.ones([3, 2, 2], tf.int8)),
    "matmul_of_int16_in_a_function": lambda tf: tf.function(lambda a: tf.matmul(a, a))(tf.ones([2, 2], tf.int16)),
    "einsum_of_a_size_one_label": lambda tf: tf.einsum("ij,jk->ik", tf.ones([2, 1]), tf.ones([3, 4])),
    "einsum_of_other_label_sizes": lambda tf: tf.einsum("ij,ij->ij", tf.ones([2, 3]), tf.ones([2, 2])),
    "einsum_of_a_size_one_label_after_dots": lambda tf: tf.einsum("...j,...j->...j", tf.ones([2, 1]), tf.ones([1, 3])),
    "einsum_summing_dots_dimensions": lambda tf: tf.einsum("i...j->ij", tf.ones([2, 3, 4, 5])),
    "einsum_summing_leading_dots": lambda tf: tf.einsum("...ij->ij", tf.ones([2, 3, 4])),
    "batch_of_different_shapes": lambda tf: list(
        tf.data.Dataset.from_generator(
            lambda: iter([[1], [1, 2]]), output_signature=tf.TensorSpec([None], tf.int32)
        ).batch(2)
    ),
}


@pytest.mark.parametrize("name", sorted(_VALUES))
def test_edge_inputs_give_tfs_values(name):
    check(_VALUES[name])


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_edge_inputs_raise_tfs_error_class(name):
    check_raises(_ERRORS[name])


def test_gradient_of_a_reduce_max_over_an_empty_axis():
    def body(tf):
        variable = tf.Variable(np.zeros((0, 3), np.float32))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.reduce_max(variable, axis=0))
        return loss, tape.gradient(loss, variable)

    check(body)


def _summed_rows(tf):
    @tf.function
    def summed(x):
        total = tf.constant(0.0)
        for i in tf.range(tf.shape(x)[0]):
            total += x[i] + tf.gather(x, i)
        return total

    return summed


_IN_FUNCTIONS = {
    "a_loop_over_no_rows": lambda tf: _summed_rows(tf)(tf.zeros([0])),
    "a_loop_over_rows": lambda tf: _summed_rows(tf)(tf.ones([3])),
    "a_loop_over_no_rows_every_size": lambda tf: tf.function(
        _summed_rows(tf), input_signature=[tf.TensorSpec([None], tf.float32)]
    )(tf.zeros([0])),
}
_ERRORS_IN_FUNCTIONS = {
    "an_index_into_no_rows": lambda tf: tf.function(lambda x, i: x[i])(tf.zeros([0]), tf.constant(0)),
    "a_gather_from_no_rows": lambda tf: tf.function(lambda x, i: tf.gather(x, i))(
        tf.zeros([0, 2]), tf.constant([0, 1])
    ),
}


@pytest.mark.parametrize("name", sorted(_IN_FUNCTIONS))
def test_functions_over_empty_inputs_give_tfs_values(name):
    check(_IN_FUNCTIONS[name])


@pytest.mark.parametrize("name", sorted(_ERRORS_IN_FUNCTIONS))
def test_functions_indexing_empty_inputs_raise_tfs_error_when_they_run(name):
    check_raises(_ERRORS_IN_FUNCTIONS[name])


def test_a_reshape_of_sizes_known_per_call_to_a_fixed_shape():
    """`tf.reshape(x, [2, 2])` of an `x` of unknown size: TF checks the count when the call runs (JAX's shape
    refinement failed with its own error)."""

    def body(tf):
        square = tf.function(lambda a: tf.reshape(a, [2, 2]) * 2.0, input_signature=[tf.TensorSpec([None])])
        results = []
        for n in (4, 3, 4):
            try:
                results.append(square(tf.ones([n])))
            except tf.errors.InvalidArgumentError as error:
                results.append(type(error).__name__)
        variable = tf.Variable(np.arange(4.0, dtype=np.float32))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(square(variable) * tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        return results, tape.gradient(loss, variable)

    check(body)


_ROWS = np.arange(12, dtype=np.float32).reshape(4, 3)
_TENSOR_ARRAYS = {
    "gather": lambda tf: tf.TensorArray(tf.float32, size=4).unstack(_ROWS).gather([3, 1]),
    "scatter": lambda tf: tf.TensorArray(tf.float32, size=4).scatter([2, 0], _ROWS[:2]).stack(),
    "scatter_grows_a_dynamic_array": lambda tf: (
        tf.TensorArray(tf.float32, size=0, dynamic_size=True).scatter([2, 0], _ROWS[:2]).size()
    ),
    "split": lambda tf: tf.TensorArray(tf.float32, size=2).split(_ROWS, [1, 3]).read(1),
    "split_then_concat": lambda tf: tf.TensorArray(tf.float32, size=2, infer_shape=False).split(_ROWS, [1, 3]).concat(),
    "concat": lambda tf: tf.TensorArray(tf.float32, size=2).write(0, _ROWS[:2]).write(1, _ROWS[2:]).concat(),
    "identity": lambda tf: tf.TensorArray(tf.float32, size=1).write(0, 1.0).identity().stack(),
    "scatter_and_gather_in_a_function": lambda tf: tf.function(
        lambda v, at: (lambda ta: (ta.stack(), ta.gather([1, 0])))(tf.TensorArray(tf.float32, size=4).scatter(at, v))
    )(tf.constant(_ROWS[:2]), tf.constant([1, 3])),
}


@pytest.mark.parametrize("name", sorted(_TENSOR_ARRAYS))
def test_tensor_array_methods(name):
    check(_TENSOR_ARRAYS[name])


def test_tensor_array_split_lengths_must_cover_the_value():
    check_raises(lambda tf: tf.TensorArray(tf.float32, size=2).split(_ROWS, [1, 2]))


@pytest.mark.parametrize("values", [[1.0, np.nan, 0.0], [np.nan, 1.0, 2.0], [np.nan, np.nan], [np.inf, np.nan]])
def test_argmax_and_argmin_skip_nan_as_tf(values):
    check(lambda tf: (tf.argmin(tf.constant(values, tf.float32)), tf.argmax(tf.constant(values, tf.float32))))


def test_review_regressions_of_this_change():
    """Cases a review of the change found: each as TF gives it."""

    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 2])])
        def summed_rows(x):
            rows = tf.TensorArray(tf.float32, size=tf.shape(x)[0]).unstack(x)
            total = tf.zeros([2])
            for i in tf.range(tf.shape(x)[0]):
                total += rows.read(i)
            return total

        variable = tf.Variable(tf.ones([3, 2]))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(summed_rows(variable * 1.0))

        @tf.function(input_signature=[tf.TensorSpec([None])])
        def scaled(x, scale=2.0):
            return x * scale

        return (
            tape.gradient(loss, variable),
            scaled(tf.ones([2]), scale=2),
            tf.math.in_top_k(tf.constant([2]), tf.constant([[np.nan, 0.0, 1.0]]), 1),
            tf.math.segment_mean(tf.constant([16777217, 16777217, 3]), [0, 0, 1]),
            tf.math.segment_mean(tf.constant([[-7, 5], [0, 0]]), [0, 0]),
            tf.saturate_cast(tf.constant([100000, -100000], tf.int64), tf.float16),
            tf.saturate_cast(tf.constant([1e10, -1e10, 1.5], tf.float32), tf.float16),
        )

    check(body)
    check_raises(lambda tf: tf.stack([[1, 2], [3]]))
    check_raises(lambda tf: tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(3.0))
    check_raises(
        lambda tf: tf.function(lambda x, *args, opt=1: x * opt, input_signature=[tf.TensorSpec([None])])(
            tf.ones([2]), 1
        )
    )
