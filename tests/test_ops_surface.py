"""The wider op surface against real TensorFlow: values and gradients, eager and inside a tape."""

import numpy as np
import pytest

from oracle import check, check_raises, check_values_and_gradients, sample

RNG = np.random.default_rng(11)


# name: (function of (tf, *inputs), [(shape, kind), ...])
CASES = {
    "asin": (lambda tf, a: tf.math.asin(a), [((5,), "unit")]),
    "acos": (lambda tf, a: tf.math.acos(a), [((5,), "unit")]),
    "atan": (lambda tf, a: tf.math.atan(a), [((5,), "normal")]),
    "asinh": (lambda tf, a: tf.math.asinh(a), [((5,), "normal")]),
    "acosh": (lambda tf, a: tf.math.acosh(a), [((5,), "above1")]),
    "atanh": (lambda tf, a: tf.math.atanh(a), [((5,), "unit")]),
    "atan2": (lambda tf, a, b: tf.math.atan2(a, b), [((5,), "normal"), ((5,), "normal")]),
    "erf": (lambda tf, a: tf.math.erf(a), [((5,), "normal")]),
    "erfc": (lambda tf, a: tf.math.erfc(a), [((5,), "normal")]),
    "lgamma": (lambda tf, a: tf.math.lgamma(a), [((5,), "positive")]),
    "digamma": (lambda tf, a: tf.math.digamma(a), [((5,), "positive")]),
    "softplus": (lambda tf, a: tf.math.softplus(a), [((5,), "normal")]),
    "softsign": (lambda tf, a: tf.nn.softsign(a), [((5,), "normal")]),
    "log_sigmoid": (lambda tf, a: tf.math.log_sigmoid(a), [((5,), "normal")]),
    "xlogy": (lambda tf, a, b: tf.math.xlogy(a, b), [((5,), "normal"), ((5,), "positive")]),
    "xdivy": (lambda tf, a, b: tf.math.xdivy(a, b), [((5,), "normal"), ((5,), "positive")]),
    "divide_no_nan": (lambda tf, a, b: tf.math.divide_no_nan(a, b), [((5,), "normal"), ((5,), "positive")]),
    "expm1_log1p": (lambda tf, a: tf.math.expm1(a) + tf.math.log1p(a), [((5,), "positive")]),
    "reciprocal_rsqrt": (lambda tf, a: tf.math.reciprocal(a) + tf.math.rsqrt(a), [((5,), "positive")]),
    "tan_sinh_cosh": (lambda tf, a: tf.tan(a) + tf.sinh(a) + tf.cosh(a), [((5,), "unit")]),
    "reduce_variance": (lambda tf, a: tf.math.reduce_variance(a, axis=1), [((3, 4), "normal")]),
    "reduce_std": (lambda tf, a: tf.math.reduce_std(a), [((3, 4), "normal")]),
    "reduce_logsumexp": (lambda tf, a: tf.reduce_logsumexp(a, axis=0), [((3, 4), "normal")]),
    "reduce_prod": (lambda tf, a: tf.reduce_prod(a, axis=1), [((3, 4), "positive")]),
    "cumsum": (lambda tf, a: tf.cumsum(a, axis=1), [((3, 4), "normal")]),
    "cumsum_exclusive_reverse": (
        lambda tf, a: tf.cumsum(a, axis=0, exclusive=True, reverse=True),
        [((3, 4), "normal")],
    ),
    "cumprod": (lambda tf, a: tf.math.cumprod(a, axis=1), [((3, 4), "positive")]),
    "top_k_values": (lambda tf, a: tf.math.top_k(a, k=2).values, [((3, 5), "normal")]),
    "norm": (lambda tf, a: tf.norm(a), [((3, 4), "normal")]),
    "norm_axis": (lambda tf, a: tf.norm(a, axis=1), [((3, 4), "normal")]),
    "norm_ord1": (lambda tf, a: tf.norm(a, ord=1, axis=0), [((3, 4), "normal")]),
    "l2_normalize": (lambda tf, a: tf.math.l2_normalize(a, axis=1), [((3, 4), "normal")]),
    "clip_by_norm": (lambda tf, a: tf.clip_by_norm(a, 1.5), [((3, 4), "normal")]),
    "clip_by_norm_axes": (lambda tf, a: tf.clip_by_norm(a, 0.5, axes=[1]), [((3, 4), "normal")]),
    "clip_by_global_norm": (
        lambda tf, a, b: tf.clip_by_global_norm([a, b], 1.0)[0][1],
        [((3,), "normal"), ((2, 2), "normal")],
    ),
    "unsorted_segment_sum": (
        lambda tf, a: tf.math.unsorted_segment_sum(a, tf.constant([0, 2, 0]), 3),
        [((3, 4), "normal")],
    ),
    "unsorted_segment_mean": (
        lambda tf, a: tf.math.unsorted_segment_mean(a, tf.constant([0, 2, 0]), 3),
        [((3, 4), "normal")],
    ),
    "unsorted_segment_max": (
        lambda tf, a: tf.math.unsorted_segment_max(a, tf.constant([0, 1, 0]), 2),
        [((3, 4), "normal")],
    ),
    "segment_sum": (lambda tf, a: tf.math.segment_sum(a, tf.constant([0, 0, 1])), [((3, 4), "normal")]),
    "split": (lambda tf, a: tf.split(a, [1, -1], axis=1)[1] * 2.0, [((3, 4), "normal")]),
    "split_even": (lambda tf, a: tf.split(a, 2, axis=1)[0] * 2.0, [((3, 4), "normal")]),
    "tile": (lambda tf, a: tf.tile(a, [2, 1]), [((2, 3), "normal")]),
    "repeat": (lambda tf, a: tf.repeat(a, 2, axis=0), [((2, 3), "normal")]),
    "repeat_list": (lambda tf, a: tf.repeat(a, [1, 3], axis=0), [((2, 3), "normal")]),
    "pad": (lambda tf, a: tf.pad(a, [[1, 0], [0, 2]], constant_values=1.5), [((2, 3), "normal")]),
    "pad_reflect": (lambda tf, a: tf.pad(a, [[1, 1], [2, 1]], mode="REFLECT"), [((3, 4), "normal")]),
    "pad_symmetric": (lambda tf, a: tf.pad(a, [[1, 1], [1, 1]], mode="SYMMETRIC"), [((3, 4), "normal")]),
    "reverse": (lambda tf, a: tf.reverse(a, [1]) * 2.0, [((3, 4), "normal")]),
    "roll": (lambda tf, a: tf.roll(a, shift=[1, -1], axis=[0, 1]) * 2.0, [((3, 4), "normal")]),
    "gather_nd": (lambda tf, a: tf.gather_nd(a, tf.constant([[0, 1], [2, 3], [0, 1]])), [((3, 4), "normal")]),
    "gather_axis1": (
        lambda tf, a: tf.convert_to_tensor(tf.gather(a, tf.constant([2, 0]), axis=1)),
        [((3, 4), "normal")],
    ),
    "scatter_nd": (lambda tf, a: tf.scatter_nd(tf.constant([[1], [3], [1]]), a, [5, 2]), [((3, 2), "normal")]),
    "tensor_scatter_nd_update": (
        lambda tf, a, b: tf.tensor_scatter_nd_update(a, tf.constant([[0], [2]]), b),
        [((3, 2), "normal"), ((2, 2), "normal")],
    ),
    "tensor_scatter_nd_add": (
        lambda tf, a, b: tf.tensor_scatter_nd_add(a, tf.constant([[0], [0]]), b),
        [((3, 2), "normal"), ((2, 2), "normal")],
    ),
    "boolean_mask": (lambda tf, a: tf.boolean_mask(a, tf.constant([True, False, True])), [((3, 2), "normal")]),
    "slice": (lambda tf, a: tf.slice(a, [1, 0], [2, -1]) * 2.0, [((3, 4), "normal")]),
    "strided_slice": (lambda tf, a: tf.strided_slice(a, [0, 1], [3, 4], [2, 2]) * 2.0, [((3, 4), "normal")]),
    "broadcast_to": (lambda tf, a: tf.broadcast_to(a, [3, 2, 4]), [((2, 1), "normal")]),
    "meshgrid": (lambda tf, a, b: tf.meshgrid(a, b)[0] * tf.meshgrid(a, b)[1], [((3,), "normal"), ((2,), "normal")]),
    "sort": (lambda tf, a: tf.sort(a, axis=1, direction="DESCENDING"), [((3, 4), "normal")]),
    "einsum": (lambda tf, a, b: tf.einsum("ij,jk->ik", a, b), [((2, 3), "normal"), ((3, 4), "normal")]),
    "einsum_batch": (lambda tf, a, b: tf.einsum("bij,bjk->bik", a, b), [((2, 2, 3), "normal"), ((2, 3, 2), "normal")]),
    "tensordot": (lambda tf, a, b: tf.tensordot(a, b, axes=[[1], [0]]), [((2, 3), "normal"), ((3, 4), "normal")]),
    "relu6": (lambda tf, a: tf.nn.relu6(a * 4.0), [((6,), "normal")]),
    "leaky_relu": (lambda tf, a: tf.nn.leaky_relu(a, alpha=0.1), [((6,), "normal")]),
    "elu": (lambda tf, a: tf.nn.elu(a), [((6,), "normal")]),
    "selu": (lambda tf, a: tf.nn.selu(a), [((6,), "normal")]),
    "gelu": (lambda tf, a: tf.nn.gelu(a), [((6,), "normal")]),
    "gelu_approx": (lambda tf, a: tf.nn.gelu(a, approximate=True), [((6,), "normal")]),
    "silu": (lambda tf, a: tf.nn.silu(a), [((6,), "normal")]),
    "swish_beta": (lambda tf, a: tf.nn.swish(a, beta=2.0), [((6,), "normal")]),
    "sigmoid_xent": (
        lambda tf, a, b: tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.sigmoid(b), logits=a),
        [((3, 4), "normal"), ((3, 4), "normal")],
    ),
    "weighted_xent": (
        lambda tf, a, b: tf.nn.weighted_cross_entropy_with_logits(tf.sigmoid(b), a, 2.0),
        [((3, 4), "normal"), ((3, 4), "normal")],
    ),
    "l2_loss": (lambda tf, a: tf.nn.l2_loss(a), [((3, 4), "normal")]),
    "bias_add": (lambda tf, a, b: tf.nn.bias_add(a, b), [((2, 3, 4), "normal"), ((4,), "normal")]),
    "moments": (lambda tf, a: tf.nn.moments(a, axes=[0])[1] + tf.nn.moments(a, axes=[0])[0], [((5, 3), "normal")]),
    "batch_normalization": (
        lambda tf, a, m, v, o, s: tf.nn.batch_normalization(a, m, v, o, s, 1e-3),
        [((4, 3), "normal"), ((3,), "normal"), ((3,), "positive"), ((3,), "normal"), ((3,), "normal")],
    ),
    "embedding_lookup": (
        lambda tf, a: tf.convert_to_tensor(tf.nn.embedding_lookup(a, tf.constant([[1, 2], [1, 0]]))),
        [((4, 3), "normal")],
    ),
    "conv2d_valid": (
        lambda tf, a, w: tf.nn.conv2d(a, w, strides=1, padding="VALID"),
        [((2, 5, 5, 3), "normal"), ((3, 3, 3, 4), "normal")],
    ),
    "conv2d_same_strided": (
        lambda tf, a, w: tf.nn.conv2d(a, w, strides=[1, 2, 2, 1], padding="SAME"),
        [((2, 6, 5, 3), "normal"), ((3, 2, 3, 4), "normal")],
    ),
    "conv2d_dilated": (
        lambda tf, a, w: tf.nn.conv2d(a, w, strides=1, padding="SAME", dilations=2),
        [((1, 7, 7, 2), "normal"), ((3, 3, 2, 2), "normal")],
    ),
    "conv1d": (
        lambda tf, a, w: tf.nn.conv1d(a, w, stride=2, padding="SAME"),
        [((2, 9, 3), "normal"), ((3, 3, 4), "normal")],
    ),
    "depthwise_conv2d": (
        lambda tf, a, w: tf.nn.depthwise_conv2d(a, w, strides=[1, 1, 1, 1], padding="SAME"),
        [((1, 5, 5, 3), "normal"), ((3, 3, 3, 2), "normal")],
    ),
    "conv2d_transpose": (
        lambda tf, a, w: tf.nn.conv2d_transpose(a, w, [2, 6, 6, 3], strides=2, padding="SAME"),
        [((2, 3, 3, 4), "normal"), ((3, 3, 3, 4), "normal")],
    ),
    "max_pool2d": (lambda tf, a: tf.nn.max_pool2d(a, 2, 2, "VALID"), [((2, 4, 4, 3), "normal")]),
    "max_pool2d_same": (lambda tf, a: tf.nn.max_pool2d(a, 3, 2, "SAME"), [((1, 5, 5, 2), "normal")]),
    "avg_pool2d_same": (lambda tf, a: tf.nn.avg_pool2d(a, 3, 2, "SAME"), [((1, 5, 5, 2), "normal")]),
    "max_pool1d": (lambda tf, a: tf.nn.max_pool1d(a, 2, 2, "VALID"), [((2, 6, 3), "normal")]),
    "avg_pool1d": (lambda tf, a: tf.nn.avg_pool1d(a, 3, 1, "SAME"), [((2, 6, 3), "normal")]),
    "matvec": (lambda tf, a, b: tf.linalg.matvec(a, b), [((3, 4), "normal"), ((4,), "normal")]),
    "inv": (lambda tf, a: tf.linalg.inv(a), [((3, 3), "spd")]),
    "det": (lambda tf, a: tf.linalg.det(a), [((2, 3, 3), "spd")]),
    "slogdet": (lambda tf, a: tf.linalg.slogdet(a)[1], [((3, 3), "spd")]),
    "logdet": (lambda tf, a: tf.linalg.logdet(a), [((3, 3), "spd")]),
    "cholesky": (lambda tf, a: tf.linalg.cholesky(a), [((3, 3), "spd")]),
    "solve": (lambda tf, a, b: tf.linalg.solve(a, b), [((3, 3), "spd"), ((3, 2), "normal")]),
    "triangular_solve": (
        lambda tf, a, b: tf.linalg.triangular_solve(tf.linalg.band_part(a, -1, 0), b),
        [((3, 3), "spd"), ((3, 2), "normal")],
    ),
    "triangular_solve_batched_matrix": (  # (TF broadcasts the batch dimensions, either way)
        lambda tf, a, b: tf.linalg.triangular_solve(tf.linalg.band_part(a, -1, 0), b),
        [((2, 3, 3), "spd"), ((3, 2), "normal")],
    ),
    "triangular_solve_batched_rhs": (
        lambda tf, a, b: tf.linalg.triangular_solve(tf.linalg.band_part(a, 0, -1), b, lower=False, adjoint=True),
        [((1, 3, 3), "spd"), ((2, 3, 2), "normal")],
    ),
    "trace": (lambda tf, a: tf.linalg.trace(a), [((2, 3, 3), "normal")]),
    "diag": (lambda tf, a: tf.linalg.diag(a), [((2, 3), "normal")]),
    "diag_part": (lambda tf, a: tf.linalg.diag_part(a), [((2, 3, 3), "normal")]),
    "band_part": (lambda tf, a: tf.linalg.band_part(a, 1, 0), [((4, 4), "normal")]),
    "eigh_values": (lambda tf, a: tf.linalg.eigh(a)[0], [((3, 3), "spd")]),
    "svd_values": (lambda tf, a: tf.linalg.svd(a, compute_uv=False), [((4, 3), "normal")]),
    "qr_r_abs": (lambda tf, a: tf.abs(tf.linalg.qr(a)[1]), [((4, 3), "normal")]),
    "lstsq": (lambda tf, a, b: tf.linalg.lstsq(a, b), [((5, 3), "normal"), ((5, 2), "normal")]),
}


# TF's CPU kernels cannot differentiate these; their values are still compared.
FORWARD_ONLY = {"conv2d_dilated"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_values_and_gradients(name, dtype):
    fn, specs = CASES[name]
    inputs = [sample(RNG, shape, kind, dtype) for shape, kind in specs]
    rtol = 2e-4 if dtype == np.float32 else 1e-8
    check_values_and_gradients(fn, inputs, RNG, rtol=rtol, densify=True, gradients=name not in FORWARD_ONLY)


def test_non_differentiable_ops():
    def body(tf):
        x = tf.constant([3.0, 1.0, 2.0, 1.0])
        u = tf.unique(tf.constant([4, 2, 4, 7, 2]))
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cast(tf.argsort(x), tf.float32) * x
        return (
            tf.argsort(x),
            tf.argsort(x, direction="DESCENDING"),
            u.y,
            u.idx,
            tf.sequence_mask([1, 3], 4),
            tf.sequence_mask(tf.constant([2, 0])),
            tf.linspace(0.0, 1.0, 5),
            tf.eye(2, 3),
            tf.eye(2, dtype=tf.int32),
            tf.math.bincount(tf.constant([1, 1, 4])),
            tf.math.count_nonzero(x),
            tf.math.top_k(x, 2).indices,
            tf.bitcast(tf.constant([1.0]), tf.int32),
            t.gradient(y, x),
        )

    check(body)


def test_unique_has_no_gradient():
    def body(tf):
        x = tf.constant([1.0, 2.0, 1.0])
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.unique(x * 2.0).y)
        return t.gradient(y, x)

    check_raises(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.split(tf.ones([3, 4]), 3, axis=1),
        lambda tf: tf.tile(tf.ones([2]), [1, 2]),
        lambda tf: tf.linalg.inv(tf.ones([2, 3])),
        lambda tf: tf.math.top_k(tf.ones([3]), k=4),
        lambda tf: tf.broadcast_to(tf.ones([3]), [2, 2]),
        lambda tf: tf.pad(tf.ones([2, 2]), [[1, 1]]),
        lambda tf: tf.random.uniform([2], maxval=None, dtype=tf.int32),
        lambda tf: tf.debugging.check_numerics(tf.constant([1.0, np.nan]), "bad value"),
        lambda tf: tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3])),
        lambda tf: tf.debugging.assert_less(tf.constant([3.0]), tf.constant([1.0])),
        lambda tf: tf.debugging.assert_rank(tf.ones([2, 2]), 3),
    ],
)
def test_bad_input_raises_tf_error_class(bad):
    check_raises(bad)


def test_assertions_pass_silently():
    def body(tf):
        x = tf.constant([1.0, 2.0])
        tf.debugging.assert_equal(x, x)
        tf.debugging.assert_less(x, x + 1)
        tf.debugging.assert_greater(x + 1, x)
        tf.debugging.assert_near(x, x + 1e-9)
        tf.debugging.assert_non_negative(x)
        tf.debugging.assert_positive(x)
        tf.debugging.assert_rank(x, 1)
        tf.debugging.assert_shapes([(x, ("n",)), (tf.ones([2, 3]), ("n", 3))])
        return tf.debugging.check_numerics(x, "fine")

    check(body)


# -- random -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "draw",
    [
        lambda tf: tf.random.normal([2, 3]),
        lambda tf: tf.random.normal([4], mean=2.0, stddev=0.5, dtype=tf.float64),
        lambda tf: tf.random.uniform([3], minval=1.0, maxval=2.0),
        lambda tf: tf.random.uniform([3], minval=0, maxval=10, dtype=tf.int64),
        lambda tf: tf.random.truncated_normal([5]),
        lambda tf: tf.random.categorical(tf.math.log([[0.5, 0.5]]), 4),
        lambda tf: tf.random.shuffle(tf.range(5)),
        lambda tf: tf.random.stateless_normal([2], seed=[1, 2]),
        lambda tf: tf.random.stateless_uniform([2], seed=[3, 4], minval=0, maxval=5, dtype=tf.int32),
        lambda tf: tf.random.Generator.from_seed(3).normal([2]),
        lambda tf: tf.nn.dropout(tf.ones([4, 4]), rate=0.5),
    ],
)
def test_random_shapes_and_dtypes_match_tf(draw):
    def body(tf):
        value = draw(tf)
        return value.shape, value.dtype

    check(body)


def test_random_is_deterministic_under_set_seed_and_statistically_right():
    import tapeshim as tf

    tf.random.set_seed(7)
    first = [tf.random.normal([3]).numpy(), tf.random.uniform([2], seed=3).numpy()]
    tf.random.set_seed(7)
    second = [tf.random.normal([3]).numpy(), tf.random.uniform([2], seed=3).numpy()]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(tf.random.normal([3]).numpy(), first[0])
    np.testing.assert_array_equal(
        tf.random.stateless_normal([4], seed=[1, 2]).numpy(), tf.random.stateless_normal([4], seed=[1, 2]).numpy()
    )
    sample = tf.random.normal([20000], mean=1.0, stddev=2.0).numpy()
    assert abs(sample.mean() - 1.0) < 0.05 and abs(sample.std() - 2.0) < 0.05
    uniform = tf.random.uniform([20000]).numpy()
    assert uniform.min() >= 0 and uniform.max() < 1 and abs(uniform.mean() - 0.5) < 0.01
    truncated = tf.random.truncated_normal([20000]).numpy()
    assert np.abs(truncated).max() <= 2.0
    kept = tf.nn.dropout(tf.ones([20000]), rate=0.25).numpy()
    assert abs((kept > 0).mean() - 0.75) < 0.02 and np.allclose(kept[kept > 0], 1 / 0.75)
    counts = np.bincount(tf.random.categorical(tf.math.log([[0.2, 0.8]]), 20000).numpy()[0], minlength=2)
    assert abs(counts[1] / 20000 - 0.8) < 0.02


@pytest.mark.usefixtures("compiles_on_repeat")  # (compiled from its second call)
def test_random_ops_draw_anew_on_each_compiled_call():
    import tapeshim as tf
    from tapeshim._src import background_compile

    @tf.function
    def draw():
        return tf.random.uniform([4])

    first = draw().numpy()
    second = draw().numpy()  # (the host's, its compile submitted)
    background_compile.wait()
    assert len({first.tobytes(), second.tobytes(), draw().numpy().tobytes(), draw().numpy().tobytes()}) == 4
    assert draw.experimental_get_tracing_count() == 1
