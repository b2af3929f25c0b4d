"""`tf.print`'s output streams against TF's: `file://` paths (eagerly and compiled, written before the call
returns), logging levels, and TF's ValueError for anything else."""

import io
import sys

import pytest

from oracle import check, check_raises


def test_print_appends_to_a_file_eagerly_and_from_a_function(tmp_path):
    def body(tf):
        path = tmp_path / f"{tf.__name__}.txt"
        stream = "file://" + str(path)
        tf.print("eager", tf.constant([1, 2]), output_stream=stream)

        @tf.function
        def f(x):
            y = x
            for _ in range(6):
                y = tf.matmul(y, y) / 300.0
            tf.print("traced", y[0, 0], tf.reduce_sum(x[:2, :2]), output_stream=stream, sep="|")
            return y[0, 0]

        after = []
        for scale in (1.0, 2.0):
            f(tf.ones((300, 300)) * scale)
            after.append(path.read_text())  # the call returned after its print
        return after

    check(body)


@pytest.mark.parametrize("level", ["info", "warning", "error", "INFO"])
def test_print_to_a_logging_level(level):
    def body(tf):
        stream = getattr(tf.compat.v1.logging, level)
        tf.print("logged", tf.constant(3), output_stream=stream)

        @tf.function
        def f(x):
            tf.print("logged in a function", x, output_stream=stream)
            return x + 1

        return f(tf.constant(1))

    check(body)


@pytest.mark.parametrize("stream", ["nonsense", "stdout", print, io.StringIO()], ids=["text", "name", "fn", "io"])
def test_unsupported_output_streams_are_tfs_value_error(stream):
    check_raises(lambda tf: tf.print("x", output_stream=stream))


def test_sys_streams_are_accepted():
    check(lambda tf: [tf.print("to stdout", output_stream=sys.stdout), tf.print("to stderr", output_stream=sys.stderr)])
