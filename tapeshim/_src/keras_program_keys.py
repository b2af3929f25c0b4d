"""What keys the compiled program of a Keras call, besides its arguments (`keras_bridge.stateful_call`).

* `configuration_key`: Keras's own metrics and losses of one configuration share their programs.
* `attributes_version`: a Keras layer's Python attributes are read when its call is traced (`self.activation`,
  `self.temperature`); TF's eager call reads them on every call. Setting a public attribute of a built
  layer to another value (Grad-CAM's `model.layers[-1].activation = None`) outside Keras's own code
  moves the version every program key holds, so each call traces again once.
"""

from __future__ import annotations

import functools
import types
from typing import Any, Sequence

from tapeshim._src.keras_compat import keras  # (Keras imported with its backend chosen)

_version = 0


def attributes_version() -> int:
    """The version of the layers' Python attributes (moved by `note_attribute_set`)."""
    return _version


# What Keras's trainer sets on a model around `fit` (its callbacks' `History`, the step functions it makes,
# EarlyStopping's flag): not read by a call.
_TRAINER_ATTRIBUTES = frozenset(
    {"history", "train_function", "test_function", "predict_function", "stop_training", "stop_evaluating"}
)


def _read_by_calls(value: Any) -> bool:
    """Whether `value` is what a call reads from an attribute: plain data or a function (an activation)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_read_by_calls(v) for v in value)
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, functools.partial))


def note_attribute_set(layer: Any, name: str, old: Any, new: Any) -> None:
    """After `layer.name = new` (it was `old`): a built layer's public attribute holding plain data or a
    function (`activation`, `temperature`) given another value moves the version, so the programs traced
    with the old value are not used again."""
    global _version
    if name[:1] == "_" or old is new or name in _TRAINER_ATTRIBUTES or not getattr(layer, "built", False):
        return
    if not (_read_by_calls(old) and _read_by_calls(new)):
        return
    try:
        if bool(old == new):
            return
    except Exception:  # noqa: BLE001 - values that do not compare (arrays) count as changed
        pass
    _version += 1


def frozen_config(value: Any) -> Any:
    """A Keras config as a hashable value, or None when it holds anything but plain data."""
    if isinstance(value, dict):
        items = [(k, frozen_config(v)) for k, v in sorted(value.items())]
        return None if any(v is None and value[k] is not None for k, v in items) else ("dict", tuple(items))
    if isinstance(value, (list, tuple)):
        items = [frozen_config(v) for v in value]
        return None if any(f is None and v is not None for f, v in zip(items, value)) else ("list", tuple(items))
    return value if isinstance(value, (str, int, float, bool)) else None


def configuration_key(owner: Any, call_key: tuple, keras_variables: Sequence[Any]) -> Any:
    """The key under which Keras's own metrics and losses of one configuration share their programs.

    A new `tf.keras.metrics.Mean()` each epoch then reuses the compiled programs of the
    first. Only Keras's (and tapeshim's) classes, whose configuration describes their
    computation, share; a user's subclass or a wrapped user function keeps its own.
    """
    if not isinstance(owner, (keras.metrics.Metric, keras.losses.Loss)):
        return None
    if not type(owner).__module__.startswith(("keras.", "tapeshim.")):
        return None
    for attribute in ("_fn", "fn"):
        fn = getattr(owner, attribute, None)
        if fn is not None and not getattr(fn, "__module__", "").startswith("keras."):
            return None
    try:
        config = {k: v for k, v in owner.get_config().items() if k != "name"}
    except Exception:  # noqa: BLE001 - an object without a usable config keeps its own programs
        return None
    frozen = frozen_config(config)
    if frozen is None:
        return None
    variables = tuple((tuple(v.shape), str(v.dtype), v.name) for v in keras_variables)
    return type(owner), frozen, call_key[:4], variables
