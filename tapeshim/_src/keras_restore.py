"""Checkpoints of Keras objects: their variables keyed by position, and values kept for objects not built yet.

TF restores a checkpoint into a Keras model or optimizer that has not made its
variables yet when it makes them (deferred restoration). tapeshim keeps such values
here (`restore_when_built`) and assigns them when the object builds
(`apply_pending_restore`, called by the bridge's build hooks and by optimizers).
"""

from __future__ import annotations

import weakref
from typing import Any

import keras
import numpy as np

from tapeshim._src import checkpoint
from tapeshim._src.variable import Variable


def variables_by_position(obj: Any) -> dict[str, Variable]:
    """A Keras object's variables for checkpoints, keyed by position: an identical object built afresh
    (whose names are numbered anew) restores them."""
    from tapeshim._src.keras_bridge import view_of  # import cycle: keras_bridge -> here

    return {f"variables/{i}": view_of(v) for i, v in enumerate(obj.variables)}


_pending_restores: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def restore_when_built(obj: Any, values: dict[str, np.ndarray]) -> None:
    """Keeps values saved for a Keras object that has no variables yet (an unbuilt model, an optimizer
    without slots) until it builds them, as TF defers them."""
    if not obj.built:
        _pending_restores[obj] = dict(values)


def apply_pending_restore(obj: Any) -> None:
    """Assigns what `restore_when_built` kept for `obj`, now that it is built."""
    pending = _pending_restores.pop(obj, None)
    if pending:
        checkpoint.restore_values(variables_by_position(obj), pending, f"{type(obj).__name__}/")


checkpoint.register_trackable(keras.Layer, variables_by_position, restore_when_built)
