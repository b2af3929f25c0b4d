"""The per-op tier: a plan run op by op through cached per-op kernels, its gradient through per-op VJP kernels.

A recorded structure seen for the first time (and a very long one, always) is
not compiled as one XLA program: its forward runs through one jitted kernel per
op (cached by the op's key, shared by every plan that uses the op) and its
gradient through one jitted VJP kernel per op. Compiling a whole program pays
off only when the structure repeats; `replay.compile_now` decides (see
docs/design.md, "Tiers").

The gradient follows the compiled program's rules exactly: only nodes the
differentiating tape recorded carry cotangents, a source's gradient is the sum
of the cotangents at every place it occurs (sources do not cut paths), and
complex gradients are `conj(vjp(conj(seed)))`.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Hashable, Sequence, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import (
    compile_tiers,
    host_vjp,
    interpret,
    interpret_flush,
    interpret_fpmode,
    kernel_calls,
    runtime_checks,
)
from tapeshim._src.plan_steps import LeafStep, NodeStep

if TYPE_CHECKING:
    from tapeshim._src.replay import Plan  # import cycle: replay <-> replay_eager (replay runs the per-op tier)

_KERNEL_CACHE_SIZE = 4096
_forward_kernels: OrderedDict = OrderedDict()
_vjp_kernels: OrderedDict = OrderedDict()
stats = {"op_kernels": 0, "vjp_kernels": 0, "per_op_runs": 0}


class _Cached:
    """A `runtime_checks.jit` kernel that keeps the plain `jax.jit` once it has no checks; the first
    calls of each argument signature run on the host where the interpreter can, until their extra cost would
    have paid for the compile (`kernel_calls.host_calls_before_compile`)."""

    __slots__ = ("jitted", "calls")

    def __init__(
        self,
        fn: Callable[..., Any],
        families: bool = False,
        may_check: bool = False,
        untraced: Callable[[tuple], Any] | None = None,
    ) -> None:
        self.jitted: Callable[..., Any] = runtime_checks.jit(
            fn, self._settle, compile_tiers.kernel_options, interpret_first=False, may_check=may_check
        )
        self.calls = kernel_calls.KernelCalls(families, untraced)

    def _settle(self, plain: Callable[..., Any]) -> None:
        self.jitted = plain

    def call(self, *args: Any) -> Any:
        return self.calls.run(self.jitted, args, jax.tree.leaves(args), False, host=True)

    def call_vjp(self, inputs: list, cotangents: list) -> Any:
        """`call(inputs, cotangents)` for a VJP kernel (arrays in both lists: its leaves without a flatten)."""
        return self.calls.run(self.jitted, (inputs, cotangents), [*inputs, *cotangents], False, host=True)


def _remember(
    cache: OrderedDict,
    key: Any,
    make: Callable[[], Callable[..., Any]],
    counter: str,
    families: bool = False,
    may_check: bool = False,
    untraced: Callable[[tuple], Any] | None = None,
) -> _Cached:
    entry = cache.get(key)
    if entry is None:
        entry = cache[key] = _Cached(make(), families, may_check, untraced)
        stats[counter] += 1
        if len(cache) > _KERNEL_CACHE_SIZE:
            cache.popitem(last=False)
    return entry


def forward_kernel(node_key: Hashable, fn: Callable[..., tuple]) -> Callable[..., tuple]:
    """The jitted kernel of one node: the op's own eager kernel, or one cached by the node's key."""
    kernel = getattr(fn, "kernel", None)  # the op's kernel (`registry._Kernel`): its eager jit, already compiled
    if kernel is not None:
        return kernel.per_op_call
    # (a node whose function gives its host program without a trace: a custom gradient's, from its pinned forward)
    untraced = getattr(fn, "host_forward", None)
    return _remember(_forward_kernels, node_key, lambda: fn, "op_kernels", untraced=untraced).call


_INEXACT: dict = {}


def _inexact(dtype: Any) -> bool:
    known = _INEXACT.get(dtype)
    if known is None:
        known = _INEXACT[dtype] = bool(jnp.issubdtype(dtype, jnp.inexact))
    return known


def _vjp_kernel(
    node_key: Hashable, fn: Callable[..., tuple], given: tuple, wanted: tuple | None = None
) -> Callable[..., Any]:
    """`kernel(inputs, cotangents) -> {input position: cotangent}` for one node (inexact inputs only).

    `given[k]` says whether output `k` has a cotangent; the kernel differentiates only those outputs (the
    others contribute nothing, as in the compiled program, and no zeros of a symbolic shape are built).
    `wanted[k]` says whether input `k`'s cotangent is wanted (None: every inexact input's); only those are
    computed (a layer's product with its data computes the weights' cotangent alone, as the compiled
    program's dead-code elimination does).
    """

    known = _vjp_kernels.get((node_key, given, wanted))
    if known is not None:  # (a cached kernel: nothing below is needed on the per-op tier's hot path)
        return known.call_vjp

    def make() -> Callable[..., Any]:
        def with_cotangents(*inputs: jax.Array) -> list:
            return [out for out, has in zip(fn(*inputs), given) if has]

        def vjp(inputs: list, cotangents: list) -> dict:
            positions = [i for i, x in enumerate(inputs) if _inexact(x.dtype) and (wanted is None or wanted[i])]

            def of_wanted(*chosen: jax.Array) -> list:
                full = list(inputs)
                for position, value in zip(positions, chosen):
                    full[position] = value
                return with_cotangents(*full)

            _, pullback = jax.vjp(of_wanted, *[inputs[i] for i in positions])
            return dict(zip(positions, pullback(list(cotangents))))

        return vjp

    # new sizes share a symbolic trace only for the VJP of tapeshim's own kernel (a node's function may be a
    # user's: a custom gradient, a recorded call)
    kernel = getattr(fn, "kernel", None)
    own = kernel is not None and kernel.shape_families is not None
    # (a kernel of some inputs' cotangents (`wanted`) makes each new size's host program from its forward
    # jaxpr, not from a symbolic trace of its own: 0.2-0.3 ms against 1.5-2 ms for its first two sizes)
    families = own and wanted is None
    may_check = kernel is not None and kernel.may_check  # (its forward's check, as the kernel's)
    untraced = None
    if kernel is not None and own and not may_check:  # (its host calls from its forward jaxpr: `host_vjp`)
        forward = kernel

        def untraced(args: tuple) -> Any:
            return host_vjp.program(forward.jitted, args[0], given, wanted)

    # (a Keras call's family program: each size's host program from the family's jaxpr made concrete for it)
    elif kernel is None and getattr(fn, "sized_vjp", None) is not None:
        sized_vjp = fn.sized_vjp  # type: ignore[attr-defined]

        def untraced(args: tuple) -> Any:
            return sized_vjp(args[0], given, wanted)

    # (a node whose function traces its backward first, at the top level, and gives the VJP's host program from
    # that trace: a custom gradient's, `custom_gradient._CustomGradientCall.trace_backward`)
    elif kernel is None and getattr(fn, "host_vjp", None) is not None:
        fn.trace_backward()  # type: ignore[attr-defined]
        node_vjp = fn.host_vjp  # type: ignore[attr-defined]

        def untraced(args: tuple) -> Any:
            return node_vjp(args, given)

    key = (node_key, given, wanted)
    return _remember(_vjp_kernels, key, make, "vjp_kernels", families, may_check, untraced).call_vjp


_SEEN_SIZE = 16384
_seen: set = set()


def new_kernels(plan: Plan) -> int:
    """How many distinct ops of `plan` the per-op tier has not run yet (each would compile kernels)."""
    keys = {step.key for step in plan.node_steps()}
    return sum(1 for k in keys if k not in _seen)


def note_served(plan: Plan) -> None:
    """Counts `plan`'s ops as run (`new_kernels`): its structure's sizes are served without per-op kernels
    (`sized_gradients`), so a later first sighting of it need not compile at once to spare them."""
    if len(_seen) > _SEEN_SIZE:
        _seen.clear()
    _seen.update(step.key for step in plan.node_steps())


_Run = TypeVar("_Run", bound=Callable[..., Any])


def _numpy_errors_ignored(run: _Run) -> _Run:
    """`run` inside `interpret.host_errors_ignored()`: entered once for all the host calls of its kernels (see
    `interpret.Prepared`)."""

    @functools.wraps(run)
    def ignoring(*args: Any) -> Any:
        with interpret.host_errors_ignored():
            return run(*args)

    return cast(_Run, ignoring)


@_numpy_errors_ignored
def evaluate(plan: Plan, leaf_values: Sequence[jax.Array]) -> dict[int, jax.Array]:
    """Runs every node of `plan` through its per-op kernel; returns slot -> value (a NumPy array where the
    kernel ran on the host: `interpret.to_device` makes it a JAX array)."""
    stats["per_op_runs"] += 1
    if len(_seen) > _SEEN_SIZE:
        _seen.clear()
    on_host = interpret.enabled()
    env: dict[int, jax.Array] = {}
    known = plan.known
    for step in plan.steps:
        if isinstance(step, LeafStep):
            value = leaf_values[step.index]
            env[step.slot] = interpret.host_value(value) if on_host else value
            continue
        _seen.add(step.key)
        if known and step.out_slots[0] in known:  # forced before: its value, not a rerun of the op
            value = known[step.out_slots[0]]
            env[step.out_slots[0]] = interpret.host_value(value) if on_host else value
            continue
        outs = forward_kernel(step.key, step.fn)(*[env[s] for s in step.in_slots])
        for slot, value in zip(step.out_slots, outs):
            env[slot] = value
    return env


def _conj(value: jax.Array) -> jax.Array:
    return jnp.conj(value) if jnp.iscomplexobj(value) else value


_add = _Cached(jnp.add, families=True)
_ones_like = _Cached(jnp.ones_like, families=True)


def _sum(a: Any, b: Any) -> Any:
    """`a + b` of two cotangents of one slot: NumPy's, where both are host arrays of one real float dtype and
    shape (an addition rounds as XLA's; its subnormals flushed as XLA's CPU does: `interpret_fpmode`), without
    tracing JAX's `add` for each new shape (0.6-0.9 ms each); else the cached `add` kernel."""
    if (
        a.__class__ is np.ndarray
        and b.__class__ is np.ndarray
        and a.dtype == b.dtype
        and a.dtype in host_vjp.FLOATS
        and a.shape == b.shape
    ):
        with interpret_fpmode.FLUSHING:
            return interpret_flush.software_flush(np.asarray(np.add(a, b)))  # (0-d: an array, not a NumPy scalar)
    return _add.call(a, b)


def _accumulate(cotangents: dict, slot: int, value: jax.Array) -> None:
    previous = cotangents.get(slot)
    cotangents[slot] = value if previous is None else _sum(previous, value)


def _live_slots(plan: Plan, connected: Sequence[int]) -> set | None:
    """The slots a cotangent can flow from back to a connected source: its occurrences, and the outputs of the
    tracked nodes computed from them; None (every slot) where a tracked node runs a user's function (a custom
    gradient's `grad_fn`, which TF calls on every path from the targets, requested sources or not)."""
    live = {slot for i in connected for slot in plan.occ_slots.get(i, ())}
    for step in plan.steps:
        if not isinstance(step, NodeStep) or not step.tracked:
            continue
        if getattr(step.fn, "kernel", None) is None:
            return None
        if any(s in live for s in step.in_slots):
            live.update(step.out_slots)
    return live


@_numpy_errors_ignored
def gradient(
    plan: Plan,
    connected: Sequence[int],
    source_avals: Sequence[tuple],
    target_slots: Sequence[int],
    trainable: Sequence[int],
    seeds: Sequence[jax.Array | None],
) -> tuple[list, list]:
    """The per-op form of the compiled gradient program: `(target values, one gradient per connected source)`.

    Args:
      plan: the request's plan.
      connected: the connected sources' indices.
      source_avals: their (shape, DType).
      target_slots: each target's slot.
      trainable: the indices of the targets with a trainable dtype.
      seeds: one optional cotangent per target.
    """
    env = evaluate(plan, plan.leaf_values())
    live = _live_slots(plan, connected)
    cotangents: dict[int, jax.Array] = {}
    for k in trainable:
        slot = target_slots[k]
        value = env[slot]
        seed = seeds[k]
        seed = _ones_like.call(value) if seed is None else jnp.broadcast_to(seed, value.shape)
        _accumulate(cotangents, slot, _conj(seed))
    for step in reversed(plan.steps):
        if not isinstance(step, NodeStep) or not step.tracked:
            continue  # a leaf, or a node this tape did not record (a constant to it)
        out_slots = step.out_slots
        given = tuple(slot in cotangents for slot in out_slots)
        if not any(given):
            continue
        in_slots = step.in_slots
        inexact = [_inexact(env[s].dtype) for s in in_slots]
        if not any(inexact):
            continue
        wanted: tuple | None = None
        if live is not None:  # (only ops' own kernels: their VJPs run no user code)
            live_inputs = [s in live for s, floating in zip(in_slots, inexact) if floating]
            if not any(live_inputs):
                continue  # (no cotangent of it reaches a requested source)
            if not all(live_inputs):  # (its VJP computes the live inputs' cotangents alone)
                wanted = tuple(s in live for s in in_slots)
        supplied = [cotangents[s] for s, has in zip(out_slots, given) if has]
        grads = _vjp_kernel(step.key, step.fn, given, wanted)([env[s] for s in in_slots], supplied)
        for position, grad in grads.items():
            _accumulate(cotangents, in_slots[position], grad)
    results = []
    for i, (shape, dtype) in zip(connected, source_avals):
        total: Any = None  # a JAX array, or a NumPy one computed on the host
        for slot in plan.occ_slots.get(i, ()):
            cotangent = cotangents.get(slot)
            if cotangent is not None:
                total = cotangent if total is None else _sum(total, cotangent)
        if total is None:  # on the host, as the per-op tier's other values (`interpret.to_device` below)
            total = np.zeros(shape, dtype._np)
        # (not copied: a host result is the tier's own new array, `to_device` below makes it read-only, and a
        # view of another array, a variable's or a constant's value among them, is copied there)
        results.append(_conj(total).astype(dtype._np, copy=False))
    return interpret.to_device([env[s] for s in target_slots]), interpret.to_device(results)
