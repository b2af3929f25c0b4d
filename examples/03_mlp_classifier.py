"""A two-layer classifier trained with a GradientTape loop on synthetic data."""

import numpy as np
from support.plotting import save_loss_curve

import tapeshim as tf

rng = np.random.default_rng(42)
centers = rng.normal(size=(3, 2)).astype(np.float32) * 3.0
labels = rng.integers(0, 3, size=300).astype(np.int32)
features = (centers[labels] + rng.normal(size=(300, 2)).astype(np.float32)).astype(np.float32)

w1 = tf.Variable(rng.normal(size=(2, 16)).astype(np.float32) * 0.5)
b1 = tf.Variable(tf.zeros([16]))
w2 = tf.Variable(rng.normal(size=(16, 3)).astype(np.float32) * 0.5)
b2 = tf.Variable(tf.zeros([3]))
params = [w1, b1, w2, b2]
losses = []


def model(x):
    hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
    return tf.matmul(hidden, w2) + b2


for epoch in range(6):
    for start in range(0, 300, 60):
        x = features[start : start + 60]
        y = labels[start : start + 60]
        with tf.GradientTape() as tape:
            logits = model(x)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, params)
        for param, grad in zip(params, grads):
            param.assign_sub(0.2 * grad)
        losses.append(float(loss))
    predictions = tf.argmax(model(features), axis=1, output_type=tf.int32)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, labels), tf.float32))
    print(f"epoch {epoch}  last batch loss {float(loss):.4f}  accuracy {float(accuracy):.3f}")
save_loss_curve(losses, "03_mlp_classifier", "step")
