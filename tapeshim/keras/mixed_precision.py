"""`tf.keras.mixed_precision`: Keras's own (TF's names), re-exported."""

from tapeshim._src.keras_bridge import public_names as _public_names
from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim.keras import optimizers as _optimizers

LossScaleOptimizer = _optimizers.LossScaleOptimizer  # tapeshim's, whose steps are tapeshim ops
globals().update(
    {name: obj for name, obj in _public_names(_tf_keras.mixed_precision).items() if name != "LossScaleOptimizer"}
)
__all__ = sorted(_public_names(_tf_keras.mixed_precision))
