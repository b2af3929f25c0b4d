"""Linear regression with tf.Module, a GradientTape loop and tf.data."""

import numpy as np
from support.plotting import save_loss_curve

import tapeshim as tf

rng = np.random.default_rng(3)
xs = rng.uniform(-1.0, 1.0, size=(200, 3)).astype(np.float32)
ys = (xs @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


class Linear(tf.Module):
    def __init__(self, n_in, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(tf.zeros([n_in, 1]), name="w")
            self.b = tf.Variable(tf.zeros([1]), name="b")

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


model = Linear(3, name="linear")
print("variables:", [v.name for v in model.trainable_variables])
dataset = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(50)
losses = []

for epoch in range(40):
    for x, y in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        for variable, grad in zip(model.trainable_variables, grads):
            variable.assign_sub(0.3 * grad)
        losses.append(float(loss))
    if epoch % 10 == 0:
        print(f"epoch {epoch:2d}  loss {float(loss):.6f}")

print("w =", np.round(model.w.numpy().ravel(), 3), " b =", np.round(model.b.numpy(), 3))
save_loss_curve(losses, "06_module_linear_regression", "step")
