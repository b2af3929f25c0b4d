"""Type aliases for tapeshim's signatures: what TF's documentation calls "tensor-like" and so on.

Public signatures use these instead of `Any`, so a type checker and an IDE see what an argument
accepts. They are aliases only: nothing here converts or checks a value at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, Union

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

AxisLike: TypeAlias = Union[int, Sequence[int], "Tensor", None]
"""A reduction axis: one axis, several axes, an integer tensor of axes, or `None` for all."""

__all__ = ["AxisLike", "DTypeLike", "ShapeLike", "TensorLike"]
