"""TF's own initializer classes: `tf.zeros_initializer`, `tf.ones_initializer`, `tf.constant_initializer`,
`tf.random_normal_initializer`, `tf.random_uniform_initializer` (TF's `init_ops_v2`, not Keras's).

An initializer is called with a shape and dtype and returns a tensor. With a seed, the
random ones draw from the stateless ops (seed `[seed, 0]`), so every call gives the same
values, as TF's; without one, from the global random state.
"""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes
from tapeshim._src.ops import array_ops, random_ops, table
from tapeshim._src.tensor import Tensor, constant


class Initializer:
    """The base of TF's initializers: `__call__(shape, dtype)`, `get_config()`, `from_config(config)`."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
        raise NotImplementedError("Initializer subclasses implement __call__.")

    def get_config(self) -> dict:
        """The constructor arguments, as a dict."""
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Initializer":
        """An initializer from `get_config()`'s dict."""
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


def _dtype(dtype: Any, default: dtypes.DType = dtypes.float32) -> dtypes.DType:
    return default if dtype is None else dtypes.as_dtype(dtype)


def _check_kwargs(kwargs: dict) -> None:
    unknown = [k for k in kwargs if k not in ("partition_shape", "partition_offset")]
    if unknown:
        raise TypeError(
            f"Keyword argument should be one of ['partition_shape', 'partition_offset']. Received: {unknown[0]}"
        )


class zeros_initializer(Initializer):  # noqa: N801 - TF's name
    """Fills with zeros, as `tf.zeros_initializer`."""

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Tensor:
        _check_kwargs(kwargs)
        return array_ops.zeros(shape, _dtype(dtype))


class ones_initializer(Initializer):  # noqa: N801 - TF's name
    """Fills with ones, as `tf.ones_initializer`."""

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Tensor:
        _check_kwargs(kwargs)
        return array_ops.ones(shape, _dtype(dtype))


class constant_initializer(Initializer):  # noqa: N801 - TF's name
    """Fills with a scalar, or reshapes a value with as many elements, as `tf.constant_initializer`.

    Args:
      value: a Python scalar, list, numpy array or tensor.
    """

    def __init__(self, value: Any = 0) -> None:
        self.value = value

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
        _check_kwargs(kwargs)
        return constant(self.value, dtype=None if dtype is None else dtypes.as_dtype(dtype), shape=shape)

    def get_config(self) -> dict:
        return {"value": self.value}


def _floating(dtype: Any) -> dtypes.DType:
    result = _dtype(dtype)
    if not result.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {result!r}.")
    return result


class random_normal_initializer(Initializer):  # noqa: N801 - TF's name
    """Normal samples, as `tf.random_normal_initializer`.

    Args:
      mean: the mean.
      stddev: the standard deviation.
      seed: an int: every call draws the same values (stateless); None: fresh draws.
    """

    def __init__(self, mean: Any = 0.0, stddev: Any = 0.05, seed: int | None = None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Tensor:
        _check_kwargs(kwargs)
        d = _floating(dtype)
        if self.seed is None:
            return random_ops.normal(shape, self.mean, self.stddev, d)
        return random_ops.stateless_normal(shape, [int(self.seed), 0], self.mean, self.stddev, d)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(Initializer):  # noqa: N801 - TF's name
    """Uniform samples in [minval, maxval), as `tf.random_uniform_initializer` (floating or integer dtypes).

    Args:
      minval: the lower bound.
      maxval: the upper bound (excluded).
      seed: an int: every call draws the same values (stateless); None: fresh draws.
    """

    def __init__(self, minval: Any = -0.05, maxval: Any = 0.05, seed: int | None = None) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any) -> Tensor:
        _check_kwargs(kwargs)
        d = _dtype(dtype)
        if not (d.is_floating or d.is_integer):
            raise ValueError(f"Argument `dtype` is expected to be floating point or integer. Received: {d!r}.")
        if self.seed is None:
            return random_ops.uniform(shape, self.minval, self.maxval, d)
        return random_ops.stateless_uniform(shape, [int(self.seed), 0], self.minval, self.maxval, d)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


for _cls, _note in (
    (zeros_initializer, ""),
    (ones_initializer, ""),
    (constant_initializer, ""),
    (random_normal_initializer, "not TF's bit stream"),
    (random_uniform_initializer, "not TF's bit stream"),
):
    table.export(_cls.__name__, gradient="-", dtypes=table.ANY, note=_note)(_cls)
