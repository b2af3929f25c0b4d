"""`tf.keras.losses`: Keras's losses; calling one inside a tape records one op."""

from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.keras_losses_metrics import TapeLossMixin as _TapeLossMixin
from tapeshim._src.keras_losses_metrics import getter as _getter
from tapeshim._src.keras_losses_metrics import wrap_namespace as _wrap_namespace

globals().update(
    _wrap_namespace(_tf_keras.losses, _tf_keras.losses.Loss, _TapeLossMixin, __name__, wrap_functions=True)
)
get = _getter(_tf_keras.losses.get, globals())
__all__ = sorted(name for name in globals() if not name.startswith("_"))
