"""`tf.ragged`: ragged tensors (rows of different lengths)."""

from tapeshim._src.ragged import map_flat_values
from tapeshim._src.ragged_ops import (
    boolean_mask,
    constant,
    row_splits_to_segment_ids,
    segment_ids_to_row_splits,
    stack,
)
from tapeshim._src.ragged_ops import ragged_range as range  # noqa: A004

__all__ = [
    "boolean_mask",
    "constant",
    "map_flat_values",
    "range",
    "row_splits_to_segment_ids",
    "segment_ids_to_row_splits",
    "stack",
]

from tapeshim._src import strings_table  # noqa: E402, F401  (registers the op-table rows)
