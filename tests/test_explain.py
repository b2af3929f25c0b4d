"""`tape.explain`: every reason a gradient is None, each produced by a program that real TF answers with None.

Each program runs with TensorFlow and with tapeshim; the gradients (None
pattern, values) must match, and tapeshim's explanation must give the
expected reason (and, where the issue asks, the op and the user's line).
"""

import logging
from pathlib import Path

import pytest

import tapeshim
from oracle import check

HERE = Path(__file__).read_text().splitlines()


def line_of(marker):
    """The line number of the (only) line of this file ending with `# <marker>`."""
    found = [i + 1 for i, text in enumerate(HERE) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, marker
    return found[0]


def explained(program, persistent=False):
    """Runs `program(tf, tape)` in both; returns (tapeshim's explanation, TF's gradients)."""
    kept = {}

    def body(tf):
        tape = tf.GradientTape(persistent=persistent)
        target, sources = program(tf, tape)
        grads = tape.gradient(target, sources)
        kept[tf.__name__] = (tape, target, sources, grads)
        return grads

    check(body)
    tape, target, sources, grads = kept["tapeshim"]
    explanation = tape.explain(target, sources)
    tf_grads = tapeshim.nest.flatten(kept["tensorflow"][3]) if kept["tensorflow"][3] is not None else [None]
    flat = tapeshim.nest.flatten(grads) if grads is not None else [None]
    assert [g is None for g in flat] == [item.is_none for item in explanation]
    assert len(tf_grads) == len(flat)
    return explanation


def reasons_of(program, **kwargs):
    return explained(program, **kwargs).reasons


# -- the seed example's four reasons (examples/01_first_gradients.py) -------------------------------


def grad_of(make_variable, fn):
    def program(tf, tape):
        x = make_variable(tf)
        with tape:
            y = fn(tf, x)
        return y, x

    return program


def test_seed_integer_variable():
    [item] = explained(grad_of(lambda tf: tf.Variable(3), lambda tf, v: v * v))
    assert item.reason == "integer_dtype"
    assert "int32" in item.message and "cast" in item.fix


def test_seed_trainable_false():
    [item] = explained(grad_of(lambda tf: tf.Variable(3.0, trainable=False), lambda tf, v: v * v))
    assert item.reason == "not_trainable"
    assert "trainable=False" in item.message and "tape.watch" in item.fix


def test_seed_left_through_numpy():
    [item] = explained(grad_of(lambda tf: tf.Variable(3.0), lambda tf, v: tf.constant(v.numpy() ** 2)))  # numpy-exit
    assert item.reason == "left_tape"
    assert ".numpy()" in item.message
    assert item.site.lineno == line_of("numpy-exit") - 1 or item.site.lineno == line_of("numpy-exit")


def test_seed_no_gradient_op_names_op_and_line():
    [item] = explained(grad_of(lambda tf: tf.Variable(3.0), lambda tf, v: tf.round(v)))  # round-line
    assert item.reason == "no_gradient_op"
    assert item.op == "Round" and "tf.round" in item.message
    assert item.site.filename == __file__ and item.site.lineno == line_of("round-line")


# -- the other reasons -------------------------------------------------------------------------------


def test_constant_never_watched():
    def program(tf, tape):
        c = tf.constant(3.0)
        with tape:
            y = c**2
        return y, c

    [item] = explained(program)
    assert item.reason == "not_watched" and "tape.watch" in item.fix
    assert "the target uses it" in item.message


def test_watch_accessed_variables_false():
    def program(tf, tape):
        v = tf.Variable(2.0)
        with tape:
            y = v * v
        return y, v

    kept = {}

    def body(tf):
        tape = tf.GradientTape(watch_accessed_variables=False)
        y, v = program(tf, tape)
        kept[tf.__name__] = tape, y, v
        return tape.gradient(y, v)

    check(body)
    tape, y, v = kept["tapeshim"]
    assert tape.explain(y, v).reasons == ["not_watched"]


def test_float_exit():
    [item] = explained(grad_of(lambda tf: tf.Variable(3.0), lambda tf, v: tf.constant(float(v * 2.0)) * 3.0))
    assert item.reason == "left_tape" and "float()" in item.message


def test_numpy_function_exit():
    import numpy as np

    [item] = explained(grad_of(lambda tf: tf.Variable(3.0), lambda tf, v: tf.constant(np.square(v * 2.0))))
    assert item.reason == "left_tape" and "numpy call" in item.message


@pytest.mark.parametrize(
    "fn, op",
    [
        (lambda tf, v: tf.round(v * 2.0), "Round"),  # a lazy input: the op is an unrecorded node
        (lambda tf, v: tf.cast(tf.argmax(v * 2.0), tf.float32), "ArgMax"),
        (lambda tf, v: tf.cast(v > 1.0, tf.float32), "Greater"),
        (lambda tf, v: tf.cast(tf.cast(v * 2.0, tf.int32), tf.float32), "Cast"),
        (lambda tf, v: tf.floor(v), "Floor"),
    ],
)
def test_no_gradient_ops(fn, op):
    [item] = explained(grad_of(lambda tf: tf.Variable([3.0, 1.0]), fn))
    assert item.reason == "no_gradient_op"
    assert item.op == op
    assert item.site.filename == __file__ and item.site.lineno == fn.__code__.co_firstlineno


def test_stop_gradient():
    fn = lambda tf, v: tf.stop_gradient(v * 2.0) * 3.0  # noqa: E731
    [item] = explained(grad_of(lambda tf: tf.Variable(3.0), fn))
    assert item.reason == "stop_gradient" and "tf.stop_gradient" in item.message
    assert item.site.lineno == fn.__code__.co_firstlineno


def test_stop_recording_concrete():
    def program(tf, tape):
        x = tf.constant(3.0)
        with tape:
            tape.watch(x)
            with tape.stop_recording():  # pause-a
                y = x * x
            z = y * 2.0
        return z, x

    [item] = explained(program)
    assert item.reason == "stop_recording"
    assert item.site.lineno == line_of("pause-a")


def test_stop_recording_lazy():
    def program(tf, tape):
        x = tf.constant(3.0)
        with tape:
            tape.watch(x)
            a = x * 2.0
            with tape.stop_recording():  # pause-b
                b = a * a
            z = b + 1.0
        return z, x

    [item] = explained(program)
    assert item.reason == "stop_recording"
    assert item.site.lineno == line_of("pause-b")


def test_computed_before_the_tape():
    def program(tf, tape):
        x = tf.constant(3.0)
        y = x * x
        with tape:
            tape.watch(x)
            z = y * 2.0
        return z, x

    [item] = explained(program)
    assert item.reason == "before_tape"


def test_variable_read_before_the_tape():
    def program(tf, tape):
        v = tf.Variable(3.0)
        y = v * v
        with tape:
            z = y * 2.0
        return z, v

    [item] = explained(program)
    assert item.reason == "before_tape"


def test_recreated_variable():
    def program(tf, tape):
        w = tf.Variable(1.0, name="w")

        def model(x):
            w = tf.Variable(1.0, name="w")  # a new variable on every call
            return w * x

        with tape:
            y = model(tf.constant(2.0))
        return y, w

    [item] = explained(program)
    assert item.reason == "other_variable" and "'w:0'" in item.message


def test_unconnected():
    def program(tf, tape):
        x = tf.constant(3.0)
        with tape:
            tape.watch(x)
            z = tf.constant(5.0) * 2.0
        return z, x

    [item] = explained(program)
    assert item.reason == "unconnected" and "UnconnectedGradients.ZERO" in item.fix


def test_variable_never_read():
    def program(tf, tape):
        v = tf.Variable(3.0)
        with tape:
            z = tf.constant(5.0) * 2.0
        return z, v

    [item] = explained(program)
    assert item.reason == "not_read"


def test_structurally_zero_and_connected():
    def program(tf, tape):
        a = tf.Variable(3.0)
        b = tf.Variable(2.0)
        with tape:
            y = tf.sign(a * 2.0) + b * b  # sign-line
        return y, [a, b]

    explanation = explained(program, persistent=True)  # a one-shot tape releases a graph without Nones
    assert explanation.reasons == ["structurally_zero", "connected"]
    assert "Sign" in explanation[0].message and explanation[0].op == "Sign"
    assert explanation[0].site.lineno == line_of("sign-line")


def test_identity_source():
    def program(tf, tape):
        x = tf.constant(3.0)
        with tape:
            tape.watch(x)
        return x, x

    assert reasons_of(program) == ["identity"]


def test_several_sources_in_a_structure_persistent_and_repeated():
    def program(tf, tape):
        a = tf.Variable(1.0)
        b = tf.Variable(2, dtype=tf.int32)
        c = tf.constant(1.0)
        with tape:
            y = a * 3.0 + tf.round(a)
        return y, {"a": a, "b": b, "c": c}

    kept = {}

    def body(tf):
        tape = tf.GradientTape(persistent=True)
        y, sources = program(tf, tape)
        first = tape.gradient(y, sources)
        kept[tf.__name__] = tape, y, sources
        return first, tape.gradient(y, sources)

    check(body)
    tape, y, sources = kept["tapeshim"]
    explanation = tape.explain(y, sources)
    assert explanation.reasons == ["connected", "integer_dtype", "not_watched"]  # dict order: a, b, c
    assert explanation.structured()["b"].reason == "integer_dtype"
    assert tape.explain().reasons == explanation.reasons  # the last gradient call
    assert "integer" in str(explanation)


def test_one_shot_tape_explains_after_gradient_and_before():
    x = tapeshim.constant(3.0)
    tape = tapeshim.GradientTape()
    with tape:
        tape.watch(x)
        y = tapeshim.round(x * 2.0)
    assert tape.explain(y, x).reasons == ["no_gradient_op"]  # before gradient: the tape is not used up
    assert tape.gradient(y, x) is None
    assert tape.explain(y, x).reasons == ["no_gradient_op"]
    assert tape.explain().reasons == ["no_gradient_op"]


def test_explain_errors():
    tape = tapeshim.GradientTape()
    with tape:
        pass
    with pytest.raises(ValueError, match="has not computed a gradient"):
        tape.explain()
    with pytest.raises(ValueError, match="sources"):
        tape.explain(tapeshim.constant(1.0))
    with pytest.raises(TypeError, match="Tensors or Variables"):
        tape.explain(tapeshim.constant(1.0), "x")


def test_explain_none_gradients_logs_with_lines(caplog):
    tapeshim.experimental.explain_none_gradients(True)
    try:
        v = tapeshim.Variable(2.0)
        with tapeshim.GradientTape() as tape:
            a = v * 3.0
            y = tapeshim.round(a)  # logged-round
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            assert tape.gradient(y, v) is None
        text = caplog.text
        assert "returned None" in text and "Round" in text
        assert f"{__file__}:{line_of('logged-round')}" in text
        explanation = tape.explain()
        assert explanation[0].site.lineno == line_of("logged-round")
    finally:
        tapeshim.experimental.explain_none_gradients(False)


def test_no_log_by_default(caplog):
    c = tapeshim.constant(1.0)
    with tapeshim.GradientTape() as tape:
        y = c * 2.0
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        assert tape.gradient(y, c) is None
    assert "returned None" not in caplog.text


def test_one_shot_tape_without_nones_releases_its_graph_and_still_answers():
    import gc
    import weakref

    v = tapeshim.Variable([1.0, 2.0])
    with tapeshim.GradientTape() as tape:
        hidden = v * 3.0
        y = tapeshim.reduce_sum(tapeshim.sign(hidden) + hidden * hidden)
    ref = weakref.ref(hidden)
    del hidden
    assert tape.gradient(y, v) is not None
    gc.collect()
    assert ref() is None  # explain keeps nothing alive after a gradient without Nones
    assert tape.explain(y, v).reasons == ["connected"]
