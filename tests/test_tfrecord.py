"""TFRecord files, `tf.data.TFRecordDataset` and `TextLineDataset` against TF: files written by either read back
bit-identically in the other, with TF's checksums, compression and errors."""

import os

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf
from tapeshim._src.io.crc32c import crc32c, masked_crc32c

RECORDS = [b"", b"a", b"hello world", bytes(range(256)) * 20, os.urandom(5000)]
OPTIONS = [None, "GZIP", "ZLIB"]


def _write(tf, path, records, options):
    with tf.io.TFRecordWriter(str(path), options) as writer:
        for record in records:
            writer.write(record)


def _read(tf, path, compression):
    return [r.numpy() for r in tf.data.TFRecordDataset(str(path), compression_type=compression)]


def test_crc32c_known_values():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA
    long = os.urandom(70_000)  # the chunked path, checked against the byte loop
    from tapeshim._src.io.crc32c import _update_small

    assert crc32c(long) == _update_small(0xFFFFFFFF, long) ^ 0xFFFFFFFF
    assert masked_crc32c(b"") == ((0 >> 15 | 0 << 17) + 0xA282EAD8) & 0xFFFFFFFF


@pytest.mark.parametrize("options", OPTIONS)
def test_tf_writes_tapeshim_reads(tmp_path, options):
    path = tmp_path / "tf.tfrecord"
    _write(real_tf, path, RECORDS, options)
    assert _read(tapeshim, path, options) == RECORDS


@pytest.mark.parametrize("options", OPTIONS)
def test_tapeshim_writes_tf_reads(tmp_path, options):
    ours, theirs = tmp_path / "ts.tfrecord", tmp_path / "tf.tfrecord"
    _write(tapeshim, ours, RECORDS, options)
    _write(real_tf, theirs, RECORDS, options)
    assert _read(real_tf, ours, options) == RECORDS
    # the framing and masked CRCs byte for byte; compressed too (zlib with TF's settings)
    assert ours.read_bytes() == theirs.read_bytes()


def test_options_objects_and_strings(tmp_path):
    for tf in (real_tf, tapeshim):
        opts = tf.io.TFRecordOptions(compression_type="GZIP", compression_level=9)
        _write(tf, tmp_path / f"{tf.__name__}.gz", [b"x" * 100, b"y"], opts)
        assert tf.io.TFRecordOptions.get_compression_type_string(opts) == "GZIP"
        assert tf.io.TFRecordOptions.get_compression_type_string("ZLIB") == "ZLIB"
        assert tf.io.TFRecordOptions.get_compression_type_string(None) == ""
    for tf in (real_tf, tapeshim):
        assert _read(tf, tmp_path / "tensorflow.gz", "GZIP") == [b"x" * 100, b"y"]
        assert _read(tf, tmp_path / "tapeshim.gz", "GZIP") == [b"x" * 100, b"y"]


def test_writer_accepts_str_and_bytes_and_flushes(tmp_path):
    def body(tf):
        path = str(tmp_path / f"{tf.__name__}.rec")
        writer = tf.io.TFRecordWriter(path)
        writer.write("text")
        writer.write(tf.constant(b"tensor").numpy())
        writer.flush()
        flushed = _read(tf, path, None)
        writer.close()
        writer.close()
        return flushed

    assert check(body) == [b"text", b"tensor"]


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf, p: tf.io.TFRecordWriter(str(p / "missing" / "x.rec")),
        lambda tf, p: tf.io.TFRecordWriter(str(p / "x.rec"), "BAD"),
        lambda tf, p: tf.io.TFRecordWriter(str(p / "x.rec"), tf.io.TFRecordOptions("LZ4")),
        lambda tf, p: tf.io.TFRecordWriter(str(p / "x.rec")).write(3),
        lambda tf, p: tf.io.TFRecordWriter(str(p / "x.rec")).write(tf.constant(b"a tensor")),
    ],
)
def test_writer_errors(tmp_path, bad):
    check_raises(lambda tf: bad(tf, tmp_path), messages=False)


def test_closed_writer_errors(tmp_path):
    def body(tf):
        writer = tf.io.TFRecordWriter(str(tmp_path / f"{tf.__name__}.rec"))
        writer.close()
        writer.write(b"x")

    check_raises(body, messages=True)


def _corrupt(tmp_path):
    path = tmp_path / "good.rec"
    _write(real_tf, path, [b"abc", b"def", b"ghi"], None)
    data = path.read_bytes()
    (tmp_path / "truncated.rec").write_bytes(data[:-3])
    flipped = bytearray(data)
    flipped[14] ^= 1
    (tmp_path / "data_crc.rec").write_bytes(bytes(flipped))
    flipped = bytearray(data)
    flipped[2] ^= 1
    (tmp_path / "header_crc.rec").write_bytes(bytes(flipped))
    flipped = bytearray(data)
    flipped[19 + 2] ^= 1
    (tmp_path / "second_header.rec").write_bytes(bytes(flipped))


@pytest.mark.parametrize("name", ["truncated", "data_crc", "header_crc", "second_header", "missing"])
def test_corrupt_files_raise_tf_errors(tmp_path, name):
    _corrupt(tmp_path)

    def body(tf):
        out = []
        try:
            for record in tf.data.TFRecordDataset(str(tmp_path / f"{name}.rec")):
                out.append(record.numpy())
        except tf.errors.OpError as exc:
            # TF's message carries its function-node prefix and op suffix; compare the reason
            text = str(exc).split("}} ")[-1].split(" [Op:")[0]
            return out, type(exc).__name__, text
        return out

    check(body)


def test_gzip_reader_on_plain_file(tmp_path):
    _write(real_tf, tmp_path / "plain.rec", [b"abc"], None)

    def body(tf):
        try:
            _read(tf, tmp_path / "plain.rec", "GZIP")
        except tf.errors.DataLossError as exc:
            return str(exc).split("}} ")[-1].split(" [Op:")[0]

    check(body)


def _files(tmp_path):
    names = []
    for i in range(3):
        path = tmp_path / f"f{i}.rec"
        _write(real_tf, path, [f"r{i}{j}".encode() for j in range(i + 2)], None)
        names.append(str(path))
    return names


@pytest.mark.parametrize("reads", [None, 1, 2, 3, 5])
def test_several_files_and_parallel_reads_order(tmp_path, reads):
    names = _files(tmp_path)
    check(lambda tf: [r.numpy() for r in tf.data.TFRecordDataset(names, num_parallel_reads=reads)])


def test_filename_forms_and_dataset_api(tmp_path):
    names = _files(tmp_path)

    def body(tf):
        files = tf.data.Dataset.from_generator(lambda: iter(names[:2]), output_signature=tf.TensorSpec([], tf.string))
        from_dataset = tf.data.TFRecordDataset(files)
        from_tensor = tf.data.TFRecordDataset(tf.constant(names[1:]))
        ds = tf.data.TFRecordDataset(names[0])
        return (
            [r.numpy() for r in from_dataset],
            [r.numpy() for r in from_tensor],
            ds.element_spec,
            ds.cardinality(),
            isinstance(ds, tf.data.Dataset),
            isinstance(ds, tf.data.TFRecordDataset),
            [r.numpy() for r in tf.data.TFRecordDataset(names[2]).map(lambda r: r + b"!").take(2)],
            [r.numpy() for r in tf.data.TFRecordDataset(names[2]).skip(3)],
            [r.numpy() for r in tf.data.TFRecordDataset(tf.data.Dataset.from_tensor_slices(names[1:]))],
            [b.numpy() for b in tf.data.TFRecordDataset(names).batch(4)],
            [
                b.numpy()
                for b in tf.data.Dataset.list_files(str(tmp_path / "f*.rec"), shuffle=False).interleave(
                    tf.data.TFRecordDataset, cycle_length=2
                )
            ],
        )

    check(body)


@pytest.mark.parametrize("filenames", [3, [1, 2]])
def test_bad_filenames(filenames):
    check_raises(lambda tf: tf.data.TFRecordDataset(filenames), messages=True)


def test_text_line_dataset(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a\nb\r\nc\n\nd")
    (tmp_path / "b.txt").write_bytes(b"x\ny\n")
    (tmp_path / "e.txt").write_bytes(b"")
    import gzip

    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(b"one\ntwo\n" * 3))
    names = [str(tmp_path / n) for n in ("a.txt", "b.txt", "e.txt")]

    def body(tf):
        return (
            [x.numpy() for x in tf.data.TextLineDataset(names)],
            [x.numpy() for x in tf.data.TextLineDataset(names, num_parallel_reads=2)],
            [x.numpy() for x in tf.data.TextLineDataset(str(tmp_path / "c.txt.gz"), compression_type="GZIP")],
            tf.data.TextLineDataset(names).cardinality(),
            tf.data.TextLineDataset(names).element_spec,
        )

    check(body)


def test_examples_feed_a_numeric_pipeline(tmp_path):
    path = tmp_path / "examples.rec"
    with real_tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(5):
            features = {
                "x": real_tf.train.Feature(float_list=real_tf.train.FloatList(value=[i, i + 0.5])),
                "y": real_tf.train.Feature(int64_list=real_tf.train.Int64List(value=[i * 10])),
            }
            writer.write(real_tf.train.Example(features=real_tf.train.Features(feature=features)).SerializeToString())

    def body(tf):
        spec = {"x": tf.io.FixedLenFeature([2], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
        ds = tf.data.TFRecordDataset(str(path)).map(lambda r: tf.io.parse_single_example(r, spec))
        ds = ds.map(lambda e: (e["x"] * 2.0, e["y"] + 1)).shuffle(2, seed=1).batch(2)
        return sorted(float(v) for x, _ in ds for v in x.numpy().reshape(-1)), [y.shape for _, y in ds]

    check(body)


def test_raw_records_decode_in_a_pipeline(tmp_path):
    path = tmp_path / "nums.rec"
    _write(real_tf, path, [np.arange(i, i + 3, dtype=np.float32).tobytes() for i in range(5)], None)

    def body(tf):
        ds = tf.data.TFRecordDataset(str(path)).map(lambda r: tf.io.decode_raw(r, tf.float32)).batch(2)
        return [b for b in ds]

    check(body)


def test_tf_io_names_exist_in_tf():
    for name in tapeshim.io.__all__:
        assert hasattr(real_tf.io, name), f"tf.io.{name} does not exist in TensorFlow"
    for name in tapeshim.io.gfile.__all__:
        assert hasattr(real_tf.io.gfile, name), f"tf.io.gfile.{name} does not exist in TensorFlow"
    for name in (
        "BytesList",
        "Example",
        "Feature",
        "FeatureList",
        "FeatureLists",
        "Features",
        "FloatList",
        "Int64List",
        "SequenceExample",
    ):
        assert hasattr(real_tf.train, name) and hasattr(tapeshim.train, name)


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_dataset_writer(tmp_path, compression):
    # the TFRecord tutorial's tf.data.experimental.TFRecordWriter
    def body(tf):
        path = str(tmp_path / f"{tf.__name__}.rec")
        records = tf.data.Dataset.from_generator(
            lambda: iter([b"a", b"bc", b""]), output_types=tf.string, output_shapes=()
        )
        tf.data.experimental.TFRecordWriter(path, compression).write(records)
        return [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]

    check(body)
    assert (tmp_path / "tapeshim.rec").read_bytes() == (tmp_path / "tensorflow.rec").read_bytes()


@pytest.mark.parametrize("bad", [[1, 2], [[b"x"]]])
def test_dataset_writer_errors(tmp_path, bad):
    check_raises(
        lambda tf: tf.data.experimental.TFRecordWriter(str(tmp_path / "x.rec")).write(
            tf.data.Dataset.from_tensor_slices(bad)
        ),
        messages=True,
    )
