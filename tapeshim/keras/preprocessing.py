"""`tf.keras.preprocessing`: Keras's own (TF's names), re-exported."""

from tapeshim._src.keras_bridge import tf_keras as _tf_keras

_source = _tf_keras.preprocessing
globals().update({_name: getattr(_source, _name) for _name in dir(_source) if not _name.startswith("_")})
__all__ = sorted(name for name in globals() if not name.startswith("_"))
