"""`fit`, `evaluate` and `predict` of models whose lookup layers take their inputs, against TF's own Keras.

Keras computes `TextVectorization`, `StringLookup`, `IntegerLookup` and `Hashing`
with TensorFlow's ops on values. A model whose such layers take its inputs (the
text-classification tutorial's model, `TextVectorization` first; a functional
model with a string feature through a `StringLookup`) runs them on each batch's
values before TF's default step, whose rest compiles; other models holding them
run the step eagerly. Either way the histories, evaluations, predictions and
weights are TF's.

Each body (`CASES`) runs with TF's Keras in a child process (this file run as a
script, KERAS_BACKEND=tensorflow) and with tapeshim here, compared as in
tests/test_keras.py. Compile counts are tapeshim's own (the last tests).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from keras_cases import set_weights  # noqa: E402
from keras_oracle import assert_outcomes_match, compile_counts, run_case, tf_keras_outcomes  # noqa: E402

CASES: dict[str, Any] = {}
WORDS = ["the", "cat", "dog", "sat", "ran", "far", "a", "and", "cats", "dogs", "on", "mat"]


def case(fn: Any) -> Any:
    CASES[fn.__name__] = fn
    return fn


def _texts(n: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 9)))) for _ in range(n)]


def _labels(n: int, seed: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, n).astype(np.float32)


def _vectorizer(tf: Any, **options: Any) -> Any:
    vectorize = tf.keras.layers.TextVectorization(max_tokens=16, **options)
    vectorize.adapt(np.array(_texts(40)))
    return vectorize


def _classifier(tf: Any, vectorize: Any, with_input: bool = False) -> Any:
    first = [tf.keras.Input(shape=(), dtype="string")] if with_input else []
    return tf.keras.Sequential(
        [
            *first,
            vectorize,
            tf.keras.layers.Embedding(16, 4),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(1),
        ]
    )


def _train_and_use(tf: Any, model: Any, optimizer: Any, **fit_options: Any) -> dict:
    texts, labels = tf.constant(_texts(22)), tf.constant(_labels(22))
    model.compile(optimizer, tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(texts, labels, batch_size=4, epochs=3, shuffle=False, verbose=0, **fit_options).history
    dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(5)
    return {
        "history": history,
        "history_of_dataset": model.fit(dataset, epochs=2, verbose=0).history,
        "evaluate": model.evaluate(texts, labels, batch_size=6, verbose=0),
        "predict": model.predict(tf.constant(_texts(9, seed=8)), batch_size=4, verbose=0),
        "weights": model.weights,
    }


@case
def text_vectorization_first_fits_as_tf(tf):
    model = _classifier(tf, _vectorizer(tf, output_sequence_length=6))
    model(tf.constant(["the cat"]))
    set_weights(model, 1)
    texts = tf.constant(_texts(8, seed=5))
    outcome = _train_and_use(
        tf, model, tf.keras.optimizers.Adam(0.05), validation_data=(texts, tf.constant(_labels(8, seed=6)))
    )
    return outcome


@case
def text_vectorization_of_batch_lengths_fits_as_tf(tf):
    # No `output_sequence_length`: each batch is as long as its longest text.
    model = _classifier(tf, _vectorizer(tf), with_input=True)
    set_weights(model, 2)
    return _train_and_use(tf, model, tf.keras.optimizers.SGD(0.5), sample_weight=tf.constant(_labels(22, 9) + 0.5))


@case
def text_vectorization_unbuilt_model_fits_as_tf(tf):
    # The first step builds the model (constant initializers: the same weights with any backend).
    vectorize = _vectorizer(tf, output_sequence_length=5)
    table = np.random.default_rng(7).standard_normal((16, 3)).astype(np.float32)
    model = tf.keras.Sequential(
        [
            vectorize,
            tf.keras.layers.Embedding(16, 3, embeddings_initializer=tf.keras.initializers.Constant(table)),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(0.3)),
        ]
    )
    return _train_and_use(tf, model, tf.keras.optimizers.RMSprop(0.01))


@case
def tf_idf_text_vectorization_fits_as_tf(tf):
    vectorize = _vectorizer(tf, output_mode="tf_idf")
    model = tf.keras.Sequential([tf.keras.Input(shape=(), dtype="string"), vectorize, tf.keras.layers.Dense(1)])
    set_weights(model, 3)
    return _train_and_use(tf, model, "sgd")


@case
def vectorized_in_a_dataset_map_fits_as_tf(tf):
    # The tutorial's training path: the texts vectorized in a `map` (a graph in TF), the model fits the ids.
    vectorize = _vectorizer(tf, output_sequence_length=7)
    texts, labels = tf.constant(_texts(22)), tf.constant(_labels(22))

    def vectorize_text(text, label):
        return vectorize(tf.expand_dims(text, -1)), label

    dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(5).map(vectorize_text)
    model = tf.keras.Sequential(
        [
            tf.keras.Input((7,), dtype="int64"),
            tf.keras.layers.Embedding(16, 3),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(1),
        ]
    )
    set_weights(model, 5)
    model.compile(tf.keras.optimizers.Adam(0.1), tf.keras.losses.BinaryCrossentropy(from_logits=True))
    return {
        "ids": [ids for ids, _ in dataset],
        "history": model.fit(dataset, epochs=2, verbose=0).history,
        "evaluate": model.evaluate(dataset, verbose=0),
    }


def _mixed_features(tf: Any, numbers_also_read: bool) -> tuple[Any, Any]:
    """A functional model with a string feature through `StringLookup` and an integer one through `IntegerLookup`
    (also read by a `Normalization` when `numbers_also_read`: that model runs its steps eagerly)."""
    words = tf.keras.Input(shape=(1,), dtype="string", name="word")
    numbers = tf.keras.Input(shape=(1,), dtype="int64", name="number")
    looked_up = tf.keras.layers.StringLookup(vocabulary=WORDS[:6], output_mode="one_hot")(words)
    counted = tf.keras.layers.IntegerLookup(vocabulary=[1, 2, 3, 4], output_mode="one_hot")(numbers)
    parts = [looked_up, counted]
    if numbers_also_read:
        parts.append(tf.keras.layers.Normalization(mean=2.0, variance=4.0)(numbers))
    hidden = tf.keras.layers.Dense(4, activation="relu")(tf.keras.layers.Concatenate()(parts))
    model = tf.keras.Model([words, numbers], tf.keras.layers.Dense(1)(hidden))
    set_weights(model, 4)
    rng = np.random.default_rng(10)
    features = (
        tf.constant(rng.choice(WORDS, size=(14, 1))),
        tf.constant(rng.integers(0, 6, (14, 1)).astype(np.int64)),
    )
    return model, features


def _fit_mixed(tf: Any, numbers_also_read: bool) -> dict:
    model, features = _mixed_features(tf, numbers_also_read)
    labels = tf.constant(_labels(14, seed=12))
    model.compile(tf.keras.optimizers.Adam(0.05), tf.keras.losses.BinaryCrossentropy(from_logits=True))
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(4)
    return {
        "history": model.fit(dataset, epochs=3, verbose=0).history,
        "evaluate": model.evaluate(dataset, verbose=0),
        "predict": model.predict(dataset.map(lambda x, y: (x,)), verbose=0),
        "weights": model.weights,
    }


@case
def functional_lookups_of_inputs_fit_as_tf(tf):
    return _fit_mixed(tf, numbers_also_read=False)


@case
def functional_lookup_input_also_read_elsewhere_fits_as_tf(tf):
    return _fit_mixed(tf, numbers_also_read=True)


# -- the oracle ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tf_outcomes(tmp_path_factory):
    return tf_keras_outcomes(__file__, tmp_path_factory.mktemp("tf_keras_host_layers") / "results.pkl")


@pytest.fixture(scope="module")
def tapeshim_module():
    import tapeshim

    return tapeshim


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name, tf_outcomes, tapeshim_module):
    expected = tf_outcomes[name]
    assert "raised" not in expected, f"TF raised: {expected}"
    assert_outcomes_match(expected, run_case(CASES[name], tapeshim_module), rtol=2e-5, atol=2e-6)


# -- compile counts (tapeshim's own) ---------------------------------------------------------------------------
def test_fit_of_a_text_model_compiles_once(tapeshim_module):
    """The step after `TextVectorization` is one function: later epochs, evaluations and predictions compile
    nothing (the lookup runs as TensorFlow's graph, outside tapeshim)."""
    tf = tapeshim_module
    model = _classifier(tf, _vectorizer(tf, output_sequence_length=6))
    model.compile("adam", tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    texts, labels = tf.constant(_texts(24)), tf.constant(_labels(24))
    model.fit(texts, labels, batch_size=8, epochs=1, verbose=0)
    model.evaluate(texts, labels, batch_size=8, verbose=0)
    model.predict(texts, batch_size=8, verbose=0)
    before = compile_counts(tf)
    model.fit(texts, labels, batch_size=8, epochs=3, verbose=0)
    model.evaluate(texts, labels, batch_size=8, verbose=0)
    model.predict(texts, batch_size=8, verbose=0)
    assert compile_counts(tf) == before


@pytest.mark.usefixtures("compiles_on_repeat")  # (each size compiles from its second call)
def test_fit_with_a_smaller_last_batch_settles_to_compiled_steps(tapeshim_module):
    """The smaller last batch traces once for every size, as TF's `fit` reduces retracing, and compiles in the
    background from its second epoch; once compiled, an epoch compiles nothing, on any thread. (It ran op by op
    each epoch, then traced and compiled on the calling thread; and the values its sized program committed to
    the device made the full batches' program compile again there.)"""
    from oracle import program_lowerings
    from tapeshim._src import background_compile

    tf = tapeshim_module
    model = _classifier(tf, _vectorizer(tf, output_sequence_length=6))
    model.compile("adam", tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    texts, labels = tf.constant(_texts(26)), tf.constant(_labels(26))
    model(texts[:1])  # (built: `fit`'s first batch runs the step function, not Keras's build)
    first = compile_counts(tf)["function_traces"]
    for _ in range(3):
        model.fit(texts, labels, batch_size=8, epochs=1, verbose=0)
        background_compile.wait()
    assert compile_counts(tf)["function_traces"] - first == 2, "the full batches' trace, and one for every size"
    before, compiles = compile_counts(tf), len(program_lowerings())
    model.fit(texts, labels, batch_size=8, epochs=2, verbose=0)
    background_compile.wait()
    assert compile_counts(tf) == before
    assert len(program_lowerings()) == compiles


def test_the_step_after_the_lookup_layers_is_compiled(tapeshim_module):
    """A text model's fit runs its layers' Python only while tracing the step, not on each batch."""
    tf = tapeshim_module
    calls = []

    def counted(x):
        calls.append(1)
        return x

    vectorize = _vectorizer(tf, output_sequence_length=6)
    model = tf.keras.Sequential(
        [vectorize, tf.keras.layers.Embedding(16, 4), tf.keras.layers.Lambda(counted), tf.keras.layers.Flatten()]
    )
    model.compile("adam", "mse")
    texts, labels = tf.constant(_texts(24)), tf.constant(np.zeros((24, 24), np.float32))
    model.fit(texts, labels, batch_size=8, epochs=1, verbose=0)
    traced = len(calls)
    model.fit(texts, labels, batch_size=8, epochs=2, verbose=0)
    assert len(calls) == traced


def test_shuffled_fit_of_strings_follows_the_global_seed(tapeshim_module):
    """`fit(strings, shuffle=True)` draws a new order each epoch from tapeshim's seed, as `Dataset.shuffle`."""
    tf = tapeshim_module
    texts, labels = tf.constant(_texts(24)), tf.constant(_labels(24))

    def history(shuffle):
        model = _classifier(tf, _vectorizer(tf, output_sequence_length=6))
        model(texts[:1])
        set_weights(model, 3)
        model.compile(tf.keras.optimizers.SGD(0.5), tf.keras.losses.BinaryCrossentropy(from_logits=True))
        tf.random.set_seed(7)
        return model.fit(texts, labels, batch_size=5, epochs=3, shuffle=shuffle, verbose=0).history["loss"]

    first, again, in_order = history(True), history(True), history(False)
    assert first == again and first != in_order


if __name__ == "__main__":
    import tensorflow

    outcomes = {name: run_case(body, tensorflow) for name, body in CASES.items()}
    with open(sys.argv[1], "wb") as stream:
        pickle.dump(outcomes, stream)
