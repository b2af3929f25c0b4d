"""Counters of compiled programs, for tests and users who watch recompilation."""

from __future__ import annotations

from typing import Hashable

from tapeshim._src import compile_tiers, explain_hooks, function, registry, replay
from tapeshim._src.node import op_type_of


def compile_stats(programs: bool = False) -> dict:
    """How many programs tapeshim has built (and, with `programs=True`, which).

    Returns:
      A dict with `programs_compiled` (replay programs for forcing, gradients,
      jacobians and jvps), `program_cache_hits`, `programs_evicted` (the cache
      keeps the 512 most recently used programs), `programs_cached` and
      `eager_kernels` (per-op
      jitted kernels, one per op and static arguments), `function_traces`
      (traces of `tapeshim.function`s) and `last_retrace_reason` (why the
      last function was traced again, e.g. "step retraced because argument
      `x` changed shape from (64, 32) to (50, 32)") and `programs_tiered_up`
      (programs compiled quickly first and again optimized once their calls
      paid for it; not counted in `programs_compiled`).
      With `programs=True`, also `programs`: the structure summary of each
      cached replay program (see `cached_programs`).
    """
    stats = {
        **replay.stats,
        **registry.stats,
        **compile_tiers.stats,
        "programs_cached": len(replay._programs),
        **function.stats,
    }
    if programs:
        stats["programs"] = cached_programs()
    return stats


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
    for table in (replay.stats, registry.stats, compile_tiers.stats):
        for key in table:
            table[key] = 0
    function.stats["function_traces"] = 0
    function.stats["last_retrace_reason"] = ""
    for key in replay._program_hits:
        replay._program_hits[key] = 0


def _op_label(node_key: Hashable) -> str:
    op = op_type_of(node_key)
    if op is None:
        return "Op"
    return "Gradient" if op == "program" else op


def _summarize(key: tuple) -> dict:
    """The structure of one cached replay program, read off its cache key."""
    kind = key[0] if isinstance(key[0], str) else "program"
    plan_key = key[1] if len(key) > 1 and isinstance(key[1], tuple) else ()
    ops: dict[str, int] = {}
    leaves: list[str] = []
    recorded = 0
    for entry in plan_key:
        if isinstance(entry, tuple) and len(entry) == 4:  # (node key, input slots, recorded, occurrences)
            name = _op_label(entry[0])
            ops[name] = ops.get(name, 0) + 1
            recorded += bool(entry[2])
        elif isinstance(entry, tuple) and len(entry) == 3:  # (shape, dtype, occurrences)
            leaves.append(f"{entry[1]}[{','.join(str(d) for d in entry[0])}]")
    return {
        "kind": kind,
        "ops": sum(ops.values()),
        "recorded_ops": recorded,
        "op_counts": ops,
        "inputs": leaves,
        "hits": replay._program_hits.get(key, 0),
    }


def cached_programs() -> list[dict]:
    """The compiled replay programs tapeshim keeps, least recently used first.

    Returns:
      One dict per program: `kind` (`force`, `gradient`, `jacobian`,
      `batch_jacobian`, `jvp`), `ops` (how many ops it runs), `recorded_ops`
      (how many of them it differentiates through), `op_counts` (TF op type ->
      count), `inputs` (each argument's dtype and shape) and `hits` (how many
      times the cached program was reused since it was compiled).
    """
    return [_summarize(key) for key in list(replay._programs)]


def explain_none_gradients(enabled: bool = True) -> None:
    """Logs why, whenever `GradientTape.gradient` returns a None (opt-in, off by default).

    While on, every tensor created inside a recording tape also keeps the file
    and line of the user's code and the op that made it, so explanations (also
    `tape.explain(...)` and `tape.summary(...)`) name the line of each op that
    cut a path. This costs some time per op; turn it off for training.

    Args:
      enabled: True to turn the logging (and line keeping) on, False to turn it off.
    """
    explain_hooks.options.log_none = bool(enabled)
    explain_hooks.set_sites(enabled)
