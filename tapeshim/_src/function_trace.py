"""The recorder of a `tapeshim.function` trace: every op, variable reads and assignments, per-call inputs."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from types import FrameType
from typing import Any, Callable, Iterator

import jax
import numpy as np
from jax.experimental import io_callback

from tapeshim._src import errors, registry
from tapeshim._src.dtypes import DType
from tapeshim._src.dynamic_shapes import ValueNeededByAnOp
from tapeshim._src.function_host_inputs import HostInputs
from tapeshim._src.node import Node, OpKey
from tapeshim._src.ops import math_ops, random_ops
from tapeshim._src.state import _thread_state, next_tensor_id
from tapeshim._src.tape import Recorder
from tapeshim._src.tensor import LeakedGraphTensor, Tensor, concrete
from tapeshim._src.tf_logging import caller_site
from tapeshim._src.variable import Variable

LEAKED_TENSOR_KEY = OpKey("LeakedGraphTensor")


_OUT_OF_SCOPE = (
    "A tensor defined inside a tf.function is out of scope and cannot be used here. Use return values, explicit "
    "Python locals or TensorFlow collections to access it.\nPlease see "
    "https://www.tensorflow.org/guide/function#all_outputs_of_a_tffunction_must_be_return_values for more "
    "information."
)


_OPS_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops") + os.sep
_DATASET_MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dataset")  # (dataset*.py)
_RAGGED_MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ragged")  # (ragged*.py)
_VALUE_ACCESSORS = {os.path.abspath(__file__), os.path.join(os.path.dirname(os.path.abspath(__file__)), "tensor.py")}


def _asked_by_an_op() -> bool:
    """Whether the code that asked for a tensor's value (past `Tensor`'s accessors) is an op's (`ops/`) or a
    dataset's (`dataset*.py`) or a ragged op's (`ragged*.py`, whose row partitions are computed on the host): a
    size or index argument, a data-dependent result, a dataset made from a tensor (`tf.data.Dataset.range(n)`),
    as opposed to the user's `int(x)` or `if x:`."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _VALUE_ACCESSORS:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(
        (_OPS_DIRECTORY, _DATASET_MODULES, _RAGGED_MODULES)
    )


def _leaked_tensor_error() -> Exception:
    """TF's error for what asked a leaked graph tensor's value: the `Tensor` method that asked, if any.

    `.numpy()` is an AttributeError (a graph tensor has none), `float()`/`int()` a TypeError,
    `np.asarray` and `tf.constant` a NotImplementedError, and an op using it TF's out-of-scope TypeError.
    """
    value_code = Tensor.__dict__["value"].fget.__code__
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code is not value_code:
        frame = frame.f_back
    callers: list[str] = []
    while frame is not None and frame.f_back is not None and len(callers) < 2:
        frame = frame.f_back
        callers.append(frame.f_code.co_name)
    asker = (
        callers[1]
        if callers[:1] == ["numpy"] and len(callers) > 1 and callers[1].startswith("__")
        else (callers[0] if callers else "")
    )
    if asker == "numpy":
        return AttributeError("'SymbolicTensor' object has no attribute 'numpy'")
    if asker in ("__float__", "__int__", "__index__", "__bool__"):
        return TypeError("float() argument must be a string or a real number, not 'SymbolicTensor'")
    if asker in ("__str__", "__repr__"):
        return LeakedGraphTensor(_OUT_OF_SCOPE)  # (printed as a graph tensor, as TF prints one)
    if asker in ("__array__", "constant"):
        return NotImplementedError(
            "Cannot convert a symbolic tf.Tensor to a numpy array. This error may indicate that you're trying to "
            "pass a Tensor to a NumPy call, which is not supported."
        )
    return TypeError(_OUT_OF_SCOPE)


def _use_of_leaked_tensor(*arrays: jax.Array) -> tuple:
    """The op behind a finished trace's placeholders: evaluating a leaked graph tensor fails as in TF."""
    raise _leaked_tensor_error()


class _Everything(frozenset):
    """The tracked set of a function trace: it records every op."""

    def __contains__(self, item: object) -> bool:
        return True

    def add(self, item: object) -> None:
        pass

    def update(self, *items: object) -> None:
        pass


_EVERYTHING = _Everything()


class FunctionTrace(Recorder):
    """Records a `tapeshim.function` body: every op, variable reads and assignments."""

    def __init__(self, allow_variable_creation: bool, array_capacities: tuple = ()) -> None:
        super().__init__(watch_accessed_variables=False)
        # `dynamic_size` TensorArrays in loops with a tensor trip count (autograph/tensor_array.py): the
        # capacities a call found them to need, as (ordinal, capacity) pairs, and the sizes they reach in this trace.
        self._array_capacities = array_capacities
        self._arrays_bounded = 0
        self.dynamic_array_sizes: list[tuple[int, Tensor, int]] = []
        self._tracked = _EVERYTHING  # type: ignore[assignment]  # a frozenset that holds every id
        self._produced = _EVERYTHING  # type: ignore[assignment]
        self._recording = True
        self.allow_variable_creation = allow_variable_creation
        self.created_variables = False
        self.placeholders: set[int] = set()
        self.placeholder_names: dict[int, str] = {}
        self._placeholder_tensors: list[Tensor] = []
        self.branch_depth = 0  # > 0 while a tf.cond branch or tf.while_loop body is traced
        self.first_tid = next_tensor_id()  # tensors made before the trace began are captures
        self.var_leaves: dict[int, Variable] = {}
        self.pending: dict[int, tuple[Variable, Tensor]] = {}
        self._pending_reads: dict[int, tuple[Tensor, Tensor]] = {}  # variable id -> (pending value, its read)
        self.effects: list[Tensor] = []
        self.random_leaves: dict[int, Callable[[], jax.Array]] = {}
        self.host_inputs = HostInputs(self)
        self._forcing_allowed = 0
        self.symbolic = False  # whether its placeholders have symbolic dimensions (`function_symbolic`)
        # Whether a custom gradient's grad_fn, differentiated in this trace, ran random ops without a key of its
        # own: they would be constants of the program, so the function traces again (`custom_gradient`).
        self.grad_fn_draws = False

    def dynamic_array_capacity(self, current: int) -> tuple[int, int]:
        """A new bounded `dynamic_size` TensorArray: its ordinal and capacity (at least `current`)."""
        ordinal = self._arrays_bounded
        self._arrays_bounded += 1
        hint = dict(self._array_capacities).get(ordinal, 0)
        return ordinal, max(current, hint)

    def random_key(self, seed: Any) -> Tensor:
        """A placeholder for a random op's key: a fresh key is drawn on every call of the function."""
        return self.per_call_key(functools.partial(random_ops._next_key, seed))

    def per_call_key(self, draw: Callable[[], jax.Array]) -> Tensor:
        """A placeholder for a PRNG key that `draw()` makes anew on every call (a seed stream or a
        `tf.random.Generator` advancing its state)."""
        key = draw()
        if self.branch_depth:
            # Inside a loop body or branch: a fresh key each time it runs (an ordered host callback).
            struct = jax.ShapeDtypeStruct(key.shape, key.dtype)

            def draw_op() -> tuple:
                return (io_callback(lambda: np.asarray(draw()), struct, ordered=True),)

            return registry.record(
                draw_op, OpKey("RandomKey", id(draw_op)), (), ((tuple(key.shape), concrete(key).dtype),), []
            )[0]
        tensor = concrete(key)
        self.placeholders.add(tensor._tid)
        self.random_leaves[tensor._tid] = draw
        return tensor

    def retire(self) -> None:
        """Ends the trace: its tensors become graph tensors that cannot be evaluated any more.

        A tensor leaked out of the function (stored in a global) then raises TF's
        `AttributeError` on `.numpy()`, and TF's `TypeError` when another function
        captures it, instead of silently computing with the trace-time values.
        """
        for tensor in self._placeholder_tensors:
            tensor._value = None
            tensor._node = Node(_use_of_leaked_tensor, LEAKED_TENSOR_KEY, (), (tensor._tid,))
        self._placeholder_tensors = []

    def _variable_read(self, variable: Variable, tensor: Tensor) -> None:
        pass  # `read_variable` made the read tensor

    def _clear(self) -> None:
        pass

    def placeholder(self, value: jax.Array | None, shape: tuple, dtype: DType, name: str | None = None) -> Tensor:
        """A tensor whose value is only known when the function runs (`name`: TF's graph name for it; `value`:
        its trace-time stand-in, None for symbolic dimensions)."""
        tensor = Tensor(value, shape, dtype)
        self.placeholders.add(tensor._tid)
        self._placeholder_tensors.append(tensor)
        if name is not None:
            self.placeholder_names[tensor._tid] = name
        return tensor

    def placeholder_name(self, tid: int) -> str:
        """TF's graph name of a placeholder: the argument's name (`x`), else `Placeholder`."""
        return self.placeholder_names.get(tid, "Placeholder")

    def read_variable(self, variable: Variable) -> Tensor:
        """A read of `variable`: its pending new value, or a placeholder for its value at call time."""
        pending = self.pending.get(id(variable))
        if pending is None:
            tensor = self.placeholder(variable._value, variable._shape, variable._dtype)
            self.var_leaves[tensor._tid] = variable
            return tensor
        made = self._pending_reads.get(id(variable))
        return made[1] if made is not None and made[0] is pending[1] else self._read_of(variable, pending[1])

    def _read_of(self, variable: Variable, value: Tensor) -> Tensor:
        """The read of `variable` holding the pending `value`, made where the value is set (`assign`): a read
        inside a later `tf.cond` branch or loop body is then one of the construct's inputs, which tapes see,
        not a tensor inside it."""
        if tuple(value._shape) != tuple(variable._shape):  # a variable of unknown dimensions given another shape
            read = math_ops.stop_gradient(value)
            self._pending_reads[id(variable)] = (value, read)
            return read
        tensor = self.placeholder(variable._value, variable._shape, variable._dtype)
        self.var_leaves[tensor._tid] = variable
        # State stops gradients: the read has the assigned value, but its gradient goes to the
        # variable (as a read of it), not through the assignment.
        stop = math_ops.stop_gradient
        read = math_ops.add(stop(value), math_ops.subtract(tensor, stop(tensor)))
        self._pending_reads[id(variable)] = (value, read)
        return read

    def assign(self, variable: Variable, tensor: Tensor) -> None:
        self.pending[id(variable)] = (variable, tensor)
        self._read_of(variable, tensor)

    def on_variable_created(self) -> None:
        self.created_variables = True
        if not self.allow_variable_creation:
            raise ValueError(
                "tf.function only supports singleton tf.Variables created on the first call. Make sure the "
                "tf.Variable is only created once or created outside tf.function. See "
                "https://www.tensorflow.org/guide/function#creating_tfvariables for more information."
            )

    def concrete_value(self, tensor: Tensor) -> jax.Array:
        """The trace-time value of `tensor` (for a variable's initial value)."""
        self._forcing_allowed += 1
        try:
            return tensor.value
        finally:
            self._forcing_allowed -= 1

    def is_symbolic(self, tensor: Tensor) -> bool:
        return tensor._value is None or tensor._tid in self.placeholders

    def check_concrete(self, tensor: Tensor) -> None:
        if not self._forcing_allowed and self.is_symbolic(tensor):
            self.refuse_value(tensor)

    def refuse_value(self, tensor: Tensor) -> None:
        if self._forcing_allowed:
            return
        filename, line = caller_site()
        message = (
            f"Using a symbolic `tf.Tensor` as a Python value (bool, float, int, iteration or .numpy()) is not "
            f"allowed inside tapeshim.function ({filename}, line {line}). The value is only known when the "
            "compiled function runs. Use `tf.cond` instead of a Python `if` and `tf.while_loop` instead of a "
            "Python `while` where AutoGraph does not convert them (autograph=False, do_not_convert, "
            "functions given directly to tf.scan or tf.vectorized_map, code without source), or compute the "
            "value outside the function."
        )
        if _asked_by_an_op():  # (TF's graph computes it with an unknown shape: the function runs eagerly)
            raise ValueNeededByAnOp(message, f"an op needs the value of a tensor at {filename}, line {line}")
        raise errors.OperatorNotAllowedInGraphError(message)


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Lifts the code inside out of a function trace and every tape, as `tf.init_scope`.

    Inside a `tapeshim.function` trace, ops in the block run eagerly once, while
    tracing (their results are constants of the trace), and variable assignments
    take effect at once; outside one, the block runs as usual without tapes.
    """
    saved = (_thread_state.recorders, _thread_state.trace)
    _thread_state.recorders, _thread_state.trace = [], None
    try:
        yield
    finally:
        _thread_state.recorders, _thread_state.trace = saved
