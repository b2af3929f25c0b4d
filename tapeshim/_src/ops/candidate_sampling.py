"""TF's candidate samplers: `tf.random.uniform_candidate_sampler`, `log_uniform_candidate_sampler` and
`fixed_unigram_candidate_sampler` (also `tf.nn.fixed_unigram_candidate_sampler`).

The draws are tapeshim's (deterministic under `tf.random.set_seed`, not TF's bit streams); the rules are TF's
`RangeSampler`: with `unique`, classes are drawn until `num_sampled` distinct ones are found, and an expected
count is `num_sampled * P(class)` when no draw was rejected, else `1 - (1 - P(class)) ** num_tries`.
"""

from __future__ import annotations

import collections
import math
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, runtime_checks
from tapeshim._src.ops import table
from tapeshim._src.ops.common import static_error
from tapeshim._src.ops.random_ops import _op_key
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

# TF's result types (named as its op types): `(sampled_candidates, true_expected_count, sampled_expected_count)`.
UniformCandidateSampler = collections.namedtuple(
    "UniformCandidateSampler", ["sampled_candidates", "true_expected_count", "sampled_expected_count"]
)
LogUniformCandidateSampler = collections.namedtuple(
    "LogUniformCandidateSampler", ["sampled_candidates", "true_expected_count", "sampled_expected_count"]
)
FixedUnigramCandidateSampler = collections.namedtuple(
    "FixedUnigramCandidateSampler", ["sampled_candidates", "true_expected_count", "sampled_expected_count"]
)


def _probability(kind: str, classes: jax.Array, range_max: int, weights: jax.Array | None) -> jax.Array:
    """P(class) under the sampler's distribution, float32 (0 outside the range, as TF's unigram sampler)."""
    if kind == "uniform":
        return jnp.full(classes.shape, 1.0 / range_max, jnp.float32)
    if kind == "log_uniform":
        k = classes.astype(jnp.float64)
        return (jnp.log((k + 2.0) / (k + 1.0)) / math.log1p(range_max)).astype(jnp.float32)
    assert weights is not None
    inside = (classes >= 0) & (classes < weights.shape[0])
    return jnp.where(inside, weights[jnp.clip(classes, 0, weights.shape[0] - 1)], 0.0).astype(jnp.float32)


def _draw(kind: str, key: jax.Array, shape: tuple[int, ...], range_max: int, weights: jax.Array | None) -> jax.Array:
    if kind == "uniform":
        return jax.random.randint(key, shape, 0, range_max, jnp.int64)
    if kind == "log_uniform":
        u = jax.random.uniform(key, shape, jnp.float64)
        return (jnp.floor(jnp.expm1(u * math.log1p(range_max))).astype(jnp.int64)) % range_max
    assert weights is not None
    return jax.random.categorical(key, jnp.log(weights), shape=shape).astype(jnp.int64)


def _unique_draws(kind: str, key: jax.Array, num_sampled: int, range_max: int, weights: Any) -> tuple:
    """Draws until `num_sampled` distinct classes are found: the classes (in order found) and the draws made."""
    positions = jnp.arange(num_sampled)

    def body(state: tuple) -> tuple:
        found, count, tries = state
        value = _draw(kind, jax.random.fold_in(key, tries), (), range_max, weights)
        new = ~jnp.any((found == value) & (positions < count))
        found = jnp.where(new & (positions == count), value, found)
        return found, count + new.astype(jnp.int32), tries + 1

    start = (jnp.zeros((num_sampled,), jnp.int64), jnp.int32(0), jnp.int32(0))
    found, _, tries = jax.lax.while_loop(lambda state: state[1] < num_sampled, body, start)
    return found, tries


def _expected_count(p: jax.Array, batch_size: int, num_tries: jax.Array) -> jax.Array:
    """TF's `ExpectedCountHelper`: `p * batch_size` when no draw was rejected, else `1 - (1 - p) ** num_tries`."""
    tries = num_tries.astype(jnp.float32)
    return jnp.where(num_tries == batch_size, p * jnp.float32(batch_size), -jnp.expm1(tries * jnp.log1p(-p)))


def _sampler_impl(
    key: jax.Array,
    true_classes: jax.Array,
    weights: jax.Array | None = None,
    *,
    kind: str,
    num_sampled: int,
    unique: bool,
    range_max: int,
    op_name: str,
    checked: bool = False,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    if checked:
        bad = (true_classes < 0) | (true_classes >= range_max)
        _, value = runtime_checks.first_bad(bad, true_classes)
        runtime_checks.require(
            ~jnp.any(bad),
            f"`true_candidate` out of range [0, {range_max}), received " + "{value}" + f" [Op:{op_name}]",
            value=value,
        )
    if unique:
        sampled, tries = _unique_draws(kind, key, num_sampled, range_max, weights)
    else:
        sampled, tries = _draw(kind, key, (num_sampled,), range_max, weights), jnp.int32(num_sampled)
    true_count = _expected_count(_probability(kind, true_classes, range_max, weights), num_sampled, tries)
    sampled_count = _expected_count(_probability(kind, sampled, range_max, weights), num_sampled, tries)
    return sampled, true_count, sampled_count


_sampler_op = OpDef("CandidateSampler", _sampler_impl, False)


def _attr_at_least(name: str, value: Any, op_name: str) -> int:
    number = int(value)
    if number < 1:
        raise errors.invalid_argument(f"Value for attr '{name}' of {number} must be at least minimum 1", op_name)
    return number


def _sample(
    kind: str,
    op_name: str,
    true_classes: TensorLike,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: Any,
    weights: np.ndarray | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    num_true = _attr_at_least("num_true", num_true, op_name)
    num_sampled = _attr_at_least("num_sampled", num_sampled, op_name)
    range_max = _attr_at_least("range_max", range_max, op_name)
    if isinstance(true_classes, Tensor) or hasattr(true_classes, "_read_for_op"):
        classes = convert_to_tensor(true_classes)
        if classes._dtype != dtypes.int64:
            raise errors.invalid_argument(
                f"cannot compute {op_name} as input #0(zero-based) was expected to be a int64 tensor but is a "
                f"{classes._dtype.name} tensor",
                op_name,
            )
    else:
        classes = convert_to_tensor(true_classes, dtype=dtypes.int64)
    if len(classes._shape) != 2:
        raise static_error("true_classes must be a matrix", op_name)
    if classes._shape[1] != num_true:
        raise errors.invalid_argument(
            f"true_classes must have num_true columns, expected: {num_true} was: {classes._shape[1]}", op_name
        )
    possible = range_max if weights is None else int(np.count_nonzero(weights))
    if unique and num_sampled > possible:
        raise errors.invalid_argument("Sampler's range is too small.", op_name)

    def host_check(values: Any) -> None:
        values = np.asarray(values)
        bad = (values < 0) | (values >= range_max)
        if bad.any():
            raise errors.invalid_argument(
                f"`true_candidate` out of range [0, {range_max}), received {values[bad][0]}", op_name
            )

    static = (
        ("kind", kind),
        ("num_sampled", num_sampled),
        ("op_name", op_name),
        ("range_max", range_max),
        ("unique", bool(unique)),
    ) + runtime_checks.checked_static(classes, host_check)
    inputs: tuple[Tensor, ...] = (_op_key(seed), classes)
    if weights is not None:
        inputs += (convert_to_tensor(weights.astype(np.float32)),)
    sampled, true_count, sampled_count = apply(_sampler_op, inputs, static)
    return sampled, true_count, sampled_count


@table.export(
    "random.uniform_candidate_sampler", gradient="-", dtypes="int64", note="not TF's bit stream", op=_sampler_op
)
def uniform_candidate_sampler(
    true_classes: TensorLike,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> Any:
    """Samples `num_sampled` classes uniformly from `[0, range_max)`, as `tf.random.uniform_candidate_sampler`.

    Args:
      true_classes: an int64 matrix `[batch_size, num_true]` of target classes.
      num_true: the number of target classes per example.
      num_sampled: the number of classes to sample.
      unique: whether the sampled classes are distinct (drawn without replacement).
      range_max: the number of possible classes.
      seed: an op seed.
      name: ignored.

    Returns:
      A named tuple `(sampled_candidates, true_expected_count, sampled_expected_count)`: int64 `[num_sampled]`,
      float32 of `true_classes`' shape and float32 `[num_sampled]`.

    Raises:
      InvalidArgumentError: for a `true_classes` that is not an int64 matrix of `num_true` columns or holds a
        class outside `[0, range_max)`, an integer argument below 1, or `unique` with `num_sampled > range_max`.
    """
    return UniformCandidateSampler(
        *_sample("uniform", "UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed)
    )


@table.export(
    "random.log_uniform_candidate_sampler", gradient="-", dtypes="int64", note="not TF's bit stream", op=_sampler_op
)
def log_uniform_candidate_sampler(
    true_classes: TensorLike,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> Any:
    """Samples `num_sampled` classes from `[0, range_max)` with the log-uniform (Zipfian) distribution
    `P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)`, as `tf.random.log_uniform_candidate_sampler`.

    Args:
      true_classes: an int64 matrix `[batch_size, num_true]` of target classes.
      num_true: the number of target classes per example.
      num_sampled: the number of classes to sample.
      unique: whether the sampled classes are distinct (drawn without replacement).
      range_max: the number of possible classes.
      seed: an op seed.
      name: ignored.

    Returns:
      A named tuple `(sampled_candidates, true_expected_count, sampled_expected_count)`: int64 `[num_sampled]`,
      float32 of `true_classes`' shape and float32 `[num_sampled]`.

    Raises:
      InvalidArgumentError: for a `true_classes` that is not an int64 matrix of `num_true` columns or holds a
        class outside `[0, range_max)`, an integer argument below 1, or `unique` with `num_sampled > range_max`.
    """
    return LogUniformCandidateSampler(
        *_sample(
            "log_uniform", "LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed
        )
    )


def _unigram_weights(
    range_max: int,
    vocab_file: str,
    distortion: float,
    num_reserved_ids: int,
    num_shards: int,
    shard: int,
    unigrams: Sequence[float],
) -> np.ndarray:
    """TF's `FixedUnigramSampler` weights: reserved ids weigh 0, then each unigram (of this shard) to the power
    `distortion`; ids are counted from the number of weights so far, as TF's kernel counts them."""
    op_name = "FixedUnigramCandidateSampler"
    if vocab_file:
        with open(vocab_file, encoding="utf-8") as file:  # (TF reads `word,count` lines: the last field)
            counts = [float(line.rstrip("\n").split(",")[-1]) for line in file if line.strip()]
    elif len(unigrams):
        counts = [float(w) for w in unigrams]
    else:
        raise errors.invalid_argument("Must provide either vocab_file or unigrams.", op_name)
    weights = [0.0 for word_id in range(int(num_reserved_ids)) if word_id % num_shards == shard]
    word_id = len(weights)
    for count in counts:
        if word_id % num_shards == shard:
            weights.append(count ** float(distortion))
        word_id += 1
    if len(weights) != range_max:
        raise errors.invalid_argument(f"range is {range_max} must be equal to weights size  {len(weights)}", op_name)
    result = np.asarray(weights, np.float64)
    return result / result.sum()


@table.export(
    "random.fixed_unigram_candidate_sampler",
    "nn.fixed_unigram_candidate_sampler",
    gradient="-",
    dtypes="int64",
    note="not TF's bit stream; unique draws from a distribution with fewer nonzero weights than num_sampled raise "
    "InvalidArgumentError (TF's kernel aborts)",
    op=_sampler_op,
)
def fixed_unigram_candidate_sampler(
    true_classes: TensorLike,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    vocab_file: str = "",
    distortion: float = 1.0,
    num_reserved_ids: int = 0,
    num_shards: int = 1,
    shard: int = 0,
    unigrams: Sequence[float] = (),
    seed: int | None = None,
    name: str | None = None,
) -> Any:
    """Samples `num_sampled` classes with probabilities proportional to `unigrams ** distortion` (or the counts
    of `vocab_file`, the last field of each line), as `tf.random.fixed_unigram_candidate_sampler`.

    Args:
      true_classes: an int64 matrix `[batch_size, num_true]` of target classes.
      num_true: the number of target classes per example.
      num_sampled: the number of classes to sample.
      unique: whether the sampled classes are distinct (drawn without replacement).
      range_max: the number of possible classes: the number of weights (reserved ids included) of this shard.
      vocab_file: a CSV file of `word,count` lines; exactly one of it and `unigrams` is given.
      distortion: the power each weight is raised to.
      num_reserved_ids: ids before the unigrams, of weight 0.
      num_shards: the number of shards the ids are split into (id modulo `num_shards`).
      shard: this sampler's shard.
      unigrams: the weights (counts or probabilities), one per id.
      seed: an op seed.
      name: ignored.

    Returns:
      A named tuple `(sampled_candidates, true_expected_count, sampled_expected_count)`: int64 `[num_sampled]`,
      float32 of `true_classes`' shape and float32 `[num_sampled]`.

    Raises:
      InvalidArgumentError: for bad `true_classes` or integer arguments (as the other samplers), neither or a
        wrong number of weights for `range_max`, or `unique` with more classes asked than can be drawn.
    """
    weights = _unigram_weights(
        int(range_max), vocab_file, distortion, num_reserved_ids, int(num_shards), int(shard), unigrams
    )
    return FixedUnigramCandidateSampler(
        *_sample(
            "unigram",
            "FixedUnigramCandidateSampler",
            true_classes,
            num_true,
            num_sampled,
            unique,
            range_max,
            seed,
            weights,
        )
    )
