"""`tf.keras`: real Keras 3, on its JAX backend, working with tapeshim's tapes and functions.

Importing this module imports Keras with the JAX backend (Keras chooses its
backend once per process; see docs/keras.md). Models, layers, losses, metrics
and optimizers are Keras's own classes, subclassed so that their calls are
tapeshim ops: `tape.gradient(loss, model.trainable_variables)` works, and
`optimizer.apply_gradients` updates every variable in one compiled call.
"""

from tapeshim._src.keras_bridge import keras as _keras
from tapeshim._src.keras_compat import tf_keras as _tf_keras
from tapeshim._src.keras_models import Functional as _Functional
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
    ops,
    optimizers,
    preprocessing,
    random,
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
Layer = layers.Layer
Loss = losses.Loss
Metric = metrics.Metric
Optimizer = optimizers.Optimizer
__version__ = _keras.__version__
# Keras's own classes, functions and namespaces that TF's `tf.keras` re-exports as they are.
DTypePolicy = _keras.DTypePolicy
FloatDTypePolicy = _keras.FloatDTypePolicy
Function = _keras.Function
Operation = _keras.Operation
Quantizer = _keras.Quantizer
RematScope = _keras.RematScope
SymbolicScope = _keras.SymbolicScope
device = _keras.device
remat = _keras.remat
version = _keras.version
distillation = _keras.distillation
# Keras's JAX-native data/model parallelism (DataParallel, ModelParallel, LayoutMap), as TF 2.21's tf.keras has it.
distribution = _keras.distribution
export = _keras.export
legacy = _tf_keras.legacy
quantizers = _keras.quantizers
tree = _keras.tree
visualization = _keras.visualization
wrappers = _keras.wrappers


def _register_for_loading() -> None:
    """Lets `tf.keras.models.load_model` find tapeshim's classes in files tapeshim saved.

    Keras looks a saved class up by its registered name (the class name for these)
    in its custom-object registry, and imports only `keras.*` modules itself.
    """
    found: dict[str, type] = {"Model": Model, "Sequential": Sequential, "Functional": _Functional}
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
    "DTypePolicy",
    "FloatDTypePolicy",
    "Function",
    "Initializer",
    "Input",
    "InputSpec",
    "KerasTensor",
    "Layer",
    "Loss",
    "Metric",
    "Model",
    "Operation",
    "Optimizer",
    "Quantizer",
    "Regularizer",
    "RematScope",
    "Sequential",
    "StatelessScope",
    "SymbolicScope",
    "Variable",
    "activations",
    "applications",
    "backend",
    "callbacks",
    "config",
    "constraints",
    "datasets",
    "device",
    "distillation",
    "distribution",
    "dtype_policies",
    "export",
    "initializers",
    "layers",
    "legacy",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "name_scope",
    "ops",
    "optimizers",
    "preprocessing",
    "quantizers",
    "random",
    "regularizers",
    "remat",
    "saving",
    "tree",
    "utils",
    "version",
    "visualization",
    "wrappers",
]
