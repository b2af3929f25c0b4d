"""Type aliases for tapeshim's signatures: what TF's documentation calls "tensor-like" and so on.

Public signatures use these instead of `Any`, so a type checker and an IDE see what an argument
accepts. They are aliases only: nothing here converts or checks a value at run time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeAlias, Union

import jax
import numpy as np

if TYPE_CHECKING:
    from tapeshim._src.dtypes import DType
    from tapeshim._src.shape import TensorShape
    from tapeshim._src.tensor import Tensor
    from tapeshim._src.variable import Variable

TensorLike: TypeAlias = Union[
    "Tensor", "Variable", jax.Array, np.ndarray, np.generic, bool, int, float, complex, str, bytes, Sequence[Any]
]
"""What `tf.convert_to_tensor` accepts: tensors, variables, arrays, Python scalars, nested lists."""

DTypeLike: TypeAlias = Union["DType", np.dtype, type, str]
"""What `tf.as_dtype` accepts: a `tf.DType`, a NumPy dtype or scalar type, or a dtype name."""

ShapeLike: TypeAlias = Union["TensorShape", Sequence[Union[int, None]], int]
"""What `tf.TensorShape` accepts: a shape, a sequence of dimensions (`None` unknown), or a length."""

TensorShapeLike: TypeAlias = Union["TensorShape", Iterable[Union[SupportsIndex, None]], None]
"""What `tf.TensorShape(...)` and `tf.TensorSpec`'s shape accept: a shape, dimensions (`None` unknown, the
others anything with `__index__`), or `None` for an unknown rank. (`TensorShape` itself also takes a single
dimension: `TensorShape(3)` is `(3,)`, as TF.)"""

PathLike: TypeAlias = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]", "Tensor", "Variable"]
"""What `tf.io.gfile` and the file ops accept as a path: text, bytes, an `os.PathLike`, or a scalar string tensor."""

AxisLike: TypeAlias = Union[int, Sequence[int], "Tensor", None]
"""A reduction axis: one axis, several axes, an integer tensor of axes, or `None` for all."""

__all__ = ["AxisLike", "DTypeLike", "PathLike", "ShapeLike", "TensorLike", "TensorShapeLike"]
