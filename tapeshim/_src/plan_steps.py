"""The steps of a replay plan (`replay.Plan.steps`): named records, in topological order.

A plan reads its leaves (`LeafStep`) and runs recorded nodes (`NodeStep`) in
the order of their steps; every value lives in a numbered *slot* while the plan
runs.
"""

from __future__ import annotations

from typing import Callable, Collection, Hashable, Sequence, Union

from tapeshim._src.node import op_type_of


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
