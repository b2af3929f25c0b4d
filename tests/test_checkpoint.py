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
        return saved, [os.path.basename(p) for p in manager.checkpoints], os.path.basename(manager.latest_checkpoint), v

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
    from tapeshim._src.checkpoint_io import SUFFIX as _SUFFIX
    from tapeshim._src.checkpoint_io import write_atomically as _write_atomically

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


def _nested(tf):
    class Nested(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.0, 2.0]])
            self._hidden = tf.Variable(3, dtype=tf.int64)
            self.layers = [tf.Variable(1.5)]
            self.table = {"b": tf.Variable([1.0], dtype=tf.float64), "a": (tf.Variable(2.0),)}

    return Nested()


def test_list_and_load_variables(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        path = tf.train.Checkpoint(model=_nested(tf), step=tf.Variable(5)).save(os.path.join(directory, "ckpt"))
        names = tf.train.list_variables(path)
        values = [tf.train.load_variable(path, name) for name, _ in names if name != "_CHECKPOINTABLE_OBJECT_GRAPH"]
        reader = tf.train.load_checkpoint(directory)
        return (
            names,
            tf.train.list_variables(directory),
            values,
            tf.train.load_variable(directory, "model/w/.ATTRIBUTES/VARIABLE_VALUE:0"),
            reader.get_variable_to_shape_map()["model/table/b/.ATTRIBUTES/VARIABLE_VALUE"],
            reader.get_variable_to_dtype_map()["step/.ATTRIBUTES/VARIABLE_VALUE"],
            reader.has_tensor("model/w/.ATTRIBUTES/VARIABLE_VALUE"),
            reader.has_tensor("model/w"),
        )

    check(body)


def test_load_variable_of_a_missing_name(tmp_path):
    check_raises(
        lambda tf: tf.train.load_variable(
            tf.train.Checkpoint(v=tf.Variable(1.0)).write(str(tmp_path / tf.__name__ / "c")), "v/missing"
        )
    )


def test_write_saves_no_save_counter_until_it_exists(tmp_path):
    def body(tf):
        plain = tf.train.Checkpoint(v=tf.Variable(2.0))
        first = tf.train.list_variables(plain.write(str(tmp_path / tf.__name__ / "a")))
        plain.save_counter  # noqa: B018 - reading it creates it, as in TF
        return first, tf.train.list_variables(plain.write(str(tmp_path / tf.__name__ / "b")))

    check(body)


def test_root_and_attributes_of_the_checkpoint(tmp_path):
    def body(tf):
        ckpt = tf.train.Checkpoint(root=_model(tf), extra=tf.Variable(2.0))
        ckpt.late = tf.Variable(3.0)
        path = ckpt.write(str(tmp_path / tf.__name__ / "c"))
        fresh = _model(tf)
        fresh.w.assign(tf.zeros([2, 2]))
        tf.train.Checkpoint(root=fresh, extra=tf.Variable(0.0)).restore(path)
        return tf.train.list_variables(path), fresh.w

    check(body)


def _lazy_model(tf):
    class FlexibleDense(tf.Module):
        def __init__(self, out_features, name=None):
            super().__init__(name=name)
            self.is_built = False
            self.out_features = out_features

        def __call__(self, x):
            if not self.is_built:
                self.w = tf.Variable(tf.ones([x.shape[-1], self.out_features]), name="w")
                self.b = tf.Variable(tf.zeros([self.out_features]), name="b")
                self.is_built = True
            return tf.nn.relu(tf.matmul(x, self.w) + self.b)

    class Sequential(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.dense_1 = FlexibleDense(out_features=3)
            self.dense_2 = FlexibleDense(out_features=2)

        def __call__(self, x):
            return self.dense_2(self.dense_1(x))

    return Sequential()


def test_deferred_restore_into_variables_created_later(tmp_path):
    def body(tf):
        model = _lazy_model(tf)
        x = tf.constant([[2.0, 2.0, 2.0]])
        model(x)
        for i, v in enumerate(model.variables):
            v.assign(tf.reshape(tf.range(tf.size(v), dtype=tf.float32) * 0.1 * (i + 1) - 0.2, v.shape))
        expected = model(x)
        path = tf.train.Checkpoint(model=model).write(str(tmp_path / tf.__name__ / "c"))
        fresh = _lazy_model(tf)
        tf.train.Checkpoint(model=fresh).restore(path)
        before = len(fresh.variables)
        return expected, before, fresh(x), [v.numpy() for v in fresh.variables], fresh(x)

    check(body)


def test_deferred_restore_into_a_submodule_attached_later(tmp_path):
    def body(tf):
        class Holder(tf.Module):
            pass

        class Leaf(tf.Module):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable([0.0, 0.0])

        holder = Holder()
        holder.leaf = Leaf()
        holder.leaf.v.assign([4.0, 5.0])
        path = tf.train.Checkpoint(holder=holder).write(str(tmp_path / tf.__name__ / "c"))
        fresh = Holder()
        tf.train.Checkpoint(holder=fresh).restore(path)
        fresh.leaf = Leaf()
        return fresh.leaf.v

    check(body)


def test_restore_errors_by_kind(tmp_path):
    def saved(tf, name, value, dtype=None):
        return tf.train.Checkpoint(v=tf.Variable(value, dtype=dtype)).write(str(tmp_path / tf.__name__ / name))

    check_raises(lambda tf: tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).restore(saved(tf, "shape", [1.0, 2.0, 3.0])))
    check_raises(lambda tf: tf.train.Checkpoint(v=tf.Variable(1.0)).restore(saved(tf, "f64", 1.0, tf.float64)))
    check_raises(lambda tf: tf.train.Checkpoint(v=tf.Variable(1)).restore(saved(tf, "f32", 1.0)))
    check_raises(
        lambda tf: tf.train.Checkpoint(v=tf.Variable(1.0)).restore(
            os.path.dirname(tf.train.Checkpoint(v=tf.Variable(1.0)).save(str(tmp_path / tf.__name__ / "dir" / "c")))
        )
    )
    check_raises(lambda tf: tf.train.Checkpoint(v=tf.Variable(1.0)).restore(3))


def test_checkpoint_refuses_objects_it_cannot_track():
    class Plain:
        pass

    check_raises(lambda tf: tf.train.Checkpoint(x=3))
    check_raises(lambda tf: tf.train.Checkpoint(x=Plain()))
    check(
        lambda tf: len(
            tf.train.Checkpoint(x=[tf.Variable(1.0)], y={"a": tf.Variable(2.0)}, m=tf.Module()).save_counter.shape
        )
    )


@pytest.mark.parametrize("max_to_keep", [0, -1, "2"])
def test_manager_max_to_keep_must_be_positive(tmp_path, max_to_keep):
    check_raises(
        lambda tf: tf.train.CheckpointManager(
            tf.train.Checkpoint(v=tf.Variable(1.0)), str(tmp_path / tf.__name__), max_to_keep=max_to_keep
        )
    )


def test_manager_restore_or_initialize(tmp_path):
    def body(tf):
        v = tf.Variable(1.0)
        initialized = []
        manager = tf.train.CheckpointManager(
            tf.train.Checkpoint(v=v),
            str(tmp_path / tf.__name__),
            max_to_keep=1,
            init_fn=lambda: initialized.append(v.assign(5.0)) and None,
        )
        first = manager.restore_or_initialize()
        saved = manager.save()
        v.assign(-1.0)
        second = manager.restore_or_initialize()
        return first, len(initialized), os.path.basename(second) == os.path.basename(saved), v

    check(body)


def test_keyword_objects_are_attributes(tmp_path):
    def body(tf):
        ckpt = tf.train.Checkpoint(step=tf.Variable(1), model=_model(tf))
        ckpt.step.assign_add(1)
        path = ckpt.save(str(tmp_path / tf.__name__ / "c"))
        ckpt.step.assign(10)
        ckpt.restore(path)
        return ckpt.step, ckpt.model.w, [name for name, _ in tf.train.list_variables(path)]

    check(body)


def _layered_net(tf):
    class Layer(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(tf.reshape(tf.range(5.0), [1, 5]))
            self.bias = tf.Variable(tf.range(5.0) + 10.0)

    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.l1 = Layer()

    return Net()


def test_partial_restore_through_stand_in_checkpoints(tmp_path):
    """The checkpoint guide's cells 14-16 on a tf.Module net: stand-in objects restore, and attach later."""

    def body(tf):
        path = tf.train.Checkpoint(net=_layered_net(tf)).save(str(tmp_path / tf.__name__ / "c"))
        to_restore = tf.Variable(tf.zeros([5]))
        fake_layer = tf.train.Checkpoint(bias=to_restore)
        fake_net = tf.train.Checkpoint(l1=fake_layer)
        new_root = tf.train.Checkpoint(net=fake_net)
        status = new_root.restore(path)
        restored = tf.identity(to_restore)
        status.assert_existing_objects_matched()
        deferred_restore = tf.Variable(tf.zeros([1, 5]))
        before = tf.identity(deferred_restore)
        fake_layer.kernel = deferred_restore
        return restored, before, deferred_restore

    check(body)


def test_objects_reachable_by_two_paths_restore_through_either(tmp_path):
    def body(tf):
        shared = tf.Variable([1.0, 2.0])
        model = _layered_net(tf)
        path = tf.train.Checkpoint(a=shared, b={"again": shared}, net=model, alias=model.l1).write(
            str(tmp_path / tf.__name__ / "c")
        )
        by_alias = tf.Variable([0.0, 0.0])
        kernel = tf.Variable(tf.zeros([1, 5]))
        holder = tf.train.Checkpoint(b={"again": by_alias}, alias=tf.train.Checkpoint(kernel=kernel))
        holder.restore(path)
        return by_alias, kernel, [name for name, _ in tf.train.list_variables(path)]

    check(body)


def test_list_attributes_of_a_checkpoint_restore_what_is_appended(tmp_path):
    def body(tf):
        save = tf.train.Checkpoint()
        save.listed = [tf.Variable(1.0)]
        save.listed.append(tf.Variable(2.0))
        path = save.save(str(tmp_path / tf.__name__ / "c"))
        restore = tf.train.Checkpoint()
        restore.restore(path)
        restore.listed = []
        empty = repr(restore.listed)
        first, second = tf.Variable(0.0), tf.Variable(0.0)
        restore.listed.append(first)
        restore.listed.extend([second])
        return empty, first, second

    check(body)


def test_an_object_is_saved_under_its_shortest_path(tmp_path):
    def body(tf):
        net = _layered_net(tf)
        shared = tf.Variable(1.0)
        names = []
        for i, ckpt in enumerate(
            [
                tf.train.Checkpoint(a=net, z=net.l1),
                tf.train.Checkpoint(b=shared, a=shared),
                tf.train.Checkpoint(a=[[shared]], b={"c": shared}),
            ]
        ):
            path = ckpt.write(str(tmp_path / tf.__name__ / f"{i}"))
            names.append([name for name, _ in tf.train.list_variables(path)])
        return names

    check(body)


def test_checkpoint_state_and_options(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
        empty = tf.train.get_checkpoint_state(directory)
        ckpt.save(os.path.join(directory, "c"), options=tf.train.CheckpointOptions())
        ckpt.save(os.path.join(directory, "c"))
        state = tf.train.get_checkpoint_state(directory)
        manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
        options = tf.train.CheckpointOptions(experimental_io_device="/job:localhost")
        return (
            empty,
            os.path.basename(state.model_checkpoint_path),
            [os.path.basename(p) for p in state.all_model_checkpoint_paths],
            [os.path.basename(p) for p in manager.checkpoints],
            options.experimental_io_device,
            options.experimental_enable_async_checkpoint,
        )

    check(body)


def test_checkpoint_files_get_the_mode_of_new_files(tmp_path):
    def body(tf):
        directory = tmp_path / tf.__name__
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), str(directory), max_to_keep=2)
        manager.save()
        # tapeshim writes one .npz where TF writes .index and .data files: the modes are compared
        return sorted({oct(path.stat().st_mode & 0o777) for path in directory.iterdir()})

    check(body)
