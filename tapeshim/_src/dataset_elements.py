"""Element helpers shared by `Dataset` (`dataset.py`), its transformations and its iterators.

They live apart from `dataset.py` so that `dataset_transforms.py` and `dataset_iterator.py`,
which `dataset.py` imports, can import them at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from tapeshim._src import dtypes, nest
from tapeshim._src.dtypes import DType
from tapeshim._src.strings_tensor import host_tensor
from tapeshim._src.tensor import Tensor, convert_to_tensor, device_constant
from tapeshim._src.tensor_spec import TensorSpec

if TYPE_CHECKING:
    from tapeshim._src.dataset_transforms import DatasetTransforms


def _spec(element: Any) -> Any:
    """The nest of `TensorSpec`s of an element (a nest of tensors)."""
    return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), element)


def _to_tensors(value: Any) -> Any:
    """tf.data's structures are tuples and dicts; a Python list is one tensor."""
    if isinstance(value, dict):
        return type(value)((k, _to_tensors(v)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [_to_tensors(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return convert_to_tensor(value)


def _host_tensor(array: np.ndarray, dtype: DType) -> Tensor:
    """A tensor of `dtype` from a host row: string rows stay on the host, others are copied to the device."""
    if dtype is dtypes.string:
        return host_tensor(array, dtype)
    return Tensor(device_constant(array), array.shape, dtype)


def _call(fn: Callable[..., Any], element: Any) -> Any:
    """`fn` on an element: a tuple element is spread over the arguments, as tf.data does."""
    return fn(*element) if isinstance(element, tuple) else fn(element)


class _LazySpec:
    """The element spec of a mapped dataset, computed from its first element when asked."""

    def __init__(self, source: DatasetTransforms, fn: Callable[..., Any]) -> None:
        self._source, self._fn = source, fn

    def resolve(self) -> Any:
        for element in self._source._elements():
            return _spec(_to_tensors(_call(self._fn, element)))
        return None
