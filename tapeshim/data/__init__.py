"""`tf.data`: in-memory datasets and their iterators."""

from tapeshim._src.dataset import Dataset
from tapeshim._src.dataset_iterator import OwnedIterator as Iterator
from tapeshim._src.dataset_options import Options, ThreadingOptions
from tapeshim._src.io.datasets import TextLineDataset, TFRecordDataset  # IO
from tapeshim.data import experimental

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

__all__ = [
    "AUTOTUNE",
    "Dataset",
    "INFINITE_CARDINALITY",
    "Iterator",
    "Options",
    "ThreadingOptions",
    "UNKNOWN_CARDINALITY",
    "experimental",
]
__all__ += ["TFRecordDataset", "TextLineDataset"]  # IO
