"""Counters of compiled programs, for tests and users who watch recompilation."""

from __future__ import annotations

from tapeshim._src import registry, replay


def compile_stats() -> dict[str, int]:
    """How many programs tapeshim has built.

    Returns:
      A dict with `programs_compiled` (replay programs for forcing, gradients,
      jacobians and jvps), `program_cache_hits`, `programs_evicted` (the cache
      keeps the 512 most recently used programs) and `eager_kernels` (per-op
      jitted kernels, one per op and static arguments).
    """
    return {**replay.stats, **registry.stats}


def reset_compile_stats() -> None:
    """Sets every counter of `compile_stats()` to zero (the caches are kept)."""
    for table in (replay.stats, registry.stats):
        for key in table:
            table[key] = 0
