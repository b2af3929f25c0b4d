"""`tf.keras.layers`: every Keras layer, subclassed so its outermost call is one tapeshim op."""

from typing import Any as _Any

from tapeshim._src.distribute.collectives import synchronized_moments as _synchronized_moments
from tapeshim._src.keras_bridge import TapeLayerMixin as _TapeLayerMixin
from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.keras_embedding import EmbeddingRowsMixin as _EmbeddingRowsMixin
from tapeshim._src.keras_losses_metrics import wrap_namespace as _wrap_namespace

_wrapped = _wrap_namespace(_tf_keras.layers, _tf_keras.Layer, _TapeLayerMixin, __name__, wrap_functions=False)
globals().update(_wrapped)
# The wrappers _wrap_namespace made (tapeshim mixin + Keras class), extended below; Keras ships no types.
_WrappedEmbedding: _Any = _wrapped["Embedding"]
_WrappedBatchNormalization: _Any = _wrapped["BatchNormalization"]


class Embedding(_EmbeddingRowsMixin, _WrappedEmbedding):
    __doc__ = _tf_keras.layers.Embedding.__doc__
    _tapeshim_stands_for = _tf_keras.layers.Embedding  # (`keras_stand_in`: type checks as for Keras's)


class BatchNormalization(_WrappedBatchNormalization):
    __doc__ = _tf_keras.layers.BatchNormalization.__doc__
    _tapeshim_stands_for = _tf_keras.layers.BatchNormalization

    def __init__(self, *args: _Any, synchronized: bool = False, **kwargs: _Any) -> None:  # Keras's arguments
        # Keras accepts `synchronized=True` on its TensorFlow backend only; tapeshim all-reduces the batch
        # statistics over the replicas of `strategy.run` itself (tf.distribute's replica axis).
        super().__init__(*args, **kwargs)
        self.synchronized = bool(synchronized)

    def _moments(self, inputs: _Any, mask: _Any) -> _Any:  # Keras's hook (Keras tensors, untyped)
        if not self.synchronized or mask is not None:
            return super()._moments(inputs, mask)
        return _synchronized_moments(inputs, self._reduction_axes)


__all__ = sorted(name for name in globals() if not name.startswith("_"))
