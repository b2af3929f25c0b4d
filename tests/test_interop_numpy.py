"""`tapeshim.experimental.numpy` against TF's `tf.experimental.numpy`: values, dtypes, and tape gradients."""

import numpy as np
import pytest

from oracle import check

A = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]], np.float32)
B = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 4.0]], np.float32)
INTS = np.array([[3, -1, 2], [0, 5, 7]], np.int32)


def tnp_of(tf):
    return tf.experimental.numpy


CASES = {
    "sin": lambda n, a, b, i: n.sin(a),
    "exp": lambda n, a, b, i: n.exp(a),
    "abs_int": lambda n, a, b, i: n.abs(i),
    "square": lambda n, a, b, i: n.square(a),
    "sqrt_abs": lambda n, a, b, i: n.sqrt(n.abs(a)),
    "tanh": lambda n, a, b, i: n.tanh(a),
    "log1p_abs": lambda n, a, b, i: n.log1p(n.abs(a)),
    "add_scalar": lambda n, a, b, i: n.add(a, 2.0),
    "multiply": lambda n, a, b, i: n.multiply(a, b),
    "int_plus_float": lambda n, a, b, i: n.add(i, 1.5),
    "divide_ints": lambda n, a, b, i: n.divide(i, 2),
    "power": lambda n, a, b, i: n.power(n.abs(a), 1.5),
    "maximum": lambda n, a, b, i: n.maximum(a, b),
    "sum": lambda n, a, b, i: n.sum(a),
    "sum_axis_keepdims": lambda n, a, b, i: n.sum(a, axis=1, keepdims=True),
    "sum_int32": lambda n, a, b, i: n.sum(i),
    "mean_int": lambda n, a, b, i: n.mean(i, axis=0),
    "mean": lambda n, a, b, i: n.mean(a),
    "std": lambda n, a, b, i: n.std(a, axis=1),
    "var": lambda n, a, b, i: n.var(a),
    "prod": lambda n, a, b, i: n.prod(a, axis=0),
    "max": lambda n, a, b, i: n.max(a, axis=1),
    "amin": lambda n, a, b, i: n.amin(a),
    "argmax": lambda n, a, b, i: n.argmax(a, axis=1),
    "cumsum": lambda n, a, b, i: n.cumsum(a, axis=1),
    "dot": lambda n, a, b, i: n.dot(a, n.transpose(b)),
    "matmul": lambda n, a, b, i: n.matmul(a, n.transpose(b)),
    "einsum": lambda n, a, b, i: n.einsum("ij,kj->ik", a, b),
    "reshape": lambda n, a, b, i: n.reshape(a, (3, 2)),
    "transpose": lambda n, a, b, i: n.transpose(a),
    "expand_squeeze": lambda n, a, b, i: n.squeeze(n.expand_dims(a, 0)),
    "concatenate": lambda n, a, b, i: n.concatenate([a, b], axis=0),
    "stack": lambda n, a, b, i: n.stack([a, b]),
    "where": lambda n, a, b, i: n.where(n.greater(a, 0.0), a, b),
    "clip": lambda n, a, b, i: n.clip(a, -1.0, 1.0),
    "tile": lambda n, a, b, i: n.tile(a, (2, 1)),
    "flip": lambda n, a, b, i: n.flip(a, axis=1),
    "take": lambda n, a, b, i: n.take(a, [2, 0], axis=1),
    "tril": lambda n, a, b, i: n.tril(n.ones((3, 3))),
    "outer": lambda n, a, b, i: n.outer(a[0], b[0]),
    "split": lambda n, a, b, i: n.split(a, 3, axis=1),
    "asarray_floats": lambda n, a, b, i: n.asarray([1.0, 2.0]),
    "asarray_ints": lambda n, a, b, i: n.asarray([1, 2]),
    "arange": lambda n, a, b, i: n.arange(5),
    "linspace": lambda n, a, b, i: n.linspace(0.0, 1.0, 5),
    "zeros": lambda n, a, b, i: n.zeros((2, 2)),
    "ones_like": lambda n, a, b, i: n.ones_like(a),
    "eye": lambda n, a, b, i: n.eye(3),
    "full": lambda n, a, b, i: n.full((2,), 7.0),
    "equal": lambda n, a, b, i: n.equal(i, 5),
    "logical_and": lambda n, a, b, i: n.logical_and(n.greater(a, 0), n.less(b, 1)),
    "astype_asarray": lambda n, a, b, i: n.asarray(a, dtype=n.float64),
    "meshgrid": lambda n, a, b, i: n.meshgrid(a[0], b[0]),
    "broadcast_arrays": lambda n, a, b, i: n.broadcast_arrays(a, b[0]),
    "fix": lambda n, a, b, i: n.fix(a),
    "tri": lambda n, a, b, i: n.tri(3),
    "nonzero": lambda n, a, b, i: n.nonzero(n.greater(a, 0)),
    "pad": lambda n, a, b, i: n.pad(a, ((1, 1), (0, 2)), "constant"),
    "pad_without_mode": lambda n, a, b, i: n.pad(a, 1),
    "vander": lambda n, a, b, i: n.vander(a[0]),
    "tensordot": lambda n, a, b, i: n.tensordot(a, b, axes=([1], [1])),
    "moveaxis": lambda n, a, b, i: n.moveaxis(a, 0, 1),
    "logspace": lambda n, a, b, i: n.logspace(0, 2, 3),
    "gcd": lambda n, a, b, i: n.gcd(n.asarray([12, 18]), n.asarray([8, 12])),
    "diagonal_trace": lambda n, a, b, i: n.trace(n.diag(a[0])),
    "remainder_ints": lambda n, a, b, i: n.remainder(i, 4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_function_matches_tf(name):
    def body(tf):
        tnp = tnp_of(tf)
        return CASES[name](tnp, tf.constant(A), tf.constant(B), tf.constant(INTS))

    check(body, raises=name == "pad_without_mode")  # (TF's pad has no default mode)


def test_shape_size_ndim_and_dtypes():
    def body(tf):
        tnp = tnp_of(tf)
        a = tf.constant(A)
        return tnp.ndim(a), tnp.size(a), tuple(tnp.shape(a)), tnp.zeros(2, dtype=tnp.float32).dtype == tf.float32

    check(body)


@pytest.mark.parametrize(
    "name",
    [
        "sin",
        "multiply",
        "dot",
        "einsum",
        "mean",
        "std",
        "where",
        "clip",
        "concatenate",
        "cumsum",
        "prod",
        "max",
        "power",
        "take",
    ],
)
def test_gradients_flow_on_a_tape(name):
    def body(tf):
        tnp = tnp_of(tf)
        a = tf.Variable(A)
        b = tf.Variable(B)
        with tf.GradientTape() as tape:
            y = CASES[name](tnp, a, b, tf.constant(INTS))
            loss = tf.reduce_sum(tf.concat([tf.reshape(t, [-1]) for t in (y if isinstance(y, list) else [y])], 0))
        return tape.gradient(loss, [a, b])

    check(body)


def test_non_differentiable_results_give_none():
    def body(tf):
        tnp = tnp_of(tf)
        a = tf.Variable(A)
        with tf.GradientTape() as tape:
            y = tf.cast(tnp.argmax(a, axis=1), tf.float32)
        return tape.gradient(y, a)

    check(body)
