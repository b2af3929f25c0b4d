"""AutoGraph's run-time statements: what a converted `if`, `while`, `for` calls (`and`, `or`, `not`, chained
comparisons and conditional expressions: `logical.py`; the rules for the values after an `if`, and the statements
of a custom gradient's forward: `branches.py`).

Each operator looks at its condition or iterable when the statement runs: a
symbolic tensor (inside `tapeshim.function`) makes a `tf.cond`/`tf.while_loop`
over the statement's state (the variables it assigns), anything else runs as
plain Python, as TF's AutoGraph does. The checks on the state (a variable
defined in one branch only, a loop variable changing dtype or shape) raise TF's
AutoGraph errors.
"""

from __future__ import annotations

import builtins
import math
import threading
from typing import Any, Callable, Sequence

from tapeshim._src import control_flow, dtypes, nest
from tapeshim._src.autograph.branches import (
    OUTPUT,
    abstract_if,
    abstract_while,
    as_tensors,
    if_predicate,
    merge_branch_values,
    no_return_in_loop,
)
from tapeshim._src.autograph.composite_state import CompositeState
from tapeshim._src.autograph.logical import and_, is_symbolic
from tapeshim._src.autograph.symbols import (
    CarriedComposites,
    Composites,
    Undefined,
    UndefinedAfterLoop,
    UndefinedReturnValue,
)
from tapeshim._src.autograph.tensor_array import ArraysInLoop, NestedArrayWrites, TensorArray, branch_carries
from tapeshim._src.dataset import Dataset
from tapeshim._src.dataset_iterator import OwnedIterator
from tapeshim._src.dynamic_shapes import DynamicShapeNeeded, covered_by_invariants
from tapeshim._src.function_host_inputs import NotStackable
from tapeshim._src.ops import array_ops, math_ops
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable


# -- if --------------------------------------------------------------------------------
def if_stmt(
    test: Any,
    body: Callable[..., tuple],
    orelse: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
    composites: Composites | None = None,
) -> tuple:
    """A converted `if`: `tf.cond` over the assigned variables when `test` is a symbolic tensor.

    `composites`: the items and attributes the branches assign that code after the `if` reads: cond outputs
    too, as TF's AutoGraph (`CarriedComposites`).
    """
    if not is_symbolic(test, abstract=True):
        return body(*state) if test else orelse(*state)
    run_if = _tensor_if if is_symbolic(test) else abstract_if  # (abstract: a custom gradient's forward)
    if composites is not None:
        carried = CarriedComposites(composites, len(state))
        initial = carried.get()
        return carried.run(
            lambda: run_if(
                test,
                carried.branch(body, initial),
                carried.branch(orelse, initial),
                *carried.extend(state, names, live),
            )
        )
    return run_if(test, body, orelse, state, names, live)


def _tensor_if(
    test: Any,
    body: Callable[..., tuple],
    orelse: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
) -> tuple:
    # RaggedTensors and SparseTensors, before or from the branches: carried as their values tensors
    composites = CompositeState(state, names)
    seen: list = []
    body, orelse = composites.branch(body, seen), composites.branch(orelse, seen)
    result = _tensor_if_of_tensors(test, body, orelse, composites.state, names, live)
    return composites.if_results(result, seen)


def _tensor_if_of_tensors(
    test: Any,
    body: Callable[..., tuple],
    orelse: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
) -> tuple:
    predicate = if_predicate(test)
    branches = [control_flow._Branch(lambda fn=fn: fn(*state), [], "If", convert=False) for fn in (body, orelse)]
    results = [list(branch.result) for branch in branches]
    final: list[Any] = [None] * len(names)
    kept: list[int] = []
    for i, name in enumerate(names):
        values = [results[0][i], results[1][i]]
        choice = merge_branch_values(name, values, name in live)
        if choice is OUTPUT:
            kept.append(i)
        else:
            final[i] = choice
    rebuilt: dict[int, Callable[[Any], TensorArray]] = {}
    for i in kept:
        if isinstance(results[0][i], TensorArray):
            results[0][i], results[1][i], rebuilt[i] = branch_carries(names[i], results[0][i], results[1][i])
    flat_per_branch = [[leaf for i in kept for leaf in nest.flatten(as_tensors(result[i]))] for result in results]
    for branch, flat in zip(branches, flat_per_branch):
        branch.set_outputs(flat)
    outputs = control_flow.switch_branches(predicate, branches, "If")
    position = 0
    for i in kept:
        structure = as_tensors(results[0][i])
        size = len(nest.flatten(structure))
        final[i] = nest.pack_sequence_as(structure, outputs[position : position + size])
        if i in rebuilt:
            final[i] = rebuilt[i](final[i])
        position += size
    return tuple(final)


# -- while -----------------------------------------------------------------------------
def while_stmt(
    test: Callable[..., Any],
    body: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
    composites: Composites | None = None,
) -> tuple:
    """A converted `while`: `tf.while_loop` over the assigned variables when the test is a symbolic tensor.

    `composites`: the items and attributes the loop carries too (`acc[0]`, `self.total`), as TF's AutoGraph
    (`CarriedComposites`).
    """
    if composites is None:
        return _while_stmt(test, body, state, names, live)
    carried = CarriedComposites(composites, len(state))
    return carried.run(
        lambda: _while_stmt(carried.state_function(test), carried.body(body, 0), *carried.extend(state, names, live))
    )


def _while_stmt(
    test: Callable[..., Any], body: Callable[..., tuple], state: tuple, names: Sequence[str], live: Sequence[str]
) -> tuple:
    first = test(*state)
    if not is_symbolic(first, abstract=True):
        while first:
            state = body(*state)
            first = test(*state)
            if is_symbolic(first, abstract=True):  # (`while True:` with a `break` on a tensor)
                raise NotImplementedError(
                    "The condition of while loop started as non-Tensor, then changed to Tensor. This may happen "
                    "either because variables changed type, or when a break or return statement inside the loop "
                    "depends on a Tensor condition. In both cases, changing to a TF loop should remove the error."
                )
        return state
    if not is_symbolic(first):
        return abstract_while(test, body, state, names)
    return _tensor_loop(test, body, state, names, live, None)


def _tensor_loop(
    test: Callable[..., Any],
    body: Callable[..., tuple],
    state: Sequence[Any],
    names: Sequence[str],
    live: Sequence[str],
    maximum_iterations: int | None,
    counter: Any = None,
    stops_early: bool = False,
) -> tuple:
    """`tf.while_loop` over a converted loop's state.

    Variables still undefined at the loop are local to the body when nothing after
    the loop reads them; otherwise the body is traced once to learn their shape and
    dtype, and they start as zeros, as TF's AutoGraph does. `counter`, when given,
    is an extra first loop variable the caller's `test`/`body` receive before the state. `stops_early`: the
    loop may end before `maximum_iterations` (a `break`), so a `dynamic_size` TensorArray it writes gets the
    capacity a call finds it to reach, as for a tensor trip count (`autograph/tensor_array.py`).
    """
    composites = CompositeState(state, names)
    if composites.any:  # RaggedTensors, SparseTensors: carried as their values tensors (`composite_state.py`)
        n_extra = 0 if counter is None else 1
        test, body = composites.state_function(test, n_extra), composites.loop_body(body, n_extra)
        decomposed = _tensor_loop(test, body, composites.state, names, live, maximum_iterations, counter, stops_early)
        return composites.rebuild_all(decomposed)
    no_return_in_loop(names)
    extra = [] if counter is None else [counter]
    state = list(state)
    undefined = [i for i, v in enumerate(state) if isinstance(v, (Undefined, UndefinedReturnValue))]
    needed = [i for i in undefined if names[i] in live]
    arrays = [i for i, v in enumerate(state) if any(isinstance(leaf, TensorArray) for leaf in nest.flatten(v))]
    options = _LoopOptions()
    probed: list | None = None
    shapeless = any(
        isinstance(leaf, TensorArray) and leaf._element_shape is None for i in arrays for leaf in nest.flatten(state[i])
    )
    if needed or shapeless:
        # (the counter is a placeholder, as in the loop: the probe must not index with the start's value)
        counter_specs = [(tuple(t._shape), t._dtype) for t in (convert_to_tensor(v) for v in extra)]
        probe = control_flow._Branch(
            lambda *counters: _with_options(options, body, *counters, *state),
            counter_specs,
            "While",
            convert=False,
        )
        probed = list(probe.result)[len(extra) :]
        for i in needed:
            value = probed[i]
            if isinstance(value, (Undefined, UndefinedReturnValue)):
                continue  # undefined after every iteration too (an inner dataset loop's target): local to the body
            state[i] = nest.map_structure(lambda t: array_ops.zeros_like(convert_to_tensor(t)), value)
    carried = [i for i, v in enumerate(state) if not isinstance(v, (Undefined, UndefinedReturnValue))]
    for i in carried:
        if state[i] is None:
            raise ValueError(
                f"'{names[i]}' is None before the loop; it must be a tensor (or a Python value "
                "that converts to one) to be a loop variable."
            )
    steps = None if stops_early else maximum_iterations
    loop = (test, body, names, state, extra, carried, arrays, probed, options, maximum_iterations)
    try:
        return _traced_loop(*loop, steps)
    except NestedArrayWrites:
        if steps is None:
            raise
    # An inner loop writes a dynamic array this one carries: its capacity is the size a call finds
    return _traced_loop(*loop, None)


def _traced_loop(
    test: Callable[..., Any],
    body: Callable[..., Any],
    names: Sequence[str],
    state: list,
    extra: list,
    carried: list[int],
    arrays: list[int],
    probed: list | None,
    options: _LoopOptions,
    maximum_iterations: int | None,
    steps: int | None,
) -> tuple:
    """`_tensor_loop`'s `tf.while_loop`, its arrays given room for `steps` writes (None: bounded per call)."""
    templates = {  # (TensorArrays, also inside a tuple or dict variable, are carried as their buffer and size)
        i: ArraysInLoop(state[i], _probed_value(probed, i), steps) for i in arrays
    }
    initial = [templates[i].initial if i in templates else as_tensors(state[i]) for i in carried]
    n_extra = len(extra)

    def full_state(values: Sequence[Any]) -> list:
        current = list(state)
        for i, value in zip(carried, values[n_extra:]):
            current[i] = templates[i].arrays(value) if i in templates else value
        return list(values[:n_extra]) + current

    def loop_test(*values: Any) -> Any:
        return test(*full_state(values))

    def checked_body(*values: Any) -> tuple:  # with this loop's options current (set_loop_options)
        current = full_state(values)
        result = body(*current)
        new_extra = list(result[:n_extra])
        result = result[n_extra:]
        out = []
        for i, before in zip(carried, initial):
            after = result[i]
            if i in templates:
                after = templates[i].carries(after)
            out.append(_check_loop_variable(names[i], before, after, current[n_extra + i]))
        return tuple(new_extra + out)

    def loop_body(*values: Any) -> tuple:
        return _with_options(options, checked_body, *values)

    def limit() -> Any:  # the loop's own bound and set_loop_options's, whichever is smaller
        given = options.maximum_iterations
        if given is None or maximum_iterations is None:
            return maximum_iterations if given is None else given
        return math_ops.minimum(convert_to_tensor(maximum_iterations), convert_to_tensor(given))

    final = control_flow._while_loop(
        loop_test, loop_body, tuple(extra + initial), maximum_iterations=limit, dynamic_gradient=True
    )
    result = list(state)
    for i, value in zip(carried, list(final)[n_extra:]):
        if i in templates:
            result[i] = templates[i].final(value)
        else:
            result[i] = value
    return tuple(result)


def _probed_value(probed: list | None, i: int) -> Callable[[], Any] | None:
    """What a loop's probe (one trace of its body) gave variable `i`, when asked; None without a probe."""
    return None if probed is None else lambda: probed[i]


def _check_loop_variable(name: str, before: Any, after: Any, inside: Any = None) -> Any:
    """TF's AutoGraph checks of a loop variable after one iteration; returns it as tensors.

    `inside` is the variable as the body saw it (what `set_loop_options` names)."""
    if isinstance(after, (Undefined, UndefinedReturnValue)):
        raise ValueError(f"'{name}' must be defined in every iteration of the loop.")
    if after is None:
        raise ValueError(f"'{name}' is None after one iteration of the loop.")
    try:
        nest.assert_same_structure(before, after)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"'{name}' does not have the same nested structure after one iteration.\n{exc}") from None
    after = as_tensors(after)
    for old, new in zip(nest.flatten(before), nest.flatten(after)):
        if old._dtype != new._dtype:
            raise TypeError(
                f"'{name}' has dtype {old._dtype.name} before the loop, but dtype {new._dtype.name} after one iteration"
            )
    if _loops.options and inside is not None:  # this loop's shape invariants (set_loop_options), by body tensor
        invariants = [_loops.options[-1].shape_invariants.get(id(t)) for t in nest.flatten(inside)]
    else:
        invariants = [None] * len(nest.flatten(before))
    olds, news = [t._shape for t in nest.flatten(before)], [t._shape for t in nest.flatten(after)]
    if covered_by_invariants(olds, news, invariants):
        changed = [(tuple(old), tuple(new)) for old, new in zip(olds, news) if old != new]
        if changed:
            raise DynamicShapeNeeded(
                f"'{name}' changes shape from {changed[0][0]} to {changed[0][1]} in a loop, within its shape "
                "invariant (set_loop_options)"
            )
        return after
    for old, new in zip(nest.flatten(before), nest.flatten(after)):
        if old._shape != new._shape:
            raise ValueError(
                f"'{name}' has shape {tuple(old._shape)} before the loop, but shape "
                f"{tuple(new._shape)} after one iteration. Use "
                "tf.autograph.experimental.set_loop_options to set shape invariants."
            )
    return after


def _with_options(options: "_LoopOptions", body: Callable[..., Any], *state: Any) -> Any:
    """Runs `body` with `options` as the innermost loop's options."""
    _loops.options.append(options)
    try:
        return body(*state)
    finally:
        _loops.options.pop()


class _LoopOptions:
    """What `set_loop_options` said inside the body of the loop being traced."""

    def __init__(self) -> None:
        self.shape_invariants: dict[int, Any] = {}  # id of the body's tensor -> its invariant
        self.maximum_iterations: Any = None


class _LoopStack(threading.local):
    """Per thread, the options of the loops being traced, innermost last."""

    def __init__(self) -> None:
        self.options: list[_LoopOptions] = []


_loops = _LoopStack()


def set_loop_options(
    parallel_iterations: Any = None,
    swap_memory: Any = None,
    maximum_iterations: Any = None,
    shape_invariants: Any = None,
) -> None:
    """Options of the enclosing loop on tensors, as `tf.autograph.experimental.set_loop_options`.

    Call it first in the loop's body. `shape_invariants` is a list of `(tensor, shape)`
    pairs: a loop variable may change shape within its shape (a function with such a
    loop runs eagerly, see docs/function.md). `maximum_iterations` stops the loop after
    that many iterations. `parallel_iterations` and `swap_memory` tune TF's executor;
    XLA has no such settings, so they change nothing. Outside a loop on tensors
    (eagerly, or in a Python loop) nothing changes, as in TF.

    Args:
      parallel_iterations: accepted; no effect under XLA.
      swap_memory: accepted; no effect under XLA.
      maximum_iterations: the most iterations the loop runs.
      shape_invariants: `(tensor, shape)` pairs for the loop's variables.
    """
    del parallel_iterations, swap_memory
    if not _loops.options:
        return
    options = _loops.options[-1]
    if maximum_iterations is not None:
        options.maximum_iterations = maximum_iterations
    for pair in shape_invariants or ():
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"shape_invariants must be a list of (tensor, shape) pairs; got {pair!r}")
        tensor, shape = pair
        for leaf in nest.flatten(tensor):
            options.shape_invariants[id(leaf)] = shape


# -- for -------------------------------------------------------------------------------
class _RangeCall:
    """`range(...)` or `tf.range(...)` as a loop's iterable, not yet evaluated."""

    def __init__(self, func: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        self.func, self.args, self.kwargs = func, args, kwargs


def range_call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The iterable of `for i in range(...)`: a Python range stays one (the loop unrolls)."""
    if func is array_ops.range or (func is builtins.range and any(isinstance(a, (Tensor, Variable)) for a in args)):
        return _RangeCall(func, args, kwargs)
    return func(*args, **kwargs)


def for_stmt(
    iterated: Any,
    extra_test: Callable[..., Any] | None,
    body: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
    target: tuple | None = None,
    composites: Composites | None = None,
) -> tuple:
    """A converted `for`: a tensor loop over a tensor or `tf.range`, else Python iteration.

    `target` is `(function of an element giving the target's names' values, those names)`; `composites` as
    for `while_stmt`.
    """
    if composites is None:
        return _for_stmt(iterated, extra_test, body, state, names, live, target)
    carried = CarriedComposites(composites, len(state))
    test = None if extra_test is None else carried.state_function(extra_test)
    return carried.run(
        lambda: _for_stmt(iterated, test, carried.body(body, 1), *carried.extend(state, names, live), target)
    )


def _for_stmt(
    iterated: Any,
    extra_test: Callable[..., Any] | None,
    body: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
    target: tuple | None,
) -> tuple:
    if isinstance(iterated, _RangeCall):
        return _range_loop(iterated, extra_test, body, state, names, live)
    if isinstance(iterated, Tensor) and _thread_state.trace is not None:
        return _tensor_iteration(iterated, extra_test, body, state, names, live)
    if _thread_state.trace is not None and _is_finite_dataset(iterated):
        return _dataset_iteration(iterated, extra_test, body, state, names, live, target)
    source = _iterator_loop_source(iterated, extra_test)
    if source is not None:
        return _dataset_iteration(source, extra_test, body, state, names, live, target)
    trace = _thread_state.trace
    if (
        trace is not None
        and isinstance(iterated, OwnedIterator)
        and not iterated._unrolled
        and (extra_test is not None or id(iterated) in trace.host_inputs.groups)
        # (a tape recording the loop would recompute its iterations for the gradient, pulling again)
        and all(recorder is trace for recorder in _thread_state.recorders)
    ):
        return _iterator_loop(iterated, extra_test, body, state, names, live)
    return _python_iteration(iterated, extra_test, body, state)


def _iterator_loop(
    iterator: OwnedIterator,
    extra_test: Callable[..., Any] | None,
    body: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
) -> tuple:
    """`for x in iterator` that may stop early (a `break`), or over an iterator this trace already pulled from:
    a tensor loop that pulls one element per iteration when it runs (a host callback), as TF's, so the
    elements after a `break` stay for the next call. (The elements it pulls must have the shapes of the
    iterator's next one: a smaller last batch it reaches raises `InvalidArgumentError`.)"""

    def test(more: Any, *current: Any) -> Any:
        return _unbroken(more, extra_test, current)

    def step(more: Any, *current: Any) -> tuple:
        optional = iterator.get_next_as_optional()
        has_value = optional.has_value()
        # (every variable the loop carries is live in the next iteration; the others are local to the body)
        carried = [n for n, v in zip(names, current) if not isinstance(v, (Undefined, UndefinedReturnValue))]
        new = if_stmt(
            has_value,
            lambda *values: body(optional.get_value(), *values),
            lambda *values: values,
            current,
            names,
            carried,
        )
        return (has_value, *new)

    for name, value in zip(names, state):
        if name in live and "__" not in name and isinstance(value, Undefined):
            raise ValueError(f"'{name}' must be defined before the loop")  # TF's, for iterator loops
    return _tensor_loop(test, step, state, names, live, None, counter=convert_to_tensor(True))


def _unbroken(more: Any, extra_test: Callable[..., Any] | None, current: tuple) -> Any:
    """A converted loop's test: `more` elements, and (where the loop has a `break`) no break yet."""
    return more if extra_test is None else and_(lambda: more, lambda: extra_test(*current))


def _python_iteration(
    iterated: Any, extra_test: Callable[..., Any] | None, body: Callable[..., tuple], state: tuple
) -> tuple:
    for item in iterated:
        if extra_test is not None:
            go = extra_test(*state)
            if is_symbolic(go):
                go = bool(go)  # a tensor break condition in a Python loop: TF's error
            if not go:
                break
        state = body(item, *state)
    return state


def _range_loop(
    call: _RangeCall,
    extra_test: Callable[..., Any] | None,
    body: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
) -> tuple:
    args = list(call.args)
    start, limit, delta = (0, args[0], 1) if len(args) == 1 else (args + [1])[:3]
    start = call.kwargs.get("start", start)
    limit = call.kwargs.get("limit", limit)
    delta = call.kwargs.get("delta", delta)
    if _thread_state.trace is None:  # eagerly: iterate the range itself
        return for_stmt(call.func(*call.args, **call.kwargs), extra_test, body, state, names, live)
    dtype_of = (
        array_ops.range(start, limit, delta, **call.kwargs).dtype
        if not any(is_symbolic(v) for v in (start, limit, delta))
        else None
    )
    values = [convert_to_tensor(v) for v in (start, limit, delta)]
    if dtype_of is None:
        order = ["int32", "int64", "float32", "float64"]
        dtype_of = max((v.dtype for v in values), key=lambda d: order.index(d.name) if d.name in order else 0)
        dtype_of = call.kwargs.get("dtype", dtype_of)
    start_t, limit_t, delta_t = (math_ops.cast(v, dtype_of) for v in values)
    steps = None
    if not any(is_symbolic(v) for v in values):
        steps = builtins.max(0, math.ceil((float(limit_t) - float(start_t)) / float(delta_t)))

    def test(index: Any, *current: Any) -> Any:
        more = math_ops.logical_or(
            math_ops.logical_and(delta_t > 0, index < limit_t), math_ops.logical_and(delta_t < 0, index > limit_t)
        )
        return _unbroken(more, extra_test, current)

    def step(index: Any, *current: Any) -> tuple:
        return (index + delta_t, *body(index, *current))

    return _tensor_loop(test, step, state, names, live, steps, counter=start_t, stops_early=extra_test is not None)


def _tensor_iteration(
    tensor: Tensor,
    extra_test: Callable[..., Any] | None,
    body: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
) -> tuple:
    """`for row in tensor`: a loop over the first dimension (its size is static in tapeshim)."""
    if not tensor._shape:
        raise TypeError(
            "Tensor objects are only iterable when eager execution is enabled. To iterate over this "
            "tensor use tf.map_fn."
        )
    size = tensor._shape[0]

    def test(index: Any, *current: Any) -> Any:
        more = index < size
        return _unbroken(more, extra_test, current)

    def step(index: Any, *current: Any) -> tuple:
        return (index + 1, *body(tensor[index], *current))

    return _tensor_loop(
        test, step, state, names, live, size, convert_to_tensor(0, dtypes.int32), extra_test is not None
    )


def _is_finite_dataset(value: Any) -> bool:
    return isinstance(value, Dataset) and value._cardinality != -1


def _iterator_loop_source(iterated: Any, extra_test: Callable[..., Any] | None) -> Any:
    """What `for x in iterator` reads as one loop inside a trace, or None (a Python loop of pulls).

    An iterator made in the trace and not yet pulled from starts over on every call: its
    dataset. An argument or captured iterator not yet pulled from in this trace, in a
    loop without `break` (which would leave the rest for the next call): the iterator,
    whose remaining elements every call reads and consumes.
    """
    trace = _thread_state.trace
    if trace is None or not isinstance(iterated, OwnedIterator):
        return None
    if iterated._unrolled:
        dataset = iterated._dataset
        return dataset if iterated._source is None and _is_finite_dataset(dataset) else None
    if extra_test is not None or id(iterated) in trace.host_inputs.groups:
        return None
    return iterated if _is_finite_dataset(iterated._dataset) else None


def _dataset_iteration(
    dataset: Any,
    extra_test: Callable[..., Any] | None,
    body: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
    target: tuple | None = None,
) -> tuple:
    """`for x in dataset`: one tensor loop over each run of same-shaped elements (`function_host_inputs`).

    Every call of the function reads the dataset from its start on the host and
    passes its elements stacked, so the program does not grow with the dataset and
    the body is traced once per run (the full batches, then a last smaller one).
    """
    try:
        runs = _thread_state.trace.host_inputs.read_dataset(dataset)
    except NotStackable:
        return _python_iteration(dataset, extra_test, body, state)
    # A target undefined before the loop stays local to it (TF: "'x' must be defined before the loop" when
    # it is read after a dataset loop); the runs' elements may have different shapes.
    local = {
        name
        for name in (target[1] if target is not None else ())
        if name in names and isinstance(state[names.index(name)], Undefined)
    }
    live = [name for name in live if name not in local]
    for first, count, leaves in runs:

        def test(index: Any, *current: Any, count: int = count) -> Any:
            more = index < count
            return _unbroken(more, extra_test, current)

        def step(index: Any, *current: Any, first: Any = first, leaves: list = leaves) -> tuple:
            element = nest.pack_sequence_as(first, [leaf[index] for leaf in leaves])
            return (index + 1, *body(element, *current))

        if target is not None:  # a target defined before the loop starts each run as the run's zero element
            zero = nest.pack_sequence_as(first, [array_ops.zeros_like(leaf[0]) for leaf in leaves])
            values = list(state)
            for name, value in zip(target[1], target[0](zero)):
                if name in names and name not in local:
                    values[names.index(name)] = value
            state = tuple(values)

        state = _tensor_loop(
            test, step, state, names, live, count, convert_to_tensor(0, dtypes.int32), extra_test is not None
        )
    # TF reduces the dataset in one op without a gradient: no gradient flows out of the loop's variables.
    return tuple(
        UndefinedAfterLoop(name)
        if name in local and isinstance(value, Undefined)
        else nest.map_structure(lambda v: math_ops.stop_gradient(v) if isinstance(v, Tensor) else v, value)
        if isinstance(value, (Tensor, list, tuple, dict))
        else value
        for name, value in zip(names, state)
    )
