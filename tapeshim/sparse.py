"""`tf.sparse`: sparse tensors and the ops programs use on them."""

from tapeshim._src.sparse import (
    SparseTensor,
    add,
    from_dense,
    reduce_sum,
    reorder,
    sparse_dense_matmul,
    to_dense,
    to_indicator,
)
from tapeshim._src.sparse_ops import (
    concat,
    expand_dims,
    eye,
    fill_empty_rows,
    maximum,
    minimum,
    reduce_max,
    reshape,
    retain,
    segment_mean,
    segment_sqrt_n,
    segment_sum,
    slice,  # noqa: A004
    softmax,
    transpose,
)

__all__ = [
    "SparseTensor",
    "add",
    "concat",
    "expand_dims",
    "eye",
    "fill_empty_rows",
    "from_dense",
    "maximum",
    "minimum",
    "reduce_max",
    "reduce_sum",
    "reorder",
    "reshape",
    "retain",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "slice",
    "softmax",
    "sparse_dense_matmul",
    "to_dense",
    "to_indicator",
    "transpose",
]

from tapeshim._src import strings_table  # noqa: E402, F401  (registers the op-table rows)
