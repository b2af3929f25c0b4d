"""`tf.py_function`: a Python function run eagerly, also on every call of a `tapeshim.function`.

Outside a function, `py_function(func, inp, Tout)` calls `func` on the tensors
and casts its results to `Tout`. Inside a trace it records one op that calls
`func` on the host (`io_callback`, an effect: its results used or not) every time the
compiled function runs.
The results' shapes must be known to compile the program, so the trace runs
`func` once on the trace-time values; that run's results serve the call being
traced, so each call still runs `func` once, as TF does. A `func` without
results (`Tout=[]`) does not run at the trace: it runs only where the program
reaches it (a `tf.cond` branch taken), as TF's. One with results inside a branch
runs at the trace even when the first call does not take that branch.

An exception `func` raises becomes the `tf.errors` class TF gives it (`host_errors`),
eagerly and inside functions. Inside a JAX trace that is not a function's (a Keras
layer's call, which tapeshim compiles), a `py_function` without results is a host
callback that runs where the computation runs (not while Keras infers the layer's
output spec, as TF's graph does not run it there).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from tapeshim._src import autograph, dtypes, errors, host_errors, nest, registry, replay
from tapeshim._src.function_trace import init_scope
from tapeshim._src.node import OpKey
from tapeshim._src.ops import logging_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor


def _as_outputs(result: Any, tout: Any, what: str) -> list[Tensor]:
    single = not isinstance(tout, (list, tuple))
    types = [tout] if single else list(tout)
    values = [result] if single else list(nest.flatten(result) if result is not None else [])
    if len(values) != len(types):
        raise ValueError(f"{what} returned {len(values)} values, but Tout has {len(types)} types.")
    outputs = []
    for value, dtype in zip(values, types):
        try:
            outputs.append(convert_to_tensor(value, dtype=dtypes.as_dtype(dtype)))
        except (TypeError, ValueError) as exc:  # TF: the op fails with the conversion's error
            raise errors.invalid_argument(f"{type(exc).__name__}: {exc}", "EagerPyFunc") from None
    return outputs


def call_func(func: Callable[..., Any], args: Sequence[Any], suffix: str) -> Any:
    """`func(*args)`, an exception it raises turned into TF's `tf.errors` class for it (`host_errors`)."""
    try:
        with autograph.control_status(False):  # (as TF: AutoGraph leaves the Python function's calls alone)
            return func(*args)
    except Exception as exc:  # noqa: BLE001 - every exception of the Python function is the op's failure
        raise host_errors.tf_error(exc, suffix) from exc


class _HostCall:
    """The host side of one traced `py_function`: the function, and the trace's results for the first call."""

    def __init__(self, func: Callable[..., Any], tout: Any, inputs: Sequence[Tensor], name: str) -> None:
        self._func, self._tout, self._name = func, tout, name
        if isinstance(tout, (list, tuple)) and not tout:  # no results: no shapes to learn, nothing runs now
            self._first: tuple[list[np.ndarray], list[np.ndarray]] | None = None
            self.avals: tuple = ()
            return
        # Peeked, not forced: a computed input given a value would become a constant of the trace,
        # and every later call would see the first call's value.
        from tapeshim._src import function_host_inputs  # import cycle: function_host_inputs -> dataset -> here

        with function_host_inputs.peeking_pulls():  # (an element pulled in a loop is the call's to take)
            values = [np.asarray(v) for v in replay.peek(inputs)]
        with init_scope():
            outputs = [np.asarray(t.value) for t in self._eager(values)]
        self._first = (values, outputs)
        self.avals = tuple((tuple(o.shape), dtypes.from_numpy(o.dtype)) for o in outputs)

    def _eager(self, values: Sequence[np.ndarray]) -> list[Tensor]:
        tensors = [convert_to_tensor(v) for v in values]
        return _as_outputs(call_func(self._func, tensors, host_errors.GRAPH_SUFFIX), self._tout, self._name)

    def __call__(self, *values: np.ndarray) -> tuple:
        first, self._first = self._first, None
        if first is not None and all(np.array_equal(a, b) for a, b in zip(first[0], values)):
            outputs = first[1]  # the trace already ran the function for this call
        else:
            try:
                with init_scope():
                    outputs = [np.asarray(t.value) for t in self._eager(values)]
            except errors.OpError as error:  # kept for the program's caller, which raises it for JAX's error
                host_errors.fail(error)
            for output, (shape, _) in zip(outputs, self.avals):
                if output.shape != shape:
                    host_errors.fail(
                        errors.invalid_argument(
                            f"{self._name} returned a result of shape {list(output.shape)} where its first run, "
                            f"which the compiled program was made for, gave {list(shape)}: tapeshim compiles a "
                            "py_function's results with the shapes of its run while tracing.",
                            "EagerPyFunc",
                        )
                    )
        return tuple(np.asarray(o, dtype=shape_dtype[1]._np) for o, shape_dtype in zip(outputs, self.avals))


def _jax_traced(inputs: Sequence[Tensor]) -> bool:
    """Whether any input holds a tracer of a JAX transformation that is not a function's trace."""
    return any(isinstance(t._value, jax.core.Tracer) for t in inputs)


def _host_effect(func: Callable[..., Any], inputs: Sequence[Tensor]) -> None:
    """Calls `func` on the host where the JAX computation that `inputs` are traced in runs (no results)."""
    dtypes_of = [t._dtype for t in inputs]

    def host(*arrays: np.ndarray) -> tuple:
        try:
            with init_scope():
                call_func(
                    func, [convert_to_tensor(a, dtype=d) for a, d in zip(arrays, dtypes_of)], host_errors.GRAPH_SUFFIX
                )
        except errors.OpError as error:
            host_errors.fail(error)
        return ()

    io_callback(host, (), *[jax.lax.stop_gradient(t._value) for t in inputs], ordered=logging_ops.ordered_effects())


def py_function(
    func: Callable[..., Any] | None = None,
    inp: Any = None,
    Tout: Any = None,  # noqa: N803
    name: str | None = None,
    *,
    _stateful: bool = True,
) -> Any:
    """Runs `func` eagerly on `inp`, also on every call of a compiled function, as `tf.py_function`.

    Args:
      func: a Python function of tensors returning tensors (or values) of `Tout`.
      inp: the input tensors (a list); None when used as a decorator.
      Tout: the output dtype, or a list of dtypes.
      name: an optional name.
      _stateful: False for `tf.numpy_function(stateful=False)`: inside a function it runs only where its
        results are used, as TF prunes it.

    Returns:
      The output tensor (or list of tensors, when `Tout` is a list); used as
      `@py_function(Tout=...)`, a decorator.

    Raises:
      ValueError: `func` returned another number of values than `Tout` has.
    """
    if func is None:

        def decorate(python_function: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(python_function)
            def call(*args: Any) -> Any:
                return py_function(python_function, list(args), Tout, name)

            return call

        return decorate
    inputs = [convert_to_tensor(v) for v in (inp or [])]
    what = f"py_function {getattr(func, '__name__', 'func')}"
    if _thread_state.trace is None and isinstance(Tout, (list, tuple)) and not Tout and _jax_traced(inputs):
        _host_effect(func, inputs)  # (a Keras layer's call, compiled: it runs when the computation does)
        return []
    if _thread_state.trace is None:
        outputs = _as_outputs(call_func(func, inputs, host_errors.EAGER_SUFFIX), Tout, what)
        graph_shapes = _thread_state.graph_shapes
        if graph_shapes is not None:  # (a dataset's spec: TF's graph does not know its outputs' shapes)
            graph_shapes.update((t._tid, TensorShape(None)) for t in outputs)
    elif not _stateful:
        host = _HostCall(func, Tout, inputs, what)
        structs = tuple(jax.ShapeDtypeStruct(shape, dtype._np) for shape, dtype in host.avals)

        def pure(*arrays: jax.Array) -> tuple:  # (TF prunes a stateless one whose results nothing uses)
            return tuple(
                jax.pure_callback(host, structs, *[jax.lax.stop_gradient(a) for a in arrays], vmap_method="sequential")
            )

        outputs = list(registry.record(pure, OpKey("EagerPyFunc", id(host)), tuple(inputs), host.avals, []))
    else:
        host = _HostCall(func, Tout, inputs, what)
        structs = tuple(jax.ShapeDtypeStruct(shape, dtype._np) for shape, dtype in host.avals)
        ordered = logging_ops.ordered_effects()

        def callback(*arrays: jax.Array) -> tuple:
            # An effect, as TF's stateful op: it runs on every call, its results used or not, in program order
            # with the other effects (tf.print); the last output is the effect's token. Its inputs have no
            # tangents (an outer tape differentiating the function: the callback has no JVP, and no gradient).
            held = [jax.lax.stop_gradient(a) for a in arrays]
            results = io_callback(host, structs, *held, ordered=ordered)
            return (*results, jnp.zeros((), jnp.int32))

        avals = (*host.avals, ((), dtypes.int32))
        *outputs, token = registry.record(callback, OpKey("EagerPyFunc", id(host)), tuple(inputs), avals, [])
        _thread_state.trace.effects.append(token)
    if not isinstance(Tout, (list, tuple)):
        return outputs[0]
    return outputs
