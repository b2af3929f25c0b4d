"""`tf.Module` and `tf.name_scope`: collections of variables found through attributes."""

from __future__ import annotations

import functools
import re
from types import TracebackType
from typing import Any, Callable, Iterator

from tapeshim._src import nest
from tapeshim._src.state import current_name_scope, enter_name_scope, exit_name_scope
from tapeshim._src.variable import Variable


class name_scope:  # noqa: N801 - TF's name
    """A context manager that prefixes the names of variables created inside, as `tf.name_scope`.

    Args:
      name: the scope's name; a name ending in "/" is used as the full scope.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name_scope expects a string name, got {name!r}")
        self._name = name
        self._saved: list[str] | None = None

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        self._saved = enter_name_scope(self._name)
        return current_name_scope()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        exit_name_scope(self._saved)


def _camel_to_snake(name: str) -> str:
    return re.sub(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))", r"_\1", name).lower()


_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Module:
    """A named container of variables and other modules, as `tf.Module`.

    `variables`, `trainable_variables` and `submodules` are found by walking the
    module's attributes (sorted by name, into lists, tuples and dicts), as TF does.

    Args:
      name: the module's name (default: the class name in snake_case).

    Raises:
      ValueError: if `name` is not a valid Python identifier.
    """

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not _VALID_NAME.match(name):
            raise ValueError(f"'{name}' is not a valid module name. Module names must be valid Python 3 identifiers.")
        self._name = name
        with name_scope(name) as scope:
            self._scope_name = scope

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> name_scope:
        """A name scope for this module (variables created inside are named `module/...`)."""
        return name_scope(self._scope_name)

    @property
    def variables(self) -> tuple:
        """All variables of this module and its submodules, each once, in TF's order."""
        return tuple(self._flatten(lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self) -> tuple:
        """The trainable variables of this module and its submodules."""
        return tuple(self._flatten(lambda v: isinstance(v, Variable) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(self._flatten(lambda v: isinstance(v, Variable) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        """All modules reachable from this one (not itself), breadth of attributes first."""
        return tuple(self._flatten(lambda v: isinstance(v, Module)))

    def _flatten(self, predicate: Callable[[Any], bool]) -> Iterator[Any]:
        seen = {id(self)}
        return _walk(self, predicate, seen, [])

    def __setattr__(self, name: str, value: Any) -> None:
        if value.__class__ is list or value.__class__ is dict:  # as TF: tracked, for deferred restores
            from tapeshim._src import checkpoint  # import cycle: module <-> checkpoint (its walk knows Module)

            value = checkpoint.track_container(value, self, name)
        super().__setattr__(name, value)
        if self.__dict__.get("_pending_restore"):  # a restore ran before this module created its variables
            from tapeshim._src import checkpoint  # import cycle: module <-> checkpoint

            checkpoint.restore_attached(self, name, value)

    @classmethod
    def with_name_scope(cls, method: Callable) -> Callable:
        """Decorates a method to run inside the module's name scope."""

        @functools.wraps(method)
        def scoped(self: "Module", *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        return scoped

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>"


_IGNORED = frozenset({"_name", "_scope_name", "_pending_restore"})


def _walk(module: Module, predicate: Callable[[Any], bool], seen: set[int], stack: list[int]) -> Iterator[Any]:
    submodules = []
    recursive = id(module) not in stack
    for key in sorted(vars(module)):
        if key in _IGNORED:
            continue
        for leaf in nest.flatten(vars(module)[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                yield leaf
            if recursive and isinstance(leaf, Module):
                submodules.append(leaf)
    for submodule in submodules:
        yield from _walk(submodule, predicate, seen, stack + [id(module)])
