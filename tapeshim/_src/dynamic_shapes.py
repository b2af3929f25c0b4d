"""Results whose shape TF leaves unknown in a graph, which XLA cannot compile.

Inside `tf.function`, TF accepts a few constructs whose result has a shape that
only the run decides: a `tf.cond` (or an `if` on a tensor) whose branches give
different shapes, a `tf.while_loop` whose variables change shape within their
`shape_invariants` (or an AutoGraph loop with
`tf.autograph.experimental.set_loop_options(shape_invariants=...)`). XLA needs
every shape when it compiles, so such a function cannot be one program. The
construct raises `DynamicShapeNeeded` while it is traced; `tapeshim.function`
catches it and runs that function eagerly, op by op, for those argument types
(values, gradients and errors as TF; see docs/function.md). Anywhere else (a
concrete function, a Keras step) the error reaches the user and says what to
change.
"""

from __future__ import annotations

from typing import Any, Sequence

from tapeshim._src.errors import OperatorNotAllowedInGraphError
from tapeshim._src.shape import TensorShape


class DynamicShapeNeeded(ValueError):
    """A traced construct whose result TF gives an unknown shape (see the module docstring).

    Attributes:
      what: the construct and the shapes it saw, for messages.
    """

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}. TensorFlow gives the result an unknown shape; XLA, which tapeshim compiles to, needs "
            "static shapes, so this cannot be compiled as one program. A tapeshim.function runs such a "
            "function eagerly (op by op); here it cannot: make the shapes agree (pad, or reshape to a "
            "common shape)."
        )
        self.what = what


class ValueNeededByAnOp(OperatorNotAllowedInGraphError, DynamicShapeNeeded):
    """An op needed, while traced, the value of a tensor only the call knows (a size given by an argument:
    `tf.zeros([n, 2])`, `tf.range(n)`, `x[:n]`, `tf.one_hot(i, depth)`, or a data-dependent result: `tf.unique`).

    TF's graph gives such a result an unknown shape; XLA needs every shape. Inside `tapeshim.function` the
    function then runs eagerly for those argument types, as for `DynamicShapeNeeded`; anywhere else it is
    TF's `OperatorNotAllowedInGraphError`.
    """

    def __init__(self, message: str, what: str) -> None:
        Exception.__init__(self, message)
        self.what = what


class StringArgument(TypeError, DynamicShapeNeeded):
    """A `tf.string` tensor given as an argument to a `tapeshim.function`.

    String tensors live on the host (NumPy arrays of bytes) and cannot enter an XLA program. TF traces them
    into its graph; a `tapeshim.function` runs such a call eagerly instead, op by op, for that signature and
    later ones like it (values, gradients and runtime errors as TF's; Python side effects run on every call, and
    an error TF raises while tracing is the eager op's). Where a trace is required (`get_concrete_function`) it
    is TF's `TypeError`, saying why.
    """

    def __init__(self, message: str, what: str) -> None:
        Exception.__init__(self, message)
        self.what = what


def covered_by_invariants(before: Sequence[Any], after: Sequence[Any], invariants: Sequence[Any]) -> bool:
    """Whether every shape change from `before` to `after` (shapes) lies within its invariant (None: none given)."""
    for old, new, invariant in zip(before, after, invariants):
        if tuple(old) == tuple(new):
            continue
        if invariant is None:
            return False
        shape = TensorShape(invariant)
        if not (shape.is_compatible_with(old) and shape.is_compatible_with(new)):
            return False
    return True
