"""`tf.errors`: TensorFlow's error classes."""

from tapeshim._src.errors import (  # noqa: F401
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
    UnimplementedError,
)
