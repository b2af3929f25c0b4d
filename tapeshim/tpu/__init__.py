"""`tf.tpu`: TPU set-up calls that TPU programs make before `TPUStrategy` (JAX finds TPUs itself)."""

from tapeshim.tpu import experimental

__all__ = ["experimental"]
