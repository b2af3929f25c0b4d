"""`tf.raw_ops`' decompositions and other linear-algebra ops: `Svd`, `SelfAdjointEigV2`, `MatrixSolveLs`, `Lu`,
`MatrixSquareRoot`, `Diag`, and `SpaceToBatchND`.

Each runs tapeshim's public op (`tf.linalg.svd`, `tf.linalg.eigh`, ...) under TF's op name and argument names
(see `raw_ops_base`); ops with several outputs return TF's named tuples (`Svd(s, u, v)`).
"""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes, errors
from tapeshim._src.ops.common import convert_same_dtype, kernels_before_shapes, linalg_kernels, static_error
from tapeshim._src.raw_ops_base import RawOp, define, named_tuple, tf_module
from tapeshim._src.tensor import Tensor, convert_to_tensor

Svd = named_tuple("Svd", "s u v")
SelfAdjointEigV2 = named_tuple("SelfAdjointEigV2", "e v")


def _undefined(like: Tensor) -> Any:
    """The output TF leaves undefined (an uninitialized scalar) when it is not computed: a zero here."""
    return tf_module().zeros((), like.dtype)


def _svd(input: Any, compute_uv: bool, full_matrices: bool) -> Any:  # noqa: A002 - TF's argument name
    tf = tf_module()
    if compute_uv:
        s, u, v = tf.linalg.svd(input, full_matrices=full_matrices, compute_uv=True)
        return Svd(s, u, v)
    s = tf.linalg.svd(input, full_matrices=full_matrices, compute_uv=False)
    return Svd(s, _undefined(s), _undefined(s))


def _self_adjoint_eig(input: Any, compute_v: bool) -> Any:  # noqa: A002 - TF's argument name
    tf = tf_module()
    if compute_v:
        e, v = tf.linalg.eigh(input)
        return SelfAdjointEigV2(e, v)
    e = tf.linalg.eigvalsh(input)
    return SelfAdjointEigV2(e, _undefined(e))


def _l2_value(l2_regularizer: Any) -> float:
    """`MatrixSolveLs`' `l2_regularizer`, a float64 scalar (a tensor of another dtype is the kernel's error)."""
    if isinstance(l2_regularizer, (bool, int, float)):
        return float(l2_regularizer)
    l2 = convert_to_tensor(l2_regularizer)
    if l2.dtype != dtypes.float64:
        raise errors.invalid_argument(
            f"cannot compute MatrixSolveLs as input #2(zero-based) was expected to be a double tensor but is a "
            f"{'float' if l2.dtype == dtypes.float32 else l2.dtype.name} tensor",
            "MatrixSolveLs",
        )
    if l2.shape.rank != 0:
        raise static_error(f"Shape must be rank 0 but is rank {l2.shape.rank}", "MatrixSolveLs")
    return float(l2.numpy())


def _solve_ls(matrix: Any, rhs: Any, l2_regularizer: Any, fast: bool) -> Any:
    a, b = convert_same_dtype((matrix, rhs), "MatrixSolveLs")
    kernels_before_shapes(
        linalg_kernels("MatrixSolveLs", attrs=lambda static: f", fast={'true' if static['fast'] else 'false'}"),
        (a,),
        (("fast", bool(fast)),),
    )
    l2 = _l2_value(l2_regularizer)
    for what, t in (("Input matrix", a), ("Input rhs", b)):
        if len(t._shape) < 2:
            raise static_error(f"{what} must have rank >= 2, got {len(t._shape)}", "MatrixSolveLs")
    if a._shape[-2] != b._shape[-2]:
        raise static_error("Input matrix and rhs are incompatible.", "MatrixSolveLs")
    return tf_module().linalg.lstsq(a, b, l2_regularizer=l2, fast=bool(fast))


def linalg_raw_ops() -> dict[str, RawOp]:
    """The raw ops of this module, op name -> raw op."""
    tf = tf_module
    table: dict[str, RawOp] = {}
    define(table, "Svd", "input", _svd, compute_uv=True, full_matrices=False)
    define(table, "SelfAdjointEigV2", "input", _self_adjoint_eig, compute_v=True)
    define(table, "MatrixSolveLs", "matrix rhs l2_regularizer", _solve_ls, fast=True)
    define(
        table,
        "Lu",
        "input",
        lambda input, output_idx_type: tf().linalg.lu(input, output_idx_type=output_idx_type),
        output_idx_type=dtypes.int32,
    )
    define(table, "MatrixSquareRoot", "input", lambda input: tf().linalg.sqrtm(input))
    define(table, "Diag", "diagonal", lambda diagonal: tf().linalg.tensor_diag(diagonal))
    define(
        table,
        "SpaceToBatchND",
        "input block_shape paddings",
        lambda input, block_shape, paddings: tf().space_to_batch_nd(input, block_shape, paddings),
    )
    return table
