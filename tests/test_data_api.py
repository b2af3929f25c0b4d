"""The rest of `tf.data` against real TensorFlow: element order, values, cardinality, specs, errors."""

import collections
import os
import threading
import time

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises

SEQS = [np.arange(n, dtype=np.int32) + 1 for n in (3, 1, 4, 2, 5, 0, 6)]


def _elements(ds):
    return list(ds.as_numpy_iterator())


def _ragged(tf):
    return tf.data.Dataset.from_generator(lambda: iter(SEQS), output_signature=tf.TensorSpec([None], tf.int32))


PIPELINES = {
    "concatenate": lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(10, 12)),
    "concatenate_shapes": lambda tf: tf.data.Dataset.from_tensors([1, 2]).concatenate(
        tf.data.Dataset.from_tensors([3, 4, 5])
    ),
    "flat_map": lambda tf: tf.data.Dataset.range(4).flat_map(lambda x: tf.data.Dataset.range(x)),
    "interleave": lambda tf: tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=2
    ),
    "interleave_block1": lambda tf: tf.data.Dataset.range(4).interleave(
        lambda x: tf.data.Dataset.range(10 * x, 10 * x + 3), cycle_length=3
    ),
    "interleave_parallel": lambda tf: tf.data.Dataset.range(5).interleave(
        lambda x: tf.data.Dataset.range(x),
        cycle_length=2,
        block_length=3,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    ),
    "padded_batch": lambda tf: _ragged(tf).padded_batch(3),
    "padded_batch_shapes": lambda tf: _ragged(tf).padded_batch(
        2, padded_shapes=[8], padding_values=-1, drop_remainder=True
    ),
    "padded_batch_tuple": lambda tf: tf.data.Dataset.zip((_ragged(tf), tf.data.Dataset.range(7))).padded_batch(
        4, padding_values=(np.int32(9), np.int64(0))
    ),
    "padded_batch_after_map": lambda tf: tf.data.Dataset.range(1, 6).map(lambda x: tf.range(x)).padded_batch(2),
    "padded_batch_fixed": lambda tf: tf.data.Dataset.from_tensor_slices(np.ones([5, 2], np.float32)).padded_batch(
        2, padded_shapes=[3]
    ),
    "window": lambda tf: tf.data.Dataset.range(10).window(3, shift=2).flat_map(lambda w: w.batch(3)),
    "window_drop": lambda tf: (
        tf.data.Dataset.range(10).window(4, shift=1, stride=2, drop_remainder=True).flat_map(lambda w: w.batch(4))
    ),
    "window_default_shift": lambda tf: tf.data.Dataset.range(7).window(3).flat_map(lambda w: w.batch(5)),
    "window_tuple": lambda tf: (
        tf.data.Dataset.zip((tf.data.Dataset.range(5), tf.data.Dataset.range(5, 10)))
        .window(2)
        .flat_map(lambda a, b: tf.data.Dataset.zip((a.batch(2), b.batch(2))))
    ),
    "shard": lambda tf: tf.data.Dataset.range(11).shard(3, 1),
    "shard_last": lambda tf: tf.data.Dataset.range(11).shard(4, 3),
    "take_while": lambda tf: tf.data.Dataset.range(10).take_while(lambda x: x < 4),
    "scan": lambda tf: tf.data.Dataset.range(5).scan(np.int64(0), lambda s, x: (s + x, s * 10)),
    "unique": lambda tf: tf.data.Dataset.from_tensor_slices([1, 3, 1, 2, 3, 4]).unique(),
    "unique_strings": lambda tf: tf.data.Dataset.from_tensor_slices(["b", "a", "b"]).unique(),
    "apply": lambda tf: tf.data.Dataset.range(6).apply(lambda ds: ds.map(lambda x: x * 3)),
    "group_by_window": lambda tf: tf.data.Dataset.range(10).group_by_window(
        key_func=lambda x: x % 3, reduce_func=lambda key, ds: ds.batch(2), window_size=2
    ),
    "group_by_window_func": lambda tf: tf.data.Dataset.range(12).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, ds: ds.batch(10), window_size_func=lambda key: key + 2
    ),
    "bucket": lambda tf: _ragged(tf).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], bucket_boundaries=[3, 5], bucket_batch_sizes=[2, 2, 2]
    ),
    "bucket_boundary_pad": lambda tf: (
        _ragged(tf)
        .take(4)
        .bucket_by_sequence_length(
            lambda x: tf.shape(x)[0],
            bucket_boundaries=[3, 5],
            bucket_batch_sizes=[2, 2, 2],
            pad_to_bucket_boundary=True,
            padding_values=-1,
        )
    ),
    "bucket_mapped": lambda tf: (
        tf.data.Dataset.from_tensor_slices(tf.constant([1, 2, 3, 4, 5, 6], tf.int64))
        .map(lambda x: tf.fill([x], x))
        .bucket_by_sequence_length(lambda x: tf.shape(x)[0], bucket_boundaries=[3], bucket_batch_sizes=[2, 2])
    ),
    "bucket_experimental": lambda tf: _ragged(tf).apply(
        tf.data.experimental.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [4], [3, 3], drop_remainder=True)
    ),
    "experimental_transforms": lambda tf: (
        tf.data.Dataset.range(8)
        .apply(tf.data.experimental.scan(np.int64(1), lambda s, x: (s * 2, s + x)))
        .apply(tf.data.experimental.take_while(lambda x: x < 40))
    ),
    "counter": lambda tf: tf.data.Dataset.counter(5, 3).take(4),
    "choose": lambda tf: tf.data.Dataset.choose_from_datasets(
        [tf.data.Dataset.range(3), tf.data.Dataset.range(100, 103)],
        tf.data.Dataset.from_tensor_slices(np.array([0, 1, 1, 0, 0, 1, 0], np.int64)),
    ),
    "enumerate_zip_range": lambda tf: tf.data.Dataset.zip(
        (tf.data.Dataset.range(3), tf.data.Dataset.range(1, 7, 2))
    ).enumerate(),
    "with_options": lambda tf: tf.data.Dataset.range(3).with_options(tf.data.Options()).map(lambda x: x + 1),
    "strings_batch": lambda tf: tf.data.Dataset.from_tensor_slices(["a", "bb", "ccc"]).batch(2),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipelines_match_tf(name):
    pipeline = PIPELINES[name]

    def body(tf):
        ds = pipeline(tf)
        return _elements(ds), ds.cardinality(), ds.element_spec

    check(body)


def test_reduce_cardinality_and_single_element():
    check(lambda tf: tf.data.Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x))
    check(lambda tf: tf.data.experimental.cardinality(tf.data.Dataset.range(3).repeat()))
    check(
        lambda tf: (
            tf.data.INFINITE_CARDINALITY,
            tf.data.UNKNOWN_CARDINALITY,
            tf.data.experimental.INFINITE_CARDINALITY,
            tf.data.experimental.UNKNOWN_CARDINALITY,
            tf.data.AUTOTUNE,
            tf.data.experimental.AUTOTUNE,
        )
    )
    check(lambda tf: tf.data.Dataset.range(4).window(3).cardinality())
    check(lambda tf: tf.data.Dataset.range(10).window(3, 2, drop_remainder=True).cardinality())
    check(lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(2).repeat()).cardinality())
    check(
        lambda tf: tf.data.Dataset.range(4).filter(lambda x: x > 1).concatenate(tf.data.Dataset.range(2)).cardinality()
    )
    check(lambda tf: tf.data.Dataset.from_tensors([1, 2]).get_single_element())
    check(lambda tf: tf.data.experimental.get_single_element(tf.data.Dataset.range(1)))
    check_raises(lambda tf: tf.data.Dataset.range(2).get_single_element())
    check_raises(lambda tf: tf.data.Dataset.range(0).get_single_element())


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.int32))),
        lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.zip((tf.data.Dataset.range(3),) * 2)),
        lambda tf: tf.data.Dataset.range(3).shard(0, 0),
        lambda tf: tf.data.Dataset.range(3).shard(2, 2),
        lambda tf: tf.data.Dataset.range(3).padded_batch(0),
        lambda tf: _elements(_ragged(tf).padded_batch(2, padded_shapes=[2])),
        lambda tf: tf.data.Dataset.range(3).window(0),
        lambda tf: tf.data.Dataset.range(3).group_by_window(lambda x: x, lambda k, d: d),
        lambda tf: tf.data.Dataset.range(3).apply(lambda ds: 3),
        lambda tf: _ragged(tf).bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3], [2]),
        lambda tf: tf.data.Dataset.from_tensor_slices(np.ones([3], np.float32)).unique(),
        lambda tf: _elements(tf.data.Dataset.range(3).take_while(lambda x: x)),
        lambda tf: tf.data.Dataset.choose_from_datasets(
            [tf.data.Dataset.range(3)], tf.data.Dataset.range(2).map(lambda x: tf.cast(x, tf.int32))
        ),
    ],
)
def test_bad_input_raises_tf_error_class(bad):
    check_raises(bad)


def test_new_transformations_iterate_inside_function():
    def body(tf):
        ds = tf.data.Dataset.range(1, 7).map(lambda x: tf.range(x)).padded_batch(2).prefetch(2)
        it = iter(ds)
        inter = iter(
            tf.data.Dataset.range(6).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2)
        )

        @tf.function
        def step():
            return tf.reduce_sum(next(it)), next(inter)

        return [step() for _ in range(3)]

    check(body)


def test_assert_cardinality_ignore_errors_random():
    check(lambda tf: tf.data.Dataset.range(3).apply(tf.data.experimental.assert_cardinality(3)).cardinality())
    check(lambda tf: _elements(tf.data.Dataset.range(3).apply(tf.data.experimental.assert_cardinality(3))))
    check_raises(lambda tf: _elements(tf.data.Dataset.range(3).apply(tf.data.experimental.assert_cardinality(5))))
    check_raises(lambda tf: _elements(tf.data.Dataset.range(7).apply(tf.data.experimental.assert_cardinality(5))))

    def errors(tf):
        ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0]).map(
            lambda x: tf.debugging.check_numerics(1 / x, "bad")
        )
        return (
            _elements(ds.ignore_errors()),
            _elements(ds.apply(tf.data.experimental.ignore_errors())),
            ds.ignore_errors().cardinality(),
        )

    check(errors)
    check(lambda tf: (tf.data.Dataset.random(seed=4).element_spec, tf.data.Dataset.random(seed=4).cardinality()))
    stream = tapeshim.data.Dataset.random(seed=4).take(50)
    values = list(stream.as_numpy_iterator())
    assert len(set(values)) == 50 and all(0 <= v < 2**32 for v in values)
    assert values == list(stream.as_numpy_iterator())  # the same numbers on every pass, as TF by default


def _pairs(n):
    for i in range(int(n)):
        yield {"x": np.arange(i % 3, dtype=np.float32), "y": i}, np.int64(i * 2)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.data.Dataset.from_generator(
            _pairs,
            args=(4,),
            output_signature=(
                {"x": tf.TensorSpec([None], tf.float32), "y": tf.TensorSpec([], tf.int32)},
                tf.TensorSpec([], tf.int64),
            ),
        ),
        lambda tf: tf.data.Dataset.from_generator(
            lambda: iter([[1, 2], [3, 4]]), output_types=tf.int32, output_shapes=[2]
        ),
        lambda tf: tf.data.Dataset.from_generator(lambda: iter([1.5, 2.5]), output_types=tf.float64),
    ],
)
def test_from_generator_signatures(make):
    def body(tf):
        ds = make(tf)
        return _elements(ds), ds.element_spec, ds.cardinality()

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: _elements(
            tf.data.Dataset.from_generator(lambda: iter([[1, 2, 3]]), output_signature=tf.TensorSpec([2], tf.int32))
        ),
        lambda tf: _elements(
            tf.data.Dataset.from_generator(lambda: iter(["a"]), output_signature=tf.TensorSpec([], tf.int32))
        ),
        lambda tf: tf.data.Dataset.from_generator(lambda: iter([1])),
    ],
)
def test_from_generator_errors(bad):
    check_raises(bad)


def test_options():
    def body(tf):
        options = tf.data.Options()
        options.deterministic = False
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
        options.threading.private_threadpool_size = 4
        ds = tf.data.Dataset.range(3).with_options(options)
        more = tf.data.Options()
        more.experimental_optimization.map_parallelization = True
        merged = ds.with_options(more).options()
        return (
            merged.deterministic,
            int(merged.experimental_distribute.auto_shard_policy),
            merged.threading.private_threadpool_size,
            merged.experimental_optimization.map_parallelization,
            tf.data.Options().deterministic,
            _elements(ds),
        )

    check(body)

    def bad(tf):
        options = tf.data.Options()
        options.not_an_option = 1

    check_raises(bad)


def test_list_files_and_make_csv_dataset(tmp_path):
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    pattern = str(tmp_path / "*.txt")
    check(lambda tf: _elements(tf.data.Dataset.list_files(pattern, shuffle=False)))
    check(lambda tf: sorted(_elements(tf.data.Dataset.list_files([pattern, str(tmp_path / "*.csv")]))))
    check(lambda tf: tf.data.Dataset.list_files(pattern, shuffle=False).element_spec)
    check_raises(lambda tf: tf.data.Dataset.list_files(str(tmp_path / "*.none")))
    csv_path = tmp_path / "data.csv"
    csv_path.write_text(
        'age,name,score,label\n31,ann,1.5,0\n22,"bo, b",2.25,1\n45,cy,-3,1\n18,dee,4e2,0\n50,ed,0.5,1\n'
    )
    path = str(csv_path)
    check(
        lambda tf: _elements(
            tf.data.experimental.make_csv_dataset(path, 2, label_name="label", num_epochs=1, shuffle=False)
        )
    )
    check(
        lambda tf: _elements(
            tf.data.experimental.make_csv_dataset(path, 3, select_columns=["name", "age"], num_epochs=2, shuffle=False)
        )
    )
    check(
        lambda tf: _elements(
            tf.data.experimental.make_csv_dataset(
                path, 4, column_defaults=[0, "", 0.0, 0], num_epochs=1, shuffle=False, label_name="label"
            )
        )
    )
    check(lambda tf: tf.data.experimental.make_csv_dataset(path, 2, num_epochs=1, shuffle=False).element_spec)
    shuffled = tapeshim.data.experimental.make_csv_dataset(path, 5, label_name="label", num_epochs=1)
    rows = [sorted(batch[0]["age"].numpy().tolist()) for batch in shuffled]
    assert rows == [[18, 22, 31, 45, 50]]
    check_raises(lambda tf: tf.data.experimental.make_csv_dataset(path, 2, label_name="nope"))


def test_sample_from_datasets_distribution():
    check(lambda tf: tf.data.Dataset.sample_from_datasets([tf.data.Dataset.range(3)] * 2).element_spec)
    ds = tapeshim.data.Dataset.sample_from_datasets(
        [tapeshim.data.Dataset.range(0, 1).repeat(), tapeshim.data.Dataset.range(1, 2).repeat()],
        weights=[0.2, 0.8],
        seed=1,
    )
    values = np.array(list(ds.take(2000).as_numpy_iterator()))
    assert 0.75 < values.mean() < 0.85
    both = tapeshim.data.experimental.sample_from_datasets(
        [tapeshim.data.Dataset.range(3), tapeshim.data.Dataset.range(10, 13)]
    )
    assert sorted(both.as_numpy_iterator()) == [0, 1, 2, 10, 11, 12]


def test_rejection_resample_distribution():
    def spec(tf):
        ds = tf.data.Dataset.range(20).map(lambda x: x % 4)
        resampled = ds.rejection_resample(lambda x: tf.cast(x, tf.int32), [0.1, 0.2, 0.3, 0.4], seed=1)
        return resampled.element_spec, resampled.cardinality()

    check(spec)
    tf = tapeshim
    source = tf.data.Dataset.range(4000).map(lambda x: x % 4)
    for initial in ([0.25] * 4, None):
        kept = source.apply(
            tf.data.experimental.rejection_resample(
                lambda x: tf.cast(x, tf.int32), [0.1, 0.2, 0.3, 0.4], initial_dist=initial, seed=2
            )
        )
        classes = np.array([c for c, _ in kept.as_numpy_iterator()])
        np.testing.assert_allclose(np.bincount(classes) / len(classes), [0.1, 0.2, 0.3, 0.4], atol=0.03)


def test_prefetch_overlaps_with_the_consumer():
    """prefetch produces in a background thread: a slow source and a slow consumer overlap."""
    delay = 0.05

    def slow_source():
        for i in range(6):
            time.sleep(delay)
            yield np.int64(i)

    def consume(ds):
        start = time.perf_counter()
        threads = set()
        for _ in ds:
            threads.add(threading.current_thread().name)
            time.sleep(delay)
        return time.perf_counter() - start

    spec = tapeshim.TensorSpec([], tapeshim.int64)
    plain = consume(tapeshim.data.Dataset.from_generator(slow_source, output_signature=spec))
    overlapped = consume(tapeshim.data.Dataset.from_generator(slow_source, output_signature=spec).prefetch(2))
    assert overlapped < plain * 0.8, (plain, overlapped)


def test_csv_types_are_inferred_as_tf(tmp_path):
    path = tmp_path / "types.csv"
    path.write_text("i,big,f,s,mixed\n1,3000000000,1.5,x,1\n2,4,2,y,z\n")
    check(lambda tf: tf.data.experimental.make_csv_dataset(str(path), 2, num_epochs=1, shuffle=False).element_spec)
    check(lambda tf: _elements(tf.data.experimental.make_csv_dataset(str(path), 2, num_epochs=1, shuffle=False)))


assert collections and os  # used by tests that build OrderedDicts and paths
