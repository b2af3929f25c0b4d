"""`tf.sets`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.ops.set_ops import difference, intersection, size, union

__all__ = ["difference", "intersection", "size", "union"]
