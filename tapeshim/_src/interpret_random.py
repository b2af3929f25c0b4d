"""NumPy rules for JAX's random-number primitives and bit shifts, for the host interpreter.

A program that draws random numbers (a Keras `Dropout` layer's mask, `jax.random.uniform` in a user's
JAX function) holds JAX's key primitives: `random_wrap` makes a key of a `uint32[2]` seed state,
`random_bits` draws from it. The interpreter had no rules for them, so every such program compiled on its
first call: a Keras GAN's first two training steps took 7 s (two 1.3 s compiles of its models' calls and
VJPs, then two 2 s compiles of its gradient programs) where TF eager's take 0.26 s.

The interpreter carries a threefry key (JAX's default implementation, `key<fry>`) as its data: a `uint32`
array with a trailing dimension of 2. Keys flow only through the rules here and through calls
(`interpret.supported`); any other equation on a key (a slice of split keys) makes the program compile, as
before. The draws are JAX's, bit for bit: the hash is Threefry-2x32 (`threefry.py`), and its inputs are the
ones JAX gives it:

* `random_bits` and `random_split`, in JAX's partitionable form (`jax_threefry_partitionable`, JAX's
  default; without it the rules refuse, and the program compiles): the hash of the key and a 64-bit counter
  over the result's elements in row-major order, its high and low words the hash's two inputs. 32-bit
  draws are the two output words xor-ed, 8- and 16-bit ones that truncated, 64-bit ones the high word
  shifted over the low one; a split key is the two words;
* `random_fold_in`: the hash of the key and the message as the low word of a zero high word;
* `random_seed`: a seed's high and low 32 bits (a 32-bit seed's high word is zero).

`tests/test_interpret_random.py` compares each with XLA's compiled result.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np

from tapeshim._src.interpret_rules import _rule
from tapeshim._src.threefry import threefry

_WORD = np.dtype(np.uint32)

KEY_PRIMITIVES = frozenset(
    ("random_seed", "random_wrap", "random_unwrap", "random_bits", "random_split", "random_fold_in")
)
"""The primitives whose operands or results may be keys on the host."""


def is_threefry_key(dtype: Any) -> bool:
    """Whether `dtype` is JAX's threefry key type (`key<fry>`), whose values the host carries as their data."""
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) and str(dtype) == "key<fry>"


def host_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype the host holds values of `dtype` in: a threefry key's is its data's, `uint32`."""
    try:
        return np.dtype(dtype)
    except TypeError:  # (an extended dtype: `supported` let only threefry keys through)
        if is_threefry_key(dtype):
            return _WORD
        raise


def _counters(shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The high and low words of a 64-bit row-major counter over `shape`."""
    count = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return (count >> np.uint64(32)).astype(_WORD), count.astype(_WORD)


def _words(keys: np.ndarray, extra_dims: int) -> tuple[np.ndarray, np.ndarray]:
    """A key array's two words, shaped to broadcast against `extra_dims` trailing dimensions of draws."""
    keys = np.asarray(keys, _WORD)
    batch = keys.shape[:-1] + (1,) * extra_dims
    return keys[..., 0].reshape(batch), keys[..., 1].reshape(batch)


def _partitionable() -> None:
    if not jax.config.values["jax_threefry_partitionable"]:
        raise NotImplementedError("JAX's original threefry counters are not interpreted")


def _threefry_impl(params: dict) -> bool:
    """`SUPPORTED`'s check of `random_seed` and `random_wrap`: the key implementation is threefry's."""
    return getattr(params.get("impl"), "name", None) == "threefry2x32"


@_rule("random_bits")
def random_bits(keys: Any, *, bit_width: int, shape: tuple, **_: Any) -> np.ndarray:
    """`bit_width`-bit draws of `shape` from each key: shape `keys`' batch shape + `shape`."""
    _partitionable()
    if bit_width not in (8, 16, 32, 64):
        raise NotImplementedError(f"{bit_width}-bit draws")
    shape = tuple(int(d) for d in shape)
    high, low = _words(keys, len(shape))
    counter_high, counter_low = _counters(shape)
    a, b = threefry(high, low, counter_high, counter_low)
    if bit_width == 64:
        return (a.astype(np.uint64) << np.uint64(32)) | b.astype(np.uint64)
    return (a ^ b).astype(np.dtype(f"uint{bit_width}"))


@_rule("random_split")
def random_split(keys: Any, *, shape: tuple, **_: Any) -> np.ndarray:
    """`shape` new keys from each key: the data of shape `keys`' batch shape + `shape` + (2,)."""
    _partitionable()
    shape = tuple(int(d) for d in shape)
    high, low = _words(keys, len(shape))
    counter_high, counter_low = _counters(shape)
    return np.stack(threefry(high, low, counter_high, counter_low), axis=-1)


@_rule("random_fold_in")
def random_fold_in(keys: Any, messages: Any, **_: Any) -> np.ndarray:
    """Each key with a 32-bit message folded in (keys and messages broadcast against each other)."""
    keys, messages = np.asarray(keys, _WORD), np.asarray(messages)
    if messages.dtype.kind not in "biu":  # (`jax.random.fold_in` converts it first; XLA's float conversion here)
        raise NotImplementedError("a message that is not an integer")
    high, low = keys[..., 0], keys[..., 1]
    words = messages.astype(_WORD)  # (the message as uint32: a negative one wraps, a wider one is truncated)
    return np.stack(threefry(high, low, np.zeros_like(words), words), axis=-1)


@_rule("random_seed", supported=_threefry_impl)
def random_seed(seeds: Any, **_: Any) -> np.ndarray:
    """A key from each integer seed: its high and low 32 bits (a 32-bit seed's high word is zero)."""
    seeds = np.asarray(seeds)
    if seeds.dtype.kind not in "iu":
        raise NotImplementedError("a seed that is not an integer")
    wide = seeds.astype(np.uint64)  # (two's complement: a negative seed's bits)
    low = (wide & np.uint64(0xFFFFFFFF)).astype(_WORD)
    high = (wide >> np.uint64(32)).astype(_WORD) if seeds.dtype.itemsize == 8 else np.zeros_like(low)
    return np.stack([high, low], axis=-1)


@_rule("random_unwrap")
def key_data(keys: Any, **_: Any) -> np.ndarray:
    """`random_wrap` and `random_unwrap`: a key's data is what the host holds for it."""
    return np.asarray(keys, _WORD)


@_rule("threefry2x32")
def threefry2x32(key0: Any, key1: Any, x0: Any, x1: Any, **_: Any) -> list:
    """The hash primitive itself (a program that calls JAX's threefry directly)."""
    return list(threefry(key0, key1, x0, x1))


def _shift(x: Any, counts: Any, left: bool) -> np.ndarray:
    """XLA's logical shift: counts are read as unsigned, and one of the operand's width or more gives 0."""
    x, counts = np.asarray(x), np.asarray(counts)
    bits = x.dtype.itemsize * 8
    unsigned = np.dtype(f"uint{bits}")
    words = x.view(unsigned)
    counts = counts.astype(unsigned)
    beyond = counts >= bits
    within = np.where(beyond, 0, counts).astype(unsigned)
    shifted = (words << within) if left else (words >> within)
    return np.where(beyond, unsigned.type(0), shifted).astype(unsigned).view(x.dtype)


@_rule("shift_left")
def shift_left(x: Any, counts: Any, **_: Any) -> np.ndarray:
    """`lax.shift_left`."""
    return _shift(x, counts, True)


@_rule("shift_right_logical")
def shift_right_logical(x: Any, counts: Any, **_: Any) -> np.ndarray:
    """`lax.shift_right_logical` (zeros shifted in, a signed operand's sign bit too)."""
    return _shift(x, counts, False)


@_rule("bitcast_convert_type")
def bitcast_convert_type(x: Any, *, new_dtype: Any, **_: Any) -> np.ndarray:
    """`lax.bitcast_convert_type` between dtypes of one width (the bits reread; other widths compile)."""
    x, dtype = np.asarray(x), np.dtype(new_dtype)
    if dtype.itemsize != x.dtype.itemsize or dtype == np.bool_ or x.dtype == np.bool_:
        raise NotImplementedError("a bitcast between widths")
    return x.view(dtype)


_rule("random_wrap", supported=_threefry_impl)(key_data)
