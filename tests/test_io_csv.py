"""`tf.io.decode_csv` and `tf.io.matching_files` against TF."""

import pytest

from oracle import check, check_raises


def test_columns_defaults_and_shapes():
    def body(tf):
        return (
            tf.io.decode_csv("1,2.5,abc", [[0], [0.0], [""]]),
            tf.io.decode_csv(["1,2.5,abc", ",,"], [[0], [1.5], ["d"]]),
            tf.io.decode_csv([["1,2"], ["3,4"]], [[0], [tf.constant(0, tf.int64)]]),
            tf.io.decode_csv(["1e3, 2", "-0.5,+7"], [[0.0], [tf.constant(0, tf.float64)]]),
            tf.io.decode_csv(tf.constant(["x", '""']), [["none"]]),
        )

    check(body)


def test_quotes_delimiters_na_and_selected_columns():
    def body(tf):
        return (
            tf.io.decode_csv(['"a,b",2', '"a""b",3', '"",4'], [[""], [0]]),
            tf.io.decode_csv(["a;2"], [[""], [0]], field_delim=";"),
            tf.io.decode_csv(['"a",2'], [[""], [0]], use_quote_delim=False),
            tf.io.decode_csv(["NA,2"], [[9], [0]], na_value="NA"),
            tf.io.decode_csv(["1,2,3", "4,5,6"], [[0], [0.0]], select_cols=[0, 2]),
            tf.io.decode_csv(["a b,2"], [[""], [0]]),
        )

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.io.decode_csv(["1,2,3"], [[0], [0]]),
        lambda tf: tf.io.decode_csv(["x,2"], [[0], [0]]),
        lambda tf: tf.io.decode_csv(["1.5,2"], [[0], [0.0]]),
        lambda tf: tf.io.decode_csv(["3000000000,2"], [[0], [0.0]]),
        lambda tf: tf.io.decode_csv(["1,2"], [[0.0], [0.0, 1.0]]),
        lambda tf: tf.io.decode_csv(['"a"b,2'], [[""], [0]]),
        lambda tf: tf.io.decode_csv(["1,"], [[0], []]),
        lambda tf: tf.io.decode_csv(["1,x"], [[0], [tf.constant(0, tf.int64)]]),
        lambda tf: tf.io.decode_csv(["x", ""], [["none"]]),
    ],
)
def test_errors(bad):
    def body(tf):
        try:
            return bad(tf)
        except tf.errors.OpError as exc:
            raise type(exc)(None, None, str(exc).split("}} ")[-1]) from None

    check_raises(body, messages=True)


def test_bad_defaults():
    check_raises(lambda tf: tf.io.decode_csv(["1,2"], [tf.int32, tf.float32]))
    check_raises(lambda tf: tf.io.decode_csv(["1,2"], [[0.0], [True]]))


def test_text_lines_to_columns(tmp_path):
    (tmp_path / "data.csv").write_text("1,0.5,cat\n2,1.5,dog\n3,,bird\n")

    def body(tf):
        ds = tf.data.TextLineDataset(str(tmp_path / "data.csv")).batch(2)
        return [tf.io.decode_csv(b, [[0], [-1.0], [""]]) for b in ds]

    check(body)


def test_matching_files(tmp_path):
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x")

    def body(tf):
        found = tf.io.matching_files(str(tmp_path / "*.txt"))
        return [f.replace(str(tmp_path).encode(), b"<root>") for f in found.numpy()], found.dtype, found.shape

    check(body)
