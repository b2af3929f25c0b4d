"""Keras calls at new sizes from their shape family's one symbolic trace, against TF's own Keras.

A Keras call's second size of one structure is traced once with a symbolic
dimension (`keras_program_families`); later sizes run from that trace, and a
gradient request over them from its forward traced once with symbolic sizes
(`host_gradient.SizedFirstCalls`, `jaxpr_specialize`). The custom training loops
here (TF's guides' loop: a tape, a loss, `apply_gradients`) run on batches of
sizes and lengths that keep changing: an epoch's last, partial batch; padded
text of a new length. Each body (`CASES`) runs with TF's Keras in a child process
(this file run as a script, KERAS_BACKEND=tensorflow) and with tapeshim here,
compared as in tests/test_keras.py. The last tests count what tapeshim traces.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export
from jax.extend import core as jax_core

sys.path.insert(0, str(Path(__file__).parent))
from keras_cases import set_weights  # noqa: E402
from keras_oracle import assert_outcomes_match, run_case, tf_keras_outcomes  # noqa: E402

CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    CASES[fn.__name__] = fn
    return fn


def _train(tf: Any, model: Any, optimizer: Any, batches: list, loss_fn: Any = None) -> dict:
    """TF's guides' custom loop over `batches` of `(inputs, labels)`: the losses, the last logits, the weights."""
    loss_fn = loss_fn or tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for inputs, labels in batches:
        with tf.GradientTape() as tape:
            logits = model(tf.constant(inputs), training=True)
            loss = loss_fn(tf.constant(labels), logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(loss)
    return {"losses": losses, "logits": logits, "weights": model.get_weights()}


def _images(sizes: tuple, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [
        (rng.normal(size=(n, 10, 10, 1)).astype(np.float32), rng.integers(0, 4, size=n).astype(np.int32)) for n in sizes
    ]


def _token_batches(lengths: tuple, seed: int = 1, padded: bool = False) -> list:
    rng = np.random.default_rng(seed)
    batches = []
    for length in lengths:
        ids = rng.integers(1, 50, size=(6, length)).astype(np.int32)
        if padded:  # (the last positions of some rows are padding: a mask's zeros)
            ids[:3, length - 2 :] = 0
        batches.append((ids, rng.integers(0, 2, size=6).astype(np.int32)))
    return batches


def _cnn(tf: Any) -> Any:
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Input((10, 10, 1)),
            tf.keras.layers.Conv2D(4, 3, activation="relu"),
            tf.keras.layers.Conv2D(4, 3, activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(4),
        ]
    )
    set_weights(model, 2)
    return model


@case
def cnn_on_new_batch_sizes(tf: Any) -> dict:
    # (the sizes after the second come from the family's trace, the gradients from the sized forward)
    return _train(tf, _cnn(tf), tf.keras.optimizers.SGD(0.05), _images((8, 5, 7, 6, 9, 5, 11)))


@case
def cnn_predictions_on_new_batch_sizes(tf: Any) -> list:
    model = _cnn(tf)
    return [model(tf.constant(x)) for x, _ in _images((3, 4, 6, 4, 9))]


@case
def text_classifier_on_new_lengths(tf: Any) -> dict:
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Embedding(50, 8),
            tf.keras.layers.Conv1D(8, 3, activation="relu"),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(2),
        ]
    )
    model(tf.constant(np.ones((1, 5), np.int32)))
    set_weights(model, 3)
    return _train(tf, model, tf.keras.optimizers.Adam(0.01), _token_batches((5, 6, 7, 9, 8, 6, 10)))


@case
def masked_text_on_new_lengths(tf: Any) -> dict:
    # (the mask Keras attaches to the embedding's output is an input of the pooling's family)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Embedding(50, 8, mask_zero=True),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(2),
        ]
    )
    model(tf.constant(np.ones((1, 5), np.int32)))
    set_weights(model, 4)
    return _train(tf, model, tf.keras.optimizers.SGD(0.1), _token_batches((5, 6, 7, 9, 8, 6), padded=True))


@case
def batch_normalization_on_new_batch_sizes(tf: Any) -> dict:
    # (a call that changes its variables under a tape: its forward runs once with its pullback)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Input((6,)),
            tf.keras.layers.Dense(5),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Activation("relu"),
            tf.keras.layers.Dense(3),
        ]
    )
    set_weights(model, 5)
    rng = np.random.default_rng(6)
    batches = [
        (rng.normal(size=(n, 6)).astype(np.float32), rng.integers(0, 3, size=n).astype(np.int32))
        for n in (8, 5, 7, 6, 9)
    ]
    return _train(tf, model, tf.keras.optimizers.SGD(0.1), batches)


class _PerRow:
    """A layer whose call needs its batch's size as a Python int (a loop over the rows): its family's symbolic
    trace fails, and each size is traced as before."""

    @staticmethod
    def make(tf: Any) -> Any:
        class PerRow(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

            def call(self, x):
                rows = [x[i] * self.w * float(i + 1) for i in range(int(x.shape[0]))]
                return tf.keras.ops.stack(rows)

        return PerRow()


@case
def layer_needing_a_concrete_size(tf: Any) -> dict:
    class Model(tf.keras.Model):  # (subclassed: Keras's functional build would call it on an unknown batch)
        def __init__(self):
            super().__init__()
            self.per_row, self.dense = _PerRow.make(tf), tf.keras.layers.Dense(2)

        def call(self, x):
            return self.dense(self.per_row(x))

    model = Model()
    model(tf.constant(np.ones((2, 3), np.float32)))
    set_weights(model, 7)
    rng = np.random.default_rng(8)
    batches = [
        (rng.normal(size=(n, 3)).astype(np.float32), rng.integers(0, 2, size=n).astype(np.int32)) for n in (4, 3, 5, 6)
    ]
    return _train(tf, model, tf.keras.optimizers.SGD(0.1), batches)


@case
def users_layers_deciding_on_a_size(tf: Any) -> list:
    # (`n == 8` and `n % 2` are decided per size, as TF's eager calls decide them)
    class Special(tf.keras.layers.Layer):
        def call(self, x):
            return x * 10.0 if x.shape[0] == 8 else x + 1.0

    class Pad(tf.keras.layers.Layer):
        def call(self, x):
            if x.shape[0] % 2 != 0:
                x = tf.keras.ops.concatenate([x, x[:1]], 0)
            return x * 2.0

    special, pad = Special(), Pad()
    halve = tf.keras.layers.Lambda(lambda x: x[: x.shape[0] // 2] if x.shape[0] == 8 else x)  # (Keras's class)
    return [[special(tf.ones((n, 3))), pad(tf.ones((n, 3))), halve(tf.ones((n, 3)))] for n in (5, 7, 8, 9, 8)]


def _is_eight(n: Any) -> bool:
    return n == 8


def _deciding_layers(tf: Any) -> list:
    """Users' layers deciding on their batch's size other ways: `in`, the truth of `n - 8`, a helper function's
    `==`, NumPy's product of the shape, a tapeshim tensor's static shape (unknown in a symbolic trace), the
    size's type, tapeshim's `TensorShape` comparisons and `int_shape`, and a size kept in the layer (an
    independent review found the last six, which the first watch let through)."""
    keras = tf.keras

    class InTuple(keras.layers.Layer):
        def call(self, x):
            return x * 3.0 if x.shape[0] in (8, 16) else x

    class Difference(keras.layers.Layer):
        def call(self, x):
            return x * 2.0 if x.shape[0] - 8 else x - 1.0

    class Helper(keras.layers.Layer):
        def call(self, x):
            return x + 5.0 if _is_eight(x.shape[0]) else x

    class Product(keras.layers.Layer):
        def call(self, x):
            return x * 4.0 if np.prod(x.shape) == 24 else x

    class StaticShape(keras.layers.Layer):
        def call(self, x):
            return x * 6.0 if tf.identity(x).shape[0] == 8 else x

    class IsInt(keras.layers.Layer):  # (a symbolic size is no int, as TF's graphs' unknown size is None)
        def call(self, x):
            return x * 2.0 if isinstance(x.shape[0], int) else x

    class TypeIs(keras.layers.Layer):
        def call(self, x):
            return x * 2.0 if type(x.shape[0]) is int else x

    class KnownShapeEqual(keras.layers.Layer):  # (tapeshim's TensorShape compares: the user's comparison)
        def call(self, x):
            return x * 2.0 if tf.TensorShape([8, 3]) == x.shape else x

    class Compatible(keras.layers.Layer):
        def call(self, x):
            return x * 2.0 if tf.TensorShape([8, 3]).is_compatible_with(tf.identity(x).shape) else x

    class IntShape(keras.layers.Layer):
        def call(self, x):
            int_shape = getattr(keras.backend, "int_shape", lambda t: tuple(t.shape))
            return x * 2.0 if int_shape(tf.identity(x))[0] is None else x

    class Remember(keras.layers.Layer):  # (a size kept in the layer: the user's Python reads it after the call)
        def call(self, x):
            self.seen = x.shape
            return x * 2.0

    class HelperIsInt(keras.layers.Layer):  # (a second review found these: a type checked in another function)
        def call(self, x):
            return x * 2.0 if isinstance(_batch_of(x), int) else x

    class AllStatic(keras.layers.Layer):
        def call(self, x):
            return x * 2.0 if all(isinstance(d, int) for d in x.shape) else x

    class StaticDims(keras.layers.Layer):
        def call(self, x):
            dims = [d if isinstance(d, int) else -1 for d in x.shape]
            return tf.reshape(x, (-1,)) if dims[0] == -1 else x * 2.0

    class FunctionCall(keras.layers.Layer):  # (AutoGraph's converted calls run the user's checks)
        @tf.function
        def call(self, x):
            if isinstance(x.shape[0], int):
                return x * 2.0
            return x

    class DimensionAtIndex(keras.layers.Layer):
        def call(self, x):
            return x if tf.compat.dimension_at_index(tf.identity(x).shape, 0) is None else x * 2.0

    class SpecCompatible(keras.layers.Layer):
        def call(self, x):
            return x * 10.0 if tf.TensorSpec([8, 3]).is_compatible_with(tf.identity(x)) else x

    class CaughtError(keras.layers.Layer):  # (the symbolic trace's error, caught: a decision all the same)
        def call(self, x):
            try:
                n = int(tf.shape(x)[0])
            except Exception:  # noqa: BLE001 - the user's code
                n = None
            return x * 2.0 if n is not None else x

    return [
        InTuple(), Difference(), Helper(), Product(), StaticShape(), IsInt(), TypeIs(), KnownShapeEqual(),
        Compatible(), IntShape(), Remember(), HelperIsInt(), AllStatic(), StaticDims(), FunctionCall(),
        DimensionAtIndex(), SpecCompatible(), CaughtError(),
    ]  # fmt: skip


def _batch_of(x: Any) -> Any:
    return x.shape[0]


def _remembered(layers: list) -> list:
    """Whether each size a layer kept is an int, as TF's (which size: the last traced, as in any replay)."""
    return [[isinstance(d, int) for d in layer.seen] for layer in layers if hasattr(layer, "seen")]


@case
def users_layers_deciding_on_a_size_other_ways(tf: Any) -> list:
    layers = _deciding_layers(tf)
    return [[[*(layer(tf.ones((n, 3))) for layer in layers), _remembered(layers)] for n in (5, 7, 8, 9, 8)]]


@case
def recurrent_activation_deciding_on_a_size(tf: Any) -> list:
    """An LSTM whose recurrent activation (the user's) decides on the batch size: not Keras's own code."""
    keras = tf.keras

    def gate(z):
        return keras.ops.sigmoid(z) * (2.0 if z.shape[0] == 11 else 1.0)

    lstm = keras.layers.LSTM(2, recurrent_activation=gate, kernel_initializer="ones", recurrent_initializer="ones")
    return [lstm(tf.ones((n, 3, 2)) * 0.1) for n in (5, 6, 9, 11, 7)]


@case
def users_operation_in_a_functional_model(tf: Any) -> list:
    """A user's `keras.Operation` (not a layer) in a functional model deciding on the batch size."""
    keras = tf.keras

    class Op(keras.Operation):
        def call(self, x):
            return x * 2.0 if x.shape[0] == 8 else x

        def compute_output_spec(self, x):
            return keras.KerasTensor(x.shape, x.dtype)

    inputs = keras.Input((3,))
    model = keras.Model(inputs, Op()(keras.layers.Dense(3, kernel_initializer="ones")(inputs)))
    return [model(tf.ones((n, 3))) for n in (5, 6, 8, 9, 8, 7)]


class _Block:
    """A Transformer block layer of the user's own (keras.io's examples' kind): causal self-attention, a
    feed-forward network, LayerNormalization. Its Python decides nothing on sizes: its family serves new lengths."""

    @staticmethod
    def make(tf: Any, width: int, heads: int) -> Any:
        keras = tf.keras

        class Block(keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.attention = keras.layers.MultiHeadAttention(heads, width // heads)
                self.feed_forward = keras.Sequential(
                    [keras.layers.Dense(2 * width, activation="relu"), keras.layers.Dense(width)]
                )
                self.norm1, self.norm2 = keras.layers.LayerNormalization(), keras.layers.LayerNormalization()

            def call(self, x):
                x = self.norm1(x + self.attention(x, x, use_causal_mask=True))
                return self.norm2(x + self.feed_forward(x))

        return Block()


@case
def users_transformer_block_on_new_lengths(tf: Any) -> dict:
    keras = tf.keras
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, keras.layers.Dense(50)(_Block.make(tf, 8, 2)(keras.layers.Embedding(50, 8)(ids))))
    set_weights(model, 5)
    rng = np.random.default_rng(6)
    batches = []
    for length in (5, 6, 7, 9, 8, 6, 10):
        tokens = rng.integers(0, 50, size=(3, length + 1)).astype(np.int32)
        batches.append((tokens[:, :-1], tokens[:, 1:]))
    # (SGD: Adam's normalized steps make float32 rounding of a near-zero gradient visible after a few steps)
    return _train(tf, model, keras.optimizers.SGD(0.1), batches)


@case
def subclassed_cnn_on_new_batch_sizes(tf: Any) -> dict:
    keras = tf.keras

    class Net(keras.Model):  # (TF's guides' model: the user's `call`)
        def __init__(self):
            super().__init__()
            self.conv = keras.layers.Conv2D(4, 3, activation="relu")
            self.pool = keras.layers.MaxPooling2D()
            self.flatten = keras.layers.Flatten()
            self.head = keras.layers.Dense(4)

        def call(self, x, training=False):
            return self.head(self.flatten(self.pool(self.conv(x))))

    model = Net()
    model(tf.constant(np.zeros((1, 10, 10, 1), np.float32)))
    set_weights(model, 6)
    return _train(tf, model, keras.optimizers.SGD(0.05), _images((8, 5, 7, 6, 9, 5, 11), seed=3))


@case
def gradient_penalty_on_new_batch_sizes(tf: Any) -> list:
    return _gradient_penalties(tf, (8, 9, 10, 11, 12))


def _gradient_penalties(tf: Any, sizes: Any) -> list:
    """A WGAN-GP critic's gradient penalty (a tape inside the tape) on batches of `sizes`: each penalty and the
    critic's gradients."""
    model = tf.keras.Sequential(
        [tf.keras.layers.Input((6,)), tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)]
    )
    set_weights(model, 11)
    rng = np.random.default_rng(12)
    results = []
    for n in sizes:
        x = tf.constant(rng.normal(size=(n, 6)).astype(np.float32))
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                inner.watch(x)
                score = tf.reduce_sum(model(x, training=True))
            penalty = tf.reduce_mean(tf.square(tf.norm(inner.gradient(score, x), axis=1) - 1.0))
        results.append([penalty, outer.gradient(penalty, model.trainable_variables)])
    return results


@pytest.fixture(scope="module")
def tapeshim_module() -> Any:
    import tapeshim

    return tapeshim


@pytest.fixture(scope="module")
def tf_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return tf_keras_outcomes(__file__, tmp_path_factory.mktemp("tf_keras_families") / "outcomes.pkl")


@pytest.fixture
def user_families(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls running a user's Python may have shape families (`TAPESHIM_USER_FAMILIES=1`)."""
    monkeypatch.setenv("TAPESHIM_USER_FAMILIES", "1")


@pytest.mark.parametrize("families", ["default", "user_families"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf_keras(
    name: str, families: str, tf_outcomes: dict, tapeshim_module: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if families == "user_families":
        monkeypatch.setenv("TAPESHIM_USER_FAMILIES", "1")
    assert_outcomes_match(tf_outcomes[name], run_case(CASES[name], tapeshim_module), rtol=1e-4, atol=1e-5)


# -- what tapeshim traces ---------------------------------------------------------------------------------------
def test_new_sizes_run_no_python_of_the_model_or_its_gradient(tapeshim_module: Any) -> None:
    """After two sizes, a step at a new batch size traces no program of the model or its loss, and its gradient
    is computed from the request's sized forward."""
    tf = tapeshim_module
    from tapeshim._src import keras_program_families, sized_gradients

    model, optimizer = _cnn(tf), tf.keras.optimizers.SGD(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    batches = _images((12, 13, 14, 15, 16, 17), seed=9)
    _train(tf, model, optimizer, batches[:2], loss_fn)
    traced, sized = keras_program_families.stats["programs"], keras_program_families.stats["sized_programs"]
    served = sized_gradients.stats["sized_gradients"]
    _train(tf, model, optimizer, batches[2:], loss_fn)
    assert keras_program_families.stats["programs"] == traced
    assert keras_program_families.stats["sized_programs"] - sized == 2 * 4  # (the model's calls and the loss's)
    assert sized_gradients.stats["sized_gradients"] - served == 4


def test_a_family_serves_sizes_of_its_symbols_only(tapeshim_module: Any) -> None:
    """A size of 1, or one equal to another dimension of the call, is not the family's: traced as before."""
    tf = tapeshim_module
    from tapeshim._src import keras_program_families

    layer = tf.keras.layers.Dense(3, kernel_initializer="ones")
    for n in (5, 6, 7):
        layer(tf.ones((n, 4)))
    traced = keras_program_families.stats["programs"]
    out = layer(tf.ones((8, 4)))
    assert keras_program_families.stats["programs"] == traced and out.shape == (8, 3)
    np.testing.assert_array_equal(out.numpy(), np.full((8, 3), 4.0, np.float32))
    for n in (1, 4):  # (4: the family's constant dimension)
        np.testing.assert_array_equal(layer(tf.ones((n, 4))).numpy(), np.full((n, 3), 4.0, np.float32))
    assert keras_program_families.stats["programs"] == traced + 2


def _counted_layer(tf: Any) -> tuple[Any, list]:
    """A layer of the user's own (`x + 1`) and the list of the input shapes its Python ran on."""
    calls: list = []

    class Counted(tf.keras.layers.Layer):
        def call(self, x):
            calls.append(tuple(x.shape))
            return x + 1.0

    return Counted(), calls


def test_a_users_layer_is_traced_per_shape_by_default(tapeshim_module: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `TAPESHIM_USER_FAMILIES`, a layer of the user's own is traced per shape: its Python may decide on
    a size in ways no watch sees (`match n: case int()`), as TF's eager calls decide at each size."""
    monkeypatch.delenv("TAPESHIM_USER_FAMILIES", raising=False)
    tf = tapeshim_module
    layer, calls = _counted_layer(tf)
    for n in (5, 6, 7, 8):
        layer(tf.ones((n, 4)))
    assert calls[-3:] == [(6, 4), (7, 4), (8, 4)]  # (once per shape, after the first's build and analysis)
    assert all(isinstance(n, int) for n, _ in calls)  # (never a symbolic size)


@pytest.mark.usefixtures("user_families")
def test_a_users_layer_deciding_nothing_is_traced_once_for_its_new_sizes(tapeshim_module: Any) -> None:
    """A layer of the user's own whose Python decides nothing on its sizes has a family: its second size traces
    it once with a symbolic size (watched), and later sizes run no Python of it."""
    tf = tapeshim_module
    from tapeshim._src import keras_program_families

    layer, calls = _counted_layer(tf)
    families = keras_program_families.stats["users_families"]
    for n in (5, 6, 7, 8, 9):
        np.testing.assert_array_equal(layer(tf.ones((n, 4))).numpy(), np.full((n, 4), 2.0, np.float32))
    assert keras_program_families.stats["users_families"] == families + 1
    symbolic = [shape for shape in calls if not isinstance(shape[0], int)]
    assert len(symbolic) == 1 and calls[-1] == symbolic[0]  # (the second size's family trace, then no call)


@pytest.mark.usefixtures("user_families")
@pytest.mark.parametrize("index", range(18))
def test_a_users_layer_deciding_on_a_size_is_traced_per_shape(index: int, tapeshim_module: Any) -> None:
    """A layer deciding on its batch's size (`_deciding_layers`) has its family refused: each size is traced
    with its own shape, as TF's eager calls see it (TF's values: the cases above)."""
    tf = tapeshim_module
    from tapeshim._src import keras_program_families

    layer = _deciding_layers(tf)[index]
    decided = keras_program_families.stats["decided"]
    for n in (5, 6, 7, 8):
        layer(tf.ones((n, 3)))
    assert keras_program_families.stats["decided"] == decided + 1


@pytest.mark.usefixtures("user_families")
def test_a_users_layer_under_a_profiler_is_traced_per_shape(tapeshim_module: Any) -> None:
    """Where the thread's profile hook is taken (a profiler runs), a user's layer cannot be watched: its sizes
    are traced per shape meanwhile, and its family is made once the profiler is gone (not refused for good)."""
    tf = tapeshim_module
    from tapeshim._src import keras_program_families

    layer, calls = _counted_layer(tf)
    sys.setprofile(lambda frame, event, arg: None)
    try:
        for n in (5, 6, 7, 8):
            layer(tf.ones((n, 4)))
    finally:
        sys.setprofile(None)
    assert calls[-3:] == [(6, 4), (7, 4), (8, 4)] and all(isinstance(n, int) for n, _ in calls)
    families = keras_program_families.stats["users_families"]
    for n in (9, 10, 11):
        np.testing.assert_array_equal(layer(tf.ones((n, 4))).numpy(), np.full((n, 4), 2.0, np.float32))
    assert keras_program_families.stats["users_families"] == families + 1


def test_a_gradient_inside_the_forward_binds_no_specialized_jaxpr(tapeshim_module: Any) -> None:
    """A gradient penalty's inner gradient differentiates the family's call: JAX must not meet the jaxpr made
    concrete for the host's rules (its relu's JVP rule was traced for the symbolic sizes), and the step's
    forward is computed on the host at every new size, as at HEAD."""
    tf = tapeshim_module
    from tapeshim._src import host_gradient

    refused = len(host_gradient._refused)
    for _, grads in _gradient_penalties(tf, range(8, 14)):
        assert grads[0] is not None  # (the output layer's bias has none, as in TF)
    assert len(host_gradient._refused) == refused


def test_specialized_jaxpr_computes_what_a_trace_of_its_sizes_does() -> None:
    from tapeshim._src import jaxpr_specialize, symbolic_dims

    def f(x, w):
        h = jax.nn.relu(x.reshape(-1, 2) @ w)  # (relu: a custom JVP; the product a nested jit)
        total = jax.lax.fori_loop(0, 3, lambda i, acc: acc + jnp.mean(h, axis=0), jnp.zeros(h.shape[1]))
        return total + jnp.arange(x.shape[0]).sum(), jnp.concatenate([h, h], axis=0)

    scope = export.SymbolicScope(["n >= 2"])
    (n,) = export.symbolic_shape("n", scope=scope)
    closed = jax.make_jaxpr(f)(jax.ShapeDtypeStruct((n, 4), np.float32), jax.ShapeDtypeStruct((2, 3), np.float32))
    rng = np.random.default_rng(0)
    for size in (2, 5, 9):
        x, w = rng.normal(size=(size, 4)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)
        concrete = jaxpr_specialize.specialized(closed, symbolic_dims.resolver({"n": size}))
        assert all(isinstance(d, int) for v in concrete.jaxpr.outvars for d in v.aval.shape)
        got = jax_core.jaxpr_as_fun(concrete)(x, w)
        for a, b in zip(got, f(x, w)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


if __name__ == "__main__":
    import tensorflow

    outcomes = {name: run_case(body, tensorflow) for name, body in CASES.items()}
    with open(sys.argv[1], "wb") as stream:
        pickle.dump(outcomes, stream)
