"""The same digits MLP trained with Keras's own model.compile / model.fit / model.evaluate."""

import numpy as np
from sklearn.datasets import load_digits
from support.plotting import save_loss_curve

import tapeshim as tf

digits = load_digits()
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
rng = np.random.default_rng(1)  # the same starting weights with any backend
model.set_weights([(rng.standard_normal(w.shape) * 0.1).astype(np.float32) for w in model.weights])

model.compile(
    optimizer=tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(100)
validation = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(100)
history = model.fit(
    train,
    epochs=5,
    validation_data=validation,
    verbose=0,
    callbacks=[tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2)],
)

for epoch, (loss, val_accuracy) in enumerate(zip(history.history["loss"], history.history["val_accuracy"])):
    print(f"epoch {epoch}  loss {loss:.4f}  validation accuracy {val_accuracy:.3f}")
test_loss, test_accuracy = model.evaluate(x_test, y_test, verbose=0)
print(f"test loss {test_loss:.4f}  test accuracy {test_accuracy:.3f}")
print("first predictions:", np.argmax(model.predict(x_test[:8], verbose=0), axis=1), "labels:", y_test[:8])
save_loss_curve(history.history["loss"], "09_digits_keras_fit", "epoch")
