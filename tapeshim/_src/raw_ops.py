"""`tf.raw_ops`: TensorFlow's ops by their op names, called with keyword arguments only.

Each raw op is one of tapeshim's ops under TF's op name and argument names
(`tf.raw_ops.MatMul(a=..., b=..., transpose_a=False)`); as in TF, a positional
argument raises `TypeError`. The ops live in `raw_ops_math` (element-wise math,
reductions), `raw_ops_array` (shapes, slicing, gathers) and `raw_ops_nn`
(neural networks, linear algebra, random numbers) and `raw_ops_linalg` (decompositions,
least squares); `raw_ops_base` builds them.
"""

from __future__ import annotations

from typing import Any, Callable

from tapeshim._src.raw_ops_array import array_raw_ops
from tapeshim._src.raw_ops_linalg import linalg_raw_ops
from tapeshim._src.raw_ops_math import math_raw_ops
from tapeshim._src.raw_ops_nn import nn_raw_ops

RAW_OPS: dict[str, Callable[..., Any]] = dict(
    sorted({**math_raw_ops(), **array_raw_ops(), **nn_raw_ops(), **linalg_raw_ops()}.items())
)
"""TF's op name -> the raw op."""
