"""Views of a tape: summary, as_jaxpr, as_stablehlo, to_dot, and compile_stats' program list.

The gradient the views describe is checked against real TF first; the views
are then checked to describe exactly the program `gradient` ran.
"""

import shutil

import jax
import jax.extend as jex
import numpy as np
import pytest

import tapeshim
from oracle import check


def _program(tf, tape):
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    b = tf.Variable([0.5, -0.5], name="b")
    x = tf.constant([[1.0, -1.0]])
    with tape:
        h = tf.tanh(x @ w + b)
        cut = tf.round(h * 2.0)  # no gradient: cuts a path
        loss = tf.reduce_sum(h * h) + tf.reduce_sum(cut)
    return loss, [w, b]


@pytest.fixture(scope="module")
def used_tape():
    """A one-shot tape after `gradient`, with its target and sources (and the gradient, checked against TF)."""
    kept = {}

    def body(tf):
        tape = tf.GradientTape()
        loss, sources = _program(tf, tape)
        kept[tf.__name__] = tape, loss, sources
        return tape.gradient(loss, sources)

    # With the debugging switch on, a one-shot tape keeps its graph for the views after `gradient`.
    tapeshim.experimental.explain_none_gradients(True)
    try:
        grads = check(body)
    finally:
        tapeshim.experimental.explain_none_gradients(False)
    tape, loss, sources = kept["tapeshim"]
    return tape, loss, sources, grads


def test_summary_lists_ops_shapes_sources_and_cuts(used_tape):
    tape, loss, sources, _ = used_tape
    lines = []
    text = tape.summary(loss, sources, print_fn=lines.append)
    assert lines == [text]
    assert "s0 = tf.Variable 'w:0' (float32[2,2])" in text and "s1 = tf.Variable 'b:0' (float32[2])" in text
    for op in ("MatMul", "AddV2", "Tanh", "Round", "Sum"):
        assert op in text
    assert "CUT (not recorded; drops s0, s1)" in text
    assert "<- target" in text
    assert "float32[1,2]" in text
    assert "[s0, s1]" in text  # the tanh depends on both sources
    assert tape.summary(print_fn=None) == text  # the last gradient call by default


def test_as_jaxpr_is_the_gradient_program(used_tape):
    tape, loss, sources, grads = used_tape
    closed = tape.as_jaxpr(loss, sources)
    assert "tanh" in str(closed) and "round" in str(closed)
    from tapeshim._src import tape_views

    with tape_views._prepared(tape, loss, sources) as (_, request):
        _, (leaf_values, seeds) = tape_views.gradient_program(request)
    outputs = jex.core.jaxpr_as_fun(closed)(*jax.tree_util.tree_leaves((leaf_values, seeds)))
    # `grads` came from the program's first call, computed on the host (interpret.py): XLA's values to rounding
    np.testing.assert_allclose(np.asarray(outputs[0]), loss.numpy(), rtol=2e-5)
    for got, want in zip(outputs[1:], grads):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=2e-5)


def test_as_stablehlo(used_tape):
    tape, loss, sources, _ = used_tape
    text = tape.as_stablehlo(loss, sources)
    assert "func.func public @main" in text and "stablehlo.tanh" in text


def test_to_dot_marks_sources_cuts_and_target(used_tape):
    tape, loss, sources, _ = used_tape
    dot = tape.to_dot(loss, sources)
    assert isinstance(dot, str) and dot.startswith("digraph tape {") and dot.rstrip().endswith("}")
    assert "source s0: read of tf.Variable 'w:0' (watched)" in dot
    assert "Round\\n(not recorded)" in dot and "color=red" in dot and 'label="cut"' in dot
    assert "target" in dot and "peripheries=2" in dot
    if shutil.which("dot"):
        assert "<svg" in dot.svg()
    else:
        with pytest.raises(ImportError, match="Graphviz"):
            dot.svg()


def test_views_on_a_persistent_tape_before_gradient_and_unwatched_source():
    c = tapeshim.constant(2.0)
    x = tapeshim.constant(3.0)
    with tapeshim.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x + c
    text = tape.summary(y, [x, c], print_fn=None)
    assert "watched tensor" in text and "constant" in text
    dot = tape.to_dot(y, [x, c])
    assert 'fillcolor="#f0d0d0"' in dot  # the unwatched source is drawn dashed red
    assert "mul" in str(tape.as_jaxpr(y, [x, c]))
    assert tape.gradient(y, x).numpy() == 6.0


def test_compile_stats_lists_programs():
    tapeshim.experimental.reset_compile_stats()
    v = tapeshim.Variable([1.0, 2.0])
    for _ in range(4):
        with tapeshim.GradientTape() as tape:
            loss = tapeshim.reduce_sum(tapeshim.sin(v) * v)
        tape.gradient(loss, v)
    stats = tapeshim.experimental.compile_stats(programs=True)
    assert stats["program_cache_hits"] >= 1  # later steps reuse the program
    programs = stats["programs"]
    assert programs == tapeshim.experimental.cached_programs()
    mine = [p for p in programs if p["op_counts"] == {"Sin": 1, "Mul": 1, "Sum": 1}]
    assert mine and mine[0]["kind"] == "gradient" and mine[0]["recorded_ops"] == 3
    assert "float32[2]" in mine[0]["inputs"]
    # compiled on the first or second sighting (the tier policy), then reused by every later step
    assert mine[0]["hits"] >= 2 and sum(p["hits"] for p in programs) <= stats["program_cache_hits"]
    assert "programs" not in tapeshim.experimental.compile_stats()
