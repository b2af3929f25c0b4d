"""`tf.nn`: re-exports from the op table."""

from tapeshim._src.ops.math_ops import sigmoid, tanh  # noqa: F401
from tapeshim._src.ops.nn_ops import (  # noqa: F401
    log_softmax,
    relu,
    softmax,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
