"""Elementwise ops on `RaggedTensor`s, as TF's ragged dispatch: the op runs on the flat values.

An elementwise op given a RaggedTensor computes on its `flat_values` and the result keeps the
row partition. Its other operands are aligned to those flat values first (`flat_operand`), with
TF's broadcasting rules for ragged tensors:

* a scalar (or a dense tensor of at most the flat values' inner rank) broadcasts as usual;
* a dense tensor reaching into the ragged dimensions broadcasts per row (`rt + [[1], [2], [3]]`):
  each of its dimensions is 1 or the size of that dimension, which for a ragged dimension must be
  the length of every row, else TF's `InvalidArgumentError`;
* another RaggedTensor must have the same row splits (`InvalidArgumentError` otherwise);
* a dense tensor of a higher rank repeats the RaggedTensor over its leading dimensions (`lifted`).

The op functions (`math_ops._unary`, `_binary`, `cast`, `round`, `where`) call `dispatch` only where
converting an operand to a Tensor failed, so a plain tensor pays nothing.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import array_ops
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.strings_tensor import host_tensor
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor


def _incompatible(detail: str) -> errors.InvalidArgumentError:
    return errors.invalid_argument(f"Condition x == y did not hold. {detail}", None)


def _same_partition(first: RaggedTensor, other: RaggedTensor) -> None:
    a, b = first.nested_row_splits, other.nested_row_splits
    if len(a) != len(b) or any(not np.array_equal(x.numpy(), y.numpy()) for x, y in zip(a, b)):
        raise _incompatible("Inputs must have identical ragged splits")


def _level_lengths(rt: RaggedTensor) -> list[np.ndarray]:
    """The row lengths of each ragged dimension, outermost first."""
    found, node = [], rt
    while isinstance(node, RaggedTensor):
        found.append(np.diff(node._splits))
        node = node._values
    return found


def flat_operand(rt: RaggedTensor, value: Any) -> Any:
    """`value` aligned with `rt.flat_values`, broadcast per row as TF broadcasts a dense tensor to `rt`.

    Args:
      rt: the RaggedTensor whose row partition the result takes.
      value: a RaggedTensor with `rt`'s row splits, or a dense tensor or Python value.

    Returns:
      The flat values of a RaggedTensor; a Python bool or string unchanged (the op converts
      it); a Python number converted with `rt`'s dtype as a hint, as TF's ragged dispatch
      converts it (`tf.add(1, float_ragged)` adds floats, `int_ragged * 1.5` is the kernel's
      dtype mismatch); otherwise a tensor that broadcasts with `rt.flat_values`.

    Raises:
      InvalidArgumentError: for other row splits, or a dimension that is neither 1 nor
        (every row's) size.
      ValueError: for a dense tensor of a higher rank than `rt` (`lifted` first: `dispatch` does).
    """
    if isinstance(value, RaggedTensor):
        _same_partition(rt, value)
        return value.flat_values
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    dense = convert_to_tensor(value, dtype_hint=rt.dtype)  # (a number too: `tf.add(1, float_ragged)` is float)
    if isinstance(value, (int, float, complex)):
        return dense
    flat = rt.flat_values
    inner = len(flat.shape) - 1
    if dense.ndim <= inner:
        return dense
    outer_rank = rt.ragged_rank + 1
    rank = outer_rank + inner
    if dense.ndim > rank:
        raise ValueError(f"A dense tensor of rank {dense.ndim} does not broadcast to a ragged tensor of rank {rank}")
    shape = [1] * (rank - dense.ndim) + [int(d) for d in dense._shape]
    outer, inner_shape = shape[:outer_rank], shape[outer_rank:]
    if outer[0] not in (1, rt.nrows_int()):
        raise _incompatible(f"Dimension 0 of size {outer[0]} does not broadcast to {rt.nrows_int()} rows")
    for level, lengths in enumerate(_level_lengths(rt), start=1):
        if outer[level] != 1 and np.any(lengths != outer[level]):
            raise _incompatible(f"Dimension {level} of size {outer[level]} does not match the row lengths")
    if all(d == 1 for d in outer):
        return _reshape(dense, inner_shape)
    squeezed = _reshape(dense, [int(np.prod(outer)), *inner_shape])
    coords = rt._dense_coordinates() * (np.asarray(outer) != 1)
    positions = np.ravel_multi_index(tuple(coords.T), outer).astype(np.int64) if coords.size else np.zeros(0, np.int64)
    if dense.dtype is dtypes.string:
        return host_tensor(np.asarray(squeezed._value)[positions], dtypes.string)
    return array_ops.gather(squeezed, constant(positions))


def _dense_rank(value: Any) -> int:
    """The rank of a dense operand (0 for a Python number, None, a string or a RaggedTensor)."""
    if value is None or isinstance(value, (RaggedTensor, bool, int, float, complex, str, bytes)):
        return 0
    try:
        return convert_to_tensor(value).ndim
    except (TypeError, ValueError):  # (not a tensor: the op reports it)
        return 0


def lifted(rt: RaggedTensor, operands: Any) -> RaggedTensor:
    """`rt` broadcast to the leading dimensions of the dense operand of highest rank among `operands`, where
    that rank passes `rt`'s, as TF broadcasts `rt + tf.ones((3, 2, 1))`: `rt` repeated over those dimensions,
    which become uniform outer dimensions (`[3, nrows, (rows), ...]`); else `rt` itself."""
    ranks = [_dense_rank(v) for v in operands]
    rank = max(ranks, default=0)
    if rank <= rt.ndim:
        return rt
    dense = operands[ranks.index(rank)]
    leading = [int(d) for d in convert_to_tensor(dense)._shape[: rank - rt.ndim]]
    copies = int(np.prod(leading))
    out: Any = array_ops.concat([rt] * copies, axis=0) if copies != 1 else rt
    for size in [rt.nrows_int(), *leading[:0:-1]]:
        out = RaggedTensor.from_uniform_row_length(out, size)
    return out


def _reshape(tensor: Tensor, shape: list) -> Tensor:
    if tensor.dtype is dtypes.string:
        return host_tensor(np.asarray(tensor._value).reshape(shape), dtypes.string)
    return array_ops.reshape(tensor, shape)


def dispatch(fn: Callable[..., Any], args: tuple) -> Any:
    """`fn(*args)` of an elementwise op with a RaggedTensor among its operands `args`, on the flat values.

    Args:
      fn: the elementwise op on dense tensors.
      args: its tensor operands.

    Returns:
      A RaggedTensor with the first ragged operand's row partition.

    Raises:
      ValueError: if no operand is a RaggedTensor.
      InvalidArgumentError: if the operands do not broadcast (see `flat_operand`).
    """
    anchor = next((v for v in args if isinstance(v, RaggedTensor)), None)
    if anchor is None:
        raise ValueError(f"{getattr(fn, '__name__', fn)}: no RaggedTensor operand to dispatch on")
    lifted_anchor = lifted(anchor, args)
    if lifted_anchor is not anchor:
        args = tuple(lifted(v, args) if isinstance(v, RaggedTensor) else v for v in args)
    return lifted_anchor.with_flat_values(fn(*[flat_operand(lifted_anchor, v) for v in args]))


def has_ragged(args: tuple) -> bool:
    """Whether any of `args` is a RaggedTensor."""
    return any(isinstance(v, RaggedTensor) for v in args)


def true_coordinates(condition: RaggedTensor) -> Tensor:
    """The int64 coordinates of the True values of a ragged `condition`, as TF's one-argument `tf.where`."""
    flat = np.asarray(condition.flat_values.numpy())
    coords = condition._dense_coordinates()
    if flat.ndim > 1:
        inner = np.argwhere(flat)
        return constant(np.concatenate([coords[inner[:, 0]], inner[:, 1:]], axis=1).astype(np.int64))
    return constant(coords[flat.astype(bool)].astype(np.int64))
