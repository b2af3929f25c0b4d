"""`tf.sparse.SparseTensor` and the `tf.sparse` ops programs use.

A `SparseTensor` is `indices` (int64 `[N, rank]`), `values` (`[N]`, any
dtype, strings included) and `dense_shape` (int64 `[rank]`), as TF's. The
index bookkeeping (validation, ordering, unions) runs on the host with numpy;
numeric values stay tensors and the value computations (`to_dense`,
`sparse_dense_matmul`, `reduce_sum`, `sparse + dense`) are tapeshim ops, so
gradients flow to `values` and to dense operands as in TF.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import array_ops, manip_ops, math_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.strings_tensor import StringTensor, host_tensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, TensorLike


def _host(tensor: Tensor) -> np.ndarray:
    return np.asarray(tensor._value) if isinstance(tensor, StringTensor) else np.asarray(tensor.numpy())


def _int64(value: Any, name: str) -> Tensor:
    if isinstance(value, Tensor) or hasattr(value, "_read_for_op"):
        tensor = convert_to_tensor(value)
        if tensor.dtype is not dtypes.int64:
            raise ValueError(
                f"{name}: Tensor conversion requested dtype int64 for Tensor with dtype {tensor.dtype.name}: {tensor!r}"
            )
        return tensor
    return convert_to_tensor(value, dtype=dtypes.int64)


class SparseTensor:
    """A sparse tensor: the values at `indices` of a `dense_shape` tensor, as `tf.sparse.SparseTensor`.

    Args:
      indices: int64 `[N, rank]`, the coordinates of the values.
      values: `[N]`, the values.
      dense_shape: int64 `[rank]`, the shape of the dense tensor.

    Raises:
      ValueError: if the three do not fit together (ranks, counts).
      TypeError: for indices that are not integers.
    """

    def __init__(self, indices: TensorLike, values: TensorLike, dense_shape: TensorLike) -> None:
        self._indices = _int64(indices, "indices")
        self._values = convert_to_tensor(values)
        self._dense_shape = _int64(dense_shape, "dense_shape")
        if self._indices.ndim != 2:
            raise ValueError(f"Shape {self._indices.shape} must have rank 2")
        if self._values.ndim != 1:
            raise ValueError(f"Shape {self._values.shape} must have rank 1")
        if self._dense_shape.ndim != 1:
            raise ValueError(f"Shape {self._dense_shape.shape} must have rank 1")
        n, rank = self._indices._shape
        if self._values.shape[0] != n:
            raise ValueError(f"Dimensions {self._values.shape[0]} and {n} are not compatible")
        if self._dense_shape.shape[0] != rank:
            raise ValueError(f"Dimensions {self._dense_shape.shape[0]} and {rank} are not compatible")
        self._index_host = np.asarray(self._indices.numpy(), np.int64).reshape(n, rank)
        self._shape_host = np.asarray(self._dense_shape.numpy(), np.int64)

    @classmethod
    def from_value(cls, sparse_tensor_value: Any) -> "SparseTensor":
        return (
            sparse_tensor_value
            if isinstance(sparse_tensor_value, SparseTensor)
            else cls(sparse_tensor_value.indices, sparse_tensor_value.values, sparse_tensor_value.dense_shape)
        )

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape([int(d) for d in self._shape_host])

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return int(self._shape_host.size)

    def with_values(self, new_values: TensorLike) -> "SparseTensor":
        """The same indices and shape with new values."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self._indices!s}, values={self._values!s}, dense_shape={self._dense_shape!s})"

    __str__ = __repr__

    def __mul__(self, other: TensorLike) -> "SparseTensor":
        """Elementwise product with a dense tensor or scalar (broadcast to the dense shape)."""
        other = convert_to_tensor(other, dtype_hint=self.dtype)
        if other.ndim == 0:
            return self.with_values(self._values * other)
        dense = manip_ops.broadcast_to(other, [int(d) for d in self._shape_host])
        return self.with_values(self._values * manip_ops.gather_nd(dense, self._indices))

    def __truediv__(self, other: TensorLike) -> "SparseTensor":
        """Elementwise division by a dense tensor or scalar (broadcast to the dense shape), as TF's `sp / x`."""
        other = convert_to_tensor(other, dtype_hint=self.dtype)
        if other.ndim == 0:
            return self.with_values(self._values / other)
        dense = manip_ops.broadcast_to(other, [int(d) for d in self._shape_host])
        return self.with_values(self._values / manip_ops.gather_nd(dense, self._indices))


def _check_order(sp: SparseTensor, op: str) -> None:
    """TF's validation of indices for ops that need them in bounds, sorted and unique."""
    idx, shape = sp._index_host, sp._shape_host
    dims = ",".join(str(d) for d in shape)
    for i, row in enumerate(idx):
        text = ",".join(str(v) for v in row)
        if np.any(row < 0) or np.any(row >= shape):
            raise errors.invalid_argument(f"indices[{i}] = [{text}] is out of bounds: need 0 <= index < [{dims}]", op)
        if i:
            prev = tuple(idx[i - 1])
            if tuple(row) == prev:
                raise errors.invalid_argument(f"indices[{i}] = [{text}] is repeated", op)
            if tuple(row) < prev:
                raise errors.invalid_argument(
                    f"indices[{i}] = [{text}] is out of order. Many sparse ops require sorted indices.\n"
                    "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n",
                    op,
                )


def to_dense(
    sp_input: SparseTensor,
    default_value: TensorLike | None = None,
    validate_indices: bool = True,
    name: str | None = None,
) -> Tensor:
    """The dense tensor, unset entries `default_value` (0, or b"" for strings), as `tf.sparse.to_dense`.

    Differentiable in the values. Raises InvalidArgumentError for indices out of
    bounds, and (with `validate_indices`) unsorted or repeated ones.
    """
    sp = _sparse(sp_input, "sp_input")
    if validate_indices:
        _check_order(sp, "SparseToDense")
    else:
        _check_bounds(sp, "SparseToDense")
    shape = [int(d) for d in sp._shape_host]
    if sp.dtype is dtypes.string:
        out = np.empty(shape, dtype=object)
        out[...] = b"" if default_value is None else _host(convert_to_tensor(default_value, dtype=dtypes.string))
        if sp._index_host.size:
            out[tuple(sp._index_host.T)] = _host(sp._values)
        return host_tensor(out, dtypes.string)
    fill = 0 if default_value is None else default_value
    base = array_ops.fill(shape, convert_to_tensor(fill, dtype=sp.dtype))
    if not sp._index_host.shape[0]:
        return base
    return manip_ops.tensor_scatter_nd_update(base, sp._indices, sp._values)


def _check_bounds(sp: SparseTensor, op: str) -> None:
    idx, shape = sp._index_host, sp._shape_host
    bad = np.nonzero(np.any((idx < 0) | (idx >= shape), axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise errors.invalid_argument(
            f"indices[{i}] = [{','.join(str(v) for v in idx[i])}] is out of bounds: need 0 <= index < "
            f"[{','.join(str(d) for d in shape)}]",
            op,
        )


def _sparse(value: Any, name: str) -> SparseTensor:
    if not isinstance(value, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor; `{name}` is a {type(value).__name__}.")
    return value


def from_dense(tensor: TensorLike, name: str | None = None) -> SparseTensor:
    """The non-zero (non-empty for strings) entries of a dense tensor, as `tf.sparse.from_dense`."""
    tensor = convert_to_tensor(tensor)
    host = _host(tensor)
    nonzero = host != (b"" if tensor.dtype is dtypes.string else 0)
    indices = np.argwhere(nonzero).astype(np.int64).reshape(-1, host.ndim)
    shape = np.asarray(host.shape, np.int64)
    if tensor.dtype is dtypes.string:
        values: Tensor = host_tensor(host[nonzero], dtypes.string)
    else:
        values = manip_ops.gather_nd(tensor, constant(indices))
    return SparseTensor(constant(indices), values, constant(shape))


def reorder(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """The same sparse tensor with indices in row-major order, as `tf.sparse.reorder`."""
    sp = _sparse(sp_input, "sp_input")
    if not sp._index_host.shape[0]:
        return sp
    order = np.lexsort(sp._index_host.T[::-1])
    values = (
        host_tensor(_host(sp._values)[order], dtypes.string)
        if sp.dtype is dtypes.string
        else (array_ops.gather(sp._values, constant(order.astype(np.int64))))
    )
    return SparseTensor(constant(sp._index_host[order]), values, sp._dense_shape)


def reduce_sum(
    sp_input: SparseTensor,
    axis: AxisLike = None,
    keepdims: bool | None = None,
    output_is_sparse: bool = False,
    name: str | None = None,
) -> Any:
    """The sum over `axis` (all axes when None), as `tf.sparse.reduce_sum`; dense unless `output_is_sparse`."""
    sp = _sparse(sp_input, "sp_input")
    _check_bounds(sp, "SparseReduceSum")
    dense = to_dense(sp, validate_indices=False) if _is_ordered(sp) else to_dense(reorder(sp))
    result = math_ops.reduce_sum(dense, axis=axis, keepdims=bool(keepdims))
    return present_entries(sp, result, axis, keepdims) if output_is_sparse else result


def present(sp: SparseTensor, axis: AxisLike, keepdims: Any) -> Tensor:
    """Whether each entry of a reduction over `axis` reduces at least one present value of `sp`."""
    ones = constant(np.ones(sp._index_host.shape[0], bool))
    where = to_dense(reorder(SparseTensor(sp.indices, ones, sp.dense_shape)), default_value=False)
    return math_ops.reduce_any(where, axis=axis, keepdims=bool(keepdims))


def present_entries(sp: SparseTensor, result: Tensor, axis: AxisLike, keepdims: Any) -> SparseTensor:
    """A reduction's `result` as TF's `output_is_sparse=True` gives it: an entry for every group holding a
    present value of `sp`, even one that reduces to zero (the sparse guide's explicit zeros)."""
    mask = np.asarray(present(sp, axis, keepdims).numpy())
    indices = np.argwhere(mask).astype(np.int64)
    values = manip_ops.gather_nd(result, constant(indices))
    return SparseTensor(constant(indices), values, constant(np.asarray(mask.shape, np.int64)))


def _is_ordered(sp: SparseTensor) -> bool:
    idx = sp._index_host
    if idx.shape[0] < 2:
        return True
    keys = [tuple(r) for r in idx]
    return all(a < b for a, b in zip(keys, keys[1:]))


def add(
    a: SparseTensor | TensorLike, b: SparseTensor | TensorLike, threshold: TensorLike = 0, name: str | None = None
) -> Any:
    """`a + b` for sparse + sparse (a sparse result, sums below `threshold` in magnitude dropped) or
    sparse + dense (a dense result), as `tf.sparse.add`.
    """
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        if not np.array_equal(a._shape_host, b._shape_host):
            raise errors.invalid_argument(
                f"Operands do not have the same ranks or shapes: lhs shape: [{','.join(map(str, a._shape_host))}] "
                f"rhs shape: [{','.join(map(str, b._shape_host))}]",
                "SparseAdd",
            )
        if a.dtype != b.dtype:
            raise TypeError(
                f"Input 'b_values' of 'SparseAdd' Op has type {b.dtype.name} that does not match type "
                f"{a.dtype.name} of argument 'a_values'."
            )

        keys = [tuple(r) for r in np.concatenate([a._index_host, b._index_host])]
        unique = sorted(set(keys))
        position = {k: i for i, k in enumerate(unique)}
        slots = np.asarray([position[k] for k in keys], np.int64).reshape(-1, 1)
        count = len(unique)
        n_a = a._index_host.shape[0]
        sums = math_ops.add(
            manip_ops.scatter_nd(constant(slots[:n_a]), a._values, [count]),
            manip_ops.scatter_nd(constant(slots[n_a:]), b._values, [count]),
        )
        if isinstance(threshold, (int, float)) and threshold <= 0:  # every sum kept: its value is not needed
            keep = np.ones(count, bool)  # (so a symbolic sum, in a function or a loop, is fine, as in TF)
        else:
            host_sums = np.asarray(sums.numpy())
            keep = np.abs(host_sums) >= np.asarray(threshold) if unique else np.zeros(0, bool)
        indices = np.asarray(unique, np.int64).reshape(-1, a._shape_host.size)[keep]
        values = array_ops.gather(sums, constant(np.nonzero(keep)[0].astype(np.int64)))
        return SparseTensor(constant(indices), values, a._dense_shape)
    if isinstance(a, SparseTensor):
        return math_ops.add(to_dense(reorder(a)), b)
    if isinstance(b, SparseTensor):  # (the dense operand converts to the sparse one's dtype, as TF's kernel)
        dense = to_dense(reorder(b))
        return math_ops.add(convert_to_tensor(a, dtype_hint=dense._dtype), dense)
    raise TypeError("At least one input of tf.sparse.add must be a SparseTensor.")


def sparse_dense_matmul(
    sp_a: Any,
    b: Any,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    name: str | None = None,
) -> Tensor:
    """`sp_a @ b` (or `b @ sp_b` when the second argument is sparse), as `tf.sparse.sparse_dense_matmul`.

    Differentiable in the sparse values and in the dense operand.
    """
    if not isinstance(sp_a, SparseTensor):
        # dense @ sparse = (sparse^T @ dense^T)^T
        flipped = sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_b, adjoint_b=not adjoint_a)
        return array_ops.transpose(flipped)
    b = convert_to_tensor(b, dtype_hint=sp_a.dtype)
    if sp_a.ndim != 2 or b.ndim != 2:
        raise errors.invalid_argument("Tensor 'a_shape' is not a vector of 2 elements", "SparseTensorDenseMatMul")
    rows, cols = sp_a._index_host[:, 0], sp_a._index_host[:, 1]
    m, k = int(sp_a._shape_host[0]), int(sp_a._shape_host[1])
    values = sp_a._values
    if adjoint_a:
        rows, cols, m, k = cols, rows, k, m
        if values.dtype.is_complex:
            values = math_ops.conj(values)
    if adjoint_b:
        b = array_ops.transpose(b)
        if b.dtype.is_complex:
            b = math_ops.conj(b)
    if b.shape[0] != k:
        raise errors.invalid_argument(
            f"Cannot multiply A and B because inner dimension does not match: {k} vs. {b.shape[0]}.  Did you "
            f"forget a transpose?  Dimensions of A: [{m}, {k}).  Dimensions of B: {list(b.shape)}",
            "SparseTensorDenseMatMul",
        )
    n = b.shape[1]
    if not rows.size:
        return array_ops.zeros([m, n], dtype=b.dtype)
    picked = manip_ops.gather_nd(b, constant(cols.astype(np.int64)[:, None]))  # a dense gradient for b, as TF's
    products = picked * array_ops.expand_dims(values, 1)
    return manip_ops.scatter_nd(constant(rows.astype(np.int64)[:, None]), products, [m, n])


def to_indicator(sp_input: SparseTensor, vocab_size: TensorLike, name: str | None = None) -> Tensor:
    """A dense bool tensor `[..., vocab_size]`, True at each row's ids, as `tf.sparse.to_indicator`.

    Raises:
      TypeError: for values that are not int32/int64 ids.
    """
    sp = _sparse(sp_input, "sp_input")
    if sp.dtype is dtypes.string:
        raise errors.UnimplementedError(None, None, "Cast string to int64 is not supported [Op:Cast]")
    vocab = int(convert_to_tensor(vocab_size).numpy())
    out = np.zeros([*[int(d) for d in sp._shape_host[:-1]], vocab], bool)
    ids = _host(sp._values).astype(np.int64)
    for row, value in zip(sp._index_host[:, :-1], ids):
        if not 0 <= value < vocab:
            raise errors.invalid_argument(f"Index out of range: {value} is not in [0, {vocab})", "SparseToDense")
        index = (*row, value)
        out[index] = True
    return constant(out)
