"""`tf.types`: the types of TF's public interfaces."""

from tapeshim.types import experimental

__all__ = ["experimental"]
