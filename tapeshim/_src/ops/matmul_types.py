"""Which kernel `tf.linalg.matmul` picks for two dtypes, an `output_type` or a sparsity hint, as TF 2.21's wrapper.

TF's `matmul` multiplies batches (an operand of rank 3 or more, no sparsity hint) with `BatchMatMulV2`, or with
`BatchMatMulV3` for an `output_type` other than the inputs' dtypes. Otherwise (matrices, or any operands with
`a_is_sparse` / `b_is_sparse`) it picks `SparseMatMul` for bfloat16 beside another dtype but (u)int8, and for
hinted float32/bfloat16 operands: computed in float32, bfloat16 where both are, matrices only. Then
`BatchMatMulV3` for an `output_type`, else `MatMul` (matrices only, one dtype). `BatchMatMulV3`'s CPU kernels
take (u)int8 with (u)int8 into int32 and bfloat16 with (u)int8 into bfloat16 only, and TF's gradient of the
mixed ones fails (it multiplies the bfloat16 cotangent by the integer operand).
"""

from __future__ import annotations

from typing import Any, Callable

from tapeshim._src import dtypes, errors
from tapeshim._src.ops.common import (
    dtype_check,
    enum_name,
    gradient_raises,
    missing_kernel,
    static_error,
    tf_type_name,
)
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor

_SPARSE_TYPES = ("float32", "bfloat16")
_SMALL_INTS = ("int8", "uint8")
_V3_IN_TYPES = (
    "bfloat16",
    "half",
    "float",
    "double",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "complex64",
    "complex128",
)
_SPARSE_CHECKS = [dtype_check("SparseMatMul", "", ("float", "bfloat16"), attr) for attr in ("Ta", "Tb")]
_V3_CHECKS = [
    dtype_check("BatchMatMulV3", "", _V3_IN_TYPES, "Ta"),
    dtype_check("BatchMatMulV3", "", _V3_IN_TYPES, "Tb"),
    dtype_check("BatchMatMulV3", "", tuple(t for t in _V3_IN_TYPES if t not in ("uint8", "int8")), "Tout"),
]
"""TF's attr checks of SparseMatMul's `Ta` and `Tb`, and of BatchMatMulV3's `Ta`, `Tb` and `Tout`."""


def operands(
    a: Tensor, b: Tensor, output_type: Any, sparse_hint: bool, cast: Callable[[Tensor, dtypes.DType], Tensor]
) -> tuple[Tensor, Tensor, dtypes.DType | None]:
    """`(a, b, the dtype the product is cast to or None)`: the operands cast to the dtype TF's picked kernel
    computes in (unchanged for `MatMul` / `BatchMatMulV2`, which need one dtype).

    Raises:
      InvalidArgumentError: a dtype the picked kernel's attributes do not allow, or a batch for a kernel of
        matrices (`ValueError` while a function is traced, as TF's shape inference).
      NotFoundError: a kernel TF's CPU lacks (`InvalidArgumentError` inside a function, as TF's graph).
    """
    out_dtype = None if output_type is None else dtypes.as_dtype(output_type)
    ranks = (len(a._shape), len(b._shape))
    picked = _picked(a._dtype, b._dtype, ranks, sparse_hint, out_dtype)
    if picked is None:
        return a, b, None
    compute, result = picked
    integer = None  # (BatchMatMulV3 of bfloat16 and (u)int8: TF's gradient multiplies by the integer operand)
    if a._dtype is not b._dtype and compute.name == "bfloat16" and result is None:
        integer = a._dtype if a._dtype.is_integer else b._dtype
    a, b = cast(a, compute), cast(b, compute)
    if integer is not None:
        message = (
            "cannot compute MatMul as input #1(zero-based) was expected to be a bfloat16 tensor but is a "
            f"{tf_type_name(integer)} tensor"
        )
        a, b = _failing_gradient(a, message), _failing_gradient(b, message)
    return a, b, result


def _picked(
    a: dtypes.DType, b: dtypes.DType, ranks: tuple[int, int], sparse_hint: bool, output_type: dtypes.DType | None
) -> tuple[dtypes.DType, dtypes.DType | None] | None:
    """`(the dtype both operands are cast to, the product's dtype or None)` where TF picks `SparseMatMul` or
    `BatchMatMulV3`; None for `MatMul` / `BatchMatMulV2` (see the module docstring)."""
    batched = max(ranks) > 2
    v3 = output_type is not None and (output_type is not a or output_type is not b)
    mixed_bfloat16 = a is not b and (
        (a.name == "bfloat16" and b.name not in _SMALL_INTS) or (b.name == "bfloat16" and a.name not in _SMALL_INTS)
    )
    if not batched or sparse_hint:  # (TF's path of matrices)
        if mixed_bfloat16 or (sparse_hint and a.name in _SPARSE_TYPES and b.name in _SPARSE_TYPES):
            for check, dtype in zip(_SPARSE_CHECKS, (a, b)):
                check((((), dtype),), {})
            if batched:
                raise static_error(f"{'a' if ranks[0] > 2 else 'b'} is not a matrix", "SparseMatMul")
            return dtypes.float32, (dtypes.bfloat16 if a.name == b.name == "bfloat16" else None)
        if batched and not v3:
            if a.is_unsigned and _thread_state.trace is None:  # (MatMul has no kernel for it: found first)
                raise missing_kernel("MatMul", f"T={enum_name(a)}")
            raise static_error(f"In[0] and In[1] ndims must be == 2: {max(ranks)}", "MatMul")
    if not v3:
        if a is not b and a.is_unsigned and _thread_state.trace is None:  # (no kernel for it: found before b's dtype)
            raise missing_kernel("BatchMatMulV2" if batched else "MatMul", f"T={enum_name(a)}")
        return None
    assert output_type is not None
    check_v3_kernel(a, b, output_type, same_allowed=False)
    return output_type, None


_V3_ONE_DTYPE = frozenset(("float32", "float64", "bfloat16", "int16", "int32", "int64", "complex64", "complex128"))
"""The dtypes of `BatchMatMulV3`'s CPU kernels of one dtype (`Ta == Tb == Tout`; no half)."""


def check_v3_kernel(a: dtypes.DType, b: dtypes.DType, output_type: dtypes.DType, same_allowed: bool = True) -> None:
    """Raises TF's error where `BatchMatMulV3` has no CPU kernel for `Ta`, `Tb` and `Tout`: its attr
    `InvalidArgumentError`, or `missing_kernel`'s. Its kernels: one dtype (`same_allowed`: the raw op; the wrapper
    picks `BatchMatMulV2` then), (u)int8 with (u)int8 into int32, bfloat16 with (u)int8 into bfloat16."""
    for check, dtype in zip(_V3_CHECKS, (a, b, output_type)):
        check((((), dtype),), {})
    registered = (
        (same_allowed and a is b is output_type and a.name in _V3_ONE_DTYPE)
        or (a.name in _SMALL_INTS and b.name in _SMALL_INTS and output_type.name == "int32")
        or (a.name == "bfloat16" and b.name in _SMALL_INTS and output_type.name == "bfloat16")
        or (a.name in _SMALL_INTS and b.name == "bfloat16" and output_type.name == "bfloat16")
    )
    if not registered:
        raise missing_kernel("BatchMatMulV3", f"Ta={enum_name(a)}, Tb={enum_name(b)}, Tout={enum_name(output_type)}")


def _failing_gradient(x: Tensor, message: str) -> Tensor:
    """`x`, through which a gradient raises TF's `InvalidArgumentError` (`message`) when it is taken."""
    if not (x._dtype.is_floating or x._dtype.is_complex):
        return x
    return apply(_FAILING_GRADIENT, (x,), (("message", message),))[0]


_FAILING_GRADIENT = OpDef(
    "BatchMatMulV3MixedGradient",
    lambda x, message: gradient_raises(lambda: errors.invalid_argument(message, "MatMul"))(x),
    True,
)
