"""Element helpers shared by `Dataset` (`dataset.py`), its transformations and its iterators.

They live apart from `dataset.py` so that `dataset_transforms.py` and `dataset_iterator.py`,
which `dataset.py` imports, can import them at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from tapeshim._src import dtypes, nest
from tapeshim._src.dtypes import DType
from tapeshim._src.state import _thread_state
from tapeshim._src.strings_tensor import host_tensor
from tapeshim._src.tensor import Tensor, convert_to_tensor, host_constant
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
    """A tensor of `dtype` from a host row: string rows stay on the host, others are `host_constant`s."""
    if dtype is dtypes.string:
        return host_tensor(array, dtype)
    return Tensor(host_constant(array), array.shape, dtype)


def _call(fn: Callable[..., Any], element: Any) -> Any:
    """`fn` on an element: a tuple element is spread over the arguments, as tf.data does."""
    return fn(*element) if isinstance(element, tuple) else fn(element)


class _LazySpec:
    """The element spec of a mapped dataset, computed when asked: as TF computes it, by tracing the function
    for the source's spec (its unknown sizes as `None`), where the source's spec has unknown sizes and the
    function traces for every size; else from the first element."""

    def __init__(self, source: DatasetTransforms, fn: Callable[..., Any]) -> None:
        self._source, self._fn = source, fn
        self._general: Any = None  # the traced spec, once computed
        self._traced = False  # whether the trace was tried (a function that does not trace is not tried again)

    def resolve(self) -> Any:
        if self._general is not None:
            return self._general
        if not self._traced and _thread_state.trace is None and not _thread_state.recorders:
            # (no trace inside a trace or under a tape)
            source = self._source.element_spec
            if any(None in s.shape.as_list() for s in nest.flatten(source) if s.shape.rank is not None):
                self._traced = True
                self._general = _traced_spec(self._fn, source)
                if self._general is not None:
                    return self._general
        for element in self._source._elements():
            return _first_element_spec(self._fn, element)
        return None


def _first_element_spec(fn: Callable[..., Any], element: Any) -> Any:
    """The spec of `fn`'s outputs on `element`, with the shapes TF's graph knows (a `py_function` output's is
    unknown unless it was given one by `set_shape`)."""
    saved, _thread_state.graph_shapes = _thread_state.graph_shapes, {}
    try:
        outputs = _to_tensors(_call(fn, element))
        graph_shapes = _thread_state.graph_shapes
    finally:
        _thread_state.graph_shapes = saved
    return nest.map_structure(lambda t: TensorSpec(graph_shapes.get(t._tid, t.shape), t.dtype), outputs)


def _traced_spec(fn: Callable[..., Any], source: Any) -> Any:
    """`fn`'s output spec for elements of spec `source`, from a trace for every size (None where it fails)."""
    from tapeshim._src.function import Function  # import cycle: function -> dataset -> dataset_elements

    specs = nest.flatten(source)

    def flat_fn(*tensors: Tensor) -> Any:
        return _to_tensors(_call(fn, nest.pack_sequence_as(source, list(tensors))))

    try:
        concrete = Function(flat_fn, name="map_spec", input_signature=specs).get_concrete_function()
    except Exception:  # noqa: BLE001 - a function that does not trace (host code, strings): its first element's
        return None
    return concrete.structured_outputs if concrete.symbolic else None
