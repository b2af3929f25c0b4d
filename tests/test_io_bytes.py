"""`tf.io.encode_base64` / `decode_base64` / `decode_compressed` and `tf.saved_model`'s constants against TF."""

import gzip
import zlib

import pytest

import tapeshim
from oracle import check, check_raises, real_tf


def test_base64():
    def body(tf):
        data = tf.constant([[b"hello?>", b""], [bytes(range(256)), b"a"]])
        encoded = tf.io.encode_base64(data)
        return (
            encoded,
            tf.io.encode_base64(b"hello?>", pad=True),
            tf.io.decode_base64(encoded),
            tf.io.decode_base64(b"aGVsbG8_Pg=="),
            tf.io.decode_base64([b"aGk", b"aGk="]),
        )

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf: tf.io.decode_base64(b"aGVsbG8/Pg=="),
        lambda tf: tf.io.decode_base64(b"a"),
        lambda tf: tf.io.encode_base64(3),
        lambda tf: tf.io.decode_compressed(b"abc", "ZLIB"),
        lambda tf: tf.io.decode_compressed(b"abc", "XX"),
    ],
)
def test_errors(bad):
    def body(tf):
        try:
            return bad(tf)
        except tf.errors.OpError as exc:
            raise type(exc)(None, None, str(exc).split("}} ")[-1]) from None

    check_raises(body, messages=True)


def test_decode_compressed():
    def body(tf):
        return (
            tf.io.decode_compressed([zlib.compress(b"abc"), zlib.compress(b"")], "ZLIB"),
            tf.io.decode_compressed(gzip.compress(b"abc" * 100), "GZIP"),
            tf.io.decode_compressed(b"abc"),
        )

    check(body)


def test_saved_model_constants(tmp_path):
    for name in tapeshim.saved_model.__all__:
        assert hasattr(real_tf.saved_model, name), name
        if name.isupper():
            assert getattr(tapeshim.saved_model, name) == getattr(real_tf.saved_model, name), name
    check(lambda tf: tf.saved_model.contains_saved_model(str(tmp_path)))
