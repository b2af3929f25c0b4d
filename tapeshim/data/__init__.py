"""`tf.data`: in-memory datasets."""

from tapeshim._src.dataset import Dataset

AUTOTUNE = -1

__all__ = ["AUTOTUNE", "Dataset"]
