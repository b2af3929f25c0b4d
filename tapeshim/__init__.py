"""tapeshim: TensorFlow 2's GradientTape API, running on JAX and compiled by XLA.

Change `import tensorflow as tf` to `import tapeshim as tf`.

tapeshim turns on JAX's 64-bit mode (`jax_enable_x64`) when imported, so that
`tf.float64` and `tf.int64` really are 64-bit, as in TensorFlow. tapeshim always
names its dtypes, so its own float32 code stays float32; see the README for what
this means for other JAX code in the same process.
"""

import jax as _jax

_jax.config.update("jax_enable_x64", True)

from tapeshim import autodiff, debugging, dtypes, errors, experimental, linalg, math, nest, nn  # noqa: E402
from tapeshim._src.control_flow import case, cond, switch_case, while_loop  # noqa: E402
from tapeshim._src.custom_gradient import custom_gradient  # noqa: E402
from tapeshim._src.dtypes import (  # noqa: E402
    DType,
    as_dtype,
    bfloat16,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tapeshim._src.dtypes import bool_ as bool  # noqa: E402
from tapeshim._src.forward import ForwardAccumulator  # noqa: E402
from tapeshim._src.function import Function, function  # noqa: E402
from tapeshim._src.ops.array_ops import (  # noqa: E402
    concat,
    expand_dims,
    fill,
    gather,
    newaxis,
    one_hot,
    ones,
    ones_like,
    range,
    rank,
    reshape,
    shape,
    size,
    squeeze,
    stack,
    transpose,
    unstack,
    where,
    zeros,
    zeros_like,
)
from tapeshim._src.ops.logging_ops import print_v2 as print  # noqa: E402
from tapeshim._src.ops.math_ops import (  # noqa: E402
    abs,
    add,
    add_n,
    argmax,
    argmin,
    cast,
    clip_by_value,
    complex,
    cos,
    divide,
    equal,
    exp,
    floor,
    floordiv,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tanh,
    truediv,
)
from tapeshim._src.shape import TensorShape  # noqa: E402
from tapeshim._src.tape import GradientTape, UnconnectedGradients  # noqa: E402
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor, is_tensor  # noqa: E402
from tapeshim._src.tensor_spec import TensorSpec  # noqa: E402
from tapeshim._src.tf_logging import get_logger  # noqa: E402
from tapeshim._src.variable import Variable  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    # namespaces
    "autodiff", "debugging", "dtypes", "errors", "experimental", "linalg", "math", "nest", "nn",
    # dtypes
    "DType", "as_dtype", "bfloat16", "bool", "complex64", "complex128", "double", "float16", "float32", "float64",
    "half", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    # tensors, variables, tapes
    "Tensor", "TensorShape", "Variable", "constant", "convert_to_tensor", "is_tensor", "GradientTape",
    "UnconnectedGradients", "ForwardAccumulator", "get_logger",
    # compiled functions and control flow
    "function", "Function", "TensorSpec", "print", "cond", "while_loop", "case", "switch_case", "custom_gradient",
    # array ops
    "concat", "expand_dims", "fill", "gather", "newaxis", "one_hot", "ones", "ones_like", "range", "rank",
    "reshape", "shape", "size", "squeeze", "stack", "transpose", "unstack", "where", "zeros", "zeros_like",
    # math ops
    "abs", "add", "add_n", "argmax", "argmin", "cast", "clip_by_value", "complex", "cos", "divide", "equal", "exp",
    "floor", "floordiv", "greater", "greater_equal", "identity", "less", "less_equal", "logical_and",
    "logical_not", "logical_or", "matmul", "maximum", "minimum", "multiply", "negative", "not_equal", "pow",
    "reduce_all", "reduce_any", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "round",
    "sigmoid", "sign", "sin", "sqrt", "square", "stop_gradient", "subtract", "tanh", "truediv",
]
