"""Details of TF's introduction to tensors guide, compared with real TensorFlow."""

import numpy as np
import pytest

from oracle import check, check_raises


def test_tf_constant_of_a_tensor_of_another_dtype_raises_type_error():
    check_raises(lambda tf: tf.constant(tf.constant([1, 2]), dtype=tf.int64), messages=True)
    check(lambda tf: [tf.constant(tf.constant([1, 2]), dtype=tf.int32), tf.constant(tf.Variable([1.0]), tf.float64)])


_OUTSIDE = {}


def _outside(tf, name):
    """A tensor or variable made outside the function (one per framework, made once)."""
    key = (tf.__name__, name)
    if key not in _OUTSIDE:
        _OUTSIDE[key] = {
            "tensor": lambda: tf.constant([1.0, 2.0]),
            "variable": lambda: tf.Variable([1.0, 2.0]),
            "scalar_variable": lambda: tf.Variable(1.0),
        }[name]()
    return _OUTSIDE[key]


CONSTANT_OF_TENSORS = {
    "list_of_a_scalar_tensor": lambda tf: tf.constant([tf.constant(1.0), 2.0]),
    "list_of_scalar_tensors": lambda tf: tf.constant([tf.constant(1.0), tf.constant(2.0)]),
    "list_of_vector_tensors": lambda tf: tf.constant([tf.constant([1.0, 2.0]), [3.0, 4.0]]),
    "nested_list": lambda tf: tf.constant([[tf.constant(1.0)]]),
    "tuple": lambda tf: tf.constant((tf.constant(1), 2)),
    "with_shape": lambda tf: tf.constant([tf.constant(1.0), 2.0], shape=(2,)),
    "list_of_a_variable": lambda tf: tf.constant([_outside(tf, "scalar_variable"), 2.0]),
    "list_of_an_outside_tensor": lambda tf: tf.constant([_outside(tf, "tensor"), [3.0, 4.0]]),
    "tensor_made_here": lambda tf: tf.constant(tf.constant([1.0, 2.0])),
    "outside_tensor": lambda tf: tf.constant(_outside(tf, "tensor")),
    "outside_tensor_same_dtype": lambda tf: tf.constant(_outside(tf, "tensor"), dtype=tf.float32),
    "variable": lambda tf: tf.constant(_outside(tf, "variable")),
    "variable_cast": lambda tf: tf.constant(_outside(tf, "variable"), dtype=tf.float64),
    "numpy_values_in_a_list": lambda tf: tf.constant([np.float32(1.0), 2.0]),
    "convert_to_tensor_packs_a_list": lambda tf: tf.convert_to_tensor([tf.constant(1.0), 2.0]),
}


RAISES_IN_FUNCTION_ONLY = {"tensor_made_here", "variable", "variable_cast"}
NEVER_RAISES = {
    "outside_tensor",
    "outside_tensor_same_dtype",
    "numpy_values_in_a_list",
    "convert_to_tensor_packs_a_list",
}


@pytest.mark.parametrize("in_function", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("case", sorted(CONSTANT_OF_TENSORS))
def test_tf_constant_refuses_tensors_where_tf_does(case, in_function):
    body = CONSTANT_OF_TENSORS[case]
    raises = case not in NEVER_RAISES and (in_function or case not in RAISES_IN_FUNCTION_ONLY)
    check(lambda tf: tf.function(lambda: body(tf), autograph=False)() if in_function else body(tf), raises=raises)


@pytest.mark.parametrize("held", ["scalar", "list"])
def test_tf_constant_of_a_function_argument_is_a_type_error(held):
    def body(tf):
        make = (lambda x: tf.constant(x)) if held == "scalar" else (lambda x: tf.constant([x, 1.0]))
        return tf.function(make, autograph=False)(tf.constant(2.0))

    check_raises(body, messages=True)
