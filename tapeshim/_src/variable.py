"""`Variable`: mutable state whose reads inside a tape are watched.

Where a variable reads and writes is decided by one function, `variable_scope()`:
eagerly it reads and stores its own value; inside a `tapeshim.function` trace it
reads a placeholder and its writes become the trace's pending assignments; inside
a `state.StatelessScope` (a JAX function being traced) it reads the scope's values
and its writes are collected by the scope.
"""

from __future__ import annotations

import enum
import itertools
from typing import Any, Callable, Protocol, Sequence, TypeVar

import jax
import numpy as np
import numpy.typing as npt

from tapeshim._src import compile_tiers, dtypes, errors, runtime_checks, variable_scatter
from tapeshim._src.ops import array_ops, math_ops
from tapeshim._src.ops.common import enum_name
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import StatelessScope, _thread_state, current_name_scope
from tapeshim._src.tensor import Tensor, TensorOperators, as_jax_array, convert_to_tensor, device_name, numpy_text
from tapeshim._src.typing_aliases import DTypeLike, TensorLike
from tapeshim._src.variable_slices import _VariableSlice

_creation_order = itertools.count()


class VariableAggregation(enum.Enum):
    """How a distributed variable combines the updates of its replicas, as `tf.VariableAggregation`."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized, as `tf.VariableSynchronization`."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


_Enum = TypeVar("_Enum", bound=enum.Enum)


def _as_enum(value: _Enum | str | None, kind: type[_Enum], argument: str) -> _Enum:
    """`value` as a member of `kind` (a member, its name or its Keras lower-case name); None gives the default."""
    if value is None:
        return next(iter(kind))
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and value.upper() in kind.__members__:
        return kind[value.upper()]
    raise ValueError(f"Invalid variable {argument} mode: {value!r}. Expected a tf.{kind.__name__}.")


# Hooks set by `tapeshim._src.distribute` (so this module needs no import of it):
# `placement(array) -> (array, strategy or None)` places a new variable's value under the current
# strategy's scope; `writes(variable, kind)` tells the replica context an assignment ("assign") or an
# update ("update") was recorded inside `strategy.run`.
distribution_hooks: dict[str, Callable[..., Any]] = {}


def _note_write(variable: "Variable", kind: str) -> None:
    hook = distribution_hooks.get("writes")
    if hook is not None:
        hook(variable, kind)


class VariableScope(Protocol):
    """Where a variable reads and writes now: what `variable_scope()` returns."""

    symbolic: bool
    """Whether reads are placeholders without a value (a `tapeshim.function` trace)."""

    def creating(self) -> None:
        """Called first when a variable is created here; raises where creation is not allowed."""
        ...

    def initial_array(self, tensor: Tensor) -> jax.Array:
        """The array a variable created here starts with, for its converted initial value `tensor`."""
        ...

    def read(self, variable: "Variable") -> Tensor:
        """The variable's value here (no tape is told)."""
        ...

    def assign(self, variable: "Variable", tensor: Tensor, kind: str) -> None:
        """Stores `tensor` (already of the variable's dtype and shape); `kind` is "assign" or "update"."""
        ...

    def update(self, variable: "Variable", delta: Tensor, op_name: str) -> None:
        """Adds (`AssignAddVariableOp`) or subtracts (`AssignSubVariableOp`) `delta` to the variable."""
        ...

    def jax_array(self, variable: "Variable") -> jax.Array:
        """The array JAX sees when it converts the variable (`jnp.asarray(v)`)."""
        ...


_update_kernels: dict[tuple, Callable[[jax.Array, jax.Array], jax.Array]] = {}
_UPDATE_KERNELS_SIZE = 1024


def _update_kernel(op_name: str, variable: "Variable") -> Callable[[jax.Array, jax.Array], jax.Array]:
    """The jitted `value + delta` or `value - delta` for the variable's shape and dtype (made on first use: the
    kernel options need JAX started). Its first calls compute on the host (`interpret.py`), until they have paid
    for its compile (`compile_tiers.calls_before_compile`).

    Its operands have the variable's shape and numeric dtype (`Variable._update` checks), so the kernel is `lax`'s
    primitive itself: the first update of a variable of a new shape traced `jnp`'s function, a `jit` of its own
    traced again for the shape (0.75 -> 0.45 ms for that update).
    """
    key = (op_name, variable._shape, variable._dtype)
    kernel = _update_kernels.get(key)
    if kernel is None:
        update = jax.lax.add if op_name == "AssignAddVariableOp" else jax.lax.sub

        def settle(plain: Callable[..., Any]) -> None:
            _update_kernels[key] = plain

        if len(_update_kernels) >= _UPDATE_KERNELS_SIZE:
            _update_kernels.clear()
        kernel = _update_kernels[key] = runtime_checks.jit(update, settle, compile_tiers.kernel_options)
    return kernel


def _computed_update(base: Tensor, delta: Tensor, op_name: str) -> Tensor:
    """`base + delta` (`AssignAddVariableOp`) or `base - delta`, as ops the current trace records."""
    return math_ops.add(base, delta) if op_name == "AssignAddVariableOp" else math_ops.subtract(base, delta)


class _EagerScope:
    """Outside any trace: the variable reads and stores its own value."""

    __slots__ = ()
    symbolic = False

    def creating(self) -> None:
        pass

    def initial_array(self, tensor: Tensor) -> jax.Array:
        return tensor.value

    def read(self, variable: "Variable") -> Tensor:
        return Tensor(variable._value, variable._shape, variable._dtype)

    def assign(self, variable: "Variable", tensor: Tensor, kind: str) -> None:
        variable._value = tensor.value

    def update(self, variable: "Variable", delta: Tensor, op_name: str) -> None:
        variable._value = _update_kernel(op_name, variable)(variable._value, delta.value)

    def jax_array(self, variable: "Variable") -> jax.Array:
        return variable._value


_EAGER = _EagerScope()


class _TraceScope:
    """Inside a `tapeshim.function` trace: reads are placeholders, writes the trace's pending assignments."""

    __slots__ = ("trace",)
    symbolic = True

    def __init__(self, trace: Any) -> None:
        self.trace = trace

    def creating(self) -> None:
        self.trace.on_variable_created()

    def initial_array(self, tensor: Tensor) -> jax.Array:
        return self.trace.concrete_value(tensor)

    def read(self, variable: "Variable") -> Tensor:
        return self.trace.read_variable(variable)

    def assign(self, variable: "Variable", tensor: Tensor, kind: str) -> None:
        _note_write(variable, kind)
        self.trace.assign(variable, tensor)

    def update(self, variable: "Variable", delta: Tensor, op_name: str) -> None:
        self.assign(variable, _computed_update(self.trace.read_variable(variable), delta, op_name), "update")

    def jax_array(self, variable: "Variable") -> jax.Array:
        return variable._value


class _StatelessAccess:
    """Inside a `StatelessScope`: reads its values, and its writes are collected there (when it collects them)."""

    __slots__ = ("scope",)
    symbolic = False

    def __init__(self, scope: StatelessScope) -> None:
        self.scope = scope

    def creating(self) -> None:
        pass

    def initial_array(self, tensor: Tensor) -> jax.Array:
        return tensor.value

    def read(self, variable: "Variable") -> Tensor:
        values = self.scope.values
        if values is not None and id(variable) in values:
            return Tensor(values[id(variable)], variable._shape, variable._dtype)
        return _EAGER.read(variable)

    def assign(self, variable: "Variable", tensor: Tensor, kind: str) -> None:
        scope = self.scope
        if scope.writes is None:  # a custom gradient's function: assignments write the variable
            self._before_write(variable)
            _EAGER.assign(variable, tensor, kind)
            return
        # A Keras call's JAX function: the new value becomes an output of that op.
        assert scope.values is not None, "a StatelessScope that collects writes has values"
        self._before_write(variable)
        scope.values[id(variable)] = tensor.value
        scope.writes[id(variable)] = variable

    def update(self, variable: "Variable", delta: Tensor, op_name: str) -> None:
        if self.scope.writes is None:
            self._before_write(variable)
            _EAGER.update(variable, delta, op_name)
        else:  # the value is an input of the JAX function (`assign` notes it): not a read TF's watcher sees
            self.assign(variable, _computed_update(self.read(variable), delta, op_name), "update")

    def _before_write(self, variable: "Variable") -> None:
        # The scope's collector notes the variables the function writes (inputs of its op) and, in a custom
        # gradient's run on the tensors, the values they had before it wrote them.
        collector = self.scope.collector
        if collector is not None:
            collector.before_write(variable, self.read(variable))

    def jax_array(self, variable: "Variable") -> jax.Array:
        if self.scope.values is None:
            return variable._value
        # Inside a custom gradient's or a Keras call's JAX function: the read is an input of that op.
        value = variable._read_for_op()._value
        assert value is not None, "reads inside a JAX function are never lazy"
        return value


def variable_scope() -> VariableScope:
    """Where variables read and write on this thread now.

    The innermost of: the `tapeshim.function` trace being recorded, the
    `StatelessScope` being traced (entering one hides an outer trace), or eager
    storage.
    """
    state = _thread_state
    if state.trace is not None:
        return _TraceScope(state.trace)
    scope = state.stateless_scope
    if scope is not None:
        return _StatelessAccess(scope)
    return _EAGER


class Variable(TensorOperators):
    """A mutable tensor, as `tf.Variable`.

    Reading a trainable variable inside a `GradientTape` watches it. Each read
    records the value at that moment; a later `assign` does not change what was
    recorded.

    Args:
      initial_value: a Tensor, a value convertible to one, or a callable
        returning one.
      trainable: whether tapes watch the variable automatically (default True).
      name: the variable's name; `name` reads back as `"<name>:0"`.
      dtype: the dtype to convert `initial_value` to.
      shape: accepted for compatibility; must be compatible with the value.
    """

    __array_priority__ = 100  # (NumPy defers to its operators, as to a Tensor's: `np_array + v` is a Tensor)
    __slots__ = (
        "_value",
        "_shape",
        "_declared_shape",
        "_dtype",
        "_trainable",
        "_name",
        "_order",
        "constraint",
        "_aggregation",
        "_synchronization",
        "_strategy",
        "__weakref__",
    )

    def __init__(
        self,
        initial_value: TensorLike | Callable[[], TensorLike] | None = None,
        trainable: bool | None = None,
        validate_shape: bool = True,
        caching_device: str | None = None,
        name: str | None = None,
        variable_def: object = None,
        dtype: DTypeLike | None = None,
        import_scope: str | None = None,
        constraint: Callable | None = None,
        synchronization: VariableSynchronization | str | None = None,
        aggregation: VariableAggregation | str | None = None,
        shape: TensorShape | Sequence[int | None] | None = None,
        experimental_enable_variable_lifting: bool = True,
    ) -> None:
        del validate_shape, caching_device, variable_def, import_scope
        aggregation = _as_enum(aggregation, VariableAggregation, "aggregation")
        synchronization = _as_enum(synchronization, VariableSynchronization, "synchronization")
        if synchronization is VariableSynchronization.ON_READ:
            if trainable:
                raise ValueError(
                    "Synchronization value can be set to VariableSynchronization.ON_READ only for non-trainable "
                    "variables. You have specified trainable=True and synchronization=VariableSynchronization."
                    "ON_READ."
                )
            trainable = False
        del experimental_enable_variable_lifting
        scope = variable_scope()
        scope.creating()
        if initial_value is None:
            raise ValueError("The `initial_value` arg (None) must be specified.")
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Variable):
            initial_value = initial_value._plain_read()
        tensor = convert_to_tensor(initial_value, dtype=dtype)
        if shape is not None and not TensorShape(shape).is_compatible_with(tensor._shape):
            raise ValueError(
                f"The initial value's shape ({TensorShape(tensor._shape)}) is not compatible with "
                f"the explicitly supplied `shape` argument ({TensorShape(shape)})."
            )
        self._value: jax.Array = scope.initial_array(tensor)
        self._shape = tensor._shape
        # A `shape` with unknown dimensions (`TensorShape(None)`, `[None, 3]`): the variable's shape, as TF's, and
        # eagerly its value may take any shape compatible with it.
        declared = None if shape is None else TensorShape(shape)
        self._declared_shape = None if declared is None or declared.is_fully_defined() else declared
        self._dtype = tensor._dtype
        self._trainable = True if trainable is None else bool(trainable)
        self._name = current_name_scope() + (name or "Variable") + ":0"
        self._order = next(_creation_order)
        self.constraint = constraint
        self._aggregation = aggregation
        self._synchronization = synchronization
        self._strategy = None
        placement = distribution_hooks.get("placement")
        if placement is not None:
            self._value, self._strategy = placement(self._value)

    # -- reads ----------------------------------------------------------
    def _current(self) -> Tensor:
        """The value to read now: a function trace's placeholder, a JAX function's input, or the value."""
        return variable_scope().read(self)

    def _plain_read(self) -> Tensor:
        """The current value as a Tensor, without telling any tape."""
        return self._current()

    def _read_for_op(self) -> Tensor:
        """Reads the value, letting every recording tape watch the read."""
        return self._noted_read(self._current())

    def _noted_read(self, tensor: Tensor) -> Tensor:
        """`tensor`, a read of this variable, noted by every recording tape (which may watch it)."""
        for recorder in _thread_state.recorders:
            recorder._variable_read(self, tensor)
        return tensor

    def read_value(self) -> Tensor:
        """Returns the current value as a Tensor (a watched read inside a tape)."""
        return self._read_for_op()

    def value(self) -> Tensor:
        return self._read_for_op()

    def numpy(self) -> Any:
        return self._read_for_op().numpy()

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        return self._read_for_op().__array__(dtype, copy)

    def __jax_array__(self) -> jax.Array:
        return as_jax_array(variable_scope().jax_array(self))

    def __float__(self) -> float:
        return float(self._read_for_op())

    def __int__(self) -> int:
        return int(self._read_for_op())

    def __bool__(self) -> bool:
        return bool(self._read_for_op())

    def __iter__(self) -> Any:
        return iter(self._read_for_op())

    def __eq__(self, other: Any) -> Any:
        if other is None:  # TF compares a variable by converting `other`, which fails for None
            convert_to_tensor(other)
        return TensorOperators.__eq__(self, other)

    def __ne__(self, other: Any) -> Any:
        if other is None:
            convert_to_tensor(other)
        return TensorOperators.__ne__(self, other)

    def __getitem__(self, key: Any) -> Tensor:
        """A slice of the value; as in TF, it has an `assign` that writes the slice back."""
        read = array_ops.getitem(self, key)
        return _VariableSlice(read._value, read._shape, read._dtype, read._node, read._tid, self, key)

    def __hash__(self) -> int:
        raise TypeError(f"Variable is unhashable. Instead, use variable.ref() as the key. (Variable: {self!r})")

    def ref(self) -> "_VariableRef":
        return _VariableRef(self)

    # -- metadata -------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape._known(self._shape) if self._declared_shape is None else self._declared_shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def name(self) -> str:
        return self._name

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def aggregation(self) -> VariableAggregation:
        """How replicas' updates combine under a `tf.distribute` strategy."""
        return self._aggregation

    @property
    def synchronization(self) -> VariableSynchronization:
        """When the variable is synchronized under a `tf.distribute` strategy."""
        return self._synchronization

    @property
    def device(self) -> str:
        return device_name()

    # -- writes ---------------------------------------------------------
    def _checked(self, value: TensorLike) -> Tensor:
        """`value` as a tensor of this variable's dtype and shape.

        Raises:
          ValueError: if the dtype or shape differs.
        """
        tensor = convert_to_tensor(value, dtype=self._dtype)
        if tensor._shape != self._shape:
            declared = self._declared_shape
            if declared is not None and declared.is_compatible_with(tensor._shape):
                # A shape declared with unknown dimensions: the value's now (a function's call sets it when it
                # stores the value, `_stored`).
                if variable_scope() is _EAGER:
                    self._shape = tensor._shape
                return tensor
            raise ValueError(
                f"Cannot assign value to variable ' {self._name}': Shape mismatch.The variable shape "
                f"{self.shape}, and the assigned value shape {TensorShape(tensor._shape)} "
                "are incompatible."
            )
        return tensor

    def _stored(self, value: jax.Array) -> None:
        """Sets the variable's value to `value`, an array a function's call computed (of its declared shape)."""
        self._value = value
        if self._declared_shape is not None and tuple(value.shape) != self._shape:
            self._shape = tuple(value.shape)

    def assign(
        self, value: TensorLike, use_locking: bool | None = None, name: str | None = None, read_value: bool = True
    ) -> "Variable | None":
        """Sets the variable to `value` (same dtype and shape).

        Raises:
          ValueError: if `value`'s dtype or shape differ from the variable's.
        """
        variable_scope().assign(self, self._checked(value), "assign")
        return self._read_after_write() if read_value else None

    def _update(self, delta: TensorLike, op_name: str) -> None:
        tensor = convert_to_tensor(delta, dtype=self._dtype)
        dtype = self._dtype
        if dtype is dtypes.bool_ or dtype is dtypes.string:  # (TF registers no kernel of these ops for them)
            # (eagerly too TF's resource op raises `InvalidArgumentError` here, not `missing_kernel`'s `NotFoundError`)
            raise errors.invalid_argument(
                f"No OpKernel was registered to support Op '{op_name}' used by {{{{node {op_name}}}}} with these "
                f"attrs: [dtype={enum_name(dtype)}]",
                op_name,
            )
        shape = self._shape
        if self._declared_shape is not None:  # declared with unknown dimensions: the shape its value has here
            shape = tuple(variable_scope().read(self)._shape)  # (a function's earlier assignment may change it)
        if tensor._shape != shape:
            raise errors.invalid_argument(
                f"Cannot update variable with shape [{','.join(map(str, shape))}] using a Tensor with shape "
                f"[{','.join(map(str, tensor._shape))}], shapes must be equal.",
                op_name,
            )
        variable_scope().update(self, tensor, op_name)

    def assign_add(
        self, delta: TensorLike, use_locking: bool | None = None, name: str | None = None, read_value: bool = True
    ) -> "Variable | None":
        """Adds `delta` (same dtype and shape) to the variable.

        Raises:
          ValueError: if `delta`'s dtype differs from the variable's.
          InvalidArgumentError: if `delta`'s shape differs from the variable's, or the variable is of bool or
            string (TF has no kernel for them).
        """
        self._update(delta, "AssignAddVariableOp")
        return self._read_after_write() if read_value else None

    def assign_sub(
        self, delta: TensorLike, use_locking: bool | None = None, name: str | None = None, read_value: bool = True
    ) -> "Variable | None":
        """Subtracts `delta` (same dtype and shape) from the variable.

        Raises:
          ValueError: if `delta`'s dtype differs from the variable's.
          InvalidArgumentError: if `delta`'s shape differs from the variable's, or the variable is of bool or
            string (TF has no kernel for them).
        """
        self._update(delta, "AssignSubVariableOp")
        return self._read_after_write() if read_value else None

    def _read_after_write(self) -> "Variable":
        """An assignment that reads its value back (`read_value=True`) is an access that tapes watch, as TF's."""
        if _thread_state.recorders:
            self._read_for_op()
        return self

    # -- sparse reads and updates (TF's `ResourceVariable` methods) --------
    def sparse_read(self, indices: TensorLike, name: str | None = None) -> Tensor:
        """The rows of the variable at `indices` (`tf.gather`: a tape's gradient is `IndexedSlices`)."""
        from tapeshim._src.ops import array_ops  # (ops import this module)

        return array_ops.gather(self, indices)

    def _scatter_rows(self, sparse_delta: Any, how: str) -> "Variable":
        from tapeshim._src.indexed_slices import IndexedSlices  # (imports ops, which import this module)

        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. Received arg: {sparse_delta}")
        from tapeshim._src.ops import array_ops  # (ops import this module)

        return self._scatter_nd(array_ops.expand_dims(sparse_delta.indices, -1), sparse_delta.values, how)

    def _scatter_nd(self, indices: TensorLike, updates: TensorLike, how: str) -> "Variable":
        from tapeshim._src.ops import manip_ops, scatter_ops  # (ops import this module)

        scatter = {
            "update": manip_ops.tensor_scatter_nd_update,
            "add": manip_ops.tensor_scatter_nd_add,
            "sub": scatter_ops.tensor_scatter_nd_sub,
            "max": scatter_ops.tensor_scatter_nd_max,
            "min": scatter_ops.tensor_scatter_nd_min,
        }[how]
        updates = convert_to_tensor(updates, dtype=self._dtype)
        variable_scope().assign(self, scatter(self.read_value(), indices, updates), "assign")
        return self

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """Sets the rows `sparse_delta.indices` to `sparse_delta.values` (an `IndexedSlices`)."""
        return self._scatter_rows(sparse_delta, "update")

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """Adds `sparse_delta.values` to the rows `sparse_delta.indices` (an `IndexedSlices`)."""
        return self._scatter_rows(sparse_delta, "add")

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """Subtracts `sparse_delta.values` from the rows `sparse_delta.indices` (an `IndexedSlices`)."""
        return self._scatter_rows(sparse_delta, "sub")

    def scatter_max(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """The larger of each row at `sparse_delta.indices` and `sparse_delta.values` (an `IndexedSlices`)."""
        return self._scatter_rows(sparse_delta, "max")

    def scatter_min(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """The smaller of each row at `sparse_delta.indices` and `sparse_delta.values` (an `IndexedSlices`)."""
        return self._scatter_rows(sparse_delta, "min")

    def scatter_nd_update(self, indices: TensorLike, updates: TensorLike, name: str | None = None) -> "Variable":
        """Sets the elements (or slices) at the index vectors `indices` to `updates`."""
        return self._scatter_nd(indices, updates, "update")

    def scatter_nd_add(self, indices: TensorLike, updates: TensorLike, name: str | None = None) -> "Variable":
        """Adds `updates` at the index vectors `indices`."""
        return self._scatter_nd(indices, updates, "add")

    def scatter_nd_sub(self, indices: TensorLike, updates: TensorLike, name: str | None = None) -> "Variable":
        """Subtracts `updates` at the index vectors `indices`."""
        return self._scatter_nd(indices, updates, "sub")

    # -- more sparse methods (`variable_scatter.py`) ----------------------
    def scatter_mul(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """Multiplies the rows `sparse_delta.indices` by `sparse_delta.values` (an `IndexedSlices`)."""
        return variable_scatter.scatter_mul_div(self, sparse_delta, "mul")

    def scatter_div(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """Divides the rows `sparse_delta.indices` by `sparse_delta.values` (an `IndexedSlices`)."""
        return variable_scatter.scatter_mul_div(self, sparse_delta, "div")

    def scatter_nd_max(self, indices: TensorLike, updates: TensorLike, name: str | None = None) -> "Variable":
        """The larger of the elements (or slices) at the index vectors `indices` and `updates`."""
        return variable_scatter.scatter_nd_extremum(self, indices, updates, "max")

    def scatter_nd_min(self, indices: TensorLike, updates: TensorLike, name: str | None = None) -> "Variable":
        """The smaller of the elements (or slices) at the index vectors `indices` and `updates`."""
        return variable_scatter.scatter_nd_extremum(self, indices, updates, "min")

    def gather_nd(self, indices: TensorLike, name: str | None = None) -> Tensor:
        """The elements (or slices) of the variable at the index vectors `indices` (`tf.gather_nd`)."""
        return variable_scatter.gather_nd(self, indices)

    def batch_scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> "Variable":
        """Sets `var[i_1, ..., i_n, indices[i_1, ..., i_n, j]]` to `values[i_1, ..., i_n, j]` (an `IndexedSlices`)."""
        return variable_scatter.batch_scatter_update(self, sparse_delta)

    # -- printing -------------------------------------------------------
    def __repr__(self) -> str:
        text = f"<tf.Variable '{self._name}' shape={self.shape} dtype={self._dtype.name}"
        if variable_scope().symbolic:
            return text + ">"
        return f"{text}, numpy={numpy_text(Tensor(self._value, self._shape, self._dtype).numpy())}>"

    __str__ = __repr__


class _VariableRef:
    """A hashable reference to a variable (`Variable.ref()`)."""

    __slots__ = ("_variable",)

    def __init__(self, variable: Variable) -> None:
        self._variable = variable

    def deref(self) -> Variable:
        return self._variable

    def __hash__(self) -> int:
        return id(self._variable)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _VariableRef) and other._variable is self._variable


_variable_adapters: list[tuple[type, Callable[[Any], Variable]]] = []


def register_variable_adapter(base_type: type, adapter: Callable[[Any], Variable]) -> None:
    """Lets tapes treat instances of `base_type` (another library's variables) as Variables.

    `adapter(obj)` returns the one `Variable` that stands for `obj` (the same
    object every time), so `tape.watch(obj)` and `tape.gradient(y, obj)` work.
    """
    _variable_adapters.append((base_type, adapter))


_T = TypeVar("_T")


def as_variable(value: _T) -> _T | Variable:
    """`value`'s Variable if it is another library's variable with an adapter, else `value` unchanged."""
    if _variable_adapters and not isinstance(value, (Tensor, Variable)):
        for base_type, adapter in _variable_adapters:
            if isinstance(value, base_type):
                return adapter(value)
    return value
