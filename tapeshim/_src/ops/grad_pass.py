"""`tf.grad_pass_through`: a function's values with the gradient of the identity (a `tf.custom_gradient`
whose gradient returns the upstream gradients, as TF's)."""

from __future__ import annotations

import functools
from typing import Any, Callable

from tapeshim._src.custom_gradient import custom_gradient
from tapeshim._src.ops import table


@table.export(
    "grad_pass_through",
    gradient="custom",
    dtypes=table.ANY,
)
def grad_pass_through(f: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps `f` so that it returns `f(*x)` and differentiates as the identity, as `tf.grad_pass_through`.

    The gradient of each output passes to the argument in the same position; variables `f` reads get no
    gradient.

    Args:
      f: a function `f(*x)` of tensors that returns a tensor or a nest of tensors.

    Returns:
      The wrapped function, which keeps `f`'s name and docstring.
    """

    @custom_gradient
    def _grad_pass_through_op(*args: Any, **kwargs: Any) -> Any:
        def grad(*upstream: Any, **grad_kwargs: Any) -> Any:
            variables = grad_kwargs.get("variables")
            if variables is not None:
                return upstream, [None] * len(variables)
            return upstream

        return f(*args, **kwargs), grad

    return functools.wraps(f)(_grad_pass_through_op)
