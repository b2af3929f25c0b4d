"""`tf.types.experimental.TraceType`: how a custom Python object passed to a function is traced.

A class that defines `__tf_tracing_type__(context)` decides itself when two of
its instances share a trace: the returned `TraceType` is part of the function's
cache key (compared with `==` and `hash`), and the traced Python function sees
the type's `placeholder_value(...)` in place of the argument.
"""

from __future__ import annotations

import abc
from typing import Any, Optional, Sequence


class TracingContext:
    """The context passed to `__tf_tracing_type__` (TF's `TracingContext`)."""


class PlaceholderContext:
    """The context passed to `TraceType.placeholder_value` (TF's `PlaceholderContext`)."""


class TraceType(metaclass=abc.ABCMeta):
    """The type of a traced argument, as `tf.types.experimental.TraceType`.

    Subclasses define `is_subtype_of`, `most_specific_common_supertype`,
    `placeholder_value`, `__eq__` and `__hash__`.
    """

    @abc.abstractmethod
    def is_subtype_of(self, other: "TraceType") -> bool:
        """Whether this type is a subtype of `other`."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others: Sequence["TraceType"]) -> Optional["TraceType"]:
        """The most specific supertype of this type and `others`, or None."""

    def placeholder_value(self, placeholder_context: Any = None) -> Any:
        """The value the traced function sees for an argument of this type."""
        raise NotImplementedError(f"{type(self).__name__} does not define placeholder_value")

    def to_tensors(self, value: Any) -> list:
        """The tensors of `value` passed to the function (none by default)."""
        return []

    @abc.abstractmethod
    def __eq__(self, other: object) -> bool:
        """Types are equal when arguments of them can share a trace."""

    @abc.abstractmethod
    def __hash__(self) -> int:
        """Consistent with `__eq__`."""


def trace_type_of(value: Any) -> TraceType | None:
    """`value.__tf_tracing_type__(context)` when its class defines the protocol, else None."""
    method = getattr(type(value), "__tf_tracing_type__", None)
    if method is None:
        return None
    return method(value, TracingContext())
