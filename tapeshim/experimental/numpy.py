"""`tf.experimental.numpy` for tapeshim: NumPy-style functions that GradientTape records.

See `tapeshim/_src/interop_numpy.py`; every function returns a `tf.Tensor`.
"""

import numpy as _np

from tapeshim._src.interop_numpy import FUNCTIONS as _FUNCTIONS
from tapeshim._src.interop_numpy import array, asarray, ndim, shape, size
from tapeshim._src.tensor import Tensor as ndarray

globals().update(_FUNCTIONS)

bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
float_, int_, complex_ = _np.float64, _np.int64, _np.complex128
pi, e, inf, newaxis = _np.pi, _np.e, _np.inf, None
finfo, iinfo, issubdtype, result_type, promote_types = (
    _np.finfo,
    _np.iinfo,
    _np.issubdtype,
    _np.result_type,
    _np.promote_types,
)

__all__ = [
    "array",
    "asarray",
    "ndim",
    "shape",
    "size",
    "ndarray",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "float_",
    "int_",
    "complex_",
    "pi",
    "e",
    "inf",
    "newaxis",
    "finfo",
    "iinfo",
    "issubdtype",
    "result_type",
    "promote_types",
]
__all__ += sorted(_FUNCTIONS)
