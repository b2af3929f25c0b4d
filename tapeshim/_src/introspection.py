"""Counters of compiled programs, for tests and users who watch recompilation."""

from __future__ import annotations

from tapeshim._src import function, registry, replay


def compile_stats() -> dict[str, int]:
    """How many programs tapeshim has built.

    Returns:
      A dict with `programs_compiled` (replay programs for forcing, gradients,
      jacobians and jvps), `program_cache_hits`, `programs_evicted` (the cache
      keeps the 512 most recently used programs), `programs_cached` and
      `eager_kernels` (per-op
      jitted kernels, one per op and static arguments), `function_traces`
      (traces of `tapeshim.function`s) and `last_retrace_reason` (why the
      last function was traced again, e.g. "step retraced because argument
      `x` changed shape from (64, 32) to (50, 32)").
    """
    return {**replay.stats, **registry.stats, "programs_cached": len(replay._programs), **function.stats}


def set_program_cache_size(size: int) -> None:
    """Sets how many compiled replay programs are kept (least recently used go first).

    Args:
      size: the number of programs to keep, at least 1 (default 512).
    """
    if int(size) < 1:
        raise ValueError(f"`size` must be at least 1, got {size}.")
    replay.set_cache_size(int(size))


def reset_compile_stats() -> None:
    """Sets every counter of `compile_stats()` to zero (the caches are kept)."""
    for table in (replay.stats, registry.stats, function.stats):
        for key in table:
            table[key] = "" if key == "last_retrace_reason" else 0
