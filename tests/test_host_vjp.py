"""VJP kernels computed on the host from their op's forward jaxpr (`tapeshim/_src/host_vjp.py`).

A structure's first gradient runs in the per-op tier; each op's VJP kernel's first calls are computed from the
op's forward jaxpr with NumPy rules per primitive instead of a JAX trace of the VJP. Checked here: each rule
gives `jax.vjp`'s values (ties, zeros, broadcast scalars, transposed and batched products, gathers), whole
first steps give TF's values, kernels that do not qualify are traced as before, and a signature called often
is traced after `kernel_calls.UNTRACED_CALLS` calls with the same values.
"""

import jax
import numpy as np
import pytest

import tapeshim
from oracle import check
from tapeshim._src import host_vjp, interpret, kernel_calls

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

_rng = np.random.default_rng(11)


def _f32(*shape):
    return _rng.normal(size=shape).astype(np.float32)


def _tied(*shape):
    """Values with ties and zeros (relu at 0, max and min ties, |x| at 0)."""
    return _rng.integers(-1, 2, size=shape).astype(np.float32)


def _labels():
    return tapeshim.constant(np.array([0, 2, 1, 1], np.int32))


OPS = {
    "matmul": (lambda a, b: tapeshim.matmul(a, b), (_f32(4, 5), _f32(5, 3))),
    "matmul_transposed": (
        lambda a, b: tapeshim.matmul(a, b, transpose_a=True, transpose_b=True),
        (_f32(5, 4), _f32(3, 5)),
    ),
    "matmul_batched": (lambda a, b: tapeshim.matmul(a, b), (_f32(2, 4, 5), _f32(2, 5, 3))),
    "einsum": (lambda a, b: tapeshim.einsum("ijk,kj->ik", a, b), (_f32(2, 3, 4), _f32(4, 3))),
    "tensordot": (lambda a, b: tapeshim.tensordot(a, b, axes=[[0, 2], [1, 0]]), (_f32(2, 3, 4), _f32(4, 2, 5))),
    "relu_ties": (tapeshim.nn.relu, (_tied(4, 3),)),
    "relu_ties_large": (tapeshim.nn.relu, (_tied(80, 64),)),  # (picked with bit masks: `interpret_rules.select`)
    "softmax": (tapeshim.nn.softmax, (_f32(4, 3),)),
    "log_softmax": (tapeshim.nn.log_softmax, (_f32(4, 3),)),
    "sparse_xent": (
        lambda a: tapeshim.nn.sparse_softmax_cross_entropy_with_logits(labels=_labels(), logits=a),
        (_f32(4, 3),),
    ),
    "xent": (
        lambda a, b: tapeshim.nn.softmax_cross_entropy_with_logits(labels=a, logits=b),
        (np.abs(_f32(4, 3)), _f32(4, 3)),  # (labels that do not sum to 1: TF's gradient, `host_vjp._xent_tf`)
    ),
    "xent_axis0": (
        lambda a, b: tapeshim.nn.softmax_cross_entropy_with_logits(labels=a, logits=b, axis=0),
        (np.abs(_f32(3, 3)), _f32(3, 3)),
    ),
    "mean": (tapeshim.reduce_mean, (_f32(4, 3),)),
    "sum_keepdims": (lambda a: tapeshim.reduce_sum(a, axis=0, keepdims=True), (_f32(4, 3),)),
    "max_ties": (lambda a: tapeshim.reduce_max(a, axis=1), (_tied(4, 5),)),
    "min_all_ties": (tapeshim.reduce_min, (_tied(4, 5),)),
    "logsumexp": (lambda a: tapeshim.reduce_logsumexp(a, axis=1), (_f32(4, 3),)),
    "maximum_ties": (tapeshim.maximum, (_tied(4, 3), _tied(4, 3))),
    "minimum_scalar": (lambda a: tapeshim.minimum(a, 0.0), (_tied(4, 3),)),
    "tanh": (tapeshim.tanh, (_f32(4, 3),)),
    "sigmoid": (tapeshim.sigmoid, (_f32(4, 3),)),
    "exp_log": (lambda a: tapeshim.math.log(tapeshim.exp(a) + 1.0), (_f32(4, 3),)),
    "log1p_expm1": (lambda a: tapeshim.math.log1p(tapeshim.math.expm1(a) + 2.0), (_f32(4, 3),)),
    "sin_cos": (lambda a: tapeshim.sin(a) * tapeshim.cos(a), (_f32(4, 3),)),
    "abs_ties": (tapeshim.abs, (_tied(4, 3),)),
    "abs_ties_large": (tapeshim.abs, (_tied(80, 64),)),
    "square": (tapeshim.square, (_f32(4, 3),)),
    "rsqrt": (lambda a: tapeshim.math.rsqrt(a * a + 1.0), (_f32(4, 3),)),
    "sqrt_zero_upstream": (lambda a: tapeshim.sqrt(a) * tapeshim.constant([1.0, 0.0, 2.0]), (np.abs(_f32(4, 3)),)),
    "pow": (lambda a, b: tapeshim.pow(a, b), (_f32(4, 3), _f32(4, 3))),
    "pow_scalar": (lambda a: tapeshim.pow(tapeshim.abs(a) + 0.5, 2.5), (_f32(4, 3),)),
    "elu": (tapeshim.nn.elu, (_f32(4, 3),)),
    "selu": (tapeshim.nn.selu, (_f32(4, 3),)),
    "mul_broadcast": (lambda a, b: a * b, (_f32(4, 3), _f32(3))),
    "div_broadcast": (lambda a, b: a / b, (_f32(4, 3), _f32(1, 3) + 3.0)),
    "sub_scalar": (lambda a: 2.0 - a, (_f32(4, 3),)),
    "where": (lambda a, b: tapeshim.where(a > 0, a, b), (_f32(4, 3), _f32(4, 3))),
    "where_large": (lambda a, b: tapeshim.where(a > 0, a, b), (_f32(80, 64), _f32(80, 64))),
    "where_large_scalar_condition": (lambda a, b: tapeshim.where(True, a, b), (_f32(80, 64), _f32(80, 64))),
    "cast": (lambda a: tapeshim.cast(tapeshim.cast(a, "float64") * 2.0, "float32"), (_f32(4, 3),)),
    "slice_strided": (lambda a: a[1:4, ::2], (_f32(5, 3),)),
    "index": (lambda a: a[1, 2], (_f32(4, 3),)),
    "index_negative": (lambda a: a[-1], (_f32(4, 3),)),
    "concat": (lambda a, b: tapeshim.concat([a, b], 1), (_f32(4, 3), _f32(4, 2))),
    "stack": (lambda a, b: tapeshim.stack([a, b], axis=1), (_f32(4, 3), _f32(4, 3))),
    "unstack": (lambda a: tapeshim.unstack(a)[1] * 2.0, (_f32(3, 4),)),
    "split": (lambda a: tapeshim.split(a, [1, 2], axis=1)[1], (_f32(4, 3),)),
    "reshape_transpose": (lambda a: tapeshim.transpose(tapeshim.reshape(a, (3, 4))), (_f32(4, 3),)),
    "reverse": (lambda a: tapeshim.reverse(a, [0]), (_f32(4, 3),)),
    "pad": (lambda a: tapeshim.pad(a, [[1, 2], [0, 1]], constant_values=0.5), (_f32(4, 3),)),
    "gather": (lambda a: tapeshim.gather(a, tapeshim.constant([0, 2, 2])), (_f32(4, 3),)),
    "gather_axis1": (lambda a: tapeshim.gather(a, tapeshim.constant([[1, 0], [2, 2]]), axis=1), (_f32(4, 3),)),
    "segment_sum": (lambda a: tapeshim.math.segment_sum(a, tapeshim.constant([0, 0, 1, 3])), (_f32(4, 3),)),
    "unsorted_segment_sum_dropped": (
        lambda a: tapeshim.math.unsorted_segment_sum(a, tapeshim.constant([0, 2, -1, 2]), 3),
        (_f32(4, 3),),
    ),
    "tensor_scatter_nd_add": (
        lambda a, b: tapeshim.tensor_scatter_nd_add(a, tapeshim.constant([[1], [3], [1]]), b),
        (_f32(4, 3), _f32(3, 3)),
    ),
    "top_k": (lambda a: tapeshim.math.top_k(a, 2).values, (_tied(3, 5),)),
    "cumsum": (lambda a: tapeshim.math.cumsum(a, axis=1), (_f32(4, 3),)),
    "cumsum_reverse": (lambda a: tapeshim.math.cumsum(a, axis=0, reverse=True, exclusive=True), (_f32(4, 3),)),
    "clip": (lambda a: tapeshim.clip_by_value(a, -0.5, 0.5), (_tied(4, 3) * 0.5,)),
    "l2_normalize": (lambda a: tapeshim.nn.l2_normalize(a, axis=1), (_f32(4, 3),)),
    "broadcast_to": (lambda a: tapeshim.broadcast_to(a, (2, 4, 3)), (_f32(4, 1),)),
    "float64": (
        lambda a, b: tapeshim.matmul(tapeshim.tanh(a), b),
        (_f32(3, 3).astype(np.float64), _f32(3, 2).astype(np.float64)),
    ),
}  # fmt: skip


def _node_of(fn, arrays):
    """The recorded node of `fn` on tensors of `arrays` (one op: its kernel and inputs)."""
    with tapeshim.GradientTape() as tape:
        tensors = [tapeshim.constant(a) for a in arrays]
        for t in tensors:
            tape.watch(t)
        out = fn(*tensors)
    node = out._node
    # (the op itself, a registry kernel's node, not a composite's last step)
    while getattr(node.fn, "kernel", None) is None or len(node.inputs) < 1:
        node = node.inputs[0]._node
    return node


@pytest.mark.parametrize("name", sorted(OPS))
def test_each_rule_gives_jax_vjps_values(name):
    fn, arrays = OPS[name]
    with tapeshim.GradientTape() as tape:
        tensors = [tapeshim.constant(a) for a in arrays]
        for t in tensors:
            tape.watch(t)
        out = fn(*tensors)
    # every recorded node between the inputs and the output: each op's kernel, as the per-op tier calls it
    nodes, stack, seen = [], [out], set()
    while stack:
        tensor = stack.pop()
        node = tensor._node
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(node.inputs)
    checked = 0
    for node in nodes:
        kernel = getattr(node.fn, "kernel", None)
        if kernel is None:
            continue
        inputs = [np.asarray(t.value) for t in node.inputs]  # (a lazy input forced)
        outputs = jax.jit(kernel.fn)(*inputs)
        if not any(np.issubdtype(np.asarray(o).dtype, np.floating) for o in outputs):
            continue
        given = tuple(np.issubdtype(np.asarray(o).dtype, np.floating) for o in outputs)
        cotangents = [
            _rng.normal(size=np.shape(o)).astype(np.asarray(o).dtype) for o, has in zip(outputs, given) if has
        ]
        program = host_vjp.program(kernel.jitted, inputs, given)
        assert program is not None, f"{kernel.key} does not qualify"
        with interpret.host_errors_ignored():  # (as the per-op tier calls it)
            got = program((inputs, cotangents), inputs + cotangents, host=True)

        def picked(*xs, kernel=kernel, given=given):
            return [o for o, has in zip(kernel.fn(*xs), given) if has]

        _, pullback = jax.vjp(picked, *inputs)
        expected = pullback(cotangents)
        for position, value in got.items():
            assert value.shape == np.shape(inputs[position]) and value.dtype == inputs[position].dtype
            np.testing.assert_allclose(value, np.asarray(expected[position]), rtol=2e-6, atol=2e-6)
        checked += 1
    assert checked


def _first_steps(tf):
    """First gradients of structures never seen before: a classifier, a recurrence with an indexing loss, and
    segment sums under a top-k."""
    rng = np.random.default_rng(12)
    w1 = tf.Variable((rng.normal(size=(6, 9)) * 0.4).astype(np.float32))
    w2 = tf.Variable((rng.normal(size=(9, 4)) * 0.4).astype(np.float32))
    unused = tf.Variable(np.ones(3, np.float32))
    x = tf.constant(rng.normal(size=(7, 6)).astype(np.float32))
    labels = tf.constant(rng.integers(0, 4, size=7).astype(np.int32))
    out = []
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.matmul(x, w1))
        logits = tf.matmul(h - tf.reduce_max(h, axis=0), w2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        loss += 0.01 * tf.reduce_sum(tf.square(w1))
    out.append(tape.gradient(loss, [w1, w2, unused]))
    state = tf.zeros((2, 4))
    with tf.GradientTape() as tape:
        for t in range(5):
            state = tf.tanh(tf.matmul(state, tf.transpose(w2[:4])) + x[t : t + 2, :4])
        probs = tf.nn.softmax(state)
        loss = -tf.math.log(probs[1, 2]) + tf.reduce_sum(tf.stack([state[0, 0], state[1, 3]]))
    out.append(tape.gradient(loss, [w2]))
    with tf.GradientTape() as tape:
        rows = tf.math.unsorted_segment_sum(tf.matmul(x, w1), tf.constant([0, 2, 1, 2, 0, 1, 2]), 3)
        loss = tf.reduce_sum(tf.math.top_k(rows, 2).values * tf.constant([1.0, -0.5]))
    out.append(tape.gradient(loss, [w1]))
    return out


def test_first_steps_give_tfs_values_from_host_vjps():
    before = host_vjp.stats["host_vjp_plans"]
    check(_first_steps)
    assert host_vjp.stats["host_vjp_plans"] > before


def test_kernels_that_do_not_qualify_are_traced_as_before():
    """A custom JVP this module has no rule for (JAX's softplus), a complex value: no host VJP; the gradients are
    TF's all the same."""
    softplus_node = _node_of(lambda a: tapeshim.nn.softplus(a), (_f32(4, 3),))
    inputs = [np.asarray(t.value) for t in softplus_node.inputs]
    assert host_vjp.program(softplus_node.fn.kernel.jitted, inputs, (True,)) is None
    complex_node = _node_of(lambda a: a * a, (_f32(3) + 1j * _f32(3),))
    inputs = [np.asarray(t.value) for t in complex_node.inputs]
    assert host_vjp.program(complex_node.fn.kernel.jitted, inputs, (True,)) is None

    def body(tf):
        x = tf.Variable(np.array([1.0, 4.0, 9.0], np.float32))
        z = tf.Variable(np.array([1 + 2j, 3 - 1j], np.complex64))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.softplus(x)) + tf.math.real(tf.reduce_sum(z * z))
        return tape.gradient(loss, [x, z])

    check(body)


def test_a_signature_called_often_is_traced_with_the_same_values(monkeypatch):
    """After `UNTRACED_CALLS` host calls a signature's VJP is traced (its host program is then the trace's)."""
    monkeypatch.setattr(kernel_calls, "UNTRACED_CALLS", 3)

    def body(tf):
        x = tf.constant(np.linspace(-1.0, 1.0, 11, dtype=np.float32))
        out = []
        for _ in range(3):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x
                for _ in range(6):
                    y = tf.tanh(tf.sin(y) * 1.3) + 0.01
                loss = tf.reduce_sum(y * y)
            out.append(tape.gradient(loss, x))
        return out

    check(body)


JAX_FUNCTIONS = {
    "integer_pow": (lambda x: (x**3 + x**-2 + x**1 + x**0,), (_f32(4, 3) + 3.0,)),
    "dynamic_slice": (lambda x, i: (jax.lax.dynamic_slice(x, (i, np.int32(1)), (2, 2)),), (_f32(4, 3), np.int32(3))),
    "dynamic_update_slice": (
        lambda x, u, i: (jax.lax.dynamic_update_slice(x, u * 2.0, (i, np.int32(0))),),
        (_f32(4, 3), _f32(2, 3), np.int32(-1)),
    ),
    "pad_interior": (lambda x: (jax.lax.pad(x, np.float32(1.5), ((1, 0, 1), (0, 2, 0))),), (_f32(3, 2),)),
    "two_outputs": (lambda x: (jax.numpy.sin(x), jax.numpy.cos(x) * x), (_f32(5),)),
}


@pytest.mark.parametrize("name", sorted(JAX_FUNCTIONS))
def test_rules_of_primitives_the_ops_rarely_make_give_jax_vjps_values(name):
    fn, inputs = JAX_FUNCTIONS[name]
    inputs = list(inputs)
    outputs = fn(*inputs)
    given = (True,) * len(outputs)
    cotangents = [_rng.normal(size=np.shape(o)).astype(np.float32) for o in outputs]
    program = host_vjp.program(jax.jit(fn), inputs, given)
    assert program is not None
    with interpret.host_errors_ignored():
        got = program((inputs, cotangents), inputs + cotangents, host=True)
    _, pullback = jax.vjp(lambda *xs: list(fn(*xs)), *inputs)
    expected = pullback(cotangents)
    floating = [k for k, x in enumerate(inputs) if np.asarray(x).dtype.kind == "f"]
    assert sorted(got) == floating
    for position in floating:
        np.testing.assert_allclose(got[position], np.asarray(expected[position]), rtol=2e-6, atol=2e-6)


def test_a_quotients_divisor_cotangent_does_not_overflow_where_jaxs_does_not():
    """JAX's order, `-((g / y**2) * x)`: `g * x` (1e40) never forms. Found by review: it gave -inf."""
    fn, inputs = (lambda x, y: (x / y,)), [np.array([1e20, 3.0], np.float32), np.array([1e10, 2.0], np.float32)]
    cotangent = np.array([1e20, 1.0], np.float32)
    program = host_vjp.program(jax.jit(fn), inputs, (True,))
    with interpret.host_errors_ignored():
        got = program((inputs, [cotangent]), inputs + [cotangent], host=True)
    np.testing.assert_allclose(got[1], [-1e20, -0.75], rtol=1e-6)


def test_a_kernel_with_random_keys_inside_is_traced_as_before():
    """A key's dtype is none NumPy has (`key<fry>`): the kernel does not qualify (it raised a TypeError)."""

    def body(tf):
        out = []
        for n in (3, 5):  # (the second size runs per op)
            x = tf.Variable(np.ones((2, n, 4, 1), np.float32))
            with tf.GradientTape() as tape:
                y = tf.image.stateless_random_flip_left_right(x * 2.0, seed=(1, 2))
                loss = tf.reduce_sum(y * y)
            out.append(tape.gradient(loss, x))
        return out

    gradients = check(body)
    assert [float(tapeshim.reduce_sum(g)) for g in gradients] == [64.0 * 3, 64.0 * 5]
