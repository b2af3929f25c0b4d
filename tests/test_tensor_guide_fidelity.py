"""Details of TF's introduction to tensors guide, compared with real TensorFlow."""

from oracle import check, check_raises


def test_tf_constant_of_a_tensor_of_another_dtype_raises_type_error():
    check_raises(lambda tf: tf.constant(tf.constant([1, 2]), dtype=tf.int64), messages=True)
    check(lambda tf: [tf.constant(tf.constant([1, 2]), dtype=tf.int32), tf.constant(tf.Variable([1.0]), tf.float64)])
