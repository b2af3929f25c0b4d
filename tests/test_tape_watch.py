"""What a tape watches (tf_tape_semantics.md sections 1-3), against real TensorFlow."""

import collections

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises


def test_seed_variable_square():
    def body(tf):
        x = tf.Variable(3.0)
        with tf.GradientTape() as tape:
            y = x**2
        g = tape.gradient(y, x)
        return g, y, str(g), type(g.numpy()).__name__

    check(body)


def test_seed_watched_constant_cube():
    def body(tf):
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x**3
        return tape.gradient(y, x)

    check(body)


def test_chain_rule_and_intermediates():
    def body(tf):
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            a = 3 * x + 1
            y = a**2
        return tape.gradient(y, x), a, y

    check(body)


@pytest.mark.parametrize(
    "fn",
    [
        lambda tf, v: v * v,
        lambda tf, v: tf.constant(v.numpy() ** 2),
        lambda tf, v: tf.round(v),
    ],
)
@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.Variable(3),
        lambda tf: tf.Variable(3.0, trainable=False),
        lambda tf: tf.Variable(3.0),
    ],
)
def test_none_rules(make, fn):
    def body(tf):
        x = make(tf)
        with tf.GradientTape() as tape:
            y = fn(tf, x)
        return tape.gradient(y, x), y

    check(body)


def test_python_loop_squaring():
    def body(tf):
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = x
            for _ in range(3):
                y = y * y
        return y, tape.gradient(y, x)

    check(body)


# tapeshim's tape also explains and shows itself (docs/debugging.md); TF's has none of these names.
TAPESHIM_ONLY_TAPE_METHODS = {"explain", "summary", "as_jaxpr", "as_stablehlo", "to_dot"}


def test_public_methods_and_aliases():
    def body(tf):
        names = sorted(n for n in dir(tf.GradientTape) if not n.startswith("_") and n not in TAPESHIM_ONLY_TAPE_METHODS)
        return names, tf.autodiff.GradientTape is tf.GradientTape, [e.value for e in tf.UnconnectedGradients]

    check(body)
    assert TAPESHIM_ONLY_TAPE_METHODS <= set(dir(tapeshim.GradientTape))


def test_enter_returns_tape_and_positional_persistent():
    def body(tf):
        tape = tf.GradientTape(True)
        x = tf.constant(2.0)
        with tape as bound:
            same = bound is tape
            tape.watch(x)
            y = x * x
        return same, tape.gradient(y, x), tape.gradient(y, x)

    check(body)


def test_any_read_watches_trainable_variables():
    def body(tf):
        a = tf.Variable(1.0)
        b = tf.Variable(1.0)
        with tf.GradientTape() as t:
            _ = a.numpy()
            _ = b.read_value()
        return [v.name for v in t.watched_variables()], len(t.watched_variables())

    check(body)


def test_variable_created_inside_block():
    def body(tf):
        with tf.GradientTape() as t:
            v = tf.Variable(2.0)
            y = v * v
        return t.gradient(y, v), len(t.watched_variables())

    check(body)


def test_guide_trainable_false_and_tensor():
    def body(tf):
        x0 = tf.Variable(3.0, name="x0")
        x1 = tf.Variable(3.0, name="x1", trainable=False)
        x2 = tf.Variable(2.0, name="x2") + 1.0
        x3 = tf.constant(3.0, name="x3")
        with tf.GradientTape() as tape:
            y = (x0**2) + (x1**2) + (x2**2)
        grad = tape.gradient(y, [x0, x1, x2, x3])
        return grad, [v.name for v in tape.watched_variables()]

    check(body)


def test_explicit_watch_of_non_trainable_variable():
    def body(tf):
        v = tf.Variable(3.0, trainable=False)
        with tf.GradientTape() as t:
            t.watch(v)
            y = v * v
        return t.gradient(y, v), [w.name for w in t.watched_variables()]

    check(body)


def test_integer_variables_are_watched_without_gradient():
    def body(tf):
        v = tf.Variable(3)
        with tf.GradientTape() as t:
            y = v * v
        return t.gradient(y, v), len(t.watched_variables()), y

    check(body)


def test_watch_nest_returns_same_nest():
    def body(tf):
        a, b, c = tf.constant(1.0), tf.constant(2.0), tf.constant(3.0)
        with tf.GradientTape() as t:
            t.watch({"a": a, "bc": (b, [c])})
            y = a * b * c
        return t.gradient(y, {"a": a, "bc": (b, [c])})

    check(body)


@pytest.mark.parametrize("bad", [np.array([1.0]), 1.0, [1.0], None])
def test_watch_non_tensor_raises(bad):
    def body(tf):
        with tf.GradientTape() as t:
            t.watch(bad)

    check_raises(body, messages=True)


def test_watch_after_exit_is_ignored():
    def body(tf):
        x = tf.constant(2.0)
        with tf.GradientTape() as t:
            pass
        t.watch(x)
        return t.gradient(x * x, x)

    check(body)


def test_watch_accessed_variables_false():
    def body(tf):
        x0 = tf.Variable(0.0)
        x1 = tf.Variable(10.0)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x1)
            ys = tf.reduce_sum(tf.math.sin(x0) + tf.math.exp(x1 * 0.01))
        return tape.gradient(ys, {"x0": x0, "x1": x1}), len(tape.watched_variables())

    check(body)


def test_inner_tape_flag_does_not_affect_outer():
    def body(tf):
        v = tf.Variable(1.0)
        with tf.GradientTape() as outer:
            with tf.GradientTape(watch_accessed_variables=False) as inner:
                y = v * 2.0
            inner_grad = inner.gradient(y, v)
        return outer.gradient(y, v), inner_grad

    check(body)


def test_watched_variables_order_dedup_and_reset():
    def body(tf):
        a, b, c = tf.Variable(1.0, name="a"), tf.Variable(1.0, name="b"), tf.Variable(1.0, name="c")
        before = tf.GradientTape().watched_variables()
        with tf.GradientTape(persistent=True) as t:
            _ = c * b * a * c + tf.constant(1.0)
            with t.stop_recording():
                _ = tf.Variable(5.0, name="hidden") * 2.0
            names = [v.name for v in t.watched_variables()]
            t.reset()
            after_reset = t.watched_variables()
        return before, names, after_reset, type(t.watched_variables()).__name__

    check(body)


def test_watched_variables_after_one_shot_gradient():
    def body(tf):
        a = tf.Variable(1.0)
        with tf.GradientTape() as t:
            y = a * a
        t.gradient(y, a)
        return len(t.watched_variables())

    check(body)


def test_watching_is_tape_local():
    def body(tf):
        x1 = tf.constant(3.0)
        x2 = tf.constant(2.0)
        with tf.GradientTape() as tape1:
            with tf.GradientTape() as tape2:
                tape1.watch(x1)
                tape2.watch([x1, x2])
                y = x1**3
                z = x2**2
                dy, dz = tape2.gradient([y, z], [x1, x2])
        d2y, d2z = tape1.gradient([dy, dz], [x1, x2])
        return dy, dz, d2y, d2z

    check(body)


def test_namedtuple_sources_keep_type():
    Point = collections.namedtuple("Point", ["x", "y"])

    def body(tf):
        p = Point(tf.Variable(1.0), tf.Variable(2.0))
        with tf.GradientTape() as t:
            z = p.x * p.y
        return t.gradient(z, p)

    result = check(body)
    assert type(result).__name__ == "Point"
