"""Shape arithmetic on symbolic sizes: `tf.shape(x)[0] * 2` as a dimension in a trace for every size.

In a `tapeshim.function` traced once for every size (`function_symbolic`),
`tf.shape(x)` is an op whose value is known only on a call. TF code still uses
it (and arithmetic on it) where a shape is expected: `tf.reshape(x, [n, -1])`,
`tf.zeros([n, units])`, `tf.random.normal(tf.shape(x))`. TF's graph takes a
dynamic shape there; XLA needs a static one, which a symbolic dimension is.

`value_of` finds such a tensor's value as symbolic dimensions: it evaluates the
small graph from the `Shape`/`Size` ops to the tensor at several sizes of the
symbols (large and small ones, each symbol moved alone) and keeps the result
only where every element is the same affine function of the symbols at every
size tried (`2*_batch + 1`), through selections and integer additions and
products only (`_AFFINE_OPS`). A `FloorDiv` or `FloorMod` by a positive constant
(`tf.shape(x)[:2] // 2`) is a JAX dimension too (`floordiv(_d0, 2)`): its value is
found the same way, and the graph above it is probed with each of its elements as a
symbol of its own (`_QUOTIENT_OPS`). Anything else (a `minimum` with a constant, a
division of two sizes, a value read from data) gives None, and the function is traced
with concrete sizes instead.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import numpy as np
from jax import export

from tapeshim._src import static_value, symbolic_dims
from tapeshim._src.tensor import Tensor

if TYPE_CHECKING:
    from tapeshim._src.function_trace import FunctionTrace

_SHAPE_OPS = ("Shape", "Size")
_AFFINE_OPS = frozenset(
    ("StridedSlice", "Pack", "ConcatV2", "Identity", "Reshape", "ExpandDims", "Squeeze", "AddV2", "Add", "Sub", "Neg",
     "Mul", "Cast")
)  # fmt: skip
"""The ops shape arithmetic may use: each picks elements or is exactly affine in integers (`Mul` of two sizes
is not, and the checks at other sizes reject it). `Maximum`, `Minimum`, `FloorDiv` and comparisons are
piecewise: probes cannot see all their pieces, so they are not folded."""
_QUOTIENT_OPS = {"FloorDiv": lambda a, b: a // int(b), "FloorMod": lambda a, b: a % int(b)}
"""Ops whose value, by a positive constant, is a dimension expression of the numerator's (`floordiv(n, 2)`)."""
_MAX_NODES = 64  # shape arithmetic is small: a larger graph is not one
_BASE, _MOVED = 1009, 2003
"""The sizes every symbol takes at the base probe, and the one symbol moved at a time."""


def value_of(tensor: Tensor, trace: FunctionTrace) -> np.ndarray | None:
    """`tensor`'s value as an object array of ints and symbolic dimensions, or None (see the module
    docstring). `tensor` must be a small integer tensor computed from `Shape`/`Size` ops and constants."""
    if tensor._dtype._np.kind not in "iu" or any(d.__class__ is not int for d in tensor._shape):
        return None
    graph = _graph(tensor, trace)
    if graph is None:
        return None
    nodes, shape_inputs = graph
    symbols = _symbols(shape_inputs)
    for tid, (op_type, numerator, extra) in list(shape_inputs.items()):
        if op_type not in _QUOTIENT_OPS:
            continue
        divisor, dtype = extra
        atoms = _quotient(op_type, numerator, divisor, trace)
        if atoms is None:
            return None
        shape_inputs[tid] = (op_type, atoms, dtype)
        for k, atom in enumerate(atoms.reshape(-1)):
            if symbolic_dims.is_symbolic(atom):
                symbols[f"{_ATOM}{tid}_{k}"] = atom
    if not symbols:
        return None
    names = sorted(symbols)
    base = _evaluate(tensor, nodes, shape_inputs, dict.fromkeys(names, _BASE))
    if base is None:
        return None
    shape, base_values = base.shape, [int(v) for v in base.reshape(-1)]
    coefficients: dict[str, list[int]] = {}
    for name in names:
        moved = _evaluate(tensor, nodes, shape_inputs, {**dict.fromkeys(names, _BASE), name: _MOVED})
        if moved is None:
            return None
        changes = [int(m) - b for m, b in zip(moved.reshape(-1), base_values)]
        if any(change % (_MOVED - _BASE) for change in changes):
            return None
        coefficients[name] = [change // (_MOVED - _BASE) for change in changes]
    constants = [b - sum(coefficients[name][k] * _BASE for name in names) for k, b in enumerate(base_values)]
    for sizes in ({n: 2 + k for k, n in enumerate(names)}, {n: 3011 + 7 * k for k, n in enumerate(names)}):
        value = _evaluate(tensor, nodes, shape_inputs, sizes)
        expected = [c + sum(coefficients[name][k] * sizes[name] for name in names) for k, c in enumerate(constants)]
        if value is None or [int(v) for v in value.reshape(-1)] != expected:
            return None
    elements = []
    for k, constant in enumerate(constants):
        element: Any = constant
        for name in names:
            if coefficients[name][k]:
                element = element + coefficients[name][k] * symbols[name]
        elements.append(_simplified(element))
    result = np.empty(len(elements), dtype=object)
    result[:] = elements
    return result.reshape(shape)


_ATOM = "__quotient"  # (the names quotients' elements take while probing: no symbol of a trace starts so)


def _quotient(op_type: str, numerator: Tensor, divisor: np.ndarray, trace: FunctionTrace) -> np.ndarray | None:
    """The value of `numerator // divisor` (or `%`) as an object array of ints and symbolic dimensions."""
    value = value_of(numerator, trace)
    if value is None:
        return None
    try:
        quotients = np.vectorize(_QUOTIENT_OPS[op_type], otypes=[object])(value, np.broadcast_to(divisor, value.shape))
    except Exception:  # noqa: BLE001 - JAX refusing the expression: not shape arithmetic
        return None
    return np.vectorize(_simplified, otypes=[object])(quotients)


def _simplified(value: Any) -> Any:
    """A plain int where the expression is constant."""
    try:
        return int(value)
    except Exception:  # noqa: BLE001 - JAX's error for a dimension that is not a constant
        return value


def _graph(tensor: Tensor, trace: FunctionTrace) -> tuple[list, dict] | None:
    """`(nodes in order, Shape/Size op output id -> (op type, the measured tensor, dtype))` of the graph from
    the shape ops to `tensor`, or None where anything else (a placeholder, a lazy leaf, a value of symbolic
    shape) feeds it."""
    nodes: dict[int, Any] = {}
    shape_inputs: dict[int, tuple[str, Any, Any]] = {}

    def visit(current: Tensor) -> bool | None:
        node = current._node
        if current._tid in trace.placeholders or (node is None and current._value is None):
            return None
        if node is None:
            return False  # a constant
        if len(nodes) + len(shape_inputs) >= _MAX_NODES or any(d.__class__ is not int for d in current._shape):
            return None  # only small static-shaped values are shape arithmetic
        if node.op_type in _SHAPE_OPS:
            shape_inputs[current._tid] = (node.op_type, node.inputs[0], current._dtype._np)
            return False
        divisor = _divisor(node) if node.op_type in _QUOTIENT_OPS else None
        if divisor is not None:
            shape_inputs[current._tid] = (str(node.op_type), node.inputs[0], (divisor, current._dtype._np))
            return False
        if node.op_type not in _AFFINE_OPS or current._dtype._np.kind not in "iu":
            return None
        nodes[node.out_tids[0]] = node
        return True

    if not static_value.walk(tensor, visit):
        return None
    return [nodes[k] for k in sorted(nodes)], shape_inputs


def _divisor(node: Any) -> np.ndarray | None:
    """A `FloorDiv`/`FloorMod` node's divisor where it is a positive integer constant (ints), else None."""
    numerator, divisor = node.inputs
    if divisor._node is not None or divisor._value is None or numerator._dtype._np.kind not in "iu":
        return None
    value = np.asarray(divisor._value)
    if value.dtype.kind not in "iu" or value.size == 0 or (value <= 0).any():
        return None
    return value.astype(np.int64)


def _symbols(shape_inputs: dict) -> dict[str, Any]:
    """The symbols in the measured tensors' shapes, each as a symbolic dimension of their scope."""
    symbols: dict[str, Any] = {}
    for op_type, measured, _ in shape_inputs.values():
        if op_type in _QUOTIENT_OPS:
            continue
        for dim in measured._shape:
            if not symbolic_dims.is_symbolic(dim):
                continue
            for name in {n.id for n in ast.walk(symbolic_dims.parsed(dim)) if isinstance(n, ast.Name)}:
                if name not in symbolic_dims.FUNCTIONS and name not in symbols:
                    symbols[name] = export.symbolic_shape(name, scope=dim.scope)[0]
    return symbols


def _evaluate(tensor: Tensor, nodes: list, shape_inputs: dict, sizes: dict[str, int]) -> np.ndarray | None:
    """The graph's value for `tensor` where the symbols have `sizes` (None where it cannot be computed)."""
    values: dict[int, Any] = {}
    resolve = symbolic_dims.resolver(sizes)
    try:
        for tid, (op_type, measured, dtype) in shape_inputs.items():
            if op_type in _QUOTIENT_OPS:  # (each symbolic element probed as a symbol of its own)
                atoms = [a if a.__class__ is int else sizes[f"{_ATOM}{tid}_{k}"] for k, a in enumerate(measured.flat)]
                values[tid] = np.asarray(atoms, dtype).reshape(measured.shape)
                continue
            shape = resolve(tuple(measured._shape))
            values[tid] = np.asarray(shape if op_type == "Shape" else int(np.prod(shape)), dtype)
        for node in nodes:
            inputs = [values[t._tid] if t._tid in values else np.asarray(t._value) for t in node.inputs]
            outputs = node.fn(*inputs)
            for tid, output in zip(node.out_tids, outputs):
                values[tid] = np.asarray(output)
        return values[tensor._tid]
    except Exception:  # noqa: BLE001 - an op that cannot run on these values: not shape arithmetic
        return None
