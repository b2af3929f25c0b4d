"""`ragged_dispatch`: the one decorator through which an op function answers for RaggedTensors, as TF's dispatch.

TF dispatches its elementwise ops (`tf.nn.relu`, `tf.pow`, `tf.ones_like`, ...) and a list of
structural ops (`tf.concat`, `tf.reduce_sum`, `tf.gather`, ...) to ragged implementations when an
operand is a `tf.RaggedTensor`. tapeshim's op functions do the same through this decorator:

* `@ragged_dispatch("x")` (or several operand names) makes an elementwise op: called with a
  RaggedTensor among those operands, it runs on the flat values (the other operands are aligned to
  them by `ragged_dispatch.flat_operand`, with TF's broadcasting and errors) and the result keeps the
  first ragged operand's row partition. A parameter named in `lists` holds a list of operands
  (`tf.add_n`'s `inputs`): its ragged elements are aligned, its other elements passed on as they are
  (TF's `AddN` then compares their shapes); any other operand holding a Python list is one value
  (`tf.math.divide_no_nan(rt, [[2.], [1.]])` divides each row by its number).
* `@ragged_dispatch("input", impl="tapeshim._src.ragged_array:tile")` hands the call, with the same
  arguments, to a ragged implementation (imported on first use: the ragged modules import the ops).

The wrapped function runs first and unchanged; only where it raised (converting a RaggedTensor to a
Tensor raises `ValueError`) are its operands looked at, so a plain tensor pays nothing but the call
of the wrapper. Without a RaggedTensor among the operands, the original error propagates.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# The errors an op function raises on an operand it cannot convert (a RaggedTensor).
_CONVERSION_ERRORS = (ValueError, TypeError, AttributeError)
_NOT_RAGGED = object()


def ragged_dispatch(*operands: str, impl: str | None = None, lists: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Makes an op function answer for RaggedTensors among its `operands`.

    Args:
      *operands: the names of the parameters that may hold a RaggedTensor (the first one by default, where
        `lists` names none).
      impl: `"module:function"` of a ragged implementation taking the op's arguments; None runs the op
        elementwise on the flat values.
      lists: the names of the parameters holding a list of operands, any of which may be a RaggedTensor.

    Returns:
      A decorator returning the wrapped function (same name, module, docstring and signature).
    """

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        names = operands + lists if operands or lists else (next(iter(signature.parameters)),)
        resolved: list[Callable[..., Any]] = []

        @functools.wraps(fn)
        def dispatched(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except _CONVERSION_ERRORS:
                result = _on_ragged(fn, signature, names, lists, impl, resolved, args, kwargs)
                if result is _NOT_RAGGED:
                    raise
                return result

        dispatched._ragged_operands = names  # type: ignore[attr-defined]
        return dispatched  # type: ignore[return-value]

    return decorate


def ragged_shape_dispatch(parameter: str, impl: str) -> Callable[[F], F]:
    """Makes an op function whose `parameter` may be a `tf.experimental.DynamicRaggedShape` (`tf.reshape`,
    `tf.broadcast_to`, `tf.zeros`, `tf.ones`, `tf.fill`) hand such a call to `impl` (`"module:function"`, taking
    the op's arguments), as TF's dispatch: the wrapped function runs first, and only where it raised is the
    argument looked at."""

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        resolved: list[Callable[..., Any]] = []

        @functools.wraps(fn)
        def dispatched(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:
                try:
                    value = signature.bind(*args, **kwargs).arguments.get(parameter)
                except TypeError:
                    value = None
                if not _is_ragged_shape(value):
                    raise
            if not resolved:
                module, _, attribute = impl.partition(":")
                resolved.append(getattr(importlib.import_module(module), attribute))
            return resolved[0](*args, **kwargs)

        if hasattr(fn, "_ragged_operands"):
            dispatched._ragged_operands = fn._ragged_operands  # type: ignore[attr-defined]
        return dispatched  # type: ignore[return-value]

    return decorate


def _is_ragged_shape(value: Any) -> bool:
    from tapeshim._src.ragged_shape import DynamicRaggedShape  # import cycle: ragged_shape imports the ops

    return isinstance(value, DynamicRaggedShape)


def on_ragged(fn: Callable[..., Any], args: tuple, failed: Exception) -> Any:
    """`fn(*args)` on the flat values of a RaggedTensor among `args`, for an op function that caught the
    conversion error `failed` itself (`math_ops._unary`, `_binary`, `cast`, `round`, `where`); without a
    RaggedTensor, `failed` is raised."""
    from tapeshim._src import ragged_dispatch  # import cycle: ragged_dispatch imports the ops

    if not ragged_dispatch.has_ragged(args):
        raise failed
    return ragged_dispatch.dispatch(fn, args)


def _ragged_type() -> type:
    from tapeshim._src.ragged import RaggedTensor  # import cycle: ragged imports the ops

    return RaggedTensor


def _on_ragged(
    fn: Callable[..., Any],
    signature: inspect.Signature,
    names: tuple[str, ...],
    lists: tuple[str, ...],
    impl: str | None,
    resolved: list,
    args: tuple,
    kwargs: dict,
) -> Any:
    """The ragged answer of `fn(*args, **kwargs)`, or `_NOT_RAGGED` when no operand is ragged (`names`: the
    operands' parameters, `lists` among them those holding a list of operands)."""
    ragged = _ragged_type()
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return _NOT_RAGGED
    found = []
    for name in names:
        value = bound.arguments.get(name)
        items = value if name in lists and isinstance(value, (list, tuple)) else (value,)
        found += [v for v in items if isinstance(v, ragged)]
    if not found:
        return _NOT_RAGGED
    if impl is not None:
        if not resolved:
            module, _, attribute = impl.partition(":")
            resolved.append(getattr(importlib.import_module(module), attribute))
        return resolved[0](*args, **kwargs)
    return _elementwise(fn, bound, names, lists, found[0])


def _elementwise(
    fn: Callable[..., Any], bound: inspect.BoundArguments, names: tuple[str, ...], lists: tuple[str, ...], anchor: Any
) -> Any:
    """`fn` on the flat values of `anchor`, its other operands aligned to them (the ragged elements of a list
    of operands only: TF's list ops take their other elements as they are)."""
    from tapeshim._src import errors, ragged_dispatch  # import cycle: ragged_dispatch imports the ops

    ragged: Any = _ragged_type()
    single = [bound.arguments[name] for name in names if name in bound.arguments and name not in lists]
    lifted = ragged_dispatch.lifted(anchor, single)  # (a dense operand of a higher rank)
    for name in names:
        if name not in bound.arguments:
            continue
        value: Any = bound.arguments[name]
        if name in lists and isinstance(value, (list, tuple)):
            try:
                bound.arguments[name] = [
                    ragged_dispatch.flat_operand(anchor, v) if isinstance(v, ragged) else v for v in value
                ]
            except errors.InvalidArgumentError as exc:
                if all(_static_splits(v) == _static_splits(anchor) for v in value if isinstance(v, ragged)):
                    raise  # (TF compares the splits' values when the op runs)
                raise ValueError(f"partitions have incompatible row_splits: {exc.message}") from None
        else:
            if lifted is not anchor and isinstance(value, ragged):
                value = ragged_dispatch.lifted(value, single)
            bound.arguments[name] = ragged_dispatch.flat_operand(lifted, value)
    return lifted.with_flat_values(fn(*bound.args, **bound.kwargs))


def _static_splits(rt: Any) -> list:
    """The static shapes of a RaggedTensor's row splits and of its flat values' outer dimension: TF's list ops
    compare these when they build the op (`ValueError`), the splits' values only when it runs
    (`InvalidArgumentError`)."""
    return [tuple(splits.shape) for splits in rt.nested_row_splits] + [tuple(rt.flat_values.shape)[:1]]
