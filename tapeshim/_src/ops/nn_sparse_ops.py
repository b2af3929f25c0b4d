"""`tf.nn.embedding_lookup_sparse`: embeddings of a SparseTensor of ids, combined per row (sum, mean, sqrtn)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src.ops import array_ops, math_ops, nn_ops, reduction_ops, table
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _is_sparse(value: Any) -> bool:
    return hasattr(value, "dense_shape") and hasattr(value, "indices") and hasattr(value, "values")


@table.export(
    "nn.embedding_lookup_sparse",
    dtypes=table.REAL_FLOAT,
    note="gradients to params (IndexedSlices) and weights; rows after the last with an id are dropped, as TF's",
)
def embedding_lookup_sparse(
    params: Any,
    sp_ids: Any,
    sp_weights: Any,
    combiner: str | None = None,
    max_norm: TensorLike | None = None,
    name: str | None = None,
    allow_fast_lookup: bool = False,
) -> Tensor:
    """Looks up the embeddings of each row's ids and combines them, as `tf.nn.embedding_lookup_sparse`.

    Args:
      params: the embedding table `[vocabulary, dim]` (a tensor or variable).
      sp_ids: a SparseTensor `[batch, ...]` of int ids.
      sp_weights: a SparseTensor of float weights with the same indices, or None (weights 1).
      combiner: `"mean"` (default), `"sqrtn"` or `"sum"`.
      max_norm: clip each embedding to this L2 norm before combining.

    Returns:
      `[rows, dim]`: row `r` combines the embeddings of the ids in row `r` (zeros when it has none);
      `rows` is one past the last row holding an id.

    Raises:
      TypeError: `sp_ids` or `sp_weights` is not a SparseTensor.
      ValueError: an unknown combiner.
    """
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if not _is_sparse(sp_ids):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    if sp_weights is not None and not _is_sparse(sp_weights):
        raise TypeError(f"sp_weights must be either None or SparseTensor, got {type(sp_weights)}")
    rows_host = np.asarray(sp_ids.indices.numpy()).reshape(-1, len(sp_ids.dense_shape.numpy()))[:, 0]
    segments = int(rows_host.max()) + 1 if rows_host.size else 0
    rows = convert_to_tensor(rows_host.astype(np.int32))
    embeddings = nn_ops.embedding_lookup(params, sp_ids.values, max_norm=max_norm)
    dtype = embeddings.dtype
    if sp_weights is None:
        weights = array_ops.ones(list(rows._shape), dtype)
    else:
        weights = math_ops.cast(sp_weights.values, dtype)
    weighted = embeddings * array_ops.expand_dims(weights, -1)
    total = reduction_ops.unsorted_segment_sum(weighted, rows, segments)
    if combiner == "sum":
        return total
    if combiner == "mean":
        norm = reduction_ops.unsorted_segment_sum(weights, rows, segments)
    else:
        norm = math_ops.sqrt(reduction_ops.unsorted_segment_sum(weights * weights, rows, segments))
    norm = array_ops.expand_dims(norm, -1)
    safe = array_ops.where(norm > 0, norm, array_ops.ones_like(norm))
    return array_ops.where(norm > 0, total / safe, array_ops.zeros_like(total))
