"""AutoGraph's operators on values: `and`, `or`, `not`, chained comparisons and conditional expressions in
converted code (TF's `autograph/operators/logical.py` and `conditional_expressions.py`). On a symbolic tensor
they are ops (`tf.logical_and`, `tf.cond`); on a tensor whose value is known, TF's eager `tf.cond` semantics;
on Python values, Python's."""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import jax

from tapeshim._src import control_flow
from tapeshim._src.ops import math_ops
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable


def is_symbolic(value: Any, abstract: bool = False) -> bool:
    """Whether `value` is a tensor known only when the program runs: a function trace's, or (with `abstract`:
    for `tf.cond`, which takes it) one holding a JAX tracer outside a function trace (a custom gradient's forward
    computed on abstract values)."""
    if not isinstance(value, Tensor) or isinstance(value, Variable):
        return False
    trace = _thread_state.trace
    if trace is None:
        return abstract and isinstance(value._value, jax.core.Tracer)
    return trace.is_symbolic(value)


# -- and, or, not ----------------------------------------------------------------------
def _known(value: Tensor | Variable) -> bool:
    """Whether a tensor's value is known now (eager code: a `py_function`'s body, ...), so that TF's `tf.cond`
    on it runs one branch in Python."""
    if isinstance(value, Variable):
        return _thread_state.trace is None
    return not is_symbolic(value, abstract=True)


def and_(left: Callable[[], Any], right: Callable[[], Any]) -> Any:
    """`a and b`: when `a` is a tensor, TF's `tf.cond(a, b, lambda: a)`: `tf.logical_and` when it is symbolic,
    `b()` or `a` by `a`'s value when it is known (as eager `tf.cond`); else Python's lazy `and`."""
    value = left()
    if isinstance(value, (Tensor, Variable)):
        if _known(value):
            return right() if value else convert_to_tensor(value)
        return math_ops.logical_and(value, right())
    return value and right()


def or_(left: Callable[[], Any], right: Callable[[], Any]) -> Any:
    """`a or b`: when `a` is a tensor, TF's `tf.cond(a, lambda: a, b)`: `tf.logical_or` when it is symbolic,
    `a` or `b()` by `a`'s value when it is known (as eager `tf.cond`); else Python's lazy `or`."""
    value = left()
    if isinstance(value, (Tensor, Variable)):
        if _known(value):
            return convert_to_tensor(value) if value else right()
        return math_ops.logical_or(value, right())
    return value or right()


def not_(value: Any) -> Any:
    """`not a`: `tf.logical_not` when `a` is a tensor, else Python's `not`."""
    if isinstance(value, (Tensor, Variable)):
        return math_ops.logical_not(value)
    return not value


_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "Lt": operator.lt,
    "LtE": operator.le,
    "Gt": operator.gt,
    "GtE": operator.ge,
    "Eq": operator.eq,
    "NotEq": operator.ne,
    "Is": operator.is_,
    "IsNot": operator.is_not,
    "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
}


def compare_chain(ops: Sequence[str], operands: Sequence[Callable[[], Any]]) -> Any:
    """`a < b <= c` (`ops` the comparisons' `ast` names, `operands` thunks of a, b, c): as TF's AutoGraph,
    `a < b and b <= c` with `and_`, so tensor comparisons give `tf.logical_and`. As TF's, an operand between
    two comparisons is evaluated for each of them, and a comparison after a false Python one is not."""

    def comparison(i: int) -> Any:
        return _COMPARISONS[ops[i]](operands[i](), operands[i + 1]())

    def chain(i: int) -> Any:
        if i == len(ops) - 1:
            return comparison(i)
        return and_(lambda: comparison(i), lambda: chain(i + 1))

    return chain(0)


def if_exp(test: Any, if_true: Callable[[], Any], if_false: Callable[[], Any]) -> Any:
    """`a if c else b`: `tf.cond` when `c` is a symbolic tensor, else Python's."""
    if is_symbolic(test, abstract=True):
        return control_flow.cond(test, if_true, if_false)
    return if_true() if test else if_false()
