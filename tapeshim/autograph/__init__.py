"""`tf.autograph`: convert Python control flow over tensors (used by `tapeshim.function`)."""

from tapeshim._src.autograph.conversion import to_code, to_graph
from tapeshim.autograph import experimental

__all__ = ["experimental", "to_code", "to_graph"]
