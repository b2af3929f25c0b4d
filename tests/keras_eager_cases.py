"""Keras cases for layer calls whose Python asks for a tensor's value, compared with TF's Keras as keras_cases.py's.

TF's eager Keras runs a custom layer's `call` op by op, so `if tf.reduce_sum(y) > 0:` or `float(t)` work
there; tapeshim runs such a call op by op too. Each body is a function of the module (`tf`);
keras_cases.py's `main` runs them with TF's Keras in the child process, and tests/test_keras.py runs
them with tapeshim. `EAGER_CASES` maps a name to its body.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from keras_cases import set_weights  # noqa: E402

EAGER_CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    EAGER_CASES[fn.__name__] = fn
    return fn


def _inputs(tf: Any) -> Any:
    return tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4) / 4.0 - 1.0)


def _gate(tf: Any) -> Any:
    class Gate(tf.keras.layers.Layer):
        def build(self, input_shape: Any) -> None:
            self.kernel = self.add_weight(shape=(input_shape[-1], 3), initializer="glorot_uniform")

        def call(self, x: Any) -> Any:
            y = tf.matmul(x, self.kernel)
            if tf.reduce_sum(y) > 0:  # a Python `if` on a tensor's value
                return y * 2.0
            return -y

    return Gate()


@case
def python_if_on_a_value_in_a_custom_layer(tf):
    layer = _gate(tf)
    x = _inputs(tf)
    first, second = layer(x), layer(-x)
    set_weights(layer, 3)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        out = tf.reduce_sum(layer(x) ** 2)
    return {
        "outputs": [first.shape.as_list(), second.shape.as_list(), layer(x), layer(-x)],
        "gradients": tape.gradient(out, layer.trainable_variables + [x]),
    }


@case
def python_control_flow_in_a_subclassed_model(tf):
    class Model(tf.keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.hidden = tf.keras.layers.Dense(5, activation="relu")
            self.dropout = tf.keras.layers.Dropout(0.5)
            self.out = tf.keras.layers.Dense(2)

        def call(self, x: Any, training: Any = None) -> Any:
            h = self.hidden(x)
            steps = int(tf.reduce_sum(tf.cast(h > 0.5, tf.int32)))  # a Python number from a value
            for _ in range(min(steps, 3)):
                h = h * 0.5
            self.add_loss(0.01 * tf.reduce_sum(h))
            if float(tf.reduce_mean(h)) > 10.0:
                h = self.dropout(h, training=training)
            return self.out(h)

    model = Model()
    x = _inputs(tf)
    model(x)
    set_weights(model, 5)
    optimizer = tf.keras.optimizers.SGD(0.1)
    losses = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x, training=True) ** 2) + tf.add_n(model.losses)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(loss)
    return {"losses": losses, "weights": model.get_weights(), "model_losses": model.losses, "out": model(x)}


@case
def python_if_on_a_value_in_a_function_or_a_sequential_raises(tf):
    def raised(fn: Any) -> Any:
        try:
            fn()
        except tf.errors.OperatorNotAllowedInGraphError:
            return "OperatorNotAllowedInGraphError"
        except Exception as exc:  # noqa: BLE001 - the class is the comparison
            return type(exc).__name__
        return None

    x = _inputs(tf)
    layer = _gate(tf)
    layer(x)
    set_weights(layer, 7)
    return {
        "function": raised(lambda: tf.function(lambda v: layer(v))(x)),
        "sequential": raised(lambda: tf.keras.Sequential([_gate(tf)])(x)),
        "eager after": layer(x),
    }


@case
def op_by_op_calls_keep_kerass_call_semantics(tf):
    # `training` reaches sublayers through Keras's call context; NumPy inputs are converted and autocast;
    # the activity regularizer's loss is on the tape; a non-tensor positional argument is refused
    class Gated(tf.keras.layers.Layer):
        def __init__(self) -> None:
            super().__init__(activity_regularizer=tf.keras.regularizers.L2(0.1))
            self.norm = tf.keras.layers.BatchNormalization()
            self.drop = tf.keras.layers.Dropout(0.999, seed=1)

        def build(self, input_shape: Any) -> None:
            self.kernel = self.add_weight(shape=(input_shape[-1], 3), initializer="ones")

        def call(self, x: Any) -> Any:
            h = self.norm(tf.matmul(x, self.kernel))
            if tf.reduce_max(h) > 100.0:  # (never: a value asked for)
                return h
            return self.drop(h) * 2.0

    layer = Gated()
    x = np.arange(12, dtype=np.float64).reshape(3, 4) / 4.0
    trained = layer(x, training=True)
    mean_after_training = layer.norm.moving_mean.numpy()
    inferred = layer(x, training=False)
    with tf.GradientTape() as tape:
        out = layer(tf.constant(x, tf.float32))
        loss = tf.reduce_sum(out) + tf.add_n(layer.losses)
    try:
        layer(tf.constant(x, tf.float32), 1.0)
        refused = None
    except ValueError:
        refused = "ValueError"
    return {
        "trained zeros": int(np.sum(np.asarray(trained) == 0.0)),
        "inferred": inferred,
        "moving means": [mean_after_training, layer.norm.moving_mean.numpy()],
        "losses": layer.losses,
        "gradients": tape.gradient(loss, layer.trainable_variables),
        "refused": refused,
    }


_TEXTS = ["the cat sat", "a dog ran far", "the dog sat", "cats and dogs", "a cat ran", "the dogs ran"]
_LABELS = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]


def _text_classifier(tf: Any, with_input: bool) -> tuple[Any, Any]:
    """The text-classification tutorial's shape: a `TextVectorization` first, then an embedding classifier."""
    vectorize = tf.keras.layers.TextVectorization(max_tokens=20, output_sequence_length=5)
    vectorize.adapt(np.array(_TEXTS))
    head = [tf.keras.layers.Embedding(20, 4), tf.keras.layers.GlobalAveragePooling1D(), tf.keras.layers.Dense(1)]
    first = [tf.keras.Input(shape=(), dtype="string")] if with_input else []
    model = tf.keras.Sequential([*first, vectorize, *head])
    return model, vectorize


@case
def text_vectorization_first_in_a_sequential_model(tf):
    model, _ = _text_classifier(tf, with_input=False)
    texts, labels = tf.constant(_TEXTS), tf.constant(_LABELS)
    first = model(texts)
    set_weights(model, 5)
    model.compile(
        tf.keras.optimizers.SGD(0.5), tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"]
    )
    history = model.fit(texts, labels, batch_size=4, epochs=3, shuffle=False, verbose=0).history
    dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(4)
    history_of_dataset = model.fit(dataset, epochs=2, verbose=0).history
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(texts) ** 2)
    gradients = tape.gradient(loss, model.trainable_variables)
    return {
        "first": first.shape.as_list(),
        "history": history,
        "history_of_dataset": history_of_dataset,
        "evaluate": model.evaluate(texts, labels, batch_size=4, verbose=0),
        "evaluate_dataset": model.evaluate(dataset, verbose=0, return_dict=True),
        "predict": model.predict(tf.constant(["the cat", "dogs ran far"]), verbose=0),
        "gradients": [tf.convert_to_tensor(g) for g in gradients],
        "built": [model.built, [layer.built for layer in model.layers]],
    }


@case
def text_vectorization_exported_model(tf):
    # The tutorial trains on vectorized text, then exports a model taking raw strings.
    model, vectorize = _text_classifier(tf, with_input=True)
    set_weights(model, 6)
    trained = tf.keras.Sequential(model.layers[1:])
    dataset = tf.data.Dataset.from_tensor_slices((tf.constant(_TEXTS), tf.constant(_LABELS))).batch(3)
    trained.compile("sgd", tf.keras.losses.BinaryCrossentropy(from_logits=True))
    trained.fit(dataset.map(lambda x, y: (vectorize(x), y)), epochs=2, verbose=0)
    export = tf.keras.Sequential([vectorize, trained, tf.keras.layers.Activation("sigmoid")])
    export.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=False), optimizer="adam", metrics=["accuracy"])
    evaluated = export.evaluate(dataset, verbose=0)
    predicted = export.predict(tf.constant(["the cat sat", "cats and dogs ran"]), verbose=0)
    strings = tf.keras.Input(shape=(1,), dtype="string")
    functional = tf.keras.Model(strings, trained(vectorize(strings)))
    try:
        export.predict(np.array(_TEXTS), verbose=0)
        numpy_strings = "ran"
    except ValueError as error:  # NumPy string arrays are not taken by Keras's array adapter, in TF too
        numpy_strings = type(error).__name__
    return {
        "evaluate": evaluated,
        "predict": predicted,
        "functional": functional(tf.constant([["the dog"], ["a cat sat"]])),
        "numpy_strings": numpy_strings,
        "built": export.built,
    }


# -- Keras masks carried on eager tensors between layer calls (keras_masks.py) -----------------------------
def _masked_embedding(tf: Any) -> Any:
    table = (np.arange(30, dtype=np.float32).reshape(10, 3) - 12.0) / 10.0
    return tf.keras.layers.Embedding(
        10, 3, mask_zero=True, embeddings_initializer=tf.keras.initializers.Constant(table)
    )


@case
def embedding_mask_reaches_the_next_eager_layer_call(tf):
    embedding = _masked_embedding(tf)
    pool = tf.keras.layers.GlobalAveragePooling1D()
    lstm = tf.keras.layers.LSTM(2, kernel_initializer="ones", recurrent_initializer="zeros")
    gru = tf.keras.layers.GRU(2, return_sequences=True, kernel_initializer="ones", recurrent_initializer="ones")
    ids = tf.constant([[1, 2, 0, 0], [3, 0, 0, 0], [4, 5, 6, 7]])
    with tf.GradientTape() as tape:
        hidden = embedding(ids)
        sequences = gru(hidden)
        loss = tf.reduce_sum(pool(hidden) ** 2) + tf.reduce_sum(lstm(hidden)) + tf.reduce_sum(sequences)
    return {
        "mask": hidden._keras_mask,
        "gru_mask": sequences._keras_mask,
        "pooled": pool(hidden),
        "pooled_explicit_none": pool(hidden, mask=None),
        "lstm": lstm(hidden),
        "gradients": tape.gradient(loss, [embedding.embeddings, *lstm.trainable_variables]),
    }


@case
def masking_layer_mask_reaches_an_rnn(tf):
    masking = tf.keras.layers.Masking(mask_value=0.0)
    rnn = tf.keras.layers.SimpleRNN(3, kernel_initializer="ones", recurrent_initializer="ones")
    steps = np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 24.0
    steps[0, 2:] = 0.0
    masked = masking(tf.constant(steps))
    dense = tf.keras.layers.Dense(2, kernel_initializer="ones")(masked)  # (Dense passes the mask on)
    return {
        "mask": masked._keras_mask,
        "rnn": rnn(masked),
        "dense_mask": dense._keras_mask,
        "rnn_after": tf.keras.layers.SimpleRNN(2, kernel_initializer="ones", recurrent_initializer="ones")(dense),
    }


@case
def model_outputs_carry_their_last_layers_masks(tf):
    # (TF's model returns its last layer's tensor, which carries that layer's mask; a later eager layer uses it)
    encoder = tf.keras.Sequential([_masked_embedding(tf), tf.keras.layers.Dense(2, kernel_initializer="ones")])
    inputs = tf.keras.Input((4,), dtype="int32")
    functional = tf.keras.Model(
        inputs, tf.keras.layers.Dense(2, kernel_initializer="ones")(_masked_embedding(tf)(inputs))
    )
    recurrent = tf.keras.Sequential(
        [
            _masked_embedding(tf),
            tf.keras.layers.GRU(2, return_sequences=True, kernel_initializer="ones", recurrent_initializer="ones"),
        ]
    )
    ids = tf.constant([[1, 2, 0, 0], [3, 0, 0, 0], [4, 5, 6, 7]])
    pool = tf.keras.layers.GlobalAveragePooling1D()
    encoded, through_functional, sequences = encoder(ids), functional(ids), recurrent(ids)
    return {
        "sequential_mask": encoded._keras_mask,
        "functional_mask": through_functional._keras_mask,
        "recurrent_mask": sequences._keras_mask,
        "pooled": pool(encoded),
        "pooled_functional": pool(through_functional),
        "pooled_sequences": pool(sequences),
        "unmasked_model": getattr(
            tf.keras.Sequential([tf.keras.layers.Dense(2)])(tf.ones((2, 3))), "_keras_mask", None
        ),
    }


@case
def attention_masks_from_embeddings(tf):
    embedding = _masked_embedding(tf)
    query, value = embedding(tf.constant([[1, 2, 0]])), embedding(tf.constant([[3, 4, 5, 0]]))
    attention = tf.keras.layers.Attention()([query, value])
    # (`MultiHeadAttention` reads its query's mask from the tensor inside its call, then takes the masks off its
    # inputs: the second call sees none)
    heads = tf.keras.layers.MultiHeadAttention(2, 2, kernel_initializer="ones")
    first = heads(query, value)
    return {
        "attention": attention,
        "multi_head": first,
        "masks_after": (query._keras_mask, value._keras_mask),
        "multi_head_again": heads(query, value),
    }


def train_on_new_lengths(tf: Any, lengths: Any = (23, 29, 31, 37, 41, 43, 47)) -> Any:
    """A text classifier (an embedding, a convolution, pooling) trained with Adam on batches of a new sequence
    length each step, as padded batches of variable-length text come: its table's gradient is IndexedSlices of
    a new number of rows each step. The losses and the final weights."""
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Embedding(50, 8),
            tf.keras.layers.Conv1D(6, 3, activation="relu"),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(2),
        ]
    )
    model.build((None, None))
    set_weights(model, 8)
    optimizer = tf.keras.optimizers.Adam(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(9)
    losses = []
    for length in lengths:
        ids = tf.constant(rng.integers(0, 50, size=(4, length)).astype(np.int32))
        labels = tf.constant(rng.integers(0, 2, size=4).astype(np.int32))
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(ids, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        losses.append(loss)
    return {"losses": losses, "weights": model.weights}


case(train_on_new_lengths)


@case
def a_metric_reads_the_logits_after_the_gradient(tf):
    # keras.io "Writing a training loop from scratch": the accuracy metric reads the step's logits after
    # `apply_gradients` (computed by the next step's gradient program: `read_after_gradient`).
    inputs = tf.keras.Input(shape=(6,))
    hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(3)(hidden))
    set_weights(model, 12)
    optimizer = tf.keras.optimizers.SGD(0.05)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    rng = np.random.default_rng(12)
    x = tf.constant(rng.normal(size=(10, 6)).astype(np.float32))
    y = tf.constant(rng.integers(0, 3, size=10).astype(np.int64))
    losses, results, logits_seen = [], [], []
    for _ in range(5):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        accuracy.update_state(y, logits)
        losses.append(loss)
        results.append(accuracy.result())
        logits_seen.append(logits)
    return {"losses": losses, "accuracy": results, "logits": logits_seen, "weights": model.weights}
