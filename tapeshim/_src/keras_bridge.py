"""Real Keras 3, on its JAX backend, under tapeshim's tapes and functions.

tapeshim does not rewrite Keras. It wires Keras objects into the lazy graph:

* Every `keras.Variable` has one tapeshim `Variable` standing for it (a
  `KerasVariable` view, whose value *is* the Keras variable's value), so tapes
  watch Keras variables, `tapeshim.function` lifts them, checkpoints save them.
* A call of a Keras object whose state may change (a layer or model call, a
  metric update, an optimizer step) runs as **one op**: a pure JAX function of
  the input values and the values of the object's variables, which runs the
  Keras call inside a `keras.StatelessScope` and returns the outputs and the
  variables' new values. The op goes through the same lazy path as every
  tapeshim op (recorded by tapes, traced by functions, else run at once by one
  jitted call), and the changed variables are assigned afterwards. That is
  what Keras's own `stateless_call` does, for any Keras call.
* Calls made by Keras itself (a layer inside a model, `fit`'s compiled step)
  see JAX values and go straight to Keras.

Keras reads its backend once per process, when `keras` is first imported;
`load_keras` chooses JAX (see docs/keras.md).
"""

from __future__ import annotations

import functools
import threading
import weakref
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Sequence

import jax
import numpy as np

from tapeshim._src import (
    dtypes,
    keras_eager_calls,
    keras_program_families,
    kernel_calls,
    registry,
    runtime_checks,
)
from tapeshim._src.custom_gradient_parts import VariableCollector
from tapeshim._src.keras_compat import (
    call_context_training,
    direct_assign,
    flatten_layers,
    get_keras_mask,
    in_stateless_scope,
    keras,
    own_trainable_variables,
    set_keras_mask,
)
from tapeshim._src.keras_compat import tf_keras as tf_keras  # re-exported: the `tapeshim.keras.*` namespaces import it
from tapeshim._src.keras_functional_split import call_by_operation, has_dependent_outputs, has_host_layers
from tapeshim._src.keras_host_layers import call_on_values, computed_with_tf, given_output
from tapeshim._src.keras_initial_values import add_weight_arguments
from tapeshim._src.keras_masks import attach_output_masks, with_input_masks
from tapeshim._src.keras_program_families import family_replay, replay_of
from tapeshim._src.keras_program_keys import attributes_key, configuration_key, note_attribute_set
from tapeshim._src.keras_restore import apply_pending_restore
from tapeshim._src.keras_saved_forward import record_saved_forward, saves_forward
from tapeshim._src.keras_specs import merge_specs, with_unknown_dims
from tapeshim._src.node import OpKey
from tapeshim._src.ops import random_ops
from tapeshim._src.recorded_call import jaxpr_dependencies, record_call
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import StatelessScope, _thread_state, stateless_scope
from tapeshim._src.tensor import Tensor, convert_to_tensor, register_tensor_conversion_function
from tapeshim._src.variable import (
    Variable,
    VariableAggregation,
    VariableSynchronization,
    _creation_order,
    register_variable_adapter,
)


# -- variables ------------------------------------------------------------------------------
class KerasVariable(Variable):
    """The tapeshim `Variable` that stands for one `keras.Variable`: same value, same updates.

    Reads and assignments go to the Keras variable, so Keras code and tapeshim
    code always see one value. Tapes watch its reads like any Variable's.
    """

    __slots__ = ("_adapted", "_created_trainable")

    def __init__(self, keras_variable: Any) -> None:  # noqa: D107 - not created by users
        self._adapted = keras_variable
        # TF's tape watches a Keras variable created trainable even after `layer.trainable = False`
        # (its tf.Variable stays trainable); `note_created_trainable` corrects views made after freezing.
        self._created_trainable = bool(keras_variable.trainable)
        self._shape = tuple(int(d) for d in keras_variable.shape)
        self._declared_shape = None
        self._dtype = dtypes.as_dtype(np.dtype(keras_variable.dtype))
        self._name = keras_variable.path + ":0"
        self._order = next(_creation_order)
        self.constraint = None

    @property
    def _value(self) -> jax.Array:
        return self._adapted.value

    @_value.setter
    def _value(self, value: jax.Array) -> None:
        # `value` is already checked (this variable's shape and dtype). Inside Keras's stateless code, Keras's
        # own public `assign` (not the tapeshim routing `TapeVariableMixin` adds to it) writes it to the
        # `StatelessScope`; else it goes straight to the variable, skipping `assign`'s second conversion.
        if in_stateless_scope():
            _keras_assign(self._adapted, value)
        else:
            direct_assign(self._adapted, value)

    @property
    def _trainable(self) -> bool:  # type: ignore[override]
        return self._created_trainable  # what tapes watch, as TF's tape

    @property
    def aggregation(self) -> VariableAggregation:
        """The Keras variable's aggregation as a `tf.VariableAggregation`."""
        return VariableAggregation[str(self._adapted.aggregation).upper()]

    @property
    def synchronization(self) -> VariableSynchronization:
        """The Keras variable's synchronization as a `tf.VariableSynchronization`."""
        return VariableSynchronization[str(self._adapted.synchronization).upper()]

    @property
    def trainable(self) -> bool:
        """Whether the Keras variable is trainable now (`layer.trainable = False` turns it off)."""
        return bool(self._adapted.trainable)


_keras_assign = keras.Variable.assign
_views: dict[int, KerasVariable] = {}


def view_of(keras_variable: Any) -> KerasVariable:
    """The one `KerasVariable` standing for `keras_variable`."""
    view = _views.get(id(keras_variable))
    if view is None or view._adapted is not keras_variable:
        view = _views[id(keras_variable)] = KerasVariable(keras_variable)
        weakref.finalize(keras_variable, _views.pop, id(keras_variable), None)
    return view


def note_created_trainable(layer: Any) -> None:
    """Marks the views of the variables `layer` and its sublayers created trainable as watched by tapes.

    Keras keeps a variable created trainable in its layer's trainable list even
    after `layer.trainable = False`; TF's tape still watches it.
    """
    for sublayer in flatten_layers(layer):
        for variable in own_trainable_variables(sublayer):
            view_of(variable)._created_trainable = True


def _convert_keras_variable(value: Any, dtype: Any = None, name: Any = None, as_ref: bool = False) -> Tensor:
    del name, as_ref
    tensor = view_of(value)._read_for_op()
    return tensor if dtype is None else convert_to_tensor(tensor, dtype=dtype)


register_tensor_conversion_function(keras.Variable, _convert_keras_variable)
register_variable_adapter(keras.Variable, view_of)

_OPERATORS = tuple(
    (
        "__abs__ __add__ __and__ __floordiv__ __ge__ __getitem__ __gt__ __invert__ __le__ __lt__ __matmul__ "
        "__mod__ __mul__ __neg__ __or__ __pos__ __pow__ __radd__ __rand__ __rfloordiv__ __rmatmul__ __rmod__ "
        "__rmul__ __ror__ __rpow__ __rsub__ __rtruediv__ __sub__ __truediv__ __xor__"
    ).split()
)


def _routed(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any) -> Any:
        if passthrough(args, {}):
            return getattr(super(TapeVariableMixin, self), name)(*args)
        return getattr(view_of(self), name)(*args)

    method.__name__ = name
    return method


def _routed_assign(name: str) -> Callable[..., Any]:
    def method(self: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        if _thread_state.trace is not None and not passthrough((value,), {}):
            getattr(view_of(self), name)(value)  # recorded in the function being traced
            return self
        return getattr(super(TapeVariableMixin, self), name)(value, *args, **kwargs)

    method.__name__ = name
    return method


def _shape(self: Any) -> Any:
    """The variable's shape: a `TensorShape` in user code, as TF's Keras variables; Keras's own tuple inside Keras."""
    dims = super(TapeVariableMixin, self).shape
    if inside_keras() or in_stateless_scope():
        return dims
    return TensorShape(dims)


class TapeVariableMixin:
    """A Keras variable whose Python operators and assignments are tapeshim ops in tapeshim code.

    `w ** 2`, `kernel * x` and `v.assign_add(d)` outside Keras's own code act on
    the variable's tapeshim `Variable` (so tapes watch them and functions trace
    them), as TF's Keras variables are TF variables. Inside Keras code they are
    Keras's own.
    """

    shape = property(_shape)

    def numpy(self) -> Any:
        """The value as a NumPy array, or a NumPy scalar for a scalar variable (`optimizer.iterations`), as TF's."""
        value = super().numpy()  # type: ignore[misc]
        return value[()] if getattr(value, "ndim", None) == 0 else value


for _method_name in _OPERATORS:
    setattr(TapeVariableMixin, _method_name, _routed(_method_name))
for _method_name in ("assign", "assign_add", "assign_sub"):
    setattr(TapeVariableMixin, _method_name, _routed_assign(_method_name))


_tape_variable_classes: dict[type, type] = {}


def adopt_object(obj: Any, namespace: dict[str, Any]) -> Any:
    """Makes a Keras object (from Keras's `get`) an instance of tapeshim's subclass of its class, if any.

    The subclass adds only methods, so the object keeps all its state (a rebuild from
    `get_config` would lose what Keras leaves out of the config).
    """
    cls = namespace.get(type(obj).__name__)
    if isinstance(cls, type) and cls is not type(obj) and issubclass(cls, type(obj)):
        obj.__class__ = cls
    return obj


def adopt_variable(variable: Any) -> Any:
    """Makes a Keras variable created by a tapeshim layer a `TapeVariableMixin` variable (same object)."""
    cls = type(variable)
    if isinstance(variable, TapeVariableMixin) or not isinstance(variable, keras.Variable):
        return variable
    tape_cls = _tape_variable_classes.get(cls)
    if tape_cls is None:
        tape_cls = _tape_variable_classes[cls] = type(
            cls.__name__, (TapeVariableMixin, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
        )
    variable.__class__ = tape_cls  # a subclass adding only methods: the object is otherwise unchanged
    view_of(variable)  # made now, so it knows whether the variable was created trainable
    return variable


# -- one Keras call as one op ------------------------------------------------------------------
_local = threading.local()


def public_names(module: ModuleType) -> dict[str, Any]:
    """A Keras namespace's public names, for a tapeshim namespace that re-exports it."""
    return {name: getattr(module, name) for name in dir(module) if not name.startswith("_")}


def inside_keras() -> bool:
    """True while Keras code runs inside one of tapeshim's Keras ops."""
    return getattr(_local, "depth", 0) > 0


def is_tensor_like(leaf: Any) -> bool:
    """Whether `leaf` is a value a Keras call computes on (an op input), not a static argument."""
    return isinstance(leaf, (Tensor, Variable, np.ndarray, np.generic, jax.Array, keras.Variable)) or hasattr(
        leaf, "to_dense"
    )


def _static_key(leaf: Any) -> Any:
    try:
        hash(leaf)
    except TypeError:
        return ("id", id(leaf))
    return (type(leaf), leaf)


def passthrough(args: Any, kwargs: Any) -> bool:
    """True when a call must go straight to Keras: symbolic inputs, JAX tracers, or Keras's own stateless code."""
    if inside_keras() or in_stateless_scope():
        return True
    for leaf in jax.tree_util.tree_leaves((args, kwargs), is_leaf=is_tensor_like):
        if isinstance(leaf, (keras.KerasTensor, jax.core.Tracer)):
            return True
    return False


def _to_jax(value: Any) -> Any:
    if isinstance(value, (Tensor, Variable)) or hasattr(value, "to_dense"):
        return convert_to_tensor(value).value
    return value


class _Program:
    """One shape of one Keras call (or, traced with symbolic sizes, its shape family's: `keras_program_families`):
    the op's JAX function, its outputs, and which variables it changes.

    The op's inputs are the call's tensors, then the Keras masks they carry
    (`masked`: their positions among the tensors; attached to them inside the
    call, where Keras's layers read them), then the variables' values, the
    tapeshim Variables it reads and the keys of its random ops.
    The op's outputs are the call's results and added losses (and, for a model,
    the masks Keras attached to its results inside the call: its last layers'),
    then the new values of the Keras variables it changed, then those of the
    tapeshim Variables it assigned (`written`).
    """

    __slots__ = (
        "fn",
        "jitted",
        "key",
        "avals",
        "out_tree",
        "n_out",
        "changed",
        "extra_variables",
        "written",
        "returned_variables",
        "cleared_masks",
        "random_seeds",
        "bound",
        "replay",
        "dependencies",
        "out_structs",
        "calls",
    )

    def __init__(
        self,
        call: Callable[..., Any],
        leaves: list,
        treedef: Any,
        positions: list[int],
        keras_variables: Sequence[Any],
        in_structs: list,
        key: OpKey,
        masks: bool = False,
        masked: tuple[int, ...] = (),
        family: bool = False,
    ) -> None:
        n_tensors, n_state = len(positions) + len(masked), len(keras_variables)
        self.extra_variables: list[Variable] = []
        # The call and variables the program runs: rebound by each caller of a program shared by Keras
        # objects of the same configuration (`_configuration_key`).
        self.bound = (call, keras_variables)
        self.random_seeds: list[Any] = []  # the seeds of the tapeshim random ops the call runs, in order
        narrow = not any(np.dtype(s.dtype) in (np.float64, np.complex128) for s in in_structs)

        def run(values: Sequence[Any], collector: Any = None) -> tuple:
            call, keras_variables = self.bound
            call_leaves = list(leaves)
            for position, value in zip(positions, values[: len(positions)]):
                call_leaves[position] = value
            for index, mask in zip(masked, values[len(positions) : n_tensors]):
                set_keras_mask(call_leaves[positions[index]], mask)
            call_args, call_kwargs = jax.tree_util.tree_unflatten(treedef, call_leaves)
            extra = {id(v): value for v, value in zip(self.extra_variables, values[n_tensors + n_state :])}
            writes: dict[int, Variable] = {}
            mapping = list(zip(keras_variables, values[n_tensors : n_tensors + n_state]))
            _local.depth = getattr(_local, "depth", 0) + 1
            saved_returned, _local.returned = getattr(_local, "returned", None), {}
            keys = values[n_tensors + n_state + len(self.extra_variables) :]
            seeds: list[Any] = []

            def random_key(seed: Any) -> Tensor:
                # Random ops draw from keys that are inputs of the op, fresh on every call, as TF draws anew.
                seeds.append(seed)
                if len(seeds) <= len(keys):
                    return Tensor(keys[len(seeds) - 1], _KEY.shape, dtypes.from_numpy(_KEY.dtype))
                return Tensor(jax.random.PRNGKey(0), _KEY.shape, dtypes.from_numpy(_KEY.dtype))  # finding them

            saved_source, _thread_state.random_key_source = (
                _thread_state.random_key_source,
                random_key,
            )
            try:
                with (
                    StatelessScope(extra, collector, writes),
                    keras.StatelessScope(state_mapping=mapping, collect_losses=True) as scope,
                ):
                    before = [scope.get_current_value(v) for v in keras_variables]
                    result = call(*call_args, **call_kwargs)
                    after = [scope.get_current_value(v) for v in keras_variables]
            finally:
                _local.depth -= 1
                returned, _local.returned = _local.returned, saved_returned
                _thread_state.random_key_source = saved_source
            probe["seeds"] = seeds
            # (a layer that takes its inputs' masks off them, as `MultiHeadAttention`: TF's caller sees them gone)
            probe["cleared"] = [i for i in masked if get_keras_mask(call_leaves[positions[i]]) is None]
            # The losses the call added (`add_loss`, activity regularizers) are outputs too, and a model's
            # output masks (set by its layers on their outputs, which it returns: TF's tensors carry them).
            leaf_masks = [get_keras_mask(x) for x in jax.tree_util.tree_leaves(result, is_tensor_like)] if masks else []
            flat, out_tree = jax.tree_util.tree_flatten(
                (result, list(scope.losses), leaf_masks), is_leaf=is_tensor_like
            )
            probe["returned"] = {i: returned[id(leaf)] for i, leaf in enumerate(flat) if id(leaf) in returned}
            outs = [_to_jax(v) for v in flat]
            if narrow:  # Keras assumes JAX's 32-bit defaults; with no 64-bit input, no 64-bit float result
                outs = [o.astype(np.float32) if getattr(o, "dtype", None) == np.float64 else o for o in outs]
            written = {id(v): extra[id(v)] for v in writes.values()}
            return outs, out_tree, before, after, writes, written

        collector = VariableCollector()
        probe: dict[str, Any] = {"collector": collector}  # (the analysis notes the variables the call reads)

        def fn(*values: Any) -> tuple:
            # Every trace notes what the call changed and returned (`probe`): the first ones are the analysis,
            # later ones (a gradient's, checkify's) find the same.
            outs, probe["tree"], before, after, writes, written = run(values, probe["collector"])
            probe["changed"] = changed = [i for i, (b, a) in enumerate(zip(before, after)) if a is not b]
            probe["written"] = written_variables = list(writes.values())
            return tuple(outs) + tuple(after[i] for i in changed) + tuple(written[id(v)] for v in written_variables)

        self.fn = fn
        # jax.jit; its first eager call is computed on the host where it can be (`interpret.py`). The analysis
        # below is its trace, which its first call reuses: a new shape's call is traced once, not twice.
        self.jitted: Any = runtime_checks.jit(fn, self._settle)
        traced = self.jitted.trace(*in_structs)
        self.extra_variables = [v for v in collector.variables.values() if not isinstance(v, KerasVariable)]
        self.random_seeds = list(probe["seeds"])
        if self.extra_variables or self.random_seeds:  # tapeshim Variables read and random keys are inputs too
            in_structs = [
                *in_structs,
                *[jax.ShapeDtypeStruct(v._shape, v._dtype._np) for v in self.extra_variables],
                *[jax.ShapeDtypeStruct(_KEY.shape, _KEY.dtype) for _ in self.random_seeds],
            ]
            traced = self.jitted.trace(*in_structs)
        structs = traced.out_info
        # (a family's program, traced with symbolic sizes, serves each size: `keras_program_families`)
        self.replay = family_replay(fn, traced) if family else replay_of(fn, traced.jaxpr)
        self.dependencies = jaxpr_dependencies(traced.jaxpr.jaxpr)  # (per output, the inputs it depends on)
        probe["collector"] = None
        self.out_tree, self.changed, self.written = probe["tree"], probe["changed"], probe["written"]
        self.returned_variables = probe["returned"]  # output position -> the variable `call` returned there
        self.cleared_masks: list[int] = probe["cleared"]  # the tensors whose masks the call took off
        self.n_out = len(structs) - len(self.changed) - len(self.written)
        self.out_structs = jax.tree_util.tree_leaves(structs)
        self.avals = tuple((tuple(s.shape), dtypes.from_numpy(np.dtype(s.dtype))) for s in structs)
        self.key = key  # (its own; a family's, every size of it: `keras_program_families`)
        # (a family's calls outside a tape: each new size's first calls on the host from the family's trace)
        host_forward = getattr(self.replay, "host_forward", None)
        self.calls = None if host_forward is None else kernel_calls.KernelCalls(untraced=host_forward)

    def run_values(self, values: list) -> Any:
        """The call's outputs on `values` (its inputs' arrays), outside any tape and trace (a family's sizes:
        `keras_program_families.SizedProgram.run_values`)."""
        return self.jitted(*values)

    def _settle(self, plain: Any) -> None:
        self.jitted = plain


_KEY = jax.eval_shape(lambda: jax.random.PRNGKey(0))  # the shape and dtype of a random op's key
_programs: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_PROGRAMS_PER_OWNER = 64
_shared_programs: dict[Any, _Program] = {}  # by `_configuration_key`: Keras objects of one configuration
_SHARED_PROGRAMS = 256


def stateful_call(
    owner: Any,
    label: str,
    call: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    keras_variables: Sequence[Any],
    states: Sequence[Variable] | None = None,
    watch_state: bool = True,
) -> Any:
    """Runs `call(*args, **kwargs)`, which reads and may assign `keras_variables`, as one tapeshim op.

    Args:
      owner: the Keras object, or the stateless function, whose programs
        these are (at most 64 are kept per owner).
      label: names `call` in the cache key (`"call"`, `"update_state"`, ...).
      call: the Keras call.
      args, kwargs: its arguments; tensors, arrays and variables in them become
        op inputs, everything else is static.
      keras_variables: the Keras variables `call` reads or assigns.
      states: the tapeshim Variables holding their values (default: their
        views); new values are assigned to these.
      watch_state: whether tapes watch the reads of `states` (trainable ones).

    Returns:
      `call`'s result, with tapeshim Tensors in place of arrays.
    """
    states = [view_of(v) for v in keras_variables] if states is None else list(states)
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=is_tensor_like)
    positions = [i for i, leaf in enumerate(leaves) if is_tensor_like(leaf)]
    tensors = [convert_to_tensor(leaves[i]) for i in positions]
    masked = tuple(i for i, t in enumerate(tensors) if getattr(t, "_keras_mask", None) is not None)
    masks = [convert_to_tensor(tensors[i]._keras_mask) for i in masked]
    static_leaves = list(leaves)
    for i in positions:
        static_leaves[i] = None
    key = (
        label,
        treedef,
        tuple(_static_key(leaf) for leaf in static_leaves),
        tuple((t._shape, t._dtype) for t in tensors),
        tuple(id(v) for v in keras_variables),
        attributes_key(),  # (an activation swapped on a built layer: traced again, as TF reads it per call)
        call_context_training(),  # (a sublayer of an op-by-op call inherits its `training`: keras_eager_calls)
        masked,
    )
    cache = _programs.setdefault(owner, {})
    state_reads = [s._read_for_op() if watch_state else s._current() for s in states]
    program = cache.get(key)
    if program is None:
        if len(cache) >= _PROGRAMS_PER_OWNER:  # e.g. a Python number argument that changes every call
            del cache[next(iter(cache))]
        shared_key = configuration_key(owner, key, keras_variables)
        program = None if shared_key is None else _shared_programs.get(shared_key)
        if program is None:
            in_structs = [jax.ShapeDtypeStruct(t._shape, t._dtype._np) for t in tensors + masks + state_reads]

            def make(structs: list, op_key: OpKey, family: bool) -> _Program:
                return _Program(
                    call,
                    static_leaves,
                    treedef,
                    positions,
                    keras_variables,
                    structs,
                    op_key,
                    isinstance(owner, keras.Model),
                    masked,
                    family,
                )

            # (a new size of a call seen at another: its shape family's program, `keras_program_families`)
            program = keras_program_families.program(owner, key, in_structs, make)
            if shared_key is not None and not (
                program.extra_variables or program.written or program.random_seeds or program.returned_variables
            ):
                if len(_shared_programs) >= _SHARED_PROGRAMS:
                    del _shared_programs[next(iter(_shared_programs))]
                _shared_programs[shared_key] = program
        cache[key] = program
    program.bound = (call, keras_variables)
    keys = [random_ops._op_key(seed) for seed in program.random_seeds]  # fresh, or per call of a function
    inputs = tuple(tensors + masks + state_reads + [v._read_for_op() for v in program.extra_variables] + keys)
    tracking = registry.tracking_recorders(inputs)
    if saves_forward(program, inputs, tracking):  # a training-mode call under a tape: one forward pass
        outputs = record_saved_forward(program, inputs, tracking)
    elif tracking or _thread_state.trace is not None or any(t._value is None for t in inputs):
        # One op; each output is tracked by the tapes that track an input it depends on (its jaxpr says which).
        outputs = record_call(program.replay, program.key, inputs, program.avals, dependencies=program.dependencies)
    else:
        values = program.run_values([t._value for t in inputs])
        outputs = tuple(Tensor(v, shape, dtype) for v, (shape, dtype) in zip(values, program.avals))
    n_changed = len(program.changed)
    for index, value in zip(program.changed, outputs[program.n_out : program.n_out + n_changed]):
        states[index].assign(value)
    for variable, value in zip(program.written, outputs[program.n_out + n_changed :]):
        variable.assign(value)
    results = list(outputs[: program.n_out])
    if program.returned_variables and _thread_state.trace is None:
        for position, variable in program.returned_variables.items():  # eagerly, TF's call returns the variable
            results[position] = variable
    for index in program.cleared_masks:
        tensors[index]._keras_mask = None  # (as Keras leaves it on a TF tensor)
    result, added_losses, leaf_masks = jax.tree_util.tree_unflatten(program.out_tree, results)
    for leaf, mask in zip(jax.tree_util.tree_leaves(result, is_tensor_like), leaf_masks):
        if mask is not None and isinstance(leaf, Tensor):
            leaf._keras_mask = mask
    if label == "call":
        _added_losses[owner] = added_losses
        keras_eager_calls.note_losses(added_losses)  # (inside an op-by-op call: its losses too)
    return result


_added_losses: "weakref.WeakKeyDictionary[Any, list]" = weakref.WeakKeyDictionary()


def has_programs(owner: Any) -> bool:
    """Whether any call of `owner` has run as a tapeshim op yet."""
    return bool(_programs.get(owner))


def keras_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A stateless Keras function (a loss, an activation) as a tape-aware op on tapeshim tensors."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if passthrough(args, kwargs):
            return fn(*args, **kwargs)
        return stateful_call(fn, "function", fn, args, kwargs, [])

    call.__name__ = getattr(fn, "__name__", "keras_function")
    call.__qualname__ = call.__name__
    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


# -- layers and models ---------------------------------------------------------------------------
def _symbolic(leaf: Any) -> Any:
    if is_tensor_like(leaf):
        tensor = convert_to_tensor(leaf)
        return keras.KerasTensor(tensor._shape, dtype=tensor._dtype.name)
    return leaf


def symbolic(structure: Any) -> Any:
    """`structure` with Keras `KerasTensor`s in place of tensors (for Keras's symbolic build)."""
    return jax.tree_util.tree_map(_symbolic, structure, is_leaf=is_tensor_like)


def note_variables_created() -> None:
    """Tells a `tapeshim.function` being traced that Keras variables were created (TF's rules apply)."""
    if _thread_state.trace is not None:
        _thread_state.trace.on_variable_created()


def _build(layer: Any, args: tuple, kwargs: dict) -> None:
    """Builds `layer` (creating its variables) by a symbolic call, which runs no computation.

    Keras runs the layer's `call` under `jax.eval_shape` for that; tapeshim code in
    it runs isolated (nothing recorded, assignments discarded).
    """
    note_variables_created()
    symbolic_args, symbolic_kwargs = symbolic((args, kwargs))
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        with StatelessScope({}, None, {}):
            keras.Layer.__call__(layer, *symbolic_args, **symbolic_kwargs)
    finally:
        _local.depth -= 1
    apply_pending_restore(layer)


def _jax_outputs(call: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps a layer's `call` so that tapeshim Tensors it returns reach Keras as JAX values."""

    # TF code in a user's `call` computes shapes from values (`tf.reshape(x, (tf.shape(x)[0], -1))`): there,
    # tapeshim ops on concrete values are computed while JAX traces the call, as TF's shape inference folds
    # them (`registry.apply`); JAX's and Keras's code in it is traced as Keras traces it.
    users_code = (getattr(call, "__module__", None) or "").split(".")[0] != "keras"

    @functools.wraps(call)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if keras_eager_calls.calls_own_code(self):  # run op by op: tapeshim tensors in and out
            return call(self, *args, **kwargs)
        if users_code:
            saved, _thread_state.fold_constants = _thread_state.fold_constants, True
            try:
                outputs = call(self, *args, **kwargs)
            finally:
                _thread_state.fold_constants = saved
        else:
            outputs = call(self, *args, **kwargs)
        returned = getattr(_local, "returned", None)

        def to_jax(leaf: Any) -> Any:
            value = _to_jax(leaf)
            if returned is not None and isinstance(leaf, (Variable, keras.Variable)):
                returned[id(value)] = leaf  # a variable returned as it is (TF's eager call returns it)
            return value

        return jax.tree_util.tree_map(to_jax, outputs, is_leaf=is_tensor_like)

    wrapper._tapeshim_jax_outputs = True  # type: ignore[attr-defined]
    return wrapper


def _inherited_from_framework(cls: type) -> bool:
    """Whether `cls` inherits its `call` through tapeshim's Model, Functional or Sequential (Keras's own)."""
    owner = next(klass for klass in cls.__mro__ if "call" in klass.__dict__)
    return owner is not cls and any(
        klass.__dict__.get("_keras_framework_class") and owner in klass.__mro__ for klass in cls.__mro__
    )


if TYPE_CHECKING:
    from keras import Layer as _LayerBase  # untyped (Any) for the checker: the mixin's `super()` calls are Keras's
else:
    _LayerBase = object


class TapeLayerMixin(_LayerBase):
    """Makes a Keras layer's outermost call one tapeshim op (see the module docstring).

    A subclass's `call` may use tapeshim ops: Keras gets JAX values back from it.
    Weights made by `add_weight` are `TapeKerasVariable`s.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_keras_framework_class"):
            return  # tapeshim's Model, Sequential and Functional keep Keras's own `call`
        call = getattr(cls, "call", None)
        if call is None or getattr(call, "_tapeshim_jax_outputs", False) or _inherited_from_framework(cls):
            return
        cls.call = _jax_outputs(call)

    def __setattr__(self, name: str, value: Any) -> None:
        old = self.__dict__.get(name) if name[:1] != "_" else None
        super().__setattr__(name, value)
        if name[:1] != "_" and not inside_keras():
            note_attribute_set(self, name, old, value)

    def add_weight(self, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = add_weight_arguments(args, kwargs, self.variable_dtype)  # (no compile per weight shape)
        variable = super().add_weight(*args, **kwargs)
        return adopt_variable(variable)

    def compute_output_spec(self, *args: Any, **kwargs: Any) -> Any:
        """Keras's shape inference, which also handles a `call` computing shapes from `tf.shape(x)`.

        Keras infers shapes with a symbolic batch dimension, which a shape computed from
        `tf.shape(x)[0]` cannot carry; the call is then run for two concrete batch sizes, and
        a dimension that follows them is unknown (`None`), as TF's shape inference gives.
        """
        try:
            return super().compute_output_spec(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - re-raised unless concrete sizes succeed
            try:
                first, second = (
                    super(TapeLayerMixin, self).compute_output_spec(
                        *with_unknown_dims(args, size), **with_unknown_dims(kwargs, size)
                    )
                    for size in (83, 89)
                )
            except Exception:  # noqa: BLE001
                raise error from None
            return jax.tree_util.tree_map(
                merge_specs, first, second, is_leaf=lambda leaf: isinstance(leaf, keras.KerasTensor)
            )

    def add_loss(self, loss: Any) -> None:
        """Keras's `add_loss`, also for losses computed with tapeshim ops (`self.add_loss(tf.reduce_sum(x))`)."""
        if keras_eager_calls.calls_own_code(self):  # an op-by-op call: the loss stays on the tapes
            keras_eager_calls.note_losses(jax.tree_util.tree_leaves(loss, is_leaf=is_tensor_like))
            return
        super().add_loss(jax.tree_util.tree_map(_to_jax, loss, is_leaf=is_tensor_like))

    def _post_build(self) -> None:
        # Keras's hook after any build (listed in keras_compat.HOOKS): values a checkpoint restored
        # before the layer had variables are assigned now (TF's deferred restore).
        super()._post_build()
        if (
            scope := stateless_scope()
        ) is None or scope.writes is None:  # else `_build` restores once its symbolic call is over
            apply_pending_restore(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if passthrough(args, kwargs):
            return super().__call__(*args, **kwargs)
        if computed_with_tf(self):
            given = given_output(self)  # (it ran on values before a compiled step: `outputs_given`)
            return given if given is not None else call_on_values(self, super().__call__, args, kwargs)
        kwargs, previous_mask = with_input_masks(self, args, kwargs)  # (masks carried as TF's eager tensors)
        outputs = self._call_on_tensors(args, kwargs)
        attach_output_masks(self, args, previous_mask, outputs, self._compute_mask_op)
        return outputs

    def _compute_mask_op(self, inputs: Any, previous_mask: Any) -> Any:
        compute = self.compute_mask  # (the layer's own or Keras's, on the op's JAX arrays)
        return stateful_call(self, "compute_mask", compute, (inputs, previous_mask), {}, [])

    def _call_on_tensors(self, args: tuple, kwargs: dict) -> Any:
        # (a layer whose own `call` is user code: Keras's Sequential and Functional infer shapes symbolically,
        # where TF fails too)
        may_run_op_by_op = keras_eager_calls.allowed(inside_keras()) and getattr(
            type(self).call, "_tapeshim_jax_outputs", False
        )
        if not self.built:
            try:
                _build(self, args, kwargs)
            except keras_eager_calls.VALUE_ASKED:
                if not may_run_op_by_op:
                    raise
                keras_eager_calls.mark(self)  # (built by Keras's eager call, as TF's)
        if may_run_op_by_op and keras_eager_calls.runs_op_by_op(self):
            apply_pending_restore(self)  # (a failed `_build` restored nothing; Keras's eager call builds)
            result, _added_losses[self] = keras_eager_calls.call_op_by_op(self, super().__call__, args, kwargs)
            apply_pending_restore(self)
            return result
        if not has_programs(self):
            note_created_trainable(self)
        if has_dependent_outputs(self) or has_host_layers(self):  # Grad-CAM's outputs; a TextVectorization first
            split = call_by_operation(self, args, kwargs, _call_operation, lambda op: _added_losses.get(op, []))
            if split is not None:
                _added_losses[self] = split[1]
                return split[0]
        keras_call = super().__call__
        variables = list(self.variables)
        from tapeshim._src.keras_embedding import call_gathering_rows  # import cycle: keras_bridge <-> it

        looked_up = call_gathering_rows(self, keras_call, args, kwargs, variables)
        if looked_up is not None:  # an Embedding's rows gathered on the tape: its gradient is IndexedSlices
            return looked_up[0]
        try:
            return stateful_call(self, "call", keras_call, args, kwargs, variables)
        except keras_eager_calls.VALUE_ASKED:
            if not may_run_op_by_op:
                raise
        keras_eager_calls.mark(self)  # its Python asked for a value: run it as TF's eager Keras does
        result, _added_losses[self] = keras_eager_calls.call_op_by_op(self, keras_call, args, kwargs)
        return result

    @property
    def losses(self) -> list:
        """The losses of the last call (`add_loss`, activity regularizers) and the weight regularizers'.

        As in TF, they are tensors on the tape, so `tape.gradient(loss + tf.add_n(model.losses), ...)`
        includes the regularization.
        """
        if passthrough((), {}):
            return super().losses
        keras_losses = super(TapeLayerMixin, type(self)).losses.fget  # Keras's, run inside one op
        regularization = stateful_call(self, "losses", lambda: keras_losses(self), (), {}, list(self.variables))
        return list(_added_losses.get(self, [])) + list(regularization)


def _call_operation(operation: Any, args: tuple, kwargs: dict) -> Any:
    """One operation of a functional model called on tapeshim tensors, as one op (`keras_functional_split`)."""
    if isinstance(operation, TapeLayerMixin):
        return operation(*args, **kwargs)
    variables = list(operation.variables) if isinstance(operation, keras.Layer) else []
    return stateful_call(operation, "call", operation.__call__, args, kwargs, variables)
