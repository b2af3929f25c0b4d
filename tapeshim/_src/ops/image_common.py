"""Shared helpers of the `tf.image` / `tf.signal` rows: one-kernel ops and image shape checks."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike


def kernel(name: str, impl: Callable[..., Any], differentiable: bool = True) -> OpDef:
    """The kernel `name` (TF's op type) running the JAX function `impl(*arrays, **static)`."""
    return OpDef(name, impl, differentiable)


def run(op: OpDef, inputs: Any, **static: Any) -> Tensor:
    """Runs (or records) `op` on tensors `inputs` with hashable static arguments; its first output."""
    return apply(op, tuple(inputs), tuple(sorted(static.items())))[0]


def run_all(op: OpDef, inputs: Any, **static: Any) -> tuple:
    """Like `run`, every output."""
    return apply(op, tuple(inputs), tuple(sorted(static.items())))


def host_constant(array: np.ndarray, dtype: DTypeLike) -> Tensor:
    """A constant tensor of `array` cast to `dtype` (weight matrices and windows built on the host)."""
    dtype = dtypes.as_dtype(dtype)
    return constant(np.asarray(array).astype(dtype.as_numpy_dtype), dtype)


def static_int(value: TensorLike, what: str) -> int:
    """A scalar integer argument (int or integer tensor) as a Python int."""
    values = _static_ints(value, what)
    if len(values) != 1:
        raise ValueError(f"`{what}` must be a scalar integer, got {value!r}.")
    return values[0]


def image_tensor(image: TensorLike, what: str = "image", at_least: int = 3, at_most: int | None = None) -> Tensor:
    """`image` as a tensor whose rank TF's image ops accept, or TF's ValueError.

    Args:
      image: the image (a tensor or anything convertible).
      what: its argument name, for the message.
      at_least: the smallest rank allowed.
      at_most: the largest rank allowed (None: no bound).
    """
    tensor = convert_to_tensor(image)
    rank = len(tensor._shape)
    if rank < at_least:
        words = {2: "two", 3: "three", 4: "four"}[at_least]
        raise ValueError(f"'{what}' (shape {tensor.shape}) must be at least {words}-dimensional.")
    if at_most is not None and rank > at_most:
        raise ValueError(f"'{what}' (shape {tensor.shape})must have either 3 or 4 dimensions.")
    if at_least >= 3 and any(d == 0 for d in tensor._shape[-3:]):
        raise ValueError(f"inner 3 dims of '{what}.shape' must be > 0: {tensor.shape}")
    return tensor
