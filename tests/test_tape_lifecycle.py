"""Tape lifecycle, state and timing (tf_tape_semantics.md sections 5-6), against real TensorFlow."""

import numpy as np

from oracle import check, check_raises


def test_one_shot_tape_second_call_raises():
    def body(tf):
        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        t.gradient(y, x)
        return t.gradient(y, x)

    check_raises(body, messages=True)


def test_one_shot_after_jacobian_and_batch_jacobian_message():
    def after_jacobian(tf):
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        t.jacobian(y, x)
        return t.gradient(y, x)

    def batch(tf):
        x = tf.constant([[1.0, 2.0]])
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        t.gradient(y, x)
        return t.batch_jacobian(y, x)

    check_raises(after_jacobian, messages=True)
    check_raises(batch, messages=True)


def test_never_entered_gradient_raises():
    def body(tf):
        return tf.GradientTape().gradient(tf.constant(1.0), tf.constant(1.0))

    check_raises(body, messages=True)


def test_persistent_tape_guide():
    def body(tf):
        x = tf.constant([1.0, 3.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        first = (tape.gradient(z, x), tape.gradient(y, x))
        second = (tape.gradient(z, x), tape.gradient(y, x))
        del tape
        return first, second

    check(body)


def test_gradient_inside_block_of_one_shot_tape():
    def body(tf):
        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * 2
            g = t.gradient(y, x)
            z = x * 3
        again = None
        try:
            t.gradient(z, x)
        except RuntimeError as exc:
            again = str(exc)
        return g, again

    check(body)


def test_gradient_inside_block_persistent_records_itself():
    def body(tf):
        x = tf.constant(1.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x * x
            g = t.gradient(y, x)
            gg = t.gradient(g, x)
        return g, gg

    check(body)


def test_reenter_active_tape_raises():
    def body(tf):
        t = tf.GradientTape()
        with t:
            with t:
                pass

    check_raises(body, messages=True)


def test_two_with_blocks_continue_recording():
    def body(tf):
        x = tf.constant(1.0)
        g = tf.GradientTape()
        with g:
            g.watch(x)
            y = 2 * x
        with g:
            z = 2 * y
        return g.gradient(z, [x])

    check(body)


def test_exception_in_block_pops_tape():
    def body(tf):
        x = tf.constant(2.0)
        t = tf.GradientTape()
        try:
            with t:
                t.watch(x)
                y = x * x
                raise KeyError("boom")
        except KeyError:
            pass
        z = y * 3  # not recorded: the tape is popped
        return t.gradient(y, x), z

    check(body)


def test_stop_recording_guide_and_outer_tape():
    def body(tf):
        x = tf.constant(2.0)
        y = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([x, y])
            with tf.GradientTape(persistent=True) as t:
                t.watch([x, y])
                with t.stop_recording():
                    y2 = y * y
                    hidden = x * x
                z = x * x + y2
                x2 = x * 2.0
            plain = t.gradient(z, {"x": x, "y": y})
        return plain, t.gradient(hidden, x), outer.gradient(hidden, x), t.gradient(x2, x)

    check(body)


def test_stop_recording_hides_variable_reads():
    def body(tf):
        v = tf.Variable(1.0)
        with tf.GradientTape() as t:
            with t.stop_recording():
                y = v * 2
        return t.gradient(y, v), t.watched_variables()

    check(body)


def test_gradient_inside_stop_recording_is_not_recorded():
    def body(tf):
        x = tf.constant(1.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x * x
            with t.stop_recording():
                g = t.gradient(y, x)
        return g, t.gradient(g, x)

    check(body)


def test_stop_recording_misuse():
    def never_entered(tf):
        with tf.GradientTape().stop_recording():
            pass

    def exited(tf):
        t = tf.GradientTape()
        with t:
            pass
        with t.stop_recording():
            pass

    def nested(tf):
        with tf.GradientTape() as t:
            with t.stop_recording():
                with t.stop_recording():
                    pass

    check_raises(never_entered, messages=True)
    check_raises(exited, messages=True)
    check_raises(nested, messages=True)


def test_reset():
    def body(tf):
        x = tf.constant(2.0)
        y = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, y])
            before = x * y
            t.reset()
            t.watch(x)
            after = x * x
            z = after + y
        return t.gradient(z, {"x": x, "y": y}), t.gradient(before, x), t.gradient(after, x)

    check(body)


def test_reset_outside_block_raises():
    def never(tf):
        tf.GradientTape().reset()

    def exited(tf):
        t = tf.GradientTape()
        with t:
            pass
        t.reset()

    def inside_stop(tf):
        with tf.GradientTape() as t:
            with t.stop_recording():
                t.reset()

    def after_gradient(tf):
        x = tf.constant(1.0)
        with tf.GradientTape() as t:
            t.watch(x)
            t.gradient(x * x, x)
            t.reset()

    for body in (never, exited, inside_stop, after_gradient):
        check_raises(body, messages=True)


def test_tensor_computed_before_tape_is_constant():
    def body(tf):
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(x)
            y = x * x
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            z = 2 * y
        with tf.GradientTape() as t2:
            t2.watch(x)
            t2.watch(y)
            z2 = 2 * y
        return t.gradient(z, x), t2.gradient(z2, [x, y])

    check(body)


def test_ops_after_exit_are_not_recorded():
    def body(tf):
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x
        z = y * 2
        return t.gradient(z, x), t.gradient(z, y), t.gradient(y, x)

    check(body)


def test_slice_outside_tape_is_fresh():
    def body(tf):
        v = tf.Variable([1.0, 2.0])
        first = v[0]
        with tf.GradientTape() as t:
            t.watch(first)
            y = v[0] * v[1]
        return t.gradient(y, [first, v])

    check(body)


def test_state_stops_gradients():
    def body(tf):
        x0 = tf.Variable(3.0)
        x1 = tf.Variable(0.0)
        with tf.GradientTape() as tape:
            x1.assign_add(x0)
            y = x1**2
        first = tape.gradient(y, (x0, x1))
        x = tf.constant(1.0)
        v = tf.Variable(0.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            v.assign(2 * x)
            y = v**2
        return first, tape.gradient(y, [x, v])

    check(body)


def test_each_read_sees_its_moment():
    def body(tf):
        v = tf.Variable(1.0)
        with tf.GradientTape(persistent=True) as t:
            a = v * v
            v.assign(5.0)
            b = v * v
            c = v.assign(2.0) * 1.0
            r = v.read_value()
        return t.gradient(a, v), t.gradient(b, v), t.gradient(a + b, v), t.gradient(c, v), t.gradient(r, v)

    check(body)


def test_replacing_variable_by_tensor_disconnects():
    def body(tf):
        x = tf.Variable(2.0)
        out = []
        for _ in range(2):
            with tf.GradientTape() as tape:
                y = x + 1
            out.append((isinstance(x, tf.Variable), tape.gradient(y, x)))
            x = x + 1
        return out

    check(body)


def test_numpy_step_disconnects():
    def body(tf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as t:
            x2 = x * 2
            y = tf.constant(np.mean(x2.numpy()))
        return t.gradient(y, x)

    check(body)


def test_python_control_flow_records_only_what_ran():
    def body(tf):
        x = tf.constant(1.0)
        v0, v1 = tf.Variable(2.0), tf.Variable(3.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            result = v0 if x > 0 else v1**2
            picked = max([tf.Variable(2.0), tf.Variable(3.0), tf.Variable(5.0)], key=lambda v: float(v))
        return t.gradient(result, [v0, v1, x]), t.gradient(picked, picked)

    check(body)


def test_persistent_tape_answers_each_request_as_tf():
    # a persistent tape gives its first answer to a repeated request; requests of the same structure on other
    # values, with output_gradients, or for other targets are their own
    def body(tf):
        x = tf.Variable([0.3, -1.2, 2.0])
        z = tf.Variable([1.5, 0.5, -0.25])
        with tf.GradientTape(persistent=True) as tape:
            y1 = tf.reduce_sum(tf.tanh(x) * 3.0)
            y2 = tf.reduce_sum(tf.tanh(z) * 3.0)
            y3 = tf.reduce_sum(tf.tanh(x) * 3.0)
        answers = [tape.gradient(y, [x, z]) for y in (y1, y2, y3, y1)]
        seeded = tape.gradient(y1, x, output_gradients=tf.constant(2.0))
        x.assign([9.0, 9.0, 9.0])  # the tape differentiates what it recorded
        return answers, seeded, tape.gradient(y1, [x, z]), tape.gradient([y1, y2], [x, z])

    check(body)
