"""`tf.IndexedSlices`: the sparse gradient of a gather from a variable or watched tensor."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from tapeshim._src.ops import table
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor


class IndexedSlices:
    """Rows `values` at `indices` of a tensor of shape `dense_shape`, as `tf.IndexedSlices`.

    Indices may repeat (rows are summed when densified). Convert with
    `tf.convert_to_tensor(slices)`; ops and `Variable.assign_sub` accept it and
    densify it, as TF's conversion does.
    """

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Tensor | None = None) -> None:
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self) -> Tensor | None:
        return self._dense_shape

    @property
    def dtype(self) -> Any:
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        if self._dense_shape is None:
            return TensorShape([None, *self._values.shape.as_list()[1:]])
        return TensorShape(self._dense_shape.numpy().tolist())

    def to_dense(self) -> Tensor:
        """The dense tensor: rows summed into zeros of `dense_shape`."""
        shape = (
            tuple(int(d) for d in self._dense_shape.numpy())
            if self._dense_shape is not None
            else (int(jnp.max(self._indices.value)) + 1,) + tuple(self._values._shape[1:])
        )
        dense = jax.ops.segment_sum(self._values.value, self._indices.value.astype(jnp.int32), shape[0])
        return Tensor(dense.reshape(shape), shape, self._values.dtype)

    def __neg__(self) -> "IndexedSlices":
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self._indices!r}, values={self._values!r}, dense_shape={self._dense_shape!r})"


table.export(
    "IndexedSlices", gradient="-", dtypes=table.ANY, note="from gathers (axis 0) of a variable or watched tensor, as TF"
)(IndexedSlices)
