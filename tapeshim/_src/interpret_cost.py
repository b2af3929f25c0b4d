"""The arithmetic the host interpreter may spend on one call before a program compiles instead.

The interpreter (`interpret.py`) saves a program's compile (10 ms to seconds) by computing its first
calls with NumPy. That pays only while the NumPy work costs less than the compile it saves: a first
training step of an image model (Pix2Pix's generator: 8 GFLOP per call over 256x256 images) took
60 s on the host where its compile and compiled run take 15 s. Two counts bound it:

* the multiply-adds of matrix products and convolutions, from their shapes (`HOST_MULTIPLY_ADDS`): a
  program over the limit compiles at once; a loop or a trace with symbolic sizes counts at run time,
  each product before it runs (`interpret_plan.Budget`), and abandons the host evaluation past the limit;
* the elements its operations produce (`HOST_ELEMENTS`): the first Adam update of that generator's 54
  million weights took 6 s on the host (NumPy's passes and the subnormal flush over every result)
  where its compile takes 1.3 s.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from tapeshim._src import interpret_blas

HOST_MULTIPLY_ADDS = 2**31
"""Multiply-adds (of float matrix products; convolutions and other dtypes weighted, below) one interpreted call may
compute: about 2e9, 40-90 ms of NumPy's float32 BLAS on this 2-core machine, about what TF eager's own kernels
take for them and below what compiling such a program costs (200-400 ms for a compute-bound MLP step)."""


CONVOLUTION_WEIGHT = 4
"""A convolution's multiply-adds count this many times: a host convolution builds its patch matrix first, and
Pix2Pix's image steps set its limit at 2**29 multiply-adds (`HOST_MULTIPLY_ADDS` was that before matrix products
got more)."""


UNBLASED_WEIGHT = 32
"""Products of a dtype without BLAS (integers, booleans, half precision) count this many times more: NumPy
computes them in its plain loop, 2-4 ns per multiply-add here (an int32 product of 2**31 multiply-adds took
5-13 s on the host against 0.35 s compiled and run), so they may spend 2**26 (0.1-0.3 s)."""

_BLAS_DTYPES = frozenset(np.dtype(name) for name in ("float32", "float64", "complex64", "complex128"))


HOST_ELEMENTS = 2**26
"""Elements the operations of one interpreted program may produce (about 67 million, 0.2-0.4 s on the host
at the 3-6 ns per element NumPy and the flush take here): a larger program compiles at once."""


def _dot_multiply_adds(shapes: Sequence[tuple], params: dict) -> int:
    (lhs_contract, _), (lhs_batch, _) = params["dimension_numbers"]
    lhs, rhs = shapes[0], shapes[1]
    shared = math.prod(lhs[d] for d in lhs_contract) * math.prod(lhs[d] for d in lhs_batch)
    # lhs is (batch, M, K) and rhs (batch, K, N) in elements: batch * M * N * K products
    return math.prod(lhs) * math.prod(rhs) // max(shared, 1)


def _conv_multiply_adds(shapes: Sequence[tuple], params: dict) -> int:
    lhs, rhs = shapes[0], shapes[1]
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    out_positions = 1
    for k, (low, high) in enumerate(params["padding"]):
        extent = (lhs[lhs_spec[2 + k]] - 1) * params["lhs_dilation"][k] + 1 + low + high
        span = (rhs[rhs_spec[2 + k]] - 1) * params["rhs_dilation"][k] + 1
        out_positions *= max((extent - span) // params["window_strides"][k] + 1, 0)
    # every output position of every image takes one product per kernel weight (output features included)
    return lhs[lhs_spec[0]] * out_positions * math.prod(rhs) // max(params["batch_group_count"], 1)


def blas_may_split(name: str, shapes: Sequence[tuple], params: dict, dtype: Any, multiply_adds: int) -> bool:
    """Whether NumPy's BLAS may split a product over threads (the host then limits it to one:
    `interpret_blas.limit_blas_threads`): a float matrix product whose M x K by K x N (per batch item, as NumPy's
    `matmul` calls the BLAS) reaches OpenBLAS's threshold (`GEMV_THREADED_MULTIPLY_ADDS` where M or N is 1, else
    `GEMM_THREADED_MULTIPLY_ADDS`); a convolution from `BLAS_THREADED_MULTIPLY_ADDS` weighted multiply-adds."""
    if name != "dot_general":
        return multiply_adds >= interpret_blas.BLAS_THREADED_MULTIPLY_ADDS
    if np.dtype(dtype) not in _BLAS_DTYPES:
        return False
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    lhs, rhs = shapes[0], shapes[1]
    m = math.prod(size for d, size in enumerate(lhs) if d not in lhs_contract and d not in lhs_batch)
    n = math.prod(size for d, size in enumerate(rhs) if d not in rhs_contract and d not in rhs_batch)
    k = math.prod(lhs[d] for d in lhs_contract)
    if min(m, n) == 1:
        return m * n * k >= interpret_blas.GEMV_THREADED_MULTIPLY_ADDS
    return m * n * k >= interpret_blas.GEMM_THREADED_MULTIPLY_ADDS


def product_costs(name: str, shapes: Sequence[tuple], params: dict, dtype: Any) -> tuple[int, bool]:
    """A counted product's `(weighted multiply-adds, whether the BLAS may split it over threads)` (`COUNTED`,
    `blas_may_split`) from its operands' shapes, parameters and first operand's dtype."""
    multiply_adds = COUNTED[name](shapes, params, dtype)
    return multiply_adds, blas_may_split(name, shapes, params, dtype, multiply_adds)


def _dtype_weight(dtype: Any) -> int:
    return 1 if np.dtype(dtype) in _BLAS_DTYPES else UNBLASED_WEIGHT


COUNTED: dict[str, Callable[[Sequence[tuple], dict, Any], int]] = {
    "dot_general": lambda shapes, params, dtype: _dtype_weight(dtype) * _dot_multiply_adds(shapes, params),
    "conv_general_dilated": lambda shapes, params, dtype: (
        CONVOLUTION_WEIGHT * _dtype_weight(dtype) * _conv_multiply_adds(shapes, params)
    ),
}
"""The primitives whose multiply-adds are counted, each with its weighted count from operand shapes, parameters
and the first operand's dtype (`CONVOLUTION_WEIGHT`, `UNBLASED_WEIGHT`)."""


def program_multiply_adds(closed: Any, inner: Callable[[Any], list | None]) -> int:
    """The multiply-adds of a closed jaxpr's straight-line products, nested calls' included (a loop's body
    counts once; its other iterations are counted at run time); symbolic shapes count zero here.

    Args:
      closed: the program's closed jaxpr.
      inner: the nested jaxprs an equation evaluates, or None (`interpret_plan.inner_jaxprs`).
    """
    total = 0
    for eqn in closed.jaxpr.eqns:
        nested = inner(eqn)
        if nested is not None:
            counts = [program_multiply_adds(sub, inner) for sub in nested]
            total += max(counts) if eqn.primitive.name == "cond" else sum(counts)
            continue
        count = COUNTED.get(eqn.primitive.name)
        if count is None:
            continue
        shapes = [tuple(getattr(var.aval, "shape", ())) for var in eqn.invars]
        if all(type(d) is int for shape in shapes for d in shape):
            total += count(shapes, eqn.params, eqn.invars[0].aval.dtype)
    return total
