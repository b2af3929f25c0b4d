"""The structural key of a `tf.custom_gradient` call's recorded op: what the call computes, not its closures.

A training loop calls one `tf.custom_gradient` function with a new `grad_fn` closure every step; keying the
recorded op by the closure object would compile a new program per step. The key stands for what the function
computes instead: its code, defaults, captured values and the globals it reads (see `structural_key`).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import jax
import numpy as np

from tapeshim._src.tensor import Tensor


class Identity:
    """Hashes and compares by identity, and keeps the object alive while a cache key holds it."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.obj is self.obj


class _Unkeyable(Exception):
    """A value the structural key cannot stand for (it would be baked into a shared program)."""


_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _value_key(value: Any, depth: int = 0, names: tuple = ()) -> Any:
    """A hashable stand-in for a value `f` uses: equal keys compute the same function.

    Python scalars and strings key by value; containers by their items; tensors by
    their id (a different tensor is a different program); functions by their code,
    defaults and captured values; classes, modules and other objects by identity
    (kept alive by the key), with the attributes `names` (the names the function's
    code reads: `_object_key`). Anything holding a JAX array directly is unkeyable.
    """
    if depth > 6:
        raise _Unkeyable
    cls = value.__class__
    if cls in _PLAIN:
        return (cls, value)
    if cls in (tuple, list):
        return (cls, tuple(_value_key(v, depth + 1) for v in value))
    if cls is dict:
        return (dict, tuple((_value_key(k, depth + 1), _value_key(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, Tensor):
        return ("tensor", value._tid, Identity(value))
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        raise _Unkeyable
    if inspect.isfunction(value):
        return _function_key(value, depth + 1)
    return _object_key(value, names, depth)


def _object_key(value: Any, names: tuple, depth: int) -> Any:
    """An object by identity, with its instance attributes that the function's code names (`self.scale`,
    `box.rate`: `names`) by value: an attribute that changes between calls (a schedule's rate, a gradient
    reversal layer's lambda) makes another computation, as TF's eager run of the function computes.

    Modules and classes key by identity alone. An attribute keys as `_value_key` keys a value, except that an
    object it holds keys by identity (its own attributes are not read), and so does a value `_value_key`
    cannot stand for (a JAX array, which cannot change; a NumPy array, reassigned rather than changed).
    """
    attributes = getattr(value, "__dict__", None) if names else None
    if not isinstance(attributes, dict) or inspect.ismodule(value) or inspect.isclass(value):
        return Identity(value)
    read = tuple((name, _attribute_key(attributes[name], depth)) for name in names if name in attributes)
    return (Identity(value), read) if read else Identity(value)


def _attribute_key(value: Any, depth: int) -> Any:
    """An attribute's key (see `_object_key`): by value where `_value_key` can stand for it, else by identity."""
    try:
        return _value_key(value, depth + 1)
    except _Unkeyable:
        return Identity(value)


_global_names: dict = {}


def _code_globals(code: Any) -> tuple:
    """The global and attribute names `code` and the functions nested in it read (`co_names`, cached per code
    object)."""
    names = _global_names.get(code)
    if names is None:
        found = set(code.co_names)
        for const in code.co_consts:
            if inspect.iscode(const):
                found.update(_code_globals(const))
        names = _global_names[code] = tuple(sorted(found))
    return names


def _function_key(fn: Callable, depth: int = 0) -> tuple:
    """What `fn` computes: its code, defaults, captured cells and the tensors among the globals it reads."""
    names = _code_globals(fn.__code__)  # (the global and attribute names the code reads)
    cells = tuple(
        _value_key(c.cell_contents, depth + 1, names) if _cell_filled(c) else ("empty",) for c in (fn.__closure__ or ())
    )
    namespace = fn.__globals__
    read = tuple((name, _global_key(namespace[name], depth, names)) for name in names if name in namespace)
    defaults = _value_key(fn.__defaults__ or (), depth + 1)
    kwdefaults = _value_key(fn.__kwdefaults__ or {}, depth + 1)
    return (fn.__code__, Identity(namespace), cells, read, defaults, kwdefaults)


def _global_key(value: Any, depth: int, names: tuple) -> Any:
    """A global `f` reads: modules and classes by identity, functions by what they compute, values by value
    (objects with the attributes `names` that `f` reads)."""
    if inspect.ismodule(value) or inspect.isclass(value) or inspect.isbuiltin(value):
        return Identity(value)
    return _value_key(value, depth + 1, names)


def _cell_filled(cell: Any) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:  # a name the function has not bound yet
        return False
    return True


def structural_key(f: Callable, args: tuple, kwargs: dict, positions: list, variables: list) -> Any:
    """The key of a custom-gradient call's recorded op: what it computes, not the closure objects.

    Two calls with the same key run the same function on their tensor inputs (the
    values are arguments of the compiled program), so a loop that calls one
    `tf.custom_gradient` function compiles once although each call makes a new
    `grad_fn` closure. None when a value cannot be keyed (the call gets a key of
    its own).
    """
    target = inspect.unwrap(f) if inspect.isfunction(f) else f
    try:
        function = _function_key(target) if inspect.isfunction(target) else _value_key(target)
        names = _code_globals(target.__code__) if inspect.isfunction(target) else ()
        static_args = tuple(("input",) if i in positions else _value_key(a, 0, names) for i, a in enumerate(args))
        return (function, static_args, _value_key(kwargs, 0, names), tuple(Identity(v) for v in variables))
    except _Unkeyable:
        return None
    except TypeError:  # an unhashable value
        return None
