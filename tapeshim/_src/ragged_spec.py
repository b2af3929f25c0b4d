"""`tf.RaggedTensorSpec` and `tf.type_spec_from_value`: the type of a `tf.RaggedTensor`, as TF's.

A spec is a shape (`None` in every ragged dimension), the values' dtype, the ragged rank (how many
times the flat values are partitioned) and the row-splits dtype. It compares, prints and combines
as TF's (`RaggedTensorSpec(TensorShape([None, None]), tf.float32, 1, tf.int64)`), describes the
ragged elements of a `tf.data.Dataset` (a spec of ragged rank 0 describes a dense `Tensor`: the row
of a ragged rank 1 tensor), and types a `tapeshim.function` argument (`input_signature`,
`get_concrete_function`). The spec is also its own trace type (`__tf_tracing_type__`).

`RaggedValueType` is the trace type of a RaggedTensor of strings as a function argument: strings never enter
a program, so a traced function sees such an argument as it is (a constant of the trace). A numeric
RaggedTensor argument is traced by its row partition, with its flat values as a placeholder, and counted
by its spec as TF (`ragged_function`).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.trace_type import TraceType
from tapeshim._src.typing_aliases import DTypeLike, TensorShapeLike


def _ragged_type() -> type:
    from tapeshim._src.ragged import RaggedTensor  # import cycle: ragged imports this module lazily

    return RaggedTensor


class RaggedTensorSpec(TraceType):
    """The type of a `tf.RaggedTensor`: shape, dtype, ragged rank and row-splits dtype, as TF's.

    Args:
      shape: the shape, `None` in each ragged dimension (or None: any shape, then `ragged_rank` is needed).
      dtype: the values' dtype (default float32).
      ragged_rank: how many times the flat values are partitioned; `shape`'s rank minus 1 by default.
      row_splits_dtype: the row splits' dtype, `tf.int64` (default) or `tf.int32`.
      flat_values_spec: the spec of the flat values, where it is given (its dtype must be `dtype`).

    Raises:
      ValueError: without `ragged_rank` and a shape of known rank, with a `ragged_rank` not below the rank,
        without `dtype` and `flat_values_spec`, or a `dtype` other than `flat_values_spec`'s.
      TypeError: for a `ragged_rank` that is not an int.
    """

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype", "_flat_values_spec")

    def __init__(
        self,
        shape: TensorShapeLike = None,
        dtype: DTypeLike | None = dtypes.float32,
        ragged_rank: int | None = None,
        row_splits_dtype: DTypeLike = dtypes.int64,
        flat_values_spec: TensorSpec | None = None,
    ) -> None:
        self._shape = TensorShape(shape)
        self._row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if flat_values_spec is not None:
            if dtype is None:
                dtype = flat_values_spec.dtype
            elif dtypes.as_dtype(dtype) != flat_values_spec.dtype:
                raise ValueError("dtype must be the same as flat_values_spec.dtype")
        elif dtype is None:
            raise ValueError("At least one of dtype or flat_values_spec must be provided")
        self._dtype = dtypes.as_dtype(dtype)
        self._flat_values_spec = flat_values_spec
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if not isinstance(ragged_rank, int) or isinstance(ragged_rank, bool):
            raise TypeError(f"Argument `ragged_rank` must be an int. Received {ragged_rank}.")
        if rank is not None and ragged_rank >= rank:
            raise ValueError(f"Argument `ragged_rank` ({ragged_rank}) must be less than rank ({rank}).")
        self._ragged_rank = ragged_rank

    # -- properties ---------------------------------------------------------------------------------
    @property
    def shape(self) -> TensorShape:
        """The shape: `None` in each ragged dimension."""
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the values."""
        return self._dtype

    @property
    def ragged_rank(self) -> int:
        """The number of times the flat values are partitioned."""
        return self._ragged_rank

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        """The dtype of the row splits (`tf.int64` or `tf.int32`)."""
        return self._row_splits_dtype

    @property
    def flat_values_spec(self) -> TensorSpec | None:
        """The spec of the flat values where one was given, else None."""
        return self._flat_values_spec

    @property
    def value_type(self) -> type:
        """`tf.RaggedTensor`, or `tf.Tensor` for a spec of ragged rank 0."""
        return _ragged_type() if self._ragged_rank > 0 else Tensor

    @classmethod
    def from_value(cls, value: Any) -> "RaggedTensorSpec":
        """The spec of a RaggedTensor `value`: its shape, dtype, ragged rank and row-splits dtype."""
        return cls(
            shape=value.shape,
            dtype=value.dtype,
            ragged_rank=value.ragged_rank,
            row_splits_dtype=value.row_splits.dtype,
        )

    # -- comparison ---------------------------------------------------------------------------------
    def _serialize(self) -> tuple:
        fields: tuple = (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype)
        return fields if self._flat_values_spec is None else fields + (self._flat_values_spec,)

    def __repr__(self) -> str:
        return f"RaggedTensorSpec{self._serialize()!r}"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RaggedTensorSpec)
            and type(other) is type(self)
            and self._serialize() == other._serialize()
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._serialize()))

    def __reduce__(self) -> tuple:
        return (
            RaggedTensorSpec,
            (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype, self._flat_values_spec),
        )

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        """Whether a value (or spec) is of this type: shapes compatible, the rest equal.

        A spec of ragged rank 0 is also compatible with a dense tensor (or `TensorSpec`) of its shape and dtype.
        """
        if (
            self._ragged_rank == 0
            and self._flat_values_spec is None
            and isinstance(spec_or_value, (Tensor, TensorSpec))
        ):
            return self._dtype == spec_or_value.dtype and self._shape.is_compatible_with(spec_or_value.shape)
        other = _spec_or_none(spec_or_value)
        if not isinstance(other, RaggedTensorSpec):
            return False
        mine, theirs = self._serialize(), other._serialize()
        if len(mine) != len(theirs) or not self._shape.is_compatible_with(other._shape):
            return False
        if len(mine) == 5 and not self._flat_values_spec.is_compatible_with(other._flat_values_spec):  # type: ignore[union-attr]
            return False
        return mine[1:4] == theirs[1:4]

    def most_specific_compatible_type(self, other: Any) -> "RaggedTensorSpec":
        """The most specific spec compatible with both: dimensions that differ become `None`.

        Raises:
          ValueError: if `other` is not a RaggedTensorSpec of the same dtype, ragged rank and row-splits dtype.
        """
        merged = self._merged(other)
        if merged is None:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return merged

    def most_specific_common_supertype(self, others: Sequence[Any]) -> Optional["RaggedTensorSpec"]:
        """The most specific spec that is a supertype of this one and every one of `others`, or None."""
        result: RaggedTensorSpec | None = self
        for other in others:
            result = None if result is None else result._merged(other)
        return result

    def is_subtype_of(self, other: Any) -> bool:
        """Whether every value of this spec is a value of `other` (its shape as general or more)."""
        if not isinstance(other, RaggedTensorSpec) or self._serialize()[1:] != other._serialize()[1:]:
            return False
        if other._shape.rank is None:
            return True
        if self._shape.rank != other._shape.rank:
            return False
        return all(b is None or a == b for a, b in zip(self._shape.as_list(), other._shape.as_list()))

    def _merged(self, other: Any) -> "RaggedTensorSpec | None":
        if type(other) is not type(self) or self._serialize()[1:] != other._serialize()[1:]:
            return None
        shape = self._shape.most_specific_compatible_shape(other._shape)
        return RaggedTensorSpec(shape, self._dtype, self._ragged_rank, self._row_splits_dtype, self._flat_values_spec)

    # -- tf.data's batching -------------------------------------------------------------------------
    def _batch(self, batch_size: int | None) -> "RaggedTensorSpec":
        """The spec of `batch_size` of these values batched (one more ragged dimension, outermost)."""
        shape = TensorShape([batch_size]).concatenate(self._shape)
        return RaggedTensorSpec(shape, self._dtype, self._ragged_rank + 1, self._row_splits_dtype)

    def _unbatch(self) -> "RaggedTensorSpec":
        """The spec of one row of these values (one ragged dimension fewer; may go below 0, as TF's)."""
        shape = self._shape[1:] if self._shape.rank is not None else self._shape
        spec = RaggedTensorSpec.__new__(RaggedTensorSpec)
        spec._shape, spec._dtype, spec._ragged_rank = shape, self._dtype, self._ragged_rank - 1
        spec._row_splits_dtype, spec._flat_values_spec = self._row_splits_dtype, None
        return spec

    # -- tracing ------------------------------------------------------------------------------------
    def __tf_tracing_type__(self, context: Any) -> "RaggedTensorSpec":
        return self

    def placeholder_value(self, placeholder_context: Any = None) -> Any:
        """The value a function traced for this spec sees: a RaggedTensor of this type (zeros; every unknown
        dimension 1, so each ragged row holds one value), or a Tensor for ragged rank 0."""
        return stand_in(self)


def stand_in(spec: RaggedTensorSpec, size: int = 1) -> Any:
    """A value of `spec`: zeros (empty strings), each unknown dimension (and each ragged row's length) `size`."""
    if spec.shape.rank is None:
        dims = [size] * (spec.ragged_rank + 1)
    else:
        dims = [size if d is None else d for d in spec.shape.as_list()]
    if spec.ragged_rank <= 0:
        if spec.dtype == dtypes.string:
            from tapeshim._src.strings_tensor import host_tensor  # (strings live on the host)

            return host_tensor(np.full(dims, b"", dtype=object), dtypes.string)
        return constant(np.zeros(dims, spec.dtype.as_numpy_dtype), spec.dtype)
    rows = dims[0]
    counts = [rows]
    for length in dims[1 : spec.ragged_rank + 1]:
        counts.append(counts[-1] * length)
    inner = dims[spec.ragged_rank + 1 :]
    if spec.dtype == dtypes.string:
        from tapeshim._src.strings_tensor import host_tensor  # (strings live on the host)

        flat: Any = host_tensor(np.full([counts[-1], *inner], b"", dtype=object), dtypes.string)
    else:
        flat = constant(np.zeros([counts[-1], *inner], spec.dtype.as_numpy_dtype), spec.dtype)
    ragged = _ragged_type()
    splits_dtype = spec.row_splits_dtype.as_numpy_dtype
    result = flat
    known = [None] * (spec.ragged_rank + 1) if spec.shape.rank is None else spec.shape.as_list()
    for level in range(spec.ragged_rank, 0, -1):
        length = dims[level]
        splits: np.ndarray = (np.arange(counts[level - 1] + 1) * length).astype(splits_dtype)
        result = ragged(result, constant(splits), known[level])
    return result


def _spec_or_none(value: Any) -> Any:
    """The spec of a value (a spec itself unchanged), or None where it has none."""
    if isinstance(value, (RaggedTensorSpec, TensorSpec)):
        return value
    try:
        return type_spec_from_value(value)
    except (TypeError, ValueError, NotImplementedError):
        return None


def type_spec_from_value(value: Any) -> Any:
    """The type spec of `value`, as `tf.type_spec_from_value`.

    Args:
      value: a Tensor, a RaggedTensor, or a value `tf.convert_to_tensor` converts (a NumPy array, a Python
        number, string or nested list).

    Returns:
      A `tf.RaggedTensorSpec` for a RaggedTensor, else the `tf.TensorSpec` of the value as a tensor.

    Raises:
      TypeError: for a value that is not a tensor and does not convert to one.
    """
    if isinstance(value, _ragged_type()):
        return RaggedTensorSpec.from_value(value)
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    from tapeshim._src.sparse import SparseTensor  # (no SparseTensorSpec in tapeshim)

    if isinstance(value, SparseTensor):
        raise NotImplementedError("tapeshim has no tf.SparseTensorSpec: type_spec_from_value of a SparseTensor")
    try:
        tensor = convert_to_tensor(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}.") from exc
    return TensorSpec(tensor.shape, tensor.dtype)


class RaggedValueType(TraceType):
    """The trace type of a RaggedTensor argument: its values and row partition.

    Two RaggedTensors share a trace when they are equal in every value, split and dtype: the trace sees the
    RaggedTensor itself (tapeshim's ragged ops compute the partition on the host), so its values are
    constants of the trace.
    """

    __slots__ = ("_value", "_key", "_hash")

    def __init__(self, value: Any) -> None:
        self._value = value
        self._key = _content_key(value)
        self._hash = hash(self._key)

    @property
    def spec(self) -> RaggedTensorSpec:
        """The RaggedTensorSpec of the value (TF's trace type of a RaggedTensor)."""
        return RaggedTensorSpec.from_value(self._value)

    def is_subtype_of(self, other: Any) -> bool:
        return self == other

    def most_specific_common_supertype(self, others: Sequence[Any]) -> Optional["RaggedValueType"]:
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context: Any = None) -> Any:
        return self._value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RaggedValueType) and self._hash == other._hash and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"{self.spec!r} with values {self._value.to_list()!r}"


def _content_key(value: Any) -> tuple:
    """A hashable summary of a RaggedTensor's every value, split, uniform row length and dtype."""
    flat = value.flat_values
    host = np.asarray(flat._value) if flat.dtype == dtypes.string else np.asarray(flat.numpy())
    data: Any = tuple(host.ravel().tolist()) if host.dtype == object else host.tobytes()
    levels = []
    node: Any = value
    while hasattr(node, "nested_row_splits"):  # each RaggedTensor level, outermost first
        levels.append((node._splits.tobytes(), node.row_splits.dtype.name, node._uniform))
        node = node.values
    return (flat.dtype.name, tuple(flat.shape), data, tuple(levels))
