"""`tf.IndexedSlices`: the sparse gradient of a gather from a variable or watched tensor."""

from __future__ import annotations

from typing import Any

from tapeshim._src import static_value
from tapeshim._src.ops import table
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, convert_to_tensor


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
        """The dense shape: its dimensions known now (eagerly, or while tracing from constants), else `None`."""
        if self._dense_shape is None:
            return TensorShape(None)
        # TF reads the shape through the dense shape's `get_shape`: one given as a list, tuple or NumPy array (kept
        # as given, TF's `.dense_shape`) raises TF's AttributeError, though converting the slices accepts it.
        self._dense_shape.get_shape  # noqa: B018 (raises AttributeError where TF's does)
        dense_shape = convert_to_tensor(self._dense_shape)
        known = static_value.known_value(dense_shape)
        if known is None or known.dtype == object:  # (a value or a symbolic size known when the function runs)
            rank = dense_shape.shape.as_list()[0]
            return TensorShape(None if rank is None else [None] * rank)
        return TensorShape(known.tolist())

    def to_dense(self) -> Tensor:
        """The dense tensor: rows summed into zeros of `dense_shape` (by recorded ops, as TF's conversion: a
        tape or a function trace follows it).

        Raises:
          ValueError: without a `dense_shape`, as TF's conversion.
        """
        from tapeshim._src.ops import reduction_ops  # (reduction_ops imports this module)

        if self._dense_shape is None:
            raise ValueError(
                f"Tensor conversion requested for IndexedSlices for argument `value` without dense_shape: {self!r}"
            )
        dense_shape = convert_to_tensor(self._dense_shape)
        known = static_value.known_value(dense_shape)
        rows: Any = int(known[0]) if known is not None and known.dtype != object else dense_shape[0]
        return reduction_ops.unsorted_segment_sum(self._values, self._indices, rows)

    def __neg__(self) -> "IndexedSlices":
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self._indices!r}, values={self._values!r}, dense_shape={self._dense_shape!r})"


table.export(
    "IndexedSlices", gradient="-", dtypes=table.ANY, note="from gathers (axis 0) of a variable or watched tensor, as TF"
)(IndexedSlices)
