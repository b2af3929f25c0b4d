"""`tf.nn.fractional_max_pool` and `tf.nn.fractional_avg_pool`: pooling over windows of random sizes.

The pooling sequences follow TF's rule (`tensorflow/core/kernels/fractional_pool_common.cc`): for an input
length `n` pooled to `m = floor(n / ratio)` cells, `m + 1` boundaries from 0 to `n` whose gaps are
`k = n // m` or `k + 1`; "random" shuffles the `n % m` gaps of `k + 1`, "pseudo-random" places the
boundaries at `ceil(alpha * (i + u)) - 1` for one uniform `u`. They are drawn with `jax.random`, not TF's
Philox stream; the same non-zero `seed` (with the same global seed) gives the same sequences, as in TF, and
seed 0 new ones on every call.

Given the sequences, the values and gradients are TF's kernels': a window is `[seq[i], seq[i + 1])` (or
`[seq[i], seq[i + 1]]` when `overlapping`, clipped to the input); the maximum's gradient reaches the first
largest element in row-major order (`FractionalMaxPoolGrad`), the average sums its window in row-major
order and its gradient is accumulated in float64 (`FractionalAvgPoolGrad`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import config, dtypes, errors
from tapeshim._src.ops import random_ops, table
from tapeshim._src.ops.common import attr_error, static_error, tf_type_name
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_ALLOWED = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)
_DEFAULT_GRAPH_SEED = 87654321  # TF's `random_seed.DEFAULT_GRAPH_SEED`, the global seed when none is set
POOL_DTYPES = "float32, float64, int32, int64"


# -- pooling sequences ----------------------------------------------------------------------------------------
def _sequence(key: jax.Array, size: int, cells: int, pseudo_random: bool) -> jax.Array:
    """`cells + 1` int64 boundaries from 0 to `size`, each gap `size // cells` or one more (TF's
    `GeneratePoolingSequence`)."""
    k = size // cells
    if pseudo_random:
        alpha = size / cells
        most = min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (cells - 1))
        u = jax.random.uniform(key, (), jnp.float64) * most
        inner = jnp.ceil(alpha * (jnp.arange(1, cells, dtype=jnp.float64) + u)).astype(jnp.int64) - 1
        return jnp.concatenate([jnp.zeros([1], jnp.int64), inner, jnp.full([1], size, jnp.int64)])
    gaps = np.full([cells], k, np.int64)
    gaps[: size % cells] += 1
    shuffled = jax.random.permutation(key, jnp.asarray(gaps))
    return jnp.concatenate([jnp.zeros([1], jnp.int64), jnp.cumsum(shuffled)])


def _windows(sequence: jax.Array, size: int, span: int, overlapping: bool) -> tuple[jax.Array, jax.Array]:
    """Each cell's input positions (`[cells, span]`, clipped) and which of them are in its window."""
    ends = jnp.minimum(sequence[1:] if overlapping else sequence[1:] - 1, size - 1)
    positions = sequence[:-1, None] + jnp.arange(span, dtype=jnp.int64)[None, :]
    return jnp.minimum(positions, size - 1), positions <= ends[:, None]


def _flat_windows(
    shape: tuple, rows: jax.Array, cols: jax.Array, span: tuple, overlapping: bool
) -> tuple[jax.Array, jax.Array]:
    """The flat input index of each element of each window (`[n, out_h, out_w, span_h * span_w, c]`, row-major
    within a window) and whether it is in the window (`[out_h, out_w, span_h * span_w]`)."""
    n, h, w, c = shape
    row_at, row_in = _windows(rows, h, span[0], overlapping)
    col_at, col_in = _windows(cols, w, span[1], overlapping)
    out_h, out_w = row_at.shape[0], col_at.shape[0]
    cells = span[0] * span[1]
    r = jnp.broadcast_to(row_at[:, None, :, None], (out_h, out_w, span[0], span[1])).reshape(out_h, out_w, cells)
    q = jnp.broadcast_to(col_at[None, :, None, :], (out_h, out_w, span[0], span[1])).reshape(out_h, out_w, cells)
    inside = (row_in[:, None, :, None] & col_in[None, :, None, :]).reshape(out_h, out_w, cells)
    batch = jnp.arange(n, dtype=jnp.int64)[:, None, None, None, None]
    depth = jnp.arange(c, dtype=jnp.int64)[None, None, None, None, :]
    flat = ((batch * h + r[None, :, :, :, None]) * w + q[None, :, :, :, None]) * c + depth
    return flat, inside


# -- max ------------------------------------------------------------------------------------------------------
def _lowest(dtype: Any) -> Any:
    return jnp.finfo(dtype).min if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


@jax.custom_vjp
def _take_max(x: jax.Array, picked: jax.Array) -> jax.Array:
    """`x.flat[picked]`, raised to the dtype's lowest value (TF's kernel starts each maximum there)."""
    return jnp.maximum(x.reshape(-1)[picked], jnp.asarray(_lowest(x.dtype), x.dtype))


def _take_max_forward(x: jax.Array, picked: jax.Array) -> tuple[jax.Array, tuple]:
    return _take_max(x, picked), (picked, jnp.zeros(x.shape + (0,), x.dtype))


def _take_max_backward(residual: tuple, g: jax.Array) -> tuple:
    picked, like = residual  # (`like`: an empty array of x's shape and dtype)
    shape, typed = like.shape[:-1], like
    total = int(np.prod(shape))
    # (updates in the order of the outputs, as TF's FractionalMaxPoolGrad adds them)
    grad = jnp.zeros([total], typed.dtype).at[picked.reshape(-1)].add(g.reshape(-1).astype(typed.dtype))
    return grad.reshape(shape), None


_take_max.defvjp(_take_max_forward, _take_max_backward)


def _max_pool(flat: jax.Array, inside: jax.Array, x: jax.Array) -> jax.Array:
    values = x.reshape(-1)[flat]
    fill = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    values = jnp.where(inside[None, :, :, :, None], values, jnp.asarray(fill, x.dtype))
    first = jnp.argmax(values, axis=3)  # the first largest, as TF's `output < input` scan
    picked = jnp.take_along_axis(flat, first[:, :, :, None, :], axis=3)[:, :, :, 0, :]
    return _take_max(x, picked)


# -- average --------------------------------------------------------------------------------------------------
@jax.custom_vjp
def _average(x: jax.Array, flat: jax.Array, inside: jax.Array) -> jax.Array:
    """The mean of each window: its elements summed in row-major order, then divided by their count."""
    values = x.reshape(-1)[flat]
    zero = jnp.zeros([], x.dtype)
    total = jnp.zeros(values.shape[:3] + values.shape[4:], x.dtype)
    for k in range(values.shape[3]):
        total = total + jnp.where(inside[None, :, :, k, None], values[:, :, :, k], zero)
    count = _full(jnp.sum(inside, axis=2).astype(x.dtype)[None, :, :, None], total.shape)
    if jnp.issubdtype(x.dtype, jnp.integer):
        return lax.div(total, count)
    return total / count


def _full(divisor: jax.Array, shape: tuple) -> jax.Array:
    """`divisor` broadcast to `shape`, behind a barrier: XLA turns a division by a broadcast into a
    multiplication by its reciprocal, which rounds differently from TF's division."""
    return lax.optimization_barrier(jnp.broadcast_to(divisor, shape))


def _average_forward(x: jax.Array, flat: jax.Array, inside: jax.Array) -> tuple[jax.Array, tuple]:
    return _average(x, flat, inside), (flat, inside, jnp.zeros(x.shape + (0,), x.dtype))


def _average_backward(residual: tuple, g: jax.Array) -> tuple:
    flat, inside, like = residual  # (`like`: an empty array of x's shape and dtype)
    shape, typed = like.shape[:-1], like
    total = int(np.prod(shape))
    count = _full(jnp.sum(inside, axis=2).astype(jnp.float64)[None, :, :, None], g.shape)
    share = g.astype(jnp.float64) / count  # (TF divides and adds in float64, then casts)
    updates = jnp.broadcast_to(share[:, :, :, None, :], flat.shape)
    target = jnp.where(inside[None, :, :, :, None], flat, total)  # outside the window: dropped
    grad = jnp.zeros([total], jnp.float64).at[target.reshape(-1)].add(updates.reshape(-1), mode="drop")
    return grad.astype(typed.dtype).reshape(shape), None, None


_average.defvjp(_average_forward, _average_backward)


# -- the kernels ----------------------------------------------------------------------------------------------
def _fractional_pool(
    key: jax.Array, x: jax.Array, average: bool, cells: tuple, pseudo_random: bool, overlapping: bool
) -> tuple[jax.Array, jax.Array, jax.Array]:
    _, h, w, _ = x.shape
    row_key, col_key = jax.random.split(key)
    rows = _sequence(row_key, h, cells[0], pseudo_random)
    cols = _sequence(col_key, w, cells[1], pseudo_random)
    margin = 1 + int(overlapping) + int(pseudo_random)  # (pseudo-random gaps are within k + 1; one spare)
    span = (h // cells[0] + margin, w // cells[1] + margin)
    flat, inside = _flat_windows(x.shape, rows, cols, span, overlapping)
    out = _average(x, flat, inside) if average else _max_pool(flat, inside, x)
    return out, rows, cols


_max_op = OpDef(
    "FractionalMaxPool",
    lambda key, x, **static: _fractional_pool(key, x, False, **static),
)
_avg_op = OpDef(
    "FractionalAvgPool",
    lambda key, x, **static: _fractional_pool(key, x, True, **static),
)


def _key(seed: Any) -> Tensor:
    """Seed 0 (or None): a new key every call, as TF's non-deterministic kernel. Otherwise the one key of
    `(global seed, seed)`: TF's deterministic kernel draws its sequences from those two seeds."""
    if seed is None or int(seed) == 0:
        return random_ops._op_key(None)
    base = random_ops._state.global_seed
    with jax.ensure_compile_time_eval():
        key = jax.random.fold_in(jax.random.PRNGKey(_DEFAULT_GRAPH_SEED if base is None else base), int(seed))
    return concrete(key)


def _pool(value: TensorLike, ratios: list[float], pseudo_random: bool, overlapping: bool, seed: Any, op: OpDef) -> Any:
    op_name = op.name
    x = convert_to_tensor(value)
    if x.dtype not in _ALLOWED:
        raise attr_error(
            f"Value for attr 'T' of {tf_type_name(x.dtype)} is not in the list of allowed values: float, double, "
            f"int32, int64\n\t; NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    if len(ratios) != 4:
        raise errors.invalid_argument("pooling_ratio field must specify 4 dimensions", op_name)
    for ratio in ratios:
        if not ratio >= 1:
            raise errors.invalid_argument(f"pooling_ratio cannot be smaller than 1, got: {ratio:g}", op_name)
    if ratios[0] != 1 or ratios[3] != 1:
        what = "average" if op_name == "FractionalAvgPool" else "max"
        raise errors.UnimplementedError(
            None, None, f"Fractional {what} pooling is not yet supported on the batch nor channel dimension."
        )
    if len(x._shape) != 4:
        raise static_error("tensor_in must be 4-dimensional", op_name)
    sizes = [int(d) for d in x._shape]
    cells = []
    for i, (size, ratio) in enumerate(zip(sizes, ratios)):
        out = int(np.floor(np.float32(size) / np.float32(ratio)))  # (TF divides in float32)
        if out <= 0:
            raise errors.invalid_argument(
                f"Pooling ratio is higher than input dimension size for dimension {i}. Input dim size: {size} "
                f"pooling ratio: {ratio:g}",
                op_name,
            )
        cells.append(out)
    static = (
        ("cells", (cells[1], cells[2])),
        ("overlapping", bool(overlapping)),
        ("pseudo_random", bool(pseudo_random)),
    )
    output, rows, cols = apply(op, (_key(seed), x), static)
    return output, rows, cols


def _max_ratios(pooling_ratio: Any) -> list[float]:
    """TF 2's `fractional_max_pool` checks of `pooling_ratio`, then `_get_sequence(pooling_ratio, 2, 3)`."""
    if isinstance(pooling_ratio, (list, tuple)):
        if pooling_ratio[0] != 1.0 or pooling_ratio[-1] != 1.0:
            raise ValueError(
                "`pooling_ratio` should have first and last elements with value 1.0. "
                f"Received: pooling_ratio={pooling_ratio}"
            )
        for element in pooling_ratio:
            if element < 1.0:
                raise ValueError(f"`pooling_ratio` elements should be >= 1.0. Received: pooling_ratio={pooling_ratio}")
        values = [float(v) for v in pooling_ratio]
    elif isinstance(pooling_ratio, (int, float)):
        if pooling_ratio < 1.0:
            raise ValueError(f"`pooling_ratio` should be >= 1.0. Received: pooling_ratio={pooling_ratio}")
        values = [float(pooling_ratio)]
    else:
        raise ValueError(f"`pooling_ratio` should be an int or a list of ints. Received: pooling_ratio={pooling_ratio}")
    if len(values) == 1:
        return [1.0, values[0], values[0], 1.0]
    if len(values) == 2:
        return [1.0, *values, 1.0]
    if len(values) == 4:
        return values
    raise ValueError(
        f"pooling_ratio should be of length 1, 2 or 4. Received: pooling_ratio={pooling_ratio} of length {len(values)}"
    )


def _as_float32(values: list[float]) -> list[float]:
    return [float(np.float32(v)) for v in values]  # (an attribute of floats)


@table.export(
    "nn.fractional_max_pool",
    gradient="custom",
    dtypes=POOL_DTYPES,
    note="pooling sequences follow TF's rule but are drawn with jax.random; values and gradients are TF's "
    "kernels' for the sequences",
    op=_max_op,
)
def fractional_max_pool(
    value: TensorLike,
    pooling_ratio: Any,
    pseudo_random: bool = False,
    overlapping: bool = False,
    seed: int = 0,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Max pooling over windows of random sizes that shrink rows and columns by fractional ratios, as
    `tf.nn.fractional_max_pool`.

    Args:
      value: a 4-D `[batch, height, width, channels]` tensor (float32, float64, int32 or int64).
      pooling_ratio: the ratio of each dimension (>= 1): a number (rows and columns), 2 values (rows,
        columns) or 4 values whose first and last are 1.
      pseudo_random: whether the boundaries are pseudo-random (evenly spread from one random offset) rather
        than random (shuffled gaps).
      overlapping: whether each window also takes the next window's first row and column.
      seed: 0 for new sequences on every call, else a seed: the same seed gives the same sequences.
      name: ignored.

    Returns:
      `(output, row_pooling_sequence, col_pooling_sequence)`: the pooled tensor and the int64 boundaries of
      its rows and columns in the input.

    Raises:
      ValueError: for a bad `pooling_ratio`, or seed 0 while op determinism is enabled.
      InvalidArgumentError: for a rank other than 4, a ratio larger than a dimension, or another dtype.
    """
    ratios = _max_ratios(pooling_ratio)
    if (seed is None or seed == 0) and config.op_determinism_enabled():
        raise ValueError(
            "tf.nn.fractional_max_pool requires a non-zero seed to be passed in when determinism is enabled, "
            f'but got seed={seed}. Please pass in a non-zero seed, e.g. by passing "seed=1".'
        )
    output, rows, cols = _pool(value, _as_float32(ratios), pseudo_random, overlapping, seed, _max_op)
    return output, rows, cols


@table.export(
    "nn.fractional_avg_pool",
    gradient="custom",
    dtypes=POOL_DTYPES,
    note="pooling sequences follow TF's rule but are drawn with jax.random; values and gradients are TF's "
    "kernels' for the sequences",
    op=_avg_op,
)
def fractional_avg_pool(
    value: TensorLike,
    pooling_ratio: Any,
    pseudo_random: bool = False,
    overlapping: bool = False,
    seed: int = 0,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Average pooling over windows of random sizes that shrink rows and columns by fractional ratios, as
    `tf.nn.fractional_avg_pool` (integers average with C's truncating division).

    Args:
      value: a 4-D `[batch, height, width, channels]` tensor (float32, float64, int32 or int64).
      pooling_ratio: a list of 4 ratios (>= 1), the first and last 1.
      pseudo_random: whether the boundaries are pseudo-random rather than random.
      overlapping: whether each window also takes the next window's first row and column.
      seed: 0 for new sequences on every call, else a seed: the same seed gives the same sequences.
      name: ignored.

    Returns:
      `(output, row_pooling_sequence, col_pooling_sequence)`.

    Raises:
      TypeError: for a `pooling_ratio` that is not a list.
      InvalidArgumentError: for a ratio list shorter than 4 or not of 4, a ratio under 1 or larger than a
        dimension, a rank other than 4, or another dtype.
      UnimplementedError: for a ratio other than 1 for the batch or the channels.
    """
    if not isinstance(pooling_ratio, (list, tuple)):
        raise TypeError(f"Expected list for 'pooling_ratio' argument to 'fractional_avg_pool' Op, not {pooling_ratio}.")
    ratios = []
    for ratio in pooling_ratio:
        try:
            ratios.append(float(ratio))
        except (TypeError, ValueError):
            raise TypeError(f"Expected float for argument 'pooling_ratio' not {ratio!r}.") from None
    if len(ratios) < 4:
        raise errors.invalid_argument(
            f"Length for attr 'pooling_ratio' of {len(ratios)} must be at least minimum 4\n\t; NodeDef: "
            "{{node FractionalAvgPool}}",
            "FractionalAvgPool",
        )
    output, rows, cols = _pool(value, _as_float32(ratios), pseudo_random, overlapping, seed, _avg_op)
    return output, rows, cols
