"""`tf.saved_model`: save `tf.Module`s' functions as portable StableHLO programs (and a TF SavedModel when
TensorFlow is installed) and load them without the original code."""

from tapeshim._src.saved_model import LoadOptions, SaveOptions, load, save

__all__ = ["LoadOptions", "SaveOptions", "load", "save"]
