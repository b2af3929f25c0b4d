"""Op-table rows (docs/ops.md) for `tf.strings`, `tf.sparse` and `tf.ragged`.

Imported by the `tapeshim.strings`, `tapeshim.sparse` and `tapeshim.ragged`
namespaces; `export` returns each function unchanged.
"""

from __future__ import annotations

from tapeshim._src import (
    ragged,
    ragged_ops,
    sparse,
    sparse_ops,
    strings_convert,
    strings_hash,
    strings_io,
    strings_ops,
)
from tapeshim._src.ops.table import NUMERIC, export

_STRING = "string"
_HOST = "host-side (numpy), never traced into XLA"

for _path, _fn, _dtypes, _note in (
    ("strings.split", strings_ops.split, _STRING, _HOST + "; a RaggedTensor for rank >= 1 input"),
    ("strings.lower", strings_ops.lower, _STRING, _HOST),
    ("strings.upper", strings_ops.upper, _STRING, _HOST),
    ("strings.strip", strings_ops.strip, _STRING, _HOST),
    ("strings.length", strings_ops.length, _STRING, _HOST),
    ("strings.substr", strings_ops.substr, _STRING, _HOST),
    ("strings.join", strings_ops.join, _STRING, _HOST),
    ("strings.reduce_join", strings_ops.reduce_join, _STRING, _HOST),
    (
        "strings.regex_replace",
        strings_ops.regex_replace,
        _STRING,
        _HOST + "; Python `re` syntax (TF: RE2), the common subset agrees",
    ),
    (
        "strings.regex_full_match",
        strings_ops.regex_full_match,
        _STRING,
        _HOST + "; Python `re` syntax (TF: RE2), the common subset agrees",
    ),
    ("strings.bytes_split", strings_ops.bytes_split, _STRING, _HOST),
    ("strings.ngrams", strings_ops.ngrams, _STRING, _HOST + "; 1-D tensors and 2-D RaggedTensors"),
    ("strings.to_number", strings_convert.to_number, _STRING, _HOST),
    ("strings.format", strings_convert.format, "all", _HOST),
    ("strings.unicode_decode", strings_convert.unicode_decode, _STRING, _HOST + "; UTF-8/16/32, ASCII, Latin-1"),
    ("strings.unicode_encode", strings_convert.unicode_encode, "int32", _HOST + "; 1-D/2-D and 2-D ragged input"),
    ("strings.unicode_split", strings_convert.unicode_split, _STRING, _HOST),
    ("strings.unicode_decode_with_offsets", strings_convert.unicode_decode_with_offsets, _STRING, _HOST),
    ("strings.unicode_transcode", strings_convert.unicode_transcode, _STRING, _HOST),
    ("strings.unsorted_segment_join", strings_convert.unsorted_segment_join, _STRING, _HOST),
    (
        "strings.to_hash_bucket_fast",
        strings_hash.to_hash_bucket_fast,
        _STRING,
        _HOST + "; FarmHash Fingerprint64, TF's values",
    ),
    ("strings.to_hash_bucket", strings_hash.to_hash_bucket, _STRING, _HOST + "; TF's Hash64, TF's values"),
    (
        "strings.to_hash_bucket_strong",
        strings_hash.to_hash_bucket_strong,
        _STRING,
        _HOST + "; SipHash-2-4, TF's values",
    ),
):
    export(_path, gradient="-", dtypes=_dtypes, note=_note)(_fn)
export("strings.as_string", "as_string", gradient="-", dtypes="all", note=_HOST)(strings_convert.as_string)

export("sparse.to_dense", gradient="jax", dtypes="all", note="differentiable in the values")(sparse.to_dense)
export("sparse.from_dense", gradient="jax", dtypes="all")(sparse.from_dense)
export("sparse.reorder", gradient="jax", dtypes="all")(sparse.reorder)
export("sparse.reduce_sum", gradient="jax", dtypes=NUMERIC)(sparse.reduce_sum)
export(
    "sparse.add",
    gradient="jax",
    dtypes=NUMERIC,
    note="sparse + dense differentiable; sparse + sparse values computed on the host (no gradient)",
)(sparse.add)
export(
    "sparse.sparse_dense_matmul",
    gradient="jax",
    dtypes=NUMERIC,
    note="differentiable in the sparse values and the dense operand",
)(sparse.sparse_dense_matmul)
export("sparse.to_indicator", gradient="-", dtypes="integer")(sparse.to_indicator)
export("ragged.constant", gradient="-", dtypes="all")(ragged_ops.constant)
export("ragged.range", gradient="-", dtypes="floating, integer")(ragged_ops.ragged_range)
export(
    "ragged.map_flat_values",
    gradient="jax",
    dtypes="all",
    note="maps the flat values with tapeshim ops (gradients flow)",
)(ragged.map_flat_values)
for _path, _fn, _gradient in (
    ("sparse.reshape", sparse_ops.reshape, "jax"),
    ("sparse.concat", sparse_ops.concat, "jax"),
    ("sparse.slice", sparse_ops.slice, "jax"),
    ("sparse.expand_dims", sparse_ops.expand_dims, "jax"),
    ("sparse.retain", sparse_ops.retain, "jax"),
    ("sparse.transpose", sparse_ops.transpose, "jax"),
    ("sparse.fill_empty_rows", sparse_ops.fill_empty_rows, "jax"),
    ("sparse.reduce_max", sparse_ops.reduce_max, "jax"),
    ("sparse.eye", sparse_ops.eye, "-"),
    ("sparse.map_values", sparse_ops.map_values, "jax"),
    ("sparse.split", sparse_ops.split, "jax"),
):
    export(_path, gradient=_gradient, dtypes="all", note="index arithmetic on the host; values gathered")(_fn)
export("ragged.stack", gradient="jax", dtypes="all", note="axis=0")(ragged_ops.stack)
export("ragged.boolean_mask", gradient="jax", dtypes="all", note="dense data, rank-1 or rank-2 mask")(
    ragged_ops.boolean_mask
)
export("io.decode_raw", gradient="-", dtypes="string", note=_HOST)(strings_io.decode_raw)
export("io.serialize_tensor", gradient="-", dtypes="all", note=_HOST + "; bytes identical to TF's TensorProto")(
    strings_io.serialize_tensor
)
export("io.parse_tensor", gradient="-", dtypes="string", note=_HOST + "; reads TF's typed *_val fields too")(
    strings_io.parse_tensor
)
for _path, _fn in (
    ("sparse.segment_sum", sparse_ops.segment_sum),
    ("sparse.segment_mean", sparse_ops.segment_mean),
    ("sparse.segment_sqrt_n", sparse_ops.segment_sqrt_n),
):
    export(_path, gradient="jax", dtypes="floating", note="gather + scatter-add; dense gradient for data")(_fn)
export("ragged.row_splits_to_segment_ids", gradient="-", dtypes="int32, int64")(ragged_ops.row_splits_to_segment_ids)
export("ragged.segment_ids_to_row_splits", gradient="-", dtypes="int32, int64")(ragged_ops.segment_ids_to_row_splits)
export("sparse.maximum", gradient="jax", dtypes="floating, integer", note="absent entries count as 0")(
    sparse_ops.maximum
)
export("sparse.minimum", gradient="jax", dtypes="floating, integer", note="absent entries count as 0")(
    sparse_ops.minimum
)
export("sparse.softmax", gradient="jax", dtypes="floating", note="over each row's present values")(sparse_ops.softmax)
