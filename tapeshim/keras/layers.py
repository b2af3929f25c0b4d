"""`tf.keras.layers`: every Keras layer, subclassed so its outermost call is one tapeshim op."""

from tapeshim._src.keras_bridge import TapeLayerMixin as _TapeLayerMixin
from tapeshim._src.keras_bridge import keras as _keras
from tapeshim._src.keras_losses_metrics import wrap_namespace as _wrap_namespace

globals().update(_wrap_namespace(_keras.layers, _keras.Layer, _TapeLayerMixin, __name__, wrap_functions=False))
__all__ = sorted(name for name in globals() if not name.startswith("_"))
