"""TensorFlow dtypes over numpy/JAX dtypes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from tapeshim._src.typing_aliases import DTypeLike


class DType:
    """A TensorFlow-style dtype: `tf.float32`, `tf.int32`, ...

    Wraps a numpy dtype. Compares equal to the numpy dtype, its type and its name,
    as `tf.DType` does.
    """

    __slots__ = ("_np", "_name", "_floating", "_complex", "_trainable", "_hash")

    def __init__(self, np_dtype: npt.DTypeLike, name: str) -> None:
        self._np = np.dtype(np_dtype)
        self._name = name
        self._floating = name in ("float16", "bfloat16", "float32", "float64")
        self._complex = name in ("complex64", "complex128")
        self._trainable = self._floating or self._complex
        self._hash = hash(name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def as_numpy_dtype(self) -> type:
        return object if self._name == "string" else self._np.type

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def is_floating(self) -> bool:
        return self._floating

    @property
    def is_complex(self) -> bool:
        return self._complex

    @property
    def is_integer(self) -> bool:
        return self._name.startswith(("int", "uint"))

    @property
    def is_unsigned(self) -> bool:
        return self._name.startswith("uint")

    @property
    def is_bool(self) -> bool:
        return self._name == "bool"

    @property
    def is_trainable(self) -> bool:
        """True for the dtypes TF differentiates: floating and complex."""
        return self._trainable

    @property
    def real_dtype(self) -> "DType":
        if self._name == "complex64":
            return float32
        if self._name == "complex128":
            return float64
        return self

    @property
    def is_string(self) -> bool:
        """True for `tf.string`, whose tensors hold bytes on the host."""
        return self._name == "string"

    @property
    def size(self) -> int:
        return 0 if self._name == "string" else self._np.itemsize

    @property
    def min(self) -> Any:
        """The smallest value of the dtype.

        Raises:
          TypeError: for bool and complex dtypes, as TF.
        """
        if self.is_floating:
            return ml_dtypes.finfo(self._np).min
        if not self.is_integer:
            raise TypeError(f"Cannot find minimum value of {self} with type {self}.")
        return int(np.iinfo(self._np).min)

    @property
    def max(self) -> Any:
        """The largest value of the dtype.

        Raises:
          TypeError: for bool and complex dtypes, as TF.
        """
        if self.is_floating:
            return ml_dtypes.finfo(self._np).max
        if not self.is_integer:
            raise TypeError(f"Cannot find maximum value of {self} with type {self}.")
        return int(np.iinfo(self._np).max)

    @property
    def limits(self) -> tuple:
        """TF's `(low, high)` range of the dtype's values, the low end clipped at 0.

        Raises:
          ValueError: for float16, bfloat16 and complex dtypes, which TF gives none.
        """
        if self._name in ("float32", "float64"):
            return (0, 1)
        if self._name == "bool":
            return (0, True)
        if not self.is_integer:
            raise ValueError(f"{self} does not have defined limits.")
        return (0, int(np.iinfo(self._np).max))

    @property
    def as_datatype_enum(self) -> int:
        """TF's `DataType` enum value of the dtype (`tf.float32.as_datatype_enum == 1`)."""
        return _ENUM_OF_NAME[self._name]

    @property
    def is_quantized(self) -> bool:
        """False: tapeshim has no quantized dtypes."""
        return False

    @property
    def is_numpy_compatible(self) -> bool:
        """True: every tapeshim dtype has a numpy counterpart."""
        return True

    def is_compatible_with(self, other: DTypeLike | npt.DTypeLike | int) -> bool:
        """True when `other` (a DType or anything `as_dtype` accepts) is this dtype.

        Raises:
          TypeError: if `other` names no dtype.
        """
        return self is as_dtype(other)

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is DType:
            return self is other
        try:
            # Any object may be compared: as_dtype raises TypeError or ValueError for one naming no dtype.
            return self._name == as_dtype(other)._name  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return as_dtype, (self._name,)


float16 = DType(np.float16, "float16")
bfloat16 = DType(jnp.bfloat16, "bfloat16")
float32 = DType(np.float32, "float32")
float64 = DType(np.float64, "float64")
int8 = DType(np.int8, "int8")
int16 = DType(np.int16, "int16")
int32 = DType(np.int32, "int32")
int64 = DType(np.int64, "int64")
uint8 = DType(np.uint8, "uint8")
uint16 = DType(np.uint16, "uint16")
uint32 = DType(np.uint32, "uint32")
uint64 = DType(np.uint64, "uint64")
bool_ = DType(np.bool_, "bool")
complex64 = DType(np.complex64, "complex64")
complex128 = DType(np.complex128, "complex128")
string = DType(np.object_, "string")  # host-side numpy object arrays of bytes (see strings_tensor.py)
half = float16
double = float64

ALL_DTYPES = (
    float16,
    bfloat16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    bool_,
    complex64,
    complex128,
    string,
)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"half": float16, "double": float64, "float": float32})
_BY_NP = {d._np: d for d in ALL_DTYPES}
_ENUM_OF_NAME = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "bfloat16": 14,
    "uint16": 17,
    "complex128": 18,
    "float16": 19,
    "uint32": 22,
    "uint64": 23,
    "string": 7,
}
_BY_ENUM = {enum: _BY_NAME[name] for name, enum in _ENUM_OF_NAME.items()}
_PYTHON_TYPES: dict[type, DType] = {float: float32, bool: bool_}


def as_dtype(type_value: DTypeLike | npt.DTypeLike | int) -> DType:
    """Converts a DType, numpy dtype or type, dtype name, Python `float`/`bool` or TF enum to a `DType`.

    Args:
      type_value: the value to convert.

    Returns:
      The matching `DType`.

    Raises:
      TypeError: if `type_value` names no supported dtype.
    """
    if isinstance(type_value, DType):
        return type_value
    found = None
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)  # TF's names only, not numpy's ("<f4")
    elif isinstance(type_value, type) and type_value in (int, float, bool, complex):
        found = _PYTHON_TYPES.get(type_value)  # Python's float is float32; int and complex name none
    elif isinstance(type_value, int):
        found = None if isinstance(type_value, bool) else _BY_ENUM.get(type_value)  # TF's DataType enum
    elif type_value is not None:
        try:
            np_dtype = np.dtype(type_value)
            found = string if np_dtype.kind in "SU" else _BY_NP.get(np_dtype)  # numpy's bytes and str: tf.string
        except TypeError:
            pass
    if found is None:
        raise TypeError(f"Cannot convert the argument `type_value`: {type_value!r} to a TensorFlow DType.")
    return found


def from_numpy(np_dtype: np.dtype) -> DType:
    """The DType of a numpy dtype (fast path for internal use)."""
    return _BY_NP[np_dtype]
