"""`tf.keras.applications`: Keras's own (TF's names), re-exported."""

from tapeshim._src.keras_bridge import public_names as _public_names
from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.keras_models import adopting as _adopting

# The model constructors (`MobileNetV2`, `ResNet50`, ...) build Keras's own classes: their models are adopted.
globals().update(
    {
        name: _adopting(value) if name[:1].isupper() and callable(value) else value
        for name, value in _public_names(_tf_keras.applications).items()
    }
)
__all__ = sorted(_public_names(_tf_keras.applications))
