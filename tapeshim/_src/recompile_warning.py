"""A warning when one line of an eager loop keeps compiling new XLA programs (issue 9, item 5).

TF eager never compiles, so a loop whose ops change shape, Python values or
graph structure from step to step costs TF nothing extra; tapeshim compiles a
kernel (or, for a repeating tape structure, a program) per new signature. As TF
does for `tf.function` retracing, the 5th compile of one op (or one kind of program) at one
user line logs a warning naming the line and what changed since the previous
compile of it there; each line warns once.

Only compiles are counted (a cache hit costs nothing here). An op's kernel counts where a signature's
compile starts (`kernel_calls.KernelCalls.on_compile`), not where the signature is new: a new signature's
first calls run on the host, and it compiles only when it keeps repeating, so a loop whose shapes never repeat (an
episode's `tf.stack` of a new count of tensors) compiles nothing and, as TF eager, prints nothing.
"""

from __future__ import annotations

import threading
from typing import Any

from tapeshim._src.state import _thread_state
from tapeshim._src.tf_logging import caller_site, get_logger

THRESHOLD = 5
_MAX_WARNINGS = 1
_MAX_SITES = 4096

_MESSAGE = (
    "{count} calls to {what} at {site} compiled a new XLA program. Compiling is expensive and the excessive "
    "number of compilations could be due to (1) passing tensors with different shapes, (2) passing Python "
    "values (indices, sizes, scalars) that change from call to call, (3) a graph whose structure changes "
    "from step to step. The last compile followed a change of {change}. Pass changing values as tensors, "
    "keep shapes fixed (pad or bucket them), or wrap the step in tapeshim.function."
)

_sites: dict = {}
_warned: dict = {}
_lock = threading.Lock()


class _Site:
    __slots__ = ("compiles", "previous")

    def __init__(self) -> None:
        self.compiles = 0
        self.previous: Any = None


def _shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def op_change(old: tuple, new: tuple) -> str:
    """What differs between two `(static, avals)` signatures of one op."""
    old_static, old_avals = old
    new_static, new_avals = new
    if old_static != new_static:
        try:
            before, after = dict(old_static), dict(new_static)
        except (TypeError, ValueError):
            return "Python values"
        for name in sorted(set(before) | set(after), key=str):
            if before.get(name) != after.get(name):
                return f"the Python value `{name}` from {before.get(name)!r} to {after.get(name)!r}"
        return "Python values"
    if len(old_avals) != len(new_avals):
        return f"the number of inputs from {len(old_avals)} to {len(new_avals)}"
    for k, ((s0, d0), (s1, d1)) in enumerate(zip(old_avals, new_avals)):
        if s0 != s1:
            return f"the shape of input {k} from {_shape_text(s0)} to {_shape_text(s1)}"
        if d0 != d1:
            return f"the dtype of input {k} from {d0} to {d1}"
    return "graph structure"


def plan_change(old: tuple, new: tuple) -> str:
    """What differs between two plan keys (`replay.Plan.key`)."""

    def ops(key: tuple) -> list:
        return [entry[0] for entry in key if len(entry) == 4]

    old_ops, new_ops = ops(old), ops(new)
    if old_ops != new_ops:
        return f"graph structure ({len(old_ops)} ops to {len(new_ops)} ops)"
    inputs_old = [entry for entry in old if len(entry) == 3]
    inputs_new = [entry for entry in new if len(entry) == 3]
    for k, (a, b) in enumerate(zip(inputs_old, inputs_new)):
        if a[0] != b[0]:
            return f"the shape of input {k} from {_shape_text(a[0])} to {_shape_text(b[0])}"
        if a[1] != b[1]:
            return f"the dtype of input {k} from {a[1]} to {b[1]}"
    return "graph structure (wiring)"


def compiled(what: str, signature: Any, change: Any) -> None:
    """Notes a compile of `what` (an op name or a program kind) with `signature` at the user's line.

    Args:
      what: the op or program kind, as the warning names it.
      signature: what the compile was for; compared with the previous one of `what` at this line.
      change: `change(previous, signature) -> str`, the text naming what changed.
    """
    if _thread_state.trace is not None:
        return  # part of tracing a tapeshim.function: its own retracing warning speaks for it
    site = caller_site()
    with _lock:
        if len(_sites) >= _MAX_SITES:
            _sites.clear()
        entry = _sites.get((site, what))
        if entry is None:
            entry = _sites[(site, what)] = _Site()
        previous, entry.previous = entry.previous, signature
        entry.compiles += 1
        if entry.compiles < THRESHOLD or previous is None or _warned.get(site, 0) >= _MAX_WARNINGS:
            return
        _warned[site] = _warned.get(site, 0) + 1
    text = change(previous, signature)
    get_logger().warning(_MESSAGE.format(count=entry.compiles, what=what, site=f"{site[0]}:{site[1]}", change=text))
