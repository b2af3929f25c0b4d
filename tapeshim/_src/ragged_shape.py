"""`tf.experimental.DynamicRaggedShape` and `tf.experimental.RowPartition`: the shape of a ragged tensor.

TF's `tf.shape(rt)` of a RaggedTensor is a `DynamicRaggedShape`: the row partitions of its ragged
dimensions (outermost first) and the shape of its flat values (`inner_shape`). tapeshim's partitions
are host values (as its RaggedTensor's), so every length here is known: `static_lengths()` lists
them, `shape[i]` of a uniform dimension is a scalar tensor of the shape's dtype, and a ragged one
raises TF's ValueError.

`shape`, `broadcast_to`, `reshape`, `zeros` and `ones` are what `tf.shape(rt)`, `tf.broadcast_to(x,
ragged_shape)`, `tf.reshape(x, ragged_shape)`, `tf.zeros(ragged_shape)` and `tf.ones(ragged_shape)` do
with ragged shapes in TF; the op functions reach them through their ragged dispatch.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import array_ops, manip_ops
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike


def _index_dtype(dtype: DTypeLike) -> dtypes.DType:
    found = dtypes.as_dtype(dtype)
    if found not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"Illegal dtype: {found}")
    return found


class RowPartition:
    """How one ragged (or uniform) dimension partitions the values below it, as `tf.experimental.RowPartition`.

    Build one with `from_row_splits`, `from_row_lengths` or `from_uniform_row_length`.
    """

    def __init__(self, splits: np.ndarray, uniform: int | None, dtype: dtypes.DType) -> None:
        self._splits = np.asarray(splits, np.int64)
        self._uniform = uniform
        self._dtype = dtype

    @classmethod
    def from_row_splits(
        cls, row_splits: TensorLike, validate: bool = True, dtype: DTypeLike | None = None
    ) -> "RowPartition":
        """The partition whose row `i` is `values[row_splits[i]:row_splits[i + 1]]`.

        Raises:
          ValueError: for splits that are not a non-empty vector.
          InvalidArgumentError: (with `validate`) for splits that do not start at 0 or decrease.
        """
        tensor = convert_to_tensor(row_splits, dtype_hint=dtypes.int64)
        splits = np.asarray(tensor.numpy(), np.int64)
        if splits.ndim != 1 or splits.size == 0:
            raise ValueError(f"Shape {tensor.shape} must have rank 1 and at least one value")
        if validate and splits[0] != 0:
            raise errors.invalid_argument("Arguments to from_row_splits do not form a valid RaggedTensor:zero", None)
        if validate and np.any(np.diff(splits) < 0):
            raise errors.invalid_argument(
                "Arguments to from_row_splits do not form a valid RaggedTensor:monotonic", None
            )
        return cls(splits, None, _index_dtype(dtype if dtype is not None else tensor.dtype))

    @classmethod
    def from_row_lengths(
        cls, row_lengths: TensorLike, validate: bool = True, dtype: DTypeLike | None = None
    ) -> "RowPartition":
        """The partition of rows of the given lengths.

        Raises:
          InvalidArgumentError: (with `validate`) for a negative length.
        """
        tensor = convert_to_tensor(row_lengths, dtype_hint=dtypes.int64)
        lengths = np.asarray(tensor.numpy(), np.int64)
        if validate and np.any(lengths < 0):
            raise errors.invalid_argument("Arguments to from_row_lengths do not form a valid RowPartition", None)
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(splits, None, _index_dtype(dtype if dtype is not None else tensor.dtype))

    @classmethod
    def from_uniform_row_length(
        cls, uniform_row_length: Any, nvals: Any = None, nrows: Any = None, dtype: DTypeLike | None = None
    ) -> "RowPartition":
        """The partition of `nrows` rows of `uniform_row_length` values each (`nrows` from `nvals` if not given)."""
        length = int(np.asarray(getattr(uniform_row_length, "numpy", lambda: uniform_row_length)()))
        if nrows is None:
            count = int(np.asarray(getattr(nvals, "numpy", lambda: nvals)())) if nvals is not None else 0
            rows = count // length if length else 0
        else:
            rows = int(np.asarray(getattr(nrows, "numpy", lambda: nrows)()))
        return cls(np.arange(rows + 1, dtype=np.int64) * length, length, _index_dtype(dtype or dtypes.int64))

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the partition's tensors (int32 or int64)."""
        return self._dtype

    def _tensor(self, values: Any) -> Tensor:
        return constant(np.asarray(values).astype(self._dtype.as_numpy_dtype))

    def row_splits(self) -> Tensor:
        """The row splits, a vector of `nrows + 1` offsets."""
        return self._tensor(self._splits)

    def row_lengths(self) -> Tensor:
        """The length of each row."""
        return self._tensor(np.diff(self._splits))

    def nrows(self) -> Tensor:
        """The number of rows, a scalar."""
        return self._tensor(self._splits.size - 1)

    def nvals(self) -> Tensor:
        """The number of values the rows partition, a scalar."""
        return self._tensor(self._splits[-1])

    def uniform_row_length(self) -> Tensor | None:
        """The length of every row for a uniform partition, else None."""
        return None if self._uniform is None else self._tensor(self._uniform)

    def is_uniform(self) -> bool:
        """Whether every row has the same, statically known, length."""
        return self._uniform is not None

    @property
    def static_nrows(self) -> int:
        return int(self._splits.size - 1)

    @property
    def static_nvals(self) -> int:
        return int(self._splits[-1])

    @property
    def static_uniform_row_length(self) -> int | None:
        return self._uniform

    def with_dtype(self, dtype: DTypeLike) -> "RowPartition":
        """The same partition with tensors of `dtype`."""
        return RowPartition(self._splits, self._uniform, _index_dtype(dtype))

    def __repr__(self) -> str:
        if self._uniform is not None:
            return f"tf.RowPartition(nrows={self.static_nrows}, uniform_row_length={self._uniform})"
        return f"tf.RowPartition(row_splits={np.asarray(self._splits)})"


class DynamicRaggedShape:
    """The shape of a (possibly ragged) tensor, as `tf.experimental.DynamicRaggedShape` (`tf.shape(rt)`).

    Args:
      row_partitions: the `RowPartition` of each ragged (or uniform) dimension after the first, outermost first.
      inner_shape: the shape of the flat values (of the tensor where there are no partitions).
      dtype: int64 or int32: the dtype of its tensors (by default the partitions', else int64).
      validate: whether to check that the partitions fit each other and the inner shape.
      static_inner_shape: accepted, as TF's.

    Raises:
      ValueError: for partitions without an inner shape.
      InvalidArgumentError: with `validate`, for partitions that do not fit each other or the inner shape.
    """

    def __init__(
        self,
        row_partitions: Sequence[RowPartition],
        inner_shape: TensorLike,
        dtype: DTypeLike | None = None,
        validate: bool = False,
        static_inner_shape: Any = None,
    ) -> None:
        partitions = list(row_partitions)
        if any(not isinstance(p, RowPartition) for p in partitions):
            raise TypeError(f"row_partitions should be a list of row partitions. Instead, got {row_partitions}")
        inner = [int(d) for d in np.asarray(convert_to_tensor(inner_shape, dtype_hint=dtypes.int64).numpy()).ravel()]
        if dtype is None:
            dtype = partitions[0].dtype if partitions else dtypes.int64
        self._dtype = _index_dtype(dtype)
        if partitions and not inner:
            raise ValueError("If row_partitions are provided, must have inner_rank > 0")
        if validate:  # (TF checks these when the shape is used, or here when asked to)
            for outer, inner_partition in zip(partitions, partitions[1:]):
                if outer.static_nvals != inner_partition.static_nrows:
                    raise errors.invalid_argument(
                        "incompatible row partitions: nvals of one is not nrows of the next", None
                    )
            if partitions and partitions[-1].static_nvals != inner[0]:
                raise errors.invalid_argument("Last row partition does not match inner_shape.", None)
        self._partitions = tuple(p.with_dtype(self._dtype) for p in partitions)
        self._inner = tuple(inner)

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_lengths(
        cls, lengths: list, num_row_partitions: int | None = None, dtype: DTypeLike = dtypes.int64
    ) -> "DynamicRaggedShape":
        """The shape with the given lengths: an int for a uniform dimension, a tuple of row lengths for a ragged
        one (`[2, (2, 1), 3]`), with the fewest row partitions unless `num_row_partitions` is given.

        Raises:
          ValueError: for lengths that are not a list of ints and tuples of ints, a tuple whose length is not the
            number of rows above it, or a `num_row_partitions` that does not fit.
        """
        if not isinstance(lengths, list):
            raise ValueError("lengths should be a list")
        for x in lengths:
            if not _int_or_ints(x):
                raise ValueError(f"element of lengths should be int or tuple of ints: instead {x!r}")
        if num_row_partitions is None:
            tuples = [i for i, x in enumerate(lengths) if isinstance(x, tuple)]
            num_row_partitions = tuples[-1] if tuples else 0
        if not isinstance(num_row_partitions, int):
            raise ValueError("num_row_partitions should be an int or None")
        if not lengths:
            if num_row_partitions > 0:
                raise ValueError("num_row_partitions==0 for a scalar shape")
            return cls([], np.zeros(0, np.int64), dtype=dtype)
        if not num_row_partitions < len(lengths):
            raise ValueError("num_row_partitions should be less than `len(lengths)` if shape is not scalar.")
        if isinstance(lengths[0], tuple):
            raise ValueError("Shape not consistent.")
        partitions, count = [], lengths[0]
        for x in lengths[1 : num_row_partitions + 1]:
            if isinstance(x, int):
                partitions.append(RowPartition(np.arange(count + 1, dtype=np.int64) * x, x, _index_dtype(dtype)))
                count *= x
            else:
                if len(x) != count:
                    raise ValueError("Shape not consistent.")
                partitions.append(RowPartition.from_row_lengths(np.asarray(x, np.int64), dtype=dtype))
                count = int(sum(x))
        rest = lengths[num_row_partitions + 1 :]
        if any(isinstance(x, tuple) for x in rest):
            raise ValueError("Shape not consistent.")
        inner = ([count] if num_row_partitions else [lengths[0]]) + list(rest)
        return cls(partitions, np.asarray(inner, np.int64), dtype=dtype)

    @classmethod
    def from_row_partitions(cls, row_partitions: Sequence[RowPartition], dtype: DTypeLike | None = None) -> Any:
        """The shape of the given (non-empty) row partitions over a vector of values.

        Raises:
          ValueError: for no partitions.
        """
        if not row_partitions:
            raise ValueError("row_partitions cannot be empty")
        return cls(row_partitions, [row_partitions[-1].static_nvals], dtype=dtype)

    @classmethod
    def from_tensor(cls, t: Any, dtype: DTypeLike | None = None) -> "DynamicRaggedShape":
        """The shape of a RaggedTensor (its partitions and flat values' shape) or of a dense tensor."""
        if isinstance(t, RaggedTensor):
            partitions, node = [], t
            while isinstance(node, RaggedTensor):
                partitions.append(RowPartition(node._splits, node._uniform, node.row_splits.dtype))
                node = node.values
            return cls(partitions, np.asarray(node.shape.as_list(), np.int64), dtype=dtype)
        tensor = convert_to_tensor(t)
        return cls([], np.asarray(tensor.shape.as_list(), np.int64), dtype=dtypes.int32 if dtype is None else dtype)

    # -- properties -----------------------------------------------------------------------------------
    @property
    def row_partitions(self) -> tuple:
        """The `RowPartition`s, outermost first."""
        return self._partitions

    @property
    def num_row_partitions(self) -> int:
        return len(self._partitions)

    @property
    def dtype(self) -> dtypes.DType:
        """int32 or int64: the dtype of the lengths it gives."""
        return self._dtype

    @property
    def inner_shape(self) -> Tensor:
        """The shape of the flat values, a vector of the shape's dtype."""
        return constant(np.asarray(self._inner, dtype=self._dtype.as_numpy_dtype).reshape(len(self._inner)))

    @property
    def inner_rank(self) -> int:
        return len(self._inner)

    @property
    def rank(self) -> int:
        """The number of dimensions."""
        return len(self._partitions) + len(self._inner)

    def with_dtype(self, dtype: DTypeLike) -> "DynamicRaggedShape":
        """The same shape with tensors of `dtype` (int32 or int64).

        Raises:
          ValueError: for another dtype.
        """
        found = _index_dtype(dtype)
        return self if found == self._dtype else DynamicRaggedShape(self._partitions, list(self._inner), dtype=found)

    def static_lengths(self, ragged_lengths: bool = True) -> list:
        """Every dimension's length: an int for a uniform dimension, a ragged one's row lengths as a tuple (None
        with `ragged_lengths=False`)."""
        if not self._partitions:
            return list(self._inner)
        lengths: list = [self._partitions[0].static_nrows]
        for partition in self._partitions:
            if partition.is_uniform():  # (a NumPy scalar of the shape's dtype, as TF's constant value)
                lengths.append(self._dtype.as_numpy_dtype(partition.static_uniform_row_length))
            elif ragged_lengths:
                lengths.append(tuple(int(n) for n in np.diff(partition._splits)))
            else:
                lengths.append(None)
        return lengths + list(self._inner[1:])

    def is_uniform(self, axis: int) -> bool:
        """Whether dimension `axis` has one length.

        Raises:
          TypeError: for an axis that is not an int.
          IndexError: for a negative axis or one not below the rank.
        """
        if not isinstance(axis, int):
            raise TypeError("axis must be an integer")
        if axis < 0:
            raise IndexError("Negative axis values are not supported")
        if axis >= self.rank:
            raise IndexError(f"Expected axis={axis} < rank={self.rank}")
        return axis == 0 or axis > len(self._partitions) or self._partitions[axis - 1].is_uniform()

    def _to_tensor_shape(self) -> TensorShape:
        return TensorShape(self.static_lengths(ragged_lengths=False))

    # -- indexing -------------------------------------------------------------------------------------
    def __getitem__(self, index: int | slice) -> Any:
        """The length of uniform dimension `index` (a scalar of the shape's dtype), or the shape of dimensions
        `start:stop` (from 0, or all uniform).

        Raises:
          ValueError: for a ragged dimension, or a slice not from 0 across a ragged one.
          IndexError: for an index out of range or a slice with a step.
          TypeError: for another index.
        """
        rank = self.rank
        if isinstance(index, slice):
            if index.step is not None and index.step != 1:
                raise IndexError("Cannot stride through a shape")
            start = _start_index(0 if index.start is None else index.start, rank, len(self._partitions))
            stop = _stop_index(index.stop, rank)
            return self._slice(start, stop)
        if isinstance(index, int) and not isinstance(index, bool):
            return self._dimension(rank + index if index < 0 else index)
        raise TypeError("Argument is not an int or a slice")

    def _dimension(self, index: int) -> Tensor:
        partitions = len(self._partitions)
        if (partitions == 0 or index > partitions + 1) and index >= self.rank:
            raise IndexError(f"Index is too big: {index}>={self.rank}")
        if index < 0:
            raise IndexError(f"Index must be non-negative: {index}")
        if not self.is_uniform(index):
            raise ValueError(f"Index {index} is not uniform")
        if index == 0 and partitions:
            value = self._partitions[0].static_nrows
        elif not partitions:
            value = self._inner[index]
        elif index > partitions:
            value = self._inner[index - partitions]
        else:
            value = self._partitions[index - 1].static_uniform_row_length  # type: ignore[assignment]
        return constant(value, dtype=self._dtype)

    def _slice(self, start: int, stop: int) -> "DynamicRaggedShape":
        partitions = len(self._partitions)
        if stop <= start:
            return DynamicRaggedShape([], np.zeros(0, np.int64), dtype=self._dtype)
        if start == 0:
            if stop == 1 and partitions:
                return DynamicRaggedShape([], [self._partitions[0].static_nrows], dtype=self._dtype)
            if stop <= partitions:
                kept = self._partitions[: stop - 1]
                return DynamicRaggedShape(kept, [kept[-1].static_nvals], dtype=self._dtype)
            if stop >= self.rank:
                return self
            return DynamicRaggedShape(self._partitions, list(self._inner[: stop - partitions]), dtype=self._dtype)
        prefix = self._slice(0, stop) if stop < self.rank else self
        if not all(p.is_uniform() for p in prefix._partitions):
            raise ValueError("All relevant dimensions must be uniform")
        dense = prefix.static_lengths()
        return DynamicRaggedShape([], dense[start:], dtype=self._dtype)

    # -- printing -------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        lengths = "[" + ", ".join(str(length) for length in self.static_lengths()) + "]"
        return f"<DynamicRaggedShape lengths={lengths} num_row_partitions={len(self._partitions)}>"

    __str__ = __repr__

    # -- values of this shape -----------------------------------------------------------------------
    def _template(self, flat: Tensor) -> Any:
        """`flat` (of the inner shape) under this shape's partitions."""
        result: Any = flat
        for partition in reversed(self._partitions):
            splits = constant(partition._splits.astype(self._dtype.as_numpy_dtype))
            result = RaggedTensor(result, splits, partition.static_uniform_row_length)
        return result


def _int_or_ints(x: Any) -> bool:
    if isinstance(x, int) and not isinstance(x, bool):
        return True
    return isinstance(x, tuple) and all(isinstance(y, int) and not isinstance(y, bool) for y in x)


def _start_index(index: int, rank: int, partitions: int) -> int:
    if index < 0:
        index = max(rank + index, 0)
    if (partitions > 0 and index <= partitions + 1) or index == 0:
        return index
    return min(index, rank)


def _stop_index(index: int | None, rank: int) -> int:
    if index is None:
        return rank
    if index < 0:
        index = max(rank + index, 0)
    return min(rank, index)


# -- what TF's ops do with ragged shapes -----------------------------------------------------------------
def shape(input: Any, out_type: DTypeLike = dtypes.int32, name: str | None = None) -> DynamicRaggedShape:  # noqa: A002
    """`tf.shape` of a RaggedTensor: its `DynamicRaggedShape`, of dtype `out_type`."""
    return DynamicRaggedShape.from_tensor(input, dtype=out_type)


def broadcast_to(input: Any, shape: DynamicRaggedShape, name: str | None = None) -> Any:  # noqa: A002 - TF's name
    """`input` (a tensor, or a RaggedTensor of the same partitions) broadcast to a ragged `shape`, as TF's
    `tf.broadcast_to` with a `DynamicRaggedShape`: a dense tensor broadcasts per row (each of its dimensions
    1 or the length of that dimension for every row).

    Raises:
      InvalidArgumentError: where `input` does not broadcast to `shape`.
    """
    from tapeshim._src.ragged_dispatch import flat_operand  # import cycle: ragged_dispatch imports the ops

    if not shape.num_row_partitions:
        return manip_ops.broadcast_to(input, list(shape._inner))
    value = input if isinstance(input, RaggedTensor) else convert_to_tensor(input)
    template = shape._template(array_ops.zeros(list(shape._inner), dtype=value.dtype))
    flat = convert_to_tensor(flat_operand(template, value), dtype=value.dtype)
    return template.with_flat_values(manip_ops.broadcast_to(flat, list(shape._inner)))


def reshape(tensor: Any, shape: DynamicRaggedShape, name: str | None = None) -> Any:
    """`tensor`'s values (a RaggedTensor's flat values, in order) in a ragged `shape`, as TF's `tf.reshape` with
    a `DynamicRaggedShape`.

    Raises:
      InvalidArgumentError: for a number of values other than the shape's.
    """
    values = tensor.flat_values if isinstance(tensor, RaggedTensor) else convert_to_tensor(tensor)
    flat = array_ops.reshape(values, [-1])
    return shape._template(array_ops.reshape(flat, list(shape._inner)))


def zeros(shape: DynamicRaggedShape, dtype: DTypeLike = dtypes.float32, name: str | None = None) -> Any:
    """`tf.zeros` of a ragged shape: a RaggedTensor of zeros."""
    return shape._template(array_ops.zeros(list(shape._inner), dtype=dtype))


def ones(shape: DynamicRaggedShape, dtype: DTypeLike = dtypes.float32, name: str | None = None) -> Any:
    """`tf.ones` of a ragged shape: a RaggedTensor of ones."""
    return shape._template(array_ops.ones(list(shape._inner), dtype=dtype))


def fill(dims: DynamicRaggedShape, value: Any, name: str | None = None, layout: Any = None) -> Any:
    """`tf.fill` of a ragged shape: a RaggedTensor of `value` (its dtype follows `value`)."""
    return dims._template(array_ops.fill(list(dims._inner), value))
