"""Gradients, jacobians and jvps over a recorder's slice of the lazy graph.

One function, `differentiate`, serves `GradientTape.gradient`, `jacobian`,
`batch_jacobian` and `ForwardAccumulator.jvp`: it builds the plan, decides which
sources are connected (TF's `None` rules), and either runs the cached compiled
program or, when another recording tape watches the inputs, records the
program as one op on that tape (higher-order derivatives).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import jax
import jax.numpy as jnp

from tapeshim._src import (
    device_leaves,
    errors,
    host_gradient,
    plan_steps,
    read_after_gradient,
    replay,
    replay_eager,
    sized_gradients,
)
from tapeshim._src.node import OpKey, op_type_of, static_of
from tapeshim._src.plan_steps import LeafStep, NodeStep
from tapeshim._src.recorded_call import record_call, trackers
from tapeshim._src.replay import Plan
from tapeshim._src.state import DifferentiationMode, _thread_state
from tapeshim._src.tensor import Tensor
from tapeshim._src.variable import Variable

if TYPE_CHECKING:
    from tapeshim._src.explain_graph import TapeState  # import cycle: tape -> explain -> differentiate
    from tapeshim._src.tape import Recorder  # import cycle: tape -> differentiate

GRADIENT = "gradient"
JACOBIAN = "jacobian"
BATCH_JACOBIAN = "batch_jacobian"
JVP = "jvp"


def _conj(value: jax.Array) -> jax.Array:
    return jnp.conj(value) if jnp.iscomplexobj(value) else value


class Request:
    """What to differentiate: targets, unique sources and their occurrences."""

    def __init__(
        self,
        recorder: Recorder | TapeState,
        targets: Sequence[Any],
        sources: Sequence[Any],
        recorded_by: Sequence[Any] | None = None,
    ) -> None:
        self.sources: list[Any] = []
        index_of: dict[int, int] = {}
        self.source_positions = []
        for source in sources:
            position = index_of.get(id(source))
            if position is None:
                position = index_of[id(source)] = len(self.sources)
                self.sources.append(source)
            self.source_positions.append(position)
        occurrences: dict[int, tuple] = {}
        for i, source in enumerate(self.sources):
            tids = recorder._var_reads.get(id(source), ()) if isinstance(source, Variable) else (source._tid,)
            for tid in tids:
                occurrences[tid] = occurrences.get(tid, ()) + (i,)
        self.targets: list[Tensor] = []
        for target in targets:
            if isinstance(target, Variable):
                tensor = target._plain_read()
                position = index_of.get(id(target))
                if position is not None:
                    occurrences[tensor._tid] = occurrences.get(tensor._tid, ()) + (position,)
            else:
                tensor = target
            self.targets.append(tensor)
        # A source that is itself a target gets the identity, watched or not (even int ones).
        self.identity = {i for t in self.targets for i in occurrences.get(t._tid, ())}
        self.slice = replay.Slice(self.targets, recorder._produced, occurrences, cut=_outer_tracked(recorded_by))
        self.plan = self.slice.plan
        self.target_slots = self.slice.out_slots
        self.trainable = tuple([k for k, t in enumerate(self.targets) if t._dtype._trainable])
        reached = self.plan.reached_slots([self.target_slots[k] for k in self.trainable])
        # A trainable source is connected if it is a target, or one of its occurrences is tracked and reaches one.
        tracked, tid_at, occ_slots, identity = recorder._tracked, self.plan.tid_at, self.plan.occ_slots, self.identity
        connected = []
        for i, source in enumerate(self.sources):
            if not source._dtype._trainable:
                continue
            if i in identity:
                connected.append(i)
                continue
            for s in occ_slots.get(i, ()):
                if tid_at[s] in tracked and s in reached:
                    connected.append(i)
                    break
        self.connected = tuple(connected)
        self.read: list[Tensor | None] = []  # intermediates the request computes too (`read_after_gradient`)


def _outer_tracked(recorded_by: Sequence[Any] | None) -> list:
    """The tracked sets of the recorders that may record a request (see `differentiate`), where it cuts its plan.

    The function trace records every op but differentiates nothing, so it cuts nothing.
    """
    recorders = _thread_state.recorders if recorded_by is None else recorded_by
    if not recorders:
        return []
    trace = _thread_state.trace
    return [r._tracked for r in recorders if r is not trace and r._tracked]


def sparse_gathers(request: Request) -> dict[int, list[tuple[Tensor, Tensor]]]:
    """Sources whose only uses are `tf.gather(source, indices)` (axis 0): their gradients are IndexedSlices.

    Returns:
      source index -> [(gather output, indices)] for each such source, as TF
      returns `IndexedSlices` for them; sources used any other way are dense.
    """
    plan = request.plan
    if not plan.has_op("GatherV2"):
        return {}  # the common case: no gather, nothing sparse
    consumers: dict[int, list[NodeStep]] = {}
    for step in plan.node_steps():
        if step.tracked:
            for slot in step.in_slots:
                consumers.setdefault(slot, []).append(step)
    leaf_at = {step.slot: step.index for step in plan.steps if isinstance(step, LeafStep)}
    # Indices computed by ops this recorder did not record (inside a function trace: `ids % n`, an Embedding's
    # ids computed by a model's call) are constants to it, as leaves are.
    constant_slots = {slot for step in plan.node_steps() if not step.tracked for slot in step.out_slots}
    constants: dict[int, Tensor] = {}
    found: dict[int, list[tuple[Tensor, Tensor]]] = {}
    for i in request.connected:
        slots = plan.occ_slots.get(i, ())
        if i in request.identity or not slots or any(s not in leaf_at for s in slots):
            continue
        gathers: list[tuple[Tensor, Tensor]] = []
        for slot in slots:
            uses = [
                _gather_of(plan, step, slot, leaf_at, constant_slots, constants, request)
                for step in consumers.get(slot, ())
            ]
            if any(use is None for use in uses):
                gathers = []
                break
            gathers.extend(use for use in uses if use is not None)
        if gathers:
            found[i] = gathers
    return found


def _gather_of(
    plan: Plan,
    step: NodeStep,
    slot: int,
    leaf_at: dict[int, int],
    constant_slots: set[int],
    constants: dict[int, Tensor],
    request: Request,
) -> tuple[Tensor, Tensor] | None:
    """`(gather output, indices)` if `step` is `tf.gather(leaf at slot, indices)` on axis 0, else None; the
    indices a leaf or an output of an op the recorder did not record (`constant_slots`)."""
    static = dict(static_of(step.key)) if step.op_type == "GatherV2" else {}
    in_slots = step.in_slots
    if not (
        static.get("axis") == 0
        and static.get("batch_dims") == 0
        and in_slots[0] == slot
        and in_slots[1] != slot
        and (in_slots[1] in leaf_at or in_slots[1] in constant_slots)
    ):
        return None
    params = plan.leaves[leaf_at[slot]]
    if in_slots[1] in leaf_at:
        indices = plan.leaves[leaf_at[in_slots[1]]]
    else:
        if not constants:
            constants.update(_tensors_of(plan, request.targets, {plan.tid_at[s] for s in constant_slots}))
        indices = constants[plan.tid_at[in_slots[1]]]
    shape = tuple(indices._shape) + tuple(params._shape[1:])
    out_tid = plan.tid_at[step.out_slots[0]]
    return Tensor(None, shape, params._dtype, None, out_tid), indices


def _tensors_of(plan: Plan, roots: Sequence[Tensor], tids: set[int]) -> dict[int, Tensor]:
    """The tensors with ids `tids` in `plan`'s slice of the graph from `roots` (the plan keeps only its leaves)."""
    found: dict[int, Tensor] = {}
    seen: set[int] = set()
    stack = list(roots)
    while stack and len(found) < len(tids):
        tensor = stack.pop()
        if tensor._tid in seen or tensor._tid not in plan.slot_of:
            continue
        seen.add(tensor._tid)
        if tensor._tid in tids:
            found[tensor._tid] = tensor
        if tensor._node is not None:
            stack.extend(tensor._node.inputs)
    return found


def differentiate(
    recorder: Recorder,
    mode: str,
    request: Request,
    seeds: Sequence[Tensor | None] = (),
    recorded_by: Sequence[Any] | None = None,
) -> list:
    """Returns one value per unique connected source (a Tensor), in `request.connected` order.

    Args:
      recorder: the tape or accumulator whose tracked ops are differentiated.
      mode: GRADIENT, JACOBIAN, BATCH_JACOBIAN or JVP.
      request: the plan and sources.
      seeds: for GRADIENT, one optional cotangent per target; for JVP, one
        tangent per connected source.
      recorded_by: the recorders that may record the computation (higher
        order); None for the calling thread's recording ones. A forward
        accumulator passes the recorders around it when it was entered, since
        TF computes its tangents while its ops run.
    """
    if not request.connected:
        return []
    plan = request.plan
    connected = request.connected
    sources = request.sources
    source_avals = tuple([(tuple(sources[i]._shape), sources[i]._dtype) for i in connected])
    target_avals = tuple([(tuple(t._shape), t._dtype) for t in request.targets])
    target_slots = request.target_slots
    trainable = request.trainable
    seed_tensors = [s for s in seeds if s is not None]
    seed_mask = tuple([s is not None for s in seeds]) if seed_tensors else (False,) * len(seeds)
    key = replay.ProgramKey((mode, plan.key, target_slots, trainable, connected, source_avals, seed_mask))

    def build() -> Callable:
        if mode != JVP:  # (custom gradients' backwards, traced before the program's own trace)
            plan_steps.trace_backwards(plan.steps, request.targets, recorder._produced)
        return _make_program(mode, request.slice, connected, source_avals, target_avals, trainable, seed_mask)

    if mode in (JACOBIAN, BATCH_JACOBIAN):
        out_avals = tuple(_result_aval(mode, target_avals[0], aval) for aval in source_avals)
    elif mode == JVP:
        out_avals = tuple(target_avals[k] for k in trainable)
    else:
        out_avals = source_avals
    inputs = tuple(plan.leaves) + tuple(seed_tensors)

    if trackers(inputs, recorded_by):
        _, raw = replay.cached_program(key, build)
        n_leaves = len(plan.leaves)

        def recorded(*values: jax.Array) -> tuple:
            return tuple(raw(list(values[:n_leaves]), list(values[n_leaves:]))[1])

        return list(record_call(recorded, OpKey("program", key), inputs, out_avals, recorded_by, dependency_key=key))
    # A persistent tape asked again for a gradient without output_gradients gives its first answer: the same
    # recorded values give the same gradients, bit for bit, as TF's (a recomputation could round otherwise,
    # once the program computed on the host has compiled)
    repeatable = mode == GRADIENT and not seed_tensors and getattr(recorder, "_persistent", False)
    answers: dict | None = recorder._answers if repeatable else None
    learns = mode == GRADIENT and read_after_gradient.applies(recorder)
    noted_key = key
    if learns:
        read = read_after_gradient.wanted(key)
        if read:  # intermediates an earlier request's reads forced: this program returns them too
            target_slots, key = _with_read_outputs(request, read, key)
    answer_key = None if answers is None else (key, tuple([t._tid for t in plan.leaves]))
    if answers is not None:
        answer = answers.get(answer_key)
        if answer is not None:
            return [Tensor(v, shape, dtype) for v, (shape, dtype) in zip(answer, out_avals)]
    leaf_values = plan.leaf_values()
    seed_values = [s.value for s in seed_tensors] if seed_tensors else []

    try:
        per_op = mode == GRADIENT and not _compiled_tier(
            recorder, key, plan, noted_key if key is not noted_key else None
        )
        if not per_op:
            if mode == GRADIENT and not replay.is_compiled(key):  # (a structure's first size: its shapes noted)
                parts = (target_slots, trainable, connected, seed_mask)
                sized_gradients.note_compiled(plan, parts, leaf_values, seed_values, source_avals)
            # (a persistent tape's requests keep their tier: off the CPU they wait for a compile under way)
            meanwhile = mode == GRADIENT and not getattr(recorder, "_persistent", False)
            outcome = replay.run_compiled(
                key,
                build,
                plan.n_nodes,
                lambda jitted: jitted(device_leaves.for_compiled_call(jitted, plan.leaves, leaf_values), seed_values),
                per_op=meanwhile,
            )
            if outcome is None:  # XLA failed (the per-op tier serves this structure), or it compiles meanwhile
                if mode != GRADIENT:
                    raise errors.InternalError(
                        None,
                        None,
                        "XLA could not compile the program of this request; its per-op form serves only gradients.",
                    )
                per_op = replay.dropped(key)  # (the host could not compute its program: the plan goes on per op)
                if not per_op:
                    outcome = _per_op_gradient(request, source_avals, seeds)
                elif getattr(recorder, "_persistent", False) and getattr(recorder, "_tiers", None) is not None:
                    recorder._tiers[key] = False  # (a persistent tape's later requests keep this tier)
        if per_op:

            def run_per_op() -> tuple:
                outcome = sized_gradients.host_gradient(
                    plan,
                    (target_slots, trainable, connected, seed_mask),
                    leaf_values,
                    seed_values,
                    source_avals,
                    lambda avals: _make_program(
                        mode, request.slice, connected, avals, target_avals, trainable, seed_mask
                    ),
                )
                return _per_op_gradient(request, source_avals, seeds) if outcome is None else outcome

            outcome = replay.run_per_op(key, run_per_op)
    except ValueError as exc:
        if "Reverse-mode differentiation does not work for lax.while_loop" in str(exc):
            raise ValueError(
                "Cannot compute the gradient through a tf.while_loop without `maximum_iterations` inside "
                "tapeshim.function: give the loop a `maximum_iterations` (an upper bound on its trip count) to "
                "make it reverse differentiable."
            ) from None
        raise
    aux, results = outcome
    for tensor, value in zip(request.targets, aux):
        if tensor._value is None:
            tensor._value = value
    if request.read:  # (after the targets' values)
        for read_tensor, value in zip(request.read, aux[len(request.targets) :]):
            if read_tensor is not None and read_tensor._value is None:
                read_tensor._value = value
    if learns:
        read_after_gradient.note_request(noted_key, plan)
    if answers is not None:
        answers[answer_key] = list(results)
    return [Tensor(v, shape, dtype) for v, (shape, dtype) in zip(results, out_avals)]


def _with_read_outputs(request: Request, read: Sequence[int], key: replay.ProgramKey) -> tuple:
    """Adds the tensors at the plan's slots `read` (`read_after_gradient.wanted`) to the request's outputs
    (`request.read`, after its targets: None where one has a value already, forced inside the tape this time,
    so that the program stays one); returns the request's output slots and its program's key with them.

    A slot whose tensor the targets do not reach (a multi-output node's other output, read by the user) is
    dropped from `wanted` for good: the request cannot fill it, and its search walks the whole graph.
    """
    plan = request.plan
    targets = set(request.target_slots)
    slots = [slot for slot in read if slot not in targets]
    wanted_tids = {plan.tid_at[slot] for slot in slots}
    found = _tensors_of(plan, request.targets, wanted_tids)
    unreachable = [slot for slot in slots if plan.tid_at[slot] not in found]
    if unreachable:
        read_after_gradient.drop(key, unreachable)
        slots = [slot for slot in slots if plan.tid_at[slot] in found]
    if not slots:
        return request.target_slots, key
    tensors = [found[plan.tid_at[slot]] for slot in slots]
    request.read = [tensor if tensor._value is None else None for tensor in tensors]
    out_slots = (*request.target_slots, *slots)
    request.target_slots = request.slice.out_slots = out_slots
    return out_slots, replay.ProgramKey((key[0], key[1], out_slots, *key[3:]))


def _compiled_tier(recorder: Any, key: Any, plan: Plan, extends: Any = None) -> bool:
    """The tier of a gradient request; a persistent tape asked again keeps its first answer.

    The per-op tier and the compiled program round differently (XLA fuses a
    whole program), so a repeated request on one tape must not switch tiers.
    `extends`: the key of the program this request's extends (`_with_read_outputs`).
    """
    tiers = getattr(recorder, "_tiers", None)
    if tiers and key in tiers:
        return tiers[key]
    compiled = replay.compile_now(key, plan, extends)
    if tiers is not None and getattr(recorder, "_persistent", False):
        tiers[key] = compiled
    return compiled


def _per_op_gradient(request: Request, source_avals: tuple, seeds: Sequence[Tensor | None]) -> tuple:
    return replay_eager.gradient(
        request.plan,
        request.connected,
        source_avals,
        request.target_slots,
        request.trainable,
        [None if s is None else s.value for s in seeds],
    )


def _result_aval(mode: str, target_aval: tuple, source_aval: tuple) -> tuple:
    t_shape, (s_shape, s_dtype) = target_aval[0], source_aval
    if mode == JACOBIAN:
        return (t_shape + s_shape, s_dtype)
    return ((t_shape[0],) + t_shape[1:] + s_shape[1:], s_dtype)


def _pullbacks(pullback: Callable, basis: jax.Array) -> Any:
    """`pullback` of each cotangent in `basis` (its leading axis), vectorized; one after the other where an op
    has no batching rule (an exported program: a `tapeshim.function` traced for every size)."""
    try:
        return jax.vmap(lambda ct: pullback([ct]))(basis)
    except NotImplementedError:
        return jax.lax.map(lambda ct: pullback([ct]), basis)


def _make_program(
    mode: str,
    sliced: replay.Slice,
    connected: tuple[int, ...],
    source_avals: tuple,
    target_avals: tuple,
    trainable: tuple[int, ...],
    seed_mask: tuple[bool, ...],
) -> Callable[[list, list], tuple]:
    """The program of a request: `program(leaf values, seeds) -> (target values, results)`.

    It differentiates the slice of the targets with respect to a zero
    perturbation per connected source (see `replay.make_perturbed`).
    """
    evaluate = sliced.perturbed_function(connected)
    seed_position: dict[int, int] = {}
    for k, given in enumerate(seed_mask):
        if given:
            seed_position[k] = len(seed_position)

    long = len(sliced.plan.steps) > replay.SMALL_PLAN

    def program(leaf_values: list, seeds: list) -> tuple:
        def f(eps: list) -> tuple:
            values = evaluate(leaf_values, eps)
            return [values[k] for k in trainable], values

        eps0 = [jnp.zeros(shape, dtype._np) for shape, dtype in source_avals]
        # Ops with TF-specific reverse rules (custom_vjp) use plain JAX in forward mode; a reverse-mode
        # program keeps its reverse rules (and so its values) when an outer forward accumulator
        # differentiates it (forward over backward).
        # A long program's kernels are their cached traces (`registry._Kernel`).
        with DifferentiationMode(forward=mode == JVP, inline_kernels=long):
            if mode == JVP:
                (outs, aux), (tangents_out, _) = jax.jvp(f, (eps0,), (list(seeds),))
                return aux, tangents_out
            return reverse(f, eps0, seeds)

    def reverse(f: Callable, eps0: list, seeds: list) -> tuple:
        outs, pullback, aux = jax.vjp(f, eps0, has_aux=True)
        if mode == GRADIENT:
            cotangents = []
            for k, value in zip(trainable, outs):
                position = seed_position.get(k)
                seed = jnp.ones_like(value) if position is None else jnp.broadcast_to(seeds[position], value.shape)
                cotangents.append(_conj(seed))
            (grads,) = pullback(cotangents)
            return aux, [_conj(g) for g in grads]
        target = outs[0]
        if mode == JACOBIAN:
            size = math.prod(target.shape)
            basis = jnp.eye(size, dtype=target.dtype).reshape((size,) + target.shape)
            (columns,) = _pullbacks(pullback, basis)
            return aux, [_conj(c).reshape(target.shape + c.shape[1:]) for c in columns]
        batch, inner = target.shape[0], target.shape[1:]
        size = math.prod(inner)
        basis = jnp.eye(size, dtype=target.dtype).reshape((size, 1) + inner)
        basis = jnp.broadcast_to(basis, (size, batch) + inner)
        (columns,) = _pullbacks(pullback, basis)
        results = []
        for c in columns:
            c = jnp.moveaxis(_conj(c), 0, 1)  # (batch, size, *source_inner)
            results.append(c.reshape((batch,) + inner + c.shape[2:]))
        return aux, results

    ops = frozenset(step.key for step in sliced.plan.node_steps())
    if mode == GRADIENT and not any(op_type_of(op) == "CustomGradient" for op in ops):
        # its first calls on the host without its trace (`runtime_checks.CheckedProgram`); a custom gradient's
        # backward (a `jax.custom_vjp` of the user's function) has no host rule
        program.host_first = host_gradient.first_calls(  # type: ignore[attr-defined]
            evaluate, trainable, seed_position, source_avals, long, ops
        )
    return program
