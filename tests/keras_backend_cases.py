"""Bodies that call each name of `tf.keras.backend` (TF's legacy backend), run with TF's Keras and with tapeshim.

`LEGACY_BACKEND_CASES` maps `backend_<name>` to a body `fn(tf)`; every public
name of TF 2.21's `tf.keras.backend` has one once `keras_backend_cases_more` (CTC,
control flow, configuration and bad input) has registered its own: import the dict
from there (tests/test_keras_backend.py checks that every name has a body, and
compares each body's outcome with TF's). Tensor functions are called
on a `tf.Variable` under a `GradientTape`, so their gradients are compared too.
Random functions are compared through what does not depend on the generator:
shapes, dtypes, and draws whose spread is zero.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from oracle_data import normal

LEGACY_BACKEND_CASES: dict[str, Callable[[Any], Any]] = {}

_RNG = np.random.default_rng(11)
X = _RNG.standard_normal((2, 3, 4)).astype(np.float32)
M = _RNG.standard_normal((3, 4)).astype(np.float32)
POSITIVE = _RNG.uniform(0.1, 1.0, (3, 4)).astype(np.float32)
IMAGES = _RNG.standard_normal((2, 5, 6, 3)).astype(np.float32)
VOLUMES = _RNG.standard_normal((1, 4, 5, 4, 2)).astype(np.float32)


def randn(shape: tuple) -> np.ndarray:
    """Normal float32 values drawn from a generator seeded by the shape (the same in any case order)."""
    return normal(shape, sum(shape) * 7 + len(shape))


def backend_case(name: str) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    def register(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        LEGACY_BACKEND_CASES[f"backend_{name}"] = fn
        return fn

    return register


def with_gradient(tf: Any, fn: Callable[[Any], Any], value: np.ndarray = M) -> list:
    """`fn(variable)` and the gradient of a weighted sum of it, for a variable holding `value`."""
    variable = tf.Variable(value)
    with tf.GradientTape() as tape:
        out = fn(variable)
        flat = tf.reshape(tf.cast(out, tf.float32), [-1])
        total = tf.reduce_sum(flat * tf.range(1, 1 + tf.size(flat), dtype=tf.float32) / 10.0)
    return [out, tape.gradient(total, variable)]


def _elementwise(name: str, value: np.ndarray = M, **kwargs: Any) -> None:
    backend_case(name)(lambda tf: with_gradient(tf, lambda v: getattr(tf.keras.backend, name)(v, **kwargs), value))


for _name in (
    "abs",
    "cos",
    "sin",
    "exp",
    "sign",
    "round",
    "square",
    "tanh",
    "sigmoid",
    "softplus",
    "softsign",
    "hard_sigmoid",
    "sqrt",
    "transpose",
    "flatten",
    "batch_flatten",
    "shape",
    "to_dense",
    "ones_like",
    "zeros_like",
):
    _elementwise(_name)
_elementwise("log", POSITIVE)
_elementwise("pow", M, a=3)
_elementwise("cumsum", M, axis=1)
_elementwise("cumprod", M, axis=1)
_elementwise("l2_normalize", M, axis=1)
_elementwise("argmax", M, axis=0)
_elementwise("argmin", M)
_elementwise("expand_dims", M, axis=1)
_elementwise("permute_dimensions", X, pattern=(2, 0, 1))
_elementwise("reshape", X, shape=(4, -1))
_elementwise("tile", M, n=[2, 1])
_elementwise("repeat", M, n=3)
_elementwise("repeat_elements", X, rep=2, axis=1)
_elementwise("reverse", X, axes=[0, 2])
_elementwise("cast", M, dtype="float16")
_elementwise("one_hot", np.array([0, 2, 1], np.int32), num_classes=4)


@backend_case("squeeze")
def _squeeze(tf):
    return with_gradient(tf, lambda v: tf.keras.backend.squeeze(v, 1), M[:, :1])


@backend_case("elu")
def _elu(tf):
    return [with_gradient(tf, tf.keras.backend.elu), with_gradient(tf, lambda v: tf.keras.backend.elu(v, 0.5))]


@backend_case("relu")
def _relu(tf):
    K = tf.keras.backend
    options = [
        {},
        {"alpha": 0.1},
        {"max_value": 6.0},
        {"max_value": 0.5},
        {"threshold": 0.3},
        {"alpha": 0.2, "max_value": 0.7, "threshold": -0.2},
    ]
    return [with_gradient(tf, lambda v, o=o: K.relu(v, **o)) for o in options]


@backend_case("softmax")
def _softmax(tf):
    K = tf.keras.backend
    return [with_gradient(tf, K.softmax, X), with_gradient(tf, lambda v: K.softmax(v, axis=(1, 2)), X)]


@backend_case("softmax_1d_error")
def _softmax_1d(tf):
    return tf.keras.backend.softmax(tf.constant([1.0, 2.0]))


for _name in ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal"):
    backend_case(_name)(lambda tf, name=_name: getattr(tf.keras.backend, name)(tf.constant(M), tf.constant(M.T[:1].T)))
for _name in ("maximum", "minimum"):
    backend_case(_name)(
        lambda tf, name=_name: with_gradient(
            tf, lambda v: getattr(tf.keras.backend, name)(v, tf.constant(M[::-1].copy()))
        )
    )


@backend_case("clip")
def _clip(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.clip(v, -0.5, 0.5)),
        with_gradient(tf, lambda v: K.clip(v, 0.5, -1.0)),
        with_gradient(tf, lambda v: K.clip(v, None, 0.2)),
    ]


for _name in ("sum", "prod", "max", "min", "mean", "std", "var"):
    backend_case(_name)(
        lambda tf, name=_name: [
            with_gradient(tf, getattr(tf.keras.backend, name), X),
            with_gradient(tf, lambda v: getattr(tf.keras.backend, name)(v, axis=1, keepdims=True), X),
        ]
    )
for _name in ("all", "any"):
    backend_case(_name)(
        lambda tf, name=_name: [
            getattr(tf.keras.backend, name)(tf.constant(M > 0), axis=1),
            getattr(tf.keras.backend, name)(tf.constant(M)),
        ]
    )


@backend_case("mean_of_bool")
def _mean_of_bool(tf):
    K = tf.keras.backend
    return [K.mean(tf.constant(M > 0), axis=0), K.std(tf.constant(M > 0)), K.var(tf.constant(M > 0), axis=1)]


@backend_case("in_top_k")
def _in_top_k(tf):
    predictions = tf.constant([[0.1, 0.5, 0.5, 0.2], [0.9, 0.0, 0.3, 0.3], [np.nan, 0.1, 0.2, 0.3]])
    targets = tf.constant([2, 3, 0])
    return [tf.keras.backend.in_top_k(predictions, targets, k) for k in (1, 2)]


@backend_case("int_shape")
def _int_shape(tf):
    K = tf.keras.backend
    return [
        K.int_shape(tf.constant(X)),
        K.int_shape(tf.Variable(M)),
        K.ndim(tf.constant(X)),
        K.dtype(tf.constant(M)),
        K.count_params(tf.Variable(X)),
    ]


backend_case("ndim")(lambda tf: tf.keras.backend.ndim(tf.Variable(X)))
backend_case("dtype")(lambda tf: tf.keras.backend.dtype(tf.constant([1, 2], tf.int64)))
backend_case("count_params")(lambda tf: tf.keras.backend.count_params(tf.constant(X)))


@backend_case("concatenate")
def _concatenate(tf):
    return with_gradient(tf, lambda v: tf.keras.backend.concatenate([v, 2.0 * v, tf.constant(M)], axis=-1))


@backend_case("stack")
def _stack(tf):
    return with_gradient(tf, lambda v: tf.keras.backend.stack([v, v * v], axis=1))


@backend_case("gather")
def _gather(tf):
    return with_gradient(tf, lambda v: tf.keras.backend.gather(v, tf.constant([2, 0, 2])))


@backend_case("dot")
def _dot(tf):
    K = tf.keras.backend
    y3 = randn((5, 4, 2))
    return [
        with_gradient(tf, lambda v: K.dot(v, tf.constant(M.T))),
        with_gradient(tf, lambda v: K.dot(v, tf.constant(y3)), X),
    ]


@backend_case("batch_dot")
def _batch_dot(tf):
    K = tf.keras.backend
    rng = np.random.default_rng(3)
    a2, b2 = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    a3, b3 = rng.standard_normal((3, 2, 4)).astype(np.float32), rng.standard_normal((3, 4, 5)).astype(np.float32)
    a4 = rng.standard_normal((3, 2, 4, 6)).astype(np.float32)
    return [
        with_gradient(tf, lambda v: K.batch_dot(v, tf.constant(b2)), a2),
        with_gradient(tf, lambda v: K.batch_dot(v, tf.constant(b3)), a3),
        with_gradient(tf, lambda v: K.batch_dot(v, tf.constant(b3), axes=(2, 1)), a3),
        with_gradient(tf, lambda v: K.batch_dot(v, tf.constant(a3), axes=(1, 2)), b3),
        with_gradient(tf, lambda v: K.batch_dot(v, tf.constant(b2), axes=1), a3[:, 0, :]),
        with_gradient(tf, lambda v: K.batch_dot(tf.constant(a3), v, axes=[2, 2]), a4[:, 0, :, :4]),
        with_gradient(tf, lambda v: K.batch_dot(v, tf.constant(b3), axes=(2, 1)), a4),
    ]


@backend_case("batch_dot_axis_0_error")
def _batch_dot_error(tf):
    return tf.keras.backend.batch_dot(tf.constant(M), tf.constant(M), axes=0)


@backend_case("cast_to_floatx")
def _cast_to_floatx(tf):
    K = tf.keras.backend
    return [K.cast_to_floatx(tf.constant([1, 2])), K.cast_to_floatx([1, 2]), K.cast_to_floatx(np.float64(3.0))]


@backend_case("constant")
def _constant(tf):
    K = tf.keras.backend
    return [K.constant([1, 2]), K.constant(3, dtype="int64"), K.constant(1.5, shape=(2, 2))]


@backend_case("variable")
def _variable(tf):
    K = tf.keras.backend
    v = K.variable([[1, 2], [3, 4]])
    w = K.variable(2.0, dtype="float64", name="w")
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    return [v, w, isinstance(v, tf.Variable), tape.gradient(loss, v)]


for _name in ("zeros", "ones"):
    backend_case(_name)(
        lambda tf, name=_name: [
            getattr(tf.keras.backend, name)((2, 3)),
            isinstance(getattr(tf.keras.backend, name)((2, 3)), tf.Variable),
            getattr(tf.keras.backend, name)((2, 0), dtype="int32"),
            isinstance(getattr(tf.keras.backend, name)((2, 0)), tf.Variable),
        ]
    )


@backend_case("eye")
def _eye(tf):
    e = tf.keras.backend.eye(3, dtype="float64")
    return [e, isinstance(e, tf.Variable), tf.keras.backend.eye(2)]


@backend_case("arange")
def _arange(tf):
    K = tf.keras.backend
    return [K.arange(5), K.arange(-3), K.arange(1, 7, 2), K.arange(0, 3, dtype="float32"), K.arange(2.0, 4.0, 0.5)]


@backend_case("is_sparse")
def _is_sparse(tf):
    return [tf.keras.backend.is_sparse(tf.constant(M)), tf.keras.backend.is_sparse(tf.Variable(M))]


@backend_case("get_value")
def _get_value(tf):
    K = tf.keras.backend
    return [K.get_value(tf.Variable(M)), K.get_value(tf.constant(X)), K.get_value(3.0), K.eval(tf.Variable(M) * 2.0)]


backend_case("eval")(lambda tf: tf.keras.backend.eval(tf.constant(X) + 1.0))
backend_case("batch_get_value")(lambda tf: tf.keras.backend.batch_get_value([tf.Variable(M), tf.constant(X)]))


@backend_case("set_value")
def _set_value(tf):
    K = tf.keras.backend
    v, w = tf.Variable(M), tf.Variable([1, 2])
    K.set_value(v, np.ones((3, 4), np.float64))
    K.batch_set_value([(w, [5.7, 6.2])])
    return [v, w]


backend_case("batch_set_value")(_set_value)


@backend_case("update")
def _update(tf):
    K = tf.keras.backend
    v = tf.Variable(M)
    results = [K.update(v, tf.constant(POSITIVE)), K.update_add(v, tf.ones((3, 4))), K.update_sub(v, 0.5 * v)]
    momentum = tf.Variable(M)
    results.append(K.moving_average_update(momentum, tf.constant(POSITIVE, tf.float32), 0.9))
    return [tf.identity(r) for r in results] + [v, momentum]


backend_case("update_add")(_update)
backend_case("update_sub")(_update)
backend_case("moving_average_update")(_update)


@backend_case("stop_gradient")
def _stop_gradient(tf):
    K = tf.keras.backend
    v = tf.Variable(M)
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(K.stop_gradient(v) * v) + tf.reduce_sum(list(K.stop_gradient([v, v]))[0])
    return [tape.gradient(total, v), type(K.stop_gradient([v])).__name__]


# -- random ---------------------------------------------------------------------------------------------
@backend_case("random_normal")
def _random_normal(tf):
    K = tf.keras.backend
    draw = K.random_normal((200, 3), mean=1.0, stddev=0.5, seed=1)
    return [
        draw.shape,
        draw.dtype.name,
        K.random_normal((4,), mean=2.5, stddev=0.0),
        K.random_normal((2,), dtype="float64", seed=3).dtype.name,
        bool(abs(float(tf.reduce_mean(draw)) - 1) < 0.2),
    ]


@backend_case("random_uniform")
def _random_uniform(tf):
    K = tf.keras.backend
    draw = K.random_uniform((200, 3), minval=-2.0, maxval=-1.0, seed=1)
    return [
        draw.shape,
        draw.dtype.name,
        bool(tf.reduce_all(draw >= -2.0)),
        bool(tf.reduce_all(draw < -1.0)),
        K.random_uniform((3,), 4.0, 4.0),
    ]


@backend_case("truncated_normal")
def _truncated_normal(tf):
    K = tf.keras.backend
    draw = K.truncated_normal((300,), mean=1.0, stddev=2.0, seed=2)
    return [
        draw.shape,
        draw.dtype.name,
        bool(tf.reduce_all(tf.abs(draw - 1.0) <= 4.0)),
        K.truncated_normal((3,), mean=-1.0, stddev=0.0),
    ]


@backend_case("random_bernoulli")
def _random_bernoulli(tf):
    K = tf.keras.backend
    draw = K.random_bernoulli((100,), p=0.5, seed=4)
    return [
        draw.dtype.name,
        bool(tf.reduce_all(tf.logical_or(draw == 0.0, draw == 1.0))),
        K.random_bernoulli((2, 2), p=0.0),
        K.random_bernoulli((3,), p=1.0, dtype="float64"),
    ]


@backend_case("random_normal_variable")
def _random_normal_variable(tf):
    v = tf.keras.backend.random_normal_variable((3, 2), 0.5, 0.0, seed=2)
    return [isinstance(v, tf.Variable), v, tf.keras.backend.random_normal_variable((2,), 0.0, 1.0).shape]


@backend_case("random_uniform_variable")
def _random_uniform_variable(tf):
    v = tf.keras.backend.random_uniform_variable((3, 2), 1.0, 1.0, dtype="float64", seed=2)
    w = tf.keras.backend.random_uniform_variable((50,), -1.0, 0.0)
    return [isinstance(v, tf.Variable), v, bool(tf.reduce_all(w < 0.0))]


@backend_case("dropout")
def _dropout(tf):
    K = tf.keras.backend
    kept = K.dropout(tf.constant(POSITIVE), 0.5, seed=3)
    scaled_or_zero = tf.logical_or(tf.equal(kept, 0.0), tf.abs(kept - 2.0 * POSITIVE) < 1e-6)
    return [with_gradient(tf, lambda v: K.dropout(v, 0.0)), kept.shape, bool(tf.reduce_all(scaled_or_zero))]


# -- losses ---------------------------------------------------------------------------------------------
PROBS = (np.exp(M) / np.exp(M).sum(-1, keepdims=True)).astype(np.float32)
ONE_HOT = np.eye(4, dtype=np.float32)[[1, 3, 0]]
LABELS = np.array([1, 3, 0], np.int32)
BINARY = (M > 0).astype(np.float32)


@backend_case("binary_crossentropy")
def _binary_crossentropy(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.binary_crossentropy(tf.constant(BINARY), v), POSITIVE),
        with_gradient(tf, lambda v: K.binary_crossentropy(tf.constant(BINARY), v, from_logits=True)),
    ]


@backend_case("binary_focal_crossentropy")
def _binary_focal_crossentropy(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.binary_focal_crossentropy(tf.constant(BINARY), v), POSITIVE),
        with_gradient(
            tf,
            lambda v: K.binary_focal_crossentropy(
                tf.constant(BINARY), v, apply_class_balancing=True, alpha=0.4, gamma=1.5, from_logits=True
            ),
        ),
    ]


@backend_case("categorical_crossentropy")
def _categorical_crossentropy(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.categorical_crossentropy(tf.constant(ONE_HOT), v), PROBS),
        with_gradient(tf, lambda v: K.categorical_crossentropy(tf.constant(ONE_HOT), v, from_logits=True)),
        with_gradient(tf, lambda v: K.categorical_crossentropy(tf.constant(ONE_HOT.T), v, axis=0), PROBS.T),
    ]


@backend_case("categorical_focal_crossentropy")
def _categorical_focal_crossentropy(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.categorical_focal_crossentropy(tf.constant(ONE_HOT), v), PROBS),
        with_gradient(
            tf,
            lambda v: K.categorical_focal_crossentropy(tf.constant(ONE_HOT), v, alpha=0.5, gamma=1.0, from_logits=True),
        ),
    ]


@backend_case("sparse_categorical_crossentropy")
def _sparse_categorical_crossentropy(tf):
    K = tf.keras.backend
    labels3 = np.array([[1, 0, 2], [3, 3, 1]], np.int32)
    return [
        with_gradient(tf, lambda v: K.sparse_categorical_crossentropy(tf.constant(LABELS), v), PROBS),
        with_gradient(tf, lambda v: K.sparse_categorical_crossentropy(LABELS, v, from_logits=True)),
        with_gradient(tf, lambda v: K.sparse_categorical_crossentropy(labels3, v, from_logits=True), X),
        with_gradient(tf, lambda v: K.sparse_categorical_crossentropy(LABELS, v, from_logits=True, axis=0), M.T.copy()),
        with_gradient(tf, lambda v: K.sparse_categorical_crossentropy(labels3, v, from_logits=True, ignore_class=3), X),
    ]


# -- layers' building blocks ------------------------------------------------------------------------------
@backend_case("bias_add")
def _bias_add(tf):
    K = tf.keras.backend
    bias = randn((3,))
    return [
        with_gradient(tf, lambda v: K.bias_add(v, tf.constant(bias)), IMAGES),
        with_gradient(tf, lambda v: K.bias_add(v, tf.constant(bias[:2]), data_format="channels_first"), IMAGES[:, :2]),
        with_gradient(tf, lambda v: K.bias_add(v, tf.constant(IMAGES[0])), IMAGES),
        with_gradient(tf, lambda v: K.bias_add(v, tf.constant(M[:2])), M[None, :2]),
    ]


@backend_case("batch_normalization")
def _batch_normalization(tf):
    mean, var = np.float32([0.1, -0.2, 0.3, 0.0]), np.float32([1.0, 0.5, 2.0, 0.1])
    beta, gamma = np.float32([0.0, 1.0, -1.0, 0.5]), np.float32([1.0, 2.0, 0.5, 1.5])
    return with_gradient(tf, lambda v: tf.keras.backend.batch_normalization(v, mean, var, beta, gamma, epsilon=0.01))


@backend_case("conv1d")
def _conv1d(tf):
    K = tf.keras.backend
    kernel = tf.constant(randn((3, 4, 2)))
    sequence = randn((2, 7, 4))
    return [
        with_gradient(tf, lambda v: K.conv1d(v, kernel), sequence),
        with_gradient(tf, lambda v: K.conv1d(v, kernel, strides=2, padding="same"), sequence),
        with_gradient(tf, lambda v: K.conv1d(v, kernel, padding="causal", dilation_rate=2), sequence),
    ]


@backend_case("conv2d")
def _conv2d(tf):
    K = tf.keras.backend
    kernel = tf.constant(randn((3, 2, 3, 4)))
    return [
        with_gradient(tf, lambda v: K.conv2d(v, kernel), IMAGES),
        with_gradient(tf, lambda v: K.conv2d(v, kernel, strides=(2, 1), padding="same"), IMAGES),
        with_gradient(tf, lambda v: K.conv2d(v, kernel, dilation_rate=(2, 2)), IMAGES),
    ]


@backend_case("conv2d_bad_padding_error")
def _conv2d_bad_padding(tf):
    return tf.keras.backend.conv2d(tf.constant(IMAGES), tf.ones((1, 1, 3, 1)), padding="full")


@backend_case("conv3d")
def _conv3d(tf):
    K = tf.keras.backend
    kernel = tf.constant(randn((2, 3, 2, 2, 3)))
    return [
        with_gradient(tf, lambda v: K.conv3d(v, kernel), VOLUMES),
        with_gradient(tf, lambda v: K.conv3d(v, kernel, strides=(1, 2, 2), padding="same"), VOLUMES),
    ]


@backend_case("conv2d_transpose")
def _conv2d_transpose(tf):
    K = tf.keras.backend
    kernel = tf.constant(randn((3, 3, 2, 3)))  # (rows, cols, out, in)
    return [
        with_gradient(tf, lambda v: K.conv2d_transpose(v, kernel, (2, 11, 13, 2), strides=(2, 2)), IMAGES),
        with_gradient(tf, lambda v: K.conv2d_transpose(v, kernel, (2, 5, 6, 2), padding="same"), IMAGES),
        with_gradient(tf, lambda v: K.conv2d_transpose(v, kernel, (2, 9, 10, 2), dilation_rate=(2, 2)), IMAGES),
    ]


@backend_case("depthwise_conv2d")
def _depthwise_conv2d(tf):
    K = tf.keras.backend
    kernel = tf.constant(randn((2, 2, 3, 2)))
    return [
        with_gradient(tf, lambda v: K.depthwise_conv2d(v, kernel), IMAGES),
        with_gradient(tf, lambda v: K.depthwise_conv2d(v, kernel, strides=(2, 2), padding="same"), IMAGES),
    ]


@backend_case("separable_conv2d")
def _separable_conv2d(tf):
    K = tf.keras.backend
    depthwise = tf.constant(randn((2, 2, 3, 2)))
    pointwise = tf.constant(randn((1, 1, 6, 4)))
    return [
        with_gradient(tf, lambda v: K.separable_conv2d(v, depthwise, pointwise), IMAGES),
        with_gradient(
            tf, lambda v: K.separable_conv2d(v, depthwise, pointwise, padding="same", dilation_rate=(2, 2)), IMAGES
        ),
    ]


@backend_case("pool2d")
def _pool2d(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.pool2d(v, (2, 2), strides=(2, 2)), IMAGES),
        with_gradient(tf, lambda v: K.pool2d(v, (3, 2), strides=(2, 2), padding="same", pool_mode="avg"), IMAGES),
    ]


@backend_case("pool2d_bad_mode_error")
def _pool2d_bad_mode(tf):
    return tf.keras.backend.pool2d(tf.constant(IMAGES), (2, 2), pool_mode="median")


@backend_case("pool3d")
def _pool3d(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.pool3d(v, (2, 2, 2), strides=(2, 2, 2)), VOLUMES),
        with_gradient(tf, lambda v: K.pool3d(v, (2, 3, 2), padding="same", pool_mode="avg"), VOLUMES),
    ]


@backend_case("temporal_padding")
def _temporal_padding(tf):
    return with_gradient(tf, lambda v: tf.keras.backend.temporal_padding(v, (2, 1)), X)


@backend_case("spatial_2d_padding")
def _spatial_2d_padding(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.spatial_2d_padding(v, ((1, 0), (2, 1))), IMAGES),
        with_gradient(tf, lambda v: K.spatial_2d_padding(v, data_format="channels_first"), IMAGES),
    ]


@backend_case("spatial_3d_padding")
def _spatial_3d_padding(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.spatial_3d_padding(v, ((1, 0), (0, 2), (1, 1))), VOLUMES),
        with_gradient(tf, lambda v: K.spatial_3d_padding(v, data_format="channels_first"), VOLUMES),
    ]


@backend_case("resize_images")
def _resize_images(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.resize_images(v, 2, 3, "channels_last"), IMAGES),
        with_gradient(tf, lambda v: K.resize_images(v, 2, 2, "channels_last", interpolation="bilinear"), IMAGES),
        with_gradient(tf, lambda v: K.resize_images(v, 1, 2, "channels_first"), IMAGES),
    ]


@backend_case("resize_volumes")
def _resize_volumes(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.resize_volumes(v, 2, 1, 2, "channels_last"), VOLUMES),
        with_gradient(tf, lambda v: K.resize_volumes(v, 1, 2, 2, "channels_first"), VOLUMES),
    ]
