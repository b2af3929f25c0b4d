"""`TensorShape`: the static shape of a tensor, as TF prints and compares it."""

from __future__ import annotations

from typing import Any, Iterator, Sequence


class TensorShape:
    """The shape of a `Tensor`, `TensorShape([2, 3])`.

    Compares equal to lists and tuples of the same dimensions, indexes to ints,
    and slices to `TensorShape`s. A dimension may be `None` (unknown).
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Sequence[int | None] | None) -> None:
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        else:
            self._dims = tuple(None if d is None else int(d) for d in dims)

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
        if self._dims is None or any(d is None for d in self._dims):
            return None
        total = 1
        for d in self._dims:
            total *= d
        return total

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def is_compatible_with(self, other: Any) -> bool:
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[int | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: Any) -> Any:
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

    def __add__(self, other: Any) -> "TensorShape":
        return TensorShape(self.as_list() + TensorShape(other).as_list())

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
