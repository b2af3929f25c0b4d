"""`tf.custom_gradient`, mapped onto `jax.custom_vjp`.

The decorated function runs eagerly when no tape needs its gradient. Otherwise
it is recorded as one op whose JAX function is a `jax.custom_vjp`: the forward
runs the user's function on tensors wrapping JAX values, and the backward runs
it again and calls the `grad_fn` it returns, so `grad_fn` may use any tensor the
forward computed. Eagerly, the forward is traced at the call (`_CustomGradientCall.pin`),
where TF runs the function, so Python state that changes later does not change
the call's outputs. Variables the forward reads are extra inputs (their reads are
watched by tapes as usual) and get the gradients `grad_fn` returns for them.

Under a tape, the first call of what a function computes (its code, captured
values and input shapes) traces it under `jax.eval_shape` to learn its outputs,
the variables it reads and the arguments `grad_fn` returns None for. Later such
calls run it once on the tensors with every op recorded lazily and nothing
computed: the Python runs once per call, as TF's, without a JAX trace.

What must happen once per call, as in TF's one eager run, does: the keys of the
forward's random ops are drawn at the call and are inputs of the op, so its
forward and backward reruns draw the same numbers and the next call draws new
ones; its assignments happen at the call (eagerly, in the run on the tensors;
inside a function or a Keras call, as outputs of the op assigned there), and
its reruns keep theirs to themselves.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import dtypes, jaxpr_inline, nest, registry
from tapeshim._src.custom_gradient_parts import (
    LEAVES_JAX,
    LazyRun,
    VariableCollector,
    accepts_variables,
    fits,
    host_program,
    input_gradient,
    none_gradients,
    transposed_vjp,
    watched_variables,
    wrap,
    zero_cotangent,
)
from tapeshim._src.forward import ForwardAccumulator
from tapeshim._src.node import OpKey
from tapeshim._src.ops import math_ops, random_ops
from tapeshim._src.recorded_call import record_call
from tapeshim._src.state import StatelessScope, _thread_state, in_forward_mode
from tapeshim._src.structural_keys import Identity, structural_key
from tapeshim._src.tape import Recorder
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor
from tapeshim._src.variable import Variable

_UNSET = object()
_PROBED_SIZE = 1024
_probed: dict = {}
"""`structural_key` and input avals -> the argument positions grad_fn returns None for."""
_traced: dict = {}
"""`structural_key` without variables and input avals, for calls whose forward traced -> the ids of the
variables it read and the argument positions grad_fn returns None for: later calls computing the same thing
run the forward lazily (`_CustomGradientCall._run_lazily`) instead of tracing it again."""
_pinned: dict = {}
"""`structural_key`, input avals and assigned variables -> the op's forward traced at a call
(`_CustomGradientCall.pin`)."""
_pinned_backwards: dict = {}
"""`_pinned`'s keys -> the op's backward traced before a gradient (`_CustomGradientCall.trace_backward`), or None."""
_backward_draws: dict = {}
"""`structural_key` without variables -> True for calls whose `grad_fn` ran random ops: later such calls draw a
key for them (`_CustomGradientCall.add_backward_key`)."""


def _keep(cache: dict, key: Any, value: Any) -> None:
    """`cache[key] = value` in one of this module's caches, cleared when it holds `_PROBED_SIZE` entries."""
    if len(cache) >= _PROBED_SIZE:
        cache.clear()
    cache[key] = value


_CALL_SITE = ("recorders", "trace", "stateless_scope", "random_key_source", "generator_key_source")
"""The thread state a random op's key is drawn in: the call's, not that of the forward's run inside the op."""


def _call_site_state() -> tuple:
    return tuple(getattr(_thread_state, name) for name in _CALL_SITE)


def _set_call_site_state(values: tuple) -> None:
    for name, value in zip(_CALL_SITE, values):
        setattr(_thread_state, name, value)


@contextlib.contextmanager
def _keras_assignments_refused() -> Iterator[None]:
    """Inside a Keras call being traced, a forward that assigns a Keras variable (Keras keeps the new value in
    its `StatelessScope`) raises a clear error instead of leaking a traced value there.

    Raises:
      NotImplementedError: when the forward assigned a Keras variable.
    """
    scope = None
    if "keras" in sys.modules:
        from tapeshim._src.keras_compat import get_stateless_scope  # only once Keras is imported

        scope = get_stateless_scope()
    if scope is None:
        yield
        return
    before = dict(scope.state_mapping)
    yield
    after = scope.state_mapping
    if len(after) != len(before) or any(after[k] is not v for k, v in before.items()):
        scope.state_mapping = before
        raise NotImplementedError(
            "tapeshim: a tf.custom_gradient function called inside a Keras layer's call assigns one of the "
            "layer's Keras variables; assign it outside the custom-gradient function, or use a tf.Variable."
        )


class _CustomGradientCall:
    """One call of a `tf.custom_gradient` function: its tensor arguments, what the forward found, its op.

    `evaluate` runs (or shape-evaluates) the forward once, noting the result's
    structure, the `grad_fn` it returned, the variables it read and the argument
    positions `grad_fn` returns None for; `forward` and `backward` are then the
    recorded op's JAX function and its `jax.custom_vjp` backward rule.
    """

    __slots__ = (
        "_base_key",
        "args",
        "assigned",
        "backward_key",
        "backward_trace",
        "collector",
        "computed",
        "f",
        "grad_fn",
        "inputs",
        "keys",
        "kwargs",
        "lazy_result",
        "n_inputs",
        "none_grads",
        "outer",
        "out_dtypes",
        "pinned",
        "positions",
        "result",
        "variables",
        "watched",
    )

    def __init__(self, f: Callable, args: tuple, kwargs: dict[str, Any]) -> None:
        self.f = f
        self.args = args
        self.kwargs = kwargs
        self.positions = [i for i, a in enumerate(args) if isinstance(a, (Tensor, Variable, np.ndarray, jax.Array))]
        self.inputs = [convert_to_tensor(args[i]) for i in self.positions]
        self.n_inputs = len(self.inputs)
        # What the forward's run noted of the variables (the `LazyRun` itself once it ran on the tensors).
        self.collector: VariableCollector = VariableCollector()
        self.result: Any = None
        self.grad_fn: Any = None
        self.none_grads: set[int] = set()
        # The forward's output values when it already ran on the input values (no tape needs its
        # gradient, or it leaves tapeshim); None when it ran on abstract values only.
        self.computed: list | None = None
        self.variables: list[Variable] = []  # every variable the forward reads or writes: the op's inputs
        self.watched: list[Variable] = []  # those `grad_fn` returns gradients for (`VariableCollector`)
        self._base_key: Any = _UNSET
        # The keys of the random ops the forward runs, drawn once per call where the call is made (eagerly,
        # in a function's trace, in a Keras call), so the op's forward and backward draw the same numbers
        # and every call draws new ones; they are the op's last inputs.
        self.keys: list[Tensor] = []
        self.backward_key = False  # whether the last of `keys` is grad_fn's (`add_backward_key`)
        # The variables a forward traced inside a function or a Keras call assigns: their new values are the
        # op's last outputs, assigned where the call was made.
        self.assigned: list[Variable] = []
        self.lazy_result: Any = None  # the outputs of a run on the tensors, ops recorded lazily
        self.outer = _call_site_state()
        # The op's forward traced at the call and its `_pinned` key (`pin`), or None: the op runs `f`.
        self.pinned: tuple[jax_core.ClosedJaxpr, Any] | None = None
        # The backward's trace (`trace_backward`): None where it could not be traced, _UNSET before.
        self.backward_trace: Any = _UNSET
        self.out_dtypes: list[np.dtype] = []  # the outputs' dtypes (an integer output's cotangent is a zero)

    def key(self, variables: Sequence[Variable]) -> Any:
        """`structural_key` of this call reading `variables`; what it computes apart from them is keyed once."""
        if self._base_key is _UNSET:
            self._base_key = structural_key(self.f, self.args, self.kwargs, self.positions, [])
        base = self._base_key
        return None if base is None else (*base[:3], tuple(Identity(v) for v in variables))

    def run(
        self,
        values: list,
        variable_values: dict[int, Any] | None,
        variables_seen: Recorder | None,
        key_values: Sequence[jax.Array] | None = None,
        writes: dict[int, Variable] | None = None,
    ) -> tuple:
        """Runs `f` with `values` for its tensor arguments; returns `(result, grad_fn)`.

        `key_values` (the op's key inputs) are the keys of its random ops when it reruns inside the op;
        None for a run at the call, which draws them. With `writes`, assignments stay inside the run
        (noted in `writes`): a rerun inside the op, or a run on abstract values, must not assign again.
        """
        call_args = list(self.args)
        for position, tensor in zip(self.positions, wrap(values)):
            call_args[position] = tensor
        with StatelessScope(variable_values, variables_seen, writes), self.random_keys(key_values):
            result, grad_fn = self.f(*call_args, **self.kwargs)
        return result, grad_fn

    @contextlib.contextmanager
    def random_keys(self, key_values: Sequence[jax.Array] | None) -> Iterator[None]:
        """Random ops inside take their keys from `key_values`, or (None) from the keys drawn for this call."""
        drawn = 0

        def key(seed: Any, draw: Callable[[], jax.Array] | None = None) -> Tensor:
            nonlocal drawn
            drawn += 1
            if key_values is not None:
                if drawn <= len(key_values):
                    return concrete(key_values[drawn - 1])
                return concrete(jax.random.PRNGKey(0))  # a rerun drawing more than the call did
            if drawn > len(self.keys):
                self.keys.append(self._draw_key(seed, draw))
            return self.keys[drawn - 1]

        state = _thread_state
        saved = (state.random_key_source, state.generator_key_source)
        state.random_key_source = key
        state.generator_key_source = functools.partial(key, None)  # a `tf.random.Generator`'s draws
        try:
            yield
        finally:
            state.random_key_source, state.generator_key_source = saved

    def add_backward_key(self) -> None:
        """Draws a key for `grad_fn`'s random ops, as the op's last input, when an earlier call of what this call
        computes found its `grad_fn` runs random ops: TF runs `grad_fn` at every gradient, drawing new numbers,
        where a key drawn while the gradient program is traced would be a constant of that program. (Inside a
        function's trace the key is a per-call input of the function.)"""
        if self.key([]) in _backward_draws:
            self.keys.append(self._draw_key(None, None))
            self.backward_key = True

    @contextlib.contextmanager
    def grad_fn_keys(self, values: tuple) -> Iterator[None]:
        """Random ops inside `grad_fn` take keys made from the call's backward key (`add_backward_key`);
        without one, they draw as before and mark what this call computes for the next calls."""
        state = _thread_state
        if self.backward_key:
            base, draws = self._key_values(values)[-1], iter(range(sys.maxsize))

            def key(seed: Any, draw: Callable[[], jax.Array] | None = None) -> Tensor:
                return concrete(jax.random.fold_in(base, next(draws)))

        elif state.trace is None and state.random_key_source is None and state.generator_key_source is None:
            marked, call_site_trace = self.key([]), self.outer[_CALL_SITE.index("trace")]

            def key(seed: Any, draw: Callable[[], jax.Array] | None = None) -> Tensor:
                if marked is not None:
                    _keep(_backward_draws, marked, True)
                    if call_site_trace is not None:  # (a function's trace: it traces again, with the key)
                        call_site_trace.grad_fn_draws = True
                with jax.ensure_compile_time_eval():
                    return concrete(random_ops._next_key(seed) if draw is None else draw())

        else:  # (inside a function or a Keras call, keys are drawn per call there)
            yield
            return
        saved = (state.random_key_source, state.generator_key_source)
        state.random_key_source = key
        state.generator_key_source = functools.partial(key, None)
        try:
            yield
        finally:
            state.random_key_source, state.generator_key_source = saved

    def _draw_key(self, seed: Any, draw: Callable[[], jax.Array] | None) -> Tensor:
        """A random op's key (or, with `draw`, a `tf.random.Generator`'s), drawn where the call was made (TF's
        seed rules, a function's per-call keys)."""
        inside = _call_site_state()
        _set_call_site_state(self.outer)
        try:
            with jax.ensure_compile_time_eval():  # a concrete key, also while the forward is shape-evaluated
                return random_ops._op_key(seed) if draw is None else random_ops.generator_key(draw)
        finally:
            _set_call_site_state(inside)

    def evaluate(self) -> list:
        """Runs the forward once (on the values without a tape, else on abstract values); the outputs' structs.

        Sets `result`, `grad_fn`, `none_grads`, `variables` and `out_dtypes`, and `computed` when the forward
        ran on the input values.

        Raises:
          TypeError: when `f` reads variables and `grad_fn` has no `variables` parameter.
        """
        state = _thread_state
        out_structs: list
        eager = state.trace is None and not any(isinstance(t._value, jax.core.Tracer) for t in self.inputs)
        if eager and not state.recorders:
            out_structs = self.computed = self._run_on_values(False)  # no tape: run once, as TF does
        else:
            lazy_structs = self._run_lazily() if eager else None
            if lazy_structs is not None:
                out_structs = lazy_structs
            else:
                writes: dict[int, Variable] = {}
                try:
                    with _keras_assignments_refused():
                        structs = jax.eval_shape(
                            functools.partial(self._forward_structs, writes),
                            *[jax.ShapeDtypeStruct(t._shape, t._dtype._np) for t in self.inputs],
                        )
                    out_structs = structs  # (with the assigned variables' new values last)
                    if writes and eager:
                        # The trace kept its assignments to itself: a run on the tensors assigns, once, as TF's.
                        out_structs = self._assigning_run()
                    elif writes:
                        self.assigned = list(writes.values())
                except LEAVES_JAX:
                    # The forward leaves tapeshim (`x.numpy()`): run it once on the values, as TF runs it,
                    # and differentiate only through grad_fn.
                    out_structs = self.computed = self._run_on_values(True)
        self.out_dtypes = [np.dtype(struct.dtype) for struct in out_structs]
        self.variables = list(self.collector.variables.values())
        self.watched = watched_variables(self.collector)
        if self.watched and not accepts_variables(self.grad_fn):
            raise TypeError(
                "@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function uses "
                f"variables: {self.watched}"
            )
        return out_structs

    def _assigning_run(self) -> list:
        """The outputs' structs from an eager run of a forward that assigns variables, which assigns them.

        The run is on the tensors with every op recorded lazily (as later calls run), or on the values when
        it hands a value to Python.
        """
        structs = self._run_lazily()
        if structs is None:
            self.computed = self._run_on_values(True)
            return self.computed
        return structs

    def _forward_structs(self, writes: dict[int, Variable], *values: jax.Array) -> list:
        """The forward on abstract values (under `jax.eval_shape`), noting what `evaluate` sets.

        Returns the outputs, then the new values of the variables it assigns (noted in `writes`).
        """
        variable_values: dict[int, Any] = {}
        result, grad_fn = self.run(list(values), variable_values, self.collector, None, writes)
        self.result, self.grad_fn = result, grad_fn
        outs = [convert_to_tensor(t).value for t in nest.flatten(result)]
        key = self.key(list(self.collector.variables.values()))
        if key is not None:
            key = (key, tuple((t._shape, t._dtype) for t in self.inputs))
        none_grads = _probed.get(key) if key is not None else None
        if none_grads is None:  # grad_fn's None pattern: the same for calls computing the same thing
            none_grads = none_gradients(grad_fn, outs, len(self.args), watched_variables(self.collector))
            if key is not None:
                _keep(_probed, key, none_grads)
        self.none_grads = none_grads
        traced_key = self._traced_key()
        if traced_key is not None:
            _keep(_traced, traced_key, (tuple(self.collector.variables), none_grads))
        return outs + [variable_values[id(v)] for v in writes.values()]

    def _traced_key(self) -> Any:
        """What the call computes, whatever variables it reads, with its inputs' avals; None if unkeyable."""
        key = self.key([])
        return None if key is None else (key, tuple((t._shape, t._dtype) for t in self.inputs))

    def _run_lazily(self) -> list | None:
        """The outputs' structs from a run of the forward on the input tensors, every op recorded lazily.

        TF runs the forward eagerly on each call; tracing it under `jax.eval_shape` costs a JAX trace per
        call. A call computing what an earlier call traced (same code, captured values and input avals)
        runs it once on the tensors instead, computing nothing: its outputs' shapes come from the ops'
        cached shape rules, and what the trace found (variables read, grad_fn's None pattern) carries
        over. None when no such trace is known, or this run reads other variables or hands a value to
        Python (the caller then traces it).
        """
        key = self._traced_key()
        known = _traced.get(key) if key is not None else None
        if known is None:
            return None
        variable_ids, none_grads = known
        run = LazyRun()
        call_args = list(self.args)
        for position, tensor in zip(self.positions, self.inputs):
            call_args[position] = tensor
        with StatelessScope(None, run), self.random_keys(None):
            result, grad_fn = self.f(*call_args, **self.kwargs)
            outs = [convert_to_tensor(t) for t in nest.flatten(result)]
        run._epoch.done = True  # its lazy values are left over now: a later use computes them
        if run.left_tapeshim():
            return self._computed_from(run, result, grad_fn, outs) if run.wrote else None
        if tuple(run.variables) != variable_ids:  # other variables (`self.kernels[i]`): their own trace's probe
            probed_key = self.key(list(run.variables.values()))
            none_grads = _probed.get((probed_key, key[1])) if probed_key is not None else None
            if none_grads is None:
                return self._computed_from(run, result, grad_fn, outs) if run.wrote else None
        self.collector = run
        self.lazy_result = nest.pack_sequence_as(result, outs)
        self.result = nest.pack_sequence_as(result, [None] * len(outs))  # the structure only
        self.grad_fn = grad_fn
        self.none_grads = none_grads
        return [jax.ShapeDtypeStruct(t._shape, t._dtype._np) for t in outs]

    def _computed_from(self, run: LazyRun, result: Any, grad_fn: Callable, outs: list[Tensor]) -> list:
        """The values of a run on the tensors that assigned variables and cannot be recorded as it ran (it
        handed a value to Python, or read variables no trace knows): it must not run again, so the call is
        differentiated through `grad_fn` only, as a forward that leaves tapeshim is."""
        self.collector = run
        self.computed = [t.value for t in outs]
        self.result, self.grad_fn = nest.pack_sequence_as(result, outs), grad_fn
        self.none_grads = none_gradients(grad_fn, self.computed, len(self.args), watched_variables(run))
        return self.computed

    def _run_on_values(self, probe_none: bool) -> list:
        """The forward on the input values; probes `grad_fn`'s None pattern when `probe_none`."""
        self.collector.variables.clear()
        self.collector.watched.clear()
        result, grad_fn = self.run([t.value for t in self.inputs], None, self.collector)
        outs = [convert_to_tensor(t).value for t in nest.flatten(result)]
        self.result, self.grad_fn = result, grad_fn
        self.none_grads = (
            none_gradients(grad_fn, outs, len(self.args), watched_variables(self.collector)) if probe_none else set()
        )
        return outs

    def _values_by_variable(self, values: tuple) -> dict[int, Any]:
        return {id(v): value for v, value in zip(self.variables, values[self.n_inputs :])}

    def _key_values(self, values: tuple) -> tuple:
        return values[self.n_inputs + len(self.variables) :]

    def pin(self, inputs: Sequence[Tensor]) -> None:
        """Traces the op's forward now, at the call, where TF runs `f`; the op then evaluates this trace
        instead of running `f` again when it runs (a lazy output read later, the gradient's forward).

        Python state `f` reads that changes between the call and then (a value a loop raises after the call)
        so does not change the call's outputs, as TF's eager run does. Calls computing the same thing
        (`structural_key`) share the trace. The backward runs `f` and `grad_fn` at the gradient, where TF runs
        `grad_fn` (its own reads and side effects belong there: `trace_backward`); nothing is pinned where the
        forward cannot be traced.
        """
        key = self.key(self.variables)
        avals = tuple((tuple(t._shape), t._dtype._np) for t in inputs)
        cache_key = None if key is None else (key, avals, len(self.assigned))
        pinned = _pinned.get(cache_key) if cache_key is not None else None
        if pinned is None:
            try:
                forward = jax.make_jaxpr(self.forward)(*[jax.ShapeDtypeStruct(*aval) for aval in avals])
            except Exception:  # noqa: BLE001 - the op runs `f` when it runs, as before
                return
            pinned = (forward, cache_key)
            if cache_key is not None:
                _keep(_pinned, cache_key, pinned)
        self.pinned = pinned

    def trace_backward(self, fresh: bool = False) -> None:
        """Traces the op's backward (`f`, then `grad_fn`) for a gradient about to differentiate the op, before
        that gradient's own trace; the op's `jax.custom_vjp` backward then evaluates this trace
        (`pinned_backward`).

        Traced inside the gradient's transposition, the backward found none of its ops' traces in JAX's cache
        (keyed there by another context: the equations' abstract mesh) and traced every op again: 4-5 ms of
        a small custom gradient's 15 ms first step. Traced here, where the call's shape evaluation traced them,
        it finds them. A new gradient program traces it `fresh` for each call it differentiates, reading the
        state `grad_fn` reads now (a variable only it reads, a Python value changed since the call), as the
        program's trace ran `grad_fn` for each call; the per-op tier's calls computing the same thing share
        one trace, as they shared the VJP kernel traced from the first call. Nothing is traced for a call
        without a pinned forward (inside a function, a forward that left tapeshim), and none is kept where
        the backward fails here or gives a gradient of another type than its input's (it runs as before,
        raising at the gradient).
        """
        if self.pinned is None or (not fresh and self.backward_trace is not _UNSET):
            return
        forward, cache_key = self.pinned
        shared = not fresh and cache_key is not None
        traced = _pinned_backwards.get(cache_key, _UNSET) if shared else _UNSET
        if traced is _UNSET:
            structs = [jax.ShapeDtypeStruct(aval.shape, aval.dtype) for aval in forward.in_avals]
            traced = self._traced_backward(structs, forward.out_avals)
            if shared:
                _keep(_pinned_backwards, cache_key, traced)
        self.backward_trace = traced

    def _traced_backward(self, structs: list, out_avals: Sequence[Any]) -> jax_core.ClosedJaxpr | None:
        """`backward` traced on abstract values and cotangents, or None: an output without a floating cotangent
        (JAX hands the backward an integer output's as `float0`), a backward that fails here, or one giving a
        floating input a gradient of another shape or dtype (JAX's `custom_vjp` raises for it at the
        gradient; the host interpreter would not)."""
        if not all(jnp.issubdtype(aval.dtype, jnp.inexact) for aval in out_avals):
            return None
        cotangents = tuple(jax.ShapeDtypeStruct(aval.shape, aval.dtype) for aval in out_avals)
        try:
            traced = jax.make_jaxpr(self.backward)(tuple(structs), cotangents)
        except Exception:  # noqa: BLE001 - traced inside the gradient instead, raising there
            return None
        for struct, aval in zip(structs, traced.out_avals):
            floating = jnp.issubdtype(struct.dtype, jnp.inexact)
            if floating and (tuple(aval.shape) != tuple(struct.shape) or aval.dtype != struct.dtype):
                return None
        return traced

    def _pinned_for(self, values: Sequence[Any]) -> tuple | None:
        """`pin`'s `(forward, cache key)` where it takes `values`, else None (a per-op kernel of the
        op's key may run this call's function on another call's shapes: that runs `f`)."""
        pinned = self.pinned
        return pinned if pinned is not None and fits(values, pinned[0].in_avals) else None

    def forward(self, *values: jax.Array) -> tuple:
        """The op's JAX function: the tensor arguments', the variables' and the random keys' values -> the outputs."""
        if self.computed is not None:
            return tuple(self.computed)
        pinned = None if in_forward_mode() else self._pinned_for(values)  # (forward mode: the ops' JVP rules)
        if pinned is not None:
            return tuple(jaxpr_inline.inline(pinned[0], values))
        inputs, variable_values = list(values[: self.n_inputs]), self._values_by_variable(values)
        result, _ = self.run(inputs, variable_values, None, self._key_values(values), {})
        outs = [convert_to_tensor(t).value for t in nest.flatten(result)]
        return tuple(outs + [variable_values[id(v)] for v in self.assigned])

    def pinned_backward(self, values: tuple, cotangents: tuple) -> tuple:
        """The op's `jax.custom_vjp` backward: `trace_backward`'s trace where it takes these values and
        cotangents, else `backward`."""
        backward = self.backward_trace
        if (
            isinstance(backward, jax_core.ClosedJaxpr)
            and not in_forward_mode()
            and fits((*values, *cotangents), backward.in_avals)
        ):
            return tuple(jaxpr_inline.inline(backward, (*values, *cotangents)))
        return self.backward(values, cotangents)

    def host_forward(self, args: tuple) -> Any:
        """The per-op tier's forward kernel of the op on `args` as a host program from `pin`'s trace, without
        tracing the kernel (`replay_eager.forward_kernel`), or None."""
        pinned = None if self.computed is not None else self._pinned_for(args)
        if pinned is None:
            return None
        return host_program(pinned[0], args, range(len(pinned[0].out_avals)), as_dict=False)

    def host_vjp(self, args: tuple, given: tuple) -> Any:
        """The per-op tier's VJP kernel of the op, `(inputs, cotangents) -> {floating input's position:
        cotangent}`, as a host program from `trace_backward`'s trace, without tracing the kernel
        (`replay_eager._vjp_kernel`), or None (an output without a cotangent: the trace takes them all)."""
        backward = self.backward_trace
        inputs, cotangents = args
        if not isinstance(backward, jax_core.ClosedJaxpr) or not all(given):
            return None
        if not fits((*inputs, *cotangents), backward.in_avals):
            return None
        floating = [k for k, v in enumerate(inputs) if jnp.issubdtype(v.dtype, jnp.inexact)]
        return host_program(backward, args, floating, as_dict=True)

    def backward(self, values: tuple, cotangents: tuple) -> tuple:
        """The op's `jax.custom_vjp` backward: calls `grad_fn` on the cotangents; one cotangent per input.

        Raises:
          ValueError: when `grad_fn` returns the wrong number of gradients, or a gradient whose shape
            does not broadcast to its argument's.
        """
        if self.computed is not None:
            grad_fn = self.grad_fn
        else:
            inputs, variable_values = list(values[: self.n_inputs]), self._values_by_variable(values)
            _, grad_fn = self.run(inputs, variable_values, None, self._key_values(values), {})
        # the assigned values have none; an integer output's (JAX's float0) is a zero of its dtype, as TF's
        upstream = wrap(
            [
                jnp.zeros(np.shape(ct), dtype) if getattr(ct, "dtype", None) == jax.dtypes.float0 else ct
                for ct, dtype in zip(cotangents[: len(cotangents) - len(self.assigned)], self.out_dtypes)
            ]
        )
        with StatelessScope(self._values_by_variable(values)), self.grad_fn_keys(values):
            try:
                if self.watched:
                    grads, variable_grads = grad_fn(*upstream, variables=self.watched)
                else:
                    grads, variable_grads = grad_fn(*upstream), []
            except LEAVES_JAX as exc:
                raise NotImplementedError(
                    "tapeshim: a tf.custom_gradient grad_fn handed a tensor's value to Python (`.numpy()`, "
                    "`float()`, `print`, or a Python `if` on a tensor). TF runs grad_fn eagerly; tapeshim traces it "
                    "into the compiled gradient program, where values are not known yet. Use tf.print to see "
                    "them, and tf.where or tf.cond to branch on them."
                ) from exc
        return self._cotangents(grads, variable_grads, values)

    def _cotangents(self, grads: Any, variable_grads: Any, values: tuple) -> tuple:
        """`grad_fn`'s gradients as JAX cotangents (zeros for None), checked against the arguments."""
        grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
        if len(grads) != len(self.args):
            raise ValueError(
                f"custom_gradient function expected to return {len(self.args)} gradients, but returned "
                f"{len(grads)} instead."
            )
        variable_grads = list(variable_grads)
        if len(variable_grads) != len(self.watched):
            raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        by_variable = {id(v): grad for v, grad in zip(self.watched, variable_grads)}
        variable_grads = [by_variable.get(id(v)) for v in self.variables]
        out = []
        for position, value in zip(self.positions, values[: self.n_inputs]):
            grad = grads[position]
            out.append(zero_cotangent(value) if grad is None else input_gradient(grad, value, position))
        for grad, value in zip(variable_grads, values[self.n_inputs :]):
            out.append(zero_cotangent(value) if grad is None else convert_to_tensor(grad).value)
        out.extend(zero_cotangent(value) for value in self._key_values(values))
        return tuple(out)


def _call_inputs(call: _CustomGradientCall) -> tuple[Tensor, ...]:
    """The op's inputs: the tensor arguments, the reads of the variables the forward read, its random keys.

    An input whose gradient grad_fn returns as None reaches the op through stop_gradient, so
    tapes see it as unconnected (None), as TF does.
    """
    n_args = len(call.args)
    # (not under a forward accumulator, which differentiates the forward's ops, as TF's: its tangent would be cut)
    accumulating = any(isinstance(r, ForwardAccumulator) for r in _thread_state.recorders)
    unconnected = (
        set() if accumulating else {id(v) for j, v in enumerate(call.watched) if n_args + j in call.none_grads}
    )
    reads = [_read_before_call(call, v) for v in call.variables]
    reads = [math_ops.stop_gradient(t) if id(v) in unconnected else t for v, t in zip(call.variables, reads)]
    inputs = [math_ops.stop_gradient(t) if p in call.none_grads else t for p, t in zip(call.positions, call.inputs)]
    return tuple(inputs) + tuple(reads) + tuple(call.keys)


def _read_before_call(call: _CustomGradientCall, variable: Variable) -> Tensor:
    """The value `variable` had when the call's forward first read it (it may have assigned it since),
    watched by the tapes as a read."""
    collector = call.collector
    tensor = collector.first_values.get(id(variable)) if isinstance(collector, LazyRun) else None
    return variable._read_for_op() if tensor is None else variable._noted_read(tensor)


def _custom_vjp_op(call: _CustomGradientCall) -> jax.custom_vjp:
    """`call.forward` as a `jax.custom_vjp` whose backward is `call.backward`."""
    op = jax.custom_vjp(call.forward)

    def op_fwd(*values: jax.Array) -> tuple:
        return op(*values), values

    op.defvjp(op_fwd, call.pinned_backward)
    return op


def _record(call: _CustomGradientCall, op: jax.custom_vjp, all_inputs: tuple, out_structs: list) -> Any:
    """Records the call as one op on the tapes that track its inputs; returns its outputs in `f`'s structure."""
    transposed = transposed_vjp(call.forward, call.backward) if call.computed is not None else None

    def node_fn(*values: jax.Array) -> tuple:
        # Forward mode differentiates the ops the function ran, as TF's accumulators do (or, when
        # they left tapeshim, transposes grad_fn, as TF does then).
        if not in_forward_mode():
            return op(*values)
        return transposed(*values) if transposed is not None else call.forward(*values)

    # (`plan_steps.trace_backwards`, `replay_eager`'s kernels of the node)
    node_fn.trace_backward = call.trace_backward  # type: ignore[attr-defined]
    node_fn.host_forward = call.host_forward  # type: ignore[attr-defined]
    node_fn.host_vjp = call.host_vjp  # type: ignore[attr-defined]
    avals = tuple((tuple(s.shape), dtypes.from_numpy(np.dtype(s.dtype))) for s in out_structs)
    key = None if call.computed is not None else call.key(call.variables)
    if key is None:
        key = (id(call.f), id(op), Identity(op))  # this call only
    recorded = record_call(node_fn, OpKey("CustomGradient", key), all_inputs, avals, opaque=True)
    return _outputs(call, list(recorded))


def _outputs(call: _CustomGradientCall, outputs: list[Tensor]) -> Any:
    """The op's outputs in `f`'s structure; the values of the variables the forward assigns are assigned."""
    n_results = len(outputs) - len(call.assigned)
    for variable, value in zip(call.assigned, outputs[n_results:]):
        variable.assign(value, read_value=False)
    return nest.pack_sequence_as(call.result, outputs[:n_results])


def custom_gradient(f: Callable | None = None) -> Callable:
    """Decorates `f(*args) -> (outputs, grad_fn)` to use `grad_fn` as its gradient, as `tf.custom_gradient`.

    `grad_fn(*upstream)` (one upstream per output) returns one gradient per
    positional argument (`None` allowed; keyword arguments get none). If `f`
    reads variables, `grad_fn(*upstream, variables=...)` must return
    `(input_gradients, variable_gradients)`.

    Raises:
      TypeError: when `f` reads variables and `grad_fn` has no `variables` parameter.
      ValueError: when `grad_fn` returns the wrong number of gradients.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        call = _CustomGradientCall(f, args, kwargs)
        out_structs = call.evaluate()
        all_inputs = _call_inputs(call)
        tracking = registry.tracking_recorders(all_inputs)
        # Inside a JAX transformation (another custom gradient's grad_fn, differentiated by an outer
        # tape), JAX must see this function's custom rule too, as TF's second-order gradients do.
        traced = (
            not tracking and not in_forward_mode() and any(isinstance(t._value, jax.core.Tracer) for t in all_inputs)
        )
        if not tracking and not traced:
            if call.computed is not None:
                return call.result  # already run on the values
            if call.lazy_result is not None:
                return call.lazy_result  # already run on the tensors
            # Its outputs are the op's, which no tape tracks (grad_fn's None gradients cut every input): the
            # tapes must not record the ops f runs either, or they would differentiate f itself.
            saved, _thread_state.recorders = _thread_state.recorders, []
            try:
                result, _ = f(*args, **kwargs)
            finally:
                _thread_state.recorders = saved
            return result
        if not traced:
            call.add_backward_key()
            if call.backward_key:
                all_inputs += (call.keys[-1],)
        if not traced and call.computed is None and _thread_state.trace is None:
            call.pin(all_inputs)  # (eagerly: what the call computes is fixed at the call)
        op = _custom_vjp_op(call)
        if traced:
            return _outputs(call, wrap(op(*[t._value for t in all_inputs])))
        return _record(call, op, all_inputs, out_structs)

    return decorated
