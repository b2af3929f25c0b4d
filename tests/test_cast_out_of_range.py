"""`tf.cast` of floats outside the integer type's range, as TF's CPU kernel gives them (eagerly and in a
function): the lowest int32 (int64) value for what int32 (int64) cannot hold, NaN and infinities; narrower
ints wrap (`tf.cast(300.5, tf.uint8)` is 44), where XLA's conversion saturates. (TF's bfloat16, uint32
and uint64 kernels convert otherwise again: those keep XLA's conversion.)"""

import numpy as np
import pytest

from oracle import check

VALUES = [-1.7, 300.5, 1e10, -1e10, np.nan, np.inf, -np.inf, 70000.5, -40000.0, 2.5, -2.5, 255.9, 256.0, -0.5]
TARGETS = ["int8", "uint8", "int16", "uint16", "int32", "int64"]


@pytest.mark.parametrize("source", ["float32", "float64", "float16"])
def test_out_of_range_floats_cast_to_integers_as_tf(source):
    def body(tf):
        x = tf.cast(tf.constant(VALUES, tf.float64), getattr(tf, source))
        eager = [tf.cast(x, getattr(tf, t)) for t in TARGETS]
        traced = tf.function(lambda v: [tf.cast(v, getattr(tf, t)) for t in TARGETS])(x)
        return eager, traced

    check(body)


def test_image_values_cast_to_uint8_wrap_as_tf():
    def body(tf):
        image = tf.constant(np.linspace(-3.0, 260.0, 24, dtype=np.float32).reshape(2, 3, 4))
        return tf.cast(image, tf.uint8), tf.image.convert_image_dtype(image / 255.0, tf.uint8, saturate=True)

    check(body)
