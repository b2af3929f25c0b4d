"""A `tf.data` iterator in a `tf.train.Checkpoint` (TF's tf.data guide, "Iterator checkpointing"), compared with
real TensorFlow: restoring goes back to the saved position, in the same iterator or a new one."""

from oracle import check


def test_restoring_an_iterator_goes_back_to_the_saved_position(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        iterator = iter(tf.data.Dataset.range(20))
        checkpoint = tf.train.Checkpoint(iterator=iterator)
        taken = [next(iterator), next(iterator)]
        path = checkpoint.save(directory + "/c")
        after_save = [next(iterator) for _ in range(3)]
        checkpoint.restore(path)
        return taken, after_save, [next(iterator) for _ in range(3)]

    check(body)


def test_a_new_iterator_and_a_checkpoint_manager_restore_batches(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        batches = tf.data.Dataset.range(20).map(lambda x: x * 2).batch(3)
        iterator = iter(batches)
        next(iterator)
        path = tf.train.Checkpoint(it=iterator).save(directory + "/d")
        next(iterator)
        fresh = iter(batches)
        tf.train.Checkpoint(it=fresh).restore(path)
        manager = tf.train.CheckpointManager(tf.train.Checkpoint(it=iterator), directory + "/m", max_to_keep=2)
        manager.save()
        ahead = [next(iterator) for _ in range(2)]
        tf.train.Checkpoint(it=iterator).restore(manager.latest_checkpoint)
        return next(fresh), ahead, [next(iterator) for _ in range(2)]

    check(body)


def test_an_iterator_saved_right_after_a_restore_keeps_the_restored_position(tmp_path):
    def body(tf):
        directory = str(tmp_path / tf.__name__)
        first = iter(tf.data.Dataset.range(10))
        for _ in range(3):
            next(first)
        path = tf.train.Checkpoint(it=first).save(directory + "/a")
        second = iter(tf.data.Dataset.range(10))
        checkpoint = tf.train.Checkpoint(it=second)
        checkpoint.restore(path)
        again = checkpoint.save(directory + "/b")
        taken = next(second)
        third = iter(tf.data.Dataset.range(10))
        tf.train.Checkpoint(it=third).restore(again)
        return taken, next(third)

    check(body)
