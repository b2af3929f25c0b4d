"""Variables, against real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises


def test_attributes():
    def body(tf):
        v = tf.Variable([1.0, 2.0], name="w", trainable=False)
        u = tf.Variable(lambda: tf.ones([2, 2]))
        return v.name, v.trainable, v.dtype, v.shape, v.numpy(), u, u.read_value(), tf.Variable(3).dtype

    check(body)


def test_assign_family():
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        v.assign([3.0, 4.0])
        a = v.numpy()
        v.assign_add([1.0, 1.0])
        b = v.numpy()
        v.assign_sub(tf.constant([0.5, 0.5]))
        r = v.assign(v * 2)
        return a, b, v, r.numpy()

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf, v: v.assign([1.0, 2.0, 3.0]),
        lambda tf, v: v.assign(tf.constant([1, 2])),
        lambda tf, v: v.assign(tf.constant([1.0, 2.0], tf.float64)),
        lambda tf, v: v.assign_add(tf.constant([1, 2])),
    ],
)
def test_bad_assign_raises_and_leaves_value(bad):
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        try:
            bad(tf, v)
        except (ValueError, TypeError) as exc:
            return type(exc).__name__, str(exc), v
        return None

    check(body)


@pytest.mark.parametrize(
    "initial, update",
    [
        ([True, False], lambda v: v.assign_add([True, True])),
        ([True, False], lambda v: v.assign_sub([True, True], read_value=False)),
        (["a", "b"], lambda v: v.assign_add(["c", "d"])),
    ],
)
def test_updates_of_variables_without_arithmetic_raise(initial, update):
    # TF registers AssignAdd/SubVariableOp for numeric dtypes only: a bool variable is not or-ed, a string one
    # not concatenated
    raised = check_raises(lambda tf: update(tf.Variable(initial)))
    assert raised.message.startswith("No OpKernel was registered to support Op 'Assign")


def test_variable_in_ops_and_numpy():
    def body(tf):
        v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
        return tf.reduce_sum(v), v[1, ::2], tf.matmul(v, v, transpose_b=True), np.asarray(v).sum()

    check(body)


def test_none_initial_value():
    check_raises(lambda tf: tf.Variable(None))


@pytest.mark.parametrize(
    "update",
    [
        lambda v: v.assign_add(1.0),
        lambda v: v.assign_sub([[1.0, 2.0]]),
        lambda v: v.assign_add(1),
        lambda v: v.assign(1.0),
    ],
)
def test_updates_need_the_variables_shape(update):
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        try:
            update(v)
        except (tf.errors.InvalidArgumentError, ValueError, TypeError) as exc:
            return type(exc).__name__, v
        return None

    check(body)
