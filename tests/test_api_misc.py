"""tf.control_dependencies, group, no_op, ensure_shape, get_static_value, identity_n, executing_eagerly,
against real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises

X = np.array([1.0, 2.0, 3.0], np.float32)


def test_executing_eagerly():
    check(lambda tf: tf.executing_eagerly())
    check(lambda tf: tf.function(lambda x: tf.constant(tf.executing_eagerly()))(tf.constant(X)))

    def in_init_scope(tf):
        @tf.function
        def f(x):
            with tf.init_scope():
                eager = tf.executing_eagerly()
            return tf.constant(eager) if eager else x

        return f(tf.constant(X))

    check(in_init_scope)


def test_control_dependencies_group_no_op():
    def body(tf):
        calls = []
        v = tf.Variable(1.0)
        with tf.control_dependencies([tf.constant(1.0), lambda: calls.append(1)]):
            y = tf.constant(X) * 2
        with tf.control_dependencies(None):
            z = y + 1

        @tf.function
        def f(x):
            a = v.assign_add(1.0)
            with tf.control_dependencies([a]):
                out = x + v
            with tf.control_dependencies([3]):
                out = out * 2
            tf.group(a, out)
            tf.no_op()
            return out

        return y, z, calls, tf.group(y, z), tf.no_op(), f(tf.constant(X)), v.read_value()

    check(body)


def test_group_rejects_unknown_keywords():
    check(lambda tf: tf.group(tf.constant(1.0), bogus=1))  # eagerly TF ignores them
    check_raises(lambda tf: tf.function(lambda x: tf.group(x, bogus=1))(tf.constant(1.0)))


ENSURE = {
    "exact": [3],
    "unknown_dim": [None],
    "none": None,
    "shape": "TensorShape",
    "bad_dim": [2],
    "bad_rank": [3, 1],
}


@pytest.mark.parametrize("case", sorted(ENSURE))
def test_ensure_shape(case):
    def body(tf):
        shape = tf.TensorShape([3]) if ENSURE[case] == "TensorShape" else ENSURE[case]
        x = tf.constant(X)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.ensure_shape(x, shape) * 2
        return y, tape.gradient(y, x)

    check(body, raises=case.startswith("bad_"))


def test_ensure_shape_errors():
    check_raises(lambda tf: tf.ensure_shape(tf.constant(X), "a"))
    check_raises(lambda tf: tf.function(lambda x: tf.ensure_shape(x, [2]))(tf.constant(X)))
    check(lambda tf: tf.function(lambda x: tf.ensure_shape(x, [None]) + 1)(tf.constant(X)))


def test_get_static_value_eager():
    check(lambda tf: tf.get_static_value(tf.constant(X)))
    check(lambda tf: tf.get_static_value(3))
    check(lambda tf: tf.get_static_value([1, 2]))
    check(lambda tf: tf.get_static_value(tf.Variable(1.0)))


def test_get_static_value_in_function():
    def body(tf):
        found = {}

        @tf.function
        def f(x):
            s = tf.shape(x)
            for name, t in [
                ("x", x),
                ("shape", s),
                ("cast", tf.cast(s, tf.float32)),
                ("concat", tf.concat([s, s], 0)),
                ("identity", tf.identity(s)),
                ("range", tf.range(3)),
                ("fill", tf.fill([2], 3)),
                ("size", tf.size(x)),
                ("rank", tf.rank(x)),
                ("const", tf.constant([1, 2])),
                ("equal", tf.equal(s, 2)),
                ("sum", s + 1),
                ("slice", s[0]),
                ("mul", tf.constant(2) * 3),
                ("from_x", x * 2),
            ]:
                value = tf.get_static_value(t)
                found[name] = None if value is None else np.asarray(value)
            return x

        f(tf.zeros([2, 3]))
        return found

    check(body)


def test_identity_n():
    def body(tf):
        x, i = tf.constant(X), tf.constant(1)
        with tf.GradientTape() as tape:
            tape.watch(x)
            a, b = tf.identity_n([x, i])
            y = tf.reduce_sum(a * 3.0)
        return a, b, tape.gradient(y, x), tf.identity_n(x)

    check(body)
