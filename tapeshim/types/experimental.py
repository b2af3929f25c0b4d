"""`tf.types.experimental`: tracing protocol and function types."""

from tapeshim._src.concrete_function import AtomicFunction, ConcreteFunction, FunctionType
from tapeshim._src.function import Function as PolymorphicFunction
from tapeshim._src.trace_type import PlaceholderContext, TraceType, TracingContext
from tapeshim._src.typing_aliases import TensorLike

GenericFunction = PolymorphicFunction

__all__ = [
    "AtomicFunction",
    "ConcreteFunction",
    "FunctionType",
    "GenericFunction",
    "PlaceholderContext",
    "PolymorphicFunction",
    "TensorLike",
    "TraceType",
    "TracingContext",
]
