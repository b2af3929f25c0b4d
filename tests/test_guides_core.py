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

from oracle import Raised, check


def uniform(tf, shape, seed=22):
    """Seeded float32 values in [0, 1), for the tutorials' `tf.random.uniform(shape, seed=22)`."""
    return tf.constant(np.random.default_rng(seed).uniform(size=shape).astype(np.float32))


# Quickstart for the TensorFlow Core APIs (quickstart_core.ipynb) ---------------------------------------


def _auto_mpg_like():
    """392 rows shaped like the auto-mpg table: MPG, six numeric columns, origin in {1, 2, 3} (seeded)."""
    rng = np.random.default_rng(0)
    rows = 392
    numeric = rng.normal(size=(rows, 6)) * [1.7, 100.0, 38.0, 850.0, 2.8, 3.7] + [5.5, 194.0, 104.0, 2978.0,
                                                                                   15.5, 76.0]
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
            return (x - self.mean)/self.std

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
                print(f'Mean squared error for step {epoch}: {train_loss.numpy():0.3f}')
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
            return (x - self.mean)/self.std

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
                var.assign_sub(self.learning_rate*grad)

    x_vals = tf.linspace(-2, 2, 201)
    x_vals = tf.cast(x_vals, tf.float32)

    def loss(x):
        return 2*(x**4) + 3*(x**3) + 2

    def grad(f, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            result = f(x)
        return tape.gradient(result, x)

    out["cell 5"] = (loss(x_vals), grad(loss, x_vals), loss(0), loss(-9/8))

    def convergence_test(optimizer, loss_fn, grad_fn=grad, init_val=2., max_iters=60):
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
            self.change = 0.
            self.title = f"Gradient descent optimizer: learning rate={self.learning_rate}"

        def apply_gradients(self, grads, vars):
            for grad, var in zip(grads, vars):
                curr_change = self.learning_rate*grad + self.momentum*self.change
                var.assign_sub(curr_change)
                self.change = curr_change

    class Adam(tf.Module):

        def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, ep=1e-7):
            self.beta_1 = beta_1
            self.beta_2 = beta_2
            self.learning_rate = learning_rate
            self.ep = ep
            self.t = 1.
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
                self.v_dvar[i] = self.beta_1*self.v_dvar[i] + (1-self.beta_1)*d_var
                self.s_dvar[i] = self.beta_2*self.s_dvar[i] + (1-self.beta_2)*tf.square(d_var)
                v_dvar_bc = self.v_dvar[i]/(1-(self.beta_1**self.t))
                s_dvar_bc = self.s_dvar[i]/(1-(self.beta_2**self.t))
                var.assign_sub(self.learning_rate*(v_dvar_bc/(tf.sqrt(s_dvar_bc) + self.ep)))
            self.t += 1.

    learning_rates = [1e-3, 1e-2, 1e-1]
    for name, optimizer_class in (("gd", GradientDescent), ("momentum", Momentum), ("adam", Adam)):
        with printed() as text:
            paths = {learning_rate: convergence_test(optimizer_class(learning_rate=learning_rate), loss_fn=loss)
                     for learning_rate in learning_rates}
        out[name] = (paths, text.getvalue())
    return out


def test_optimizers_core():
    assert not isinstance(check(optimizers_core), Raised)  # the tutorial ran (in TF too)
