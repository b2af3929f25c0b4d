"""Conversion and validation shared by the op table files."""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence, overload

import jax
import numpy as np

from tapeshim._src import errors
from tapeshim._src.dtypes import DType
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike

_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def tf_type_name(dtype: DType) -> str:
    """The dtype name TF's kernels use in error messages (`float`, `double`, `int32`)."""
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


def static_error(message: str, op_name: str | None = None) -> Exception:
    """The error for an argument TF's shape inference refuses.

    `InvalidArgumentError` when the op runs eagerly; `ValueError` while a
    `tapeshim.function` is traced, as TF's graph-mode shape functions raise.
    """
    if _thread_state.trace is not None:
        return ValueError(f"{message} for '{{{{node {op_name}}}}}'" if op_name else message)
    return errors.invalid_argument(message, op_name)


def missing_kernel(op_name: str, attrs: str, in_graph: bool | None = None) -> errors.OpError:
    """TF's error for an op whose dtypes (in `attrs`, `"T=DT_INT8"`) have no CPU kernel: `NotFoundError` when it
    runs eagerly; inside a function TF's graph finds no kernel when it runs, an `InvalidArgumentError` (marked
    `at_graph_run`: raised by an op's check while a function is traced, it is not made shape inference's
    `ValueError`). `in_graph`: whether the op was recorded inside a function, for an error made later (a
    gradient's, raised when the function's program is traced); None: whether a function is being traced now."""
    if _thread_state.trace is not None if in_graph is None else in_graph:
        error = errors.invalid_argument(f"No OpKernel was registered to support Op '{op_name}': {attrs}")
        error.at_graph_run = True  # type: ignore[attr-defined]
        return error
    return errors.NotFoundError(
        None, None, f"Could not find device for node: {{{{node {op_name}}}}} = {op_name}[{attrs}] [Op:{op_name}]"
    )


def is_graph_run_error(error: BaseException) -> bool:
    """Whether `error` is a missing kernel inside a function (`missing_kernel`): TF's graph raises it when it
    runs, so an op's shape errors come first."""
    return getattr(error, "at_graph_run", False)


def missing_kernel_first(op_name: str, attrs: str) -> errors.OpError:
    """`missing_kernel` for a wrapper that checks shapes itself, in TF's order: eagerly TF finds no kernel
    before it looks at the shapes (raised here); inside a function shape inference comes first, so the error
    is returned for the caller to raise after its shape checks."""
    error = missing_kernel(op_name, attrs)
    if not is_graph_run_error(error):
        raise error
    return error


def kernels_before_shapes(
    check: Callable[[tuple, dict], None] | None, tensors: Sequence[Any], static: tuple = ()
) -> None:
    """An op's dtype `check`, run by a wrapper before its own shape checks, in TF's order: the attr error
    first, then eagerly the missing kernel; inside a function the missing kernel waits until the shapes are
    checked (the op's check raises it again when the op is applied)."""
    if check is None:
        return
    try:
        check(tuple((t._shape, t._dtype) for t in tensors), dict(static))
    except errors.InvalidArgumentError as exc:
        if not is_graph_run_error(exc):
            raise


def attr_error(message: str, op_name: str | None = None) -> Exception:
    """The error for an input dtype the op's kernel attribute does not allow.

    `InvalidArgumentError` when the op runs eagerly; `TypeError` while a
    `tapeshim.function` is traced, as TF refuses the attribute when it builds
    the graph op.
    """
    if _thread_state.trace is not None:
        return TypeError(message)
    return errors.invalid_argument(message, op_name)


def is_tensor_like(value: object) -> bool:
    """Whether `value` is a tapeshim Tensor or a variable (anything an op reads with `_read_for_op`)."""
    return isinstance(value, Tensor) or hasattr(value, "_read_for_op")


# Ops whose TF wrappers convert `x` with its own dtype and then `y` with `x`'s as a hint (`tf.add`, `tf.matmul`:
# a mismatch is the kernel's InvalidArgumentError, so `tf.add(np.ones(2), tf.ones(2))` is float64 + float32 and
# raises), and ops that convert their operands with no hint at all (`tf.add_n`, `tf.tensordot`). Every other op
# converts Python and NumPy operands *to* the first tensor's dtype, and a value that cannot take it is a TypeError.
_HINTED_OPS = frozenset({"AddV2", "MatMul"})
_UNHINTED_OPS = frozenset({"AddN", "Tensordot"})


def is_python_value(value: Any) -> bool:
    """Whether `value` is a Python scalar or (nested) list, which TF converts to the op's dtype (numpy casts)."""
    return isinstance(value, (bool, int, float, complex, list, tuple))


def is_plain_value(value: Any) -> bool:
    """Whether `value` is a Python scalar or list, a NumPy value or a JAX array: what TF's wrappers convert
    themselves (`tensor_util.is_tf_type` is False), unlike a tensor, a variable or a composite (ragged, sparse)."""
    return is_python_value(value) or isinstance(value, (np.ndarray, np.generic, jax.Array))


def _conversion_error(value: Any, dtype: DType) -> TypeError:
    return TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {tf_type_name(dtype)}")


def convert_same_dtype(values: Sequence[Any], op_name: str) -> list[Tensor]:
    """Converts op inputs as TF does: Python values take the first tensor's dtype.

    Args:
      values: The op's inputs: tensors, variables, numpy values or Python values.
      op_name: TF's name for the op, used in error messages and to pick TF's conversion rule.

    Returns:
      The inputs as tensors of one dtype.

    Raises:
      TypeError: if a Python value cannot be represented in the tensors' dtype (`0.5` for an int32
        operand), as TF's op wrappers refuse it.
      InvalidArgumentError: if two tensors have different dtypes.
    """
    if len(values) == 2:
        x, y = values
        if x.__class__ is Tensor:
            if y.__class__ is not Tensor:
                y = convert_to_tensor(y, dtype_hint=None if op_name in _UNHINTED_OPS else x._dtype)
            if x._dtype is y._dtype:
                return [x, y]
    if len(values) == 2 and op_name in _HINTED_OPS:
        x, y = first_anchored(*values)
        return _same_dtype([x, y], op_name)
    unhinted = op_name in _UNHINTED_OPS
    anchor = None if unhinted else next((v for v in values if is_tensor_like(v)), None)
    hint = convert_to_tensor(anchor).dtype if anchor is not None else None
    strict = anchor is not None and op_name not in _HINTED_OPS
    tensors: list[Tensor] = []
    for value in values:
        tensor = convert_to_tensor(value, dtype_hint=hint)
        if unhinted:
            pass
        elif hint is None:
            hint = tensor._dtype
        elif strict and tensor._dtype != hint and is_python_value(value):
            raise _conversion_error(value, hint)
        tensors.append(tensor)
    return _same_dtype(tensors, op_name)


def first_anchored(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    """Converts `x` with its own dtype, then `y` with `x`'s dtype as a hint, as TF's `tf.add`, `tf.matmul` and
    `tf.math.truediv` do (the result may hold two dtypes: the caller raises its op's error for that).

    A JAX array `x` takes a tensor `y`'s dtype as a hint instead: its 64-bit dtype is tapeshim's own JAX
    setting (`jnp.ones(2)` is float32 beside TF), so `tf.add(jnp.ones(2), float32_tensor)` adds as in TF.
    """
    if x.__class__ is not Tensor and isinstance(x, jax.Array) and is_tensor_like(y):
        y = convert_to_tensor(y)
        return convert_to_tensor(x, dtype_hint=y._dtype), y
    x = convert_to_tensor(x)
    return x, y if y.__class__ is Tensor else convert_to_tensor(y, dtype_hint=x._dtype)


def same_dtype_for_division(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """`(x, y)`, or TF's TypeError for a division of two dtypes (`tf.math.truediv`, `tf.math.divide_no_nan`)."""
    if x._dtype != y._dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got tf.{x._dtype.name} != tf.{y._dtype.name}.")
    return x, y


def _same_dtype(tensors: list[Tensor], op_name: str) -> list[Tensor]:
    """`tensors`, or the kernel's InvalidArgumentError (TypeError in a trace) where their dtypes differ."""
    first = tensors[0]._dtype
    for position, tensor in enumerate(tensors[1:], start=1):
        if tensor._dtype != first:
            raise attr_error(
                f"cannot compute {op_name} as input #{position}(zero-based) was expected to be a "
                f"{tf_type_name(first)} tensor but is a {tf_type_name(tensor._dtype)} tensor",
                op_name,
            )
    return tensors


def broadcast_shapes(*shapes: Sequence[Any]) -> tuple:
    """`np.broadcast_shapes` that also takes symbolic dimensions (`function_symbolic`): a symbolic dimension
    broadcasts with 1 and with itself; anything else it meets raises `ValueError`, as a mismatch does."""
    if all(d.__class__ is int for shape in shapes for d in shape):
        return np.broadcast_shapes(*shapes)
    rank = max(len(shape) for shape in shapes)
    result = []
    for axis in range(-rank, 0):
        dims = [shape[axis] for shape in shapes if len(shape) >= -axis]
        sized = [d for d in dims if not (d.__class__ is int and d == 1)]
        if sized and any(d.__class__ is not sized[0].__class__ or not d == sized[0] for d in sized[1:]):
            raise ValueError(f"shapes {shapes} do not broadcast")
        result.append(sized[0] if sized else 1)
    return tuple(result)


def broadcast_check(op_name: str) -> Any:
    """A `check` for elementwise ops: shapes must broadcast (TF's message)."""

    def check(in_avals: tuple, static: dict) -> None:
        shapes = [shape for shape, _ in in_avals]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            text = " vs. ".join("[" + ",".join(str(d) for d in s) + "]" for s in shapes)
            raise static_error(f"Incompatible shapes: {text}", op_name) from None

    return check


_KIND_TYPES = {
    "f": ("bfloat16", "half", "float", "double"),
    "c": ("complex64", "complex128"),
    "i": ("int8", "int16", "int32", "int64"),
    "u": ("uint8", "uint16", "uint32", "uint64"),
    "b": ("bool",),
}


def dtype_check(op_name: str, allowed: str, names: tuple[str, ...] = (), attr: str = "T") -> Any:
    """A `check` that every input's dtype is of the allowed kinds, with TF's message.

    `allowed` holds kind letters: f (floating), c (complex), i (signed int),
    u (unsigned int), b (bool); or `names` lists TF's type names, in the order of
    TF's message (MatMul takes no int8 or int16). `attr` names the kernel's type
    attribute (`Ta`, `Tout`).
    """
    allowed_names = list(names) or [name for kind in "fcuib" if kind in allowed for name in _KIND_TYPES[kind]]

    def check(in_avals: tuple, static: dict) -> None:
        for _, dtype in in_avals:
            if tf_type_name(dtype) not in allowed_names:
                raise attr_error(
                    f"Value for attr '{attr}' of {tf_type_name(dtype)} is not in the list of allowed values: "
                    f"{', '.join(allowed_names)}\n\t; NodeDef: {{{{node {op_name}}}}}",
                    op_name,
                )

    return check


def enum_name(dtype: DType) -> str:
    """TF's enum name of a dtype, as its kernel messages show it (`DT_FLOAT`, `DT_COMPLEX128`)."""
    return "DT_" + tf_type_name(dtype).upper()


LINALG_TYPES = ("double", "float", "half", "complex64", "complex128")
"""The `T` attribute of TF's linear-algebra ops (`Svd`, `Cholesky`, `MatrixSolve`, ...), in its messages' order."""


def linalg_kernels(
    op_name: str, types: tuple[str, ...] = LINALG_TYPES, half: bool = False, attrs: Callable[[dict], str] | None = None
) -> Any:
    """A `check` of TF's CPU kernels for a linear-algebra op: a dtype outside `types` is the attr error; half
    precision in `types` has no CPU kernel (`missing_kernel`), but for float16 where the op has one (`half`:
    `Qr`, `MatrixInverse`). `attrs(static)`: the op's other attributes, as the missing kernel's message shows them
    (`", adjoint=false"`)."""
    attribute = dtype_check(op_name, "", types)

    def check(in_avals: tuple, static: dict) -> None:
        attribute(in_avals, static)
        dtype = in_avals[0][1]
        if dtype.name == "bfloat16" or (dtype.name == "float16" and not half):
            raise missing_kernel(op_name, f"T={enum_name(dtype)}{attrs(static) if attrs else ''}")

    return check


def checks(*parts: Any) -> Any:
    """Combines several checks into one. A missing kernel inside a function (`is_graph_run_error`) is raised
    after the other parts, as TF's graph raises it only when it runs."""

    def check(in_avals: tuple, static: dict) -> None:
        missing = None
        for part in parts:
            try:
                part(in_avals, static)
            except errors.InvalidArgumentError as exc:
                if not is_graph_run_error(exc):
                    raise
                missing = missing or exc
        if missing is not None:
            raise missing

    return check


@overload
def normalize_axis(axis: None, rank: int, name: str = "axis") -> None: ...


@overload
def normalize_axis(
    axis: int | np.integer | Sequence[int] | Tensor, rank: int, name: str = "axis"
) -> tuple[int, ...]: ...


def normalize_axis(axis: AxisLike | np.integer, rank: int, name: str = "axis") -> tuple[int, ...] | None:
    """Makes `axis` (None, int, list or tensor) a tuple of non-negative ints (None stays None).

    Raises:
      InvalidArgumentError: if an axis is out of range for `rank`.
    """
    if axis is None:
        return None
    if is_tensor_like(axis):
        axis = convert_to_tensor(axis).numpy().tolist()
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    result = []
    for a in axes:
        a = int(a)
        if not -rank <= a < max(rank, 1):
            raise static_error(f"Invalid reduction dimension ({a} for input with {rank} dimension(s)", None)
        result.append(a % rank if rank else 0)
    return tuple(result)


@functools.cache
def gradient_not_registered(op_name: str) -> Callable[[jax.Array], jax.Array]:
    """An identity whose reverse-mode gradient raises TF's LookupError for `op_name`.

    For ops that are differentiable in JAX but have no registered gradient in TF
    (`Unique`, `DenseBincount` with weights): a gradient through them fails as TF's
    does, when it is taken, not when the op is recorded.
    """
    return gradient_raises(lambda: LookupError(f"gradient registry has no entry for: {op_name}"))


def gradient_raises(error: Callable[[], Exception]) -> Callable[[jax.Array], jax.Array]:
    """An identity whose reverse-mode gradient raises `error()` when it is taken (TF's gradient of the op fails
    there, not when the op is recorded)."""

    @jax.custom_vjp
    def identity(x: jax.Array) -> jax.Array:
        return x

    def forward(x: jax.Array) -> tuple:
        return x, None

    def backward(_: Any, g: jax.Array) -> tuple:
        raise error()

    identity.defvjp(forward, backward)
    return identity
