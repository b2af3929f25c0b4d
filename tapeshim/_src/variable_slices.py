"""`v[key].assign(value)`: a slice of a variable written back, as TF's `ResourceStridedSliceAssign`.

An index that is a Python int or a concrete tensor is a static argument of the op. A scalar integer
tensor that is symbolic inside a `tapeshim.function` (`v[i].assign(x)` in a loop over `tf.range(n)`) is an
input of the op instead, checked against its dimension when the program runs, as TF's graph checks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, registry, runtime_checks
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

if TYPE_CHECKING:
    from tapeshim._src.variable import Variable  # import cycle: variable -> variable_slices


def _is_symbolic_index(item: Any) -> bool:
    """Whether `item` is a scalar integer tensor whose value only a function's call knows."""
    trace = _thread_state.trace
    return (
        trace is not None
        and isinstance(item, Tensor)
        and item._dtype.is_integer
        and item._shape == ()
        and trace.is_symbolic(item)
    )


def _static_index(key: Any) -> tuple[tuple, list[Tensor]]:
    """A TF slicing key as a hashable static argument, and the symbolic index tensors it names by position.

    Concrete tensors become Python ints; a symbolic scalar index becomes `("dynamic", k)`, the `k`-th of the
    returned tensors.
    """
    items = key if isinstance(key, tuple) else (key,)
    encoded: list[tuple] = []
    dynamic: list[Tensor] = []
    for item in items:
        if item is Ellipsis:
            encoded.append(("...",))
        elif item is None:
            encoded.append(("newaxis",))
        elif isinstance(item, slice):
            encoded.append(
                ("slice",) + tuple(None if part is None else int(part) for part in (item.start, item.stop, item.step))
            )
        elif _is_symbolic_index(item):
            encoded.append(("dynamic", len(dynamic)))
            dynamic.append(item)
        elif isinstance(item, (int, np.integer, Tensor)) and not isinstance(item, bool):
            encoded.append(("index", int(item)))
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {item!r}"
            )
    return tuple(encoded), dynamic


def _numpy_index(encoded: tuple, dynamic: tuple = ()) -> tuple:
    """The NumPy (or JAX) index of an encoded key; `dynamic` gives the `("dynamic", k)` items' values."""
    decoded: list = []
    for item in encoded:
        kind = item[0]
        if kind == "...":
            decoded.append(Ellipsis)
        elif kind == "newaxis":
            decoded.append(None)
        elif kind == "slice":
            decoded.append(slice(*item[1:]))
        elif kind == "dynamic":
            decoded.append(dynamic[item[1]])
        else:
            decoded.append(item[1])
    return tuple(decoded)


def _dimensions(encoded: tuple, rank: int) -> list[int | None]:
    """For each item of an encoded key, the dimension of the variable it indexes (None: it indexes none)."""
    consuming = sum(1 for item in encoded if item[0] in ("slice", "index", "dynamic"))
    dims: list[int | None] = []
    position = 0
    for item in encoded:
        if item[0] == "...":
            dims.append(None)
            position += rank - consuming
        elif item[0] == "newaxis":
            dims.append(None)
        else:
            dims.append(position)
            position += 1
    return dims


def _slice_assign_impl(
    full: jax.Array, value: jax.Array, *dynamic: jax.Array, index: tuple, checked: bool = False
) -> jax.Array:
    if dynamic and checked:
        for item, dim in zip(index, _dimensions(index, full.ndim)):
            if item[0] == "dynamic" and dim is not None:
                at, size = dynamic[item[1]], full.shape[dim]
                runtime_checks.require(
                    (at >= -size) & (at < size),
                    "slice index {at} of dimension {dim} out of bounds.",
                    at=at,
                    dim=jnp.asarray(dim),
                )
    where = _numpy_index(index, dynamic)
    return full.at[where].set(jnp.broadcast_to(value, full[where].shape))


def _slice_assign_check(in_avals: tuple, static: dict) -> None:
    (full_shape, _), (value_shape, _) = in_avals[:2]
    index = static["index"]
    dims = _dimensions(index, len(full_shape))
    for item, dim in zip(index, dims):
        if item[0] == "index" and dim is not None and dim < len(full_shape):
            size = full_shape[dim]
            if not -size <= item[1] < size:
                raise errors.invalid_argument(
                    f"slice index {item[1]} of dimension {dim} out of bounds.", "ResourceStridedSliceAssign"
                )
    try:
        target = np.empty(full_shape, np.bool_)[_numpy_index(index, (0,) * len(in_avals[2:]))].shape
    except IndexError:  # (a tensor index into a dimension of size 0)
        raise errors.invalid_argument(
            "slice index 0 of a dimension of size 0 out of bounds.", "ResourceStridedSliceAssign"
        ) from None
    try:
        fits = np.broadcast_shapes(value_shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise errors.invalid_argument(
            f"Cannot broadcast input shape [{','.join(map(str, value_shape))}] into final shape "
            f"[{','.join(map(str, target))}]",
            "ResourceStridedSliceAssign",
        )


_SLICE_ASSIGN = registry.OpDef(
    "ResourceStridedSliceAssign", _slice_assign_impl, differentiable=False, check=_slice_assign_check
)


class _VariableSlice(Tensor):
    """A read of part of a variable (`v[0]`), whose `assign` writes that part back, as TF's."""

    __slots__ = ("_variable", "_key")

    def __init__(
        self, value: Any, shape: tuple, dtype: dtypes.DType, node: Any, tid: int, variable: Variable, key: Any
    ) -> None:
        super().__init__(value, shape, dtype, node, tid)
        self._variable = variable
        self._key = key

    def assign(self, value: TensorLike, name: str | None = None) -> Variable:
        """Writes `value` (broadcast to the slice's shape) into the slice of the variable.

        Returns:
          The variable.

        Raises:
          InvalidArgumentError: if `value` does not broadcast to the slice's shape, or an index is out of
            its dimension's bounds (inside a function: when the call runs).
        """
        variable = self._variable
        tensor = convert_to_tensor(value, dtype=variable._dtype)
        index, dynamic = _static_index(self._key)
        static: tuple = (("index", index),)
        if dynamic and runtime_checks.checks_enabled():
            static += (("checked", True),)
        (updated,) = registry.apply(_SLICE_ASSIGN, (variable._plain_read(), tensor, *dynamic), static)
        variable.assign(updated)
        return variable
