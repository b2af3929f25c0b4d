"""`tf.keras.Model` and `tf.keras.Sequential`: Keras's own, tape-aware, fed from tapeshim data.

Calls are one tapeshim op (`keras_bridge.TapeLayerMixin`). `fit`, `evaluate`
and `predict` are Keras's own compiled loops on the JAX backend; tapeshim only
converts what Keras cannot read itself: tapeshim Tensors become numpy arrays and
a `tf.data.Dataset` becomes a `keras.utils.PyDataset` that re-iterates (and so
reshuffles) the dataset every epoch.
"""

from __future__ import annotations

from typing import Any

from tapeshim._src import nest
from tapeshim._src.dataset import INFINITE, Dataset
from tapeshim._src.keras_bridge import TapeLayerMixin, keras
from tapeshim._src.tensor import Tensor
from tapeshim._src.variable import Variable

# Not in Keras's public API: the functional model class, and how Keras tells a functional call of `Model`.
_KerasFunctional = keras.src.models.functional.Functional
functional_init_arguments = keras.src.models.model.functional_init_arguments


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

    def __init__(self, dataset: Dataset) -> None:
        super().__init__()
        self._dataset = dataset
        self._batches: list | None = None

    def _materialise(self) -> list:
        if self._batches is None:
            self._batches = [_numpy_nest(batch) for batch in self._dataset]
        return self._batches

    @property
    def num_batches(self) -> int:
        return len(self._materialise())

    def __getitem__(self, index: int) -> Any:
        batch = self._materialise()[index]
        return tuple(batch) if isinstance(batch, list) else batch

    def on_epoch_end(self) -> None:
        self._batches = None


def _stream(dataset: Dataset) -> Any:
    """An infinite dataset (`repeat()`) as one Python generator that epochs continue, as TF's iterator."""
    for batch in dataset:
        batch = _numpy_nest(batch)
        yield tuple(batch) if isinstance(batch, list) else batch


def _data(value: Any) -> Any:
    if isinstance(value, Dataset):
        return _stream(value) if int(value.cardinality()) == INFINITE else DatasetSequence(value)
    return _numpy_nest(value)  # tensors (also inside `validation_data=(x, y)`) as numpy arrays


class TrainingMixin(TapeLayerMixin):
    """Keras's `fit`/`evaluate`/`predict`, given tapeshim Tensors or a tapeshim `tf.data.Dataset`."""

    def fit(self, x: Any = None, y: Any = None, *args: Any, validation_data: Any = None, **kwargs: Any) -> Any:
        if isinstance(x, Dataset):
            kwargs["shuffle"] = False  # as TF, a dataset's own order is kept (`shuffle` applies to arrays)
        return super().fit(_data(x), _data(y), *args, validation_data=_data(validation_data), **kwargs)

    def evaluate(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        return super().evaluate(_data(x), _data(y), *args, **kwargs)

    def predict(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        return super().predict(_data(x), *args, **kwargs)

    def train_on_batch(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        return super().train_on_batch(_data(x), _data(y), *args, **kwargs)

    def test_on_batch(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        return super().test_on_batch(_data(x), _data(y), *args, **kwargs)

    def predict_on_batch(self, x: Any) -> Any:
        return super().predict_on_batch(_data(x))


class Model(TrainingMixin, keras.Model):
    """`tf.keras.Model`: Keras 3's Model, whose calls are tapeshim ops (see docs/keras.md).

    `Model(inputs, outputs)` builds a functional model; subclasses define
    `call`, as in Keras.
    """

    _keras_framework_class = True

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Model and functional_init_arguments(args, kwargs):
            return Functional.__new__(Functional, *args, **kwargs)  # then Python runs Functional's __init__
        return super().__new__(cls, *args, **kwargs)


class Functional(Model, _KerasFunctional):
    """A functional `tf.keras.Model` (built from `Input`s and layer calls)."""

    _keras_framework_class = True


class Sequential(TrainingMixin, keras.Sequential):
    """`tf.keras.Sequential`: Keras 3's Sequential, whose calls are tapeshim ops."""

    _keras_framework_class = True


for _cls in (Model, Functional, Sequential):
    _cls.__module__ = "tapeshim.keras"
