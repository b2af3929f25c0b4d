"""`tf.data`: in-memory datasets and their iterators."""

from tapeshim._src.dataset import Dataset
from tapeshim._src.dataset_iterator import OwnedIterator as Iterator
from tapeshim._src.io.datasets import TextLineDataset, TFRecordDataset  # IO

AUTOTUNE = -1

__all__ = ["AUTOTUNE", "Dataset", "Iterator"]
__all__ += ["TFRecordDataset", "TextLineDataset"]  # IO
