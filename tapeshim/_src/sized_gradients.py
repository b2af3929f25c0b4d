"""New sizes of a small gradient request's structure, computed on the host from one symbolic trace of its program.

A request whose structure was seen at another size (a batch of a new length) runs in the per-op tier
(`replay.compile_now`): one host call of each op's kernel, and of each op's VJP kernel, each found in its shape
family and bound to the call's sizes. For a small step that is 15-30 kernel calls of 30-60 us each, about twice
TF eager's step. Here the whole gradient program of such a structure is traced once with symbolic dimensions
wherever two of its sizes differ (`kernel_families`, over the program's leaves, seeds and sources); every later
size binds that trace (`interpret.BoundTemplate`) and runs it in one host call, with no JAX trace.

Only plans of tapeshim's own kernels and of Keras calls' family programs qualify (their Python decides nothing a
symbolic trace cannot follow, as for kernel families; a request over Keras calls traces its forward only, each
size's VJP made by the host's rules: `host_gradient.SizedFirstCalls`); any other, a trace that fails, or a size
the interpreter cannot run goes per op as before.
Nothing here compiles: a size that repeats still compiles as `compile_now` decides.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Sequence

import jax

from tapeshim._src import interpret, kernel_families, replay, replay_eager, runtime_checks
from tapeshim._src.host_gradient import SizedFirstCalls
from tapeshim._src.plan_steps import NodeStep

_SIZE = 256
_families: OrderedDict = OrderedDict()
"""A gradient request's structure (its plan's key with sizes erased, and the request's own parts) -> its shape
`kernel_families.Families` (one argument structure each: the program's leaves, seeds and sources), or None for
a structure that does not qualify (a user's function in it)."""

stats = {"sized_gradients": 0}
"""Gradient requests computed here."""


def _own_kernels(steps: Sequence[Any]) -> bool:
    """Whether every node step runs one of tapeshim's own op kernels (`registry._Kernel` with shape families) or
    a Keras call's family program (`keras_program_families`: its symbolic jaxpr serves a symbolic trace). A
    Keras call's program of one shape has an op key of its own, so its request's structure is never seen at
    another size."""
    for step in steps:
        if isinstance(step, NodeStep):
            kernel = getattr(step.fn, "kernel", None)
            if (kernel is None or kernel.shape_families is None) and not getattr(step.fn, "shape_family", False):
                return False
    return True


def _families_of(
    plan: replay.Plan, request_key: tuple, leaf_values: list, seed_values: list, source_avals: tuple
) -> kernel_families.Families | None:
    """The shape families of a request's structure (made on its first call), or None where it does not qualify:
    a plan over `replay.SMALL_PLAN` nodes or with a function of a user's, values off the host, no interpreter."""
    if plan.n_nodes > replay.SMALL_PLAN or not interpret.enabled():
        return None
    if not interpret.host_readable(leaf_values) or not interpret.host_readable(seed_values):
        return None
    key = (replay.sizes_erased(plan.key), request_key, tuple((len(shape), dtype) for shape, dtype in source_avals))
    if key not in _families:  # (a structure with a user's function is remembered as None: it never qualifies)
        if len(_families) >= _SIZE:
            _families.popitem(last=False)
        _families[key] = kernel_families.Families() if _own_kernels(plan.steps) else None
    return _families[key]


def _arguments(leaf_values: list, seed_values: list, source_avals: tuple) -> tuple[tuple, list]:
    """The request's shapes as a family sees them: `(leaf values, seeds, source structs)` and its leaves, flat."""
    sources = [jax.ShapeDtypeStruct(shape, dtype._np) for shape, dtype in source_avals]
    return (list(leaf_values), list(seed_values), sources), [*leaf_values, *seed_values, *sources]


def note_compiled(
    plan: replay.Plan, request_key: tuple, leaf_values: list, seed_values: list, source_avals: tuple
) -> None:
    """Notes the shapes of a request whose program compiles (a structure's first size): a later size of its
    structure traces its symbolic program at once, where it would run per op first."""
    families = _families_of(plan, request_key, leaf_values, seed_values, source_avals)
    if families is not None:
        families.note(*_arguments(leaf_values, seed_values, source_avals))


def host_gradient(
    plan: replay.Plan,
    request_key: tuple,
    leaf_values: list,
    seed_values: list,
    source_avals: tuple,
    make_program: Callable[[tuple], Callable[[list, list], tuple]],
) -> tuple | None:
    """`(target values, gradients)` of a per-op request computed from its structure's symbolic trace, or None
    (the per-op tier computes it): the structure has no family yet (its first size here only notes its shapes),
    is not of tapeshim's own kernels, or the interpreter cannot run it at these sizes.

    Args:
      plan: the request's plan.
      request_key: the request's parts besides its plan (targets, trainable targets, sources, seed mask).
      leaf_values: the plan's leaf values; seed_values: the given output gradients.
      source_avals: `(shape, DType)` of each connected source.
      make_program: `make_program(source_avals) -> program(leaf values, seeds)`, the request's program for
        sources of these (possibly symbolic) shapes.
    """
    families = _families_of(plan, request_key, leaf_values, seed_values, source_avals)
    if families is None:
        return None
    leaves = [*leaf_values, *seed_values]
    args, flat = _arguments(leaf_values, seed_values, source_avals)

    def symbolic(structs: tuple) -> interpret.BoundTemplate | SizedFirstCalls:
        leaf_structs, seed_structs, source_structs = structs
        symbolic_avals = tuple((s.shape, dtype) for s, (_, dtype) in zip(source_structs, source_avals))
        made = make_program(symbolic_avals)
        # A request over Keras calls: its forward traced, each size's VJP by the host's rules (its symbolic
        # program's trace, JAX's VJP of a model, cost 25-30 ms); any other: one trace, bound at each size.
        keras_calls = any(getattr(step.fn, "shape_family", False) for step in plan.steps if isinstance(step, NodeStep))
        first_calls = getattr(made, "host_first", None) if keras_calls else None
        sized = None if first_calls is None else first_calls.sized(leaf_structs)
        if sized is not None:
            return sized
        program = runtime_checks.jit(made, interpret_first=False)
        return interpret.BoundTemplate(program.trace(leaf_structs, seed_structs), checks=True)

    found = families.find(args, flat, symbolic)
    if found is None:
        return None
    template, sizes = found
    if isinstance(template, SizedFirstCalls):
        prepared = template.bind(sizes, seed_values)
    else:
        prepared = template.bind(sizes)
    if prepared is None:
        if not template.heavy(sizes):  # (the interpreter cannot run it: per op from now on)
            families.failed(args, flat)
        return None
    outcome = runtime_checks.host_call(prepared, (leaf_values, seed_values), leaves)
    if outcome is None:
        return None
    stats["sized_gradients"] += 1
    replay_eager.note_served(plan)
    return outcome
