"""`tf.nn`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.distribute.losses import compute_average_loss, scale_regularization_loss
from tapeshim._src.ops.conv_ops import (
    avg_pool,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    conv1d,
    conv2d,
    conv2d_transpose,
    conv3d,
    convolution,
    depthwise_conv2d,
    max_pool,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from tapeshim._src.ops.ctc_ops import ctc_loss  # FUNCTIONAL
from tapeshim._src.ops.math_ops import (
    sigmoid,
    softplus,
    softsign,
    tanh,
)
from tapeshim._src.ops.nn_ops import (
    batch_normalization,
    bias_add,
    dropout,
    elu,
    embedding_lookup,
    gelu,
    l2_loss,
    leaky_relu,
    log_softmax,
    moments,
    relu,
    relu6,
    selu,
    sigmoid_cross_entropy_with_logits,
    silu,
    softmax,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
    swish,
    weighted_cross_entropy_with_logits,
)
from tapeshim._src.ops.nn_sparse_ops import embedding_lookup_sparse  # FUNCTIONAL
from tapeshim._src.ops.reduction_ops import (
    l2_normalize,
    top_k,
)

__all__ = [
    "compute_average_loss", "scale_regularization_loss",
    "avg_pool1d", "avg_pool2d", "batch_normalization", "bias_add", "conv1d", "conv2d", "conv2d_transpose",
    "depthwise_conv2d", "dropout", "elu", "embedding_lookup", "gelu", "l2_loss", "l2_normalize", "leaky_relu",
    "log_softmax", "max_pool1d", "max_pool2d", "moments", "relu", "relu6", "selu", "sigmoid",
    "sigmoid_cross_entropy_with_logits", "silu", "softmax", "softmax_cross_entropy_with_logits", "softplus",
    "softsign", "sparse_softmax_cross_entropy_with_logits", "swish", "tanh", "top_k",
    "weighted_cross_entropy_with_logits",
    "avg_pool", "avg_pool3d", "conv3d", "convolution", "ctc_loss", "embedding_lookup_sparse", "max_pool",
    "max_pool3d",  # FUNCTIONAL
]
