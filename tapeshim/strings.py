"""`tf.strings`: ops on `tf.string` tensors."""

from tapeshim._src.strings_convert import (
    as_string,
    format,  # noqa: A004
    to_number,
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_encode,
    unicode_split,
    unicode_transcode,
    unsorted_segment_join,
)
from tapeshim._src.strings_hash import to_hash_bucket, to_hash_bucket_fast, to_hash_bucket_strong
from tapeshim._src.strings_ops import (
    bytes_split,
    join,
    length,
    lower,
    ngrams,
    reduce_join,
    regex_full_match,
    regex_replace,
    split,
    strip,
    substr,
    upper,
)

__all__ = [
    "as_string",
    "bytes_split",
    "format",
    "join",
    "length",
    "lower",
    "ngrams",
    "reduce_join",
    "regex_full_match",
    "regex_replace",
    "split",
    "strip",
    "substr",
    "to_hash_bucket",
    "to_hash_bucket_fast",
    "to_hash_bucket_strong",
    "to_number",
    "unicode_decode",
    "unicode_decode_with_offsets",
    "unicode_encode",
    "unicode_split",
    "unicode_transcode",
    "unsorted_segment_join",
    "upper",
]

from tapeshim._src import strings_table  # noqa: E402, F401  (registers the op-table rows)
