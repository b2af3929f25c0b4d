"""Symbolic dimensions (`jax.export.symbolic_shape`) given sizes: what a trace for every size computes at one.

A `tapeshim.function` traced once for every size (`function_symbolic`) holds
dimensions such as `_batch` or `2*_batch + 1` in its jaxpr's shapes and
parameters. To compute it on the host for one call (`interpret.BoundTemplate`),
each is evaluated with the call's sizes. JAX writes a dimension as a small
arithmetic expression (`floordiv(_batch - 1, 2) + 1`, `max(_d0, 1)`); it is
parsed with `ast` and evaluated over integers only.
"""

from __future__ import annotations

import ast
import functools
import operator
from typing import Any, Callable

from jax import export

_BINARY: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,  # JAX writes a power as `^` (`2*_d0^2`), read as Python's `**` (`_parsed`)
}
FUNCTIONS: dict[str, Callable[..., int]] = {
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "max": max,
    "min": min,
    "non_negative": lambda value: max(value, 0),
}


class Unresolved(ValueError):
    """A dimension whose expression this evaluator does not know (the caller computes otherwise)."""


def is_symbolic(value: Any) -> bool:
    """Whether `value` is a symbolic dimension."""
    return value.__class__ is not int and hasattr(value, "dimension_as_value")


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> ast.expr:
    # JAX's `^` is a power, which binds tighter than `*` and `+`; Python's `^` (an exclusive or) binds looser:
    # `2*_d0^2` is `2*(_d0**2)`, not `(2*_d0)**2`
    return ast.parse(text.replace("^", "**"), mode="eval").body


@functools.lru_cache(maxsize=4096)
def parsed(dim: Any) -> ast.expr:
    """The expression JAX writes for a symbolic dimension (`min(50, _d0 - 1)`), parsed (cached per dimension:
    a kernel family's dimensions are resolved at every call of a new size, and writing one costs more than
    evaluating it)."""
    return _parsed(str(dim))


def evaluate(dim: Any, sizes: dict[str, int]) -> int:
    """The size of the symbolic dimension `dim` where its symbols have `sizes`.

    Raises:
      Unresolved: for an expression outside integer arithmetic and `floordiv`, `mod`, `max`, `min`.
    """
    return _evaluate(parsed(dim), sizes)


def _evaluate(node: ast.expr, sizes: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in sizes:
            raise Unresolved(node.id)
        return sizes[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left, sizes), _evaluate(node.right, sizes))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, sizes)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
        return FUNCTIONS[node.func.id](*(_evaluate(arg, sizes) for arg in node.args))
    raise Unresolved(ast.dump(node))


def resolver(sizes: dict[str, int]) -> Callable[[Any], Any]:
    """`resolve(value)`: `value` with every symbolic dimension in it (in tuples and lists too) evaluated."""

    # A program's parameters repeat a few dimensions many times. Keyed by identity, which costs no hash of the
    # expression and no comparison of two equal ones; each entry holds its dimension, so no id is reused.
    evaluated: dict[int, tuple[Any, int]] = {}

    def resolve(value: Any) -> Any:
        if value.__class__ is int:
            return value
        if is_symbolic(value):
            entry = evaluated.get(id(value))
            if entry is None:
                entry = evaluated[id(value)] = (value, evaluate(value, sizes))
            return entry[1]
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(resolve(v) for v in value)
        if isinstance(value, list):
            return [resolve(v) for v in value]
        return value

    return resolve


def sizes_of(symbolic_shapes: list[tuple], shapes: list[tuple]) -> dict[str, int] | None:
    """The sizes of the symbols that name whole dimensions of `symbolic_shapes`, from the concrete `shapes`
    (None when a symbol would take two sizes)."""
    sizes: dict[str, int] = {}
    for symbolic, concrete in zip(symbolic_shapes, shapes):
        for dim, size in zip(symbolic, concrete):
            if not is_symbolic(dim):
                continue
            name = str(dim)
            if not name.isidentifier():
                continue
            if sizes.setdefault(name, size) != size:
                return None
    return sizes


def at_least_zero(dim: Any) -> Any:
    """`dim`, or `max(0, dim)` where JAX cannot prove a symbolic dimension non-negative (`n - 3`, a size TF's
    kernel checks when it runs): shape rules then accept it, and the program's runtime check of `dim >= 0`
    (`runtime_checks.require`) makes the clamp change no valid size."""
    if not is_symbolic(dim):
        return dim
    try:
        if dim >= 0:
            return dim
    except Exception:  # noqa: BLE001 - JAX's InconclusiveDimensionOperation (not in its public API)
        pass
    return export.symbolic_shape(f"max(0, {dim})", scope=dim.scope)[0]
