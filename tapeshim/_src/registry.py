"""The kernel type (`OpDef`) and the one dispatch path every op goes through.

`apply(op, inputs, static)` is the only way an op runs. It
1. finds the outputs' shapes and dtypes by abstract evaluation (cached per op,
   static arguments and input shapes/dtypes), so bad shapes raise at the call;
2. inside a recording tape whose watched values feed the op, or while a
   `tapeshim.function` is being traced, records a lazy `Node` instead of
   running it (see `replay.py` for how nodes run);
3. otherwise runs the op at once through a cached, jitted kernel.
"""

from __future__ import annotations

import functools
import math
import os
from collections import OrderedDict
from typing import Any, Callable, Collection, Hashable, Sequence

import jax
import numpy as np

from tapeshim._src import (
    check_numerics,
    compile_tiers,
    dtypes,
    errors,
    kernel_calls,
    kernel_families,
    recompile_warning,
    runtime_checks,
    symbolic_dims,
)
from tapeshim._src.node import Node, OpKey
from tapeshim._src.ops.common import is_graph_run_error, tf_type_name
from tapeshim._src.state import _thread_state, in_forward_mode, next_tensor_id
from tapeshim._src.tensor import Tensor

Check = Callable[[tuple, dict], None]


class OpDef:
    """A kernel: one TF op type and the JAX function that computes it, what `apply` runs.

    A kernel is not a row of the op table: the table (`ops/table.py`, `Row`) registers
    the public functions, and the row of a function that runs exactly one kernel names
    it (`Row.op`) and reads its gradient kind from `differentiable`. Kernels are held
    by the module (or closure) that applies them and registered nowhere else.

    Attributes:
      name: TF's op type (`"AddV2"`), used in error messages and cache keys.
      impl: the JAX implementation, `impl(*arrays, **static) -> array or tuple`.
      differentiable: False for ops TF registers as having no gradient; their
        results are never recorded, so gradients through them are `None`.
      check: optional `check(in_avals, static)` that raises TF's error for bad
        shapes or dtypes before JAX sees them.
      user_code: whether `impl` is a user's function (`jax_op`), whose Python may decide on sizes in ways a
        symbolic trace cannot follow (`x.shape[0] == 5`): its new sizes are traced with their own shapes,
        where tapeshim's kernels share one symbolic trace (`kernel_families`).
    """

    __slots__ = ("name", "impl", "differentiable", "check", "user_code")

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        differentiable: bool = True,
        check: Check | None = None,
        user_code: bool = False,
    ) -> None:
        self.name = name
        self.impl = impl
        self.differentiable = differentiable
        self.check = check
        self.user_code = user_code

    def __repr__(self) -> str:
        return f"OpDef({self.name})"


class _Kernel:
    """An op with its static arguments bound: the tuple-returning function and its jit."""

    __slots__ = ("fn", "jitted", "key", "calls", "shape_families", "may_check")

    def __init__(self, op: OpDef, static: tuple) -> None:
        impl = op.impl
        kwargs = dict(static)

        def fn(*arrays: jax.Array) -> tuple:
            out = impl(*arrays, **kwargs)
            return tuple(out) if isinstance(out, (tuple, list)) else (out,)

        inlined = jax.jit(fn, inline=True)

        def node_fn(*arrays: jax.Array) -> tuple:
            # Inside a long gradient program's trace (`differentiate`), the op's trace for these types is JAX's
            # cached `jit` one, its equations inlined: JAX's AD linearizes a cached trace once, so an op repeated
            # across the program (a 200-op chain, an unrolled RNN's steps) is differentiated once, not at every
            # occurrence (the 200-op chain's program traced in 60 ms, 30 ms so). Elsewhere (a first step's
            # small program, forward mode, concrete values) the op's Python runs as before: a `jit` of its own
            # is one more trace per signature.
            if _thread_state.inline_kernels:  # (`DifferentiationMode`: never in forward mode)
                return inlined(*arrays)
            return fn(*arrays)

        # the per-op tier runs a recorded node through its op's eager kernel (replay_eager reads it);
        # mypy knows no attributes on a function object
        node_fn.kernel = self  # type: ignore[attr-defined]
        self.fn = node_fn
        # jax.jit; a kernel whose trace holds a runtime check (a singular matrix to invert) runs under
        # checkify and raises TF's error, any other kernel settles on the plain jax.jit after its first call.
        # A kernel given `checked` runs under checkify from its first call: its check may be absent from
        # that call's trace (an empty input) and present in the next signature's.
        self.may_check = bool(kwargs.get("checked", False))
        self.jitted: Any = runtime_checks.jit(  # (a CheckedProgram, then its plain jax.jit: called, and traced)
            fn, self._settle, compile_tiers.kernel_options, interpret_first=False, may_check=self.may_check
        )
        self.key = _node_key(op, static)
        self.calls = kernel_calls.KernelCalls(families=not op.user_code)
        self.calls.on_compile = functools.partial(_note_compile, op.name, static)
        # (for `out_avals`; None: a user's function, traced per signature)
        self.shape_families = None if op.user_code else kernel_families.Families()

    def _settle(self, plain: Callable[..., Any]) -> None:
        self.jitted = plain

    def call(self, *values: Any) -> tuple:
        """The kernel's outputs. The first calls of an argument signature are computed on the host where the
        interpreter can (`interpret.py`), until they have paid for its compile
        (`compile_tiers.calls_before_compile`); the next submits its compile to the background thread, the
        calls being computed on the host until it is done (`kernel_calls.KernelCalls`)."""
        return self._hosted(values, True, False)

    def per_op_call(self, *values: Any) -> tuple:
        """`call` from the per-op tier (`replay_eager`), whose plans call a kernel many times: the first
        calls of a signature run on the host, with NumPy outputs, until their extra cost would have paid for the
        compile (`kernel_calls.host_calls_before_compile`)."""
        return self._hosted(values, False, True)

    def _hosted(self, values: tuple, eager: bool, host: bool) -> tuple:
        return self.calls.run(self.jitted, values, values, eager, host)


_first_of_name: dict = {}


def _node_key(op: OpDef, static: tuple) -> OpKey:
    """A recorded node's key: `(TF op name, static arguments)`, unique per op implementation.

    Compiled programs and per-op VJP kernels are cached by these keys, so a
    second kernel definition with a name already taken (two `jax_op` lambdas,
    both `"<lambda>"`) gets the `OpDef` itself as a third element.
    """
    first = _first_of_name.setdefault(op.name, op)
    return OpKey(op.name, static) if first is op else OpKey(op.name, static, op)


_KERNEL_CACHE_SIZE = 2048
_DISPATCH_CACHE_SIZE = 8192
_kernels: OrderedDict = OrderedDict()
_dispatch: dict = {}
stats = {"eager_kernels": 0}


def _kernel(op: OpDef, static: tuple) -> _Kernel:
    key = (op, static)
    kernel = _kernels.get(key)
    if kernel is None:
        kernel = _kernels[key] = _Kernel(op, static)
        stats["eager_kernels"] += 1
        if len(_kernels) > _KERNEL_CACHE_SIZE:
            _kernels.popitem(last=False)
    return kernel


@functools.lru_cache(maxsize=None)
def _memory_limit() -> int:
    """The bytes one array may take: the default device's memory limit, or the host's physical memory."""
    try:
        stats = jax.devices()[0].memory_stats() or {}
    except Exception:  # noqa: BLE001 - backends without memory statistics
        stats = {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_allocation(shape: Sequence[int], dtype: dtypes.DType, op_name: str) -> None:
    """Raises TF's `ResourceExhaustedError` for an array larger than the device's memory.

    XLA would fail to allocate it (on CPU, a failed allocation can abort the process).
    """
    if any(symbolic_dims.is_symbolic(d) for d in shape):
        return  # sizes known per call (a trace for every size): XLA checks the allocation
    size = math.prod(shape) * dtype._np.itemsize
    if size > _memory_limit():
        device = jax.devices()[0]
        raise errors.ResourceExhaustedError(
            None,
            None,
            f"OOM when allocating tensor with shape[{','.join(str(d) for d in shape)}] and type "
            f"{tf_type_name(dtype)} on /job:localhost/replica:0/task:0/device:"
            f"{device.platform.upper()}:{device.id} by allocator {device.platform} [Op:{op_name}]",
        )


def _checkable(shape: tuple) -> tuple:
    """`shape` for an op's TF checks: a symbolic dimension (`function_symbolic`) stands in as 7; a check that
    fails on that stand-in makes the function trace again with concrete sizes."""
    if all(d.__class__ is int for d in shape):
        return shape
    return tuple(d if isinstance(d, (int, np.integer)) else 7 for d in shape)


def out_avals(op: OpDef, kernel: _Kernel, static: tuple, in_avals: tuple) -> tuple:
    """The (shape, DType) of each output by abstract evaluation (a shape family's, without a JAX trace, where
    one serves: `kernel_families`); raises TF's errors for bad inputs."""
    missing = None
    if op.check is not None:
        try:
            op.check(tuple((_checkable(shape), dtype) for shape, dtype in in_avals), dict(static))
        except errors.InvalidArgumentError as exc:
            if not is_graph_run_error(exc):
                raise
            missing = exc  # (inside a function TF's graph finds no kernel when it runs: shape errors first)
    structs = [jax.ShapeDtypeStruct(shape, dtype._np) for shape, dtype in in_avals]
    avals = _family_avals(kernel, structs)
    if avals is None:
        try:
            out = _output_structs(kernel, structs)
        except (TypeError, ValueError) as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise errors.invalid_argument(message, op.name) from None
        avals = tuple((o.shape, dtypes.from_numpy(o.dtype)) for o in out)
    if missing is not None:
        raise missing
    for shape, dtype in avals:
        if all(d.__class__ is int for d in shape):  # (a symbolic dimension's size is only known on a call)
            check_allocation(shape, dtype, op.name)
    return avals


def _output_structs(kernel: _Kernel, structs: Sequence[Any]) -> Any:
    """The kernel's outputs on `structs`, from the trace its first call then reuses (JAX caches a jit's traces
    by argument types); while a forward-mode program traces, by a trace of its own (`jax.eval_shape`): the
    kernel's trace there holds JAX's own rules where tapeshim's kernels give their reverse-mode `custom_vjp`s,
    and must not be the one its calls and VJPs (`host_vjp`) later find."""
    if in_forward_mode():
        return jax.eval_shape(kernel.fn, *structs)
    return kernel.jitted.trace(*structs).out_info


def _family_avals(kernel: _Kernel, structs: list) -> tuple | None:
    """The output avals of another size of a structure the kernel has a shape family of (`kernel_families`),
    else None (the caller evaluates the shapes of its own)."""
    families = kernel.shape_families
    if families is None:
        return None
    found = families.find(structs, structs, lambda symbolic: _output_structs(kernel, symbolic))
    if found is None:
        return None
    out, sizes = found
    shapes = kernel_families.resolved_shapes(out, sizes)
    if shapes is None:
        families.failed(structs, structs)
        return None
    return tuple((shape, dtypes.from_numpy(o.dtype)) for shape, o in zip(shapes, out))


def _resolve(op: OpDef, inputs: Sequence[Tensor], static: tuple, key: tuple) -> tuple:
    """Cache miss of `apply`: the kernel and output avals for this op, static args and input avals."""
    kernel = _kernel(op, static)
    try:
        avals = out_avals(op, kernel, static, tuple((t._shape, t._dtype) for t in inputs))
    except errors.InvalidArgumentError as exc:
        if _thread_state.trace is not None and not is_graph_run_error(exc):
            raise ValueError(str(exc)) from None  # shape inference while tracing, as TF's graph mode
        raise
    if len(_dispatch) >= _DISPATCH_CACHE_SIZE:
        _dispatch.clear()
    # (open: its first eager calls go through `kernel.call`, the host's, also where a tape recorded its first)
    entry = _dispatch[key] = (kernel, avals, True)
    return entry


def _note_compile(op_name: str, static: tuple, leaves: Any) -> None:
    """Counts a compile of an op's kernel for the recompile warning (`KernelCalls.on_compile`). A new signature
    alone is none: the host computes its first calls, and it compiles only when it keeps repeating (TF eager,
    which never compiles, never warns)."""
    signature = tuple((tuple(np.shape(v)), str(getattr(v, "dtype", type(v).__name__))) for v in leaves)
    recompile_warning.compiled(op_name, (static, signature), recompile_warning.op_change)


def _folded_call(kernel: Any, values: list) -> Any:
    """A kernel on concrete values inside a user's Keras call (`fold_constants`): computed now, where JAX
    would stage it into the call's trace. Only tapeshim's ops fold: JAX's and Keras's own code in the call
    (a causal mask of Keras's attention) stays in the trace, not one eager compile per new shape."""
    with jax.ensure_compile_time_eval():
        return kernel.call(*values)


def apply(op: OpDef, inputs: Sequence[Tensor], static: tuple = ()) -> tuple:
    """Runs or records `op` on `inputs` (already converted tensors). This is the hot path.

    Returns:
      A tuple of output Tensors.
    """
    n_inputs = len(inputs)
    if n_inputs == 2:  # the common arities, without building a list first
        a, b = inputs
        key: tuple = (op, static, (a._shape, a._dtype._name), (b._shape, b._dtype._name))
    elif n_inputs == 1:
        a = inputs[0]
        key = (op, static, (a._shape, a._dtype._name))
    else:
        key = (op, static, *[(t._shape, t._dtype._name) for t in inputs])
    entry = _dispatch.get(key)
    if entry is None:
        if any(t._dtype is dtypes.string for t in inputs):  # host-side string tensors never reach XLA
            from tapeshim._src import strings_host  # import cycle: registry <-> strings_host

            return strings_host.apply(op, inputs, static)
        if any(not isinstance(d, (int, np.integer)) for t in inputs for d in t._shape):
            trace = _thread_state.trace
            if trace is None or not trace.symbolic:
                return _apply_symbolic(op, inputs, static)
        entry = _resolve(op, inputs, static, key)
    kernel = entry[0]
    avals = entry[1]
    recorders = _thread_state.recorders
    if recorders:
        tracking = []
        if op.differentiable:
            for recorder in recorders:
                tracked = recorder._tracked
                for t in inputs:
                    if t._tid in tracked:
                        tracking.append(recorder)
                        break
        if tracking or _thread_state.trace is not None:
            return _record_op(op, kernel, inputs, avals, tracking)
        for t in inputs:
            if t._value is None:
                return _record_op(op, kernel, inputs, avals, tracking)
        values = [t._value for t in inputs]
    else:
        values = [t._value if t._value is not None else t.value for t in inputs]
    # In forward mode (a JVP program traces the op on tracers) the kernel is traced afresh: a jitted
    # kernel's cached trace may hold the reverse-mode gradient rule (sqrt's zero-upstream rule).
    if _thread_state.forward_mode:
        results = kernel.fn(*values)
    elif _thread_state.fold_constants and not any(isinstance(v, jax.core.Tracer) for v in values):
        results = _folded_call(kernel, values)
    elif len(entry) > 2:  # a signature the host interpreter runs until it has compiled
        results = kernel.call(*values)
        if kernel.calls.open != (len(entry) > 2):  # its later calls go through `kernel.call` while it is open
            _dispatch[key] = (kernel, avals, True) if kernel.calls.open else (kernel, avals)
    else:
        results = kernel.jitted(*values)
    if len(avals) == 1:
        shape, dtype = avals[0]
        outputs: tuple = (Tensor(results[0], shape, dtype),)
    else:
        outputs = tuple(Tensor(v, shape, dtype) for v, (shape, dtype) in zip(results, avals))
    if check_numerics.enabled:  # tf.debugging.enable_check_numerics
        check_numerics.check(op.name, inputs, outputs)
    return outputs


def _record_op(op: OpDef, kernel: Any, inputs: Sequence[Tensor], avals: tuple, tracking: list) -> tuple:
    """`apply`'s recorded op (a tape's or a function's); checked at once under `enable_check_numerics` eagerly,
    where TF's tape runs each op as it is recorded."""
    recorded = record(kernel.fn, kernel.key, tuple(inputs), avals, tracking)
    if check_numerics.enabled and _thread_state.trace is None:
        check_numerics.check(op.name, inputs, recorded)
    return recorded


def _apply_symbolic(op: OpDef, inputs: Sequence[Tensor], static: tuple) -> tuple:
    """Runs `op` on JAX values whose shapes have symbolic dimensions (Keras's shape inference).

    Keras infers a layer's output shape by running its `call` under `jax.eval_shape`
    with a symbolic batch dimension; tapeshim ops inside then leave the shape
    checks to JAX.
    """
    results = _kernel(op, static).fn(*[t.value for t in inputs])
    return tuple(Tensor(v, tuple(v.shape), dtypes.from_numpy(v.dtype)) for v in results)


def record(
    fn: Callable[..., tuple],
    key: Hashable,
    inputs: tuple,
    avals: tuple,
    tracking: list,
    deps: Sequence[Collection[int]] | None = None,
) -> tuple:
    """Creates lazy outputs for a recorded op and marks them tracked.

    Args:
      tracking: the recorders that track every (trainable) output, or, as a list
        of lists, the recorders tracking each output.
      deps: per output, the input positions it depends on (see `Node.deps`).
    """
    owner = None
    for t in inputs:
        if t._value is None and t._node is not None:
            lazy_owner = t._node.owner
            if lazy_owner is not None and lazy_owner.done and _thread_state.trace is None:
                _cut(inputs)  # a lazy value left over from a finished step: force it, keep graphs per step
                break
            if owner is None:
                owner = lazy_owner
    if tracking:
        first = tracking[0]
        if isinstance(first, list):
            first = next((r[0] for r in tracking if r), None)
        if first is not None:
            owner = getattr(first, "_epoch", None)
    if len(avals) == 1:
        tid = next_tensor_id()
        node = Node(fn, key, inputs, (tid,), deps, owner)
        shape, dtype = avals[0]
        output = Tensor(None, shape, dtype, node, tid)
        if tracking and not isinstance(tracking[0], list) and dtype._trainable:
            for recorder in tracking:
                recorder._tracked.add(tid)
                recorder._produced.add(tid)
            return (output,)
        outputs: tuple = (output,)
    else:
        out_tids = tuple(next_tensor_id() for _ in avals)
        node = Node(fn, key, inputs, out_tids, deps, owner)
        outputs = tuple(Tensor(None, shape, dtype, node, tid) for tid, (shape, dtype) in zip(out_tids, avals))
    if tracking and isinstance(tracking[0], list):
        for output, recorders in zip(outputs, tracking):
            if output._dtype._trainable:
                for recorder in recorders:
                    recorder._tracked.add(output._tid)
                    recorder._produced.add(output._tid)
    elif tracking:
        trainable = [t._tid for t in outputs if t._dtype._trainable]
        for recorder in tracking:
            recorder._tracked.update(trainable)
            recorder._produced.update(trainable)
    return outputs


def _cut(inputs: tuple) -> None:
    """Forces the lazy inputs whose recording finished (their tape computed its gradient and let go)."""
    from tapeshim._src import replay  # import cycle: registry -> replay -> tensor -> array_ops -> registry

    stale = [
        t
        for t in inputs
        if t._value is None and t._node is not None and t._node.owner is not None and t._node.owner.done
    ]
    replay.force(stale)


def tracking_recorders(tensors: Sequence[Tensor], exclude: Any = None) -> list:
    """The calling thread's recorders (except `exclude`) that track any of `tensors`."""
    found = []
    for recorder in _thread_state.recorders:
        if recorder is exclude:
            continue
        tracked = recorder._tracked
        if any(t._tid in tracked for t in tensors):
            found.append(recorder)
    return found
