"""`tf.data.Dataset` (in-memory subset) against real TensorFlow."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises

FEATURES = np.arange(20, dtype=np.float32).reshape(10, 2)
LABELS = np.arange(10, dtype=np.int32)


def _elements(ds):
    return list(ds.as_numpy_iterator())


@pytest.mark.parametrize(
    "pipeline",
    [
        lambda tf: tf.data.Dataset.from_tensor_slices(FEATURES),
        lambda tf: tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(4),
        lambda tf: tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(4, drop_remainder=True),
        lambda tf: tf.data.Dataset.from_tensor_slices({"x": FEATURES, "y": LABELS}).batch(3),
        lambda tf: tf.data.Dataset.from_tensors(FEATURES),
        lambda tf: tf.data.Dataset.range(5),
        lambda tf: tf.data.Dataset.range(2, 11, 3),
        lambda tf: tf.data.Dataset.range(10).map(lambda x: x * 2).filter(lambda x: x % 3 == 0),
        lambda tf: tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).map(lambda x, y: (x * 2.0, y + 1)),
        lambda tf: tf.data.Dataset.range(3).repeat(2),
        lambda tf: tf.data.Dataset.range(10).skip(3).take(4),
        lambda tf: tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(5, 10))),
        lambda tf: tf.data.Dataset.range(4).enumerate(start=10),
        lambda tf: tf.data.Dataset.range(6).cache().prefetch(tf.data.AUTOTUNE),
        lambda tf: tf.data.Dataset.range(7).batch(3).unbatch(),
        lambda tf: tf.data.Dataset.range(100).take(-1).take(3),
    ],
)
def test_pipelines_give_tf_elements_and_cardinality(pipeline):
    def body(tf):
        ds = pipeline(tf)
        return _elements(ds), ds.cardinality(), ds.element_spec

    check(body)


def test_iteration_yields_tensors_and_len():
    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(4)
        first = next(iter(ds))
        return isinstance(first[0], tf.Tensor), first, len(ds), len(tf.data.Dataset.range(3).repeat(2))

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.data.Dataset.from_tensor_slices((FEATURES, LABELS[:3])),
        lambda tf: len(tf.data.Dataset.range(3).repeat()),
        lambda tf: len(tf.data.Dataset.range(3).filter(lambda x: x > 0)),
    ],
)
def test_bad_input(bad):
    check_raises(bad)


def test_shuffle_is_a_permutation_and_seeded():
    ds = tapeshim.data.Dataset.range(50)
    first = _elements(ds.shuffle(10, seed=3))
    assert sorted(first) == list(range(50)) and first != list(range(50))
    tapeshim.random.set_seed(1)
    a = _elements(ds.shuffle(10, seed=3))
    tapeshim.random.set_seed(1)
    b = _elements(ds.shuffle(10, seed=3))
    assert a == b
    reshuffled = ds.shuffle(50, seed=4)
    assert _elements(reshuffled) != _elements(reshuffled)
    fixed = ds.shuffle(50, seed=4, reshuffle_each_iteration=False)
    assert _elements(fixed) == _elements(fixed)


def test_training_loop_over_a_dataset_matches_tf():
    def body(tf):
        w = tf.Variable(tf.zeros([2, 1]))
        ds = tf.data.Dataset.from_tensor_slices((FEATURES / 20.0, LABELS.astype(np.float32) / 10.0)).batch(5)
        losses = []
        for _ in range(3):
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)[:, 0] - y))
                w.assign_sub(0.5 * tape.gradient(loss, w))
                losses.append(loss)
        return losses, w

    check(body)


def test_a_mapped_dataset_spec_has_tfs_unknown_sizes():
    """TF traces a map function for its source's spec: a batched dataset's mapped spec keeps the batch size
    unknown (it was the first batch's), so a step with `input_signature=ds.element_spec` takes the last,
    smaller batch."""

    def body(tf):
        rows = (np.arange(20, dtype=np.float32).reshape(10, 2), np.arange(10))
        batched = tf.data.Dataset.from_tensor_slices(rows).batch(4)
        mapped = batched.map(lambda a, b: (a * 2, tf.cast(b, tf.float32)))
        runs = []

        @tf.function(input_signature=mapped.element_spec)
        def step(a, b):
            runs.append(1)
            return tf.reduce_sum(a) + tf.reduce_sum(b)

        totals = [step(a, b) for a, b in mapped]
        shaped = tf.data.Dataset.range(7).batch(3).map(lambda x: {"a": x[:2], "n": tf.shape(x)[0], "r": x[:, None]})
        return mapped.element_spec, totals, len(runs), shaped.element_spec, batched.map(lambda a, b: a).element_spec

    check(body)


def test_iterating_windows_gives_datasets():
    def body(tf):
        windows = [[int(x) for x in window] for window in tf.data.Dataset.range(7).window(3, shift=2)]
        pairs = tf.data.Dataset.from_tensor_slices((tf.range(5), tf.range(5) * 10)).window(2)
        columns = [([int(x) for x in a], [int(y) for y in b]) for a, b in pairs]
        first = next(iter(tf.data.Dataset.range(4).window(2, drop_remainder=True)))
        return windows, columns, [int(x) for x in first], str(first.element_spec)

    check(body)


def test_windows_have_no_numpy_iterator():
    check_raises(lambda tf: tf.data.Dataset.range(7).window(3).as_numpy_iterator())


def test_a_py_function_map_has_tfs_spec_and_set_shape_gives_it_one():
    def body(tf):
        def ones(i):
            return tf.py_function(lambda j: np.ones(int(j) + 1, np.float32) * float(j), [i], tf.float32)

        def shaped(i):
            y = ones(i)
            y.set_shape([None])
            return y, tf.py_function(lambda j: np.float32(j), [i], tf.float32)

        unknown = tf.data.Dataset.range(4).map(ones)
        known = tf.data.Dataset.range(4).map(shaped)
        padded = known.map(lambda y, _: y).padded_batch(2)  # (padded_batch needs every component's rank)
        return (
            [str(unknown.element_spec), str(unknown.batch(2).element_spec), str(known.element_spec)],
            str(padded.element_spec),
            list(padded),
        )

    check(body)


def test_set_shape_checks_compatibility():
    def body(tf):
        t = tf.constant([[1.0, 2.0]])
        t.set_shape([1, None])
        t.set_shape(None)
        return t

    check(body)
    check_raises(lambda tf: tf.constant([1.0, 2.0]).set_shape([3]), messages=True)


def test_a_list_a_map_function_returns_is_a_tuple_of_components():
    def body(tf):
        mixed = tf.data.Dataset.range(3).map(lambda x: [x, tf.cast(x, tf.float32) / 2.0])
        nested = tf.data.Dataset.range(2).map(lambda x: [x, [x, x + 1]])
        csv = tf.data.Dataset.from_tensor_slices(["1,2.5,x", "3,4.5,y"]).map(
            lambda line: tf.io.decode_csv(line, [0, 0.0, ""])
        )
        return [
            (dataset.element_spec, list(dataset.as_numpy_iterator()))
            for dataset in (mixed, nested, csv, mixed.batch(2))
        ]

    check(body)
