"""`tf.io`: files, TFRecord files and `tf.train.Example` parsing."""

from tapeshim._src.io.bytes_ops import decode_base64, decode_compressed, encode_base64
from tapeshim._src.io.csv_ops import decode_csv, matching_files
from tapeshim._src.io.file_ops import read_file, write_file
from tapeshim._src.io.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    parse_example,
    parse_single_example,
)
from tapeshim._src.io.records import TFRecordOptions, TFRecordWriter
from tapeshim._src.io.sequence_parsing import parse_sequence_example, parse_single_sequence_example
from tapeshim._src.ops.image_codecs import (  # IMAGE_DATA's codecs, under their tf.io names
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
)
from tapeshim._src.strings_io import decode_raw, parse_tensor, serialize_tensor  # STRINGS'
from tapeshim.io import gfile

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "SparseFeature",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "decode_base64",
    "decode_bmp",
    "decode_compressed",
    "decode_csv",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_raw",
    "encode_base64",
    "encode_jpeg",
    "encode_png",
    "gfile",
    "matching_files",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "parse_tensor",
    "read_file",
    "serialize_tensor",
    "write_file",
]
