"""Host state read by a `tapeshim.function`: `tf.data` iterators pulled inside the trace.

TF runs an iterator's `IteratorGetNext` op on every call of a function, so
`next(iterator)` inside `tf.function` yields a new element each call. tapeshim's
trace records each pull instead of capturing the element it saw: the trace's
placeholders have the upcoming element's shapes (peeked, not consumed), and each
call pulls the elements on the host and passes them to the one compiled program as
per-call inputs. A call whose elements have other shapes than the trace's (the
last, smaller batch) traces the Python function again for those shapes without
counting as a TF retrace, as for an `input_signature` with `None` dimensions.

A `for x in dataset` loop (AutoGraph, `autograph/operators.py`) reads the whole
dataset instead: every call iterates it from the start on the host (as TF makes
a new iterator per call, so a dataset that reshuffles each iteration gives a new
order per call) and passes its elements stacked, one per-call input per run of
consecutive elements of the same shapes (all full batches, then the last, smaller
one); the loop body is traced once per run, into a loop over the stacked rows.
A call whose dataset gives other runs (another element count or shapes) traces
again for them, without counting as a TF retrace.

A pull inside a `tf.cond` branch or a `tf.while_loop` body runs only when (and as
often as) the branch or body does, so it is an ordered host callback in the program
instead (`io_callback`): it takes the next element when it runs. Its result shapes
are the trace's; the end of the data (or an element of other shapes) is reported
after the call, as TF's `OutOfRangeError` (or `InvalidArgumentError`).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from tapeshim._src import dtypes, errors, nest, registry
from tapeshim._src.dataset_iterator import END_OF_SEQUENCE, Optional, OwnedIterator, _computed, _HostPull
from tapeshim._src.node import OpKey
from tapeshim._src.tensor import Tensor


class OtherShapes(Exception):
    """A pull inside a loop met an element of other shapes than the trace's (`HostFeed.refuse_other_shapes`)."""


_peeking = [False]


@contextlib.contextmanager
def peeking_pulls() -> Iterator[None]:
    """Inside, a pull in a branch or loop body that runs (a trace computing a value: a `py_function`'s first
    run, to learn its output shapes) gives the element it would take when the call runs, and takes none."""
    saved, _peeking[0] = _peeking[0], True
    try:
        yield
    finally:
        _peeking[0] = saved


def _end_of_sequence() -> errors.OutOfRangeError:
    return errors.OutOfRangeError(None, None, f"{END_OF_SEQUENCE}\n\t [[{{{{node IteratorGetNext}}}}]]")


class _PullGroup:
    """The pulls one trace made from one iterator, in order."""

    def __init__(self, iterator: OwnedIterator) -> None:
        self.iterator = iterator
        self.optional: list[bool] = []  # per pull: made by get_next_as_optional
        self.needs_value: list[bool] = []  # per pull: the optional's get_value was used
        self.avals: list[list[tuple]] = []  # per pull: each leaf's (shape, dtype) at trace time
        self.branch_pulls = 0  # pulls inside control-flow branches and loop bodies (host callbacks)
        self.current: OwnedIterator | None = None  # the iterator this call pulls from (set per call)
        self.failure: errors.OpError | None = None  # what a host callback ran into during this call
        self.other_shapes = False  # whether this call's callbacks met an element of other shapes than traced
        self.taken: list = []  # the elements this call took from `current` (to put back: `HostFeed.rewind`)


def dataset_runs(source: Any) -> list[tuple[Any, tuple, int, list[jax.Array]]]:
    """All elements of a dataset (or an iterator's remaining ones, peeked), read on the host, as runs of
    consecutive elements of the same shapes.

    Returns, per run: its first element (for the structure), the leaves' `(shape,
    dtype)`, the number of elements, and each leaf's values stacked on a new first axis.
    """
    runs: list[list] = []
    with _HostPull():
        for element in _remaining(source) if isinstance(source, OwnedIterator) else source._elements():
            leaves = nest.flatten(element)
            if not all(isinstance(t, Tensor) for t in leaves):  # a window's datasets: iterated while tracing
                raise NotStackable(f"an element holds {type(next(t for t in leaves if not isinstance(t, Tensor)))}")
            leaves = [_computed(t) for t in leaves]
            avals = tuple((tuple(t._shape), t._dtype) for t in leaves)
            if runs and runs[-1][1] == avals:
                runs[-1][2].append(leaves)
            else:
                runs.append([element, avals, [leaves]])
    try:
        return [
            (first, avals, len(rows), [jnp.stack([row[i]._value for row in rows]) for i in range(len(avals))])
            for first, avals, rows in runs
        ]
    except (TypeError, ValueError) as exc:  # elements that are not arrays (strings): iterated while tracing
        raise NotStackable(str(exc)) from None


def _remaining(iterator: OwnedIterator) -> list:
    elements: list = []
    while (element := iterator.peek(len(elements))) is not None:
        elements.append(element)
    return elements


class NotStackable(Exception):
    """A dataset whose elements cannot be stacked into arrays (it is iterated while tracing instead)."""


def _runs_signature(runs: list) -> tuple:
    return tuple((avals, count) for _, avals, count, _ in runs)


class HostInputs:
    """The per-call host inputs a `FunctionTrace` recorded (`trace.host_inputs`)."""

    def __init__(self, trace: Any) -> None:
        self._trace = trace
        self.groups: dict[int, _PullGroup] = {}
        self.feed_of: dict[int, tuple[int, int, int]] = {}  # placeholder tid -> (iterator id, pull, leaf or -1)
        # Datasets (and iterators' remaining elements) read whole by loops: (source, runs' signature).
        self.datasets: list[tuple[Any, tuple]] = []
        self.read_iterators: set[int] = set()  # iterators a loop read to their end in this trace
        self.dataset_feed_of: dict[int, tuple[int, int, int]] = {}  # placeholder tid -> (dataset, run, leaf)

    def read_dataset(self, dataset: Any) -> list[tuple[Any, int, list[Tensor]]]:
        """Records a read of all of `dataset`'s elements; returns its runs as placeholders.

        Each run is `(first element, number of elements, stacked leaves)`: the loop
        body sees `nest.pack_sequence_as(first, [leaf[i] for leaf in leaves])`.
        """
        runs = dataset_runs(dataset)
        if isinstance(dataset, OwnedIterator):
            self.read_iterators.add(id(dataset))
        index = len(self.datasets)
        self.datasets.append((dataset, _runs_signature(runs)))
        result = []
        for r, (first, avals, count, arrays) in enumerate(runs):
            leaves = []
            for position, ((shape, dtype), array) in enumerate(zip(avals, arrays)):
                placeholder = self._trace.placeholder(array, (count,) + shape, dtype)
                self.dataset_feed_of[placeholder._tid] = (index, r, position)
                leaves.append(placeholder)
            result.append((first, count, leaves))
        return result

    def pull(self, iterator: OwnedIterator, optional: bool) -> Any:
        """Records one pull from `iterator` and returns the element as placeholders."""
        if id(iterator) in self.read_iterators:  # a loop of this trace read it to its end
            if not optional:
                raise _end_of_sequence()
            return Optional(None, iterator.element_spec)
        group = self.groups.get(id(iterator))
        if group is None:
            group = self.groups[id(iterator)] = _PullGroup(iterator)
        if self._trace.branch_depth or group.branch_pulls:
            # (after a pull in a loop or branch, the later ones too take their elements when they run, in order)
            return self._pull_in_branch(iterator, group, optional)
        index = len(group.optional)
        element = iterator.peek(index)
        if element is None and not optional:
            raise _end_of_sequence()
        if element is None:
            specs = nest.flatten(iterator.element_spec)
            avals = [(tuple(d or 0 for d in spec.shape.as_list()), spec.dtype) for spec in specs]
        else:
            avals = [(tuple(t._shape), t._dtype) for t in nest.flatten(element)]
        group.optional.append(optional)
        group.needs_value.append(False)
        group.avals.append(avals)
        values = (
            [jnp.zeros(shape, dtype._np) for shape, dtype in avals]
            if element is None
            else [t._value for t in nest.flatten(element)]
        )
        leaves = []
        for position, ((shape, dtype), value) in enumerate(zip(avals, values)):
            placeholder = self._trace.placeholder(value, shape, dtype)
            self.feed_of[placeholder._tid] = (id(iterator), index, position)
            leaves.append(placeholder)
        structure = iterator.element_spec if element is None else element
        value = nest.pack_sequence_as(structure, leaves)
        if not optional:
            return value
        flag = self._trace.placeholder(jnp.asarray(element is not None), (), dtypes.bool_)
        self.feed_of[flag._tid] = (id(iterator), index, -1)

        def on_get_value() -> None:
            # In a branch (`tf.cond(opt.has_value(), lambda: opt.get_value(), ...)`) the value may never
            # be used; an empty optional then gives zeros there instead of failing the call.
            if not self._trace.branch_depth:
                group.needs_value[index] = True

        return Optional(value, iterator.element_spec, flag, on_get_value)

    def _pull_in_branch(self, iterator: OwnedIterator, group: _PullGroup, optional: bool) -> Any:
        """A pull inside a branch or loop body: a host callback that takes the next element when it runs."""
        index = len(group.optional) + group.branch_pulls  # the element this pull takes first
        element = iterator.peek(index)  # for the shapes only
        group.branch_pulls += 1
        if element is None:
            specs = nest.flatten(iterator.element_spec)
            avals = [(tuple(d or 0 for d in spec.shape.as_list()), spec.dtype) for spec in specs]
        else:
            avals = [(tuple(t._shape), t._dtype) for t in nest.flatten(element)]
        structs = (jax.ShapeDtypeStruct((), np.bool_),) + tuple(
            jax.ShapeDtypeStruct(shape, dtype._np) for shape, dtype in avals
        )
        needs_value = [not optional]
        depth = self._trace.branch_depth

        def traced_outputs(element: Any) -> tuple | None:
            """The callback's outputs for `element` where it has the traced shapes, else None."""
            leaves = nest.flatten(element)
            if [(tuple(t._shape), t._dtype) for t in leaves] != avals:
                return None
            return (np.asarray(True),) + tuple(np.asarray(t._value) for t in leaves)

        def take_on_host() -> tuple:
            source = group.current if group.current is not None else group.iterator
            if _peeking[0]:  # a value the trace computes (a py_function's first run): the element, not taken
                ahead = source.peek(index)
                outputs = None if ahead is None else traced_outputs(ahead)
                return outputs if outputs is not None else tuple(np.zeros(s.shape, s.dtype) for s in structs)
            pulled = source.consume(1)
            group.taken.extend(pulled)
            outputs = traced_outputs(pulled[0]) if pulled else None
            if outputs is not None:
                return outputs
            leaves = nest.flatten(pulled[0]) if pulled else []
            group.other_shapes = group.other_shapes or bool(pulled)
            if group.failure is None and (pulled or needs_value[0]):
                group.failure = (
                    errors.invalid_argument(
                        "An iterator element pulled inside a tf.cond branch or tf.while_loop body has shapes "
                        f"{[list(t._shape) for t in leaves]}, not the traced {[list(a[0]) for a in avals]}.",
                        "IteratorGetNext",
                    )
                    if pulled
                    else _end_of_sequence()
                    if not optional
                    else errors.invalid_argument("The given optional does not have a value.", "OptionalGetValue")
                )
            return tuple(np.zeros(s.shape, s.dtype) for s in structs)

        def pull_op() -> tuple:
            return tuple(io_callback(take_on_host, structs, ordered=True))

        outputs = registry.record(
            pull_op, OpKey("IteratorGetNext", id(take_on_host)), (), (((), dtypes.bool_),) + tuple(avals), []
        )
        value = nest.pack_sequence_as(iterator.element_spec if element is None else element, list(outputs[1:]))
        if not optional:
            return value

        def on_get_value() -> None:
            if self._trace.branch_depth == depth:  # not from a nested branch, which may not run
                needs_value[0] = True

        return Optional(value, iterator.element_spec, outputs[0], on_get_value)


class HostFeed:
    """How a concrete function pulls its per-call host inputs.

    Args:
      host_inputs: what the trace recorded.
      flat_args: the traced call's flattened arguments (an iterator passed as an
        argument is pulled from the call's argument, not the traced one).
    """

    def __init__(self, host_inputs: HostInputs, flat_args: list) -> None:
        positions = {id(leaf): i for i, leaf in enumerate(flat_args) if isinstance(leaf, OwnedIterator)}
        self._groups = list(host_inputs.groups.values())
        self._sources: list[tuple[str, Any]] = []
        for group in self._groups:
            iterator = group.iterator
            if id(iterator) in positions:
                self._sources.append(("arg", positions[id(iterator)]))
            else:
                self._sources.append(("object", iterator))
        order = {id(group.iterator): g for g, group in enumerate(self._groups)}
        self._feed_of = {tid: (order[it], pull, leaf) for tid, (it, pull, leaf) in host_inputs.feed_of.items()}
        # A loop's dataset, or the iterator a loop reads to its end: an iterator argument is the call's.
        self._datasets = [
            ("arg", positions[id(source)]) if id(source) in positions else ("object", source)
            for source, _ in host_inputs.datasets
        ]
        self._dataset_feed_of = host_inputs.dataset_feed_of
        self.signature = (
            tuple(tuple(tuple(avals) for avals in group.avals) for group in self._groups),
            tuple(signature for _, signature in host_inputs.datasets),
        )
        self.branch_pulls = any(group.branch_pulls for group in self._groups)
        # The program's host inputs, in order: (iterator, pull, leaf) or ("dataset", dataset, run, leaf).
        self.used: list[tuple] = []
        self._read_to_end: list[tuple[OwnedIterator, list]] = []  # the iterators this call's loops read

    @property
    def pulls_iterators(self) -> bool:
        """Whether a call pulls elements from iterators (TF's IteratorGetNext, which has no gradient)."""
        return (
            self.branch_pulls
            or any(len(feed) == 3 for feed in self.used)
            or any(kind == "arg" or isinstance(source, OwnedIterator) for kind, source in self._datasets)
        )

    def add_input(self, tid: int) -> bool:
        """Makes placeholder `tid` a program input if it is a host input; returns whether it is."""
        feed: tuple | None = self._feed_of.get(tid)
        if feed is None:
            read = self._dataset_feed_of.get(tid)
            if read is None:
                return False
            feed = ("dataset",) + read
        self.used.append(feed)
        return True

    def peek(self, flat_args: list) -> tuple[list, tuple]:
        """This call's iterators and elements (not yet consumed), and their signature.

        Raises:
          tf.errors.OutOfRangeError: an iterator ran out (its remaining elements are consumed).
          tf.errors.InvalidArgumentError: an empty optional's value was used.
        """
        iterators, elements, signature = [], [], []
        for group, (kind, source) in zip(self._groups, self._sources):
            iterator = flat_args[source] if kind == "arg" else source
            group.current, group.failure, group.other_shapes, group.taken = iterator, None, False, []
            pulled = [iterator.peek(i) for i in range(len(group.optional))]
            for element, optional, needs_value in zip(pulled, group.optional, group.needs_value):
                if element is None and (not optional or needs_value):
                    iterator.consume(len(group.optional))
                    if optional:
                        raise errors.invalid_argument("The given optional does not have a value.", "OptionalGetValue")
                    raise _end_of_sequence()
            avals = tuple(
                traced if element is None else tuple((tuple(t._shape), t._dtype) for t in nest.flatten(element))
                for element, traced in zip(pulled, (tuple(a) for a in group.avals))
            )
            iterators.append(iterator)
            elements.append(pulled)
            signature.append(avals)
        sources = [flat_args[source] if kind == "arg" else source for kind, source in self._datasets]
        runs = [dataset_runs(source) for source in sources]
        return [iterators, elements, runs, sources], (tuple(signature), tuple(_runs_signature(r) for r in runs))

    def raise_failure(self) -> None:
        """Raises what a pull inside a branch or loop ran into during the call, if anything."""
        for group in self._groups:
            failure, group.failure = group.failure, None
            if failure is not None:
                raise failure

    def consume(self, peeked: list) -> None:
        """Consumes the peeked elements (after the call ran)."""
        for iterator, group in zip(peeked[0], self._groups):
            group.taken = iterator.consume(len(group.optional))
        self._read_to_end = []
        for source, runs in zip(peeked[3], peeked[2]):
            if isinstance(source, OwnedIterator):  # a loop read it to its end
                self._read_to_end.append((source, source.consume(sum(count for _, _, count, _ in runs))))

    def refuse_other_shapes(self) -> None:
        """Raises `OtherShapes` where a pull inside a branch or loop body met an element of other shapes than
        the trace's (a last, smaller batch): the call's results are not TF's, and `rewind` undoes its pulls."""
        if any(group.other_shapes for group in self._groups):
            raise OtherShapes

    def rewind(self) -> None:
        """Puts every element this call took back into its iterator (in order), as if it had not run."""
        for group in self._groups:
            if group.current is not None:
                group.current.put_back(group.taken)
            group.failure, group.other_shapes, group.taken = None, False, []
        for source, elements in self._read_to_end:
            source.put_back(elements)
        self._read_to_end = []

    def values(self, peeked: list) -> list[jax.Array]:
        """The program's host input values from the peeked elements."""
        elements = peeked[1]
        values = []
        for feed in self.used:
            if feed[0] == "dataset":
                values.append(peeked[2][feed[1]][feed[2]][3][feed[3]])
                continue
            g, pull, leaf = feed
            element = elements[g][pull]
            if leaf < 0:
                values.append(np.asarray(element is not None))
            elif element is None:
                shape, dtype = self._groups[g].avals[pull][leaf]
                values.append(np.zeros(shape, dtype._np))
            else:
                tensor: Tensor = nest.flatten(element)[leaf]
                values.append(tensor._value)
        return values
