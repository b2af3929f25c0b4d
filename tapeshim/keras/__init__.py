"""`tf.keras`: real Keras 3, on its JAX backend, working with tapeshim's tapes and functions.

Importing this module imports Keras with the JAX backend (Keras chooses its
backend once per process; see docs/keras.md). Models, layers, losses, metrics
and optimizers are Keras's own classes, subclassed so that their calls are
tapeshim ops: `tape.gradient(loss, model.trainable_variables)` works, and
`optimizer.apply_gradients` updates every variable in one compiled call.
"""

from tapeshim._src.keras_bridge import keras as _keras
from tapeshim._src.keras_models import Model, Sequential
from tapeshim.keras import (
    activations,
    applications,
    backend,
    callbacks,
    config,
    constraints,
    datasets,
    dtype_policies,
    initializers,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    optimizers,
    preprocessing,
    regularizers,
    saving,
    utils,
)

Input = _keras.Input
InputSpec = _keras.InputSpec
KerasTensor = _keras.KerasTensor
Variable = _keras.Variable
StatelessScope = _keras.StatelessScope
Initializer = _keras.Initializer
Regularizer = _keras.Regularizer
name_scope = _keras.name_scope
ops = _keras.ops
random = _keras.random
Layer = layers.Layer
Loss = losses.Loss
Metric = metrics.Metric
Optimizer = optimizers.Optimizer
__version__ = _keras.__version__


def _register_for_loading() -> None:
    """Lets `tf.keras.models.load_model` find tapeshim's classes in files tapeshim saved.

    Keras looks a saved class up by its registered name (the class name for these)
    in its custom-object registry, and imports only `keras.*` modules itself.
    """
    from tapeshim._src.keras_models import Functional

    found = {"Model": Model, "Sequential": Sequential, "Functional": Functional}
    for namespace in (layers, losses, metrics, optimizers):
        for name in namespace.__all__:
            obj = getattr(namespace, name)
            if isinstance(obj, type) and obj.__module__.startswith("tapeshim"):
                found.setdefault(obj.__name__, obj)
    registry = _keras.saving.get_custom_objects()
    for name, cls in found.items():
        registry.setdefault(name, cls)


_register_for_loading()

__all__ = [
    "Initializer", "Input", "InputSpec", "KerasTensor", "Layer", "Loss", "Metric", "Model", "Optimizer",
    "Regularizer", "Sequential", "StatelessScope", "Variable", "activations", "applications", "backend",
    "callbacks", "config", "constraints", "datasets", "dtype_policies", "initializers", "layers", "losses",
    "metrics", "mixed_precision", "models", "name_scope", "ops", "optimizers", "preprocessing", "random",
    "regularizers", "saving", "utils",
]
