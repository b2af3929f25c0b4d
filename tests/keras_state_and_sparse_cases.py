"""Keras cases for frozen layers, sparse (IndexedSlices) gradients and one-forward-pass training calls.

Each body is a function of the module (`tf`), run with TF's Keras in a child
process and with tapeshim by tests/test_keras_backend.py, as tests/test_keras.py
runs keras_cases.py. `BACKEND_CASES` maps a case name to its body.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from keras_cases import data, mlp, set_weights  # noqa: E402

BACKEND_CASES: dict[str, Any] = {}


def backend_case(fn: Any) -> Any:
    BACKEND_CASES[fn.__name__] = fn
    return fn


@backend_case
def frozen_layer_variables_still_watched(tf):
    x = tf.constant(np.ones((3, 4), np.float32))
    layer = tf.keras.layers.Dense(2)
    layer(x)
    set_weights(layer, 5)
    layer.trainable = False
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(layer(x) ** 2)
    watched = [tuple(v.shape) for v in tape.watched_variables()]
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
    set_weights(model, 6)
    model.layers[0].trainable = False
    with tf.GradientTape() as model_tape:
        z = tf.reduce_sum(model(x) ** 2)
    return {
        "watched": watched,
        "kernel_gradient": tape.gradient(y, layer.kernel),
        "gradients": tape.gradient(y, [layer.kernel, layer.bias]),
        "trainable": [len(layer.trainable_variables), len(layer.non_trainable_variables), layer.kernel.trainable],
        "model_watched": [tuple(v.shape) for v in model_tape.watched_variables()],
        "model_trainable": [tuple(v.shape) for v in model.trainable_variables],
        "model_gradients": model_tape.gradient(z, model.trainable_variables),
    }


SPARSE_OPTIMIZERS = {
    "sgd": ("SGD", {"learning_rate": 0.5}),
    "sgd_momentum": ("SGD", {"learning_rate": 0.5, "momentum": 0.9}),
    "adam": ("Adam", {"learning_rate": 0.1}),
    "amsgrad": ("Adam", {"learning_rate": 0.1, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.1, "weight_decay": 0.1}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.05}),
    "rmsprop_centered": ("RMSprop", {"learning_rate": 0.05, "momentum": 0.5, "centered": True}),
    "adagrad": ("Adagrad", {"learning_rate": 0.3}),
    "adamax": ("Adamax", {"learning_rate": 0.1}),
    "nadam": ("Nadam", {"learning_rate": 0.1}),
    "lion": ("Lion", {"learning_rate": 0.05}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1}),
    "lamb": ("Lamb", {"learning_rate": 0.1}),
    "clipnorm": ("Adam", {"learning_rate": 0.1, "clipnorm": 0.5}),
    "global_clipnorm": ("Adam", {"learning_rate": 0.1, "global_clipnorm": 0.5}),
    "clipvalue": ("RMSprop", {"learning_rate": 0.1, "clipvalue": 0.3}),
}


def _sparse_optimizer_steps(tf, name, kwargs):
    """Repeated indices: TF's Keras squares (or takes abs of) each slice separately, not their sum."""
    table = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2) / 10)
    dense = tf.Variable([0.5, -1.0])
    optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
    rows = np.array([[1.0, -2.0], [0.5, 0.25], [3.0, 1.0], [-1.0, 0.5]], np.float32)
    history = []
    for _ in range(2):
        given = tf.IndexedSlices(tf.constant(rows), tf.constant([1, 1, 4, 1]), tf.constant([6, 2]))
        optimizer.apply_gradients([(given, table), (tf.constant([0.3, -0.2]), dense)])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(table, [0, 3, 3, 5, 0, 3]) ** 3) + tf.reduce_sum(dense**2)
        grads = tape.gradient(loss, [table, dense])
        optimizer.apply_gradients(zip(grads, [table, dense]))
        history.append([tf.identity(table), tf.identity(dense), type(grads[0]).__name__])
    return history


for _key, (_name, _kwargs) in SPARSE_OPTIMIZERS.items():
    BACKEND_CASES[f"sparse_gradient_repeated_indices_{_key}"] = (
        lambda name, kwargs: lambda tf: _sparse_optimizer_steps(tf, name, kwargs)
    )(_name, _kwargs)


@backend_case
def sparse_gradient_in_function(tf):
    table = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2) / 10)
    optimizer = tf.keras.optimizers.Adam(0.1)

    @tf.function
    def step(ids):
        rows = tf.gather(table, ids)
        optimizer.apply_gradients([(tf.IndexedSlices(2.0 * rows, ids, tf.constant([6, 2])), table)])
        return tf.reduce_sum(rows**2)

    losses = [step(tf.constant([1, 1, 2, 5, 1])) for _ in range(3)]
    return {"losses": losses, "table": table}


@backend_case
def batchnorm_training_steps_under_tape(tf):
    x, y = data(16)
    model = mlp(tf, batchnorm=True)
    optimizer = tf.keras.optimizers.Adam(0.05)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    history = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        history.append([loss, logits, grads])
    return {"history": history, "weights": model.weights, "inference": model(x, training=False)}


@backend_case
def batchnorm_training_persistent_tape(tf):
    x, _ = data(6)
    model = mlp(tf, batchnorm=True)
    with tf.GradientTape(persistent=True) as tape:
        out = model(x, training=True)
        loss = tf.reduce_mean(out**2)
    first = tape.gradient(loss, model.trainable_variables)
    second = tape.gradient(out, model.layers[-1].bias)
    jacobian = tape.jacobian(out, model.layers[-1].kernel)
    return {
        "first": first,
        "second": second,
        "jacobian": jacobian,
        "moving": [model.layers[1].moving_mean, model.layers[1].moving_variance],
    }


@backend_case
def layer_counting_training_calls_under_tape(tf):
    class Counting(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.calls = self.add_weight(shape=(), initializer="zeros", trainable=False, name="calls")
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones", name="w")

        def call(self, inputs, training=False):
            if training:
                self.calls.assign(self.calls + 1.0)
            return tf.keras.ops.matmul(inputs, self.w) * (1.0 + self.calls)

    layer = Counting()
    x = tf.constant(np.ones((3, 4), np.float32))
    results = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            out = layer(x, training=True)
            loss = tf.reduce_sum(out**2)
        results.append([out, tape.gradient(loss, layer.w), tf.identity(layer.calls)])
    return results


def _slices(gradient):
    if hasattr(gradient, "indices"):
        return ["IndexedSlices", gradient.values, gradient.indices, gradient.dense_shape]
    return ["dense", gradient]


@backend_case
def embedding_gradient_is_indexed_slices(tf):
    layer = tf.keras.layers.Embedding(6, 3)
    layer.build((None,))
    layer.set_weights([np.linspace(-1, 1, 18, dtype=np.float32).reshape(6, 3)])
    ids = tf.constant([[1, 4, 1], [0, 1, 5]])
    with tf.GradientTape() as tape:
        out = layer(ids)
        loss = tf.reduce_sum(out**3)
    return [out, _slices(tape.gradient(loss, layer.embeddings))]


def _text_model(tf, functional):
    if functional:
        inputs = tf.keras.Input((7,), dtype="int32")
        hidden = tf.keras.layers.Embedding(10, 4)(inputs)
        hidden = tf.keras.layers.Conv1D(5, 3, activation="relu")(hidden)
        outputs = tf.keras.layers.Dense(2)(tf.keras.layers.GlobalMaxPooling1D()(hidden))
        model = tf.keras.Model(inputs, outputs)
    else:
        model = tf.keras.Sequential(
            [
                tf.keras.Input((7,), dtype="int32"),
                tf.keras.layers.Embedding(10, 4),
                tf.keras.layers.Conv1D(5, 3, activation="relu"),
                tf.keras.layers.GlobalMaxPooling1D(),
                tf.keras.layers.Dense(2),
            ]
        )
    set_weights(model, 7)
    return model


def _text_training(tf, functional, optimizer):
    """A text CNN whose batches repeat ids: TF's Embedding gradient is IndexedSlices, applied slice by slice."""
    rng = np.random.default_rng(8)
    ids = rng.integers(0, 4, (6, 7)).astype(np.int32)  # few distinct ids: many repeats
    labels = rng.integers(0, 2, 6).astype(np.int32)
    model = _text_model(tf, functional)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    history = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(ids, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        history.append([loss, _slices(grads[0])])
    return {"history": history, "weights": model.weights}


@backend_case
def text_cnn_sequential_adam_repeated_ids(tf):
    return _text_training(tf, False, tf.keras.optimizers.Adam(0.05))


@backend_case
def text_cnn_functional_rmsprop_repeated_ids(tf):
    return _text_training(tf, True, tf.keras.optimizers.RMSprop(0.05))


@backend_case
def text_cnn_sequential_adagrad_repeated_ids(tf):
    return _text_training(tf, False, tf.keras.optimizers.Adagrad(0.3))


@backend_case
def text_cnn_trained_in_a_function(tf):
    """The same training step inside `tf.function`: the Embedding's gradient is IndexedSlices there too."""
    rng = np.random.default_rng(9)
    ids = rng.integers(0, 4, (6, 7)).astype(np.int32)
    labels = rng.integers(0, 2, 6).astype(np.int32)
    model = _text_model(tf, False)
    optimizer = tf.keras.optimizers.Adam(0.05)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(ids, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(ids, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads[0], tf.convert_to_tensor(grads[0])

    history = []
    for _ in range(3):
        loss, gradient, dense = train_step(ids, labels)
        history.append([loss, _slices(gradient), dense])
    return {"history": history, "weights": model.weights}


@backend_case
def legacy_optimizers_are_refused_error(tf):
    tf.keras.optimizers.legacy.Adam(0.1)


@backend_case
def frozen_at_construction_and_nested_model_watched(tf):
    x = tf.constant(np.ones((2, 4), np.float32))
    frozen_at_birth = tf.keras.layers.Dense(3, trainable=False)
    batchnorm = tf.keras.layers.BatchNormalization()
    inner = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    inner.build((None, 4))
    inner.trainable = False
    outer = tf.keras.Sequential([tf.keras.Input((4,)), inner, tf.keras.layers.Dense(1)])
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(frozen_at_birth(x)) + tf.reduce_sum(batchnorm(x, training=True)) + tf.reduce_sum(outer(x))
    return {
        "watched": sorted(tuple(v.shape) for v in tape.watched_variables()),
        "frozen_at_birth": tape.gradient(y, frozen_at_birth.kernel) is None,
        "inner": tape.gradient(y, inner.layers[0].kernel) is None,
        "trainable": [len(outer.trainable_variables), len(frozen_at_birth.trainable_variables)],
    }


@backend_case
def sparse_gradient_index_out_of_range_error(tf):
    table = tf.Variable(np.ones((4, 2), np.float32))
    optimizer = tf.keras.optimizers.Adam(0.1)
    optimizer.apply_gradients([(tf.IndexedSlices(tf.ones((2, 2)), tf.constant([1, 7]), tf.constant([4, 2])), table)])
    return table


@backend_case
def sparse_gradient_row_shape_error(tf):
    table = tf.Variable(np.ones((4, 2), np.float32))
    optimizer = tf.keras.optimizers.Adam(0.1)  # (TF's SGD writes the first 2 of the 3 columns without an error)
    optimizer.apply_gradients([(tf.IndexedSlices(tf.ones((2, 3)), tf.constant([1, 2]), tf.constant([4, 3])), table)])
    return table


@backend_case
def loss_scale_optimizer_custom_loop(tf):
    v = tf.Variable([1.0, 2.0])
    w = tf.Variable([[0.5], [-1.0]])
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.Adam(0.1), initial_scale=8.0, dynamic_growth_steps=2
    )
    history = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v * v) + tf.reduce_sum(tf.matmul(v[None, :], w) ** 2)
            scaled = optimizer.scale_loss(loss)
        grads = tape.gradient(scaled, [v, w])
        optimizer.apply_gradients(zip(grads, [v, w]))
        history.append([loss, scaled, tf.identity(v), tf.identity(w), float(optimizer.dynamic_scale)])
    optimizer.apply_gradients([(tf.constant([np.inf, 1.0]), v), (tf.ones((2, 1)), w)])  # skipped, scale halved
    plain = tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    plain.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    return {
        "history": history,
        "after_inf": [v, w, float(optimizer.dynamic_scale)],
        "iterations": [int(optimizer.iterations), int(plain.iterations)],
        "same_class": tf.keras.mixed_precision.LossScaleOptimizer is tf.keras.optimizers.LossScaleOptimizer,
        "unscaled": tf.keras.optimizers.SGD(0.1).scale_loss(tf.constant(2.0)),
    }


@backend_case
def keras_ops_under_a_tape(tf):
    ops = tf.keras.ops
    v = tf.Variable([[1.0, 2.0, -0.5], [3.0, -1.0, 0.25]])
    w = tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))
    with tf.GradientTape(persistent=True) as tape:
        hidden = ops.nn.relu(ops.matmul(v, w))
        probabilities = ops.softmax(ops.concatenate([hidden, ops.square(hidden)], axis=-1))
        loss = (
            ops.sum(ops.log(probabilities + 1e-3))
            + ops.mean(ops.where(v > 0, v, -v))
            + ops.sum(ops.stop_gradient(v) * v)
            + ops.numpy.sum(ops.reshape(w, (6,)) ** 3)
            + ops.linalg.norm(w)
            + ops.sum(ops.image.resize(ops.reshape(v, (1, 2, 3, 1)), (4, 6)))
        )
    return {
        "loss": loss,
        "grads": tape.gradient(loss, [v, w]),
        "shape": list(ops.shape(v)),
        "ndim": ops.ndim(v),
        "stopped": tape.gradient(ops.stop_gradient(v) * 2.0, v),
    }


@backend_case
def keras_random_returns_tensors(tf):
    draw = tf.keras.random.normal((3, 2), seed=1)
    uniform = tf.keras.random.uniform((50,), minval=2.0, maxval=3.0, seed=tf.keras.random.SeedGenerator(4))
    integers = tf.keras.random.randint((4,), 0, 5, seed=2)
    v = tf.Variable(np.linspace(1, 2, 8, dtype=np.float32))
    with tf.GradientTape() as tape:
        dropped = tf.keras.random.dropout(v, 0.5, seed=3)
        loss = tf.reduce_sum(dropped * dropped)
    gradient = tape.gradient(loss, v)
    return {
        "types": [isinstance(t, tf.Tensor) for t in (draw, uniform, integers, dropped)],
        "shapes": [tuple(draw.shape), str(draw.dtype.name), str(integers.dtype.name)],
        "uniform_in_range": bool(tf.reduce_all((uniform >= 2.0) & (uniform < 3.0))),
        "dropout_gradient_is_4x_output": bool(tf.reduce_all(tf.abs(gradient - 4.0 * dropped) < 1e-5)),
        "kept_or_zero": bool(tf.reduce_all((dropped == 0.0) | (tf.abs(dropped - 2.0 * v) < 1e-6))),
    }


@backend_case
def custom_gradient_inside_a_layer(tf):
    # A gradient reversal layer (DANN) and a layer whose custom gradient closes over its kernel: Keras hands
    # the call JAX arrays, which are the function's tensor arguments as TF's tensors are.
    class Reversal(tf.keras.layers.Layer):
        def call(self, x):
            @tf.custom_gradient
            def reverse(x):
                return x * 2.0, lambda upstream: -upstream

            return reverse(x)

    class Clipped(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], 3), initializer="ones")

        def call(self, x):
            @tf.custom_gradient
            def project(x):
                def grad_fn(upstream, variables=None):
                    clipped = tf.clip_by_value(tf.matmul(upstream, tf.transpose(self.kernel)), -0.1, 0.1)
                    return clipped, [tf.matmul(tf.transpose(x), upstream)]

                return tf.matmul(x, self.kernel), grad_fn

            return project(x)

    x = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4))
    results = []
    for layer in (Reversal(), Clipped()):
        for _ in range(2):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(layer(x) ** 2)
            results.append(tape.gradient(loss, [x] + layer.trainable_variables))
    model = tf.keras.Sequential([tf.keras.Input((4,)), Clipped()])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    results.append(tape.gradient(loss, model.trainable_variables))
    return results


@backend_case
def lookup_hashing_and_text_vectorization_layers(tf):
    """Keras's preprocessing layers that compute with TF's ops, on tensors, in a tf.data map and adapted."""
    words = tf.constant(["cat", "dog", "cat", "bird", "dog", "cat"])
    lookup = tf.keras.layers.StringLookup()
    lookup.adapt(words)
    from_dataset = tf.keras.layers.StringLookup()
    from_dataset.adapt(tf.data.Dataset.from_tensor_slices(words).batch(2))
    mapped = [t.numpy() for t in tf.data.Dataset.from_tensor_slices(words).batch(4).map(lookup)]
    vectorizer = tf.keras.layers.TextVectorization(max_tokens=20, output_mode="tf_idf")
    vectorizer.adapt(tf.data.Dataset.from_tensor_slices(["the cat sat", "the dog ran", "a cat"]).batch(2))
    outputs = [
        lookup(tf.constant(["cat", "fish", "bird"])),
        from_dataset(tf.constant(["dog"])),
        tf.keras.layers.StringLookup(vocabulary=["a", "b"], output_mode="one_hot")(tf.constant(["a", "b", "z"])),
        tf.keras.layers.StringLookup(vocabulary=["a", "b"], invert=True)(tf.constant([1, 2, 0])),
        tf.keras.layers.IntegerLookup(vocabulary=[5, 7], output_mode="multi_hot")(tf.constant([[5, 9], [7, 7]])),
        tf.keras.layers.Hashing(num_bins=5)(tf.constant([["a"], ["b"]])),
        tf.keras.layers.HashedCrossing(num_bins=7)((tf.constant([1, 2]), tf.constant(["a", "b"]))),
        vectorizer(tf.constant(["the cat ran"])),
    ]
    return mapped, [(t.dtype.name, t.shape.as_list(), t.numpy().tolist()) for t in outputs]


@backend_case
def keras_namespace_aliases(tf):
    """TF's `tf.losses`, `tf.metrics`, `tf.optimizers` and `tf.initializers` (Keras's namespaces, as the text
    generation tutorial uses them)."""
    loss = tf.losses.SparseCategoricalCrossentropy(from_logits=True)(
        tf.constant([1, 0]), tf.constant([[0.1, 0.9], [2.0, -1.0]])
    )
    mean = tf.metrics.Mean()
    mean.update_state([1.0, 2.0, 4.0])
    w = tf.Variable(tf.initializers.Constant(2.0)(shape=[2]))
    tf.optimizers.SGD(learning_rate=0.5).apply_gradients([(tf.constant([1.0, -1.0]), w)])
    return [loss, mean.result(), w.numpy(), tf.losses.mse([1.0, 2.0], [1.5, 2.5])]


@backend_case
def string_lookup_on_ragged_characters(tf):
    """The text generation tutorial's `StringLookup` on `tf.strings.unicode_split`'s ragged characters, inverted."""
    ids_from_chars = tf.keras.layers.StringLookup(vocabulary=list("abcxyz"), mask_token=None)
    ids = ids_from_chars(tf.strings.unicode_split(["abc", "xy", ""], input_encoding="UTF-8"))
    chars_from_ids = tf.keras.layers.StringLookup(
        vocabulary=ids_from_chars.get_vocabulary(), invert=True, mask_token=None
    )
    chars = chars_from_ids(ids)
    return [ids.to_list(), ids.row_splits.numpy(), chars.to_list(), tf.strings.reduce_join(chars, axis=-1).numpy()]


# -- learning-rate schedules -------------------------------------------------------------------------------
def _train_with(tf, learning_rate, steps=4):
    """Adam on a two-element variable with the given learning rate (or schedule); the values and the rates."""
    v = tf.Variable([1.0, 2.0])
    optimizer = tf.keras.optimizers.Adam(learning_rate=learning_rate)
    rates = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v * v)
        optimizer.apply_gradients([(tape.gradient(loss, v), v)])
        rates.append(float(optimizer.learning_rate))
    return v, rates, int(optimizer.iterations.numpy())


@backend_case
def schedule_with_tf_cond(tf):
    # A warmup schedule written with tf.cond (Keras calls it inside the optimizer's update)
    class Warmup(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return tf.cond(step < 2, lambda: 0.1, lambda: 0.01)

    return _train_with(tf, Warmup())


@backend_case
def schedule_with_switch_case_and_while_loop(tf):
    class Stepped(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            index = tf.minimum(tf.cast(step, tf.int32), 2)
            rate = tf.switch_case(index, [lambda: 0.3, lambda: 0.2, lambda: 0.1])
            (halvings,) = tf.while_loop(
                lambda k: k * k < tf.cast(step, tf.int32), lambda k: [k + 1], [tf.constant(0)], maximum_iterations=5
            )
            return rate / tf.cast(halvings + 1, tf.float32)

    return _train_with(tf, Stepped())


@backend_case
def schedule_with_tf_case(tf):
    class Cased(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            step = tf.cast(step, tf.float32)
            return tf.case([(step < 1.0, lambda: 0.2), (step < 3.0, lambda: 0.05)], default=lambda: 0.01)

    return _train_with(tf, Cased())


@backend_case
def builtin_schedules_called_directly(tf):
    # TF's Keras gives float32 tensors (`schedule(step).numpy()`, as logging code does)
    schedules = tf.keras.optimizers.schedules
    made = [
        schedules.ExponentialDecay(0.1, 10, 0.9),
        schedules.PiecewiseConstantDecay([2, 4], [0.1, 0.05, 0.01]),
        schedules.CosineDecay(0.1, 20, warmup_target=0.2, warmup_steps=5),
        schedules.PolynomialDecay(0.1, 10, 0.001, power=2.0),
        schedules.InverseTimeDecay(0.1, 5, 0.5, staircase=True),
    ]
    out = []
    for schedule in made:
        for step in (tf.constant(3), 7, tf.Variable(12, dtype=tf.int64)):
            rate = schedule(step)
            out.append((type(schedule).__name__, rate.dtype.name, rate.numpy()))
    return out


@backend_case
def builtin_schedule_in_optimizer(tf):
    schedule = tf.keras.optimizers.schedules.PiecewiseConstantDecay([2], [0.1, 0.01])
    v, rates, iterations = _train_with(tf, schedule)
    return v, rates, iterations, isinstance(schedule, tf.keras.optimizers.schedules.LearningRateSchedule)


# -- type checks against tf.keras's classes ----------------------------------------------------------------
@backend_case
def isinstance_checks_on_keras_objects(tf):
    keras = tf.keras

    class Custom(keras.layers.Layer):
        def call(self, x):
            return x

    class CustomModel(keras.Model):
        def call(self, x):
            return x

    inputs = keras.Input((4,))
    functional = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    sequential = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.BatchNormalization()])
    checks = {
        "dense_is_layer": isinstance(keras.layers.Dense(2), keras.layers.Layer),
        "sequential_is_model": isinstance(sequential, keras.Model),
        "functional_is_model": isinstance(functional, keras.Model),
        "functional_is_sequential": isinstance(functional, keras.Sequential),
        "custom_model_is_model": isinstance(CustomModel(), keras.Model),
        "custom_layer_is_layer": isinstance(Custom(), keras.layers.Layer),
        "dense_is_custom": isinstance(keras.layers.Dense(2), Custom),
        "sequential_is_custom_model": isinstance(sequential, CustomModel),
        "adam_is_optimizer": isinstance(keras.optimizers.Adam(), keras.optimizers.Optimizer),
        "mse_is_loss": isinstance(keras.losses.MeanSquaredError(), keras.losses.Loss),
        "mean_is_metric": isinstance(keras.metrics.Mean(), keras.metrics.Metric),
        "mean_subclass_of_metric": issubclass(keras.metrics.Mean, keras.metrics.Metric),
        "custom_subclass_of_layer": issubclass(Custom, keras.layers.Layer),
        "schedule_is_schedule": isinstance(
            keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5), keras.optimizers.schedules.LearningRateSchedule
        ),
        # the layers of a model Keras built itself (clone_model, applications, load_model)
        "batch_norms_of_a_clone": sum(
            isinstance(layer, keras.layers.BatchNormalization) for layer in keras.models.clone_model(sequential).layers
        ),
        "dense_of_a_clone": sum(
            isinstance(layer, keras.layers.Dense) for layer in keras.models.clone_model(functional).layers
        ),
        "clone_is_model": isinstance(keras.models.clone_model(sequential), keras.Model),
    }
    return checks


@backend_case
def freezing_batch_norms_of_a_built_model(tf):
    # The fine-tuning pattern: freeze the BatchNormalization layers of a model Keras built
    keras = tf.keras
    base = keras.applications.MobileNetV2(input_shape=(32, 32, 3), weights=None, include_top=False, alpha=0.35)
    for layer in base.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            layer.trainable = False
    return len(base.trainable_weights), len(base.non_trainable_weights)


@backend_case
def scalar_variable_numpy_is_a_numpy_scalar(tf):
    optimizer = tf.keras.optimizers.SGD(0.1)
    variable = tf.Variable([1.0])
    optimizer.apply_gradients([(tf.constant([1.0]), variable)])
    layer = tf.keras.layers.Dense(2)
    layer.build((None, 3))
    return type(optimizer.iterations.numpy()).__name__, type(layer.kernel.numpy()).__name__


# -- Python attributes read by a call ---------------------------------------------------------------------
@backend_case
def layer_activation_swapped_after_a_call(tf):
    # Grad-CAM sets `model.layers[-1].activation = None`; TF's eager call reads attributes on every call
    x = tf.ones((1, 4))
    layer = tf.keras.layers.Dense(
        2, activation="relu", kernel_initializer="ones", bias_initializer=tf.keras.initializers.Constant(-10.0)
    )
    before = layer(x)
    layer.activation = None
    after = layer(x)
    layer.activation = tf.keras.activations.relu  # and back: the first programs serve again
    again = layer(x)
    inputs = tf.keras.Input((4,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(3, activation="softmax", kernel_initializer="ones")(inputs))
    probabilities = model(x)
    model.layers[-1].activation = None
    logits = model(x)
    return before, after, again, probabilities, logits


# -- Grad-CAM: the gradient of a model's prediction with respect to another of its outputs ----------------
def _grad_cam_heatmap(tf, grad_model, images, training=None):
    # keras.io's make_gradcam_heatmap
    with tf.GradientTape() as tape:
        if training is None:
            last_conv_layer_output, preds = grad_model(images)
        else:
            last_conv_layer_output, preds = grad_model(images, training=training)
        pred_index = tf.argmax(preds[0])
        class_channel = preds[:, pred_index]
    grads = tape.gradient(class_channel, last_conv_layer_output)
    pooled_grads = tf.reduce_mean(grads, axis=(0, 1, 2))
    heatmap = last_conv_layer_output[0] @ pooled_grads[..., tf.newaxis]
    heatmap = tf.squeeze(heatmap)
    return tf.maximum(heatmap, 0) / tf.math.reduce_max(heatmap), preds


@backend_case
def grad_cam_of_a_small_cnn(tf):
    keras = tf.keras
    inputs = keras.Input((8, 8, 3))
    x = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Conv2D(5, 3, padding="same", activation="relu", name="last_conv")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(3, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    set_weights(model, 3)
    model.layers[-1].activation = None  # keras.io removes the last softmax
    grad_model = keras.models.Model(model.inputs, [model.get_layer("last_conv").output, model.output])
    images = tf.constant(np.random.default_rng(0).uniform(0, 1, (1, 8, 8, 3)).astype(np.float32))
    heatmap, preds = _grad_cam_heatmap(tf, grad_model, images)
    _, trained = _grad_cam_heatmap(tf, grad_model, images, training=False)
    return heatmap, preds, trained


@backend_case
def grad_cam_of_an_applications_model(tf):
    keras = tf.keras
    base = keras.applications.MobileNetV2(input_shape=(32, 32, 3), weights=None, classes=4, alpha=0.35)
    set_weights(base, 5)
    grad_model = keras.models.Model(base.inputs, [base.get_layer("Conv_1").output, base.output])
    images = tf.constant(np.random.default_rng(1).uniform(-1, 1, (1, 32, 32, 3)).astype(np.float32))
    heatmap, preds = _grad_cam_heatmap(tf, grad_model, images)
    return heatmap, preds


@backend_case
def gradient_between_outputs_of_a_functional_model(tf):
    inputs = tf.keras.Input((4,))
    hidden = tf.keras.layers.Dense(3, name="hidden")(inputs)
    outputs = tf.keras.layers.Dense(2)(hidden)
    model = tf.keras.Model(inputs, [hidden, outputs, tf.keras.layers.Dense(1)(inputs)])
    set_weights(model, 2)
    x = tf.constant(np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h, y, side = model(x)
        target = tf.reduce_sum(y[:, 0])
    return (
        tape.gradient(target, h),
        tape.gradient(target, x),
        tape.gradient(side, h),
        tape.gradient(target, model.trainable_variables),
    )


@backend_case
def training_step_traces_once_without_slot_variables(tf):
    # A first call that creates no variable (SGD without momentum has no slots) is traced once, as TF's;
    # one that creates slots (Adam) twice

    def traced_steps(optimizer):
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        model.build((None, 3))
        set_weights(model, 4)

        @tf.function
        def train_step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x) ** 2)
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            return loss

        losses = [train_step(tf.ones([4, 3])) for _ in range(3)]
        return train_step.experimental_get_tracing_count(), losses

    return [traced_steps(tf.keras.optimizers.SGD(0.1)), traced_steps(tf.keras.optimizers.Adam(0.1))]


@backend_case
def dependent_outputs_keep_losses_subclass_calls_and_input_casts(tf):
    keras = tf.keras
    inputs = keras.Input((2,))
    hidden = keras.layers.Dense(3, name="hidden")(inputs)
    normalized = keras.layers.BatchNormalization()(hidden)
    out = keras.layers.Dense(1, activity_regularizer=keras.regularizers.L2(0.1))(normalized)
    model = keras.Model(inputs, [hidden, out])
    set_weights(model, 6)
    x = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    with tf.GradientTape() as tape:
        h, y = model(x, training=True)
        loss = tf.reduce_sum(y) + tf.add_n(model.losses)
    gradients = tape.gradient(loss, model.trainable_variables)
    cast = model(np.array([[1, 2]], np.int32))  # an int input of a float Input is cast, as Keras does

    class Scaled(keras.Model):
        def call(self, inputs):
            a, b = super().call(inputs)
            return a, b * 10.0

    scaled_inputs = keras.Input((1,))
    first = keras.layers.Dense(1, kernel_initializer="ones", name="first")(scaled_inputs)
    second = keras.layers.Dense(1, kernel_initializer="ones")(first)
    scaled = Scaled(scaled_inputs, [first, second])
    return [float(v) for v in model.losses], gradients, cast[1].dtype.name, scaled(tf.constant([[4.0]]))[1]


@backend_case
def keras_classes_with_abc(tf):
    import abc

    class Base(tf.keras.layers.Layer, abc.ABC):
        @abc.abstractmethod
        def scale(self): ...

        def call(self, x):
            return x * self.scale()

    class Doubler(Base):
        def scale(self):
            return 2.0

    class Abstract(tf.keras.Model, metaclass=abc.ABCMeta):
        pass

    try:
        Base()
        refused = False
    except TypeError:
        refused = True
    return Doubler()(tf.constant([1.5])), refused, isinstance(Abstract(), tf.keras.Model)


@backend_case
def check_numerics_with_a_custom_layer(tf):
    class Log(tf.keras.layers.Layer):
        def call(self, x):
            return tf.math.log(x) * 2.0

    tf.debugging.enable_check_numerics()
    try:
        return Log()(tf.constant([1.0, 2.0]))
    finally:
        tf.debugging.disable_check_numerics()
