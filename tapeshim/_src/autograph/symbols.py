"""The values a converted statement's state can hold besides the user's: undefined variables, and the items and
attributes (`acc[0]`, `self.total`) it carries beside its variables."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tapeshim._src import nest


class Undefined:
    """The value of a variable not yet assigned when a converted statement starts."""

    def __init__(self, symbol_name: str) -> None:
        self.symbol_name = symbol_name

    def __repr__(self) -> str:
        return f"<undefined {self.symbol_name}>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnboundLocalError(f"local variable '{self.symbol_name}' referenced before assignment")

    def __bool__(self) -> bool:
        raise UnboundLocalError(f"local variable '{self.symbol_name}' referenced before assignment")


class UndefinedAfterLoop(Undefined):
    """The target of a loop over a dataset after the loop, when it was not defined before it (TF's error)."""

    def _fail(self) -> Any:
        raise ValueError(f"'{self.symbol_name}' must be defined before the loop")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._fail()

    def __bool__(self) -> bool:
        return self._fail()


class UndefinedReturnValue:
    """The return value of a converted function before a `return` ran (the function returns None)."""


def retval(value: Any) -> Any:
    """The function's return value: None when no `return` ran."""
    if isinstance(value, UndefinedReturnValue):
        return None
    for leaf in nest.flatten(value):
        if isinstance(leaf, UndefinedAfterLoop):
            leaf._fail()
    return value


def load_or_undefined(load: Callable[[], Any], name: str) -> Any:
    """An item's or attribute's value (`load()`), or `Undefined(name)` when it does not exist (yet)."""
    try:
        return load()
    except (AttributeError, IndexError, KeyError, NameError):
        return Undefined(name)


def is_defined(value: Any) -> bool:
    """Whether `value` is not one of the `Undefined` markers."""
    return not isinstance(value, (Undefined, UndefinedReturnValue))


# (getter of the values, setter, their source text): `transformer._composite_accessors`
Composites = tuple[Callable[[], tuple], Callable[[Sequence[Any]], None], Sequence[str]]


class CarriedComposites:
    """The items and attributes (`acc[0]`, `stats["n"]`, `self.total`) a converted statement carries, as extra
    state after its variables, as TF's AutoGraph does with its `get_state`/`set_state`.

    The statement's functions see them where the user's code reads them: each wrapped function first assigns
    the values it is given (`set`), and a body returns their values after it (`get`) with its variables'.
    The statement ends by assigning their final values; one that raises puts back those it started with (a
    trace that fails must not leave its symbolic tensors in the user's objects).
    """

    def __init__(self, composites: Composites, n_state: int) -> None:
        self.get, self.set, self.names = composites
        self.n_state = n_state

    def extend(self, state: tuple, names: Sequence[str], live: Sequence[str]) -> tuple[tuple, tuple, tuple]:
        """The statement's state, names and live names with the composites after its variables."""
        return tuple(state) + tuple(self.get()), tuple(names) + tuple(self.names), tuple(live) + tuple(self.names)

    def state_function(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function` of the variables (a loop's test), taking the composites after them."""
        n = self.n_state

        def wrapped(*values: Any) -> Any:
            self.set(values[n:])
            return function(*values[:n])

        return wrapped

    def body(self, function: Callable[..., tuple], n_leading: int) -> Callable[..., tuple]:
        """A loop body (after `n_leading` arguments such as the element) that carries the composites too."""
        end = n_leading + self.n_state

        def wrapped(*values: Any) -> tuple:
            self.set(values[end:])
            return tuple(function(*values[:end])) + tuple(self.get())

        return wrapped

    def branch(self, function: Callable[..., tuple], initial: tuple) -> Callable[..., tuple]:
        """A branch of an `if`: starts from the composites' values before the `if` (not the other branch's)."""
        n = self.n_state

        def wrapped(*values: Any) -> tuple:
            self.set(initial)
            return tuple(function(*values[:n])) + tuple(self.get())

        return wrapped

    def run(self, statement: Callable[[], tuple]) -> tuple:
        """Runs the converted statement; assigns the composites' results; returns the variables'."""
        initial = self.get()
        try:
            result = statement()
        except BaseException:
            self.set(initial)
            raise
        self.set(result[self.n_state :])
        return tuple(result[: self.n_state])
