"""`tf.range`: a constant made on the host, or, with a bound known per call (`tf.range(tf.shape(x)[0])` in a
trace for every size), a recorded op whose length is known per call, its bounds checked when it runs."""

from __future__ import annotations

import builtins
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, registry, runtime_checks, static_value, symbolic_dims
from tapeshim._src.node import OpKey
from tapeshim._src.ops import table
from tapeshim._src.ops.common import is_tensor_like, static_error
from tapeshim._src.registry import check_allocation
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor, host_constant


@table.export("range", gradient="-", dtypes=table.REAL)
def range(
    start: Any,
    limit: Any = None,
    delta: Any = 1,
    dtype: Any = None,
    name: str = "range",
) -> Tensor:  # noqa: A001
    """Numbers from `start` up to (not including) `limit` in steps of `delta`, as `tf.range`.

    The dtype follows the arguments (int32 for ints, float32 for floats) unless given.
    """
    if limit is None:
        start, limit = 0, start
    given = (start, limit, delta)
    # `tf.range(tf.shape(x)[0])` inside tapeshim.function: known while tracing, or a symbolic size (H5)
    values = [static_value.resolve(v) for v in given] if _thread_state.trace is not None else list(given)
    if any(symbolic_dims.is_symbolic(v) for v in values):
        return _symbolic_range(values, given, dtype)
    values = [convert_to_tensor(v).numpy() if is_tensor_like(v) else v for v in values]
    for k, (what, v) in enumerate(zip(("start", "limit", "delta"), values)):
        if np.ndim(v):  # (TF's kernel takes a one-element vector as its scalar)
            if np.size(v) != 1:
                raise static_error(f"{what} must be a scalar, not shape [{','.join(map(str, np.shape(v)))}]", "Range")
            values[k] = np.reshape(v, ())
    if values[2] == 0:
        raise static_error("Requires delta != 0: 0", "Range")
    if values[2] > 0 and values[0] > values[1]:
        raise static_error(f"Requires start <= limit when delta > 0: {values[0]}/{values[1]}", "Range")
    if values[2] < 0 and values[0] < values[1]:
        raise static_error(f"Requires start >= limit when delta < 0: {values[0]}/{values[1]}", "Range")
    target = _range_dtype(given, dtype)
    check_allocation((builtins.max(0, math.ceil((values[1] - values[0]) / values[2])),), target, "Range")
    array = np.arange(*values, dtype=np.float64 if target.is_floating else np.int64).astype(target._np)
    return Tensor(host_constant(array), array.shape, target)


def _range_dtype(given: tuple, dtype: Any) -> dtypes.DType:
    """`tf.range`'s dtype: `dtype`, else the first floating argument's, else int64 if any is, else int32."""
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    arg_dtypes = [convert_to_tensor(v).dtype for v in given]
    floats = [d for d in arg_dtypes if d.is_floating]
    return floats[0] if floats else (dtypes.int64 if dtypes.int64 in arg_dtypes else dtypes.int32)


def _symbolic_range(values: list, given: tuple, dtype: Any) -> Tensor:
    """`tf.range` whose bounds hold symbolic dimensions (`tf.shape(x)[0]` in a trace for every size): a
    recorded op whose length is known per call. Its bounds must be integers, as those of `tf.shape`."""
    target = _range_dtype(given, dtype)
    if not all(symbolic_dims.is_symbolic(v) or np.asarray(v).dtype.kind in "iu" for v in values):
        raise ValueError("tf.range with a size known per call and a fractional bound or step")  # (traced per shape)
    bounds = tuple(v if symbolic_dims.is_symbolic(v) else int(v) for v in values)
    if bounds[2] == 0:
        raise static_error("Requires delta != 0: 0", "Range")
    np_dtype = target._np

    def kernel() -> tuple:
        # TF's Range checks its bounds when the graph runs: so does the program, with TF's messages.
        start, limit, delta = (jnp.asarray(b) for b in bounds)
        runtime_checks.require(delta != 0, "Requires delta != 0: {delta} [Op:Range]", delta=delta)
        runtime_checks.require(
            (delta < 0) | (start <= limit),
            "Requires start <= limit when delta > 0: {start}/{limit} [Op:Range]",
            start=start,
            limit=limit,
        )
        runtime_checks.require(
            (delta > 0) | (start >= limit),
            "Requires start >= limit when delta < 0: {start}/{limit} [Op:Range]",
            start=start,
            limit=limit,
        )
        return (jnp.arange(bounds[0], bounds[1], bounds[2], dtype=np_dtype),)

    out_shape = jax.eval_shape(kernel)[0].shape
    return registry.record(kernel, OpKey("Range", target._name, bounds), (), ((out_shape, target),), [])[0]
