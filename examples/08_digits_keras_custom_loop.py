"""An MLP on scikit-learn's digits: a tf.keras model, a GradientTape training step and tf.data."""

import numpy as np
from sklearn.datasets import load_digits
from support.plotting import save_loss_curve

import tapeshim as tf

digits = load_digits()  # 1,797 8x8 images, shipped with scikit-learn (no download)
images = (digits.data / 16.0).astype(np.float32)
labels = digits.target.astype(np.int32)
order = np.random.default_rng(0).permutation(len(images))
images, labels = images[order], labels[order]
x_train, y_train, x_test, y_test = images[:1500], labels[:1500], images[1500:], labels[1500:]

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

loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(100)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_accuracy.update_state(y, logits)
    return loss


all_losses = []
for epoch in range(5):
    train_accuracy.reset_state()
    losses = [float(train_step(x, y)) for x, y in dataset]
    all_losses += losses
    print(f"epoch {epoch}  loss {np.mean(losses):.4f}  train accuracy {float(train_accuracy.result()):.3f}")

predictions = tf.argmax(model(x_test), axis=1, output_type=tf.int32)
correct = int(tf.reduce_sum(tf.cast(predictions == y_test, tf.int32)))
print(f"test accuracy {correct}/{len(y_test)}")
save_loss_curve(all_losses, "08_digits_keras_custom_loop", "step")
