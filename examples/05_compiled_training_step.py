"""A training step compiled as a whole with @tf.function."""

import numpy as np

import tapeshim as tf

rng = np.random.default_rng(1)
x = tf.constant(rng.normal(size=(128, 8)).astype(np.float32))
true_w = rng.normal(size=(8, 1)).astype(np.float32)
y = tf.constant(x.numpy() @ true_w + 0.5)

w = tf.Variable(tf.zeros([8, 1]))
b = tf.Variable(0.0)


@tf.function(jit_compile=True)
def train_step(features, targets):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) + b - targets))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(0.1 * dw)
    b.assign_sub(0.1 * db)
    return loss


for step in range(60):
    loss = train_step(x, y)
    if step % 20 == 0:
        print(f"step {step:2d}  loss {float(loss):.5f}")
print("traced", train_step.experimental_get_tracing_count(), "time(s)")
print("bias", round(float(b.numpy()), 3))
