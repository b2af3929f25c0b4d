"""`Tensor`: an immutable value that is either a `jax.Array` or a lazy tape node.

A tensor produced inside a recording tape from a watched input is *lazy*: its
shape and dtype are known at once, and its value is computed on demand by one
compiled program (see `replay.py`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterable, Sequence, SupportsInt, cast

import jax
import numpy as np
import numpy.typing as npt
from jax.typing import ArrayLike

from tapeshim._src import compile_tiers, dtypes, errors
from tapeshim._src import explain_hooks as _explain_hooks  # EXPLAIN: tape events for tape.explain
from tapeshim._src.config_device import tf_device_name
from tapeshim._src.dtypes import DType
from tapeshim._src.node import Node
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state, next_tensor_id
from tapeshim._src.tensor_numpy import default_numpy, numpy_as
from tapeshim._src.typing_aliases import DTypeLike, TensorLike


def _operand(other: Any, anchor: Any) -> Any:
    """A reflected operator's left operand: Python and numpy values convert to the anchor's dtype.

    As in TF, the conversion is strict for reflected operators (`3.0 / int_tensor`
    raises `TypeError`), while `int_tensor + 1.5` converts with a dtype hint and
    raises `InvalidArgumentError` for the mismatch.
    """
    cls = other.__class__
    if cls is float or cls is int:  # the common case (`0.01 * grad`): skip the tensor-like checks
        return convert_to_tensor(other, dtype=anchor._dtype)
    if isinstance(other, Tensor) or hasattr(other, "_read_for_op"):
        return other
    if other is None:
        return other
    return convert_to_tensor(other, dtype=anchor._dtype)


_PYTHON_VALUES = (bool, int, float, complex, str, bytes, list, tuple)


def _compared(other: Any, anchor: Any) -> Any:
    """A Python right operand converted strictly to the tensor's dtype, as TF's operators do.

    `int_tensor * 1.5` and `int_tensor < 1.5` raise TypeError in TF (`+`, `@`
    and `/` convert with a dtype hint and leave the mismatch to the op).
    """
    if other.__class__ in _PYTHON_VALUES:
        return convert_to_tensor(other, dtype=anchor._dtype)
    return other


def _reflected(exc: Exception, name: str, tensor: Any, other: Any) -> Any:
    """TF's operators hand an operand they cannot convert to its own reflected operator, else re-raise.

    So `tensor * custom_object` calls `custom_object.__rmul__(tensor)`, as in TF.
    """
    reflected = getattr(type(other), name, None)
    if reflected is None:
        raise exc
    try:
        result = reflected(other, tensor)
    except (TypeError, ValueError):
        raise exc from None
    if result is NotImplemented:
        raise exc
    return result


def device_name() -> str:
    """TF's name of the device tensors live on (`/job:localhost/replica:0/task:0/device:CPU:0`)."""
    kind = "CPU" if jax.default_backend() == "cpu" else "GPU"
    return f"/job:localhost/replica:0/task:0/device:{kind}:0"


class TensorOperators:
    """Python operators shared by `Tensor` and `Variable`; each calls the op table."""

    __slots__ = ()

    def __add__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.add(self, other)
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__radd__", self, other)

    def __radd__(self, other: TensorLike) -> "Tensor":
        return math_ops.add(_operand(other, self), self)

    def __sub__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.subtract(self, _compared(other, self))
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rsub__", self, other)

    def __rsub__(self, other: TensorLike) -> "Tensor":
        return math_ops.subtract(_operand(other, self), self)

    def __mul__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.multiply(self, _compared(other, self))
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rmul__", self, other)

    def __rmul__(self, other: TensorLike) -> "Tensor":
        return math_ops.multiply(_operand(other, self), self)

    def __truediv__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.truediv(self, other)
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rtruediv__", self, other)

    def __rtruediv__(self, other: TensorLike) -> "Tensor":
        return math_ops.truediv(_operand(other, self), self)

    def __floordiv__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.floordiv(self, _compared(other, self))
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rfloordiv__", self, other)

    def __rfloordiv__(self, other: TensorLike) -> "Tensor":
        return math_ops.floordiv(_operand(other, self), self)

    def __mod__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.floormod(self, _compared(other, self))
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rmod__", self, other)

    def __rmod__(self, other: TensorLike) -> "Tensor":
        return math_ops.floormod(_operand(other, self), self)

    def __pow__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.pow(self, _compared(other, self))
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rpow__", self, other)

    def __rpow__(self, other: TensorLike) -> "Tensor":
        return math_ops.pow(_operand(other, self), self)

    def __matmul__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.matmul(self, other)
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rmatmul__", self, other)

    def __rmatmul__(self, other: TensorLike) -> "Tensor":
        return math_ops.matmul(_operand(other, self), self)

    def __neg__(self) -> "Tensor":
        return math_ops.negative(self)

    def __pos__(self) -> "Tensor":
        return math_ops.identity(self)

    def __abs__(self) -> "Tensor":
        return math_ops.abs(self)

    def __invert__(self) -> "Tensor":
        this = cast(Any, self)  # (a Tensor or a Variable)
        if this.dtype.is_integer:  # TF: the bitwise invert of an integer tensor, the logical not of a bool one
            from tapeshim._src.ops import bitwise_ops  # (ops import this module)

            return bitwise_ops.invert(this)
        return math_ops.logical_not(self)

    def __and__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.logical_and(self, other)
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rand__", self, other)

    def __rand__(self, other: TensorLike) -> "Tensor":
        return math_ops.logical_and(other, self)

    def __or__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.logical_or(self, other)
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__ror__", self, other)

    def __ror__(self, other: TensorLike) -> "Tensor":
        return math_ops.logical_or(other, self)

    def __xor__(self, other: TensorLike) -> "Tensor":
        try:
            return math_ops.logical_xor(self, other)
        except (TypeError, ValueError) as exc:
            return _reflected(exc, "__rxor__", self, other)

    def __lt__(self, other: TensorLike) -> "Tensor":
        return math_ops.less(self, _compared(other, self))

    def __le__(self, other: TensorLike) -> "Tensor":
        return math_ops.less_equal(self, _compared(other, self))

    def __gt__(self, other: TensorLike) -> "Tensor":
        return math_ops.greater(self, _compared(other, self))

    def __ge__(self, other: TensorLike) -> "Tensor":
        return math_ops.greater_equal(self, _compared(other, self))

    def __eq__(self, other: object) -> Any:
        return math_ops.tensor_equals(self, _compared(other, self))

    def __ne__(self, other: object) -> Any:
        return math_ops.tensor_not_equals(self, _compared(other, self))

    def __getitem__(self, key: Any) -> "Tensor":
        return array_ops.getitem(self, key)


class Tensor(TensorOperators):
    """A multidimensional array, as `tf.Tensor`.

    Tensors are immutable. Read the value with `.numpy()`; `shape` and `dtype`
    are always known, even before a lazy tensor's value is computed.
    """

    # (`_keras_mask`: the Keras mask a layer call attached, as on TF's eager tensors; `keras_masks.py`)
    __slots__ = ("_value", "_node", "_tid", "_shape", "_dtype", "_keras_mask", "__weakref__")
    __array_priority__ = 100
    _keras_mask: "Tensor | None"  # (unset unless a Keras layer call attached a mask; None once a layer took it off)

    def __init__(
        self, value: jax.Array | None, shape: tuple, dtype: DType, node: Node | None = None, tid: int | None = None
    ) -> None:
        self._value = value
        self._node = node
        self._tid = next_tensor_id() if tid is None else tid
        self._shape = shape
        self._dtype = dtype
        if _explain_hooks.active:  # EXPLAIN: while a tape records, which op made each tensor
            _explain_hooks.created(self)

    # -- metadata -------------------------------------------------------
    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape._known(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def name(self) -> str:
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")

    @property
    def device(self) -> str:
        """The name of the device holding the tensor, as TF names it (where `tf.device` placed it)."""
        if isinstance(self._value, jax.Array) and not isinstance(self._value, jax.core.Tracer):
            return tf_device_name(self._value)
        return device_name()

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        """Checks that `shape` is compatible with the tensor's, as TF's `set_shape` (whose graph tensors take
        it: a `py_function` output in a `Dataset.map` gets it as its spec's shape).

        Raises:
          ValueError: if `shape` is not compatible with the tensor's shape.
        """
        wanted = TensorShape(shape)
        if not wanted.is_compatible_with(self.shape):
            raise ValueError(
                f"Tensor's shape {tuple(self.shape.as_list())} is not compatible with supplied shape "
                f"{tuple(wanted.as_list())}."
            )
        graph_shapes = _thread_state.graph_shapes
        if graph_shapes is not None and self._tid in graph_shapes:
            graph_shapes[self._tid] = graph_shapes[self._tid].merge_with(wanted)

    def ref(self) -> "_TensorRef":
        return _TensorRef(self)

    # -- values ---------------------------------------------------------
    @property
    def value(self) -> jax.Array:
        """The `jax.Array` holding this tensor's value (computed if lazy)."""
        trace = _thread_state.trace
        if trace is not None:
            trace.check_concrete(self)
        value = self._value
        if value is None:
            from tapeshim._src import replay  # import cycle: tensor <-> replay

            replay.force([self])
            value = cast(jax.Array, self._value)
        return value

    def numpy(self) -> Any:
        """Returns the value as a numpy array, or a numpy scalar for a scalar."""
        if _thread_state.recorders:  # EXPLAIN: a tracked value leaving the tape
            _explain_hooks.left_tape(self, "numpy")
        value = self.value
        if isinstance(value, jax.core.Tracer):
            raise ValueOfJaxTrace(_VALUE_OF_JAX_TRACE)
        array = np.array(value)
        return array[()] if array.ndim == 0 else array

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        if _thread_state.recorders:  # EXPLAIN: a tracked value leaving the tape
            _explain_hooks.left_tape(self, "__array__")
        array = np.asarray(self.value)
        if copy:  # `np.array(t)`: the caller's own array, writable as TF's
            return np.array(array, dtype=dtype, copy=True)
        return array if dtype is None else array.astype(dtype)

    def __jax_array__(self) -> jax.Array:
        if _thread_state.recorders:  # EXPLAIN: a tracked value leaving the tape
            _explain_hooks.left_tape(self, "__jax_array__")
        return as_jax_array(self.value)

    def __float__(self) -> float:
        return float(self.numpy())

    def __int__(self) -> int:
        return int(self.numpy())

    def __index__(self) -> int:
        # numpy's, as TF: AttributeError for a float or bool scalar, TypeError for an array
        return self.numpy().__index__()

    def __complex__(self) -> complex:
        return complex(self.numpy())

    def __bool__(self) -> bool:
        value = self.numpy()
        if isinstance(value, np.ndarray):
            return bool(value.size > 0 and value)  # an empty tensor is False, as in TF
        return bool(value)

    def __round__(self, ndigits: int | None = None) -> Any:
        # TF's eager tensors route round() to numpy's `astype`, which they lack without numpy behaviour
        raise AttributeError(
            "Tensor object has no attribute 'astype'. \n        If you are looking for numpy-related methods, "
            "please run the following:\n        tf.experimental.numpy.experimental_enable_numpy_behavior()\n      "
        )

    def __format__(self, format_spec: str) -> str:
        """Formats the value as numpy does (`f"{loss:.4f}"`), as TF's eager tensors do."""
        if self._symbolic_name() is not None:
            return object.__format__(self, format_spec)
        return self.numpy().__format__(format_spec)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("Scalar tensor has no `len()`")
        return self._shape[0]

    def __iter__(self) -> Any:
        if not self._shape:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._shape[0]))

    def __hash__(self) -> int:
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __reduce__(self) -> tuple:
        return convert_to_tensor, (self.numpy(),)

    def __copy__(self) -> "Tensor":
        return self

    def __deepcopy__(self, memo: dict) -> "Tensor":
        return self

    # -- printing -------------------------------------------------------
    def _symbolic_name(self) -> str | None:
        """The TF-style name (`"Sin:0"`) of a symbolic tensor while a `tapeshim.function` traces it."""
        trace = _thread_state.trace
        if trace is None or not trace.is_symbolic(self):
            return None
        op = None if self._node is None else self._node.op_type
        if op is None:
            return f"{trace.placeholder_name(self._tid)}:0"  # an argument's placeholder is named after it, as TF
        return f"{op}:0"

    def __str__(self) -> str:
        symbolic = self._symbolic_name()
        if symbolic is not None:
            return f'Tensor("{symbolic}", shape={self.shape}, dtype={self._dtype.name})'
        try:
            text = str(self.numpy())
        except LeakedGraphTensor:  # a finished function trace's tensor: TF prints it as a graph tensor
            return f'Tensor("{self._graph_name()}", shape={self.shape}, dtype={self._dtype.name})'
        if "\n" in text:
            text = "\n" + text
        return f"tf.Tensor({text}, shape={self.shape}, dtype={self._dtype.name})"

    def __repr__(self) -> str:
        symbolic = self._symbolic_name()
        if symbolic is not None:
            return f"<tf.Tensor '{symbolic}' shape={self.shape} dtype={self._dtype.name}>"
        try:
            value = self.numpy()
        except LeakedGraphTensor:
            return f"<tf.Tensor '{self._graph_name()}' shape={self.shape} dtype={self._dtype.name}>"
        return f"<tf.Tensor: shape={self.shape}, dtype={self._dtype.name}, numpy={numpy_text(value)}>"

    def _graph_name(self) -> str:
        """A leaked graph tensor's TF-style name: its op's type (`"AddV2:0"`)."""
        op = None if self._node is None else self._node.op_type
        return f"{op or 'Placeholder'}:0"


def numpy_text(value: object) -> str:
    """TF's rendering of a numpy value inside a repr."""
    if isinstance(value, np.ndarray):
        text = repr(value)
        return "\n" + text if "\n" in text else text
    return str(value)


class _TensorRef:
    """A hashable reference to a tensor (`Tensor.ref()`)."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self._tensor = tensor

    def deref(self) -> Tensor:
        return self._tensor

    def __hash__(self) -> int:
        return self._tensor._tid

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _TensorRef) and other._tensor is self._tensor


class LeakedGraphTensor(TypeError):
    """A finished function trace's tensor asked for its value by `str`/`repr` (which print it as a graph
    tensor instead, as TF's)."""


class ValueOfJaxTrace(errors.OperatorNotAllowedInGraphError, jax.errors.TracerArrayConversionError):
    """A tensor's value asked for inside a computation JAX traces (TF's `OperatorNotAllowedInGraphError`).

    It is also JAX's `TracerArrayConversionError`, which callers that fall back on it catch, but it is
    built from a message alone, as Keras re-raises errors (`type(e)(message)`).
    """

    def __init__(self, message: str) -> None:
        TypeError.__init__(self, message)


_VALUE_OF_JAX_TRACE = (
    "A tensor's value was asked for (a Python `if` or `while` on a tensor, `bool()`, `float()`, `int()` or "
    "`.numpy()`) inside a computation that JAX traces: tapeshim runs a Keras layer's call, an optimizer's update "
    "and its learning-rate schedule as one compiled op, where TF's Keras runs them eagerly. Branch with tf.cond "
    "or tf.where instead."
)


def concrete(value: jax.Array) -> Tensor:
    """Wraps a computed `jax.Array` (or a JAX tracer) in a Tensor."""
    return Tensor(value, tuple(value.shape), dtypes.from_numpy(np.dtype(value.dtype)))


# -- conversion -----------------------------------------------------------
_constant_cache: OrderedDict = OrderedDict()
_CONSTANT_CACHE_SIZE = 1024


def _contains_tensor(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return isinstance(value, Tensor) or hasattr(value, "_read_for_op")


def convert_to_tensor(
    value: Any, dtype: DTypeLike | None = None, dtype_hint: DTypeLike | None = None, name: str | None = None
) -> Tensor:
    """Converts `value` to a `Tensor`, as `tf.convert_to_tensor`.

    Args:
      value: a Tensor, Variable, numpy array, Python scalar or nested list.
      dtype: the required dtype; a Tensor of another dtype raises `ValueError`.
      dtype_hint: the dtype to use when `value` has none of its own and can be
        converted to it; otherwise the default conversion applies.
      name: ignored (eager execution has no op names).

    Returns:
      A `Tensor`.

    Raises:
      ValueError: if `value` cannot be converted, or is a tensor of another dtype.
      TypeError: if a Python value cannot be converted to `dtype` without loss.
    """
    del name
    cls = value.__class__
    if cls is Tensor and (dtype is None or dtype is value._dtype):
        return value
    if cls is float or cls is int:
        target = dtype if dtype is not None else dtype_hint
        if target is None or target.__class__ is DType:
            cached = _constant_cache.get((cls, value, target))
            if cached is not None:
                return Tensor(cached[0], (), cached[1])
    if isinstance(value, Tensor):
        tensor = value
    elif hasattr(value, "_read_for_op"):
        tensor = value._read_for_op()
    elif hasattr(value, "to_dense"):
        tensor = value.to_dense()  # IndexedSlices densify, as TF's conversion does
    elif isinstance(value, jax.Array):
        tensor = concrete(value)  # a JAX value (or tracer) is used as it is, without a copy
        if dtype is not None and dtypes.as_dtype(dtype) != tensor._dtype:
            return concrete(value.astype(dtypes.as_dtype(dtype)._np))
        if dtype is None and dtype_hint is not None:  # TF reads it as a NumPy array, which takes the hint
            hint = dtypes.as_dtype(dtype_hint)
            if hint != tensor._dtype and _numeric(tensor._dtype) and _numeric(hint):
                if isinstance(value, jax.core.Tracer):
                    return concrete(value.astype(hint._np))
                return _python_constant(np.asarray(value), hint)  # (NumPy's cast: NaN to an int is TF's)
    elif _conversion_functions and (converter := _find_conversion(value)) is not None:
        tensor = converter(value, dtype=dtype, name=None, as_ref=False)
    else:
        if dtype is not None:
            return _python_constant(value, dtypes.as_dtype(dtype))
        if dtype_hint is not None:
            try:
                return _python_constant(value, dtypes.as_dtype(dtype_hint))
            except (TypeError, ValueError):
                pass
        return _python_constant(value, None)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor._dtype:
        raise ValueError(
            f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for Tensor with dtype "
            f"{tensor._dtype.name}: {tensor!r}"
        )
    return tensor


def _numeric(dtype: DType) -> bool:
    """Whether `dtype` is a number type (or bool), between which TF converts a NumPy array to a dtype hint."""
    return dtype.is_bool or dtype.is_integer or dtype.is_floating or dtype.is_complex


_conversion_functions: list[tuple[type, Callable[..., Tensor], int]] = []


def register_tensor_conversion_function(
    base_type: type | tuple, conversion_func: Callable[..., Tensor], priority: int = 100
) -> None:
    """Makes `convert_to_tensor` (and so every op) accept `base_type`, as `tf.register_tensor_conversion_function`.

    Args:
      base_type: a class, or tuple of classes, whose instances `conversion_func`
        converts.
      conversion_func: `conversion_func(value, dtype=None, name=None,
        as_ref=False)` returning a Tensor.
      priority: lower numbers are tried first, as in TF.

    Raises:
      TypeError: if `base_type` is not a class or `conversion_func` is not callable.
    """
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    if not all(isinstance(t, type) for t in types):
        raise TypeError("base_type must be a type or a tuple of types.")
    if not callable(conversion_func):
        raise TypeError("conversion_func must be callable.")
    for t in types:
        _conversion_functions.append((t, conversion_func, priority))
    _conversion_functions.sort(key=lambda entry: entry[2])


def _find_conversion(value: Any) -> Callable[..., Tensor] | None:
    for base_type, conversion_func, _ in _conversion_functions:
        if isinstance(value, base_type):
            return conversion_func
    return None


def _first_tensor_dtype(value: Any) -> DType | None:
    if isinstance(value, (list, tuple)):
        for item in value:
            found = _first_tensor_dtype(item)
            if found is not None:
                return found
        return None
    return value._dtype if isinstance(value, Tensor) or hasattr(value, "_read_for_op") else None


def _autopack(value: Any, dtype: DType | None) -> Tensor:
    """Stacks a nested list holding tensors, as TF's conversion does.

    The other elements convert to the first tensor's dtype (strictly: `[int_tensor, 0.5]`
    raises TypeError); with a requested dtype, the tensors are cast to it.
    """
    from tapeshim._src.ops import array_ops, math_ops  # import cycle: tensor <-> ops (the ops build tensors)

    element_dtype = dtype if dtype is not None else _first_tensor_dtype(value)

    def pack(item: Any) -> Tensor:
        if isinstance(item, (list, tuple)):
            return array_ops.stack([pack(v) for v in item])
        if isinstance(item, Tensor) or hasattr(item, "_read_for_op"):
            tensor = convert_to_tensor(item)
            return tensor if dtype is None or tensor._dtype == dtype else math_ops.cast(tensor, dtype)
        return convert_to_tensor(item, dtype=element_dtype)

    return pack(value)


def _python_constant(value: Any, dtype: DType | None) -> Tensor:
    if _contains_tensor(value):
        return _autopack(value, dtype)
    scalar = value.__class__ in (bool, int, float, complex)
    if scalar:
        key = (value.__class__, value, dtype)
        cached = _constant_cache.get(key)
        if cached is not None:
            return Tensor(cached[0], (), cached[1])
    elif dtype is None and strings_tensor.is_string_value(value):  # STRINGS: tf.string
        return strings_tensor.string_constant(value, dtype)
    if dtype is dtypes.string:  # STRINGS: tf.string
        return strings_tensor.string_constant(value, dtype)
    array = default_numpy(value) if dtype is None else numpy_as(value, dtype)
    jax_value = device_constant(array) if scalar else host_constant(array)
    result_dtype = dtypes.from_numpy(array.dtype)
    if scalar:
        if len(_constant_cache) >= _CONSTANT_CACHE_SIZE:
            _constant_cache.popitem(last=False)
        _constant_cache[key] = (jax_value, result_dtype)
    return Tensor(jax_value, array.shape, result_dtype)


def device_constant(array: ArrayLike) -> jax.Array:
    """A concrete `jax.Array` for a constant, even while JAX traces (so caches never hold tracers)."""
    with jax.ensure_compile_time_eval():
        return jax.device_put(array)


def as_jax_array(value: Any) -> Any:
    """`value` as a `jax.Array`: a NumPy value (a `host_constant`, a kept scalar) is transferred."""
    return device_constant(np.asarray(value)) if isinstance(value, (np.ndarray, np.generic)) else value


def host_constant(array: np.ndarray) -> Any:
    """The value of a constant tensor made from `array`: on the CPU its own read-only NumPy copy.

    A transfer (`jax.device_put`) costs about 90 us, five times TF's whole `tf.constant`; on the CPU the host
    memory is the device's, the per-op tier computes on NumPy values and a compiled program takes them as
    arguments as it takes device arrays. Elsewhere the array goes to the device.
    """
    if not compile_tiers.on_cpu():
        return device_constant(array)
    return read_only(np.array(array, order="C"))


def read_only(array: np.ndarray) -> Any:
    """`array` as a tensor's value on the host, without a copy: a view of it made read-only (a view of a read-only
    base cannot be made writable again, as TF's tensors cannot). The caller hands over `array`."""
    array.flags.writeable = False
    return array.view()


def constant_shaped(
    array: np.ndarray, shape: Iterable[SupportsInt], value: object, shown: Callable[[], str]
) -> np.ndarray:
    """`tf.constant`'s `shape`: a single value is broadcast, else the elements are reshaped (TF's TypeError).

    Args:
      array: the converted value.
      shape: the requested shape.
      value: the value as given (for the message).
      shown: how the message shows the converted tensor (called only for the message).
    """
    dims = tuple(int(d) for d in shape)
    if array.size == 1:
        return np.broadcast_to(array.reshape(()), dims)
    if array.size == int(np.prod(dims)):
        return array.reshape(dims)
    raise TypeError(
        f"Eager execution of tf.constant with unsupported shape. Tensor {shown()} "
        f"(converted from {value!r}) has {array.size} elements, but got `shape` {dims} "
        f"with {int(np.prod(dims))} elements)."
    )


def constant(
    value: Any, dtype: DTypeLike | None = None, shape: Sequence[int] | None = None, name: str | None = None
) -> Tensor:
    """Creates a constant tensor, as `tf.constant`.

    Args:
      value: a Python scalar, nested list, numpy array or Tensor.
      dtype: the result's dtype; the value is cast to it.
      shape: an optional shape; a scalar value is broadcast to it, a value with
        as many elements is reshaped to it.
      name: ignored.

    Returns:
      A concrete `Tensor`.
    """
    del name
    if (
        dtype is None
        and strings_tensor.is_string_value(value)
        or dtype is not None
        and dtypes.as_dtype(dtype) is dtypes.string
        or isinstance(value, Tensor)
        and value._dtype is dtypes.string
    ):
        # STRINGS: tf.string
        return strings_tensor.string_constant(value, dtype, shape)
    if isinstance(value, Tensor) or hasattr(value, "_read_for_op"):
        tensor = convert_to_tensor(value)
        if isinstance(value, Tensor) and dtype is not None and dtypes.as_dtype(dtype) != tensor._dtype:
            # (TF converts a tensor to the requested dtype without casting it; a variable's read is cast)
            trace = _thread_state.trace
            shown = tensor if trace is not None and trace.is_symbolic(tensor) else np.asarray(tensor.value)
            raise TypeError(
                f"Expected tensor {shown} with dtype {dtypes.as_dtype(dtype)!r}, but got dtype {tensor._dtype!r}."
            )
        array = np.asarray(tensor.value)
        if dtype is not None:
            array = array.astype(dtypes.as_dtype(dtype)._np)
    elif dtype is not None:
        array = numpy_as(value, dtypes.as_dtype(dtype))
    else:
        array = default_numpy(value)
    if shape is not None:
        array = constant_shaped(array, shape, value, lambda: repr(value))
    jax_value = host_constant(array)
    return Tensor(jax_value, array.shape, dtypes.from_numpy(array.dtype))


def is_tensor(value: object) -> bool:
    """True for Tensors and Variables, as `tf.is_tensor`."""
    return isinstance(value, Tensor) or hasattr(value, "_read_for_op")


# The op modules need `Tensor`, so they are imported once it exists; the
# operator methods of `TensorOperators` look them up at call time.
from tapeshim._src import strings_tensor  # noqa: E402  (STRINGS: tf.string tensors)
from tapeshim._src.ops import array_ops, math_ops  # noqa: E402
