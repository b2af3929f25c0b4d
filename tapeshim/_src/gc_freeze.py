"""What imports load is frozen out of the garbage collector's full collections (`gc.freeze`).

Python's cyclic garbage collector runs a full collection whenever the objects that survived its
younger generations since the last one reach a quarter of the objects it already holds, and a full
collection visits every object it tracks. After `import tapeshim` the process tracks about 120,000
objects (JAX, NumPy), and about 220,000 once Keras is loaded; a full collection then takes 75-130 ms
on the project's 2-core machine. TF eager's ops leave few objects behind, so its full collections
are rare, but a first step here traces kernels and keeps their jaxprs, and its survivors reach that
quarter within the first steps: a full collection of 67-126 ms landed in the first actor-critic
episode of `benchmarks/bench_engine.py`, which took 240 ms instead of 120.

Modules, classes and functions loaded by an import live as long as the process, so the end of
`import tapeshim` moves the objects tracked then into the collector's permanent generation, which full
collections skip. Objects made later, tensors and traces included, are collected as before. An object
tracked at that moment (a user's, made before `import tapeshim`) that later becomes garbage inside a
reference cycle is never collected; one freed by its reference count is freed as before. `tapeshim.keras`,
imported on the first use of `tf.keras` (Keras's 100,000 objects), does not freeze: by then the user's
data, models and tensors are tracked too, and freezing them would keep their cycles for good.
`TAPESHIM_GC_FREEZE=0` (or `off`, `false`, `no`) in the environment leaves the collector alone.
"""

from __future__ import annotations

import gc
import os

_OFF = frozenset({"0", "off", "false", "no"})


def freeze_imported() -> None:
    """Moves every object the collector tracks now into its permanent generation (`gc.freeze`), unless
    `TAPESHIM_GC_FREEZE` turns this off."""
    if os.environ.get("TAPESHIM_GC_FREEZE", "").strip().lower() not in _OFF:
        gc.freeze()
