"""`tf.autograph.experimental`."""

from tapeshim._src.autograph.conversion import do_not_convert

__all__ = ["do_not_convert"]
