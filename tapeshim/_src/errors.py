"""TensorFlow's error classes (`tf.errors`)."""

from __future__ import annotations

from typing import Any


class OpError(Exception):
    """The base class of TF's runtime errors, as `tf.errors.OpError`."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(OpError):
    """An op got an argument it cannot use (wrong dtype, shape or value)."""


class NotFoundError(OpError):
    """Something asked for was not found."""


class FailedPreconditionError(OpError):
    """The system is not in a state the operation needs."""


class OutOfRangeError(OpError):
    """An operation iterated past the valid input range."""


class UnimplementedError(OpError):
    """The operation is not implemented."""


class InternalError(OpError):
    """An internal invariant was broken."""


def invalid_argument(message: str, op_name: str | None = None) -> InvalidArgumentError:
    """Builds an `InvalidArgumentError` with TF's `[Op:Name]` suffix."""
    if op_name:
        message = f"{message} [Op:{op_name}]"
    return InvalidArgumentError(None, None, message)


class OperatorNotAllowedInGraphError(TypeError):
    """A traced (symbolic) tensor was used where a Python value is needed.

    Raised inside `tapeshim.function` for `if tensor:`, `while tensor:`,
    `float(tensor)` and `.numpy()`; use `tf.cond` / `tf.while_loop` instead.
    """
