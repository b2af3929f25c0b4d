"""`tf.RaggedTensor` and `tf.ragged.constant`: rows of different lengths.

A `RaggedTensor` is its `values` (a `Tensor`, on the device for numbers and on
the host for `tf.string`, or another `RaggedTensor`) and `row_splits` (an
int64 or int32 `Tensor`: row `i` is `values[row_splits[i]:row_splits[i+1]]`),
as TF's. Elementwise operators map over the flat values with tapeshim's own
ops, so gradients flow through numeric values as through any tensor. The
structure (splits, lengths, padding) is computed on the host with numpy.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, SupportsInt

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import array_ops, manip_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.sparse import SparseTensor
from tapeshim._src.strings_tensor import StringTensor, host_tensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, TensorLike, TensorShapeLike


def _host(tensor: Tensor) -> np.ndarray:
    return np.asarray(tensor._value) if isinstance(tensor, StringTensor) else np.asarray(tensor.numpy())


def _index_tensor(value: Any, default: Any = dtypes.int64) -> Tensor:
    """A row-partition argument as an int32/int64 tensor (Python values become int64, as TF's)."""
    if isinstance(value, Tensor) or hasattr(value, "_read_for_op"):
        tensor = convert_to_tensor(value)
    else:
        tensor = convert_to_tensor(value, dtype=default)
    if tensor.dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"dtype must be int32 or int64, got {tensor.dtype.name}")
    return tensor


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.invalid_argument(message, None)


def _values_tensor(values: Any) -> Any:
    if isinstance(values, RaggedTensor):
        return values
    return convert_to_tensor(values)


def _nvals(values: Any) -> int:
    return values.nrows_int() if isinstance(values, RaggedTensor) else values.shape[0]


class RaggedTensor:
    """A tensor with rows of different lengths, as `tf.RaggedTensor`.

    Build one with `tf.ragged.constant` or the `from_*` class methods.
    """

    def __init__(self, values: Any, row_splits: Tensor, uniform_row_length: int | None = None) -> None:
        self._values = values
        self._row_splits = row_splits
        self._splits = np.asarray(row_splits.numpy(), np.int64)
        self._uniform = uniform_row_length

    # -- construction -----------------------------------------------------
    @classmethod
    def from_row_splits(
        cls, values: Any, row_splits: TensorLike, name: str | None = None, validate: bool = True
    ) -> "RaggedTensor":
        """Rows `values[row_splits[i]:row_splits[i + 1]]`.

        Raises:
          InvalidArgumentError: if the splits do not start at 0, decrease, or do not end at `len(values)`.
        """
        values = _values_tensor(values)
        splits = _index_tensor(row_splits)
        host = np.asarray(splits.numpy(), np.int64)
        if validate:
            if host.ndim != 1 or host.size == 0:
                raise ValueError("row_splits must be a non-empty vector")
            if host[0] != 0:
                raise _invalid("Arguments to from_row_splits do not form a valid RaggedTensor:zero")
            if np.any(np.diff(host) < 0):
                raise _invalid("Arguments to from_row_splits do not form a valid RaggedTensor:monotonic.")
            if host[-1] != _nvals(values):
                raise _invalid("Arguments to _from_row_partition do not form a valid RaggedTensor")
        return cls(values, splits)

    @classmethod
    def from_row_lengths(
        cls, values: Any, row_lengths: TensorLike, name: str | None = None, validate: bool = True
    ) -> "RaggedTensor":
        """Rows of the given lengths, taken in order from `values`.

        Raises:
          InvalidArgumentError: for a negative length or lengths not summing to `len(values)`.
        """
        values = _values_tensor(values)
        lengths = _index_tensor(row_lengths)
        host = np.asarray(lengths.numpy(), np.int64)
        if validate and np.any(host < 0):
            raise _invalid("Arguments to from_row_lengths do not form a valid RowPartition.")
        splits: np.ndarray = np.concatenate([[0], np.cumsum(host)]).astype(lengths.dtype.as_numpy_dtype)
        if validate and splits[-1] != _nvals(values):
            raise _invalid("Arguments to _from_row_partition do not form a valid RaggedTensor")
        return cls(values, constant(splits))

    @classmethod
    def from_value_rowids(
        cls,
        values: Any,
        value_rowids: TensorLike,
        nrows: SupportsInt | None = None,
        name: str | None = None,
        validate: bool = True,
    ) -> "RaggedTensor":
        """Rows from each value's row index (`value_rowids` sorted ascending)."""
        values = _values_tensor(values)
        ids = _index_tensor(value_rowids)
        host = np.asarray(ids.numpy(), np.int64)
        count = int(nrows) if nrows is not None else (int(host[-1]) + 1 if host.size else 0)
        if validate and (np.any(np.diff(host) < 0) or (host.size and (host[0] < 0 or host[-1] >= count))):
            raise _invalid("Arguments to from_value_rowids do not form a valid RaggedTensor")
        lengths: np.ndarray = np.bincount(host, minlength=count).astype(ids.dtype.as_numpy_dtype)
        return cls.from_row_lengths(values, constant(lengths), validate=validate)

    @classmethod
    def from_uniform_row_length(
        cls,
        values: Any,
        uniform_row_length: SupportsInt | TensorLike,
        nrows: SupportsInt | TensorLike | None = None,
        validate: bool = True,
        name: str | None = None,
    ) -> "RaggedTensor":
        """Rows of `uniform_row_length` values each, taken in order from `values`, as TF's.

        Args:
          values: a Tensor (or RaggedTensor) whose rows are cut into rows of equal length.
          uniform_row_length: the length of every row (an int32 or int64 scalar).
          nrows: the number of rows; needed only when `uniform_row_length` is 0.
          validate: whether to check that the lengths fit `values`.
          name: ignored.

        Returns:
          A RaggedTensor of shape `[nrows, uniform_row_length, ...]`.

        Raises:
          ValueError: if `len(values)` is not `nrows * uniform_row_length` (as TF's static check), or
            `uniform_row_length` is not a scalar.
        """
        values = _values_tensor(values)
        length_tensor = _index_tensor(uniform_row_length)
        if length_tensor.ndim != 0:
            raise ValueError(f"Shape {length_tensor.shape} must have rank 0")
        length = int(length_tensor.numpy())
        count = _nvals(values)
        if nrows is not None:
            rows = int(_index_tensor(nrows).numpy())
        else:
            rows = count // length if length else 0
        if validate and (length < 0 or rows * length != count):
            raise ValueError(f"uniform_row_length={length} times nrows={rows} must equal nvals={count}")
        splits = np.arange(rows + 1, dtype=np.int64) * length
        return cls(values, constant(splits.astype(length_tensor.dtype.as_numpy_dtype)), length)

    @classmethod
    def from_nested_row_splits(
        cls,
        flat_values: Any,
        nested_row_splits: Sequence[TensorLike],
        name: str | None = None,
        validate: bool = True,
    ) -> "RaggedTensor":
        """A ragged tensor with one ragged dimension per entry of `nested_row_splits`."""
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(
        cls,
        flat_values: Any,
        nested_row_lengths: Sequence[TensorLike],
        name: str | None = None,
        validate: bool = True,
    ) -> "RaggedTensor":
        """A ragged tensor with one ragged dimension per entry of `nested_row_lengths`."""
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_tensor(
        cls,
        tensor: TensorLike,
        lengths: TensorLike | None = None,
        padding: TensorLike | None = None,
        ragged_rank: int = 1,
        name: str | None = None,
        row_splits_dtype: DTypeLike = dtypes.int64,
    ) -> "RaggedTensor":
        """The rows of a dense tensor, cut at `lengths` or where trailing `padding` starts (ragged_rank 1)."""
        tensor = convert_to_tensor(tensor)
        if ragged_rank != 1:
            raise NotImplementedError("tapeshim's RaggedTensor.from_tensor supports ragged_rank=1 only")
        if tensor.ndim < 2:
            raise ValueError(f"ragged_rank must be less than rank; got ragged_rank={ragged_rank}, rank={tensor.ndim}")
        host = _host(tensor)
        rows, cols = host.shape[0], host.shape[1]
        if lengths is not None:
            row_lengths = np.asarray(_host(convert_to_tensor(lengths)), np.int64)
        elif padding is not None:
            pad = _host(convert_to_tensor(padding, dtype=tensor.dtype))
            equal = host == pad
            equal = equal.reshape(rows, cols, -1).all(axis=2)
            keep = ~np.flip(np.logical_and.accumulate(np.flip(equal, 1), axis=1), 1)
            row_lengths = keep.sum(axis=1).astype(np.int64)
        else:
            row_lengths = np.full(rows, cols, np.int64)
        mask = np.arange(cols)[None, :] < row_lengths[:, None]
        flat = host[mask]
        rs_dtype = dtypes.as_dtype(row_splits_dtype)
        splits: np.ndarray = np.concatenate([[0], np.cumsum(row_lengths)]).astype(rs_dtype.as_numpy_dtype)
        uniform = cols if lengths is None and padding is None else None
        return cls(host_tensor(np.ascontiguousarray(flat), tensor.dtype), constant(splits), uniform)

    # -- structure --------------------------------------------------------
    @property
    def values(self) -> Any:
        """The concatenated rows (a Tensor, or a RaggedTensor for ragged_rank > 1)."""
        return self._values

    @property
    def row_splits(self) -> Tensor:
        """Row `i` is `values[row_splits[i]:row_splits[i + 1]]`."""
        return self._row_splits

    @property
    def flat_values(self) -> Tensor:
        """The innermost values, a Tensor."""
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values._values
        return values

    @property
    def nested_row_splits(self) -> tuple:
        """The row_splits of every ragged dimension, outermost first."""
        result, node = [], self
        while isinstance(node, RaggedTensor):
            result.append(node._row_splits)
            node = node._values
        return tuple(result)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions."""
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the values."""
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return self._row_splits.dtype

    @property
    def shape(self) -> TensorShape:
        """`[nrows, None, ...]`: None for each ragged dimension, then the flat values' inner dimensions."""
        dims: list[int | None] = [self.nrows_int()]
        node = self
        while isinstance(node, RaggedTensor):
            dims.append(node._uniform)
            node = node._values
        return TensorShape(dims + list(node.shape[1:]))

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def nrows_int(self) -> int:
        return int(self._splits.size - 1)

    def nrows(self, out_type: DTypeLike | None = None, name: str | None = None) -> Tensor:
        """The number of rows, as a scalar tensor (the row_splits dtype unless `out_type`)."""
        dtype = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        return constant(self.nrows_int(), dtype=dtype)

    def row_lengths(self, axis: int = 1, name: str | None = None) -> Any:
        """The length of each row (`axis=1`), or of each inner row (`axis=2`, ...)."""
        if axis == 1:
            return constant(np.diff(self._splits).astype(self._row_splits.dtype.as_numpy_dtype))
        if axis < 1 or not isinstance(self._values, RaggedTensor):
            raise ValueError(f"axis={axis} is not a ragged dimension")
        return self.with_values(self._values.row_lengths(axis - 1))

    def nested_row_lengths(self, name: str | None = None) -> tuple:
        """The row lengths of every ragged dimension, outermost first."""
        return tuple(
            constant(np.diff(np.asarray(s.numpy())).astype(s.dtype.as_numpy_dtype)) for s in self.nested_row_splits
        )

    def value_rowids(self, name: str | None = None) -> Tensor:
        """The row index of each value."""
        ids = np.repeat(np.arange(self.nrows_int()), np.diff(self._splits))
        return constant(ids.astype(self._row_splits.dtype.as_numpy_dtype))

    def row_starts(self, name: str | None = None) -> Tensor:
        return constant(self._splits[:-1].astype(self._row_splits.dtype.as_numpy_dtype))

    def row_limits(self, name: str | None = None) -> Tensor:
        return constant(self._splits[1:].astype(self._row_splits.dtype.as_numpy_dtype))

    def bounding_shape(
        self, axis: AxisLike = None, name: str | None = None, out_type: DTypeLike | None = None
    ) -> Tensor:
        """The smallest dense shape holding every row."""
        dims = [self.nrows_int()]
        node = self
        while isinstance(node, RaggedTensor):
            lengths = np.diff(node._splits)
            dims.append(int(lengths.max()) if lengths.size else 0)
            node = node._values
        dims += list(node.shape[1:])
        dtype = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        result = np.asarray(dims, dtype.as_numpy_dtype)
        return constant(result if axis is None else result[axis])

    def with_row_splits_dtype(self, dtype: DTypeLike) -> "RaggedTensor":
        """This tensor with every row partition in `dtype` (int32 or int64).

        Raises:
          ValueError: for another dtype.
        """
        found = dtypes.as_dtype(dtype)
        if found not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"Argument `row_splits` dtype must be int32 or int64. Received {found}.")
        if found == self._row_splits.dtype:
            return self
        values = self._values.with_row_splits_dtype(found) if isinstance(self._values, RaggedTensor) else self._values
        return RaggedTensor(values, constant(self._splits.astype(found.as_numpy_dtype)), self._uniform)

    def with_values(self, new_values: TensorLike | RaggedTensor) -> "RaggedTensor":
        """This tensor's outermost row partition over `new_values`."""
        return RaggedTensor(_values_tensor(new_values), self._row_splits, self._uniform)

    def with_flat_values(self, new_values: TensorLike | RaggedTensor) -> "RaggedTensor":
        """This tensor's row partitions (uniform row lengths kept) over new flat values."""
        if isinstance(self._values, RaggedTensor):
            return RaggedTensor(self._values.with_flat_values(new_values), self._row_splits, self._uniform)
        return RaggedTensor(_values_tensor(new_values), self._row_splits, self._uniform)

    @classmethod
    def from_sparse(
        cls, st_input: SparseTensor, name: str | None = None, row_splits_dtype: DTypeLike = dtypes.int64
    ) -> "RaggedTensor":
        """The rows of a 2-D SparseTensor in row-major order (each row's values in order), as TF's."""
        indices = np.asarray(st_input.indices.numpy(), np.int64)
        shape = np.asarray(st_input.dense_shape.numpy(), np.int64)
        if shape.size != 2:
            raise ValueError(f"rank(st_input) must be 2. Received: {shape.size}")
        lengths = (
            np.bincount(indices[:, 0], minlength=int(shape[0]))
            if indices.shape[0]
            else np.zeros(int(shape[0]), np.int64)
        )
        for row in range(lengths.size):  # each row's columns, in order of appearance, are 0, 1, ... (as TF checks)
            if not np.array_equal(indices[indices[:, 0] == row, 1], np.arange(lengths[row])):
                raise _invalid("SparseTensor is not right-ragged")
        lengths = (
            np.bincount(indices[:, 0], minlength=int(shape[0]))
            if indices.shape[0]
            else np.zeros(int(shape[0]), np.int64)
        )
        splits: np.ndarray = np.concatenate([[0], np.cumsum(lengths)]).astype(
            dtypes.as_dtype(row_splits_dtype).as_numpy_dtype
        )
        return cls(st_input.values, constant(splits))

    def to_sparse(self, name: str | None = None) -> Any:
        """The SparseTensor of the present values (indices in row-major order), as TF's."""
        flat = self.flat_values
        coords = self._dense_coordinates()
        inner = [int(d) for d in flat._shape[1:]]
        count = int(np.prod(inner)) if inner else 1
        if inner:
            within = np.stack(np.unravel_index(np.arange(count), inner), axis=1)
            coords = np.concatenate([np.repeat(coords, count, axis=0), np.tile(within, (coords.shape[0], 1))], axis=1)
            values = (
                host_tensor(_host(flat).reshape(-1), flat.dtype)
                if flat.dtype is dtypes.string
                else (array_ops.reshape(flat, [-1]))
            )
        else:
            values = flat
        shape = np.asarray(self.bounding_shape(out_type=dtypes.int64).numpy(), np.int64)
        return SparseTensor(constant(coords.astype(np.int64).reshape(-1, shape.size)), values, constant(shape))

    def merge_dims(self, outer_axis: int, inner_axis: int) -> Any:
        """Merges dimensions `outer_axis..inner_axis` into one, as TF's (a dense Tensor when none stay ragged)."""
        rank = self.ndim
        outer, inner = outer_axis % rank, inner_axis % rank
        if outer > inner:
            raise ValueError(
                f"Expected outer_axis ({outer_axis}) to be less than or equal to inner_axis ({inner_axis})"
            )
        if outer == inner:
            return self
        if outer > 1:
            values = self._values
            merged = (
                values.merge_dims(outer - 1, inner - 1)
                if isinstance(values, RaggedTensor)
                else (_merge_dense(values, outer - 1, inner - 1, array_ops))
            )
            return self.with_values(merged)
        if outer == 1:  # each row's boundaries, mapped through the merged levels
            splits, node = self._splits, self._values
            for _ in range(inner - 1):
                if isinstance(node, RaggedTensor):
                    splits, node = node._splits[splits], node._values
                else:
                    splits = splits * int(node.shape[1])
                    node = _merge_dense(node, 0, 1, array_ops)
            merged = (
                self._values.merge_dims(0, inner - 1)
                if isinstance(self._values, RaggedTensor)
                else (_merge_dense(self._values, 0, inner - 1, array_ops))
            )
            return RaggedTensor(merged, constant(splits.astype(self._row_splits.dtype.as_numpy_dtype)))
        result: Any = self._values
        for _ in range(inner - 1):
            result = (
                result.merge_dims(0, 1) if isinstance(result, RaggedTensor) else _merge_dense(result, 0, 1, array_ops)
            )
        return result

    # -- conversion ---------------------------------------------------------
    def to_list(self) -> list:
        """The rows as nested Python lists (bytes for strings)."""
        inner = self._values.to_list() if isinstance(self._values, RaggedTensor) else _host(self._values).tolist()
        return [inner[self._splits[i] : self._splits[i + 1]] for i in range(self.nrows_int())]

    def numpy(self) -> np.ndarray:
        """The rows as numpy values, as TF's: an object array of rows where their lengths differ, else one array
        (rows of one length stack into a dimension)."""
        values = self._values.numpy() if isinstance(self._values, RaggedTensor) else _host(self._values)
        rows = [values[self._splits[i] : self._splits[i + 1]] for i in range(self.nrows_int())]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        if all(len(row) == len(rows[0]) for row in rows):
            try:
                return np.array(rows)
            except ValueError:  # (rows of one length holding rows of different lengths)
                pass
        result = np.empty(len(rows), dtype=object)
        result[:] = rows
        return result

    def to_tensor(
        self, default_value: TensorLike | None = None, name: str | None = None, shape: TensorShapeLike = None
    ) -> Tensor:
        """A dense tensor, short rows padded with `default_value` (0 or b""); `shape` crops or pads."""
        flat = self.flat_values
        bounding = [int(d) for d in np.asarray(self.bounding_shape().numpy())]
        if shape is not None:
            dims: list[int | None] = [
                None if d is None or (not isinstance(d, int) and d is None) else int(d)
                for d in (shape.as_list() if isinstance(shape, TensorShape) else list(shape))
            ]
            inner = list(flat.shape[1:])
            for axis, (have, want) in enumerate(zip(inner, dims[len(dims) - len(inner) :]), len(dims) - len(inner)):
                if want is not None and want >= 0 and want != have:
                    raise errors.invalid_argument(
                        f"rt_input.shape and shape=[{','.join(str(d) for d in dims)}] are incompatible: "
                        f"rt_input.shape[{axis}] = {have} "
                        f"but shape[{axis}] = {want}",
                        "RaggedTensorToTensor",
                    )
            bounding = [b if s is None or s < 0 else s for b, s in zip(bounding, dims)]
        if flat.dtype is not dtypes.string:
            return self._scatter_to_tensor(bounding, default_value)
        fill = b"" if default_value is None else _host(convert_to_tensor(default_value, dtype=flat.dtype))
        out = np.empty(bounding, dtype=object)
        out[...] = fill
        host = _host(flat)

        def place(node: Any, start: int, stop: int, target: np.ndarray) -> None:
            if isinstance(node, RaggedTensor):
                for row, i in enumerate(range(start, min(stop, start + target.shape[0]))):
                    place(node._values, int(node._splits[i]), int(node._splits[i + 1]), target[row])
            else:
                take = host[start:stop][: target.shape[0]]
                inner = tuple(slice(0, d) for d in target.shape[1:])
                target_index, take_index = (slice(0, take.shape[0]), *inner), (slice(None), *inner)
                target[target_index] = take[take_index]

        place(self, 0, self.nrows_int(), out)
        return host_tensor(out, flat.dtype)

    def _dense_coordinates(self) -> np.ndarray:
        """Each flat value's coordinates in the dense tensor (ragged dimensions only), `[N, ragged_rank + 1]`."""
        coords = np.arange(self.nrows_int(), dtype=np.int64)[:, None]
        node = self
        while isinstance(node, RaggedTensor):
            lengths = np.diff(node._splits)
            rows = np.repeat(np.arange(lengths.size), lengths)
            within = np.arange(int(node._splits[-1])) - np.repeat(node._splits[:-1], lengths)
            coords = np.concatenate([coords[rows], within[:, None]], axis=1)
            node = node._values
        return coords

    def _scatter_to_tensor(self, bounding: list, default_value: Any) -> Tensor:
        """`to_tensor` of numeric values as tapeshim ops (a scatter), so gradients reach the values."""
        flat = self.flat_values
        coords = self._dense_coordinates()
        inner = list(flat.shape[1:])
        ragged_dims = len(bounding) - len(inner)
        keep = np.all(coords < np.asarray(bounding[:ragged_dims]), axis=1)
        values = flat
        if inner != bounding[ragged_dims:]:
            index = (slice(None), *[slice(0, d) for d in bounding[ragged_dims:]])
            values = values[index]
        if not keep.all():
            values = array_ops.gather(values, constant(np.nonzero(keep)[0].astype(np.int64)))
        fill = 0 if default_value is None else default_value
        base = array_ops.fill(bounding, convert_to_tensor(fill, dtype=flat.dtype))
        if not keep.any():
            return base
        updates = values
        if list(values.shape[1:]) != bounding[ragged_dims:]:
            pads = [[0, 0]] + [[0, b - d] for b, d in zip(bounding[ragged_dims:], values.shape[1:])]
            updates = manip_ops.pad(values, pads, constant_values=fill)
        return manip_ops.tensor_scatter_nd_update(base, constant(coords[keep]), updates)

    # -- indexing -----------------------------------------------------------
    def _row(self, i: int) -> Any:
        n = self.nrows_int()
        if not -n <= i < n:
            raise IndexError(f"Row key {i} out of bounds")
        i %= n
        start, stop = int(self._splits[i]), int(self._splits[i + 1])
        return _slice_rows(self._values, start, stop)

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, tuple):
            key = (key,)
        if not key:
            return self
        first, rest = key[0], key[1:]
        if isinstance(first, Tensor):
            first = int(first.numpy())
        if isinstance(first, (int, np.integer)):
            row = self._row(int(first))
            return row[rest] if rest else row
        if isinstance(first, slice):
            start, stop, step = first.indices(self.nrows_int())
            if step != 1:
                raise ValueError("tapeshim's RaggedTensor slicing supports a step of 1 only")
            stop = max(stop, start)
            splits = self._splits[start : stop + 1]
            sub = _slice_rows(self._values, int(splits[0]), int(splits[-1]))
            result = RaggedTensor(sub, constant((splits - splits[0]).astype(self._row_splits.dtype.as_numpy_dtype)))
            if rest:
                inner = rest[0]
                if not isinstance(inner, slice):
                    raise ValueError("Cannot index into an inner ragged dimension.")
                if inner != slice(None):
                    result = result._slice_within_rows(inner)
                index = (slice(None), *rest[1:])
                return result.with_values(result._values[index] if rest[1:] else result._values)
            return result
        raise TypeError(f"Ragged tensors do not support the index {first!r}")

    def _slice_within_rows(self, key: slice) -> "RaggedTensor":
        """Each row sliced by `key` (Python slice rules per row), as TF's `rt[:, a:b]`."""
        if key.step not in (None, 1):
            raise ValueError("tapeshim's RaggedTensor slicing supports a step of 1 only")
        picks: list[int] = []
        lengths: list[int] = []
        for i in range(self.nrows_int()):
            start, stop = int(self._splits[i]), int(self._splits[i + 1])
            a, b, _ = key.indices(stop - start)
            b = max(a, b)
            picks.extend(range(start + a, start + b))
            lengths.append(b - a)
        splits = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        values = _gather_rows(self._values, np.asarray(picks, np.int64))
        return RaggedTensor(values, constant(splits.astype(self._row_splits.dtype.as_numpy_dtype)))

    # -- printing -------------------------------------------------------------
    def __repr__(self) -> str:
        if self.flat_values._symbolic_name() is not None:  # inside a function trace, as TF's graph tensor prints
            return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"
        return f"<tf.RaggedTensor {self.to_list()!r}>"

    __str__ = __repr__

    def __iter__(self) -> Any:
        return (self[i] for i in range(self.nrows_int()))

    # -- elementwise operators on the flat values ------------------------------
    def _binary(self, other: Any, fn: Callable[[Any, Any], Any], reflected: bool = False) -> "RaggedTensor":
        """`fn` on the flat values, `other` broadcast as TF's ragged dispatch does (`ragged_dispatch`)."""
        from tapeshim._src.ragged_dispatch import flat_operand, lifted  # import cycle: it imports this module

        anchor = lifted(self, (other,))  # (a dense operand of a higher rank)
        other_flat = flat_operand(anchor, other)
        a, b = (other_flat, anchor.flat_values) if reflected else (anchor.flat_values, other_flat)
        return anchor.with_flat_values(fn(a, b))

    def __add__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a + b)

    def __radd__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a + b, True)

    def __sub__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a - b)

    def __rsub__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a - b, True)

    def __mul__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a * b)

    def __rmul__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a * b, True)

    def __truediv__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a / b)

    def __neg__(self) -> "RaggedTensor":
        return self.with_flat_values(-self.flat_values)

    def __rtruediv__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a / b, True)

    def __floordiv__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a // b)

    def __mod__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a % b)

    def __pow__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a**b)

    def __abs__(self) -> "RaggedTensor":
        return self.with_flat_values(abs(self.flat_values))

    def __lt__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a < b)

    def __le__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a <= b)

    def __gt__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a > b)

    def __ge__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a >= b)

    def __eq__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a == b)

    def __ne__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a != b)

    __hash__ = None  # type: ignore[assignment]

    def __and__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a & b)

    def __or__(self, other: TensorLike | RaggedTensor) -> "RaggedTensor":
        return self._binary(other, lambda a, b: a | b)

    def __invert__(self) -> "RaggedTensor":
        return self.with_flat_values(~self.flat_values)

    def __bool__(self) -> bool:
        raise TypeError("RaggedTensor may not be used as a boolean.")

    def __tf_tracing_type__(self, context: Any) -> Any:
        """The trace type of this value as a `tapeshim.function` argument (`ragged_spec.RaggedValueType`):
        tapeshim's ragged ops compute partitions on the host, so a function sees its RaggedTensor arguments
        as they are, and a call with other values traces again."""
        from tapeshim._src.ragged_spec import RaggedValueType  # import cycle: ragged_spec imports this module

        found = self.__dict__.get("_trace_type")
        if found is None:
            found = self.__dict__["_trace_type"] = RaggedValueType(self)
        return found

    @property
    def _type_spec(self) -> Any:
        """The `tf.RaggedTensorSpec` of this value."""
        from tapeshim._src.ragged_spec import RaggedTensorSpec  # import cycle: ragged_spec imports this module

        return RaggedTensorSpec.from_value(self)


def _gather_rows(values: Any, rows: np.ndarray) -> Any:
    """The rows `rows` of a tensor (tapeshim's gather; numpy for strings) or of a RaggedTensor."""
    if isinstance(values, RaggedTensor):
        starts, stops = values._splits[rows], values._splits[rows + 1]
        inner = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)] or [np.zeros(0, np.int64)])
        splits = np.concatenate([[0], np.cumsum(stops - starts)])
        return RaggedTensor(
            _gather_rows(values._values, inner.astype(np.int64)),
            constant(splits.astype(values._row_splits.dtype.as_numpy_dtype)),
        )
    if values.dtype is dtypes.string:
        return host_tensor(_host(values)[rows], dtypes.string)
    return array_ops.gather(values, constant(rows))


def _merge_dense(tensor: Tensor, outer: int, inner: int, array_ops: Any) -> Tensor:
    shape = list(tensor._shape)
    merged = shape[:outer] + [int(np.prod(shape[outer : inner + 1]))] + shape[inner + 1 :]
    if tensor.dtype is dtypes.string:
        return host_tensor(_host(tensor).reshape(merged), dtypes.string)
    return array_ops.reshape(tensor, merged)


def _slice_rows(values: Any, start: int, stop: int) -> Any:
    if isinstance(values, RaggedTensor):
        splits = values._splits[start : stop + 1]
        inner = _slice_rows(values._values, int(splits[0]), int(splits[-1]))
        return RaggedTensor(inner, constant((splits - splits[0]).astype(values._row_splits.dtype.as_numpy_dtype)))
    return values[start:stop]


def map_flat_values(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Applies `op` to the flat values of the ragged arguments, keeping their row partitions.

    Raises:
      ValueError: if no argument is ragged.
    """
    ragged = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not ragged:
        raise ValueError("map_flat_values requires at least one RaggedTensor input")
    first = ragged[0]

    def flat(a: Any) -> Any:
        return a.flat_values if isinstance(a, RaggedTensor) else a

    return first.with_flat_values(op(*[flat(a) for a in args], **{k: flat(v) for k, v in kwargs.items()}))
