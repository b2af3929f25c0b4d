"""`tf.convert_to_tensor(TensorShape([5, 8]))`: a fully known shape converts to its dimensions, as TF."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, constant, register_tensor_conversion_function


def _shape_to_tensor(shape: TensorShape, dtype: Any = None, name: Any = None, as_ref: bool = False) -> Tensor:
    """The dimensions of a fully known `shape` as an int32 (int64 for a dimension past int32) vector.

    Raises:
      ValueError: if a dimension or the rank is unknown.
      TypeError: if `dtype` is not int32 or int64.
    """
    del name, as_ref
    if shape.rank is None or None in shape.as_list():
        raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
    dims = [d for d in shape.as_list() if d is not None]  # all of them: checked above
    if dtype is None:
        target = dtypes.int64 if any(d >= 2**31 for d in dims) else dtypes.int32
    else:
        target = dtypes.as_dtype(dtype)
        if target not in (dtypes.int32, dtypes.int64):
            raise TypeError(
                f"Cannot convert TensorShape {shape} to dtype {target!r}. Allowed dtypes are tf.int32 and tf.int64."
            )
    return constant(np.asarray(dims, target.as_numpy_dtype).reshape(len(dims)), target)


register_tensor_conversion_function(TensorShape, _shape_to_tensor)
