"""Slicing the lazy graph, and the cache of compiled replay programs.

A *plan* is the slice of the lazy graph that a request needs (the tensors to
force, or the targets of a gradient), cut at concrete tensors, which become the
program's *leaves*. The plan's structure (op identities, static arguments,
wiring, leaf shapes and dtypes, which nodes the tape tracked, where the sources
occur) is the cache key; leaf values are arguments, so a training loop that
repeats the same step reuses one compiled program.

Differentiation adds a zero *perturbation* per source at every place the source
occurs (a watched tensor, each tracked read of a watched variable, an
intermediate tensor) and differentiates with respect to the perturbations. The
zeros are created inside the program, so XLA removes the additions; what remains
is one program that computes the forward values and the vjp together.

Nodes that the differentiating tape did not track are evaluated *outside* the
differentiated function (phase A): they are constants to this tape, yet still
ordinary JAX computations of the leaves, so an outer tape that records this
gradient can differentiate through them.
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict
from typing import AbstractSet, Any, Callable, Hashable, Iterator, Mapping, Sequence, cast

import jax
import numpy as np

from tapeshim._src import (
    background_compile,
    compile_tiers,
    device_leaves,
    host_errors,
    interpret,
    read_after_gradient,
    recompile_warning,
    replay_eager,
    runtime_checks,
)
from tapeshim._src.plan_steps import LeafStep, NodeStep, Step
from tapeshim._src.state import _thread_state, live_recorders
from tapeshim._src.tensor import Tensor

_PROGRAM_CACHE_SIZE = 512
_programs: OrderedDict = OrderedDict()
_program_hits: dict = {}  # key -> cache hits since the program was compiled (`compile_stats(programs=True)`)
_quick: dict = {}  # key -> the account of a program compiled by the quick tier (`compile_tiers`)
stats = {
    "programs_compiled": 0,
    "program_cache_hits": 0,
    "programs_evicted": 0,
    "per_op_plans": 0,
    "compile_fallbacks": 0,
}

SMALL_PLAN = 64
"""Plans up to this many nodes compile on their second sighting (or their first, when most of their
per-op kernels would be new: one program then compiles faster than a kernel and a VJP kernel per op)."""
MANY_SIZES = 4
"""A small plan whose structure was seen at this many sizes (batches of varying length) compiles as a larger
plan does, once its per-op runs have cost what compiling it would: each size is one more program to trace
and compile, and a size that comes back once an epoch would pay that each time it is seen twice."""
TRACE_PRICE_PER_NODE_S = 80e-6
"""The per-op seconds per node a larger plan's runs take (from its third sighting on) before its program is made
for the host to compute (`compile_now`): what making it costs (its forward's JAX trace and its host plan, measured
on the idle 2-core machine at 35 us per node on a 200-node chain of elementwise ops and 60 us on an RNN unrolled
over 50 steps) over the share of a per-op run the host's program saves (about 0.65 on the chain, 9 against 26 us
per node, and 0.45 on the RNN, 25 against 45): the ski rental's price in the rent's units."""
LONGEST_PROGRAM = 1000
"""Plans with more nodes than this always run per op: XLA's compile time grows faster than their run time."""
_SIGHTINGS_SIZE = 4096
_sightings: OrderedDict = OrderedDict()
_never_compile: set = set()

_NOTHING: frozenset = frozenset()


class ProgramKey(tuple):
    """A program's cache key that computes its hash once.

    A request's key is looked up several times (its tier, the program cache,
    the hit count); a nested tuple hashes all its fields every time. It equals,
    and hashes as, the plain tuple of its fields, so caches discriminate as
    with the plain tuple.
    """

    _hash: int

    def __new__(cls, fields: tuple) -> "ProgramKey":
        key = tuple.__new__(cls, fields)
        key._hash = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self._hash


_NO_OCCURRENCES: dict = {}


def _collect(
    roots: Sequence[Tensor], produced: AbstractSet[int], first_tid: int, cut: Sequence[AbstractSet[int]]
) -> tuple[dict[int, Tensor], set[int]]:
    """The tensors of the slice by id, and the ids of the lazy tensors `cut` makes leaves.

    A tensor is expanded (its node's inputs join the slice) when it is lazy or
    its op was recorded by the differentiating recorder, and it was made at or
    after `first_tid`.
    """
    found: dict[int, Tensor] = {}
    cut_tids: set[int] = set()
    stack = list(roots)
    while stack:
        tensor = stack.pop()
        tid = tensor._tid
        if tid in found:
            continue
        found[tid] = tensor
        node = tensor._node
        if node is not None and (tensor._value is None or tid in produced) and tid >= first_tid:
            if cut and tid not in produced and any(tid in tracked for tracked in cut):
                cut_tids.add(tid)
                continue
            stack.extend(node.inputs)
    return found, cut_tids


class Plan:
    """A slice of the lazy graph, cut at concrete tensors.

    Built in three steps: `_collect` finds the slice's tensors, sorting their
    ids orders them (ids grow with creation, so id order is a topological
    order), and `_build` makes one `LeafStep` per leaf and one `NodeStep` per
    node and, in the same pass, the structural cache key.

    Attributes:
      leaves: the concrete tensors the slice reads (program arguments).
      steps: `LeafStep`s and `NodeStep`s in topological order.
      key: the structural cache key: per node step its op key, wiring, whether
        tracked and the sources occurring at its outputs; per leaf step its
        shape, dtype and the sources occurring there. Values are never part
        of it.
      slot_of: tensor id -> slot.
      occ_slots: source index -> the slots where it occurs.
      tid_at: slot -> the id of the tensor held there.
      n_nodes: the number of node steps.
      known: slot -> the value a node's single output already has (forced before the request, as an
        episode's probabilities are): the per-op tier's forward pass takes it instead of running the node.
    """

    __slots__ = ("leaves", "steps", "key", "slot_of", "occ_slots", "tid_at", "n_nodes", "known")

    def __init__(
        self,
        roots: Sequence[Tensor],
        produced: AbstractSet[int] | None,
        occurrences: Mapping[int, tuple[int, ...]] | None,
        first_tid: int = 0,
        cut: Sequence[AbstractSet[int]] = (),
    ) -> None:
        """Slices the graph from `roots`.

        Args:
          roots: the tensors to compute.
          produced: the ids of tensors whose ops the differentiating recorder
            recorded (expanded even when they have a value); None for none.
          occurrences: tensor id -> indices of the sources occurring there.
          first_tid: lazy tensors created before this id are leaves too (the
            captured inputs of a control-flow branch).
          cut: the tracked sets of the other recorders that may record this
            request (higher order). A lazy tensor one of them tracks, from an
            op the differentiating recorder did not record, is a leaf: a
            constant to this recorder either way, and as an input of the
            recorded program the outer recorder differentiates through it (a
            watched lazy tensor, a variable's read after an assignment in a
            `tapeshim.function`).
        """
        produced = produced if produced is not None else _NOTHING
        found, cut_tids = _collect(roots, produced, first_tid, cut)
        self.leaves: list[Tensor] = []
        self.steps: list[Step] = []
        self.slot_of: dict[int, int] = {}
        self.occ_slots: dict[int, list[int]] = {}
        self.tid_at: list[int] = []
        self.known: dict[int, Any] = {}
        self.key = self._build(found, sorted(found), cut_tids, produced, occurrences or _NO_OCCURRENCES, first_tid)
        self.n_nodes = len(self.steps) - len(self.leaves)

    def _build(
        self,
        found: Mapping[int, Tensor],
        order: Sequence[int],
        cut_tids: AbstractSet[int],
        produced: AbstractSet[int],
        occurrences: Mapping[int, tuple[int, ...]],
        first_tid: int,
    ) -> tuple:
        """Appends the steps of the tensors in `order` (a topological order); returns the structural key."""
        steps, leaves, slot_of, occ_slots, tid_at = self.steps, self.leaves, self.slot_of, self.occ_slots, self.tid_at
        key: list[tuple] = []
        for tid in order:
            if tid in slot_of:
                continue
            tensor = found[tid]
            node = tensor._node
            if (
                node is not None
                and (tensor._value is None or tid in produced)
                and tid >= first_tid
                and tid not in cut_tids
            ):
                out_tids = node.out_tids
                if len(out_tids) == 1 and not (cut_tids and out_tids[0] in cut_tids):  # the common case, inlined
                    out_tid = out_tids[0]
                    slot = len(tid_at)
                    tid_at.append(out_tid)
                    slot_of.setdefault(out_tid, slot)
                    occ = occurrences.get(out_tid, ())
                    for source in occ:
                        occ_slots.setdefault(source, []).append(slot)
                    out_slots: tuple[int, ...] = (slot,)
                    occs_t: tuple[tuple[int, ...], ...] = (occ,)
                    is_tracked = out_tid in produced
                    if tensor._value is not None:  # (the tensor is this output: `out_tid == tid`)
                        self.known[slot] = tensor._value
                else:
                    out_slots, occs_t, is_tracked = self._outputs(out_tids, cut_tids, produced, occurrences)
                inputs = node.inputs
                n_inputs = len(inputs)
                if n_inputs == 1:  # the common arities, without a list first
                    in_slots: tuple[int, ...] = (slot_of[inputs[0]._tid],)
                elif n_inputs == 2:
                    in_slots = (slot_of[inputs[0]._tid], slot_of[inputs[1]._tid])
                else:
                    in_slots = tuple([slot_of[t._tid] for t in inputs])
                steps.append(NodeStep(node.fn, node.key, in_slots, out_slots, is_tracked, occs_t, node.deps))
                key.append((node.key, in_slots, is_tracked, occs_t))
                continue
            # A leaf: one program argument per leaf tensor, never shared by value (sharing leaves that
            # hold the same array would make the key depend on values: `probs[0, a]` would share the
            # index leaves only when `a == 0`, and a loop over changing Python values would recompile).
            occ = occurrences.get(tid, ())
            slot = len(tid_at)
            tid_at.append(tid)
            slot_of[tid] = slot
            for source in occ:
                occ_slots.setdefault(source, []).append(slot)
            steps.append(LeafStep(slot, len(leaves), occ))
            key.append((tensor._shape, tensor._dtype._name, occ))
            leaves.append(tensor)
        return tuple(key)

    def _outputs(
        self,
        out_tids: Sequence[int],
        cut_tids: AbstractSet[int],
        produced: AbstractSet[int],
        occurrences: Mapping[int, tuple[int, ...]],
    ) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...], bool]:
        """Slots for a node's outputs: `(out_slots, occurrences per output, whether the recorder recorded it)`."""
        out_slots: list[int] = []
        occs: list[tuple[int, ...]] = []
        is_tracked = False
        for out_tid in out_tids:
            slot = len(self.tid_at)
            self.tid_at.append(out_tid)
            out_slots.append(slot)
            if cut_tids and out_tid in cut_tids:  # a cut sibling output: a leaf of its own
                occs.append(())
                continue
            self.slot_of.setdefault(out_tid, slot)
            occ = occurrences.get(out_tid, ())
            occs.append(occ)
            for source in occ:
                self.occ_slots.setdefault(source, []).append(slot)
            if out_tid in produced:
                is_tracked = True
        return tuple(out_slots), tuple(occs), is_tracked

    def leaf_values(self) -> list[jax.Array]:
        """The leaves' values (a plan's leaves are concrete tensors)."""
        return cast("list[jax.Array]", [t._value for t in self.leaves])

    def reached_slots(self, target_slots: Sequence[int]) -> set[int]:
        """Slots from which a target is reachable through tracked nodes."""
        reached = set(target_slots)
        for step in reversed(self.steps):
            if isinstance(step, NodeStep) and step.tracked:
                deps = step.deps
                in_slots = step.in_slots
                if deps is None:
                    for slot in step.out_slots:
                        if slot in reached:
                            reached.update(in_slots)
                            break
                else:
                    for slot, needed in zip(step.out_slots, deps):
                        if slot in reached:
                            reached.update(in_slots[i] for i in needed)
        return reached

    def node_steps(self) -> Iterator[NodeStep]:
        """The plan's node steps, in topological order."""
        for step in self.steps:
            if isinstance(step, NodeStep):
                yield step

    def has_op(self, op_type: str) -> bool:
        """Whether a node of the plan is an op of TF type `op_type`."""
        for step in self.steps:
            if type(step) is NodeStep:
                key = step.key  # `node.op_type_of(key)`, inlined: this runs for every gradient
                if isinstance(key, tuple) and key and key[0] == op_type:
                    return True
        return False


def _phase_a_steps(steps: Sequence[Step]) -> set[int]:
    """Indices of the node steps to evaluate outside the differentiated function."""
    needed_slots: set[int] = set()
    needed_steps: set[int] = set()
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        if isinstance(step, NodeStep) and (not step.tracked or any(s in needed_slots for s in step.out_slots)):
            needed_steps.add(index)
            needed_slots.update(step.in_slots)
    return needed_steps


def evaluate_plain(
    steps: Sequence[Step], leaf_values: Sequence[jax.Array], only: AbstractSet[int] | None = None
) -> dict[int, jax.Array]:
    """Evaluates the plan's nodes (or the node steps in `only`) without perturbations; returns slot -> value."""
    env: dict[int, jax.Array] = {}
    for index, step in enumerate(steps):
        if isinstance(step, LeafStep):
            env[step.slot] = leaf_values[step.index]
        elif only is None or index in only:
            outs = step.fn(*[env[s] for s in step.in_slots])
            for slot, value in zip(step.out_slots, outs):
                env[slot] = value
    return env


def make_perturbed(
    steps: Sequence[Step], connected: Sequence[int]
) -> Callable[[Sequence[jax.Array], Sequence[jax.Array]], dict[int, jax.Array]]:
    """Returns `evaluate(leaf_values, perturbations) -> env`.

    Tracked nodes are evaluated inside, untracked ones come from phase A, and
    each connected source's perturbation is added where the source occurs.
    """
    position = {source: i for i, source in enumerate(connected)}
    phase_a = _phase_a_steps(steps)

    def perturb(value: jax.Array, occ: tuple[int, ...], eps: Sequence[jax.Array]) -> jax.Array:
        for source in occ:
            if source in position:
                value = value + eps[position[source]]
        return value

    def evaluate(leaf_values: Sequence[jax.Array], eps: Sequence[jax.Array]) -> dict[int, jax.Array]:
        env_a = evaluate_plain(steps, leaf_values, phase_a) if phase_a else {}
        env: dict[int, jax.Array] = {}
        for step in steps:
            if isinstance(step, LeafStep):
                env[step.slot] = perturb(leaf_values[step.index], step.occ, eps)
                continue
            out_slots = step.out_slots
            outs: Sequence[jax.Array]
            if step.tracked:
                outs = step.fn(*[env[s] for s in step.in_slots])
            else:
                outs = [env_a[s] for s in out_slots]
            for slot, value, occ in zip(out_slots, outs, step.occs):
                env[slot] = perturb(value, occ, eps)
        return env

    return evaluate


class Slice:
    """The part of the lazy graph that computes `outputs`, as a pure JAX function of its leaves' values.

    The one way to "slice the recorded graph, then run it": forcing lazy
    tensors (`force`), a concrete function's program, a control-flow branch and
    the differentiated program (with perturbations) all build one. Its
    functions keep the plan's steps, never its tensors, so a cached program
    does not keep a step's graph alive.

    Attributes:
      plan: the `Plan` of the outputs.
      out_slots: the slot of each output.
    """

    __slots__ = ("plan", "out_slots")

    def __init__(
        self,
        outputs: Sequence[Tensor],
        produced: AbstractSet[int] | None = None,
        occurrences: Mapping[int, tuple[int, ...]] | None = None,
        *,
        first_tid: int = 0,
        cut: Sequence[AbstractSet[int]] = (),
    ) -> None:
        """Slices the graph from `outputs` (see `Plan` for the arguments)."""
        self.plan = Plan(outputs, produced, occurrences, first_tid=first_tid, cut=cut)
        self.out_slots = tuple([self.plan.slot_of[t._tid] for t in outputs])

    @property
    def leaves(self) -> list[Tensor]:
        """The concrete tensors the slice reads, in the order its functions take their values."""
        return self.plan.leaves

    def function(self) -> Callable[[Sequence[jax.Array]], list[jax.Array]]:
        """`run(leaf_values) -> output values`: every node evaluated as recorded."""
        steps, out_slots = self.plan.steps, self.out_slots

        def run(leaf_values: Sequence[jax.Array]) -> list[jax.Array]:
            env = evaluate_plain(steps, leaf_values)
            return [env[s] for s in out_slots]

        return run

    def perturbed_function(
        self, connected: Sequence[int]
    ) -> Callable[[Sequence[jax.Array], Sequence[jax.Array]], list[jax.Array]]:
        """`run(leaf_values, perturbations) -> output values`, one perturbation per connected source.

        Each is added where its source occurs (see `make_perturbed`); the
        differentiated program differentiates with respect to them.
        """
        evaluate = make_perturbed(self.plan.steps, connected)
        out_slots = self.out_slots

        def run(leaf_values: Sequence[jax.Array], eps: Sequence[jax.Array]) -> list[jax.Array]:
            env = evaluate(leaf_values, eps)
            return [env[s] for s in out_slots]

        return run


def is_compiled(key: Hashable) -> bool:
    """Whether the program of `key` is cached (compiled, or compiling)."""
    return key in _programs


def cached_program(key: Hashable, build: Callable[[], Callable]) -> tuple[Callable, Callable]:
    """Returns `(jitted, raw)` for `key`, building and caching on a miss (LRU)."""
    entry = _programs.get(key)
    if entry is not None:
        _programs.move_to_end(key)
        stats["program_cache_hits"] += 1
        _program_hits[key] = _program_hits.get(key, 0) + 1
        return entry
    raw = build()

    ran_per_op = _ran_per_op.pop(key, None)  # (off the CPU it compiles in the background: `_ran_per_op`)
    rent = ran_per_op is None or not ran_per_op[0]
    meanwhile = ran_per_op is not None and not interpret.enabled()
    host_only = ran_per_op is not None and ran_per_op[1] and interpret.enabled()
    jitted, tier = compile_tiers.quick_jit(
        raw,
        lambda fn, options, traced: _checked_jit(
            key, fn, options, traced, rent=rent, meanwhile=meanwhile, host_only=host_only
        ),
    )
    entry = (jitted, raw)
    _programs[key] = entry
    _program_hits[key] = 0
    if tier is not None:
        _quick[key] = tier
    stats["programs_compiled"] += 1
    if len(_programs) > _PROGRAM_CACHE_SIZE:
        _forget(_programs.popitem(last=False)[0])
        stats["programs_evicted"] += 1
    return entry


def _checked_jit(
    key: Hashable,
    raw: Callable,
    options: runtime_checks.Options,
    traced: Callable[[Any], bool] | None = None,
    interpret_first: bool = True,
    rent: bool = True,
    meanwhile: bool = False,
    host_only: bool = False,
) -> Callable:
    """jax.jit of `raw` with `options`, with TF's errors for out-of-range indices (`runtime_checks`)."""

    def settle(plain: Callable) -> None:  # the program has no index checks: keep its plain jax.jit
        if key in _programs:
            _programs[key] = (plain, raw)

    def compiled(seconds: float) -> None:  # a compile of a plan over `SMALL_PLAN` nodes updates `compile_cost`
        n_nodes = _measured_nodes.pop(key, None)
        if n_nodes:
            compile_cost["seconds_per_node"] = 0.7 * compile_cost["seconds_per_node"] + 0.3 * seconds / n_nodes

    return runtime_checks.jit(
        raw,
        settle,
        options,
        traced,
        interpret_first,
        compiled,
        rent=rent,
        meanwhile=meanwhile,
        compiling=lambda: _count_compile(key),
        host_only=host_only,
    )


def _count_compile(key: Hashable) -> None:
    """Counts a program's compile for the recompile warning, where it starts (the call that compiles it or
    submits its compile), once per program: not where the program is made (a structure that never repeats runs
    on the host, compiles nothing and, as TF eager, warns of nothing), nor again when it tiers up."""
    if key in _counted or not (isinstance(key, tuple) and len(key) > 1 and isinstance(key[0], str)):
        return
    if len(_counted) >= _SIGHTINGS_SIZE:  # (a program evicted while it compiled is never forgotten: bounded)
        _counted.clear()
    _counted.add(key)
    recompile_warning.compiled(f"{key[0]} program", key, _program_change)


_counted: set = set()
"""The programs whose compile `_count_compile` counted (dropped with the program, `_forget`)."""


def _forget(key: Hashable) -> None:
    """Drops what is kept beside an evicted or failed program."""
    _program_hits.pop(key, None)
    _counted.discard(key)
    _quick.pop(key, None)
    _measured_nodes.pop(key, None)


def _account_quick_call(key: Hashable) -> None:
    """A call of a quick-tier program (`compile_tiers`): after its last quick call, its next compiles it optimized."""
    tier = _quick.get(key)
    if tier is not None and tier.heavy:  # compiled optimized at once
        del _quick[key]
    elif tier is not None and tier.after_call() and key in _programs:
        del _quick[key]
        quick, raw = _programs[key]
        if background_compile.enabled() and not isinstance(quick, runtime_checks.CheckedProgram):

            def settle(optimized: Callable) -> None:
                if key in _programs:
                    _programs[key] = (optimized, raw)

            _programs[key] = (runtime_checks.Upgrade(quick, raw, settle), raw)  # compiled in the background
        else:  # (a program with runtime checks, as every one without the background thread, compiles now)
            _programs[key] = (_checked_jit(key, raw, None, interpret_first=False), raw)  # on its next call
        compile_tiers.stats["programs_tiered_up"] += 1


def compile_now(key: Hashable, plan: "Plan", extends: Hashable | None = None) -> bool:
    """The tier of a plan: True to run its compiled program, False to run it per op.

    * A structure already compiled runs compiled.
    * A small plan (up to `SMALL_PLAN` nodes) compiles at once when most of its
      ops have no per-op kernels yet (a first training step: one program costs
      less than a kernel and a VJP kernel per op), else on its second sighting.
      A new size of a structure seen at another size (a batch of a new length)
      runs per op: its kernels' shape families serve it without a JAX trace
      (`kernel_families`), where its program would be traced for its sizes.
    * A larger plan runs per op until the time its per-op runs took (from its
      third sighting on) reaches what making its program costs
      (`TRACE_PRICE_PER_NODE_S` times its nodes): a structure that keeps
      changing (an episode of a new length, a longer unrolled loop) never pays
      for a trace, one that repeats pays at most twice the better choice. Its
      program's calls are then computed on the host (about twice as fast as
      the per-op tier) until they pay for the compile, as a small plan's are;
      where the host cannot compute them, the program is dropped and the plan
      runs per op until the next rule. Where its per-op runs reached what compiling it
      would cost (the measured compile seconds per node times its nodes), its
      second call submits the compile.
    * A plan over `LONGEST_PROGRAM` nodes, or one XLA failed on, always runs per op.

    A plan that runs compiled here has its program made: its first calls are computed on the host from the
    program's trace until they have paid for its XLA compile (`compile_tiers.calls_before_compile`), unless its
    per-op runs paid for it (its second call then submits the compile). Off the CPU, a plan that ran per op
    before compiles in the background while the per-op tier serves it (`run_compiled`'s `per_op`).

    `extends`: the key of a request whose program this one's extends (it returns intermediates read after an
    earlier request too: `read_after_gradient`); once that program is made, this one runs compiled too.
    """
    if key in _programs or (extends is not None and extends in _programs):
        return True
    n_nodes = plan.n_nodes
    if n_nodes > LONGEST_PROGRAM or key in _never_compile:
        return False
    seen, seconds, later_seconds = _sightings.pop(key, (0, 0.0, 0.0))
    seen += 1
    paid = seen >= 2 and seconds >= compile_cost["seconds_per_node"] * n_nodes
    if n_nodes <= SMALL_PLAN:
        sizes = _sizes_of_structure(plan) if seen == 1 else _sizes_seen(plan)
        if seen >= 2 and sizes < MANY_SIZES:
            _note_per_op(key, False)
            return True
        if seen == 1 and sizes == 1 and 2 * replay_eager.new_kernels(plan) > n_nodes:
            return True
    elif (
        seen >= 3
        and not paid
        and later_seconds >= TRACE_PRICE_PER_NODE_S * n_nodes
        and key not in _not_hosted
        and interpret.enabled()  # (off the CPU no host computes the program: the rule below alone compiles it)
    ):
        # its per-op runs paid for its program's trace: the host computes that program (faster than the per-op
        # tier) until its calls pay for the compile; where the host cannot, the program is dropped and the plan
        # goes on per op, its sightings kept for the rule below (`run_compiled`)
        _note_per_op(key, False, host_only=True)
        _sightings[key] = (seen, seconds, later_seconds)
        return True
    if paid:  # (a small plan here: one seen at `MANY_SIZES` sizes)
        _note_per_op(key, True)
        return True
    _sightings[key] = (seen, seconds, later_seconds)
    if len(_sightings) > _SIGHTINGS_SIZE:
        _sightings.popitem(last=False)
    stats["per_op_plans"] += 1
    return False


_ran_per_op: dict = {}
"""Keys of programs whose structure ran per op before `compile_now` chose to compile it -> `(paid, host_only)`:
whether those runs paid for the compile (it then compiles on its second call: the host's rental,
`calls_before_compile`, was paid), and whether the program was made only for the host to compute it (a larger
plan whose runs paid for its trace: where the host cannot, the program is dropped, `_not_hosted`). Off the CPU,
it compiles in the background while the per-op tier serves (`cached_program` takes the key out)."""

_not_hosted: set = set()
"""Keys of larger plans whose program the host could not compute (`runtime_checks.NOT_HOSTED`): they run per op
until their per-op runs pay for a compile, as before the trace rule (`compile_now`)."""


def dropped(key: Hashable) -> bool:
    """Whether the program of `key` was dropped because the host could not compute it (`_not_hosted`)."""
    return key in _not_hosted


def _note_per_op(key: Hashable, paid: bool, host_only: bool = False) -> None:
    if len(_ran_per_op) >= _SIGHTINGS_SIZE:
        _ran_per_op.clear()
    _ran_per_op[key] = (paid, host_only)


_structures: OrderedDict = OrderedDict()
"""Plan structures with their sizes erased (`sizes_erased`) -> the program keys seen of each (the last
`MANY_SIZES`, in order)."""


def forget_sightings() -> None:
    """Forgets which plans were seen, how often and at which sizes, and what compiles were measured to cost
    (`compile_now`'s memory, as in a new process); compiled programs are kept. The tests call it before each
    test, so that a test's tiers (and its compile counts) do not depend on the tests before it: a structure
    they saw at `MANY_SIZES` sizes would otherwise run per op in a later test until its per-op time paid for a
    compile, at a step that depends on the machine's speed."""
    _sightings.clear()
    _structures.clear()
    read_after_gradient.forget()
    _ran_per_op.clear()
    _not_hosted.clear()
    _measured_nodes.clear()  # (a program built earlier reports no compile time into this memory)
    compile_cost["seconds_per_node"] = COMPILE_SECONDS_PER_NODE


def sizes_erased(plan_key: tuple) -> tuple:
    """A plan's key with each leaf's shape reduced to its rank: the structure, whatever its sizes (a node whose
    static arguments hold a size still differs per size)."""
    return tuple(
        (len(entry[0]), *entry[1:])
        if len(entry) == 3 and entry[0].__class__ is tuple and entry[1].__class__ is str
        else entry
        for entry in plan_key
    )


def _sizes_of_structure(plan: "Plan") -> int:
    """How many sizes (plan keys) of `plan`'s structure were seen, this one included (up to `MANY_SIZES`);
    notes this one. More than 1: a new size of a known structure. (Requests of one plan, or one returning more
    of it, `read_after_gradient`, are one size: it counted their program keys, and a loop reading a step's
    logits after its gradient ran per op once its structure had 4.)"""
    structure, size = sizes_erased(plan.key), plan.key
    keys = _structures.pop(structure, ())
    if size not in keys:
        keys = (*keys, size)[-MANY_SIZES:]
    _structures[structure] = keys
    if len(_structures) > _SIGHTINGS_SIZE:
        _structures.popitem(last=False)
    return len(keys)


def _sizes_seen(plan: "Plan") -> int:
    """How many sizes of `plan`'s structure were seen (up to `MANY_SIZES`)."""
    return len(_structures.get(sizes_erased(plan.key), ()))


COMPILE_SECONDS_PER_NODE = 0.0025
"""`compile_cost`'s first value, in a new process (see there)."""

compile_cost = {"seconds_per_node": COMPILE_SECONDS_PER_NODE}
"""What compiling a program costs per node, measured on this machine on plans over `SMALL_PLAN` nodes (a
moving average; 2.5 ms is what a 200-node gradient program took on the idle 2-core machine with XLA's
default options; on the CPU the compile measured is the quick tier's, `compile_tiers`)."""


def run_compiled(
    key: Hashable, build: Callable[[], Callable], n_nodes: int, call: Callable[[Callable], Any], per_op: bool = False
) -> Any:
    """`call(jitted)` with the compiled program of `key`; None when XLA fails on it (the key then runs per op),
    or, with `per_op` (the caller then runs this call per op), while it compiles in the background off the CPU
    (`runtime_checks.NOT_READY`). A compile's duration updates `compile_cost` (see `_checked_jit`)."""
    if n_nodes > SMALL_PLAN and key not in _programs:  # small programs: fixed costs dominate
        _measured_nodes[key] = n_nodes
    jitted, _ = cached_program(key, build)
    try:
        # (`per_op`: the caller may run the call per op where the program returns `NOT_READY`, off the CPU while
        # it compiles; a program the host cannot compute returns `NOT_HOSTED` to any caller)
        result = runtime_checks.accepting_not_ready(per_op, lambda: call(jitted))
    except jax.errors.JaxRuntimeError:
        host_errors.raise_pending()  # a py_function's Python function failed (not the compile): TF's error
        compile_failed(key)
        return None
    if result is runtime_checks.NOT_READY:
        return None
    if result is runtime_checks.NOT_HOSTED:  # (nothing compiled: its plan goes on per op, `compile_now`)
        if _programs.pop(key, None) is not None:
            stats["programs_compiled"] -= 1  # (made, never compiled nor computed: not counted)
        _forget(key)
        if len(_not_hosted) >= _SIGHTINGS_SIZE:
            _not_hosted.clear()
        _not_hosted.add(key)
        return None
    if _quick:
        _account_quick_call(key)
    return result


_measured_nodes: dict = {}
"""The nodes of new programs over `SMALL_PLAN` nodes, until their compile's duration updates `compile_cost`."""


def run_per_op(key: Hashable, run: Callable[[], Any]) -> Any:
    """`run()` (the per-op tier of `key`), adding its duration to the key's account after its first sighting (the
    compile's rule, `compile_now`), and after its second (the trace's rule: a second run still makes per-op host
    programs and shape families for sizes the first traced, twice a later run's time on an unrolled RNN)."""
    start = time.perf_counter()
    result = run()
    entry = _sightings.get(key)
    if entry is not None and entry[0] >= 2:
        seconds = time.perf_counter() - start
        _sightings[key] = (entry[0], entry[1] + seconds, entry[2] + seconds if entry[0] >= 3 else entry[2])
    return result


def compile_failed(key: Hashable) -> None:
    """XLA could not compile or run the program of `key`: the plan runs per op from now on."""
    _programs.pop(key, None)
    _forget(key)
    if len(_never_compile) >= _SIGHTINGS_SIZE:
        _never_compile.clear()
    _never_compile.add(key)
    stats["compile_fallbacks"] += 1


def _program_change(old: tuple, new: tuple) -> str:
    return recompile_warning.plan_change(old[1], new[1])


def set_cache_size(size: int) -> None:
    """Bounds the program cache to `size` entries, evicting the least recently used."""
    global _PROGRAM_CACHE_SIZE
    _PROGRAM_CACHE_SIZE = size
    while len(_programs) > _PROGRAM_CACHE_SIZE:
        _forget(_programs.popitem(last=False)[0])
        stats["programs_evicted"] += 1


def force(tensors: Sequence[Tensor]) -> None:
    """Computes the values of lazy tensors with one compiled program and fills them in."""
    lazy = [t for t in tensors if t._value is None]
    if not lazy:
        return
    trace = _thread_state.trace
    if trace is not None:
        trace.refuse_value(lazy[0])
    values = _compute(lazy)
    for tensor, value in zip(lazy, values):
        tensor._value = value
    release(lazy)


def peek(tensors: Sequence[Tensor]) -> list:
    """The values of `tensors`, computing lazy ones without filling them in.

    Inside a function trace, a lazy tensor given a value would become a constant
    of the trace; code that needs a trace-time value only to learn shapes (a
    `py_function`'s first run) peeks instead.
    """
    lazy = [t for t in tensors if t._value is None]
    computed = dict(zip((t._tid for t in lazy), _compute(lazy) if lazy else []))
    return [computed[t._tid] if t._tid in computed else t._value for t in tensors]


def _compute(lazy: Sequence[Tensor]) -> list:
    """The values of lazy tensors, by one compiled program or op by op (the tier policy decides)."""
    sliced = Slice(lazy)
    plan = sliced.plan
    read_after_gradient.note_forced(plan, sliced.out_slots)
    key = ("force", plan.key, sliced.out_slots)
    leaf_values = plan.leaf_values()
    values = None
    if compile_now(key, plan):
        values = run_compiled(
            key,
            sliced.function,
            plan.n_nodes,
            lambda jitted: jitted(device_leaves.for_compiled_call(jitted, plan.leaves, leaf_values)),
            per_op=True,
        )
    if values is None:
        env = run_per_op(key, lambda: replay_eager.evaluate(plan, leaf_values))
        values = interpret.to_device([env[s] for s in sliced.out_slots])
    return list(values)


def release(tensors: Sequence[Tensor]) -> None:
    """Forcing releases the graph: a tensor with a value drops its node once no live recorder needs it.

    A tape differentiates through the nodes of the tensors it recorded (its
    `_produced`), so those keep their nodes while it lives; every other
    computed tensor needs only its value. A kept loss or metric then holds its
    own bytes, not the whole step's graph.
    """
    recorders = None
    for tensor in tensors:
        if tensor._node is None or tensor._value is None:
            continue
        if recorders is None:
            try:
                recorders = [r for r in live_recorders.alive() if r._produced]
            except RuntimeError:  # another thread made a tape meanwhile: keep the nodes this time
                return
        tid = tensor._tid
        if not any(tid in r._produced for r in recorders):
            tensor._node = None
    _keep_scalars_on_the_host(tensors)


_kept_scalars: list = []
"""Weak references to the scalars (a step's loss) the release before the last left as device arrays (and those
still computing then)."""
_newly_kept: list = []
"""Weak references to the scalars the last `release` left as device arrays."""


def _keep_scalars_on_the_host(tensors: Sequence[Tensor]) -> None:
    """Kept losses cost their own bytes: a released scalar becomes a NumPy value at the release after the next.

    A JAX array costs about 850 bytes of Python heap besides its buffer, where a NumPy scalar costs about
    100; a loop that keeps every step's loss (`losses.append(loss)`) then grows as TF's does. Only the scalars
    still alive two releases later are converted (once computed: no wait on the device), on the CPU only,
    where the host copy is the device's memory. A loop that keeps only the last step's loss (`loss =
    step()`) has let go of the one before by then: converting it at the next release (while the loop still
    held it) cost 14 us of a small MLP's 190 us step, 7 us of them the host copy of a program's fresh output.
    """
    if not interpret.enabled():
        return
    older = _kept_scalars[:]
    _kept_scalars[:] = _newly_kept
    _newly_kept.clear()
    for ref in older:
        tensor = ref()
        if tensor is None or tensor._node is not None:
            continue
        value = tensor._value
        if not _device_array(value):
            continue
        ready = getattr(value, "is_ready", None)  # (a committed array's; jax.Array's stubs omit it)
        if ready is None or ready():
            tensor._value = np.array(value, copy=True)  # (its own copy: not a view keeping the buffer)
        else:
            _kept_scalars.append(ref)
    _newly_kept.extend(weakref.ref(t) for t in tensors if t._node is None and not t._shape and _device_array(t._value))


def _device_array(value: Any) -> bool:
    """Whether `value` is a computed JAX array (not a NumPy value, not a tracer of a JAX transformation)."""
    return isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer)
