"""tf.map_fn, tf.scan, tf.foldl/foldr, tf.vectorized_map, tf.recompute_grad against real TensorFlow.

Each body runs eagerly, under a GradientTape and inside tf.function, and compares values,
dtypes, shapes, gradients (None pattern included) and error classes.
"""

import numpy as np
import pytest

from oracle import check, check_raises, sum_of_outputs, taped_body, traced_body

X = np.array([1.0, 2.0, 3.0], np.float32)
M = np.arange(6, dtype=np.float32).reshape(3, 2) / 4


# "taped": the body eagerly, differentiated under a persistent tape; "traced": the same inside tf.function.
MODES = {
    "taped": lambda body: taped_body(body, X, M, loss=sum_of_outputs, persistent=True),
    "traced": lambda body: traced_body(body, X, M, loss=sum_of_outputs),
}


BODIES = {
    "map_square": lambda tf, x, m: tf.map_fn(lambda v: v * v, x),
    "map_rows": lambda tf, x, m: tf.map_fn(lambda row: tf.reduce_sum(row) * row, m),
    "map_nested_in_out": lambda tf, x, m: tf.map_fn(
        lambda e: {"a": e[0] * e[1][0], "b": e[1] + 1.0}, (x, m), fn_output_signature={"a": tf.float32, "b": tf.float32}
    ),
    "map_signature_int": lambda tf, x, m: tf.map_fn(lambda row: tf.shape(row), m, fn_output_signature=tf.int32),
    "map_signature_spec": lambda tf, x, m: tf.map_fn(
        lambda v: tf.stack([v, 2 * v]), x, fn_output_signature=tf.TensorSpec([2], tf.float32)
    ),
    "map_dtype_arg": lambda tf, x, m: tf.map_fn(lambda v: tf.cast(v > 1.5, tf.int64), x, dtype=tf.int64),
    "map_python_result": lambda tf, x, m: tf.map_fn(lambda v: 1, x),
    "map_capture": lambda tf, x, m: tf.map_fn(lambda row: tf.tensordot(row, x[:2], 1), m),
    "map_of_map": lambda tf, x, m: tf.map_fn(lambda row: tf.map_fn(lambda v: tf.sin(v), row), m),
    "scan_sum": lambda tf, x, m: tf.scan(lambda a, v: a + v, x),
    "scan_reverse": lambda tf, x, m: tf.scan(lambda a, v: a * v + 1.0, x, reverse=True),
    "scan_init": lambda tf, x, m: tf.scan(lambda a, v: a * 0.5 + v, m, initializer=tf.zeros([2])),
    "scan_init_reverse": lambda tf, x, m: tf.scan(
        lambda a, v: a * v[0] + v[1], m, initializer=tf.constant(1.0), reverse=True
    ),
    "scan_nested": lambda tf, x, m: tf.scan(
        lambda a, v: {"s": a["s"] + v[0], "p": a["p"] * v[1][0]},
        (x, m),
        initializer={"s": tf.constant(0.0), "p": tf.constant(1.0)},
    ),
    "scan_python_init": lambda tf, x, m: tf.scan(lambda a, v: a + 1, x, initializer=0),
    "foldl": lambda tf, x, m: tf.foldl(lambda a, v: a * v + 1.0, x),
    "foldr": lambda tf, x, m: tf.foldr(lambda a, v: a - v, x),
    "foldl_init": lambda tf, x, m: tf.foldl(lambda a, v: a + tf.reduce_sum(v * v), m, initializer=tf.constant(0.5)),
    "foldr_nested": lambda tf, x, m: tf.foldr(lambda a, v: (a[0] + v[0], a[1] * v[1]), (x, x)),
    "vmap_square": lambda tf, x, m: tf.vectorized_map(lambda v: v * v, x),
    "vmap_rows": lambda tf, x, m: tf.vectorized_map(lambda row: tf.reduce_sum(row) * row + x[0], m),
    "vmap_struct": lambda tf, x, m: tf.vectorized_map(lambda e: {"a": e[0] * 2.0, "b": (e[1],)}, (x, m)),
    "vmap_matmul": lambda tf, x, m: tf.vectorized_map(
        lambda row: tf.matmul(tf.reshape(row, [1, 2]), tf.reshape(row, [2, 1])), m
    ),
    "vmap_constant": lambda tf, x, m: tf.vectorized_map(lambda v: 3, x),
    "recompute": lambda tf, x, m: tf.recompute_grad(lambda a, b: tf.sin(a) * tf.reduce_sum(b))(x, m),
}


@pytest.mark.parametrize("mode", ["taped", "traced"])  # taped: eager values and gradients
@pytest.mark.parametrize("name", sorted(BODIES))
def test_functional_ops_against_tf(name, mode):
    check(MODES[mode](BODIES[name]))


def test_empty_elems():
    check(lambda tf: tf.map_fn(lambda v: v, tf.zeros([0, 2])))
    check(lambda tf: tf.map_fn(lambda v: v, tf.zeros([0, 2]), fn_output_signature=tf.int32))
    check(lambda tf: tf.scan(lambda a, v: a * v, tf.zeros([0]), initializer=tf.constant(1.0)))
    check(lambda tf: tf.foldl(lambda a, v: a * v, tf.zeros([0]), initializer=tf.constant(2.0)))


ERRORS = {
    "map_structure": lambda tf: tf.map_fn(lambda v: (v, v), tf.constant(X)),
    "map_dtype": lambda tf: tf.map_fn(lambda v: tf.cast(v, tf.int32), tf.constant(X)),
    "map_scalar": lambda tf: tf.map_fn(lambda v: v, tf.constant(1.0)),
    "map_no_tensors": lambda tf: tf.map_fn(lambda v: v, []),
    "map_first_dims": lambda tf: tf.map_fn(lambda a: a[0], (tf.zeros([2]), tf.zeros([3]))),
    "map_signature_shape": lambda tf: tf.map_fn(
        lambda v: tf.shape(v), tf.zeros([2, 3]), fn_output_signature=tf.TensorSpec([2], tf.int32)
    ),
    "map_changing_shape": lambda tf: tf.map_fn(
        lambda v: v[: tf.cast(v[0], tf.int32)], tf.constant([[1.0, 2.0], [2.0, 3.0]])
    ),
    "scan_structure": lambda tf: tf.scan(lambda a, v: (a, a), tf.constant(X)),
    "scan_dtype": lambda tf: tf.scan(lambda a, v: tf.cast(a, tf.int32), tf.constant(X), initializer=tf.constant(0.0)),
    "scan_shape": lambda tf: tf.scan(lambda a, v: tf.stack([a, a]), tf.constant(X), initializer=tf.constant(0.0)),
    "scan_empty": lambda tf: tf.scan(lambda a, v: a * v, tf.zeros([0])),
    "foldl_empty": lambda tf: tf.foldl(lambda a, v: a * v, tf.zeros([0])),
    "foldl_structure": lambda tf: tf.foldl(lambda a, v: (a, a), tf.constant(X), initializer=tf.constant(0.0)),
    "fn_scan_dtype": lambda tf: tf.function(
        lambda x: tf.scan(lambda a, v: tf.cast(a, tf.int32), x, initializer=tf.constant(0.0))
    )(tf.constant(X)),
    "fn_map_structure": lambda tf: tf.function(lambda x: tf.map_fn(lambda v: (v, v), x))(tf.constant(X)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_against_tf(name):
    check_raises(ERRORS[name])


def test_fold_loose_accumulator_eagerly():
    # Eagerly TF's folds do not check the accumulator's dtype or shape.
    check(lambda tf: tf.foldl(lambda a, v: tf.cast(a, tf.int32), tf.constant(X), initializer=tf.constant(0.0)))
    check(lambda tf: tf.foldl(lambda a, v: tf.stack([a, a]), tf.constant(X), initializer=tf.constant(0.0)))


def test_map_fn_variables_in_function():
    def body(tf):
        w = tf.Variable([[1.0, -1.0], [0.5, 2.0]])

        @tf.function
        def f(m):
            with tf.GradientTape() as tape:
                y = tf.map_fn(lambda row: tf.tanh(tf.linalg.matvec(w, row)), m)
                z = tf.scan(lambda a, row: a + tf.reduce_sum(row * w[0]), m, initializer=tf.constant(0.0))
                loss = tf.reduce_sum(y) + tf.reduce_sum(z)
            return loss, tape.gradient(loss, w)

        return f(tf.constant(M)), f(tf.constant(M * 2))

    check(body)


def test_vectorized_map_jacobian_style():
    def body(tf):
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
        x = tf.constant(M)
        with tf.GradientTape() as tape:
            y = tf.vectorized_map(lambda row: tf.linalg.matvec(w, row) ** 2, x)
            loss = tf.reduce_sum(y)
        return y, tape.gradient(loss, w)

    check(body)


def test_recompute_grad_with_variable_in_function():
    # (TF's eager recompute_grad refuses functions that read variables: "Caching devices is not yet supported".)
    def body(tf):
        w = tf.Variable(1.5)
        f = tf.recompute_grad(lambda x: tf.nn.relu(x * w) * x)

        @tf.function
        def g(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(f(x))
            return y, tape.gradient(y, [x, w])

        return g(tf.constant(X)), g(tf.constant(-X))

    check(body)


def test_map_fn_under_jax_vmap_cost():
    # Inside a function map_fn is one recorded loop, not one op per element.
    import tapeshim as tf

    @tf.function
    def f(x):
        return tf.map_fn(lambda v: tf.sin(v) * 2.0, x)

    np.testing.assert_allclose(f(tf.zeros([1000])).numpy(), np.zeros(1000))
    jaxpr = str(f.as_jaxpr(tf.zeros([1000])))
    assert "scan" in jaxpr and jaxpr.count("sin") == 1


def test_vectorized_map_same_fn_other_structures():
    def body(tf):
        def f(e):
            return e[0] * 2 if isinstance(e, tuple) else e["a"] + 1

        return (
            tf.vectorized_map(f, (tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))),
            tf.vectorized_map(f, {"a": tf.constant([1.0, 2.0])}),
            tf.vectorized_map(f, (tf.constant([1.0, 2.0, 5.0]), tf.constant([3.0, 4.0, 6.0]))),
        )

    check(body)


def test_map_fn_and_scan_bodies_that_assign_variables_in_function():
    def body(tf):
        v = tf.Variable(0.0)
        w = tf.Variable(1.5)

        @tf.function
        def f(x):
            with tf.GradientTape() as tape:
                y = tf.map_fn(lambda r: v.assign_add(r) * 0 + r * w, x)
                z = tf.scan(
                    lambda a, r: (v.assign_add(1.0), a * w + r)[1], x, initializer=tf.constant(0.0), reverse=True
                )
                loss = tf.reduce_sum(y) + tf.reduce_sum(z)
            return y, z, v.read_value(), tape.gradient(loss, w)

        return f(tf.constant(X)), f(tf.constant(X * 2)), v.read_value()

    check(body)
