"""A gradient program's first calls on the host without its JAX trace (`tapeshim/_src/host_gradient.py`).

On the CPU a gradient request's program used to be traced (`jax.vjp` of the replayed forward, 0.3-0.4 ms per
operation) on its first call, whose values the host interpreter then computed from that trace. Now the first
calls are computed from the forward's jaxpr with the host's VJP rules; the program is traced when its compile is
submitted. Values are TF's either way; a program the host's VJP rules do not cover is traced as before.
"""

import jax
import numpy as np
import pytest

import tapeshim as tf
from oracle import backend_compiles, check, real_tf
from tapeshim._src import (
    background_compile,
    compile_tiers,
    host_gradient,
    host_vjp,
    host_vjp_traced,
    interpret,
    interpret_plan,
    runtime_checks,
)

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

_traced: list[str] = []


def _log_trace(event: str, duration_secs: float, **kwargs: object) -> None:
    if event == "/jax/core/compile/jaxpr_trace_duration":
        _traced.append(str(kwargs.get("fun_name", "")))


jax.monitoring.register_event_duration_secs_listener(_log_trace)

rng = np.random.default_rng(7)
X = rng.normal(size=(12, 6)).astype(np.float32)
W1 = (rng.normal(size=(6, 9)) * 0.4).astype(np.float32)
W2 = (rng.normal(size=(9, 4)) * 0.4).astype(np.float32)
LABELS = rng.integers(0, 4, size=12).astype(np.int32)


def _mlp_steps(steps, rows, data_op=None, weight_op=None):
    """A small MLP's training steps on the first `rows` examples (each test its own structure: programs are
    cached by it); `data_op` runs on the data under the tape (watched: recorded, never differentiated)."""

    def body(tf):
        w1, w2 = tf.Variable(W1), tf.Variable(W2)
        x, labels = tf.constant(X[:rows]), tf.constant(LABELS[:rows])
        out = []
        for _ in range(steps):
            with tf.GradientTape() as tape:
                tape.watch(x)
                inputs = x if data_op is None else data_op(tf, x)
                weights = w1 if weight_op is None else weight_op(tf, w1)
                logits = tf.nn.relu(inputs @ weights) @ w2
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            g1, g2 = tape.gradient(loss, [w1, w2])
            w1.assign_sub(0.1 * g1)
            w2.assign_sub(0.1 * g2)
            out.append((loss, g1, g2))
        return out

    return body


def test_a_first_training_step_is_computed_without_its_programs_trace():
    before = host_gradient.stats["untraced_gradient_programs"]
    check(_mlp_steps(3, 12))
    assert host_gradient.stats["untraced_gradient_programs"] == before + 1  # (the second run's structure is known)
    _traced.clear()
    _mlp_steps(3, 12, data_op=lambda tf, x: x + 1.0)(tf)  # a new structure's first calls trace no program
    assert "program" not in _traced


def test_the_program_is_traced_and_compiled_when_its_calls_paid_for_it():
    body = _mlp_steps(4, 10, data_op=lambda tf, x: x * 0.5)
    _traced.clear()
    with compile_tiers.compiles_on_repeat():  # (its second call submits the compile, tracing the program)
        first = body(tf)
    background_compile.wait()
    assert _traced.count("program") == 1
    again = body(tf)  # compiled: XLA's values, TF's to rounding
    for (loss, g1, g2), (loss2, h1, h2) in zip(first, again):
        np.testing.assert_allclose(loss2.numpy(), loss.numpy(), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(h1.numpy(), g1.numpy(), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(h2.numpy(), g2.numpy(), rtol=2e-5, atol=1e-6)
    check(body)


def test_ops_without_host_derivatives_on_the_data_only_need_their_forward():
    # cosh has no NumPy VJP rule: on the data (no cotangent reaches it) none is needed; on the weights its
    # equation's VJP is traced from JAX's (`host_vjp_traced`), and the program qualifies either way
    before = host_gradient.stats["untraced_gradient_programs"]
    traced = host_vjp_traced.stats["traced_vjp_rules"]
    check(_mlp_steps(2, 9, data_op=lambda tf, x: tf.cosh(x) - 1.0))
    assert host_gradient.stats["untraced_gradient_programs"] == before + 1
    assert host_vjp_traced.stats["traced_vjp_rules"] == traced
    check(_mlp_steps(2, 8, weight_op=lambda tf, w: tf.cosh(w) - 1.0))
    assert host_gradient.stats["untraced_gradient_programs"] == before + 2
    assert host_vjp_traced.stats["traced_vjp_rules"] == traced + 1


def test_convolutions_derivatives_on_the_host_give_tfs_gradients():
    images = rng.normal(size=(3, 9, 9, 2)).astype(np.float32)
    kernel = (rng.normal(size=(3, 3, 2, 4)) * 0.5).astype(np.float32)
    depthwise = (rng.normal(size=(2, 2, 2, 3)) * 0.5).astype(np.float32)
    signal = rng.normal(size=(2, 11, 3)).astype(np.float32)
    filters = (rng.normal(size=(4, 3, 2)) * 0.5).astype(np.float32)

    def body(tf):
        k, d, f = tf.Variable(kernel), tf.Variable(depthwise), tf.Variable(filters)
        x = tf.constant(images)
        out = []
        for _ in range(2):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                strided = tf.nn.conv2d(x, k, 2, "SAME")
                valid = tf.nn.conv2d(x, k, 1, "VALID")
                grouped = tf.nn.depthwise_conv2d(x, d, [1, 1, 1, 1], "SAME")
                loss = tf.reduce_sum(tf.nn.relu(strided) ** 2) + tf.reduce_sum(valid) * 0.5
                loss += tf.reduce_sum(tf.tanh(grouped))
                loss += tf.reduce_sum(tf.nn.conv1d(tf.constant(signal), f, 2, "SAME") ** 2)
            out.append(tape.gradient(loss, [k, d, f, x]))
            del tape
        return out

    before = host_gradient.stats["untraced_gradient_programs"]
    check(body)
    assert host_gradient.stats["untraced_gradient_programs"] == before + 1


def test_convolutions_at_new_batch_sizes_bind_their_traced_derivatives_again():
    # The VJP of a convolution at a new batch size takes the parameters it took at two other sizes: its
    # equations are bound at the new size, not traced from JAX's VJP again, and give TF's gradients. (Each step
    # is a new structure, as a Keras step at a new size is: its program is computed on the host.)
    kernel = (rng.normal(size=(3, 3, 2, 5)) * 0.5).astype(np.float32)
    depthwise = (rng.normal(size=(2, 2, 2, 3)) * 0.5).astype(np.float32)
    images = [rng.normal(size=(n, 7, 8, 2)).astype(np.float32) for n in (13, 17, 19, 23)]

    def body(tf):
        k, d = tf.Variable(kernel), tf.Variable(depthwise)
        out = []
        for step, batch in enumerate(images):
            x = tf.constant(batch)
            with tf.GradientTape() as tape:
                tape.watch(x)
                strided = tf.nn.conv2d(x, k, 2, "SAME")
                grouped = tf.nn.depthwise_conv2d(x, d, [1, 1, 1, 1], "VALID")
                loss = tf.reduce_sum(tf.nn.relu(strided) ** 2) + tf.reduce_sum(tf.tanh(grouped))
                for _ in range(step):
                    loss = loss * 0.5
            out.append(tape.gradient(loss, [k, d, x]))
        return out

    rebound = host_vjp_traced.stats["rebound_vjp_rules"]
    check(body)
    assert host_vjp_traced.stats["rebound_vjp_rules"] >= rebound + 2  # (both convolutions at the last sizes)


def test_convolutions_at_new_lengths_give_tfs_gradients_with_their_derivatives_bound_again():
    # A convolution of strides 1 takes its VJP's parameters at any length (a text model's Conv1D over padded
    # batches of a new length): its equations are bound at the new length. A strided one's padding depends on the
    # length's remainder, and is traced at each length; both give TF's gradients.
    filters = (rng.normal(size=(3, 4, 5)) * 0.5).astype(np.float32)
    depthwise = (rng.normal(size=(3, 1, 4, 2)) * 0.5).astype(np.float32)
    signals = [rng.normal(size=(2, n, 4)).astype(np.float32) for n in (13, 17, 19, 22, 26)]

    def body(tf):
        f, d = tf.Variable(filters), tf.Variable(depthwise)
        out = []
        for step, signal in enumerate(signals):
            x = tf.constant(signal)
            with tf.GradientTape() as tape:
                tape.watch(x)
                same = tf.nn.conv1d(x, f, 1, "SAME")
                valid = tf.nn.conv1d(x, f, 1, "VALID")
                grouped = tf.nn.depthwise_conv2d(x[:, :, None, :], d, [1, 1, 1, 1], "SAME")
                strided = tf.nn.conv1d(x, f, 3, "VALID")
                loss = tf.reduce_sum(tf.tanh(same)) + tf.reduce_sum(valid**2) + tf.reduce_sum(tf.nn.relu(grouped))
                loss += tf.reduce_sum(strided**2) * 0.1
                for _ in range(step):  # (a new structure each step: computed on the host)
                    loss = loss * 0.5
            out.append(tape.gradient(loss, [f, d, x]))
        return out

    check(body)


def test_a_stride_one_convolutions_vjp_rule_is_bound_again_at_a_new_length():
    # (the rules themselves, whichever tier a program's state sends a step to: per op, a VJP kernel's family)
    from jax import lax

    def convolution(length: int, stride: int) -> object:
        closed = jax.make_jaxpr(
            lambda x, w: lax.conv_general_dilated(x, w, (stride,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"))
        )(jax.ShapeDtypeStruct((2, length, 4), np.float32), jax.ShapeDtypeStruct((3, 4, 7), np.float32))
        (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "conv_general_dilated"]
        return eqn

    for stride, rebound in ((1, 3), (3, 0)):  # (two lengths traced, then bound; strided: traced at each)
        before = dict(host_vjp_traced.stats)
        for length in (31, 37, 41, 43, 47):
            assert host_vjp_traced.rule_of(convolution(length, stride), [True, True]) is not None
        assert host_vjp_traced.stats["rebound_vjp_rules"] - before["rebound_vjp_rules"] == rebound
        assert host_vjp_traced.stats["traced_vjp_rules"] - before["traced_vjp_rules"] == 5 - rebound


def test_convolutions_of_other_filter_sizes_trace_their_derivatives_again():
    # Two filter widths give the input's cotangent the same padding total but not the same leading padding
    # (VALID, stride 3): only a new batch size binds an earlier trace's equations again, never another filter.
    filters = [rng.normal(size=(1, width, 1, 1)).astype(np.float32) for width in (4, 4, 3, 3)]
    shapes = [(1, 1, 7, 1), (2, 1, 7, 1), (1, 1, 8, 1), (3, 1, 8, 1)]

    def body(tf):
        out = []
        for step, (kernel, shape) in enumerate(zip(filters, shapes)):
            x = tf.constant(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1)
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(tf.nn.conv2d(x, tf.constant(kernel), 3, "VALID") ** 2)
                for _ in range(step):  # (a new structure each step: computed on the host)
                    loss = loss * 0.5
            out.append(tape.gradient(loss, x))
        return out

    check(body)


def test_seeds_several_targets_unconnected_sources_and_float64():
    a = rng.normal(size=(5, 3))
    b = rng.normal(size=(3,))

    def body(tf):
        x = tf.constant(a)
        v = tf.Variable(b)
        unused = tf.Variable(b)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.tanh(x * v)
            z = tf.reduce_sum(y, axis=1)
            w = tf.exp(-tf.square(v))
        seeds = [tf.ones_like(z) * 2.0, tf.range(3.0, dtype=tf.float64)]
        seeded = tape.gradient([z, w], [x, v, unused], output_gradients=seeds)
        plain = tape.gradient(z, [v, x])
        del tape
        return seeded, plain

    check(body)


def test_a_structure_whose_ops_the_host_cannot_differentiate_is_not_tried_again():
    weights = rng.uniform(0.5, 2.0, size=(3, 4)).astype(np.float32)

    def body(tf, powers):
        w = tf.Variable(weights)
        with tf.GradientTape() as tape:
            y = tf.math.lgamma(w * w + 1.0)
            for _ in range(powers):
                y = y**2
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, w)

    before = host_gradient.stats["untraced_gradient_programs"]
    check(lambda tf: body(tf, 1))  # (no host rule for lgamma: the program's trace serves)
    _traced.clear()
    check(lambda tf: body(tf, 2))  # another structure of the same ops: its forward is not traced for the host
    assert "forward" not in _traced
    assert host_gradient.stats["untraced_gradient_programs"] == before


def test_only_the_live_operands_cotangent_of_a_product_is_computed():
    def fn(x, w, eps):
        return (x @ (w + eps)).sum()

    x, w = X, W1
    closed = jax.make_jaxpr(fn)(x, w, np.zeros_like(w))
    plan = host_vjp.vjp_plan(closed, [True], wanted=[2], kept=[0])
    (product,) = [step for step in plan.steps if step[6] is host_vjp._RULES["dot_general"]]
    assert product[7]["live_operands"] == (False, True)  # (the data's cotangent is not computed)
    grad, value = plan([x, w, np.zeros_like(w), np.float32(1.0)], interpret_plan.Budget())
    weights = real_tf.Variable(w)
    with real_tf.GradientTape() as tape:  # (TF's values: the oracle)
        want_value = real_tf.reduce_sum(real_tf.constant(x) @ weights)
    np.testing.assert_allclose(grad, tape.gradient(want_value, weights).numpy(), rtol=1e-6)
    np.testing.assert_allclose(value, want_value.numpy(), rtol=1e-5)


def test_a_negative_zero_source_keeps_its_sign_as_xla_folds_x_plus_zero():
    # A source's perturbation is added where it occurs (`x + 0`): XLA folds it, keeping -0 (NumPy's -0 + 0 is +0)
    def body(tf):
        x = tf.constant(np.array([-0.0, 2.0, 0.0], np.float32))
        w = tf.Variable(np.array([1.0, 1.0, -1.0], np.float32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = w / x
            loss = tf.reduce_sum(y)
        return [y, x * 1.0] + tape.gradient([loss, x * 1.0], [w, x])

    want, got = body(real_tf), body(tf)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
        np.testing.assert_array_equal(np.signbit(b.numpy()), np.signbit(a.numpy()))


def _hosted_first_program():
    """A `CheckedProgram` of `fn` whose `host_first` gives the host program of its first signature (as a gradient
    program's does), and the traces of `fn` made (by JAX: each signature's trace of the plain program)."""
    traces = []

    def fn(x, y):
        traces.append(x.shape)
        return jax.numpy.tanh(x) * y + 1.0

    def host_first(args):
        return interpret.prepare(jax.jit(lambda x, y: jax.numpy.tanh(x) * y + 1.0).trace(*args))

    fn.host_first = host_first
    return runtime_checks.jit(fn), traces


def test_a_program_served_without_its_trace_compiles_another_signature_on_its_call():
    # The first signature's calls come from `host_first` (nothing traced) until its rental ends; a call of
    # another signature compiles on its own call, and the first signature is traced once its compile is submitted
    program, traces = _hosted_first_program()
    a, b = np.linspace(-1, 1, 6, dtype=np.float32), np.linspace(0, 2, 4, dtype=np.float32)
    want = lambda x, y: (real_tf.tanh(x) * y + 1.0).numpy()  # noqa: E731
    compiles = backend_compiles()
    before, submitted = len(compiles), background_compile.stats["submitted"]
    with compile_tiers.compiles_on_repeat():  # (a rental of one call: its next call submits the compile)
        np.testing.assert_allclose(program(a, a), want(a, a), rtol=1e-6)
        assert traces == [] and len(compiles) == before
        np.testing.assert_allclose(program(b, b), want(b, b), rtol=1e-6)  # another signature: traced, compiled
        assert traces == [(4,)] and len(compiles) == before + 1
        assert background_compile.stats["submitted"] == submitted  # (not the first signature's compile)
        for _ in range(3):
            np.testing.assert_allclose(program(a, a), want(a, a), rtol=1e-6)
    assert background_compile.stats["submitted"] == submitted + 1
    background_compile.wait()
    np.testing.assert_allclose(program(a, a), want(a, a), rtol=1e-6)
    assert traces == [(4,), (6,)] and len(compiles) == before + 2


def test_a_program_served_without_its_trace_compiles_on_its_call_without_the_background_thread():
    program, traces = _hosted_first_program()
    a = np.linspace(-1, 1, 5, dtype=np.float32)
    background_compile.set_enabled(False)
    try:
        with compile_tiers.compiles_on_repeat():
            for _ in range(3):
                np.testing.assert_allclose(program(a, a), (real_tf.tanh(a) * a + 1.0).numpy(), rtol=1e-6)
    finally:
        background_compile.set_enabled(True)
    assert traces == [(5,)]


def test_a_traced_rule_computes_only_the_live_operands_cotangent():
    images = rng.normal(size=(2, 8, 8, 3)).astype(np.float32)
    kernel = rng.normal(size=(3, 3, 3, 4)).astype(np.float32)

    def conv(x, k):
        return jax.lax.conv_general_dilated(x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    (eqn,) = jax.make_jaxpr(conv)(images, kernel).jaxpr.eqns
    rule, params = host_vjp_traced.rule_of(eqn, [False, True])
    assert len(params["plan"].steps) == 1  # (the filter's cotangent alone: no forward, no input cotangent)
    assert params["products"] > 0  # (counted against the host's multiply-adds: `host_vjp_costs.products_fit`)
    cotangent = rng.normal(size=(2, 4, 4, 4)).astype(np.float32)
    grads = rule([cotangent], [images, kernel], [None], params)
    assert grads[0] is None
    weights = real_tf.Variable(kernel)
    with real_tf.GradientTape() as tape:  # (TF's filter gradient: the oracle)
        out = real_tf.nn.conv2d(real_tf.constant(images), weights, 2, "SAME")
    expected = tape.gradient(out, weights, output_gradients=real_tf.constant(cotangent)).numpy()
    np.testing.assert_allclose(grads[1], expected, rtol=1e-5, atol=1e-5)
