"""The input pipeline against `tf.data`: batches made on the host, `prefetch` in a background thread
(TF's element order and values), and Keras metrics of one configuration sharing compiled programs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

import tapeshim
from oracle import check, check_raises
from tapeshim._src import keras_bridge


def _features(count=10):
    return np.arange(count * 3, dtype=np.float32).reshape(count, 3), np.arange(count, dtype=np.int64)


def test_batches_of_slices_over_several_epochs():
    def body(tf):
        x, y = _features()
        dataset = tf.data.Dataset.from_tensor_slices({"x": x, "y": y}).batch(4).repeat(2)
        return [element for element in dataset], dataset.cardinality()

    check(body)


def test_batches_with_drop_remainder_take_and_skip():
    def body(tf):
        x, y = _features(11)
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).skip(1).batch(3, drop_remainder=True).take(2)
        return list(dataset), dataset.element_spec, dataset.cardinality()

    check(body)


def test_prefetch_keeps_the_order_and_values():
    def body(tf):
        x, y = _features()
        results = []
        for depth in (1, 3, tf.data.AUTOTUNE):
            dataset = (
                tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2.0, b + 1)).batch(3).prefetch(depth)
            )
            results.append([element for element in dataset])
            results.append(dataset.cardinality())
        return results

    check(body)


def test_prefetch_of_batches_over_epochs_in_a_function():
    def body(tf):
        x, y = _features(7)
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(2).prefetch(tf.data.AUTOTUNE)

        @tf.function
        def step(features, labels):
            return tf.reduce_sum(features) + tf.cast(tf.reduce_sum(labels), tf.float32)

        return [[step(a, b) for a, b in dataset] for _ in range(3)]

    check(body)


def test_an_iterator_of_a_prefetched_dataset_ends_with_out_of_range():
    def body(tf):
        iterator = iter(tf.data.Dataset.range(3).prefetch(2))
        values = [iterator.get_next() for _ in range(3)]
        try:
            iterator.get_next()
        except Exception as exc:  # noqa: BLE001 - the class is compared with TF's
            return values, type(exc).__name__
        return values, None

    check(body)


def test_leaving_a_prefetched_loop_early_and_iterating_again():
    def body(tf):
        dataset = tf.data.Dataset.range(100).prefetch(4)
        first = []
        for value in dataset:
            first.append(value)
            if len(first) == 3:
                break
        return first, list(dataset.take(5))

    check(body)


def test_an_error_in_a_prefetched_map_is_raised_where_tf_raises_it():
    def body(tf):
        dataset = (
            tf.data.Dataset.from_tensor_slices([1.0, 2.0, 0.0, 3.0])
            .map(lambda v: tf.debugging.check_numerics(1.0 / v, "inverse"))
            .prefetch(2)
        )
        seen = []
        try:
            for value in dataset:
                seen.append(value)
        except Exception as exc:  # noqa: BLE001 - the class is compared with TF's
            return seen, type(exc).__name__
        return seen, None

    check(body)


def test_prefetch_buffer_size_below_autotune_is_an_error():
    check_raises(lambda tf: tf.data.Dataset.range(3).prefetch(-2))


_METRIC_LOOP = textwrap.dedent("""
    results = []
    for epoch in range(6):
        metric = tf.keras.metrics.Mean()
        for step in range(3):
            metric.update_state(tf.constant([1.0, 2.0, 4.0]) * float(epoch + step))
        results.append(float(metric.result()))
    error = tf.keras.metrics.MeanSquaredError()
    error.update_state(tf.constant([1.0, 2.0]), tf.constant([2.0, 4.0]))
    results.append(float(error.result()))
""")


def test_a_new_metric_each_epoch_matches_tf():
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    source = "import json\nimport tensorflow as tf\n" + _METRIC_LOOP + "print('RESULT', json.dumps(results))\n"
    done = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    expected = json.loads(lines[-1][len("RESULT ") :])
    scope = {"tf": tapeshim}
    exec(_METRIC_LOOP, scope)  # noqa: S102 - the same loop as TF's child ran
    np.testing.assert_allclose(scope["results"], expected, rtol=1e-6)


def test_a_new_mean_each_epoch_compiles_once():
    """tapeshim-only: a new `Mean()` of the same configuration reuses the first one's programs."""
    x = tapeshim.constant([1.0, 2.0, 3.0])
    first = tapeshim.keras.metrics.Mean()
    first.update_state(x)  # a metric's first update runs in Keras directly (it may create variables)
    first.update_state(x)
    first.result()
    programs = {id(p) for cache in keras_bridge._programs.values() for p in cache.values()}
    for epoch in range(5):
        metric = tapeshim.keras.metrics.Mean()
        metric.update_state(x * float(epoch))
        metric.update_state(x)
        metric.result()
        assert keras_bridge._programs[metric]  # the metric's calls ran as programs
        for program in keras_bridge._programs[metric].values():
            assert id(program) in programs, "a new Mean() compiled its own program"


def test_metrics_of_other_configurations_or_user_classes_keep_their_own_programs():
    x = tapeshim.constant([1.0, 2.0, 3.0])
    plain = tapeshim.keras.metrics.Mean()
    plain.update_state(x)
    plain.update_state(x)
    wide = tapeshim.keras.metrics.Mean(dtype="float64")
    wide.update_state(x)
    wide.update_state(x)

    class Doubled(tapeshim.keras.metrics.Mean):
        def update_state(self, values, sample_weight=None):
            return super().update_state(values * 2.0, sample_weight)

    doubled = Doubled()
    doubled.update_state(x)
    doubled.update_state(x)
    programs = [set(map(id, keras_bridge._programs[m].values())) for m in (plain, wide, doubled)]
    assert not programs[0] & programs[1] and not programs[0] & programs[2]
    assert float(wide.result()) == 2.0 and float(doubled.result()) == 4.0


def test_leaving_a_prefetched_loop_early_stops_its_thread():
    """tapeshim-only: the background thread of an abandoned prefetch ends (TF's are not Python threads)."""
    import gc
    import threading
    import time

    dataset = tapeshim.data.Dataset.range(10_000).prefetch(2)
    for _ in range(5):
        for _value in dataset:
            break
    gc.collect()
    deadline = time.monotonic() + 5.0
    while any(t.name == "tapeshim-prefetch" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [t for t in threading.enumerate() if t.name == "tapeshim-prefetch"]


def test_a_function_pulling_from_a_prefetched_iterator():
    def body(tf):
        x, y = _features(7)
        iterator = iter(tf.data.Dataset.from_tensor_slices((x, y)).batch(3).prefetch(tf.data.AUTOTUNE))

        @tf.function
        def step(it):
            features, labels = next(it)
            return tf.reduce_sum(features, axis=1), labels

        values = [step(iterator) for _ in range(3)]
        try:
            step(iterator)
        except Exception as exc:  # noqa: BLE001 - the class is compared with TF's
            return values, type(exc).__name__
        return values, None

    check(body)
