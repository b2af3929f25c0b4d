"""`tf.keras.saving`: Keras's saving utilities, re-exported."""

from tapeshim._src.keras_bridge import keras as _keras

_source = _keras.saving
globals().update({_name: getattr(_source, _name) for _name in dir(_source) if not _name.startswith("_")})
__all__ = sorted(name for name in globals() if not name.startswith("_"))
