"""`tf.keras.optimizers.schedules`: Keras's learning-rate schedules; a call on a step is a tapeshim op."""

from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.keras_losses_metrics import wrap_namespace as _wrap_namespace
from tapeshim._src.keras_optimizers import TapeScheduleMixin as _TapeScheduleMixin

globals().update(
    _wrap_namespace(
        _tf_keras.optimizers.schedules,
        _tf_keras.optimizers.schedules.LearningRateSchedule,
        _TapeScheduleMixin,
        __name__,
        wrap_functions=False,
    )
)
__all__ = sorted(name for name in globals() if not name.startswith("_"))
