"""The guide bodies that use tf.keras (tests/test_guides.py runs and compares them).

Run as a script (`python guides_keras.py OUT.pkl`) with KERAS_BACKEND=tensorflow,
it imports real TensorFlow, runs every body registered with `keras_body` and
pickles the outcomes (keras_oracle.run_case), because Keras picks one backend
per process. The helpers here (seeded replacements for TF's random draws,
capturing what a cell prints) are shared with test_guides.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from keras_oracle import run_case  # noqa: E402

import oracle_data  # noqa: E402

KERAS_BODIES: dict[str, Callable[[Any], Any]] = {}


def keras_body(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Registers a body that uses tf.keras (compared against TF's Keras in a child process)."""
    KERAS_BODIES[fn.__name__] = fn
    return fn


def normal(tf: Any, shape: Any, seed: int = 0) -> Any:
    """A float32 tensor of seeded standard normal values, for the guides' `tf.random.normal(shape)`."""
    return tf.constant(oracle_data.normal(shape, seed))


def seed_weights(layer: Any, seed: int = 0) -> None:
    """Sets every weight of a built Keras layer or model from a seeded generator (for Keras's initializers)."""
    rng = np.random.default_rng(seed)
    layer.set_weights([(0.5 * rng.standard_normal(w.shape)).astype(np.float32) for w in layer.get_weights()])


def error_class(cell: Callable[[], Any]) -> str | None:
    """The class name of what `cell` raises, or None: for guide cells that fail in TF 2.21 as written."""
    try:
        cell()
    except Exception as exc:  # noqa: BLE001 - the class is the result
        return type(exc).__name__
    return None


@contextlib.contextmanager
def printed() -> Any:
    """Captures what the block prints; the StringIO's value is the text."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield buffer


def line_data(tf: Any) -> tuple:
    """Basic training loops, cell 3: points on the line 3x + 2 with (seeded) noise."""
    TRUE_W = 3.0
    TRUE_B = 2.0
    NUM_EXAMPLES = 201
    x = tf.linspace(-2, 2, NUM_EXAMPLES)
    x = tf.cast(x, tf.float32)

    def f(x):
        return x * TRUE_W + TRUE_B

    noise = normal(tf, [NUM_EXAMPLES])
    y = f(x) + noise
    return x, y, f


@keras_body
def autodiff_keras_layer(tf):
    layer = tf.keras.layers.Dense(2, activation="relu")
    x = tf.constant([[1.0, 2.0, 3.0]])
    layer.build(x.shape)
    seed_weights(layer)
    with tf.GradientTape() as tape:
        # Forward pass
        y = layer(x)
        loss = tf.reduce_mean(y**2)
    # Calculate gradients with respect to every trainable variable
    grad = tape.gradient(loss, layer.trainable_variables)
    with printed() as text:
        for var, g in zip(layer.trainable_variables, grad):
            print(f"{var.name}, shape: {g.shape}")
    return loss, grad, text.getvalue()


@keras_body
def advanced_autodiff_input_gradient_regularization(tf):
    x = normal(tf, [7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    layer.build(x.shape)
    seed_weights(layer)
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    return y, g1, g1_mag, dg1_mag, [var.shape.as_list() for var in dg1_mag]


@keras_body
def advanced_autodiff_jacobians_of_a_layer(tf):
    out = {}
    x = normal(tf, [7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    layer.build(x.shape)
    seed_weights(layer)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    out["cell 19"] = y.shape.as_list()
    out["cell 20"] = list(layer.kernel.shape)
    j = tape.jacobian(y, layer.kernel)
    out["cell 21"] = j
    g = tape.gradient(y, layer.kernel)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    out["cell 22"] = g
    return out


@keras_body
def advanced_autodiff_hessian_newton_step(tf):
    x = normal(tf, [7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    layer1.build(x.shape)
    layer2.build([7, 8])
    seed_weights(layer1, 1)
    seed_weights(layer2, 2)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    with printed() as text:
        print(f"layer.kernel.shape: {layer1.kernel.shape}")
        print(f"h.shape: {h.shape}")
    n_params = tf.reduce_prod(layer1.kernel.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    # h_mat + eps*I is nearly singular (ReLU), so the update itself amplifies float32 rounding past any
    # fixed tolerance; the solve is compared through what it must satisfy, (h_mat + eye_eps) @ update == g_vec.
    return g, h, text.getvalue(), tf.matmul(h_mat + eye_eps, update), list(layer1.kernel.shape)


@keras_body
def advanced_autodiff_batch_jacobian(tf):
    out = {}
    x = normal(tf, [7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    layer1.build(x.shape)
    layer2.build([7, 8])
    seed_weights(layer1, 1)
    seed_weights(layer2, 2)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    out["cell 30"] = y.shape.as_list()
    j = tape.jacobian(y, x)
    out["cell 31"] = j
    with printed() as text:
        j_sum = tf.reduce_sum(j, axis=2)
        print(j_sum.shape)
        j_select = tf.einsum("bxby->bxy", j)
        print(j_select.shape)
    out["cell 34"] = (j_sum, j_select, text.getvalue())
    jb = tape.batch_jacobian(y, x)
    out["cell 35"] = jb
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    return out


@keras_body
def advanced_autodiff_batch_jacobian_with_batch_norm(tf):
    x = normal(tf, [7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    bn = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    layer1.build(x.shape)
    layer2.build([7, 8])
    seed_weights(layer1, 1)
    seed_weights(layer2, 2)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    j = tape.jacobian(y, x)
    jb = tape.batch_jacobian(y, x)
    with printed() as text:
        print(f"j.shape: {j.shape}")
        print(f"jb.shape: {jb.shape}")
    return j, jb, text.getvalue()


@keras_body
def intro_to_modules_keras_layers(tf):
    out = {}

    class MyDense(tf.keras.layers.Layer):
        # Adding **kwargs to support base Keras layer arguments
        def __init__(self, in_features, out_features, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(normal(tf, [in_features, out_features]), name="w")
            self.b = tf.Variable(tf.zeros([out_features]), name="b")

        def call(self, x):
            y = tf.matmul(x, self.w) + self.b
            return tf.nn.relu(y)

    simple_layer = MyDense(name="simple", in_features=3, out_features=3)
    # As written, cell 26 calls the layer on a Python list, which TF 2.21's Keras refuses (ValueError: only
    # input tensors may be passed as positional arguments); then the same call on a tensor.
    out["cell 26 as written"] = error_class(lambda: simple_layer([[2.0, 2.0, 2.0]]))
    out["cell 26"] = simple_layer(tf.constant([[2.0, 2.0, 2.0]]))

    class FlexibleDense(tf.keras.layers.Layer):
        # Note the added `**kwargs`, as Keras supports many arguments
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):  # Create the state of the layer (weights)
            self.w = tf.Variable(normal(tf, [input_shape[-1], self.out_features], seed=1), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")

        def call(self, inputs):  # Defines the computation from inputs to outputs
            return tf.matmul(inputs, self.w) + self.b

    flexible_dense = FlexibleDense(out_features=3)
    out["cell 28"] = flexible_dense.variables
    out["cell 29"] = flexible_dense(tf.constant([[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]))
    out["cell 30"] = flexible_dense.variables
    try:
        print("Model results:", flexible_dense(tf.constant([[2.0, 2.0, 2.0, 2.0]])))
        out["cell 31"] = "no error"
    except tf.errors.InvalidArgumentError as e:
        out["cell 31"] = type(e).__name__
    return out


@keras_body
def intro_to_modules_keras_models(tf):
    out = {}

    class FlexibleDense(tf.keras.layers.Layer):
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):
            self.w = tf.Variable(normal(tf, [input_shape[-1], self.out_features], seed=self.out_features), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    class MySequentialModel(tf.keras.Model):
        def __init__(self, name=None, **kwargs):
            super().__init__(**kwargs)
            self.dense_1 = FlexibleDense(out_features=3)
            self.dense_2 = FlexibleDense(out_features=2)

        def call(self, x):
            x = self.dense_1(x)
            return self.dense_2(x)

    my_sequential_model = MySequentialModel(name="the_model")
    out["cell 32"] = my_sequential_model(tf.constant([[2.0, 2.0, 2.0]]))
    out["cell 33"] = my_sequential_model.variables
    # Cell 34 fails in TF 2.21 (AttributeError): Keras 3 models have no `submodules`.
    out["cell 34"] = error_class(lambda: my_sequential_model.submodules)

    inputs = tf.keras.Input(
        shape=[
            3,
        ]
    )
    x = FlexibleDense(3)(inputs)
    x = FlexibleDense(2)(x)
    my_functional_model = tf.keras.Model(inputs=inputs, outputs=x)
    with printed():
        my_functional_model.summary()
    out["cell 36"] = my_functional_model(tf.constant([[2.0, 2.0, 2.0]]))
    return out


@keras_body
def intro_to_modules_keras_saving(tf):
    class FlexibleDense(tf.keras.layers.Layer):
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):
            self.w = tf.Variable(normal(tf, [input_shape[-1], self.out_features], seed=self.out_features), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    import keras  # as the guide: Keras itself, on the backend this process uses

    @keras.saving.register_keras_serializable()
    class MySequentialModel(tf.keras.Model):
        def __init__(self, name=None, **kwargs):
            super().__init__(**kwargs)
            self.dense_1 = FlexibleDense(out_features=3)
            self.dense_2 = FlexibleDense(out_features=2)

        def call(self, x):
            x = self.dense_1(x)
            return self.dense_2(x)

    my_sequential_model = MySequentialModel(name="the_model")
    first = my_sequential_model(tf.constant([[2.0, 2.0, 2.0]]))
    path = os.path.join(tempfile.mkdtemp(), "exname_of_file.keras")
    my_sequential_model.save(path)
    reconstructed_model = tf.keras.models.load_model(path)
    return first, reconstructed_model(tf.constant([[2.0, 2.0, 2.0]]))


@keras_body
def basic_training_loops_keras(tf):
    out = {}
    x, y, f = line_data(tf)

    def loss(target_y, predicted_y):
        return tf.reduce_mean(tf.square(target_y - predicted_y))

    class MyModelKeras(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def call(self, x):
            return self.w * x + self.b

    def train(model, x, y, learning_rate):
        with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(learning_rate * dw)
        model.b.assign_sub(learning_rate * db)

    keras_model = MyModelKeras()
    for _ in range(10):  # the guide's training_loop, without its prints
        train(keras_model, x, y, learning_rate=0.1)
    out["cell 13"] = (keras_model.w, keras_model.b)
    try:
        keras_model.save_weights(os.path.join(tempfile.mkdtemp(), "my_checkpoint"))
        out["cell 13 save_weights"] = "saved"
    except ValueError as e:  # Keras 3 asks for a `.weights.h5` file name
        out["cell 13 save_weights"] = type(e).__name__

    keras_model = MyModelKeras()
    # As written, cell 14 passes loss=tf.keras.losses.mean_squared_error, which TF 2.21's tf.keras does not
    # have (AttributeError); then the same loss as its class.
    out["cell 14 as written"] = error_class(lambda: tf.keras.losses.mean_squared_error)
    keras_model.compile(
        run_eagerly=False,
        optimizer=tf.keras.optimizers.SGD(learning_rate=0.1),
        loss=tf.keras.losses.MeanSquaredError(),
    )
    out["cell 15 x.shape[0]"] = x.shape[0]
    history = keras_model.fit(x, y, epochs=10, batch_size=1000, verbose=0)
    out["cell 15"] = (history.history["loss"], keras_model.w, keras_model.b)
    return out


def _iris(tf):
    from sklearn.datasets import load_iris

    data = load_iris()
    order = np.random.default_rng(0).permutation(len(data.target))
    features = data.data[order].astype(np.float32)
    labels = data.target[order].astype(np.int64)
    ds_test = tf.data.Dataset.from_tensor_slices((features[:30], labels[:30]))
    ds_train = tf.data.Dataset.from_tensor_slices((features[30:], labels[30:]))
    return ds_train, ds_test


@keras_body
def custom_training_walkthrough(tf):
    out = {}
    class_names = ["setosa", "versicolor", "virginica"]
    ds_train, ds_test = _iris(tf)
    assert isinstance(ds_test, tf.data.Dataset)
    ds_train_batch = ds_train.batch(32)
    features, labels = next(iter(ds_train_batch))
    out["cell 7"] = (features, labels)

    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),  # input shape required
            tf.keras.layers.Dense(10, activation=tf.nn.relu),
            tf.keras.layers.Dense(3),
        ]
    )
    seed_weights(model)
    predictions = model(features)
    out["cell 10"] = predictions[:5]
    out["cell 11"] = tf.nn.softmax(predictions[:5])
    out["cell 12"] = tf.math.argmax(predictions, axis=1)

    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss(model, x, y, training):
        y_ = model(x, training=training)
        return loss_object(y_true=y, y_pred=y_)

    out["cell 14"] = loss(model, features, labels, training=False)

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss(model, inputs, targets, training=True)
        return loss_value, tape.gradient(loss_value, model.trainable_variables)

    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
    loss_value, grads = grad(model, features, labels)
    out["cell 17"] = [optimizer.iterations.numpy(), loss_value, grads]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    out["cell 17"] += [optimizer.iterations.numpy(), loss(model, features, labels, training=True).numpy()]

    train_loss_results = []
    train_accuracy_results = []
    num_epochs = 3
    with printed() as text:
        for epoch in range(num_epochs):
            epoch_loss_avg = tf.keras.metrics.Mean()
            epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
            for x, y in ds_train_batch:
                loss_value, grads = grad(model, x, y)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                epoch_loss_avg.update_state(loss_value)
                epoch_accuracy.update_state(y, model(x, training=True))
            train_loss_results.append(epoch_loss_avg.result())
            train_accuracy_results.append(epoch_accuracy.result())
            if epoch % 50 == 0:
                print(
                    "Epoch {:03d}: Loss: {:.3f}, Accuracy: {:.3%}".format(
                        epoch, epoch_loss_avg.result(), epoch_accuracy.result()
                    )
                )
    out["cell 18"] = (train_loss_results, train_accuracy_results, text.getvalue())

    test_accuracy = tf.keras.metrics.Accuracy()
    ds_test_batch = ds_test.batch(10)
    for x, y in ds_test_batch:
        logits = model(x, training=False)
        prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
        test_accuracy(prediction, y)
    out["cell 20"] = test_accuracy.result()
    out["cell 21"] = tf.stack([y, prediction], axis=1)

    predict_dataset = tf.convert_to_tensor(
        [
            [
                0.3,
                0.8,
                0.4,
                0.5,
            ],
            [
                0.4,
                0.1,
                0.8,
                0.5,
            ],
            [0.7, 0.9, 0.8, 0.4],
        ]
    )
    predictions = model(predict_dataset, training=False)
    shown = []
    for i, logits in enumerate(predictions):
        class_idx = tf.math.argmax(logits).numpy()
        p = tf.nn.softmax(logits)[class_idx]
        name = class_names[class_idx]
        shown.append((i, name, float(100 * p)))
    out["cell 22"] = shown
    return out


# Training checkpoints (site/en/guide/checkpoint.ipynb) ------------------------------------------------


@keras_body
def checkpoint_guide_training(tf):
    out = {}
    directory = tempfile.mkdtemp()

    class Net(tf.keras.Model):
        """A simple linear model."""

        def __init__(self):
            super(Net, self).__init__()
            self.l1 = tf.keras.layers.Dense(5)

        def call(self, x):
            return self.l1(x)

    net = Net()
    net(tf.zeros([1, 1]))
    seed_weights(net)
    # Cell 5: Keras 3 asks for a `.weights.h5` file name (ValueError in TF 2.21 as written).
    out["cell 5"] = error_class(lambda: net.save_weights(os.path.join(directory, "easy_checkpoint")))

    def toy_dataset():
        inputs = tf.range(10.0)[:, None]
        labels = inputs * 5.0 + tf.range(5.0)[None, :]
        return tf.data.Dataset.from_tensor_slices(dict(x=inputs, y=labels)).repeat().batch(2)

    def train_step(net, example, optimizer):
        """Trains `net` on `example` using `optimizer`."""
        with tf.GradientTape() as tape:
            output = net(example["x"])
            loss = tf.reduce_mean(tf.abs(output - example["y"]))
        variables = net.trainable_variables
        gradients = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(gradients, variables))
        return loss

    opt = tf.keras.optimizers.Adam(0.1)
    dataset = toy_dataset()
    iterator = iter(dataset)
    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net, iterator=iterator)
    manager = tf.train.CheckpointManager(ckpt, os.path.join(directory, "tf_ckpts"), max_to_keep=3)

    def train_and_checkpoint(net, manager):
        ckpt.restore(manager.latest_checkpoint)
        if manager.latest_checkpoint:
            print("Restored from {}".format(os.path.basename(manager.latest_checkpoint)))
        else:
            print("Initializing from scratch.")
        for _ in range(50):
            example = next(iterator)
            loss = train_step(net, example, opt)
            ckpt.step.assign_add(1)
            if int(ckpt.step) % 10 == 0:
                save_path = manager.save()
                print("Saved checkpoint for step {}: {}".format(int(ckpt.step), os.path.basename(save_path)))
                print("loss {:1.2f}".format(loss.numpy()))

    with printed() as text:
        train_and_checkpoint(net, manager)
    out["cell 10"] = (text.getvalue(), [w.numpy() for w in net.weights])

    opt = tf.keras.optimizers.Adam(0.1)
    net = Net()
    # TF 2.21 does not restore a subclassed Keras model that is not built yet (after its first call its kernel
    # keeps the initializer's values), where tapeshim restores it when it is built (reported); the cell is
    # compared with the model built before the restore, which both restore.
    net(tf.zeros([1, 1]))
    dataset = toy_dataset()
    iterator = iter(dataset)
    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net, iterator=iterator)
    manager = tf.train.CheckpointManager(ckpt, os.path.join(directory, "tf_ckpts"), max_to_keep=3)
    ckpt.restore(manager.latest_checkpoint)
    out["cell 11 restored"] = ([w.numpy() for w in net.weights], int(opt.iterations.numpy()), int(ckpt.step))
    with printed() as text:
        train_and_checkpoint(net, manager)
    # The losses cell 11 prints after the restore are not compared: TF also restores the dataset iterator's
    # position (iterator/.ATTRIBUTES/ITERATOR_STATE) and tapeshim does not (reported), so the batches differ.
    out["cell 11"] = (text.getvalue().splitlines()[0], int(ckpt.step))
    out["cell 12"] = [os.path.basename(path) for path in manager.checkpoints]
    return out


from guides_keras_generative import GENERATIVE_BODIES  # noqa: E402 - needs the helpers above

KERAS_BODIES.update(GENERATIVE_BODIES)


def main(out_path: str) -> None:
    """Runs every Keras guide body with real TensorFlow and pickles the outcomes to `out_path`."""
    import tensorflow as tf

    outcomes = {name: run_case(body, tf) for name, body in KERAS_BODIES.items()}
    with open(out_path, "wb") as stream:
        pickle.dump(outcomes, stream)


if __name__ == "__main__":
    main(sys.argv[1])
