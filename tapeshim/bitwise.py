"""`tf.bitwise`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.ops.bitwise_ops import (
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    invert,
    left_shift,
    right_shift,
)

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]
