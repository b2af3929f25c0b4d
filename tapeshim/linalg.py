"""`tf.linalg`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.ops.linalg_diag import (  # FUNCTIONAL
    adjoint,
    cross,
    expm,
    matrix_transpose,
    set_diag,
)
from tapeshim._src.ops.linalg_ops import (
    band_part,
    cholesky,
    det,
    diag,
    diag_part,
    eigh,
    inv,
    logdet,
    lstsq,
    matvec,
    qr,
    slogdet,
    solve,
    svd,
    trace,
    triangular_solve,
)
from tapeshim._src.ops.manip_ops import (
    einsum,
    eye,
    tensordot,
)
from tapeshim._src.ops.math_ops import (
    matmul,
)
from tapeshim._src.ops.reduction_ops import (
    global_norm,
    l2_normalize,
    norm,
)

__all__ = [
    "band_part",
    "cholesky",
    "det",
    "diag",
    "diag_part",
    "eigh",
    "einsum",
    "eye",
    "global_norm",
    "inv",
    "l2_normalize",
    "logdet",
    "lstsq",
    "matmul",
    "matvec",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "tensordot",
    "trace",
    "triangular_solve",
    "adjoint",
    "cross",
    "expm",
    "matrix_transpose",
    "set_diag",  # FUNCTIONAL
]
