"""Living in JAX's world: pytrees, zero-copy conversion, DLPack and optax on tapeshim variables.

`Tensor` and `Variable` are registered as pytrees whose one leaf is the
`jax.Array` (a lazy tensor is computed first), so `jax.jit`, `jax.vmap`,
`jax.grad` and `jax.tree_util` accept them; both implement `__jax_array__`, so
`jax.numpy` functions take them directly. A Variable flattens to its current
value and unflattens to a Tensor (a transformed variable is a value, not a new
variable).
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

import jax
import numpy as np

from tapeshim._src import dtypes, nest
from tapeshim._src.state import next_tensor_id
from tapeshim._src.tensor import Tensor, as_jax_array, convert_to_tensor
from tapeshim._src.variable import Variable


def _wrap(value: Any, dtype: Any = None) -> Tensor:
    """A Tensor around a JAX value or tracer (or whatever JAX hands an unflatten), without copying."""
    tensor = Tensor.__new__(Tensor)
    tensor._value = value
    tensor._node = None
    tensor._tid = next_tensor_id()
    shape = getattr(value, "shape", None)
    tensor._shape = tuple(shape) if shape is not None else ()
    np_dtype = getattr(value, "dtype", None)
    try:
        tensor._dtype = dtypes.from_numpy(np.dtype(np_dtype)) if np_dtype is not None else dtype
    except (TypeError, ValueError, KeyError):
        tensor._dtype = dtype
    return tensor


def _flatten_tensor(tensor: Tensor) -> tuple[tuple, Any]:
    return (as_jax_array(tensor.value),), tensor._dtype


def _flatten_variable(variable: Variable) -> tuple[tuple, Any]:
    return (as_jax_array(variable._read_for_op().value),), variable._dtype


def _unflatten(dtype: Any, children: Sequence[Any]) -> Tensor:
    return _wrap(children[0], dtype)


jax.tree_util.register_pytree_node(Tensor, _flatten_tensor, _unflatten)
# A Variable's leaf is its value: it unflattens to a Tensor, on purpose.
jax.tree_util.register_pytree_node(Variable, _flatten_variable, _unflatten)  # type: ignore[arg-type]


def from_jax(array: Any) -> Tensor:
    """Wraps a `jax.Array` as a tapeshim Tensor without copying it.

    Args:
      array: a `jax.Array` (a numpy array or Python value is converted as by
        `tf.convert_to_tensor`).

    Returns:
      A Tensor whose value is `array` itself.

    Raises:
      TypeError: for a value of a dtype TensorFlow has no counterpart for.
    """
    if isinstance(array, jax.Array):
        try:
            dtypes.from_numpy(np.dtype(array.dtype))
        except (TypeError, ValueError, KeyError):
            raise TypeError(f"`array` has dtype {array.dtype}, which TensorFlow has no dtype for.") from None
        return _wrap(array)
    return convert_to_tensor(array)


def to_jax(tensor: Any) -> Any:
    """The `jax.Array` holding a Tensor's (or Variable's) value, without copying; nests are mapped.

    Args:
      tensor: a Tensor, Variable, or a nest of them.

    Returns:
      The `jax.Array` (or the nest of them).

    Raises:
      TypeError: for an element that is not a Tensor or Variable.
    """

    def one(value: Any) -> jax.Array:
        if isinstance(value, Variable):
            return as_jax_array(value._read_for_op().value)
        if isinstance(value, Tensor):
            return as_jax_array(value.value)
        raise TypeError(f"`tensor` must be a tf.Tensor or tf.Variable, got {type(value).__name__}.")

    return nest.map_structure(one, tensor)


def to_dlpack(tensor: Any) -> Any:
    """A DLPack capsule sharing the tensor's memory, as `tf.experimental.dlpack.to_dlpack`.

    Raises:
      TypeError: if `tensor` is not a Tensor or Variable.
    """
    return to_jax(tensor).__dlpack__()


def from_dlpack(dlcapsule: Any) -> Tensor:
    """A Tensor sharing the memory of a DLPack capsule or of an object with `__dlpack__` (no copy).

    Raises:
      TypeError: if the argument is neither.
    """
    if hasattr(dlcapsule, "__dlpack__"):
        return from_jax(jax.dlpack.from_dlpack(dlcapsule))
    if type(dlcapsule).__name__ != "PyCapsule":
        raise TypeError(f"`dlcapsule` must be a DLPack capsule or have __dlpack__, got {type(dlcapsule).__name__}.")
    return from_jax(jax.dlpack.from_dlpack(_Capsule(dlcapsule)))


class _Capsule:
    """An object with `__dlpack__` around a bare capsule (JAX takes only such objects)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return _capsule_device(self._capsule)


def _capsule_device(capsule: Any) -> tuple[int, int]:
    """`(device type, device id)` read from a DLPack capsule's DLTensor (kDLCPU is 1, kDLCUDA 2)."""
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    for name, offset in ((b"dltensor", 8), (b"dltensor_versioned", 40)):
        # DLManagedTensor starts with its DLTensor {void* data; DLDevice device; ...};
        # DLManagedTensorVersioned has version, manager_ctx, deleter and flags (32 bytes) before it.
        if api.PyCapsule_IsValid(capsule, name):
            pointer = api.PyCapsule_GetPointer(capsule, name)
            device = (ctypes.c_int32 * 2).from_address(pointer + offset)
            return int(device[0]), int(device[1])
    raise TypeError("`dlcapsule` is not an unconsumed DLPack capsule.")


def optax_step(optimizer: Any, grads: Any, variables: Any, state: Any = None) -> Any:
    """Applies one optax update to tapeshim variables, in place.

    Example:
      >>> opt = optax.adam(1e-3)
      >>> state = None
      >>> with tf.GradientTape() as tape:
      ...     loss = ...
      >>> grads = tape.gradient(loss, model.trainable_variables)
      >>> state = tapeshim.experimental.optax_step(opt, grads, model.trainable_variables, state)

    Args:
      optimizer: an `optax.GradientTransformation`.
      grads: the gradients, in the structure of `variables` (a None gradient
        leaves its variable unchanged, as Keras optimizers do).
      variables: a tf.Variable or a nest of them.
      state: the optimizer state returned by the previous step; None to
        initialise it (`optimizer.init`) from the variables.

    Returns:
      The new optimizer state, to pass to the next step.

    Raises:
      TypeError: for an element of `variables` that is not a tf.Variable.
      ValueError: when `grads` and `variables` have different structures.
    """
    flat_vars = nest.flatten(variables)
    for v in flat_vars:
        if not isinstance(v, Variable):
            raise TypeError(f"`variables` must hold tf.Variables, got {type(v).__name__}.")
    flat_grads = nest.flatten(grads) if not isinstance(grads, (Tensor, type(None))) else [grads]
    if len(flat_grads) != len(flat_vars):
        raise ValueError(f"`grads` has {len(flat_grads)} elements but `variables` has {len(flat_vars)}.")
    params = [v._value for v in flat_vars]
    updates_in = [
        np.zeros(v._shape, v._dtype._np) if g is None else convert_to_tensor(g).value
        for g, v in zip(flat_grads, flat_vars)
    ]
    if state is None:
        state = optimizer.init(params)
    updates, state = _update(optimizer)(updates_in, state, params)
    for v, g, u in zip(flat_vars, flat_grads, updates):
        if g is not None:
            v.assign(_wrap(v._value + u.astype(v._value.dtype)))
    return state


_updates: dict[int, Any] = {}


def _update(optimizer: Any) -> Any:
    """`optimizer.update`, jitted once per optimizer object."""
    entry = _updates.get(id(optimizer))
    if entry is None or entry[0] is not optimizer:
        entry = _updates[id(optimizer)] = (optimizer, jax.jit(optimizer.update))
    return entry[1]
