"""`tf.nn.nce_loss` and `tf.nn.sampled_softmax_loss`: TF's `_compute_sampled_logits`, written with tapeshim's
ops, so values and gradients (with respect to the weights, biases and inputs) follow TF's."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.ops import array_ops, math_ops, nn_ops, table
from tapeshim._src.ops.candidate_sampling import log_uniform_candidate_sampler
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _sum_rows(x: Tensor) -> Tensor:
    """The sum of each row of the matrix `x`, as TF's `_sum_rows` computes it (a product with a ones column)."""
    ones = array_ops.ones([x._shape[1], 1], x._dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def _weights(weights: TensorLike | Sequence[TensorLike]) -> Tensor:
    """The class embeddings: a list of shards (TF's "div" strategy: contiguous ids) is their concatenation."""
    if isinstance(weights, (list, tuple)):
        if len(weights) == 1:
            return convert_to_tensor(weights[0])
        return array_ops.concat(list(weights), 0)
    return convert_to_tensor(weights)


def _compute_sampled_logits(
    weights: TensorLike | Sequence[TensorLike],
    biases: TensorLike,
    labels: TensorLike,
    inputs: TensorLike,
    num_sampled: int,
    num_classes: int,
    num_true: int,
    sampled_values: Any,
    remove_accidental_hits: bool,
    seed: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The logits `[batch_size, num_true + num_sampled]` of the true then the sampled classes (the log expected
    counts subtracted) and their labels (`1 / num_true` for each true class, 0 for the sampled ones)."""
    table_w = _weights(weights)
    x = convert_to_tensor(inputs)
    label_ids = convert_to_tensor(labels)
    if label_ids._dtype != dtypes.int64:
        label_ids = math_ops.cast(label_ids, dtypes.int64)
    labels_flat = array_ops.reshape(label_ids, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(label_ids, num_true, num_sampled, True, num_classes, seed)
    sampled, true_expected_count, sampled_expected_count = (math_ops.stop_gradient(s) for s in sampled_values)
    sampled = math_ops.cast(sampled, dtypes.int64)
    all_ids = array_ops.concat([labels_flat, sampled], 0)
    count = labels_flat._shape[0]

    all_w = nn_ops.embedding_lookup(table_w, all_ids)
    if all_w._dtype != x._dtype:
        all_w = math_ops.cast(all_w, x._dtype)
    true_w, sampled_w = all_w[:count], all_w[count:]
    sampled_logits = math_ops.matmul(x, sampled_w, transpose_b=True)

    all_b = nn_ops.embedding_lookup(biases, all_ids)
    if all_b._dtype != x._dtype:
        all_b = math_ops.cast(all_b, x._dtype)
    true_b, sampled_b = all_b[:count], all_b[count:]

    dim = true_w._shape[1]
    row_wise_dots = array_ops.expand_dims(x, 1) * array_ops.reshape(true_w, [-1, num_true, dim])
    true_logits = array_ops.reshape(_sum_rows(array_ops.reshape(row_wise_dots, [-1, dim])), [-1, num_true])
    true_logits = true_logits + array_ops.reshape(true_b, [-1, num_true])
    sampled_logits = sampled_logits + sampled_b

    if remove_accidental_hits:
        # A sampled class equal to one of the example's true classes gets -FLOAT_MAX (TF's `compute_accidental_hits`
        # scattered with `sparse_to_dense`).
        hits = math_ops.reduce_any(
            math_ops.equal(array_ops.expand_dims(label_ids, -1), array_ops.reshape(sampled, [1, 1, -1])), axis=1
        )
        lowest = math_ops.cast(convert_to_tensor(-np.finfo(np.float32).max, dtypes.float32), sampled_logits._dtype)
        sampled_logits = sampled_logits + array_ops.where(hits, lowest, array_ops.zeros_like(lowest))

    true_logits = true_logits - math_ops.log(true_expected_count)
    sampled_logits = sampled_logits - math_ops.log(sampled_expected_count)
    out_logits = array_ops.concat([true_logits, sampled_logits], 1)
    out_labels = array_ops.concat(
        [array_ops.ones_like(true_logits) / num_true, array_ops.zeros_like(sampled_logits)], 1
    )
    return out_logits, out_labels


@table.export("nn.nce_loss", dtypes=table.REAL_FLOAT, note="its default candidates are not TF's bit stream")
def nce_loss(
    weights: TensorLike | Sequence[TensorLike],
    biases: TensorLike,
    labels: TensorLike,
    inputs: TensorLike,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = False,
    name: str = "nce_loss",
) -> Tensor:
    """The noise-contrastive estimation loss of each example, as `tf.nn.nce_loss`.

    Args:
      weights: the class embeddings `[num_classes, dim]`, or a list of shards concatenated along axis 0.
      biases: the class biases `[num_classes]`.
      labels: the target classes, an integer `[batch_size, num_true]` tensor.
      inputs: the activations `[batch_size, dim]`.
      num_sampled: the number of negative classes sampled per batch.
      num_classes: the number of classes.
      num_true: the number of target classes per example.
      sampled_values: `(sampled_candidates, true_expected_count, sampled_expected_count)` from a candidate
        sampler; None samples with `tf.random.log_uniform_candidate_sampler` (unique).
      remove_accidental_hits: whether a sampled class equal to a target class of the example is ignored.
      name: ignored.

    Returns:
      A `[batch_size]` tensor of per-example losses.

    Raises:
      InvalidArgumentError: for shapes or dtypes that do not fit, or a class out of range (as the ops it runs).
    """
    num_true = int(num_true)
    logits, labels_out = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values, remove_accidental_hits
    )
    return _sum_rows(nn_ops.sigmoid_cross_entropy_with_logits(labels=labels_out, logits=logits))


@table.export("nn.sampled_softmax_loss", dtypes=table.REAL_FLOAT, note="its default candidates are not TF's bit stream")
def sampled_softmax_loss(
    weights: TensorLike | Sequence[TensorLike],
    biases: TensorLike,
    labels: TensorLike,
    inputs: TensorLike,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = True,
    seed: int | None = None,
    name: str = "sampled_softmax_loss",
) -> Tensor:
    """The softmax cross-entropy of each example over its true and a sample of the other classes, as
    `tf.nn.sampled_softmax_loss`.

    Args:
      weights: the class embeddings `[num_classes, dim]`, or a list of shards concatenated along axis 0.
      biases: the class biases `[num_classes]`.
      labels: the target classes, an integer `[batch_size, num_true]` tensor.
      inputs: the activations `[batch_size, dim]`.
      num_sampled: the number of classes sampled per batch.
      num_classes: the number of classes.
      num_true: the number of target classes per example (each gets probability `1 / num_true`).
      sampled_values: `(sampled_candidates, true_expected_count, sampled_expected_count)` from a candidate
        sampler; None samples with `tf.random.log_uniform_candidate_sampler` (unique).
      remove_accidental_hits: whether a sampled class equal to a target class of the example is ignored.
      seed: the op seed of the default sampler.
      name: ignored.

    Returns:
      A `[batch_size]` tensor of per-example losses.

    Raises:
      InvalidArgumentError: for shapes or dtypes that do not fit, or a class out of range (as the ops it runs).
    """
    num_true = int(num_true)
    logits, labels_out = _compute_sampled_logits(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        remove_accidental_hits,
        seed,
    )
    return nn_ops.softmax_cross_entropy_with_logits(labels=math_ops.stop_gradient(labels_out), logits=logits)
