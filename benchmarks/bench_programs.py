"""Whole programs, TF eager against tapeshim: the time a short training script takes from its first line.

Run: `python benchmarks/bench_programs.py [--only linreg,gan] [--repeats 3]`. Each program runs in a
process of its own for each framework (alternating, `--repeats` times each), after the framework's import
and Keras's (`import tensorflow` loads Keras; tapeshim loads it on the first `tf.keras`), and prints the
median time of the program itself: building its model, its first steps (what a tutorial's user waits
for), its steady steps. `bench_engine.py` measures patterns inside one warm process; these are the
programs those patterns come from, cold.

Programs (the TF guides and tutorials they follow, made small; seeded NumPy data where those download):
  linreg      "Basic training loops": a `tf.Module` linear model, 10 full-batch steps, the loss read
              after each
  keras_loop  "Writing a training loop from scratch": a Keras MLP (784-64-64-10), `tf.data` batches of
              64, Adam, a `SparseCategoricalAccuracy` metric, 2 epochs of 32 steps
  dcgan       "Deep Convolutional GAN": the tutorial's generator (Dense, BatchNormalization, LeakyReLU,
              Conv2DTranspose) and discriminator (Conv2D, LeakyReLU, Dropout), two tapes, two Adams,
              noise from `tf.random.normal`, 30 steps
  vae         a dense variational autoencoder: the reparameterization's `tf.random.normal` inside the
              tape, Adam, 100 steps
  wgan_gp     keras.io's WGAN-GP gradient penalty: a tape inside a tape, `tf.random.uniform`, 50 steps
  embeddings  a word2vec-style step: `tf.nn.embedding_lookup`, `tf.gather`, `einsum`, 200 steps
  function    a `tf.function` training step with a Keras optimizer, 300 calls
  lstm        a Keras LSTM regressor, 20 steps
  cnn         "Convolutional Neural Network": the tutorial's Conv2D and MaxPooling2D stack on 32x32x3 images,
              batches of 32, Adam, 20 steps
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")  # (a first run's: no compile cache on disk)
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def linreg(tf: Any, rng: np.random.Generator) -> float:
    true_w, true_b, n = 3.0, 2.0, 201
    x = tf.cast(tf.linspace(-2, 2, n), tf.float32)
    y = x * true_w + true_b + tf.constant(rng.normal(size=n).astype(np.float32))

    class Model(tf.Module):
        def __init__(self) -> None:
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def __call__(self, x: Any) -> Any:
            return self.w * x + self.b

    model = Model()

    def loss(target: Any, predicted: Any) -> Any:
        return tf.reduce_mean(tf.square(target - predicted))

    losses = []
    for _ in range(10):
        with tf.GradientTape() as tape:
            current = loss(y, model(x))
        dw, db = tape.gradient(current, [model.w, model.b])
        model.w.assign_sub(0.1 * dw)
        model.b.assign_sub(0.1 * db)
        losses.append(float(loss(y, model(x))))
    return losses[-1]


def keras_loop(tf: Any, rng: np.random.Generator) -> float:
    keras = tf.keras
    inputs = keras.Input(shape=(784,))
    hidden = keras.layers.Dense(64, activation="relu")(inputs)
    hidden = keras.layers.Dense(64, activation="relu")(hidden)
    model = keras.Model(inputs, keras.layers.Dense(10)(hidden))
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    images = rng.normal(size=(2048, 784)).astype(np.float32)
    labels = rng.integers(0, 10, 2048).astype(np.int64)
    batches = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(1024, seed=0).batch(64)
    result = 0.0
    for _ in range(2):
        for x, y in batches:
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            accuracy.update_state(y, logits)
        result = float(accuracy.result())
        accuracy.reset_state()
    return result


def dcgan(tf: Any, rng: np.random.Generator) -> float:
    keras, layers = tf.keras, tf.keras.layers
    generator = keras.Sequential(
        [
            keras.Input((16,)),
            layers.Dense(7 * 7 * 8, use_bias=False),
            layers.BatchNormalization(),
            layers.LeakyReLU(),
            layers.Reshape((7, 7, 8)),
            layers.Conv2DTranspose(8, 5, strides=2, padding="same", use_bias=False),
            layers.BatchNormalization(),
            layers.LeakyReLU(),
            layers.Conv2DTranspose(1, 5, strides=2, padding="same", activation="tanh"),
        ]
    )
    discriminator = keras.Sequential(
        [
            keras.Input((28, 28, 1)),
            layers.Conv2D(8, 5, strides=2, padding="same"),
            layers.LeakyReLU(),
            layers.Dropout(0.3),
            layers.Flatten(),
            layers.Dense(1),
        ]
    )
    cross_entropy = keras.losses.BinaryCrossentropy(from_logits=True)
    generator_optimizer, discriminator_optimizer = keras.optimizers.Adam(1e-4), keras.optimizers.Adam(1e-4)
    images = tf.constant(rng.normal(size=(32, 28, 28, 1)).astype(np.float32))
    generator_loss = None
    for _ in range(30):
        noise = tf.random.normal([32, 16])
        with tf.GradientTape() as generator_tape, tf.GradientTape() as discriminator_tape:
            fake = generator(noise, training=True)
            real_output = discriminator(images, training=True)
            fake_output = discriminator(fake, training=True)
            generator_loss = cross_entropy(tf.ones_like(fake_output), fake_output)
            discriminator_loss = cross_entropy(tf.ones_like(real_output), real_output) + cross_entropy(
                tf.zeros_like(fake_output), fake_output
            )
        generator_grads = generator_tape.gradient(generator_loss, generator.trainable_variables)
        discriminator_grads = discriminator_tape.gradient(discriminator_loss, discriminator.trainable_variables)
        generator_optimizer.apply_gradients(zip(generator_grads, generator.trainable_variables))
        discriminator_optimizer.apply_gradients(zip(discriminator_grads, discriminator.trainable_variables))
    return float(generator_loss)


def _weights(tf: Any, rng: np.random.Generator, *shapes: tuple) -> list:
    return [tf.Variable(rng.normal(size=shape).astype(np.float32) * 0.1) for shape in shapes]


def vae(tf: Any, rng: np.random.Generator) -> float:
    n_in, n_latent = 64, 4
    params = _weights(tf, rng, (n_in, 32), (32,), (32, n_latent), (32, n_latent), (n_latent, n_in), (n_in,))
    encoder, encoder_bias, to_mean, to_logvar, decoder, decoder_bias = params
    optimizer = tf.keras.optimizers.Adam(1e-3)
    x = tf.constant(rng.random(size=(128, n_in)).astype(np.float32))
    loss = None
    for _ in range(100):
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(x @ encoder + encoder_bias)
            mean, logvar = hidden @ to_mean, hidden @ to_logvar
            z = tf.random.normal(shape=mean.shape) * tf.exp(logvar * 0.5) + mean
            logits = z @ decoder + decoder_bias
            reconstruction = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(logits=logits, labels=x), axis=1)
            kl = -0.5 * tf.reduce_sum(1 + logvar - tf.square(mean) - tf.exp(logvar), axis=1)
            loss = tf.reduce_mean(reconstruction + kl)
        optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
    return float(loss)


def wgan_gp(tf: Any, rng: np.random.Generator) -> float:
    w1, w2 = _weights(tf, rng, (16, 32), (32, 1))

    def critic(x: Any) -> Any:
        return tf.nn.leaky_relu(x @ w1) @ w2

    real = tf.constant(rng.normal(size=(64, 16)).astype(np.float32))
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss = None
    for _ in range(50):
        fake = tf.constant(rng.normal(size=(64, 16)).astype(np.float32))
        with tf.GradientTape() as tape:
            alpha = tf.random.uniform([64, 1])
            interpolated = alpha * real + (1 - alpha) * fake
            with tf.GradientTape() as penalty_tape:
                penalty_tape.watch(interpolated)
                predicted = critic(interpolated)
            grads = penalty_tape.gradient(predicted, interpolated)
            norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=1) + 1e-12)
            penalty = tf.reduce_mean((norm - 1.0) ** 2)
            loss = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real)) + 10.0 * penalty
        optimizer.apply_gradients(zip(tape.gradient(loss, [w1, w2]), [w1, w2]))
    return float(loss)


def embeddings(tf: Any, rng: np.random.Generator) -> float:
    vocabulary, dim = 500, 16
    targets, contexts = _weights(tf, rng, (vocabulary, dim), (vocabulary, dim))
    optimizer = tf.keras.optimizers.SGD(0.1)
    labels = tf.constant(np.eye(5, dtype=np.float32)[np.zeros(64, int)])
    loss = None
    for _ in range(200):
        words = tf.constant(rng.integers(0, vocabulary, 64))
        context = tf.constant(rng.integers(0, vocabulary, (64, 5)))
        with tf.GradientTape() as tape:
            dots = tf.einsum("be,bce->bc", tf.nn.embedding_lookup(targets, words), tf.gather(contexts, context))
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=dots))
        grads = tape.gradient(loss, [targets, contexts])
        optimizer.apply_gradients(zip(grads, [targets, contexts]))
    return float(loss)


def function(tf: Any, rng: np.random.Generator) -> float:
    (w,) = _weights(tf, rng, (32, 10))
    optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x @ w))
        optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    x = tf.constant(rng.normal(size=(64, 32)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, 64).astype(np.int32))
    loss = None
    for _ in range(300):
        loss = step(x, y)
    return float(loss)


def lstm(tf: Any, rng: np.random.Generator) -> float:
    keras = tf.keras
    model = keras.Sequential([keras.Input((20, 8)), keras.layers.LSTM(16), keras.layers.Dense(1)])
    optimizer = keras.optimizers.Adam(1e-3)
    x = tf.constant(rng.normal(size=(32, 20, 8)).astype(np.float32))
    y = tf.constant(rng.normal(size=(32, 1)).astype(np.float32))
    loss = None
    for _ in range(20):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return float(loss)


def cnn(tf: Any, rng: np.random.Generator) -> float:
    keras, layers = tf.keras, tf.keras.layers
    model = keras.Sequential(
        [
            keras.Input((32, 32, 3)),
            layers.Conv2D(32, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(64, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(64, 3, activation="relu"),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            layers.Dense(10),
        ]
    )
    optimizer = keras.optimizers.Adam()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    images = tf.constant(rng.random(size=(32, 32, 32, 3)).astype(np.float32))
    labels = tf.constant(rng.integers(0, 10, 32).astype(np.int32))
    loss = None
    for _ in range(20):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return float(loss)


PROGRAMS: dict[str, Callable[[Any, np.random.Generator], float]] = {
    "linreg": linreg,
    "keras_loop": keras_loop,
    "dcgan": dcgan,
    "vae": vae,
    "wgan_gp": wgan_gp,
    "embeddings": embeddings,
    "function": function,
    "lstm": lstm,
    "cnn": cnn,
}


def child(framework: str, name: str) -> None:
    if framework == "tf":
        import tensorflow as tf
    else:
        sys.path.insert(0, os.path.dirname(HERE))
        import tapeshim as tf
    _keras = tf.keras.optimizers  # (Keras imported before the clock starts: TF's import loads it)
    start = time.perf_counter()
    result = PROGRAMS[name](tf, np.random.default_rng(0))
    print(json.dumps({"seconds": time.perf_counter() - start, "result": result}), flush=True)


def run_child(framework: str, name: str) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", framework, "--only", name]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    return {"error": (out.stderr.strip().splitlines() or ["no output"])[-1][:120]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated program names")
    parser.add_argument("--repeats", type=int, default=2, help="processes per program and framework")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(PROGRAMS)
    if args.child:
        child(args.child, names[0])
        return
    print(f"{'program':<12}{'TF eager':>12}{'tapeshim':>12}{'ratio':>9}")
    for name in names:
        times: dict[str, list[float]] = {"tf": [], "tapeshim": []}
        for _ in range(args.repeats):
            for framework in times:  # (alternating: the machine's load drifts)
                outcome = run_child(framework, name)
                if "error" in outcome:
                    print(f"{name:<12}{framework}: {outcome['error']}")
                    continue
                times[framework].append(outcome["seconds"])
        tf_s, ts_s = (statistics.median(t) if t else float("nan") for t in times.values())
        print(f"{name:<12}{tf_s * 1e3:>10.0f}ms{ts_s * 1e3:>10.0f}ms{ts_s / tf_s:>8.2f}x", flush=True)


if __name__ == "__main__":
    main()
