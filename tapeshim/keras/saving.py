"""`tf.keras.saving`: Keras's saving utilities, re-exported."""

from tapeshim._src.keras_bridge import keras as _keras
from tapeshim._src.keras_bridge import public_names as _public_names

globals().update(_public_names(_keras.saving))
__all__ = sorted(_public_names(_keras.saving))
