"""tf.compat and tf.compat.v1 (the TF2 parts) against real TensorFlow."""

import logging
import pathlib

import pytest

import tapeshim
from oracle import check, check_raises, real_tf


@pytest.mark.parametrize("value", [b"ab", "ab", "é", bytearray(b"x"), 3, None])
def test_string_helpers(value):
    for name in ("as_bytes", "as_text", "as_str", "as_str_any"):
        # TF's TypeError for a non-string, but as_str_any takes any value and as_bytes a bytearray
        accepted = (
            isinstance(value, (bytes, str))
            or name == "as_str_any"
            or (isinstance(value, bytearray) and name == "as_bytes")
        )
        check(lambda tf, name=name: getattr(tf.compat, name)(value), raises=not accepted)


def test_helpers():
    check(lambda tf: tf.compat.as_bytes("é", encoding="latin-1"))
    check(lambda tf: tf.compat.path_to_str(pathlib.Path("/tmp/x")))
    check(lambda tf: tf.compat.path_to_str(3))
    check(lambda tf: tf.compat.dimension_value(tf.TensorShape([3, None])[0]))
    check(lambda tf: tf.compat.dimension_value(None))
    check(lambda tf: tf.compat.dimension_value(tf.compat.dimension_at_index(tf.TensorShape([3, None]), 1)))
    check(lambda tf: tf.compat.dimension_value(tf.compat.dimension_at_index(tf.TensorShape([3, None]), 0)))
    check(lambda tf: tf.compat.forward_compatible(2019, 1, 1))
    check(lambda tf: [isinstance(v, tf.compat.integral_types) for v in (1, 1.5, True)])
    check(lambda tf: [isinstance(v, tf.compat.real_types) for v in (1, 1.5, 1j)])
    check(lambda tf: [isinstance(v, tf.compat.bytes_or_text_types) for v in (b"", "", 1)])

    def horizon(tf):
        with tf.compat.forward_compatibility_horizon(2100, 1, 2):
            inside = tf.compat.forward_compatible(2100, 1, 1)
        return inside, tf.compat.forward_compatible(2100, 1, 1)

    check(horizon)


def test_v2_is_tapeshim():
    assert tapeshim.compat.v2 is tapeshim
    assert tapeshim.compat.v2.constant(1.0).numpy() == 1.0


def test_v1_tf2_pieces():
    def body(tf):
        tf.compat.v1.enable_eager_execution()
        tf.compat.v1.enable_v2_behavior()
        tf.compat.v1.set_random_seed(3)
        a = tf.random.uniform([2])
        tf.compat.v1.set_random_seed(3)
        return tf.compat.v1.executing_eagerly(), bool((a == tf.random.uniform([2])).numpy().all())

    check(body)


def test_v1_set_random_seed_is_set_seed():
    tapeshim.compat.v1.set_random_seed(7)
    a = tapeshim.random.normal([3])
    tapeshim.random.set_seed(7)
    b = tapeshim.random.normal([3])
    assert (a.numpy() == b.numpy()).all()


def test_v1_logging_matches_tf():
    def body(tf):
        log = tf.compat.v1.logging
        before = log.get_verbosity()
        log.set_verbosity(log.ERROR)
        level = log.get_verbosity()
        log.set_verbosity(before)
        return (
            log.DEBUG,
            log.INFO,
            log.WARN,
            log.ERROR,
            log.FATAL,
            level,
            sorted(n for n in dir(log) if not n.startswith("_") and n[0].islower()),
        )

    check(body)


def test_v1_logging_writes_to_the_tensorflow_logger(caplog):
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        tapeshim.compat.v1.logging.info("hello %d", 3)
        tapeshim.compat.v1.logging.warning("careful")
        for _ in range(3):
            tapeshim.compat.v1.logging.log_first_n(tapeshim.compat.v1.logging.ERROR, "first", 2)
    messages = [r.getMessage() for r in caplog.records if r.name == "tensorflow"]
    assert messages == ["hello 3", "careful", "first", "first"]


def test_v1_disable_eager_execution_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="TF2 code only"):
        tapeshim.compat.v1.disable_eager_execution()
    with pytest.raises(NotImplementedError, match="TF2 code only"):
        tapeshim.compat.v1.disable_v2_behavior()


@pytest.mark.parametrize(
    "name", ["Session", "placeholder", "global_variables_initializer", "get_variable", "ConfigProto", "train"]
)
def test_other_v1_names_say_tf2_only(name):
    assert hasattr(real_tf.compat.v1, name)
    with pytest.raises(AttributeError, match="tapeshim runs TF2 code only"):
        getattr(tapeshim.compat.v1, name)


def test_compat_names_exist_in_tf():
    for name in tapeshim.compat.__all__:
        assert hasattr(real_tf.compat, name), name
    for name in tapeshim.compat.v1.__all__:
        assert hasattr(real_tf.compat.v1, name), name
    check_raises(lambda tf: tf.compat.as_bytes(3))
