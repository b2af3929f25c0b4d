"""`tf.nn.ctc_loss`: the connectionist temporal classification loss (the forward algorithm in log space,
one `lax.scan` over time, batched); JAX differentiates it with respect to the logits."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import errors
from tapeshim._src.ops import array_ops, math_ops, table
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor


def _logaddexp(a: jax.Array, b: jax.Array) -> jax.Array:
    """log(exp(a) + exp(b)) whose gradient is 0, not NaN, where both are -inf (unreachable states)."""
    top = jnp.maximum(a, b)
    finite = jnp.isfinite(top)
    shift = jnp.where(finite, top, 0.0)
    total = jnp.exp(a - shift) + jnp.exp(b - shift)
    return jnp.where(finite, shift + jnp.log(jnp.where(finite, total, 1.0)), top)


def _ctc(
    logits: jax.Array, labels: jax.Array, label_length: jax.Array, logit_length: jax.Array, blank: int
) -> jax.Array:
    """Per-sequence negative log likelihoods; logits are [time, batch, classes]."""
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    time, batch, _ = log_probs.shape
    max_labels = labels.shape[1]
    s_len = 2 * max_labels + 1
    labels = labels.astype(jnp.int32)
    extended = jnp.full((batch, s_len), blank, jnp.int32).at[:, 1::2].set(labels)
    s = jnp.arange(s_len)
    previous_two = jnp.concatenate([jnp.full((batch, 2), -1, jnp.int32), extended[:, :-2]], axis=1)
    can_skip = (extended != blank) & (extended != previous_two) & (s[None, :] >= 2)
    valid = s[None, :] < (2 * label_length[:, None] + 1)
    neg_inf = jnp.asarray(-jnp.inf, log_probs.dtype)

    def emit(t: jax.Array | int) -> jax.Array:
        return jnp.take_along_axis(log_probs[t], extended, axis=1)

    alpha0 = jnp.where((s[None, :] < 2) & valid, emit(0), neg_inf)

    def step(alpha: jax.Array, t: jax.Array) -> tuple:
        shift1 = jnp.concatenate([jnp.full((batch, 1), neg_inf), alpha[:, :-1]], axis=1)
        shift2 = jnp.concatenate([jnp.full((batch, 2), neg_inf), alpha[:, :-2]], axis=1)
        combined = _logaddexp(alpha, shift1)
        combined = jnp.where(can_skip, _logaddexp(combined, shift2), combined)
        new = jnp.where(valid, combined + emit(t), neg_inf)
        active = (t < logit_length)[:, None]
        return jnp.where(active, new, alpha), None

    alpha, _ = lax.scan(step, alpha0, jnp.arange(1, time))
    last = 2 * label_length
    end = jnp.take_along_axis(alpha, last[:, None], axis=1)[:, 0]
    before = jnp.where(
        label_length > 0, jnp.take_along_axis(alpha, jnp.maximum(last - 1, 0)[:, None], axis=1)[:, 0], neg_inf
    )
    return -_logaddexp(end, before)


_ctc_op = OpDef("CTCLoss", _ctc, True)


def _dense_labels(labels: Any) -> tuple[Tensor, Tensor | None]:
    """Dense labels and their lengths: a SparseTensor's values of each row, in column order."""
    if hasattr(labels, "dense_shape") and hasattr(labels, "indices"):
        indices = np.asarray(labels.indices.numpy()).reshape(-1, 2)
        values = np.asarray(labels.values.numpy()).reshape(-1)
        rows = int(np.asarray(labels.dense_shape.numpy())[0])
        per_row: list[list] = [[] for _ in range(rows)]
        for (row, _col), value in sorted(zip(map(tuple, indices), values)):
            per_row[row].append(value)
        width = max((len(r) for r in per_row), default=0)
        dense = np.zeros((rows, width), np.int32)
        for row, items in enumerate(per_row):
            dense[row, : len(items)] = items
        return convert_to_tensor(dense), convert_to_tensor(np.asarray([len(r) for r in per_row], np.int32))
    return convert_to_tensor(labels), None


@table.export(
    "nn.ctc_loss", dtypes=table.REAL_FLOAT, note="dense or sparse labels; log-space forward algorithm", op=_ctc_op
)
def ctc_loss(
    labels: Any,
    logits: Any,
    label_length: Any,
    logit_length: Any,
    logits_time_major: bool = True,
    unique: Any = None,
    blank_index: Any = None,
    name: str | None = None,
) -> Tensor:
    """The CTC loss (negative log likelihood) of each sequence, as `tf.nn.ctc_loss`.

    Args:
      labels: int `[batch, max_label_length]` (padded), or a SparseTensor.
      logits: unnormalized `[frames, batch, classes]` (`[batch, frames, classes]` when not time major).
      label_length: `[batch]` label lengths (None for sparse labels).
      logit_length: `[batch]` frame counts.
      logits_time_major: whether logits are time major.
      unique: ignored (an optimization hint in TF).
      blank_index: the blank class (default 0 for dense labels, required for sparse ones; negative counts
        from the end).

    Returns:
      A float `[batch]` tensor of losses.

    Raises:
      InvalidArgumentError: inconsistent shapes.
      ValueError: sparse labels without `blank_index`.
    """
    dense, sparse_lengths = _dense_labels(labels)
    if sparse_lengths is not None and blank_index is None:
        raise ValueError("Argument `blank_index` must be provided when `labels` is a `SparseTensor`.")
    x = convert_to_tensor(logits)
    if len(x._shape) != 3:
        raise errors.invalid_argument(f"logits must be 3-D, got shape {list(x._shape)}", "CTCLoss")

    if not logits_time_major:
        x = array_ops.transpose(x, [1, 0, 2])
    classes = x._shape[-1]
    blank = 0 if blank_index is None else int(blank_index)
    if blank < 0:
        blank += classes
    lengths = sparse_lengths if sparse_lengths is not None else convert_to_tensor(label_length)
    frames = convert_to_tensor(logit_length)
    batch = x._shape[1]
    for what, t in (("labels", dense), ("label_length", lengths), ("logit_length", frames)):
        if not t._shape or t._shape[0] != batch:
            raise errors.invalid_argument(f"{what} must have batch size {batch}, got shape {list(t._shape)}", "CTCLoss")
    return apply(
        _ctc_op,
        (x, math_ops.cast(dense, "int32"), math_ops.cast(lengths, "int32"), math_ops.cast(frames, "int32")),
        (("blank", blank),),
    )[0]
