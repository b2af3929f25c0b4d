"""The rest of `tf.random`: the `stateless_*` family, `fold_in`/`split`, `gamma`, `poisson`, `Algorithm`,
`create_rng_state`, the global generator, and `tf.random.experimental`.

Values follow the same rules as `random_ops.py`: deterministic for equal seeds, the
right distribution, not TF's Philox bit streams. The seeds `fold_in` and `split` make
are shape [2] tensors of the seed's dtype, as TF's, with other numbers.
"""

from __future__ import annotations

import enum
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import table
from tapeshim._src.ops.array_ops import shape_arg
from tapeshim._src.ops.random_ops import (
    Generator,
    _categorical_op,
    _normal,
    _op_key,
    _pair_key,
    _truncated_op,
    categorical,
    fold_words,
)
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, ShapeLike, TensorLike


class Algorithm(enum.Enum):
    """The RNG algorithms TF names (tapeshim draws with JAX's threefry whatever the choice)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


table.export("random.Algorithm", gradient="-", dtypes="-", note="names only: tapeshim draws with threefry")(Algorithm)


def _seed_like(key: jax.Array, count: int, dtype: str) -> jax.Array:
    bits = jax.random.bits(key, (count, 2), jnp.uint32 if dtype == "int32" else jnp.uint64)
    return bits.view(jnp.dtype(dtype))


_split_op = OpDef("StatelessRandomSplit", lambda key, num, dtype: _seed_like(key, num, dtype), False)
_fold_op = OpDef(
    "StatelessRandomFoldIn", lambda key, data, dtype: _seed_like(fold_words(key, data), 1, dtype)[0], False
)  # (an int64 `data`'s high word too: 2**32 is not 0, as in TF)


def _seed_dtype(seed: Any) -> str:
    tensor = convert_to_tensor(seed)
    return "int64" if tensor._dtype == dtypes.int64 else "int32"


@table.export("random.split", gradient="-", dtypes="int32, int64", note="new seeds, not TF's numbers", op=_split_op)
def split(seed: TensorLike, num: int = 2, alg: Any = "auto_select") -> Tensor:
    """`num` new seeds (shape `[num, 2]`, the seed's dtype) derived from `seed`, as `tf.random.split`."""
    return apply(_split_op, (_pair_key(seed),), (("dtype", _seed_dtype(seed)), ("num", int(num))))[0]


@table.export("random.fold_in", gradient="-", dtypes="int32, int64", note="a new seed, not TF's numbers", op=_fold_op)
def fold_in(seed: TensorLike, data: TensorLike, alg: Any = "auto_select") -> Tensor:
    """A new seed (shape [2], `data`'s dtype, as TF's) from `seed` and an integer `data`, as `tf.random.fold_in`."""
    data_t = convert_to_tensor(data)
    if data_t._dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"data must be an int32 or int64 scalar, got {data_t._dtype!r}")
    return apply(_fold_op, (_pair_key(seed), data_t), (("dtype", data_t._dtype.name),))[0]


@table.export("random.stateless_truncated_normal", gradient="-", dtypes=table.REAL_FLOAT, note="not TF's bit stream")
def stateless_truncated_normal(
    shape: ShapeLike | TensorLike,
    seed: TensorLike,
    mean: TensorLike = 0.0,
    stddev: TensorLike = 1.0,
    dtype: DTypeLike = dtypes.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Tensor:
    """Normal samples cut at two standard deviations, determined by `seed` (a pair of ints)."""
    return _normal(_pair_key(seed), shape, mean, stddev, dtype, _truncated_op)


@table.export("random.stateless_categorical", gradient="-", dtypes=table.REAL_FLOAT, note="not TF's bit stream")
def stateless_categorical(
    logits: TensorLike, num_samples: int, seed: TensorLike, dtype: DTypeLike = dtypes.int64, name: str | None = None
) -> Tensor:
    """`num_samples` class indices per row of `logits`, determined by `seed`."""
    values = convert_to_tensor(logits)
    categorical(values, 0, dtype)  # TF's checks of the logits and dtype
    if int(num_samples) < 0:
        return categorical(values, num_samples, dtype)
    static = (("dtype", dtypes.as_dtype(dtype).name), ("n", int(num_samples)))
    return apply(_categorical_op, (_pair_key(seed), values), static)[0]


def _params_shape(shape: tuple, op_name: str, *params: Tensor) -> None:
    try:
        broadcast = np.broadcast_shapes(*[p._shape for p in params])
    except ValueError:
        raise errors.invalid_argument("Incompatible shapes for the distribution's parameters.", op_name) from None
    if len(broadcast) > len(shape) or tuple(shape[len(shape) - len(broadcast) :]) != tuple(broadcast):
        raise errors.invalid_argument("Shape passed in must end with broadcasted shape.", op_name)


def _float_param(value: Any, dtype: dtypes.DType) -> Tensor:
    return convert_to_tensor(value, dtype=dtype) if not isinstance(value, Tensor) else value


_gamma_op = OpDef(
    "StatelessRandomGammaV3",
    lambda key, alpha, shape: jax.random.gamma(key, jnp.broadcast_to(alpha, shape), shape, alpha.dtype),
    True,
)


@table.export(
    "random.stateless_gamma",
    dtypes=table.REAL_FLOAT,
    note="not TF's bit stream; differentiable in alpha (implicit reparameterization)",
    op=_gamma_op,
)
def stateless_gamma(
    shape: ShapeLike | TensorLike,
    seed: TensorLike,
    alpha: TensorLike,
    beta: TensorLike | None = None,
    dtype: DTypeLike = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Gamma(alpha, beta) samples determined by `seed`; `shape` must end with the parameters' shape.

    Raises:
      InvalidArgumentError: `shape` does not end with the broadcast shape of `alpha` and `beta`.
    """
    d = dtypes.as_dtype(dtype)
    dims = shape_arg(shape, "StatelessRandomGammaV3", float_error="attr")
    a = _float_param(alpha, d)
    params = [a] + ([] if beta is None else [_float_param(beta, d)])
    _params_shape(dims, "StatelessRandomGammaV3", *params)
    sample = apply(_gamma_op, (_pair_key(seed), a), (("shape", dims),))[0]
    return sample if beta is None else sample / params[1]


_poisson_op = OpDef(
    "StatelessRandomPoisson",
    lambda key, lam, shape, dtype: jax.random.poisson(key, jnp.broadcast_to(lam, shape), shape).astype(dtype),
    False,
)


@table.export("random.stateless_poisson", gradient="-", dtypes=table.REAL, note="not TF's bit stream", op=_poisson_op)
def stateless_poisson(
    shape: ShapeLike | TensorLike,
    seed: TensorLike,
    lam: TensorLike,
    dtype: DTypeLike = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Poisson(lam) samples determined by `seed`; `shape` must end with `lam`'s shape."""
    dims = shape_arg(shape, "StatelessRandomPoisson", float_error="attr")
    rate = convert_to_tensor(lam, dtype_hint=dtypes.float32)
    _params_shape(dims, "StatelessRandomPoisson", rate)
    out = dtypes.as_dtype(dtype)
    return apply(_poisson_op, (_pair_key(seed), rate), (("dtype", out._np.str), ("shape", dims)))[0]


_binomial_op = OpDef(
    "StatelessRandomBinomial",
    lambda key, n, p, shape, dtype: jax.random.binomial(
        key, jnp.broadcast_to(n, shape), jnp.broadcast_to(p, shape), shape
    ).astype(dtype),
    False,
)


@table.export("random.stateless_binomial", gradient="-", dtypes=table.REAL, note="not TF's bit stream", op=_binomial_op)
def stateless_binomial(
    shape: ShapeLike | TensorLike,
    seed: TensorLike,
    counts: TensorLike,
    probs: TensorLike,
    output_dtype: DTypeLike = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Binomial(counts, probs) samples determined by `seed`."""
    dims = shape_arg(shape, "StatelessRandomBinomial", float_error="attr")
    n = convert_to_tensor(counts, dtype_hint=dtypes.float32)
    p = convert_to_tensor(probs, dtype=n._dtype) if not isinstance(probs, Tensor) else probs
    _params_shape(dims, "StatelessRandomBinomial", n, p)
    out = dtypes.as_dtype(output_dtype)
    return apply(_binomial_op, (_pair_key(seed), n, p), (("dtype", out._np.str), ("shape", dims)))[0]


def _ptn(key: jax.Array, mean: jax.Array, std: jax.Array, lo: jax.Array, hi: jax.Array, shape: tuple) -> jax.Array:
    return jax.random.truncated_normal(key, (lo - mean) / std, (hi - mean) / std, shape, mean.dtype) * std + mean


_ptn_op = OpDef("StatelessParameterizedTruncatedNormal", _ptn, False)


@table.export(
    "random.stateless_parameterized_truncated_normal", gradient="-", dtypes=table.REAL_FLOAT, note="not TF's bit stream"
)
def stateless_parameterized_truncated_normal(
    shape: ShapeLike | TensorLike,
    seed: TensorLike,
    means: Any = 0.0,
    stddevs: Any = 1.0,
    minvals: Any = -2.0,
    maxvals: Any = 2.0,
    name: str | None = None,
) -> Tensor:
    """Normal(means, stddevs) samples cut to [minvals, maxvals], determined by `seed`."""
    dims = shape_arg(shape, "StatelessParameterizedTruncatedNormal", float_error="attr")
    mean = convert_to_tensor(means, dtype_hint=dtypes.float32)
    params = [mean] + [
        convert_to_tensor(v, dtype=mean._dtype) if not isinstance(v, Tensor) else v for v in (stddevs, minvals, maxvals)
    ]
    _params_shape(dims, "StatelessParameterizedTruncatedNormal", *params)
    broadcast = [apply(_broadcast_op, (t,), (("shape", dims),))[0] for t in params]
    return apply(_ptn_op, (_pair_key(seed), *broadcast), (("shape", dims),))[0]


_broadcast_op = OpDef("BroadcastTo", lambda x, shape: jnp.broadcast_to(x, shape), True)
_shuffle_op = OpDef(
    "StatelessShuffle", lambda key, x: x if x.ndim == 0 else jax.random.permutation(key, x, axis=0), False
)


def stateless_shuffle(value: TensorLike, seed: TensorLike, alg: Any = "auto_select", name: str | None = None) -> Tensor:
    """`value` with its first axis permuted, determined by `seed`."""
    return apply(_shuffle_op, (_pair_key(seed), convert_to_tensor(value)))[0]


_stateful_gamma_op = OpDef(
    "RandomGamma",
    lambda key, alpha, shape: jax.random.gamma(
        key, jnp.broadcast_to(alpha, shape + alpha.shape), shape + alpha.shape, alpha.dtype
    ),
    True,
)


@table.export(
    "random.gamma",
    dtypes=table.REAL_FLOAT,
    note="not TF's bit stream; differentiable in alpha",
    op=_stateful_gamma_op,
)
def gamma(
    shape: ShapeLike | TensorLike,
    alpha: TensorLike,
    beta: TensorLike | None = None,
    dtype: DTypeLike = dtypes.float32,
    seed: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Gamma samples of shape `shape + broadcast(alpha, beta).shape`, as `tf.random.gamma`."""
    d = dtypes.as_dtype(dtype)
    dims = shape_arg(shape, "RandomGamma", float_error="attr")
    a = _float_param(alpha, d)
    if beta is not None:
        b = _float_param(beta, d)
        a = a + b * 0
    sample = apply(_stateful_gamma_op, (_op_key(seed), a), (("shape", dims),))[0]
    return sample if beta is None else sample / b


_stateful_poisson_op = OpDef(
    "RandomPoissonV2",
    lambda key, lam, shape, dtype: jax.random.poisson(
        key, jnp.broadcast_to(lam, shape + lam.shape), shape + lam.shape
    ).astype(dtype),
    False,
)


@table.export("random.poisson", gradient="-", dtypes=table.REAL, note="not TF's bit stream", op=_stateful_poisson_op)
def poisson(
    shape: ShapeLike | TensorLike,
    lam: TensorLike,
    dtype: DTypeLike = dtypes.float32,
    seed: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Poisson samples of shape `shape + lam.shape`, as `tf.random.poisson`."""
    dims = shape_arg(shape, "RandomPoissonV2", float_error="attr")
    rate = convert_to_tensor(lam, dtype_hint=dtypes.float32)
    out = dtypes.as_dtype(dtype)
    return apply(_stateful_poisson_op, (_op_key(seed), rate), (("dtype", out._np.str), ("shape", dims)))[0]


@table.export("random.create_rng_state", gradient="-", dtypes="-")
def create_rng_state(seed: int, alg: Any) -> Tensor:
    """The int64 state TF's generators start from for `seed`: `[seed, 0, 0]` (Philox) or `[seed, 0]` (ThreeFry)."""
    name = alg.name if isinstance(alg, Algorithm) else str(alg).upper()
    size = 2 if name in ("THREEFRY", "2") else 3
    return convert_to_tensor(np.asarray([int(seed)] + [0] * (size - 1), np.int64))


_GLOBAL: list[Generator] = []


@table.export("random.get_global_generator", gradient="-", dtypes="-")
def get_global_generator() -> Generator:
    """The process's global generator (created from a random seed on first use)."""
    if not _GLOBAL:
        _GLOBAL.append(Generator.from_non_deterministic_state())
    return _GLOBAL[0]


@table.export("random.set_global_generator", gradient="-", dtypes="-")
def set_global_generator(generator: Generator) -> None:
    """Replaces the process's global generator."""
    _GLOBAL[:] = [generator]
