"""A custom training loop: fit y = 2x + 1 with variables, a tape and plain SGD."""

import numpy as np
from support.plotting import save_loss_curve

import tapeshim as tf

rng = np.random.default_rng(0)
xs = rng.uniform(-1.0, 1.0, size=(256, 1)).astype(np.float32)
ys = (2.0 * xs + 1.0).astype(np.float32)

w = tf.Variable(tf.zeros([1, 1]), name="w")
b = tf.Variable(tf.zeros([1]), name="b")
learning_rate = 0.5
losses = []

for step in range(101):
    with tf.GradientTape() as tape:
        predictions = tf.matmul(xs, w) + b
        loss = tf.reduce_mean(tf.square(predictions - ys))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(learning_rate * dw)
    b.assign_sub(learning_rate * db)
    losses.append(float(loss))
    if step % 20 == 0:
        print(f"step {step:3d}  loss {loss.numpy():.6f}")

print("w =", round(float(w.numpy()[0, 0]), 4), " b =", round(float(b.numpy()[0]), 4))
save_loss_curve(losses, "02_linear_regression", "step")
