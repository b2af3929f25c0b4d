"""A read-only view of a traced `tapeshim.function` as TF's `FuncGraph` (`concrete_function.graph`).

The trace is tapeshim's lazy graph, not a TF graph; this view names its nodes as
TF would (a `Placeholder` per argument, named after it; an op per recorded op,
typed by its TF op name; an `Identity` per output; `ReadVariableOp` and
`AssignVariableOp` for variables), so `get_operations()` and
`as_graph_def().node` can be inspected. Names and op counts need not match TF's
graph exactly (TF may split one op into several).
"""

from __future__ import annotations

from typing import Any

from tapeshim._src.node import Node
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor


class GraphTensor:
    """One output of a graph operation: its `name` (`"op:0"`), shape and dtype."""

    def __init__(self, op: "Operation", index: int, shape: Any, dtype: Any) -> None:
        self.op = op
        self.value_index = index
        self.shape = TensorShape(shape)
        self.dtype = dtype

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    def __repr__(self) -> str:
        dtype = getattr(self.dtype, "name", self.dtype)
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={dtype}>"


class Operation:
    """One node of the graph: `name`, `type`, `inputs` and `outputs`."""

    def __init__(self, name: str, op_type: str, inputs: list[GraphTensor]) -> None:
        self.name = name
        self.type = op_type
        self.inputs = inputs
        self.outputs: list[GraphTensor] = []

    def __repr__(self) -> str:
        return f"<tf.Operation '{self.name}' type={self.type}>"


class NodeDef:
    """A GraphDef node: `name`, `op` and `input` (the input tensors' names, `"op"` for output 0)."""

    def __init__(self, operation: Operation) -> None:
        self.name = operation.name
        self.op = operation.type
        self.input = [t.op.name if t.value_index == 0 else t.name for t in operation.inputs]

    def __repr__(self) -> str:
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"


class GraphDef:
    """The graph's nodes in topological order (`node`)."""

    def __init__(self, operations: list[Operation]) -> None:
        self.node = [NodeDef(op) for op in operations]


def _op_type(node: Node) -> str:
    """The node's TF op type; a node whose key names none is a function call."""
    return node.op_type or "PartitionedCall"


class FuncGraph:
    """The traced graph of one concrete function.

    Args:
      trace: the `FunctionTrace` that recorded it.
      outputs: the function's output tensors.
      assignments: `(variable, new value)` pairs the function writes back.
      effects: effect tensors (`tf.print`).
      leaves: the program's leaf tensors (arguments, variable reads, captures).
      name: the function's name.
    """

    def __init__(
        self,
        trace: Any,
        outputs: list[Tensor],
        assignments: list[tuple],
        effects: list[Tensor],
        leaves: list[Tensor],
        name: str,
    ) -> None:
        self.name = f"{name}"
        self._operations: list[Operation] = []
        self._names: dict[str, int] = {}
        leaf_ids = {t._tid for t in leaves}
        produced: dict[int, GraphTensor] = {}
        found: dict[int, Tensor] = {}
        stack = list(outputs) + [t for _, t in assignments] + list(effects)
        while stack:
            tensor = stack.pop()
            if tensor._tid in found:
                continue
            found[tensor._tid] = tensor
            if tensor._tid not in leaf_ids and tensor._node is not None:
                stack.extend(tensor._node.inputs)
        self.inputs: list[GraphTensor] = []
        variable_handles: dict[int, GraphTensor] = {}
        host_feeds = trace.host_inputs.feed_of
        for tid in sorted(found):
            if tid in produced:
                continue
            tensor = found[tid]
            if tid in leaf_ids or tensor._node is None:
                produced[tid] = self._leaf(trace, tensor, host_feeds, variable_handles)
                continue
            node = tensor._node
            op = self._add(_op_type(node), _op_type(node), [produced[t._tid] for t in node.inputs])
            for index, out_tid in enumerate(node.out_tids):
                out = found.get(out_tid)
                shape, dtype = (out._shape, out._dtype) if out is not None else (tensor._shape, tensor._dtype)
                produced[out_tid] = self._output(op, index, shape, dtype)
        self.outputs = []
        for tensor in outputs:
            op = self._add("Identity", "Identity", [produced[tensor._tid]])
            self.outputs.append(self._output(op, 0, tensor._shape, tensor._dtype))
        for variable, tensor in assignments:
            handle = variable_handles.get(id(variable)) or self._handle(variable, variable_handles)
            self._add("AssignVariableOp", "AssignVariableOp", [handle, produced[tensor._tid]])

    def _unique(self, base: str) -> str:
        count = self._names.get(base, 0)
        self._names[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def _add(self, base: str, op_type: str, inputs: list[GraphTensor]) -> Operation:
        op = Operation(self._unique(base), op_type, inputs)
        self._operations.append(op)
        return op

    def _output(self, op: Operation, index: int, shape: Any, dtype: Any) -> GraphTensor:
        tensor = GraphTensor(op, index, shape, dtype)
        op.outputs.append(tensor)
        return tensor

    def _handle(self, variable: Any, handles: dict) -> GraphTensor:
        op = self._add("ReadVariableOp/resource", "Placeholder", [])
        handle = self._output(op, 0, (), "resource")
        handles[id(variable)] = handle
        self.inputs.append(handle)
        return handle

    def _leaf(self, trace: Any, tensor: Tensor, host_feeds: dict, handles: dict) -> GraphTensor:
        tid = tensor._tid
        if tid in trace.var_leaves:
            variable = trace.var_leaves[tid]
            handle = handles.get(id(variable)) or self._handle(variable, handles)
            op = self._add("ReadVariableOp", "ReadVariableOp", [handle])
        elif tid in host_feeds:
            op = self._add("IteratorGetNext", "IteratorGetNext", [])
        elif tid in trace.placeholders:
            op = self._add(trace.placeholder_name(tid), "Placeholder", [])
            out = self._output(op, 0, tensor._shape, tensor._dtype)
            self.inputs.append(out)
            return out
        elif tid < trace.first_tid:  # a tensor captured from outside the function
            op = self._add("Placeholder", "Placeholder", [])
            out = self._output(op, 0, tensor._shape, tensor._dtype)
            self.inputs.append(out)
            return out
        else:
            op = self._add("Const", "Const", [])
        return self._output(op, 0, tensor._shape, tensor._dtype)

    def get_operations(self) -> list[Operation]:
        """The graph's operations in topological order."""
        return list(self._operations)

    def as_graph_def(self, add_shapes: bool = False) -> GraphDef:
        """A GraphDef-like view: `.node`, each with `name`, `op` and `input`."""
        return GraphDef(self._operations)

    def get_operation_by_name(self, name: str) -> Operation:
        """The operation called `name`; `KeyError` when there is none."""
        for op in self._operations:
            if op.name == name:
                return op
        raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")

    def __repr__(self) -> str:
        return f"<FuncGraph {self.name}: {len(self._operations)} operations>"
