"""Smaller `tf.math` and `tf.linalg` rows: `argmax`/`argmin`, `add_n`, `truncatediv`, `reduce_euclidean_norm`,
`linalg.normalize`, `linalg.pinv`, and `tf.debugging.Assert` (eager; inside functions, as TF's other assertions
here, skipped)."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, runtime_checks
from tapeshim._src.ops import math_kernels, math_ops, reduction_ops, table
from tapeshim._src.ops.common import (
    broadcast_check,
    checks,
    convert_same_dtype,
    dtype_check,
    enum_name,
    linalg_kernels,
    missing_kernel,
    normalize_axis,
    static_error,
)
from tapeshim._src.ops.math_kernels import add_n_impl
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, TensorLike


def _without_nan(x: jax.Array, fill: float) -> jax.Array:
    """TF's ArgMax/ArgMin skip NaN (it never compares greater or less): NaN as the value no element loses to."""
    return jnp.where(jnp.isnan(x), jnp.asarray(fill, x.dtype), x) if jnp.issubdtype(x.dtype, jnp.floating) else x


_argmax_op = OpDef(
    "ArgMax",
    lambda x, axis, out: jnp.argmax(_without_nan(x, -jnp.inf), axis=axis).astype(out),
    False,
    dtype_check("ArgMax", "fiub"),
)
_argmin_op = OpDef(
    "ArgMin",
    lambda x, axis, out: jnp.argmin(_without_nan(x, jnp.inf), axis=axis).astype(out),
    False,
    dtype_check("ArgMin", "fiub"),
)
_add_n_op = OpDef("AddN", add_n_impl, True, dtype_check("AddN", math_ops.NUMERIC))


def _arg_reduce(op: OpDef, input: Any, axis: Any, output_type: Any) -> Tensor:
    x = convert_to_tensor(input)
    if not x._shape:  # (TF's kernel: a scalar has no dimension to reduce)
        raise static_error(f"Expected dimension in the range [0, 0), but got {0 if axis is None else axis}", op.name)
    axes = normalize_axis(0 if axis is None else axis, len(x._shape))
    return apply(op, (x,), (("axis", axes[0]), ("out", dtypes.as_dtype(output_type).name)))[0]


@table.export("math.argmax", "argmax", gradient="-", dtypes=table.REAL)
def argmax(
    input: TensorLike, axis: AxisLike = None, output_type: DTypeLike = dtypes.int64, name: str | None = None
) -> Tensor:  # noqa: A002
    """The index of the largest value along `axis` (default 0); no gradient."""
    return _arg_reduce(_argmax_op, input, axis, output_type)


@table.export("math.argmin", "argmin", gradient="-", dtypes=table.REAL)
def argmin(
    input: TensorLike, axis: AxisLike = None, output_type: DTypeLike = dtypes.int64, name: str | None = None
) -> Tensor:  # noqa: A002
    """The index of the smallest value along `axis` (default 0); no gradient."""
    return _arg_reduce(_argmin_op, input, axis, output_type)


@table.export(
    "math.add_n", "add_n", dtypes=table.NUMERIC, note="adds in TF's kernel order (same rounding)", op=_add_n_op
)
@ragged_dispatch(lists=("inputs",))
def add_n(inputs: list, name: str | None = None) -> Tensor:
    """Adds a list of tensors of one shape and dtype; a tensor (or array, or RaggedTensor) is the list of its
    rows, as TF iterates it."""
    message = "Inputs must be an iterable of at least one Tensor/IndexedSlices with the same dtype and shape."
    if not isinstance(inputs, (list, tuple)):
        trace = _thread_state.trace
        if isinstance(inputs, Tensor) and trace is not None and trace.is_symbolic(inputs):
            raise errors.OperatorNotAllowedInGraphError(
                "Iterating over a symbolic `tf.Tensor` is not allowed. You can attempt the following resolutions to "
                "the problem: If you are running in Graph mode, use Eager execution mode or decorate this function "
                "with @tf.function."
            )  # (TF's add_n is library code, which AutoGraph does not convert)
        inputs = list(inputs)  # (a tensor's rows; a scalar tensor, or a number, is TF's TypeError)
    if not inputs:
        raise ValueError(message)
    tensors = convert_same_dtype(list(inputs), "AddN")
    for k, t in enumerate(tensors[1:], start=1):
        if tuple(t._shape) != tuple(tensors[0]._shape):  # (TF's AddN does not broadcast)
            shapes = [f"[{','.join(map(str, x._shape))}]" for x in (tensors[0], t)]
            raise errors.invalid_argument(
                f"Inputs to operation AddN of type AddN must have the same size and shape.  Input 0: {shapes[0]} "
                f"!= input {k}: {shapes[1]}",
                "AddN",
            )
    return apply(_add_n_op, tuple(tensors))[0]


def _truncatediv(x: jax.Array, y: jax.Array, checked: bool = False) -> jax.Array:
    if jnp.issubdtype(x.dtype, jnp.integer):
        if checked:
            math_kernels.require_nonzero_divisor(y, "TruncateDiv")
        return jax.lax.div(x, y)  # (XLA's integer division rounds toward zero)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return x / y  # (only its shape is used: TF's CPU has no complex kernel, the op's check raises)
    return jnp.trunc(x / y)


_TRUNCATEDIV_TYPES = (
    "bfloat16", "half", "float", "double", "uint8", "int8", "uint16", "int16", "int32", "uint32", "uint64", "int64",
    "complex64", "complex128",
)  # fmt: skip
_truncatediv_types = dtype_check("TruncateDiv", "", _TRUNCATEDIV_TYPES)


def _truncatediv_kernels(in_avals: tuple, static: dict) -> None:
    """TF's `TruncateDiv` takes complex operands, but its CPU has no kernel for them."""
    _truncatediv_types(in_avals, static)
    dtype = in_avals[0][1]
    if dtype.is_complex:
        raise missing_kernel("TruncateDiv", f"T={enum_name(dtype)}")


_truncatediv_op = OpDef(
    "TruncateDiv", _truncatediv, False, checks(_truncatediv_kernels, broadcast_check("TruncateDiv"))
)


@table.export("truncatediv", gradient="none", dtypes=table.REAL, op=_truncatediv_op)
@ragged_dispatch("x", "y")
def truncatediv(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """x / y rounded toward zero, element-wise with broadcasting (no gradient), as `tf.truncatediv`.

    Raises:
      InvalidArgumentError: if the dtypes differ, the shapes do not broadcast, or an integer `y` holds a zero.
      NotFoundError: for complex operands, which TF's CPU has no kernel for (`InvalidArgumentError` inside a
        function).
    """
    a, b = convert_same_dtype((x, y), "TruncateDiv")

    def host_check(values: Any) -> None:
        if (np.asarray(values) == 0).any():  # (TF's CPU kernel reports it so)
            raise errors.InternalError(
                None, None, "Unexpected error in binary operator (only integer div and mod ops should have errors)"
            )

    static = runtime_checks.checked_static(b, host_check) if b._dtype.is_integer else ()
    return apply(_truncatediv_op, (a, b), static)[0]


_angle_op = OpDef("Angle", lambda x: jnp.angle(x).astype(jnp.real(x).dtype), True, dtype_check("Angle", "c"))
_real_angle_op = OpDef("RealAngle", lambda x: jnp.where(x < 0, jnp.asarray(math.pi, x.dtype), jnp.zeros_like(x)), False)


@table.export(
    "math.angle", dtypes=table.FLOAT, note="a real input gives pi below 0, else 0, with no gradient (None), as TF"
)
@ragged_dispatch()
def angle(input: TensorLike, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The argument of each complex element of `input`, as `tf.math.angle`.

    As in TF, a real `input` gives `pi` where it is negative and 0 elsewhere,
    and no gradient flows through that (the gradient is `None`).
    """
    x = convert_to_tensor(input)
    if x._dtype.is_complex:
        return apply(_angle_op, (x,))[0]
    if not x._dtype.is_floating:
        convert_to_tensor(math.pi, dtype=x._dtype)  # TF's np.pi * ones_like(int): a TypeError
        raise TypeError(f"Cannot convert {math.pi!r} to EagerTensor of dtype {x._dtype.name}")
    return apply(_real_angle_op, (x,))[0]


@table.export("realdiv", dtypes=table.FLOAT, note="integer inputs raise NotFoundError, as TF's CPU (no kernel)")
@ragged_dispatch("x", "y")
def realdiv(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """x / y element-wise for floating and complex tensors, as `tf.realdiv` (TF's generated `RealDiv` op).

    As a generated op, a value converts to the dtype of a tensor beside it, strictly.

    Raises:
      InvalidArgumentError: if the dtypes differ, are bool or string, or the shapes do not broadcast.
      NotFoundError: for integer inputs (TF has no CPU kernel for them).
    """
    from tapeshim._src.raw_ops_math import real_div  # (raw ops build on the public module: imported at call time)

    return real_div(x, y)


@table.export("math.reduce_euclidean_norm", dtypes=table.NUMERIC)
def reduce_euclidean_norm(
    input_tensor: TensorLike, axis: AxisLike = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """sqrt(sum(x * x)) over `axis`, as `tf.math.reduce_euclidean_norm` (integers give an integer norm)."""
    x = convert_to_tensor(input_tensor)
    squares = math_ops.reduce_sum(x * x, axis=axis, keepdims=keepdims)
    if x._dtype.is_integer:  # TF's integer kernel: the square root, truncated, in the input's dtype
        return math_ops.cast(math_ops.sqrt(math_ops.cast(squares, "float64")), x._dtype)
    return math_ops.sqrt(squares)


@table.export("linalg.normalize", dtypes=table.FLOAT)
def normalize(
    tensor: TensorLike, ord: Any = "euclidean", axis: AxisLike = None, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """`tensor` divided by its norm over `axis`, and that norm (kept dimensions), as `tf.linalg.normalize`."""
    x = convert_to_tensor(tensor)
    norm = reduction_ops.norm(x, ord=ord, axis=axis, keepdims=True)
    return math_ops.truediv(x, norm), norm


def _pinv(a: jax.Array, rcond: Any) -> jax.Array:
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    cutoff = rcond * jnp.max(s, axis=-1, keepdims=True)
    inverse = jnp.where(s > cutoff, 1.0 / jnp.where(s > cutoff, s, 1.0), 0.0).astype(a.dtype)
    return jnp.swapaxes(vh, -1, -2).conj() @ (inverse[..., :, None] * jnp.swapaxes(u, -1, -2).conj())


# (TF's pinv is Python over an `Svd`)
_pinv_op = OpDef(
    "Pinv", _pinv, True, linalg_kernels("Svd", attrs=lambda static: ", compute_uv=true, full_matrices=false")
)


@table.export("linalg.pinv", dtypes=table.REAL_FLOAT, op=_pinv_op)
def pinv(a: TensorLike, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of (a batch of) matrices, by SVD, singular values at most `rcond` times
    the largest dropped (`rcond` defaults to 10 * max(rows, columns) * the dtype's epsilon, as TF)."""
    x = convert_to_tensor(a)
    if not x._dtype.is_floating:
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw {x._dtype.name}).")
    if len(x._shape) < 2:
        raise ValueError(f"Input `a` must have at least 2 dimensions (saw: {len(x._shape)}).")
    if rcond is None:
        rcond = 10.0 * max(x._shape[-2:]) * float(np.finfo(x._dtype._np).eps)
    return apply(_pinv_op, (x,), (("rcond", float(rcond)),))[0]


@table.export("debugging.Assert", "Assert", gradient="-", dtypes=table.ANY, note="skipped inside functions")
def Assert(condition: TensorLike, data: Any, summarize: int | None = None, name: str | None = None) -> None:  # noqa: N802 - TF's name
    """Raises TF's `InvalidArgumentError`, with `data` summarized, where `condition` is false (eagerly).

    Raises:
      InvalidArgumentError: if `condition` is false.
    """
    if _thread_state.trace is not None:
        return None  # (assertions inside functions are skipped: docs/porting.md)
    if bool(np.asarray(convert_to_tensor(condition).numpy())):
        return None
    limit = 3 if summarize is None else int(summarize)
    parts = []
    for item in data:
        value = np.asarray(convert_to_tensor(item).numpy()).reshape(-1)
        shown = [repr(v) if isinstance(v, bytes) else f"{v}" for v in value[:limit].tolist()]
        parts.append(", ".join(shown + (["..."] if value.size > limit else [])))
    joined = "\n".join(parts)
    raise errors.InvalidArgumentError(None, None, f"Expected '{condition!s}' to be true. Summarized data: {joined}")


@table.export(
    "clip_by_value", gradient="tf", dtypes=table.REAL, note="the gradient passes at the (inclusive) bounds, as TF"
)
@ragged_dispatch()
def clip_by_value(
    t: TensorLike, clip_value_min: TensorLike, clip_value_max: TensorLike, name: str | None = None
) -> Tensor:
    """Clips values to `[clip_value_min, clip_value_max]`.

    As in TF, this is `maximum(minimum(t, max), min)`, so the gradient passes at
    the boundaries themselves.
    """
    t = convert_to_tensor(t)
    clipped = math_ops.maximum(math_ops.minimum(t, clip_value_max), clip_value_min)
    t.shape.assert_is_compatible_with(clipped.shape)  # (bounds may not broadcast `t` to more elements, as TF)
    return clipped
