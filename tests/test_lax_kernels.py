"""`lax_kernels`: the commonest ops' kernels bind, with `lax`, the equations their `jnp` functions bind.

The kernels skip `jnp`'s own traces (a `jit` per function, traced per signature inside every kernel's trace)
where the operands need nothing `jnp` adds; their jaxprs must stay what `jnp` binds, or values would change.
The ops' values against TF are the op fidelity tests' (maximum's and minimum's on each path here). A long
gradient program traces a repeated op's kernel once (`registry._Kernel`, `state.inline_kernels`).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from oracle import check
from tapeshim._src.ops import lax_kernels, math_kernels

F32 = np.float32


def _jaxpr(fn, *avals):
    return str(jax.make_jaxpr(fn)(*avals))


def _aval(shape, dtype=F32, weak=False):
    return jax.ShapeDtypeStruct(shape, dtype, weak_type=weak)


_BINARY = [
    (lax.add, jnp.add, "iufc"),
    (lax.sub, jnp.subtract, "iufc"),
    (lax.mul, jnp.multiply, "iufc"),
    (lax.div, jnp.true_divide, "fc"),
]
_OPERANDS = [
    (_aval((4, 3)), _aval((4, 3))),
    (_aval((4, 3)), _aval(())),
    (_aval(()), _aval((4, 3))),
    (_aval((4, 3)), _aval((3,))),  # (rank promotion: a `broadcast_in_dim`, as `jnp` binds it)
    (_aval((3,)), _aval((2, 4, 3))),
    (_aval((4, 1)), _aval((1, 3))),  # (size-1 axes: `lax` broadcasts them)
    (_aval((4, 3)), _aval((2, 3))),  # (no broadcast: `jnp`'s error)
    (_aval((4, 3)), _aval((), weak=True)),  # (a weak operand: `jnp`)
    (_aval((2, 2), np.int32), _aval((2, 2), np.int32)),
    (_aval((2, 2), np.bool_), _aval((2, 2), np.bool_)),
]


@pytest.mark.parametrize(
    "lax_fn, jnp_fn, kinds, x, y",
    [
        (*fns, x, y)
        for fns in _BINARY
        for x, y in _OPERANDS
        # (neither TF nor jnp subtracts or divides booleans)
        if not (fns[1] in (jnp.subtract, jnp.true_divide) and np.dtype(x.dtype) == np.bool_)
    ],
)
def test_binary_kernels_bind_what_jnp_binds(lax_fn, jnp_fn, kinds, x, y):
    try:
        expected = _jaxpr(jnp_fn, x, y)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            _jaxpr(lax_kernels.binary(lax_fn, jnp_fn, kinds), x, y)
        return
    assert _jaxpr(lax_kernels.binary(lax_fn, jnp_fn, kinds), x, y) == expected


@pytest.mark.parametrize("other", ["8", "b, 8", "b, 1", "1, 8"])
def test_binary_kernels_bind_what_jnp_binds_at_symbolic_sizes(other):
    # (a trace for any batch size: where JAX cannot compare the sizes, `jnp` decides)
    x = _aval(jax.export.symbolic_shape("b, 8"))
    y = _aval(jax.export.symbolic_shape(other, scope=x.shape[0].scope))
    assert _jaxpr(lax_kernels.subtract, x, y) == _jaxpr(jnp.subtract, x, y)


@pytest.mark.parametrize("axis", [None, (0,), (1,), (0, 1)])
def test_a_mean_over_symbolic_sizes_binds_what_jnp_binds(axis):
    x = _aval(jax.export.symbolic_shape("b, 8"))
    assert _jaxpr(lambda v: math_kernels.mean_impl(v, axis, False), x) == _jaxpr(
        lambda v: jnp.mean(v, axis=axis, dtype=v.dtype), x
    )


@pytest.mark.parametrize("lax_fn, jnp_fn", [(lax.exp, jnp.exp), (lax.log, jnp.log), (lax.tanh, jnp.tanh)])
@pytest.mark.parametrize("x", [_aval((4, 3)), _aval((), weak=True), _aval((3,), np.int32), _aval((2,), np.complex64)])
def test_unary_kernels_bind_what_jnp_binds(lax_fn, jnp_fn, x):
    assert _jaxpr(lax_kernels.unary(lax_fn, jnp_fn), x) == _jaxpr(jnp_fn, x)


@pytest.mark.parametrize("dtype", [F32, np.float16, jnp.bfloat16, np.int32])
@pytest.mark.parametrize("shapes", [((4, 3), (3, 5)), ((2, 4, 3), (3, 5)), ((3,), (3, 2))])
def test_matmul_binds_what_jnp_binds(dtype, shapes):
    a, b = (_aval(s, dtype) for s in shapes)
    assert _jaxpr(lax_kernels.matmul, a, b) == _jaxpr(jnp.matmul, a, b)


@pytest.mark.parametrize("shape, axis", [((4, 3), None), ((4, 3), (0,)), ((2, 3, 5), (0, 2)), ((7,), ()), ((), None)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [F32, np.float16, np.int32])
def test_sums_and_means_bind_what_jnp_binds(shape, axis, keepdims, dtype):
    x = _aval(shape, dtype)
    assert _jaxpr(lambda v: math_kernels.sum_impl(v, axis, keepdims), x) == _jaxpr(
        lambda v: jnp.sum(v, axis=axis, keepdims=keepdims, dtype=v.dtype), x
    )
    if dtype is not np.int32:  # (integer means truncate: `mean_impl`'s own rule)
        assert _jaxpr(lambda v: math_kernels.mean_impl(v, axis, keepdims), x) == _jaxpr(
            lambda v: jnp.mean(v, axis=axis, keepdims=keepdims, dtype=v.dtype), x
        )


@pytest.mark.parametrize("shapes", [((4, 3), (4, 3)), ((4, 3), ()), ((), (4, 3)), ((), ()), ((1, 3), (4, 1))])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_and_minimum_match_tf_on_each_path(shapes, op):
    # The `lax` path (one shape, or a scalar either side) and `jnp`'s (broadcasting) against TF's rules: NaN from
    # x propagates, with its gradient to y; a tie's gradient goes to x.
    rng = np.random.default_rng(0)
    x, y = (rng.normal(size=s).astype(F32) for s in shapes)
    if x.size > 2:
        x.reshape(-1)[::3] = np.nan
        x.reshape(-1)[1] = y.reshape(-1)[0]

    def body(tf):
        a, b = tf.constant(x), tf.constant(y)
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            out = getattr(tf.math, op)(a, b)
            weights = tf.reshape(tf.range(1.0, 1.0 + tf.cast(tf.size(out), tf.float32)), tf.shape(out))
            loss = tf.reduce_sum(out * weights / 7.0)  # (an upstream of distinct values)
        return out, tape.gradient(loss, [a, b])

    check(body)


def test_a_long_gradient_program_traces_a_repeated_op_once():
    # In a long gradient program's trace an op's kernel is its cached `jit` trace, inlined (`registry._Kernel`):
    # an op repeated 80 times runs its Python once there, and JAX's AD linearizes that trace once.
    import tapeshim

    runs = []

    def doubled(x):
        runs.append(x.shape)
        return x * 2.0 - jnp.sin(x)

    op = tapeshim.experimental.jax_op(doubled, name="Doubled")

    @tapeshim.function
    def gradient(x):
        with tapeshim.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(80):
                y = op(y) * 0.5
            loss = tapeshim.reduce_sum(y)
        return tape.gradient(loss, x)

    x = np.linspace(-1.0, 1.0, 5, dtype=F32)
    result = gradient(tapeshim.constant(x))

    def chain(v):
        for _ in range(80):
            v = (v * 2.0 - jnp.sin(v)) * 0.5
        return jnp.sum(v)

    np.testing.assert_allclose(result.numpy(), jax.grad(chain)(x), rtol=1e-5)
    # (the op's shape evaluation and the program's one trace: 82 where the program ran the op's Python at each
    # occurrence)
    assert len(runs) <= 3, len(runs)


_RNG = np.random.default_rng(11)
_XENT_CASES = [
    ((5, 4), np.int32, np.float32),
    ((2, 3, 7), np.int64, np.float64),  # labels of rank 2
    ((6,), np.int32, np.float32),  # one example: scalar labels
    ((0, 3), np.int32, np.float32),  # no examples
]


@pytest.mark.parametrize("shape, label_dtype, logit_dtype", _XENT_CASES)
def test_softmax_cross_entropy_and_log_softmax_bound_with_lax(shape, label_dtype, logit_dtype):
    # (`nn_ops._sparse_xent` and `_log_softmax` bind lax, picking the label's class by a one-hot mask)
    labels = _RNG.integers(0, shape[-1], size=shape[:-1]).astype(label_dtype)
    logits = (_RNG.normal(size=shape) * 3).astype(logit_dtype)
    weights = np.arange(1, labels.size + 1).reshape(labels.shape).astype(logit_dtype)

    def body(tf):
        x = tf.constant(logits)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(labels), logits=x)
            total = tf.reduce_sum(loss * weights)
        return loss, tape.gradient(total, x), tf.nn.log_softmax(x, axis=0), tf.nn.log_softmax(x)

    check(body)


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("dtype", [F32, np.float64, np.float16])
def test_softmax_bound_with_lax(axis, dtype):
    # (`nn_ops._softmax` binds what `jax.nn.softmax` binds: its values, first and second derivatives against TF)
    logits = (_RNG.normal(size=(3, 5)) * 4).astype(dtype)
    logits[1, 2], logits[2] = 1e4, [-np.inf, 0.0, 1.0, 2.0, 3.0]
    weights = np.arange(15).reshape(3, 5).astype(dtype) / 7

    def body(tf):
        x = tf.constant(logits)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                probs = tf.nn.softmax(x, axis=axis)
                loss = tf.reduce_sum(probs * weights)
            grad = inner.gradient(loss, x)
            curvature = tf.reduce_sum(grad * grad)
        return probs, grad, outer.gradient(curvature, x)

    check(body)


def test_sparse_cross_entropy_at_infinities_nans_and_unknown_sizes():
    data = [(_RNG.integers(0, 5, n).astype(np.int32), _RNG.normal(size=(n, 5)).astype(F32)) for n in (3, 4, 3)]

    def body(tf):
        x = tf.constant(np.array([[1e30, -1e30, 0.0], [-np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0]], F32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 1, 2]), logits=x)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 5], tf.float32)])
        def step(labels, logits):
            with tf.GradientTape() as tape:
                tape.watch(logits)
                mean = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            return mean, tape.gradient(mean, logits)

        return loss, tape.gradient(loss, x), [step(tf.constant(a), tf.constant(b)) for a, b in data]

    check(body)


@pytest.mark.parametrize("dtype", [F32, np.float64, np.float16, np.int32])
def test_relu_bound_with_lax(dtype):
    # (`nn_ops._relu`: lax's max under a custom derivative, 0 at 0 and at NaN, as TF's ReluGrad)
    values = np.array([[-2.0, -0.0, 0.0, 0.5], [3.0, np.nan, -np.inf, np.inf]])
    features = values.astype(dtype) if np.dtype(dtype).kind == "f" else np.array([[-2, 0, 1, 5]], dtype)

    def body(tf):
        x = tf.constant(features)
        if not x.dtype.is_floating:
            return tf.nn.relu(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = tf.nn.relu(x)
            loss = tf.reduce_sum(out * tf.constant(np.arange(8).reshape(2, 4).astype(dtype)))
        return out, tape.gradient(loss, x)

    check(body)


def test_sparse_cross_entropy_with_an_unknown_class_count_traces_once():
    # A `tf.function` whose logits have unknown classes and batch runs its Python body once, as TF's: the
    # class count is a symbolic size, made a value as `jnp` makes it (`nn_ops._sparse_xent`)
    sizes = [(3, 3), (2, 5), (3, 4)]
    data = [(np.arange(b, dtype=np.int32) % n, _RNG.normal(size=(b, n)).astype(F32)) for b, n in sizes]

    def body(tf):
        runs = []

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, None], tf.float32)])
        def step(labels, logits):
            runs.append(1)
            with tf.GradientTape() as tape:
                tape.watch(logits)
                mean = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            return mean, tape.gradient(mean, logits)

        return [step(tf.constant(a), tf.constant(b)) for a, b in data], len(runs)

    check(body)


def test_unchecked_labels_out_of_range_give_their_rows_nan_as_tfs_gpu_kernel(monkeypatch):
    # Off the CPU labels are not checked (`runtime_checks.checks_enabled`); TF's GPU kernel gives a NaN loss and
    # NaN gradients on a row whose label is out of range (its CPU kernel raises: the other tests)
    import tapeshim
    from tapeshim._src import runtime_checks

    monkeypatch.setattr(runtime_checks, "checks_enabled", lambda: False)
    x = tapeshim.constant(np.array([[1.0, 2.0, 3.0]] * 3 + [[0.0, 0.0, 0.0]], F32))
    with tapeshim.GradientTape() as tape:
        tape.watch(x)
        loss = tapeshim.nn.sparse_softmax_cross_entropy_with_logits(labels=tapeshim.constant([0, -1, 3, 2]), logits=x)
    grad = tape.gradient(loss, x).numpy()
    np.testing.assert_array_equal(np.isnan(loss.numpy()), [False, True, True, False])
    assert np.isnan(grad[1:3]).all() and np.isfinite(grad[[0, 3]]).all()
    np.testing.assert_allclose(loss.numpy()[[0, 3]], [2.4076061, np.log(3.0)], rtol=1e-6)


def test_dense_cross_entropy_gradients_are_tfs_for_labels_that_do_not_sum_to_one():
    # TF's gradient by the logits is the kernel's `backprop`, softmax - labels, whether or not the labels sum
    # to 1 (the derivative of the loss is softmax * sum(labels) - labels); by the labels -log_softmax; and the
    # logits' gradient holds the labels constant: its derivative by them is zeros (`nn_ops._xent`)
    logits = (_RNG.normal(size=(3, 4)) * 2).astype(F32)
    labels = _RNG.uniform(size=(3, 4)).astype(F32)
    weights = np.arange(1, 4).astype(F32)

    def body(tf):
        x, y = tf.constant(logits), tf.constant(labels)
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([x, y])
            with tf.GradientTape() as inner:
                inner.watch([x, y])
                loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x) * weights)
            grad_x, grad_y = inner.gradient(loss, [x, y])
            by_x, by_y = tf.reduce_sum(grad_x * grad_x), tf.reduce_sum(grad_y * grad_x)
        with tf.autodiff.ForwardAccumulator([x, y], [tf.ones_like(x), tf.ones_like(y) / 2]) as forward:
            along = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x, axis=0)
        return loss, grad_x, grad_y, outer.gradient(by_x, [x, y]), outer.gradient(by_y, [x, y]), forward.jvp(along)

    check(body)
