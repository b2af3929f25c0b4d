"""broadcast_static_shape, broadcast_dynamic_shape, the candidate samplers (tf.random.uniform_candidate_sampler,
log_uniform_candidate_sampler, fixed_unigram_candidate_sampler), tf.nn.nce_loss, tf.nn.sampled_softmax_loss and
tf.data.experimental.Counter against real TF.

Sampled values cannot match TF's random streams: the sampler tests compare shapes, dtypes, ranges, distinctness and
the expected counts where they are deterministic (`unique=False`: `num_sampled * P(class)`); the losses are compared
with `sampled_values` given."""

import math

import numpy as np
import pytest

from oracle import check, check_raises

# -- broadcast_static_shape / broadcast_dynamic_shape -------------------------------------------------------------
_STATIC = [
    ([2, 1], [3]),
    ([2, None], [3]),
    ([None, 1], [None]),
    ([1], [None]),
    ([None], [4]),
    ([5, 1, 3], [2, 1]),
    ([], [2, 3]),
    ([0, 1], [1, 4]),
    (None, [3]),
    ([2, 3], None),
]


@pytest.mark.parametrize("x, y", _STATIC)
def test_broadcast_static_shape(x, y):
    check(lambda tf: tf.broadcast_static_shape(tf.TensorShape(x), tf.TensorShape(y)))


@pytest.mark.parametrize("x, y", [([2, 3], [4]), ([2, None, 3], [5, 2])])
def test_broadcast_static_shape_incompatible(x, y):
    check_raises(lambda tf: tf.broadcast_static_shape(tf.TensorShape(x), tf.TensorShape(y)), messages=True)


def test_broadcast_static_shape_wants_tensor_shapes():
    check_raises(lambda tf: tf.broadcast_static_shape([2, 1], tf.TensorShape([3])))


_DYNAMIC = {
    "lists": lambda tf: tf.broadcast_dynamic_shape([2, 1], [3]),
    "int64": lambda tf: tf.broadcast_dynamic_shape(tf.constant([4, 1], tf.int64), [1, 4, 3]),
    "empty": lambda tf: tf.broadcast_dynamic_shape(tf.constant([], tf.int32), [4]),
    "zero": lambda tf: tf.broadcast_dynamic_shape([0, 1], [3]),
    "shapes": lambda tf: tf.broadcast_dynamic_shape(tf.shape(tf.zeros([2, 1])), tf.shape(tf.zeros([5]))),
}


@pytest.mark.parametrize("name", sorted(_DYNAMIC))
def test_broadcast_dynamic_shape(name):
    check(_DYNAMIC[name])


def test_broadcast_dynamic_shape_in_a_function_of_unknown_shapes():
    def body(tf):
        f = tf.function(
            lambda a, b: tf.broadcast_dynamic_shape(tf.shape(a), tf.shape(b)),
            input_signature=[tf.TensorSpec([None, None]), tf.TensorSpec([None])],
        )
        return f(tf.zeros([2, 1]), tf.zeros([5])), f(tf.zeros([3, 4]), tf.zeros([1]))

    check(body)


_DYNAMIC_ERRORS = {
    "incompatible": lambda tf: tf.broadcast_dynamic_shape([2, 3], [4]),
    "mixed_dtypes": lambda tf: tf.broadcast_dynamic_shape(tf.constant([2], tf.int64), tf.constant([3])),
    "float": lambda tf: tf.broadcast_dynamic_shape([2.0, 3.0], [4]),
    "matrix": lambda tf: tf.broadcast_dynamic_shape([[2, 3]], [4]),
    "in_a_function": lambda tf: tf.function(
        lambda a: tf.broadcast_dynamic_shape(tf.shape(a), [3]), input_signature=[tf.TensorSpec([None])]
    )(tf.zeros([2])),
}


@pytest.mark.parametrize("name", sorted(_DYNAMIC_ERRORS))
def test_broadcast_dynamic_shape_errors(name):
    check_raises(_DYNAMIC_ERRORS[name])


# -- candidate samplers ----------------------------------------------------------------------------------------
_TRUE = [[1, 4], [0, 9], [7, 2]]


def _log_uniform_p(k, range_max):
    return (np.log(np.asarray(k, np.float64) + 2) - np.log(np.asarray(k, np.float64) + 1)) / math.log(range_max + 1)


def _summary(result, range_max, unique):
    """What two samplers' results share: types, dtypes, shapes, range, distinctness."""
    sampled, true_count, sampled_count = (np.asarray(t.numpy()) for t in result)
    return (
        type(result).__name__,
        [(t.dtype.name, tuple(t.shape)) for t in result],
        bool(np.all((sampled >= 0) & (sampled < range_max))),
        bool(len(set(sampled.tolist())) == len(sampled)) if unique else None,
        bool(np.all((true_count > 0) & np.isfinite(true_count))),
        bool(np.all((sampled_count > 0) & np.isfinite(sampled_count))),
    )


_SAMPLERS = {
    "log_uniform": lambda tf, *a, **k: tf.random.log_uniform_candidate_sampler(*a, **k),
    "uniform": lambda tf, *a, **k: tf.random.uniform_candidate_sampler(*a, **k),
    "fixed_unigram": lambda tf, *a, **k: tf.random.fixed_unigram_candidate_sampler(
        *a, unigrams=list(range(1, 11)), **k
    ),
    "nn_fixed_unigram": lambda tf, *a, **k: tf.nn.fixed_unigram_candidate_sampler(*a, unigrams=list(range(1, 11)), **k),
}


@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize("kind", sorted(_SAMPLERS))
def test_sampler_outputs(kind, unique):
    def body(tf):
        classes = tf.constant(_TRUE, tf.int64)
        eager = _SAMPLERS[kind](tf, classes, 2, 6, unique, 10)
        traced = tf.function(lambda c: _SAMPLERS[kind](tf, c, 2, 6, unique, 10))(classes)
        listed = _SAMPLERS[kind](tf, _TRUE, 2, 6, unique, 10, seed=3)
        return [_summary(r, 10, unique) for r in (eager, traced, listed)]

    check(body)


@pytest.mark.parametrize("kind", sorted(_SAMPLERS))
def test_expected_counts_without_unique(kind):
    """`unique=False`: every expected count is `num_sampled * P(class)` (the true ones compared with TF's)."""

    def body(tf):
        result = _SAMPLERS[kind](tf, tf.constant(_TRUE, tf.int64), 2, 5, False, 10)
        sampled = np.asarray(result.sampled_candidates.numpy())
        again = _SAMPLERS[kind](tf, tf.constant(sampled.reshape(-1, 1)), 1, 5, False, 10).true_expected_count
        return result.true_expected_count, bool(
            np.allclose(result.sampled_expected_count.numpy(), np.asarray(again.numpy()).reshape(-1))
        )

    check(body)


def test_log_uniform_expected_counts_follow_the_formula():
    def body(tf):
        result = tf.random.log_uniform_candidate_sampler(tf.constant(_TRUE, tf.int64), 2, 7, False, 10)
        expected = 7 * _log_uniform_p(result.sampled_candidates.numpy(), 10)
        return bool(np.allclose(result.sampled_expected_count.numpy(), expected, rtol=1e-6)), bool(
            np.allclose(result.true_expected_count.numpy(), 7 * _log_uniform_p(_TRUE, 10), rtol=1e-6)
        )

    check(body)


def test_unique_draws_of_the_whole_range():
    """`unique=True` with `num_sampled == range_max`: a permutation; each expected count is
    `1 - (1 - P) ** num_tries` (or `num_sampled * P` when no draw was rejected)."""

    def body(tf):
        result = tf.random.uniform_candidate_sampler(tf.constant([[0]], tf.int64), 1, 6, True, 6)
        counts = np.asarray(result.sampled_expected_count.numpy())
        tries = np.log1p(-counts) / np.log1p(-1 / 6)
        consistent = bool(np.allclose(counts, 1.0)) or bool(np.allclose(tries, np.round(tries[0]), atol=1e-3))
        return sorted(result.sampled_candidates.numpy().tolist()), bool(np.allclose(counts, counts[0])), consistent

    check(body)


def test_log_uniform_frequencies():
    def body(tf):
        sampled = tf.random.log_uniform_candidate_sampler(tf.constant([[0]], tf.int64), 1, 20000, False, 10)[0]
        frequencies = np.bincount(sampled.numpy(), minlength=10) / 20000
        return bool(np.allclose(frequencies, _log_uniform_p(np.arange(10), 10), atol=0.015))

    check(body)


def test_seeded_samplers_repeat_and_functions_draw_anew():
    def body(tf):
        tf.random.set_seed(5)
        first = tf.random.log_uniform_candidate_sampler([[1]], 1, 8, True, 1000)[0]
        tf.random.set_seed(5)
        second = tf.random.log_uniform_candidate_sampler([[1]], 1, 8, True, 1000)[0]
        f = tf.function(lambda: tf.random.uniform_candidate_sampler([[1]], 1, 8, True, 100000)[0])
        return bool(np.array_equal(first.numpy(), second.numpy())), bool(np.array_equal(f().numpy(), f().numpy()))

    check(body)


_UNIGRAMS = {
    "plain": dict(range_max=4, unigrams=[1.0, 2.0, 3.0, 4.0]),
    "distorted_reserved": dict(range_max=6, unigrams=[1.0, 2.0, 3.0, 4.0], num_reserved_ids=2, distortion=0.5),
    "sharded": dict(range_max=3, unigrams=[1.0, 2.0, 3.0, 4.0], num_reserved_ids=2, num_shards=2, shard=1),
    "zero_weights": dict(range_max=4, unigrams=[0.0, 5.0, 0.0, 1.0]),
}


@pytest.mark.parametrize("name", sorted(_UNIGRAMS))
def test_fixed_unigram_expected_counts(name):
    def body(tf):
        options = _UNIGRAMS[name]
        classes = tf.constant([[0, 1], [2, 1]], tf.int64)
        result = tf.random.fixed_unigram_candidate_sampler(classes, 2, 50, False, **options)
        weights = np.zeros(options["range_max"])
        again = tf.random.fixed_unigram_candidate_sampler(
            tf.range(options["range_max"], dtype=tf.int64)[None], options["range_max"], 50, False, **options
        ).true_expected_count
        weights = np.asarray(again.numpy()).reshape(-1)
        sampled = result.sampled_candidates.numpy()
        return result.true_expected_count, again, bool(np.all(weights[sampled] > 0))

    check(body)


def test_fixed_unigram_vocab_file(tmp_path):
    path = tmp_path / "vocab.csv"
    path.write_text("the,10\nof,5\nand,3\nzebra,2\n")

    def body(tf):
        result = tf.random.fixed_unigram_candidate_sampler(
            tf.constant([[0], [3]], tf.int64), 1, 4, False, 4, vocab_file=str(path), distortion=0.75
        )
        return result.true_expected_count

    check(body)


_SAMPLER_ERRORS = {
    "int32_classes": lambda tf: tf.random.log_uniform_candidate_sampler(tf.constant([[1]]), 1, 3, True, 10),
    "vector_classes": lambda tf: tf.random.log_uniform_candidate_sampler([1, 2], 1, 3, True, 10),
    "columns": lambda tf: tf.random.uniform_candidate_sampler([[1], [2]], 2, 3, True, 10),
    "range_too_small": lambda tf: tf.random.uniform_candidate_sampler([[1]], 1, 30, True, 10),
    "class_out_of_range": lambda tf: tf.random.log_uniform_candidate_sampler([[1], [20]], 1, 3, False, 10),
    "negative_class": lambda tf: tf.random.uniform_candidate_sampler([[-1]], 1, 3, False, 10),
    "num_sampled_zero": lambda tf: tf.random.log_uniform_candidate_sampler([[1]], 1, 0, False, 10),
    "range_max_zero": lambda tf: tf.random.uniform_candidate_sampler([[0]], 1, 3, False, 0),
    "num_true_zero": lambda tf: tf.random.uniform_candidate_sampler([[0]], 0, 3, False, 10),
    "no_unigrams": lambda tf: tf.random.fixed_unigram_candidate_sampler([[1]], 1, 3, False, 4),
    "unigram_count": lambda tf: tf.random.fixed_unigram_candidate_sampler([[1]], 1, 3, False, 5, unigrams=[1, 2]),
    "class_out_of_range_in_a_function": lambda tf: tf.function(
        lambda c: tf.random.log_uniform_candidate_sampler(c, 1, 3, True, 10)
    )(tf.constant([[1], [20]], tf.int64)),
}


@pytest.mark.parametrize("name", sorted(_SAMPLER_ERRORS))
def test_sampler_errors(name):
    check_raises(_SAMPLER_ERRORS[name])


# -- nce_loss / sampled_softmax_loss ----------------------------------------------------------------------------
_RNG = np.random.default_rng(11)
_CLASSES, _DIM = 7, 3
_WEIGHTS = _RNG.normal(size=(_CLASSES, _DIM))
_BIASES = _RNG.normal(size=_CLASSES)
_INPUTS = _RNG.normal(size=(3, _DIM))
_LABELS_1 = np.array([[1], [4], [6]])
_LABELS_2 = np.array([[1, 2], [4, 0], [6, 3]])
_SAMPLED = np.array([0, 4, 5, 2])  # 4 hits example 1 (num_true 1); 0, 4 and 2 hit for num_true 2


def _sampled_values(tf, labels, dtype):
    p = _log_uniform_p(labels, _CLASSES) * 4
    q = _log_uniform_p(_SAMPLED, _CLASSES) * 4
    return (tf.constant(_SAMPLED, tf.int64), tf.constant(p, dtype), tf.constant(q, dtype))


def _loss_body(loss_name, num_true, remove, dtype="float32", shards=False, label_dtype="int64"):
    def body(tf):
        d = getattr(tf, dtype)
        labels = tf.constant(_LABELS_1 if num_true == 1 else _LABELS_2, getattr(tf, label_dtype))
        w, b, x = tf.constant(_WEIGHTS, d), tf.constant(_BIASES, d), tf.constant(_INPUTS, d)
        with tf.GradientTape() as tape:
            tape.watch([w, b, x])
            weights = [w[:4], w[4:]] if shards else w
            loss = getattr(tf.nn, loss_name)(
                weights,
                b,
                labels,
                x,
                num_sampled=4,
                num_classes=_CLASSES,
                num_true=num_true,
                sampled_values=_sampled_values(tf, labels.numpy(), d),
                remove_accidental_hits=remove,
            )
            total = tf.reduce_sum(loss * tf.constant([1.0, 2.0, 3.0], d))
        grads = tape.gradient(total, [w, b, x])
        return loss, [tf.convert_to_tensor(g) for g in grads]

    return body


@pytest.mark.parametrize("remove", [False, True])
@pytest.mark.parametrize("num_true", [1, 2])
@pytest.mark.parametrize("loss_name", ["nce_loss", "sampled_softmax_loss"])
def test_sampled_losses(loss_name, num_true, remove):
    check(_loss_body(loss_name, num_true, remove))


@pytest.mark.parametrize("loss_name", ["nce_loss", "sampled_softmax_loss"])
def test_sampled_losses_float64_sharded_int32_labels(loss_name):
    check(_loss_body(loss_name, 2, True, dtype="float64", shards=True, label_dtype="int32"))


@pytest.mark.parametrize("loss_name", ["nce_loss", "sampled_softmax_loss"])
def test_sampled_losses_default_sampler(loss_name):
    def body(tf):
        w, b, x = tf.constant(_WEIGHTS, tf.float32), tf.constant(_BIASES, tf.float32), tf.constant(_INPUTS, tf.float32)
        with tf.GradientTape() as tape:
            tape.watch([w, b, x])
            loss = getattr(tf.nn, loss_name)(w, b, _LABELS_1, x, num_sampled=3, num_classes=_CLASSES)
        grads = tape.gradient(loss, [w, b, x])
        return (
            loss.dtype.name,
            tuple(loss.shape),
            bool(np.all(np.isfinite(loss.numpy()))),
            [tuple(tf.convert_to_tensor(g).shape) for g in grads],
        )

    check(body)


def test_sampled_softmax_loss_in_a_function():
    def body(tf):
        w = tf.Variable(_WEIGHTS.astype(np.float32))
        b = tf.Variable(_BIASES.astype(np.float32))

        @tf.function
        def step(x, labels):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(
                    tf.nn.sampled_softmax_loss(
                        w, b, labels, x, 4, _CLASSES, sampled_values=_sampled_values(tf, _LABELS_1, tf.float32)
                    )
                )
            return loss, [tf.convert_to_tensor(g) for g in tape.gradient(loss, [w, b])]

        return step(tf.constant(_INPUTS, tf.float32), tf.constant(_LABELS_1, tf.int64))

    check(body)


def test_nce_loss_mismatched_dtypes():
    def body(tf):
        return tf.nn.nce_loss(
            tf.constant(_WEIGHTS, tf.float64),
            tf.constant(_BIASES, tf.float64),
            _LABELS_1,
            tf.constant(_INPUTS, tf.float64),
            4,
            _CLASSES,
            sampled_values=_sampled_values(tf, _LABELS_1, tf.float32),
        )

    check_raises(body)


# -- tf.data.experimental.Counter -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, kwargs", [((), {}), ((5,), {}), ((3, -2), {}), ((), {"start": 1, "step": 4, "dtype": "int32"})]
)
def test_counter(args, kwargs):
    def body(tf):
        options = dict(kwargs)
        if "dtype" in options:
            options["dtype"] = getattr(tf, options["dtype"])
        dataset = tf.data.experimental.Counter(*args, **options)
        return dataset.element_spec, list(dataset.take(4))

    check(body)
