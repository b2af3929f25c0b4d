"""A module-independent description of results holding RaggedTensors, for comparing TF's with tapeshim's.

A RaggedTensor is described by its type, dtype, ragged rank, shape, nested row splits and flat values (a
Tensor stays a Tensor, so a Tensor where TF gives a RaggedTensor fails); a spec, ragged shape, row partition
or TensorShape by its printed form; an object array element by element.
"""

import numpy as np

_PRINTED = ("RaggedTensorSpec", "DynamicRaggedShape", "TensorSpec", "RowPartition", "TensorShape")


def describe(value):
    """`value` (a nest) with each RaggedTensor, spec and shape replaced by its description."""
    if isinstance(value, dict):
        return {k: describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(describe(v) for v in value)
    if hasattr(value, "nested_row_splits"):
        return (
            "RaggedTensor",
            value.dtype.name,
            value.ragged_rank,
            tuple(value.shape.as_list()),
            list(value.nested_row_splits),
            value.flat_values,
        )
    name = type(value).__name__
    if name in _PRINTED:
        return (name, repr(value))
    if isinstance(value, np.ndarray) and value.dtype == object:
        return ("object array", value.shape, [describe(v) for v in value])
    return value
