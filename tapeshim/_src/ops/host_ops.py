"""`tf.numpy_function`: a Python function of numpy arrays, run on the host (eagerly, and on every call of a
compiled function through `tf.py_function`'s host callback). No gradient flows through it, as in TF.
`tf.timestamp`: the host's clock, read eagerly or on every call of a compiled function."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable

import jax
import numpy as np
from jax.experimental import io_callback

from tapeshim._src import dtypes, errors, registry
from tapeshim._src.distribute import context as distribute_context
from tapeshim._src.node import OpKey
from tapeshim._src.ops import table
from tapeshim._src.py_function import py_function
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike


def _eager_output(value: Any, dtype: Any) -> Tensor:
    if isinstance(value, (bool, int, float, complex)) and dtype is not None:
        return convert_to_tensor(value, dtype=dtypes.as_dtype(dtype))
    return convert_to_tensor(np.asarray(value))


def numpy_function(
    func: Callable[..., Any] | None = None,
    inp: Any = None,
    Tout: DTypeLike | None = None,  # noqa: N803
    stateful: bool = True,
    name: str | None = None,
) -> Any:
    """Runs `func` on the inputs' values as numpy arrays and returns its results as tensors, as `tf.numpy_function`.

    Eagerly the results keep the dtypes `func` gives them (TF does not cast them to
    `Tout` there); inside `tapeshim.function` they are converted to `Tout`, which the
    compiled program needs. Gradients through the call are None.

    Args:
      func: a Python function of numpy arrays returning arrays (or values).
      inp: the input tensors (a list); None when used as a decorator.
      Tout: the output dtype, or a list of dtypes.
      stateful: whether it runs on every call of a function (True), or only where its results are used.
      name: ignored.

    Returns:
      A tensor, or a list of tensors when `Tout` is a list (or `func` returns a sequence).
    """
    if func is None:

        def decorate(python_function: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(python_function)
            def call(*args: Any) -> Any:
                return numpy_function(python_function, list(args), Tout, stateful, name)

            return call

        return decorate
    inputs = [convert_to_tensor(v) for v in (inp or [])]
    if _thread_state.trace is not None:  # py_function's host op inside a function records no gradient

        def on_host(*tensors: Tensor) -> Any:
            return func(*[np.asarray(t.numpy()) for t in tensors])

        return py_function(on_host, inputs, Tout, name, _stateful=stateful)
    result = func(*[np.asarray(t.numpy()) for t in inputs])
    if isinstance(Tout, (list, tuple)):
        values = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(values) != len(Tout):
            raise errors.invalid_argument(
                f"numpy_function {getattr(func, '__name__', 'func')} returned "
                f"{len(values)} values, but Tout has {len(Tout)} types.",
                "EagerPyFunc",
            )
        return [_eager_output(v, d) for v, d in zip(values, Tout)]
    if isinstance(result, (list, tuple)):
        return [_eager_output(v, Tout) for v in result]
    return _eager_output(result, Tout)


def _clock() -> np.ndarray:
    return np.asarray(time.time(), np.float64)


def _timestamp_ordered() -> tuple:
    return (io_callback(_clock, jax.ShapeDtypeStruct((), np.float64), ordered=True),)


def _timestamp_unordered() -> tuple:
    return (io_callback(_clock, jax.ShapeDtypeStruct((), np.float64), ordered=False),)


@table.export("timestamp", gradient="-", dtypes="float64", note="inside functions, read on every call (host callback)")
def timestamp(name: str | None = None) -> Tensor:
    """The host's time in seconds since the Unix epoch, a float64 scalar, as `tf.timestamp`.

    Eagerly it reads the clock at once; inside `tapeshim.function` the compiled program reads it every time it
    runs (an ordered host callback, so it keeps its place among `tf.print`s; unordered in a program over
    several replicas, where JAX allows no ordered effects, as `tf.print`).

    Args:
      name: ignored.

    Returns:
      A float64 scalar tensor.
    """
    if _thread_state.trace is None:
        return convert_to_tensor(_clock(), dtype=dtypes.float64)
    replica = distribute_context.current_replica_context()
    program = _timestamp_ordered if replica is None or replica.num_replicas_in_sync <= 1 else _timestamp_unordered
    return registry.record(program, OpKey("Timestamp", program.__name__), (), (((), dtypes.float64),), [])[0]
