"""Gradient dtypes and complex conventions (sections 12-13), against real TensorFlow."""

import numpy as np
import pytest

from oracle import check


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_gradient_keeps_source_dtype(dtype):
    def body(tf):
        v = tf.Variable(2.0, dtype=getattr(tf, dtype))
        with tf.GradientTape() as t:
            y = v * v * v
        return t.gradient(y, v)

    check(body)


def test_float_casts_are_differentiable_and_mixed_sources():
    def body(tf):
        x = tf.constant(2.0)
        d = tf.constant(3.0, tf.float64)
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, d])
            y = tf.cast(x, tf.float64) ** 2
            z = tf.cast(x, tf.float64) * d
        return t.gradient(y, x), t.gradient(z, [x, d])

    check(body)


def test_integer_sources():
    def body(tf):
        v = tf.Variable(2)
        c = tf.constant(3)
        with tf.GradientTape(persistent=True) as t:
            t.watch(c)
            y = v * c
        return t.gradient(y, [v, c]), t.gradient(y, [v, c], unconnected_gradients="zero"), t.gradient(c, c)

    check(body)


def test_int_target_from_float_source():
    def body(tf):
        x = tf.constant(2.5)
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cast(x, tf.int32)
        return t.gradient(y, x)

    check(body)


@pytest.mark.parametrize(
    "fn",
    [
        lambda tf, z: z * z,
        lambda tf, z: tf.exp(z),
        lambda tf, z: tf.math.real(z * tf.math.conj(z)),
        lambda tf, z: tf.abs(z),
        lambda tf, z: tf.math.real(z) + 2 * tf.math.imag(z),
    ],
)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_gradients_are_conjugated_as_tf(fn, dtype):
    def body(tf):
        z = tf.constant(3.0 + 4.0j if fn(tf, tf.constant(1j)).dtype.is_floating else 1.0 + 2.0j, dtype)
        with tf.GradientTape() as t:
            t.watch(z)
            y = fn(tf, z)
        return t.gradient(y, z), y

    check(body)


def test_real_sources_through_complex():
    def body(tf):
        a = tf.constant(1.0)
        b = tf.constant(2.0)
        with tf.GradientTape(persistent=True) as t:
            t.watch([a, b])
            z = tf.complex(a, b)
            r = tf.math.real(z * z)
            c = tf.complex(a, a) * 1j
        return t.gradient(r, [a, b]), t.gradient(c, a)

    check(body)


def test_watching_complex_does_not_warn(caplog):
    def body(tf):
        z = tf.constant(1 + 1j)
        with tf.GradientTape() as t:
            t.watch(z)
        return True

    with caplog.at_level("WARNING", logger="tensorflow"):
        check(body)
    assert not [r for r in caplog.records if "watched tensor" in r.getMessage()]


def test_bfloat16_numpy_arrays_and_eye():
    def body(tf):
        bfloat16 = tf.bfloat16.as_numpy_dtype
        return tf.constant(np.array([1.5, -2.0], dtype=bfloat16)), tf.eye(2, dtype=tf.bfloat16), tf.eye(2, 3)

    check(body)
