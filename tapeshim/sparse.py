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

__all__ = [
    "SparseTensor", "add", "from_dense", "reduce_sum", "reorder", "sparse_dense_matmul", "to_dense", "to_indicator",
]

from tapeshim._src import strings_table  # noqa: E402, F401  (registers the op-table rows)
