"""Differential cases for op-table rows that had none naming them (see `test_every_row_has_a_differential_case`).

Each body runs with real TensorFlow and with tapeshim (tests/oracle.py): values,
dtypes, shapes, gradients (None where TF gives None) and error classes.
"""

import glob

import numpy as np

from oracle import check, check_raises, real_tf

VALUES = np.array([-np.inf, -2.5, -0.0, 0.0, 1.5, np.inf, np.nan], np.float32)
LEFT = np.array([True, True, False, False])
RIGHT = np.array([True, False, True, False])


def test_negative_value_gradient_and_integers():
    def body(tf):
        x = tf.constant([[-1.5, 0.0], [2.0, 3.25]])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.negative(x) * x
        return y, tape.gradient(y, x), tf.math.negative(tf.constant([3, -4], tf.int64))

    check(body)


def test_is_inf_and_is_finite_have_no_gradient():
    def body(tf):
        x = tf.constant(VALUES)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            inf, finite = tf.math.is_inf(x), tf.math.is_finite(x)
            y = tf.cast(inf, tf.float32) + tf.cast(finite, tf.float32) * x
        return inf, finite, tf.math.is_inf(tf.constant(VALUES, tf.float16)), tape.gradient(y, x)

    check(body)
    check_raises(lambda tf: tf.math.is_inf(tf.constant([1, 2])))
    check_raises(lambda tf: tf.math.is_finite(tf.constant([1, 2])))


def test_logical_ops_broadcast_and_reject_non_bool():
    def body(tf):
        a, b = tf.constant(LEFT), tf.constant(RIGHT)
        column = tf.constant([[True], [False]])
        return (
            tf.math.logical_not(a),
            tf.math.logical_and(a, b),
            tf.math.logical_or(a, b),
            tf.math.logical_xor(a, b),
            tf.math.logical_and(column, a),
            tf.math.logical_or(column, b),
        )

    check(body)
    check_raises(lambda tf: tf.math.logical_not(tf.constant([1.0])))
    check_raises(lambda tf: tf.math.logical_or(tf.constant([True]), tf.constant([1])))
    check_raises(lambda tf: tf.math.logical_xor(tf.constant([True, False]), tf.constant([True, False, True])))


def test_indexed_slices_constructed_and_densified():
    def body(tf):
        values = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        slices = tf.IndexedSlices(values, tf.constant([2, 0]), dense_shape=tf.constant([3, 2]))
        return slices.values, slices.indices, slices.dense_shape, tf.convert_to_tensor(slices), slices.shape

    check(body)


def test_compute_average_loss_and_scale_regularization_loss():
    def body(tf):
        losses = tf.constant([1.0, 2.0, 4.0, 9.0])
        weights = tf.constant([1.0, 0.5, 0.0, 2.0])
        with tf.GradientTape() as tape:
            tape.watch(losses)
            average = tf.nn.compute_average_loss(losses, sample_weight=weights, global_batch_size=8)
        return (
            tf.nn.compute_average_loss(losses),
            average,
            tape.gradient(average, losses),
            tf.nn.scale_regularization_loss(tf.constant(3.0)),
            tf.nn.scale_regularization_loss([tf.constant(1.0), tf.constant(2.5)]),
        )

    check(body)


def _tensor_events(logdir):
    """(step, tag, dtype, value) of every tensor summary written under `logdir`, read by TF."""
    events = []
    for path in sorted(glob.glob(str(logdir) + "/**/events.out.tfevents.*", recursive=True)):
        for event in real_tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                array = real_tf.make_ndarray(value.tensor)
                events.append((event.step, value.tag, array.dtype.name, array.tolist()))
    return events


def test_summary_write_records_a_tensor(tmp_path):
    def body(tf):
        logdir = tmp_path / tf.__name__
        writer = tf.summary.create_file_writer(str(logdir))
        unwritten = tf.summary.write("ignored", tf.constant(1.0), step=0)
        with writer.as_default(step=2):
            written = tf.summary.write("loss", tf.constant([0.5, 1.5]))
            later = tf.summary.write("count", tf.constant(7, tf.int64), step=5)
        writer.flush()
        return unwritten, written, later, _tensor_events(logdir)

    check(body)
