"""tf.grad_pass_through, tf.space_to_batch_nd / tf.space_to_batch / tf.nn.space_to_batch / tf.batch_to_space,
tf.nn.atrous_conv2d, tf.nn.max_pool_with_argmax, tf.nn.dilation2d / tf.nn.erosion2d and
tf.nn.local_response_normalization (tf.nn.lrn) against real TF: values, dtypes, gradients, traced and errors."""

import numpy as np
import pytest

from oracle import check, check_raises, real_tf, taped_body, traced_body

RNG = np.random.default_rng(5)
IMAGE = RNG.normal(size=(2, 5, 7, 3)).astype(np.float32)
TIES = RNG.integers(0, 3, size=(2, 5, 7, 3)).astype(np.float32)  # many equal maxima per window


def _upstream(shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


# -- grad_pass_through ------------------------------------------------------------------------------------
def test_grad_pass_through_values_and_identity_gradient():
    check(taped_body(lambda tf, x: tf.grad_pass_through(tf.round)(x) * x, IMAGE[0, 0]))
    check(taped_body(lambda tf, x: tf.grad_pass_through(lambda v: tf.floor(v) ** 2)(x), IMAGE[0, 0]))


def test_grad_pass_through_two_arguments_and_outputs():
    def fn(tf, x, y):
        a, b = tf.grad_pass_through(lambda u, v: (tf.round(u * v), tf.sign(v)))(x, y)
        return a * 3.0 + b

    check(taped_body(fn, IMAGE[0, 0], IMAGE[0, 1]))


def test_grad_pass_through_reading_a_variable():
    # (the variable's gradient is None, as TF's; through another path it is that path's)
    def body(tf):
        x = tf.constant([1.5, -2.0, 0.25])
        v = tf.Variable(2.0)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.grad_pass_through(lambda z: tf.round(z * v))(x)
            also = y * v
        return y, tape.gradient(y, [x, v]), tape.gradient(also, [x, v])

    check(body)


def test_grad_pass_through_in_function():
    check(traced_body(lambda tf, x: tf.grad_pass_through(tf.round)(x) * x, IMAGE[0, 0]))


# -- space_to_batch_nd / space_to_batch / batch_to_space --------------------------------------------------
@pytest.mark.parametrize("dtype", ("float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "int16"))
def test_space_to_batch_nd_dtypes(dtype):
    x = (np.arange(2 * 4 * 6 * 2) % 7).reshape(2, 4, 6, 2)
    check(lambda tf: tf.space_to_batch_nd(tf.constant(x, getattr(tf, dtype)), [2, 3], [[1, 1], [0, 3]]))
    check(lambda tf: tf.batch_to_space(tf.constant(x, getattr(tf, dtype)), [1, 2], [[1, 0], [2, 3]]))


@pytest.mark.parametrize(
    "block, paddings",
    [([2, 3], [[1, 0], [1, 1]]), ([5], [[0, 0]]), ([1, 1], [[0, 0], [0, 0]]), ([3, 2], [[0, 1], [2, 3]])],
)
def test_space_to_batch_nd_values_and_gradient(block, paddings):
    fn = lambda tf, x: tf.space_to_batch_nd(x, block, paddings)  # noqa: E731
    out = np.asarray(fn(real_tf, IMAGE))
    check(taped_body(fn, IMAGE, output_gradients=_upstream(out.shape)))


def test_space_to_batch_aliases_and_tensor_arguments():
    check(lambda tf: tf.space_to_batch(tf.constant(IMAGE), [1, 7], [[0, 0], [0, 0]]))
    check(lambda tf: tf.nn.space_to_batch(tf.constant(IMAGE), [2], [[1, 0]]))
    check(
        lambda tf: tf.space_to_batch_nd(
            tf.constant(IMAGE), tf.constant([2, 2], tf.int64), tf.constant([[1, 0], [0, 1]], tf.int64)
        )
    )
    check(lambda tf: tf.space_to_batch_nd(tf.constant(IMAGE), np.zeros([0], np.int32), np.zeros([0, 2], np.int32)))


@pytest.mark.parametrize(
    "block, crops",
    [([2, 1], [[1, 2], [0, 3]]), (2, [[0, 1], [1, 0]]), ([2], [[3, 0]]), ([1, 2], [[0, 0], [0, 0]])],
)
def test_batch_to_space_values_and_gradient(block, crops):
    x = RNG.normal(size=(4, 3, 4, 2)).astype(np.float32)
    fn = lambda tf, x: tf.batch_to_space(x, block, crops)  # noqa: E731
    out = np.asarray(fn(real_tf, x))
    check(taped_body(fn, x, output_gradients=_upstream(out.shape)))


def test_space_to_batch_round_trip_in_function():
    def fn(tf, x):
        moved = tf.space_to_batch_nd(x, [2, 2], [[1, 0], [0, 1]])
        return tf.batch_to_space(moved * moved, [2, 2], [[1, 0], [0, 1]])

    check(traced_body(fn, IMAGE))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.space_to_batch_nd(tf.constant(IMAGE), [3, 3], [[0, 0], [0, 0]]),
        lambda tf: tf.space_to_batch_nd(tf.constant(IMAGE), [2, 2], [[-1, 2], [0, 1]]),
        lambda tf: tf.space_to_batch_nd(tf.constant(IMAGE), [0, 7], [[0, 0], [0, 0]]),
        lambda tf: tf.space_to_batch_nd(tf.constant(IMAGE), [2, 2], [[0, 0]]),
        lambda tf: tf.space_to_batch_nd(tf.constant(IMAGE), [1, 1, 1, 1], [[0, 0]] * 4),
        lambda tf: tf.space_to_batch_nd(tf.constant(IMAGE), [2.0, 2.0], [[0, 0], [0, 0]]),
        lambda tf: tf.space_to_batch_nd(tf.constant([["a", "b"]]), [2], [[0, 0]]),
        lambda tf: tf.space_to_batch_nd(tf.constant([[True, False]]), [2], [[0, 0]]),
        lambda tf: tf.batch_to_space(tf.constant([[1j, 2j]]), [1], [[0, 0]]),
        lambda tf: tf.space_to_batch(tf.constant(IMAGE), 1, [[0, 0], [0, 0]]),
        lambda tf: tf.batch_to_space(tf.constant(IMAGE), [3, 1], [[0, 0], [0, 0]]),
        lambda tf: tf.batch_to_space(tf.constant(IMAGE), [2, 1], [[6, 5], [0, 0]]),
        lambda tf: tf.batch_to_space(tf.constant(IMAGE), [2, 1], [[-1, 0], [0, 0]]),
        lambda tf: tf.batch_to_space(tf.constant(IMAGE), [0, 1], [[0, 0], [0, 0]]),
        lambda tf: tf.batch_to_space(tf.constant(IMAGE), 2, [[0, 0], [0, 0]]),
    ],
)
def test_space_batch_errors(body):
    check_raises(body)


def test_space_batch_errors_while_traced():
    def body(tf):
        return tf.function(lambda x: tf.space_to_batch_nd(x, [3, 3], [[0, 0], [0, 0]]))(tf.constant(IMAGE))

    check_raises(body)

    def crops(tf):
        return tf.function(lambda x: tf.batch_to_space(x, [3, 1], [[0, 0], [0, 0]]))(tf.constant(IMAGE))

    check_raises(crops)


# -- atrous_conv2d ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("rate, padding, kernel", [(2, "SAME", 3), (1, "SAME", 3), (3, "VALID", 2), (2, "VALID", 2)])
def test_atrous_conv2d_values_and_gradients(rate, padding, kernel):
    w = RNG.normal(size=(kernel, kernel, 3, 4)).astype(np.float32)
    fn = lambda tf, x, w: tf.nn.atrous_conv2d(x, w, rate, padding)  # noqa: E731
    out = np.asarray(fn(real_tf, IMAGE, w))
    check(taped_body(fn, IMAGE, w, output_gradients=_upstream(out.shape)))


def test_atrous_conv2d_float64_and_in_function():
    w = RNG.normal(size=(3, 2, 3, 2))
    check(taped_body(lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"), IMAGE.astype(np.float64), w))
    check(traced_body(lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"), IMAGE, w.astype(np.float32)))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.nn.atrous_conv2d(tf.constant(IMAGE), tf.ones([3, 3, 3, 2]), 0, "SAME"),
        lambda tf: tf.nn.atrous_conv2d(tf.constant(IMAGE), tf.ones([3, 3, 3, 2]), 2, "FOO"),
        lambda tf: tf.nn.atrous_conv2d(tf.constant(IMAGE), tf.ones([3, 3, 2, 2]), 2, "SAME"),
    ],
)
def test_atrous_conv2d_errors(body):
    check_raises(body)


# -- max_pool_with_argmax ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ksize, strides, padding", [(3, 2, "SAME"), (2, 2, "VALID"), ([2, 3], [1, 2], "SAME"), ([1, 3, 2, 1], 1, "VALID")]
)
@pytest.mark.parametrize("batch_index", (False, True))
def test_max_pool_with_argmax_values_and_gradient(ksize, strides, padding, batch_index):
    def fn(tf, x):
        return tf.nn.max_pool_with_argmax(x, ksize, strides, padding, include_batch_in_index=batch_index)

    check(lambda tf: fn(tf, tf.constant(IMAGE)))
    check(lambda tf: fn(tf, tf.constant(TIES)))
    output = np.asarray(fn(real_tf, IMAGE).output)
    check(taped_body(lambda tf, x: fn(tf, x).output, IMAGE, output_gradients=_upstream(output.shape)))
    check(taped_body(lambda tf, x: fn(tf, x).output, TIES, output_gradients=_upstream(output.shape)))


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float64", "int32", "int64", "uint8", "int8"))
def test_max_pool_with_argmax_dtypes(dtype):
    x = (TIES * 7 - 5).astype(np.float32) if dtype != "uint8" else TIES * 7
    check(lambda tf: tf.nn.max_pool_with_argmax(tf.cast(tf.constant(x), getattr(tf, dtype)), 3, 2, "SAME"))
    check(lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), 2, 1, "SAME", output_dtype=tf.int32))


def test_max_pool_with_argmax_float16_gradient_and_in_function():
    check(taped_body(lambda tf, x: tf.nn.max_pool_with_argmax(x, 2, 2, "SAME").output, IMAGE.astype(np.float16)))
    check(traced_body(lambda tf, x: tf.nn.max_pool_with_argmax(x, 3, 2, "VALID")[0], IMAGE))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), 2, 2, "SAME", output_dtype=tf.float32),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), 2, 2, "SAME", data_format="NCHW"),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE[0]), 2, 2, "SAME"),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), 0, 2, "SAME"),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), [2, 2, 2, 1], 2, "SAME"),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), 2, 0, "SAME"),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), [2, 2, 2], 2, "SAME"),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), 2, 2, "same"),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant(IMAGE), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]),
        lambda tf: tf.nn.max_pool_with_argmax(tf.constant([[[[True]]]]), 1, 1, "SAME"),
    ],
)
def test_max_pool_with_argmax_errors(body):
    check_raises(body)


# -- dilation2d / erosion2d -------------------------------------------------------------------------------
MORPHOLOGY = [
    ((2, 3), [1, 1, 1, 1], "SAME", [1, 1, 1, 1]),
    ((2, 3), [1, 2, 1, 1], "SAME", [1, 1, 2, 1]),
    ((3, 2), [1, 1, 2, 1], "VALID", [1, 2, 1, 1]),
    ((1, 1), [1, 2, 2, 1], "VALID", [1, 1, 1, 1]),
    ((3, 3), [1, 3, 2, 1], "SAME", [1, 2, 2, 1]),
]


@pytest.mark.parametrize("op", ("dilation2d", "erosion2d"))
@pytest.mark.parametrize("size, strides, padding, rates", MORPHOLOGY)
def test_morphology_values_and_gradients(op, size, strides, padding, rates):
    f = RNG.normal(size=(*size, 3)).astype(np.float32)

    def fn(tf, x, f):
        return getattr(tf.nn, op)(x, f, strides, padding, "NHWC", rates)

    out = np.asarray(fn(real_tf, IMAGE, f))
    check(taped_body(fn, IMAGE, f, output_gradients=_upstream(out.shape)))
    check(taped_body(fn, TIES, np.zeros_like(f), output_gradients=_upstream(out.shape)))  # ties pick TF's element


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float64", "int32", "int64", "uint8"))
def test_morphology_dtypes(dtype):
    x, f = TIES * 3, np.arange(2 * 2 * 3).reshape(2, 2, 3) % 4

    def body(tf):
        cast = [tf.cast(tf.constant(a), getattr(tf, dtype)) for a in (x, f)]
        return (
            tf.nn.dilation2d(*cast, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]),
            tf.nn.erosion2d(*cast, [1, 2, 1, 1], "VALID", "NHWC", [1, 1, 2, 1]) if dtype != "uint8" else None,
        )

    check(body)


def test_morphology_float64_and_in_function():
    f = RNG.normal(size=(2, 3, 3))
    fn = lambda tf, x, f: tf.nn.dilation2d(x, f, [1, 2, 1, 1], "SAME", "NHWC", [1, 1, 2, 1])  # noqa: E731
    check(taped_body(fn, IMAGE.astype(np.float64), f))
    check(traced_body(fn, IMAGE, f.astype(np.float32)))
    ero = lambda tf, x, f: tf.nn.erosion2d(x, f, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])  # noqa: E731
    check(traced_body(ero, IMAGE, f.astype(np.float32)))


def _dilate(tf, x=IMAGE, f=None, strides=(1, 1, 1, 1), padding="SAME", data_format="NHWC", rates=(1, 1, 1, 1)):
    f = tf.ones([2, 2, 3]) if f is None else f
    return tf.nn.dilation2d(tf.constant(x), f, list(strides), padding, data_format, list(rates))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: _dilate(tf, strides=(1, 1)),
        lambda tf: _dilate(tf, strides=(2, 1, 1, 1)),
        lambda tf: _dilate(tf, rates=(2, 2)),
        lambda tf: _dilate(tf, rates=(1, 1, 1, 2)),
        lambda tf: _dilate(tf, data_format="NCHW"),
        lambda tf: _dilate(tf, f=tf.ones([2, 2, 2])),
        lambda tf: _dilate(tf, x=IMAGE[0]),
        lambda tf: _dilate(tf, f=tf.ones([2, 2, 3, 1])),
        lambda tf: _dilate(tf, padding="FOO"),
        lambda tf: _dilate(tf, strides=(1, 0, 1, 1)),
        lambda tf: _dilate(tf, f=tf.ones([2, 2, 3], tf.float64)),
        lambda tf: tf.nn.erosion2d(tf.constant(IMAGE), tf.ones([2, 2, 3]), [1, 1, 1, 1], "SAME", "NCHW", [1, 1, 1, 1]),
        lambda tf: tf.nn.erosion2d(tf.constant(IMAGE), tf.ones([2, 2, 2]), [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]),
    ],
)
def test_morphology_errors(body):
    check_raises(body)


# -- local_response_normalization ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "radius, bias, alpha, beta", [(5, 1.0, 1.0, 0.5), (2, 1.5, 0.3, 0.75), (0, 2.0, 0.5, 1.0), (1, 0.5, 2.0, 0.25)]
)
@pytest.mark.parametrize("dtype", ("float32", "float16"))
def test_local_response_normalization_values_and_gradient(radius, bias, alpha, beta, dtype):
    x = RNG.normal(size=(2, 3, 2, 7)).astype(dtype)
    fn = lambda tf, x: tf.nn.local_response_normalization(x, radius, bias, alpha, beta)  # noqa: E731
    check(taped_body(fn, x, output_gradients=_upstream(x.shape, dtype)))


def test_lrn_alias_defaults_and_in_function():
    check(taped_body(lambda tf, x: tf.nn.lrn(x), IMAGE))
    check(traced_body(lambda tf, x: tf.nn.lrn(x, depth_radius=1, alpha=0.1), IMAGE))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.nn.lrn(tf.constant(IMAGE, tf.bfloat16)),
        lambda tf: tf.nn.lrn(tf.constant(IMAGE, tf.float64)),
        lambda tf: tf.nn.lrn(tf.constant([[[[1, 2]]]])),
        lambda tf: tf.nn.lrn(tf.constant(IMAGE[0])),
        lambda tf: tf.nn.lrn(tf.constant(IMAGE), depth_radius=-1),
    ],
)
def test_local_response_normalization_errors(body):
    check_raises(body)
