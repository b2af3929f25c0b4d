"""`tf.config.optimizer`: TF's graph optimizer settings, recorded (tapeshim compiles every program with XLA)."""

from tapeshim._src.config import get_experimental_options, get_jit, set_experimental_options, set_jit

__all__ = ["get_experimental_options", "get_jit", "set_experimental_options", "set_jit"]
