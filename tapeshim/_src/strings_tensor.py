"""String tensors (`tf.string`): host-side numpy object arrays of `bytes`.

Design:

* A string tensor is a `StringTensor`, a subclass of `Tensor` (so
  `isinstance(x, tf.Tensor)` and `tf.is_tensor(x)` hold), whose `_value` is a
  read-only C-ordered numpy array of dtype `object` holding `bytes` (Python
  `str` is encoded as UTF-8, as TF does), and whose dtype is `tf.string`. It is
  never put on a device nor traced into XLA: JAX has no string type.
* `tf.constant`, `tf.convert_to_tensor` and every op's input conversion reach
  `string_constant` through a small hook in `tensor.py` (`_python_constant` and
  `constant`), for Python `str`/`bytes`, nested lists of them, numpy `str_`/
  `bytes_` values and numpy arrays of kind `U`, `S` or `O` (bytes/str), or any
  value with `dtype=tf.string`.
* `StringTensor` answers the operators TF defines for strings itself: `[]`
  (indexing and slicing), `==`/`!=` and `+` (concatenation). Indexing and
  equality run the engine's own numeric ops on *codes* (`int64` positions of
  the strings, equal strings sharing a code), so their shape rules and error
  messages are exactly those of numeric tensors; the strings are then picked
  on the host.
* The engine's other ops (`tf.reshape`, `tf.concat`, `tf.gather`, ...) reach
  string tensors through `strings_host.apply`, which runs the element-moving
  ones on codes the same way and raises TF's `InvalidArgumentError` (or
  `UnimplementedError` for `Cast`) for numeric ones; `registry.apply` must
  hand it ops with a `tf.string` input (a three-line dispatch, ENGINE's). Until
  then those ops raise `InvalidArgumentError` or `TypeError` for strings.
* Code that builds tensors from host numpy arrays (tf.data's batching, record
  readers, decoders) calls `host_tensor(array, dtype)`, which makes a
  `StringTensor` for `tf.string` and a device `Tensor` otherwise.
* `.numpy()` gives `bytes` for a scalar and an object array of `bytes`
  otherwise, as TF.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tapeshim._src import dtypes, errors
from tapeshim._src.dtypes import DType
from tapeshim._src.tensor import Tensor, constant, constant_shaped, convert_to_tensor, device_constant
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

_MIXED = "Can't convert Python sequence with mixed types to Tensor."
_RAGGED = "Can't convert non-rectangular Python sequence to Tensor."


def _leaf_bytes(value: Any) -> bytes | None:
    """`value` as bytes when it is a str or bytes (numpy's included), else None."""
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return None


def _first_leaf(value: Any) -> Any:
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value


def is_string_value(value: Any) -> bool:
    """Whether `value` converts to a `tf.string` tensor by default (its first leaf is str/bytes)."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SU":
            return True
        return value.dtype.kind == "O" and value.size > 0 and isinstance(value.flat[0], (str, bytes))
    if isinstance(value, (list, tuple)):
        return isinstance(_first_leaf(value), (str, bytes))
    return False


def _object_array(value: Any) -> np.ndarray:
    """A nested list of str/bytes as a numpy object array of bytes, with TF's errors."""
    leaves: list[bytes] = []

    def walk(item: Any) -> tuple:
        if isinstance(item, (list, tuple)):
            shapes = {walk(v) for v in item}
            if len(shapes) > 1:
                raise ValueError(_RAGGED)
            return (len(item), *(shapes.pop() if shapes else ()))
        leaf = _leaf_bytes(item)
        if leaf is None:
            raise ValueError(_MIXED)
        leaves.append(leaf)
        return ()

    shape = walk(value)
    array = np.empty(len(leaves), dtype=object)
    array[:] = leaves
    return array.reshape(shape)


def _numpy_strings(array: np.ndarray) -> np.ndarray:
    """A numpy array of kind S, U or O (of str/bytes) as an object array of bytes."""
    if array.dtype.kind == "S":
        return np.array([bytes(v) for v in array.reshape(-1)] or [], dtype=object).reshape(array.shape)
    flat = array.reshape(-1)
    out = np.empty(flat.shape, dtype=object)
    for i, item in enumerate(flat):
        leaf = _leaf_bytes(item)
        if leaf is None:
            raise ValueError(
                f"Failed to convert a NumPy array to a Tensor (Unsupported object type {type(item).__name__})."
            )
        out[i] = leaf
    return out.reshape(array.shape)


def _as_bytes_array(value: Any, dtype: DType | None) -> np.ndarray:
    """Converts a Python or numpy value to an object array of bytes, with TF's conversion errors."""
    if isinstance(value, Tensor):
        if not isinstance(value, StringTensor):  # every tf.string tensor is a StringTensor
            raise TypeError(f"Expected tensor {value.numpy()} with dtype tf.string, but got dtype {value._dtype!r}.")
        return value._array
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind in "SUO":
            return _numpy_strings(array)
        if dtype is dtypes.string:
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string")
        raise ValueError("Failed to convert a NumPy array to a Tensor (Unsupported object type object).")
    if isinstance(value, (list, tuple)) and value:
        first = _first_leaf(value)
        if not isinstance(first, (str, bytes, list, tuple)):
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string")
    elif not isinstance(value, (list, tuple)) and _leaf_bytes(value) is None:
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string")
    if isinstance(value, (list, tuple)) and not value:
        return np.empty((0,), dtype=object)
    return _object_array(value)


def host_tensor(array: np.ndarray, dtype: DType) -> Tensor:
    """A tensor holding a host numpy array: a `StringTensor` for `tf.string`, else a device `Tensor`.

    Args:
      array: the value (for `tf.string`, an object array of bytes).
      dtype: its dtype.

    Returns:
      The tensor.
    """
    if dtype is dtypes.string:
        return StringTensor(array)
    return Tensor(device_constant(array), array.shape, dtype)


def string_constant(value: Any, dtype: DTypeLike | None = None, shape: Any = None) -> "StringTensor":
    """A `tf.string` tensor from a Python or numpy value (the hook `tensor.py`'s conversions call).

    Args:
      value: str, bytes, a nested list of them, a numpy array of str/bytes, or a string tensor.
      dtype: None or `tf.string`.
      shape: an optional shape (`tf.constant`'s): a one-element value is broadcast to it.

    Returns:
      A `StringTensor`.

    Raises:
      TypeError: for a value that is not a string (`tf.constant(1, tf.string)`).
      ValueError: for mixed or non-rectangular lists.
    """
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if dtype is not None and dtype is not dtypes.string:
        shown = value.numpy() if isinstance(value, Tensor) else value
        raise TypeError(f"Expected tensor {shown} with dtype {dtype!r}, but got dtype tf.string.")
    array = _as_bytes_array(value, dtype)
    if shape is not None:
        array = constant_shaped(array, shape, value, lambda: str(array).replace("\n", ""))
    return StringTensor(array)


def as_string_tensor(value: TensorLike, name: str = "input") -> "StringTensor":
    """Converts an op's input to a string tensor; a numeric input is TF's error for a string op.

    Raises:
      InvalidArgumentError: for a numeric tensor (TF's kernels refuse it).
      TypeError: for a Python value that is not a string.
    """
    if isinstance(value, StringTensor):
        return value
    if isinstance(value, Tensor) or hasattr(value, "_read_for_op"):
        tensor = convert_to_tensor(value)
        if tensor._dtype is dtypes.string:
            return StringTensor(np.asarray(tensor._value, dtype=object))
        raise errors.invalid_argument(
            f"Value for attr 'T' of {tensor._dtype.name} is not in the list of allowed values: string "
            f"(argument `{name}` must be a string tensor)",
            None,
        )
    return string_constant(value)


def codes(*tensors: "StringTensor") -> list[Tensor]:
    """int64 tensors of codes for string tensors: equal strings get equal codes, across all of them."""
    flats = [t._array.reshape(-1) for t in tensors]
    pool = np.concatenate(flats) if flats else np.empty((0,), object)
    if pool.size:
        _, inverse = np.unique(pool, return_inverse=True)
    else:
        inverse = np.empty((0,), np.int64)
    result, start = [], 0
    for t, flat in zip(tensors, flats):
        part = np.asarray(inverse[start : start + flat.size], np.int64).reshape(t._array.shape)
        start += flat.size
        result.append(constant(part))
    return result


def positions(tensor: "StringTensor") -> Tensor:
    """An int64 tensor of each element's flat position: numeric ops on it move elements as they would strings."""
    return constant(np.arange(tensor._array.size, dtype=np.int64).reshape(tensor._array.shape))


def pick(tensor: "StringTensor", index: Tensor) -> "StringTensor":
    """The strings of `tensor` at the flat positions `index` holds (the result of an op on `positions`)."""
    return StringTensor(tensor._array.reshape(-1)[np.asarray(index.numpy(), np.int64)])


def _other_string(other: Any, anchor: "StringTensor") -> Any:
    """An operator's other operand as a string tensor; a numeric tensor is TF's kernel error."""
    if isinstance(other, StringTensor):
        return other
    if isinstance(other, Tensor) or hasattr(other, "_read_for_op"):
        tensor = convert_to_tensor(other)
        raise errors.invalid_argument(
            f"cannot compute {{op}} as input #1(zero-based) was expected to be a string tensor but is a "
            f"{_tf_name(tensor._dtype)} tensor",
            None,
        )
    return string_constant(other, dtypes.string)


def _tf_name(dtype: DType) -> str:
    return {"float32": "float", "float64": "double", "float16": "half"}.get(dtype.name, dtype.name)


class StringTensor(Tensor):
    """A `tf.string` tensor: a host-side numpy object array of `bytes` (see the module docstring)."""

    __slots__ = ()

    def __init__(self, array: np.ndarray) -> None:
        array = np.array(array, dtype=object, order="C")
        array.flags.writeable = False
        # A string tensor holds a host object array where Tensor expects a device array: JAX has no strings.
        super().__init__(array, tuple(array.shape), dtypes.string)  # type: ignore[arg-type]

    @property
    def _array(self) -> np.ndarray:
        """The host numpy object array of bytes (read-only) that `_value` holds."""
        # Tensor types `_value` as a device array; a string tensor's is always this host array (see __init__).
        return self._value  # type: ignore[return-value]

    @property
    def value(self) -> np.ndarray:  # type: ignore[override]  # host bytes, where Tensor.value is a device array
        """The host numpy object array of bytes (read-only)."""
        return self._array

    def numpy(self) -> Any:
        """`bytes` for a scalar, else a numpy object array of `bytes`, as TF."""
        return self._array[()] if self._array.ndim == 0 else self._array.copy()

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        return self._array.copy() if dtype is None else self._array.astype(dtype)

    def __jax_array__(self) -> Any:
        raise TypeError("A tf.string tensor cannot be used as a JAX array: JAX has no string type.")

    def __float__(self) -> float:
        return float(self._array.astype(np.float64))

    def __int__(self) -> int:
        return int(self._array.astype(np.int64))

    def __reduce__(self) -> tuple:
        return string_constant, (self.numpy(),)

    def __getitem__(self, key: Any) -> "StringTensor":
        from tapeshim._src.ops import array_ops  # import cycle: tensor -> strings_tensor -> ops -> tensor

        return pick(self, array_ops.getitem(positions(self), key))

    def __eq__(self, other: Any) -> Any:
        if other is None:
            return False
        try:
            other = _other_string(other, self)
        except errors.InvalidArgumentError as exc:
            raise errors.invalid_argument(str(exc).format(op="Equal").split(" [Op:")[0], "Equal") from None
        a, b = codes(self, other)
        from tapeshim._src.ops import math_ops  # import cycle: tensor -> strings_tensor -> ops -> tensor

        return math_ops.tensor_equals(a, b)

    def __ne__(self, other: Any) -> Any:
        if other is None:
            return True
        try:
            other = _other_string(other, self)
        except errors.InvalidArgumentError as exc:
            raise errors.invalid_argument(str(exc).format(op="NotEqual").split(" [Op:")[0], "NotEqual") from None
        a, b = codes(self, other)
        from tapeshim._src.ops import math_ops  # import cycle: tensor -> strings_tensor -> ops -> tensor

        return math_ops.tensor_not_equals(a, b)

    def __add__(self, other: TensorLike) -> "StringTensor":
        return _concatenate(self, other, reflected=False)

    def __radd__(self, other: TensorLike) -> "StringTensor":
        return _concatenate(self, other, reflected=True)


def _concatenate(tensor: StringTensor, other: Any, reflected: bool) -> StringTensor:
    """`a + b` on strings: elementwise concatenation with broadcasting (TF's Add on strings)."""
    if not (isinstance(other, Tensor) or hasattr(other, "_read_for_op")):
        other = convert_to_tensor(other, dtype_hint=dtypes.string)  # `+` converts with a hint, as TF's
    try:
        other = _other_string(other, tensor)
    except errors.InvalidArgumentError as exc:
        raise errors.invalid_argument(str(exc).format(op="Add").split(" [Op:")[0], "Add") from None
    left, right = (other, tensor) if reflected else (tensor, other)
    try:
        shape = np.broadcast_shapes(left._array.shape, right._array.shape)
    except ValueError:
        text = " vs. ".join("[" + ",".join(str(d) for d in s) + "]" for s in (left._array.shape, right._array.shape))
        raise errors.invalid_argument(f"Incompatible shapes: {text}", "Add") from None
    a = np.broadcast_to(left._array, shape).reshape(-1)
    b = np.broadcast_to(right._array, shape).reshape(-1)
    out = np.empty(a.shape, dtype=object)
    for i in range(a.size):
        out[i] = a[i] + b[i]
    return StringTensor(out.reshape(shape))
