"""tf.keras promises checked in this process: one op per call, compile once, atomic updates, checkpoints.

Values are compared with TF's Keras in test_keras.py; these tests check what
TF cannot show (how the call is recorded, what compiles) or where tapeshim
deliberately differs (a rejected update changes no variable).
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from keras_cases import data, set_weights

import tapeshim as tf
from oracle import backend_compiles, program_lowerings
from tapeshim import experimental
from tapeshim._src import background_compile

_compiles = backend_compiles()


def _model(batchnorm=False):
    layers = [tf.keras.layers.Dense(8, activation="relu")]
    if batchnorm:
        layers.append(tf.keras.layers.BatchNormalization())
    model = tf.keras.Sequential([tf.keras.Input((4,))] + layers + [tf.keras.layers.Dense(3)])
    set_weights(model, 0)
    return model


def _data(n=16):
    return data(n, seed=1)


def test_model_call_is_one_recorded_op():
    model = _model(batchnorm=True)
    x, _ = _data()
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
    node = logits._node
    # A training call that updates state (BatchNormalization) is recorded with its forward pass already run
    # (keras_saved_forward): the op's inputs then also hold the saved pullback and outputs.
    assert node is not None and node.key[0] in ("KerasCall", "KerasCallSavedForward")
    assert node.inputs[0] is x  # the input goes straight into the one op: nothing was recorded per layer
    assert [t._value is not None for t in node.inputs[1 : 1 + len(model.variables)]] == [True] * len(model.variables)
    assert tape.watched_variables() and all(isinstance(v, tf.keras.Variable) for v in tape.watched_variables())


def test_outside_a_tape_a_call_is_one_jitted_computation():
    model = _model()
    x, _ = _data()
    out = model(x)
    assert isinstance(out, tf.Tensor) and out._node is None
    np.testing.assert_allclose(out.numpy(), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_steady_keras_custom_loop_compiles_once():
    model = _model(batchnorm=True)
    optimizer = tf.keras.optimizers.Adam(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = _data()

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return float(loss)

    warm = len(program_lowerings())  # (a program compiled before may come from the disk cache: it lowers)
    for _ in range(150):  # past the host's rental (`compile_tiers.calls_before_compile`)
        step()
    assert len(program_lowerings()) > warm, "the warm-up compiled the step"
    experimental.reset_compile_stats()
    before = len(_compiles)
    losses = [step() for _ in range(20)]
    assert len(_compiles) == before, "a steady Keras loop compiled again"
    stats = experimental.compile_stats()
    assert stats["programs_compiled"] == 0 and stats["per_op_plans"] == 0  # (none to compile at a later step)
    assert losses[-1] < losses[0]


def test_keras_step_in_function_compiles_once():
    model = _model()
    optimizer = tf.keras.optimizers.SGD(0.1)
    x, y = _data()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True)
            loss = tf.reduce_mean(loss)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    warm = len(program_lowerings())  # (a program compiled before may come from the disk cache: it lowers)
    for _ in range(1500):  # traced; computed on the host (interpret.py) until its calls paid for its compile
        step(x, y)
    assert len(program_lowerings()) > warm, "the warm-up compiled the step"
    before = len(_compiles)
    for _ in range(10):
        step(x, y)
    assert len(_compiles) == before
    assert int(optimizer.iterations) == 1510


def test_rejected_update_changes_no_variable():
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0])
    optimizer = tf.keras.optimizers.Adam(0.1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape"):
        optimizer.apply_gradients([(tf.constant([1.0, 1.0]), a), (tf.constant([1.0, 1.0]), b)])
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(b.numpy(), [3.0])
    assert int(optimizer.iterations) == 0


def test_optimizer_update_is_one_op_for_all_variables():
    model = _model()
    optimizer = tf.keras.optimizers.Adam(0.01)
    x, _ = _data()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))  # builds; computed on the host
    optimizer.apply_gradients(zip(grads, model.trainable_variables))  # compiles
    kernels = experimental.compile_stats()["eager_kernels"]
    before = len(_compiles)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    assert len(_compiles) == before and experimental.compile_stats()["eager_kernels"] == kernels


def test_checkpoint_restores_model_and_optimizer_slots(tmp_path):
    x, y = _data()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train(model, optimizer, steps):
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    model, optimizer = _model(batchnorm=True), tf.keras.optimizers.Adam(0.05)
    train(model, optimizer, 3)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer), str(tmp_path), 2)
    manager.save()
    train(model, optimizer, 2)
    expected = [w.numpy() for w in model.weights]

    fresh_model, fresh_optimizer = _model(batchnorm=True), tf.keras.optimizers.Adam(0.05)
    tf.train.Checkpoint(model=fresh_model, optimizer=fresh_optimizer).restore(manager.latest_checkpoint)
    train(fresh_model, fresh_optimizer, 2)  # slots are created, then restored, on the first step
    assert int(fresh_optimizer.iterations) == int(optimizer.iterations)
    for got, want in zip(fresh_model.weights, expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-7)


def test_checkpoint_of_another_model_names_the_variables(tmp_path):
    path = tf.train.Checkpoint(model=_model()).write(str(tmp_path / "ckpt"))
    other = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(5), tf.keras.layers.Dense(3)])
    before = [w.numpy() for w in other.weights]
    with pytest.raises(ValueError, match="model/variables/0"):
        tf.train.Checkpoint(model=other).restore(path)
    for got, want in zip(other.weights, before):
        np.testing.assert_array_equal(got.numpy(), want)


def test_keras_imported_with_another_backend_is_a_clear_error():
    code = (
        "import os; os.environ['KERAS_BACKEND'] = 'numpy'; import keras\n"
        "import tapeshim as tf\n"
        "try:\n    tf.keras\nexcept ImportError as exc:\n    print('ImportError:', exc)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "ImportError: tapeshim.keras runs Keras 3 on its JAX backend" in out.stdout, out.stderr
    assert "'numpy' backend" in out.stdout


def test_keras_backend_env_for_another_backend_is_a_clear_error():
    env = {**os.environ, "KERAS_BACKEND": "torch"}
    code = "import tapeshim as tf\ntry:\n    tf.keras\nexcept ImportError as exc:\n    print('ImportError:', exc)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "KERAS_BACKEND is set to 'torch'" in out.stdout, out.stderr


def test_each_keras_function_keeps_its_own_programs():
    functions = [tf.keras.activations.get(name) for name in ("relu", "tanh", "sigmoid")]
    inputs = [np.ones((n, 2), np.float32) for n in range(1, 31)]  # 90 programs, more than 64 in all
    for _ in range(2):  # each program's first call runs on the host (interpret.py), its second compiles
        for fn in functions:
            for x in inputs:
                fn(x)
    before = len(_compiles)
    for fn in functions:
        for x in inputs:
            fn(x)
    assert len(_compiles) == before


def test_saved_model_file_loads_back_as_tapeshim_classes(tmp_path):
    model = _model(batchnorm=True)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert type(loaded) is tf.keras.Sequential and isinstance(loaded.optimizer, tf.keras.optimizers.Adam)
    x, _ = _data()
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(loaded(x))
    assert all(g is not None for g in tape.gradient(loss, loaded.trainable_variables))


def test_fit_with_tf_style_train_step_compiles_once():
    class CustomModel(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
            for metric in self.metrics:
                metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = tf.keras.Input((4,))
    model = CustomModel(inputs, tf.keras.layers.Dense(3)(tf.keras.layers.Dense(8, activation="relu")(inputs)))
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.01),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    x, y = _data(32)
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)  # the second epoch resets metrics built by the first
    # what runs once per fit (the metrics' reset and result) runs on the host until its calls paid for its compile
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    experimental.reset_compile_stats()
    before = len(_compiles)
    history = model.fit(x, y, batch_size=8, epochs=4, verbose=0)
    assert len(_compiles) == before, "a steady fit with a TF-style train_step compiled again"
    assert experimental.compile_stats()["programs_compiled"] == 0
    assert model.train_function is not None and history.history["loss"][-1] < history.history["loss"][0]


def test_python_branch_on_a_value_inside_a_schedule_says_what_to_do():
    # TF's Keras runs a schedule eagerly, where a Python `if` on a tensor works; tapeshim runs it inside the
    # optimizer's JAX-traced update: the error is TF's graph-mode class, with the rewrite it needs. (A layer's
    # call runs op by op there, as TF's: keras_eager_cases.py.)
    class Schedule(tf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            if tf.cast(step, tf.float32) < 2.0:
                return 0.1
            return 0.01

    variable = tf.Variable([1.0])
    optimizer = tf.keras.optimizers.SGD(Schedule())
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="tf.cond or tf.where"):
        optimizer.apply_gradients([(tf.constant([1.0]), variable)])


def test_setting_flags_and_numbers_on_built_layers_compiles_nothing():
    # A GAN loop toggles `trainable`; models keep counters; only a swapped activation traces again
    discriminator = _model()
    generator = _model()
    x = tf.constant(np.ones((4, 4), np.float32))
    d_optimizer, g_optimizer = tf.keras.optimizers.SGD(0.01), tf.keras.optimizers.SGD(0.01)

    def steps(n):
        for i in range(n):
            discriminator.trainable = True
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(discriminator(x))
            d_optimizer.apply_gradients(
                zip(tape.gradient(loss, discriminator.trainable_variables), discriminator.trainable_variables)
            )
            discriminator.trainable = False
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(discriminator(generator(x)[:, :3] @ tf.ones((3, 4))))
            g_optimizer.apply_gradients(
                zip(tape.gradient(loss, generator.trainable_variables), generator.trainable_variables)
            )
            generator.step_count = i

    steps(3)
    before = len(_compiles)
    steps(5)
    assert len(_compiles) == before


def test_each_new_length_of_a_decoding_loop_traces_its_call_once_and_compiles_nothing():
    # The Transformer tutorial's Translator calls its model once per length. The analysis of a new shape's call
    # is the trace its first call runs; TF code in a custom `call` folds its constants, Keras's causal mask does
    # not (it compiled 13 eager programs per length).
    from keras_decoding_cases import decoder_block

    traces = []
    block = decoder_block(tf)
    traced_call = type(block).call

    def counting_call(self, x):
        traces.append(tuple(x.shape))
        return traced_call(self, x)

    type(block).call = counting_call
    rng = np.random.default_rng(0)
    tokens = rng.normal(size=(1, 29, 8)).astype(np.float32)
    # Warm-up: each kernel of the call's TF code has run, compiled (in the background, then once more for its
    # calls inside a trace: JAX keys compiled programs by that context too) and settled.
    for lengths in ((17, 18, 19), (20, 21)):
        for length in lengths:
            block(tf.constant(tokens[:, :length]))
        background_compile.wait()
    before, seen = len(_compiles), len(traces)
    for length in range(23, 29):  # (lengths no other test runs: a shape's kernel compiles on its second call)
        out = block(tf.constant(tokens[:, :length]))
        assert out.shape == (1, length, 8)
    assert len(traces) - seen == 6  # once per new length
    assert len(_compiles) == before


def test_a_gradient_replays_the_calls_trace_without_running_its_python_again():
    # A recorded Keras call is replayed inside the gradient program from the jaxpr of its analysis
    # (`keras_bridge._replay`): its Python (Keras's layer machinery, 5-25 ms a call) runs once per signature, not
    # again for the output dependencies and for each program that differentiates it.
    calls = []

    class Scaled(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 3), initializer="ones")

        def call(self, x):
            calls.append(tuple(x.shape))
            return tf.keras.ops.tanh(tf.keras.ops.matmul(x, self.w) * 0.1)

    layer = Scaled()
    inputs = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4)
    weights = np.ones((4, 3), np.float32)
    ran = None
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(tf.constant(inputs)))
        if ran is None:
            ran = len(calls)  # (Keras's output spec when it builds the layer, and the analysis of the call)
        (grad,) = tape.gradient(loss, layer.trainable_variables)
        activation = np.tanh(inputs @ weights * 0.1)
        np.testing.assert_allclose(grad.numpy(), inputs.T @ (1 - activation**2) * 0.1, rtol=1e-5, atol=1e-6)
        layer.w.assign_sub(0.1 * grad)
        weights = weights - 0.1 * grad.numpy()
    assert len(calls) == ran <= 2


def test_a_replayed_call_runs_its_python_where_its_trace_does_not_hold():
    # The analysis trace of a Keras call is reverse-mode's, under the JAX settings of its time: a forward
    # accumulator (whose kernels trace JAX's own rules) and a product precision set since (TF32 turned off)
    # run the call's Python again, as every trace did before the replay.
    class Root(tf.keras.layers.Layer):
        def call(self, x):
            return tf.sqrt(x) * 2.0

    layer = Root()
    x = tf.constant([1.0, 4.0])
    layer(x)  # its analysis
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as accumulator:
        y = layer(x)
    np.testing.assert_allclose(accumulator.jvp(y).numpy(), [1.0, 0.5])

    import jax

    from tapeshim._src import keras_bridge

    dense = tf.keras.layers.Dense(3)
    inputs = tf.constant(np.ones((2, 4), np.float32))
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(dense(inputs))
    tape.gradient(total, dense.trainable_variables)
    (program,) = keras_bridge._programs[dense].values()
    structs = [jax.ShapeDtypeStruct(shape, np.float32) for shape in ((2, 4), (4, 3), (3,))]
    enabled = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    try:
        assert "HIGHEST" in str(jax.make_jaxpr(program.replay)(*structs))
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(enabled)
