"""A Keras call that updates state, recorded by a tape with one forward pass.

A training-mode call of a model with BatchNormalization or Dropout changes
variables (moving statistics, seed state), which TF assigns at the call. A
lazily recorded call would run its forward pass once to assign them and again
inside the gradient program. Instead, when one `GradientTape` records such a
call on concrete inputs, tapeshim runs `jax.vjp` of the call once (one jitted
program): the outputs and new state are known at once, and the tape records an
op whose forward returns the saved outputs and whose gradient applies the saved
pullback. The gradient program then runs only the backward pass of the call.

Nested tapes, forward accumulators, lazy inputs and `tapeshim.function`
traces keep the plain lazy op, which every kind of differentiation can replay.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Sequence

import jax
import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.node import OpKey
from tapeshim._src.recorded_call import record_call
from tapeshim._src.state import _thread_state
from tapeshim._src.tape import GradientTape
from tapeshim._src.tensor import Tensor

_CACHE_SIZE = 256
_vjp_programs: "OrderedDict[Any, Callable[..., Any]]" = OrderedDict()  # program key -> jitted vjp
_replays: "OrderedDict[Any, Callable[..., tuple]]" = OrderedDict()  # pullback structure -> recorded op


def _remember(cache: OrderedDict, key: Any, value: Any) -> Any:
    cache[key] = value
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)
    return value


def saves_forward(program: Any, inputs: Sequence[Tensor], tracking: list) -> bool:
    """Whether a call of `program` on `inputs` can be recorded with its forward pass run now, once.

    True for a call that changes variables, on concrete inputs, tracked by
    exactly one `GradientTape` and outside any function trace.
    """
    return (
        bool(program.changed)
        and _thread_state.trace is None
        and len(tracking) == 1
        and type(tracking[0]) is GradientTape
        and all(t._value is not None for t in inputs)
    )


def _replay(tree: Any, n_inputs: int, n_residuals: int) -> Callable[..., tuple]:
    """The recorded op: returns the saved outputs; its gradient is the saved pullback's."""
    key = (tree, n_inputs, n_residuals)
    replay = _replays.get(key)
    if replay is not None:
        _replays.move_to_end(key)
        return replay

    @jax.custom_vjp
    def saved_call(inputs: tuple, residuals: tuple, outputs: tuple) -> tuple:
        del inputs, residuals
        return outputs

    def forward(inputs: tuple, residuals: tuple, outputs: tuple) -> tuple:
        del inputs
        return outputs, (residuals, outputs)

    def backward(saved: tuple, cotangents: tuple) -> tuple:
        residuals, outputs = saved
        pullback = jax.tree_util.tree_unflatten(tree, residuals)
        return (
            tuple(pullback(tuple(cotangents))),
            tuple(_zero_cotangent(r) for r in residuals),
            tuple(_zero_cotangent(o) for o in outputs),
        )

    saved_call.defvjp(forward, backward)

    def replay_fn(*values: Any) -> tuple:
        return saved_call(
            tuple(values[:n_inputs]),
            tuple(values[n_inputs : n_inputs + n_residuals]),
            tuple(values[n_inputs + n_residuals :]),
        )

    return _remember(_replays, key, replay_fn)


def _zero_cotangent(value: Any) -> Any:
    dtype = np.dtype(value.dtype)
    if np.issubdtype(dtype, np.inexact):
        return jax.numpy.zeros(value.shape, dtype)
    return np.zeros(value.shape, jax.dtypes.float0)


def record_saved_forward(program: Any, inputs: Sequence[Tensor], tracking: list) -> tuple:
    """Runs `program`'s call with its pullback once and records it on the tracking tape.

    The recorded op returns the saved outputs through a `jax.custom_vjp`, whose
    jaxpr hides which input each output depends on. So the dependencies are
    read off the call's own jaxpr (`program.dependencies`) and handed to `record_call`:
    each output is tracked only if it depends on an input the tape tracks, and
    the gradient of an output from an input (or weight) it does not depend on
    is None, as in TF, which
    records a Keras call op by op. The saved residuals and outputs are constants
    of the op, tracked by no tape.

    Returns:
      The op's outputs: concrete Tensors the tape differentiates through.
    """
    vjp = _vjp_programs.get(program.key)
    if vjp is None:
        fn = program.replay  # (the call's jaxpr, bound: its Python does not run again)
        vjp = _remember(_vjp_programs, program.key, jax.jit(lambda *values: jax.vjp(fn, *values)))
    else:
        _vjp_programs.move_to_end(program.key)
    outputs, pullback = vjp(*[t._value for t in inputs])
    residuals, tree = jax.tree_util.tree_flatten(pullback)
    saved = [Tensor(r, tuple(r.shape), dtypes.from_numpy(np.dtype(r.dtype))) for r in residuals]
    saved += [Tensor(o, shape, dtype) for o, (shape, dtype) in zip(outputs, program.avals)]
    replay = _replay(tree, len(inputs), len(residuals))
    recorded = record_call(
        replay,
        OpKey("KerasCallSavedForward", program.key, tree),
        tuple(inputs) + tuple(saved),
        program.avals,
        tracking,
        dependencies=program.dependencies,
    )
    for tensor, value in zip(recorded, outputs):
        tensor._value = value
    return recorded
