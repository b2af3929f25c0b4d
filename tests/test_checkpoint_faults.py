"""Checkpoints under faults: TF's error classes for file system failures and damaged files, crash safety.

Every error case runs the same body with real TensorFlow and with tapeshim
(tests/oracle.py). The crash tests kill a child process (SIGKILL) at each
file operation of `CheckpointManager.save` and check that the directory still
holds a restorable latest checkpoint.
"""

import contextlib
import glob
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest

import tapeshim
from oracle import check, check_raises

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(TESTS_DIR)


@pytest.fixture
def shared_dir():
    """A directory every user may enter (pytest's tmp_path is private to root)."""
    directory = tempfile.mkdtemp(prefix="tapeshim-faults-")
    os.chmod(directory, 0o755)
    yield directory
    for root, dirs, _ in os.walk(directory):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
    shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def unprivileged():
    """Runs the block without root's right to write anywhere (tests may run as root, which chmod does not stop)."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)  # nobody; the saved user id stays root, so the next line can switch back
    try:
        yield
    finally:
        os.seteuid(0)


def _model(tf):
    class Dense(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.reshape(tf.range(64, dtype=tf.float32), [8, 8]))
            self.b = tf.Variable(tf.zeros([8]))

    return Dense()


def _outcome(call):
    """`("ok", None)` or `("raised", <class name>, <caught by except tf.errors.OpError>)`."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the class is the result
        from tensorflow import errors as tf_errors

        return ("raised", type(exc).__name__, isinstance(exc, (tf_errors.OpError, tapeshim.errors.OpError)))
    return ("ok", None)


# Read-only directories -------------------------------------------------------------------------


def test_save_into_a_read_only_directory_is_permission_denied(shared_dir):
    def body(tf):
        directory = os.path.join(shared_dir, tf.__name__)
        os.makedirs(directory)
        checkpoint = tf.train.Checkpoint(model=_model(tf))
        os.chmod(directory, 0o555)
        with unprivileged():
            return [
                _outcome(lambda: checkpoint.save(os.path.join(directory, "ckpt"))),
                _outcome(lambda: checkpoint.write(os.path.join(directory, "ckpt"))),
                _outcome(lambda: checkpoint.write(os.path.join(directory, "sub", "ckpt"))),
                _outcome(lambda: tf.train.CheckpointManager(checkpoint, directory, max_to_keep=1).save()),
            ]

    result = check(body)
    assert result == [("raised", "PermissionDeniedError", True)] * 4


def test_unreadable_checkpoint_raises_op_error(shared_dir):
    def body(tf):
        directory = os.path.join(shared_dir, tf.__name__)
        checkpoint = tf.train.Checkpoint(model=_model(tf))
        path = checkpoint.save(os.path.join(directory, "ckpt"))
        for name in glob.glob(path + ".*"):
            os.chmod(name, 0)
        with unprivileged():
            return [_outcome(lambda: checkpoint.restore(path)), _outcome(lambda: tf.train.list_variables(path))]

    assert check(body) == [("raised", "OpError", True)] * 2


def test_unreadable_state_file_is_ignored(shared_dir):
    def body(tf):
        directory = os.path.join(shared_dir, tf.__name__)
        checkpoint = tf.train.Checkpoint(model=_model(tf))
        checkpoint.save(os.path.join(directory, "ckpt"))
        os.chmod(os.path.join(directory, "checkpoint"), 0)
        with unprivileged():
            return (
                tf.train.latest_checkpoint(directory),
                tf.train.CheckpointManager(checkpoint, directory, max_to_keep=2).latest_checkpoint,
            )

    assert check(body) == (None, None)


# Full disks and file size limits ---------------------------------------------------------------


def test_save_past_the_file_size_limit_is_out_of_range(shared_dir):
    def body(tf):
        directory = os.path.join(shared_dir, tf.__name__)
        checkpoint = tf.train.Checkpoint(v=tf.Variable(tf.zeros([100_000])))
        previous_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, hard))
        try:
            return _outcome(lambda: checkpoint.save(os.path.join(directory, "ckpt")))
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            signal.signal(signal.SIGXFSZ, previous_handler)

    assert check(body) == ("raised", "OutOfRangeError", True)


_MOUNTED_CHILD = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {tests!r})
    from oracle import check
    full, read_only = sys.argv[1], sys.argv[2]

    def outcome(call):
        try:
            call()
        except Exception as exc:
            return type(exc).__name__
        return "ok"

    def body(tf):
        checkpoint = tf.train.Checkpoint(v=tf.Variable(tf.zeros([100_000])))
        return [
            outcome(lambda: checkpoint.save(os.path.join(full, tf.__name__, "ckpt"))),
            outcome(lambda: tf.train.CheckpointManager(checkpoint, os.path.join(full, tf.__name__), 1).save()),
            outcome(lambda: checkpoint.save(os.path.join(read_only, "ckpt"))),
        ]

    result = check(body)
    assert result == ["ResourceExhaustedError", "ResourceExhaustedError", "PermissionDeniedError"], result
    print("OK", result)
""")


def test_full_disk_and_read_only_file_system(tmp_path):
    """A 64 KiB file system and a read-only one, mounted in a private mount namespace of a child process."""
    full, read_only = tmp_path / "full", tmp_path / "ro"
    full.mkdir()
    read_only.mkdir()
    script = tmp_path / "child.py"
    script.write_text(_MOUNTED_CHILD.format(tests=TESTS_DIR))
    command = (
        f"mount -t tmpfs -o size=64k tmpfs {full} && mount -t tmpfs -o ro tmpfs {read_only} && "
        f"exec {sys.executable} {script} {full} {read_only}"
    )
    done = subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_DIR,
    )
    assert done.returncode == 0 and "OK" in done.stdout, done.stdout + done.stderr[-3000:]


# Paths that are not directories ----------------------------------------------------------------


def test_save_under_a_file_is_failed_precondition(tmp_path):
    def body(tf):
        directory = tmp_path / tf.__name__
        directory.mkdir()
        (directory / "a_file").write_text("not a directory")
        os.makedirs(directory / "taken" / "ckpt.index")  # TF's index file name, taken by a directory
        os.makedirs(directory / "taken" / "ckpt.npz")  # tapeshim's
        checkpoint = tf.train.Checkpoint(model=_model(tf))
        return [
            _outcome(lambda: checkpoint.save(str(directory / "a_file" / "ckpt"))),
            _outcome(lambda: checkpoint.write(str(directory / "a_file" / "sub" / "ckpt"))),
            _outcome(lambda: checkpoint.write(str(directory / "taken" / "ckpt"))),
        ]

    assert check(body) == [("raised", "FailedPreconditionError", True)] * 3


# Damaged checkpoints ----------------------------------------------------------------------------


def _damage(kind, data):
    if kind == "truncated":
        return data[: len(data) // 2]
    if kind == "garbage":
        return b"this is not a checkpoint " * 40
    if kind == "empty":
        return b""
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["truncated", "garbage", "empty"])
def test_damaged_checkpoint_raises_op_error(tmp_path, kind):
    def body(tf):
        checkpoint = tf.train.Checkpoint(model=_model(tf))
        path = checkpoint.save(str(tmp_path / tf.__name__ / "ckpt"))
        for name in glob.glob(path + ".*"):  # every file of the checkpoint
            with open(name, "rb") as stream:
                data = stream.read()
            with open(name, "wb") as stream:
                stream.write(_damage(kind, data))
        return [
            _outcome(lambda: checkpoint.restore(path)),
            _outcome(lambda: checkpoint.read(path)),
            _outcome(lambda: tf.train.list_variables(path)),
            _outcome(lambda: tf.train.load_variable(path, "model/w/.ATTRIBUTES/VARIABLE_VALUE")),
            _outcome(lambda: tf.train.CheckpointManager(checkpoint, str(tmp_path / tf.__name__), 1).latest_checkpoint),
        ]

    assert check(body) == [("raised", "OpError", True)] * 4 + [("ok", None)]


def test_damaged_checkpoint_message_is_not_numpys(tmp_path):
    path = tapeshim.train.Checkpoint(v=tapeshim.Variable([1.0])).save(str(tmp_path / "ckpt"))
    with open(path + ".npz", "r+b") as stream:
        stream.truncate(40)
    with pytest.raises(tapeshim.errors.OpError) as raised:
        tapeshim.train.Checkpoint(v=tapeshim.Variable([0.0])).restore(path)
    message = str(raised.value)
    assert path in message and "truncated or is not a checkpoint" in message
    assert "zip" not in message.lower() and "pickle" not in message.lower()


def test_garbage_state_file_means_no_latest_checkpoint(tmp_path):
    def body(tf):
        directory = tmp_path / tf.__name__
        directory.mkdir()
        (directory / "checkpoint").write_text("garbage {{ model_checkpoint_path: ~~")
        return (
            tf.train.latest_checkpoint(str(directory)),
            tf.train.CheckpointManager(tf.train.Checkpoint(), str(directory), 1).latest_checkpoint,
        )

    assert check(body) == (None, None)


def test_state_file_that_is_not_text(tmp_path):
    def state_dir(tf):
        directory = tmp_path / tf.__name__
        directory.mkdir(exist_ok=True)
        (directory / "checkpoint").write_bytes(b"\xff\xfe garbage")
        return str(directory)

    check_raises(lambda tf: tf.train.latest_checkpoint(state_dir(tf)))
    check_raises(lambda tf: tf.train.CheckpointManager(tf.train.Checkpoint(), state_dir(tf), 1))


def test_restore_errors_are_caught_by_except_op_error(tmp_path):
    def body(tf):
        checkpoint = tf.train.Checkpoint(v=tf.Variable(1.0))
        damaged = checkpoint.write(str(tmp_path / tf.__name__ / "damaged-1"))
        for name in glob.glob(damaged + ".*"):
            with open(name, "wb") as stream:
                stream.write(b"\x00" * 10)
        caught = []
        for path in (str(tmp_path / "missing-1"), damaged):
            try:
                checkpoint.restore(path)
            except tf.errors.OpError as exc:
                caught.append(type(exc).__name__)
        return caught

    assert check(body) == ["NotFoundError", "OpError"]


def test_bad_arguments_to_list_and_load_variables(tmp_path):
    path = str(tmp_path / "ckpt")
    check_raises(lambda tf: tf.train.list_variables(None))
    check_raises(lambda tf: tf.train.list_variables(3))
    check_raises(lambda tf: tf.train.load_variable(tf.train.Checkpoint(v=tf.Variable(1.0)).write(path), 3))
    check_raises(lambda tf: tf.train.list_variables(str(tmp_path / "nothing")))
    check_raises(lambda tf: tf.train.load_variable(tf.train.Checkpoint(v=tf.Variable(1.0)).write(path), "v"))


# Crashes during CheckpointManager.save -----------------------------------------------------------

_CRASHING_CHILD = textwrap.dedent("""
    import os, signal, sys
    import tapeshim as tf

    directory, kill_at = sys.argv[1], int(sys.argv[2])
    v = tf.Variable(0.0)
    checkpoint = tf.train.Checkpoint(v=v)
    manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=1)
    v.assign(1.0)
    manager.save()  # the last good checkpoint

    calls = [0]

    def crashing(function):
        def wrapped(*args, **kwargs):
            calls[0] += 1
            if calls[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return function(*args, **kwargs)
        return wrapped

    # Only this test's child process wraps the os functions: every file operation of a save
    # (the renames that publish files, the deletion of old checkpoints) is a point to crash at.
    os.replace, os.rename, os.remove, os.unlink = map(crashing, (os.replace, os.rename, os.remove, os.unlink))
    v.assign(2.0)
    manager.save()
    print("operations", calls[0])
""")


def _run_crashing_save(directory, kill_at):
    done = subprocess.run(
        [sys.executable, "-c", _CRASHING_CHILD, directory, str(kill_at)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_DIR,
    )
    return done


def test_a_crash_at_any_point_of_a_save_leaves_a_restorable_latest_checkpoint(tmp_path):
    complete = _run_crashing_save(str(tmp_path / "complete"), 0)
    assert complete.returncode == 0, complete.stderr[-3000:]
    operations = int(complete.stdout.split()[-1])
    assert operations >= 4  # checkpoint rename, state rename, old checkpoint removal, state rename
    for kill_at in range(1, operations + 1):
        directory = str(tmp_path / f"killed-at-{kill_at}")
        done = _run_crashing_save(directory, kill_at)
        assert done.returncode == -signal.SIGKILL, (kill_at, done.returncode, done.stderr[-3000:])
        latest = tapeshim.train.latest_checkpoint(directory)
        assert latest is not None, f"killed at file operation {kill_at}: no latest checkpoint"
        manager_latest = tapeshim.train.CheckpointManager(
            tapeshim.train.Checkpoint(), directory, max_to_keep=1
        ).latest_checkpoint
        assert manager_latest == latest
        v = tapeshim.Variable(-1.0)
        tapeshim.train.Checkpoint(v=v).restore(latest)
        if not os.path.exists(os.path.join(directory, "ckpt-1.npz")):  # TF's order: state first, then delete
            assert latest == os.path.join(directory, "ckpt-2"), (kill_at, os.listdir(directory))
            assert float(v.numpy()) == 2.0
        else:
            assert float(v.numpy()) in (1.0, 2.0), (kill_at, float(v.numpy()))
