"""`tf.cond`, `tf.while_loop`, `tf.case`, `tf.switch_case`.

Eagerly (also inside a `GradientTape`) they run as Python control flow, as TF's
eager mode does, so the tape records the branch or iterations that ran. Inside
`tapeshim.function` each branch or loop body is traced into its own graph slice
and the whole construct is recorded as one op over `lax.cond`, `lax.switch`,
`lax.while_loop` or (with `maximum_iterations`, so that it can be reverse
differentiated) `lax.scan`.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tapeshim._src import control_flow_jax, errors, nest, replay, symbolic_dims
from tapeshim._src.autograph.loop_gradient import reverse_differentiable_while
from tapeshim._src.autograph.tensor_array import ArraysInLoop, TensorArray, branch_carries
from tapeshim._src.dtypes import int32
from tapeshim._src.dynamic_shapes import DynamicShapeNeeded, covered_by_invariants
from tapeshim._src.node import Node, OpKey
from tapeshim._src.ops import array_ops, math_ops
from tapeshim._src.recorded_call import record_call
from tapeshim._src.state import _thread_state, next_tensor_id
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable


class InaccessibleTensorError(ValueError):
    """A tensor of a loop body used outside the loop (TF's `InaccessibleTensorError`)."""


LOOP_TENSOR_KEY = OpKey("LoopTensorOutOfScope")


def use_of_loop_tensor(*arrays: jax.Array) -> tuple:
    """The node of a loop body's placeholder after the loop: a plan that reaches it is refused."""
    raise InaccessibleTensorError("A tensor of a loop body is out of scope here.")


OUT_OF_SCOPE_MESSAGE = (
    "A tensor of a tf.while_loop body (a loop variable or a value computed from it, appended to a Python list, "
    "say) is out of scope and cannot be used after the loop. Use return values, explicit Python locals or "
    "TensorFlow collections to access it (a tf.TensorArray in a loop)."
)


def _retire_loop_placeholders(branches: Sequence["_Branch"]) -> None:
    """After a loop, its bodies' placeholders (and what was computed from them) cannot be used any more."""
    for branch in branches:
        for tensor in branch.placeholders:
            tensor._value = None
            tensor._node = Node(use_of_loop_tensor, LOOP_TENSOR_KEY, (), (tensor._tid,))


class _Branch:
    """A Python callable traced into a graph slice over placeholders and captured tensors.

    Variable assignments and `tf.print` effects made while tracing the callable are
    taken back out of the enclosing trace (`assigned`, `effects`): the construct
    that owns the branch returns the new values and an effect token as outputs.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        specs: Sequence[tuple],
        what: str,
        convert: bool = True,
        stand_ins: Sequence[jax.Array] | None = None,
    ) -> None:
        trace = _thread_state.trace
        self.first_tid = next_tensor_id()
        self.placeholders = [  # (no stand-in value for a size known per call: a trace for every size)
            trace.placeholder(
                None
                if any(symbolic_dims.is_symbolic(d) for d in shape)
                else jnp.zeros(shape, dtype._np)
                if stand_ins is None
                else stand_ins[i],
                shape,
                dtype,
            )
            for i, (shape, dtype) in enumerate(specs)
        ]
        pending_before = dict(trace.pending)
        effects_before = len(trace.effects)
        trace.branch_depth += 1  # host state read here is read when the branch runs (function_host_inputs)
        try:
            self.result = fn(*self.placeholders)
        finally:
            trace.branch_depth -= 1
            self.assigned = {
                k: v for k, v in trace.pending.items() if k not in pending_before or v[1] is not pending_before[k][1]
            }
            self.effects = trace.effects[effects_before:]
            trace.pending.clear()
            trace.pending.update(pending_before)
            del trace.effects[effects_before:]
        self.set_outputs(nest.flatten(self.result) if convert else [])

    def set_outputs(self, outputs: Sequence[Any]) -> None:
        """The branch's (flat) outputs, converted to tensors (AutoGraph chooses them itself)."""
        self.outputs = [convert_to_tensor(leaf) for leaf in outputs]
        self.avals = tuple((tuple(t._shape), t._dtype) for t in self.outputs)

    def finish(self, extra: Sequence[Tensor] = ()) -> None:
        """Builds the slice for the outputs (and `extra` outputs: new variable values, effect tokens)."""
        self.outputs = self.outputs + list(extra)
        sliced = replay.Slice(self.outputs, first_tid=self.first_tid)
        position = {t._tid: i for i, t in enumerate(self.placeholders)}
        self.captures: list[Tensor] = []
        self._sources: list[tuple[bool, int]] = []
        for leaf in sliced.leaves:
            if leaf._tid in position:
                self._sources.append((True, position[leaf._tid]))
            else:
                self._sources.append((False, len(self.captures)))
                self.captures.append(leaf)
        self._run = sliced.function()
        self.avals = tuple((tuple(t._shape), t._dtype) for t in self.outputs)

    def run(self, placeholder_values: Sequence[jax.Array], capture_values: Sequence[jax.Array]) -> list:
        leaf_values = [
            placeholder_values[i] if is_placeholder else capture_values[i] for is_placeholder, i in self._sources
        ]
        return self._run(leaf_values)


def _effect_token(effects: Sequence[Tensor]) -> Tensor:
    """One int32 zero that depends on every effect in `effects` (none: a constant zero)."""
    token = convert_to_tensor(np.zeros((), np.int32))
    for effect in effects:
        token = math_ops.add(token, effect)
    return token


def _finish_branches(branches: Sequence[_Branch]) -> tuple[list, bool]:
    """Gives every branch the same extra outputs: each assigned variable's value, an effect token.

    A branch that does not assign a variable another branch assigns returns the
    variable's value from before the construct. Returns the assigned variables and
    whether an effect token was added.
    """
    trace = _thread_state.trace
    variables: dict[int, Any] = {}
    for branch in branches:
        for key, (variable, _) in branch.assigned.items():
            variables.setdefault(key, variable)
    before = {
        key: (trace.pending[key][1] if key in trace.pending else trace.read_variable(variable))
        for key, variable in variables.items()
    }
    with_token = any(branch.effects for branch in branches)
    for branch in branches:
        extra = [branch.assigned[key][1] if key in branch.assigned else before[key] for key in variables]
        extra = [convert_to_tensor(t) for t in extra]
        if with_token:
            extra.append(_effect_token(branch.effects))
        branch.finish(extra)
    return list(variables.values()), with_token


def _apply_state(outputs: Sequence[Tensor], variables: Sequence[Any], with_token: bool) -> list:
    """Assigns the construct's variable outputs, records its effect token; returns the other outputs."""
    trace = _thread_state.trace
    outputs = list(outputs)
    if with_token:
        trace.effects.append(outputs.pop())
    for variable, value in zip(variables, outputs[len(outputs) - len(variables) :]):
        trace.assign(variable, value)
    return outputs[: len(outputs) - len(variables)]


def _merge_captures(branches: Sequence[_Branch]) -> tuple[list[Tensor], list[list[int]]]:
    """All branches' captured tensors once each, and where each branch finds its own."""
    merged: list[Tensor] = []
    index: dict[int, int] = {}
    positions = []
    for branch in branches:
        mine = []
        for tensor in branch.captures:
            if tensor._tid not in index:
                index[tensor._tid] = len(merged)
                merged.append(tensor)
            mine.append(index[tensor._tid])
        positions.append(mine)
    return merged, positions


def _record(fn: Callable[..., tuple], name: str, inputs: Sequence[Tensor], avals: tuple) -> tuple:
    """Records the construct as one op; each output is tracked by the tapes that track an input it depends on."""
    return record_call(fn, OpKey(name, id(fn)), inputs, avals)


def _is_traced(value: Tensor) -> bool:
    trace = _thread_state.trace
    return trace is not None and trace.is_symbolic(value)


def _check_same_outputs(branches: Sequence[_Branch], message: str) -> None:
    first = branches[0]
    for other in branches[1:]:
        try:
            nest.assert_same_structure(first.result, other.result)
        except ValueError as exc:
            raise ValueError(f"{message}\n{exc}") from None
        if first.avals != other.avals:
            described = [[(list(s), d.name) for s, d in b.avals] for b in (first, other)]
            if [d for _, d in first.avals] == [d for _, d in other.avals]:  # TF: an unknown shape
                raise DynamicShapeNeeded(
                    f"The branches give outputs of different shapes: {described[0]} vs {described[1]}"
                )
            raise TypeError(f"{message} Their outputs' dtypes differ: {described[0]} vs {described[1]}.")


def _read_inside(fn: Callable[[], Any]) -> Callable[[], Any]:
    """`fn` whose returned variables are read where it returns them, inside its branch: a branch returning
    `v.assign_add(1.0)` gives the value after its assignment, as TF's."""

    def branch() -> Any:
        return nest.map_structure(lambda leaf: leaf.read_value() if isinstance(leaf, Variable) else leaf, fn())

    return branch


def _switch(index: Tensor, fns: Sequence[Callable[[], Any]], name: str, message: str) -> Any:
    branches = [_Branch(_read_inside(fn), [], name, convert=False) for fn in fns]
    leaves = [nest.flatten(branch.result) for branch in branches]
    rebuilt: dict[int, Callable[[Any], TensorArray]] = {}  # a TensorArray output's position -> makes it
    if len(branches) == 2 and len(leaves[0]) == len(leaves[1]):  # (tf.cond: TensorArrays as their elements)
        for i, (first, second) in enumerate(zip(*leaves)):
            if isinstance(first, TensorArray) and isinstance(second, TensorArray):
                leaves[0][i], leaves[1][i], rebuilt[i] = branch_carries(f"output {i}", first, second)
    # `None` where every branch gives it (a branch that only assigns, `tf.no_op`) stays `None`, as TF's
    nones = {i for i in range(len(leaves[0])) if all(len(flat) > i and flat[i] is None for flat in leaves)}
    for branch, flat in zip(branches, leaves):
        branch.set_outputs([leaf for i, leaf in enumerate(flat) if i not in nones])
    _check_same_outputs(branches, message)
    computed = iter(switch_branches(index, branches, name))
    outputs = [None if i in nones else next(computed) for i in range(len(leaves[0]))]
    return nest.pack_sequence_as(
        branches[0].result, [rebuilt[i](value) if i in rebuilt else value for i, value in enumerate(outputs)]
    )


def switch_branches(index: Tensor, branches: Sequence[_Branch], name: str) -> list:
    """Records one `lax.cond`/`lax.switch` over traced branches with the same outputs; returns them."""
    variables, with_token = _finish_branches(branches)
    captures, positions = _merge_captures(branches)

    def make(branch: _Branch, mine: list[int]) -> Callable:
        return lambda caps: tuple(branch.run([], [caps[i] for i in mine]))

    callables = [make(b, p) for b, p in zip(branches, positions)]

    def fn(selector: jax.Array, *caps: jax.Array) -> tuple:
        if len(callables) == 2 and selector.dtype == jnp.bool_:
            return tuple(lax.cond(selector, callables[0], callables[1], caps))
        return tuple(lax.switch(selector, callables, caps))

    return _apply_state(_record(fn, name, (index, *captures), branches[0].avals), variables, with_token)


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    name: str | None = None,
) -> Any:
    """Returns `true_fn()` if `pred` is true, else `false_fn()`, as `tf.cond`.

    Both branches must return the same structure, shapes and dtypes. Gradients
    flow through the branch taken.

    Raises:
      TypeError: if a branch is missing or not callable.
      ValueError: if the branches return different structures.
    """
    if true_fn is None:
        raise TypeError("cond(): 'true_fn' argument required")
    if false_fn is None:
        raise TypeError("cond(): 'false_fn' argument required")
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    predicate = convert_to_tensor(pred)
    if predicate._shape:
        raise errors.invalid_argument(
            f"The first argument to tf.cond must be a scalar, got shape {list(predicate._shape)}", "If"
        )
    jax_traced = not _is_traced(predicate) and control_flow_jax.jax_traced(predicate)
    if not _is_traced(predicate) and not jax_traced:
        return true_fn() if bool(predicate) else false_fn()
    if not predicate._dtype.is_bool:
        raise errors.invalid_argument(
            f"The predicate of tf.cond must be a bool tensor: passed {predicate._dtype.name} expected bool", "If"
        )
    if jax_traced:  # in a Keras schedule's or layer's call, which JAX traces
        return control_flow_jax.switch(predicate, [true_fn, false_fn], _COND_MESSAGE)
    return _switch(
        predicate,
        [true_fn, false_fn],
        "If",
        _COND_MESSAGE,
    )


_COND_MESSAGE = (
    "true_fn and false_fn arguments to tf.cond must have the same number, type, and overall structure of return values."
)


def case(
    pred_fn_pairs: Any,
    default: Callable[[], Any] | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """Runs the function of the first true predicate (or `default`), as `tf.case`.

    Args:
      pred_fn_pairs: a list or tuple of `(boolean scalar tensor, callable)` pairs.
      default: called when no predicate holds. None: the last pair's callable is the
        default, and it is an error (TF's `InvalidArgumentError`) that no predicate holds.
      exclusive: whether at most one predicate may hold: checked eagerly, and when the
        compiled program runs inside `tapeshim.function` (`control_flow_case`).
      strict: eagerly, whether singleton lists and tuples are returned as they are
        (else unpacked, as TF's eager `tf.cond`).
    """
    from tapeshim._src import control_flow_case  # (it builds on this module's tf.cond)

    return control_flow_case.case(pred_fn_pairs, default, exclusive, strict, name)


def switch_case(
    branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None, name: str = "switch_case"
) -> Any:
    """Runs `branch_fns[branch_index]()`, as `tf.switch_case`.

    Args:
      branch_index: an int32 scalar.
      branch_fns: a list of callables, a dict `{index: callable}`, or a list of
        `(index, callable)` pairs.
      default: called for an index with no branch (the last branch if None).
    """
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
    elif branch_fns and isinstance(branch_fns[0], (list, tuple)):
        items = sorted(branch_fns)
    else:
        items = list(enumerate(branch_fns))
    if [i for i, _ in items] != list(range(len(items))):
        raise ValueError(f"branch indices must be 0..{len(items) - 1}, got {[i for i, _ in items]}.")
    fns = [fn for _, fn in items]
    if default is None:
        default = fns[-1]
    index = convert_to_tensor(branch_index)
    if not index._dtype.is_integer or index._shape:
        raise TypeError(f"branch_index must be an integer scalar, got {index!r}.")
    if control_flow_jax.jax_traced(index) and not _is_traced(index):
        known = jnp.logical_and(index.value >= 0, index.value < len(fns))
        chosen = convert_to_tensor(jnp.where(known, index.value, len(fns)))
        return control_flow_jax.switch(chosen, fns + [default], _SWITCH_MESSAGE)
    if not _is_traced(index):
        position = int(index)
        return fns[position]() if 0 <= position < len(fns) else default()

    in_range = math_ops.logical_and(index >= 0, index < len(fns))

    selector = array_ops.where(in_range, math_ops.cast(index, "int32"), len(fns))
    return _switch(
        selector,
        fns + [default],
        "Case",
        _SWITCH_MESSAGE,
    )


_SWITCH_MESSAGE = "branch_fns arguments to tf.switch_case must have the same structure of return values."


def _trace_loop(
    cond: Callable[..., Any], body: Callable[..., Any], values: Any, as_structure: Callable[[Any], Any]
) -> tuple:
    """Traces a loop's condition and body; variables the body assigns become loop variables.

    An effect token is carried after the loop variables from the first trace on, so a
    body that prints (`tf.print`) but assigns no variable is traced once, as TF traces
    it (its Python side effects, such as `print`, run once). A body that assigns
    variables is traced a second time with them as loop variables. Returns the
    finished condition and body slices, the assigned variables (carried after the
    loop variables, before the token) and whether the body has effects.
    """
    trace = _thread_state.trace
    flat = nest.flatten(values)
    n = len(flat)
    specs = [(tuple(t._shape), t._dtype) for t in flat]
    token_spec = [((), int32)]
    variables: list = []
    k = 0

    def enter(xs: Sequence[Tensor]) -> None:
        for variable, value in zip(variables, xs[n : n + k]):
            trace.assign(variable, value)

    def cond_fn(*xs: Tensor) -> Any:
        enter(xs)
        return cond(*nest.pack_sequence_as(values, list(xs[:n])))

    def body_fn(*xs: Tensor) -> Any:
        enter(xs)
        effects_before = len(trace.effects)
        result = as_structure(body(*nest.pack_sequence_as(values, list(xs[:n]))))
        extra = [trace.pending[id(v)][1] for v in variables]
        extra.append(math_ops.add(xs[-1], _effect_token(trace.effects[effects_before:])))
        return result, extra

    cond_branch = _Branch(cond_fn, specs + token_spec, "tf.while_loop")
    if cond_branch.assigned or cond_branch.effects:
        raise NotImplementedError(
            "tapeshim.function does not support assigning a variable or calling tf.print in "
            "the condition of a loop; move it into the loop body."
        )
    body_branch = _Branch(body_fn, specs + token_spec, "tf.while_loop")
    variables = [variable for variable, _ in body_branch.assigned.values()]
    has_effects = bool(body_branch.effects)
    if variables:
        k = len(variables)
        state_specs = [(tuple(v._shape), v._dtype) for v in variables] + token_spec
        cond_branch = _Branch(cond_fn, specs + state_specs, "tf.while_loop")
        body_branch = _Branch(body_fn, specs + state_specs, "tf.while_loop")
        known = {id(v) for v in variables}
        new_variables = [key for key in body_branch.assigned if key not in known]
        if new_variables or bool(body_branch.effects) != has_effects:
            raise NotImplementedError(
                "A loop body that assigns variables or prints differently on its second "
                "trace is not supported by tapeshim.function."
            )
    cond_branch.finish()
    body_branch.finish()
    return cond_branch, body_branch, variables, has_effects


def _refuse_changed_loop_variables(before: Sequence[tuple], after: Sequence[tuple], invariants: Any) -> None:
    """A loop variable's dtype or shape changed in one iteration: TF's error, or (within the shape
    invariants) `DynamicShapeNeeded`."""
    for (_, old_dtype), (_, new_dtype) in zip(before, after):
        if old_dtype != new_dtype:
            raise TypeError(
                f"A loop variable enters tf.while_loop with dtype {old_dtype.name}, but has dtype "
                f"{new_dtype.name} after one iteration."
            )
    shapes_before, shapes_after = [s for s, _ in before], [s for s, _ in after]
    given = list(invariants or [])
    given += [None] * (len(before) - len(given))  # the assigned variables and the token: no invariants
    if covered_by_invariants(shapes_before, shapes_after, given):
        changed = [(list(a), list(b)) for a, b in zip(shapes_before, shapes_after) if tuple(a) != tuple(b)]
        raise DynamicShapeNeeded(
            f"Loop variables of tf.while_loop change shape within their shape invariants: {changed}"
        )
    for old_shape, new_shape in zip(shapes_before, shapes_after):
        if tuple(old_shape) != tuple(new_shape):
            raise ValueError(
                f"Input tensor enters the loop with shape {tuple(old_shape)}, but has shape {tuple(new_shape)} after "
                "one iteration. To allow the shape to vary across iterations, use the `shape_invariants` argument "
                "of tf.while_loop to specify a less-specific shape."
            )


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    maximum_iterations: Any = None,
    name: str | None = None,
) -> Any:
    """Repeats `body` while `cond` holds, as `tf.while_loop`.

    `cond(*loop_vars)` and `body(*loop_vars)` take the loop variables unpacked;
    `body` returns them in the same structure, shapes and dtypes. Inside
    `tapeshim.function`, pass `maximum_iterations` to differentiate through the
    loop in reverse mode (it then compiles to `lax.scan`).
    """
    del parallel_iterations, back_prop, swap_memory, name
    invariants = None
    if shape_invariants is not None:
        nest.assert_same_structure(loop_vars, shape_invariants, check_types=False)
        invariants = nest.flatten(shape_invariants)
    structure = loop_vars if isinstance(loop_vars, (list, tuple)) else [loop_vars]
    if _thread_state.trace is None or not any(isinstance(v, TensorArray) for v in nest.flatten(structure)):
        return _while_loop(cond, body, loop_vars, maximum_iterations, shape_invariants=invariants)
    arrays = ArraysInLoop(structure, lambda: _Branch(lambda: body(*structure), [], "While", convert=False).result)
    carried_invariants = None  # (an array's buffer and size have none)
    if invariants is not None:
        carried_invariants = []
        for value, invariant in zip(nest.flatten(structure), invariants):
            carried_invariants += [None, None] if isinstance(value, TensorArray) else [invariant]
    carried = _while_loop(
        lambda *values: cond(*arrays.arrays(values)),
        lambda *values: arrays.carries(_as_list(body(*arrays.arrays(values)), len(structure))),
        arrays.initial,
        maximum_iterations,
        shape_invariants=carried_invariants,
    )
    result = arrays.final(carried)
    return result if isinstance(loop_vars, (list, tuple)) else result[0]


def _as_list(result: Any, n_loop_vars: int) -> Any:
    """A loop body's result as its loop variables' list (a body of one variable may return it bare)."""
    return [result] if n_loop_vars == 1 and not isinstance(result, (list, tuple)) else result


def _loop_value(value: Any) -> Any:
    """A loop variable as a tensor (an eager loop's TensorArray stays one: it runs as a Python loop)."""
    return value if isinstance(value, TensorArray) else convert_to_tensor(value)


def _while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    maximum_iterations: Any = None,
    dynamic_gradient: bool = False,
    shape_invariants: Sequence[Any] | None = None,
) -> Any:
    """Repeats `body` while `cond` holds, as `tf.while_loop`.

    `cond(*loop_vars)` and `body(*loop_vars)` take the loop variables unpacked;
    `body` returns them in the same structure, shapes and dtypes. Inside
    `tapeshim.function`, pass `maximum_iterations` to differentiate through the
    loop in reverse mode (it then compiles to `lax.scan`).
    """
    """`while_loop`; with `dynamic_gradient`, a loop without a static trip count inside a function is
    reverse differentiable (`autograph/loop_gradient.py`, used by AutoGraph's loops). `shape_invariants`
    (flat, one per loop variable, None for none) allow its shape to change (`dynamic_shapes`).
    `maximum_iterations` may be a callable, asked after the body is traced (AutoGraph's loop options)."""
    packed = isinstance(loop_vars, (list, tuple))
    structure = loop_vars if packed else [loop_vars]
    values = nest.map_structure(_loop_value, structure)

    def call(fn: Callable[..., Any], current: Any) -> Any:
        return fn(*current)

    def as_structure(result: Any) -> Any:
        if not isinstance(result, (list, tuple)) and len(structure) == 1:
            result = [result]
        nest.assert_same_structure(structure, result)
        return nest.map_structure(_loop_value, result)

    flat = nest.flatten(values)
    traced = _thread_state.trace is not None
    if not traced and callable(maximum_iterations):
        maximum_iterations = maximum_iterations()
    limit = None  # a callable bound is asked after the trace
    if maximum_iterations is not None and not callable(maximum_iterations):
        limit = convert_to_tensor(maximum_iterations)
    if not traced:
        count = 0
        traced_limit = limit is not None and control_flow_jax.jax_traced(limit)
        while limit is None or traced_limit or count < int(limit):
            go = call(cond, values)
            if traced_limit or (isinstance(go, Tensor) and control_flow_jax.jax_traced(go)):  # a Keras call's
                values = control_flow_jax.while_loop(cond, body, values, as_structure, limit, count)
                break
            if not bool(go):
                break
            values = as_structure(call(body, values))
            count += 1
        return values if packed else values[0]
    cond_branch, body_branch, variables, has_effects = _trace_loop(cond, body, values, as_structure)
    trace = _thread_state.trace
    flat = flat + [trace.pending[id(v)][1] if id(v) in trace.pending else trace.read_variable(v) for v in variables]
    flat.append(convert_to_tensor(np.zeros((), np.int32)))  # the effect token (carried by every loop)
    if callable(maximum_iterations):
        maximum_iterations = maximum_iterations()
        limit = None if maximum_iterations is None else convert_to_tensor(maximum_iterations)
    specs = [(tuple(t._shape), t._dtype) for t in flat]
    if body_branch.avals != tuple(specs):
        _refuse_changed_loop_variables(specs, body_branch.avals, shape_invariants)
    captures, (cond_caps, body_caps) = _merge_captures([cond_branch, body_branch])
    n = len(flat)
    static_limit = limit is not None and not _is_traced(limit)
    steps = int(limit) if static_limit and limit is not None else None
    dynamic_limit = [limit] if limit is not None and not static_limit else []

    def fn(*values_and_caps: jax.Array) -> tuple:
        init = tuple(values_and_caps[:n])
        caps = values_and_caps[n + len(dynamic_limit) :]
        keep_going = lambda carry: cond_branch.run(carry, [caps[i] for i in cond_caps])[0]  # noqa: E731
        step = lambda carry: tuple(body_branch.run(carry, [caps[i] for i in body_caps]))  # noqa: E731
        if dynamic_limit:
            bound = values_and_caps[n]
            counted = lax.while_loop(
                lambda c: jnp.logical_and(c[0] < bound, keep_going(c[1])),
                lambda c: (c[0] + 1, step(c[1])),
                (jnp.zeros((), bound.dtype), init),
            )
            return counted[1]
        if steps is None and dynamic_gradient and not has_effects:
            return reverse_differentiable_while(
                lambda carry, c: cond_branch.run(carry, [c[i] for i in cond_caps])[0],
                lambda carry, c: tuple(body_branch.run(carry, [c[i] for i in body_caps])),
                init,
                tuple(caps),
            )
        if steps is None:
            return lax.while_loop(keep_going, step, init)

        def scan_step(state: tuple, _: Any) -> tuple:
            carry, done = state
            go = jnp.logical_and(jnp.logical_not(done), keep_going(carry))
            # lax.cond runs (and differentiates) only the branch taken: no NaN from frozen steps.
            carry = lax.cond(go, step, lambda c: c, carry)
            return (carry, jnp.logical_not(go)), None

        (final, _), _ = lax.scan(scan_step, (init, jnp.asarray(False)), None, length=steps)
        return final

    outputs = list(_record(fn, "While", flat + dynamic_limit + captures, tuple(specs)))
    token = outputs.pop()
    outputs = _apply_state(outputs + ([token] if has_effects else []), variables, has_effects)
    _retire_loop_placeholders([cond_branch, body_branch])
    result = nest.pack_sequence_as(values, outputs)
    return result if packed else result[0]
