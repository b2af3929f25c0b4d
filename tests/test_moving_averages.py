"""`tf.train.ExponentialMovingAverage`: shadow variables, the update formula, names and functions, against TF."""

import pytest

from oracle import check, check_raises


def _run(tf, decay=0.9, values=(3.0, 6.0, -1.0), dtype="float32", **kw):
    """Applies an average to a variable that takes each of `values` in turn; returns each step's average."""
    var = tf.Variable(1.0, dtype=getattr(tf, dtype))
    ema = tf.train.ExponentialMovingAverage(decay, **kw)
    ema.apply([var])
    seen = [tf.identity(ema.average(var))]
    for value in values:
        var.assign(value)
        ema.apply([var])
        seen.append(tf.identity(ema.average(var)))
    return seen


CASES = {
    "float32": lambda tf: _run(tf),
    "float64": lambda tf: _run(tf, dtype="float64"),
    "float16": lambda tf: _run(tf, dtype="float16"),
    "decay_tensor": lambda tf: _run(tf, decay=tf.constant(0.75)),
    "num_updates_int": lambda tf: _run(tf, decay=0.999, num_updates=5),
    "num_updates_variable": lambda tf: _run(tf, decay=0.99, num_updates=tf.Variable(0, dtype=tf.int64)),
    "num_updates_large": lambda tf: _run(tf, decay=0.5, num_updates=tf.constant(1000)),
    "zero_debias": lambda tf: _run(tf, decay=0.5, zero_debias=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_moving_average_values(name):
    check(CASES[name])


def test_num_updates_variable_incremented():
    def body(tf):
        step = tf.Variable(0, dtype=tf.int64)
        var = tf.Variable([1.0, 2.0])
        ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
        out = []
        for _ in range(4):
            var.assign_add([1.0, -1.0])
            step.assign_add(1)
            ema.apply([var])
            out.append(tf.identity(ema.average(var)))
        return out

    check(body)


def test_names_and_shadow_variables():
    def body(tf):
        # TF numbers a second shadow of the same name in one process (`v/ExponentialMovingAverage_1`): the
        # variables' names are used by this test only.
        v, w = tf.Variable([1.0, 2.0], name="ema_names_v"), tf.Variable(3.0, name="ema_names_w")
        ema = tf.train.ExponentialMovingAverage(0.9)
        first = ema.apply([v, w])
        named = tf.train.ExponentialMovingAverage(0.5, name="foo")
        avg = ema.average(v)
        return (
            first,
            ema.name,
            named.name,
            ema.average_name(v),
            ema.average_name(w),
            named.average_name(w),
            avg.name,
            avg.trainable,
            avg.dtype,
            tf.identity(avg),
            ema.average(tf.Variable(1.0)),
            ema.apply(),
        )

    check(body)


def test_several_variables_and_repeats():
    def body(tf):
        a, b = tf.Variable(1.0), tf.Variable([[2.0, 3.0]], dtype=tf.float64)
        ema = tf.train.ExponentialMovingAverage(0.8)
        ema.apply((a, b))
        ema.apply([a, a])
        a.assign(5.0)
        b.assign([[0.0, 1.0]])
        ema.apply([a])
        ema.apply([a, b])
        return tf.identity(ema.average(a)), tf.identity(ema.average(b))

    check(body)


def test_in_custom_training_loop():
    def body(tf):
        w = tf.Variable([0.5, -0.5])
        ema = tf.train.ExponentialMovingAverage(0.9)
        opt_lr = 0.1
        out = []
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum((w - tf.constant([1.0, 2.0])) ** 2)
            w.assign_sub(opt_lr * tape.gradient(loss, w))
            ema.apply([w])
            out.append(tf.identity(ema.average(w)))
        return out

    check(body)


def test_in_function():
    def body(tf):
        z = tf.Variable(1.0, name="ema_in_function_z")
        ema = tf.train.ExponentialMovingAverage(0.9)

        @tf.function
        def step():
            z.assign_add(1.0)
            ema.apply([z])
            return ema.average(z).read_value()

        return [step(), step(), step(), tf.identity(ema.average(z)), ema.average(z).name]

    check(body)


def test_in_function_with_num_updates():
    def body(tf):
        w = tf.Variable([1.0, 2.0])
        count = tf.Variable(0, dtype=tf.int64)
        ema = tf.train.ExponentialMovingAverage(0.99, num_updates=count)
        ema.apply([w])

        @tf.function
        def step(x):
            w.assign_add(x)
            count.assign_add(1)
            ema.apply([w])

        for _ in range(3):
            step(tf.constant([1.0, -2.0]))
        return tf.identity(ema.average(w)), count

    check(body)


ERRORS = {
    "int_variable": lambda tf: tf.train.ExponentialMovingAverage(0.9).apply([tf.Variable(1)]),
    "tensor": lambda tf: tf.train.ExponentialMovingAverage(0.9).apply([tf.constant(1.0)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])
