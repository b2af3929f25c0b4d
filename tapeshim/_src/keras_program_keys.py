"""What keys the compiled program of a Keras call, besides its arguments (`keras_bridge.stateful_call`).

* `configuration_key`: Keras's own metrics and losses of one configuration share their programs.
* `attributes_key`: a Keras layer's Python attributes are read when its call is traced; TF's eager call
  reads them on every call. A function-valued attribute of a built layer swapped by user code (Grad-CAM's
  `model.layers[-1].activation = None`, an activation replaced by another) is part of every program's key,
  so calls trace again for the new one, and a swap back finds the programs of the old one. Numbers,
  strings and flags (`trainable`, a temperature, a step counter) are not: a model that sets one on every
  step would trace on every step; as in a TF `tf.function`, a call already traced keeps the number it
  saw (pass a changing number as a tensor or a variable).
"""

from __future__ import annotations

import functools
import types
import weakref
from typing import Any, Sequence

from tapeshim._src.keras_compat import keras  # (Keras imported with its backend chosen)

_swapped: "weakref.WeakKeyDictionary[Any, dict[str, Any]]" = weakref.WeakKeyDictionary()
_key: tuple = ()


def attributes_key() -> tuple:
    """The function-valued attributes user code swapped on built layers (empty while none was)."""
    return _key


def _function_or_none(value: Any) -> bool:
    return value is None or isinstance(value, (types.FunctionType, types.BuiltinFunctionType, functools.partial))


def note_attribute_set(layer: Any, name: str, old: Any, new: Any) -> None:
    """After `layer.name = new` (it was `old`): a function-valued public attribute of a built layer swapped
    for another function or None changes `attributes_key`, so programs traced with the old one are not
    used for the new one."""
    global _key
    if name[:1] == "_" or old is new or not getattr(layer, "built", False):
        return
    if not (_function_or_none(old) and _function_or_none(new)) or (old is None and name not in _swapped.get(layer, {})):
        return  # (None before: an attribute set for the first time, or a property, such as `trainable`)
    _swapped.setdefault(layer, {})[name] = new
    _key = tuple(
        (id(owner), attribute, id(value))
        for owner, held in _swapped.items()
        for attribute, value in sorted(held.items())
    )


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
