"""`tf.debugging`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.ops.debugging_asserts import (  # FUNCTIONAL
    assert_all_finite,
    assert_greater_equal,
    assert_integer,
    assert_less_equal,
    assert_negative,
    assert_non_positive,
    assert_none_equal,
    assert_proper_iterable,
    assert_rank_at_least,
    assert_rank_in,
    assert_same_float_dtype,
    assert_scalar,
    assert_type,
)
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
    "assert_equal",
    "assert_greater",
    "assert_less",
    "assert_near",
    "assert_non_negative",
    "assert_positive",
    "assert_rank",
    "assert_shapes",
    "check_numerics",
    "assert_all_finite",
    "assert_greater_equal",
    "assert_integer",
    "assert_less_equal",
    "assert_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_proper_iterable",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_type",  # FUNCTIONAL
]
