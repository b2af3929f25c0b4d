"""Ragged elements in `tf.data`: slicing, batching and specs of `tf.RaggedTensor` components, as TF's.

A component whose spec is a `tf.RaggedTensorSpec` batches into a RaggedTensor with one more ragged
dimension (the elements may differ in their number of rows), unbatches into its rows, and slices
(`from_tensor_slices`) into its rows: a dense `Tensor` for a ragged rank 1 component (the spec's
ragged rank is then 0), a RaggedTensor for a deeper one. `Dataset.ragged_batch` first reads each
dense component whose shape has unknown dimensions as a ragged one (TF's `dense_to_ragged_batch`).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tapeshim._src import dtypes, errors, nest
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.ragged_spec import RaggedTensorSpec
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec


def spec_of(value: Any) -> Any:
    """The spec of one element component: a RaggedTensorSpec for a RaggedTensor, else a TensorSpec."""
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec.from_value(value)
    return TensorSpec(value.shape, value.dtype)


def has_ragged(spec: Any) -> bool:
    """Whether an element spec has a RaggedTensorSpec component."""
    return any(isinstance(s, RaggedTensorSpec) for s in nest.flatten(spec))


class HostRows:
    """A component (a Tensor or RaggedTensor) read to the host once, whose rows are then cut there: no kernel per
    row (a row's length would compile one) and no transfer per row."""

    def __init__(self, value: Any) -> None:
        self._levels: list[tuple[np.ndarray, dtypes.DType]] = []
        node = value
        while isinstance(node, RaggedTensor):
            self._levels.append((node._splits, node.row_splits.dtype))
            node = node.values
        self._flat = _host(node)
        self._dtype = node.dtype
        self.count = len(self._levels[0][0]) - 1 if self._levels else int(self._flat.shape[0])

    def row(self, i: int, spec: Any = None) -> Any:
        """Row `i`: a Tensor (for a Tensor or a RaggedTensor of ragged rank 1) or a RaggedTensor, with the static
        shape of `spec` (the row's spec) where given."""
        from tapeshim._src.dataset_elements import _host_tensor  # import cycle: dataset_elements imports this module

        if not self._levels:
            return _host_tensor(np.array(self._flat[i], dtype=self._flat.dtype), self._dtype)
        start, stop = int(self._levels[0][0][i]), int(self._levels[0][0][i + 1])
        partitions = []
        for splits, dtype in self._levels[1:]:
            cut = splits[start : stop + 1]
            partitions.append((cut - cut[0], dtype))
            start, stop = int(cut[0]), int(cut[-1])
        result: Any = _host_tensor(np.ascontiguousarray(self._flat[start:stop]), self._dtype)
        for splits, dtype in reversed(partitions):
            result = RaggedTensor(result, _host_splits(splits, dtype))
        return conform(result, spec)


def nrows(value: Any) -> int:
    """The number of rows of a component."""
    return value.nrows_int() if isinstance(value, RaggedTensor) else int(value.shape[0])


def _host(tensor: Tensor) -> np.ndarray:
    return np.asarray(tensor._value) if tensor.dtype == dtypes.string else np.asarray(tensor.numpy())


def _host_splits(splits: np.ndarray, dtype: dtypes.DType) -> Tensor:
    from tapeshim._src.dataset_elements import _host_tensor  # import cycle: dataset_elements imports this module

    return _host_tensor(np.asarray(splits).astype(dtype.as_numpy_dtype), dtype)


def _splits_of(lengths: list[int], dtype: dtypes.DType) -> Tensor:
    return _host_splits(np.concatenate([[0], np.cumsum(np.asarray(lengths, np.int64))]), dtype)


def _concat_rows(parts: list) -> Any:
    """The rows of `parts` (Tensors, or RaggedTensors of one ragged rank) one after the other, on the host."""
    from tapeshim._src.dataset_elements import _host_tensor  # import cycle: dataset_elements imports this module

    if isinstance(parts[0], RaggedTensor):
        offsets, total = [np.zeros(1, np.int64)], 0
        for p in parts:
            offsets.append(p._splits[1:] + total)
            total += int(p._splits[-1])
        values = _concat_rows([p.values for p in parts])
        return RaggedTensor(values, _host_splits(np.concatenate(offsets), parts[0].row_splits.dtype))
    return _host_tensor(np.concatenate([_host(p) for p in parts]), parts[0].dtype)


def batch_ragged(parts: list, spec: RaggedTensorSpec) -> RaggedTensor:
    """Elements of a RaggedTensorSpec component batched: a RaggedTensor whose row `i` is element `i`.

    Raises:
      InvalidArgumentError: for elements whose inner dimensions differ.
    """
    converted = [p if isinstance(p, RaggedTensor) else convert_to_tensor(p) for p in parts]
    if spec.ragged_rank > 0:
        rank = spec.ragged_rank
        if any(not isinstance(p, RaggedTensor) or p.ragged_rank != rank for p in converted):
            raise errors.invalid_argument(
                f"Cannot batch elements of ragged rank other than the element spec's {spec}", "IteratorGetNext"
            )
    inner = {tuple(p.flat_values.shape[1:]) if isinstance(p, RaggedTensor) else tuple(p.shape[1:]) for p in converted}
    if len(inner) > 1:
        raise errors.invalid_argument(
            f"Cannot batch ragged elements whose inner dimensions differ: {sorted(inner)}", "IteratorGetNext"
        )
    values = _concat_rows(converted)
    splits = _splits_of([nrows(p) for p in converted], spec.row_splits_dtype)
    return conform(RaggedTensor(values, splits), spec._batch(None))


def conform(value: Any, spec: Any) -> Any:
    """A RaggedTensor element with the static shape of its spec, as TF's elements have: a ragged dimension the
    spec knows (every row of that length) is uniform."""
    if not isinstance(value, RaggedTensor) or not isinstance(spec, RaggedTensorSpec) or spec.shape.rank is None:
        return value
    dims = spec.shape.as_list()

    def level(node: Any, axis: int) -> Any:
        if not isinstance(node, RaggedTensor):
            return node
        inner = level(node.values, axis + 1)
        length = dims[axis] if axis < len(dims) else None
        uniform = node._uniform
        if uniform is None and length is not None and np.all(np.diff(node._splits) == length):
            uniform = length
        if inner is node.values and uniform == node._uniform:
            return node
        return RaggedTensor(inner, node.row_splits, uniform)

    return level(value, 1)


def batch_component(parts: list, spec: Any, stack: Callable[..., Any]) -> Any:
    """One component of a batch: ragged batching for a RaggedTensorSpec, else `stack`."""
    if isinstance(spec, RaggedTensorSpec):
        return batch_ragged(parts, spec)
    return stack(*parts)


def batched_spec(spec: Any, size: int | None) -> Any:
    """A component spec batched `size` at a time (None: any number)."""
    if isinstance(spec, RaggedTensorSpec):
        return spec._batch(size)
    return TensorSpec(None if spec.shape.rank is None else [size] + spec.shape.as_list(), spec.dtype)


def unbatched_spec(spec: Any) -> Any:
    """The spec of one row of a component."""
    if isinstance(spec, RaggedTensorSpec):
        return spec._unbatch()
    return TensorSpec(spec.shape[1:], spec.dtype)


def sliced_spec(value: Any) -> Any:
    """The element spec of `from_tensor_slices` for one component: its spec without the first dimension."""
    return unbatched_spec(spec_of(value))


# -- ragged_batch ------------------------------------------------------------------------------------
def to_ragged_spec(spec: Any, row_splits_dtype: dtypes.DType) -> Any:
    """TF's `dense_to_ragged_batch` spec: a TensorSpec with unknown dimensions (of known rank) becomes a
    RaggedTensorSpec whose ragged rank is its last unknown dimension's axis; every other spec stays."""
    if not isinstance(spec, TensorSpec) or spec.shape.rank is None or spec.shape.is_fully_defined():
        return spec
    ragged_rank = max(axis for axis, size in enumerate(spec.shape.as_list()) if size is None)
    return RaggedTensorSpec(spec.shape, spec.dtype, ragged_rank, row_splits_dtype)


def to_ragged_value(value: Any, spec: Any) -> Any:
    """A dense component read as a RaggedTensor of `spec`'s ragged rank (uniform rows); others unchanged."""
    if not isinstance(spec, RaggedTensorSpec) or spec.ragged_rank == 0 or isinstance(value, RaggedTensor):
        return value
    tensor = convert_to_tensor(value)
    dims = [int(d) for d in tensor._shape]
    rank = spec.ragged_rank
    flat_shape = [int(np.prod(dims[: rank + 1])), *dims[rank + 1 :]]
    if tensor.dtype == dtypes.string:
        from tapeshim._src.strings_tensor import host_tensor  # (strings live on the host)

        result: Any = host_tensor(np.asarray(tensor._value).reshape(flat_shape), tensor.dtype)
    else:
        from tapeshim._src.ops import array_ops  # import cycle: the ops import the dataset modules' users

        result = array_ops.reshape(tensor, flat_shape)
    splits_dtype = spec.row_splits_dtype.as_numpy_dtype
    for axis in range(rank, 0, -1):
        rows = int(np.prod(dims[:axis]))
        result = RaggedTensor(result, constant((np.arange(rows + 1) * dims[axis]).astype(splits_dtype)))
    return result


# -- from_generator ----------------------------------------------------------------------------------
def convert_to_ragged_spec(value: Any, spec: RaggedTensorSpec) -> Any:
    """A generated element for a RaggedTensorSpec: a RaggedTensor of the spec's type (a tensor for ragged rank
    0), or TF's error.

    Raises:
      InvalidArgumentError: for a value of another structure, dtype, ragged rank or shape (TF's `TypeError` in
        its message).
    """
    if spec.ragged_rank == 0 and not isinstance(value, RaggedTensor):
        try:  # (a dense value is not one of a RaggedTensorSpec, even of ragged rank 0: TF's error names its spec)
            value = convert_to_tensor(value, dtype=spec.dtype)
        except (TypeError, ValueError):
            value = None
    if not isinstance(value, (RaggedTensor, Tensor)):
        raise errors.invalid_argument(
            "TypeError: `generator` yielded an element that did not match the expected structure. The expected "
            f"structure was {spec}, but the yielded element was {value}.",
            "IteratorGetNext",
        )
    if not isinstance(value, RaggedTensor) or not spec.is_compatible_with(value):
        raise errors.invalid_argument(
            f"TypeError: `generator` yielded an element of {spec_of(value)} where an element of {spec} was expected.",
            "IteratorGetNext",
        )
    return value


def dense_to_ragged_batch(
    batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = dtypes.int64
) -> Callable[[Any], Any]:
    """`tf.data.experimental.dense_to_ragged_batch`: a transformation for `Dataset.apply`, `ragged_batch`'s
    older name.

    Args:
      batch_size: the number of elements in a batch.
      drop_remainder: whether a last, smaller batch is dropped.
      row_splits_dtype: the dtype of the row splits of the RaggedTensors it makes.

    Returns:
      A function of a dataset, returning `dataset.ragged_batch(...)`.
    """

    def apply(dataset: Any) -> Any:
        return dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)

    return apply
