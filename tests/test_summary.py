"""`tf.summary` against TF: the event files both write, read back with TF's `summary_iterator`, hold the same
tags, steps, plugins and values; summaries in `tapeshim.function` write per call without retracing."""

import glob

import numpy as np
import pytest

from oracle import check, check_raises, real_tf


def _events(logdir):
    """(step, tag, plugin, description, value) of every summary in the event files under `logdir`."""
    out = []
    for path in sorted(glob.glob(str(logdir) + "/**/events.out.tfevents.*", recursive=True)):
        for event in real_tf.compat.v1.train.summary_iterator(path):
            if not event.HasField("summary"):
                assert event.file_version == "brain.Event:2"
                continue
            for value in event.summary.value:
                plugin = value.metadata.plugin_data.plugin_name
                if value.tensor.dtype == real_tf.string.as_datatype_enum:
                    data = list(value.tensor.string_val)
                    if plugin == "images":
                        data = data[:2] + [real_tf.io.decode_png(png).numpy().tolist() for png in data[2:]]
                    shape = [d.size for d in value.tensor.tensor_shape.dim]
                    data = (shape, data)
                else:
                    array = real_tf.make_ndarray(value.tensor)
                    data = (array.dtype.name, array.shape, array.tolist())
                out.append(
                    (
                        event.step,
                        value.tag,
                        (plugin, value.metadata.plugin_data.content),
                        value.metadata.summary_description,
                        data,
                    )
                )
    return out


def _run(tmp_path, program):
    """The events `program(tf, logdir)` writes, with TF and with tapeshim."""

    def body(tf):
        logdir = tmp_path / tf.__name__
        result = program(tf, str(logdir))
        return result, _events(logdir)

    return check(body)


def test_scalars_histograms_text_and_images(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        with writer.as_default(step=3):
            written = [tf.summary.scalar("loss", 0.5), tf.summary.scalar("loss", tf.constant(2, tf.int32), step=4)]
            with tf.name_scope("scope"):
                tf.summary.scalar("acc", np.float64(0.25), description="accuracy")
            tf.summary.histogram("h", [1.0, 2.0, 2.5, 10.0], buckets=3)
            tf.summary.histogram("empty", tf.zeros([0]))
            tf.summary.histogram("constant", [5.0, 5.0])
            tf.summary.histogram("matrix", tf.constant([[0.1, 0.7, 0.3, -2.0], [3.3, 1e-3, 0.25, 0.5]]), buckets=7)
            tf.summary.histogram("ints", tf.constant([1, 2, 3, 100], tf.int64), step=9)
            tf.summary.text("t", "hello")
            tf.summary.text("t2", tf.constant([["a", "b"], ["c", "d"]]))
            tf.summary.image("im", tf.reshape(tf.range(24, dtype=tf.float32) / 24.0, [2, 2, 2, 3]), max_outputs=1)
            tf.summary.image("gray", tf.ones([3, 2, 3, 1], tf.uint8) * 200)
            tf.summary.image("over", tf.constant(2.0, shape=[1, 1, 2, 1]))
            tf.summary.audio(
                "sound", tf.constant([[[0.5], [-0.25], [1.0]], [[0.0], [2.0], [-3.0]]]), 8000, max_outputs=2
            )
            tf.summary.audio("stereo", tf.reshape(tf.range(12, dtype=tf.float32) / 12.0, [1, 6, 2]), 16000)
            raw = real_tf.compat.v1.Summary(
                value=[
                    real_tf.compat.v1.Summary.Value(
                        tag="raw",
                        metadata=real_tf.compat.v1.SummaryMetadata(display_name="r"),
                        tensor=real_tf.make_tensor_proto(np.float32([1.5, 2.5])),
                    )
                ]
            ).SerializeToString()
            written.append(tf.summary.experimental.write_raw_pb(raw, step=11))
        writer.flush()
        return written

    _run(tmp_path, program)


def test_steps_record_if_and_default_writers(tmp_path):
    def program(tf, logdir):
        out = [tf.summary.scalar("nowriter", 1.0, step=1)]
        writer = tf.summary.create_file_writer(logdir + "/run")
        tf.summary.experimental.set_step(5)
        writer.set_as_default()
        out.append(tf.summary.experimental.get_step())
        out.append(tf.summary.scalar("a", 1.0))
        with tf.summary.record_if(False):
            out += [tf.summary.scalar("skipped", 1.0), tf.summary.should_record_summaries()]
        with tf.summary.record_if(lambda: tf.equal(tf.constant(1), 1)):
            out.append(tf.summary.scalar("callable", 2.0, step=6))
        with tf.summary.record_if(tf.constant(False)):
            out.append(tf.summary.scalar("tensor_false", 2.0, step=6))
        out.append(tf.summary.should_record_summaries())
        with tf.summary.create_noop_writer().as_default():
            out.append(tf.summary.scalar("noop", 1.0, step=1))
        with writer.as_default(step=tf.constant(8, tf.int64)):
            tf.summary.scalar("stepped", 3.0)
        out.append(tf.summary.experimental.get_step())
        tf.summary.experimental.set_step(None)
        tf.summary.flush()
        writer.close()
        with pytest.raises(RuntimeError):
            writer.as_default()
        return out

    try:
        _run(tmp_path, program)
    finally:
        for tf in (real_tf, __import__("tapeshim")):
            tf.summary.experimental.set_step(None)


def test_summaries_inside_a_function_write_every_call_without_retracing(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        step = tf.Variable(0, dtype=tf.int64)
        traces = []

        @tf.function
        def train_step(x):
            traces.append(1)
            step.assign_add(1)
            with writer.as_default():
                tf.summary.scalar("loss", tf.reduce_sum(x * x), step=step)
                tf.summary.histogram("x", x, step=step, buckets=4)
                with tf.summary.record_if(tf.equal(step % 2, 0)):
                    tf.summary.scalar("even", x[0], step=step)
                tf.summary.text("note", "constant text", step=step)
            return x * 2

        for i in range(4):
            train_step(tf.constant([i, 1.0, 2.0 * i]))
        writer.flush()
        return len(traces), step

    _run(tmp_path, program)


def test_default_step_variable_in_a_function(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        counter = tf.Variable(10, dtype=tf.int64)
        tf.summary.experimental.set_step(counter)

        @tf.function
        def log(value):
            with writer.as_default():
                tf.summary.scalar("v", value)
            counter.assign_add(5)

        for v in (1.0, 2.0, 3.0):
            log(tf.constant(v))
        tf.summary.experimental.set_step(None)
        writer.flush()

    _run(tmp_path, program)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.summary.scalar("a", 1.0),
        lambda tf: tf.summary.scalar("a", [1.0, 2.0], step=1),
        lambda tf: tf.summary.scalar("a", "x", step=1),
        lambda tf: tf.summary.histogram("a", "x", step=1),
        lambda tf: tf.summary.image("a", [1.0], step=1),
    ],
)
def test_errors(tmp_path, bad):
    def body(tf):
        with tf.summary.create_file_writer(str(tmp_path / tf.__name__)).as_default():
            return bad(tf)

    check_raises(body)


def test_trace_functions_are_accepted(tmp_path):
    def body(tf):
        with tf.summary.create_file_writer(str(tmp_path / tf.__name__)).as_default():
            return tf.summary.trace_on(), tf.summary.trace_export("t", step=1), tf.summary.trace_off()

    check(body)


def test_events_reach_the_file_when_the_program_exits_without_flush(tmp_path):
    import subprocess
    import sys

    program = (
        "import sys, tapeshim as tf\n"
        "tf.summary.create_file_writer(sys.argv[1]).set_as_default()\n"
        "for i in range(3):\n"
        "    tf.summary.scalar('a', float(i), step=i)\n"
    )
    subprocess.run([sys.executable, "-c", program, str(tmp_path)], check=True, timeout=120)
    assert [(step, tag, data[2]) for step, tag, _, _, data in _events(tmp_path)] == [
        (0, "a", 0.0),
        (1, "a", 1.0),
        (2, "a", 2.0),
    ]


def test_strategy_run_writes_the_first_replicas_summaries(tmp_path):
    # TF (MirroredStrategy over 2 devices) writes replica 0's summary only; tapeshim in a child process
    # with 2 simulated CPU devices (the flag must precede JAX's start)
    import subprocess
    import sys

    program = (
        "import os, sys\n"
        "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'\n"
        "import tapeshim as tf\n"
        "strategy = tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'])\n"
        "writer = tf.summary.create_file_writer(sys.argv[1])\n"
        "def replica():\n"
        "    ctx = tf.distribute.get_replica_context()\n"
        "    x = tf.ones((400, 400))\n"
        "    for _ in range(8):\n"
        "        x = tf.matmul(x, x) / 400.0\n"
        "    with writer.as_default():\n"
        "        tf.summary.scalar('r', tf.cast(ctx.replica_id_in_sync_group, tf.float32) + x[0, 0], step=1)\n"
        "    return tf.constant(0)\n"
        "strategy.run(replica)\n"
        "writer.flush()\n"
        "os._exit(0)\n"  # no exit-time flush: flush itself waits for the replica's pending host callback
    )
    subprocess.run([sys.executable, "-c", program, str(tmp_path)], check=True, timeout=120)
    assert [(step, tag, data[2]) for step, tag, _, _, data in _events(tmp_path)] == [(1, "r", 1.0)]
