"""TensorFlow's error classes (`tf.errors`)."""

from __future__ import annotations

import errno
from typing import Any


class OpError(Exception):
    """The base class of TF's runtime errors, as `tf.errors.OpError`.

    Built as TF builds it, `OpError(node_def, op, message)`, or from a message
    alone (`InvalidArgumentError("bad value")`), as Keras re-raises errors with
    `error.__class__(message)`.
    """

    error_code = 2

    def __init__(self, node_def: Any = None, op: Any = None, message: str | None = None, *args: Any) -> None:
        if message is None and op is None and isinstance(node_def, str):
            node_def, message = None, node_def
        message = "" if message is None else str(message)
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        if args:  # TF's OpError takes the error code fourth
            self.error_code = args[0]

    def __str__(self) -> str:
        return self.message

    @property
    def experimental_payloads(self) -> dict:
        """The error's payloads (TF attaches none to the errors tapeshim raises)."""
        return {}


class CancelledError(OpError):
    """An operation or step was cancelled."""

    error_code = 1


class UnknownError(OpError):
    """An error of an unknown kind (for example from another address space)."""

    error_code = 2


class InvalidArgumentError(OpError):
    """An op got an argument it cannot use (wrong dtype, shape or value)."""

    error_code = 3


class DeadlineExceededError(OpError):
    """A deadline expired before the operation could complete."""

    error_code = 4


class NotFoundError(OpError):
    """Something asked for (a file, a variable) was not found."""

    error_code = 5


class AlreadyExistsError(OpError):
    """An entity that an operation tried to create already exists."""

    error_code = 6


class PermissionDeniedError(OpError):
    """The caller may not run the operation (for example a read-only directory)."""

    error_code = 7


class ResourceExhaustedError(OpError):
    """Some resource (memory, disk space, a quota) has been exhausted."""

    error_code = 8


class FailedPreconditionError(OpError):
    """The system is not in a state the operation needs."""

    error_code = 9


class AbortedError(OpError):
    """The operation was aborted, typically by a concurrent action."""

    error_code = 10


class OutOfRangeError(OpError):
    """An operation iterated past the valid input range."""

    error_code = 11


class UnimplementedError(OpError):
    """The operation is not implemented."""

    error_code = 12


class InternalError(OpError):
    """An internal invariant was broken."""

    error_code = 13


class UnavailableError(OpError):
    """The runtime is currently unavailable."""

    error_code = 14


class DataLossError(OpError):
    """Unrecoverable data loss or corruption (for example a truncated checkpoint)."""

    error_code = 15


class UnauthenticatedError(OpError):
    """The request does not have valid authentication credentials."""

    error_code = 16


# TF's error codes (`tf.errors.NOT_FOUND`, ...), the `error_code` of each class above.
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


def _errno_codes(*names: str) -> list[int]:
    return [getattr(errno, name) for name in names if hasattr(errno, name)]


# How TF's file system layer classifies an OS error number (its `IOError(context, errno)`);
# numbers not listed are UnknownError.
_CLASS_OF_ERRNO: dict[int, type[OpError]] = {
    code: error_class
    for error_class, names in (
        (
            InvalidArgumentError,
            (
                "EINVAL",
                "ENAMETOOLONG",
                "E2BIG",
                "EDESTADDRREQ",
                "EDOM",
                "EFAULT",
                "EILSEQ",
                "ENOPROTOOPT",
                "ENOSTR",
                "ENOTSOCK",
                "ENOTTY",
                "EPROTOTYPE",
                "ESPIPE",
            ),
        ),
        (DeadlineExceededError, ("ETIMEDOUT", "ETIME")),
        (NotFoundError, ("ENODEV", "ENOENT", "ENXIO", "ESRCH")),
        (AlreadyExistsError, ("EEXIST", "EADDRNOTAVAIL", "EALREADY")),
        (PermissionDeniedError, ("EPERM", "EACCES", "EROFS")),
        (
            FailedPreconditionError,
            (
                "ENOTEMPTY",
                "EISDIR",
                "ENOTDIR",
                "EADDRINUSE",
                "EBADF",
                "EBUSY",
                "ECHILD",
                "EISCONN",
                "ENOTBLK",
                "ENOTCONN",
                "EPIPE",
                "ESHUTDOWN",
                "ETXTBSY",
            ),
        ),
        (
            ResourceExhaustedError,
            ("ENOSPC", "EDQUOT", "EMFILE", "EMLINK", "ENFILE", "ENOBUFS", "ENODATA", "ENOMEM", "ENOSR", "EUSERS"),
        ),
        (OutOfRangeError, ("EFBIG", "EOVERFLOW", "ERANGE")),
        (
            UnimplementedError,
            ("ENOSYS", "ENOTSUP", "EAFNOSUPPORT", "EPFNOSUPPORT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT", "EXDEV"),
        ),
        (
            UnavailableError,
            (
                "EAGAIN",
                "ECONNREFUSED",
                "ECONNABORTED",
                "ECONNRESET",
                "EINTR",
                "EHOSTDOWN",
                "EHOSTUNREACH",
                "ENETDOWN",
                "ENETRESET",
                "ENETUNREACH",
                "ENOLCK",
                "ENOLINK",
                "ENONET",
            ),
        ),
        (AbortedError, ("EDEADLK", "ESTALE")),
        (CancelledError, ("ECANCELED",)),
    )
    for code in _errno_codes(*names)
}


def from_os_error(exc: OSError, path: str | None = None) -> OpError:
    """TF's error for a failed file operation: the class TF's file system gives its errno.

    Args:
      exc: the `OSError` raised by the operation.
      path: the file the operation was on (default: the error's own file name).

    Returns:
      The `OpError` subclass TF raises for `exc.errno` (`PermissionDeniedError` for
      EACCES/EROFS, `ResourceExhaustedError` for a full disk, `OutOfRangeError` for a
      file over the size limit, `UnknownError` for an errno TF does not classify),
      with TF's message form `"<path>; <reason>"`.
    """
    where = path if path is not None else (exc.filename if exc.filename is not None else "")
    reason = exc.strerror or str(exc)
    error_class = _CLASS_OF_ERRNO.get(exc.errno, UnknownError) if exc.errno is not None else UnknownError
    return error_class(None, None, f"{where}; {reason}")


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
