"""`tf.keras.models`: `Model` and `Sequential` (tape-aware), and Keras's model utilities."""

from tapeshim._src.keras_bridge import keras as _keras
from tapeshim._src.keras_models import Model, Sequential
from tapeshim._src.keras_models import adopting as _adopting

clone_model = _adopting(_keras.models.clone_model)  # (Keras builds the clone from its own classes)
load_model = _keras.models.load_model
save_model = _keras.models.save_model
model_from_json = _keras.models.model_from_json

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_json", "save_model"]
