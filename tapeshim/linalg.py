"""`tf.linalg`: re-exports from the op table."""

from tapeshim._src.ops.math_ops import matmul  # noqa: F401
