"""Intermediates read after a gradient request: the next request of its structure computes them too.

TF computes every op's value while the tape records. tapeshim's gradient program computes the targets and the
gradients, and an intermediate it does not return stays lazy: a training loop that reads one after the
gradient (keras.io's loops call `accuracy.update_state(y, logits)` after `apply_gradients`; a step's
activations kept for logging) forced it by a program of its own, which ran the step's forward again from its
leaves. A Keras MLP's step of 3.1 ms took 5.3 ms with the metric (`docs/design.md`).

A force whose plan computes a lazy node of one of the last few gradient requests' plans (`note_forced`) notes
that node's slot for the request's structure; the next request of that structure (`wanted`) returns the values
at those slots as well and fills them in, so the read finds a value, as in TF. Slots are structural (the plan's
key fixes them), never values, so a steady loop keeps one program. Only a non-persistent tape's requests
outside any recording tape or function trace take part: a persistent tape's repeated requests must find their
first answer's program (`differentiate._compiled_tier`), and a recorded request's outputs are its recorder's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any, Hashable, Sequence

from tapeshim._src.state import _thread_state

if TYPE_CHECKING:
    from tapeshim._src.replay import Plan

_RECENT = 8
"""Gradient requests a force is matched against (a GAN's step makes two; a step's reads follow its requests)."""
_SIZE = 512
"""Structures noted (as many as `replay`'s program cache keeps)."""
_recent: deque = deque(maxlen=_RECENT)
"""`(key, slot_of, lowest tensor id, highest tensor id)` of the last requests, newest last: ids and slots only,
never tensors, so a noted request keeps no graph alive."""
_wanted: OrderedDict = OrderedDict()
"""A request's program key -> the slots of its plan read after it (sorted); the `_SIZE` structures noted last."""
_wanted_lock = threading.Lock()
_unreachable: OrderedDict = OrderedDict()
"""A request's program key -> the slots of its plan its targets do not reach (`drop`): never noted again."""


def applies(recorder: Any) -> bool:
    """Whether `recorder`'s gradient requests take part: a non-persistent tape's, with no tape recording and no
    function tracing on this thread."""
    state = _thread_state
    return not getattr(recorder, "_persistent", True) and not state.recorders and state.trace is None


def wanted(key: Hashable) -> tuple[int, ...]:
    """The slots of the plan of `key`'s request that were read after an earlier request of its structure."""
    slots = _wanted.get(key)
    return () if slots is None else slots


def note_request(key: Hashable, plan: Plan) -> None:
    """Notes a gradient request that ran, for `note_forced` to match a later force's nodes against."""
    tids = plan.tid_at
    if plan.n_nodes:
        _recent.append((key, plan.slot_of, min(tids), max(tids)))


def note_forced(plan: Plan, out_slots: Sequence[int]) -> None:
    """Notes the lazy nodes of a recent gradient request's plan that a force (of `plan`, computing the values at
    `out_slots`) reads: the forced tensors themselves, and the inputs of its other nodes (`argmax(logits)`, or
    a metric the tape recorded beside the loss). The nodes before them (the forward that computed `logits`)
    are not noted: one value serves the read.

    A tensor the force computes is lazy, so a request's plan that holds it computed it by a node too (a
    noted request's plan cuts nothing: `applies`), never took it as a leaf.
    """
    if not _recent or _thread_state.trace is not None:
        return
    recent = tuple(_recent)  # (another thread may note a request meanwhile)
    lowest = min(entry[2] for entry in recent)
    highest = max(entry[3] for entry in recent)
    tid_at = plan.tid_at
    for slot in out_slots:
        _note(recent, tid_at[slot], lowest, highest)
    computed: set[int] = set()  # (the force's node outputs: its leaves have values, nothing to note)
    for step in plan.node_steps():
        computed.update(step.out_slots)
        if _found(recent, tid_at[step.out_slots[0]], lowest, highest) is not None:
            continue  # (a node of a request's forward, or a force's root noted above)
        for slot in step.in_slots:
            if slot in computed:
                _note(recent, tid_at[slot], lowest, highest)


def _found(recent: tuple, tid: int, lowest: int, highest: int) -> tuple[Hashable, int] | None:
    """`(key, slot)` of the newest of the `recent` requests whose plan holds the tensor `tid`; else None."""
    if not lowest <= tid <= highest:
        return None
    for key, slot_of, low, high in reversed(recent):
        if low <= tid <= high:
            slot = slot_of.get(tid)
            if slot is not None:
                return key, slot
    return None


def _note(recent: tuple, tid: int, lowest: int, highest: int) -> None:
    found = _found(recent, tid, lowest, highest)
    if found is None:
        return
    key, slot = found
    with _wanted_lock:
        slots = _wanted.get(key, ())
        if slot not in slots and slot not in _unreachable.get(key, ()):
            _wanted[key] = tuple(sorted((*slots, slot)))
            _wanted.move_to_end(key)
            if len(_wanted) > _SIZE:
                _wanted.popitem(last=False)


def drop(key: Hashable, slots: Sequence[int]) -> None:
    """Forgets `slots` of `key`'s structure for good: slots a request of it cannot fill (its targets do not
    reach them)."""
    with _wanted_lock:
        if key in _wanted:  # (unless it left the noted structures meanwhile)
            _wanted[key] = tuple(slot for slot in _wanted[key] if slot not in slots)
        _unreachable[key] = frozenset((*_unreachable.pop(key, ()), *slots))
        if len(_unreachable) > _SIZE:
            _unreachable.popitem(last=False)


def forget() -> None:
    """Forgets the noted requests and reads (`replay.forget_sightings`: as in a new process)."""
    with _wanted_lock:
        _recent.clear()
        _wanted.clear()
        _unreachable.clear()
