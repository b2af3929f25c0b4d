"""tf.io.decode_raw, serialize_tensor and parse_tensor against TF: bytes identical in both directions."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf
from tapeshim._src import strings_io


def _io(tf):
    return tf.io


def test_tapeshim_io_exports_these():
    assert tapeshim.io.decode_raw is strings_io.decode_raw
    assert tapeshim.io.serialize_tensor is strings_io.serialize_tensor
    assert tapeshim.io.parse_tensor is strings_io.parse_tensor


VALUES = {
    "float_scalar": lambda tf: tf.constant(1.5),
    "int_matrix": lambda tf: tf.constant([[1, 2], [3, 4]]),
    "int64": lambda tf: tf.constant([-(2**40), 7], tf.int64),
    "strings": lambda tf: tf.constant(["a", "bc", ""]),
    "string_scalar": lambda tf: tf.constant(b"x\x00y"),
    "bool": lambda tf: tf.constant([True, False]),
    "float16": lambda tf: tf.constant([1.0, -2.5], tf.float16),
    "bfloat16": lambda tf: tf.constant([1.0, 3.0], tf.bfloat16),
    "float64": lambda tf: tf.constant([[0.1]], tf.float64),
    "complex64": lambda tf: tf.constant([1 + 2j], tf.complex64),
    "complex128": lambda tf: tf.constant([1 - 2j], tf.complex128),
    "uint8": lambda tf: tf.constant([0, 255], tf.uint8),
    "uint64": lambda tf: tf.constant([2**63 + 5], tf.uint64),
    "empty": lambda tf: tf.zeros([0, 2]),
    "empty_middle": lambda tf: tf.zeros([2, 0, 3], tf.int32),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_serialize_tensor_bytes_equal_tf(name):
    check(lambda tf: _io(tf).serialize_tensor(VALUES[name](tf)))


@pytest.mark.parametrize("name", sorted(VALUES))
def test_parse_tensor_reads_tf_bytes_and_tf_reads_ours(name):
    tf_bytes = real_tf.io.serialize_tensor(VALUES[name](real_tf)).numpy()
    ours_bytes = strings_io.serialize_tensor(VALUES[name](tapeshim)).numpy()
    dtype = VALUES[name](real_tf).dtype.name
    check(lambda tf: _io(tf).parse_tensor(tf_bytes, getattr(tf, "bool" if dtype == "bool" else dtype)))
    check(lambda tf: _io(tf).parse_tensor(ours_bytes, getattr(tf, "bool" if dtype == "bool" else dtype)))


def _typed_proto(dtype_enum, dims, field, payload):
    """A TensorProto with a typed *_val field (as TF's constants are stored), written by hand."""

    def varint(v):
        out = bytearray()
        while True:
            b, v = v & 0x7F, v >> 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def fld(n, body):
        return varint(n << 3 | 2) + varint(len(body)) + body

    shape = b"".join(fld(2, varint(8) + varint(d)) for d in dims)
    return varint(8) + varint(dtype_enum) + fld(2, shape) + fld(field, payload)


TYPED = {
    "float_val_repeats_last": (1, [3], 5, np.asarray([1.5], "<f4").tobytes(), "float32"),
    "int_val": (3, [2], 7, bytes([1]) + bytes([0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), "int32"),
    "double_val": (2, [2], 6, np.asarray([0.5, -1.0], "<f8").tobytes(), "float64"),
    "int64_val": (9, [1], 10, bytes([0x80, 0x01]), "int64"),
    "bool_val": (10, [3], 11, bytes([1, 0, 1]), "bool"),
    "half_val": (19, [1], 13, bytes([0x80, 0x78]), "float16"),
}


@pytest.mark.parametrize("name", sorted(TYPED))
def test_parse_tensor_typed_value_fields(name):
    enum, dims, field, payload, dtype = TYPED[name]
    data = _typed_proto(enum, dims, field, payload)
    check(lambda tf: _io(tf).parse_tensor(data, getattr(tf, dtype)))


DECODE = {
    "int16": lambda tf: _io(tf).decode_raw(tf.constant([b"\x01\x02\x03\x04", b"\x05\x06\x07\x08"]), tf.int16),
    "big_endian": lambda tf: _io(tf).decode_raw(tf.constant(b"\x01\x02\x03\x04"), tf.int16, little_endian=False),
    "float32": lambda tf: _io(tf).decode_raw(tf.constant([np.asarray([1.5, -2.0], "<f4").tobytes()]), tf.float32),
    "uint8_scalar": lambda tf: _io(tf).decode_raw(b"abc", tf.uint8),
    "fixed_length_pad": lambda tf: _io(tf).decode_raw(tf.constant([b"\x01\x02", b"\x05"]), tf.uint8, fixed_length=4),
    "fixed_length_cut": lambda tf: _io(tf).decode_raw(tf.constant([b"\x01\x02\x03\x04\x05"]), tf.int16, fixed_length=4),
    "float64_matrix": lambda tf: _io(tf).decode_raw(tf.constant([[np.asarray([0.1], "<f8").tobytes()]]), tf.float64),
    "bool": lambda tf: _io(tf).decode_raw(tf.constant([b"\x00\x01"]), tf.bool),
    "empty_strings": lambda tf: _io(tf).decode_raw(tf.constant([b"", b""]), tf.int32),
}


@pytest.mark.parametrize("name", sorted(DECODE))
def test_decode_raw(name):
    check(DECODE[name])


ERRORS = {
    "sizes_differ": lambda tf: _io(tf).decode_raw(tf.constant([b"\x01\x02", b"\x05"]), tf.uint8),
    "not_multiple": lambda tf: _io(tf).decode_raw(tf.constant([b"\x01\x02\x03"]), tf.int16),
    "string_out_type": lambda tf: _io(tf).decode_raw(tf.constant([b"\x01"]), tf.string),
    "parse_type_mismatch": lambda tf: _io(tf).parse_tensor(
        real_tf.io.serialize_tensor(real_tf.constant([1.5])).numpy(), tf.int32
    ),
    "parse_garbage": lambda tf: _io(tf).parse_tensor(b"garbage", tf.int32),
    "parse_vector": lambda tf: _io(tf).parse_tensor([b"a", b"b"], tf.int32),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    check_raises(ERRORS[name])


def test_messages():
    for name in ("sizes_differ", "not_multiple", "parse_type_mismatch", "parse_garbage"):
        with pytest.raises(real_tf.errors.InvalidArgumentError) as expected:
            ERRORS[name](real_tf)
        with pytest.raises(tapeshim.errors.InvalidArgumentError) as actual:
            ERRORS[name](tapeshim)
        assert str(expected.value).split("}} ")[-1].split(" [Op:")[0] in str(actual.value), name
