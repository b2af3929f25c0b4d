"""The metaclass of tapeshim's subclasses of Keras's classes: type checks answer as for Keras's class.

tapeshim's `tf.keras.layers.Dense`, `tf.keras.Model`, `tf.keras.metrics.Mean`, ... subclass
Keras's classes (adding the tape-aware calls). In TF there is one class of each name, so
`isinstance(model, tf.keras.Model)` holds for a `Sequential`, and
`isinstance(layer, tf.keras.layers.BatchNormalization)` for the layers of a model that
Keras built (`tf.keras.applications`, `load_model`, `clone_model`). A stand-in class
answers `isinstance` and `issubclass` as the Keras class it stands for; user subclasses
of it answer as ordinary classes.
"""

from __future__ import annotations

import abc
from typing import Any

STANDS_FOR = "_tapeshim_stands_for"
"""The class attribute naming the Keras class a stand-in stands for (in the stand-in's own namespace only)."""


class StandsForKeras(abc.ABCMeta):
    """`isinstance(x, cls)` is `isinstance(x, keras_class)` for a stand-in `cls` of `keras_class`.

    It derives from `abc.ABCMeta`, so a user's class may also derive from `abc.ABC` (as with TF's
    classes, whose metaclass is `type`: `ABCMeta` is the only other metaclass they combine with).
    """

    def __instancecheck__(cls, instance: Any) -> bool:
        keras_class = cls.__dict__.get(STANDS_FOR)
        if keras_class is not None:
            return isinstance(instance, keras_class)
        return super().__instancecheck__(instance)

    def __subclasscheck__(cls, subclass: type) -> bool:
        keras_class = cls.__dict__.get(STANDS_FOR)
        if keras_class is not None:
            return issubclass(subclass, keras_class)
        return super().__subclasscheck__(subclass)


def stand_in(keras_class: type, mixin: type, module: str) -> type:
    """`keras_class` subclassed with `mixin` first, under the same name, standing in for it."""
    namespace = {
        "__module__": module,
        "__doc__": keras_class.__doc__,
        "__qualname__": keras_class.__name__,
        STANDS_FOR: keras_class,
    }
    return StandsForKeras(keras_class.__name__, (mixin, keras_class), namespace)
