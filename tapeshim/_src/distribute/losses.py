"""`tf.nn.compute_average_loss` and `tf.nn.scale_regularization_loss`: TF's per-replica loss scaling."""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes, errors
from tapeshim._src.distribute.strategy import get_strategy, has_strategy, in_cross_replica_context
from tapeshim._src.ops import array_ops, math_ops
from tapeshim._src.ops.table import export
from tapeshim._src.tensor import convert_to_tensor


@export("nn.compute_average_loss", note="divides by the local batch times the replica count in replica context")
def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None) -> Any:
    """The per-example losses summed and divided by the global batch size, as `tf.nn.compute_average_loss`.

    Args:
      per_example_loss: per-example losses (rank >= 1).
      sample_weight: optional weights, broadcast to the losses.
      global_batch_size: the divisor; default: the local batch (first dimension) times the replica count.

    Returns:
      A scalar: the weighted sum over `global_batch_size` (0 when that is 0).

    Raises:
      ValueError: a scalar `per_example_loss`.
      RuntimeError: called in cross-replica context (inside a strategy's scope, outside `run`) without
        `global_batch_size`.
    """
    losses = convert_to_tensor(per_example_loss)
    input_dtype = losses._dtype
    if not losses._shape:
        raise ValueError(
            "Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. Received "
            f"per_example_loss={losses.numpy() if losses._value is not None else losses} with rank 0"
        )
    if sample_weight is not None:
        weight = math_ops.cast(convert_to_tensor(sample_weight), dtypes.float32)
        losses = math_ops.cast(losses, dtypes.float32)
        if len(weight._shape) == len(losses._shape) - 1 and len(weight._shape) > 0:
            weight = array_ops.expand_dims(weight, -1)
        losses = math_ops.cast(math_ops.multiply(losses, weight), input_dtype)
    if global_batch_size is None:
        if has_strategy() and in_cross_replica_context():
            raise RuntimeError(
                "You are calling `compute_average_loss` in cross replica context, while it was "
                "expected to be called in replica context."
            )
        global_batch_size = int(losses._shape[0]) * get_strategy().num_replicas_in_sync
    else:
        size = convert_to_tensor(global_batch_size)
        if size._shape:
            raise errors_invalid("global_batch_size must be scalar.")
        if not size._dtype.is_integer:
            raise TypeError(f"global_batch_size must be an integer. Received: {global_batch_size!r}")
        global_batch_size = size
    total = math_ops.reduce_sum(losses)
    return math_ops.divide_no_nan(total, math_ops.cast(global_batch_size, input_dtype))


def errors_invalid(message: str) -> Exception:
    return errors.invalid_argument(message, "AssertScalar")


@export("nn.scale_regularization_loss", note="divides by the replica count in replica context")
def scale_regularization_loss(regularization_loss: Any) -> Any:
    """The summed regularization loss divided by the replica count, as `tf.nn.scale_regularization_loss`.

    Raises:
      RuntimeError: called in cross-replica context.
    """
    if has_strategy() and in_cross_replica_context():
        raise RuntimeError(
            "You are calling `scale_regularization_loss` in cross replica context, while it was "
            "expected to be called in replica context."
        )
    total = math_ops.reduce_sum(convert_to_tensor(regularization_loss))
    return math_ops.divide(total, math_ops.cast(get_strategy().num_replicas_in_sync, total._dtype))
