"""`tf.keras.optimizers`: Keras's optimizers; `apply_gradients` updates all variables in one compiled call."""

from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.keras_losses_metrics import getter as _getter
from tapeshim._src.keras_losses_metrics import wrap_namespace as _wrap_namespace
from tapeshim._src.keras_optimizers import TapeOptimizerMixin as _TapeOptimizerMixin
from tapeshim.keras.optimizers import schedules as schedules

globals().update(
    _wrap_namespace(
        _tf_keras.optimizers, _tf_keras.optimizers.Optimizer, _TapeOptimizerMixin, __name__, wrap_functions=False
    )
)
get = _getter(_tf_keras.optimizers.get, globals())
legacy = _tf_keras.optimizers.legacy  # Keras 3's: its classes raise, as in TF 2.21
__all__ = sorted(name for name in globals() if not name.startswith("_"))
