"""Regressions from the review of the op surface, tf.data and checkpoints, against real TensorFlow."""

import os

import numpy as np
import pytest

from oracle import check, check_raises


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]),
        lambda tf: tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]),
        lambda tf: tf.data.Dataset.from_tensor_slices({"a": [1, 2]}),
        lambda tf: tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4, 5, 6])),
        lambda tf: tf.data.Dataset.range(10).map(lambda x: x * 2).batch(4),
        lambda tf: tf.data.Dataset.range(6).map(lambda x: (x, x * 2)).batch(4).unbatch(),
    ],
)
def test_dataset_lists_and_map_then_batch(make):
    def body(tf):
        ds = make(tf)
        return list(ds.as_numpy_iterator()), ds.element_spec

    check(body)


@pytest.mark.parametrize(
    "call",
    [
        lambda tf, m: tf.norm(m, ord=1, axis=[0, 1]),
        lambda tf, m: tf.norm(m, ord=np.inf, axis=[-2, -1]),
        lambda tf, m: tf.norm(m, ord=2, axis=[-2, -1]),
        lambda tf, m: tf.norm(m, ord="fro", axis=[0, 1], keepdims=True),
        lambda tf, m: tf.norm(m, ord=3),
        lambda tf, m: tf.norm(m, ord=0.5, axis=1),
    ],
)
def test_norms(call):
    check(lambda tf: call(tf, tf.constant([[3.0, -4.0], [6.0, 8.0]])), rtol=1e-5)


def test_global_norm_and_clipping_of_indexed_slices():
    def body(tf):
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
        with tf.GradientTape() as t:
            y = 3 * tf.reduce_sum(tf.gather(v, [1, 1]))
        g = t.gradient(y, v)
        clipped, norm = tf.clip_by_global_norm([g, tf.constant([1.0])], 1.0)
        return (
            norm,
            type(clipped[0]).__name__,
            tf.convert_to_tensor(clipped[0]),
            clipped[1],
            tf.linalg.global_norm([]),
            tf.clip_by_global_norm([tf.constant([np.inf, 4.0])], 1.0)[0],
            tf.convert_to_tensor(tf.clip_by_norm(g, 1.0)),
        )

    check(body, rtol=1e-5)


def test_descending_sorts_of_unsigned_and_extreme_ints():
    def body(tf):
        u = tf.constant([0, 3, 1], tf.uint8)
        i = tf.constant([-2147483648, 1, 0])
        return (
            tf.sort(u, direction="DESCENDING"),
            tf.argsort(u, direction="DESCENDING"),
            tf.sort(i, direction="DESCENDING"),
        )

    check(body)


def test_segments_bincount_cumsum_pool_trace_linspace_lstsq():
    def body(tf):
        return (
            tf.math.unsorted_segment_sum(tf.constant([[1.0, 2.0], [4.0, 5.0]]), tf.constant([[0, 1], [1, 1]]), 2),
            tf.math.unsorted_segment_mean(tf.constant([[1.0, 2.0], [4.0, 5.0]]), tf.constant([[0, 1], [1, 1]]), 2),
            tf.math.bincount(tf.constant([3, 1, 1]), weights=tf.constant([0.5, 1.0, 2.0]), maxlength=2),
            tf.math.bincount(tf.constant([[1, 1], [0, 1]]), axis=-1),
            tf.cumsum(tf.zeros([0]), exclusive=True),
            tf.nn.max_pool2d(tf.reshape(tf.range(16), [1, 4, 4, 1]), 2, 2, "VALID"),
            tf.linalg.trace(tf.constant([[1, 2], [3, 4]])),
            tf.linalg.diag_part(tf.constant([[1, 2], [3, 4]], tf.int64)),
            tf.linspace(0, 10, 5),
            tf.linalg.lstsq(
                tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], tf.float64), tf.constant([[1.0], [2.0]], tf.float64)
            ),
        )

    check(body, rtol=1e-5)


def test_out_of_range_segment_ids_raise():
    check_raises(lambda tf: tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0]), tf.constant([0, 5]), 2))


def test_dropout_with_a_tensor_rate_inside_a_function():
    import tapeshim as tf

    @tf.function
    def f(x, rate):
        return tf.nn.dropout(x, rate)

    out = f(tf.ones([1000]), tf.constant(0.5)).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and 0.35 < (out > 0).mean() < 0.65


def test_checkpoint_attributes_and_underscored_names(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        v = tf.Variable(5.0)
        ck = tf.train.Checkpoint()
        ck.v = v
        holder = tf.Module()
        holder._w = tf.Variable(1.0)
        holder.w = tf.Variable(2.0)
        ck2 = tf.train.Checkpoint(holder=holder)
        p1 = ck.save(os.path.join(directory, "a"))
        p2 = ck2.save(os.path.join(directory, "b"))
        v.assign(0.0)
        holder._w.assign(0.0)
        holder.w.assign(0.0)
        ck.restore(p1)
        ck2.restore(p2)
        return v, holder._w, holder.w

    check(body)
