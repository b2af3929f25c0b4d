"""More of `tf.debugging`'s assertions: comparisons, signs, finiteness, dtypes and static ranks.

As the assertions in `debugging_ops.py`, value checks raise TF's `InvalidArgumentError`
eagerly and are skipped inside `tapeshim.function` (where TF checks when the graph
runs); the dtype and static shape checks raise TF's `TypeError` / `ValueError` always.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.ops import math_ops, table
from tapeshim._src.ops.debugging_ops import _assert, _values, check_numerics
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_VALUE_NOTE = "value checks are skipped inside tapeshim.function"


def _compare(x: Any, y: Any, op: Callable[[Any, Any], Tensor], what: str, message: str | None) -> None:
    result = op(x, y)  # TF's shape and dtype errors come from the comparison op
    ok = _values(result)
    if ok is None:
        return
    xv, yv = _values(x), _values(y)
    _assert(
        bool(np.all(ok)),
        message,
        f"Condition x {what} y did not hold.\nFirst {np.size(np.asarray(xv))} elements of x:\n"
        f"{xv}\nFirst {np.size(np.asarray(yv))} elements of y:\n{yv}",
    )


@table.export("debugging.assert_greater_equal", gradient="-", dtypes=table.REAL, note=_VALUE_NOTE)
def assert_greater_equal(
    x: TensorLike, y: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless x >= y element-wise."""
    _compare(x, y, math_ops.greater_equal, ">=", message)


@table.export("debugging.assert_less_equal", gradient="-", dtypes=table.REAL, note=_VALUE_NOTE)
def assert_less_equal(
    x: TensorLike, y: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless x <= y element-wise."""
    _compare(x, y, math_ops.less_equal, "<=", message)


@table.export("debugging.assert_none_equal", gradient="-", dtypes=table.ANY, note=_VALUE_NOTE)
def assert_none_equal(
    x: TensorLike, y: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless x != y element-wise."""
    _compare(x, y, math_ops.not_equal, "!=", message)


def _sign(x: Any, test: Callable[[np.ndarray], np.ndarray], what: str, message: str | None) -> None:
    values = _values(x)
    if values is None:
        return
    tensor = convert_to_tensor(x)
    shown = [str(v) for v in np.asarray(values).reshape(-1).tolist()]
    _assert(
        bool(np.all(test(values))),
        message,
        f"Condition x {what} 0 did not hold element-wise:\nx (shape={tuple(tensor._shape)} dtype="
        f"{tensor._dtype.name}) = \n{shown}",
    )


@table.export("debugging.assert_negative", gradient="-", dtypes=table.REAL, note=_VALUE_NOTE)
def assert_negative(x: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None) -> None:
    """Raises InvalidArgumentError unless every x < 0."""
    _sign(x, lambda v: v < 0, "<", message)


@table.export("debugging.assert_non_positive", gradient="-", dtypes=table.REAL, note=_VALUE_NOTE)
def assert_non_positive(
    x: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless every x <= 0."""
    _sign(x, lambda v: v <= 0, "<=", message)


@table.export("debugging.assert_all_finite", gradient="jax", dtypes=table.REAL_FLOAT, note=_VALUE_NOTE)
def assert_all_finite(x: TensorLike, message: str, name: str | None = None) -> Tensor:
    """Returns `x`, raising InvalidArgumentError if it holds NaN or Inf (as `check_numerics`)."""
    return check_numerics(x, message)


@table.export("debugging.assert_integer", gradient="-", dtypes=table.ANY)
def assert_integer(x: TensorLike, message: str | None = None, name: str | None = None) -> None:
    """Raises TypeError unless `x`'s dtype is an integer type."""
    tensor = convert_to_tensor(x)
    if not tensor._dtype.is_integer:
        raise TypeError(
            f'{message + " " if message else ""}Expected "x" to be integer type.  Found: tensor of '
            f"dtype <dtype: '{tensor._dtype.name}'>"
        )


@table.export("debugging.assert_type", gradient="-", dtypes=table.ANY)
def assert_type(tensor: TensorLike, tf_type: Any, message: str | None = None, name: str | None = None) -> None:
    """Raises TypeError unless `tensor`'s dtype is `tf_type`."""
    t = convert_to_tensor(tensor)
    want = dtypes.as_dtype(tf_type)
    if t._dtype != want:
        raise TypeError(
            f"{message + ' ' if message else ''}tensor must be of type tf.{want.name}; got tf.{t._dtype.name}"
        )


@table.export("debugging.assert_scalar", gradient="-", dtypes=table.ANY)
def assert_scalar(tensor: TensorLike, message: str | None = None, name: str | None = None) -> None:
    """Raises ValueError unless `tensor` is a scalar (static rank 0)."""
    t = convert_to_tensor(tensor)
    if t._shape:
        raise ValueError(f"{message + ' ' if message else ''}Expected scalar shape, saw shape: {tuple(t._shape)}.")


@table.export("debugging.assert_rank_at_least", gradient="-", dtypes=table.ANY)
def assert_rank_at_least(x: TensorLike, rank: int, message: str | None = None, name: str | None = None) -> None:
    """Raises ValueError unless `x`'s static rank is at least `rank`."""
    t = convert_to_tensor(x)
    if len(t._shape) < int(rank):
        raise ValueError(
            f"{message or ''} Tensor  must have rank at least {int(rank)}.  Received rank "
            f"{len(t._shape)}, shape {tuple(t._shape)}"
        )


@table.export("debugging.assert_rank_in", gradient="-", dtypes=table.ANY)
def assert_rank_in(x: TensorLike, ranks: Any, message: str | None = None, name: str | None = None) -> None:
    """Raises ValueError unless `x`'s static rank is one of `ranks`."""
    t = convert_to_tensor(x)
    allowed = tuple(int(r) for r in ranks)
    if len(t._shape) not in allowed:
        raise ValueError(
            f"{message or ''} Tensor  must have rank in {allowed}.  Received rank {len(t._shape)}, "
            f"shape {tuple(t._shape)}"
        )


@table.export("debugging.assert_same_float_dtype", gradient="-", dtypes=table.REAL_FLOAT)
def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> dtypes.DType:
    """The common floating dtype of `tensors` (and `dtype`); float32 when there is none.

    Raises:
      ValueError: the dtypes differ, or are not floating.
    """
    expected = None if dtype is None else dtypes.as_dtype(dtype)
    first = None
    for value in tensors or []:
        t = convert_to_tensor(value)
        if expected is None:
            expected, first = t._dtype, t
        elif t._dtype != expected:
            raise ValueError(
                f"{str(t)}, type=<dtype: '{t._dtype.name}'>, must be of the same type (<dtype: "
                f"'{expected.name}'>){' as ' + str(first) if first is not None else ''}."
            )
    if expected is None:
        return dtypes.float32
    if not expected.is_floating:
        raise ValueError(f"Expected floating point type, got <dtype: '{expected.name}'>.")
    return expected


@table.export("debugging.assert_proper_iterable", gradient="-", dtypes=table.ANY)
def assert_proper_iterable(values: TensorLike) -> None:
    """Raises TypeError unless `values` is an iterable other than a tensor, array, string or bytes."""
    unwanted = (Tensor, np.ndarray, str, bytes)
    if isinstance(values, unwanted) or hasattr(values, "_read_for_op") or not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
