"""`tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr`, `tf.vectorized_map`, `tf.recompute_grad`.

Eagerly (also under a `GradientTape`) `map_fn`, `scan` and the folds run `fn` once
per element in Python, as TF's eager while loop does, so a tape records every
step. Inside `tapeshim.function`, `fn` is traced once over one element into a
graph slice and the whole loop is recorded as one op over `lax.scan` (reverse
differentiable). `vectorized_map` traces `fn` once and runs it under `jax.vmap`;
`recompute_grad` runs its function under `jax.checkpoint`. Eagerly, both run
through a `tapeshim.function` of their own, as TF's `vectorized_map` does.
"""

from __future__ import annotations

import copy
import functools
import weakref
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax

from tapeshim._src import autograph, config, dtypes, errors, nest, replay, symbolic_dims
from tapeshim._src.control_flow import _Branch, _effect_token, _record, _retire_loop_placeholders, _while_loop
from tapeshim._src.function import function
from tapeshim._src.ops import array_ops, manip_ops, table
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _array_ops() -> Any:
    return array_ops


def _flat_elems(elems: Any) -> list[Tensor]:
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(
            f"elems must be a Tensor or (possibly nested) sequence of Tensors. Got {elems}, which does "
            "not contain any Tensors."
        )
    for t in flat:
        if not t._shape:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    n = flat[0]._shape[0]
    for t in flat[1:]:
        if t._shape[0] != n:
            raise ValueError(f"Dimensions {n} and {t._shape[0]} are not compatible")
    return flat


def _refuse_state(branch: _Branch, what: str) -> None:
    if branch.assigned or branch.effects:
        raise NotImplementedError(
            f"tapeshim.function does not support assigning a variable or calling tf.print inside the function of "
            f"{what}; compute the values and assign them after it."
        )


def _shape_str(shape: Sequence[Any]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _check_shape(actual: Sequence[int], expected: Sequence[int | None] | None) -> None:
    if expected is None:
        return
    if len(actual) != len(expected) or any(e is not None and a != e for a, e in zip(actual, expected)):
        raise ValueError(f"Incompatible shape for value ({_shape_str(actual)}), expected ({_shape_str(expected)})")


def _signature(spec: Any) -> tuple[dtypes.DType, tuple | None]:
    """The dtype and (optional) shape of one leaf of `fn_output_signature`."""
    if hasattr(spec, "dtype") and hasattr(spec, "shape") and not isinstance(spec, dtypes.DType):
        shape = spec.shape
        if getattr(shape, "rank", 0) is None:
            return dtypes.as_dtype(spec.dtype), None
        return dtypes.as_dtype(spec.dtype), tuple(shape.as_list() if hasattr(shape, "as_list") else shape)
    try:
        return dtypes.as_dtype(spec), None
    except (TypeError, ValueError):
        raise TypeError(f"fn_output_signature must contain tf.DType or tf.TensorSpec objects, got {spec!r}.") from None


def _write(value: Any, dtype: dtypes.DType, shape: tuple | None, in_trace_error: bool = False) -> Tensor:
    """One value written to TF's TensorArray of `dtype` (and element shape): TF's errors when it does not fit."""
    if isinstance(value, Tensor) or hasattr(value, "_read_for_op"):
        tensor = convert_to_tensor(value)
        if tensor._dtype != dtype:
            if in_trace_error:
                raise TypeError(
                    f"Loop var enters the loop with type {dtype!r} but has type {tensor._dtype!r} after "
                    "1 iteration. The type should remain constant."
                )
            raise errors.invalid_argument(
                f"TensorArray dtype is {dtype.name} but Op is trying to write dtype {tensor._dtype.name} ",
                "TensorListSetItem",
            )
    else:
        tensor = convert_to_tensor(value, dtype=dtype)
    _check_shape(tensor._shape, shape)
    return tensor


def _traced(tensors: Sequence[Tensor]) -> bool:
    return _thread_state.trace is not None


def _loop(
    step: Callable[[list, list], tuple], carry: list[Tensor], elems: list[Tensor], n: int, reverse: bool, what: str
) -> tuple[list[Tensor], list[Tensor] | None]:
    """Runs `step(carry, elem) -> (new_carry, outputs)` over the leading dimension of `elems`.

    Returns the final carry and each output stacked over the steps (None when there
    were no steps). Eagerly a Python loop (a step's outputs must keep the first step's
    shapes, as TF's TensorArray checks); inside a trace one `lax.scan` op.
    """
    if not _traced(carry + elems):
        columns = [_array_ops().unstack(e, num=n) for e in elems]
        steps: list = [None] * n
        order = range(n - 1, -1, -1) if reverse else range(n)
        first = None
        for i in order:
            carry, outputs = step(carry, [c[i] for c in columns])
            if first is None:
                first = [tuple(t._shape) for t in outputs]
            else:
                for shape, t in zip(first, outputs):
                    _check_shape(t._shape, shape)
            steps[i] = outputs
        if n == 0:
            return carry, None
        return carry, [_array_ops().stack([s[j] for s in steps]) for j in range(len(steps[0]))]
    k = len(carry)
    specs = [(tuple(t._shape), t._dtype) for t in carry] + [(tuple(t._shape[1:]), t._dtype) for t in elems]

    def body(*xs: Tensor) -> tuple:
        new_carry, outputs = step(list(xs[:k]), list(xs[k:]))
        return list(new_carry), list(outputs)

    branch = _Branch(body, specs, what)
    if branch.assigned or branch.effects:  # tf.print or variable assignments: tf.while_loop carries them
        _retire_loop_placeholders([branch])
        return _loop_with_state(step, carry, elems, n, reverse, branch.avals[k:])
    branch.finish()
    out_avals = branch.avals[k:]
    captures = list(branch.captures)
    m = len(elems)

    def run(*arrays: jax.Array) -> tuple:
        init, xs, caps = arrays[:k], arrays[k : k + m], arrays[k + m :]

        def scan_step(c: tuple, x: tuple) -> tuple:
            result = branch.run(tuple(c) + tuple(x), caps)
            return tuple(result[:k]), tuple(result[k:])

        ys: tuple
        final, ys = lax.scan(scan_step, tuple(init), tuple(xs), length=n, reverse=reverse)
        return tuple(final) + tuple(ys)

    avals = tuple(specs[:k]) + tuple(((n,) + shape, dtype) for shape, dtype in out_avals)
    results = list(_record(run, what, carry + elems + captures, avals))
    _retire_loop_placeholders([branch])
    return results[:k], results[k:]


def _loop_with_state(
    step: Callable[[list, list], tuple],
    carry: list[Tensor],
    elems: list[Tensor],
    n: int,
    reverse: bool,
    out_avals: Sequence[tuple],
) -> tuple[list[Tensor], list[Tensor] | None]:
    """The traced loop of a step that prints or assigns variables: a `tf.while_loop` (which carries the
    variables and the effects) writing each step's outputs into stacked buffers."""
    k = len(carry)
    buffers = [array_ops.zeros((n,) + tuple(shape), dtype) for shape, dtype in out_avals]

    def cond(i: Tensor, *_: Any) -> Tensor:
        return i < n

    def body(i: Tensor, *state: Tensor) -> list:
        index = n - 1 - i if reverse else i
        new_carry, outputs = step(list(state[:k]), [array_ops.gather(e, index) for e in elems])
        written = [
            manip_ops.tensor_scatter_nd_update(b, array_ops.reshape(index, [1, 1]), array_ops.expand_dims(o, 0))
            for b, o in zip(state[k:], outputs)
        ]
        return [i + 1] + list(new_carry) + written

    start = convert_to_tensor(0)
    final = _while_loop(cond, body, [start] + list(carry) + buffers, maximum_iterations=n)
    return list(final[1 : k + 1]), (list(final[k + 1 :]) if n else None)


def _empty(shape: tuple | None, dtype: dtypes.DType) -> Tensor:
    inner = tuple(0 if d is None else d for d in (shape or ()))
    return _array_ops().zeros((0,) + inner, dtype=dtype)


@table.export("map_fn", dtypes=table.ANY, note="RaggedTensorSpec / SparseTensorSpec signatures are not supported")
@ragged_dispatch(impl="tapeshim._src.ragged_array:map_fn", lists=("elems",))
def map_fn(
    fn: Callable[..., Any],
    elems: Any,
    dtype: Any = None,
    parallel_iterations: int | None = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: str | None = None,
    fn_output_signature: Any = None,
) -> Any:
    """Applies `fn` to each element of `elems` (unstacked on dimension 0) and stacks the results.

    Args:
      fn: a callable of one element (the structure of `elems`, each tensor without
        its first dimension), returning the structure of `fn_output_signature`.
      elems: a tensor or a (possibly nested) structure of tensors with the same first dimension.
      dtype: the deprecated name of `fn_output_signature`.
      parallel_iterations: ignored (XLA schedules the loop).
      back_prop: ignored (gradients always flow, as in TF 2).
      swap_memory: ignored.
      infer_shape: ignored (shapes are always static).
      name: ignored.
      fn_output_signature: the output structure of `fn`: `tf.DType`s or `tf.TensorSpec`s
        (default: the structure and dtypes of `elems`).

    Returns:
      The stacked outputs, in the structure of `fn_output_signature`.

    Raises:
      ValueError: `elems` holds no tensor or a scalar, the first dimensions differ, or `fn`
        returns another structure or shape.
      InvalidArgumentError: `fn` returns a tensor of another dtype than the signature.
    """
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat = _flat_elems(elems)
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}.")
    fn = autograph.convert_if_enabled(fn)  # as TF's map_fn, inside a function traced with AutoGraph
    n = flat[0]._shape[0]
    if signature is None:
        structure = elems
        sigs: list[tuple[dtypes.DType, tuple | None]] = [(t._dtype, None) for t in flat]
    else:
        structure = signature
        sigs = [_signature(s) for s in nest.flatten(signature)]

    def step(carry: list, elem: list) -> tuple:
        result = fn(nest.pack_sequence_as(elems, elem))
        nest.assert_same_structure(structure, result)
        return carry, [_write(v, d, s) for v, (d, s) in zip(nest.flatten(result), sigs)]

    _, stacked = _loop(step, [], flat, n, False, "map_fn")
    if stacked is None:
        stacked = [_empty(s, d) for d, s in sigs]
    return nest.pack_sequence_as(structure, stacked)


def _scan_setup(elems: Any, initializer: Any, reverse: bool) -> tuple:
    """The flat elements to loop over, the initial accumulator, its structure, and the first element's part."""
    flat = _flat_elems(elems)
    n = flat[0]._shape[0]
    if initializer is not None:
        init_structure = initializer
        init = [convert_to_tensor(v) for v in nest.flatten(initializer)]
        return flat, n, init_structure, init, None
    if n == 0:
        raise errors.OutOfRangeError(None, None, "Tried to read from index 0 but array size is: 0 ")
    index = n - 1 if reverse else 0
    init = [t[index] for t in flat]
    rest = [t[:-1] if reverse else t[1:] for t in flat]
    return rest, n - 1, elems, init, init


@table.export("scan", dtypes=table.ANY)
def scan(
    fn: Callable[..., Any],
    elems: TensorLike,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    reverse: bool = False,
    name: str | None = None,
) -> Any:
    """Scans `fn(accumulator, element)` over `elems`, stacking every accumulator, as `tf.scan`.

    Args:
      fn: a callable `(accumulator, element) -> accumulator` (the structure of `initializer`).
      elems: a tensor or a (possibly nested) structure of tensors with the same first dimension.
      initializer: the first accumulator (default: the first element, which is also the first output).
      parallel_iterations: ignored.
      back_prop: ignored.
      swap_memory: ignored.
      infer_shape: ignored.
      reverse: scan from the last element to the first.
      name: ignored.

    Returns:
      The accumulators stacked on a new first dimension, in the structure of `initializer`.

    Raises:
      ValueError: `fn` returns another structure or shape than the accumulator.
      InvalidArgumentError: `fn` returns another dtype than the accumulator (TypeError inside a function).
      OutOfRangeError: `elems` is empty and there is no initializer.
    """
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    flat, n, structure, init, first = _scan_setup(elems, initializer, reverse)
    sigs = [(t._dtype, tuple(t._shape)) for t in init]
    traced = _traced(flat)

    def step(carry: list, elem: list) -> tuple:
        result = fn(nest.pack_sequence_as(structure, carry), nest.pack_sequence_as(elems, elem))
        nest.assert_same_structure(structure, result)
        out = [_write(v, d, s, traced) for v, (d, s) in zip(nest.flatten(result), sigs)]
        return out, out

    _, stacked = _loop(step, init, flat, n, reverse, "scan")
    if stacked is None:
        stacked = [_empty(s, d) for d, s in sigs]
    if first is not None:
        array_ops = _array_ops()
        stacked = [
            array_ops.concat([s, array_ops.expand_dims(f, 0)] if reverse else [array_ops.expand_dims(f, 0), s], 0)
            for s, f in zip(stacked, first)
        ]
    return nest.pack_sequence_as(structure, stacked)


def _fold(fn: Callable[..., Any], elems: Any, initializer: Any, reverse: bool) -> Any:
    flat, n, structure, init, _ = _scan_setup(elems, initializer, reverse)
    traced = _traced(flat)

    def step(carry: list, elem: list) -> tuple:
        result = fn(nest.pack_sequence_as(structure, carry), nest.pack_sequence_as(elems, elem))
        nest.assert_same_structure(structure, result)
        out = [convert_to_tensor(v) for v in nest.flatten(result)]
        if traced:
            for before, after in zip(carry, out):
                if before._dtype != after._dtype:
                    raise TypeError(
                        f"Loop var enters the loop with type {before._dtype!r} but has type "
                        f"{after._dtype!r} after 1 iteration. The type should remain constant."
                    )
                if before._shape != after._shape:
                    raise ValueError(
                        f"Input tensor enters the loop with shape {_shape_str(before._shape)}, but has "
                        f"shape {_shape_str(after._shape)} after one iteration."
                    )
        return out, []

    final, _ = _loop(step, init, flat, n, reverse, "foldr" if reverse else "foldl")
    return nest.pack_sequence_as(structure, final)


@table.export("foldl", dtypes=table.ANY)
def foldl(
    fn: Callable[..., Any],
    elems: TensorLike,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """Folds `fn(accumulator, element)` over `elems` from the first element, as `tf.foldl`.

    Args:
      fn: a callable `(accumulator, element) -> accumulator`.
      elems: a tensor or a (possibly nested) structure of tensors with the same first dimension.
      initializer: the first accumulator (default: the first element).
      parallel_iterations: ignored.
      back_prop: ignored.
      swap_memory: ignored.
      name: ignored.

    Returns:
      The last accumulator.
    """
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, False)


@table.export("foldr", dtypes=table.ANY)
def foldr(
    fn: Callable[..., Any],
    elems: TensorLike,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """Folds `fn(accumulator, element)` over `elems` from the last element, as `tf.foldr`.

    Args:
      fn: a callable `(accumulator, element) -> accumulator`.
      elems: a tensor or a (possibly nested) structure of tensors with the same first dimension.
      initializer: the first accumulator (default: the last element).
      parallel_iterations: ignored.
      back_prop: ignored.
      swap_memory: ignored.
      name: ignored.

    Returns:
      The last accumulator.
    """
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, True)


_EAGER_WRAPPERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _eager_function(fn: Callable[..., Any], kind: str, make: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    """A `tapeshim.function` that runs `make()` (cached per `fn` and kind while `fn` lives)."""
    try:
        cache = _EAGER_WRAPPERS.setdefault(fn, {})
    except TypeError:  # fn cannot be weakly referenced (a builtin): no cache
        cache = {}
    if kind not in cache:
        cache[kind] = function(make(), autograph=False)
    return cache[kind]


@table.export("vectorized_map", dtypes=table.ANY, note="on jax.vmap; fallback_to_while_loop is not needed")
def vectorized_map(
    fn: Callable[..., Any], elems: TensorLike, fallback_to_while_loop: bool = True, warn: bool = True
) -> Any:
    """Applies `fn` to every element of `elems` at once, vectorized with `jax.vmap`, as `tf.vectorized_map`.

    Eagerly, the map runs as a compiled function of its own (as TF's does), so `fn`'s
    Python code runs when it is traced, not once per call.

    Args:
      fn: a callable of one element (the structure of `elems` without the first dimension).
      elems: a tensor or a (possibly nested) structure of tensors with the same first dimension.
      fallback_to_while_loop: ignored: every op tapeshim has vectorizes.
      warn: ignored.

    Returns:
      `fn`'s outputs, each with the elements' first dimension in front.
    """
    del fallback_to_while_loop, warn
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat or not flat[0]._shape:
        raise IndexError("list index out of range")
    if _thread_state.trace is None:
        if config.functions_run_eagerly():  # no compiled function to vectorize in: one call per element
            rows = [_array_ops().unstack(t) for t in flat]
            results = [fn(nest.pack_sequence_as(elems, [r[i] for r in rows])) for i in range(flat[0]._shape[0])]
            return nest.map_structure(lambda *leaves: _array_ops().stack(list(leaves)), *results)

        structure = nest.map_structure(lambda _: 0, elems)

        def run(*tensors: Tensor) -> Any:
            return _vectorized(fn, nest.pack_sequence_as(structure, list(tensors)))

        return _eager_function(fn, f"vectorized_map {structure!r}", lambda: run)(*flat)
    return _vectorized(fn, elems)


def _vectorized(fn: Callable[..., Any], elems: Any) -> Any:
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    n = flat[0]._shape[0]
    for t in flat:
        if not t._shape or t._shape[0] != n:
            raise ValueError(
                f"All elements of elems must have the same first dimension: got {n} and "
                f"{t._shape[0] if t._shape else 'a scalar'}."
            )
    specs = [(tuple(t._shape[1:]), t._dtype) for t in flat]
    # The trace's stand-ins are the first element's values: a py_function's run at the trace (for its results'
    # shapes) is then the one TF's own graph makes on the first element (`_sequential_map`).
    first = None if n == 0 or any(symbolic_dims.is_symbolic(d) for t in flat for d in t._shape) else _first_rows(flat)
    branch = _Branch(lambda *xs: fn(nest.pack_sequence_as(elems, list(xs))), specs, "vectorized_map", stand_ins=first)
    if branch.effects and not branch.assigned:
        return _sequential_map(branch, flat, n)
    _refuse_state(branch, "tf.vectorized_map")
    branch.finish()
    captures = list(branch.captures)
    m = len(flat)

    def run(*arrays: jax.Array) -> tuple:
        xs, caps = arrays[:m], arrays[m:]
        return tuple(jax.vmap(lambda *x: tuple(branch.run(x, caps)))(*xs))

    avals = tuple(((n,) + shape, dtype) for shape, dtype in branch.avals)
    outputs = list(_record(run, "VectorizedMap", flat + captures, avals))
    _retire_loop_placeholders([branch])
    return nest.pack_sequence_as(branch.result, outputs)


def _first_rows(flat: Sequence[Tensor]) -> list[jax.Array]:
    """The first element of each tensor, peeked (a computed one is not given a value: `replay.peek`)."""
    from tapeshim._src import function_host_inputs  # (import cycle: function_host_inputs -> dataset -> here)

    with function_host_inputs.peeking_pulls():
        return [jnp.asarray(value[0]) for value in replay.peek(list(flat))]


def _sequential_map(branch: _Branch, flat: list[Tensor], n: int) -> Any:
    """`vectorized_map` of a function with host effects (a `py_function`, `tf.print`), as TF's vectorizer runs it.

    TF cannot vectorize such ops: it runs the function's ops that the results depend on
    in a while loop, one element after the other (`fallback_to_while_loop`), and its
    stateful ops also run once in the function's own graph, on the first element (so a
    `tf.print` or a `py_function` without results runs for the first element only).
    """
    once = copy.copy(branch)  # the function's own graph, on the first element: every effect
    once.outputs = []
    once.finish([_effect_token(branch.effects)])
    branch.finish()  # the loop: what the results depend on
    m, k = len(flat), len(branch.captures)

    def run(*arrays: jax.Array) -> tuple:
        xs, caps, once_caps = arrays[:m], arrays[m : m + k], arrays[m + k :]
        token = once.run([x[0] for x in xs], once_caps)[0] if n else jnp.zeros((), jnp.int32)
        stacked = lax.map(lambda x: tuple(branch.run(x, caps)), tuple(xs))
        return (*stacked, token)

    avals = tuple(((n,) + shape, dtype) for shape, dtype in branch.avals) + (((), dtypes.int32),)
    *outputs, effect = _record(run, "VectorizedMapFallback", flat + branch.captures + once.captures, avals)
    _thread_state.trace.effects.append(effect)
    _retire_loop_placeholders([branch])
    return nest.pack_sequence_as(branch.result, outputs)


@table.export("recompute_grad", dtypes=table.ANY, note="on jax.checkpoint")
def recompute_grad(f: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps `f` so that its activations are recomputed in the backward pass, as `tf.recompute_grad`.

    The wrapped function runs `f` under `jax.checkpoint`: inside `tapeshim.function`
    directly; eagerly under a recording `GradientTape`, through a compiled function of
    its own. Gradients (also with respect to variables `f` reads) equal `f`'s.

    Args:
      f: a function of tensors returning a tensor or a structure of tensors.

    Returns:
      The wrapped function, taking the same tensor arguments.
    """

    def checkpointed(*args: Any) -> Any:
        flat = [convert_to_tensor(a) for a in nest.flatten(args)]
        specs = [(tuple(t._shape), t._dtype) for t in flat]
        branch = _Branch(lambda *xs: f(*nest.pack_sequence_as(args, list(xs))), specs, "recompute_grad")
        _refuse_state(branch, "tf.recompute_grad")
        branch.finish()
        captures = list(branch.captures)
        m = len(flat)

        @jax.checkpoint
        def inner(xs: tuple, caps: tuple) -> tuple:
            return tuple(branch.run(xs, caps))

        def run(*arrays: jax.Array) -> tuple:
            return inner(tuple(arrays[:m]), tuple(arrays[m:]))

        outputs = list(_record(run, "RecomputeGrad", flat + captures, branch.avals))
        _retire_loop_placeholders([branch])
        return nest.pack_sequence_as(branch.result, outputs)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise ValueError(
                f"The kwargs {sorted(kwargs)} are not supported by tf.recompute_grad: pass tensors positionally."
            )
        if _thread_state.trace is not None:
            return checkpointed(*args)
        if not _thread_state.recorders or config.functions_run_eagerly():
            return f(*args)
        return _eager_function(f, "recompute_grad", lambda: checkpointed)(*args)

    return wrapped
