"""`tf.keras.backend`: Keras's backend utilities, and the legacy value helpers TF code still uses."""

from typing import Any

import numpy as np

from tapeshim._src.keras_bridge import keras as _keras
from tapeshim._src.keras_bridge import public_names as _public_names

globals().update(_public_names(_keras.backend))


def int_shape(x: Any) -> tuple | None:
    """The shape of a tensor or variable as a tuple of ints (None for unknown dimensions)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        return None
    return tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape)


def get_value(x: Any) -> Any:
    """The value of a variable or tensor as a numpy array."""
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def set_value(x: Any, value: Any) -> None:
    """Assigns a numpy value to a variable (Keras's or tapeshim's)."""
    x.assign(np.asarray(value, dtype=np.dtype(getattr(x.dtype, "name", x.dtype))))


def batch_get_value(tensors: list) -> list:
    """The values of several variables or tensors as numpy arrays."""
    return [get_value(x) for x in tensors]


def batch_set_value(tuples: list) -> None:
    """Assigns `(variable, value)` pairs."""
    for x, value in tuples:
        set_value(x, value)


__all__ = sorted(name for name in globals() if not name.startswith("_") and name not in ("Any", "np"))
