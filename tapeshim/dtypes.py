"""`tf.dtypes`: dtype objects and conversion."""

from tapeshim._src.dtypes import (
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
from tapeshim._src.dtypes import bool_ as bool
from tapeshim._src.ops.math_ops import cast, complex

__all__ = [
    "DType", "as_dtype", "bfloat16", "bool", "cast", "complex", "complex64", "complex128", "double", "float16",
    "float32", "float64", "half", "int8", "int16", "int32", "int64", "string", "uint8", "uint16", "uint32", "uint64",
]
