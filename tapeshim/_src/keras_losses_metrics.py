"""`tf.keras.losses`, `tf.keras.metrics` and `tf.keras.activations`: Keras's own, as tapeshim ops.

A loss or activation call is one stateless op, so it is recorded by tapes and
traced by functions. A metric's `update_state`, `result` and `reset_state` are
each one op over the metric's variables (the update is assigned back), so
metrics keep their state across eager steps and inside `tapeshim.function`.
Inside Keras's own compiled `fit`, Keras calls them directly.
"""

from __future__ import annotations

import weakref
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

import jax

from tapeshim._src.distribute import context
from tapeshim._src.keras_bridge import (
    adopt_object,
    is_tensor_like,
    keras_function,
    note_variables_created,
    passthrough,
    public_names,
    stateful_call,
    symbolic,
)
from tapeshim._src.keras_compat import compute_output_spec
from tapeshim._src.keras_stand_in import stand_in
from tapeshim._src.ops import math_ops
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable

if TYPE_CHECKING:  # untyped (Any) for the checker: the mixins' `super()` calls are Keras's
    from keras.losses import Loss as _LossBase
    from keras.metrics import Metric as _MetricBase
else:
    _LossBase = _MetricBase = object


def concrete_arrays(structure: Any) -> Any:
    """`structure` with tapeshim tensors replaced by their computed arrays, or None if any is lazy or traced."""
    if _thread_state.trace is not None:
        return None
    leaves, treedef = jax.tree_util.tree_flatten(structure, is_leaf=is_tensor_like)
    arrays = []
    for leaf in leaves:
        if isinstance(leaf, (Tensor, Variable)) or hasattr(leaf, "to_dense"):
            tensor = convert_to_tensor(leaf)
            if tensor._value is None:
                return None
            leaf = tensor._value
        arrays.append(leaf)
    return jax.tree_util.tree_unflatten(treedef, arrays)


class TapeLossMixin(_LossBase):
    """A Keras loss whose call is one tapeshim op."""

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        if passthrough((y_true, y_pred, sample_weight), {}):
            return super().__call__(y_true, y_pred, sample_weight)
        loss = stateful_call(self, "call", super().__call__, (y_true, y_pred, sample_weight), {}, [])
        return _scale_for_distribution(self, loss)


def _scale_for_distribution(loss_object: Any, loss: Any) -> Any:
    """TF's Keras divides a mean-reduced loss by the replica count under a strategy (its TF backend only).

    This holds in replica context and eagerly inside the strategy's scope, as TF's; Keras's
    own `fit` step calls losses on JAX values and is never scaled (it is global view).
    """
    strategy = context.current_strategy()
    if strategy is None or strategy.num_replicas_in_sync == 1:
        return loss
    if getattr(loss_object, "reduction", None) not in ("sum_over_batch_size", "mean", "mean_with_sample_weight"):
        return loss
    return math_ops.multiply(loss, math_ops.cast(1.0 / strategy.num_replicas_in_sync, loss.dtype))


_updated: "weakref.WeakSet[Any]" = weakref.WeakSet()  # metrics whose `update_state` has run


class TapeMetricMixin(_MetricBase):
    """A Keras metric whose `update_state`, `result` and `reset_state` are tapeshim ops."""

    def update_state(self, *args: Any, **kwargs: Any) -> Any:
        if passthrough(args, kwargs):
            return super().update_state(*args, **kwargs)
        if self not in _updated:
            # The first update creates the variables of a metric that makes them on first use (F1Score,
            # compile()'s metrics): it runs in Keras directly on computed values, or else symbolically
            # first (inside `tapeshim.function`), so that they are created outside any JAX trace.
            _updated.add(self)
            arrays = concrete_arrays((args, kwargs))
            if arrays is not None:
                return super().update_state(*arrays[0], **arrays[1])
            count = len(self.variables)
            symbolic_args, symbolic_kwargs = symbolic((args, kwargs))
            compute_output_spec(super().update_state, *symbolic_args, **symbolic_kwargs)
            if len(self.variables) != count:
                note_variables_created()
        return stateful_call(self, "update_state", super().update_state, args, kwargs, list(self.variables))

    def result(self) -> Any:
        if passthrough((), {}):
            return super().result()
        return stateful_call(self, "result", super().result, (), {}, list(self.variables))

    def reset_state(self) -> None:
        if passthrough((), {}):
            return super().reset_state()
        stateful_call(self, "reset_state", super().reset_state, (), {}, list(self.variables))
        return None


def wrap_namespace(
    source: ModuleType, base: type | None, mixin: type, module: str, wrap_functions: bool
) -> dict[str, Any]:
    """Public names of Keras namespace `source`: `base` subclasses get `mixin`, functions become ops.

    Aliases of one class or function map to one wrapper.
    """
    wrapped: dict[int, Any] = {}
    names: dict[str, Any] = {}
    for name, obj in public_names(source).items():
        if isinstance(obj, type) and base is not None and issubclass(obj, base):
            if id(obj) not in wrapped:
                wrapped[id(obj)] = stand_in(obj, mixin, module)
            names[name] = wrapped[id(obj)]
        elif (
            wrap_functions
            and callable(obj)
            and not isinstance(obj, type)
            and name not in ("get", "serialize", "deserialize")
        ):
            if id(obj) not in wrapped:
                wrapped[id(obj)] = keras_function(obj)
            names[name] = wrapped[id(obj)]
        elif not isinstance(obj, ModuleType):
            names[name] = obj
    return names


def getter(keras_get: Callable[[Any], Any], namespace: dict[str, Any]) -> Callable[[Any], Any]:
    """A namespace's `get(identifier)`: Keras's lookup, returning tapeshim's wrapper of the result.

    Raises:
      ValueError: for an unknown identifier, as Keras.
    """

    def get(identifier: Any) -> Any:
        found = keras_get(identifier)
        if found is None:
            return None
        if isinstance(found, type):
            return namespace.get(found.__name__, found)
        if callable(found) and not hasattr(found, "get_config"):
            wrapper = namespace.get(getattr(found, "__name__", ""))
            return wrapper if getattr(wrapper, "__wrapped__", None) is found else keras_function(found)
        return adopt_object(found, namespace)

    get.__doc__ = "Returns the object for `identifier` (a name, config or instance), as Keras's `get`."
    return get
