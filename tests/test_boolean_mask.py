"""Boolean-mask indexing (`x[mask]`) and `tf.boolean_mask`, each compared with real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises, raising


def _matrix(tf):
    return tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: (lambda x: x[x > 1])(tf.constant([1, 2, 3])),
        lambda tf: tf.constant([1, 2, 3])[np.array([True, False, True])],
        lambda tf: _matrix(tf)[tf.constant([True, False])],  # mask rank < tensor rank: whole rows
        lambda tf: _matrix(tf)[_matrix(tf) > 2.0],
        lambda tf: _matrix(tf)[np.array([[True, False, True], [False, False, True]])],
        lambda tf: _matrix(tf)[np.array([True, False])],
        lambda tf: _matrix(tf)[tf.constant([False, False])],  # nothing selected: shape (0, 3)
        lambda tf: tf.Variable([1.0, 2.0, 3.0])[tf.constant([True, False, True])],
        lambda tf: tf.Variable([[1.0, 2.0], [3.0, 4.0]])[tf.constant([[True, False], [False, True]])],
        lambda tf: tf.constant([[1, 2, 3], [4, 5, 6]])[0, True],  # a bool among other indices is an int
        lambda tf: tf.constant([1, 2, 3])[[]],  # a list index is a tuple of indices
        lambda tf: tf.constant([[1, 2, 3], [4, 5, 6]])[[1]],
        lambda tf: tf.constant([[1, 2, 3], [4, 5, 6]])[[1, 2]],
        lambda tf: tf.constant([[1, 2, 3], [4, 5, 6]])[[slice(None), 1]],
    ],
    ids=lambda body: "",
)
def test_indexing_with_a_mask_selects_as_tf(body):
    check(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.constant([1, 2, 3])[[True, False, True]],  # a list of bools is a tuple of bool indices
        lambda tf: tf.constant([1, 2, 3])[[True]],
        lambda tf: tf.constant([1, 2, 3])[tf.constant([True, False])],
        lambda tf: tf.constant([1, 2, 3])[True],
        lambda tf: tf.constant([1, 2, 3])[False],
        lambda tf: tf.constant([1, 2, 3])[tf.constant(True)],
        lambda tf: _matrix(tf)[tf.constant([True, False]), 0],  # masks mixed with other indices
        lambda tf: _matrix(tf)[:, tf.constant([True, False, True])],
        lambda tf: _matrix(tf)[..., tf.constant([True, False, True])],
        lambda tf: tf.constant([1, 2, 3])[tf.constant([1, 0, 1])],
        lambda tf: tf.constant([1, 2, 3])[tf.Variable([True, False, True])],
        lambda tf: tf.constant([1, 2, 3])[[0, 2]],
    ],
    ids=lambda body: "",
)
def test_bad_masks_raise_as_tf(body):
    check_raises(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.boolean_mask(_matrix(tf), [True, False, True], axis=1),
        lambda tf: tf.boolean_mask(_matrix(tf), [True, False, True], axis=tf.constant(1)),
        lambda tf: tf.boolean_mask(_matrix(tf), [True, False], axis=-2),
        raising(lambda tf: tf.boolean_mask(_matrix(tf), [True, False, True], axis=-1)),  # TF slices the shape
        raising(lambda tf: tf.boolean_mask(_matrix(tf), [True, False, True], axis=2)),
        raising(lambda tf: tf.boolean_mask(_matrix(tf), True)),
        raising(lambda tf: tf.boolean_mask(_matrix(tf), [True, False, True])),
        lambda tf: tf.boolean_mask(tf.constant([1, 2, 3]), [1, 0, 1]),
        lambda tf: tf.boolean_mask(tf.constant([1, 2, 3]), [1.0, 0.0, 2.0]),
        lambda tf: tf.boolean_mask(
            tf.reshape(tf.range(24.0), [2, 3, 4]), tf.reshape(tf.range(12) % 3 == 0, [3, 4]), axis=1
        ),
        lambda tf: tf.boolean_mask(_matrix(tf), [False, False]),
    ],
    ids=lambda body: "",
)
def test_boolean_mask_with_axis_as_tf(body):
    check(body)


def test_boolean_mask_messages_match_tf():
    check_raises(lambda tf: tf.boolean_mask(_matrix(tf), [True, False, True]), messages=True)
    check_raises(lambda tf: tf.constant([1, 2, 3])[True], messages=True)


def _masked_gradient(tf):
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v[v > 1.5] ** 2)
    return tape.gradient(y, v)


def _masked_gradient_of_tensor(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x[x > 1.5] * tf.constant([1.0, 2.0, 3.0]))
    return y, tape.gradient(y, x)


def _boolean_mask_axis_gradient(tf):
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.boolean_mask(x, [True, False, True], axis=1) ** 2)
    return tape.gradient(y, x)


@pytest.mark.parametrize("body", [_masked_gradient, _masked_gradient_of_tensor, _boolean_mask_axis_gradient])
def test_the_gradient_flows_to_the_selected_elements(body):
    check(body)


def test_a_mask_of_constants_works_inside_tf_function():
    def body(tf):
        @tf.function
        def select(x):
            return x[tf.constant([True, False, True])] * 2

        return select(tf.constant([1.0, 2.0, 3.0]))

    check(body)


def test_a_mask_only_known_when_the_function_runs_gives_tfs_values():
    def body(tf):
        @tf.function
        def select(x):
            return x[x > 1]

        return select(tf.constant([1, 2, 3])), select(tf.constant([5, 0, 3])), select.experimental_get_tracing_count()

    check(body)


def test_a_mask_computed_inside_a_function_runs_it_eagerly_with_tfs_values():
    def body(tf):
        @tf.function
        def masked_loss(y, p):
            return tf.reduce_mean(tf.boolean_mask(tf.square(y - p), tf.not_equal(y, 0.0)))

        w = tf.Variable([1.0, 2.0, 3.0])

        @tf.function
        def positive_part(y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.boolean_mask(w * y, y > 0) ** 2)
            return loss, tape.gradient(loss, w)

        loss = masked_loss(tf.constant([1.0, 0.0, 2.0]), tf.constant([0.0, 1.0, 2.5]))
        return loss, masked_loss.experimental_get_tracing_count(), positive_part(tf.constant([1.0, -1.0, 2.0]))

    check(body)
