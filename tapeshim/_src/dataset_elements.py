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
    """The nest of specs of an element (a nest of tensors): `TensorSpec`s, `RaggedTensorSpec`s for RaggedTensors."""
    return nest.map_structure(_leaf_spec, element)


def _leaf_spec(value: Any) -> Any:
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    from tapeshim._src.dataset_ragged import spec_of  # import cycle: dataset_ragged -> ragged -> ops -> ...

    return spec_of(value)


def _to_tensors(value: Any) -> Any:
    """tf.data's structures are tuples and dicts; a Python list is one tensor; a RaggedTensor stays one."""
    if isinstance(value, dict):
        return type(value)((k, _to_tensors(v)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [_to_tensors(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, Tensor) or not hasattr(value, "nested_row_splits"):
        return convert_to_tensor(value)
    return value


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
    function traces for every size; else from the first element, with `None` where the second element's outputs
    (and, for a source with RaggedTensor components, a stand-in element's) differ in size."""

    def __init__(self, source: DatasetTransforms, fn: Callable[..., Any]) -> None:
        self._source, self._fn = source, fn
        self._general: Any = None  # the traced spec, once computed
        self._traced = False  # whether the trace was tried (a function that does not trace is not tried again)

    def resolve(self) -> Any:
        if self._general is not None:
            return self._general
        source = self._source.element_spec
        unknown = any(None in s.shape.as_list() for s in nest.flatten(source) if s.shape.rank is not None)
        if not self._traced and _thread_state.trace is None and not _thread_state.recorders:
            # (no trace inside a trace or under a tape)
            if unknown:
                self._traced = True
                self._general = _traced_spec(self._fn, source)
                if self._general is not None:
                    return self._general
        elements = self._source._elements()
        first = next(elements, _END)
        if first is _END:
            return None
        spec = _first_element_spec(self._fn, first, unknown)
        # TF's traced function knows which sizes vary: tapeshim compares the spec with the second element's and,
        # for a source with ragged components (not traced), with that of a stand-in element of other sizes
        second = next(elements, _END)
        probes = [] if second is _END else [second]
        if unknown and any(hasattr(s, "ragged_rank") for s in nest.flatten(source)):
            probes.append(_END)
        for probe in probes:
            try:
                element = _stand_in_element(source) if probe is _END else probe
                spec = _relaxed(spec, _first_element_spec(self._fn, element, unknown))
            except Exception:  # noqa: BLE001 - a probe the function does not take: the first element's spec
                continue
        return spec


_END = object()
_PROBE_SIZE = 3  # the unknown sizes of a stand-in element


def _stand_in_element(source: Any) -> Any:
    """An element of spec `source`: zeros (empty strings), every unknown size (and ragged row length) 3."""
    from tapeshim._src.ragged_spec import RaggedTensorSpec, stand_in  # import cycle: ragged_spec -> tensor -> ...

    def value(spec: Any) -> Any:
        if isinstance(spec, RaggedTensorSpec):
            return stand_in(spec, _PROBE_SIZE)
        if not isinstance(spec, TensorSpec) or spec.shape.rank is None:
            raise TypeError(f"no stand-in for {spec}")
        dims = [_PROBE_SIZE if d is None else d for d in spec.shape.as_list()]
        if spec.dtype is dtypes.string:
            return host_tensor(np.full(dims, b"", dtype=object), dtypes.string)
        return convert_to_tensor(np.zeros(dims, spec.dtype.as_numpy_dtype))

    return nest.map_structure(value, source)


def _relaxed(spec: Any, other: Any) -> Any:
    """`spec` with `None` in each dimension where `other` (of the same structure, kinds, dtypes and ranks) differs."""
    try:
        nest.assert_same_structure(spec, other)
    except (TypeError, ValueError):
        return spec

    def merge(a: Any, b: Any) -> Any:
        if type(a) is not type(b) or a.dtype != b.dtype or a.shape.rank is None or a.shape.rank != b.shape.rank:
            return a
        dims = [x if x == y else None for x, y in zip(a.shape.as_list(), b.shape.as_list())]
        if isinstance(a, TensorSpec):
            return TensorSpec(dims, a.dtype)
        if a.ragged_rank != b.ragged_rank:
            return a
        return type(a)(dims, a.dtype, a.ragged_rank, a.row_splits_dtype)

    return nest.map_structure(merge, spec, other)


def _first_element_spec(fn: Callable[..., Any], element: Any, unknown_source: bool = False) -> Any:
    """The spec of `fn`'s outputs on `element`, with the shapes TF's graph knows (a `py_function` output's is
    unknown unless it was given one by `set_shape`; a RaggedTensor's number of rows where the source's element
    spec has unknown dimensions)."""
    saved, _thread_state.graph_shapes = _thread_state.graph_shapes, {}
    try:
        outputs = _to_tensors(_call(fn, element))
        graph_shapes = _thread_state.graph_shapes
    finally:
        _thread_state.graph_shapes = saved

    def spec(t: Any) -> Any:
        if isinstance(t, Tensor):
            return TensorSpec(graph_shapes.get(t._tid, t.shape), t.dtype)
        found = _leaf_spec(t)
        if unknown_source and found.shape.rank:
            dims = [None] + found.shape.as_list()[1:]
            found = type(found)(dims, found.dtype, found.ragged_rank, found.row_splits_dtype)
        return found

    return nest.map_structure(spec, outputs)


def _traced_spec(fn: Callable[..., Any], source: Any) -> Any:
    """`fn`'s output spec for elements of spec `source`, from a trace for every size (None where it fails)."""
    from tapeshim._src.function import Function  # import cycle: function -> dataset -> dataset_elements
    from tapeshim._src.ragged_spec import RaggedTensorSpec  # import cycle: ragged_spec -> tensor -> ...

    # (a spec of ragged rank 0 describes dense tensors; a RaggedTensor's partition is a host value: no trace)
    specs = [
        TensorSpec(s.shape, s.dtype) if isinstance(s, RaggedTensorSpec) and s.ragged_rank == 0 else s
        for s in nest.flatten(source)
    ]
    if any(isinstance(s, RaggedTensorSpec) for s in specs):
        return None

    def flat_fn(*tensors: Tensor) -> Any:
        return _to_tensors(_call(fn, nest.pack_sequence_as(source, list(tensors))))

    try:
        concrete = Function(flat_fn, name="map_spec", input_signature=specs).get_concrete_function()
    except Exception:  # noqa: BLE001 - a function that does not trace (host code, strings): its first element's
        return None
    return concrete.structured_outputs if concrete.symbolic else None
