"""TensorFlow's Core API tutorials (site/en/guide/core/), cell by cell, run with TF and with tapeshim.

The same rules as tests/test_guides.py: the tutorial's code with only the
import changed, except that values TF draws at random (`tf.random.uniform`,
`tf.random.shuffle`, `Dataset.shuffle`) come from a seeded numpy generator or
a fixed order (tapeshim's random streams are not TF's bit streams), data sets
come from scikit-learn or seeded numpy instead of downloads, training runs for a
few epochs, and plotting and SavedModel-export cells are left out (the export
module's `tf.function` is called directly instead).
"""

from __future__ import annotations

import numpy as np
from guides_keras import printed

import oracle
from oracle import Raised, check


def uniform(tf, shape, seed=22):
    """Seeded float32 values in [0, 1), for the tutorials' `tf.random.uniform(shape, seed=22)`."""
    return tf.constant(oracle.uniform(shape, seed))


# Quickstart for the TensorFlow Core APIs (quickstart_core.ipynb) ---------------------------------------


def _auto_mpg_like():
    """392 rows shaped like the auto-mpg table: MPG, six numeric columns, origin in {1, 2, 3} (seeded)."""
    rng = np.random.default_rng(0)
    rows = 392
    numeric = rng.normal(size=(rows, 6)) * [1.7, 100.0, 38.0, 850.0, 2.8, 3.7] + [5.5, 194.0, 104.0, 2978.0, 15.5, 76.0]
    origin = rng.integers(1, 4, size=(rows, 1))
    mpg = 46.0 - 0.0077 * numeric[:, 3:4] + rng.normal(size=(rows, 1))
    table = np.concatenate([mpg, numeric, origin], axis=1)
    return table[rng.permutation(rows)]  # in place of tf.random.shuffle(dataset_tf, seed=22)


def quickstart_core(tf):
    out = {}
    dataset_shuffled = tf.convert_to_tensor(_auto_mpg_like(), dtype=tf.float32)
    train_data, test_data = dataset_shuffled[100:], dataset_shuffled[:100]
    x_train, y_train = train_data[:, 1:], train_data[:, 0]
    x_test, y_test = test_data[:, 1:], test_data[:, 0]

    def onehot_origin(x):
        origin = tf.cast(x[:, -1], tf.int32)
        # Use `origin - 1` to account for 1-indexed feature
        origin_oh = tf.one_hot(origin - 1, 3)
        x_ohe = tf.concat([x[:, :-1], origin_oh], axis=1)
        return x_ohe

    x_train_ohe, x_test_ohe = onehot_origin(x_train), onehot_origin(x_test)
    out["cell 5"] = x_train_ohe.numpy()

    class Normalize(tf.Module):
        def __init__(self, x):
            self.mean = tf.math.reduce_mean(x, axis=0)
            self.std = tf.math.reduce_std(x, axis=0)

        def norm(self, x):
            return (x - self.mean) / self.std

        def unnorm(self, x):
            return (x * self.std) + self.mean

    norm_x = Normalize(x_train_ohe)
    norm_y = Normalize(y_train)
    x_train_norm, y_train_norm = norm_x.norm(x_train_ohe), norm_y.norm(y_train)
    x_test_norm, y_test_norm = norm_x.norm(x_test_ohe), norm_y.norm(y_test)

    class LinearRegression(tf.Module):
        def __init__(self):
            self.built = False

        @tf.function
        def __call__(self, x):
            # Initialize the model parameters on the first call
            if not self.built:
                rand_w = uniform(tf, [x.shape[-1], 1])
                rand_b = uniform(tf, [], seed=23)
                self.w = tf.Variable(rand_w)
                self.b = tf.Variable(rand_b)
                self.built = True
            y = tf.add(tf.matmul(x, self.w), self.b)
            return tf.squeeze(y, axis=1)

    lin_reg = LinearRegression()
    prediction = lin_reg(x_train_norm[:1])
    prediction_unnorm = norm_y.unnorm(prediction)
    out["cell 9"] = prediction_unnorm.numpy()

    def mse_loss(y_pred, y):
        return tf.reduce_mean(tf.square(y_pred - y))

    batch_size = 64
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train_norm, y_train_norm)).batch(batch_size)
    test_dataset = tf.data.Dataset.from_tensor_slices((x_test_norm, y_test_norm)).batch(batch_size)

    epochs = 12
    learning_rate = 0.01
    train_losses, test_losses = [], []
    with printed() as text:
        for epoch in range(epochs):
            batch_losses_train, batch_losses_test = [], []
            for x_batch, y_batch in train_dataset:
                with tf.GradientTape() as tape:
                    y_pred_batch = lin_reg(x_batch)
                    batch_loss = mse_loss(y_pred_batch, y_batch)
                grads = tape.gradient(batch_loss, lin_reg.variables)
                for g, v in zip(grads, lin_reg.variables):
                    v.assign_sub(learning_rate * g)
                batch_losses_train.append(batch_loss)
            for x_batch, y_batch in test_dataset:
                y_pred_batch = lin_reg(x_batch)
                batch_loss = mse_loss(y_pred_batch, y_batch)
                batch_losses_test.append(batch_loss)
            train_loss = tf.reduce_mean(batch_losses_train)
            test_loss = tf.reduce_mean(batch_losses_test)
            train_losses.append(train_loss)
            test_losses.append(test_loss)
            if epoch % 10 == 0:
                print(f"Mean squared error for step {epoch}: {train_loss.numpy():0.3f}")
        print(f"\nFinal train loss: {train_loss:0.3f}")
        print(f"Final test loss: {test_loss:0.3f}")
    out["cell 12"] = (train_losses, test_losses, text.getvalue())

    class ExportModule(tf.Module):
        def __init__(self, model, extract_features, norm_x, norm_y):
            self.model = model
            self.extract_features = extract_features
            self.norm_x = norm_x
            self.norm_y = norm_y

        @tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
        def __call__(self, x):
            x = self.extract_features(x)
            x = self.norm_x.norm(x)
            y = self.model(x)
            y = self.norm_y.unnorm(y)
            return y

    lin_reg_export = ExportModule(model=lin_reg, extract_features=onehot_origin, norm_x=norm_x, norm_y=norm_y)
    test_preds = lin_reg_export(x_test)
    out["cell 17"] = test_preds[:10].numpy()
    return out


def test_quickstart_core():
    assert not isinstance(check(quickstart_core), Raised)  # the tutorial ran (in TF too)


# Logistic regression for binary classification with Core APIs (logistic_regression_core.ipynb) --------


def _breast_cancer():
    """The Wisconsin breast cancer data (the tutorial's download), from scikit-learn; 75% for training."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    order = np.random.default_rng(1).permutation(len(data.target))
    cut = int(0.75 * len(order))
    diagnosis = 1 - data.target  # the tutorial's labels: 1 for malignant
    return (data.data[order[:cut]], diagnosis[order[:cut]]), (data.data[order[cut:]], diagnosis[order[cut:]])


def logistic_regression_core(tf):
    out = {}
    (x_train, y_train), (x_test, y_test) = _breast_cancer()
    x_train, y_train = tf.convert_to_tensor(x_train, dtype=tf.float32), tf.convert_to_tensor(y_train, dtype=tf.float32)
    x_test, y_test = tf.convert_to_tensor(x_test, dtype=tf.float32), tf.convert_to_tensor(y_test, dtype=tf.float32)

    class Normalize(tf.Module):
        def __init__(self, x):
            self.mean = tf.Variable(tf.math.reduce_mean(x, axis=0))
            self.std = tf.Variable(tf.math.reduce_std(x, axis=0))

        def norm(self, x):
            return (x - self.mean) / self.std

        def unnorm(self, x):
            return (x * self.std) + self.mean

    norm_x = Normalize(x_train)
    x_train_norm, x_test_norm = norm_x.norm(x_train), norm_x.norm(x_test)
    x = tf.linspace(-10, 10, 500)
    x = tf.cast(x, tf.float32)
    out["sigmoid"] = tf.math.sigmoid(x)

    def log_loss(y_pred, y):
        ce = tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=y_pred)
        return tf.reduce_mean(ce)

    class LogisticRegression(tf.Module):
        def __init__(self):
            self.built = False

        def __call__(self, x, train=True):
            if not self.built:
                rand_w = uniform(tf, [x.shape[-1], 1])
                rand_b = uniform(tf, [], seed=23)
                self.w = tf.Variable(rand_w)
                self.b = tf.Variable(rand_b)
                self.built = True
            z = tf.add(tf.matmul(x, self.w), self.b)
            z = tf.squeeze(z, axis=1)
            if train:
                return z
            return tf.sigmoid(z)

    log_reg = LogisticRegression()
    y_pred = log_reg(x_train_norm[:5], train=False)
    out["first predictions"] = y_pred.numpy()

    def predict_class(y_pred, thresh=0.5):
        return tf.cast(y_pred > thresh, tf.float32)

    def accuracy(y_pred, y):
        y_pred = tf.math.sigmoid(y_pred)
        y_pred_class = predict_class(y_pred)
        check_equal = tf.cast(y_pred_class == y, tf.float32)
        acc_val = tf.reduce_mean(check_equal)
        return acc_val

    batch_size = 64
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train_norm, y_train)).batch(batch_size)
    test_dataset = tf.data.Dataset.from_tensor_slices((x_test_norm, y_test)).batch(batch_size)
    epochs = 5
    learning_rate = 0.01
    train_losses, test_losses = [], []
    train_accs, test_accs = [], []
    with printed() as text:
        for epoch in range(epochs):
            batch_losses_train, batch_accs_train = [], []
            batch_losses_test, batch_accs_test = [], []
            for x_batch, y_batch in train_dataset:
                with tf.GradientTape() as tape:
                    y_pred_batch = log_reg(x_batch)
                    batch_loss = log_loss(y_pred_batch, y_batch)
                batch_acc = accuracy(y_pred_batch, y_batch)
                grads = tape.gradient(batch_loss, log_reg.variables)
                for g, v in zip(grads, log_reg.variables):
                    v.assign_sub(learning_rate * g)
                batch_losses_train.append(batch_loss)
                batch_accs_train.append(batch_acc)
            for x_batch, y_batch in test_dataset:
                y_pred_batch = log_reg(x_batch)
                batch_loss = log_loss(y_pred_batch, y_batch)
                batch_acc = accuracy(y_pred_batch, y_batch)
                batch_losses_test.append(batch_loss)
                batch_accs_test.append(batch_acc)
            train_loss, train_acc = tf.reduce_mean(batch_losses_train), tf.reduce_mean(batch_accs_train)
            test_loss, test_acc = tf.reduce_mean(batch_losses_test), tf.reduce_mean(batch_accs_test)
            train_losses.append(train_loss)
            train_accs.append(train_acc)
            test_losses.append(test_loss)
            test_accs.append(test_acc)
            if epoch % 20 == 0:
                print(f"Epoch: {epoch}, Training log loss: {train_loss:.3f}")
        print(f"Final training log loss: {train_losses[-1]:.3f}")
        print(f"Final testing log Loss: {test_losses[-1]:.3f}")
        print(f"Final training accuracy: {train_accs[-1]:.3f}")
        print(f"Final testing accuracy: {test_accs[-1]:.3f}")
    out["training"] = (train_losses, test_losses, train_accs, test_accs, text.getvalue())

    y_pred_train, y_pred_test = log_reg(x_train_norm, train=False), log_reg(x_test_norm, train=False)
    out["classes"] = (predict_class(y_pred_train), predict_class(y_pred_test))

    class ExportModule(tf.Module):
        def __init__(self, model, norm_x, class_pred):
            self.model = model
            self.norm_x = norm_x
            self.class_pred = class_pred

        @tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
        def __call__(self, x):
            x = self.norm_x.norm(x)
            y = self.model(x, train=False)
            y = self.class_pred(y)
            return y

    log_reg_export = ExportModule(model=log_reg, norm_x=norm_x, class_pred=predict_class)
    test_preds = log_reg_export(x_test)
    out["export"] = test_preds[:10].numpy()
    return out


def test_logistic_regression_core():
    assert not isinstance(check(logistic_regression_core), Raised)  # the tutorial ran (in TF too)


# Optimizers with Core APIs (optimizers_core.ipynb) ------------------------------------------------------


def optimizers_core(tf):
    out = {}

    class GradientDescent(tf.Module):
        def __init__(self, learning_rate=1e-3):
            self.learning_rate = learning_rate
            self.title = f"Gradient descent optimizer: learning rate={self.learning_rate}"

        def apply_gradients(self, grads, vars):
            for grad, var in zip(grads, vars):
                var.assign_sub(self.learning_rate * grad)

    x_vals = tf.linspace(-2, 2, 201)
    x_vals = tf.cast(x_vals, tf.float32)

    def loss(x):
        return 2 * (x**4) + 3 * (x**3) + 2

    def grad(f, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            result = f(x)
        return tape.gradient(result, x)

    out["cell 5"] = (loss(x_vals), grad(loss, x_vals), loss(0), loss(-9 / 8))

    def convergence_test(optimizer, loss_fn, grad_fn=grad, init_val=2.0, max_iters=60):
        print(optimizer.title)
        print("-------------------------------")
        x_star = tf.Variable(init_val)
        param_path = []
        converged = False

        for iter in range(1, max_iters + 1):
            x_grad = grad_fn(loss_fn, x_star)
            if tf.math.is_nan(x_grad):
                print(f"Gradient exploded at iteration {iter}\n")
                return []
            x_old = x_star.numpy()
            optimizer.apply_gradients([x_grad], [x_star])
            param_path.append(x_star.numpy())
            if x_star == x_old:
                print(f"Converged in {iter} iterations\n")
                converged = True
                break
        if not converged:
            print(f"Exceeded maximum of {max_iters} iterations. Test terminated.\n")
        return np.array(param_path)

    class Momentum(tf.Module):
        def __init__(self, learning_rate=1e-3, momentum=0.7):
            self.learning_rate = learning_rate
            self.momentum = momentum
            self.change = 0.0
            self.title = f"Gradient descent optimizer: learning rate={self.learning_rate}"

        def apply_gradients(self, grads, vars):
            for grad, var in zip(grads, vars):
                curr_change = self.learning_rate * grad + self.momentum * self.change
                var.assign_sub(curr_change)
                self.change = curr_change

    class Adam(tf.Module):
        def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, ep=1e-7):
            self.beta_1 = beta_1
            self.beta_2 = beta_2
            self.learning_rate = learning_rate
            self.ep = ep
            self.t = 1.0
            self.v_dvar, self.s_dvar = [], []
            self.title = f"Adam: learning rate={self.learning_rate}"
            self.built = False

        def apply_gradients(self, grads, vars):
            if not self.built:
                for var in vars:
                    v = tf.Variable(tf.zeros(shape=var.shape))
                    s = tf.Variable(tf.zeros(shape=var.shape))
                    self.v_dvar.append(v)
                    self.s_dvar.append(s)
                self.built = True
            for i, (d_var, var) in enumerate(zip(grads, vars)):
                self.v_dvar[i] = self.beta_1 * self.v_dvar[i] + (1 - self.beta_1) * d_var
                self.s_dvar[i] = self.beta_2 * self.s_dvar[i] + (1 - self.beta_2) * tf.square(d_var)
                v_dvar_bc = self.v_dvar[i] / (1 - (self.beta_1**self.t))
                s_dvar_bc = self.s_dvar[i] / (1 - (self.beta_2**self.t))
                var.assign_sub(self.learning_rate * (v_dvar_bc / (tf.sqrt(s_dvar_bc) + self.ep)))
            self.t += 1.0

    learning_rates = [1e-3, 1e-2, 1e-1]
    for name, optimizer_class in (("gd", GradientDescent), ("momentum", Momentum), ("adam", Adam)):
        with printed() as text:
            paths = {
                learning_rate: convergence_test(optimizer_class(learning_rate=learning_rate), loss_fn=loss)
                for learning_rate in learning_rates
            }
        out[name] = (paths, text.getvalue())
    return out


def test_optimizers_core():
    assert not isinstance(check(optimizers_core), Raised)  # the tutorial ran (in TF too)


# Multilayer perceptrons for digit classification with Core APIs (mlp_core.ipynb) -----------------------
# scikit-learn's 8x8 digits (scaled to MNIST's 0-255 uint8 pixels) instead of the MNIST download.


def _digits():
    from sklearn.datasets import load_digits

    data = load_digits()
    images = (data.images * 255 / 16).round().astype(np.uint8)[..., np.newaxis]
    labels = data.target.astype(np.int64)
    return (images[400:], labels[400:]), (images[200:400], labels[200:400]), (images[:200], labels[:200])


def mlp_core(tf):
    out = {}
    (x_train_raw, y_train_raw), (x_val_raw, y_val_raw), (x_test, y_test) = _digits()
    train_data = tf.data.Dataset.from_tensor_slices((x_train_raw, y_train_raw)).batch(128)
    val_data = tf.data.Dataset.from_tensor_slices((x_val_raw, y_val_raw)).batch(128)
    x_test, y_test = tf.constant(x_test), tf.constant(y_test)
    pixels = 64  # the tutorial's 784 for 28x28 MNIST

    def preprocess(x, y):
        # Reshaping the data
        x = tf.reshape(x, shape=[-1, pixels])
        # Rescaling the data
        x = x / 255
        return x, y

    train_data, val_data = train_data.map(preprocess), val_data.map(preprocess)
    x = tf.linspace(-2, 2, 201)
    x = tf.cast(x, tf.float32)
    out["relu"] = tf.nn.relu(x)
    x = tf.linspace(-4, 4, 201)
    x = tf.cast(x, tf.float32)
    out["softmax"] = tf.nn.softmax(x, axis=0)

    def xavier_init(shape):
        in_dim, out_dim = shape
        xavier_lim = tf.sqrt(6.0) / tf.sqrt(tf.cast(in_dim + out_dim, tf.float32))
        # tf.random.uniform(shape=(in_dim, out_dim), minval=-xavier_lim, maxval=xavier_lim, seed=22), seeded:
        weight_vals = uniform(tf, (in_dim, out_dim), seed=in_dim + out_dim) * 2 * xavier_lim - xavier_lim
        return weight_vals

    class DenseLayer(tf.Module):
        def __init__(self, out_dim, weight_init=xavier_init, activation=tf.identity):
            self.out_dim = out_dim
            self.weight_init = weight_init
            self.activation = activation
            self.built = False

        def __call__(self, x):
            if not self.built:
                self.in_dim = x.shape[1]
                self.w = tf.Variable(self.weight_init(shape=(self.in_dim, self.out_dim)))
                self.b = tf.Variable(tf.zeros(shape=(self.out_dim,)))
                self.built = True
            z = tf.add(tf.matmul(x, self.w), self.b)
            return self.activation(z)

    class MLP(tf.Module):
        def __init__(self, layers):
            self.layers = layers

        @tf.function
        def __call__(self, x, preds=False):
            for layer in self.layers:
                x = layer(x)
            return x

    hidden_layer_1_size = 700
    hidden_layer_2_size = 500
    output_size = 10
    mlp_model = MLP(
        [
            DenseLayer(out_dim=hidden_layer_1_size, activation=tf.nn.relu),
            DenseLayer(out_dim=hidden_layer_2_size, activation=tf.nn.relu),
            DenseLayer(out_dim=output_size),
        ]
    )

    def cross_entropy_loss(y_pred, y):
        sparse_ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=y_pred)
        return tf.reduce_mean(sparse_ce)

    def accuracy(y_pred, y):
        class_preds = tf.argmax(tf.nn.softmax(y_pred), axis=1)
        is_equal = tf.equal(y, class_preds)
        return tf.reduce_mean(tf.cast(is_equal, tf.float32))

    class Adam:
        def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, ep=1e-7):
            self.beta_1 = beta_1
            self.beta_2 = beta_2
            self.learning_rate = learning_rate
            self.ep = ep
            self.t = 1.0
            self.v_dvar, self.s_dvar = [], []
            self.built = False

        def apply_gradients(self, grads, vars):
            if not self.built:
                for var in vars:
                    v = tf.Variable(tf.zeros(shape=var.shape))
                    s = tf.Variable(tf.zeros(shape=var.shape))
                    self.v_dvar.append(v)
                    self.s_dvar.append(s)
                self.built = True
            for i, (d_var, var) in enumerate(zip(grads, vars)):
                self.v_dvar[i].assign(self.beta_1 * self.v_dvar[i] + (1 - self.beta_1) * d_var)
                self.s_dvar[i].assign(self.beta_2 * self.s_dvar[i] + (1 - self.beta_2) * tf.square(d_var))
                v_dvar_bc = self.v_dvar[i] / (1 - (self.beta_1**self.t))
                s_dvar_bc = self.s_dvar[i] / (1 - (self.beta_2**self.t))
                var.assign_sub(self.learning_rate * (v_dvar_bc / (tf.sqrt(s_dvar_bc) + self.ep)))
            self.t += 1.0
            return

    def train_step(x_batch, y_batch, loss, acc, model, optimizer):
        with tf.GradientTape() as tape:
            y_pred = model(x_batch)
            batch_loss = loss(y_pred, y_batch)
        batch_acc = acc(y_pred, y_batch)
        grads = tape.gradient(batch_loss, model.variables)
        optimizer.apply_gradients(grads, model.variables)
        return batch_loss, batch_acc

    def val_step(x_batch, y_batch, loss, acc, model):
        y_pred = model(x_batch)
        batch_loss = loss(y_pred, y_batch)
        batch_acc = acc(y_pred, y_batch)
        return batch_loss, batch_acc

    def train_model(mlp, train_data, val_data, loss, acc, optimizer, epochs):
        train_losses, train_accs = [], []
        val_losses, val_accs = [], []
        for epoch in range(epochs):
            batch_losses_train, batch_accs_train = [], []
            batch_losses_val, batch_accs_val = [], []
            for x_batch, y_batch in train_data:
                batch_loss, batch_acc = train_step(x_batch, y_batch, loss, acc, mlp, optimizer)
                batch_losses_train.append(batch_loss)
                batch_accs_train.append(batch_acc)
            for x_batch, y_batch in val_data:
                batch_loss, batch_acc = val_step(x_batch, y_batch, loss, acc, mlp)
                batch_losses_val.append(batch_loss)
                batch_accs_val.append(batch_acc)
            train_loss, train_acc = tf.reduce_mean(batch_losses_train), tf.reduce_mean(batch_accs_train)
            val_loss, val_acc = tf.reduce_mean(batch_losses_val), tf.reduce_mean(batch_accs_val)
            train_losses.append(train_loss)
            train_accs.append(train_acc)
            val_losses.append(val_loss)
            val_accs.append(val_acc)
            print(f"Epoch: {epoch}")
            print(f"Training loss: {train_loss:.3f}, Training accuracy: {train_acc:.3f}")
            print(f"Validation loss: {val_loss:.3f}, Validation accuracy: {val_acc:.3f}")
        return train_losses, train_accs, val_losses, val_accs

    with printed() as text:
        history = train_model(
            mlp_model, train_data, val_data, loss=cross_entropy_loss, acc=accuracy, optimizer=Adam(), epochs=2
        )
    out["training"] = (history, text.getvalue())

    class ExportModule(tf.Module):
        def __init__(self, model, preprocess, class_pred):
            self.model = model
            self.preprocess = preprocess
            self.class_pred = class_pred

        @tf.function(input_signature=[tf.TensorSpec(shape=[None, None, None, None], dtype=tf.uint8)])
        def __call__(self, x):
            x = self.preprocess(x)
            y = self.model(x)
            y = self.class_pred(y)
            return y

    def preprocess_test(x):
        x = tf.reshape(x, shape=[-1, pixels])
        x = x / 255
        return x

    def class_pred_test(y):
        return tf.argmax(tf.nn.softmax(y), axis=1)

    mlp_model_export = ExportModule(model=mlp_model, preprocess=preprocess_test, class_pred=class_pred_test)

    def accuracy_score(y_pred, y):
        is_equal = tf.equal(y_pred, y)
        return tf.reduce_mean(tf.cast(is_equal, tf.float32))

    test_classes = mlp_model_export(x_test)
    test_acc = accuracy_score(test_classes, y_test)
    with printed() as text:
        print(f"Test Accuracy: {test_acc:.3f}")
    out["test"] = (test_classes, test_acc, text.getvalue())
    with printed() as text:
        print("Accuracy breakdown by digit:")
        print("---------------------------")
        label_accs = {}
        for label in range(10):
            label_ind = y_test == label
            # extract predictions for specific true label
            pred_label = test_classes[label_ind]
            labels = y_test[label_ind]
            # compute class-wise accuracy
            label_accs[accuracy_score(pred_label, labels).numpy()] = label
        for key in sorted(label_accs):
            print(f"Digit {label_accs[key]}: {key:.3f}")
    out["accuracy by digit"] = (sorted((float(key), label) for key, label in label_accs.items()), text.getvalue())
    return out


def test_mlp_core():
    assert not isinstance(check(mlp_core), Raised)  # the tutorial ran (in TF too)
