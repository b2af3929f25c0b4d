"""Seeded test data: the numpy arrays the differential tests give to TensorFlow and to tapeshim.

Every test input is drawn here from a seeded numpy generator, so TF and tapeshim see the
same numbers (their own random ops draw different streams). This module imports numpy
only: the child processes of the Keras and distribute oracles (`keras_cases.py`,
`distribute_cases.py`) import it before they choose a backend. `oracle` re-exports every
name, so a test file writes `from oracle import check, sample`.

Two ways to draw:

* `sample(rng, shape, kind, dtype)` draws from a generator the caller keeps (a module's
  `RNG = np.random.default_rng(7)`): the values depend on how many draws came before, as a
  parametrized op table expects.
* `normal`, `uniform` and `labelled` seed a fresh generator on each call: the same
  arguments give the same arrays in any test order.
"""

from __future__ import annotations

from typing import Literal, Sequence, Union

import numpy as np
import numpy.typing as npt

Shape = Union[int, Sequence[int]]
Kind = Literal["normal", "positive", "unit", "above1", "spd"]
KINDS: tuple[Kind, ...] = ("normal", "positive", "unit", "above1", "spd")


def sample(
    rng: np.random.Generator, shape: Shape, kind: Kind = "normal", dtype: npt.DTypeLike = np.float32
) -> np.ndarray:
    """Draws one input of `kind` from `rng`, cast to `dtype`.

    Args:
        rng: the generator to draw from (its state advances).
        shape: the array's shape.
        kind: the domain the op needs: "normal" (standard normal), "positive" (|normal| + 0.5),
            "unit" (uniform in (-0.9, 0.9): asin, atanh), "above1" (uniform in (1.1, 3): acosh)
            or "spd" (a batch of symmetric positive definite matrices, `a a^T + n I` for a
            normal `a` of `shape`, whose last two dimensions are equal).
        dtype: the numpy dtype of the result (drawn in float64, then cast).

    Returns:
        The array.

    Raises:
        ValueError: for an unknown kind.
    """
    if kind == "normal":
        return rng.normal(size=shape).astype(dtype)
    if kind == "positive":
        return (np.abs(rng.normal(size=shape)) + 0.5).astype(dtype)
    if kind == "unit":
        return rng.uniform(-0.9, 0.9, size=shape).astype(dtype)
    if kind == "above1":
        return rng.uniform(1.1, 3.0, size=shape).astype(dtype)
    if kind == "spd":
        a = rng.normal(size=shape)
        n = a.shape[-1]
        return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


def normal(shape: Shape, seed: int = 0, dtype: npt.DTypeLike = np.float32) -> np.ndarray:
    """Standard normal values from a generator seeded with `seed` (float32 unless `dtype`)."""
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def uniform(shape: Shape, seed: int = 0) -> np.ndarray:
    """float32 values in [0, 1) from a generator seeded with `seed`, in place of `tf.random.uniform(shape)`."""
    return np.random.default_rng(seed).uniform(size=shape).astype(np.float32)


def labelled(
    seed: int, rows: int, features: int, classes: int | None = None, label_dtype: npt.DTypeLike = np.int64
) -> tuple[np.ndarray, np.ndarray]:
    """A small supervised data set from a generator seeded with `seed`.

    Args:
        seed: the generator's seed.
        rows: the number of examples.
        features: the width of `x`.
        classes: None for a regression target (`y` is a (rows, 1) float32 normal), else the
            number of classes (`y` is a (rows,) vector of integers in [0, classes)).
        label_dtype: the integer dtype of class labels.

    Returns:
        `(x, y)`: `x` a (rows, features) float32 standard normal, drawn first; then `y`.
    """
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, features)).astype(np.float32)
    if classes is None:
        return x, rng.normal(size=(rows, 1)).astype(np.float32)
    return x, rng.integers(0, classes, size=(rows,)).astype(label_dtype)


def exact(values: npt.ArrayLike) -> np.ndarray:
    """`values` as float64 (complex128 when complex), so that every dtype is built from the same numbers."""
    return np.asarray(values, np.complex128 if np.iscomplexobj(values) else np.float64)
