"""The `tf.nn` rows of the op table needed for training steps."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from tapeshim._src import errors
from tapeshim._src.ops.common import convert_same_dtype, dtype_check
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor

OPS: dict[str, OpDef] = {}


def _row(op: OpDef) -> OpDef:
    OPS[op.name] = op
    return op


def _sparse_xent(labels: jax.Array, logits: jax.Array) -> jax.Array:
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(log_probs, labels[..., None].astype(jnp.int32), axis=-1)
    return -picked[..., 0]


def _xent(labels: jax.Array, logits: jax.Array, axis: int) -> jax.Array:
    return -jnp.sum(labels * jax.nn.log_softmax(logits, axis=axis), axis=axis)


_relu_op = _row(OpDef("Relu", jax.nn.relu, True, dtype_check("Relu", "fiu")))
_softmax_op = _row(OpDef("Softmax", lambda x, axis: jax.nn.softmax(x, axis=axis), True, dtype_check("Softmax", "f")))
_log_softmax_op = _row(OpDef("LogSoftmax", lambda x, axis: jax.nn.log_softmax(x, axis=axis), True,
                             dtype_check("LogSoftmax", "f")))
_sparse_xent_op = _row(OpDef("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent, True))
_xent_op = _row(OpDef("SoftmaxCrossEntropyWithLogits", _xent, True, dtype_check("SoftmaxCrossEntropyWithLogits", "f")))


def relu(features: Any, name: str | None = None) -> Tensor:
    """max(features, 0); the gradient at 0 is 0, as in TF."""
    return apply(_relu_op, (convert_to_tensor(features),))[0]


def _axis(axis: Any, rank: int, op_name: str) -> int:
    axis = -1 if axis is None else int(axis)
    if not -rank <= axis < rank:
        raise errors.invalid_argument(
            f"`axis` must be in the range [{-rank}, {rank}) where {rank} is the number of dimensions in the input."
            f" Received: axis={axis}", op_name)
    return axis % rank


def softmax(logits: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """exp(logits) / sum(exp(logits)) along `axis` (default last)."""
    x = convert_to_tensor(logits)
    return apply(_softmax_op, (x,), (("axis", _axis(axis, len(x._shape), "Softmax")),))[0]


def log_softmax(logits: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """logits - log(sum(exp(logits))) along `axis` (default last)."""
    x = convert_to_tensor(logits)
    return apply(_log_softmax_op, (x,), (("axis", _axis(axis, len(x._shape), "LogSoftmax")),))[0]


def sparse_softmax_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None) -> Tensor:
    """Cross-entropy of integer class `labels` against unnormalized `logits`, per example.

    Args:
      labels: int32/int64 tensor of shape `logits.shape[:-1]`.
      logits: float tensor of shape `[..., num_classes]`.

    Returns:
      The loss, of `labels`' shape and `logits`' dtype.

    Raises:
      ValueError: if the ranks or leading shapes do not match.
    """
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given (as keywords, as in TF).")
    labels_t = convert_to_tensor(labels)
    logits_t = convert_to_tensor(logits)
    if not labels_t._dtype.is_integer:
        raise errors.invalid_argument(
            f"Value for attr 'Tlabels' of {labels_t._dtype.name} is not in the list of allowed values: int32, int64",
            "SparseSoftmaxCrossEntropyWithLogits")
    if not logits_t._dtype.is_floating:
        raise errors.invalid_argument(
            f"Value for attr 'T' of {logits_t._dtype.name} is not in the list of allowed values: half, bfloat16, "
            "float, double", "SparseSoftmaxCrossEntropyWithLogits")
    if len(labels_t._shape) != len(logits_t._shape) - 1:
        raise ValueError(
            f"Rank mismatch: Rank of labels (received {len(labels_t._shape)}) should equal rank of logits minus 1 "
            f"(received {len(logits_t._shape)}).")
    if tuple(labels_t._shape) != tuple(logits_t._shape[:-1]):
        raise ValueError(
            f"Shape mismatch: The shape of labels (received {tuple(labels_t._shape)}) should equal the shape of "
            f"logits except for the last dimension (received {tuple(logits_t._shape)}).")
    return apply(_sparse_xent_op, (labels_t, logits_t))[0]


def softmax_cross_entropy_with_logits(labels: Any = None, logits: Any = None, axis: int = -1,
                                      name: str | None = None) -> Tensor:
    """Cross-entropy of probability `labels` against unnormalized `logits` along `axis`.

    Gradients flow to both `logits` and `labels`, as in TF.
    """
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given (as keywords, as in TF).")
    labels_t, logits_t = convert_same_dtype((labels, logits), "SoftmaxCrossEntropyWithLogits")
    if tuple(labels_t._shape) != tuple(logits_t._shape):
        raise errors.invalid_argument(
            f"logits and labels must be broadcastable: logits_size=[{','.join(map(str, logits_t._shape))}] "
            f"labels_size=[{','.join(map(str, labels_t._shape))}]", "SoftmaxCrossEntropyWithLogits")
    axis = _axis(axis, len(logits_t._shape), "SoftmaxCrossEntropyWithLogits")
    return apply(_xent_op, (labels_t, logits_t), (("axis", axis),))[0]
