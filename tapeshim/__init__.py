"""tapeshim: TensorFlow 2's GradientTape API, running on JAX and compiled by XLA.

Change `import tensorflow as tf` to `import tapeshim as tf`.

tapeshim turns on JAX's 64-bit mode (`jax_enable_x64`) when imported, so that
`tf.float64` and `tf.int64` really are 64-bit, as in TensorFlow. tapeshim always
names its dtypes, so its own float32 code stays float32; see the README for what
this means for other JAX code in the same process. The ops re-exported here are
rows of the op table (`tapeshim/_src/ops/table.py`, documented in docs/ops.md).
"""

import os as _os
import sys as _sys

# Keras reads KERAS_BACKEND once, when it is first imported: choosing JAX here lets a plain `import keras`
# after `import tapeshim` share tapeshim's backend (and not import TensorFlow). A backend the user chose
# is theirs (`tf.keras` then says how to fix it), and a Keras already imported keeps its backend.
if "keras" not in _sys.modules and not _os.environ.get("KERAS_BACKEND"):
    _os.environ["KERAS_BACKEND"] = "jax"

import jax as _jax  # noqa: E402

_jax.config.update("jax_enable_x64", True)

from tapeshim import (  # noqa: E402
    audio,
    autodiff,
    autograph,
    bitwise,
    compat,
    config,
    data,
    debugging,
    distribute,
    dtypes,
    errors,
    experimental,
    image,
    io,
    linalg,
    math,
    nest,
    nn,
    ragged,
    random,
    saved_model,
    sets,
    signal,
    sparse,
    strings,
    summary,
    tpu,
    train,
    types,
)
from tapeshim._src.autograph.tensor_array import TensorArray  # noqa: E402
from tapeshim._src.config_device import DeviceSpec, device  # noqa: E402
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
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tapeshim._src.dtypes import bool_ as bool  # noqa: E402
from tapeshim._src.forward import ForwardAccumulator  # noqa: E402
from tapeshim._src.function import Function, function  # noqa: E402
from tapeshim._src.function_trace import init_scope  # noqa: E402
from tapeshim._src.indexed_slices import (  # noqa: E402
    IndexedSlices,
)
from tapeshim._src.module import Module, name_scope  # noqa: E402
from tapeshim._src.ops.array_ops import (  # noqa: E402
    concat,
    expand_dims,
    fill,
    gather,
    newaxis,  # noqa: E402
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
from tapeshim._src.ops.debugging_ops import (  # noqa: E402
    assert_equal,
    assert_greater,
    assert_less,
    assert_rank,
)
from tapeshim._src.ops.functional_ops import (  # noqa: E402
    foldl,
    foldr,
    map_fn,
    recompute_grad,
    scan,
    vectorized_map,
)
from tapeshim._src.ops.graph_ops import (  # noqa: E402
    control_dependencies,
    ensure_shape,
    executing_eagerly,
    get_static_value,
    group,
    identity_n,
    no_op,
)
from tapeshim._src.ops.host_ops import numpy_function  # noqa: E402
from tapeshim._src.ops.init_ops import (  # noqa: E402
    constant_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    zeros_initializer,
)
from tapeshim._src.ops.logging_ops import (  # noqa: E402
    print_v2 as print,
)
from tapeshim._src.ops.manip_ops import (  # noqa: E402
    argsort,
    bitcast,
    boolean_mask,
    broadcast_to,
    einsum,
    eye,
    gather_nd,
    linspace,
    meshgrid,
    pad,
    repeat,
    reverse,
    roll,
    scatter_nd,
    sequence_mask,
    slice,
    sort,
    split,
    strided_slice,
    tensor_scatter_nd_add,
    tensor_scatter_nd_update,
    tensordot,
    tile,
    unique,
)
from tapeshim._src.ops.math_ops import (  # noqa: E402
    abs,
    acos,
    acosh,
    add,
    add_n,
    argmax,
    argmin,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cast,
    clip_by_value,
    complex,
    cos,
    cosh,
    divide,
    equal,
    exp,
    floor,
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
    sinh,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tan,
    tanh,
    truediv,
)
from tapeshim._src.ops.reduction_ops import (  # noqa: E402
    clip_by_global_norm,
    clip_by_norm,
    cumsum,
    norm,
    reduce_logsumexp,
)
from tapeshim._src.ops.scatter_ops import (  # noqa: E402
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
)
from tapeshim._src.ops.search_ops import (  # noqa: E402
    histogram_fixed_width,
    histogram_fixed_width_bins,
    searchsorted,
    unravel_index,
)
from tapeshim._src.py_function import py_function  # noqa: E402
from tapeshim._src.ragged import RaggedTensor  # noqa: E402
from tapeshim._src.shape import TensorShape  # noqa: E402
from tapeshim._src.sparse import SparseTensor  # noqa: E402
from tapeshim._src.tape import GradientTape, UnconnectedGradients  # noqa: E402
from tapeshim._src.tensor import (  # noqa: E402
    Tensor,
    constant,
    convert_to_tensor,
    is_tensor,
    register_tensor_conversion_function,
)
from tapeshim._src.tensor_spec import TensorSpec  # noqa: E402
from tapeshim._src.tf_logging import get_logger  # noqa: E402
from tapeshim._src.variable import Variable, VariableAggregation, VariableSynchronization  # noqa: E402

__version__ = "0.1.0"

NON_OP_EXPORTS = frozenset([
    "distribute", "tpu", "VariableAggregation", "VariableSynchronization",
    "image", "signal", "audio",  # IMAGE_DATA
    "Module", "name_scope", "data", "train", "keras", "register_tensor_conversion_function", "init_scope", "types",
    "py_function",
    "io", "saved_model", "summary",  # IO
    "DeviceSpec", "bitwise", "compat", "config", "device", "numpy_function", "sets",  # FUNCTIONAL
    "DType", "ForwardAccumulator", "Function", "GradientTape", "Tensor", "TensorShape", "TensorSpec",
    "TensorArray", "UnconnectedGradients", "Variable", "as_dtype", "autodiff", "autograph", "bfloat16", "bool",
    "case", "complex128",
    "complex64", "cond", "constant", "convert_to_tensor", "custom_gradient", "debugging", "double", "dtypes",
    "errors", "experimental", "float16", "float32", "float64", "function", "get_logger", "half", "int16", "int32",
    "int64", "int8", "is_tensor", "linalg", "math", "nest", "newaxis", "nn", "random", "switch_case", "uint16",
    "uint32", "uint64", "uint8", "while_loop",
    "string", "ragged", "sparse", "RaggedTensor", "SparseTensor", "strings",
])
"""Public names that are API objects rather than rows of the op table."""

__all__ = [
    "distribute", "tpu", "VariableAggregation", "VariableSynchronization",
    "image", "signal", "audio",  # IMAGE_DATA
    "Module", "name_scope", "data", "train", "keras", "register_tensor_conversion_function", "init_scope", "types",
    "py_function",
    "io", "saved_model", "summary",  # IO
    "DeviceSpec", "bitwise", "compat", "config", "device", "numpy_function", "sets",  # FUNCTIONAL
    "DType", "ForwardAccumulator", "Function", "GradientTape", "IndexedSlices", "Tensor", "TensorShape",
    "TensorArray", "TensorSpec", "UnconnectedGradients", "Variable", "abs", "acos", "acosh", "add", "add_n",
    "argmax", "argmin",
    "argsort", "as_dtype", "asin", "asinh", "assert_equal", "assert_greater", "assert_less", "assert_rank", "atan",
    "atan2", "atanh", "autodiff", "autograph", "bfloat16", "bitcast", "bool", "boolean_mask", "broadcast_to", "case",
    "cast",
    "clip_by_global_norm", "clip_by_norm", "clip_by_value", "complex", "complex128", "complex64", "concat", "cond",
    "constant", "convert_to_tensor", "cos", "cosh", "cumsum", "custom_gradient", "debugging", "divide", "double",
    "dtypes", "einsum", "equal", "errors", "exp", "expand_dims", "experimental", "eye", "fill", "float16",
    "float32", "float64", "floor", "function", "gather", "gather_nd", "get_logger", "greater", "greater_equal",
    "half", "identity", "int16", "int32", "int64", "int8", "is_tensor", "less", "less_equal", "linalg", "linspace",
    "logical_and", "logical_not", "logical_or", "math", "matmul", "maximum", "meshgrid", "minimum", "multiply",
    "negative", "nest", "newaxis", "nn", "norm", "not_equal", "one_hot", "ones", "ones_like", "pad", "pow", "print",
    "random", "range", "rank", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_sum", "repeat", "reshape", "reverse", "roll", "round", "scatter_nd",
    "sequence_mask", "shape", "sigmoid", "sign", "sin", "sinh", "size", "slice", "sort", "split", "sqrt", "square",
    "squeeze", "stack", "stop_gradient", "strided_slice", "subtract", "switch_case", "tan", "tanh",
    "tensor_scatter_nd_add", "tensor_scatter_nd_update", "tensordot", "tile", "transpose", "truediv", "uint16",
    "uint32", "uint64", "uint8", "unique", "unstack", "where", "while_loop", "zeros", "zeros_like",
    "string", "ragged", "sparse", "RaggedTensor", "SparseTensor", "strings",
    # FUNCTIONAL
    "control_dependencies", "ensure_shape", "executing_eagerly", "foldl", "foldr", "get_static_value", "group",
    "identity_n", "map_fn", "no_op", "recompute_grad", "scan", "vectorized_map", "histogram_fixed_width",
    "histogram_fixed_width_bins", "searchsorted", "unravel_index",
    "constant_initializer", "ones_initializer", "random_normal_initializer", "random_uniform_initializer",
    "zeros_initializer",
    "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_nd_sub",
]


def __getattr__(name: str) -> object:
    """`tf.keras` is imported on first use: importing Keras chooses its backend (JAX) for the process."""
    if name == "keras":
        import importlib

        return importlib.import_module("tapeshim.keras")
    raise AttributeError(f"module 'tapeshim' has no attribute {name!r}")
