"""`tf.lookup`: static hash tables, vocabulary tables and their initializers, against TF."""

import itertools

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises

_files = itertools.count()


def _kv(tf, keys, values, key_dtype=None, value_dtype=None):
    return tf.lookup.KeyValueTensorInitializer(keys, values, key_dtype, value_dtype)


def _table(tf, keys=("a", "b", "c"), values=(1, 2, 3), default=-1, **kw):
    return tf.lookup.StaticHashTable(_kv(tf, list(keys), list(values), **kw), default)


HASH_TABLE = {
    "string_to_int32": lambda tf: _table(tf).lookup(tf.constant(["a", "z", "c"])),
    "scalar_key": lambda tf: _table(tf)[tf.constant("b")],
    "matrix_keys": lambda tf: _table(tf).lookup(tf.constant([["a", "q"], ["c", "b"]])),
    "empty_keys": lambda tf: _table(tf).lookup(tf.constant([], tf.string)),
    "string_to_float": lambda tf: _table(tf, values=[0.5, 1.5, 2.5], default=-1.0).lookup(tf.constant(["c", "x"])),
    "string_to_string": lambda tf: _table(tf, values=["x", "y", "z"], default="?").lookup(tf.constant(["b", "d"])),
    "string_to_int64": lambda tf: _table(tf, value_dtype=tf.int64).lookup(tf.constant(["b", "d"])),
    "string_to_bool": lambda tf: _table(tf, values=[True, False, True], default=False).lookup(tf.constant(["a", "b"])),
    "int64_to_float64": lambda tf: _table(
        tf, [10, 20, 5], [1.0, 2.0, 3.0], 0.0, key_dtype=tf.int64, value_dtype=tf.float64
    ).lookup(tf.constant([20, 7, 5], tf.int64)),
    "int32_to_float": lambda tf: _table(tf, [1, 2], [3.0, 4.0], 0.0).lookup(tf.constant([1, 5])),
    "int32_to_string": lambda tf: _table(tf, [1, 2], ["x", "y"], "").lookup(tf.constant([[1], [5]])),
    "int64_to_string": lambda tf: _table(tf, [1, 2], ["x", "y"], "?", key_dtype=tf.int64).lookup(
        tf.constant([1, 5], tf.int64)
    ),
    "int64_to_int64_negative": lambda tf: _table(
        tf, [-3, 0, 9], [1, 2, 3], -1, key_dtype=tf.int64, value_dtype=tf.int64
    ).lookup(tf.constant([-3, 9, 4, -4], tf.int64)),
    "duplicate_same_value": lambda tf: _table(tf, ["a", "a"], [1, 1]).lookup(tf.constant(["a"])),
    "size": lambda tf: _table(tf).size(),
    "size_with_duplicates": lambda tf: _table(tf, ["a", "a", "b"], [1, 1, 2]).size(),
    "attributes": lambda tf: (lambda t: (t.key_dtype, t.value_dtype, t.default_value, t.name))(_table(tf)),
    "name": lambda tf: tf.lookup.StaticHashTable(_kv(tf, ["a"], [1]), -1, name="t").name,
    "initializer_dtypes": lambda tf: (lambda i: (i.key_dtype, i.value_dtype))(_kv(tf, ["a"], [1], None, tf.int64)),
    "ragged_keys": lambda tf: _table(tf).lookup(tf.ragged.constant([["a"], ["b", "z"]])).flat_values,
    "ragged_row_lengths": lambda tf: _table(tf).lookup(tf.ragged.constant([["a"], ["b", "z"]])).row_lengths(),
    "export_sorted": lambda tf: [
        tf.sort(t) if t.dtype != tf.string else tf.constant(sorted(t.numpy())) for t in _table(tf).export()
    ],
}


@pytest.mark.parametrize("name", sorted(HASH_TABLE))
def test_static_hash_table(name):
    check(HASH_TABLE[name])


HASH_TABLE_ERRORS = {
    "int_keys_on_string_table": lambda tf: _table(tf).lookup(tf.constant([1])),
    "int32_keys_on_int64_table": lambda tf: _table(tf, [1, 2], [1, 2], key_dtype=tf.int64).lookup(tf.constant([1])),
    "list_keys": lambda tf: _table(tf).lookup(["a"]),
    "string_default_for_int": lambda tf: _table(tf, default="x"),
    "float_default_for_int": lambda tf: _table(tf, default=1.5),
    "vector_default": lambda tf: _table(tf, default=[-1, -2]),
    "duplicate_different_values": lambda tf: _table(tf, ["a", "a"], [1, 2]),
    "length_mismatch": lambda tf: _table(tf, ["a", "b"], [1]),
    "float_keys": lambda tf: _table(tf, [1.0], [1], 0),
    "int32_to_int64": lambda tf: _table(tf, [1], [1], value_dtype=tf.int64),
}


@pytest.mark.parametrize("name", sorted(HASH_TABLE_ERRORS))
def test_static_hash_table_errors(name):
    check_raises(HASH_TABLE_ERRORS[name])


def _vocab(tf, keys=("a", "b", "c"), ids=(0, 1, 2), buckets=5, **kw):
    initializer = _kv(tf, list(keys), tf.constant(list(ids), tf.int64))
    return tf.lookup.StaticVocabularyTable(initializer, buckets, **kw)


VOCABULARY = {
    "strings": lambda tf: _vocab(tf).lookup(tf.constant(["a", "zz", "q", "c", "", "hello world"])),
    "strings_matrix": lambda tf: _vocab(tf).lookup(tf.constant([["b", "x"], ["y", "a"]])),
    "sparse_ids": lambda tf: _vocab(tf, ["a", "b"], [5, 9], 2).lookup(tf.constant(["a", "b", "q", "r", "s"])),
    "long_strings": lambda tf: _vocab(tf, buckets=7).lookup(
        tf.constant(["x" * n for n in (7, 15, 31, 63, 64, 65, 200)])
    ),
    "int64_keys": lambda tf: _vocab(tf, tf.constant([10, 20], tf.int64), [0, 1], 3).lookup(
        tf.constant([10, 7, 99, -5, 20, 123456789012], tf.int64)
    ),
    "int32_lookup_dtype": lambda tf: _vocab(
        tf, tf.constant([10, 20], tf.int64), [0, 1], 3, lookup_key_dtype=tf.int32
    ).lookup(tf.constant([10, 7, 99])),
    "no_initializer": lambda tf: tf.lookup.StaticVocabularyTable(None, 2, lookup_key_dtype=tf.string).lookup(
        tf.constant(["a", "b", "c"])
    ),
    "size": lambda tf: _vocab(tf).size(),
    "attributes": lambda tf: (lambda t: (t.key_dtype, t.value_dtype, t.name))(_vocab(tf)),
    "getitem": lambda tf: _vocab(tf)[tf.constant("b")],
    "ragged": lambda tf: _vocab(tf).lookup(tf.ragged.constant([["a", "x"], []])).flat_values,
}


@pytest.mark.parametrize("name", sorted(VOCABULARY))
def test_static_vocabulary_table(name):
    check(VOCABULARY[name])


VOCABULARY_ERRORS = {
    "zero_buckets": lambda tf: _vocab(tf, buckets=0),
    "int32_values": lambda tf: tf.lookup.StaticVocabularyTable(_kv(tf, ["a"], [0]), 3),
    "int32_keys": lambda tf: tf.lookup.StaticVocabularyTable(_kv(tf, tf.constant([10]), tf.constant([0], tf.int64)), 3),
    "wrong_key_dtype": lambda tf: _vocab(tf).lookup(tf.constant([1])),
    "list_keys": lambda tf: _vocab(tf).lookup(["a"]),
}


@pytest.mark.parametrize("name", sorted(VOCABULARY_ERRORS))
def test_static_vocabulary_table_errors(name):
    check_raises(VOCABULARY_ERRORS[name])


TEXT = "apple\t10\nbanana\t20\ncherry\t30\n"


def _file_table(tmp_path, text, key_dtype, key_index, value_dtype, value_index, default, keys, **kw):
    """A body: a table from a fresh vocabulary file (TF shares tables of one file name), then a lookup."""

    def body(tf):
        path = tmp_path / f"vocab{next(_files)}.txt"
        path.write_bytes(text.encode())
        initializer = tf.lookup.TextFileInitializer(
            str(path), getattr(tf, key_dtype), key_index, getattr(tf, value_dtype), value_index, **kw
        )
        table = tf.lookup.StaticHashTable(initializer, default)
        return table.lookup(tf.constant(keys, getattr(tf, key_dtype))), table.size()

    return body


WL, LN = -2, -1
TEXT_FILES = {
    "whole_line_to_line_number": (TEXT, "string", WL, "int64", LN, -1, ["apple\t10", "x"]),
    "columns": (TEXT, "string", 0, "int64", 1, -1, ["banana", "x", "cherry"]),
    "columns_reversed": (TEXT, "int64", 1, "string", 0, "?", [20, 5]),
    "float_values": (TEXT, "string", 0, "float32", 1, -1.0, ["apple"]),
    "int32_values": (TEXT, "string", 0, "int32", 1, -1, ["apple"]),
    "line_number_keys": (TEXT, "int64", LN, "string", 0, "?", [0, 2, 3]),
    "int_whole_lines": ("5\n7\n", "int64", WL, "int64", LN, -1, [7, 5, 1]),
    "no_trailing_newline": ("a\nb", "string", WL, "int64", LN, -1, ["a", "b"]),
    "space_delimiter": ("a b\nc d\n", "string", 1, "int64", LN, -1, ["b", "d"], {"delimiter": " "}),
    "crlf": ("a\r\nb\r\n", "string", WL, "int64", LN, -1, ["a", "a\r", "b"]),
    "number_with_spaces_and_signs": ("a\t 5\nb\t-5\nc\t+5 \n", "string", 0, "int64", 1, 0, ["a", "b", "c"]),
    "float_forms": ("a\t1e3\nb\t.5\n", "string", 0, "float64", 1, -1.0, ["a", "b"]),
    "extra_columns": ("a\tb\tc\n", "string", 2, "string", 0, "", ["c"]),
    "vocab_size": (TEXT, "string", 0, "int64", LN, -1, ["apple", "cherry"], {"vocab_size": 2}),
    "value_offset": (TEXT, "string", 0, "int64", LN, -1, ["banana"], {"value_index_offset": 3}),
    "bad_column": (TEXT, "string", 5, "int64", LN, -1, ["a"]),
    "bad_int": (TEXT, "int64", 0, "int64", LN, -1, [1]),
    "int_from_float_text": ("a\t5.0\n", "string", 0, "int64", 1, -1, ["a"]),
    "vocab_size_too_big": (TEXT, "string", 0, "int64", LN, -1, ["a"], {"vocab_size": 5}),
    "empty_line": ("a\n\nb\n", "string", WL, "int64", LN, -1, ["a"]),
    "empty_file": ("", "string", WL, "int64", LN, -1, ["a"]),
    "duplicate_lines": ("a\na\n", "string", WL, "int64", LN, -1, ["a"]),
}
# the files and columns TF refuses (the cases from "bad_column" on): TF's error is the point
TEXT_FILES_REFUSED = {
    "bad_column",
    "bad_int",
    "int_from_float_text",
    "vocab_size_too_big",
    "empty_line",
    "empty_file",
    "duplicate_lines",
}


@pytest.mark.parametrize("name", sorted(TEXT_FILES))
def test_text_file_initializer(name, tmp_path):
    text, kd, ki, vd, vi, default, keys, *extra = TEXT_FILES[name]
    body = _file_table(tmp_path, text, kd, ki, vd, vi, default, keys, **(extra[0] if extra else {}))
    check(body, raises=name in TEXT_FILES_REFUSED)


def test_text_file_vocabulary_table(tmp_path):
    def body(tf):
        path = tmp_path / f"vocab{next(_files)}.txt"
        path.write_text(TEXT)
        initializer = tf.lookup.TextFileInitializer(str(path), tf.string, 0, tf.int64, LN)
        table = tf.lookup.StaticVocabularyTable(initializer, 2)
        return table.lookup(tf.constant(["cherry", "zzz", "apple", "kiwi"])), table.size()

    check(body)


TEXT_FILE_ERRORS = {
    "missing_file": lambda tf, d: tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(str(d / "missing.txt"), tf.string, 0, tf.int64, LN), -1
    ),
    "index_below_minus_two": lambda tf, d: tf.lookup.TextFileInitializer("f", tf.string, -3, tf.int64, LN),
    "empty_filename": lambda tf, d: tf.lookup.TextFileInitializer("", tf.string, 0, tf.int64, LN),
    "zero_vocab_size": lambda tf, d: tf.lookup.TextFileInitializer("f", tf.string, 0, tf.int64, LN, vocab_size=0),
    "line_number_string_key": lambda tf, d: tf.lookup.TextFileInitializer("f", tf.string, LN, tf.int64, 0),
    "line_number_string_value": lambda tf, d: tf.lookup.TextFileInitializer("f", tf.int64, WL, tf.string, LN),
}


@pytest.mark.parametrize("name", sorted(TEXT_FILE_ERRORS))
def test_text_file_initializer_errors(name, tmp_path):
    check_raises(lambda tf: TEXT_FILE_ERRORS[name](tf, tmp_path))


def test_text_file_index_constants():
    check(lambda tf: (tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER))


def test_lookup_in_dataset_map():
    def body(tf):
        table = _table(tf)
        vocab = _vocab(tf)
        ds = tf.data.Dataset.from_tensor_slices(["a", "b", "x"]).map(lambda s: (table.lookup(s), vocab.lookup(s)))
        return [tuple(tf.constant(v) for v in element) for element in ds.as_numpy_iterator()]

    check(body)


FUNCTIONS = {
    "int64_to_float": lambda tf: _table(tf, [10, 20, 5], [1.0, 2.0, 3.0], 0.0, key_dtype=tf.int64),
    "int32_to_int32": lambda tf: _table(tf, [1, 2, 3], [7, 8, 9], -1),
    "vocabulary_int64": lambda tf: _vocab(tf, tf.constant([10, 20], tf.int64), [0, 1], 3),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_integer_lookup_in_function(name):
    def body(tf):
        table = FUNCTIONS[name](tf)
        dtype = table.key_dtype
        f = tf.function(lambda k: table.lookup(k) * 2 if table.value_dtype != tf.string else table.lookup(k))
        return [f(tf.constant(keys, dtype)) for keys in ([10, 7, 5, 1], [20, 3, 99])]

    check(body)


def test_string_constant_lookup_in_function():
    def body(tf):
        table, vocab = _table(tf), _vocab(tf)

        @tf.function
        def f(x):
            return table.lookup(tf.constant(["a", "q", "c"])) + x, vocab.lookup(tf.constant(["b", "zz"]))

        return f(tf.constant(1))

    check(body)


def test_integer_keys_to_strings_in_function_is_a_clear_error():
    table = _table(tapeshim, [1, 2], ["x", "y"], "")
    f = tapeshim.function(table.lookup)
    with pytest.raises(NotImplementedError, match="traced integer keys"):
        f(tapeshim.constant([1, 5]))
    assert table.lookup(tapeshim.constant([2, 5])).numpy().tolist() == [b"y", b""]


def test_gradient_through_lookup_is_none():
    def body(tf):
        table = _table(tf, [1, 2], [3.0, 4.0], 0.0)
        default = tf.Variable(1.0)
        with tf.GradientTape() as tape:
            out = table.lookup(tf.constant([1, 5])) * default
        return tape.gradient(out, default)

    check(body)


def test_fingerprint_buckets_of_many_strings():
    rng = np.random.default_rng(0)
    words = ["".join(chr(97 + c) for c in rng.integers(0, 26, rng.integers(0, 80))) for _ in range(200)]
    check(lambda tf: _vocab(tf, buckets=1000).lookup(tf.constant(words)))
