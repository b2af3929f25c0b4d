"""tf.numpy_function, tf.nn.ctc_loss and tf.nn.embedding_lookup_sparse against TF."""

import numpy as np
import pytest

from oracle import check, check_raises

RNG = np.random.default_rng(0)
L = RNG.normal(size=(6, 3, 5)).astype(np.float32)
LABELS = np.array([[1, 2, 2], [3, 0, 0], [4, 1, 0]], np.int32)


def test_numpy_function_eagerly():
    def body(tf):
        seen = []

        def f(x, y):
            seen.append((type(x).__name__, type(y).__name__, str(x.dtype)))
            return x * 2, np.int64(3)

        out = tf.numpy_function(f, [tf.constant([1.0, 2.0]), tf.constant(1)], [tf.float32, tf.int64])
        single = tf.numpy_function(lambda x: x + 1, [tf.constant(1.0)], tf.float32)
        no_cast = tf.numpy_function(lambda x: x + 1, [tf.constant(1.0)], tf.int32)  # TF does not cast eagerly
        pair = tf.numpy_function(lambda x: (x, x), [tf.constant(1.0)], tf.float32)
        return out, single, no_cast, pair, seen

    check(body)


def test_host_functions_of_computed_inputs_see_each_calls_values():
    """A py_function/numpy_function of a value computed in the function runs on each call's value."""

    def body(tf):
        py = tf.function(lambda x: tf.py_function(lambda a: a * 10.0, [x * 1.0], tf.float32))
        np_fn = tf.function(lambda x: tf.numpy_function(lambda a: a * 10.0, [x + 1.0], tf.float32))
        return [(py(tf.constant(v)), np_fn(tf.constant(v))) for v in (2.0, 5.0, -1.0)]

    check(body)


def test_numpy_function_gradient_is_none_and_runs_in_function():
    def body(tf):
        x = tf.constant(2.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.numpy_function(lambda v: v * v, [x], tf.float32)
        calls = []

        def counted(v):
            calls.append(1)
            return v * 3

        f = tf.function(lambda x: tf.numpy_function(counted, [x], tf.float32) + x)
        outs = [f(x), f(tf.constant(5.0))]

        @tf.function
        def g(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.numpy_function(lambda v: v * v, [x], tf.float32) + x
            return y, tape.gradient(y, x)

        return y, tape.gradient(y, x), outs, len(calls) >= 2, g(x)

    check(body)


def _ctc(tf, labels, label_length, logit_length, **kwargs):
    x = tf.constant(L if kwargs.pop("time_major", True) else np.transpose(L, [1, 0, 2]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.nn.ctc_loss(labels(tf), x, label_length, logit_length, **kwargs)
    return loss, tape.gradient(loss, x)


CTC = {
    "dense": lambda tf: _ctc(tf, lambda tf: tf.constant(LABELS), tf.constant([3, 1, 2]), tf.constant([6, 4, 5])),
    "dense_batch_major_last_blank": lambda tf: _ctc(
        tf,
        lambda tf: tf.constant(LABELS),
        tf.constant([3, 1, 0]),
        tf.constant([6, 4, 5]),
        logits_time_major=False,
        blank_index=-1,
        time_major=False,
    ),
    "dense_full_length": lambda tf: _ctc(
        tf, lambda tf: tf.constant(LABELS % 4 + 1), tf.constant([3, 3, 3]), tf.constant([6, 6, 6]), blank_index=0
    ),
    "sparse": lambda tf: _ctc(
        tf, lambda tf: tf.sparse.from_dense(tf.constant(LABELS)), None, tf.constant([6, 4, 5]), blank_index=0
    ),
    "sparse_last_blank": lambda tf: _ctc(
        tf, lambda tf: tf.sparse.from_dense(tf.constant(LABELS % 4)), None, tf.constant([6, 4, 5]), blank_index=-1
    ),
    "in_function": lambda tf: tf.function(
        lambda x: tf.nn.ctc_loss(tf.constant(LABELS), x, tf.constant([3, 1, 2]), tf.constant([6, 4, 5]))
    )(tf.constant(L)),
}


@pytest.mark.parametrize("name", sorted(CTC))
def test_ctc_loss_against_tf(name):
    check(CTC[name])


def test_ctc_loss_errors():
    check_raises(
        lambda tf: tf.nn.ctc_loss(
            tf.sparse.from_dense(tf.constant(LABELS)), tf.constant(L), None, tf.constant([6, 4, 5])
        )
    )


PARAMS = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


def _lookup(tf, combiner, weighted=True, max_norm=None):
    params = tf.Variable(PARAMS)
    ids = tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([0, 2, 1], tf.int64), [4, 2])
    weights = tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 3.0, 2.0], [4, 2]) if weighted else None
    with tf.GradientTape() as tape:
        out = tf.nn.embedding_lookup_sparse(params, ids, weights, combiner=combiner, max_norm=max_norm)
        loss = tf.reduce_sum(out * out)
    grad = tape.gradient(loss, params)
    return out, tf.convert_to_tensor(grad)


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn", None])
def test_embedding_lookup_sparse_against_tf(combiner, weighted):
    check(lambda tf: _lookup(tf, combiner, weighted))


def test_embedding_lookup_sparse_max_norm_and_errors():
    check(lambda tf: _lookup(tf, "mean", True, max_norm=1.0))
    check_raises(lambda tf: tf.nn.embedding_lookup_sparse(tf.constant(PARAMS), tf.constant([[0, 1]]), None))
    check_raises(
        lambda tf: tf.nn.embedding_lookup_sparse(
            tf.constant(PARAMS), tf.sparse.from_dense(tf.constant([[1, 2]])), None, combiner="max"
        )
    )
