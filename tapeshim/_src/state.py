"""Per-thread recording state: which tapes and accumulators are recording.

TF's tapes are per thread: a tape records only the ops its own thread runs. The
`recorders` list holds the recording tapes and forward accumulators of the
calling thread, outermost first.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any


class _ThreadState(threading.local):
    def __init__(self) -> None:
        super().__init__()
        self.recorders: list[Any] = []
        self.trace: Any = None  # the `tapeshim.function` trace being recorded, if any
        self.variable_values: Any = None  # variable id -> value, inside a custom gradient's JAX function
        self.variable_writes: Any = None  # variable id -> variable assigned inside a Keras call's JAX function


_thread_state = _ThreadState()

next_tensor_id = itertools.count(1).__next__
"""Returns a fresh id for a tensor. Ids are never reused, unlike `id()`."""


class Epoch:
    """One recording of a tape: `done` once the tape released what it recorded (after `gradient`).

    A lazy tensor whose node belongs to a finished epoch is left over from an
    earlier step (`total = total + loss` across steps): the next op that uses it
    forces it first, so no lazy graph spans more than one step.
    """

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = False


live_recorders: "weakref.WeakSet[Any]" = weakref.WeakSet()
"""Every tape and accumulator alive (of any thread): a forced tensor keeps its node while one needs it."""
