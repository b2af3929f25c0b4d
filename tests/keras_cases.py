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

CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    CASES[fn.__name__] = fn
    return fn


def data(n: int = 12, features: int = 4, classes: int = 3, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)).astype(np.float32)
    y = rng.integers(0, classes, n).astype(np.int32)
    return x, y


def set_weights(model: Any, seed: int = 1) -> None:
    """Deterministic weights (variances positive), the same with any backend."""
    rng = np.random.default_rng(seed)
    model.set_weights([
        rng.uniform(0.5, 1.5, w.shape).astype(w.dtype) if "variance" in w.name
        else (rng.standard_normal(w.shape) * 0.4).astype(w.dtype)
        for w in model.weights])


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
    return {"is_model": isinstance(model, tf.keras.Model), "loss": loss,
            "grads": tape.gradient(loss, model.trainable_variables)}


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
        loss = tf.reduce_mean(out ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    after_train = [bn.moving_mean, bn.moving_variance]
    inference = model(x, training=False)
    return {"out": out, "grads": grads, "stats": after_train, "inference": inference,
            "n_trainable": len(model.trainable_variables), "n_all": len(model.variables)}


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
    return {"losses": losses, "weights": model.weights, "iterations": int(optimizer.iterations),
            "traces": step.experimental_get_tracing_count()}  # TF traces a variable-creating first call twice


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
    hidden = tf.keras.layers.Dense(5, kernel_regularizer=tf.keras.regularizers.L2(0.1),
                                   activity_regularizer=tf.keras.regularizers.L1(0.01))(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, bias_regularizer="l1")(hidden))
    set_weights(model, 4)
    with tf.GradientTape() as tape:
        out = model(x)
        penalties = model.losses
        loss = tf.reduce_mean(out ** 2) + tf.add_n(penalties)
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
            penalty = tf.add_n([tf.reduce_sum(w ** 2) for w in model.trainable_variables])
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
            loss = tf.reduce_sum(v ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
    u = tf.Variable(1.0)
    momentum = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = u ** 2
        momentum.apply_gradients(zip(tape.gradient(loss, [u]), [u]))
    return {"v": v, "iterations": int(opt.iterations), "u": u}


@case
def spec_k2_adam(tf):
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.Adam(0.1)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v ** 2)
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
                loss = tf.reduce_sum(v ** 2)
            opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
        return [v, int(opt.iterations)]
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(0.1)
    opt.minimize(lambda: tf.reduce_sum(v ** 2), [v])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v ** 2)
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
    return {"v": v, "w": w, "clipped": clipped, "lr": sgd.learning_rate * 2.0,
            "huber": huber(np.zeros((2, 2), np.float32), np.ones((2, 2), np.float32))}


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
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05) if optimizer == "sgd" else optimizer,
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


@case
def fit_arrays(tf):
    x, y = data(40)
    model = _compiled_model(tf)
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0, validation_split=0.25)
    return {"history": history.history, "epochs": history.epoch, "weights": model.weights,
            "evaluate": model.evaluate(x, y, verbose=0, batch_size=8), "predict": model.predict(x[:5], verbose=0)}


@case
def fit_dataset_with_validation_and_early_stopping(tf):
    x, y = data(40)
    model = _compiled_model(tf, optimizer="adam")
    train = tf.data.Dataset.from_tensor_slices((x[:32], y[:32])).batch(8)
    validation = tf.data.Dataset.from_tensor_slices((x[32:], y[32:])).batch(8)
    stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0)
    history = model.fit(train, epochs=5, validation_data=validation, callbacks=[stop], verbose=0)
    return {"history": history.history, "epochs": history.epoch, "stopped": stop.stopped_epoch,
            "evaluate": model.evaluate(validation, verbose=0, return_dict=True)}


@case
def train_on_batch_values(tf):
    x, y = data(16)
    model = _compiled_model(tf)
    first = model.train_on_batch(x, y)
    second = model.train_on_batch(x, y)
    return [first, second, model.predict_on_batch(x[:3])]


# -- TF-style train_step / test_step / predict_step overrides driven by fit (keras.io patterns) ---------------
def _regression_data(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 4)).astype(np.float32), rng.standard_normal((n, 1)).astype(np.float32)


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
    return {"history": history.history, "weights": model.weights, "functional": isinstance(model, tf.keras.Model),
            "evaluate": model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True),
            "predict": model.predict(x[:3], verbose=0)}


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
    return [model.evaluate(x, y, batch_size=5, verbose=0), model.evaluate(x, y, batch_size=4, verbose=0,
                                                                          return_dict=True)]


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
        loss = tf.reduce_mean(out ** 2) + tf.add_n(losses)
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

    return {"out": out, "is_the_variable": out is layer.table, "grad": tape.gradient(total, layer.table),
            "traced": traced(np.zeros((1,), np.float32))}


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
    return {"functional": functional(x), "is_model": isinstance(functional, tf.keras.Model), "later": later(x),
            "plain": plain(x), "n_layers": len(functional.layers)}


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
    return {"loss": loss, "is_tensor": isinstance(loss, tf.Tensor),
            "grads": tape.gradient(loss, net.trainable_variables)}


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
        loss = tf.reduce_mean(before ** 2)
    kernel = model.layers[1].kernel * 1.0
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    model.train_on_batch(x, y)
    model.evaluate(x, y, verbose=0)
    return {"before": before, "loss": loss, "grads": tape.gradient(loss, model.trainable_variables),
            "kernel": kernel, "after": model(x)}


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
        loss = tf.reduce_sum(z ** 2)
    return {"eager": eager, "flat": flat, "model": model(images[:3]), "z": z, "z_mean": z_mean_out,
            "grads": tape.gradient(loss, encoder.trainable_variables)}


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
                    tf.reduce_sum(tf.keras.losses.binary_crossentropy(data, reconstruction), axis=(1, 2)))
                kl_loss = -0.5 * (1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var))
                kl_loss = tf.reduce_mean(tf.reduce_sum(kl_loss, axis=1))
                total_loss = reconstruction_loss + kl_loss
            grads = tape.gradient(total_loss, self.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            self.total_loss_tracker.update_state(total_loss)
            self.reconstruction_loss_tracker.update_state(reconstruction_loss)
            self.kl_loss_tracker.update_state(kl_loss)
            return {"loss": self.total_loss_tracker.result(),
                    "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                    "kl_loss": self.kl_loss_tracker.result()}

        def call(self, x):
            _, _, z = self.encoder(x)
            return self.decoder(z)

    vae = VAE(encoder, decoder)
    vae.compile(optimizer=tf.keras.optimizers.Adam(0.01))
    history = vae.fit(_images(8), epochs=2, batch_size=4, shuffle=False, verbose=0)
    return {"history": history.history, "weights": vae.weights, "out": vae(_images(2, seed=1))}


def _gan_parts(tf, latent_dim=3):
    discriminator = tf.keras.Sequential([
        tf.keras.Input(shape=(4, 4, 1)),
        tf.keras.layers.Conv2D(2, (3, 3), strides=(2, 2), padding="same"),
        tf.keras.layers.LeakyReLU(negative_slope=0.2),
        tf.keras.layers.GlobalMaxPooling2D(),
        tf.keras.layers.Dense(1)], name="discriminator")
    generator = tf.keras.Sequential([
        tf.keras.Input(shape=(latent_dim,)),
        tf.keras.layers.Dense(2 * 2 * 2),
        tf.keras.layers.LeakyReLU(negative_slope=0.2),
        tf.keras.layers.Reshape((2, 2, 2)),
        tf.keras.layers.Conv2DTranspose(2, (4, 4), strides=(2, 2), padding="same"),
        tf.keras.layers.LeakyReLU(negative_slope=0.2),
        tf.keras.layers.Conv2D(1, (3, 3), padding="same", activation="sigmoid")], name="generator")
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
    gan.compile(d_optimizer=tf.keras.optimizers.Adam(0.01), g_optimizer=tf.keras.optimizers.Adam(0.01),
                loss_fn=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    dataset = tf.data.Dataset.from_tensor_slices(_images(8)).batch(4)
    history = gan.fit(dataset, epochs=2, verbose=0)
    return {"history": history.history, "discriminator": discriminator.weights, "generator": generator.weights,
            "d_iterations": int(gan.d_optimizer.iterations)}


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
    wgan.compile(d_optimizer=tf.keras.optimizers.Adam(0.002, beta_1=0.5, beta_2=0.9),
                 g_optimizer=tf.keras.optimizers.Adam(0.002, beta_1=0.5, beta_2=0.9),
                 g_loss_fn=generator_loss, d_loss_fn=discriminator_loss)
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
    return {"eager_differ": bool(np.any(first.numpy() != second.numpy())), "shape": tuple(first.shape),
            "function_differ": bool(np.any(fifth.numpy() != sixth.numpy())),
            "model_call_differ": bool(np.any(model(x).numpy() != model(x).numpy()))}


@case
def custom_steps_with_steps_per_execution(tf):
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                               self.trainable_variables))
            return {"loss": loss}

        def predict_step(self, data):
            x = data[0] if isinstance(data, tuple) else data
            return self(x) + 1.0

    x, y = _regression_data()
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), steps_per_execution=2)
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    return {"history": history.history, "weights": model.weights,
            "predict": model.predict(x, batch_size=5, verbose=0)}


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
    return {"predict": wrapper.predict(x, batch_size=5, verbose=0),
            "evaluate": wrapper.evaluate(x, y, batch_size=6, verbose=0, return_dict=True), "built": wrapper.built}


@case
def custom_train_step_with_default_validation(tf):
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                               self.trainable_variables))
            for metric in self.metrics:
                metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    x, y = _regression_data(16)
    model = _dense_functional(tf, CustomModel)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    history = model.fit(x[:12], y[:12], batch_size=4, epochs=3, shuffle=False, verbose=0,
                        validation_data=(x[12:], y[12:]))
    try:
        model.train_on_batch(x[:4], y[:4])  # TF passes (x, y, sample_weight): this train_step cannot unpack it
    except ValueError as error:
        unpacked = str(error)
    return {"history": history.history, "weights": model.weights, "train_on_batch": unpacked}


def main(out_path: str) -> None:
    import tensorflow as tf

    outcomes = {name: run_case(body, tf) for name, body in CASES.items()}
    with open(out_path, "wb") as stream:
        pickle.dump(outcomes, stream)


if __name__ == "__main__":
    main(sys.argv[1])
