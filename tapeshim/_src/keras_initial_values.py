"""Keras's initial weight values without a compile per weight shape.

On its JAX backend, Keras fills each new variable by calling its initializer eagerly: `jnp.zeros(shape)`
or `jax.random.uniform(key, shape)`, each one XLA program per shape (0.1 s for a fill, 0.3-1 s for a
random draw on a CPU). A model's weights come in many shapes, so building it compiled for seconds:
Pix2Pix's generator (TF: 1.6 s) and its Adam slots. tapeshim's layers (`add_weight`) and optimizers
(`add_variable`) hand Keras an initializer giving the same values without those compiles: constant
fills from NumPy, and the draws of Keras's random initializers (`RandomNormal`, `RandomUniform`,
`TruncatedNormal` and every `VarianceScaling`: Glorot, He, Lecun) from the chunk kernels compiled once
per distribution (`random_chunks`), with the key Keras would draw (its seed generator advances as
in Keras). The values are Keras's own, bit for bit (`tests/test_keras_initial_values.py`).

Anything else (a subclass with its own `__call__`, `Orthogonal`, an integer or 16-bit float dtype, a
Keras distribution laying variables out over devices) keeps Keras's initializer.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import keras
import numpy as np

from tapeshim._src import random_chunks
from tapeshim._src.keras_compat import compute_fans, draw_seed

_FLOATS = ("float32", "float64")
_TRUNCATED_STDDEV = 0.87962566103423978
"""The standard deviation of a standard normal cut at two standard deviations (Keras's VarianceScaling)."""


def _own_call(initializer: Any, keras_class: type) -> bool:
    return isinstance(initializer, keras_class) and type(initializer).__call__ is keras_class.__call__


def _sample(kind: str, initializer: Any, shape: tuple, dtype: str, a: float = 0.0, b: float = 1.0) -> Any:
    """Keras's draw for `initializer`'s seed (its generator advances once): from the chunk kernels, or
    with `jax.random` itself (a key that is a tracer, a draw past `random_chunks.MAX_ELEMENTS`)."""
    key = draw_seed(initializer.seed)
    drawn = random_chunks.draw(kind, key, shape, dtype, a, b)
    if drawn is not None:
        return drawn
    if kind == "uniform":
        return jax.random.uniform(key, shape, dtype, a, b)
    if kind == "normal":
        return jax.random.normal(key, shape, dtype)
    return jax.random.truncated_normal(key, a, b, shape, dtype)


def _scaled(values: Any, stddev: float, mean: float) -> Any:
    """`values * stddev + mean` in the values' dtype, as Keras's JAX backend computes it (Python numbers
    are weakly typed there: they take the values' dtype)."""
    values = values * np.asarray(stddev, values.dtype)
    return values + np.asarray(mean, values.dtype) if mean != 0 else values  # (XLA folds `x + 0` to `x`)


def _numbers(*values: Any) -> bool:
    """Whether the parameters are Python numbers (weakly typed in Keras's arithmetic, as `_scaled` takes them)."""
    return all(type(value) in (int, float) for value in values)


def _random_values(initializer: Any, shape: tuple, dtype: str) -> Any:
    if _own_call(initializer, keras.initializers.RandomNormal):
        if not _numbers(initializer.stddev, initializer.mean):
            return None
        return _scaled(_sample("normal", initializer, shape, dtype), initializer.stddev, initializer.mean)
    if _own_call(initializer, keras.initializers.TruncatedNormal):
        if not _numbers(initializer.stddev, initializer.mean):
            return None
        drawn = _sample("truncated_normal", initializer, shape, dtype, -2.0, 2.0)
        return _scaled(drawn, initializer.stddev, initializer.mean)
    if _own_call(initializer, keras.initializers.RandomUniform):
        if not _numbers(initializer.minval, initializer.maxval):
            return None
        return _sample("uniform", initializer, shape, dtype, initializer.minval, initializer.maxval)
    if not _own_call(initializer, keras.initializers.VarianceScaling) or not _numbers(initializer.scale):
        return None
    # (Keras versions with `input_axes`/`output_axes`, which EinsumDense sets, count fans along them)
    axes = {name: getattr(initializer, name) for name in ("input_axes", "output_axes") if hasattr(initializer, name)}
    fan_in, fan_out = compute_fans(shape, **axes)
    fans = {"fan_in": fan_in, "fan_out": fan_out}.get(initializer.mode, (fan_in + fan_out) / 2.0)
    scale = initializer.scale / max(1.0, fans)
    if initializer.distribution == "truncated_normal":
        drawn = _sample("truncated_normal", initializer, shape, dtype, -2.0, 2.0)
        return _scaled(drawn, math.sqrt(scale) / _TRUNCATED_STDDEV, 0.0)
    if initializer.distribution == "untruncated_normal":
        return _scaled(_sample("normal", initializer, shape, dtype), math.sqrt(scale), 0.0)
    limit = math.sqrt(3.0 * scale)
    return _sample("uniform", initializer, shape, dtype, -limit, limit)


def _random_drawable(initializer: Any) -> bool:
    kinds = (
        keras.initializers.RandomNormal,
        keras.initializers.TruncatedNormal,
        keras.initializers.RandomUniform,
        keras.initializers.VarianceScaling,
    )
    return random_chunks.usable() and any(_own_call(initializer, kind) for kind in kinds)


def _fill_value(initializer: Any) -> float | None:
    """The value a constant initializer fills with, or None for other initializers."""
    if _own_call(initializer, keras.initializers.Zeros):
        return 0.0
    if _own_call(initializer, keras.initializers.Ones):
        return 1.0
    if _own_call(initializer, keras.initializers.Constant) and isinstance(initializer.value, (int, float)):
        return float(initializer.value)
    return None


class HostInitializer:
    """A Keras initializer's values computed without a per-shape compile (see the module docstring);
    Keras's own initializer where they cannot be."""

    __slots__ = ("initializer",)

    def __init__(self, initializer: Any) -> None:  # noqa: D107 - made by `host_initializer`
        self.initializer = initializer

    def __call__(self, shape: Any, dtype: Any = None) -> Any:
        """The initial value for a variable of `shape` and `dtype` (Keras's default float dtype if None)."""
        dtype_name = keras.backend.standardize_dtype(dtype or keras.backend.floatx())
        dims = tuple(shape)
        if dtype_name in _FLOATS and all(type(d) is int for d in dims):
            fill = _fill_value(self.initializer)
            values = np.full(dims, fill, dtype_name) if fill is not None else None
            if values is None:
                values = _random_values(self.initializer, dims, dtype_name)
            if isinstance(values, jax.Array):  # (drawn by `jax.random` itself)
                return values
            if values is not None:  # (`device_put`: Keras's `jnp.asarray` of NumPy compiles per shape)
                return jax.device_put(np.asarray(values))  # (a 0-d result of NumPy arithmetic is a scalar)
        return self.initializer(shape, dtype=dtype)

    def get_config(self) -> dict:
        """The wrapped initializer's configuration."""
        return self.initializer.get_config()


def host_initializer(initializer: Any) -> Any:
    """`initializer` (anything `keras.initializers.get` takes), resolved by Keras, as a `HostInitializer`
    where its values can be computed without compiling, else as Keras resolves it."""
    resolved = keras.initializers.get(initializer)
    if keras.distribution.distribution() is not None:  # variables laid out over devices: Keras's own path
        return resolved
    if _fill_value(resolved) is None and not _random_drawable(resolved):
        return resolved
    return HostInitializer(resolved)


def add_weight_arguments(args: tuple, kwargs: dict, variable_dtype: str) -> tuple[tuple, dict]:
    """`Layer.add_weight`'s arguments with its initializer (given, or Keras's default for the dtype) made a
    `host_initializer`. Positional `(shape, initializer, dtype)` are Keras's legacy order."""
    if (len(args) > 1 and "initializer" in kwargs) or (args and isinstance(args[0], str)) or len(args) > 3:
        return args, kwargs  # (Keras raises for these: a duplicate initializer, a positional name)
    positional, kwargs = list(args), dict(kwargs)
    given = positional[1] if len(positional) > 1 else kwargs.get("initializer")
    if given is None:
        dtype = positional[2] if len(positional) > 2 else kwargs.get("dtype")
        dtype_name = variable_dtype if dtype is None else keras.backend.standardize_dtype(dtype)
        given = "glorot_uniform" if "float" in dtype_name else "zeros"  # Keras's defaults
    if len(positional) > 1:
        positional[1] = host_initializer(given)
    else:
        kwargs["initializer"] = host_initializer(given)
    return tuple(positional), kwargs
