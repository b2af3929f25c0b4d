"""The recorded graph as `explain` and the tape views see it: every op, recorded or not.

`replay.Plan` keeps only what `gradient` differentiates through. Explaining a
`None` needs more: the ops this tape did *not* record (an op without gradient
on a lazy tensor, an op under `stop_recording`), which are still nodes of the
lazy graph, and, when sites are kept, the eager ops that ran while the tape
recorded (their inputs and outputs are known by id).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from tapeshim._src import explain_hooks
from tapeshim._src.node import Node
from tapeshim._src.tensor import Tensor
from tapeshim._src.variable import Variable


class TapeState:
    """What a tape knew at its last `gradient` (or knows now): the attributes `diff.Request` reads."""

    __slots__ = ("_tracked", "_produced", "_var_reads", "_watched_vars", "_explicit_vars", "_watch_accessed", "nodes")

    def __init__(
        self,
        tracked: set,
        produced: set,
        var_reads: dict,
        watched_vars: dict,
        explicit_vars: set,
        watch_accessed: bool,
        nodes: dict | None = None,
    ) -> None:
        self.nodes = nodes or {}
        self._tracked = tracked
        self._produced = produced
        self._var_reads = var_reads
        self._watched_vars = watched_vars
        self._explicit_vars = explicit_vars
        self._watch_accessed = watch_accessed


def tape_state(tape: Any) -> TapeState:
    """The tape's own state, or the one remembered at its last `gradient` if it was used up."""
    snapshot = explain_hooks.log_of(tape).snapshot
    if getattr(tape, "_used", False) and snapshot is not None:
        return TapeState(
            snapshot.tracked,
            snapshot.produced,
            snapshot.var_reads,
            snapshot.watched_vars,
            snapshot.explicit_vars,
            snapshot.watch_accessed,
            snapshot.nodes,
        )
    return TapeState(
        tape._tracked,
        tape._produced,
        tape._var_reads,
        dict(tape._watched_vars),
        set(tape._explicit_vars),
        tape._watch_accessed,
    )


def op_name(node: Node) -> str:
    """TF's op type of a node (`"Mul"`), or a short description of a compound one."""
    op = node.op_type
    if op is not None:
        return "Gradient" if op == "program" else op
    return getattr(node.fn, "__name__", "Op")


def first_recording_tid(tape: Any) -> int | None:
    windows = explain_hooks.log_of(tape).windows
    return windows[0].start if windows else None


@contextlib.contextmanager
def nodes_restored(state: TapeState, tensors: Sequence[Any]) -> Iterator[None]:
    """Puts back the nodes of targets that were released after `gradient`, for as long as a view needs them."""
    restored = []
    for tensor in tensors:
        if isinstance(tensor, Tensor) and tensor._node is None and tensor._tid in state.nodes:
            tensor._node = state.nodes[tensor._tid]
            restored.append(tensor)
    try:
        yield
    finally:
        for tensor in restored:
            tensor._node = None


def node_of(tensor: Tensor, state: TapeState) -> Any:
    """The tensor's node, or the one the tape remembered for a target whose node was released."""
    node = tensor._node
    return node if node is not None else state.nodes.get(tensor._tid)


def expand_all(roots: Sequence[Tensor], state: TapeState, since: int | None) -> dict[int, Tensor]:
    """Tensors reachable from `roots` through lazy nodes, recorded nodes and nodes made since `since`."""
    found: dict[int, Tensor] = {}
    stack = list(roots)
    while stack:
        tensor = stack.pop()
        if tensor._tid in found:
            continue
        found[tensor._tid] = tensor
        if expandable(tensor, state, since):
            stack.extend(node_of(tensor, state).inputs)
    return found


def expandable(tensor: Tensor, state: TapeState, since: int | None) -> bool:
    node = node_of(tensor, state)
    if node is None:
        return False
    tid = tensor._tid
    return tensor._value is None or tid in state._produced or (since is not None and tid >= since)


class Graph:
    """The slice of the lazy graph from some targets, recorded or not, in topological order.

    Attributes:
      tensors: tensor id -> tensor for every tensor of the slice.
      nodes: `(node, output tensors present)` in creation order.
      leaves: tensors of the slice without an expanded node.
    """

    def __init__(self, roots: Sequence[Tensor], state: TapeState, since: int | None) -> None:
        self.state = state
        self.tensors = expand_all(roots, state, since)
        self.nodes: list[Any] = []
        seen: set[int] = set()
        self.leaves: list[Tensor] = []
        for tid in sorted(self.tensors):
            tensor = self.tensors[tid]
            if expandable(tensor, state, since):
                node = node_of(tensor, state)
                if id(node) not in seen:
                    seen.add(id(node))
                    self.nodes.append(node)
            else:
                self.leaves.append(tensor)

    def recorded(self, node: Any) -> bool:
        return any(t in self.state._produced for t in node.out_tids)

    def downstream(self, start: set[int], extra: Sequence[tuple] = ()) -> set[int]:
        """Ids reachable forward from `start` through any node (and `(out_tid, input tids)` extras)."""
        reached = set(start)
        edges = [(node.out_tids, tuple(t._tid for t in node.inputs)) for node in self.nodes]
        edges += [((out,), ins) for out, ins in extra]
        edges.sort(key=lambda e: e[0][0])
        for outs, ins in edges:
            if any(t in reached for t in ins):
                reached.update(outs)
        return reached

    def upstream(self, roots: Sequence[int], extra: Sequence[tuple] = ()) -> set[int]:
        """Ids from which one of `roots` is reachable through any node (and `(out_tid, input tids)` extras)."""
        reached = set(roots)
        edges = [(node.out_tids, tuple(t._tid for t in node.inputs)) for node in self.nodes]
        edges += [((out,), ins) for out, ins in extra]
        edges.sort(key=lambda e: e[0][0], reverse=True)
        for outs, ins in edges:
            if any(t in reached for t in outs):
                reached.update(ins)
        return reached


def source_label(source: Any, names: dict[int, str] | None = None) -> str:
    """How a source is named in explanations: `Variable 'w:0'` or `Tensor float32[3]`."""
    if names and id(source) in names:
        return names[id(source)]
    shape = "[" + ",".join(str(d) for d in source._shape) + "]"
    if isinstance(source, Variable):
        return f"tf.Variable '{source._name}' ({source._dtype.name}{shape})"
    return f"tf.Tensor {source._dtype.name}{shape}"


def occurrences(state: TapeState, source: Any) -> list[int]:
    """Ids where the tape sees `source`: its own id, or each watched read of a variable."""
    if isinstance(source, Variable):
        return list(state._var_reads.get(id(source), ()))
    return [source._tid]
