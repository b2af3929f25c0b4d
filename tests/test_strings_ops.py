"""tf.strings ops against TF: values, dtypes, shapes (ragged results included) and error classes."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf


def _r(x):
    """A ragged result's comparable parts (a dense one passes through)."""
    if hasattr(x, "nested_row_splits"):
        return ("ragged", x.to_list(), x.dtype, x.shape, list(x.nested_row_splits))
    return x


LONG = "a longer string with more than sixty-four bytes in it, surely, yes it is!! " * 3

CASES = {
    "split_scalar": lambda tf: tf.strings.split("a b  c"),
    "split_sep": lambda tf: _r(tf.strings.split(["a,,b", ""], ",")),
    "split_maxsplit": lambda tf: _r(tf.strings.split(["a b c", "d", "d e", "", "  ", "a  b   c  "], maxsplit=1)),
    "split_maxsplit2": lambda tf: _r(tf.strings.split(["d", "d e", "a  b   c  ", " d"], maxsplit=2)),
    "split_sep_maxsplit": lambda tf: _r(tf.strings.split(["d ", "  ", "a  b   c  ", " d"], " ", maxsplit=2)),
    "split_matrix": lambda tf: _r(tf.strings.split([["a b"], ["c"]])),
    "split_empty_sep": lambda tf: tf.strings.split("abc", ""),
    "split_spaces": lambda tf: _r(tf.strings.split(["  "], " ")),
    "split_multichar": lambda tf: _r(tf.strings.split(["a<>b<>", "<>"], "<>")),
    "split_tensor_sep": lambda tf: _r(tf.strings.split(["a-b"], tf.constant("-"))),
    "lower": lambda tf: tf.strings.lower(["ÀBC", "xY"]),
    "lower_utf8": lambda tf: tf.strings.lower(["ÀBC"], encoding="utf-8"),
    "upper": lambda tf: tf.strings.upper(["àbc"]),
    "upper_utf8": lambda tf: tf.strings.upper("àbc", encoding="utf-8"),
    "strip": lambda tf: tf.strings.strip([" \t a b \n", "x"]),
    "length": lambda tf: tf.strings.length(["héllo", ""]),
    "length_chars": lambda tf: tf.strings.length([["héllo", ""]], unit="UTF8_CHAR"),
    "substr": lambda tf: tf.strings.substr("hello", 1, 3),
    "substr_vectors": lambda tf: tf.strings.substr(["hello", "ab"], [1, -1], [10, 1]),
    "substr_chars": lambda tf: tf.strings.substr("héllo", 1, 2, unit="UTF8_CHAR"),
    "substr_end": lambda tf: tf.strings.substr("hello", 5, 2),
    "join": lambda tf: tf.strings.join(["a", tf.constant(["b", "c"])], separator="-"),
    "join_plain": lambda tf: tf.strings.join([["a", "b"], ["c", "d"]]),
    "reduce_join_axis": lambda tf: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator=","),
    "reduce_join_all": lambda tf: tf.strings.reduce_join([["a", "b"], ["c", "d"]]),
    "reduce_join_keepdims": lambda tf: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0, keepdims=True),
    "reduce_join_negative": lambda tf: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=-1),
    "reduce_join_3d": lambda tf: tf.strings.reduce_join(
        tf.constant([[["0", "1"], ["2", "3"]], [["4", "5"], ["6", "7"]]]), axis=[0, 2]
    ),
    "reduce_join_3d_reversed": lambda tf: tf.strings.reduce_join(
        tf.constant([[["0", "1"], ["2", "3"]], [["4", "5"], ["6", "7"]]]), axis=[2, 0]
    ),
    "reduce_join_3d_all": lambda tf: tf.strings.reduce_join(
        tf.constant([[["0", "1"], ["2", "3"]], [["4", "5"], ["6", "7"]]]), separator="."
    ),
    "reduce_join_ragged_rows": lambda tf: tf.strings.reduce_join(
        tf.ragged.constant([["a", "b"], [], ["c"]]), axis=1, separator=" "
    ),
    "reduce_join_ragged_last": lambda tf: tf.strings.reduce_join(tf.ragged.constant([["a", "b"], [], ["c"]]), axis=-1),
    "reduce_join_ragged_columns": lambda tf: tf.strings.reduce_join(
        tf.ragged.constant([["a", "b"], [], ["c"]]), axis=0
    ),
    "reduce_join_ragged_all": lambda tf: tf.strings.reduce_join(tf.ragged.constant([["a", "b"], [], ["c"]])),
    "reduce_join_ragged_rank3": lambda tf: _r(
        tf.strings.reduce_join(tf.ragged.constant([[["a", "b"]], [["c"], []]]), axis=2)
    ),
    "unsorted_segment_join": lambda tf: tf.strings.unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 3, separator=","),
    "unsorted_segment_join_rows": lambda tf: tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [1, 0], 2),
    "regex_replace": lambda tf: tf.strings.regex_replace(["aabc", "xyz"], "a+", "<\\0>"),
    "regex_replace_groups": lambda tf: tf.strings.regex_replace(["aabc"], "(a)(b)", "\\2\\1", replace_global=False),
    "regex_replace_classes": lambda tf: tf.strings.regex_replace(["Hello, World!"], "[^a-z ]", ""),
    "regex_replace_empty_match": lambda tf: tf.strings.regex_replace(["abc"], "x*", "-"),
    "regex_replace_utf8_dot": lambda tf: tf.strings.regex_replace(["héllo"], "h.l", "X"),
    "regex_replace_ascii_classes": lambda tf: tf.strings.regex_replace(["é_a1 b", "x9"], "\\w", "x"),
    "regex_replace_digits": lambda tf: tf.strings.regex_replace(["a12b345"], "\\d+", "<\\0>"),
    "regex_replace_backslash": lambda tf: tf.strings.regex_replace(["a.b"], "\\.", "\\\\"),
    "regex_replace_missing_group": lambda tf: tf.strings.regex_replace(["ab", "b"], "(a)?b", "[\\1]"),
    "regex_full_match_utf8": lambda tf: tf.strings.regex_full_match(["é", "ab", "éé"], "."),
    "regex_full_match": lambda tf: tf.strings.regex_full_match(["abc", "ab"], "a.c"),
    "bytes_split_scalar": lambda tf: tf.strings.bytes_split("abc"),
    "bytes_split": lambda tf: _r(tf.strings.bytes_split(["ab", "c", ""])),
    "to_number": lambda tf: tf.strings.to_number(["1.5", "2", " 3", "1e3", "0x10", "inf", "-2.5e-3"]),
    "to_number_int": lambda tf: tf.strings.to_number(["12", "-3", "+7"], tf.int32),
    "to_number_int64": lambda tf: tf.strings.to_number(["9000000000"], tf.int64),
    "to_number_double": lambda tf: tf.strings.to_number(["0.1"], tf.float64),
    "as_string_float": lambda tf: tf.strings.as_string(tf.constant([3.5, 1e10, 1e-7, -0.25])),
    "as_string_double": lambda tf: tf.strings.as_string(tf.constant([3.5], tf.float64)),
    "as_string_bool": lambda tf: tf.strings.as_string(tf.constant([True, False])),
    "as_string_int": lambda tf: tf.strings.as_string(tf.constant([[3, -4]])),
    "as_string_precision": lambda tf: tf.strings.as_string(tf.constant([3.14159]), precision=2),
    "as_string_scientific": lambda tf: tf.strings.as_string(tf.constant([3.14159]), scientific=True),
    "as_string_shortest": lambda tf: tf.strings.as_string(tf.constant([3.14159, 1e-7]), shortest=True),
    "as_string_width": lambda tf: tf.strings.as_string(tf.constant([3]), width=5, fill="0"),
    "as_string_width_space": lambda tf: tf.strings.as_string(tf.constant([3.5]), width=12),
    "as_string_complex": lambda tf: tf.strings.as_string(tf.constant([complex(1, 2)])),
    "as_string_nan_inf": lambda tf: tf.strings.as_string(tf.constant([np.nan, np.inf, -np.inf])),
    "format": lambda tf: tf.strings.format("x={} y={}", [tf.constant([1, 2]), tf.constant(1.5)]),
    "format_matrix": lambda tf: tf.strings.format("x={}", tf.constant([[1.25, 2], [3, 4]])),
    "format_summarize": lambda tf: tf.strings.format("x={}", tf.range(10)),
    "format_summarize_all": lambda tf: tf.strings.format("x={}", tf.range(10), summarize=-1),
    "format_string": lambda tf: tf.strings.format("x={}", tf.constant("ab")),
    "format_strings": lambda tf: tf.strings.format("x={}", tf.constant(["ab", "c"])),
    "format_placeholder": lambda tf: tf.strings.format("x=%", [tf.constant(3)], placeholder="%"),
    "unicode_split_scalar": lambda tf: tf.strings.unicode_split("héllo", "UTF-8"),
    "unicode_split": lambda tf: _r(tf.strings.unicode_split(["hé", "x"], "UTF-8")),
    "unicode_decode": lambda tf: _r(tf.strings.unicode_decode(["hé", "x"], "UTF-8")),
    "unicode_decode_scalar": lambda tf: tf.strings.unicode_decode("hé€", "UTF-8"),
    "unicode_decode_replace": lambda tf: tf.strings.unicode_decode(b"h\xff", "UTF-8"),
    "unicode_decode_ignore": lambda tf: tf.strings.unicode_decode(b"h\xff", "UTF-8", errors="ignore"),
    "unicode_offsets": lambda tf: [_r(x) for x in tf.strings.unicode_decode_with_offsets(["hé€", "x", ""], "UTF-8")],
    "unicode_offsets_scalar": lambda tf: tf.strings.unicode_decode_with_offsets("hé", "UTF-8"),
    "unicode_offsets_invalid": lambda tf: tf.strings.unicode_decode_with_offsets(b"a\xffb\xc3", "UTF-8"),
    "unicode_offsets_ragged": lambda tf: [
        _r(x) for x in tf.strings.unicode_decode_with_offsets(tf.ragged.constant([["hé"], ["x", "€"]]), "UTF-8")
    ],
    "unicode_encode": lambda tf: tf.strings.unicode_encode([104, 233, 8364], "UTF-8"),
    "unicode_encode_matrix": lambda tf: tf.strings.unicode_encode([[104, 233], [120, 121]], "UTF-8"),
    "unicode_encode_ragged": lambda tf: tf.strings.unicode_encode(tf.ragged.constant([[104, 233], [120]]), "UTF-8"),
    "unicode_encode_utf16": lambda tf: tf.strings.unicode_encode([104, 233], "UTF-16-BE"),
    "unicode_transcode": lambda tf: tf.strings.unicode_transcode(["hé"], "UTF-8", "UTF-16-BE"),
    "unicode_transcode_32": lambda tf: tf.strings.unicode_transcode("hé", "UTF-8", "UTF-32-BE"),
    "hash_bucket_fast": lambda tf: tf.strings.to_hash_bucket_fast(
        ["a", "ab", "abc", "abcd", "hello", "", "0123456789abcdefg", "x" * 33, "y" * 64, LONG, "é"], 1000
    ),
    "hash_bucket_fast_matrix": lambda tf: tf.strings.to_hash_bucket_fast([["cat", "dog"]], 7),
    "hash_bucket_fast_lengths": lambda tf: tf.strings.to_hash_bucket_fast(
        [bytes(range(n)) for n in range(0, 140, 7)], 2**40
    ),
    "hash_bucket_fast_every_length": lambda tf: tf.strings.to_hash_bucket_fast(
        [bytes((7 * i + n) % 256 for i in range(n)) for n in range(0, 80)] * 2, 2**62
    ),
    "hash_bucket": lambda tf: tf.strings.to_hash_bucket(
        ["", "a", "abcdefg", "abcdefgh", "abcdefghi", LONG, "é"], 2**62
    ),
    "hash_bucket_strong": lambda tf: tf.strings.to_hash_bucket_strong(
        ["", "a", "abcdefg", "abcdefgh", "abcdefghi", LONG, "é"], 2**62, [1, 2]
    ),
    "hash_bucket_strong_key": lambda tf: tf.strings.to_hash_bucket_strong([["cat"], ["dog"]], 10, [-(2**62), 7]),
    "ragged_split": lambda tf: _r(tf.strings.split(tf.ragged.constant([["a b", "c"], []]))),
    "ragged_lower": lambda tf: _r(tf.strings.lower(tf.ragged.constant([["A", "bC"], ["D"]]))),
    "ragged_length": lambda tf: _r(tf.strings.length(tf.ragged.constant([["ab"], ["c", ""]]))),
    "ragged_to_number": lambda tf: _r(tf.strings.to_number(tf.ragged.constant([["1"], ["2", "3"]]))),
    "ragged_hash": lambda tf: _r(tf.strings.to_hash_bucket_fast(tf.ragged.constant([["a"], ["b", "c"]]), 5)),
    "ragged_regex": lambda tf: _r(tf.strings.regex_replace(tf.ragged.constant([["aa"], ["ba"]]), "a", "x")),
    "ragged_unicode_decode": lambda tf: _r(tf.strings.unicode_decode(tf.ragged.constant([["hé"], []]), "UTF-8")),
    "ragged_as_string": lambda tf: _r(tf.strings.as_string(tf.ragged.constant([[1, 2], [3]]))),
    "ngrams": lambda tf: tf.strings.ngrams(["a", "b", "c"], 2),
    "ngrams_ragged": lambda tf: _r(tf.strings.ngrams(tf.ragged.constant([["a", "b", "c"], ["d"]]), 2)),
    "ngrams_pad": lambda tf: tf.strings.ngrams(["a", "b", "c"], 2, pad_values=("<s>", "</s>"), padding_width=1),
    "ngrams_widths": lambda tf: tf.strings.ngrams(["a", "b", "c"], [1, 3], separator="_"),
    "ngrams_preserve_short": lambda tf: _r(
        tf.strings.ngrams(tf.ragged.constant([["a"], ["b", "c", "d"]]), 3, preserve_short_sequences=True)
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_strings_ops(name):
    check(CASES[name])


ERRORS = {
    "substr_out_of_range": lambda tf: tf.strings.substr("hello", 7, 1),
    "to_number_float_as_int": lambda tf: tf.strings.to_number(["1.5"], tf.int32),
    "to_number_garbage": lambda tf: tf.strings.to_number(["abc"]),
    "to_number_overflow": lambda tf: tf.strings.to_number(["3000000000"], tf.int32),
    "to_number_empty": lambda tf: tf.strings.to_number([""]),
    "bad_regex": lambda tf: tf.strings.regex_replace(["abc"], "(", "x"),
    "bad_regex_match": lambda tf: tf.strings.regex_full_match(["abc"], "[a"),
    "format_count": lambda tf: tf.strings.format("{} {}", [1]),
    "unicode_decode_strict": lambda tf: tf.strings.unicode_decode(b"h\xff", "UTF-8", errors="strict"),
    "numeric_input": lambda tf: tf.strings.length(tf.constant([1])),
    "numeric_input_lower": lambda tf: tf.strings.lower(tf.constant([1.5])),
    "join_shapes": lambda tf: tf.strings.join([["a", "b"], ["c", "d", "e"]]),
    "as_string_sci_short": lambda tf: tf.strings.as_string(tf.constant([1.0]), scientific=True, shortest=True),
    "hash_strong_key_overflow": lambda tf: tf.strings.to_hash_bucket_strong(["a"], 10, [2**63, 7]),
    "segment_join_range": lambda tf: tf.strings.unsorted_segment_join(["a", "b"], [0, 5], 2),
    "hash_zero_buckets": lambda tf: tf.strings.to_hash_bucket_fast(["a"], 0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_strings_ops_errors(name):
    check_raises(ERRORS[name])


def test_messages():
    for name in ("substr_out_of_range", "to_number_garbage", "format_count", "unicode_decode_strict"):
        tf_text = _message(ERRORS[name], real_tf)
        ours = _message(ERRORS[name], tapeshim)
        assert tf_text.split("}} ")[-1].split(" [Op:")[0] in ours, name


def _message(body, module):
    with pytest.raises(Exception) as info:
        body(module)
    return str(info.value)
