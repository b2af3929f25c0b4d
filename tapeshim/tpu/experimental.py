"""`tf.tpu.experimental`: `initialize_tpu_system` checks that JAX sees TPUs (`docs/distribute.md`)."""

from tapeshim._src.distribute.multi_worker import initialize_tpu_system

__all__ = ["initialize_tpu_system"]
