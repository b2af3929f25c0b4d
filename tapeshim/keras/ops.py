"""`tf.keras.ops`: Keras 3's ops, each a tape-aware tapeshim op on tapeshim tensors.

In TF, `tf.keras.ops.*` are TensorFlow ops, so a tape records them. Here each
function runs Keras's op (on JAX) as one tapeshim op (`keras_bridge.keras_function`):
recorded by tapes, traced by `tapeshim.function`, straight to Keras inside
Keras's own code. Functions that return Python values or take Python control
flow (`shape`, `ndim`, `cond`, `scan`, ...) are Keras's own; `stop_gradient`
is tapeshim's, so the gradient through it is None as in TF.
"""

from types import ModuleType as _ModuleType

from tapeshim._src.keras_bridge import keras_function as _keras_function
from tapeshim._src.keras_bridge import public_names as _public_names
from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.ops.math_ops import stop_gradient as _stop_gradient

_KERAS_OWN = frozenset(
    {
        "associative_scan",
        "cond",
        "convert_to_numpy",
        "custom_gradient",
        "fori_loop",
        "is_tensor",
        "map",
        "ndim",
        "scan",
        "shape",
        "switch",
        "vectorized_map",
        "while_loop",
    }
)
_wrapped: dict[int, object] = {}


def _tape_aware(name: str, function: object) -> object:
    if name == "stop_gradient":
        return _stop_gradient
    if name in _KERAS_OWN or not callable(function) or isinstance(function, type):
        return function
    if id(function) not in _wrapped:
        _wrapped[id(function)] = _keras_function(function)
    return _wrapped[id(function)]


def _namespace(source: _ModuleType, name: str) -> _ModuleType:
    module = _ModuleType(name, source.__doc__)
    for attribute, value in _public_names(source).items():
        setattr(module, attribute, _tape_aware(attribute, value))
    vars(module)["__all__"] = sorted(_public_names(source))
    return module


image = _namespace(_tf_keras.ops.image, __name__ + ".image")
linalg = _namespace(_tf_keras.ops.linalg, __name__ + ".linalg")
nn = _namespace(_tf_keras.ops.nn, __name__ + ".nn")
numpy = _namespace(_tf_keras.ops.numpy, __name__ + ".numpy")
globals().update(
    {
        attribute: _tape_aware(attribute, value)
        for attribute, value in _public_names(_tf_keras.ops).items()
        if not isinstance(value, _ModuleType)
    }
)
__all__ = sorted(_public_names(_tf_keras.ops))
