"""A minimal `tf.TensorArray`: `write`, `read`, `stack`, `unstack`, `size`.

Outside a tensor loop it holds its elements as a Python list. A converted
tensor loop (`operators._tensor_loop`) carries it as a fixed buffer
`[capacity, *element_shape]` and its size: the capacity is the array's `size`,
or, with `dynamic_size=True`, its current size plus the loop's trip count when
that is static. In a loop whose trip count is a tensor, a `dynamic_size` array's
capacity is the size a call of the function found it to reach (the trace's
`dynamic_array_capacity`, 0 at first): writes past the capacity are dropped and
the size they reach is an output of the program, and a call that finds another
size runs again with a program traced for that capacity (`function.py`), so
`stack()` has exactly as many rows as TF's. Loops nested in the loop that carries such an array write
into its buffer (`NestedArrayWrites`). An array whose `size` is a tensor only the
call knows (a function's argument) is bounded the same way from its creation: its
capacity is the size a call found. `stack()` of a carried array returns
the whole buffer (rows never written are zeros, as TF's for a fixed size).
"""

from __future__ import annotations

from typing import Any, Callable, SupportsInt

import jax.numpy as jnp
import numpy as np

from tapeshim._src import errors, nest, registry, runtime_checks, static_value, symbolic_dims
from tapeshim._src.dtypes import as_dtype, int32
from tapeshim._src.dynamic_shapes import DynamicShapeNeeded
from tapeshim._src.node import OpKey
from tapeshim._src.ops import array_ops, manip_ops, math_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike, TensorShapeLike


def _reserved(size: Any, element_shape: tuple | None = None, dtype: Any = None) -> Tensor:
    """For an array whose `size` is a symbolic dimension, checked as TF's TensorListReserve checks it when the
    graph runs: its int32 size, or with `element_shape`, its rows (zeros of `dtype`)."""
    rows = None if element_shape is None else (symbolic_dims.at_least_zero(size), *element_shape)

    def kernel() -> tuple:
        value = jnp.asarray(size, jnp.int32)
        runtime_checks.require(
            value >= 0,
            "The num_elements to reserve must be a non negative number, but got {size} [Op:TensorListReserve]",
            size=value,
        )
        return (value,) if rows is None else (jnp.zeros(rows, dtype._np),)

    out = (((), int32),) if rows is None else ((rows, dtype),)
    key = ("TensorListReserve", size) if rows is None else ("TensorListReserve", size, rows, dtype.name)
    return registry.record(kernel, OpKey(*key), (), out, [])[0]


def _symbolic(value: Any) -> bool:
    trace = _thread_state.trace
    return trace is not None and isinstance(value, Tensor) and trace.is_symbolic(value)


class TensorArray:
    """A list of same-shaped tensors that converted loops can write to, as `tf.TensorArray`."""

    def __init__(
        self,
        dtype: DTypeLike,
        size: SupportsInt | None = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Any = None,
        flow: Any = None,
        infer_shape: bool = True,
        element_shape: TensorShapeLike = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        del clear_after_read, tensor_array_name, handle, flow, colocate_with_first_write_call, name
        self._dtype = as_dtype(dtype)
        # Without inferring shapes (`infer_shape=False`), elements may differ in shape (for `concat`), as TF's.
        self._infer_shape = bool(infer_shape) or element_shape is not None
        self._dynamic_size = bool(dynamic_size)
        self._element_shape = None if element_shape is None else tuple(element_shape)
        self._buffer: Tensor | None = None  # loop mode
        self._bounded = -1  # a dynamic array's capacity ordinal in the trace, once bounded by it (see module doc)
        self._in_open_loop = False  # carried by a tensor loop whose body is being traced (`ArraysInLoop.arrays`)
        self._capacity: Any  # its rows (Python mode), or its buffer's, or a symbolic size known per call
        self._rows: list[Tensor | None] | None  # Python mode: one row (or None, not written) per element
        self._size: Any  # an int in Python mode, else an int32 tensor
        # (`size=tf.shape(x)[0]` inside tapeshim.function is known while tracing: H5)
        folded = 0 if size is None else array_ops.folded_int(size)
        if isinstance(folded, Tensor) and _symbolic(folded):
            # a size only the call knows (a tensor argument's value): a buffer whose capacity is the size a call
            # found it to have, checked on every call as a dynamic array's in a tensor loop (see module doc)
            trace = _thread_state.trace
            self._bounded, self._capacity = trace.dynamic_array_capacity(0)
            self._rows, self._size = None, math_ops.cast(folded, int32)
            trace.dynamic_array_sizes.append((self._bounded, math_ops.maximum(self._size, 0), self._capacity))
            return
        if symbolic_dims.is_symbolic(folded) and not self._dynamic_size:
            # a size known per call (a trace for every size): the array is a buffer from its first element on
            self._capacity = folded
            self._rows = None
            self._size = _reserved(folded)
            return
        self._capacity = int(folded)
        if self._capacity < 0 and _thread_state.trace is not None:  # (TF's eager TensorArray takes it)
            raise errors.invalid_argument(
                f"The num_elements to reserve must be a non negative number, but got {self._capacity}",
                "TensorListReserve",
            )
        self._rows = [None] * self._capacity  # Python mode
        self._size = self._capacity

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> Any:
        return TensorShape(self._element_shape)

    @property
    def _row_list(self) -> list[Tensor | None]:
        """The rows of an array in Python mode (one without a buffer)."""
        assert self._rows is not None, "a TensorArray holds either rows or a buffer"
        return self._rows

    def _copy(self) -> "TensorArray":
        new = object.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        if self._rows is not None:
            new._rows = list(self._rows)
        return new

    def _check(self, value: Tensor) -> None:
        if value._dtype != self._dtype:
            raise TypeError(
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype {value._dtype.name}."
            )
        if self._element_shape is not None and tuple(value._shape) != self._element_shape:
            raise ValueError(f"Incompatible shapes: {list(self._element_shape)} vs. {list(value._shape)}")

    def write(self, index: Any, value: TensorLike, name: str | None = None) -> "TensorArray":
        """A new array with `value` at `index`."""
        if isinstance(value, Tensor) and value._dtype != self._dtype and _thread_state.trace is None:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype {value._dtype.name} ",
            )
        value = convert_to_tensor(value, dtype=self._dtype)
        new = self._copy()
        if not self._infer_shape and self._buffer is None and self._rows is not None and not _symbolic(index):
            # (elements of any shape: the array's element shape stays unknown, as TF's)
            return new._set_row(index, value)
        self._check(value)
        new._element_shape = tuple(value._shape)
        if _symbolic(index) and self._buffer is None:  # a loop's first trace learns the element shape
            return new  # (see operators._tensor_loop)
        if self._rows is None and self._buffer is None:  # a size known per call: its first element makes it a buffer
            new._buffer = _reserved(self._capacity, tuple(value._shape), self._dtype)
        buffer = new._buffer
        if buffer is not None:
            index = math_ops.cast(index, int32)
            if self._bounded >= 0:  # a write past the capacity is dropped (the call runs again, see module doc)
                new._buffer = array_ops.where(self._row_mask(buffer, index), value[None], buffer)
            else:
                new._buffer = manip_ops.tensor_scatter_nd_update(buffer, index[None, None], value[None])
            new._size = math_ops.maximum(self._size, index + 1)
            return new
        return new._set_row(index, value)

    def _set_row(self, index: Any, value: Tensor) -> "TensorArray":
        """This array (a new one, holding rows) with `value` at `index`."""
        rows = self._row_list
        position = int(index)
        if position < 0:
            raise errors.OutOfRangeError(None, None, f"Writing to negative indices (index {position}) is not allowed.")
        if position >= len(rows):
            if not self._dynamic_size:
                raise errors.OutOfRangeError(
                    None,
                    None,
                    f"Tried to write to index {position} but array is not resizeable and size is: {len(rows)} ",
                )
            rows += [None] * (position + 1 - len(rows))
        rows[position] = value
        self._size = len(rows)
        return self

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at `index`."""
        if self._buffer is not None and self._bounded >= 0:  # a row past the capacity reads as zeros
            mask = self._row_mask(self._buffer, math_ops.cast(index, int32))
            return math_ops.reduce_sum(array_ops.where(mask, self._buffer, array_ops.zeros_like(self._buffer)), 0)
        if self._buffer is not None:
            return array_ops.gather(self._buffer, index)
        if self._rows is None:  # a size known per call, nothing written yet
            return self._zeros_row()
        if _symbolic(index):  # an index known when the function runs (a loop's): a gather from the rows
            return array_ops.gather(self.stack(), index)
        position, rows = int(index), self._row_list
        if position < 0:
            raise errors.OutOfRangeError(
                None, None, f"Reading from negative indices (index {position}) is not allowed."
            )
        if position >= len(rows):
            raise errors.OutOfRangeError(
                None, None, f"Tried to read from index {position} but array size is: {len(rows)}"
            )
        row = rows[position]
        return row if row is not None else self._zeros_row()

    @staticmethod
    def _row_mask(buffer: Tensor, index: Tensor) -> Tensor:
        """`[capacity, 1, ...]` booleans: True at row `index` of `buffer`."""
        capacity = buffer._shape[0]
        rows = array_ops.range(0, capacity, 1, dtype=int32)
        return array_ops.reshape(math_ops.equal(rows, index), (capacity,) + (1,) * len(buffer._shape[1:]))

    def _zeros_row(self) -> Tensor:
        return array_ops.zeros(self._element_shape or (), self._dtype)

    def stack(self, name: str | None = None) -> Tensor:
        """The elements stacked on a new first axis."""
        if self._buffer is not None:
            return self._buffer
        if self._rows is None:  # a size known per call, nothing written yet
            return _reserved(self._capacity, self._element_shape or (), self._dtype)
        if not self._row_list:
            return array_ops.zeros((0,) + (self._element_shape or ()), self._dtype)
        return array_ops.stack([r if r is not None else self._zeros_row() for r in self._row_list])

    def unstack(self, value: TensorLike, name: str | None = None) -> "TensorArray":
        """A new array whose elements are the rows of `value`."""
        value = convert_to_tensor(value, dtype=self._dtype)
        new = self._copy()
        new._element_shape = tuple(value._shape[1:])
        if value._shape and (self._rows is None or symbolic_dims.is_symbolic(value._shape[0])):
            # rows known per call (a trace for every size): the value is the buffer
            new._buffer, new._rows = value, None
            new._size = array_ops.shape(value, out_type=int32)[0]
            return new
        new._buffer = None
        new._rows = list(array_ops.unstack(value))
        new._size = len(new._rows)
        return new

    def gather(self, indices: TensorLike, name: str | None = None) -> Tensor:
        """The elements at `indices`, stacked on a new first axis."""
        return array_ops.gather(self.stack(), indices)

    def concat(self, name: str | None = None) -> Tensor:
        """The elements concatenated along their first axis (their first sizes may differ)."""
        if self._rows is not None and self._buffer is None:
            rows = [r if r is not None else self._zeros_row() for r in self._row_list]
            if not rows:
                return array_ops.zeros((0,) + tuple((self._element_shape or (0,))[1:]), self._dtype)
            return array_ops.concat(rows, 0)
        stacked = self.stack()
        return array_ops.reshape(stacked, (-1,) + tuple(stacked._shape[2:]))

    def scatter(self, indices: TensorLike, value: TensorLike, name: str | None = None) -> "TensorArray":
        """A new array with the rows of `value` written at `indices`."""
        value = convert_to_tensor(value, dtype=self._dtype)
        known = static_value.known_value(convert_to_tensor(indices))
        if known is None or self._buffer is not None or self._rows is None:  # indices known when the call runs
            new = self._copy()
            new._element_shape = tuple(value._shape[1:])
            if new._buffer is None:  # (the rows so far, unwritten ones zeros, as one buffer)
                new._buffer, new._rows = new.stack(), None
            where = array_ops.expand_dims(math_ops.cast(indices, int32), -1)
            new._buffer = manip_ops.tensor_scatter_nd_update(new._buffer, where, value)
            new._size = math_ops.maximum(new._size, math_ops.reduce_max(math_ops.cast(indices, int32)) + 1)
            return new
        new = self
        for row, index in enumerate(np.asarray(known).reshape(-1).tolist()):
            new = new.write(int(index), value[row])
        return new

    def split(self, value: TensorLike, lengths: TensorLike, name: str | None = None) -> "TensorArray":
        """A new array whose elements are consecutive pieces of `value` of the given `lengths`."""
        value = convert_to_tensor(value, dtype=self._dtype)
        sizes = [int(n) for n in np.asarray(convert_to_tensor(lengths).numpy()).reshape(-1)]
        if sum(sizes) != value._shape[0]:
            raise errors.invalid_argument(
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is {sum(sizes)} and "
                f"value's shape is: [{','.join(map(str, value._shape))}]",
                "TensorArraySplitV3",
            )
        new = self._copy()
        new._buffer = None
        pieces, start = [], 0
        for n in sizes:
            pieces.append(value[start : start + n])
            start += n
        new._rows = list(pieces)
        new._size = len(pieces)
        if len(set(sizes)) == 1:
            new._element_shape = (sizes[0], *value._shape[1:]) if sizes else None
        return new

    def identity(self) -> "TensorArray":
        """The same array (TF's identity of its handle)."""
        return self._copy()

    def close(self, name: str | None = None) -> None:
        """Nothing to release: the array's rows are tensors."""

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements, as an int32 tensor."""
        return convert_to_tensor(self._size, dtype=int32)

    # -- a converted tensor loop carries the array as (buffer, size) -------------------------
    def loop_carry(self, steps: int | None) -> tuple:
        """The (buffer, size) a tensor loop carries, with room for `steps` more writes (`None`: a trip count
        known when the function runs, or a loop that may stop early)."""
        if self._buffer is not None and self._in_open_loop and self._dynamic_size:
            # A loop nested in the loop that carries the array: the outer loop's capacity, the size a call
            # found, serves the writes of both (a buffer grown in the outer loop's body would change shape).
            if self._bounded < 0:
                raise NestedArrayWrites()
            return self._buffer, convert_to_tensor(self._size, dtype=int32)
        if self._buffer is not None:
            buffer = self._buffer
            if self._dynamic_size and not symbolic_dims.is_symbolic(buffer._shape[0]):
                # (a buffer from an earlier loop, the dataset loop's run of full batches before the last one:
                # room for this loop's writes too)
                current = int(buffer._shape[0])
                if steps is None:
                    self._bounded, capacity = _thread_state.trace.dynamic_array_capacity(current)
                else:
                    self._bounded, capacity = -1, current + steps
                if capacity > current:
                    padding = array_ops.zeros((capacity - current,) + tuple(buffer._shape[1:]), self._dtype)
                    buffer = array_ops.concat([buffer, padding], 0)
            return buffer, convert_to_tensor(self._size, dtype=int32)
        if self._element_shape is None:
            raise ValueError(
                "The element shape of a TensorArray written in a tensor loop must be known: pass "
                "element_shape= or write an element before the loop."
            )
        if self._rows is None:  # a size known per call, nothing written yet
            return _reserved(self._capacity, self._element_shape, self._dtype), self._size
        capacity = len(self._row_list)
        bounded = -1
        if self._dynamic_size:
            if steps is None:  # a tensor trip count: the capacity a call found (see the module doc)
                bounded, capacity = _thread_state.trace.dynamic_array_capacity(capacity)
            else:
                capacity += steps
        rows = [r if r is not None else self._zeros_row() for r in self._row_list]
        rows += [self._zeros_row()] * (capacity - len(rows))
        rows = rows[:capacity]
        buffer = array_ops.stack(rows) if rows else array_ops.zeros((0,) + self._element_shape, self._dtype)
        self._bounded = bounded
        return buffer, convert_to_tensor(len(self._row_list), dtype=int32)

    def carried(self) -> tuple:
        """The (buffer, size) of an array a tensor loop's body returns (its buffer as carried, not grown)."""
        if self._buffer is not None:
            return self._buffer, convert_to_tensor(self._size, dtype=int32)
        return self.loop_carry(None)

    def from_loop_carry(self, carry: tuple) -> "TensorArray":
        """This array, in loop mode, holding a loop's carried (buffer, size)."""
        new = self._copy()
        new._rows = None
        new._buffer, new._size = carry
        new._element_shape = tuple(carry[0]._shape[1:])
        return new

    def report_size(self) -> None:
        """After a tensor loop: a bounded array's size becomes an output the call checks (see module doc)."""
        if self._bounded >= 0 and self._buffer is not None:
            _thread_state.trace.dynamic_array_sizes.append((self._bounded, self._size, self._buffer._shape[0]))


class NestedArrayWrites(Exception):
    """A loop nested in a loop that carries a `dynamic_size` array with a capacity of its trip count writes the
    array: the outer loop carries it again, bounded by the size a call finds (`operators._tensor_loop`)."""


def branch_carries(name: str, main: TensorArray, other: TensorArray) -> tuple[Any, Any, Any]:
    """A TensorArray that the two branches of a tensor `if` leave different, as cond outputs.

    Returns each branch's tensors (a structure of the same shapes in both) and a
    function that makes the array after the `if` from the cond's outputs of them.
    Arrays holding rows (outside a tensor loop) are rows chosen one by one; arrays
    holding a buffer (carried by a loop, or sized per call) are their buffer and size.

    Raises:
      TypeError: the branches' arrays have different dtypes.
      DynamicShapeNeeded: they hold different numbers of elements, or elements of different shapes (TF's
        result has an unknown shape).
    """
    if main._dtype != other._dtype:
        raise TypeError(
            f"'{name}' has dtype {main._dtype.name} in the main branch, but dtype {other._dtype.name} in the else "
            "branch"
        )
    element_shape = main._element_shape if main._element_shape is not None else other._element_shape
    if main._element_shape is not None and other._element_shape not in (None, main._element_shape):
        raise DynamicShapeNeeded(
            f"'{name}' is a TensorArray of elements of shape {main._element_shape} in the main branch, but of "
            f"shape {other._element_shape} in the else branch of an if statement on a tensor"
        )
    if main._buffer is None and other._buffer is None and main._rows is not None and other._rows is not None:
        if len(main._rows) != len(other._rows):
            raise DynamicShapeNeeded(
                f"'{name}' is a TensorArray of {len(main._rows)} elements in the main branch, but of "
                f"{len(other._rows)} in the else branch of an if statement on a tensor"
            )
        written = [i for i, rows in enumerate(zip(main._rows, other._rows)) if rows != (None, None)]

        def rows_of(array: TensorArray) -> tuple:
            zeros = array_ops.zeros(element_shape or (), array._dtype)
            return tuple(array._row_list[i] if array._row_list[i] is not None else zeros for i in written)

        def rows_after(rows: tuple) -> TensorArray:
            result = main._copy()
            result._element_shape = element_shape
            for i, row in zip(written, rows):
                result._row_list[i] = row
            return result

        return rows_of(main), rows_of(other), rows_after
    buffers = [_buffer_of(array, element_shape) for array in (main, other)]
    if buffers[0][0]._shape != buffers[1][0]._shape:
        raise DynamicShapeNeeded(
            f"'{name}' is a TensorArray of shape {tuple(buffers[0][0]._shape)} in the main branch, but of shape "
            f"{tuple(buffers[1][0]._shape)} in the else branch of an if statement on a tensor"
        )
    template = main if main._buffer is not None else other
    return buffers[0], buffers[1], lambda carry: template.from_loop_carry(tuple(carry))


def _buffer_of(array: TensorArray, element_shape: tuple | None) -> tuple[Tensor, Tensor]:
    """An array's elements as one buffer, and its size (for an `if` whose other branch leaves a buffer)."""
    if array._buffer is not None:
        return array._buffer, convert_to_tensor(array._size, dtype=int32)
    if array._rows is None:  # a size known per call, nothing written yet
        return _reserved(array._capacity, element_shape or (), array._dtype), array._size
    stacked = array._copy()
    stacked._element_shape = element_shape
    return stacked.stack(), convert_to_tensor(len(array._row_list), dtype=int32)


class ArraysInLoop:
    """The TensorArrays in a loop variable (or in an explicit `tf.while_loop`'s loop variables, as TF's
    TensorArray guide passes one), carried through the traced loop as (buffer, size) each (`loop_carry`).

    `initial` is the variable with each array replaced by its carry; `arrays(carried)` makes the arrays
    again (for the loop's test and body), `carries(result)` the body's result's carries and
    `final(carried)` the variable after the loop. An array whose element shape is unknown learns it from
    `probe()`, the variable after one trace of the body; `steps` is as for `loop_carry`.
    """

    def __init__(self, variable: Any, probe: Callable[[], Any] | None, steps: int | None = None) -> None:
        self.structure = variable
        self.leaves = nest.flatten(variable)
        self.positions = {i for i, leaf in enumerate(self.leaves) if isinstance(leaf, TensorArray)}
        if probe is not None and any(self.leaves[i]._element_shape is None for i in self.positions):
            probed = nest.flatten(probe())
            for i in self.positions:
                if self.leaves[i]._element_shape is None and i < len(probed) and isinstance(probed[i], TensorArray):
                    self.leaves[i] = self.leaves[i]._copy()
                    self.leaves[i]._element_shape = probed[i]._element_shape
        self.initial = self._packed(
            [leaf.loop_carry(steps) if i in self.positions else leaf for i, leaf in enumerate(self.leaves)]
        )

    def _packed(self, leaves: list) -> Any:
        return nest.pack_sequence_as(self.structure, leaves)

    def arrays(self, carried: Any, in_loop: bool = True) -> Any:
        """The variable with arrays again, from its carried form: inside the loop (its test and body), or after
        it (`in_loop=False`, as the arrays were before it)."""
        flat, out, k = nest.flatten(carried), [], 0
        for i, leaf in enumerate(self.leaves):
            if i in self.positions:
                array = leaf.from_loop_carry((flat[k], flat[k + 1]))
                array._in_open_loop = in_loop or leaf._in_open_loop
                out.append(array)
                k += 2
            else:
                out.append(flat[k])
                k += 1
        return self._packed(out)

    def carries(self, result: Any) -> Any:
        """The body's `result` for the variable with each array as its carry (as given where it differs)."""
        flat = nest.flatten(result)
        if len(flat) != len(self.leaves):
            return result  # (the loop's structure check names the variable)
        return nest.pack_sequence_as(
            result,
            [v.carried() if i in self.positions and isinstance(v, TensorArray) else v for i, v in enumerate(flat)],
        )

    def final(self, carried: Any) -> Any:
        """The variable after the loop: its arrays' sizes are checked as a tensor loop's are (`report_size`)."""
        result = self.arrays(carried, in_loop=False)
        for i, leaf in enumerate(nest.flatten(result)):
            if i in self.positions and not leaf._in_open_loop:  # (else the loop around this one reports it)
                leaf.report_size()
        return result
