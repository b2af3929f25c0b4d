"""`tf.io.gfile`, `tf.io.read_file` and `tf.io.write_file` against TF, each in its own temporary directory."""

import pytest

from oracle import check, check_raises


def _in_dir(tmp_path, body):
    """`body(tf, root)` with a fresh directory per module, results made relative to it."""

    def run(tf):
        root = tmp_path / tf.__name__
        root.mkdir()
        result = body(tf, str(root))
        return _relative(result, str(root))

    return run


def _relative(value, root):
    if isinstance(value, str):
        return value.replace(root, "<root>")
    if isinstance(value, (list, tuple)):
        return type(value)(_relative(v, root) for v in value)
    return value


def _tree(tf, root):
    tf.io.gfile.makedirs(root + "/a/b")
    with tf.io.gfile.GFile(root + "/f.txt", "w") as handle:
        handle.write("hello\nworld\n")
        handle.write(b"x")
    with tf.io.gfile.GFile(root + "/a/g.bin", "wb") as handle:
        handle.write(b"\x00\x01")


def test_files_and_directories(tmp_path):
    def body(tf, root):
        _tree(tf, root)
        g = tf.io.gfile
        out = [
            g.exists(root + "/f.txt"),
            g.exists(root + "/nope"),
            g.isdir(root + "/a"),
            g.isdir(root + "/f.txt"),
            sorted(g.listdir(root)),
            sorted(g.listdir(root + "/a")),
            sorted(g.glob(root + "/*")),
            sorted(g.glob(root + "/*/*.bin")),
            sorted(g.glob([root + "/*.txt", root + "/a/*"])),
            g.stat(root + "/f.txt").length,
            g.stat(root + "/a").is_directory,
            isinstance(g.stat(root + "/f.txt").mtime_nsec, int),
            [(d, sorted(s), sorted(f)) for d, s, f in g.walk(root)],
            [d for d, _, _ in g.walk(root, topdown=False)],
            list(g.walk(root + "/nope")),
            g.join(root, "x", "y.txt"),
        ]
        g.copy(root + "/f.txt", root + "/a/copy.txt")
        g.copy(root + "/f.txt", root + "/a/copy.txt", overwrite=True)
        g.rename(root + "/a/copy.txt", root + "/moved.txt")
        g.rename(root + "/moved.txt", root + "/f2.txt", overwrite=False)
        g.mkdir(root + "/c")
        g.mkdir(root + "/c")
        g.remove(root + "/a/g.bin")
        out.append(sorted(g.listdir(root)))
        g.rmtree(root + "/a")
        out.append(sorted(g.listdir(root)))
        return out

    check(_in_dir(tmp_path, body))


def test_gfile_reading(tmp_path):
    def body(tf, root):
        _tree(tf, root)
        g = tf.io.gfile
        text = g.GFile(root + "/f.txt")
        binary = g.GFile(root + "/f.txt", "rb")
        out = [
            text.read(3),
            text.tell(),
            text.seek(1),
            text.read(2),
            text.readline(),
            text.tell(),
            text.read(),
            binary.read(),
            g.GFile(root + "/f.txt").readlines(),
            list(g.GFile(root + "/f.txt")),
            g.GFile(root + "/f.txt").size(),
            g.GFile(root + "/f.txt").mode,
        ]
        with g.GFile(root + "/ap.txt", "a") as handle:
            handle.write("x")
        with g.GFile(root + "/ap.txt", "a") as handle:
            handle.write("y")
        out.append(g.GFile(root + "/ap.txt").read())
        return out

    check(_in_dir(tmp_path, body))


@pytest.mark.parametrize(
    "bad",
    [
        lambda g, r: g.GFile(r + "/missing").read(),
        lambda g, r: g.listdir(r + "/missing"),
        lambda g, r: g.listdir(r + "/f.txt"),
        lambda g, r: g.remove(r + "/missing"),
        lambda g, r: g.remove(r + "/a"),
        lambda g, r: g.rmtree(r + "/missing"),
        lambda g, r: g.stat(r + "/missing"),
        lambda g, r: g.mkdir(r + "/x/y"),
        lambda g, r: g.copy(r + "/f.txt", r + "/a/g.bin"),
        lambda g, r: g.copy(r + "/missing", r + "/new"),
        lambda g, r: g.rename(r + "/missing", r + "/new"),
        lambda g, r: g.rename(r + "/f.txt", r + "/a/g.bin"),
        lambda g, r: g.GFile(r + "/f.txt", "x"),
        lambda g, r: g.GFile(r + "/f.txt", "r").write("a"),
        lambda g, r: g.GFile(r + "/new.txt", "w").read(),
    ],
)
def test_gfile_errors(tmp_path, bad):
    def body(tf, root):
        _tree(tf, root)
        return bad(tf.io.gfile, root)

    check_raises(_in_dir(tmp_path, body), messages=False)


def test_gfile_error_messages(tmp_path):
    def body(tf, root):
        _tree(tf, root)
        out = []
        for bad in (
            lambda: tf.io.gfile.GFile(root + "/missing").read(),
            lambda: tf.io.gfile.listdir(root + "/m"),
            lambda: tf.io.gfile.rmtree(root + "/m"),
            lambda: tf.io.gfile.copy(root + "/f.txt", root + "/a/g.bin"),
            lambda: tf.io.gfile.GFile(root + "/f.txt", "r").write("a"),
        ):
            try:
                bad()
            except tf.errors.OpError as exc:
                out.append((type(exc).__name__, str(exc)))
        return out

    check(_in_dir(tmp_path, body))


def test_read_and_write_file(tmp_path):
    def body(tf, root):
        _tree(tf, root)
        tf.io.write_file(root + "/new/dir/w.txt", "abc")
        tf.io.write_file(tf.constant(root + "/w2.bin"), tf.constant(b"\x00\xff"))
        return [
            tf.io.read_file(root + "/f.txt"),
            tf.io.read_file(root + "/new/dir/w.txt"),
            tf.io.read_file(tf.constant(root + "/w2.bin")),
        ]

    check(_in_dir(tmp_path, body))


@pytest.mark.parametrize(
    "bad",
    [
        lambda tf, r: tf.io.read_file(r + "/missing"),
        lambda tf, r: tf.io.read_file(tf.constant([r + "/f.txt"])),
        lambda tf, r: tf.io.read_file(3),
        lambda tf, r: tf.io.write_file(r + "/x", ["a", "b"]),
    ],
)
def test_read_file_errors(tmp_path, bad):
    def body(tf, root):
        _tree(tf, root)
        return bad(tf, root)

    check_raises(_in_dir(tmp_path, body))
