"""The rest of the `tf.keras.backend` bodies (CTC, control flow, configuration, bad input): see keras_backend_cases.

Importing this module registers them; its `LEGACY_BACKEND_CASES` is then the complete dict.
"""

from __future__ import annotations

import numpy as np
from keras_backend_cases import (
    IMAGES,
    LEGACY_BACKEND_CASES,
    ONE_HOT,
    PROBS,
    M,
    X,
    backend_case,
    randn,
    with_gradient,
)

__all__ = ["LEGACY_BACKEND_CASES"]


# -- CTC ------------------------------------------------------------------------------------------------
CTC_PROBS = np.exp(randn((2, 6, 4))).astype(np.float32)
CTC_PROBS /= CTC_PROBS.sum(-1, keepdims=True)


@backend_case("ctc_batch_cost")
def _ctc_batch_cost(tf):
    labels = tf.constant([[0, 1, 1], [2, 0, 0]])
    input_length, label_length = tf.constant([[6], [5]]), tf.constant([[3], [1]])
    return with_gradient(
        tf, lambda v: tf.keras.backend.ctc_batch_cost(labels, v, input_length, label_length), CTC_PROBS
    )


@backend_case("ctc_decode")
def _ctc_decode(tf):
    decoded, log_probabilities = tf.keras.backend.ctc_decode(tf.constant(CTC_PROBS), tf.constant([6, 4]))
    return [decoded, log_probabilities]


# -- control flow -----------------------------------------------------------------------------------------
@backend_case("switch")
def _switch(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.switch(tf.constant(True), v * 2.0, lambda: v * 3.0)),
        with_gradient(tf, lambda v: K.switch(tf.constant(0.0), lambda: v * 2.0, v * 3.0)),
        with_gradient(tf, lambda v: K.switch(v > 0.0, v * v, -v)),
        with_gradient(tf, lambda v: K.switch(tf.constant([[True], [False]]), v, v * 5.0), X[:, :, :1] * X[:, :1]),
        with_gradient(tf, lambda v: K.switch(tf.constant([[True, False, True, True]] * 3), v, v * 5.0), M),
    ]


@backend_case("switch_condition_not_broadcastable_error")
def _switch_rank_1(tf):
    return tf.keras.backend.switch(tf.constant([True, False, True]), tf.constant(M), tf.constant(M))


@backend_case("switch_condition_rank_too_large_error")
def _switch_rank_too_large(tf):
    return tf.keras.backend.switch(tf.constant(X > 0), tf.constant(M), tf.constant(M))


@backend_case("map_fn")
def _map_fn(tf):
    return with_gradient(tf, lambda v: tf.keras.backend.map_fn(lambda row: tf.reduce_sum(row * row), v))


@backend_case("foldl")
def _foldl(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.foldl(lambda acc, row: acc * 0.5 + row, v)),
        with_gradient(tf, lambda v: K.foldl(lambda acc, row: acc + tf.reduce_sum(row), v, initializer=1.0)),
    ]


@backend_case("foldr")
def _foldr(tf):
    K = tf.keras.backend
    return [
        with_gradient(tf, lambda v: K.foldr(lambda acc, row: acc * 0.5 + row, v)),
        with_gradient(tf, lambda v: K.foldr(lambda acc, row: acc - tf.reduce_max(row), v, initializer=0.0)),
    ]


@backend_case("gradients_error")
def _gradients(tf):
    v = tf.Variable(1.0)
    return tf.keras.backend.gradients(v * v, [v])


@backend_case("name_scope")
def _name_scope(tf):
    with tf.keras.backend.name_scope("block"):
        return with_gradient(tf, lambda v: v * 2.0)


def _rnn_case(tf, **kwargs):
    K = tf.keras.backend
    sequence = randn((2, 5, 3))
    recurrent = tf.constant(randn((4, 4)) * 0.5)

    def run(kernel):
        def step(inputs, states):
            output = tf.tanh(K.dot(inputs, kernel) + K.dot(states[0], recurrent))
            return output, [output]

        last, outputs, states = K.rnn(step, tf.constant(sequence), [tf.zeros((2, 4))], **kwargs)
        return K.concatenate([tf.reshape(last, [-1]), tf.reshape(outputs, [-1]), tf.reshape(states[0], [-1])], 0)

    return with_gradient(tf, run, randn((3, 4)))


@backend_case("rnn")
def _rnn(tf):
    mask = tf.constant([[True, True, False, True, False], [True, False, True, True, True]])
    return [
        _rnn_case(tf),
        _rnn_case(tf, go_backwards=True),
        _rnn_case(tf, mask=mask),
        _rnn_case(tf, mask=mask, zero_output_for_mask=True),
        _rnn_case(tf, unroll=True, mask=mask),
        _rnn_case(tf, return_all_outputs=False),
    ]


# -- configuration ------------------------------------------------------------------------------------------
@backend_case("floatx")
def _floatx(tf):
    K = tf.keras.backend
    before = K.floatx()
    K.set_floatx("float64")
    try:
        made = [
            K.floatx(),
            K.constant(1.0),
            K.variable([1.0]).dtype.name,
            K.zeros((2,)).dtype.name,
            K.cast_to_floatx([1.0]).dtype.name,
        ]
    finally:
        K.set_floatx(before)
    return [before, made, K.floatx()]


backend_case("set_floatx")(_floatx)


@backend_case("epsilon")
def _epsilon(tf):
    K = tf.keras.backend
    before = K.epsilon()
    K.set_epsilon(0.1)
    try:
        clipped = K.binary_crossentropy(tf.constant([1.0]), tf.constant([1.0]))
    finally:
        K.set_epsilon(before)
    return [before, clipped, K.epsilon()]


backend_case("set_epsilon")(_epsilon)


@backend_case("image_data_format")
def _image_data_format(tf):
    K = tf.keras.backend
    before = K.image_data_format()
    K.set_image_data_format("channels_first")
    try:
        padded = K.spatial_2d_padding(tf.constant(IMAGES))
        fmt = K.image_data_format()
    finally:
        K.set_image_data_format(before)
    return [before, fmt, padded]


backend_case("set_image_data_format")(_image_data_format)


@backend_case("clear_session")
def _clear_session(tf):
    K = tf.keras.backend
    K.get_uid("h6_prefix")
    second = K.get_uid("h6_prefix")
    K.clear_session()
    layer = tf.keras.layers.Dense(1)
    return [second, K.get_uid("h6_prefix"), layer.name]


backend_case("get_uid")(_clear_session)


@backend_case("dtype_helpers")
def _dtype_helpers(tf):
    K = tf.keras.backend
    return [
        K.is_float_dtype("float16"),
        K.is_float_dtype("int32"),
        K.is_int_dtype("uint8"),
        K.is_int_dtype("float64"),
        K.standardize_dtype("float64"),
        K.standardize_dtype(np.int64),
        K.result_type("int32", "float16"),
        K.result_type("bool", "int8"),
        K.is_keras_tensor(tf.constant(1.0)),
        K.is_keras_tensor(tf.keras.Input((2,))),
        K.backend(),
    ]


@backend_case("standardize_dtype_error")
def _standardize_dtype_error(tf):
    return tf.keras.backend.standardize_dtype("float")


for _name in ("is_float_dtype", "is_int_dtype", "standardize_dtype", "result_type", "is_keras_tensor", "backend"):
    backend_case(_name)(_dtype_helpers)


@backend_case("categorical_crossentropy_shapes_error")
def _categorical_crossentropy_shapes(tf):
    return tf.keras.backend.categorical_crossentropy(tf.constant(ONE_HOT), tf.constant(PROBS[:, :3]))


# -- bad input: TF's error classes ---------------------------------------------------------------------------
@backend_case("dot_shapes_error")
def _dot_shapes(tf):
    return tf.keras.backend.dot(tf.constant(M), tf.constant(M))


@backend_case("conv2d_channels_error")
def _conv2d_channels(tf):
    return tf.keras.backend.conv2d(tf.constant(IMAGES), tf.ones((2, 2, 4, 1)))


@backend_case("conv1d_rank_error")
def _conv1d_rank(tf):
    return tf.keras.backend.conv1d(tf.constant(M), tf.ones((2, 4, 1)))


@backend_case("pool2d_rank_error")
def _pool2d_rank(tf):
    return tf.keras.backend.pool2d(tf.constant(X), (2, 2))


@backend_case("batch_dot_sizes_error")
def _batch_dot_sizes(tf):
    return tf.keras.backend.batch_dot(tf.constant(X), tf.constant(X))


@backend_case("concatenate_shapes_error")
def _concatenate_shapes(tf):
    return tf.keras.backend.concatenate([tf.constant(M), tf.constant(X)])


@backend_case("reshape_size_error")
def _reshape_size(tf):
    return tf.keras.backend.reshape(tf.constant(M), (5, -1))


@backend_case("resize_images_interpolation_error")
def _resize_interpolation(tf):
    return tf.keras.backend.resize_images(tf.constant(IMAGES), 2, 2, "channels_last", interpolation="cubic")


@backend_case("spatial_2d_padding_error")
def _spatial_padding(tf):
    return tf.keras.backend.spatial_2d_padding(tf.constant(IMAGES), ((1, 1),))


@backend_case("repeat_rank_error")
def _repeat_rank(tf):
    return tf.keras.backend.repeat(tf.constant(X), 2)


@backend_case("bias_add_rank_error")
def _bias_add_rank(tf):
    return tf.keras.backend.bias_add(tf.constant(IMAGES), tf.ones((2, 2)))


@backend_case("ctc_batch_cost_shapes_error")
def _ctc_shapes(tf):
    return tf.keras.backend.ctc_batch_cost(
        tf.constant([[0, 1]]), tf.constant(CTC_PROBS), tf.constant([[6], [5]]), tf.constant([[2], [1]])
    )


@backend_case("depthwise_conv2d_channels_error")
def _depthwise_channels(tf):
    return tf.keras.backend.depthwise_conv2d(tf.constant(IMAGES), tf.ones((2, 2, 2, 1)))
