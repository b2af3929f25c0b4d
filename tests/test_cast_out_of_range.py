"""`tf.cast` of floats outside the integer type's range, as TF's CPU kernel gives them (eagerly and in a
function): the lowest int32 (int64) value for what int32 (int64) cannot hold, NaN and infinities, where
XLA's conversion saturates; narrower integers saturate, as TF's vectorised kernel does for all but tensors
of a few elements. (TF's bfloat16, uint32 and uint64 kernels convert otherwise again: those keep XLA's.)"""

import numpy as np
import pytest

from oracle import check

VALUES = [-1.7, 300.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 70000.5, -40000.0, 2.5, -2.5, 255.9, 256.0, -0.5]
TARGETS = ["int32", "int64"]


@pytest.mark.parametrize("source", ["float32", "float64", "float16"])
def test_out_of_range_floats_cast_to_integers_as_tf(source):
    def body(tf):
        x = tf.cast(tf.constant(VALUES, tf.float64), getattr(tf, source))
        eager = [tf.cast(x, getattr(tf, t)) for t in TARGETS]
        traced = tf.function(lambda v: [tf.cast(v, getattr(tf, t)) for t in TARGETS])(x)
        return eager, traced

    check(body)


def test_image_values_cast_to_narrow_integers_saturate_as_tf():
    def body(tf):
        image = tf.constant(np.linspace(-3.0, 300.0, 224 * 3 * 4, dtype=np.float32).reshape(224, 3, 4))
        return [tf.cast(image, t) for t in (tf.uint8, tf.int8, tf.uint16, tf.int16)], tf.cast(
            tf.cast(image, tf.float64), tf.uint8
        )

    check(body)
