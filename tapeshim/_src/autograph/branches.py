"""The branches of AutoGraph's `if` statement on a tensor, and the statements of a custom gradient's forward.

`merge_branch_values` decides what each variable is after an `if` on a tensor (one Python value, or an output
chosen per branch), with TF's AutoGraph errors; `operators.if_stmt` builds the `tf.cond` from it. A custom
gradient's forward defined in a converted function is traced by JAX, not by a function trace: there an `if`
on a tensor runs both branches and picks with `tf.where` (`abstract_if`), and a `while` is one
`lax.while_loop` (`abstract_while`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tapeshim._src import control_flow_jax, errors, nest
from tapeshim._src.autograph.symbols import Undefined, UndefinedReturnValue
from tapeshim._src.autograph.tensor_array import TensorArray
from tapeshim._src.dynamic_shapes import DynamicShapeNeeded
from tapeshim._src.ops import array_ops
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable

_BRANCH_NAMES = ("main", "else")


def if_predicate(test: Any) -> Tensor:
    """An `if` statement's tensor condition, with TF's errors when it is not a boolean scalar."""
    predicate = convert_to_tensor(test)
    if predicate._shape:
        raise errors.invalid_argument(
            f"The first argument to tf.cond must be a scalar, got shape {list(predicate._shape)}", "If"
        )
    if not predicate._dtype.is_bool:
        raise TypeError(f"Expected bool for the condition of an if statement, got {predicate._dtype.name}.")
    return predicate


def no_return_in_loop(names: Sequence[str]) -> None:
    """TF's error for a `return` inside a loop on a tensor (the converted loop carries its return flag)."""
    if "do_return__" in names:
        raise NotImplementedError(
            "a return statement cannot be placed inside this TensorFlow loop; this may happen if a return "
            "statement depends on a static Python condition such as a hyperparameter"
        )


OUTPUT = object()
"""`merge_branch_values`' answer for a variable that is an output of the statement (chosen per branch)."""


def as_tensors(value: Any) -> Any:
    return nest.map_structure(convert_to_tensor, value)


def merge_branch_values(name: str, values: list, live: bool) -> Any:
    """What a variable is after a tensor `if`: `OUTPUT` (a cond output), or one Python value."""
    undefined = [isinstance(v, (Undefined, UndefinedReturnValue)) for v in values]
    if all(undefined):
        return values[0]
    if any(undefined):
        missing = _BRANCH_NAMES[undefined.index(True)]
        if name == "retval__":
            raise ValueError(f"the {missing} branch must also have a return statement.")
        if not live:
            return Undefined(name)
        raise ValueError(f"'{name}' must also be initialized in the {missing} branch")
    if values[0] is values[1] and not isinstance(values[0], (Tensor, Variable)):
        return values[0]  # the same Python object in both branches (unchanged, or a module, a function)
    if not live and "__" not in name:  # a user's variable (not a return value or a break flag)
        return Undefined(name)  # not read after the statement: no output, whatever its values (as TF)
    for branch, value in zip(_BRANCH_NAMES, values):
        if value is None:
            raise ValueError(f"'{name}' is None at the end of the {branch} branch.")
    if all(isinstance(v, TensorArray) for v in values):
        return OUTPUT  # (as cond outputs of its elements: `tensor_array.branch_carries`)
    try:
        converted = [as_tensors(v) for v in values]
    except (TypeError, ValueError):
        raise TypeError(
            f"'{name}' must be a tensor (or a structure of tensors) in both branches of an if statement "
            f"on a tensor; got {type(values[0]).__name__} and {type(values[1]).__name__}."
        ) from None
    try:
        nest.assert_same_structure(converted[0], converted[1])
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"'{name}' must have the same nested structure in the main and else branches:\n{exc}"
        ) from None
    for first, second in zip(nest.flatten(converted[0]), nest.flatten(converted[1])):
        if first._dtype != second._dtype:
            raise TypeError(
                f"'{name}' has dtype {first._dtype.name} in the main branch, but dtype "
                f"{second._dtype.name} in the else branch"
            )
        if first._shape != second._shape:
            what = "the return value" if name == "retval__" else f"'{name}'"
            raise DynamicShapeNeeded(
                f"{what} has shape {tuple(first._shape)} in the main branch, but shape {tuple(second._shape)} in "
                "the else branch of an if statement on a tensor"
            )
    return OUTPUT


def abstract_if(
    test: Tensor,
    body: Callable[..., tuple],
    orelse: Callable[..., tuple],
    state: tuple,
    names: Sequence[str],
    live: Sequence[str],
) -> tuple:
    """An `if` on a tensor JAX traces outside a function trace (a custom gradient's forward, defined in a
    converted function): both branches run, as TF traces both, and each variable read after the statement is
    chosen between their values with `tf.where` (the forward's gradient is the custom one)."""
    predicate = if_predicate(test)
    results = [body(*state), orelse(*state)]
    final = []
    for i, name in enumerate(names):
        values = [results[0][i], results[1][i]]
        if any(isinstance(v, TensorArray) for v in values):
            raise NotImplementedError(
                f"'{name}': a TensorArray assigned in an if statement of a custom gradient's forward"
            )
        try:
            choice = merge_branch_values(name, values, name in live)
        except DynamicShapeNeeded as exc:
            raise ValueError(f"{exc} (inside a custom gradient's forward, both branches must agree)") from None
        if choice is OUTPUT:
            choice = nest.map_structure(
                lambda first, second: array_ops.where(predicate, first, second), *map(as_tensors, values)
            )
        final.append(choice)
    return tuple(final)


def abstract_while(test: Callable[..., Any], body: Callable[..., tuple], state: tuple, names: Sequence[str]) -> tuple:
    """A `while` on a tensor JAX traces outside a function trace (a custom gradient's forward, defined in a
    converted function): one `lax.while_loop` over the variables defined before it (those first assigned in
    the body stay local to it)."""
    no_return_in_loop(names)
    carried = [i for i, value in enumerate(state) if not isinstance(value, (Undefined, UndefinedReturnValue))]

    def full(values: Sequence[Any]) -> list:
        current = list(state)
        for i, value in zip(carried, values):
            current[i] = value
        return current

    def as_structure(result: Any) -> list:
        values = [result[i] for i in carried]
        nest.assert_same_structure([state[i] for i in carried], values)
        return values

    final = control_flow_jax.while_loop(
        lambda *values: test(*full(values)),
        lambda *values: body(*full(values)),
        [state[i] for i in carried],
        as_structure,
        None,
        0,
    )
    return tuple(full(final))
