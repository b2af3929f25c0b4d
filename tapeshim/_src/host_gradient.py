"""A gradient program's first calls computed on the host without its JAX trace.

A gradient request's program (`differentiate._make_program`) is `jax.vjp` of the tape's replayed forward, and
its first calls run on the host from that trace (`interpret`) while they rent its compile
(`compile_tiers.calls_before_compile`). The trace is what a new structure's first step pays most for: JAX
linearizes and transposes every operation at 0.3-0.4 ms each (a small MLP step's program, with its
softmax cross-entropy, took 10-15 ms to trace), where a trace of the forward alone costs a third to a tenth
of that. So a program's first calls are computed from its forward's jaxpr with the host's VJP rules
(`host_vjp._Plan`, which the per-op tier's VJP kernels use): the forward steps run with the interpreter's
NumPy rules, then a rule per primitive takes the cotangents back to the perturbations of the sources. The
program's own trace is made when its compile is submitted (`runtime_checks.CheckedProgram`), once its calls
have paid for that; a structure that runs a few times never traces its VJP.

Only a program whose every operation has a host VJP rule qualifies (`host_vjp`: real floats of 32 or 64
bits, no loops, runtime checks or custom derivatives other than the known ones; a primitive without a NumPy
rule, a convolution, by JAX's VJP of its equation, `host_vjp_traced`); any other is traced as before.
Values follow JAX's VJP formulas in their order of operations, subnormals flushed as XLA's, as the per-op
tier's VJP kernels do.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import host_vjp, host_vjp_costs, interpret, jaxpr_specialize, symbolic_dims
from tapeshim._src.state import DifferentiationMode, HostRulesTrace

stats = {"untraced_gradient_programs": 0}
"""Gradient programs whose first calls were computed here (each one trace of a VJP spared, or put off)."""


class _GradientPlan:
    """`(leaf values, given seeds) -> target values + source gradients` (flat), from the forward's VJP plan:
    zero perturbations in, a cotangent of ones (or the given seed, broadcast) on each differentiated target."""

    __slots__ = ("_vjp", "_n_leaves", "_zeros", "_seeds")

    def __init__(self, vjp: Any, n_leaves: int, perturbations: list, seeds: list) -> None:
        self._vjp = vjp
        self._n_leaves = n_leaves
        self._zeros = [np.zeros(shape, dtype) for shape, dtype in perturbations]  # (made once: read-only)
        for zeros in self._zeros:
            zeros.flags.writeable = False
        self._seeds = seeds  # (position among the given seeds or None, shape, dtype) of each differentiated target

    def __call__(self, args: list, budget: Any) -> list:
        leaves, given = args[: self._n_leaves], args[self._n_leaves :]
        cotangents = [
            np.ones(shape, dtype) if position is None else np.broadcast_to(given[position], shape)
            for position, shape, dtype in self._seeds
        ]
        out = self._vjp(list(leaves) + self._zeros + cotangents, budget)
        n_grads = len(self._zeros)
        return out[n_grads:] + out[:n_grads]  # (the program's order: target values, then gradients)


def first_calls(
    evaluate: Callable[[Sequence[Any], Sequence[Any]], list],
    trainable: Sequence[int],
    seed_position: dict[int, int],
    source_avals: Sequence[tuple],
    inline_kernels: bool,
    ops: frozenset = frozenset(),
) -> "FirstCalls":
    """`host_first(args)` for a gradient program (`runtime_checks.CheckedProgram`): the host program of the call
    `program(leaf values, seeds)` made from the forward's jaxpr, or None where it does not qualify.

    Args:
      evaluate: `evaluate(leaf values, perturbations) -> target values` (`replay.Slice.perturbed_function`).
      trainable: the targets differentiated (positions among the targets).
      seed_position: a differentiated target's position among the given seeds, where it has one.
      source_avals: `(shape, dtype)` of each source (its perturbation's); symbolic for `FirstCalls.sized`.
      inline_kernels: as the program's trace (`DifferentiationMode`).
      ops: the ops (node keys: op type and static arguments) the program runs: a program of the ops of one that
        did not qualify (another size of its structure) is not tried: its forward's trace would be spent for
        nothing (4 ms of a small model's first step).
    """
    return FirstCalls(evaluate, trainable, seed_position, source_avals, inline_kernels, ops)


class FirstCalls:
    """See `first_calls`."""

    __slots__ = ("_evaluate", "_trainable", "_seed_position", "_source_avals", "_inline_kernels", "_ops")

    def __init__(
        self,
        evaluate: Callable[[Sequence[Any], Sequence[Any]], list],
        trainable: Sequence[int],
        seed_position: dict[int, int],
        source_avals: Sequence[tuple],
        inline_kernels: bool,
        ops: frozenset,
    ) -> None:
        self._evaluate = evaluate
        self._trainable = trainable
        self._seed_position = seed_position
        self._source_avals = source_avals
        self._inline_kernels = inline_kernels
        self._ops = ops

    def _forward_jaxpr(self, leaves: list) -> tuple[Any, Any, list]:
        """The forward's jaxpr on `leaves` (values or structs), its output shapes and the perturbations'
        `(shape, dtype)`; raises where the trace fails."""
        perturbations = [(tuple(shape), np.dtype(dtype._np)) for shape, dtype in self._source_avals]
        evaluate, trainable = self._evaluate, self._trainable

        def forward(leaves: list, eps: list) -> tuple:
            # (only the host's VJP rules read this trace's jaxpr)
            with (
                DifferentiationMode(forward=False, inline_kernels=self._inline_kernels),
                HostRulesTrace(jax_core.find_top_trace([*leaves, *eps])),
            ):
                values = evaluate(leaves, eps)
            return [values[k] for k in trainable], values

        structs = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in perturbations]
        closed, shapes = jax.make_jaxpr(forward, return_shape=True)(list(leaves), structs)
        return closed, shapes, perturbations

    def _refuse(self) -> None:
        if len(_refused) >= _REFUSED_SIZE:
            _refused.clear()
        _refused.add(self._ops)

    def __call__(self, args: tuple) -> interpret.Prepared | None:
        if not interpret.enabled() or self._ops in _refused:
            return None
        leaf_values, seeds = args
        try:
            closed, shapes, perturbations = self._forward_jaxpr(leaf_values)
            return _program(
                closed, shapes, len(leaf_values), perturbations, seeds, self._seed_position, self._trainable
            )
        except Exception:  # noqa: BLE001 - an operation without a host VJP rule (or a trace that fails): traced
            self._refuse()
            return None

    def sized(self, leaf_structs: list) -> "SizedFirstCalls | None":
        """The host programs of this program's every size (its leaves' and sources' sizes symbolic: `leaf_structs`
        and the source avals given), from one trace of its forward, or None where it does not qualify."""
        if not interpret.enabled() or self._ops in _refused:
            return None
        try:
            closed, shapes, perturbations = self._forward_jaxpr(leaf_structs)
        except Exception:  # noqa: BLE001 - a trace that fails on symbolic sizes: traced as before
            return None
        return SizedFirstCalls(self, closed, shapes, len(leaf_structs), perturbations)


class SizedFirstCalls:
    """A gradient program's host programs for each size of its structure: its forward traced once with symbolic
    sizes, each size's VJP plan made from that trace with the size's dimensions put in (`jaxpr_specialize`), no
    JAX trace (`sized_gradients`; `bind` and `heavy` as `interpret.BoundTemplate`'s)."""

    __slots__ = ("_calls", "_closed", "_shapes", "_n_leaves", "_perturbations", "_refused", "_bound")

    def __init__(self, calls: FirstCalls, closed: Any, shapes: Any, n_leaves: int, perturbations: list) -> None:
        self._calls = calls
        self._closed = closed
        self._shapes = shapes
        self._n_leaves = n_leaves
        self._perturbations = perturbations
        self._refused = False  # (an operation without a host VJP rule: at no size)
        self._bound: dict = {}  # sizes -> the program (the latest `_BOUND` sizes made)

    def bind(self, sizes: dict[str, int], seeds: Sequence[Any]) -> interpret.Prepared | None:
        """The program where the symbols have `sizes` (one call's), given its seeds, or None where the host does
        not compute it at these sizes."""
        if self._refused:
            return None
        key = (tuple(sorted(sizes.items())), tuple((np.shape(s), np.dtype(s.dtype)) for s in seeds))
        known = self._bound.get(key, _UNBOUND)
        if known is not _UNBOUND:
            return known
        resolve = symbolic_dims.resolver(sizes)
        try:
            closed = jaxpr_specialize.specialized(self._closed, resolve)
            perturbations = [(resolve(shape), dtype) for shape, dtype in self._perturbations]
        except symbolic_dims.Unresolved:  # (an expression of the trace's the host does not evaluate: at no size)
            self._refused = True
            return None
        calls = self._calls
        try:
            program = _program(
                closed, self._shapes, self._n_leaves, perturbations, seeds, calls._seed_position, calls._trainable
            )
        except Exception:  # noqa: BLE001 - an operation without a host VJP rule: per op from now on
            self._refused = True
            return None
        if len(self._bound) >= _BOUND:
            try:
                del self._bound[next(iter(self._bound))]  # (the oldest made)
            except (KeyError, RuntimeError, StopIteration):  # (another thread's, at once)
                pass
        self._bound[key] = program
        return program

    def heavy(self, sizes: dict[str, int]) -> bool:
        """Whether `bind` refused these sizes only as too much for the host (or for its seeds), not at every size."""
        del sizes
        return not self._refused


_BOUND = 32
_UNBOUND = object()
"""Sizes whose host programs a `SizedFirstCalls` keeps (an epoch over batches of 20-40 lengths comes back to
each): each is a VJP plan, made in 2-5 ms for a small model."""


_REFUSED_SIZE = 256
_refused: set[frozenset] = set()
"""The ops of programs that did not qualify (`first_calls`)."""


def _program(
    closed: Any,
    shapes: tuple,
    n_leaves: int,
    perturbations: list,
    seeds: Sequence[Any],
    seed_position: dict[int, int],
    trainable: Sequence[int],
) -> interpret.Prepared | None:
    """The host program of `closed` (the forward: leaves and perturbations -> differentiated targets, then every
    target), or None where this call does not qualify.

    Raises:
      Exception: where an operation has no host VJP rule (`host_vjp.vjp_plan`).
    """
    jaxpr = closed.jaxpr
    n_trained = len(trainable)
    if len(jaxpr.invars) != n_leaves + len(perturbations):
        return None  # (a leaf that is not one array)
    targets = jaxpr.outvars[n_trained:]
    if any(getattr(var.aval, "weak_type", False) for var in targets):
        return None  # (NumPy's results are never weak: the traced program's host form refuses them too)
    seed_specs = []
    for k, var in zip(trainable, jaxpr.outvars[:n_trained]):
        position = seed_position.get(k)
        dtype = np.dtype(var.aval.dtype)
        if position is not None and np.dtype(seeds[position].dtype) != dtype:
            return None  # (the program's trace decides what such a seed gives)
        seed_specs.append((position, tuple(var.aval.shape), dtype))
    costs = host_vjp_costs.vjp_costs(closed)
    if costs is None:
        return None  # (compiled from its trace, as a traced program this heavy is)
    work, equations, products, core_price_s = costs
    wanted = range(n_leaves, n_leaves + len(perturbations))
    given = [True] * n_trained + [False] * len(targets)
    vjp = host_vjp.vjp_plan(closed, given, wanted, kept=range(n_trained, n_trained + len(targets)))
    if not host_vjp_costs.products_fit(products, vjp.traced_products):
        return None  # (its traced rules' products are more than the host computes per call)
    plan = _GradientPlan(vjp, n_leaves, perturbations, seed_specs)
    in_avals = [var.aval for var in jaxpr.invars[:n_leaves]] + [
        jax.ShapeDtypeStruct(np.shape(seed), np.dtype(seed.dtype)) for seed in seeds
    ]
    out_tree = jax.tree.structure((shapes[1], [0] * len(perturbations)))
    stats["untraced_gradient_programs"] += 1
    return interpret.Prepared.of_plan(
        plan,  # type: ignore[arg-type]
        work,
        in_avals,
        out_tree,
        equations,
        core_price_s,
    )
