"""`tf.keras.Model` and `tf.keras.Sequential`: Keras's own, tape-aware, fed from tapeshim data.

Calls are one tapeshim op (`keras_bridge.TapeLayerMixin`). `fit`, `evaluate`
and `predict` are Keras's own compiled loops on the JAX backend; tapeshim only
converts what Keras cannot read itself: tapeshim Tensors become numpy arrays and
a `tf.data.Dataset` becomes a `keras.utils.PyDataset` that re-iterates (and so
reshuffles) the dataset every epoch.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any, Callable, Iterator

from tapeshim._src import keras_train_step, nest
from tapeshim._src.dataset import INFINITE, Dataset, shuffled_batches
from tapeshim._src.distribute.keras_fit import fit_scope
from tapeshim._src.keras_bridge import TapeLayerMixin, adopt_object, adopt_variable, keras, passthrough
from tapeshim._src.keras_compat import Functional as _KerasFunctional
from tapeshim._src.keras_compat import Trainer, flatten_layers, functional_init_arguments
from tapeshim._src.keras_functional_split import has_host_layers
from tapeshim._src.keras_stand_in import StandsForKeras
from tapeshim._src.tensor import Tensor
from tapeshim._src.variable import Variable


def _numpy(value: Any) -> Any:
    if isinstance(value, (Tensor, Variable)):
        return value.numpy()
    return value


def _numpy_nest(value: Any) -> Any:
    return nest.map_structure(_numpy, value)


class DatasetSequence(keras.utils.PyDataset):
    """A finite tapeshim `Dataset` of batches as a Keras `PyDataset`, listed afresh each epoch.

    Listing the batches each epoch makes a shuffling dataset reshuffle, as TF's.
    """

    def __init__(self, dataset: Dataset, whole: bool = False) -> None:
        super().__init__()
        self._dataset = dataset
        self._whole = whole
        self._batches: list | None = None

    def _materialise(self) -> list:
        if self._batches is None:
            self._batches = [_numpy_nest(batch) for batch in self._dataset]
        return self._batches

    @property
    def num_batches(self) -> int:
        known = int(self._dataset.cardinality())  # (asked before each epoch: no pass over the data for it)
        return known if known >= 0 else len(self._materialise())

    def __getitem__(self, index: int) -> Any:
        return _keras_batch(self._materialise()[index], self._whole)

    def on_epoch_end(self) -> None:
        self._batches = None


def _keras_batch(batch: Any, whole: bool) -> Any:
    """A batch as Keras's loops take it; `whole`: as the one item of a tuple (`_whole_elements`)."""
    batch = tuple(batch) if isinstance(batch, list) else batch
    return (batch,) if whole else batch


def _stream(dataset: Dataset, whole: bool = False) -> Any:
    """An infinite dataset (`repeat()`) as one Python generator that epochs continue, as TF's iterator."""
    for batch in dataset:
        yield _keras_batch(_numpy_nest(batch), whole)


def _data(value: Any, whole: bool = False) -> Any:
    if isinstance(value, Dataset):
        return _stream(value, whole) if int(value.cardinality()) == INFINITE else DatasetSequence(value, whole)
    return _numpy_nest(value)  # tensors (also inside `validation_data=(x, y)`) as numpy arrays


@contextlib.contextmanager
def _whole_steps(model: Any, whole: bool) -> Iterator[None]:
    """Tells `model`'s TF-style steps whether the batches they get are whole elements (`_whole_elements`)."""
    before = getattr(model, "_whole_elements", False)
    model._whole_elements = whole
    try:
        yield
    finally:
        model._whole_elements = before


def _whole_elements(model: Any, x: Any, step: str) -> bool:
    """Whether `x`'s batches reach Keras as one-item tuples that `model`'s TF-style `step` unwraps.

    TF's Keras hands a step the dataset's element as it is: a lone tensor (a GAN's images) or a tuple
    of any length; Keras 3's loops take a tensor or a tuple of (x, y, sample_weight) and would hand a
    step `(x,)`, or refuse four components. Wrapped, the element passes through whole
    (`keras_train_step.make_step_function` unwraps it).
    """
    if not isinstance(x, Dataset) or not _runs_tf_style(model, step):
        return False  # (Keras's own steps take its batches)
    spec = x.element_spec
    return not (isinstance(spec, dict) or (isinstance(spec, tuple) and 1 <= len(spec) <= 3))


def _has_strings(value: Any) -> bool:
    return any(isinstance(leaf, Tensor) and leaf.dtype.name == "string" for leaf in nest.flatten(value))


def _string_batches(x: Any, y: Any, args: tuple, kwargs: dict, shuffle: Any) -> tuple[Any, Any, tuple]:
    """`(x, y, args)` for Keras's `fit`/`evaluate`/`predict`: string tensors (TF's Keras takes them, for a
    `TextVectorization` first layer) as a dataset of batches, since Keras's JAX array adapter takes no
    strings (NumPy string arrays fail there in TF's Keras too). `batch_size` (first in `args` or in
    `kwargs`, 32 by default) becomes the dataset's, and `sample_weight` part of its elements."""
    if not _has_strings(x):
        return x, y, args
    batch_size = (args[0] if args else kwargs.get("batch_size")) or 32
    args = (None, *args[1:]) if args else args
    kwargs.pop("batch_size", None)
    sample_weight = kwargs.pop("sample_weight", None)
    elements = tuple(part for part in (x, y, sample_weight) if part is not None)
    tensors = elements if len(elements) > 1 else x
    if shuffle is True:  # (Keras shuffles arrays each epoch; "batch" shuffles within batches, kept as is)
        return shuffled_batches(tensors, batch_size), None, args
    return Dataset.from_tensor_slices(tensors).batch(batch_size), None, args


def _runs_tf_style(model: Any, step: str) -> bool:
    """Whether Keras's loops run `model`'s step `step` TF-style on tapeshim tensors (`keras_train_step`): the
    class overrides it as `step(self, data)`, or the model holds a layer computed with TensorFlow's ops on
    values (`TextVectorization`: its string inputs cannot enter Keras's JAX step)."""
    return keras_train_step.tf_style_step(model, step, TrainingMixin) or has_host_layers(model)


def model_distribution(model: Any, x: Any, batch_size: Any) -> Any:
    """The data-parallel Keras distribution of the strategy `model` was built under (a no-op context without)."""
    return fit_scope(model, x, batch_size)


class TrainingMixin(TapeLayerMixin):
    """Keras's `fit`/`evaluate`/`predict`, given tapeshim Tensors or a tapeshim `tf.data.Dataset`.

    A subclass may override `train_step(self, data)`, `test_step(self, data)` or
    `predict_step(self, data)` TF-style; Keras's loops then run it (see
    `keras_train_step`). `compute_loss` on tapeshim Tensors is one op, and TF's
    `compiled_loss` and `compiled_metrics` shims are offered.
    """

    # Keras's attributes, declared for the type checker (Keras has no types); Keras sets them.
    built: bool
    train_function: Callable[..., Any] | None
    test_function: Callable[..., Any] | None
    predict_function: Callable[..., Any] | None

    def fit(self, x: Any = None, y: Any = None, *args: Any, validation_data: Any = None, **kwargs: Any) -> Any:
        x, y, args = _string_batches(x, y, args, kwargs, shuffle=kwargs.get("shuffle", True))
        if isinstance(validation_data, tuple) and _has_strings(validation_data):
            validation_data = Dataset.from_tensor_slices(validation_data).batch(
                kwargs.get("validation_batch_size") or (args[0] if args else kwargs.get("batch_size")) or 32
            )
        if isinstance(x, Dataset):
            kwargs["shuffle"] = False  # as TF, a dataset's own order is kept (`shuffle` applies to arrays)
        whole = _whole_elements(self, x, "train_step")
        # (validation runs through `evaluate` with the converted data: its own batches say whether they are whole)
        whole_validation = (
            _whole_elements(self, validation_data, "test_step") and int(validation_data.cardinality()) != INFINITE
        )
        validation = _data(validation_data, whole_validation)
        with model_distribution(self, x, args[0] if args else kwargs.get("batch_size")), _whole_steps(self, whole):
            return super().fit(_data(x, whole), _data(y), *args, validation_data=validation, **kwargs)

    def evaluate(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        x, y, args = _string_batches(x, y, args, kwargs, shuffle=False)
        whole = _whole_elements(self, x, "test_step") or (isinstance(x, DatasetSequence) and x._whole)
        with model_distribution(self, x, args[0] if args else kwargs.get("batch_size")), _whole_steps(self, whole):
            return super().evaluate(_data(x, whole), _data(y), *args, **kwargs)

    def predict(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        x, _, args = _string_batches(x, None, args, kwargs, shuffle=False)
        with model_distribution(self, x, args[0] if args else kwargs.get("batch_size")):
            return self._predict(x, *args, **kwargs)

    def _predict(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        if has_host_layers(self) and isinstance(x, Dataset):
            return self._predict_with_host_layers(x, *args, **kwargs)
        unbuilt_wrapper = (
            not self.built
            and _runs_tf_style(self, "predict_step")
            and all(layer.built for layer in flatten_layers(self, include_self=False))
        )
        if not unbuilt_wrapper:
            return super().predict(_data(x), *args, **kwargs)
        # As TF, a TF-style `predict_step` runs without building the model first (Keras's JAX `predict`
        # would call a model that may have no `call`, such as a GAN wrapper, to build it).
        self.built = True
        try:
            return super().predict(_data(x), *args, **kwargs)
        finally:
            self.built = False

    def _predict_with_host_layers(self, x: Dataset, *args: Any, **kwargs: Any) -> Any:
        # Keras's JAX `predict` builds an unbuilt model on the first batch symbolically, where a
        # `TextVectorization` cannot run: it is built here by an eager call on that batch instead, as TF's
        # first step builds it. A lookup layer inside `TextVectorization` stays unbuilt in TF too (its
        # parent calls it directly); Keras's check is told it is built while `predict` runs.
        if not self.built:
            for batch in x.take(1):
                self(keras.utils.unpack_x_y_sample_weight(batch)[0])
        inner = [layer for layer in flatten_layers(self, include_self=True) if not layer.built]
        for layer in inner:
            layer.built = True
        try:
            return super().predict(_data(x), *args, **kwargs)
        finally:
            for layer in inner:
                layer.built = False

    def train_on_batch(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        return super().train_on_batch(_data(x), _data(y), *args, **kwargs)

    def test_on_batch(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        return super().test_on_batch(_data(x), _data(y), *args, **kwargs)

    def predict_on_batch(self, x: Any) -> Any:
        return super().predict_on_batch(_data(x))

    # What `compile()` makes (`compile(optimizer="adam", metrics=["mae"])`) is Keras's own objects: kept as
    # tapeshim's subclasses of them, so TF-style code calls them on tapeshim Tensors (the two private
    # attributes are listed in keras_compat.ADOPTED_ATTRIBUTES).
    optimizer = keras_train_step.AdoptedAttribute()
    _loss_tracker = keras_train_step.AdoptedAttribute()
    _compile_metrics = keras_train_step.AdoptedAttribute()

    # -- steps: Keras's JAX `step(state, data)`, or TF's `step(data)` -------------------------------------
    def train_step(self, *args: Any) -> Any:
        """One training step: Keras's JAX `train_step(state, data)`, or TF's `train_step(data)`."""
        if len(args) == 1:
            return keras_train_step.default_train_step(self, args[0])
        return super().train_step(*args)

    def test_step(self, *args: Any) -> Any:
        """One evaluation step: Keras's JAX `test_step(state, data)`, or TF's `test_step(data)`."""
        if len(args) == 1:
            return keras_train_step.default_test_step(self, args[0])
        return super().test_step(*args)

    def predict_step(self, *args: Any) -> Any:
        """One prediction step: Keras's JAX `predict_step(state, data)`, or TF's `predict_step(data)`."""
        if len(args) == 1:
            return keras_train_step.default_predict_step(self, args[0])
        return super().predict_step(*args)

    def make_train_function(self, force: bool = False) -> Any:
        if not _runs_tf_style(self, "train_step"):
            return super().make_train_function(force)
        if self.train_function is None or force:
            self.train_function = keras_train_step.make_step_function(
                self, "train_step", default_step=type(self).train_step is TrainingMixin.train_step
            )
        return self.train_function

    def make_test_function(self, force: bool = False) -> Any:
        if not _runs_tf_style(self, "test_step"):
            return super().make_test_function(force)
        if self.test_function is None or force:
            self.test_function = keras_train_step.make_step_function(
                self, "test_step", default_step=type(self).test_step is TrainingMixin.test_step
            )
        return self.test_function

    def make_predict_function(self, force: bool = False) -> Any:
        if not _runs_tf_style(self, "predict_step"):
            return super().make_predict_function(force)
        if self.predict_function is None or force:
            self.predict_function = keras_train_step.make_step_function(
                self, "predict_step", default_step=type(self).predict_step is TrainingMixin.predict_step
            )
        return self.predict_function

    # a Keras hook (keras_compat.HOOKS)
    def _symbolic_build(self, *args: Any, **kwargs: Any) -> None:
        # TF's trainer builds nothing before a step it does not own: the user's step builds what it
        # uses on its first call (a GAN wrapper has no `call` to build with).
        if _runs_tf_style(self, "train_step") or _runs_tf_style(self, "test_step"):
            return
        super()._symbolic_build(*args, **kwargs)

    # a Keras hook (keras_compat.HOOKS)
    def _get_jax_state(self, *args: Any, **kwargs: Any) -> tuple:
        # Keras's compiled steps donate the state they are given; tensors read before `fit` (a tape's
        # recorded reads, lazy results) still hold the variables' arrays, so Keras gets copies.
        state = super()._get_jax_state(*args, **kwargs)
        return tuple([value.copy() for value in group] for group in state)

    # a Keras hook (keras_compat.HOOKS)
    def _purge_model_variables(self, *args: Any, **kwargs: Any) -> None:
        # A TF-style step runs on the live variables, so they are never emptied between steps.
        if any(_runs_tf_style(self, name) for name in keras_train_step.STEP_NAMES):
            return
        super()._purge_model_variables(*args, **kwargs)

    def compute_loss(
        self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None, training: bool = True
    ) -> Any:
        """The compiled loss plus `self.losses`; on tapeshim Tensors, one op returning a Tensor."""
        keras_compute_loss = super().compute_loss
        if passthrough((x, y, y_pred, sample_weight), {}):
            return keras_compute_loss(x, y, y_pred, sample_weight, training=training)
        return keras_train_step.compute_loss_op(self, keras_compute_loss, x, y, y_pred, sample_weight, training)

    def compiled_loss(self, y: Any, y_pred: Any, sample_weight: Any = None, regularization_losses: Any = None) -> Any:
        """TF's deprecated shim: `compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)`."""
        del regularization_losses  # `compute_loss` adds `self.losses` itself, as in TF's shim
        warnings.warn(
            "`model.compiled_loss()` is deprecated. Instead, use "
            "`model.compute_loss(x, y, y_pred, sample_weight, training)`.",
            stacklevel=2,
        )
        return self.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=sample_weight)

    @property
    def compiled_metrics(self) -> Any:
        """TF's deprecated shim: its `update_state(y, y_pred, sample_weight)` updates every metric."""
        return keras_train_step.CompiledMetricsShim(self)


class Model(TrainingMixin, keras.Model, metaclass=StandsForKeras):
    """`tf.keras.Model`: Keras 3's Model, whose calls are tapeshim ops (see docs/keras.md).

    `Model(inputs, outputs)` builds a functional model; subclasses define
    `call`, as in Keras.
    """

    _keras_framework_class = True
    _tapeshim_stands_for = keras.Model  # (`keras_stand_in`: type checks answer as for Keras's Model)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Model and functional_init_arguments(args, kwargs):
            return Functional.__new__(Functional, *args, **kwargs)  # then Python runs Functional's __init__
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if functional_init_arguments(args, kwargs) and not isinstance(self, _KerasFunctional):
            # `CustomModel(inputs, outputs)`: as Keras, the subclass becomes functional, by putting
            # tapeshim's `Functional` in place of `Model` among its bases (never rewriting tapeshim's
            # or Keras's own classes, which Keras's injection would do for a tapeshim subclass).
            _make_functional(type(self))
            Trainer.__init__(self)
            _KerasFunctional.__init__(self, *args, **kwargs)
            return
        super().__init__(*args, **kwargs)


class Functional(Model, _KerasFunctional):
    """A functional `tf.keras.Model` (built from `Input`s and layer calls)."""

    _keras_framework_class = True
    _tapeshim_stands_for = _KerasFunctional


class Sequential(TrainingMixin, keras.Sequential, metaclass=StandsForKeras):
    """`tf.keras.Sequential`: Keras 3's Sequential, whose calls are tapeshim ops."""

    _keras_framework_class = True
    _tapeshim_stands_for = keras.Sequential


def _make_functional(cls: type) -> type:
    """`cls` with tapeshim's `Functional` in place of `Model` among its (user-defined) bases."""
    if cls is Model:
        return Functional
    if not isinstance(cls, type) or not issubclass(cls, Model) or issubclass(cls, Functional):
        return cls
    cls.__bases__ = tuple(_make_functional(base) for base in cls.__bases__)
    return cls


for _cls in (Model, Functional, Sequential):
    _cls.__module__ = "tapeshim.keras"


def adopted(model: Any) -> Any:
    """`model`, built by Keras itself (`clone_model`, `tf.keras.applications`), made of tapeshim's classes.

    Keras builds such a model from its own `Sequential`, `Functional` and layer classes, whose calls are not
    tapeshim ops: called with tapeshim tensors inside `tapeshim.function` (a custom training step), they
    fail. The model, each of its layers and their variables become instances of tapeshim's subclasses of
    their classes (which add only methods: the objects keep their state), as if tapeshim had built them.
    """
    from tapeshim.keras import layers as tape_layers  # import cycle: tapeshim.keras -> here

    namespace: dict[str, Any] = {"Model": Model, "Sequential": Sequential, "Functional": Functional}
    for name in tape_layers.__all__:
        namespace.setdefault(name, getattr(tape_layers, name))
    for layer in flatten_layers(model):
        adopt_object(layer, namespace)
        for variable in layer.weights:
            adopt_variable(variable)
        # What Keras's `__init__` stored where tapeshim's class has a descriptor (`compile()`'s attributes)
        # goes through the descriptor.
        for klass in type(layer).__mro__:
            for name, attribute in vars(klass).items():
                if isinstance(attribute, keras_train_step.AdoptedAttribute) and name in layer.__dict__:
                    setattr(layer, name, layer.__dict__.pop(name))
    return model


def adopting(build: Callable[..., Any]) -> Callable[..., Any]:
    """`build` (a Keras function returning a model) returning the model `adopted`."""

    @functools.wraps(build)
    def adopting_build(*args: Any, **kwargs: Any) -> Any:
        return adopted(build(*args, **kwargs))

    return adopting_build
