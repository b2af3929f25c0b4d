"""Broadcasting sizes only a call knows, in a trace for every size (`function_symbolic`), as TF's graph does.

TF's graph broadcasts `x + y` of shapes `(None, 8)` and `(1, None, 8)` and checks the sizes when
it runs (`Incompatible shapes: [4,8] vs. [1,51,8]`). JAX's shape rules refuse symbolic dimensions
they cannot prove equal: `n - 1` against `min(50, n - 1)`, the rows of a fixed table sliced to a
sequence's length (`pos_encoding[:, :seq_len, :]`, TF's transformer tutorial). `aligned` gives the
clamped operand the plain size, with a runtime check that the sizes agree (TF's
`InvalidArgumentError` and message when they do not), so the trace stays one for every size.
"""

from __future__ import annotations

import ast
from typing import Any

import jax
import jax.numpy as jnp

from tapeshim._src import registry, runtime_checks, symbolic_dims
from tapeshim._src.tensor import Tensor


def _clamps(clamped: Any, plain: Any) -> bool:
    """Whether `clamped` is `min(C, plain)` for a constant C of at least 2 (a slice of C rows to `plain` rows):
    the two are equal, or neither is 1 (so TF would not broadcast them) and they do not match."""
    if not (symbolic_dims.is_symbolic(clamped) and symbolic_dims.is_symbolic(plain)):
        return False
    node = symbolic_dims.parsed(clamped)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "min"):
        return False
    if len(node.args) != 2:
        return False
    target = ast.dump(symbolic_dims.parsed(plain))
    for constant, other in (node.args, node.args[::-1]):
        if isinstance(constant, ast.Constant) and isinstance(constant.value, int) and constant.value >= 2:
            return ast.dump(other) == target
    return False


def _aligned_impl(x: jax.Array, *, axis: int, size: Any, message: str, fields: tuple) -> jax.Array:
    runtime_checks.require(
        jnp.asarray(x.shape[axis]) == jnp.asarray(size), message, **{name: jnp.asarray(d) for name, d in fields}
    )
    return runtime_checks.with_size(x, axis, size)


_ALIGNED = registry.OpDef("BroadcastSizes", _aligned_impl)


def aligned(operands: tuple[Tensor, ...], op_name: str) -> tuple[Tensor, ...]:
    """`operands` of a broadcasting binary op, each dimension JAX cannot prove equal to the other's (neither
    being 1) given the other's size, with a runtime check; the operands unchanged where there is none."""
    x, y = operands
    sx, sy = tuple(x._shape), tuple(y._shape)
    if all(d.__class__ is int for d in sx + sy):
        return operands
    rank = max(len(sx), len(sy))
    changes: list = []
    for axis in range(-rank, 0):
        if -axis > len(sx) or -axis > len(sy):
            continue
        a, b = sx[axis], sy[axis]
        # Only a clamped size (`min(50, n - 1)`) against its plain one: other sizes may differ by a size 1 that
        # TF's graph broadcasts when it runs (JAX refuses them, and the function is traced per shape).
        if _clamps(a, b) or _clamps(b, a):
            changes.append((axis, a, b))
    if not changes:
        return operands
    left, left_fields = runtime_checks.shape_fields(sx, "x")
    right, right_fields = runtime_checks.shape_fields(sy, "y")
    message = f"Incompatible shapes: [{left}] vs. [{right}] [Op:{op_name}]"
    fields = tuple({**left_fields, **right_fields}.items())
    for axis, a, b in changes:
        if _clamps(b, a):  # y takes x's size
            y = registry.apply(
                _ALIGNED, (y,), (("axis", len(sy) + axis), ("size", a), ("message", message), ("fields", fields))
            )[0]
        else:
            x = registry.apply(
                _ALIGNED, (x,), (("axis", len(sx) + axis), ("size", b), ("message", message), ("fields", fields))
            )[0]
    return x, y
