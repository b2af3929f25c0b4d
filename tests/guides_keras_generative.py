"""Guide bodies for TF's DCGAN and custom-layers tutorials (registered in guides_keras.KERAS_BODIES).

site/en/tutorials/generative/dcgan.ipynb and site/en/tutorials/customization/custom_layers.ipynb,
run cell by cell with `tf` being TensorFlow (in guides_keras.py's child process) or tapeshim
(tests/test_guides.py), and compared. MNIST and the tutorials' random draws are replaced by
seeded numpy values, and weights are set from seeded numpy, so both runs see the same numbers.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Callable

import numpy as np

GENERATIVE_BODIES: dict[str, Callable[[Any], Any]] = {}


def _body(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    GENERATIVE_BODIES[fn.__name__] = fn
    return fn


from guides_keras import error_class, normal, printed  # noqa: E402


def seed_scaled_weights(model: Any, seed: int = 0) -> None:
    """Sets a built model's weights from a seeded generator, at scales that keep activations moderate.

    Kernels get a standard normal over the square root of their fan-in (a transposed
    convolution's kernel is (height, width, out, in)); BatchNormalization's moving variance
    stays positive (the tutorials call models with `training=False` too).
    """
    rng = np.random.default_rng(seed)
    values = []
    for weight in model.weights:
        shape = tuple(weight.shape)
        draw = rng.standard_normal(shape)
        if weight.name == "kernel":
            fan_in = np.prod(shape[:-2]) * shape[-1] if "transpose" in weight.path else np.prod(shape[:-1])
            value = draw / np.sqrt(fan_in)
        elif weight.name == "gamma":
            value = 1.0 + 0.1 * draw
        elif weight.name == "moving_variance":
            value = 1.0 + 0.1 * np.abs(draw)
        else:  # bias, beta, moving_mean
            value = 0.1 * draw
        values.append(value.astype(np.float32))
    model.set_weights(values)


# DCGAN (site/en/tutorials/generative/dcgan.ipynb) -----------------------------------------------------


def _dcgan_models(tf: Any, dropout_rate: float) -> tuple:
    """Cells 18 and 22: the tutorial's generator and discriminator (the discriminator's dropout rate a parameter)."""
    layers = tf.keras.layers  # cell 10's `from tensorflow.keras import layers`

    def make_generator_model():
        model = tf.keras.Sequential()
        model.add(layers.Dense(7 * 7 * 256, use_bias=False, input_shape=(100,)))
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())

        model.add(layers.Reshape((7, 7, 256)))
        assert model.output_shape == (None, 7, 7, 256)  # Note: None is the batch size

        model.add(layers.Conv2DTranspose(128, (5, 5), strides=(1, 1), padding="same", use_bias=False))
        assert model.output_shape == (None, 7, 7, 128)
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())

        model.add(layers.Conv2DTranspose(64, (5, 5), strides=(2, 2), padding="same", use_bias=False))
        assert model.output_shape == (None, 14, 14, 64)
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())

        model.add(layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding="same", use_bias=False, activation="tanh"))
        assert model.output_shape == (None, 28, 28, 1)

        return model

    def make_discriminator_model():
        model = tf.keras.Sequential()
        model.add(layers.Conv2D(64, (5, 5), strides=(2, 2), padding="same", input_shape=[28, 28, 1]))
        model.add(layers.LeakyReLU())
        model.add(layers.Dropout(dropout_rate))

        model.add(layers.Conv2D(128, (5, 5), strides=(2, 2), padding="same"))
        model.add(layers.LeakyReLU())
        model.add(layers.Dropout(dropout_rate))

        model.add(layers.Flatten())
        model.add(layers.Dense(1))

        return model

    return make_generator_model(), make_discriminator_model()


def _dcgan_losses(tf: Any) -> tuple:
    """Cells 26-30: the cross entropy and the two losses."""
    cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    def discriminator_loss(real_output, fake_output):
        real_loss = cross_entropy(tf.ones_like(real_output), real_output)
        fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
        total_loss = real_loss + fake_loss
        return total_loss

    def generator_loss(fake_output):
        return cross_entropy(tf.ones_like(fake_output), fake_output)

    return discriminator_loss, generator_loss


def _dcgan_train_step(
    tf: Any, generator: Any, discriminator: Any, generator_optimizer: Any, discriminator_optimizer: Any
) -> Callable:
    """Cell 38's `train_step`, with the noise an argument and the losses returned.

    The cell draws `noise = tf.random.normal([BATCH_SIZE, noise_dim])` inside the step; TF and
    tapeshim draw different numbers, so the step takes seeded noise instead, and returns its
    losses so that they can be compared.
    """
    discriminator_loss, generator_loss = _dcgan_losses(tf)

    @tf.function
    def train_step(images, noise):
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            generated_images = generator(noise, training=True)

            real_output = discriminator(images, training=True)
            fake_output = discriminator(generated_images, training=True)

            gen_loss = generator_loss(fake_output)
            disc_loss = discriminator_loss(real_output, fake_output)

        gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
        gradients_of_discriminator = disc_tape.gradient(disc_loss, discriminator.trainable_variables)

        generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
        discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))
        return gen_loss, disc_loss

    return train_step


def _dcgan_data(tf: Any, batch_size: int) -> Any:
    """Cells 12-15 with 8 seeded images in [-1, 1] for MNIST's 60000 (no shuffle: TF's order is not tapeshim's)."""
    rng = np.random.default_rng(7)
    train_images = rng.integers(0, 256, size=(8, 28, 28)).astype(np.uint8)
    train_images = train_images.reshape(train_images.shape[0], 28, 28, 1).astype("float32")
    train_images = (train_images - 127.5) / 127.5  # Normalize the images to [-1, 1]
    return tf.data.Dataset.from_tensor_slices(train_images).batch(batch_size)


@_body
def dcgan_tutorial(tf):
    out = {}
    BATCH_SIZE = 4
    noise_dim = 100
    train_dataset = _dcgan_data(tf, BATCH_SIZE)
    # Dropout with training=True draws masks that TF and tapeshim do not share, so the compared training runs
    # with the discriminator's dropout rate 0 (dcgan_tutorial_dropout runs the guide's 0.3).
    generator, discriminator = _dcgan_models(tf, dropout_rate=0.0)
    seed_scaled_weights(generator, 1)
    seed_scaled_weights(discriminator, 2)
    out["cell 18"] = [(w.name, list(w.shape)) for w in generator.weights]

    noise = normal(tf, [1, 100], seed=3)
    generated_image = generator(noise, training=False)
    out["cell 20"] = generated_image[0, :, :, 0]

    decision = discriminator(generated_image)
    out["cell 24"] = decision

    generator_optimizer = tf.keras.optimizers.Adam(1e-4)
    discriminator_optimizer = tf.keras.optimizers.Adam(1e-4)

    checkpoint_dir = tempfile.mkdtemp()
    checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
    checkpoint = tf.train.Checkpoint(
        generator_optimizer=generator_optimizer,
        discriminator_optimizer=discriminator_optimizer,
        generator=generator,
        discriminator=discriminator,
    )

    num_examples_to_generate = 16
    seed = normal(tf, [num_examples_to_generate, noise_dim], seed=4)
    train_step = _dcgan_train_step(tf, generator, discriminator, generator_optimizer, discriminator_optimizer)

    # Cell 39's train(train_dataset, 1): an epoch of two batches, then the tutorial's checkpoint.
    losses = []
    for step, image_batch in enumerate(train_dataset):
        losses.append(train_step(image_batch, normal(tf, [BATCH_SIZE, noise_dim], seed=10 + step)))
    out["cell 43 losses"] = losses
    out["cell 43 weights"] = (generator.weights, discriminator.weights)
    out["cell 43 iterations"] = (
        int(generator_optimizer.iterations.numpy()),
        int(discriminator_optimizer.iterations.numpy()),
    )
    # Cell 41's generate_and_save_images, without the plot.
    predictions = generator(seed, training=False)
    out["cell 41"] = predictions[:, :, :, 0] * 127.5 + 127.5
    save_path = checkpoint.save(file_prefix=checkpoint_prefix)
    saved = [w.numpy() for w in generator.weights + discriminator.weights]

    # One more step moves every weight; cell 45's restore brings the saved ones back.
    out["step 3 losses"] = train_step(next(iter(train_dataset)), normal(tf, [BATCH_SIZE, noise_dim], seed=20))
    status = checkpoint.restore(tf.train.latest_checkpoint(checkpoint_dir))
    status.assert_existing_objects_matched()
    out["cell 45"] = (
        os.path.basename(save_path),
        all(np.array_equal(w.numpy(), s) for w, s in zip(generator.weights + discriminator.weights, saved)),
        int(generator_optimizer.iterations.numpy()),
    )
    out["cell 45 step"] = train_step(next(iter(train_dataset)), normal(tf, [BATCH_SIZE, noise_dim], seed=20))
    return out


@_body
def dcgan_tutorial_dropout(tf):
    # The guide's discriminator (Dropout(0.3)) trained as written: the dropout masks are each library's own
    # random draws, so what is compared is what does not depend on them: the losses' and weights' dtypes and
    # shapes, that they are finite, and that every weight moved.
    BATCH_SIZE = 4
    generator, discriminator = _dcgan_models(tf, dropout_rate=0.3)
    seed_scaled_weights(generator, 1)
    seed_scaled_weights(discriminator, 2)
    before = [w.numpy() for w in generator.trainable_weights + discriminator.trainable_weights]
    train_step = _dcgan_train_step(
        tf, generator, discriminator, tf.keras.optimizers.Adam(1e-4), tf.keras.optimizers.Adam(1e-4)
    )
    losses = [
        train_step(images, normal(tf, [BATCH_SIZE, 100], seed=10 + step))
        for step, images in enumerate(_dcgan_data(tf, BATCH_SIZE))
    ]
    after = [w.numpy() for w in generator.trainable_weights + discriminator.trainable_weights]
    described = [
        (loss.dtype.name, loss.shape.as_list(), bool(np.isfinite(loss.numpy()))) for pair in losses for loss in pair
    ]
    return (
        described,
        [(a.dtype.name, a.shape, bool(np.isfinite(a).all()), bool((a != b).any())) for a, b in zip(after, before)],
    )


# Custom layers (site/en/tutorials/customization/custom_layers.ipynb) ----------------------------------


def _variables(variables: Any) -> list:
    """Names, shapes and dtypes of variables (Keras 3's `name` is the weight's own, not its layer's path)."""
    return [(v.name, list(v.shape), v.dtype if isinstance(v.dtype, str) else v.dtype.name) for v in variables]


def _summary_totals(model: Any) -> list:
    """The parameter counts `model.summary()` prints (its table's layer names are per-process counters)."""
    with printed() as text:
        model.summary()
    return [line.strip() for line in text.getvalue().splitlines() if "params" in line]


@_body
def custom_layers_tutorial(tf):
    out = {}
    layer = tf.keras.layers.Dense(100)
    layer = tf.keras.layers.Dense(10, input_shape=(None, 5))
    out["cell 10"] = layer(tf.zeros([10, 5]))
    out["cell 11"] = _variables(layer.variables)
    out["cell 11 trainable"] = _variables(layer.trainable_variables)
    seed_scaled_weights(layer, 1)
    out["cell 12"] = (layer.kernel, layer.bias)
    out["cell 12 call"] = layer(normal(tf, [10, 5], seed=2))

    class MyDenseLayer(tf.keras.layers.Layer):
        def __init__(self, num_outputs):
            super(MyDenseLayer, self).__init__()
            self.num_outputs = num_outputs

        def build(self, input_shape):
            self.kernel = self.add_weight("kernel", shape=[int(input_shape[-1]), self.num_outputs])

        def call(self, inputs):
            return tf.matmul(inputs, self.kernel)

    layer = MyDenseLayer(10)
    # As written, cell 14's add_weight("kernel", shape=...) gives the name positionally, which Keras 3 refuses
    # (ValueError in TF 2.21) when cell 15's call builds the layer; then the same layer with name="kernel".
    out["cell 15 as written"] = error_class(lambda: layer(tf.zeros([10, 5])))

    class MyDenseLayerKeras3(tf.keras.layers.Layer):
        def __init__(self, num_outputs):
            super(MyDenseLayerKeras3, self).__init__()
            self.num_outputs = num_outputs

        def build(self, input_shape):
            self.kernel = self.add_weight(name="kernel", shape=[int(input_shape[-1]), self.num_outputs])

        def call(self, inputs):
            return tf.matmul(inputs, self.kernel)

    layer = MyDenseLayerKeras3(10)
    _ = layer(tf.zeros([10, 5]))  # Calling the layer `.builds` it.
    with printed() as text:
        print([var.name for var in layer.trainable_variables])
    out["cell 16"] = (text.getvalue(), _variables(layer.trainable_variables))
    seed_scaled_weights(layer, 3)
    out["cell 16 call"] = layer(normal(tf, [10, 5], seed=4))

    class ResnetIdentityBlock(tf.keras.Model):
        def __init__(self, kernel_size, filters):
            super(ResnetIdentityBlock, self).__init__(name="")
            filters1, filters2, filters3 = filters

            self.conv2a = tf.keras.layers.Conv2D(filters1, (1, 1))
            self.bn2a = tf.keras.layers.BatchNormalization()

            self.conv2b = tf.keras.layers.Conv2D(filters2, kernel_size, padding="same")
            self.bn2b = tf.keras.layers.BatchNormalization()

            self.conv2c = tf.keras.layers.Conv2D(filters3, (1, 1))
            self.bn2c = tf.keras.layers.BatchNormalization()

        def call(self, input_tensor, training=False):
            x = self.conv2a(input_tensor)
            x = self.bn2a(x, training=training)
            x = tf.nn.relu(x)

            x = self.conv2b(x)
            x = self.bn2b(x, training=training)
            x = tf.nn.relu(x)

            x = self.conv2c(x)
            x = self.bn2c(x, training=training)

            x += input_tensor
            return tf.nn.relu(x)

    block = ResnetIdentityBlock(1, [1, 2, 3])
    out["cell 20"] = block(tf.zeros([1, 2, 3, 3]))
    out["cell 21"] = [type(sub).__name__ for sub in block.layers]
    out["cell 22"] = len(block.variables)
    out["cell 22 variables"] = _variables(block.variables)
    out["cell 23"] = _summary_totals(block)
    seed_scaled_weights(block, 5)
    x = normal(tf, [2, 2, 3, 3], seed=6)
    out["cell 20 seeded"] = (block(x), block(x, training=True), block.variables)

    my_seq = tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(1, (1, 1), input_shape=(None, None, 3)),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Conv2D(2, 1, padding="same"),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Conv2D(3, (1, 1)),
            tf.keras.layers.BatchNormalization(),
        ]
    )
    out["cell 25"] = my_seq(tf.zeros([1, 2, 3, 3]))
    out["cell 26"] = _summary_totals(my_seq)
    out["cell 26 layers"] = [(type(sub).__name__, sub.count_params(), _variables(sub.weights)) for sub in my_seq.layers]
    seed_scaled_weights(my_seq, 7)
    out["cell 25 seeded"] = (my_seq(x), my_seq(x, training=True), my_seq.weights)
    return out


# Leftovers the guide runs reported -------------------------------------------------------------------


@_body
def optimizer_iterations_dtype(tf):
    # The custom training walkthrough (cell 17) prints optimizer.iterations.numpy(): an int64 in TF's Keras.
    out = {}
    optimizer = tf.keras.optimizers.SGD(0.01)
    out["new"] = (
        optimizer.iterations.numpy(),
        optimizer.iterations.dtype.name if hasattr(optimizer.iterations.dtype, "name") else optimizer.iterations.dtype,
        len(optimizer.variables),
    )
    v = tf.Variable([1.0, 2.0])
    out["apply_gradients"] = optimizer.apply_gradients([(tf.constant([1.0, 1.0]), v)]).numpy()

    adam = tf.keras.optimizers.Adam(tf.keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5))

    @tf.function
    def step():
        adam.apply_gradients([(tf.constant([1.0, -1.0]), v)])
        return adam.iterations + 0

    out["tf.function"] = (step(), step(), adam.iterations.numpy(), adam.learning_rate, v)

    @tf.function
    def doubled_rate():
        return optimizer.learning_rate * 2, optimizer.iterations % 2 == 0

    first = doubled_rate()
    optimizer.learning_rate.assign(0.5)
    optimizer.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    out["variables read in tf.function"] = (first, doubled_rate())

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((4, 2), np.float32), np.ones((4, 1), np.float32), epochs=2, verbose=0)
    out["compile"] = (model.optimizer.iterations.numpy(), len(model.optimizer.variables))

    directory = tempfile.mkdtemp()
    path = tf.train.Checkpoint(optimizer=optimizer).save(os.path.join(directory, "ckpt"))
    restored = tf.keras.optimizers.SGD(0.5)
    tf.train.Checkpoint(optimizer=restored).restore(path)
    out["restored"] = (restored.iterations.numpy(), restored.learning_rate)
    return out
