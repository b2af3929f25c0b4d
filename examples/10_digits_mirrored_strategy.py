"""The digits MLP trained data-parallel with tf.distribute.MirroredStrategy on all local devices.

The TF distributed custom-training tutorial's program: variables created in the strategy's scope,
a distributed dataset, `strategy.run` of a per-replica step inside `tf.function`, and
`strategy.reduce` of the per-replica losses. With one device it is ordinary training; with N
GPUs each step runs one SPMD program over them.
"""

import numpy as np
from sklearn.datasets import load_digits

import tapeshim as tf

digits = load_digits()  # 1,797 8x8 images, shipped with scikit-learn (no download)
images = (digits.data / 16.0).astype(np.float32)
labels = digits.target.astype(np.int32)
order = np.random.default_rng(0).permutation(len(images))
images, labels = images[order], labels[order]
x_train, y_train, x_test, y_test = images[:1500], labels[:1500], images[1500:], labels[1500:]

strategy = tf.distribute.MirroredStrategy()  # every local GPU, else one CPU device
print("replicas:", strategy.num_replicas_in_sync)
GLOBAL_BATCH = 50 * strategy.num_replicas_in_sync

with strategy.scope():
    model = tf.keras.Sequential(
        [
            tf.keras.Input((64,)),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    # Start from the same weights with any backend (Keras's initializers draw backend-specific numbers).
    rng = np.random.default_rng(1)
    model.set_weights([(rng.standard_normal(w.shape) * 0.1).astype(np.float32) for w in model.weights])
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(GLOBAL_BATCH, drop_remainder=True)
dist_dataset = strategy.experimental_distribute_dataset(dataset)


def train_step(inputs):
    x, y = inputs
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = tf.nn.compute_average_loss(loss_object(y, logits), global_batch_size=GLOBAL_BATCH)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))  # gradients summed over the replicas
    train_accuracy.update_state(y, logits)
    return loss


@tf.function
def distributed_train_step(inputs):
    per_replica_losses = strategy.run(train_step, args=(inputs,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)


for epoch in range(5):
    train_accuracy.reset_state()
    losses = [float(distributed_train_step(batch)) for batch in dist_dataset]
    print(f"epoch {epoch}  loss {np.mean(losses):.4f}  train accuracy {float(train_accuracy.result()):.3f}")

predictions = tf.argmax(model(x_test), axis=1, output_type=tf.int32)
correct = int(tf.reduce_sum(tf.cast(predictions == y_test, tf.int32)))
print(f"test accuracy {correct}/{len(y_test)}")
