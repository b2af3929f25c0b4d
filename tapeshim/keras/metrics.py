"""`tf.keras.metrics`: Keras's metrics; `update_state`, `result` and `reset_state` are tapeshim ops."""

from tapeshim._src.keras_bridge import tf_keras as _tf_keras
from tapeshim._src.keras_losses_metrics import TapeMetricMixin as _TapeMetricMixin
from tapeshim._src.keras_losses_metrics import getter as _getter
from tapeshim._src.keras_losses_metrics import wrap_namespace as _wrap_namespace

globals().update(
    _wrap_namespace(_tf_keras.metrics, _tf_keras.metrics.Metric, _TapeMetricMixin, __name__, wrap_functions=True)
)
get = _getter(_tf_keras.metrics.get, globals())
__all__ = sorted(name for name in globals() if not name.startswith("_"))
