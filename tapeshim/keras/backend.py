"""`tf.keras.backend`: TF's legacy Keras backend (Keras 1/2's `K.*` functions) on tapeshim ops.

The same 137 names as TF 2.21's `tf.keras.backend`: the configuration
functions (`floatx`, `epsilon`, `image_data_format`, `clear_session`, ...) are
Keras 3's own, and the tensor functions (`dot`, `random_normal`, `conv2d`,
`rnn`, ...) are tapeshim ops, so they take tapeshim tensors and variables and
work under a `GradientTape` and inside `tapeshim.function`.
"""

from tapeshim._src import keras_legacy_backend as _math_functions
from tapeshim._src import keras_legacy_backend_nn as _nn_functions
from tapeshim._src.keras_bridge import keras as _keras

_CONFIGURATION = (
    "clear_session",
    "epsilon",
    "floatx",
    "get_uid",
    "image_data_format",
    "is_float_dtype",
    "is_int_dtype",
    "is_keras_tensor",
    "result_type",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "standardize_dtype",
)
_NN = tuple(_nn_functions.__all__)
_MATH = (
    "abs",
    "all",
    "any",
    "arange",
    "argmax",
    "argmin",
    "batch_dot",
    "batch_flatten",
    "batch_get_value",
    "batch_set_value",
    "binary_crossentropy",
    "binary_focal_crossentropy",
    "cast",
    "cast_to_floatx",
    "categorical_crossentropy",
    "categorical_focal_crossentropy",
    "clip",
    "concatenate",
    "constant",
    "cos",
    "count_params",
    "cumprod",
    "cumsum",
    "dot",
    "dropout",
    "dtype",
    "elu",
    "equal",
    "eval",
    "exp",
    "expand_dims",
    "eye",
    "flatten",
    "gather",
    "get_value",
    "greater",
    "greater_equal",
    "hard_sigmoid",
    "in_top_k",
    "int_shape",
    "is_sparse",
    "l2_normalize",
    "less",
    "less_equal",
    "log",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "moving_average_update",
    "ndim",
    "not_equal",
    "one_hot",
    "ones",
    "ones_like",
    "permute_dimensions",
    "pow",
    "prod",
    "random_bernoulli",
    "random_normal",
    "random_normal_variable",
    "random_uniform",
    "random_uniform_variable",
    "relu",
    "repeat",
    "repeat_elements",
    "reshape",
    "reverse",
    "round",
    "set_value",
    "shape",
    "sigmoid",
    "sign",
    "sin",
    "softmax",
    "softplus",
    "softsign",
    "sparse_categorical_crossentropy",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "stop_gradient",
    "sum",
    "tanh",
    "tile",
    "to_dense",
    "transpose",
    "truncated_normal",
    "update",
    "update_add",
    "update_sub",
    "var",
    "variable",
    "zeros",
    "zeros_like",
)

globals().update({name: getattr(_keras.backend, name) for name in _CONFIGURATION})
globals().update({name: getattr(_nn_functions, name) for name in _NN})
globals().update({name: getattr(_math_functions, name) for name in _MATH})


def backend() -> str:
    """The name of the backend TF programs see: `"tensorflow"`, as in TF (tapeshim stands in for it)."""
    return "tensorflow"


__all__ = sorted(("backend",) + _CONFIGURATION + _NN + _MATH)
