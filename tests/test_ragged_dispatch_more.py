"""More of TF's ops on RaggedTensors against TF: the dispatched elementwise ops (`tf.nn.relu`, `tf.pow`,
`tf.ones_like`, ...), reductions along ragged axes, structural ops (`tf.concat`, `tf.tile`, `tf.gather`, ...),
their errors, and gradients to the flat values of a RaggedTensor built under a tape."""

import functools

import numpy as np
import pytest

from oracle import check, check_raises


def _r(x):
    """A ragged tensor's comparable parts (a dense result passes through); values compared with tolerance."""
    if not hasattr(x, "nested_row_splits"):
        return x
    return (x.dtype, list(x.nested_row_splits), x.flat_values, x.ragged_rank)


def _op(tf, path):
    return functools.reduce(getattr, path.split("."), tf)


def _rt(tf, dtype=None):
    return tf.ragged.constant([[1.0, -4.0, 0.5], [], [2.5], [-0.25, 3.0]], dtype=dtype or tf.float32)


def _irt(tf):
    return tf.ragged.constant([[1, 2, -3], [], [4], [5, 6]])


def _rt3(tf):
    return tf.ragged.constant([[[1.0, 2.0], [4.0]], [[3.0]], [], [[], [5.0, -1.0, 2.0]]])


# -- elementwise ops: one generic dispatch -----------------------------------------------------------------
UNARY = {
    "nn.relu": lambda tf, rt: tf.nn.relu(rt),
    "nn.relu6": lambda tf, rt: tf.nn.relu6(rt * 3.0),
    "nn.elu": lambda tf, rt: tf.nn.elu(rt),
    "nn.selu": lambda tf, rt: tf.nn.selu(rt),
    "nn.gelu": lambda tf, rt: tf.nn.gelu(rt),
    "nn.gelu_approximate": lambda tf, rt: tf.nn.gelu(rt, approximate=True),
    "nn.leaky_relu": lambda tf, rt: tf.nn.leaky_relu(rt, alpha=0.3),
    "nn.silu": lambda tf, rt: tf.nn.silu(rt),
    "nn.swish": lambda tf, rt: tf.nn.swish(rt),
    "nn.softplus": lambda tf, rt: tf.nn.softplus(rt),
    "nn.softsign": lambda tf, rt: tf.nn.softsign(rt),
    "math.sign": lambda tf, rt: tf.math.sign(rt),
    "math.reciprocal": lambda tf, rt: tf.math.reciprocal(rt),
    "math.reciprocal_no_nan": lambda tf, rt: tf.math.reciprocal_no_nan(rt),
    "math.lgamma": lambda tf, rt: tf.math.lgamma(tf.abs(rt) + 0.5),
    "math.digamma": lambda tf, rt: tf.math.digamma(tf.abs(rt) + 0.5),
    "math.erfinv": lambda tf, rt: tf.math.erfinv(rt / 5.0),
    "math.imag": lambda tf, rt: tf.math.imag(rt),
    "math.angle": lambda tf, rt: tf.math.angle(rt),
    "math.bessel_i0": lambda tf, rt: tf.math.bessel_i0(rt),
    "math.special.bessel_j0": lambda tf, rt: tf.math.special.bessel_j0(rt),
    "math.special.dawsn": lambda tf, rt: tf.math.special.dawsn(rt),
    "ones_like": lambda tf, rt: tf.ones_like(rt),
    "ones_like_dtype": lambda tf, rt: tf.ones_like(rt, dtype=tf.int32),
    "zeros_like": lambda tf, rt: tf.zeros_like(rt),
    "clip_by_value": lambda tf, rt: tf.clip_by_value(rt, -1.0, 2.0),
    "debugging.check_numerics": lambda tf, rt: tf.debugging.check_numerics(rt, "bad"),
    "saturate_cast": lambda tf, rt: tf.dtypes.saturate_cast(rt, tf.int32),
    "image.adjust_brightness": lambda tf, rt: tf.image.adjust_brightness(rt, 0.25),
    "nn.dropout_rate0": lambda tf, rt: tf.nn.dropout(rt, 0.0),
    "where_ones_like": lambda tf, rt: tf.where(rt > 1.0, rt, tf.zeros_like(rt)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    check(lambda tf: _r(UNARY[name](tf, _rt(tf))))


BINARY = {
    "pow": lambda tf, a, b: tf.pow(a, 2.0),
    "pow_reflected": lambda tf, a, b: tf.pow(2.0, a),
    "pow_ragged": lambda tf, a, b: tf.pow(tf.abs(a), b),
    "truediv": lambda tf, a, b: tf.math.truediv(a, b),
    "divide": lambda tf, a, b: tf.divide(a, 2.0),
    "floordiv": lambda tf, a, b: tf.math.floordiv(a, 2.0),
    "floormod": lambda tf, a, b: tf.math.floormod(a, 2.0),
    "complex": lambda tf, a, b: tf.complex(a, b),
    "multiply_no_nan": lambda tf, a, b: tf.math.multiply_no_nan(a, b),
    "scalar_mul": lambda tf, a, b: tf.math.scalar_mul(2.0, a),
    "add_n": lambda tf, a, b: tf.add_n([a, b, a]),
    "sigmoid_cross_entropy": lambda tf, a, b: tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.nn.sigmoid(b), logits=a
    ),
    "dense_per_row_pow": lambda tf, a, b: tf.pow(tf.constant([[1.0], [2.0], [3.0], [4.0]]), a),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    check(lambda tf: _r(BINARY[name](tf, _rt(tf), _rt(tf) * 0.5 + 1.0)))


INTEGER = {
    "truediv": lambda tf, rt: tf.math.truediv(rt, 2),
    "truncatediv": lambda tf, rt: tf.truncatediv(rt, 2),
    "truncatemod": lambda tf, rt: tf.truncatemod(rt, 2),
    "bitwise_and": lambda tf, rt: tf.bitwise.bitwise_and(rt, 3),
    "bitwise_invert": lambda tf, rt: tf.bitwise.invert(rt),
    "zeros_like": lambda tf, rt: tf.zeros_like(rt),
    "one_hot": lambda tf, rt: tf.one_hot(tf.abs(rt), 7),
}


@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer(name):
    check(lambda tf: _r(INTEGER[name](tf, _irt(tf))))


def test_unary_rank3_keeps_both_partitions():
    check(lambda tf: _r(tf.nn.relu(_rt3(tf) - 2.0)))


def test_pow_other_splits_raises():
    check_raises(lambda tf: tf.pow(_rt(tf), tf.ragged.constant([[1.0], [2.0], [3.0], [4.0]])))


def test_add_n_other_splits_raises():
    check_raises(lambda tf: tf.add_n([_rt(tf), tf.ragged.constant([[1.0], [2.0], [3.0], [4.0]])]))


# A Python list beside a RaggedTensor is one value, broadcast per row (only `add_n`'s `inputs` is a list of
# operands): these divided each row element by element (or failed) before.
LIST_OPERANDS = {
    "divide_no_nan": lambda tf, rt, v: tf.math.divide_no_nan(rt, v),
    "divide_no_nan_first": lambda tf, rt, v: tf.math.divide_no_nan(v, rt),
    "truediv": lambda tf, rt, v: tf.math.truediv(rt, v),
    "floordiv": lambda tf, rt, v: tf.math.floordiv(v, rt),
    "multiply_no_nan": lambda tf, rt, v: tf.math.multiply_no_nan(rt, v),
    "pow": lambda tf, rt, v: tf.pow(rt, v),
    "add": lambda tf, rt, v: tf.add(v, rt),
}


@pytest.mark.parametrize("name", sorted(LIST_OPERANDS))
def test_python_list_operand_is_one_value(name):
    check(lambda tf: _r(LIST_OPERANDS[name](tf, _rt(tf), [[2.0], [1.0], [4.0], [0.5]])))


@pytest.mark.parametrize("name", sorted(LIST_OPERANDS))
def test_python_list_operand_of_other_length_raises(name):
    check_raises(lambda tf: LIST_OPERANDS[name](tf, _rt(tf), [2.0, 4.0]))


@pytest.mark.parametrize("pack", [tuple, list], ids=["tuple", "list"])
def test_map_fn_over_a_structure_of_ragged_tensors(pack):
    """`map_fn`'s `elems` is a structure of operands: a RaggedTensor inside it dispatches (b8317d0 broke this)."""

    def body(tf):
        second = tf.ragged.constant([[1.0, 2.0, 3.0], [], [4.0], [5.0, 6.0]])
        elems = pack((_rt(tf), second))
        return tf.map_fn(lambda x: tf.reduce_sum(x[0] + x[1]), elems, fn_output_signature=tf.float32)

    check(body)


def test_add_n_takes_a_dense_element_as_it_is():
    check_raises(lambda tf: tf.add_n([_rt(tf), [[1.0], [2.0], [3.0], [4.0]]]))


def test_relu_of_strings_raises():
    check_raises(lambda tf: tf.nn.relu(tf.ragged.constant([["a"], ["b", "c"]])))


def test_plain_tensor_errors_unchanged():
    check_raises(lambda tf: tf.nn.relu(tf.constant(["a"])))


# -- reductions along ragged axes --------------------------------------------------------------------------
REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"]
AXES = [None, 0, 1, -1, [0, 1], [1], ()]


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction(name, axis):
    check(lambda tf: _r(getattr(tf, name)(_rt(tf), axis=axis)))


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_integers(name):
    check(lambda tf: _r(getattr(tf, name)(_irt(tf), axis=1)))


@pytest.mark.parametrize("axis", [None, 1])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_keepdims(name, axis):
    check(lambda tf: _r(getattr(tf, name)(_rt(tf), axis=axis, keepdims=True)))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_rank3(name, axis):
    check(lambda tf: _r(getattr(tf, name)(_rt3(tf), axis=axis)))


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["reduce_any", "reduce_all"])
def test_boolean_reduction(name, axis):
    check(lambda tf: _r(getattr(tf, name)(tf.ragged.constant([[True, False], [], [True], [False]]), axis=axis)))


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["reduce_std", "reduce_variance"])
def test_moments(name, axis):
    check(lambda tf: _r(getattr(tf.math, name)(_rt(tf), axis=axis)))


@pytest.mark.parametrize("name", ["reduce_std", "reduce_variance"])
def test_moments_integers_give_float64(name):
    check(lambda tf: _r(getattr(tf.math, name)(_irt(tf), axis=1)))


def test_reduction_axis_out_of_range_raises():
    check_raises(lambda tf: tf.reduce_sum(_rt(tf), axis=2))


# -- structural ops --------------------------------------------------------------------------------------
STRUCTURE = {
    "concat0": lambda tf, rt: tf.concat([rt, rt * 2.0], axis=0),
    "concat1": lambda tf, rt: tf.concat([rt, rt * 2.0], axis=1),
    "concat_negative_axis": lambda tf, rt: tf.concat([rt, rt], axis=-1),
    "concat_dense_rows": lambda tf, rt: tf.concat([rt, tf.ones([4, 2])], axis=1),
    "concat_dense_axis0": lambda tf, rt: tf.concat([rt, tf.ones([1, 2])], axis=0),
    "concat_rank3_axis2": lambda tf, rt: tf.concat([_rt3(tf), _rt3(tf) + 1.0], axis=2),
    "stack0": lambda tf, rt: tf.stack([rt, rt]),
    "stack1": lambda tf, rt: tf.stack([rt, -rt], axis=1),
    "tile": lambda tf, rt: tf.tile(rt, [2, 1]),
    "tile_rows": lambda tf, rt: tf.tile(rt, [2, 3]),
    "tile_rank3": lambda tf, rt: tf.tile(_rt3(tf), [1, 2, 2]),
    "expand_dims0": lambda tf, rt: tf.expand_dims(rt, 0),
    "expand_dims1": lambda tf, rt: tf.expand_dims(rt, 1),
    "expand_dims_last": lambda tf, rt: tf.expand_dims(rt, -1),
    "squeeze": lambda tf, rt: tf.squeeze(tf.expand_dims(rt, 0), [0]),
    "gather": lambda tf, rt: tf.gather(rt, [3, 1, 0, 0]),
    "gather_matrix": lambda tf, rt: tf.gather(rt, [[2, 0], [1, 1]]),
    "gather_scalar": lambda tf, rt: tf.gather(rt, 3),
    "gather_ragged_indices": lambda tf, rt: tf.gather(
        tf.constant([5.0, 6.0, 7.0]), tf.ragged.constant([[0, 2], [], [1]])
    ),
    "gather_rank3": lambda tf, rt: tf.gather(_rt3(tf), [3, 0]),
    "reverse1": lambda tf, rt: tf.reverse(rt, [1]),
    "reverse0": lambda tf, rt: tf.reverse(rt, [0]),
    "reverse01": lambda tf, rt: tf.reverse(rt, [0, 1]),
    "reverse_rank3": lambda tf, rt: tf.reverse(_rt3(tf), [2]),
    "cumsum1": lambda tf, rt: tf.math.cumsum(rt, axis=1),
    "cumsum0": lambda tf, rt: tf.math.cumsum(rt, axis=0),
    "cumsum_exclusive_reverse": lambda tf, rt: tf.math.cumsum(rt, axis=1, exclusive=True, reverse=True),
    "softmax": lambda tf, rt: tf.nn.softmax(rt, axis=1),
    "softmax_default_axis": lambda tf, rt: tf.nn.softmax(rt),
    "size": lambda tf, rt: tf.size(rt),
    "rank": lambda tf, rt: tf.rank(rt),
    "where_coordinates": lambda tf, rt: tf.where(rt > 0.75),
    "boolean_mask": lambda tf, rt: tf.ragged.boolean_mask(rt, rt > 0.75),
    "boolean_mask_rows": lambda tf, rt: tf.ragged.boolean_mask(rt, [True, False, True, True]),
    "boolean_mask_dense_data": lambda tf, rt: tf.ragged.boolean_mask(
        tf.constant([[1, 2], [3, 4]]), tf.ragged.constant([[True, False], [True, True]])
    ),
    "embedding_lookup": lambda tf, rt: tf.nn.embedding_lookup(tf.eye(4), tf.ragged.constant([[0, 1], [], [3]])),
    "embedding_lookup_rank3": lambda tf, rt: tf.nn.embedding_lookup(
        tf.constant([10.0, 20.0, 30.0]), tf.ragged.constant([[[0, 1]], [[2], []]])
    ),
    "map_fn_dense_output": lambda tf, rt: tf.map_fn(tf.reduce_sum, rt, fn_output_signature=tf.float32),
    "map_fn_ragged_output": lambda tf, rt: tf.map_fn(lambda row: row * 2.0, rt),
}


@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_structure(name):
    check(lambda tf: _r(STRUCTURE[name](tf, _rt(tf))))


RAISING = {
    "concat_other_row_counts": lambda tf: tf.concat([_rt(tf), _rt(tf)[:2]], axis=1),
    "concat_dtypes": lambda tf: tf.concat([_rt(tf), _irt(tf)], axis=0),
    "gather_out_of_range": lambda tf: tf.gather(_rt(tf), [5]),
    "softmax_axis0": lambda tf: tf.nn.softmax(_rt(tf), axis=0),
    "boolean_mask_other_splits": lambda tf: tf.ragged.boolean_mask(
        _rt(tf), tf.ragged.constant([[True], [], [True], [True, True, False]])
    ),
}


@pytest.mark.parametrize("name", sorted(RAISING))
def test_structure_raises(name):
    check_raises(RAISING[name])


# -- gradients to the flat values ------------------------------------------------------------------------
_VALUES = np.asarray([1.0, -2.0, 0.5, 3.0, -0.75], np.float32)
_SPLITS = [0, 2, 2, 3, 5]  # an empty row
_FULL_SPLITS = [0, 2, 3, 5]  # no empty row: means and softmax stay finite


def _taped(fn, splits=_SPLITS):
    def body(tf):
        values = tf.constant(_VALUES)
        with tf.GradientTape() as tape:
            tape.watch(values)
            rt = tf.RaggedTensor.from_row_splits(values, splits)
            out = fn(tf, rt)
            flat = out.flat_values if hasattr(out, "flat_values") else out
            loss = tf.reduce_sum(flat * tf.cast(tf.range(tf.size(flat)) + 1, flat.dtype))
        return _r(out), tf.convert_to_tensor(tape.gradient(loss, values))  # dense: gathers may differ in order

    return body


GRADIENTS = {
    "relu": lambda tf, rt: tf.nn.relu(rt),
    "elu": lambda tf, rt: tf.nn.elu(rt),
    "gelu": lambda tf, rt: tf.nn.gelu(rt),
    "leaky_relu": lambda tf, rt: tf.nn.leaky_relu(rt),
    "softplus": lambda tf, rt: tf.nn.softplus(rt),
    "pow": lambda tf, rt: tf.pow(rt, 2.0),
    "clip_by_value": lambda tf, rt: tf.clip_by_value(rt, -1.0, 1.0),
    "sign_times": lambda tf, rt: tf.math.sign(rt) * rt,
    "add_n": lambda tf, rt: tf.add_n([rt, rt * 3.0]),
    "reduce_sum1": lambda tf, rt: tf.reduce_sum(rt, axis=1),
    "reduce_sum0": lambda tf, rt: tf.reduce_sum(rt, axis=0),
    "reduce_sum_all": lambda tf, rt: tf.reduce_sum(rt),
    "reduce_max1": lambda tf, rt: tf.reduce_max(rt, axis=1),
    "concat1": lambda tf, rt: tf.concat([rt, rt * 2.0], axis=1),
    "tile": lambda tf, rt: tf.tile(rt, [2, 2]),
    "gather": lambda tf, rt: tf.gather(rt, [3, 0, 0]),
    "reverse1": lambda tf, rt: tf.reverse(rt, [1]),
    "cumsum1": lambda tf, rt: tf.math.cumsum(rt, axis=1),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradient(name):
    check(_taped(GRADIENTS[name]))


FULL_GRADIENTS = {
    "reduce_mean1": lambda tf, rt: tf.reduce_mean(rt, axis=1),
    "reduce_mean0": lambda tf, rt: tf.reduce_mean(rt, axis=0),
    "reduce_std1": lambda tf, rt: tf.math.reduce_std(rt + 5.0, axis=1),
    "softmax": lambda tf, rt: tf.nn.softmax(rt, axis=1),
}


@pytest.mark.parametrize("name", sorted(FULL_GRADIENTS))
def test_gradient_without_empty_rows(name):
    check(_taped(FULL_GRADIENTS[name], _FULL_SPLITS))


# -- a dense operand of a higher rank than the RaggedTensor: TF repeats the RaggedTensor over its leading
# dimensions (they were a ValueError); a list's row splits of the same static shape are compared when the op runs
HIGHER_RANK = {
    "add_3d": lambda tf, rt: rt + tf.ones((3, 4, 1)),
    "radd_3d": lambda tf, rt: tf.ones((3, 4, 1)) - rt,
    "multiply_leading_1": lambda tf, rt: tf.multiply(rt, tf.constant([[[2.0], [3.0], [4.0], [5.0]]])),
    "maximum_4d": lambda tf, rt: tf.maximum(rt, tf.zeros((2, 1, 4, 1))),
    "divide_no_nan_3d": lambda tf, rt: tf.math.divide_no_nan(rt, tf.fill((2, 4, 1), 2.0)),
    "rows_do_not_match": lambda tf, rt: rt + tf.ones((2, 3, 1)),
    "add_n_other_splits": lambda tf, rt: tf.add_n([rt, tf.RaggedTensor.from_row_lengths(tf.ones(7), [1, 1, 1, 4])]),
    "add_n_other_rows": lambda tf, rt: tf.add_n([rt, tf.RaggedTensor.from_row_lengths(tf.ones(7), [4, 3])]),
}
_RAISES = {"rows_do_not_match", "add_n_other_splits", "add_n_other_rows"}


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", sorted(HIGHER_RANK))
def test_dense_of_higher_rank_and_list_splits_as_tf(name, in_function):
    def body(tf):
        rt = tf.RaggedTensor.from_row_lengths(tf.constant([1.0, -2.0, 3.0, 0.5, 4.0, -1.0, 2.0]), [2, 0, 4, 1])
        result = tf.function(lambda: HIGHER_RANK[name](tf, rt))() if in_function else HIGHER_RANK[name](tf, rt)
        return _r(result), tf.TensorShape(result.shape), result.to_list()

    check(body, raises=name in _RAISES)
