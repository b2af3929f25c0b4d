"""The steps of a replay plan (`replay.Plan.steps`): named records, in topological order.

A plan reads its leaves (`LeafStep`) and runs recorded nodes (`NodeStep`) in
the order of their steps; every value lives in a numbered *slot* while the plan
runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Callable, Collection, Hashable, Sequence, Union

from tapeshim._src.node import op_type_of

if TYPE_CHECKING:
    from tapeshim._src.tensor import Tensor  # (only for the annotations)


class LeafStep:
    """A plan's step that reads a leaf: program argument `index` goes to `slot`.

    Attributes:
      slot: where the value lives while the plan runs.
      index: the leaf's position in `Plan.leaves` (the program's arguments).
      occ: the indices of the sources occurring at this leaf.
    """

    __slots__ = ("slot", "index", "occ")

    def __init__(self, slot: int, index: int, occ: tuple[int, ...]) -> None:
        self.slot = slot
        self.index = index
        self.occ = occ


class NodeStep:
    """A plan's step that runs one recorded node.

    Attributes:
      fn: the node's function, `fn(*arrays) -> tuple of arrays`.
      key: the node's identity (its `OpKey`: op type and static arguments).
      in_slots: the slots of its inputs.
      out_slots: the slots its outputs go to.
      tracked: whether the differentiating recorder recorded the node (its
        outputs are in the recorder's `_produced`); untracked nodes are
        constants to it.
      occs: per output, the indices of the sources occurring there.
      deps: per output, the input positions it depends on (`Node.deps`);
        None for every input.
    """

    __slots__ = ("fn", "key", "in_slots", "out_slots", "tracked", "occs", "deps")

    def __init__(
        self,
        fn: Callable[..., tuple],
        key: Hashable,
        in_slots: tuple[int, ...],
        out_slots: tuple[int, ...],
        tracked: bool,
        occs: tuple[tuple[int, ...], ...],
        deps: Sequence[Collection[int]] | None,
    ) -> None:
        self.fn = fn
        self.key = key
        self.in_slots = in_slots
        self.out_slots = out_slots
        self.tracked = tracked
        self.occs = occs
        self.deps = deps

    @property
    def op_type(self) -> str | None:
        """The node's TF op type (`"GatherV2"`), None for a key that names none."""
        return op_type_of(self.key)


Step = Union[LeafStep, NodeStep]


def trace_backwards(steps: Sequence[Step], targets: Sequence[Tensor], produced: AbstractSet[int]) -> None:
    """Lets each node of `steps` that traces its backward before a gradient's own trace (a `tf.custom_gradient`'s:
    `custom_gradient._CustomGradientCall.trace_backward`) do so, fresh, for a new gradient program of `targets`:
    only the nodes a cotangent reaches, through outputs the differentiating recorder `produced` and of trainable
    dtypes (JAX calls no backward rule that gets none, so `grad_fn` runs for no other; TF calls none whose
    upstream gradients are all None). An op whose gradient is a zero (`tf.sign`) passes one on, and TF runs
    `grad_fn` with it, where JAX's symbolic zero skipped it."""
    hooks = {}
    for step in steps:
        if type(step) is NodeStep and step.tracked:
            trace_backward = getattr(step.fn, "trace_backward", None)
            if trace_backward is not None:
                hooks[id(step.fn)] = trace_backward
    if not hooks:
        return
    reached: set[int] = set()
    seen: set[int] = set()
    stack = [t for t in targets if t._dtype._trainable]
    while stack:
        tensor = stack.pop()
        if tensor._tid in seen:
            continue
        seen.add(tensor._tid)
        node = tensor._node
        if node is None or tensor._tid not in produced:
            continue
        reached.add(id(node.fn))
        stack.extend(t for t in node.inputs if t._dtype._trainable)
    for fn_id, trace_backward in reversed(hooks.items()):  # (in the order the program's backward pass runs them)
        if fn_id in reached:
            trace_backward(fresh=True)
