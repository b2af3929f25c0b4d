"""`GradientTape.explain`: why a gradient is `None` (or zero), in TF users' words.

TF, JAX, PyTorch and Keras return `None` or zeros silently. tapeshim knows the
recorded graph, the tape's watched set and, from `explain_hooks`, where the tape
started, paused and lost values, so it can say which rule cut the path, where,
and what to change.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import jax
import numpy as np

from tapeshim._src import differentiate as diff
from tapeshim._src import explain_hooks, nest, tf_logging
from tapeshim._src.explain_graph import Graph, TapeState, node_of, nodes_restored, op_name, source_label, tape_state
from tapeshim._src.explain_hooks import Site
from tapeshim._src.tensor import Tensor
from tapeshim._src.variable import Variable, as_variable

CONNECTED = "connected"
IDENTITY = "identity"
ZERO = "structurally_zero"
NOT_WATCHED = "not_watched"
INTEGER_DTYPE = "integer_dtype"
NOT_TRAINABLE = "not_trainable"
LEFT_TAPE = "left_tape"
NO_GRADIENT_OP = "no_gradient_op"
BEFORE_TAPE = "before_tape"
STOP_RECORDING = "stop_recording"
AFTER_TAPE = "after_tape"
STOP_GRADIENT = "stop_gradient"
OTHER_VARIABLE = "other_variable"
NOT_READ = "not_read"
UNCONNECTED = "unconnected"

_NO_GRADIENT_WORDS = {
    "Round": "tf.round",
    "Floor": "tf.floor",
    "Ceil": "tf.math.ceil",
    "Rint": "tf.math.rint",
    "ArgMax": "tf.argmax",
    "ArgMin": "tf.argmin",
    "Cast": "tf.cast",
    "Less": "a comparison (<)",
    "LessEqual": "a comparison (<=)",
    "Greater": "a comparison (>)",
    "GreaterEqual": "a comparison (>=)",
    "Equal": "a comparison (==)",
    "NotEqual": "a comparison (!=)",
    "FloorDiv": "floor division (//)",
    "OneHot": "tf.one_hot",
    "ZerosLike": "tf.zeros_like",
    "OnesLike": "tf.ones_like",
    "IsNan": "tf.math.is_nan",
    "IsInf": "tf.math.is_inf",
    "IsFinite": "tf.math.is_finite",
    "Bitcast": "tf.bitcast",
    "StopGradient": "tf.stop_gradient",
}
_ZERO_GRADIENT_OPS = {"Sign"}


@dataclasses.dataclass
class SourceExplanation:
    """Why one source's gradient is what it is.

    Attributes:
      source: the source as passed.
      label: how the source is named (`tf.Variable 'w:0' (float32[])`).
      reason: one of the reason codes of this module (`"not_watched"`,
        `"no_gradient_op"`, ...), or `"connected"`/`"identity"` when the
        gradient is a real one.
      message: what happened, in TF users' words.
      fix: what to change.
      site: the file and line where the path was cut, when known.
      op: the TF op that cut the path, when one did.
    """

    source: Any
    label: str
    reason: str
    message: str
    fix: str = ""
    site: Site | None = None
    op: str | None = None

    @property
    def is_none(self) -> bool:
        """Whether `gradient` returns None for this source (with the default `unconnected_gradients`)."""
        return self.reason not in (CONNECTED, IDENTITY, ZERO)

    def __str__(self) -> str:
        text = f"{self.label}: {self.message}"
        if self.site is not None:
            text += f"\n    at {self.site}"
        if self.fix:
            text += f"\n    fix: {self.fix}"
        return text


class Explanation(list):
    """One `SourceExplanation` per flattened source, in the order of `tf.nest.flatten(sources)`."""

    def __init__(self, items: Sequence[SourceExplanation], sources: Any) -> None:
        super().__init__(items)
        self._sources = sources

    @property
    def reasons(self) -> list[str]:
        """The reason code of each source."""
        return [item.reason for item in self]

    def structured(self) -> Any:
        """The explanations in the structure of `sources`, as `gradient` returns gradients."""
        return nest.pack_sequence_as(self._sources, list(self))

    def __str__(self) -> str:
        return "\n".join(str(item) for item in self)

    def __repr__(self) -> str:
        return f"Explanation({self.reasons})"


def _resolve_request(tape: Any, target: Any, sources: Any) -> tuple[Any, Any]:
    if target is None:
        snapshot = explain_hooks.log_of(tape).snapshot
        if snapshot is None:
            raise ValueError("Pass `target` and `sources`: this tape has not computed a gradient yet.")
        return snapshot.targets, snapshot.sources
    if sources is None:
        raise ValueError("Pass `sources` (the tensors or variables to differentiate with respect to).")
    return target, sources


def _request(state: TapeState, target: Any, sources: Any) -> tuple[list, list, diff.Request]:
    flat_targets = [as_variable(t) for t in nest.flatten(target)]
    flat_sources = [as_variable(s) for s in nest.flatten(sources)]
    for value in flat_targets + flat_sources:
        if not isinstance(value, (Tensor, Variable)):
            raise TypeError(f"`target` and `sources` must be Tensors or Variables, got {type(value).__name__}.")
    return flat_targets, flat_sources, diff.Request(state, flat_targets, flat_sources, recorded_by=[])


def explain(tape: Any, target: Any = None, sources: Any = None) -> Explanation:
    """Explains, per source, why `tape.gradient(target, sources)` is `None` or zero.

    Usable before or after `gradient`, on persistent and one-shot tapes (a
    one-shot tape remembers its last recording for this). Without arguments it
    explains the last `gradient` call.

    Args:
      tape: the `GradientTape`.
      target: as for `gradient`.
      sources: as for `gradient`.

    Returns:
      An `Explanation`: a list with one `SourceExplanation` per flattened
      source (`print` it for a report).

    Raises:
      ValueError: without `target` on a tape that never computed a gradient.
      TypeError: for a target or source that is not a Tensor or Variable.
    """
    target, sources = _resolve_request(tape, target, sources)
    state = tape_state(tape)
    with nodes_restored(state, nest.flatten(target)):
        return _explain(tape, state, target, sources, True)


def _given(tape: Any, target: Any, sources: Any) -> tuple | None:
    """Per flattened source, whether the last `gradient` (if it was this request) returned a value."""
    snapshot = explain_hooks.log_of(tape).snapshot
    if snapshot is None or not getattr(tape, "_used", False):
        return None
    same = [a is b for a, b in zip(nest.flatten(target), nest.flatten(snapshot.targets))] + [
        a is b for a, b in zip(nest.flatten(sources), nest.flatten(snapshot.sources))
    ]
    if not all(same) or len(nest.flatten(sources)) != len(snapshot.given):
        return None
    return snapshot.given


def _explain(tape: Any, state: TapeState, target: Any, sources: Any, find_zeros: bool) -> Explanation:
    _, _, request = _request(state, target, sources)
    given = _given(tape, target, sources)
    if given is not None and all(given) and not state.nodes:
        # A one-shot tape releases its graph after a gradient without Nones: every source got a value.
        return Explanation(
            [
                SourceExplanation(
                    request.sources[p],
                    source_label(request.sources[p]),
                    IDENTITY,
                    "it is the target itself: its gradient is ones.",
                )
                if p in request.identity
                else SourceExplanation(
                    request.sources[p],
                    source_label(request.sources[p]),
                    CONNECTED,
                    "connected: the gradient flows through recorded ops.",
                )
                for p in request.source_positions
            ],
            sources,
        )
    log = explain_hooks.log_of(tape)
    since = log.windows[0].start if log.windows else None
    graph = Graph(request.targets, state, since)
    zero = _structural_zeros(request) if find_zeros else set()
    by_position: dict[int, SourceExplanation] = {}
    for position, source in enumerate(request.sources):
        label = source_label(source)
        if position in request.identity:
            item = SourceExplanation(source, label, IDENTITY, "it is the target itself: its gradient is ones.")
        elif position in request.connected:
            item = _connected(source, label, position, zero, graph, request)
        else:
            item = _why_none(tape, log, state, graph, request, source, label)
        by_position[position] = item
    return Explanation([by_position[p] for p in request.source_positions], sources)


def _connected(source: Any, label: str, position: int, zero: set, graph: Graph, request: Any) -> SourceExplanation:
    if position in zero:
        zeroing = [n for n in graph.nodes if graph.recorded(n) and op_name(n) in _ZERO_GRADIENT_OPS]
        ops = sorted({op_name(n) for n in zeroing})
        via = f" ({', '.join(ops)} has a zero gradient)" if ops else ""
        site = explain_hooks.site_of(zeroing[0].out_tids[0])[0] if zeroing else None
        return SourceExplanation(
            source,
            label,
            ZERO,
            f"the target depends on it, but its gradient is zero everywhere: every path goes through ops "
            f"whose gradient is zero{via}.",
            "use a differentiable surrogate on that path (for tf.sign, e.g. tf.tanh(k * x)).",
            site,
            ops[0] if ops else None,
        )
    del request
    return SourceExplanation(source, label, CONNECTED, "connected: the gradient flows through recorded ops.")


def _structural_zeros(request: Any) -> set[int]:
    """Connected sources whose gradient program output is a constant zero (independent of every input)."""
    if not request.connected:
        return set()
    from tapeshim._src import tape_views  # import cycle: explain <-> tape_views

    try:
        program, args = tape_views.gradient_program(request)
        closed = jax.make_jaxpr(program)(*args)
    except Exception:  # noqa: BLE001 - an explanation never fails because a program cannot be traced
        return set()
    jaxpr = closed.jaxpr
    outputs = jax.tree_util.tree_leaves(jax.eval_shape(program, *args))
    grad_vars = jaxpr.outvars[len(outputs) - len(request.connected) :]
    constant = _constant_outputs(jaxpr, grad_vars)
    if not constant:
        return set()
    values = jax.tree_util.tree_leaves(jax.jit(program)(*args))
    grads = values[len(values) - len(request.connected) :]
    found = set()
    for k, position in enumerate(request.connected):
        if k in constant and not np.any(np.asarray(grads[k])):
            found.add(position)
    return found


def _constant_outputs(jaxpr: Any, outvars: Sequence[Any]) -> set[int]:
    depends: set = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        if any(not hasattr(v, "val") and v in depends for v in eqn.invars):
            depends.update(eqn.outvars)
    return {k for k, v in enumerate(outvars) if hasattr(v, "val") or v not in depends}


def _why_none(
    tape: Any, log: Any, state: TapeState, graph: Graph, request: Any, source: Any, label: str
) -> SourceExplanation:
    def say(reason: str, message: str, fix: str, site: Site | None = None, op: str | None = None) -> Any:
        return SourceExplanation(source, label, reason, message, fix, site, op)

    start_site = log.windows[0].site if log.windows else None
    if not source._dtype.is_trainable:
        return say(
            INTEGER_DTYPE,
            f"its dtype is {source._dtype.name}: TF computes gradients only for floating and complex "
            "tensors, so an integer or bool source always gets None.",
            "cast to float before the tape, e.g. tf.Variable(3.0) or tf.cast(x, tf.float32), and "
            "watch/differentiate the float value.",
        )
    if isinstance(source, Variable):
        vid = id(source)
        watched = vid in state._watched_vars or vid in state._explicit_vars
        if not watched:
            other = _other_variable(state, graph, source)
            if other is not None:
                return other
            if not source._trainable:
                return say(
                    NOT_TRAINABLE,
                    "the variable was created with trainable=False, so the tape does not watch it automatically.",
                    "create it with trainable=True, or call tape.watch(variable) inside the tape.",
                    start_site,
                )
            if not state._watch_accessed:
                return say(
                    NOT_WATCHED,
                    "the tape was created with watch_accessed_variables=False and this variable was "
                    "never passed to tape.watch.",
                    "call tape.watch(variable) inside the `with tf.GradientTape()` block.",
                    start_site,
                )
            return _not_read(log, graph, request, say, start_site)
        occ = list(state._var_reads.get(vid, ()))
        if not occ:
            other = _other_variable(state, graph, source)
            if other is not None:
                return other
            return say(
                NOT_READ,
                "the tape watches this variable, but it was never read while the tape recorded.",
                "read the variable inside the `with tf.GradientTape()` block.",
                start_site,
            )
    else:
        if source._tid not in state._tracked:
            ancestors = _ancestor_leaves(graph, [t._tid for t in request.targets])
            used = source._tid in graph.tensors or any(tid == source._tid for tid, _ in ancestors)
            what = "the target uses it, but" if used else "it"
            return say(
                NOT_WATCHED,
                f"{what} is a constant to the tape: a tf.Tensor is never watched automatically (only "
                "trainable tf.Variables are).",
                "call tape.watch(x) inside the `with tf.GradientTape()` block before using x, or make "
                "it a tf.Variable.",
                start_site,
            )
        occ = [source._tid]
    return _cut(tape, log, state, graph, request, source, label, occ)


def _not_read(log: Any, graph: Graph, request: Any, say: Any, start_site: Site | None) -> SourceExplanation:
    """A trainable, auto-watched variable the tape never saw read."""
    targets = [t._tid for t in request.targets]
    for tid, trainable in _ancestor_leaves(graph, targets):
        when = _window_of(log, tid)
        if trainable and when in ("before", "paused"):
            where = "before the tape started recording" if when == "before" else "under tape.stop_recording()"
            return say(
                BEFORE_TAPE if when == "before" else STOP_RECORDING,
                f"the variable was not read while the tape recorded: the target uses a value computed "
                f"{where}, which is a constant to the tape.",
                "compute the target from the variable inside the `with tf.GradientTape()` block.",
                start_site if when == "before" else _pause_site(log, tid),
            )
    return say(
        NOT_READ,
        "the variable was never read while the tape recorded, so the target cannot depend on it.",
        "read the variable inside the `with tf.GradientTape()` block.",
        start_site,
    )


def _other_variable(state: TapeState, graph: Graph, source: Variable) -> SourceExplanation | None:
    """The target reads another variable with the same name: a re-created `tf.Variable`."""
    for vid, variable in state._watched_vars.items():
        if vid == id(source) or variable._name != source._name:
            continue
        if any(tid in graph.tensors for tid in state._var_reads.get(vid, ())):
            return SourceExplanation(
                source,
                source_label(source),
                OTHER_VARIABLE,
                f"the target reads a different tf.Variable object with the same name '{variable._name}': the "
                "variable was created again (e.g. inside the function that computes the loss), and the "
                "gradient is taken with respect to the old one.",
                "create variables once (in __init__ or build, or outside the step) and differentiate with "
                "respect to the same objects the computation reads.",
            )
    return None


def _window_of(log: Any, tid: int) -> str:
    """`before`, `paused`, `recording` or `after`: when, relative to the tape, a tensor id was made."""
    if not log.windows or tid < log.windows[0].start:
        return "before"
    for pause in log.pauses:
        if pause.start <= tid and (pause.end is None or tid < pause.end):
            return "paused"
    for window in log.windows:
        if window.start <= tid and (window.end is None or tid < window.end):
            return "recording"
    return "after"


def _pause_site(log: Any, tid: int) -> Site | None:
    for pause in log.pauses:
        if pause.start <= tid and (pause.end is None or tid < pause.end):
            return pause.site
    return None


def _cut(
    tape: Any, log: Any, state: TapeState, graph: Graph, request: Any, source: Any, label: str, occ: list[int]
) -> SourceExplanation:
    def say(reason: str, message: str, fix: str, site: Site | None = None, op: str | None = None) -> Any:
        return SourceExplanation(source, label, reason, message, fix, site, op)

    target_tids = [t._tid for t in request.targets]
    eager = explain_hooks.eager_ops_between(min(occ), 1 << 62)
    reached = graph.downstream(set(occ), eager)
    upstream = graph.upstream(target_tids, eager)
    if any(t in reached for t in target_tids) or any(t in reached and t in upstream for t, _ in eager):
        cut = _first_cut(graph, reached, upstream, eager, target_tids)
        if cut is not None:
            return _describe_cut(log, say, *cut)
    for exit_ in log.exits:
        exit_graph = Graph([exit_.tensor], state, None)
        if any(t in exit_graph.tensors for t in occ):
            return say(
                LEFT_TAPE,
                f"its value left the tape through {exit_.how}: what comes back is a new constant the "
                "tape cannot trace to it.",
                "keep the computation in TensorFlow ops (tf.* functions and tensor operators) instead of "
                ".numpy()/float()/numpy functions between the source and the target.",
                exit_.site,
            )
    first = min(occ)
    for tid, trainable in _ancestor_leaves(graph, target_tids):
        if tid <= first or not trainable or tid in occ:
            continue
        when = _window_of(log, tid)
        if when == "paused":
            return say(
                STOP_RECORDING,
                "the target uses a tensor computed under tape.stop_recording(), which the tape does not record.",
                "compute it outside the stop_recording block.",
                _pause_site(log, tid),
            )
        if when == "before":
            return say(
                BEFORE_TAPE,
                "the target uses a tensor computed before the tape started recording: ops run before "
                "`with tf.GradientTape()` are not recorded.",
                "move the computation inside the `with tf.GradientTape()` block (and watch the source there).",
                log.windows[0].site if log.windows else None,
            )
        if when == "after":
            return say(
                AFTER_TAPE,
                "the target uses a tensor computed after the tape's `with` block ended.",
                "move the computation inside the `with tf.GradientTape()` block.",
            )
    return say(
        UNCONNECTED,
        "the target does not depend on it: no recorded path leads from it to the target.",
        "check that the target is computed from this source (the loss uses the model's output, the "
        "model uses this variable); pass unconnected_gradients=tf.UnconnectedGradients.ZERO to get zeros.",
        log.windows[0].site if log.windows else None,
    )


def _ancestor_leaves(graph: Graph, target_tids: list[int]) -> list[tuple[int, bool]]:
    """`(id, trainable dtype)` of the tensors the targets come from, through nodes and ops run at once."""
    found: dict[int, bool] = {}
    seen: set[int] = set()
    leaf_tids = {t._tid for t in graph.leaves}
    stack = [(t, graph.tensors[t]._dtype._trainable) for t in target_tids]
    while stack:
        tid, trainable = stack.pop()
        if tid in seen:
            continue
        seen.add(tid)
        tensor = graph.tensors.get(tid)
        if tensor is not None and tid not in leaf_tids:
            stack.extend((t._tid, t._dtype._trainable) for t in node_of(tensor, graph.state).inputs)
            continue
        inputs = explain_hooks.site_of(tid)[3]
        if inputs:
            stack.extend(inputs)
            continue
        found[tid] = trainable
    return sorted(found.items())


def _first_cut(graph: Graph, reached: set, upstream: set, eager: list, targets: list) -> tuple | None:
    """The first op on a path from the source to the target that the tape did not differentiate through."""
    on_path = reached & upstream
    candidates = []
    for node in graph.nodes:
        if graph.recorded(node) or not any(t in on_path for t in node.out_tids):
            continue
        if any(t._tid in reached for t in node.inputs):
            candidates.append((node.out_tids[0], op_name(node), node))
    for tid, _ in eager:
        if tid in on_path or tid in targets:
            site, outer, name, _ = explain_hooks.site_of(tid)
            tensor = graph.tensors.get(tid)
            candidates.append((tid, name or outer or "op", tensor))
    if not candidates:
        return None
    candidates.sort(key=lambda c: c[0])
    tid, name, holder = candidates[0]
    dtype = None
    if holder is not None and hasattr(holder, "out_tids"):
        tensor = graph.tensors.get(tid)
        dtype = tensor._dtype if tensor is not None else None
    elif holder is not None:
        dtype = holder._dtype
    return tid, name, dtype


def _describe_cut(log: Any, say: Any, tid: int, name: str, dtype: Any) -> SourceExplanation:
    site, outer, site_op, _ = explain_hooks.site_of(tid)
    name = site_op or name
    words = _NO_GRADIENT_WORDS.get(name, f"tf.{outer}" if outer and not outer.startswith("_") else name)
    when = _window_of(log, tid)
    if name == "StopGradient":
        return say(
            STOP_GRADIENT,
            "the path goes through tf.stop_gradient, which blocks gradients on purpose.",
            "remove tf.stop_gradient from the path if the gradient should flow.",
            site,
            name,
        )
    if when == "paused":
        return say(
            STOP_RECORDING,
            f"the path goes through {name}, computed under tape.stop_recording(): the tape does not record ops there.",
            "compute it outside the stop_recording block.",
            _pause_site(log, tid) or site,
            name,
        )
    if when == "before":
        return say(
            BEFORE_TAPE,
            f"the path goes through {name}, computed before the tape started recording.",
            "move the computation inside the `with tf.GradientTape()` block.",
            site,
            name,
        )
    if when == "after":
        return say(
            AFTER_TAPE,
            f"the path goes through {name}, computed after the tape's `with` block ended.",
            "move the computation inside the `with tf.GradientTape()` block.",
            site,
            name,
        )
    if dtype is not None and not dtype.is_trainable:
        return say(
            NO_GRADIENT_OP,
            f"the path goes through {words} ({name}), whose result is {dtype.name}: integer and bool "
            "results carry no gradient.",
            "keep the values floating point on the path (e.g. a smooth surrogate instead of an argmax "
            "or comparison, or cast to int only after the loss).",
            site,
            name,
        )
    return say(
        NO_GRADIENT_OP,
        f"the path goes through {words} ({name}), an op TF registers no gradient for.",
        "replace it with a differentiable op on the path (e.g. x + tf.stop_gradient(tf.round(x) - x) "
        "for a straight-through round), or apply it only after the loss.",
        site,
        name,
    )


def log_nones(tape: Any, target: Any, sources: Any, results: list) -> None:
    """Logs the explanation of each `None` that `gradient` is about to return."""
    try:
        state = tape_state(tape)
        with nodes_restored(state, nest.flatten(target)):
            items = _explain(tape, state, target, sources, False)  # only the Nones: no program to run
    except Exception as exc:  # noqa: BLE001 - logging must never break `gradient`
        tf_logging.get_logger().warning("tapeshim could not explain a None gradient: %s", exc)
        return
    lines = [str(item) for item, result in zip(items, results) if result is None and item.is_none]
    if lines:
        tf_logging.get_logger().warning("GradientTape.gradient returned None for:\n%s", "\n".join(lines))
