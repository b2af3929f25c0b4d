"""Save a model with tf.train.CheckpointManager, change it, and restore it."""

import os
import tempfile

import tapeshim as tf


class Scale(tf.Module):
    def __init__(self):
        super().__init__()
        self.factor = tf.Variable([1.0, 2.0, 3.0])

    def __call__(self, x):
        return x * self.factor


model = Scale()
checkpoint = tf.train.Checkpoint(model=model)
directory = tempfile.mkdtemp()
manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=2)

for _ in range(3):
    model.factor.assign_add([1.0, 1.0, 1.0])
    path = manager.save()
    print("saved", os.path.basename(path), model.factor.numpy())

print("kept:", [os.path.basename(p) for p in manager.checkpoints])
model.factor.assign([0.0, 0.0, 0.0])
checkpoint.restore(manager.latest_checkpoint)
print("restored:", model.factor.numpy(), "->", model(tf.ones([3])).numpy())
