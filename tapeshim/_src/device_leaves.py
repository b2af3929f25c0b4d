"""NumPy values that compiled programs take as arguments, put on the device once.

`jax.jit` copies a NumPy argument to the device on each call: on the 2-core CPU, about 4 us for a small array,
0.7 ms for 4 MiB and 3.1 ms for 16 MiB, where a device array costs nothing. The host interpreter keeps its
values as NumPy arrays (a transfer in a host call would wait on the GIL while a compile runs in the
background: `interpret._placed`), and `tf.constant` of host data is one too, so a full-batch training step over
a 16 MiB constant took 4.4 ms a step once compiled, against 1.8 ms on the host and 2.0 ms in TF eager.

Where a call runs a compiled program (`runs_compiled`), each NumPy argument of `min_bytes` or more is put on
the device once and becomes its tensor's value (`for_compiled_call`): the tensor's later calls, compiled or
computed on the host (which reads a CPU array as NumPy without a copy, 0.6 us), take it as it is, and the
NumPy array goes where nothing else holds it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as np

from tapeshim._src import runtime_checks

LEAF_MIN_BYTES = 1 << 16
"""The NumPy leaves of a tape's program from which its compiled calls put them on the device (smaller ones, a
step's batch among them, are copied by the call as the transfer would copy them)."""


def runs_compiled(jitted: Callable[..., Any]) -> bool:
    """Whether a call of `jitted` (a cached program) runs its compiled program: a plain `jax.jit` function, a
    tier-up (`runtime_checks.Upgrade`), or a `CheckedProgram` settled on its compiled call; not a program whose
    calls the host may still compute."""
    if isinstance(jitted, runtime_checks.CheckedProgram):
        return jitted.settled_on_compiled()
    return True


def for_compiled_call(
    jitted: Callable[..., Any], tensors: Sequence[Any], values: list, min_bytes: int = LEAF_MIN_BYTES
) -> list:
    """`values` (those of `tensors`) for a call of `jitted`: where it runs compiled, each NumPy value of
    `min_bytes` or more put on the device once, and made its tensor's value where the tensor still holds it.
    The list itself where nothing changes."""
    if not runs_compiled(jitted):
        return values
    changed: list | None = None
    for position, value in enumerate(values):
        if value.__class__ is not np.ndarray or value.nbytes < min_bytes:
            continue
        if changed is None:
            changed = list(values)
        on_device = jax.device_put(value)  # (uncommitted, as the call's own transfer would make it)
        tensor = tensors[position]
        if tensor._value is value:
            tensor._value = on_device
        changed[position] = on_device
    return values if changed is None else changed
