"""`tf.random`: deterministic under `set_seed`, statistically right, not TF's bit streams.

TF's random streams cannot be reproduced bit for bit on JAX. tapeshim follows
TF's seeding *rules*: with a global seed (`tf.random.set_seed`), every op
without its own seed gets the next key of a sequence derived from it, and an op
seed picks its own sequence; the same program then draws the same numbers.
Without a global seed, draws differ from run to run, as in TF.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

import jax
import numpy as np

from tapeshim._src import dtypes, errors, random_chunks, runtime_checks, static_value, threefry
from tapeshim._src.ops import table
from tapeshim._src.ops.array_ops import _static_ints, shape_arg
from tapeshim._src.ops.common import attr_error, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.saved_position import SavedPosition
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, ShapeLike, TensorLike


class _SeedState(threading.local):
    def __init__(self) -> None:
        super().__init__()
        self.global_seed: int | None = None
        self.counters: dict[Any, int] = {}
        self.entropy = int.from_bytes(os.urandom(4), "little")


_state = _SeedState()


@table.export("random.set_seed", gradient="-", dtypes="-")
def set_seed(seed: int) -> None:
    """Sets the global seed: later random ops draw a repeatable sequence."""
    _state.global_seed = None if seed is None else int(seed)
    _state.counters = {}


def _next_key(seed: Any) -> jax.Array:
    """The key for one random op, following TF's global/op seed rules."""
    base = _state.global_seed if _state.global_seed is not None else _state.entropy
    op_seed = None if seed is None else int(seed)
    stream = ("global",) if op_seed is None else ("op", op_seed)
    count = _state.counters.get(stream, 0)
    _state.counters[stream] = count + 1
    # (the global sequence folds in 0; an op seed s >= 0 folds in s + 1, a negative one itself: int64's seeds
    # are distinct streams but for 2**63 - 1 and -2**63; TF itself reduces op seeds modulo 2**31 - 1)
    message = 0 if op_seed is None else op_seed + 1 if op_seed >= 0 else op_seed
    return _folded_key(base, message, count)


def _words(message: int) -> tuple[int, ...]:
    """The `uint32` words `message` (a Python int: TF's seeds are int64s) is folded in as: its low word, and its
    high word where that is not 0 (so the seeds in uint32's range keep their single fold). `fold_words` folds a
    traced message the same way."""
    bits = message % 2**64
    return (bits & 0xFFFFFFFF,) if bits >> 32 == 0 else (bits & 0xFFFFFFFF, bits >> 32)


def _int64(value: int) -> int:
    """An integer's low 64 bits as an int64 (two's complement), as TF reads a seed's first word."""
    return (int(value) + 2**63) % 2**64 - 2**63


def _folded_key(base: int, *messages: int) -> jax.Array:
    """`jax.random.PRNGKey(base)` with `messages` folded in, in order (`base` wrapped to an int64, each message
    as its words, `_words`): computed on the host from Python integers (`threefry`: JAX's own functions compile
    on their first call) where JAX's keys are threefry's and it reads a seed as an int64 (its 64-bit mode,
    which tapeshim turns on); else by JAX."""
    base = _int64(base)
    folds = [word for message in messages for word in _words(int(message))]
    flags = jax.config.values
    with jax.ensure_compile_time_eval():  # (a concrete key, also while JAX traces the caller)
        if flags["jax_default_prng_impl"] == "threefry2x32" and flags["jax_enable_x64"]:
            words = threefry.seed(base)
            for word in folds:
                words = threefry.fold_in(words, word)
            return jax.device_put(np.array(words, np.uint32))  # (a transfer: nothing compiles)
        key = jax.random.PRNGKey(base)
        for word in folds:
            key = jax.random.fold_in(key, word)
        return key


def generator_key(draw: Callable[[], jax.Array]) -> Tensor:
    """The key for one draw of a `tf.random.Generator` (`draw()` advances it): fresh now, a per-call input of
    a compiled function, or the key a custom gradient's call drew (`generator_key_source`)."""
    source = _thread_state.generator_key_source
    if source is not None:
        return source(draw)
    trace = _thread_state.trace
    if trace is not None:  # inside a function: every call advances the generator
        return trace.per_call_key(draw)
    return concrete(draw())


def _key_from_pair(seed: Any) -> jax.Array:
    pair = _static_ints(seed, "seed")
    if len(pair) != 2:
        raise static_error(f"seed must have shape [2], not {[len(pair)]}", "StatelessRandomGetKeyCounter")
    return _folded_key(pair[0], pair[1])


def _float_dtype(dtype: Any, mean: Any = 0.0) -> dtypes.DType:
    result = dtypes.as_dtype(dtype)
    if not result.is_floating:  # TF fails converting the (float) mean to the requested dtype
        raise TypeError(f"Cannot convert {mean!r} to EagerTensor of dtype {result.name}")
    return result


def _op_key(seed: Any) -> Tensor:
    """The key tensor for one random op: fresh now, or a per-call input of a compiled function."""
    trace = _thread_state.trace
    if trace is not None:
        return trace.random_key(seed)
    source = _thread_state.random_key_source  # a Keras call's JAX function: keys are inputs
    if source is not None:
        return source(seed)
    return concrete(_next_key(seed))


def fold_words(key: jax.Array, message: jax.Array) -> jax.Array:
    """`key` (raw threefry data) with an integer `message` (traced or concrete, any integer dtype) folded in as
    `_words` gives its words: the low one, then the high one where it is not 0."""
    bits = message.astype(jax.numpy.int64).astype(jax.numpy.uint64)  # (its two's complement bits)
    once = jax.random.fold_in(key, bits.astype(jax.numpy.uint32))
    high = (bits >> 32).astype(jax.numpy.uint32)  # (a logical shift: the host interpreter has its rule)
    return jax.numpy.where(high != 0, jax.random.fold_in(once, high), once)


def _seed_key(seed: jax.Array) -> jax.Array:
    """A stateless seed's key: `PRNGKey(seed[0])` with `seed[1]`'s words folded in (`fold_words`)."""
    return fold_words(jax.random.PRNGKey(seed[0].astype(jax.numpy.int64)), seed[1])


_seed_key_op = OpDef("StatelessRandomGetKeyCounter", _seed_key, False)


def _pair_key(seed: Any) -> Tensor:
    """The key of a stateless op's `seed` (a shape [2] int32/int64 tensor, also a traced one)."""
    if isinstance(seed, (list, tuple)) and all(isinstance(v, int) and -(2**63) <= v < 2**63 for v in seed):
        return concrete(_key_from_pair(seed))  # (else converted as TF does: past int64 its ValueError)
    tensor = convert_to_tensor(seed)
    if tensor._dtype not in (dtypes.int32, dtypes.int64):
        raise attr_error(
            f"Value for attr 'Tseed' of {tensor._dtype.name} is not in the list of allowed values: "
            "int32, int64\n\t; NodeDef: {{node StatelessRandomGetKeyCounter}}",
            "StatelessRandomGetKeyCounter",
        )
    if tuple(tensor._shape) != (2,):
        raise static_error(f"seed must have shape [2], not {list(tensor._shape)}", "StatelessRandomGetKeyCounter")
    return apply(_seed_key_op, (tensor,))[0]


_normal_op = OpDef("RandomStandardNormal", lambda key, shape, dtype: jax.random.normal(key, shape, dtype), False)
_truncated_op = OpDef(
    "TruncatedNormal", lambda key, shape, dtype: jax.random.truncated_normal(key, -2.0, 2.0, shape, dtype), False
)
_uniform_op = OpDef("RandomUniform", lambda key, shape, dtype: jax.random.uniform(key, shape, dtype), False)
_randint_op = OpDef(
    "RandomUniformInt", lambda key, shape, dtype, low, high: jax.random.randint(key, shape, low, high, dtype), False
)


def _randint_bounded_impl(key: jax.Array, low: jax.Array, high: jax.Array, shape: tuple, dtype: str) -> jax.Array:
    runtime_checks.require(low < high, "Need minval < maxval, got {low} >= {high}", low=low, high=high)
    return jax.random.randint(key, shape, low, high, dtype)


_randint_bounded_op = OpDef("RandomUniformInt", _randint_bounded_impl, False)
"""`RandomUniformInt` whose bounds only the call knows (a function's arguments: TF's DeepDream rolls its
image by `tf.random.uniform([2], -tile_size, tile_size, tf.int32)`); TF's check of them runs with it."""
_categorical_op = OpDef(
    "Multinomial",
    lambda key, logits, n, dtype: jax.random.categorical(key, logits, axis=-1, shape=(n, logits.shape[0])).T.astype(
        dtype
    ),
    False,
)
_shuffle_op = OpDef(
    "RandomShuffle", lambda key, x: x if x.ndim == 0 else jax.random.permutation(key, x, axis=0), False
)  # TF returns a scalar unchanged


_CHUNKED = {  # TF's op -> `random_chunks.draw`'s distribution and bounds
    "RandomStandardNormal": ("normal", 0.0, 1.0),
    "TruncatedNormal": ("truncated_normal", -2.0, 2.0),
    "RandomUniform": ("uniform", 0.0, 1.0),
}


def _draw(op: OpDef, key: Tensor, dims: tuple, dtype: dtypes.DType) -> Tensor:
    """The op's draw (`jax.random`'s values for `key`): for a concrete key and shape from the chunk kernels
    compiled once per distribution (`random_chunks`), else from the op's kernel for this shape."""
    state = _thread_state
    eager = state.trace is None and state.random_key_source is None and state.generator_key_source is None
    value = key._value if eager and key._node is None else None  # (a trace's keys are per-call inputs)
    if value is not None and not isinstance(value, jax.core.Tracer) and all(type(d) is int for d in dims):
        kind, low, high = _CHUNKED[op.name]
        drawn = random_chunks.draw(kind, value, dims, dtype.as_numpy_dtype, low, high)
        if drawn is not None:
            return concrete(jax.device_put(drawn))
    return apply(op, (key,), (("dtype", dtype.name), ("shape", dims)))[0]


def _normal(key: Tensor, shape: Any, mean: Any, stddev: Any, dtype: Any, op: OpDef = _normal_op) -> Tensor:
    d = _float_dtype(dtype, mean)
    dims = shape_arg(shape, op.name, float_error="attr")
    z = _draw(op, key, dims, d)
    return z * convert_to_tensor(stddev, dtype=d) + convert_to_tensor(mean, dtype=d)


_bits_op = OpDef(
    "StatelessRandomUniformFullInt",
    lambda key, shape, dtype: jax.random.bits(
        key, shape, jax.numpy.dtype(dtype.replace("int", "uint") if dtype.startswith("int") else dtype)
    ).view(jax.numpy.dtype(dtype)),
    False,
)


def _call_bounds(minval: Any, maxval: Any, dtype: dtypes.DType) -> tuple[Tensor, Tensor] | None:
    """Integer bounds as scalar tensors where, inside `tapeshim.function`, only the call knows one of them;
    None where both are known now."""
    if _thread_state.trace is None:
        return None
    bounds = [convert_to_tensor(v, dtype=dtype) if isinstance(v, Tensor) else v for v in (minval, maxval)]
    if not any(isinstance(v, Tensor) and static_value.known_value(v) is None for v in bounds):
        return None
    tensors = [convert_to_tensor(v, dtype=dtype) for v in bounds]
    for tensor, what in zip(tensors, ("minval", "maxval")):
        if tensor._shape:
            raise static_error(f"{what} must be 0-D, got shape {list(tensor._shape)}", "RandomUniformInt")
    return tensors[0], tensors[1]


def _uniform(key: Tensor, shape: Any, minval: Any, maxval: Any, dtype: Any, full_range: bool = False) -> Tensor:
    d = dtypes.as_dtype(dtype)
    if d.is_integer and full_range and minval is None and maxval is None:
        dims = shape_arg(shape, "StatelessRandomUniformFullInt", float_error="attr")
        return apply(_bits_op, (key,), (("dtype", d.name), ("shape", dims)))[0]
    if d.is_integer:
        dims = shape_arg(shape, "RandomUniformInt", float_error="attr")
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {d!r}")
        bounds = _call_bounds(minval, maxval, d)
        if bounds is not None:
            return apply(_randint_bounded_op, (key, *bounds), (("dtype", d.name), ("shape", dims)))[0]
        if int(minval) >= int(maxval):
            raise errors.invalid_argument(
                f"Need minval < maxval, got {int(minval)} >= {int(maxval)}", "RandomUniformInt"
            )
        static = (("dtype", d.name), ("high", int(maxval)), ("low", int(minval)), ("shape", dims))
        return apply(_randint_op, (key,), static)[0]
    d = _float_dtype(d, minval)
    dims = shape_arg(shape, "RandomUniform", float_error="attr")
    u = _draw(_uniform_op, key, dims, d)
    low = convert_to_tensor(minval, dtype=d)
    high = convert_to_tensor(1.0 if maxval is None else maxval, dtype=d)
    return u * (high - low) + low


@table.export("random.normal", gradient="-", dtypes=table.REAL_FLOAT, note="not TF's bit stream")
def normal(
    shape: ShapeLike | TensorLike,
    mean: TensorLike = 0.0,
    stddev: TensorLike = 1.0,
    dtype: DTypeLike = dtypes.float32,
    seed: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples from a normal distribution."""
    return _normal(_op_key(seed), shape, mean, stddev, dtype)


@table.export("random.uniform", gradient="-", dtypes=table.REAL, note="not TF's bit stream")
def uniform(
    shape: ShapeLike | TensorLike,
    minval: TensorLike = 0,
    maxval: TensorLike | None = None,
    dtype: DTypeLike = dtypes.float32,
    seed: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples uniformly from [minval, maxval) (maxval required for integer dtypes)."""
    return _uniform(_op_key(seed), shape, minval, maxval, dtype)


@table.export("random.truncated_normal", gradient="-", dtypes=table.REAL_FLOAT, note="not TF's bit stream")
def truncated_normal(
    shape: ShapeLike | TensorLike,
    mean: TensorLike = 0.0,
    stddev: TensorLike = 1.0,
    dtype: DTypeLike = dtypes.float32,
    seed: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Samples from a normal distribution cut at two standard deviations."""
    return _normal(_op_key(seed), shape, mean, stddev, dtype, _truncated_op)


@table.export(
    "random.categorical", gradient="-", dtypes=table.REAL_FLOAT, note="not TF's bit stream", op=_categorical_op
)
def categorical(
    logits: TensorLike,
    num_samples: int,
    dtype: DTypeLike | None = None,
    seed: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """Draws `num_samples` class indices per row of unnormalized log-probabilities."""
    values = convert_to_tensor(logits)
    if len(values._shape) != 2:
        raise static_error(f"logits should be a matrix, got shape {list(values._shape)}", "Multinomial")
    if not values.dtype.is_floating:  # TF registers Multinomial for floating logits only
        raise errors.NotFoundError(
            None,
            None,
            f"Could not find device for node: {{{{node Multinomial}}}} = Multinomial[T=DT_"
            f"{values.dtype.name.upper()}] All kernels registered for op Multinomial support floating logits only",
        )
    if int(num_samples) < 0:
        raise static_error(f"num_samples should be non-negative, got {int(num_samples)}", "Multinomial")
    static = (("dtype", dtypes.as_dtype(dtype or dtypes.int64).name), ("n", int(num_samples)))
    return apply(_categorical_op, (_op_key(seed), values), static)[0]


@table.export("random.shuffle", gradient="-", dtypes=table.ANY, note="not TF's bit stream", op=_shuffle_op)
def shuffle(value: TensorLike, seed: TensorLike | None = None, name: str | None = None) -> Tensor:
    """`value` with its first axis randomly permuted."""
    return apply(_shuffle_op, (_op_key(seed), convert_to_tensor(value)))[0]


@table.export("random.stateless_normal", gradient="-", dtypes=table.REAL_FLOAT, note="not TF's bit stream")
def stateless_normal(
    shape: ShapeLike | TensorLike,
    seed: TensorLike,
    mean: TensorLike = 0.0,
    stddev: TensorLike = 1.0,
    dtype: DTypeLike = dtypes.float32,
    name: str | None = None,
    alg: Any = None,
) -> Tensor:
    """Normal samples determined entirely by `seed` (a pair of ints)."""
    return _normal(_pair_key(seed), shape, mean, stddev, dtype)


@table.export("random.stateless_uniform", gradient="-", dtypes=table.REAL, note="not TF's bit stream")
def stateless_uniform(
    shape: ShapeLike | TensorLike,
    seed: TensorLike,
    minval: TensorLike = 0,
    maxval: TensorLike | None = None,
    dtype: DTypeLike = dtypes.float32,
    name: str | None = None,
    alg: Any = None,
) -> Tensor:
    """Uniform samples determined entirely by `seed` (a pair of ints); integers over their full range when
    `minval` and `maxval` are both None."""
    return _uniform(_pair_key(seed), shape, minval, maxval, dtype, full_range=True)


def _algorithm_id(alg: Any) -> int:
    """TF's number of an RNG algorithm (1 Philox, 2 ThreeFry, 3 auto-select); None is Philox, as TF's."""
    if alg is None:
        return 1
    name = getattr(alg, "name", alg)
    numbers = {"PHILOX": 1, "THREEFRY": 2, "AUTO_SELECT": 3}
    if isinstance(name, str) and name.upper() in numbers:
        return numbers[name.upper()]
    if isinstance(alg, (int, np.integer)) and int(alg) in (1, 2, 3):
        return int(alg)
    raise ValueError(f"Unsupported algorithm id: {alg}")


class Generator:
    """A random generator with its own state, as `tf.random.Generator`.

    tapeshim draws with JAX's threefry from a seed and a count of draws; the state is the int64
    variable `[seed, draws, 0]` (`state`), which a `tf.train.Checkpoint` saves and restores and which
    `state.assign` moves.
    """

    def __init__(self, copy_from: "Generator | None" = None, state: Any = None, alg: Any = None) -> None:
        """A generator copied from `copy_from`, or at `state` (`[seed, draws, 0]`, as `state` gives it).

        Raises:
          ValueError: for a state that is not a vector of 3 integers, or an unknown algorithm.
        """
        self._state = SavedPosition("state")  # the state variable, made when first asked for
        self._seed: int
        self._count: int
        self._alg: int
        if copy_from is not None:
            copy_from._sync()
            self._seed, self._count, self._alg = copy_from._seed, copy_from._count, copy_from._alg
            return
        if state is None:
            raise AssertionError("Generator needs `copy_from` or `state`")
        values = np.asarray(convert_to_tensor(state).numpy()).reshape(-1)
        if values.shape != (3,):
            raise ValueError(f"Shapes {values.shape} and [3] are incompatible")
        self._seed, self._count, self._alg = int(values[0]), int(values[1]), _algorithm_id(alg)

    @classmethod
    def _at(cls, seed: int, count: int = 0, alg: Any = None) -> "Generator":
        return cls(state=np.asarray([int(seed), int(count), 0], np.int64), alg=alg)

    @classmethod
    def from_seed(cls, seed: int, alg: Any = None) -> "Generator":
        """A generator whose sequence is determined by `seed` (any integer: TF takes its low 64 bits first)."""
        return cls._at(_int64(seed), 0, alg)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> "Generator":
        return cls._at(int.from_bytes(os.urandom(4), "little"), 0, alg)

    def _state_variable(self) -> Any:
        """The state variable, holding the generator's position (made on first use)."""
        self._sync()
        return self._state.variable(np.asarray([self._seed, self._count, 0], np.int64))

    def _sync(self) -> None:
        """Goes to the position a checkpoint restored or `state.assign` set since the variable was last read."""
        if self._state.changed():
            values = self._state.take().reshape(-1)
            self._seed, self._count = int(values[0]), int(values[1])

    def checkpoint_variables(self) -> dict[str, Any]:
        """The generator's state for a `tf.train.Checkpoint`."""
        return {"state": self._state_variable()}

    def _draw(self) -> jax.Array:
        self._sync()
        self._count += 1
        return _folded_key(self._seed, self._count)

    def _key(self) -> Tensor:
        return generator_key(self._draw)

    def normal(
        self,
        shape: ShapeLike | TensorLike,
        mean: TensorLike = 0.0,
        stddev: TensorLike = 1.0,
        dtype: DTypeLike = dtypes.float32,
        name: str | None = None,
    ) -> Tensor:
        """Normal samples; each call advances the generator."""
        return _normal(self._key(), shape, mean, stddev, dtype)

    def uniform(
        self,
        shape: ShapeLike | TensorLike,
        minval: TensorLike = 0,
        maxval: TensorLike | None = None,
        dtype: DTypeLike = dtypes.float32,
        name: str | None = None,
    ) -> Tensor:
        """Uniform samples; each call advances the generator."""
        return _uniform(self._key(), shape, minval, maxval, dtype)

    def truncated_normal(
        self,
        shape: ShapeLike | TensorLike,
        mean: TensorLike = 0.0,
        stddev: TensorLike = 1.0,
        dtype: DTypeLike = dtypes.float32,
        name: str | None = None,
    ) -> Tensor:
        """Normal samples cut at two standard deviations; each call advances the generator."""
        return _normal(self._key(), shape, mean, stddev, dtype, _truncated_op)

    def uniform_full_int(
        self, shape: ShapeLike | TensorLike, dtype: DTypeLike = dtypes.uint64, name: str | None = None
    ) -> Tensor:
        """Integers over the whole range of `dtype`; each call advances the generator."""
        return _uniform(self._key(), shape, None, None, dtype, full_range=True)

    def binomial(
        self,
        shape: ShapeLike | TensorLike,
        counts: TensorLike,
        probs: TensorLike,
        dtype: DTypeLike = dtypes.int32,
        name: str | None = None,
    ) -> Tensor:
        """Binomial(counts, probs) samples; each call advances the generator."""
        from tapeshim._src.ops.random_stateless import _binomial_op  # import cycle: random_ops <-> random_stateless

        dims = shape_arg(shape, "StatelessRandomBinomial", float_error="attr")
        n = convert_to_tensor(counts, dtype_hint=dtypes.float32)
        p = convert_to_tensor(probs, dtype=n._dtype) if not isinstance(probs, Tensor) else probs
        out = dtypes.as_dtype(dtype)
        return apply(_binomial_op, (self._key(), n, p), (("dtype", out._np.str), ("shape", dims)))[0]

    def make_seeds(self, count: int = 1) -> Tensor:
        """`count` seeds for the stateless ops, as an int64 tensor of shape `[2, count]`."""
        return self.uniform_full_int([2, int(count)], dtypes.int64)

    def split(self, count: int = 1) -> list["Generator"]:
        """`count` new, independent generators; advances this one."""
        seeds = np.asarray(self.uniform_full_int([int(count)], dtypes.int64).numpy())
        return [Generator._at(int(s) & 0x7FFFFFFFFFFFFFFF, 0, self._alg) for s in seeds]

    @classmethod
    def from_state(cls, state: Any, alg: Any) -> "Generator":
        """A generator at `state` (`[seed, draws, ...]`, as `state` returns it)."""
        values = [int(v) for v in np.asarray(convert_to_tensor(state).numpy()).reshape(-1)]
        return cls._at(values[0], values[1] if len(values) > 1 else 0, alg)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> "Generator":
        """A generator with `key` as its seed and the first element of `counter` as its position."""
        count = np.asarray(convert_to_tensor(counter).numpy()).reshape(-1)
        return cls.from_state(
            [int(np.asarray(convert_to_tensor(key).numpy())), int(count[0]) if count.size else 0], alg
        )

    def _move(self, seed: int, count: int) -> None:
        self._sync()  # (a pending restore is superseded)
        self._seed, self._count = seed, count

    def reset(self, state: Any) -> None:
        """Moves the generator to `state`."""
        other = Generator.from_state(state, None)
        self._move(other._seed, other._count)

    def reset_from_key_counter(self, key: Any, counter: Any) -> None:
        """Moves the generator to `key` and `counter`."""
        other = Generator.from_key_counter(key, counter, None)
        self._move(other._seed, other._count)

    def reset_from_seed(self, seed: int) -> None:
        """Restarts the generator's sequence from `seed` (any integer, as `from_seed`)."""
        self._move(_int64(seed), 0)

    def skip(self, delta: int) -> None:
        """Advances the generator by `delta` draws."""
        self._sync()
        self._count += int(delta)

    @property
    def algorithm(self) -> int:
        """TF's number of the algorithm asked for (1 Philox, 2 ThreeFry, 3 auto-select); tapeshim draws with
        JAX's threefry whichever it is."""
        return self._alg

    @property
    def state(self) -> Any:
        """The generator's position, the int64 variable `[seed, draws, 0]` (assigning it moves the generator).

        Inside `tapeshim.function` it is the position when the function was traced, as a tensor (the draws
        of each call advance the generator when the call runs).
        """
        if _thread_state.trace is not None:
            self._sync()
            return convert_to_tensor(np.asarray([self._seed, self._count, 0], np.int64))
        return self._state_variable()

    @property
    def key(self) -> Tensor:
        """The generator's key (its seed)."""
        return convert_to_tensor(np.int64(self._seed))


table.export(
    "random.Generator",
    gradient="-",
    dtypes="-",
    note="from_seed/from_state/from_key_counter/from_non_deterministic_state; normal, uniform, "
    "truncated_normal, uniform_full_int, binomial, make_seeds, split, reset*, skip, state, key; "
    "not TF's bit stream",
)(Generator)
