"""`tf.data` iterators and optionals: `iter(dataset)`, `next`, `get_next`, `get_next_as_optional`.

An iterator is host state. Outside a `tapeshim.function`, `next(iterator)` pulls
the next element. Inside a trace, a pull records a *per-call input* instead (see
`function_host_inputs`): the trace sees the upcoming element as placeholders
(peeked, not consumed), and every call of the compiled function pulls fresh
elements on the host and passes them to the program, so the iterator advances on
every call, as TF's iterator resource does.
"""

from __future__ import annotations

import collections
from typing import Any
from typing import Iterator as PyIterator

import numpy as np

from tapeshim._src import errors, nest
from tapeshim._src.dataset_elements import _spec, _to_tensors
from tapeshim._src.saved_position import SavedPosition
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor

END_OF_SEQUENCE = "End of sequence"


class _HostPull:
    """Runs dataset code on the host: no tape records it and no function trace captures it."""

    def __enter__(self) -> None:
        self._saved = (_thread_state.recorders, _thread_state.trace)
        _thread_state.recorders, _thread_state.trace = [], None

    def __exit__(self, *exc: Any) -> None:
        _thread_state.recorders, _thread_state.trace = self._saved


class OwnedIterator:
    """An iterator over a `tf.data.Dataset`, as `tf.data.Iterator` (made by `iter(dataset)`).

    Args:
      dataset: the dataset to iterate over.
    """

    def __init__(self, dataset: Any) -> None:
        self._dataset = dataset
        self._source: PyIterator[Any] | None = None
        self._buffer: collections.deque = collections.deque()  # peeked, not yet consumed elements
        self._exhausted = False
        # An iterator made inside a function trace (`for x in dataset`, `next(iter(dataset))`) is read
        # while tracing, its elements becoming constants of the trace: TF makes it anew on every call,
        # so every call sees the same elements.
        self._unrolled = _thread_state.trace is not None
        self._consumed = 0  # elements taken since the pass began (a checkpoint saves it)
        self._position = SavedPosition("iterator_position")  # what a checkpoint saves (`checkpoint_variables`)

    @property
    def element_spec(self) -> Any:
        """The structure, shapes and dtypes of one element."""
        return self._dataset.element_spec

    def __iter__(self) -> "OwnedIterator":
        return self

    # -- host side -------------------------------------------------------------
    def checkpoint_variables(self) -> dict[str, Any]:
        """The iterator's state for a `tf.train.Checkpoint`: the number of elements it has produced.

        A checkpoint asks for it when it saves and when it restores; after a restore the iterator starts its
        pass again and skips the saved number of elements, so it goes on where it was when saved (TF saves
        its iterator's buffers instead: a shuffle with a seed gives the same order, one without a seed
        another order, as a new pass does).
        """
        if self._position.changed():  # restored, not pulled from since
            self._restore_position()
        return {"position": self._position.variable(np.int64(self._consumed))}

    def _restore_position(self) -> None:
        """Goes to the position a checkpoint restored (see `checkpoint_variables`)."""
        target = int(self._position.take())
        self._source, self._exhausted, self._consumed = None, False, 0
        self._buffer.clear()
        self.consume(target)

    def peek(self, index: int) -> Any:
        """The element `index` places ahead of the next one, without consuming it; None past the end."""
        if self._position.changed():
            self._restore_position()
        while len(self._buffer) <= index and not self._exhausted:
            with _HostPull():
                if self._source is None:
                    self._source = self._dataset._elements()
                try:
                    element = next(self._source)
                except StopIteration:
                    self._exhausted = True
                    break
                # Computed now, on the host: a trace must see values, not lazy graph nodes.
                element = nest.map_structure(_computed, element)
            self._buffer.append(element)
        return self._buffer[index] if index < len(self._buffer) else None

    def consume(self, count: int) -> list:
        """Removes and returns up to `count` next elements."""
        if count <= 0:
            return []
        self.peek(count - 1)
        taken = [self._buffer.popleft() for _ in range(min(count, len(self._buffer)))]
        self._consumed += len(taken)
        return taken

    def put_back(self, elements: list) -> None:
        """Makes `elements` (consumed last, in order) the next ones again."""
        self._buffer.extendleft(reversed(elements))
        self._consumed -= len(elements)

    def _pull(self, optional: bool) -> Any:
        trace = _thread_state.trace
        if trace is not None and not self._unrolled:
            if any(getattr(spec, "ragged_rank", 0) > 0 for spec in nest.flatten(self.element_spec)):
                raise NotImplementedError(
                    "tapeshim.function cannot pull elements with RaggedTensor components from an iterator made "
                    "outside the function (its per-call inputs are dense tensors): iterate the dataset inside the "
                    "function (`for x in dataset`), or pull the element outside and pass it as an argument."
                )
            return trace.host_inputs.pull(self, optional)
        elements = self.consume(1)
        if optional:
            return Optional(elements[0] if elements else None, self.element_spec)
        return elements[0] if elements else None

    # -- TF's API ----------------------------------------------------------------
    def __next__(self) -> Any:
        element = self._pull(optional=False)
        if element is None:
            raise StopIteration
        return element

    def get_next(self, name: str | None = None) -> Any:
        """The next element; raises `tf.errors.OutOfRangeError` at the end, as TF."""
        element = self._pull(optional=False)
        if element is None:
            raise errors.OutOfRangeError(None, None, f"{END_OF_SEQUENCE} [Op:IteratorGetNext]")
        return element

    def get_next_as_optional(self) -> "Optional":
        """The next element as a `tf.experimental.Optional` (empty at the end)."""
        return self._pull(optional=True)

    def __repr__(self) -> str:
        return f"<tapeshim.data.Iterator element_spec={self.element_spec}>"


def _computed(tensor: Any) -> Any:
    if hasattr(tensor, "_elements"):  # a nested dataset (a `window` component) stays a dataset
        return tensor
    if hasattr(tensor, "nested_row_splits"):  # a RaggedTensor: its flat values computed
        _computed(tensor.flat_values)
        return tensor
    tensor = convert_to_tensor(tensor)
    if tensor._value is None:
        tensor.value  # noqa: B018 - forces the lazy value
    return tensor


class Optional:
    """A value that may be absent, as `tf.experimental.Optional`.

    Args:
      value: the element (a nest of tensors), or None for an empty optional.
      element_spec: the element's structure of `TensorSpec`s.
      has_value_tensor: the presence flag as a boolean tensor (inside a function:
        a per-call input); made from `value` when not given.
    """

    def __init__(
        self, value: Any, element_spec: Any, has_value_tensor: Tensor | None = None, on_get_value: Any = None
    ) -> None:
        self._value = value
        self._element_spec = element_spec
        self._has_value = has_value_tensor
        self._on_get_value = on_get_value

    @staticmethod
    def from_value(value: Any) -> "Optional":
        """An optional holding `value`."""
        value = _to_tensors(value)
        return Optional(value, _spec(value))

    @staticmethod
    def empty(element_spec: Any) -> "Optional":
        """An optional with no value, for elements described by `element_spec`."""
        return Optional(None, element_spec)

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    def has_value(self, name: str | None = None) -> Tensor:
        """A boolean scalar tensor: whether the optional holds a value."""
        if self._has_value is None:
            return convert_to_tensor(self._value is not None)
        return self._has_value

    def get_value(self, name: str | None = None) -> Any:
        """The value; `tf.errors.InvalidArgumentError` when the optional is empty."""
        if self._on_get_value is not None:
            self._on_get_value()  # inside a function: the call checks presence before running
        elif self._value is None:
            raise errors.invalid_argument("The given optional does not have a value.", "OptionalGetValue")
        return self._value
