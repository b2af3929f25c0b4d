"""`tf.debugging`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.ops.debugging_ops import (
    assert_equal,
    assert_greater,
    assert_less,
    assert_near,
    assert_non_negative,
    assert_positive,
    assert_rank,
    assert_shapes,
    check_numerics,
)

__all__ = [
    "assert_equal", "assert_greater", "assert_less", "assert_near", "assert_non_negative", "assert_positive",
    "assert_rank", "assert_shapes", "check_numerics",
]
