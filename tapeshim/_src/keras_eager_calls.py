"""A Keras call whose Python asks for a tensor's value, run op by op, as TF's eager Keras runs it.

tapeshim runs a layer's call as one op: JAX traces it. Python that asks for a
value there (`if tf.reduce_sum(y) > 0:`, `float(loss)`, `int(tf.argmax(x))`)
cannot be traced, while TF's eager Keras runs the call op by op, where it can.
Such a call, eagerly (outside `tapeshim.function` and outside another
traced Keras call), runs Keras's own `Layer.__call__` with the layer's own
`call` on tapeshim tensors instead: each tapeshim op in it is an op of its own
(recorded by the tapes that watch its inputs, or computed at once), its
sublayers are one op each as usual, and a value asked for is computed then.
The layer keeps this from its first such call on.

Keras's `__call__` would make backend arrays of the tensors (losing the tape);
here it takes them as they are, cast to the layer's compute dtype as Keras's
autocast does.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

import jax

from tapeshim._src import dtypes, keras_compat
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable

VALUE_ASKED = (
    jax.errors.TracerArrayConversionError,  # (tapeshim's `ValueOfJaxTrace` is one)
    jax.errors.ConcretizationTypeError,  # (a Python `if` on a JAX value: TracerBoolConversionError)
    jax.errors.TracerIntegerConversionError,
)
"""What a call asking for a traced value raises."""

_ATTRIBUTE = "_tapeshim_op_by_op"
_local = threading.local()


def allowed(inside_keras: bool) -> bool:
    """Whether a call may run op by op here: eagerly, not inside a function's trace or a traced Keras call."""
    return _thread_state.trace is None and not inside_keras


def runs_op_by_op(layer: Any) -> bool:
    """Whether `layer`'s calls run op by op (one of them asked for a value)."""
    return bool(layer.__dict__.get(_ATTRIBUTE, False))


def mark(layer: Any) -> None:
    """Makes `layer`'s calls run op by op from now on."""
    object.__setattr__(layer, _ATTRIBUTE, True)  # (not a Keras attribute: no tracking)


def calls_own_code(layer: Any) -> bool:
    """Whether `layer`'s `call` wrapper is to run its own code on tapeshim tensors now (`call_op_by_op`)."""
    return id(layer) in getattr(_local, "layers", ())


def _converted(layer: Any, value: Any) -> Any:
    """`value` as Keras's `__call__` converts an argument: an array becomes a tensor, and a floating tensor is
    cast to the layer's compute dtype (autocast)."""
    if not isinstance(value, Tensor):
        if isinstance(value, Variable) or not hasattr(value, "__array__"):
            return value  # (Keras leaves other values as they are)
        value = convert_to_tensor(value)
    if not getattr(layer, "autocast", False):
        return value
    compute = dtypes.as_dtype(layer.compute_dtype)
    if value._dtype.is_floating and compute.is_floating and value._dtype != compute:
        from tapeshim._src.ops import math_ops  # import cycle: ops -> keras_bridge -> here

        return math_ops.cast(value, compute)
    return value


def _check_positional(layer: Any, args: tuple, allow_non_tensors: bool) -> None:
    """Keras's check that positional arguments are tensors (unless the layer allows others).

    Raises:
      ValueError: for a positional argument that is not a tensor, with Keras's message.
    """
    if allow_non_tensors:
        return
    for leaf in jax.tree_util.tree_leaves(args, is_leaf=lambda v: isinstance(v, (Tensor, Variable))):
        if not isinstance(leaf, (Tensor, Variable)) and not keras_compat.is_keras_variable(leaf):
            raise ValueError(
                "Only input tensors may be passed as positional arguments. The following argument value should "
                f"be passed as a keyword argument: {leaf} (of type {type(leaf)})"
            )


def note_losses(losses: Any) -> None:
    """Notes losses added during an op-by-op call (`add_loss` in its own code, its sublayers' calls'): they
    are that call's losses, as Keras collects every loss its sublayers add."""
    collected = getattr(_local, "losses", None)
    if collected is not None:
        collected.extend(losses)


@contextlib.contextmanager
def _own_code(layer: Any) -> Iterator[None]:
    layers = _local.__dict__.setdefault("layers", set())
    saved = keras_compat.input_conversion(layer)
    layers.add(id(layer))
    # Keras's `__call__` converts its tensor arguments to backend arrays and refuses others as positional
    # arguments; tapeshim tensors must reach `call` as they are.
    keras_compat.set_input_conversion(layer, False, True)
    try:
        yield
    finally:
        layers.discard(id(layer))
        keras_compat.set_input_conversion(layer, *saved)


def _regularize_activity(layer: Any, result: Any) -> None:
    """Adds the activity regularizer's loss of each tensor output, as Keras's `__call__` does (per example):
    one op each, the layer's "activity" programs."""
    from tapeshim._src.keras_bridge import stateful_call  # import cycle: keras_bridge -> here

    def per_example(output: Any) -> Any:
        loss = layer.activity_regularizer(output)
        if output.ndim > 0:
            loss = loss / keras_compat.keras.ops.cast(keras_compat.keras.ops.shape(output)[0], loss.dtype)
        return loss

    for output in jax.tree_util.tree_leaves(result, is_leaf=lambda v: isinstance(v, Tensor)):
        if isinstance(output, Tensor):
            note_losses([stateful_call(layer, "activity", per_example, (output,), {}, [])])


def call_op_by_op(layer: Any, keras_call: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[Any, list]:
    """`keras_call` (Keras's `Layer.__call__` of `layer`) running the layer's own `call` on tapeshim tensors.

    Keras resolves `training`, masks and names as for any call; the tensors reach `call` cast as Keras's
    autocast casts them, and its results are returned as they are.

    Returns:
      The call's result, and the losses added during the call (tapeshim tensors).
    """
    args = jax.tree_util.tree_map(lambda v: _converted(layer, v), args, is_leaf=lambda v: isinstance(v, Tensor))
    kwargs = jax.tree_util.tree_map(lambda v: _converted(layer, v), kwargs, is_leaf=lambda v: isinstance(v, Tensor))
    _check_positional(layer, args, keras_compat.input_conversion(layer)[1])
    outer, _local.losses = getattr(_local, "losses", None), []
    try:
        with _own_code(layer):
            result = keras_call(*args, **kwargs)
        if layer.activity_regularizer is not None:
            _regularize_activity(layer, result)  # (Keras's `__call__` regularizes only its backend's tensors)
        losses = _local.losses
    finally:
        _local.losses = outer
    note_losses(losses)  # (an enclosing op-by-op call's too)
    return result, losses
