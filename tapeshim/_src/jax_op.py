"""JAX functions as tapeshim ops (`tapeshim.experimental.jax_op`)."""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax

from tapeshim._src import registry
from tapeshim._src.registry import OpDef
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def jax_op(fn: Callable[..., Any], name: str | None = None, differentiable: bool = True) -> Callable[..., Any]:
    """Makes a JAX function a tapeshim op: recorded by tapes, differentiated by JAX.

    The returned function takes tensors (or values convertible to them), runs
    `fn` on their `jax.Array`s through the same dispatch path as every built-in
    op (abstract evaluation, lazy recording inside tapes, jitted kernels
    outside), and returns a Tensor, or a tuple of Tensors if `fn` returns a tuple.

    Args:
      fn: a JAX function of arrays, returning an array or a tuple of arrays.
      name: the op's name in error messages and cache keys (default: `fn`'s name).
      differentiable: False to make gradients through the op `None`, as for
        TF ops without a gradient.

    Returns:
      The tape-aware op.
    """
    op = OpDef(name or str(getattr(fn, "__name__", "JaxOp")), fn, differentiable, user_code=True)
    returns_tuple: dict[tuple, bool] = {}

    @functools.wraps(fn)
    def call(*args: TensorLike) -> Tensor | tuple[Tensor, ...]:
        tensors = tuple(convert_to_tensor(a) for a in args)
        outputs = registry.apply(op, tensors)
        key = tuple((t._shape, t._dtype._name) for t in tensors)
        if key not in returns_tuple:
            structs = [jax.ShapeDtypeStruct(t._shape, t._dtype._np) for t in tensors]
            returns_tuple[key] = isinstance(jax.eval_shape(fn, *structs), tuple)
        return outputs if returns_tuple[key] else outputs[0]

    return call
