"""`tf.TensorSpec`: the shape and dtype a `tapeshim.function` argument must have."""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes
from tapeshim._src.shape import TensorShape
from tapeshim._src.typing_aliases import DTypeLike, TensorShapeLike


class TensorSpec:
    """Describes a tensor: shape (with `None` for any size), dtype and name.

    Args:
      shape: the shape; a dimension may be `None`.
      dtype: the dtype (default float32).
      name: an optional name.
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape: TensorShapeLike, dtype: DTypeLike = dtypes.float32, name: str | None = None) -> None:
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def name(self) -> str | None:
        return self._name

    @classmethod
    def from_tensor(cls, tensor: Any, name: str | None = None) -> "TensorSpec":
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, value: Any) -> bool:
        """True when `value` (a tensor or spec) has this dtype and a compatible shape."""
        return value.dtype == self._dtype and self._shape.is_compatible_with(value.shape)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TensorSpec)
            and self._shape == other._shape
            and self._dtype == other._dtype
            and self._name == other._name
        )

    def __hash__(self) -> int:
        return hash((self._shape, self._dtype, self._name))

    def __repr__(self) -> str:
        name = "None" if self._name is None else repr(self._name)
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={name})"
