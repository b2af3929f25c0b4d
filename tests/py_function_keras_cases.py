"""Keras bodies with a `tf.py_function` without results in a layer's `call`, run with TF's Keras and tapeshim.

`CASES` maps a name to a body `fn(tf)`; tests/test_py_function_more.py runs each with
TF's Keras in a child process (KERAS_BACKEND=tensorflow) and with tapeshim, and
compares the outcomes (`keras_oracle.run_case`): the results and how many times the
Python function ran (TF runs it when the layer runs, not while Keras infers the
layer's output spec).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

CASES: dict[str, Callable[[Any], Any]] = {}
X = np.arange(6, dtype=np.float32).reshape(2, 3)
Y = np.zeros((2, 2), np.float32)


def case(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    CASES[fn.__name__] = fn
    return fn


def _logging_layer(tf: Any, calls: list) -> Any:
    class Logging(tf.keras.layers.Layer):
        def call(self, x):
            tf.py_function(lambda t: calls.append(float(np.sum(t.numpy()))), [x], [])
            return x * 2.0

    return Logging()


def _sequential(tf: Any, calls: list) -> Any:
    return tf.keras.Sequential(
        [tf.keras.Input((3,)), _logging_layer(tf, calls), tf.keras.layers.Dense(2, kernel_initializer="ones")]
    )


@case
def layer_called_directly(tf):
    calls: list = []
    layer = _logging_layer(tf, calls)
    out = layer(tf.constant(X))
    return out, calls


@case
def sequential_built_call_predict(tf):
    calls: list = []
    model = _sequential(tf, calls)
    built = list(calls)
    out = model(X)
    predicted = model.predict(X, verbose=0, batch_size=1)
    return built, out, predicted, calls


@case
def functional_model_call(tf):
    calls: list = []
    inputs = tf.keras.Input((3,))
    model = tf.keras.Model(inputs, _logging_layer(tf, calls)(inputs))
    return list(calls), model(X), calls


@case
def sequential_fit_and_evaluate(tf):
    calls: list = []
    model = _sequential(tf, calls)
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(X, Y, epochs=2, batch_size=1, verbose=0, shuffle=False).history["loss"]
    fitted = len(calls)
    loss = model.evaluate(X, Y, batch_size=2, verbose=0)
    return history, fitted, loss, len(calls)


@case
def model_called_in_a_function(tf):
    calls: list = []
    model = _sequential(tf, calls)
    f = tf.function(lambda x: model(x))
    return f(tf.constant(X)), f(tf.constant(X + 1.0)), calls


if __name__ == "__main__":  # the TF side: `python py_function_keras_cases.py OUT` with KERAS_BACKEND=tensorflow
    import pickle
    import sys

    import tensorflow as tf_module
    from keras_oracle import run_case

    outcomes = {name: run_case(body, tf_module) for name, body in CASES.items()}
    with open(sys.argv[1], "wb") as stream:
        pickle.dump(outcomes, stream)
