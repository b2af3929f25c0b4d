"""`tf.bitwise`: and, or, xor, invert and shifts of integer tensors (`jnp` / `lax`), no gradient."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import lax

from tapeshim._src.ops import table
from tapeshim._src.ops.common import broadcast_check, checks, convert_same_dtype, dtype_check
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

INTEGER = "integer"


def _clamped_shift(shift: Any, x: Any) -> Any:
    """TF's kernels clamp the shift to [0, bits - 1]."""
    bits = jnp.iinfo(x.dtype).bits
    return jnp.clip(shift, 0, bits - 1).astype(x.dtype)


def _binary(public: str, op_name: str, impl: Any) -> Any:
    op = OpDef(op_name, impl, False, checks(dtype_check(op_name, "iu"), broadcast_check(op_name)))

    def fn(x: Any, y: Any, name: str | None = None) -> Tensor:
        return apply(op, tuple(convert_same_dtype((x, y), op_name)))[0]

    fn.__name__ = fn.__qualname__ = public
    fn.__doc__ = f"Elementwise `tf.bitwise.{public}` of two integer tensors of one dtype (broadcasting)."
    return table.export(f"bitwise.{public}", gradient="-", dtypes=INTEGER, op=op)(ragged_dispatch("x", "y")(fn))


bitwise_and = _binary("bitwise_and", "BitwiseAnd", jnp.bitwise_and)
bitwise_or = _binary("bitwise_or", "BitwiseOr", jnp.bitwise_or)
bitwise_xor = _binary("bitwise_xor", "BitwiseXor", jnp.bitwise_xor)
left_shift = _binary("left_shift", "LeftShift", lambda x, y: lax.shift_left(x, _clamped_shift(y, x)))
right_shift = _binary(
    "right_shift",
    "RightShift",
    lambda x, y: (
        lax.shift_right_logical(x, _clamped_shift(y, x))
        if jnp.issubdtype(x.dtype, jnp.unsignedinteger)
        else lax.shift_right_arithmetic(x, _clamped_shift(y, x))
    ),
)

_invert_op = OpDef("Invert", jnp.invert, False, dtype_check("Invert", "iu"))


@table.export("bitwise.invert", gradient="-", dtypes=INTEGER, op=_invert_op)
@ragged_dispatch()
def invert(x: TensorLike, name: str | None = None) -> Tensor:
    """Flips every bit of an integer tensor, as `tf.bitwise.invert`."""
    return apply(_invert_op, (convert_to_tensor(x),))[0]
