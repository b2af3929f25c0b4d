"""`tf.errors`: TensorFlow's error classes."""

from tapeshim._src.errors import (
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OperatorNotAllowedInGraphError,
    OpError,
    OutOfRangeError,
    UnimplementedError,
)

__all__ = [
    "FailedPreconditionError", "InternalError", "InvalidArgumentError", "NotFoundError",
    "OperatorNotAllowedInGraphError", "OpError", "OutOfRangeError", "UnimplementedError",
]
