"""`tf.keras.dtype_policies`: Keras's own (TF's names), re-exported."""

from tapeshim._src.keras_bridge import public_names as _public_names
from tapeshim._src.keras_bridge import tf_keras as _tf_keras

globals().update(_public_names(_tf_keras.dtype_policies))
__all__ = sorted(_public_names(_tf_keras.dtype_policies))
