"""Which kernel `tf.linalg.matmul` picks for two dtypes, an `output_type` or a sparsity hint, as TF 2.21's wrapper.

TF's `matmul` multiplies two matrices (rank 2) of which one is bfloat16 and the other float32 (or any dtype
but (u)int8) with `SparseMatMul`, which computes in float32 and gives float32 (bfloat16 where both are), as
it does for the `a_is_sparse` / `b_is_sparse` hints on float32 and bfloat16 matrices. An `output_type` other
than the inputs' dtypes picks `BatchMatMulV3`, whose CPU kernels take (u)int8 with (u)int8 into int32 and
bfloat16 with (u)int8 into bfloat16 only. Everything else is `MatMul` / `BatchMatMulV2`, of one dtype.
"""

from __future__ import annotations

from tapeshim._src import dtypes, errors
from tapeshim._src.ops.common import attr_error, no_cpu_kernel, tf_type_name
from tapeshim._src.state import _thread_state

_SPARSE_TYPES = ("float32", "bfloat16")
_SMALL_INTS = ("int8", "uint8")
_V3_OUT_TYPES = "bfloat16, half, float, double, int16, int32, int64, complex64, complex128"
_V3_IN_TYPES = "bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, complex128"


def product_dtypes(
    a: dtypes.DType, b: dtypes.DType, rank_2: bool, sparse_hint: bool, output_type: dtypes.DType | None
) -> tuple[dtypes.DType, dtypes.DType | None] | None:
    """`(the dtype both inputs are cast to, the dtype the product is cast to or None)` where TF's `matmul` picks
    `SparseMatMul` or `BatchMatMulV3`; None where it picks `MatMul` / `BatchMatMulV2` (one dtype).

    Args:
      a, b: the inputs' dtypes.
      rank_2: whether both inputs are matrices (TF's `SparseMatMul` serves only those).
      sparse_hint: `a_is_sparse or b_is_sparse`.
      output_type: `matmul`'s `output_type` (None: not given).

    Raises:
      InvalidArgumentError: a dtype the picked kernel's attributes do not allow.
      NotFoundError: a `BatchMatMulV3` of dtypes TF's CPU has no kernel for.
    """
    mixed_bfloat16 = a is not b and (
        (a.name == "bfloat16" and b.name not in _SMALL_INTS) or (b.name == "bfloat16" and a.name not in _SMALL_INTS)
    )
    if rank_2 and (mixed_bfloat16 or (sparse_hint and a.name in _SPARSE_TYPES and b.name in _SPARSE_TYPES)):
        for attr, dtype in (("Ta", a), ("Tb", b)):
            if dtype.name not in _SPARSE_TYPES:
                raise _attr_error(attr, dtype, "float, bfloat16", "SparseMatMul")
        both_bfloat16 = a.name == b.name == "bfloat16"
        return dtypes.float32, (dtypes.bfloat16 if both_bfloat16 else None)
    if output_type is None or (output_type is a and output_type is b):
        if a is not b and a.is_unsigned and _thread_state.trace is None:  # (no kernel for it: found before b's dtype)
            raise no_cpu_kernel("MatMul" if rank_2 else "BatchMatMulV2", f"T={_dt(a)}")
        return None
    for attr, dtype, allowed in (
        ("Ta", a, _V3_IN_TYPES),
        ("Tb", b, _V3_IN_TYPES),
        ("Tout", output_type, _V3_OUT_TYPES),
    ):
        if tf_type_name(dtype) not in allowed.split(", "):
            raise _attr_error(attr, dtype, allowed, "BatchMatMulV3")
    registered = (
        (a.name in _SMALL_INTS and b.name in _SMALL_INTS and output_type.name == "int32")
        or (a.name == "bfloat16" and b.name in _SMALL_INTS and output_type.name == "bfloat16")
        or (a.name in _SMALL_INTS and b.name == "bfloat16" and output_type.name == "bfloat16")
    )
    if not registered:
        raise errors.NotFoundError(
            None,
            None,
            "Could not find device for node: {{node BatchMatMulV3}} = BatchMatMulV3"
            f"[Ta={_dt(a)}, Tb={_dt(b)}, Tout={_dt(output_type)}, adj_x=false, adj_y=false, grad_x=false, "
            "grad_y=false]",
        )
    return output_type, None


def _dt(dtype: dtypes.DType) -> str:
    """TF's enum name of a dtype (`DT_FLOAT`)."""
    return "DT_" + tf_type_name(dtype).upper()


def _attr_error(attr: str, dtype: dtypes.DType, allowed: str, op_name: str) -> Exception:
    return attr_error(
        f"Value for attr '{attr}' of {tf_type_name(dtype)} is not in the list of allowed values: {allowed}\n\t; "
        f"NodeDef: {{{{node {op_name}}}}}",
        op_name,
    )
