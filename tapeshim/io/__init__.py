"""`tf.io`: files, TFRecord files and `tf.train.Example` parsing."""

from tapeshim._src.io.file_ops import read_file, write_file
from tapeshim._src.io.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
from tapeshim._src.io.records import TFRecordOptions, TFRecordWriter
from tapeshim.io import gfile

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "TFRecordOptions", "TFRecordWriter", "VarLenFeature",
           "gfile", "parse_example", "parse_single_example", "read_file", "write_file"]
