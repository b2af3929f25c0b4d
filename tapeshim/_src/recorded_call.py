"""Recording a JAX function as one op on the tape, with the precise per-output dependency analysis.

A recorded gradient (higher order), a `tapeshim.function` call, a control-flow
construct inside a function, a custom gradient and a Keras layer call are each
recorded as one node whose function is a whole JAX program. `record_call`
records it; each output is tracked only by the recorders that track an input
it depends on differentiably, read off the program's jaxpr
(`output_dependencies`). So `d/dx` of an output that does not depend on `x` is
`None`, as in TF, which records only ops on watched tensors.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Hashable, Sequence

import jax

from tapeshim._src import registry
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor

if TYPE_CHECKING:
    from tapeshim._src.tape import Recorder  # import cycle: tape -> differentiate -> recorded_call

_DEPENDENCY_CACHE_SIZE = 512
_dependencies: OrderedDict[Hashable, list[set[int]]] = OrderedDict()
_dependencies_of_fn: weakref.WeakKeyDictionary[Callable[..., Any], list[set[int]]] = weakref.WeakKeyDictionary()


def trackers(tensors: Sequence[Tensor], recorded_by: Sequence[Recorder] | None = None) -> list[Recorder]:
    """The recorders that track any of `tensors`: among `recorded_by`, or the calling thread's recording ones."""
    if recorded_by is None:
        return registry.tracking_recorders(tensors)
    return [r for r in recorded_by if any(t._tid in r._tracked for t in tensors)]


def record_call(
    fn: Callable[..., tuple],
    key: Hashable,
    inputs: Sequence[Tensor],
    avals: tuple,
    recorded_by: Sequence[Recorder] | None = None,
    dependency_key: Hashable | None = None,
    opaque: bool = False,
    dependencies: Sequence[set[int]] | None = None,
) -> tuple[Tensor, ...]:
    """Records `fn` (a pure JAX function of the inputs' values) as one op; returns its lazy outputs.

    Args:
      fn: `fn(*arrays) -> tuple of arrays`.
      key: the node's identity (an `OpKey`), part of replay cache keys.
      inputs: the input tensors.
      avals: the outputs' `(shape, DType)`.
      recorded_by: the recorders that may record it; None for the calling
        thread's recording ones.
      dependency_key: a structural key under which the dependency analysis is
        cached (for a new `fn` every call, e.g. a recorded gradient); None to
        cache it with `fn` itself, as long as `fn` lives.
      opaque: every output depends on every input, without analysis (a
        custom gradient: TF's tape records it as one op over all its inputs,
        and its `grad_fn` decides which gradients are None).
      dependencies: the inputs each output depends on, when the caller knows
        them better than `fn`'s jaxpr shows (an op returning saved values
        through a `jax.custom_vjp`); None to read them off `fn`.

    Each output is tracked by the recorders that track an input it depends on.
    When no recorder tracks an input, or only the function trace does (it
    records everything and differentiates nothing), the analysis is skipped.
    """
    inputs = tuple(inputs)
    tracking = trackers(inputs, recorded_by)
    trace = _thread_state.trace
    if opaque or not tracking or all(r is trace for r in tracking):
        return registry.record(fn, key, inputs, avals, tracking)
    if dependencies is None:
        dependencies = output_dependencies(fn, inputs, dependency_key)
    per_output = [trackers([inputs[i] for i in deps], recorded_by) for deps in dependencies]
    return registry.record(fn, key, inputs, avals, per_output, deps=dependencies)


def output_dependencies(
    fn: Callable[..., tuple], inputs: Sequence[Tensor], key: Hashable | None = None
) -> list[set[int]]:
    """Which inputs each output of `fn` depends on differentiably, read off its jaxpr.

    Cached by `key` (least recently used evicted), or with `fn` itself when
    `key` is None.
    """
    cached = _dependencies.get(key) if key is not None else _weak_get(fn)
    if cached is not None:
        if key is not None:
            _dependencies.move_to_end(key)
        return cached
    structs = [jax.ShapeDtypeStruct(t._shape, t._dtype._np) for t in inputs]
    dependencies = jaxpr_dependencies(jax.make_jaxpr(fn)(*structs).jaxpr)
    if key is None:
        try:
            _dependencies_of_fn[fn] = dependencies
        except TypeError:  # a callable without weak references: not cached
            pass
        return dependencies
    _dependencies[key] = dependencies
    if len(_dependencies) > _DEPENDENCY_CACHE_SIZE:
        _dependencies.popitem(last=False)
    return dependencies


def jaxpr_dependencies(jaxpr: Any) -> list[set[int]]:
    """Which inputs of `jaxpr` (positions among its `invars`) each output depends on differentiably."""
    return [set(d) for d in _jaxpr_dependencies(jaxpr, [frozenset((i,)) for i in range(len(jaxpr.invars))])]


def _weak_get(fn: Callable[..., tuple]) -> list[set[int]] | None:
    try:
        return _dependencies_of_fn.get(fn)
    except TypeError:  # a callable without weak references
        return None


def _jaxpr_dependencies(jaxpr: Any, inputs: list[frozenset[int]]) -> list[frozenset[int]]:
    """Per output, the inputs it depends on differentiably (`stop_gradient` cuts; `jit` is entered)."""
    depends: dict[Any, frozenset[int]] = dict(zip(jaxpr.invars, inputs))
    empty: frozenset[int] = frozenset()

    def of(var: Any) -> frozenset[int]:
        return empty if hasattr(var, "val") else depends.get(var, empty)  # a Literal has a value

    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name == "stop_gradient":
            outs = [empty] * len(eqn.outvars)
        elif name in ("jit", "pjit") and "jaxpr" in eqn.params:
            inner = eqn.params["jaxpr"]
            outs = _jaxpr_dependencies(getattr(inner, "jaxpr", inner), [of(v) for v in eqn.invars])
        else:
            found = empty.union(*[of(v) for v in eqn.invars]) if eqn.invars else empty
            outs = [found] * len(eqn.outvars)
        for var, dep in zip(eqn.outvars, outs):
            depends[var] = dep
    return [of(v) for v in jaxpr.outvars]
