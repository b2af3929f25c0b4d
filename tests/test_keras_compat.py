"""Every Keras internal tapeshim relies on (`tapeshim/_src/keras_compat.py`) still exists and does its job.

A Keras upgrade that renames or removes one fails here, in one obvious place,
instead of somewhere deep in a training loop. These tests check Keras's own
objects (no TF values to compare with): `test_keras.py` compares what tapeshim
builds on them with TF.
"""

import importlib
import pathlib
import re
from types import ModuleType

import jax.numpy as jnp
import numpy as np
import pytest

import tapeshim as tf
from tapeshim._src import keras_bridge, keras_compat, keras_models, keras_optimizers, keras_train_step
from tapeshim._src.keras_compat import keras

_ROOT = pathlib.Path(__file__).resolve().parents[1] / "tapeshim"


def test_keras_runs_on_jax_and_old_names_stay_importable():
    assert keras_compat.load_keras() is keras
    assert keras.backend.backend() == "jax"
    # Kept importable from keras_bridge (the tapeshim.keras namespaces import `tf_keras` from there).
    assert keras_bridge.keras is keras
    assert keras_bridge.tf_keras is keras_compat.tf_keras
    assert keras_bridge.in_stateless_scope is keras_compat.in_stateless_scope


def test_tf_keras_is_the_tf_compatible_namespace():
    namespace = keras_compat.tf_keras
    assert isinstance(namespace, ModuleType)
    assert namespace.layers.Dense is keras.layers.Dense
    assert callable(namespace.losses.mse)  # a TF-only alias
    assert isinstance(namespace.legacy, ModuleType)


def test_in_stateless_scope():
    assert keras_compat.in_stateless_scope() is False
    with keras.StatelessScope():
        assert keras_compat.in_stateless_scope() is True
    assert keras_compat.in_stateless_scope() is False


def test_functional_model_names():
    inputs = keras.Input((3,))
    outputs = keras.layers.Dense(2)(inputs)
    assert keras_compat.functional_init_arguments((inputs, outputs), {}) is True
    assert keras_compat.functional_init_arguments((), {"inputs": inputs, "outputs": outputs}) is True
    assert keras_compat.functional_init_arguments((), {}) is False
    assert isinstance(keras.Model(inputs, outputs), keras_compat.Functional)
    assert issubclass(keras_compat.Functional, keras.Model)
    assert issubclass(keras.Model, keras_compat.Trainer)
    assert isinstance(tf.keras.Model(inputs, outputs), keras_compat.Functional)  # tapeshim's goes through them


def test_clip_by_global_norm_and_compute_output_spec():
    clipped = keras_compat.clip_by_global_norm([jnp.array([3.0, 0.0]), jnp.array([4.0])], 1.0)
    np.testing.assert_allclose(np.concatenate([np.asarray(c) for c in clipped]), [0.6, 0.0, 0.8], rtol=1e-6)
    spec = keras_compat.compute_output_spec(lambda x: x * 2.0, keras.KerasTensor((2, 3), dtype="float32"))
    assert tuple(spec.shape) == (2, 3) and spec.dtype == "float32"


def test_draw_seed_and_compute_fans():
    key = keras_compat.draw_seed(7)  # an int seed: the raw key `[seed, 0]`
    assert key.dtype == np.uint32 and np.asarray(key).tolist() == [7, 0]
    generator = keras.random.SeedGenerator(3)
    assert not np.array_equal(keras_compat.draw_seed(generator), keras_compat.draw_seed(generator))  # it advances
    assert keras_compat.compute_fans((3, 3, 4, 8)) == (36, 72)
    assert keras_compat.compute_fans((5, 7)) == (5, 7)


def test_multi_process_rng_start_up_resolves():
    # Calling it would reseed this process's Keras; the name it calls must exist.
    distribution_lib = importlib.import_module("keras.src.backend.jax.distribution_lib")
    assert callable(distribution_lib.initialize_rng)
    assert callable(keras_compat.initialize_multi_process_rng)


def test_layer_attributes():
    layer = tf.keras.layers.Dense(2)
    model = tf.keras.Sequential([tf.keras.Input((3,)), layer])
    layer.trainable = False
    assert layer.trainable_variables == []
    assert [v.path for v in keras_compat.own_trainable_variables(layer)] == [v.path for v in layer.weights]
    sublayers = keras_compat.flatten_layers(model, include_self=False)
    assert sublayers[-1] is layer and not any(sublayer is model for sublayer in sublayers)  # after the InputLayer
    assert keras_compat.flatten_layers(model)[0] is model
    assert keras_compat.call_has_training_arg(model) is True
    assert keras_compat.call_has_training_arg(_NoTraining()) is False


class _NoTraining(keras.layers.Layer):
    def call(self, inputs):
        return inputs


def test_input_conversion():
    layer = keras.layers.Dense(2)
    assert keras_compat.input_conversion(layer) == (True, False)
    keras_compat.set_input_conversion(layer, False, True)
    assert keras_compat.input_conversion(layer) == (False, True)
    with pytest.raises(ValueError, match="positional"):  # (what the attributes turn off, restored)
        keras_compat.set_input_conversion(layer, True, False)
        layer(jnp.ones((1, 3), jnp.float32), "not a tensor")


def test_trainer_attributes():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])  # Keras's own `losses` reads the override
    model.compile(optimizer="sgd", loss="mse")
    assert isinstance(keras_compat.loss_tracker(model), keras.metrics.Mean)
    compile_loss = keras_compat.compile_loss(model)
    assert compile_loss is not None
    x = np.ones((2, 3), np.float32)
    y = np.zeros((2, 1), np.float32)
    y_pred = jnp.full((2, 1), 3.0)
    loss = keras_compat.compute_compiled_loss(model, x, y, y_pred, None, training=False)
    np.testing.assert_allclose(np.asarray(loss), 9.0)
    keras_compat.set_losses_override(model, [jnp.float32(1.0)])
    try:
        assert [float(v) for v in model.losses] == [1.0]
    finally:
        keras_compat.set_losses_override(model, [])
    assert model.losses == []


def test_direct_assign():
    variable = keras.Variable(np.zeros(2, np.float32))
    keras_compat.direct_assign(variable, jnp.ones(2, jnp.float32))
    np.testing.assert_array_equal(np.asarray(variable.value), [1.0, 1.0])


def test_optimizer_attributes():
    optimizer = keras.optimizers.SGD(0.1, clipnorm=1.0)  # Keras's own (tapeshim's adopts its counter)
    variable = keras.Variable(np.ones(2, np.float32))
    optimizer.build([variable])
    keras_compat.check_variables_are_known(optimizer, [variable])
    with pytest.raises(ValueError):
        keras_compat.check_variables_are_known(optimizer, [keras.Variable(np.ones(2, np.float32))])
    old = keras_compat.iterations_variable(optimizer)
    assert old is optimizer.iterations
    new = keras.Variable(np.int64(0), dtype="int64", trainable=False)
    keras_compat.replace_iterations_variable(optimizer, new)
    assert keras_compat.iterations_variable(optimizer) is new
    assert any(v is new for v in optimizer.variables) and not any(v is old for v in optimizer.variables)
    np.testing.assert_allclose(np.asarray(keras_compat.clip_by_norm(optimizer, jnp.array([3.0, 4.0]))), [0.6, 0.8])
    assert str(tf.keras.optimizers.SGD(0.1).iterations.dtype) == "int64"  # tapeshim's replacement went through


_MIXINS = {
    keras.Layer: keras_bridge.TapeLayerMixin,
    keras.Model: keras_models.TrainingMixin,
    keras.optimizers.Optimizer: keras_optimizers.TapeOptimizerMixin,
}


@pytest.mark.parametrize("keras_class, hook, source", keras_compat.HOOKS, ids=[h[1] for h in keras_compat.HOOKS])
def test_hooks_exist_in_keras_and_are_overridden(keras_class, hook, source):
    assert source.startswith("keras/src/")
    assert callable(getattr(keras_class, hook, None)), f"Keras no longer defines {keras_class.__name__}.{hook}"
    assert hook in vars(_MIXINS[keras_class])


def test_every_private_override_is_listed():
    listed = {(keras_class, hook) for keras_class, hook, _ in keras_compat.HOOKS}
    for keras_class, mixin in _MIXINS.items():
        private = {
            name
            for name in vars(mixin)
            if name.startswith("_") and not name.startswith("__") and hasattr(keras_class, name)
        }
        assert {(keras_class, name) for name in private} <= listed, f"{mixin.__name__} overrides unlisted hooks"


def test_adopted_attributes_are_set_by_compile():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])  # Keras's own class
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    for attribute, source in keras_compat.ADOPTED_ATTRIBUTES:
        assert source.startswith("keras/src/")
        assert hasattr(model, attribute), f"Keras's compile() no longer sets {attribute}"
        assert isinstance(vars(keras_models.TrainingMixin)[attribute], keras_train_step.AdoptedAttribute)


# Reaching into Keras's private modules is allowed only in keras_compat.py. Two files of other owners still
# do it themselves (reported to the lead): keras/__init__.py reads `keras._tf_keras` (keras_compat.tf_keras
# has it) and _src/keras_embedding.py reads Keras's `Functional` (keras_compat.Functional).
_ALLOWED = {"_src/keras_compat.py"}
_PRIVATE_KERAS = re.compile(r"(?:import|from)\s+keras\.src\b|\bkeras\.src\.\w|\w\._tf_keras\.")


def test_no_keras_private_modules_outside_keras_compat():
    offenders = []
    for path in sorted(_ROOT.rglob("*.py")):
        relative = path.relative_to(_ROOT).as_posix()
        if relative in _ALLOWED:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _PRIVATE_KERAS.search(line):
                offenders.append(f"tapeshim/{relative}:{number}: {line.strip()}")
    assert offenders == []
