"""`tf.quantization.fake_quant_with_min_max_args`, `fake_quant_with_min_max_vars` and their gradient ops.

The arithmetic is TF's kernel's, in float32: the range is nudged so that zero is exactly representable, values
are clamped to it and rounded to `2**num_bits` levels (`1` fewer with `narrow_range`). The gradient passes
through inside the nudged range (the straight-through estimator); for the `vars` form, what falls below or
above the range flows to `min` or `max`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import table
from tapeshim._src.ops.common import attr_error, static_error
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _levels(num_bits: int, narrow_range: bool, op_name: str) -> tuple[int, int]:
    if not 2 <= int(num_bits) <= 16:
        raise errors.invalid_argument("num_bits must be between 2 and 16, inclusive", op_name)
    return (1 if narrow_range else 0), (1 << int(num_bits)) - 1


def _float_input(value: Any, op_name: str, what: str = "inputs") -> Tensor:
    if isinstance(value, Tensor) or hasattr(value, "_read_for_op"):
        t = convert_to_tensor(value)
        if t._dtype is not dtypes.float32:
            name = {"float64": "double", "float16": "half"}.get(t._dtype.name, t._dtype.name)
            raise attr_error(
                f"cannot compute {op_name} as input #0(zero-based) was expected to be a float tensor but is a "
                f"{name} tensor",
                op_name,
            )
        return t
    return convert_to_tensor(value, dtype=dtypes.float32)


def _round_half_away(x: Any) -> Any:
    """`std::round` of a non-negative float32 value, exactly (no `x + 0.5` rounding)."""
    low = jnp.floor(x)
    return low + (x - low >= 0.5).astype(x.dtype)


def _nudge(low: Any, high: Any, quant_min: int, quant_max: int) -> tuple:
    """TF's `Nudge`: (nudged_min, nudged_max, scale, inverse scale), float32 arithmetic as TF's kernel."""
    qmin, qmax = jnp.float32(quant_min), jnp.float32(quant_max)
    scale = (high - low) / (qmax - qmin)
    inverse = (qmax - qmin) / (high - low)
    from_min = qmin - low / scale
    zero = jnp.where(from_min < qmin, qmin, jnp.where(from_min > qmax, qmax, _round_half_away(from_min)))
    return (qmin - zero) * scale, (qmax - zero) * scale, scale, inverse


def _quantize(x: jax.Array, low: Any, high: Any, levels: tuple[int, int], multiply: bool) -> jax.Array:
    nudged_min, nudged_max, scale, inverse = _nudge(low, high, *levels)
    quant_zero = jnp.floor(-nudged_min * inverse + jnp.float32(0.5))
    shifted = jnp.maximum(jnp.minimum(x, nudged_max), nudged_min) - nudged_min
    steps = shifted * inverse if multiply else shifted / scale
    return jnp.floor(steps - quant_zero + jnp.float32(0.5)) * scale


def _args_gradient_impl(g: jax.Array, x: jax.Array, low: float, high: float, levels: tuple) -> jax.Array:
    nudged_min, nudged_max, _, _ = _nudge(jnp.float32(low), jnp.float32(high), *levels)
    return jnp.where((x >= nudged_min) & (x <= nudged_max), g, jnp.zeros_like(g))


def _args_value(x: jax.Array, low: float, high: float, levels: tuple) -> jax.Array:
    return _quantize(x, jnp.float32(low), jnp.float32(high), levels, multiply=True)


def _args_forward(x: jax.Array, low: float, high: float, levels: tuple) -> tuple:
    return _args_value(x, low, high, levels), x


def _args_backward(low: float, high: float, levels: tuple, x: jax.Array, g: jax.Array) -> tuple:
    return (_args_gradient_impl(g, x, low, high, levels),)


_args_quantized = jax.custom_vjp(_args_value, nondiff_argnums=(1, 2, 3))
_args_quantized.defvjp(_args_forward, _args_backward)
_args_op = OpDef("FakeQuantWithMinMaxArgs", lambda x, low, high, levels: _args_quantized(x, low, high, levels), True)
_args_gradient_op = OpDef("FakeQuantWithMinMaxArgsGradient", _args_gradient_impl, False)


def _args_static(low: float, high: float, num_bits: int, narrow_range: bool, op_name: str) -> tuple:
    low32, high32 = float(np.float32(low)), float(np.float32(high))
    if not low32 < high32:
        raise errors.invalid_argument(f"min has to be smaller than max, was: {low32:g} >= {high32:g}", op_name)
    levels = _levels(num_bits, narrow_range, op_name)
    return (("high", high32), ("levels", levels), ("low", low32))


@table.export("quantization.fake_quant_with_min_max_args", gradient="custom", dtypes="float32", op=_args_op)
def fake_quant_with_min_max_args(
    inputs: TensorLike,
    min: float = -6,  # noqa: A002
    max: float = 6,  # noqa: A002
    num_bits: int = 8,
    narrow_range: bool = False,
    name: str | None = None,
) -> Tensor:
    """Fake-quantizes float32 `inputs` to `[min, max]` (nudged), as `tf.quantization.fake_quant_with_min_max_args`.

    Args:
      inputs: a float32 tensor.
      min: the range's low end, a Python number.
      max: the range's high end, a Python number above `min`.
      num_bits: the bit width, 2 to 16.
      narrow_range: use `2**num_bits - 1` levels (from 1) instead of `2**num_bits`.
      name: ignored.

    Returns:
      The quantized-then-dequantized float32 values.

    Raises:
      InvalidArgumentError: for `min >= max`, `num_bits` out of range, or a tensor of another dtype.
    """
    x = convert_to_tensor(inputs, dtype=dtypes.float32)
    return apply(_args_op, (x,), _args_static(min, max, num_bits, narrow_range, "FakeQuantWithMinMaxArgs"))[0]


@table.export("quantization.fake_quant_with_min_max_args_gradient", dtypes="float32", op=_args_gradient_op)
def fake_quant_with_min_max_args_gradient(
    gradients: TensorLike,
    inputs: TensorLike,
    min: float = -6,  # noqa: A002
    max: float = 6,  # noqa: A002
    num_bits: int = 8,
    narrow_range: bool = False,
    name: str | None = None,
) -> Tensor:
    """The gradient of `fake_quant_with_min_max_args`: `gradients` where `inputs` is in the nudged range, else 0.

    Args:
      gradients: the float32 upstream gradient.
      inputs: the float32 inputs of the quantization, of `gradients`' shape.
      min: the range's low end.
      max: the range's high end.
      num_bits: the bit width, 2 to 16.
      narrow_range: as in `fake_quant_with_min_max_args`.
      name: ignored.

    Returns:
      The float32 gradient with respect to `inputs`.

    Raises:
      InvalidArgumentError: for bad arguments, as `fake_quant_with_min_max_args`, or different shapes.
    """
    op_name = "FakeQuantWithMinMaxArgsGradient"
    g, x = _float_input(gradients, op_name), _float_input(inputs, op_name)
    if g._shape != x._shape:
        raise static_error("gradient and input must be the same size", op_name)
    return apply(_args_gradient_op, (g, x), _args_static(min, max, num_bits, narrow_range, op_name))[0]


def _vars_value(x: jax.Array, low: jax.Array, high: jax.Array, levels: tuple) -> jax.Array:
    both_zero = (low == 0) & (high == 0)
    quantized = _quantize(x, low, high, levels, multiply=False)
    return jnp.where(both_zero, jnp.zeros_like(x), quantized)


def _vars_gradient_impl(g: jax.Array, x: jax.Array, low: jax.Array, high: jax.Array, levels: tuple) -> tuple:
    both_zero = (low == 0) & (high == 0)
    nudged_min, nudged_max, _, _ = _nudge(low, high, *levels)
    inside = ((x >= nudged_min) & (x <= nudged_max)) | both_zero
    zero = jnp.zeros_like(g)
    below = jnp.where(both_zero, 0, jnp.sum(jnp.where(x < nudged_min, g, zero)))
    above = jnp.where(both_zero, 0, jnp.sum(jnp.where(x > nudged_max, g, zero)))
    return jnp.where(inside, g, zero), below.astype(g.dtype), above.astype(g.dtype)


def _vars_quantized(x: jax.Array, low: jax.Array, high: jax.Array, levels: tuple) -> jax.Array:
    return _vars_value(x, low, high, levels)


def _vars_forward(x: jax.Array, low: jax.Array, high: jax.Array, levels: tuple) -> tuple:
    return _vars_value(x, low, high, levels), (x, low, high)


def _vars_backward(levels: tuple, saved: tuple, g: jax.Array) -> tuple:
    x, low, high = saved
    return _vars_gradient_impl(g, x, low, high, levels)


_vars_quantized_vjp = jax.custom_vjp(_vars_quantized, nondiff_argnums=(3,))
_vars_quantized_vjp.defvjp(_vars_forward, _vars_backward)
_vars_op = OpDef(
    "FakeQuantWithMinMaxVars", lambda x, low, high, levels: _vars_quantized_vjp(x, low, high, levels), True
)
_vars_gradient_op = OpDef("FakeQuantWithMinMaxVarsGradient", _vars_gradient_impl, False)


def _range_tensors(low: Any, high: Any, op_name: str) -> tuple[Tensor, Tensor]:
    tensors = (_float_input(low, op_name), _float_input(high, op_name))
    for what, t in zip(("min", "max"), tensors):
        if t._shape:
            raise static_error(f"`{what}` must be rank 0 but is rank {len(t._shape)}", op_name)
    return tensors


@table.export("quantization.fake_quant_with_min_max_vars", gradient="custom", dtypes="float32", op=_vars_op)
def fake_quant_with_min_max_vars(
    inputs: TensorLike,
    min: TensorLike,  # noqa: A002
    max: TensorLike,  # noqa: A002
    num_bits: int = 8,
    narrow_range: bool = False,
    name: str | None = None,
) -> Tensor:
    """Fake-quantizes float32 `inputs` to the (nudged) range of scalar tensors `[min, max]`, as TF.

    `tf.quantization.fake_quant_with_min_max_vars`: `min` and `max` are tensors (variables when trained), and
    the gradient flows to them from the values outside the range. `min == max == 0` gives zeros.

    Args:
      inputs: a float32 tensor.
      min: the range's low end, a float32 scalar.
      max: the range's high end, a float32 scalar.
      num_bits: the bit width, 2 to 16.
      narrow_range: use `2**num_bits - 1` levels (from 1) instead of `2**num_bits`.
      name: ignored.

    Returns:
      The quantized-then-dequantized float32 values.

    Raises:
      InvalidArgumentError: for `num_bits` out of range, a `min` or `max` that is not a scalar, or a tensor of
        another dtype.
    """
    op_name = "FakeQuantWithMinMaxVars"
    x = _float_input(inputs, op_name)
    low, high = _range_tensors(min, max, op_name)
    levels = _levels(num_bits, narrow_range, op_name)
    return apply(_vars_op, (x, low, high), (("levels", levels),))[0]


class FakeQuantWithMinMaxVarsGradient(NamedTuple):
    """What `fake_quant_with_min_max_vars_gradient` returns, as TF's tuple."""

    backprops_wrt_input: Tensor
    backprop_wrt_min: Tensor
    backprop_wrt_max: Tensor


@table.export("quantization.fake_quant_with_min_max_vars_gradient", dtypes="float32", op=_vars_gradient_op)
def fake_quant_with_min_max_vars_gradient(
    gradients: TensorLike,
    inputs: TensorLike,
    min: TensorLike,  # noqa: A002
    max: TensorLike,  # noqa: A002
    num_bits: int = 8,
    narrow_range: bool = False,
    name: str | None = None,
) -> FakeQuantWithMinMaxVarsGradient:
    """The gradients of `fake_quant_with_min_max_vars` with respect to its inputs, `min` and `max`.

    Args:
      gradients: the float32 upstream gradient.
      inputs: the float32 inputs of the quantization, of `gradients`' shape.
      min: the range's low end, a float32 scalar.
      max: the range's high end, a float32 scalar.
      num_bits: the bit width, 2 to 16.
      narrow_range: as in `fake_quant_with_min_max_vars`.
      name: ignored.

    Returns:
      `(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max)`: `gradients` inside the nudged range (0
      outside), and the sums of `gradients` below and above it.

    Raises:
      InvalidArgumentError: for bad arguments, as `fake_quant_with_min_max_vars`, or different shapes.
    """
    op_name = "FakeQuantWithMinMaxVarsGradient"
    g, x = _float_input(gradients, op_name), _float_input(inputs, op_name)
    low, high = _range_tensors(min, max, op_name)
    levels = _levels(num_bits, narrow_range, op_name)
    if g._shape != x._shape:
        raise static_error("gradient and input must be the same size", op_name)
    return FakeQuantWithMinMaxVarsGradient(*apply(_vars_gradient_op, (g, x, low, high), (("levels", levels),)))
