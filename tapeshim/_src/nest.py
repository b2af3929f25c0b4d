"""`tf.nest`-style flattening of lists, tuples, namedtuples and dicts.

Dicts flatten in sorted key order (as `tf.nest` does) and pack back in the
order of the structure they are packed into, so a user's dict keeps its key order.
"""

from __future__ import annotations

from typing import Any, Callable


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _sorted_keys(mapping: dict) -> list:
    try:
        return sorted(mapping)
    except TypeError:
        return sorted(mapping, key=repr)


def is_nested(value: Any) -> bool:
    return isinstance(value, (list, tuple, dict))


def flatten(structure: Any) -> list:
    """Returns the leaves of `structure` in `tf.nest` order."""
    leaves: list = []
    _flatten_into(structure, leaves)
    return leaves


def _flatten_into(structure: Any, leaves: list) -> None:
    if isinstance(structure, dict):
        for key in _sorted_keys(structure):
            _flatten_into(structure[key], leaves)
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            _flatten_into(item, leaves)
    else:
        leaves.append(structure)


def pack_sequence_as(structure: Any, flat: list) -> Any:
    """Builds `structure`'s shape again from the leaves in `flat`."""
    iterator = iter(flat)
    return _pack(structure, iterator)


def _pack(structure: Any, iterator: Any) -> Any:
    if isinstance(structure, dict):
        packed = {key: _pack(structure[key], iterator) for key in _sorted_keys(structure)}
        return type(structure)((key, packed[key]) for key in structure)
    if _is_namedtuple(structure):
        return type(structure)(*[_pack(item, iterator) for item in structure])
    if isinstance(structure, (list, tuple)):
        return type(structure)(_pack(item, iterator) for item in structure)
    return next(iterator)


def map_structure(func: Callable[..., Any], *structures: Any) -> Any:
    """Applies `func` leaf by leaf to structures of the same shape."""
    flats = [flatten(s) for s in structures]
    for other in flats[1:]:
        if len(other) != len(flats[0]):
            raise ValueError(
                "The two structures don't have the same number of elements. "
                f"First structure: {structures[0]}, second structure: {structures[1]}."
            )
    return pack_sequence_as(structures[0], [func(*xs) for xs in zip(*flats)])


def assert_same_structure(first: Any, second: Any, check_types: bool = False) -> None:
    """Raises `ValueError` when two nests differ in structure.

    With `check_types`, a list where the other has a tuple (or another sequence
    type) raises `TypeError`, as `tf.nest` does.
    """
    if (
        check_types
        and isinstance(first, (list, tuple, dict))
        and type(first) is not type(second)
        and isinstance(second, (list, tuple, dict))
    ):
        raise TypeError(
            "The two structures don't have the same sequence type. Input structure has type "
            f"{type(first)}, while shallow structure has type {type(second)}."
        )
    if isinstance(first, dict) != isinstance(second, dict) or (
        isinstance(first, (list, tuple)) != isinstance(second, (list, tuple))
    ):
        raise ValueError(
            "The two structures don't have the same nested structure.\n\n"
            f"First structure: {first!r}\n\nSecond structure: {second!r}"
        )
    if isinstance(first, dict):
        if _sorted_keys(first) != _sorted_keys(second):
            raise ValueError(
                "The two structures don't have the same sequence of keys. "
                f"First structure has keys {list(first)}, while second structure has keys {list(second)}."
            )
        for key in first:
            assert_same_structure(first[key], second[key], check_types)
    elif isinstance(first, (list, tuple)):
        if len(first) != len(second):
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {first!r}\n\nSecond structure: {second!r}"
            )
        for a, b in zip(first, second):
            assert_same_structure(a, b, check_types)
