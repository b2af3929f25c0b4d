"""Contractions: `tf.einsum` and `tf.tensordot`, and the checks of `tf.matmul`'s inputs."""

from __future__ import annotations

from typing import Any, Sequence

import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors
from tapeshim._src.ops import table
from tapeshim._src.ops.common import (
    broadcast_shapes,
    convert_same_dtype,
    dtype_check,
    enum_name,
    kernels_before_shapes,
    missing_kernel,
    missing_kernel_first,
    static_error,
)
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_MATMUL_TYPES = (
    "bfloat16", "half", "float", "double", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "complex64",
    "complex128",
)  # fmt: skip
_matmul_types = dtype_check("MatMul", "", _MATMUL_TYPES)
_batch_matmul_types = dtype_check("BatchMatMulV2", "", _MATMUL_TYPES[:4] + ("int16",) + _MATMUL_TYPES[4:])


def matmul_types_check(in_avals: tuple, static: dict) -> None:
    """TF's dtypes: MatMul's for matrices, BatchMatMulV2's (int16 too) for batches of them; unsigned ones have no
    CPU kernel (TF's NotFoundError when the op runs eagerly, the graph's InvalidArgumentError in a function)."""
    batched = any(len(shape) > 2 for shape, _ in in_avals)
    (_batch_matmul_types if batched else _matmul_types)(in_avals, static)
    dtype = in_avals[0][1]
    if dtype.is_unsigned:
        raise missing_kernel("BatchMatMulV2" if batched else "MatMul", f"T=DT_{dtype.name.upper()}")


def matmul_check(in_avals: tuple, static: dict) -> None:
    """TF's errors for matmul operands whose ranks or sizes do not fit."""
    (a_shape, a_dtype), (b_shape, _) = in_avals
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise errors.invalid_argument(
            f"In[0] and In[1] has different ndims: {list(a_shape)} vs. {list(b_shape)}"
            if len(a_shape) != len(b_shape)
            else f"In[0] ndims must be >= 2: {len(a_shape)}",
            "MatMul",
        )
    k_a = a_shape[-2] if (static["transpose_a"] or static["adjoint_a"]) else a_shape[-1]
    k_b = b_shape[-1] if (static["transpose_b"] or static["adjoint_b"]) else b_shape[-2]
    if k_a != k_b:
        text_a = ",".join(str(d) for d in a_shape)
        text_b = ",".join(str(d) for d in b_shape)
        raise errors.invalid_argument(f"Matrix size-incompatible: In[0]: [{text_a}], In[1]: [{text_b}]", "MatMul")
    try:
        broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise errors.invalid_argument(
            f"In[0] and In[1] must have compatible batch dimensions: {list(a_shape)} vs. {list(b_shape)}",
            "BatchMatMulV2",
        ) from None


def _check_equation(equation: str, count: int) -> None:
    """TF's ValueErrors for an einsum equation that does not fit its operands."""
    terms, _, output = equation.partition("->")
    inputs = terms.split(",")
    if len(inputs) != count:
        raise ValueError(f"Expected {len(inputs)} inputs but got: {count}")
    labels = set("".join(inputs))
    for label in output.replace(".", ""):
        if label not in labels:
            raise ValueError(f"Output subscripts contain the label {label} not present in the input subscripts.")


def _check_label_sizes(equation: str, tensors: Sequence[Tensor]) -> None:
    """TF's errors for a label whose dimensions differ between operands (only `...` broadcasts), and for
    dimensions under `...` that an explicit output without `...` would sum (NumPy sums them, TF refuses)."""
    terms_text, arrow, output = equation.partition("->")
    terms = terms_text.split(",")
    broadcast = max(
        (len(t._shape) - len(term.replace("...", "")) for term, t in zip(terms, tensors) if "..." in term), default=0
    )
    if arrow and broadcast > 0 and "..." not in output:
        raise static_error(
            f"Output contains {broadcast} broadcasting dimension(s) but no ellipsis (...) was found in the output "
            "subscripts.",
            "Einsum",
        )
    sizes: dict[str, Any] = {}
    for term, t in zip(terms, tensors):
        shape = t._shape
        head, dots, tail = term.partition("...")
        axes = list(enumerate(head))
        if dots:
            axes += [(len(shape) - len(tail) + k, label) for k, label in enumerate(tail)]
        for axis, label in axes:
            if not 0 <= axis < len(shape) or not isinstance(shape[axis], (int, np.integer)):
                continue  # (a rank mismatch is JAX's to report; a size known per call is checked when it runs)
            expected = sizes.setdefault(label, shape[axis])
            if shape[axis] != expected:
                raise static_error(
                    f"Expected dimension {expected} at axis {axis} of the input shaped [{','.join(map(str, shape))}] "
                    f"but got dimension {shape[axis]}",
                    "Einsum",
                )


_einsum_op = OpDef("Einsum", lambda *xs, equation: jnp.einsum(equation, *xs), True)
_EINSUM_TYPES = frozenset(("bfloat16", "float16", "float32", "float64", "int32", "int64", "complex64", "complex128"))


@table.export("einsum", "linalg.einsum", dtypes=table.NUMERIC, op=_einsum_op)
def einsum(equation: str, *inputs: TensorLike, **kwargs: Any) -> Tensor:
    """Einstein summation over `inputs` described by `equation`."""
    tensors = convert_same_dtype(list(inputs), "Einsum") if len(inputs) > 1 else [convert_to_tensor(inputs[0])]
    equation = equation.replace(" ", "")
    _check_equation(equation, len(tensors))
    dtype = tensors[0]._dtype
    missing = None
    if dtype.name not in _EINSUM_TYPES:  # no CPU kernel, as TF's
        missing = missing_kernel_first("Einsum", f'N={len(tensors)}, T=DT_{dtype.name.upper()}, equation="{equation}"')
    _check_label_sizes(equation, tensors)
    if missing is not None:
        raise missing
    return apply(_einsum_op, tuple(tensors), (("equation", equation),))[0]


def _tensordot_kernels(in_avals: tuple, static: dict) -> None:
    """TF's tensordot is a `MatMul` of the operands reshaped to matrices: MatMul's dtypes, and its CPU kernels
    (none for unsigned types: `NotFoundError` eagerly, the graph's `InvalidArgumentError` in a function)."""
    _matmul_types(in_avals, static)
    dtype = in_avals[0][1]
    if dtype.is_unsigned:
        raise missing_kernel(
            "MatMul", f"T={enum_name(dtype)}, grad_a=false, grad_b=false, transpose_a=false, transpose_b=false"
        )


_tensordot_op = OpDef("Tensordot", lambda a, b, axes: jnp.tensordot(a, b, axes), True, _tensordot_kernels)


@table.export("tensordot", "linalg.tensordot", dtypes=table.NUMERIC, op=_tensordot_op)
def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Contracts `a` and `b` over `axes` (an int, or two lists of axes); unsigned operands raise TF's missing
    `MatMul` kernel error (`NotFoundError` eagerly, `InvalidArgumentError` inside a function)."""
    a_t, b_t = convert_same_dtype((a, b), "Tensordot")
    kernels_before_shapes(_tensordot_kernels, (a_t, b_t))
    if isinstance(axes, (int, np.integer)):
        static: Any = int(axes)
        if 0 <= static <= min(len(a_t._shape), len(b_t._shape)) and (
            tuple(a_t._shape[len(a_t._shape) - static :]) != tuple(b_t._shape[:static])
        ):
            raise static_error(
                f"Matrix size-incompatible: In[0]: [{','.join(map(str, a_t._shape))}], In[1]: "
                f"[{','.join(map(str, b_t._shape))}]",
                "MatMul",
            )
        for t in (a_t, b_t):
            if static > len(t._shape):
                raise ValueError(
                    f"`axes` must not be larger than the number of dimensions of tensor {t}.  Received "
                    f"{static}, vs tensor dimensions {len(t._shape)}."
                )
    else:
        first, second = axes
        static = (tuple(np.atleast_1d(first).tolist()), tuple(np.atleast_1d(second).tolist()))
    return apply(_tensordot_op, (a_t, b_t), (("axes", static),))[0]
