"""`tf.train.Checkpoint` / `CheckpointManager` behaviour against real TensorFlow."""

import os

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises


def _model(tf):
    class Dense(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
            self.b = tf.Variable([0.5, -0.5])
    return Dense()


def test_save_restore_round_trip_and_paths(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        model = _model(tf)
        extra = tf.Variable(7.0)
        ckpt = tf.train.Checkpoint(model=model, extra=extra)
        first = ckpt.save(os.path.join(directory, "ckpt"))
        model.w.assign(model.w * 10.0)
        extra.assign(0.0)
        second = ckpt.save(os.path.join(directory, "ckpt"))
        model.b.assign([9.0, 9.0])
        ckpt.restore(first).assert_consumed()
        restored_first = (model.w, model.b, extra)
        ckpt.restore(tf.train.latest_checkpoint(directory))
        names = [os.path.basename(p) for p in (first, second, tf.train.latest_checkpoint(directory))]
        written = ckpt.write(os.path.join(directory, "manual"))
        return names, restored_first, (model.w, model.b, extra), int(ckpt.save_counter), os.path.basename(written)
    check(body)


def test_restore_into_a_fresh_model(tmp_path):
    def body(tf):
        path = tf.train.Checkpoint(model=_model(tf)).save(str(tmp_path / tf.__name__ / "c"))
        fresh = _model(tf)
        fresh.w.assign(tf.zeros([2, 2]))
        tf.train.Checkpoint(model=fresh).restore(path)
        return fresh.w, fresh.b
    check(body)


def test_manager_keeps_the_newest(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        v = tf.Variable(0.0)
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), directory, max_to_keep=2)
        saved = []
        for i in range(4):
            v.assign(float(i))
            saved.append(os.path.basename(manager.save()))
        v.assign(-1.0)
        tf.train.Checkpoint(v=v).restore(manager.latest_checkpoint)
        return saved, [os.path.basename(p) for p in manager.checkpoints], os.path.basename(
            manager.latest_checkpoint), v
    check(body)


def test_missing_checkpoint_raises(tmp_path):
    check_raises(lambda tf: tf.train.Checkpoint(v=tf.Variable(1.0)).restore(str(tmp_path / "nothing-1")))


def test_mismatched_checkpoint_names_the_variables_and_changes_nothing(tmp_path):
    path = tapeshim.train.Checkpoint(model=_model(tapeshim)).save(str(tmp_path / "c"))

    class Other(tapeshim.Module):
        def __init__(self):
            super().__init__()
            self.w = tapeshim.Variable(tapeshim.zeros([3, 2]))
            self.b = tapeshim.Variable([1.0, 1.0])

    other = Other()
    with pytest.raises(ValueError, match="model/w"):
        tapeshim.train.Checkpoint(model=other).restore(path)
    np.testing.assert_array_equal(other.b.numpy(), [1.0, 1.0])


def test_writes_are_atomic(tmp_path):
    from tapeshim._src.checkpoint import _SUFFIX, _write_atomically

    v = tapeshim.Variable([1.0, 2.0])
    ckpt = tapeshim.train.Checkpoint(v=v)
    good = ckpt.save(str(tmp_path / "c"))

    def crash_midway(stream):
        stream.write(b"half a checkpoint")
        raise KeyboardInterrupt("killed mid-save")

    with pytest.raises(KeyboardInterrupt):
        _write_atomically(good + _SUFFIX, crash_midway)  # a crash while overwriting the good file
    assert tapeshim.train.latest_checkpoint(str(tmp_path)) == good
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".tmp-")]
    v.assign([5.0, 5.0])
    ckpt.restore(good)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
