"""Bad input to ops raises TF's error class, eagerly, inside a tape and inside `tf.function`.

Each body runs with real TensorFlow and with tapeshim (tests/oracle.py). Out-of-range
indices are checked on the host when they are concrete and inside the compiled
program when they are symbolic (a function argument, a lazily computed tensor).
"""

import numpy as np
import pytest

from oracle import check, check_raises

# -- out-of-range indices, eager -------------------------------------------------------------
OUT_OF_RANGE = {
    "gather": lambda tf: tf.gather(tf.constant([1.0, 2.0, 3.0]), [0, 5]),
    "gather_negative": lambda tf: tf.gather(tf.constant([1.0, 2.0, 3.0]), [-1]),
    "gather_axis1": lambda tf: tf.gather(tf.ones([2, 3]), [3], axis=1),
    "gather_batch_dims": lambda tf: tf.gather(tf.ones([2, 3]), [[0], [3]], batch_dims=1),
    "gather_nd": lambda tf: tf.gather_nd(tf.ones([2, 3]), [[0, 3]]),
    "gather_nd_negative": lambda tf: tf.gather_nd(tf.ones([2, 3]), [[-1, 0]]),
    "gather_nd_batch_dims": lambda tf: tf.gather_nd(tf.ones([2, 3]), [[1], [3]], batch_dims=1),
    "scatter_nd": lambda tf: tf.scatter_nd([[5]], [1.0], [3]),
    "tensor_scatter_nd_update": lambda tf: tf.tensor_scatter_nd_update(tf.ones([3]), [[3]], [1.0]),
    "tensor_scatter_nd_add_negative": lambda tf: tf.tensor_scatter_nd_add(tf.ones([3]), [[-1]], [1.0]),
    "unsorted_segment_sum": lambda tf: tf.math.unsorted_segment_sum(tf.ones([3]), [0, 1, 4], 3),
    "unsorted_segment_mean": lambda tf: tf.math.unsorted_segment_mean(tf.ones([3]), [0, 1, 3], 3),
    "unsorted_segment_max": lambda tf: tf.math.unsorted_segment_max(tf.ones([3]), [3, 1, 0], 3),
    "segment_sum_unsorted": lambda tf: tf.math.segment_sum(tf.ones([3]), [1, 0, 2]),
    "segment_sum_negative": lambda tf: tf.math.segment_sum(tf.ones([3]), [-1, 0, 0]),
    "embedding_lookup": lambda tf: tf.nn.embedding_lookup(tf.ones([3, 2]), [3]),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_RANGE))
def test_out_of_range_indices_raise_eagerly(name):
    check_raises(OUT_OF_RANGE[name])


def test_in_range_index_ops_and_dropped_negative_segment_ids():
    def body(tf):
        x = tf.reshape(tf.range(6.0), [2, 3])
        return (
            tf.gather(x, [[0], [2]], batch_dims=1),
            tf.gather(x, [2, 0], axis=1),
            tf.gather_nd(x, [[1], [0]], batch_dims=1),
            tf.gather_nd(x, [[1, 2], [0, 0]]),
            tf.scatter_nd([[1], [1]], [1.0, 2.0], [3]),
            tf.tensor_scatter_nd_update(tf.ones([3]), [[2]], [5.0]),
            tf.math.unsorted_segment_sum(tf.ones([3]), [0, -1, 2], 3),
            tf.math.unsorted_segment_max(tf.ones([3]), [0, -1, 2], 3),
            tf.math.segment_sum(tf.ones([3]), [0, 0, 2]),
        )

    check(body)


# -- out-of-range indices only known when the program runs -------------------------------------
FUNCTION_CASES = {
    "gather": (lambda tf, i: tf.gather(tf.constant([1.0, 2.0, 3.0]), i), [0, 2], [0, 5]),
    "gather_negative": (lambda tf, i: tf.gather(tf.constant([1.0, 2.0, 3.0]), i), [1], [-1]),
    "gather_axis1": (lambda tf, i: tf.gather(tf.ones([2, 3]), i, axis=1), [[2, 1]], [[0, 3]]),
    "gather_nd": (lambda tf, i: tf.gather_nd(tf.ones([2, 3]), i), [[1, 2]], [[2, 0]]),
    "scatter_nd": (lambda tf, i: tf.scatter_nd(i, [1.0], [3]), [[2]], [[3]]),
    "tensor_scatter_nd_update": (lambda tf, i: tf.tensor_scatter_nd_update(tf.ones([3]), i, [4.0]), [[0]], [[-1]]),
    "tensor_scatter_nd_add": (lambda tf, i: tf.tensor_scatter_nd_add(tf.ones([3]), i, [4.0]), [[1]], [[7]]),
    "unsorted_segment_sum": (lambda tf, i: tf.math.unsorted_segment_sum(tf.ones([3]), i, 3), [0, -1, 2], [0, 1, 3]),
    "embedding_lookup": (lambda tf, i: tf.nn.embedding_lookup(tf.ones([3, 2]), i), [2, 0], [1, 3]),
}


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_out_of_range_indices_raise_inside_function_on_a_later_call(name):
    op, good, bad = FUNCTION_CASES[name]

    def body(tf):
        f = tf.function(lambda i: op(tf, i))
        first = f(tf.constant(good))
        try:
            f(tf.constant(bad))
        except tf.errors.InvalidArgumentError:
            return first, "InvalidArgumentError"
        return first, "no error"

    check(body)


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_out_of_range_indices_computed_inside_a_tape(name):
    op, _, bad = FUNCTION_CASES[name]

    def body(tf):
        x = tf.Variable(np.asarray(bad, np.float32))
        with tf.GradientTape() as tape:
            indices = tf.cast(x * 1.0, tf.int32)  # computed from a watched value: lazy in tapeshim
            y = op(tf, indices)
            loss = tf.reduce_sum(y) + tf.reduce_sum(x)
        return tape.gradient(loss, x)

    check_raises(body)


def test_lazy_in_range_indices_give_tf_gradients():
    def body(tf):
        x = tf.Variable([2.0, 0.0, 1.0])
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with tf.GradientTape(persistent=True) as tape:
            indices = tf.cast(x, tf.int32)
            rows = tf.gather(w, indices)
            loss = tf.reduce_sum(rows * rows) + tf.reduce_sum(tf.gather_nd(w, tf.stack([indices, indices * 0], 1)))
        dw = tape.gradient(loss, w)
        return tf.convert_to_tensor(dw), loss, tape.jacobian(rows, w)

    check(body)


def test_function_gradient_through_checked_gather_and_cond():
    def body(tf):
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

        @tf.function
        def step(ids, flag):
            with tf.GradientTape() as tape:
                rows = tf.cond(flag, lambda: tf.gather(w, ids), lambda: tf.gather(w, ids) * 2.0)
                loss = tf.reduce_sum(rows * rows)
            return loss, tf.convert_to_tensor(tape.gradient(loss, w))

        good = step(tf.constant([2, 0]), tf.constant(True)), step(tf.constant([1, 1]), tf.constant(False))
        try:
            step(tf.constant([1, 3]), tf.constant(False))
        except tf.errors.InvalidArgumentError:
            return good, "InvalidArgumentError"
        return good, "no error"

    check(body)


def test_function_called_under_a_tape_with_bad_indices():
    def body(tf):
        w = tf.Variable([1.0, 2.0, 3.0])
        f = tf.function(lambda ids: tf.reduce_sum(tf.gather(w, ids)))
        with tf.GradientTape() as tape:
            y = f(tf.constant([0, 2]))
        good = tape.gradient(y, w)
        with tf.GradientTape() as tape:
            y = f(tf.constant([0, 4]))
        return tf.convert_to_tensor(good), tape.gradient(y, w)

    check_raises(body)


# -- errors TF raises for bad values and shapes (issue 10 B and its class) -----------------------
HUGE = [2**20, 2**20]
BAD_INPUT = {
    "range_start_above_limit": lambda tf: tf.range(5, 2),
    "range_start_below_limit_negative_delta": lambda tf: tf.range(2, 5, -1),
    "range_float_start_above_limit": lambda tf: tf.range(5.0, 2.0),
    "range_tensor_start": lambda tf: tf.range(tf.constant(5), 2),
    "inv_singular": lambda tf: tf.linalg.inv(tf.constant([[1.0, 2.0], [2.0, 4.0]])),
    "inv_zero_float64": lambda tf: tf.linalg.inv(tf.zeros([2, 2], tf.float64)),
    "inv_batch_one_singular": lambda tf: tf.linalg.inv(tf.stack([tf.eye(2), tf.zeros([2, 2])])),
    "solve_singular": lambda tf: tf.linalg.solve(tf.constant([[1.0, 2.0], [2.0, 4.0]]), tf.ones([2, 1])),
    "solve_rhs_shape": lambda tf: tf.linalg.solve(tf.eye(2), tf.ones([3, 1])),
    "triangular_solve_rhs_shape": lambda tf: tf.linalg.triangular_solve(tf.eye(2), tf.ones([3, 1])),
    "band_part_rank1": lambda tf: tf.linalg.band_part(tf.ones([3]), 0, 0),
    "diag_scalar": lambda tf: tf.linalg.diag(tf.constant(1.0)),
    "trace_rank1": lambda tf: tf.linalg.trace(tf.ones([3])),
    "random_normal_negative_dim": lambda tf: tf.random.normal([-2]),
    "random_uniform_negative_dim": lambda tf: tf.random.uniform([2, -1]),
    "random_uniform_int_negative_dim": lambda tf: tf.random.uniform([-1], maxval=5, dtype=tf.int32),
    "random_uniform_int_empty_range": lambda tf: tf.random.uniform([2], minval=5, maxval=5, dtype=tf.int32),
    "random_truncated_normal_negative_dim": lambda tf: tf.random.truncated_normal([-3]),
    "random_categorical_negative_samples": lambda tf: tf.random.categorical(tf.zeros([2, 3]), -1),
    "random_normal_float_shape": lambda tf: tf.random.normal([2.5]),
    "random_normal_int_dtype": lambda tf: tf.random.normal([2], dtype=tf.int32),
    "stateless_normal_negative_dim": lambda tf: tf.random.stateless_normal([-2], seed=[1, 2]),
    "stateless_uniform_negative_dim": lambda tf: tf.random.stateless_uniform([-2], seed=[1, 2]),
    "generator_normal_negative_dim": lambda tf: tf.random.Generator.from_seed(1).normal([-2]),
    "zeros_huge": lambda tf: tf.zeros(HUGE),
    "ones_huge": lambda tf: tf.ones(HUGE),
    "fill_huge": lambda tf: tf.fill(HUGE, 1.0),
    "random_normal_huge": lambda tf: tf.random.normal(HUGE),
    "random_uniform_huge": lambda tf: tf.random.uniform(HUGE),
    "zeros_float_shape": lambda tf: tf.zeros([2.5]),
    "zeros_matrix_shape": lambda tf: tf.zeros([[2, 3]]),
    "ones_negative_dim": lambda tf: tf.ones([-1]),
    "reshape_size_below_minus_one": lambda tf: tf.reshape(tf.ones([6]), [-2, 3]),
    "reshape_two_unknown": lambda tf: tf.reshape(tf.ones([6]), [-1, -1]),
    "reshape_no_multiple": lambda tf: tf.reshape(tf.ones([6]), [4, -1]),
    "reshape_zero_of_nonempty": lambda tf: tf.reshape(tf.ones([6]), [0, -1]),
    "tile_negative_multiple": lambda tf: tf.tile(tf.ones([2]), [-1]),
    "pad_negative": lambda tf: tf.pad(tf.ones([2]), [[-1, 0]]),
    "pad_reflect_too_wide": lambda tf: tf.pad(tf.ones([2]), [[2, 0]], mode="REFLECT"),
    "pad_symmetric_too_wide": lambda tf: tf.pad(tf.ones([2]), [[3, 0]], mode="SYMMETRIC"),
    "pad_three_columns": lambda tf: tf.pad(tf.ones([2]), [[1, 0, 1]]),
    "one_hot_negative_depth": lambda tf: tf.one_hot([0, 1], -1),
    "one_hot_axis_out_of_range": lambda tf: tf.one_hot([0, 1], 3, axis=3),
    "eye_negative_rows": lambda tf: tf.eye(-1),
    "eye_negative_columns": lambda tf: tf.eye(2, -1),
    "eye_negative_batch": lambda tf: tf.eye(2, batch_shape=[-1]),
    "split_two_unknown_sizes": lambda tf: tf.split(tf.ones([5]), [-1, -1]),
    "split_axis_out_of_range": lambda tf: tf.split(tf.ones([4]), 2, axis=1),
    "slice_too_long": lambda tf: tf.slice(tf.ones([3]), [2], [2]),
    "slice_negative_begin": lambda tf: tf.slice(tf.ones([3]), [-1], [1]),
    "slice_short_begin": lambda tf: tf.slice(tf.ones([3, 3]), [0], [1]),
    "slice_negative_size": lambda tf: tf.slice(tf.ones([3]), [0], [-2]),
    "strided_slice_unequal_lengths": lambda tf: tf.strided_slice(tf.ones([3]), [0, 0], [1]),
    "broadcast_to_negative_dim": lambda tf: tf.broadcast_to(tf.ones([1]), [-1]),
    "broadcast_to_lower_rank": lambda tf: tf.broadcast_to(tf.ones([2, 3]), [3]),
    "unstack_axis_out_of_range": lambda tf: tf.unstack(tf.ones([2]), axis=2),
    "unstack_wrong_num": lambda tf: tf.unstack(tf.ones([2]), num=3),
    "repeat_wrong_count": lambda tf: tf.repeat(tf.ones([2]), [1, 2, 3], axis=0),
    "repeat_negative": lambda tf: tf.repeat(tf.ones([2]), -1),
    "roll_unequal_shift_and_axis": lambda tf: tf.roll(tf.ones([2, 2]), [1, 1], [0]),
    "gather_axis_above_rank": lambda tf: tf.gather(tf.ones([2]), [0], axis=3),
    "gather_axis_below_rank": lambda tf: tf.gather(tf.ones([2]), [0], axis=-3),
    "gather_nd_index_too_deep": lambda tf: tf.gather_nd(tf.ones([2]), [[0, 0]]),
    "scatter_nd_negative_shape": lambda tf: tf.scatter_nd([[0]], [1.0], [-3]),
    "scatter_nd_updates_shape": lambda tf: tf.scatter_nd([[0]], [1.0, 2.0], [3]),
    "tensor_scatter_updates_shape": lambda tf: tf.tensor_scatter_nd_update(tf.ones([3]), [[0]], [1.0, 2.0]),
    "sequence_mask_negative_maxlen": lambda tf: tf.sequence_mask([1, 2], -1),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_raises_tf_error_class(name):
    check_raises(BAD_INPUT[name])


def test_valid_edge_inputs_match_tf():
    def body(tf):
        return (
            tf.range(2, 2),
            tf.range(5, 2, -1),
            tf.range(0.0, -1.0, -0.5),
            tf.reshape(tf.ones([0]), [0, -1]),
            tf.reshape(tf.ones([0, 4]), [-1, 2, 0]),
            tf.reshape(tf.ones([2, 3]), [3, -1]),
            tf.random.shuffle(tf.constant(3.0)),
            tf.zeros([]),
            tf.ones(3),
            tf.zeros(tf.constant([2, 1])),
            tf.random.normal([0]).shape,
            tf.linalg.inv(tf.constant([[2.0, 1.0], [1.0, 3.0]])),
            tf.linalg.solve(tf.constant([[2.0, 1.0], [1.0, 3.0]]), tf.ones([2, 1])),
            tf.one_hot([0, 1], 3, axis=0),
            tf.slice(tf.ones([3]), [3], [0]),
            tf.eye(0),
            tf.pad(tf.ones([2]), [[1, 1]], mode="REFLECT"),
            tf.pad(tf.ones([2]), [[2, 2]], mode="SYMMETRIC"),
        )

    check(body)


def test_singular_matrix_inside_function_and_tape():
    def body(tf):
        inverse = tf.function(lambda m: tf.linalg.inv(m))
        good = inverse(tf.constant([[2.0, 0.0], [0.0, 4.0]]))
        results = [good]
        try:
            inverse(tf.constant([[1.0, 2.0], [2.0, 4.0]]))
            results.append("no error")
        except tf.errors.InvalidArgumentError:
            results.append("InvalidArgumentError")
        x = tf.Variable([[1.0, 2.0], [2.0, 4.0]])
        try:
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(tf.linalg.inv(x * 1.0))
            results.append(tape.gradient(y, x))
        except tf.errors.InvalidArgumentError:
            results.append("InvalidArgumentError")
        x.assign([[2.0, 1.0], [1.0, 3.0]])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.linalg.solve(x * 1.0, tf.ones([2, 1])))
        results.append(tape.gradient(y, x))
        return results

    check(body)


def test_tensor_index_known_only_when_the_function_runs():
    def body(tf):
        x = tf.Variable([1.0, 2.0, 3.0])
        m = tf.reshape(tf.range(9.0), [3, 3])

        @tf.function
        def pick(i, j):
            with tf.GradientTape() as tape:
                y = x[i] * m[1, j] + m[i][j]
            return y, tape.gradient(y, x)

        @tf.function
        def total(n):
            return tf.while_loop(lambda k, acc: k < n, lambda k, acc: (k + 1, acc + x[k]), (0, 0.0))[1]

        good = pick(tf.constant(2), tf.constant(-1)), pick(tf.constant(-3), tf.constant(0)), total(tf.constant(3))
        outcomes = []
        for call in (
            lambda: pick(tf.constant(3), tf.constant(0)),
            lambda: pick(tf.constant(0), tf.constant(-4)),
            lambda: total(tf.constant(4)),
        ):
            try:
                call()
                outcomes.append("no error")
            except tf.errors.InvalidArgumentError:
                outcomes.append("InvalidArgumentError")
        return good, outcomes

    check(body)


# -- integer arguments given as floats, and other argument checks TF makes --------------------
BAD_ARGUMENTS = {
    "reshape_float_shape": lambda tf: tf.reshape(tf.ones([6]), [2.0, 3.0]),
    "reshape_float_tensor_shape": lambda tf: tf.reshape(tf.ones([6]), tf.constant([2.0, 3.0])),
    "tile_float_multiples": lambda tf: tf.tile(tf.ones([2]), [2.0]),
    "pad_float_paddings": lambda tf: tf.pad(tf.ones([2]), [[1.0, 1.0]]),
    "one_hot_float_depth": lambda tf: tf.one_hot([0, 1], 3.0),
    "split_float_sizes": lambda tf: tf.split(tf.ones([4]), [2.0, 2.0]),
    "split_float_count": lambda tf: tf.split(tf.ones([4]), 2.0),
    "eye_float_rows": lambda tf: tf.eye(2.5),
    "zeros_float_tensor_shape": lambda tf: tf.zeros(tf.constant([2.0])),
    "broadcast_to_float_shape": lambda tf: tf.broadcast_to(tf.ones([1]), [2.0]),
    "transpose_float_perm": lambda tf: tf.transpose(tf.ones([2, 3]), [1.0, 0.0]),
    "expand_dims_float_axis": lambda tf: tf.expand_dims(tf.ones([2]), 1.5),
    "gather_float_axis": lambda tf: tf.gather(tf.ones([2]), [0], axis=0.0),
    "random_normal_float_tensor_shape": lambda tf: tf.random.normal(tf.constant([2.0])),
    "random_uniform_float_shape": lambda tf: tf.random.uniform([2.0]),
    "categorical_int_logits": lambda tf: tf.random.categorical(tf.zeros([2, 3], tf.int32), 2),
    "slice_float_begin": lambda tf: tf.slice(tf.ones([3]), [0.0], [1]),
    "strided_slice_float_begin": lambda tf: tf.strided_slice(tf.ones([3]), [0.0], [1]),
    "getitem_float_slice_start": lambda tf: tf.ones([3])[0.0:1],
    "reverse_float_axis": lambda tf: tf.reverse(tf.ones([2]), [0.0]),
    "roll_float_shift": lambda tf: tf.roll(tf.ones([2]), 1.0, 0),
    "repeat_float_repeats": lambda tf: tf.repeat(tf.ones([2]), 2.0),
    "qr_int": lambda tf: tf.linalg.qr(tf.constant([[1, 0], [0, 1]])),
    "svd_int": lambda tf: tf.linalg.svd(tf.constant([[1, 0], [0, 1]])),
    "band_part_too_many_diagonals": lambda tf: tf.linalg.band_part(tf.ones([2, 2]), 5, 5),
    "band_part_float_diagonals": lambda tf: tf.linalg.band_part(tf.ones([2, 2]), 0.5, 0),
    "meshgrid_bad_indexing": lambda tf: tf.meshgrid(tf.ones([2]), tf.ones([3]), indexing="xx"),
    "unique_matrix": lambda tf: tf.unique(tf.ones([2, 2])),
    "einsum_unknown_output_label": lambda tf: tf.einsum("ij->k", tf.ones([2, 2])),
    "einsum_operand_count": lambda tf: tf.einsum("ij,jk->ik", tf.ones([2, 2])),
    "tensordot_too_many_axes": lambda tf: tf.tensordot(tf.ones([2]), tf.ones([2]), 3),
    "shape_float_out_type": lambda tf: tf.shape(tf.ones([2]), out_type=tf.float32),
}


@pytest.mark.parametrize("name", sorted(BAD_ARGUMENTS))
def test_bad_argument_raises_tf_error_class(name):
    check_raises(BAD_ARGUMENTS[name])


def test_integer_arguments_accept_ints_and_int_tensors():
    def body(tf):
        x = tf.reshape(tf.range(6.0), [2, 3])
        return (
            tf.reshape(x, tf.constant([3, 2], tf.int64)),
            tf.tile(x, tf.constant([1, 2])),
            tf.pad(x, tf.constant([[0, 1], [1, 0]])),
            tf.split(x, tf.constant([1, 2]), axis=1),
            tf.squeeze(tf.ones([1, 2]), 0),
            tf.size(x, out_type=tf.float32),
            tf.eye(tf.constant(2)),
            tf.linalg.band_part(x, 1, tf.constant(0, tf.int64)),
            tf.roll(x, tf.constant(1), 1),
            tf.slice(x, tf.constant([0, 1]), [1, -1]),
            tf.repeat(x, tf.constant([1, 2]), axis=0),
            tf.meshgrid(tf.ones([2]), tf.ones([3]), indexing="ij"),
            tf.einsum("ij->j", x),
        )

    check(body)


# -- the same bad arguments inside tf.function: TF's graph mode raises ValueError for what its
# shape inference refuses, TypeError for a dtype an op's attribute refuses, and the kernel's
# InvalidArgumentError (at call time) for the rest ------------------------------------------------
IN_FUNCTION = {
    "reshape_size": lambda tf: tf.reshape(tf.ones([6]), [4, -1]),
    "reshape_below_minus_one": lambda tf: tf.reshape(tf.ones([6]), [-2, 3]),
    "reshape_float_shape": lambda tf: tf.reshape(tf.ones([6]), [2.0, 3.0]),
    "tile_negative": lambda tf: tf.tile(tf.ones([6]), [-1]),
    "tile_length": lambda tf: tf.tile(tf.ones([6]), [1, 2]),
    "range_start_above_limit": lambda tf: tf.range(5, 2),
    "zeros_negative": lambda tf: tf.zeros([-1]),
    "zeros_matrix_shape": lambda tf: tf.zeros([[2, 3]]),
    "slice_out_of_bounds": lambda tf: tf.slice(tf.ones([6]), [5], [3]),
    "slice_short_begin": lambda tf: tf.slice(tf.ones([3, 3]), [0], [1]),
    "pad_negative": lambda tf: tf.pad(tf.ones([6]), [[-1, 0]]),
    "pad_reflect_too_wide": lambda tf: tf.pad(tf.ones([2]), [[2, 0]], mode="REFLECT"),
    "one_hot_negative_depth": lambda tf: tf.one_hot([0], -1),
    "one_hot_float_indices": lambda tf: tf.one_hot([0.0], 3),
    "gather_axis": lambda tf: tf.gather(tf.ones([6]), [0], axis=3),
    "gather_float_indices": lambda tf: tf.gather(tf.ones([6]), [0.0]),
    "gather_constant_out_of_range": lambda tf: tf.gather(tf.ones([6]), [9]),
    "concat_shapes": lambda tf: tf.concat([tf.ones([2, 2]), tf.ones([2, 3])], 0),
    "stack_shapes": lambda tf: tf.stack([tf.ones([2]), tf.ones([3])]),
    "random_normal_negative": lambda tf: tf.random.normal([-2]),
    "random_normal_float_shape": lambda tf: tf.random.normal([2.5]),
    "random_uniform_int_empty_range": lambda tf: tf.random.uniform([2], 5, 5, dtype=tf.int32),
    "categorical_negative_samples": lambda tf: tf.random.categorical(tf.zeros([2, 3]), -1),
    "categorical_vector_logits": lambda tf: tf.random.categorical(tf.zeros([3]), 2),
    "stateless_seed_shape": lambda tf: tf.random.stateless_normal([2], seed=[1, 2, 3]),
    "broadcast_to": lambda tf: tf.broadcast_to(tf.ones([6]), [2, 2]),
    "expand_dims": lambda tf: tf.expand_dims(tf.ones([6]), 3),
    "squeeze": lambda tf: tf.squeeze(tf.ones([6]), 0),
    "transpose_perm": lambda tf: tf.transpose(tf.ones([2, 3]), [0, 0]),
    "split_uneven": lambda tf: tf.split(tf.ones([6]), 4),
    "split_axis": lambda tf: tf.split(tf.ones([6]), 2, axis=-2),
    "split_sizes": lambda tf: tf.split(tf.ones([5]), [2, 2]),
    "gather_nd_index_too_deep": lambda tf: tf.gather_nd(tf.ones([6]), [[0, 0]]),
    "getitem_out_of_range": lambda tf: tf.ones([6])[7],
    "strided_slice_lengths": lambda tf: tf.strided_slice(tf.ones([6]), [0, 0], [1]),
    "inv_not_square": lambda tf: tf.linalg.inv(tf.ones([2, 3])),
    "inv_int": lambda tf: tf.linalg.inv(tf.constant([[1, 0], [0, 1]])),
    "inv_singular": lambda tf: tf.linalg.inv(tf.zeros([2, 2])),
    "solve_rhs_shape": lambda tf: tf.linalg.solve(tf.eye(2), tf.ones([3, 1])),
    "band_part_vector": lambda tf: tf.linalg.band_part(tf.ones([6]), 0, 0),
    "diag_scalar": lambda tf: tf.linalg.diag(tf.constant(1.0)),
    "trace_vector": lambda tf: tf.linalg.trace(tf.ones([3])),
    "unstack_num": lambda tf: tf.unstack(tf.ones([6]), num=3),
    "scatter_nd_updates_shape": lambda tf: tf.scatter_nd([[0]], [1.0, 2.0], [3]),
    "unsorted_segment_constant_ids": lambda tf: tf.math.unsorted_segment_sum(tf.ones([3]), [0, 1, 4], 3),
    "eye_negative": lambda tf: tf.eye(-1),
    "roll_lengths": lambda tf: tf.roll(tf.ones([2, 2]), [1, 1], [0]),
    "repeat_negative": lambda tf: tf.repeat(tf.ones([6]), -1),
    "where_shapes": lambda tf: tf.where([True, False], tf.ones([3]), tf.ones([3])),
    "add_dtypes": lambda tf: tf.ones([2]) + tf.ones([2], tf.int32),
    "reduce_axis": lambda tf: tf.reduce_sum(tf.ones([6]), axis=3),
    "unique_matrix": lambda tf: tf.unique(tf.ones([2, 2])),
}


@pytest.mark.parametrize("name", sorted(IN_FUNCTION))
def test_bad_arguments_inside_function_raise_graph_mode_errors(name):
    op = IN_FUNCTION[name]
    check_raises(lambda tf: tf.function(lambda: op(tf))())


@pytest.mark.parametrize("indices", [[2.0, 0.0], [1.0, 3.0]])
def test_lazy_indices_under_nested_tapes_and_forward_accumulator(indices):
    def body(tf):
        x = tf.Variable([1.0, 2.0, 3.0])
        k = tf.Variable(indices)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = tf.reduce_sum(tf.gather(x, tf.cast(k * 1.0, tf.int32)) ** 3)
            z = tf.reduce_sum(tf.convert_to_tensor(inner.gradient(y, x)) * x)
        second = outer.gradient(z, x)
        with tf.autodiff.ForwardAccumulator(x, tf.ones([3])) as acc:
            w = tf.reduce_sum(tf.gather(x, tf.cast(k * 1.0, tf.int32)) ** 2)
        return second, acc.jvp(w)

    check(body, raises=max(indices) >= 3)  # (an index out of x's range: TF's error is the point)


def test_sparse_softmax_labels_known_only_when_the_program_runs():
    def body(tf):
        logits = tf.Variable([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]])
        loss = tf.function(lambda labels: tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        good = loss(tf.constant([2, 0]))
        outcomes = [good]
        try:
            loss(tf.constant([0, 3]))
            outcomes.append("no error")
        except tf.errors.InvalidArgumentError:
            outcomes.append("InvalidArgumentError")
        k = tf.Variable([1.0, -1.0])
        try:
            with tf.GradientTape() as tape:
                value = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(tf.cast(k, tf.int32), logits))
            outcomes.append(tape.gradient(value, logits))
        except tf.errors.InvalidArgumentError:
            outcomes.append("InvalidArgumentError")
        return outcomes

    check(body)


HUGE_OUTPUTS = {
    "eye": lambda tf: tf.eye(2**21),
    "eye_batch": lambda tf: tf.eye(2**10, batch_shape=[2**20]),
    "range": lambda tf: tf.range(2**40, dtype=tf.int64),
    "one_hot": lambda tf: tf.one_hot(tf.zeros([2**20], tf.int32), 2**20),
    "tile": lambda tf: tf.tile(tf.ones([2**10]), [2**30]),
    "broadcast_to": lambda tf: tf.broadcast_to(tf.ones([1]), [2**20, 2**20]),
    "pad": lambda tf: tf.pad(tf.ones([2]), [[0, 2**40]]),
    "random_uniform_int": lambda tf: tf.random.uniform([2**20, 2**20], maxval=5, dtype=tf.int32),
}


@pytest.mark.parametrize("name", sorted(HUGE_OUTPUTS))
def test_outputs_larger_than_memory_raise_resource_exhausted(name):
    check_raises(HUGE_OUTPUTS[name])


SIZE_MISMATCHES = {
    "bitcast_to_wider": lambda tf: tf.bitcast(tf.ones([3], tf.float32), tf.float64),
    "lstsq_rows": lambda tf: tf.linalg.lstsq(tf.ones([3, 2]), tf.ones([2, 1])),
    "tensordot_contracted": lambda tf: tf.tensordot(tf.ones([2, 3]), tf.ones([2, 3]), 1),
}


@pytest.mark.parametrize("in_function", [False, True])
@pytest.mark.parametrize("name", sorted(SIZE_MISMATCHES))
def test_size_mismatches_eagerly_and_in_function(name, in_function):
    op = SIZE_MISMATCHES[name]
    check_raises(lambda tf: tf.function(lambda: op(tf))() if in_function else op(tf))


def test_bitcasts_and_contractions_that_fit():
    def body(tf):
        return (
            tf.bitcast(tf.ones([3, 2], tf.float32), tf.float64),
            tf.bitcast(tf.ones([3], tf.float64), tf.float32),
            tf.bitcast(tf.ones([3], tf.float32), tf.int16),
            tf.tensordot(tf.ones([2, 3]), tf.ones([3, 2]), 1),
            tf.linalg.lstsq(tf.constant([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]), tf.ones([3, 1])),
        )

    check(body)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint32", "int8", "uint64", "float32"])
def test_sparse_softmax_labels_of_other_dtypes(dtype):
    # TF's kernel takes int32 and int64 labels only: other integers raise too
    def body(tf):
        labels = tf.constant(np.array([0, 1]).astype(dtype))
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=tf.ones((2, 3)))

    raised = check_raises(body)
    assert "is not in the list of allowed values: int32, int64" in raised.message
