"""Views of a tape: an op listing, the gradient program as a jaxpr or StableHLO, a Graphviz picture."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from typing import Any, Callable, Iterator

import jax

from tapeshim._src import differentiate as diff
from tapeshim._src import explain_hooks, nest
from tapeshim._src.explain import _request, _resolve_request
from tapeshim._src.explain_graph import Graph, node_of, nodes_restored, op_name, source_label, tape_state
from tapeshim._src.variable import Variable


def gradient_program(request: diff.Request) -> tuple[Callable, tuple]:
    """The program `gradient` compiles for `request` (default output gradients), and its arguments.

    The program maps `(leaf values, seeds)` to `(target values, gradients of
    the connected sources)`; it is the function `gradient` jits and caches.
    """
    source_avals = tuple((tuple(request.sources[i]._shape), request.sources[i]._dtype) for i in request.connected)
    target_avals = tuple((tuple(t._shape), t._dtype) for t in request.targets)
    program = diff._make_program(
        diff.GRADIENT,
        request.slice,
        request.connected,
        source_avals,
        target_avals,
        request.trainable,
        (),
    )
    return program, ([t.value for t in request.plan.leaves], [])


@contextlib.contextmanager
def _prepared(tape: Any, target: Any, sources: Any) -> Iterator[tuple]:
    target, sources = _resolve_request(tape, target, sources)
    state = tape_state(tape)
    with nodes_restored(state, nest.flatten(target)):
        _, _, request = _request(state, target, sources)
        yield state, request


def as_jaxpr(tape: Any, target: Any = None, sources: Any = None) -> Any:
    """The jaxpr of the program `tape.gradient(target, sources)` runs.

    Its inputs are the recorded slice's leaves (concrete tensors, including the
    sources' values) and the output gradients (none by default); its outputs
    are the targets' values and the gradients of the connected sources. (A
    training loop that reads an intermediate after its gradient has the next
    step's program return that value too: `read_after_gradient`.)

    Args:
      tape: the `GradientTape` (usable after `gradient`, also a one-shot one).
      target: as for `gradient` (default: the last `gradient` call's).
      sources: as for `gradient`.

    Returns:
      A `jax.extend`-style `ClosedJaxpr` (print it to read it).
    """
    with _prepared(tape, target, sources) as (_, request):
        program, args = gradient_program(request)
        return jax.make_jaxpr(program)(*args)


def as_stablehlo(tape: Any, target: Any = None, sources: Any = None) -> str:
    """The StableHLO (MLIR text) of the program `tape.gradient(target, sources)` compiles; see `as_jaxpr`."""
    with _prepared(tape, target, sources) as (_, request):
        program, args = gradient_program(request)
        return jax.jit(program).lower(*args).as_text()


def _shape_text(tensor: Any) -> str:
    return f"{tensor._dtype.name}[{','.join(str(d) for d in tensor._shape)}]"


class _Listing:
    """Names, dependencies and kinds of every tensor in a tape's slice, shared by `summary` and `to_dot`."""

    def __init__(self, tape: Any, target: Any, sources: Any) -> None:
        with _prepared(tape, target, sources) as (self.state, self.request):
            self._build(tape)

    def _build(self, tape: Any) -> None:
        log = explain_hooks.log_of(tape)
        since = log.windows[0].start if log.windows else None
        self.graph = Graph(self.request.targets, self.state, since)
        self.names: dict[int, str] = {}
        for k, tid in enumerate(sorted(self.graph.tensors)):
            self.names[tid] = f"%{k}"
        self.source_at: dict[int, list[int]] = {}
        for i, source in enumerate(self.request.sources):
            tids = self.state._var_reads.get(id(source), ()) if isinstance(source, Variable) else (source._tid,)
            for tid in tids:
                self.source_at.setdefault(tid, []).append(i)
        self.depends: dict[int, set] = {tid: set(self.source_at.get(tid, ())) for tid in self.graph.tensors}
        self.cut_inputs: dict[int, set] = {}
        for node in self.graph.nodes:
            inputs: set = set()
            for t in node.inputs:
                inputs |= self.depends.get(t._tid, set())
            recorded = self.graph.recorded(node)
            for tid in node.out_tids:
                if tid in self.depends:
                    if recorded and tid in self.state._produced:
                        self.depends[tid] |= inputs
                    elif inputs:
                        self.cut_inputs[tid] = inputs
        self.target_tids = {t._tid for t in self.request.targets}
        self.var_of: dict[int, str] = {}
        for vid, variable in self.state._watched_vars.items():
            for tid in self.state._var_reads.get(vid, ()):
                self.var_of[tid] = variable._name

    def source_names(self, indices: set) -> str:
        return ", ".join(f"s{i}" for i in sorted(indices))

    def leaf_kind(self, tensor: Any) -> str:
        tid = tensor._tid
        if tid in self.var_of:
            return f"read of tf.Variable '{self.var_of[tid]}' (watched)"
        if tid in self.state._tracked:
            return "watched tensor"
        return "constant"


def summary(tape: Any, target: Any = None, sources: Any = None, print_fn: Callable[[str], Any] | None = print) -> str:
    """Prints (and returns) the recorded slice from `target` as a readable op listing.

    One line per tensor, in the order the ops ran: the TF op and its inputs, the
    result's dtype and shape, the sources (`s0`, `s1`, ... in the order of
    `sources`) it depends on through recorded ops, and `CUT` where an op the
    tape did not record (no gradient, `stop_gradient`, `stop_recording`) drops
    a dependency on a source.

    Args:
      tape: the `GradientTape` (usable after `gradient`, also a one-shot one).
      target: as for `gradient` (default: the last `gradient` call's).
      sources: as for `gradient`.
      print_fn: called with the text; None to only return it.

    Returns:
      The listing.
    """
    listing = _Listing(tape, target, sources)
    lines = [
        f"GradientTape(persistent={tape._persistent}): {len(listing.graph.nodes)} ops, "
        f"{len(listing.graph.leaves)} inputs"
    ]
    for i, source in enumerate(listing.request.sources):
        lines.append(f"  s{i} = {source_label(source)}")
    rows = []
    done: set[int] = set()
    nodes_by_tid = {node.out_tids[0]: node for node in listing.graph.nodes}
    leaf_tids = {t._tid for t in listing.graph.leaves}
    for tid in sorted(listing.graph.tensors):
        tensor = listing.graph.tensors[tid]
        name = listing.names[tid]
        deps = listing.source_names(listing.depends.get(tid, set()))
        mark = "  <- target" if tid in listing.target_tids else ""
        if tid in leaf_tids:
            rows.append((f"{name} = {listing.leaf_kind(tensor)}", _shape_text(tensor), deps, mark))
            continue
        node = node_of(tensor, listing.state)
        if id(node) in done:
            continue
        done.add(id(node))
        node = nodes_by_tid.get(node.out_tids[0], node)
        outs = [listing.names[t] for t in node.out_tids if t in listing.names]
        args = ", ".join(listing.names.get(t._tid, "?") for t in node.inputs)
        status = ""
        if not listing.graph.recorded(node):
            cut = set()
            for t in node.out_tids:
                cut |= listing.cut_inputs.get(t, set())
            status = f"  CUT (not recorded; drops {listing.source_names(cut)})" if cut else "  (not recorded)"
        site = explain_hooks.site_of(tid)[0]
        where = f"  @ {site}" if site is not None else ""
        rows.append((f"{', '.join(outs)} = {op_name(node)}({args})", _shape_text(tensor), deps, status + mark + where))
    width = max((len(r[0]) for r in rows), default=0)
    swidth = max((len(r[1]) for r in rows), default=0)
    for text, shape, deps, tail in rows:
        lines.append(f"  {text:<{width}}  {shape:<{swidth}}  [{deps}]{tail}")
    text = "\n".join(lines)
    if print_fn is not None:
        print_fn(text)
    return text


class DotGraph(str):
    """Graphviz DOT source of a tape (a `str`); `.svg()` renders it when Graphviz is installed."""

    def svg(self) -> str:
        """The picture as SVG text.

        Raises:
          ImportError: when neither the `graphviz` Python package nor the `dot`
            program is installed (`pip install tapeshim[graphviz]` and Graphviz).
        """
        try:
            import graphviz  # optional extra
        except ImportError:
            graphviz = None
        if graphviz is not None:
            try:
                return graphviz.Source(str(self)).pipe(format="svg").decode()
            except Exception:  # noqa: BLE001 - the package without the binaries: try `dot` below
                pass
        dot = shutil.which("dot")
        if dot is None:
            raise ImportError(
                "Rendering a tape to SVG needs Graphviz: install the `dot` program (e.g. apt-get install "
                "graphviz) and optionally `pip install tapeshim[graphviz]`."
            )
        return subprocess.run([dot, "-Tsvg"], input=str(self).encode(), capture_output=True, check=True).stdout.decode()


def _quote(text: str) -> str:
    """A DOT string; the `\\n` line breaks in labels are kept as DOT escapes."""
    return '"' + text.replace('"', '\\"') + '"'


def to_dot(tape: Any, target: Any = None, sources: Any = None) -> DotGraph:
    """Draws the recorded slice: watched sources (green), ops, cut paths (red, dashed) and the target (bold).

    Args:
      tape: the `GradientTape` (usable after `gradient`, also a one-shot one).
      target: as for `gradient` (default: the last `gradient` call's).
      sources: as for `gradient`.

    Returns:
      A `DotGraph`: the DOT source as a `str`, with `.svg()` when Graphviz is installed.
    """
    listing = _Listing(tape, target, sources)
    graph = listing.graph
    lines = ["digraph tape {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];']
    leaf_tids = {t._tid for t in graph.leaves}
    for tensor in graph.leaves:
        tid = tensor._tid
        style = 'shape=box, style=filled, fillcolor="#eeeeee"'
        label = f"{listing.leaf_kind(tensor)}\\n{_shape_text(tensor)}"
        if tid in listing.source_at:
            label = f"source {listing.source_names(set(listing.source_at[tid]))}: " + label
            watched = tid in listing.state._tracked
            style = (
                'shape=box, style="filled,bold", fillcolor="#c8f0c8"'
                if watched
                else 'shape=box, style="filled,dashed", fillcolor="#f0d0d0"'
            )
        if tid in listing.target_tids:
            style += ", peripheries=2"
        lines.append(f"  t{tid} [label={_quote(label)}, {style}];")
    for node in graph.nodes:
        recorded = graph.recorded(node)
        nid = f"n{node.out_tids[0]}"
        cut = any(listing.cut_inputs.get(t) for t in node.out_tids)
        style = "shape=ellipse"
        label = op_name(node)
        if not recorded:
            label += "\\n(not recorded)"
            style += ", color=red, fontcolor=red, style=dashed" if cut else ", color=gray"
        if any(t in listing.target_tids for t in node.out_tids):
            style += ", penwidth=3, peripheries=2"
            label += "\\ntarget"
        lines.append(f"  {nid} [label={_quote(label)}, {style}];")
        for t in node.inputs:
            src = f"t{t._tid}" if t._tid in leaf_tids else f"n{node_of(t, listing.state).out_tids[0]}"
            edge = f"  {src} -> {nid}"
            deps = listing.depends.get(t._tid, set())
            if not recorded and deps:
                edge += ' [color=red, style=dashed, label="cut"]'
            elif recorded and deps:
                edge += " [penwidth=2]"
            lines.append(edge + ";")
    lines.append("}")
    return DotGraph("\n".join(lines) + "\n")
