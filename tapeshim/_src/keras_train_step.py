"""TF-style `train_step(self, data)`, `test_step` and `predict_step` overrides, driven by Keras's loops.

TF's Keras calls `train_step(data)` on a batch and expects a dict of logs; Keras's
JAX trainer calls `train_step(state, data)` and threads the variables' values
through as `state`. A model whose subclass overrides a step TF-style (one data
argument, a `GradientTape` inside, `self.optimizer.apply_gradients`, metrics
updated and returned) gets a step function for Keras's JAX loop that runs the
override under `tapeshim.function` (one compiled program per batch shape) on the
live variables, and hands Keras the variables' new values as the new state. So
`fit`, `evaluate` and `predict` keep all of Keras's loop (callbacks, validation,
progress) and run the user's step as TF does.

The default steps are offered TF-style too (`super().train_step(data)`), as are
TF's `compiled_loss` and `compiled_metrics` shims, and `compute_loss` under a tape
is one op returning a tapeshim Tensor.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable

import jax

from tapeshim._src import keras_compat, nest
from tapeshim._src.function import function
from tapeshim._src.keras_bridge import keras, stateful_call
from tapeshim._src.keras_compat import flatten_layers
from tapeshim._src.keras_functional_split import apply_host_prefix, has_host_layers, host_prefix
from tapeshim._src.keras_host_layers import outputs_given
from tapeshim._src.keras_losses_metrics import TapeMetricMixin
from tapeshim._src.keras_optimizers import adopt_optimizer_variables, updates_sparsely
from tapeshim._src.ops import array_ops
from tapeshim._src.tape import GradientTape
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable

STEP_NAMES = ("train_step", "test_step", "predict_step")
_STEP_STATE = {
    "train_step": ("trainable", "non_trainable", "optimizer", "metrics"),
    "test_step": ("trainable", "non_trainable", "metrics"),
    "predict_step": ("trainable", "non_trainable"),
}
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def tf_style_step(model: Any, name: str, base: type) -> bool:
    """Whether Keras's loops run `model`'s step `name` TF-style (`step(self, data)`, on tapeshim tensors).

    So they do when the model's class overrides the step TF-style (one data
    argument), and for the training step of a model that trains an `Embedding`
    table with an optimizer updating slices (`trains_embeddings_sparsely`).

    Args:
      model: the Keras model.
      name: `"train_step"`, `"test_step"` or `"predict_step"`.
      base: tapeshim's training mixin, whose own step dispatches on the arguments.
    """
    method = getattr(type(model), name, None)
    if method is None:
        return False
    if method is getattr(base, name):
        return name == "train_step" and trains_embeddings_sparsely(model)
    try:
        parameters = list(inspect.signature(method).parameters.values())[1:]
    except (TypeError, ValueError):
        return False
    return sum(p.kind in _POSITIONAL for p in parameters) == 1


def trains_embeddings_sparsely(model: Any) -> bool:
    """Whether `model.fit` must apply its `Embedding` tables' gradients as `IndexedSlices`, as TF's trainer.

    TF's Keras trainer takes `tape.gradient` of the loss, an `IndexedSlices` for a
    table, and its optimizer (Adam, RMSprop, Adagrad, SGD with momentum...)
    updates only the rows looked up, one slice at a time; Keras's JAX step
    would apply a dense gradient. So a model holding a trainable `Embedding`
    trains with TF's default step on the tape (`default_train_step`), unless its
    optimizer densifies such gradients anyway or a strategy distributes it
    (Keras's data-parallel step).
    """
    from tapeshim._src.distribute.keras_fit import _strategy_of  # import cycle: keras_fit imports keras models
    from tapeshim._src.keras_embedding import looks_up_rows

    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not updates_sparsely(optimizer):
        return False
    if not any(looks_up_rows(layer) and layer.trainable for layer in flatten_layers(model)):
        return False
    return _strategy_of(model) is None


def _state_values(model: Any, parts: tuple) -> tuple:
    groups = {
        "trainable": lambda: model.trainable_variables,
        "non_trainable": lambda: model.non_trainable_variables,
        "optimizer": lambda: model.optimizer.variables if model.optimizer is not None else [],
        "metrics": lambda: model.metrics_variables,
    }
    return tuple([variable.value for variable in groups[part]()] for part in parts)


def _as_tensors(data: Any) -> Any:
    def convert(leaf: Any) -> Any:
        if leaf is None or isinstance(leaf, (Tensor, Variable, str, bytes)):
            return leaf
        return convert_to_tensor(leaf)

    return nest.map_structure(convert, data)


def _as_arrays(logs: Any) -> Any:
    def convert(leaf: Any) -> Any:
        if isinstance(leaf, (Tensor, Variable)):
            return convert_to_tensor(leaf).value
        return leaf

    return jax.tree_util.tree_map(convert, logs, is_leaf=lambda leaf: isinstance(leaf, (Tensor, Variable)))


def _after_host_layers(model: Any, step: Callable[[Any], Any]) -> Callable[[Any], Any] | None:
    """`step` for a model whose layers computed with TensorFlow's ops take its inputs (`host_prefix`):
    those layers run on the batch's values, the rest of the step under `tapeshim.function` (TF's fit
    runs them inside its graph; they cannot enter a JAX program). None for other models.

    The function reduces retracing as TF's `fit`'s does (`reduce_retracing=True`): the first batch shape is
    traced for its sizes, and a second (the smaller last batch; a `TextVectorization` without
    `output_sequence_length` pads each batch to its longest text) traces once for every size
    (`function_symbolic`), each size computed on the host first and compiled once those calls paid for it. (It ran op
    by op until it had spent a compile's time, then traced and compiled on the calling thread: the last batch
    took 50 ms an epoch, then 0.7-0.9 s in one, where it now takes 3-6 ms from the third epoch; with a length
    per batch, epochs 2-6 took 0.48-0.86 s, now 0.15-0.63 s.)"""
    prefix = host_prefix(model)
    if prefix is None:
        return None

    def rest_of_step(data: Any, host_outputs: list) -> Any:
        with outputs_given({id(layer): output for (layer, _), output in zip(prefix, host_outputs)}):
            return step(data)

    compiled = function(rest_of_step, reduce_retracing=True)

    def run(data: Any) -> Any:
        if not model.built:  # (the first call builds it, eagerly as TF's first step)
            return step(data)
        whole = isinstance(data, (list, tuple)) and 1 <= len(data) <= 3  # (`unpack_x_y_sample_weight`)
        applied = apply_host_prefix(model, prefix, data[0] if whole else data)
        if applied is None:
            return step(data)
        host_outputs, inputs = applied
        return compiled((inputs, *data[1:]) if whole else inputs, host_outputs)

    return run


def make_step_function(model: Any, name: str, default_step: bool = False) -> Callable[[Any, Any], tuple]:
    """A step function for Keras's JAX loops that runs the model's TF-style step `name`.

    Keras calls it as `(state, iterator) -> (logs, state)`. The step runs on the
    model's live variables (tapeshim keeps them live for such models) under
    `tapeshim.function`, unless the model runs eagerly; the returned state is the
    variables' new values, which Keras assigns back as it does for its own step.
    `default_step` says that the step is TF's default one (`default_train_step`...),
    which calls the model once on the batch's inputs.
    """
    step = getattr(model, name)
    # (a model holding a layer computed with TensorFlow's ops on values, `TextVectorization`, runs those
    # layers before TF's default step compiles, or its step eagerly: they cannot run inside a function)
    if model.run_eagerly:
        compiled = step
    elif has_host_layers(model):
        compiled = (_after_host_layers(model, step) if default_step else None) or step
    else:
        compiled = function(step)
    parts = _STEP_STATE[name]

    def step_function(state: Any, iterator: Any) -> tuple:
        del state  # the variables hold it: Keras does not purge them for these models
        outputs = []
        for index in range(max(1, int(model.steps_per_execution))):
            try:
                data = next(iterator)
            except StopIteration:
                if index == 0:
                    raise
                break
            if getattr(model, "_whole_elements", False):  # (the dataset's element, whole: `keras_models`)
                data = data[0]
            outputs.append(_as_arrays(compiled(_as_tensors(data))))
        if name != "predict_step" or len(outputs) == 1:
            return outputs[-1], _state_values(model, parts)  # the logs of the last step, as TF's
        # Predictions of the steps run in one execution, concatenated along the batch.
        return jax.tree_util.tree_map(lambda *batches: jax.numpy.concatenate(batches), *outputs), _state_values(
            model, parts
        )

    return step_function


# -- TF's default steps, TF-style (for `super().train_step(data)`) ------------------------------------------
def _first_batch_size(x: Any) -> Any:
    first = next(leaf for leaf in nest.flatten(x) if leaf is not None)
    return array_ops.shape(first)[0]


def _forward(model: Any, x: Any, training: bool) -> Any:
    return model(x, training=training) if keras_compat.call_has_training_arg(model) else model(x)


def default_train_step(model: Any, data: Any) -> dict:
    """TF's Keras `train_step(data)`: one optimizer step on the compiled loss, then the metrics."""
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    with GradientTape() as tape:
        y_pred = _forward(model, x, True)
        loss = keras_compat.compute_compiled_loss(model, x, y, y_pred, sample_weight, training=True)
        keras_compat.loss_tracker(model).update_state(loss, sample_weight=_first_batch_size(x))
        if model.optimizer is not None:
            loss = model.optimizer.scale_loss(loss)
    if model.trainable_weights:
        gradients = tape.gradient(loss, model.trainable_weights)
        model.optimizer.apply_gradients(zip(gradients, model.trainable_weights))
    else:
        warnings.warn("The model does not have any trainable weights.", stacklevel=2)
    return model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)


def default_test_step(model: Any, data: Any) -> dict:
    """TF's Keras `test_step(data)`: the compiled loss and metrics of one batch."""
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    y_pred = _forward(model, x, False)
    loss = keras_compat.compute_compiled_loss(model, x, y, y_pred, sample_weight, training=False)
    keras_compat.loss_tracker(model).update_state(loss, sample_weight=_first_batch_size(x))
    return model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)


def default_predict_step(model: Any, data: Any) -> Any:
    """TF's Keras `predict_step(data)`: the model's outputs for one batch."""
    x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
    return _forward(model, x, False)


# -- compile()'s loss and metrics as tapeshim ops ---------------------------------------------------------
_tape_classes: dict[type, type] = {}


def _adopt(obj: Any, mixin: type) -> None:
    """Makes one of Keras's own metric objects an instance of a subclass adding `mixin` (same object)."""
    cls = type(obj)
    if obj is None or isinstance(obj, mixin):
        return
    tape_cls = _tape_classes.get(cls)
    if tape_cls is None:
        tape_cls = _tape_classes[cls] = type(
            cls.__name__, (mixin, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        )
    obj.__class__ = tape_cls


def adopt_compiled(value: Any) -> None:
    """Makes an optimizer, loss tracker or compiled metrics object made by Keras's `compile()` tapeshim's.

    The object stays the same (its class becomes a subclass adding only methods).
    """
    from tapeshim.keras import optimizers  # import cycle: tapeshim.keras imports keras_models, which imports this

    if isinstance(value, keras.optimizers.Optimizer):
        cls = getattr(optimizers, type(value).__name__, None)
        if isinstance(cls, type) and cls is not type(value) and issubclass(cls, type(value)):
            value.__class__ = cls
        adopt_optimizer_variables(value)
    elif isinstance(value, keras.metrics.Metric):
        _adopt(value, TapeMetricMixin)


class AdoptedAttribute:
    """A model attribute that Keras's `compile()` sets: what is stored is adopted (`adopt_compiled`)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name
        self._slot = f"_tapeshim_attribute{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self._slot]
        except KeyError:
            raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{self._name}'") from None

    def __set__(self, obj: Any, value: Any) -> None:
        adopt_compiled(value)
        obj.__dict__[self._slot] = value


def _build_compile_loss(model: Any, y: Any, y_pred: Any) -> None:
    compile_loss = keras_compat.compile_loss(model)
    if compile_loss is None or compile_loss.built:
        return

    def symbolic(leaf: Any) -> Any:
        if leaf is None:
            return None
        tensor = convert_to_tensor(leaf)
        return keras.KerasTensor(tensor._shape, dtype=tensor._dtype.name)

    symbolic_y, symbolic_pred = nest.map_structure(symbolic, (y, y_pred))
    keras_compat.compute_output_spec(compile_loss, symbolic_y, symbolic_pred)


def compute_loss_op(
    model: Any, keras_compute_loss: Callable[..., Any], x: Any, y: Any, y_pred: Any, sample_weight: Any, training: bool
) -> Any:
    """`model.compute_loss(...)` on tapeshim Tensors as one op: the compiled loss plus `model.losses`.

    Raises:
      ValueError: when there is no loss to compute (no `loss` in `compile()` and no
        added losses), as TF's Keras.
    """
    _build_compile_loss(model, y, y_pred)
    added = list(model.losses)
    compile_loss = keras_compat.compile_loss(model)
    if compile_loss is None and not added:
        raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
    state = list(compile_loss.variables) if compile_loss is not None else []

    def call(x: Any, y: Any, y_pred: Any, sample_weight: Any, added_losses: list) -> Any:
        # Keras's `losses` in this call: those of the last call
        keras_compat.set_losses_override(model, list(added_losses))
        try:
            return keras_compute_loss(x, y, y_pred, sample_weight, training=training)
        finally:
            keras_compat.set_losses_override(model, [])

    # (string inputs, for a model whose first layer is a `TextVectorization`, cannot enter the op: Keras's
    # `compute_loss` does not read `x`)
    x = nest.map_structure(lambda leaf: None if _is_string(leaf) else leaf, x)
    return stateful_call(
        model, f"compute_loss/{training}", call, (x, y, y_pred, sample_weight, added), {}, state, watch_state=False
    )


def _is_string(value: Any) -> bool:
    return isinstance(value, Tensor) and value.dtype.name == "string"


class CompiledMetricsShim:
    """TF's deprecated `model.compiled_metrics`: `update_state(y, y_pred, sample_weight)` on every metric."""

    def __init__(self, model: Any) -> None:  # noqa: D107
        self._model = model

    def update_state(self, y: Any, y_pred: Any, sample_weight: Any = None) -> None:
        """Updates every metric of the model, as TF's shim (with its deprecation warning)."""
        warnings.warn(
            "`model.compiled_metrics()` is deprecated. Instead, use e.g.:\n```\nfor metric in self.metrics:\n"
            "    metric.update_state(y, y_pred)\n```\n",
            stacklevel=2,
        )
        for metric in self._model.metrics:
            if isinstance(metric, keras.metrics.Mean):
                metric.update_state(y_pred, sample_weight=sample_weight)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)
