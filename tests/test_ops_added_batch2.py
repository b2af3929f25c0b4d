"""nn.weighted_moments, nn.normalize_moments, nn.separable_conv2d, dynamic_partition, dynamic_stitch,
linalg.matrix_rank, hessians, linalg.lu, linalg.lu_solve and linalg.lu_reconstruct against real TF: values,
gradients and errors."""

import numpy as np
import pytest

from oracle import check, check_raises, sum_of_outputs, taped_body, traced_body

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.5]])
_W = np.array([[1.0, 0.0, 2.0]])
_RNG = np.random.default_rng(7)
_IMAGE = _RNG.uniform(-1, 1, (2, 6, 5, 2))
_DEPTHWISE = _RNG.uniform(-1, 1, (3, 3, 2, 2))
_POINTWISE = _RNG.uniform(-1, 1, (1, 1, 4, 3))
_A = np.array([[2.0, 1.0, 0.5], [4.0, -1.0, 3.0], [-2.0, 5.0, 1.0]])
_RHS = np.array([[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]])
_PACKED = np.array([[4.0, -1.0, 3.0], [0.5, 1.5, -1.0], [-0.5, 3.0, 5.5]])
_PERM = np.array([1, 0, 2], np.int32)


# -- values over dtypes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", _FLOATS)
def test_weighted_moments(dtype):
    def body(tf):
        x = tf.constant(_X, getattr(tf, dtype))
        return (
            tf.nn.weighted_moments(x, [1], tf.constant(_W, getattr(tf, dtype))),
            tf.nn.weighted_moments(x, 0, 2.0, keepdims=True),
            tf.nn.weighted_moments(x, [0, 1], tf.constant([[1], [3]], tf.int32)),
            tf.nn.weighted_moments(x, [1], tf.zeros([1, 3], getattr(tf, dtype))),
        )

    check(body)


@pytest.mark.parametrize("dtype", _FLOATS)
def test_normalize_moments(dtype):
    def body(tf):
        def c(v):
            return tf.constant(v, getattr(tf, dtype))

        return (
            tf.nn.normalize_moments(c(3.0), c([3.0, 6.0]), c([5.0, 20.0]), None),
            tf.nn.normalize_moments(c(4.0), c([[3.0, 6.0]]), c([[5.0, 20.0]]), c(1.5)),
        )

    check(body)
    check(lambda tf: tf.nn.normalize_moments(3.0, [3.0, 6.0], [5.0, 20.0], 1))


@pytest.mark.parametrize("dtype", _FLOATS)
@pytest.mark.parametrize(
    "options",
    (
        dict(strides=[1, 1, 1, 1], padding="SAME"),
        dict(strides=[1, 2, 2, 1], padding="VALID"),
        dict(strides=[1, 1, 1, 1], padding="SAME", dilations=[2, 2]),
        dict(strides=[1, 1, 1, 1], padding="VALID", dilations=[2, 1], data_format="NHWC"),
    ),
)
def test_separable_conv2d(dtype, options):
    def body(tf):
        def c(v):
            return tf.constant(v, getattr(tf, dtype))

        return tf.nn.separable_conv2d(c(_IMAGE), c(_DEPTHWISE), c(_POINTWISE), **options)

    check(body, rtol={"float16": 1e-2, "bfloat16": 6e-2}.get(dtype))


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64", "complex64", "int32", "int64", "bool"))
def test_dynamic_partition_and_stitch(dtype):
    data = np.arange(12).reshape(2, 3, 2) % 3

    def body(tf):
        x = tf.constant(data, getattr(tf, dtype))
        return (
            tf.dynamic_partition(x, [[0, 2, 0], [2, 2, 0]], 3),
            tf.dynamic_partition(x, [1, 0], 2),
            tf.dynamic_partition(x, 1, 3),
            tf.dynamic_stitch([[0, 2], [[1], [2]]], [x[0, :2], x[1, :2, None]]),  # (no gap: TF leaves a gap unset)
            tf.dynamic_stitch([[2, 0], 1], [x[0, 0], x[1, 0, 0]]),
        )

    check(body)


def test_dynamic_partition_and_stitch_edges():
    check(lambda tf: tf.dynamic_partition(tf.zeros([0, 2]), tf.zeros([0], tf.int32), tf.constant(2)))
    check(lambda tf: tf.dynamic_stitch([tf.zeros([0], tf.int32)], [tf.zeros([0, 3])]))
    check(lambda tf: tf.dynamic_stitch(tf.constant([0, 1]), tf.constant([1.0, 2.0])))
    check(lambda tf: tf.dynamic_stitch([[0], [1]], [[1.0], [2.0]]))

    def round_trip(tf):
        x = tf.constant([10.0, 20.0, 30.0, 40.0, 50.0])
        parts = [0, 1, 1, 0, 2]
        pieces = tf.dynamic_partition(x, parts, 3)
        positions = tf.dynamic_partition(tf.range(5), parts, 3)
        return tf.dynamic_stitch(positions, pieces)

    check(round_trip)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_matrix_rank(dtype):
    def body(tf):
        def c(v):
            return tf.constant(v, getattr(tf, dtype))

        return (
            tf.linalg.matrix_rank(c(_A)),
            tf.linalg.matrix_rank(c([[1.0, 2.0], [2.0, 4.0]])),
            tf.linalg.matrix_rank(c(np.ones((2, 2, 3)))),
            tf.linalg.matrix_rank(c(_A), tol=10.0),
            tf.linalg.matrix_rank(c(np.zeros((3, 2)))),
        )

    check(body)


@pytest.mark.parametrize("dtype", ("float32", "float64", "complex64", "complex128"))
def test_lu(dtype):
    batch = np.stack([_A, _A.T + 1.0])

    def body(tf):
        out = tf.linalg.lu(tf.constant(batch, getattr(tf, dtype)))
        single = tf.linalg.lu(tf.constant(_A, getattr(tf, dtype)), output_idx_type=tf.int64)
        return out, single, tf.linalg.lu(tf.zeros([0, 0], getattr(tf, dtype)))

    check(body)


@pytest.mark.parametrize("dtype", ("float32", "float64", "complex64", "complex128"))
def test_lu_solve_and_reconstruct(dtype):
    def body(tf):
        matrix = tf.constant(_A, getattr(tf, dtype))
        lower_upper, perm = tf.linalg.lu(matrix)
        rhs = tf.constant(_RHS, getattr(tf, dtype))
        return (
            tf.linalg.lu_solve(lower_upper, perm, rhs),
            tf.linalg.lu_solve(lower_upper, tf.cast(perm, tf.int64), 2.0 * rhs),
            tf.linalg.lu_solve(lower_upper, perm, tf.stack([rhs, 2.0 * rhs])),
            tf.linalg.lu_reconstruct(lower_upper, perm),
            tf.linalg.lu_reconstruct(tf.stack([lower_upper, lower_upper]), tf.stack([perm, perm[::-1]])),
        )

    check(body)
    check(lambda tf: tf.linalg.lu_reconstruct(tf.constant([[1, 2], [3, 4]]), [1, 0]))
    check(lambda tf: tf.linalg.lu_solve(tf.constant(_PACKED, tf.float32), _PERM, _RHS))


# -- gradients ----------------------------------------------------------------------------------------------
def test_moments_gradients():
    check(taped_body(lambda tf, x, w: tf.nn.weighted_moments(x, [1], w), _X, _W, loss=sum_of_outputs))
    check(taped_body(lambda tf, x, w: tf.nn.weighted_moments(x, [0, 1], w, keepdims=True)[1], _X, _W))
    check(taped_body(lambda tf, x, w: tf.nn.weighted_moments(x, [1], w)[1], _X, _W, dtype="float16"))
    check(
        taped_body(
            lambda tf, c, m, v, s: tf.nn.normalize_moments(c, m, v, s),
            np.float32(3.0),
            np.array([3.0, 6.0], np.float32),
            np.array([5.0, 20.0], np.float32),
            np.float32(0.5),
            loss=sum_of_outputs,
        )
    )


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_separable_conv2d_gradient(dtype):
    def fn(tf, x, d, p):
        return tf.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], "SAME")

    check(taped_body(fn, _IMAGE, _DEPTHWISE, _POINTWISE, dtype=dtype), rtol=1e-4 if dtype == "float32" else None)
    dilated = taped_body(
        lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "VALID", dilations=[2, 1]),
        _IMAGE,
        _DEPTHWISE,
        _POINTWISE,
        dtype=dtype,
    )
    check(dilated, rtol=1e-4 if dtype == "float32" else None)


def test_partition_and_stitch_gradients():
    upstream = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]])
    check(taped_body(lambda tf, x: tf.dynamic_partition(x, [0, 1, 0, 1], 2), _RNG.normal(size=(4, 2))))
    check(
        taped_body(
            lambda tf, x: tf.dynamic_partition(x, [[1, 0], [1, 1]], 3)[1] * [1.0, 2.0, 3.0],
            np.array([[1.0, 2.0], [3.0, 4.0]]),
        )
    )
    # a duplicate index: TF gives every slice the gradient at its index, also the one overwritten
    check(
        taped_body(
            lambda tf, a, b: tf.dynamic_stitch([[0, 2], [2, 1]], [a, b]),
            np.array([[1.0, 2.0], [3.0, 4.0]]),
            np.array([[5.0, 6.0], [7.0, 8.0]]),
            output_gradients=upstream,
        )
    )
    check(
        taped_body(
            # (b overwrites a's index 1; no index is left out: TF leaves such rows uninitialized)
            lambda tf, a, b: tf.dynamic_stitch([[0, 1], [1]], [a, b]),
            np.array([1 + 1j, 2.0]),
            np.array([3 - 1j]),
            output_gradients=np.array([1.0 - 1j, 2.0 + 0.5j]),
        )
    )


def test_linalg_gradients():
    # TF registers no gradient for Lu: differentiating through it raises LookupError
    check_raises(taped_body(lambda tf, a: tf.linalg.lu(a), _A, loss=sum_of_outputs))
    check_raises(taped_body(lambda tf, a: tf.linalg.lu(a).lu, np.stack([_A, _A.T]), dtype="float32"))
    check(taped_body(lambda tf, a, b: tf.cast(tf.linalg.lu(a).p * 2, b.dtype) + tf.reduce_sum(b), _A, _RHS))
    check(taped_body(lambda tf, a: tf.linalg.lu_solve(a, _PERM, _RHS), _PACKED))
    check(taped_body(lambda tf, a, b: tf.linalg.lu_solve(a, _PERM, b), _PACKED, _RHS))
    check(taped_body(lambda tf, a, b: tf.linalg.lu_solve(a, _PERM, b), _PACKED, np.stack([_RHS, _RHS])))
    check(taped_body(lambda tf, a: tf.linalg.lu_reconstruct(a, _PERM), _PACKED, output_gradients=_A))
    check(taped_body(lambda tf, a, b: tf.linalg.lu_solve(*tf.linalg.lu(_A), b), _A, _RHS))
    check(taped_body(lambda tf, a: tf.linalg.matrix_rank(a), _A, loss=sum_of_outputs))


# -- errors -------------------------------------------------------------------------------------------------
_ERRORS = {
    "weighted_moments_shapes": lambda tf: tf.nn.weighted_moments(tf.ones([2, 3]), [1], tf.ones([2, 2])),
    "weighted_moments_axis": lambda tf: tf.nn.weighted_moments(tf.ones([2, 3]), [3], 1.0),
    "weighted_moments_int": lambda tf: tf.nn.weighted_moments(tf.constant([[1, 2]]), [1], 1),
    "normalize_moments_int": lambda tf: tf.nn.normalize_moments(tf.constant(3), [3, 6], [5, 20], None),
    "normalize_moments_dtypes": lambda tf: tf.nn.normalize_moments(
        tf.constant(3.0), tf.constant([3.0], tf.float64), tf.constant([5.0]), None
    ),
    "separable_int_strides": lambda tf: tf.nn.separable_conv2d(_IMAGE, _DEPTHWISE, _POINTWISE, 2, "SAME"),
    "separable_unequal_strides": lambda tf: tf.nn.separable_conv2d(
        _IMAGE, _DEPTHWISE, _POINTWISE, [1, 1, 2, 1], "SAME"
    ),
    "separable_pointwise_3x1": lambda tf: tf.nn.separable_conv2d(
        _IMAGE, _DEPTHWISE, np.ones((3, 1, 4, 3)), [1, 1, 1, 1], "SAME"
    ),
    "separable_pointwise_channels": lambda tf: tf.nn.separable_conv2d(
        _IMAGE, _DEPTHWISE, np.ones((1, 1, 5, 3)), [1, 1, 1, 1], "SAME"
    ),
    "separable_depthwise_rank": lambda tf: tf.nn.separable_conv2d(
        _IMAGE, _DEPTHWISE[0], _POINTWISE, [1, 1, 1, 1], "SAME"
    ),
    "separable_input_rank": lambda tf: tf.nn.separable_conv2d(_IMAGE[0], _DEPTHWISE, _POINTWISE, [1, 1, 1, 1], "SAME"),
    "separable_depth": lambda tf: tf.nn.separable_conv2d(
        _IMAGE, np.ones((3, 3, 3, 2)), _POINTWISE, [1, 1, 1, 1], "SAME"
    ),
    "separable_dtypes": lambda tf: tf.nn.separable_conv2d(
        tf.constant(_IMAGE, tf.float32), _DEPTHWISE, _POINTWISE, [1, 1, 1, 1], "SAME"
    ),
    "separable_int": lambda tf: tf.nn.separable_conv2d(
        tf.ones([1, 4, 4, 2], tf.int32),
        tf.ones([3, 3, 2, 2], tf.int32),
        tf.ones([1, 1, 4, 3], tf.int32),
        [1, 1, 1, 1],
        "SAME",
    ),
    "separable_nchw": lambda tf: tf.nn.separable_conv2d(
        np.transpose(_IMAGE, (0, 3, 1, 2)), _DEPTHWISE, _POINTWISE, [1, 1, 1, 1], "SAME", data_format="NCHW"
    ),
    "separable_padding": lambda tf: tf.nn.separable_conv2d(_IMAGE, _DEPTHWISE, _POINTWISE, [1, 1, 1, 1], "same"),
    "partition_range": lambda tf: tf.dynamic_partition(tf.constant([1.0, 2.0, 3.0]), [0, 1, 5], 3),
    "partition_negative": lambda tf: tf.dynamic_partition(tf.constant([1.0, 2.0, 3.0]), [0, 1, -1], 3),
    "partition_shape": lambda tf: tf.dynamic_partition(tf.constant([1.0, 2.0, 3.0]), [0, 1], 3),
    "partition_int64": lambda tf: tf.dynamic_partition(tf.constant([1.0]), tf.constant([0], tf.int64), 1),
    "partition_float": lambda tf: tf.dynamic_partition(tf.constant([1.0]), tf.constant([0.0]), 1),
    "partition_zero": lambda tf: tf.dynamic_partition(tf.constant([1.0]), [0], 0),
    "stitch_negative": lambda tf: tf.dynamic_stitch([[0, -2]], [tf.constant([1.0, 2.0])]),
    "stitch_shape": lambda tf: tf.dynamic_stitch([[0, 2]], [tf.constant([1.0, 2.0, 3.0])]),
    "stitch_dtypes": lambda tf: tf.dynamic_stitch([[0], [1]], [tf.constant([1.0]), tf.constant([2.0], tf.float64)]),
    "stitch_lengths": lambda tf: tf.dynamic_stitch([[0], [1]], [tf.constant([1.0])]),
    "stitch_int64": lambda tf: tf.dynamic_stitch([tf.constant([0], tf.int64)], [tf.constant([1.0])]),
    "stitch_mixed": lambda tf: tf.dynamic_stitch(
        [tf.constant([0]), tf.constant([1], tf.int64)], [tf.constant([1.0]), tf.constant([1.0])]
    ),
    "stitch_trailing": lambda tf: tf.dynamic_stitch([[0], [1]], [tf.ones([1, 2]), tf.ones([1, 3])]),
    "matrix_rank_complex": lambda tf: tf.linalg.matrix_rank(tf.constant([[1j]])),
    "matrix_rank_int": lambda tf: tf.linalg.matrix_rank(tf.constant([[1, 2], [3, 4]])),
    "matrix_rank_vector": lambda tf: tf.linalg.matrix_rank(tf.ones([2])),
    "matrix_rank_half": lambda tf: tf.linalg.matrix_rank(tf.ones([2, 2], tf.float16)),
    "matrix_rank_bfloat16": lambda tf: tf.linalg.matrix_rank(tf.ones([2, 2], tf.bfloat16)),
    "hessians_eager": lambda tf: tf.hessians(tf.constant(1.0), tf.constant(2.0)),
    "lu_half": lambda tf: tf.linalg.lu(tf.ones([2, 2], tf.float16)),
    "lu_bfloat16": lambda tf: tf.linalg.lu(tf.ones([2, 2], tf.bfloat16)),
    "lu_int": lambda tf: tf.linalg.lu(tf.constant([[1, 2], [3, 4]])),
    "lu_non_square": lambda tf: tf.linalg.lu(tf.ones([2, 3])),
    "lu_vector": lambda tf: tf.linalg.lu(tf.ones([2])),
    "lu_singular": lambda tf: tf.linalg.lu(tf.zeros([2, 2])),
    "lu_index_type": lambda tf: tf.linalg.lu(tf.ones([2, 2]), output_idx_type=tf.float32),
    "lu_solve_vector_rhs": lambda tf: tf.linalg.lu_solve(_PACKED, _PERM, [1.0, 2.0, 3.0]),
    "lu_solve_rhs_rows": lambda tf: tf.linalg.lu_solve(_PACKED, _PERM, np.ones((2, 1))),
    "lu_solve_dtypes": lambda tf: tf.linalg.lu_solve(tf.constant(_PACKED, tf.float32), _PERM, tf.constant(_RHS)),
    "lu_solve_int": lambda tf: tf.linalg.lu_solve(tf.constant([[1, 2], [3, 4]]), [0, 1], tf.constant([[1], [2]])),
    "lu_solve_non_square": lambda tf: tf.linalg.lu_solve(tf.ones([2, 3]), [0, 1], tf.ones([2, 1])),
    "lu_reconstruct_vector": lambda tf: tf.linalg.lu_reconstruct(tf.ones([2]), [0, 1]),
    "lu_reconstruct_non_square": lambda tf: tf.linalg.lu_reconstruct(tf.ones([2, 3]), [0, 1]),
    "lu_reconstruct_float_perm": lambda tf: tf.linalg.lu_reconstruct(tf.ones([2, 2]), [0.0, 1.0]),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_errors(name):
    check_raises(_ERRORS[name])


def test_error_messages():
    check_raises(lambda tf: tf.hessians(tf.constant(1.0), tf.constant(2.0)), messages=True)
    check_raises(lambda tf: tf.linalg.matrix_rank(tf.ones([2])), messages=True)
    check_raises(lambda tf: tf.dynamic_stitch([[0], [1]], [tf.constant([1.0])]), messages=True)
    check_raises(lambda tf: tf.linalg.lu_solve(_PACKED, _PERM, np.ones((2, 1))), messages=True)


def test_inside_function():
    check(traced_body(lambda tf, a: tf.nn.weighted_moments(a, [1], [[1.0, 0.0, 2.0]]), _X, loss=sum_of_outputs))
    check(traced_body(lambda tf, a, b: tf.linalg.lu_solve(*tf.linalg.lu(_A), b), _A, _RHS))
    check(traced_body(lambda tf, a: tf.linalg.lu_solve(a, _PERM, _RHS), _PACKED))
    check(traced_body(lambda tf, a: tf.linalg.lu_reconstruct(a, _PERM), _PACKED))
    check(traced_body(lambda tf, a: tf.nn.separable_conv2d(a, _DEPTHWISE, _POINTWISE, [1, 1, 1, 1], "SAME"), _IMAGE))
    check(traced_body(lambda tf, a: tf.dynamic_partition(a, [0, 1, 0], 2), [1.0, 2.0, 3.0]))


def test_data_dependent_ops_inside_a_function_give_tf_values():
    # Their result shapes depend on values the trace does not know: the function runs eagerly (as TF's graph
    # computes them with unknown shapes), for every later call of those argument types too.
    def body(tf):
        partition = tf.function(lambda p: tf.dynamic_partition(tf.ones([3]), p, 2))
        stitch = tf.function(lambda i: tf.dynamic_stitch([i], [tf.ones([2]), tf.zeros([2])][:1]))
        unique = tf.function(lambda x: tf.unique(x))
        return (
            [partition(tf.constant(p)) for p in ([0, 1, 0], [1, 1, 1])],
            stitch(tf.constant([1, 0])),
            [unique(tf.constant(x)) for x in ([0, 1, 0], [3, 3, 2, 5])],
            partition.experimental_get_tracing_count(),
        )

    check(body)
