"""`TensorShape`: the static shape of a tensor, as TF prints and compares it."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, SupportsIndex, overload

from tapeshim._src.symbolic_dims import is_symbolic  # a dimension traced for every size: None, as TF's

if TYPE_CHECKING:
    from tapeshim._src.typing_aliases import TensorShapeLike


def _dimension(value: SupportsIndex) -> int:
    """A known dimension as TF checks it: an integer (anything with `__index__`), never negative."""
    try:
        index = operator.index(value)
    except TypeError:
        raise TypeError(
            f"Dimension value must be integer or None or have an __index__ method, got value '{value!r}' "
            f"with type '{type(value)!r}'"
        ) from None
    if index < 0:
        raise ValueError(f"Dimension {index} must be >= 0")
    return index


class TensorShape:
    """The shape of a `Tensor`, `TensorShape([2, 3])`.

    Compares equal to lists and tuples of the same dimensions, indexes to ints,
    and slices to `TensorShape`s. A dimension may be `None` (unknown).
    """

    __slots__ = ("_dims",)
    _dims: tuple[int | None, ...] | None

    def __init__(self, dims: TensorShapeLike | SupportsIndex) -> None:
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        else:
            try:
                dimensions = iter(dims)  # type: ignore[arg-type]  # a 0-d array or tensor raises TypeError here
            except TypeError:  # a single dimension, as TF: `TensorShape(3)` is `(3,)`
                self._dims = (_dimension(dims),)  # type: ignore[arg-type]  # _dimension checks it, with TF's error
            else:
                self._dims = tuple(None if d is None or is_symbolic(d) else _dimension(d) for d in dimensions)

    @classmethod
    def _known(cls, dims: tuple[int, ...]) -> "TensorShape":
        """A shape from a tensor's own dimension tuple (checked only if a dimension is not an int)."""
        for d in dims:
            if d.__class__ is not int:
                return cls(dims)
        shape = cls.__new__(cls)
        shape._dims = dims
        return shape

    @property
    def rank(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self) -> list[int | None] | None:
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def num_elements(self) -> int | None:
        if self._dims is None:
            return None
        total = 1
        for d in self._dims:
            if d is None:
                return None
            total *= d
        return total

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def is_compatible_with(self, other: TensorShapeLike) -> bool:
        other = TensorShape(other)
        return other._dims is None or self.admits(other._dims)

    def admits(self, sizes: tuple) -> bool:
        """Whether a shape of these dimensions (ints or None; a symbolic one is unknown, as None) is compatible
        with this one: `is_compatible_with` without making a `TensorShape` of them (a tensor's own `_shape`)."""
        if self._dims is None:
            return True
        if len(self._dims) != len(sizes):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, sizes))

    def merge_with(self, other: TensorShapeLike) -> "TensorShape":
        """The shape with the known dimensions of both.

        Raises:
          ValueError: if the shapes are not compatible.
        """
        other = TensorShape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other: TensorShapeLike) -> "TensorShape":
        """This shape's dimensions followed by `other`'s (unknown if either is)."""
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def most_specific_compatible_shape(self, other: TensorShapeLike) -> "TensorShape":
        """The most specific shape compatible with both: dimensions that differ become unknown."""
        other = TensorShape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def assert_is_compatible_with(self, other: TensorShapeLike) -> None:
        """Raises ValueError if `other` is not compatible with this shape."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def assert_has_rank(self, rank: int) -> None:
        """Raises ValueError if the rank is known and differs from `rank`."""
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other: TensorShapeLike) -> None:
        """Raises ValueError if both ranks are known and differ."""
        other = TensorShape(other)
        if self._dims is not None and other._dims is not None and len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_is_fully_defined(self) -> None:
        """Raises ValueError if a dimension or the rank is unknown."""
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def with_rank(self, rank: int) -> "TensorShape":
        """This shape, known to have `rank` dimensions.

        Raises:
          ValueError: if the rank is known and differs.
        """
        if self._dims is None:
            return TensorShape([None] * rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank: int) -> "TensorShape":
        """This shape; raises ValueError if its known rank is below `rank`."""
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> "TensorShape":
        """This shape; raises ValueError if its known rank is above `rank`."""
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[int | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    @overload
    def __getitem__(self, key: SupportsIndex) -> int | None: ...

    @overload
    def __getitem__(self, key: slice) -> TensorShape: ...

    def __getitem__(self, key: SupportsIndex | slice) -> int | None | TensorShape:
        if isinstance(key, slice):
            return TensorShape(self.as_list()[key])
        return self.as_list()[key]

    def __eq__(self, other: object) -> bool:
        try:
            other = TensorShape(other)  # type: ignore[arg-type]
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self._dims)

    def __add__(self, other: TensorShapeLike) -> "TensorShape":
        return self.concatenate(other)

    def __radd__(self, other: TensorShapeLike) -> "TensorShape":
        return TensorShape(other).concatenate(self)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def __bool__(self) -> bool:
        return self._dims is not None
