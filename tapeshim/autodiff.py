"""`tf.autodiff`: the tape and forward-mode accumulator."""

from tapeshim._src.forward import ForwardAccumulator  # noqa: F401
from tapeshim._src.tape import GradientTape  # noqa: F401
