"""Graph-building helpers TF 2 programs still call: `tf.control_dependencies`, `tf.group`, `tf.no_op`,
`tf.ensure_shape`, `tf.get_static_value`, `tf.identity_n`, `tf.executing_eagerly`.

tapeshim runs every op of a `tapeshim.function` (XLA keeps effects in program order and
never drops a variable assignment or `tf.print`), so control dependencies and groups
order nothing: they are accepted and checked as TF checks them.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors, registry, runtime_checks, static_value, symbolic_dims
from tapeshim._src.ops import array_ops, math_ops, table
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import ShapeLike, TensorLike


@table.export("executing_eagerly", gradient="-", dtypes="-")
def executing_eagerly() -> bool:
    """Whether ops run eagerly now: False while a `tapeshim.function` is being traced (not in `tf.init_scope`)."""
    return _thread_state.trace is None


@table.export(
    "control_dependencies",
    gradient="-",
    dtypes=table.ANY,
    note="orders nothing: every op of a function runs, effects in program order",
)
@contextlib.contextmanager
def control_dependencies(control_inputs: Any) -> Iterator[None]:
    """A context in which ops run after `control_inputs`, as `tf.control_dependencies`.

    Eagerly, callables among `control_inputs` are called (as TF does). Inside a
    function every op already runs, effects in program order, so the context adds nothing.

    Args:
      control_inputs: a list of tensors, variables or callables (or None).
    """
    if control_inputs and _thread_state.trace is None:
        for control in control_inputs:
            if callable(control):
                control()
    yield


@table.export("group", gradient="-", dtypes=table.ANY, note="returns None (TF returns an Operation in a graph)")
def group(*inputs: TensorLike, **kwargs: Any) -> None:
    """Groups ops (runs them all), as `tf.group`; returns None, as TF does eagerly.

    Raises:
      ValueError: inside a function, for a keyword argument other than `name`.
    """
    unknown = [k for k in kwargs if k != "name"]
    if unknown and _thread_state.trace is not None:
        raise ValueError(f"Unknown keyword arguments: {', '.join(unknown)}")
    return None


@table.export("no_op", gradient="-", dtypes="-")
def no_op(name: str | None = None) -> None:
    """Does nothing, as `tf.no_op`; returns None, as TF does eagerly."""
    return None


def _shape_str(dims: Any) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _as_shape(shape: Any) -> TensorShape:
    if isinstance(shape, TensorShape):
        return shape
    if shape is None:
        return TensorShape(None)
    if isinstance(shape, Tensor):
        return TensorShape([int(d) for d in np.asarray(shape.value).reshape(-1)])
    if isinstance(shape, (int, np.integer)):
        return TensorShape([int(shape)])
    if isinstance(shape, str):
        _bad_shape(shape)
    try:
        return TensorShape(list(shape))
    except (TypeError, ValueError):
        return _bad_shape(shape)


def _bad_shape(shape: Any) -> TensorShape:
    raise TypeError(
        f"Failed to convert '{shape!r}' to a shape: '{shape!r}'could not be converted to a dimension. "
        "A shape should either be single dimension (e.g. 10), or an iterable of dimensions "
        "(e.g. [1, 10, None])."
    )


@table.export("ensure_shape", gradient="jax", dtypes=table.ANY)
def ensure_shape(x: TensorLike, shape: ShapeLike | TensorLike, name: str | None = None) -> Tensor:
    """Returns `x` after checking that its shape is compatible with `shape`, as `tf.ensure_shape`.

    Args:
      x: a tensor.
      shape: a `TensorShape` or list of dimensions (None for an unknown one).
      name: ignored.

    Raises:
      InvalidArgumentError: eagerly, when the shapes are incompatible.
      ValueError: inside `tapeshim.function` (TF checks the static shape there).
      TypeError: `shape` is not a shape.
    """
    tensor = convert_to_tensor(x)
    expected = _as_shape(shape)
    if not expected.is_compatible_with(TensorShape(tensor._shape)):
        dims = expected.as_list()
        if _thread_state.trace is not None:
            if len(dims) != len(tensor._shape):
                raise ValueError(
                    f"Shape must be rank {len(dims)} but is rank {len(tensor._shape)} for "
                    f"'{{{{node EnsureShape}}}}' with input shapes: {_shape_str(tensor._shape)}."
                )
            i = next(i for i, (a, b) in enumerate(zip(dims, tensor._shape)) if a is not None and a != b)
            raise ValueError(
                f"Dimension {i} in both shapes must be equal, but are {dims[i]} and {tensor._shape[i]}. Shapes are "
                f"{_shape_str(dims)} and {_shape_str(tensor._shape)}. for '{{{{node EnsureShape}}}}' with input "
                f"shapes: {_shape_str(tensor._shape)}."
            )
        raise errors.invalid_argument(
            f"Shape of tensor input {_shape_str(tensor._shape)} is not compatible with expected shape "
            f"{_shape_str(dims)}.",
            "EnsureShape",
        )
    if expected.rank == len(tensor._shape) and any(
        symbolic_dims.is_symbolic(d) and e is not None for d, e in zip(tensor._shape, expected.as_list())
    ):  # a size only a call knows, against a known one: checked when the function runs, as TF's graph does
        trace = _thread_state.trace
        placeholder = trace is not None and tensor._tid in trace.placeholders
        name = trace.placeholder_name(tensor._tid) if placeholder else "input"
        static = (("expected", tuple(expected.as_list())), ("name", name))
        return registry.apply(_ENSURE_SHAPE, (tensor,), static)[0]
    return math_ops.identity(tensor)


def _ensure_shape(x: Any, *, expected: tuple, name: str) -> Any:
    """`x`, after a runtime check that its symbolic dimensions (`function_symbolic`) have the sizes
    `expected` names, with TF's message."""
    dims, fields = runtime_checks.shape_fields(x.shape, "d")
    checked = [
        axis for axis, (dim, want) in enumerate(zip(x.shape, expected)) if f"d{axis}" in fields and want is not None
    ]
    ok = jnp.bool_(True)
    for axis in checked:
        ok = ok & (jnp.asarray(x.shape[axis]) == expected[axis])
    expected_text = ",".join("?" if want is None else str(want) for want in expected)
    message = f"Shape of tensor {name} [{dims}] is not compatible with expected shape [{expected_text}]."
    runtime_checks.require(ok, message, **{k: jnp.asarray(d) for k, d in fields.items()})
    for axis in checked:  # the checked sizes become the output's static ones, as TF's shape inference refines them
        x = runtime_checks.with_size(x, axis, expected[axis])
    return x


_ENSURE_SHAPE = registry.OpDef("EnsureShape", _ensure_shape)


# Ops whose value TF's `constant_value` computes inside a graph when their inputs are known.
_FOLDED = frozenset(
    [
        "Cast",
        "ConcatV2",
        "Identity",
        "Range",
        "Fill",
        "Size",
        "Rank",
        "Shape",
        "Equal",
        "NotEqual",
        "StopGradient",
        "Unpack",
    ]
)


@table.export("get_static_value", gradient="-", dtypes=table.ANY)
def get_static_value(tensor: TensorLike, partial: bool = False) -> Any:
    """The value of `tensor` if it is known without running a program, as `tf.get_static_value`.

    Eagerly that is every tensor's value (a numpy array). Inside `tapeshim.function`,
    a constant or a tensor TF folds from constants (shapes, casts, concatenations...);
    otherwise None. A non-tensor is returned unchanged; a variable gives None.

    Args:
      tensor: a tensor (or any value).
      partial: ignored.
    """
    del partial
    if hasattr(tensor, "_read_for_op") and not isinstance(tensor, Tensor):
        return None
    if not isinstance(tensor, Tensor):
        return tensor
    trace = _thread_state.trace
    if trace is None or not trace.is_symbolic(tensor):
        return np.asarray(tensor.value)
    if not static_value.from_constants_only(tensor, trace, _FOLDED):
        return None
    return np.asarray(trace.concrete_value(tensor))


@table.export("identity_n", gradient="jax", dtypes=table.ANY)
def identity_n(input: TensorLike, name: str | None = None) -> list[Tensor]:  # noqa: A002
    """The identity of each tensor of a list, as `tf.identity_n` (a tensor is unstacked into its rows)."""
    if isinstance(input, (list, tuple)):
        return [math_ops.identity(convert_to_tensor(v)) for v in input]
    tensor = convert_to_tensor(input)

    return [math_ops.identity(t) for t in array_ops.unstack(tensor)]
