"""`tf.keras.layers`: every Keras layer, subclassed so its outermost call is one tapeshim op."""

from tapeshim._src.keras_bridge import TapeLayerMixin as _TapeLayerMixin
from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.keras_embedding import EmbeddingRowsMixin as _EmbeddingRowsMixin
from tapeshim._src.keras_losses_metrics import wrap_namespace as _wrap_namespace

globals().update(_wrap_namespace(_tf_keras.layers, _tf_keras.Layer, _TapeLayerMixin, __name__, wrap_functions=False))


class Embedding(_EmbeddingRowsMixin, globals()["Embedding"]):  # noqa: F821 - made by _wrap_namespace
    __doc__ = _tf_keras.layers.Embedding.__doc__


__all__ = sorted(name for name in globals() if not name.startswith("_"))
