"""`tf.math`: re-exports from the op table."""

from tapeshim._src.ops.math_ops import (  # noqa: F401
    abs, add, add_n, argmax, argmin, ceil, complex, conj, cos, cosh, divide, equal, exp, expm1, floor, floordiv,
    floormod, greater, greater_equal, imag, is_finite, is_inf, is_nan, less, less_equal, log, log1p, logical_and,
    logical_not, logical_or, logical_xor, maximum, minimum, multiply, negative, not_equal, pow, real, reciprocal,
    reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, rint, round, rsqrt,
    sigmoid, sign, sin, sinh, sqrt, square, squared_difference, subtract, tan, tanh, truediv,
)

mod = floormod
