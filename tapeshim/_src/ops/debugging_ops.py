"""`tf.debugging`: numeric checks and assertions.

They check eagerly, raising TF's `InvalidArgumentError`. Inside
`tapeshim.function` the value checks are skipped (values are not known while
tracing) and the tensor passes through; static shape checks still run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src import check_numerics as numerics_switch
from tapeshim._src import errors
from tapeshim._src.ops import table
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


def _values(x: Any) -> np.ndarray | None:
    tensor = convert_to_tensor(x)
    trace = _thread_state.trace
    if trace is not None and trace.is_symbolic(tensor):
        return None
    return np.asarray(tensor.numpy())


@table.export(
    "debugging.check_numerics", gradient="jax", dtypes=table.REAL_FLOAT, note="not checked inside tapeshim.function"
)
@ragged_dispatch()
def check_numerics(tensor: TensorLike, message: str, name: str | None = None) -> Tensor:
    """Returns `tensor`, raising InvalidArgumentError if it holds NaN or Inf."""
    t = convert_to_tensor(tensor)
    values = _values(t)
    if values is not None and not np.all(np.isfinite(values)):
        kind = "NaN" if np.any(np.isnan(values)) else "Inf"
        raise errors.invalid_argument(f"{message} : Tensor had {kind} values", "CheckNumerics")
    return t


def _assert(ok: Any, message: str | None, default: str) -> None:
    if ok is not None and not ok:
        raise errors.invalid_argument(f"{message + chr(10) if message else ''}{default}", "AssertOp")


def _compare(x: Any, y: Any, test: Any, what: str, message: str | None) -> None:
    xv, yv = _values(x), _values(y)
    ok = None if xv is None or yv is None else bool(np.all(test(xv, yv)))
    _assert(ok, message, f"Condition x {what} y did not hold element-wise:\nx = {xv}\ny = {yv}")


@table.export(
    "debugging.assert_equal",
    "assert_equal",
    gradient="-",
    dtypes=table.ANY,
    note="value checks are skipped inside tapeshim.function",
)
def assert_equal(
    x: TensorLike, y: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless x == y element-wise."""
    _compare(x, y, np.equal, "==", message)


@table.export(
    "debugging.assert_less",
    "assert_less",
    gradient="-",
    dtypes=table.REAL,
    note="value checks are skipped inside tapeshim.function",
)
def assert_less(
    x: TensorLike, y: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless x < y element-wise."""
    _compare(x, y, np.less, "<", message)


@table.export(
    "debugging.assert_greater",
    "assert_greater",
    gradient="-",
    dtypes=table.REAL,
    note="value checks are skipped inside tapeshim.function",
)
def assert_greater(
    x: TensorLike, y: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless x > y element-wise."""
    _compare(x, y, np.greater, ">", message)


@table.export(
    "debugging.assert_near", gradient="-", dtypes=table.FLOAT, note="value checks are skipped inside tapeshim.function"
)
def assert_near(
    x: TensorLike,
    y: TensorLike,
    rtol: Any = None,
    atol: Any = None,
    message: str | None = None,
    summarize: Any = None,
    name: str | None = None,
) -> None:
    """Raises InvalidArgumentError unless |x - y| <= atol + rtol * |y| element-wise."""
    xv, yv = _values(x), _values(y)
    if xv is None or yv is None:
        return
    eps = np.finfo(xv.dtype).eps if xv.dtype.kind in "fc" else 0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    _assert(
        bool(np.all(np.abs(xv - yv) <= atol + rtol * np.abs(yv))),
        message,
        f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
    )


@table.export("debugging.assert_non_negative", gradient="-", dtypes=table.REAL)
def assert_non_negative(
    x: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None
) -> None:
    """Raises InvalidArgumentError unless every x >= 0."""
    values = _values(x)
    _assert(None if values is None else bool(np.all(values >= 0)), message, "Condition x >= 0 did not hold.")


@table.export("debugging.assert_positive", gradient="-", dtypes=table.REAL)
def assert_positive(x: TensorLike, message: str | None = None, summarize: Any = None, name: str | None = None) -> None:
    """Raises InvalidArgumentError unless every x > 0."""
    values = _values(x)
    _assert(None if values is None else bool(np.all(values > 0)), message, "Condition x > 0 did not hold.")


@table.export("debugging.assert_rank", "assert_rank", gradient="-", dtypes=table.ANY)
def assert_rank(x: TensorLike, rank: int, message: str | None = None, name: str | None = None) -> None:
    """Raises ValueError unless `x` has the static rank `rank`."""
    actual = len(convert_to_tensor(x)._shape)
    if actual != int(rank):
        raise ValueError(
            f"{message + ' ' if message else ''}Tensor must have rank {int(rank)}. Received rank "
            f"{actual}, shape {list(convert_to_tensor(x)._shape)}"
        )


@table.export("debugging.assert_shapes", gradient="-", dtypes=table.ANY)
def assert_shapes(
    shapes: Any,
    data: TensorLike | None = None,
    summarize: Any = None,
    message: str | None = None,
    name: str | None = None,
) -> None:
    """Raises ValueError unless each (tensor, symbolic shape) pair agrees, with named dims consistent."""
    sizes: dict[int | str, int] = {}
    for tensor, spec in shapes.items() if isinstance(shapes, dict) else shapes:
        shape = list(convert_to_tensor(tensor)._shape)
        if len(shape) != len(spec):
            raise ValueError(f"{message or ''} Specified by tensor with shape {shape}: wrong rank, expected {spec}")
        for dim, symbol in zip(shape, spec):
            if (
                isinstance(symbol, int)
                and symbol != dim
                or isinstance(symbol, str)
                and sizes.setdefault(symbol, dim) != dim
            ):
                raise ValueError(
                    f"{message or ''} Specified by tensor with shape {shape}: dimension {symbol!r} "
                    f"must be {sizes.get(symbol, symbol)}, got {dim}"
                )


_CHECK_NUMERICS_NOTE = "eager ops, also under a tape; ops inside tapeshim.function are not checked"
table.export("debugging.enable_check_numerics", gradient="-", dtypes=table.ANY, note=_CHECK_NUMERICS_NOTE)(
    numerics_switch.enable_check_numerics
)
table.export("debugging.disable_check_numerics", gradient="-", dtypes=table.ANY, note=_CHECK_NUMERICS_NOTE)(
    numerics_switch.disable_check_numerics
)
