"""Keras test bodies, each a function of the module (`tf`): run with TF's Keras and with tapeshim.

Run as a script (`python keras_cases.py OUT.pkl`), it imports real TensorFlow,
runs every case and pickles the outcomes (see keras_oracle.py). Weights are set
from a seeded numpy generator, because Keras's initializers draw different
numbers on different backends; no case uses dropout for the same reason.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from keras_oracle import run_case  # noqa: E402

from oracle_data import labelled  # noqa: E402

CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    CASES[fn.__name__] = fn
    return fn


def data(n: int = 12, features: int = 4, classes: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A seeded classification set: (n, features) float32 normal inputs, int32 labels in [0, classes)."""
    return labelled(seed, n, features, classes, label_dtype=np.int32)


def set_weights(model: Any, seed: int = 1) -> None:
    """Deterministic weights (variances positive), the same with any backend."""
    rng = np.random.default_rng(seed)
    model.set_weights(
        [
            rng.uniform(0.5, 1.5, w.shape).astype(w.dtype)
            if "variance" in w.name
            else (rng.standard_normal(w.shape) * 0.4).astype(w.dtype)
            for w in model.weights
        ]
    )


def mlp(tf: Any, hidden: int = 8, classes: int = 3, batchnorm: bool = False) -> Any:
    layers = [tf.keras.layers.Dense(hidden, activation="relu")]
    if batchnorm:
        layers.append(tf.keras.layers.BatchNormalization())
    layers.append(tf.keras.layers.Dense(classes))
    model = tf.keras.Sequential([tf.keras.Input((4,))] + layers)
    set_weights(model)
    return model


# -- models under the tape -----------------------------------------------------------------------------
@case
def sequential_gradients(tf):
    x, y = data()
    model = mlp(tf)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    return {"loss": loss, "logits": logits, "grads": grads}


@case
def forward_accumulator_through_a_layer(tf):
    # a layer's call first traced for a tape's reverse mode, then differentiated forward
    class Root(tf.keras.layers.Layer):
        def call(self, x):
            return tf.sqrt(x) * 2.0 + tf.nn.swish(x)

    layer = Root()
    x = tf.constant([[1.0, 4.0, 0.25]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        first = layer(x)
    reverse = tape.gradient(first, x)
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as accumulator:
        y = layer(x)
    return {"first": first, "reverse": reverse, "y": y, "jvp": accumulator.jvp(y)}


@case
def functional_gradients(tf):
    x, _ = data()
    inputs = tf.keras.Input((4,))
    hidden = tf.keras.layers.Dense(6, activation="tanh")(inputs)
    outputs = tf.keras.layers.Dense(2)(hidden)
    model = tf.keras.Model(inputs, outputs)
    set_weights(model, 2)
    with tf.GradientTape() as tape:
        out = model(x)
        loss = tf.reduce_mean(tf.square(out))
    return {
        "is_model": isinstance(model, tf.keras.Model),
        "loss": loss,
        "grads": tape.gradient(loss, model.trainable_variables),
    }


@case
def subclassed_model_with_tf_ops(tf):
    class Block(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 5), initializer="zeros", name="w")

        def call(self, inputs):
            return tf.nn.relu(tf.matmul(inputs, self.w)) + 0.5 * tf.reduce_mean(inputs, axis=1, keepdims=True)

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = tf.keras.layers.Dense(1)

        def call(self, inputs, training=False):
            return self.head(self.block(inputs))

    x, _ = data()
    net = Net()
    net(x[:1])
    set_weights(net, 3)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(net(x) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    return {"loss": loss, "grads": grads, "n": len(net.trainable_variables)}


@case
def dense_layer_in_tape(tf):
    layer = tf.keras.layers.Dense(3)
    x = tf.constant(np.ones((2, 4), np.float32))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x))
    grads = tape.gradient(y, layer.trainable_variables)
    return [tuple(g.shape) for g in grads] + [len(tape.watched_variables())]


@case
def batchnorm_statistics(tf):
    x, _ = data()
    model = mlp(tf, batchnorm=True)
    bn = model.layers[1]
    with tf.GradientTape() as tape:
        out = model(x, training=True)
        loss = tf.reduce_mean(out**2)
    grads = tape.gradient(loss, model.trainable_variables)
    after_train = [bn.moving_mean, bn.moving_variance]
    inference = model(x, training=False)
    return {
        "out": out,
        "grads": grads,
        "stats": after_train,
        "inference": inference,
        "n_trainable": len(model.trainable_variables),
        "n_all": len(model.variables),
    }


@case
def watch_accessed_variables_false(tf):
    x, _ = data()
    model = mlp(tf)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    with tf.GradientTape() as tape:
        tape.watch(model.layers[0].kernel)  # TF's tape refuses Keras variables here (a ValueError)
    return [g is None for g in grads]


@case
def training_step_in_function(tf):
    x, y = data()
    model = mlp(tf, batchnorm=True)
    optimizer = tf.keras.optimizers.Adam(0.05)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [step(x, y) for _ in range(4)]
    return {
        "losses": losses,
        "weights": model.weights,
        "iterations": int(optimizer.iterations),
        "traces": step.experimental_get_tracing_count(),
    }  # TF traces a variable-creating first call twice


@case
def eager_custom_loop_matches(tf):
    x, y = data(32)
    model = mlp(tf)
    optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    metric = tf.keras.metrics.SparseCategoricalAccuracy()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    losses = []
    for _epoch in range(2):
        for xb, yb in dataset:
            with tf.GradientTape() as tape:
                logits = model(xb, training=True)
                loss = loss_fn(yb, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            metric.update_state(yb, logits)
            losses.append(loss)
    return {"losses": losses, "accuracy": metric.result(), "weights": model.weights}


@case
def regularization_losses_in_tape(tf):
    x, _ = data()
    inputs = tf.keras.Input((4,))
    hidden = tf.keras.layers.Dense(
        5, kernel_regularizer=tf.keras.regularizers.L2(0.1), activity_regularizer=tf.keras.regularizers.L1(0.01)
    )(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, bias_regularizer="l1")(hidden))
    set_weights(model, 4)
    with tf.GradientTape() as tape:
        out = model(x)
        penalties = model.losses
        loss = tf.reduce_mean(out**2) + tf.add_n(penalties)
    return {"penalties": penalties, "grads": tape.gradient(loss, model.trainable_variables)}


@case
def custom_layer_returning_tf_ops(tf):
    class Linear(tf.keras.layers.Layer):
        def __init__(self, units):
            super().__init__()
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones")
            self.b = self.add_weight(shape=(self.units,), initializer="zeros")

        def call(self, inputs):
            return tf.nn.relu(tf.matmul(inputs, self.w) + self.b)

    x, y = data(16)
    direct = Linear(2)(x)
    row_sum = tf.keras.layers.Lambda(lambda t: tf.reduce_sum(t, 1))
    model = tf.keras.Sequential([tf.keras.Input((4,)), Linear(3), row_sum])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    history = model.fit(x, y.astype(np.float32), batch_size=8, epochs=2, shuffle=False, verbose=0)
    return {"direct": direct, "history": history.history, "weights": model.weights}


@case
def layer_assigning_a_tf_variable(tf):
    class Counting(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.calls = tf.Variable(0.0, trainable=False)

        def build(self, input_shape):
            pass

        def call(self, inputs):
            self.calls.assign_add(1.0)
            return inputs * 2.0

    layer = Counting()
    layer(np.ones((2, 2), np.float32))
    layer(np.ones((2, 2), np.float32))

    @tf.function
    def twice(x):
        return layer(layer(x))

    twice(np.ones((2, 2), np.float32))
    return layer.calls


@case
def custom_layer_reading_a_tf_variable(tf):
    class Scale(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.scale = tf.Variable(2.0)

        def call(self, inputs):
            return inputs * self.scale

    layer = Scale()
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x))
    gradient = tape.gradient(y, layer.scale)
    layer.scale.assign(5.0)
    return [gradient, tf.reduce_sum(layer(x))]  # the variable is an input, not a baked-in constant


@case
def variable_operators_and_l2_penalty(tf):
    x, y = data()
    model = mlp(tf)
    optimizer = tf.keras.optimizers.SGD(0.1)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            penalty = tf.add_n([tf.reduce_sum(w**2) for w in model.trainable_variables])
            loss = loss_fn(y, model(x)) + 0.1 * penalty + tf.reduce_sum(model.layers[0].kernel * 0.5)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(loss)
    kernel = model.layers[1].kernel

    @tf.function
    def scaled_sum():
        kernel.assign_add(tf.ones_like(kernel))
        return tf.reduce_sum(kernel * 2.0)

    return {"losses": losses, "sums": [scaled_sum(), scaled_sum()], "shifted": (kernel + 1.0) - kernel}


@case
def checkpoint_restored_into_unbuilt_model(tf):
    import tempfile

    x, _ = data()
    model = mlp(tf)
    optimizer = tf.keras.optimizers.Adam(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).write(tempfile.mkdtemp() + "/ckpt")
    fresh = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(3)])
    fresh_optimizer = tf.keras.optimizers.Adam(0.1)
    tf.train.Checkpoint(model=fresh, optimizer=fresh_optimizer).restore(path)
    restored = fresh(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(fresh(x) ** 2)
    fresh_optimizer.apply_gradients(zip(tape.gradient(loss, fresh.trainable_variables), fresh.trainable_variables))
    return {"restored": restored, "after_step": fresh.weights, "iterations": int(fresh_optimizer.iterations)}


# -- optimizers -----------------------------------------------------------------------------------------
OPTIMIZERS = {
    "sgd": ("SGD", {"learning_rate": 0.1}),
    "sgd_momentum": ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    "sgd_nesterov": ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"learning_rate": 0.1}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.1, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.1, "weight_decay": 0.05}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.05, "momentum": 0.5, "centered": True}),
    "adagrad": ("Adagrad", {"learning_rate": 0.3}),
    "adamax": ("Adamax", {"learning_rate": 0.1}),
    "nadam": ("Nadam", {"learning_rate": 0.1}),
    "lion": ("Lion", {"learning_rate": 0.05}),
    "clipnorm": ("SGD", {"learning_rate": 0.1, "clipnorm": 0.5}),
    "clipvalue": ("Adam", {"learning_rate": 0.1, "clipvalue": 0.2}),
    "global_clipnorm": ("SGD", {"learning_rate": 0.1, "global_clipnorm": 1.0}),
}


def _optimizer_steps(tf, name, kwargs, steps=3):
    optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
    v = tf.Variable([1.0, 2.0])
    w = tf.Variable([[0.5, -1.0], [2.0, 0.25]])
    history = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v * v) + tf.reduce_sum(tf.sin(w)) * tf.reduce_sum(v)
        grads = tape.gradient(loss, [v, w])
        optimizer.apply_gradients(zip(grads, [v, w]))
        history.append([tf.identity(v), tf.identity(w)])
    slots = [s for s in optimizer.variables if "int" not in str(s.dtype)]  # Keras on JAX counts in int32
    return {"history": history, "iterations": int(optimizer.iterations), "slots": slots}


for _key, (_name, _kwargs) in OPTIMIZERS.items():
    CASES[f"optimizer_{_key}"] = (lambda name, kwargs: lambda tf: _optimizer_steps(tf, name, kwargs))(_name, _kwargs)


@case
def spec_k1_sgd(tf):
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(0.1)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v**2)
        opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
    u = tf.Variable(1.0)
    momentum = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = u**2
        momentum.apply_gradients(zip(tape.gradient(loss, [u]), [u]))
    return {"v": v, "iterations": int(opt.iterations), "u": u}


@case
def spec_k2_adam(tf):
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.Adam(0.1)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v**2)
        opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
    return v


@case
def spec_k3_linear_regression(tf):
    x = tf.constant(np.linspace(-1, 1, 20, dtype=np.float32))
    y = 2.0 * x + 1.0
    w, b = tf.Variable(0.0), tf.Variable(0.0)
    opt = tf.keras.optimizers.SGD(0.05)
    losses = []
    for _ in range(50):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * x + b - y))
        opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        losses.append(loss)
    return {"w": w, "b": b, "first": losses[0], "last": losses[-1]}


@case
def spec_k4_none_gradient_warns(tf):
    a, b = tf.Variable([1.0]), tf.Variable([2.0])
    opt = tf.keras.optimizers.SGD(0.5)
    opt.apply_gradients([(tf.constant([1.0]), a), (None, b)])
    return [a, b, int(opt.iterations)]


@case
def none_gradient_warning_names_the_variable(tf):
    kept, skipped = tf.Variable([1.0], name="kept"), tf.Variable([2.0], name="skipped")
    tf.keras.optimizers.SGD(0.5).apply_gradients([(tf.constant([1.0]), kept), (None, skipped)])
    return [kept, skipped]


@case
def spec_k4_all_none_raises(tf):
    a = tf.Variable([1.0])
    tf.keras.optimizers.SGD(0.5).apply_gradients([(None, a)])


@case
def optimizer_keras_variables_and_schedule(tf):
    x, y = data()
    model = mlp(tf)
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    optimizer = tf.keras.optimizers.Adam(schedule)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return {"weights": model.weights, "iterations": int(optimizer.iterations)}


@case
def optimizer_indexed_slices(tf):
    # Unique indices: with repeated ones TF's Keras squares each slice separately in second moments
    # (Adam, RMSprop, Adagrad); tapeshim sums them first, as a dense gradient (docs/keras.md).
    table = tf.Variable(np.arange(12, dtype=np.float32).reshape(6, 2) / 10)
    results = []
    for optimizer in (tf.keras.optimizers.SGD(0.5), tf.keras.optimizers.Adam(0.1)):
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.gather(table, [0, 3, 5]) ** 2)
            grads = tape.gradient(loss, [table])
            optimizer.apply_gradients(zip(grads, [table]))
            results.append(tf.identity(table))
    return results


@case
def optimizer_minimize_with_tape(tf):
    if not hasattr(tf.keras.optimizers.SGD(0.1), "minimize"):
        # TF 2.21's Keras 3 has no `minimize`; tapeshim keeps Keras 2's. Compare with the tape form.
        v = tf.Variable([1.0, 2.0])
        opt = tf.keras.optimizers.SGD(0.1)
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(v**2)
            opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
        return [v, int(opt.iterations)]
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(0.1)
    opt.minimize(lambda: tf.reduce_sum(v**2), [v])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v**2)
    opt.minimize(loss, [v], tape=tape)
    return [v, int(opt.iterations)]


@case
def bad_gradient_shape_changes_nothing(tf):
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0])
    opt = tf.keras.optimizers.Adam(0.1)
    error = None
    try:
        opt.apply_gradients([(tf.constant([1.0, 1.0]), a), (tf.constant([1.0, 1.0]), b)])
    except Exception as exc:  # noqa: BLE001 - the class is compared
        error = type(exc).__name__
    return {"error": error}  # TF has already updated `a` then; tapeshim changes nothing (test_keras_local)


@case
def apply_with_more_gradients_than_variables(tf):
    a, b = tf.Variable([1.0]), tf.Variable([2.0])
    optimizer = tf.keras.optimizers.SGD(0.1)
    optimizer.apply([tf.constant([1.0]), tf.constant([1.0])], [a])
    optimizer.apply([tf.constant([1.0])], [a, b])
    return [a, b]


@case
def optimizer_options_on_tf_variables(tf):
    v = tf.Variable([1.0, 2.0], name="alpha")
    w = tf.Variable([3.0, -1.0])
    clipped = tf.Variable([0.5, 0.2, 0.9], constraint=lambda x: tf.clip_by_value(x, 0.0, 1.0))
    adamw = tf.keras.optimizers.AdamW(0.1, weight_decay=0.5)
    adamw.exclude_from_weight_decay(var_list=[v])
    sgd = tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.ExponentialDecay(1.0, 1, 0.5))
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v * w) + tf.reduce_sum(clipped * tf.constant([1.0, -1.0, -0.5]))
        gv, gw, gc = tape.gradient(loss, [v, w, clipped])
        adamw.apply_gradients([(gv, v), (gw, w)])
        sgd.apply_gradients([(gc, clipped)])
    huber = tf.keras.losses.get({"class_name": "Huber", "config": {"delta": 0.3}})
    return {
        "v": v,
        "w": w,
        "clipped": clipped,
        "lr": sgd.learning_rate * 2.0,
        "huber": huber(np.zeros((2, 2), np.float32), np.ones((2, 2), np.float32)),
    }


@case
def fit_infinite_dataset_continues_across_epochs(tf):
    x = np.arange(32, dtype=np.float32).reshape(32, 1) / 32
    y = (2 * x + 1).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat()
    history = model.fit(dataset, epochs=3, steps_per_epoch=3, verbose=0)
    predictions = model.predict(tf.data.Dataset.from_tensor_slices(x).batch(10), verbose=0)
    return {"history": history.history, "weights": model.weights, "predictions": predictions}


@case
def unknown_optimizer_name(tf):
    tf.keras.optimizers.get("no_such_optimizer")


@case
def unknown_loss_name(tf):
    tf.keras.losses.get("no_such_loss")


@case
def unknown_variable_for_built_optimizer(tf):
    opt = tf.keras.optimizers.SGD(0.1)
    a, b = tf.Variable([1.0]), tf.Variable([2.0])
    opt.apply_gradients([(tf.constant([1.0]), a)])
    opt.apply_gradients([(tf.constant([1.0]), b)])


@case
def optimizer_get_by_name(tf):
    opt = tf.keras.optimizers.get("adam")
    return [type(opt).__name__, float(opt.learning_rate)]


# -- losses and metrics ---------------------------------------------------------------------------------
def _loss_cases(tf):
    rng = np.random.default_rng(5)
    y_reg = rng.standard_normal((6, 3)).astype(np.float32)
    p_reg = rng.standard_normal((6, 3)).astype(np.float32)
    y_bin = rng.integers(0, 2, (6, 1)).astype(np.float32)
    logits_bin = rng.standard_normal((6, 1)).astype(np.float32)
    probs_bin = 1 / (1 + np.exp(-logits_bin))
    labels = rng.integers(0, 3, 6).astype(np.int32)
    one_hot = np.eye(3, dtype=np.float32)[labels]
    logits = rng.standard_normal((6, 3)).astype(np.float32)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    weights = rng.uniform(0, 1, 6).astype(np.float32)
    losses = tf.keras.losses
    return [
        (losses.MeanSquaredError(), y_reg, p_reg),
        (losses.MeanAbsoluteError(), y_reg, p_reg),
        (losses.Huber(delta=0.5), y_reg, p_reg),
        (losses.BinaryCrossentropy(from_logits=True), y_bin, logits_bin),
        (losses.BinaryCrossentropy(), y_bin, probs_bin),
        (losses.CategoricalCrossentropy(from_logits=True), one_hot, logits),
        (losses.CategoricalCrossentropy(label_smoothing=0.1), one_hot, probs),
        (losses.SparseCategoricalCrossentropy(from_logits=True), labels, logits),
        (losses.SparseCategoricalCrossentropy(), labels, probs),
        (losses.MeanSquaredError(reduction="sum"), y_reg, p_reg),
        (losses.mse, y_reg, p_reg),
        (losses.sparse_categorical_crossentropy, labels, probs),
        (losses.binary_crossentropy, y_bin, probs_bin),
    ], weights


@case
def losses_values_and_gradients(tf):
    cases, weights = _loss_cases(tf)
    results = []
    for loss_fn, y_true, y_pred in cases:
        prediction = tf.Variable(y_pred)
        with tf.GradientTape() as tape:
            value = loss_fn(y_true, prediction)
            total = tf.reduce_sum(value)
        entry = [value, tape.gradient(total, prediction)]
        if not hasattr(loss_fn, "__name__"):
            entry.append(loss_fn(y_true, y_pred, sample_weight=weights))
        results.append(entry)
    return results


@case
def metrics_update_result_reset(tf):
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 3, 8).astype(np.int32)
    logits = rng.standard_normal((8, 3)).astype(np.float32)
    y_bin = rng.integers(0, 2, (8, 1)).astype(np.float32)
    p_bin = rng.uniform(0, 1, (8, 1)).astype(np.float32)
    metrics = tf.keras.metrics
    out = {}
    mean = metrics.Mean()
    mean.update_state([1.0, 2.0, 3.0])
    mean.update_state(5.0, sample_weight=2.0)
    out["mean"] = mean.result()
    sparse = metrics.SparseCategoricalAccuracy()
    sparse.update_state(labels[:4], logits[:4])
    first = sparse.result()
    sparse.update_state(labels[4:], logits[4:])
    out["sparse"] = [first, sparse.result()]
    sparse.reset_state()
    out["sparse_reset"] = sparse.result()
    categorical = metrics.CategoricalAccuracy()
    out["categorical"] = categorical(np.eye(3, dtype=np.float32)[labels], logits)
    binary = metrics.BinaryAccuracy(threshold=0.4)
    out["binary"] = binary(y_bin, p_bin)
    accuracy = metrics.Accuracy()
    out["accuracy"] = accuracy([1, 2, 3, 4], [1, 2, 0, 4])
    out["mse"] = metrics.MeanSquaredError()(y_bin, p_bin)
    out["auc"] = metrics.AUC(num_thresholds=50)(y_bin, p_bin)
    f1 = metrics.F1Score(average="macro")  # creates its variables on the first update
    f1.update_state(np.eye(3, dtype=np.float32)[labels], tf.nn.softmax(logits))
    f1.update_state(np.eye(3, dtype=np.float32)[labels[::-1]], tf.nn.softmax(logits))
    out["f1"] = f1.result()
    out["variables"] = len(sparse.variables)
    return out


@case
def metric_inside_function(tf):
    metric = tf.keras.metrics.Mean()

    @tf.function
    def update(x):
        metric.update_state(x)
        return metric.result()

    return [update(tf.constant([1.0, 3.0])), update(tf.constant([5.0])), metric.result()]


@case
def activations_in_tape(tf):
    x = tf.Variable(np.linspace(-2, 2, 7, dtype=np.float32))
    out = []
    for name in ("relu", "sigmoid", "softmax", "gelu", "elu", "swish", "tanh"):
        fn = tf.keras.activations.get(name)
        with tf.GradientTape() as tape:
            y = fn(x)
            total = tf.reduce_sum(y * tf.range(7, dtype=tf.float32))
        out.append([y, tape.gradient(total, x)])
    return out


# -- fit / evaluate / predict -----------------------------------------------------------------------------
def _compiled_model(tf, optimizer="sgd"):
    model = mlp(tf)
    model.compile(
        optimizer=tf.keras.optimizers.SGD(0.05) if optimizer == "sgd" else optimizer,
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


@case
def fit_arrays(tf):
    x, y = data(40)
    model = _compiled_model(tf)
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
    return {
        "history": history.history,
        "epochs": history.epoch,
        "weights": model.weights,
        "evaluate": model.evaluate(x, y, verbose=0, batch_size=8),
        "predict": model.predict(x[:5], verbose=0),
    }


@case
def fit_dataset_with_validation_and_early_stopping(tf):
    x, y = data(40)
    model = _compiled_model(tf, optimizer="adam")
    train = tf.data.Dataset.from_tensor_slices((x[:32], y[:32])).batch(8)
    validation = tf.data.Dataset.from_tensor_slices((x[32:], y[32:])).batch(8)
    stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0)
    history = model.fit(train, epochs=5, validation_data=validation, callbacks=[stop], verbose=0)
    return {
        "history": history.history,
        "epochs": history.epoch,
        "stopped": stop.stopped_epoch,
        "evaluate": model.evaluate(validation, verbose=0, return_dict=True),
    }


@case
def train_on_batch_values(tf):
    x, y = data(16)
    model = _compiled_model(tf)
    first = model.train_on_batch(x, y)
    second = model.train_on_batch(x, y)
    return [first, second, model.predict_on_batch(x[:3])]


@case
def keras_built_models_in_a_function_step(tf):
    # clone_model and tf.keras.applications build Keras's own classes; a custom tf.function step trains them
    x, y = data(8)
    clone = tf.keras.models.clone_model(mlp(tf))
    set_weights(clone, 4)
    base = tf.keras.applications.MobileNetV2(input_shape=(32, 32, 3), weights=None, alpha=0.35, classes=3)
    set_weights(base, 6)
    images = tf.constant(np.random.default_rng(2).normal(size=(2, 32, 32, 3)).astype(np.float32))
    optimizers = {id(clone): tf.keras.optimizers.SGD(0.05), id(base): tf.keras.optimizers.SGD(0.05)}

    @tf.function
    def step(model, inputs, targets, training):
        optimizer = optimizers[id(model)]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(inputs, training=training) - targets) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [step(clone, x, tf.one_hot(y, 3), True) for _ in range(3)]
    # (inference-mode batch statistics: a training-mode BatchNormalization over 2 images at 1x1 amplifies
    # float rounding past the tolerance)
    image_losses = [step(base, images, tf.one_hot([0, 2], 3), False) for _ in range(2)]
    clone.compile(optimizer="sgd", loss="mse")
    history = clone.fit(x, tf.one_hot(y, 3), epochs=2, verbose=0, shuffle=False)
    return {
        "losses": losses,
        "image_losses": image_losses,
        "history": history.history,
        "clone": clone.get_weights(),
        "base_head": base.get_weights()[-2:],
    }


def all_cases() -> dict[str, Any]:
    """These cases and those of keras_custom_fit_cases.py, keras_decoding_cases.py and keras_eager_cases.py
    (imported here, as those modules import this one)."""
    from keras_custom_fit_cases import FIT_CASES
    from keras_decoding_cases import DECODING_CASES
    from keras_eager_cases import EAGER_CASES

    return {**CASES, **FIT_CASES, **DECODING_CASES, **EAGER_CASES}


def main(out_path: str) -> None:
    import tensorflow as tf

    outcomes = {name: run_case(body, tf) for name, body in all_cases().items()}
    with open(out_path, "wb") as stream:
        pickle.dump(outcomes, stream)


if __name__ == "__main__":
    main(sys.argv[1])
