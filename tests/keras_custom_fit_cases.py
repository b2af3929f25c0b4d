"""Keras cases for custom training steps and keras.io programs, compared with TF's Keras as keras_cases.py's.

TF-style `train_step`/`test_step`/`predict_step` overrides driven by `fit`,
`evaluate` and `predict` (keras.io's "Customizing what happens in fit()"), the
keras.io VAE, DCGAN-style GAN and WGAN-GP programs scaled down (tiny seeded data,
tiny layers, two epochs), and layer `call` patterns they use (`tf.shape(x)[0]` as
a dimension, `add_loss`, random ops). Each body is a function of the module
(`tf`); keras_cases.py's `main` runs them with TF's Keras in the child process,
and tests/test_keras.py runs them with tapeshim. `FIT_CASES` maps a name to its body.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from keras_cases import set_weights  # noqa: E402

from oracle_data import labelled  # noqa: E402

FIT_CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    FIT_CASES[fn.__name__] = fn
    return fn


def _regression_data(n=12, seed=0):
    return labelled(seed, n, 4)


def _dense_functional(tf, model_class, units=1):
    inputs = tf.keras.Input(shape=(4,))
    model = model_class(inputs, tf.keras.layers.Dense(units)(inputs))
    set_weights(model, 5)
    return model


@case
def custom_train_step_compute_loss_and_compiled_metrics(tf):
    # keras.io "Customizing what happens in fit() with TensorFlow": a first simple example.
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(gradients, self.trainable_variables)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x, y = _regression_data()
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    return {
        "history": history.history,
        "weights": model.weights,
        "functional": isinstance(model, tf.keras.Model),
        "evaluate": model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True),
        "predict": model.predict(x[:3], verbose=0),
    }


@case
def custom_train_step_own_metrics_and_loss(tf):
    # keras.io: "Going lower-level": own loss and metrics, `compile(optimizer=...)` only.
    class CustomModel(tf.keras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.loss_tracker = tf.keras.metrics.Mean(name="loss")
            self.mae_metric = tf.keras.metrics.MeanAbsoluteError(name="mae")
            self.loss_fn = tf.keras.losses.MeanSquaredError()

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.loss_fn(y, y_pred)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(gradients, self.trainable_variables)
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    x, y = _regression_data()
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer="adam")
    history = model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(5), epochs=2, verbose=0)
    return {"history": history.history, "weights": model.weights}


@case
def custom_train_step_sample_weight(tf):
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            if len(data) == 3:
                x, y, sample_weight = data
            else:
                sample_weight = None
                x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(gradients, self.trainable_variables)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics}

    x, y = _regression_data()
    weights = np.random.default_rng(3).uniform(0, 1, (12, 1)).astype(np.float32)
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    history = model.fit(x, y, sample_weight=weights, epochs=2, batch_size=6, shuffle=False, verbose=0)
    return {"history": history.history, "weights": model.weights}


@case
def custom_test_step_in_evaluate(tf):
    class CustomModel(tf.keras.Model):
        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x, y = _regression_data()
    model = _dense_functional(tf, CustomModel)
    model.compile(loss="mse", metrics=["mae"])
    return [
        model.evaluate(x, y, batch_size=5, verbose=0),
        model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True),
    ]


@case
def custom_predict_step(tf):
    class CustomModel(tf.keras.Model):
        def predict_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            return {"scores": self(x, training=False) * 2.0, "sum": tf.reduce_sum(x, axis=1)}

    x, _ = _regression_data()
    model = _dense_functional(tf, CustomModel)
    return model.predict(x, batch_size=5, verbose=0)


@case
def custom_train_step_calls_super(tf):
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            logs = super().train_step(data)
            return {**logs, "doubled": logs["loss"] * 2.0}

        def test_step(self, data):
            return super().test_step(data)

    x, y = _regression_data()
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0, validation_data=(x[:6], y[:6]))
    return {"history": history.history, "weights": model.weights}


@case
def custom_train_step_deprecated_compiled_loss_and_metrics(tf):
    # Keras 2 code: `self.compiled_loss(...)` and `self.compiled_metrics.update_state(...)` (TF keeps shims).
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x, y = _regression_data()
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    history = model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    return {"history": history.history, "weights": model.weights}


@case
def metric_creating_variables_inside_function(tf):
    f1 = tf.keras.metrics.F1Score(average="macro")  # creates its variables on its first update

    @tf.function
    def update(y, p):
        f1.update_state(y, p)
        return f1.result()

    labels = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
    scores = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.5, 0.4, 0.1], [0.2, 0.2, 0.6]], np.float32)
    return [update(labels, scores), update(labels[::-1], scores), f1.result()]


@case
def add_loss_of_tf_op_in_call(tf):
    class ActivityPenalty(tf.keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(0.1 * tf.reduce_sum(tf.square(inputs)))
            return inputs * 2.0

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)
            self.penalty = ActivityPenalty()

        def call(self, inputs):
            return self.penalty(self.dense(inputs))

    x, y = _regression_data()
    y = np.concatenate([y, -y], axis=1)
    net = Net()
    net(x[:1])
    set_weights(net, 10)
    with tf.GradientTape() as tape:
        out = net(x)
        losses = net.losses
        loss = tf.reduce_mean(out**2) + tf.add_n(losses)
    grads = tape.gradient(loss, net.trainable_variables)
    net.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    history = net.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    return {"losses": losses, "grads": grads, "history": history.history, "weights": net.weights}


@case
def layer_call_returning_a_variable(tf):
    class Constant(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.table = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

        def call(self, inputs):
            return self.table

    layer = Constant()
    out = layer(np.zeros((1,), np.float32))
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(layer(np.zeros((1,), np.float32)) * 3.0)

    @tf.function
    def traced(x):
        return layer(x) * 1.0

    return {
        "out": out,
        "is_the_variable": out is layer.table,
        "grad": tape.gradient(total, layer.table),
        "traced": traced(np.zeros((1,), np.float32)),
    }


@case
def functional_subclass_then_other_subclasses(tf):
    # `CustomModel(inputs, outputs)`: Keras makes the subclass functional; later subclasses are unaffected.
    class CustomModel(tf.keras.Model):
        pass

    inputs = tf.keras.Input((4,))
    functional = CustomModel(inputs, tf.keras.layers.Dense(2)(inputs))
    set_weights(functional, 11)

    class Later(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x) * 3.0

    x, _ = _regression_data()
    later = Later()
    later(x[:1])
    set_weights(later, 12)
    plain = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
    set_weights(plain, 13)
    return {
        "functional": functional(x),
        "is_model": isinstance(functional, tf.keras.Model),
        "later": later(x),
        "plain": plain(x),
        "n_layers": len(functional.layers),
    }


@case
def compute_loss_inside_a_tape(tf):
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1, kernel_regularizer=tf.keras.regularizers.L2(0.5))

        def call(self, x):
            return self.dense(x)

    x, y = _regression_data()
    net = Net()
    net(x[:1])
    set_weights(net, 14)
    net.compile(optimizer="sgd", loss="mse")
    with tf.GradientTape() as tape:
        y_pred = net(x)
        loss = net.compute_loss(x=x, y=y, y_pred=y_pred)
    return {
        "loss": loss,
        "is_tensor": isinstance(loss, tf.Tensor),
        "grads": tape.gradient(loss, net.trainable_variables),
    }


@case
def compute_loss_without_a_loss(tf):
    x, y = _regression_data()
    model = _dense_functional(tf, tf.keras.Model)
    model.compile(optimizer="sgd")
    return model.compute_loss(x=x, y=y, y_pred=model(x))


@case
def tensors_read_before_fit_survive_it(tf):
    # Keras's compiled steps donate the state arrays they get; tensors recorded before fit keep their values.
    x, y = _regression_data()
    model = _dense_functional(tf, tf.keras.Model)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    with tf.GradientTape() as tape:
        before = model(x)
        loss = tf.reduce_mean(before**2)
    kernel = model.layers[1].kernel * 1.0
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    model.train_on_batch(x, y)
    model.evaluate(x, y, verbose=0)
    return {
        "before": before,
        "loss": loss,
        "grads": tape.gradient(loss, model.trainable_variables),
        "kernel": kernel,
        "after": model(x),
    }


# Scaled-down keras.io generative programs (VAE, DCGAN, WGAN-GP): each random draw keeps its shape (TF and
# tapeshim draw different numbers) but is multiplied by zero, so the values compared are deterministic.


def _vae_parts(tf, latent_dim=2):
    class Sampling(tf.keras.layers.Layer):
        """keras.io VAE: uses (z_mean, z_log_var) to sample z."""

        def call(self, inputs):
            z_mean, z_log_var = inputs
            batch = tf.shape(z_mean)[0]
            dim = tf.shape(z_mean)[1]
            epsilon = tf.random.normal(shape=(batch, dim)) * 0.0 + 0.5
            return z_mean + tf.exp(0.5 * z_log_var) * epsilon

    encoder_inputs = tf.keras.Input(shape=(4, 4, 1))
    x = tf.keras.layers.Conv2D(2, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
    x = tf.keras.layers.Flatten()(x)
    x = tf.keras.layers.Dense(4, activation="relu")(x)
    z_mean = tf.keras.layers.Dense(latent_dim, name="z_mean")(x)
    z_log_var = tf.keras.layers.Dense(latent_dim, name="z_log_var")(x)
    z = Sampling()([z_mean, z_log_var])
    encoder = tf.keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")
    latent_inputs = tf.keras.Input(shape=(latent_dim,))
    x = tf.keras.layers.Dense(2 * 2 * 2, activation="relu")(latent_inputs)
    x = tf.keras.layers.Reshape((2, 2, 2))(x)
    outputs = tf.keras.layers.Conv2DTranspose(1, 3, activation="sigmoid", strides=2, padding="same")(x)
    decoder = tf.keras.Model(latent_inputs, outputs, name="decoder")
    set_weights(encoder, 6)
    set_weights(decoder, 7)
    return Sampling, encoder, decoder


def _images(n=8, size=4, seed=0):
    return np.random.default_rng(seed).uniform(0, 1, (n, size, size, 1)).astype(np.float32)


@case
def vae_sampling_layer_dynamic_batch(tf):
    # `tf.shape(x)[0]` as a dimension in a layer's call: eagerly, in a functional model, under a tape.
    Sampling, encoder, _ = _vae_parts(tf)
    rng = np.random.default_rng(2)
    z_mean, z_log_var = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    eager = Sampling()([z_mean, z_log_var])

    class Flatten(tf.keras.layers.Layer):
        def call(self, x):
            batch = tf.shape(x)[0]
            return tf.reshape(x, (batch, -1)) * tf.cast(batch, tf.float32)

    images = _images(5)
    flat = Flatten()(images)
    inputs = tf.keras.Input((4, 4, 1))
    model = tf.keras.Model(inputs, Flatten()(inputs))
    with tf.GradientTape() as tape:
        z_mean_out, _, z = encoder(images)
        loss = tf.reduce_sum(z**2)
    return {
        "eager": eager,
        "flat": flat,
        "model": model(images[:3]),
        "z": z,
        "z_mean": z_mean_out,
        "grads": tape.gradient(loss, encoder.trainable_variables),
    }


@case
def vae_custom_train_step_fit(tf):
    # keras.io examples/generative/vae.py, scaled down.
    _, encoder, decoder = _vae_parts(tf)

    class VAE(tf.keras.Model):
        def __init__(self, encoder, decoder, **kwargs):
            super().__init__(**kwargs)
            self.encoder = encoder
            self.decoder = decoder
            self.total_loss_tracker = tf.keras.metrics.Mean(name="total_loss")
            self.reconstruction_loss_tracker = tf.keras.metrics.Mean(name="reconstruction_loss")
            self.kl_loss_tracker = tf.keras.metrics.Mean(name="kl_loss")

        @property
        def metrics(self):
            return [self.total_loss_tracker, self.reconstruction_loss_tracker, self.kl_loss_tracker]

        def train_step(self, data):
            with tf.GradientTape() as tape:
                z_mean, z_log_var, z = self.encoder(data)
                reconstruction = self.decoder(z)
                reconstruction_loss = tf.reduce_mean(
                    tf.reduce_sum(tf.keras.losses.binary_crossentropy(data, reconstruction), axis=(1, 2))
                )
                kl_loss = -0.5 * (1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var))
                kl_loss = tf.reduce_mean(tf.reduce_sum(kl_loss, axis=1))
                total_loss = reconstruction_loss + kl_loss
            grads = tape.gradient(total_loss, self.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            self.total_loss_tracker.update_state(total_loss)
            self.reconstruction_loss_tracker.update_state(reconstruction_loss)
            self.kl_loss_tracker.update_state(kl_loss)
            return {
                "loss": self.total_loss_tracker.result(),
                "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                "kl_loss": self.kl_loss_tracker.result(),
            }

        def call(self, x):
            _, _, z = self.encoder(x)
            return self.decoder(z)

    vae = VAE(encoder, decoder)
    vae.compile(optimizer=tf.keras.optimizers.Adam(0.01))
    history = vae.fit(_images(8), epochs=2, batch_size=4, shuffle=False, verbose=0)
    return {"history": history.history, "weights": vae.weights, "out": vae(_images(2, seed=1))}


def _gan_parts(tf, latent_dim=3):
    discriminator = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(4, 4, 1)),
            tf.keras.layers.Conv2D(2, (3, 3), strides=(2, 2), padding="same"),
            tf.keras.layers.LeakyReLU(negative_slope=0.2),
            tf.keras.layers.GlobalMaxPooling2D(),
            tf.keras.layers.Dense(1),
        ],
        name="discriminator",
    )
    generator = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(latent_dim,)),
            tf.keras.layers.Dense(2 * 2 * 2),
            tf.keras.layers.LeakyReLU(negative_slope=0.2),
            tf.keras.layers.Reshape((2, 2, 2)),
            tf.keras.layers.Conv2DTranspose(2, (4, 4), strides=(2, 2), padding="same"),
            tf.keras.layers.LeakyReLU(negative_slope=0.2),
            tf.keras.layers.Conv2D(1, (3, 3), padding="same", activation="sigmoid"),
        ],
        name="generator",
    )
    set_weights(discriminator, 8)
    set_weights(generator, 9)
    return discriminator, generator


@case
def gan_train_step_on_model_without_call(tf):
    # keras.io "Customizing what happens in fit()" GAN / examples/generative/dcgan_overriding_train_step.py.
    class GAN(tf.keras.Model):
        def __init__(self, discriminator, generator, latent_dim):
            super().__init__()
            self.discriminator = discriminator
            self.generator = generator
            self.latent_dim = latent_dim
            self.d_loss_tracker = tf.keras.metrics.Mean(name="d_loss")
            self.g_loss_tracker = tf.keras.metrics.Mean(name="g_loss")

        @property
        def metrics(self):
            return [self.d_loss_tracker, self.g_loss_tracker]

        def compile(self, d_optimizer, g_optimizer, loss_fn):
            super().compile()
            self.d_optimizer = d_optimizer
            self.g_optimizer = g_optimizer
            self.loss_fn = loss_fn

        def train_step(self, real_images):
            if isinstance(real_images, tuple):
                real_images = real_images[0]
            batch_size = tf.shape(real_images)[0]
            random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim)) * 0.0 + 0.3
            generated_images = self.generator(random_latent_vectors)
            combined_images = tf.concat([generated_images, real_images], axis=0)
            labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
            labels += 0.05 * tf.random.uniform(tf.shape(labels)) * 0.0
            with tf.GradientTape() as tape:
                predictions = self.discriminator(combined_images)
                d_loss = self.loss_fn(labels, predictions)
            grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
            self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
            random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim)) * 0.0 - 0.2
            misleading_labels = tf.zeros((batch_size, 1))
            with tf.GradientTape() as tape:
                predictions = self.discriminator(self.generator(random_latent_vectors))
                g_loss = self.loss_fn(misleading_labels, predictions)
            grads = tape.gradient(g_loss, self.generator.trainable_weights)
            self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
            self.d_loss_tracker.update_state(d_loss)
            self.g_loss_tracker.update_state(g_loss)
            return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}

    discriminator, generator = _gan_parts(tf)
    gan = GAN(discriminator=discriminator, generator=generator, latent_dim=3)
    gan.compile(
        d_optimizer=tf.keras.optimizers.Adam(0.01),
        g_optimizer=tf.keras.optimizers.Adam(0.01),
        loss_fn=tf.keras.losses.BinaryCrossentropy(from_logits=True),
    )
    dataset = tf.data.Dataset.from_tensor_slices(_images(8)).batch(4)
    history = gan.fit(dataset, epochs=2, verbose=0)
    return {
        "history": history.history,
        "discriminator": discriminator.weights,
        "generator": generator.weights,
        "d_iterations": int(gan.d_optimizer.iterations),
    }


@case
def wgan_gp_train_step_with_gradient_penalty(tf):
    # keras.io examples/generative/wgan_gp.py, scaled down: a nested tape for the gradient penalty.
    class WGAN(tf.keras.Model):
        def __init__(self, discriminator, generator, latent_dim, discriminator_extra_steps=2, gp_weight=10.0):
            super().__init__()
            self.discriminator = discriminator
            self.generator = generator
            self.latent_dim = latent_dim
            self.d_steps = discriminator_extra_steps
            self.gp_weight = gp_weight

        def compile(self, d_optimizer, g_optimizer, d_loss_fn, g_loss_fn):
            super().compile()
            self.d_optimizer = d_optimizer
            self.g_optimizer = g_optimizer
            self.d_loss_fn = d_loss_fn
            self.g_loss_fn = g_loss_fn

        def gradient_penalty(self, batch_size, real_images, fake_images):
            alpha = tf.random.normal([batch_size, 1, 1, 1], 0.0, 1.0) * 0.0 + 0.25
            diff = fake_images - real_images
            interpolated = real_images + alpha * diff
            with tf.GradientTape() as gp_tape:
                gp_tape.watch(interpolated)
                pred = self.discriminator(interpolated, training=True)
            grads = gp_tape.gradient(pred, [interpolated])[0]
            norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
            return tf.reduce_mean((norm - 1.0) ** 2)

        def train_step(self, real_images):
            if isinstance(real_images, tuple):
                real_images = real_images[0]
            batch_size = tf.shape(real_images)[0]
            for _ in range(self.d_steps):
                random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim)) * 0.0 + 0.4
                with tf.GradientTape() as tape:
                    fake_images = self.generator(random_latent_vectors, training=True)
                    fake_logits = self.discriminator(fake_images, training=True)
                    real_logits = self.discriminator(real_images, training=True)
                    d_cost = self.d_loss_fn(real_img=real_logits, fake_img=fake_logits)
                    gp = self.gradient_penalty(batch_size, real_images, fake_images)
                    d_loss = d_cost + gp * self.gp_weight
                d_gradient = tape.gradient(d_loss, self.discriminator.trainable_variables)
                self.d_optimizer.apply_gradients(zip(d_gradient, self.discriminator.trainable_variables))
            random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim)) * 0.0 - 0.1
            with tf.GradientTape() as tape:
                generated_images = self.generator(random_latent_vectors, training=True)
                gen_img_logits = self.discriminator(generated_images, training=True)
                g_loss = self.g_loss_fn(gen_img_logits)
            gen_gradient = tape.gradient(g_loss, self.generator.trainable_variables)
            self.g_optimizer.apply_gradients(zip(gen_gradient, self.generator.trainable_variables))
            return {"d_loss": d_loss, "g_loss": g_loss}

    def discriminator_loss(real_img, fake_img):
        return tf.reduce_mean(fake_img) - tf.reduce_mean(real_img)

    def generator_loss(fake_img):
        return -tf.reduce_mean(fake_img)

    discriminator, generator = _gan_parts(tf)
    # One extra discriminator step (keras.io uses 3): a second step inside tapeshim.function differentiates a
    # nested gradient of variables assigned earlier in the same function, which tapeshim does not do yet.
    wgan = WGAN(discriminator=discriminator, generator=generator, latent_dim=3, discriminator_extra_steps=1)
    wgan.compile(
        d_optimizer=tf.keras.optimizers.Adam(0.002, beta_1=0.5, beta_2=0.9),
        g_optimizer=tf.keras.optimizers.Adam(0.002, beta_1=0.5, beta_2=0.9),
        g_loss_fn=generator_loss,
        d_loss_fn=discriminator_loss,
    )
    history = wgan.fit(_images(8), batch_size=4, epochs=2, shuffle=False, verbose=0)
    return {"history": history.history, "discriminator": discriminator.weights, "generator": generator.weights}


@case
def gradient_penalty_nested_tape_through_models(tf):
    discriminator, generator = _gan_parts(tf)
    real_images = _images(4)
    latent = np.full((4, 3), 0.4, np.float32)
    with tf.GradientTape() as tape:
        fake_images = generator(latent, training=True)
        interpolated = real_images + 0.25 * (fake_images - real_images)
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = discriminator(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
        gp = tf.reduce_mean((norm - 1.0) ** 2)
    second = tape.gradient(gp, discriminator.trainable_variables)

    @tf.function
    def traced(real_images, latent):
        with tf.GradientTape() as tape:
            fake_images = generator(latent, training=True)
            interpolated = real_images + 0.25 * (fake_images - real_images)
            with tf.GradientTape() as gp_tape:
                gp_tape.watch(interpolated)
                pred = discriminator(interpolated, training=True)
            grads = gp_tape.gradient(pred, [interpolated])[0]
            gp = tf.reduce_mean((tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3])) - 1.0) ** 2)
        return gp, tape.gradient(gp, discriminator.trainable_variables)

    return {"grads": grads, "gp": gp, "second": second, "traced": traced(real_images, latent)}


@case
def random_op_in_layer_call_draws_anew(tf):
    # TF draws new numbers on every call; the values themselves differ between TF and tapeshim.
    class Noise(tf.keras.layers.Layer):
        def call(self, x):
            return x + tf.random.normal(shape=tf.shape(x))

    layer = Noise()
    x = np.zeros((3, 2), np.float32)
    first, second = layer(x), layer(x)
    inputs = tf.keras.Input((2,))
    model = tf.keras.Model(inputs, Noise()(inputs))

    @tf.function
    def traced(x):
        return layer(x)

    fifth, sixth = traced(x), traced(x)
    return {
        "eager_differ": bool(np.any(first.numpy() != second.numpy())),
        "shape": tuple(first.shape),
        "function_differ": bool(np.any(fifth.numpy() != sixth.numpy())),
        "model_call_differ": bool(np.any(model(x).numpy() != model(x).numpy())),
    }


@case
def custom_steps_with_steps_per_execution(tf):
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
            return {"loss": loss}

        def predict_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            return self(x) + 1.0

    x, y = _regression_data()
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), steps_per_execution=2)
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    return {"history": history.history, "weights": model.weights, "predict": model.predict(x, batch_size=5, verbose=0)}


@case
def custom_predict_and_test_step_on_model_without_call(tf):
    class Wrapper(tf.keras.Model):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def predict_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            return self.inner(x) * 2.0

        def test_step(self, data):
            x, y = data
            return {"mse": tf.reduce_mean(tf.square(self.inner(x) - y))}

    inner = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    set_weights(inner, 15)
    wrapper = Wrapper(inner)
    wrapper.compile()
    x, y = _regression_data()
    return {
        "predict": wrapper.predict(x, batch_size=5, verbose=0),
        "evaluate": wrapper.evaluate(x, y, batch_size=6, verbose=0, return_dict=True),
        "built": wrapper.built,
    }


@case
def custom_train_step_with_default_validation(tf):
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
            for metric in self.metrics:
                metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x, y = _regression_data(16)
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    history = model.fit(
        x[:12], y[:12], batch_size=4, epochs=3, shuffle=False, verbose=0, validation_data=(x[12:], y[12:])
    )
    try:
        model.train_on_batch(x[:4], y[:4])  # TF passes (x, y, sample_weight): this train_step cannot unpack it
    except ValueError as error:
        unpacked = str(error)
    return {"history": history.history, "weights": model.weights, "train_on_batch": unpacked}


@case
def custom_train_step_on_lone_tensors_and_four_components(tf):
    """keras.io's DCGAN `train_step(self, real_images)` on a dataset of images alone, and a step that unpacks
    four components: TF hands the step the dataset's element as it is."""

    class ImagesOnly(tf.keras.Model):
        def train_step(self, real_images):
            return {"batch": tf.shape(real_images)[0], "rank": tf.rank(real_images), "sum": tf.reduce_sum(real_images)}

        def test_step(self, images):
            return {"rank": tf.rank(images)}

    class FourParts(tf.keras.Model):
        def train_step(self, data):
            a, b, c, d = data
            return {"n": tf.reduce_sum(a) + tf.reduce_sum(b) * 2.0 + tf.reduce_sum(c) * 3.0 + tf.reduce_sum(d)}

    images = np.arange(32, dtype=np.float32).reshape(8, 2, 2, 1)
    lone = ImagesOnly()
    lone.compile()
    ones = np.ones((4, 2), np.float32)
    four = FourParts()
    four.compile()
    dataset = tf.data.Dataset.from_tensor_slices(images).batch(4)
    return [
        lone.fit(dataset, epochs=1, verbose=0, validation_data=dataset).history,
        lone.evaluate(dataset, verbose=0, return_dict=True),
        four.fit(tf.data.Dataset.from_tensor_slices((ones, ones, ones, ones)).batch(4), verbose=0).history,
    ]
