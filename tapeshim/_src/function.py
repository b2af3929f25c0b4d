"""`tapeshim.function`: a TF function traced once into the lazy graph, run as one `jax.jit` program.

Tracing runs the Python function once with placeholder tensors for its tensor
arguments while a `FunctionTrace` records *every* op (the same recording a tape
does). Variable reads become placeholders too, and `assign`s are kept as lazy
values. The recorded graph, from the function's outputs and the variables' new
values back to the placeholders, is one `replay.Plan`; its program is jitted
once and called with the arguments', variables' and constants' current values
on every call, after which the new variable values are written back.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from typing import Any, Callable

import jax
import numpy as np

from tapeshim._src import errors, nest, registry, replay, runtime_checks
from tapeshim._src.dataset_iterator import OwnedIterator
from tapeshim._src.differentiate import output_dependencies
from tapeshim._src.dtypes import DType
from tapeshim._src.function_host_inputs import HostFeed, HostInputs
from tapeshim._src.ops import random_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state
from tapeshim._src.tape import Recorder
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.tf_logging import caller_site
from tapeshim._src.variable import Variable

stats = {"function_traces": 0, "last_retrace_reason": ""}


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

    def __init__(self, allow_variable_creation: bool) -> None:
        super().__init__(watch_accessed_variables=False)
        self._tracked = _EVERYTHING
        self._produced = _EVERYTHING
        self._recording = True
        self.allow_variable_creation = allow_variable_creation
        self.created_variables = False
        self.placeholders: set[int] = set()
        self.var_leaves: dict[int, Variable] = {}
        self.pending: dict[int, tuple[Variable, Tensor]] = {}
        self.effects: list[Tensor] = []
        self.random_leaves: dict[int, Callable[[], jax.Array]] = {}
        self.host_inputs = HostInputs(self)
        self._forcing_allowed = 0

    def random_key(self, seed: Any) -> Tensor:
        """A placeholder for a random op's key: a fresh key is drawn on every call of the function."""
        return self.per_call_key(functools.partial(random_ops._next_key, seed))

    def per_call_key(self, draw: Callable[[], jax.Array]) -> Tensor:
        """A placeholder for a PRNG key that `draw()` makes anew on every call (a seed stream or a
        `tf.random.Generator` advancing its state)."""
        tensor = concrete(draw())
        self.placeholders.add(tensor._tid)
        self.random_leaves[tensor._tid] = draw
        return tensor

    def _variable_read(self, variable: Variable, tensor: Tensor) -> None:
        pass  # `read_variable` made the read tensor

    def _clear(self) -> None:
        pass

    def placeholder(self, value: jax.Array, shape: tuple, dtype: DType) -> Tensor:
        tensor = Tensor(value, shape, dtype)
        self.placeholders.add(tensor._tid)
        return tensor

    def read_variable(self, variable: Variable) -> Tensor:
        """A read of `variable`: its pending new value, or a placeholder for its value at call time."""
        tensor = self.placeholder(variable._value, variable._shape, variable._dtype)
        self.var_leaves[tensor._tid] = variable
        pending = self.pending.get(id(variable))
        if pending is None:
            return tensor
        # State stops gradients: the read has the assigned value, but its gradient goes to the
        # variable (as a read of it), not through the assignment.
        from tapeshim._src.ops import math_ops

        stop = math_ops.stop_gradient
        return math_ops.add(stop(pending[1]), math_ops.subtract(tensor, stop(tensor)))

    def assign(self, variable: Variable, tensor: Tensor) -> None:
        self.pending[id(variable)] = (variable, tensor)

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
        raise errors.OperatorNotAllowedInGraphError(
            f"Using a symbolic `tf.Tensor` as a Python value (bool, float, int, iteration or .numpy()) is not "
            f"allowed inside tapeshim.function ({filename}, line {line}). The value is only known when the "
            "compiled function runs. Use `tf.cond` instead of a Python `if` and `tf.while_loop` instead of a "
            "Python `while` (tapeshim does not rewrite Python control flow as AutoGraph does), or compute the "
            "value outside the function."
        )


# -- argument signatures -------------------------------------------------------------
def _leaf_key(leaf: Any) -> tuple:
    if isinstance(leaf, Tensor):
        return ("tensor", tuple(leaf._shape), leaf._dtype.name)
    if isinstance(leaf, Variable):
        return ("variable", tuple(leaf._shape), leaf._dtype.name)
    if isinstance(leaf, (np.ndarray, np.generic)):
        return ("tensor", np.shape(leaf), str(np.asarray(leaf).dtype))
    if isinstance(leaf, OwnedIterator):  # by element spec, as TF: a new iterator of the same data shares a trace
        spec = leaf.element_spec
        return ("iterator", _structure_key(spec), tuple(nest.flatten(spec)))
    try:
        hash(leaf)
        return ("python", leaf)  # by value, as TF: f(2) and f(2.0) share a trace
    except TypeError:
        return ("python", id(leaf))


def _structure_key(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", tuple((k, _structure_key(value[k])) for k in sorted(value, key=repr)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_structure_key(v) for v in value))
    return "."


def _describe(key: tuple) -> str:
    kind = key[0]
    if kind == "tensor":
        return f"a tensor of shape {TensorShape(key[1])} and dtype {key[2]}"
    if kind == "variable":
        return f"a variable of shape {TensorShape(key[1])} and dtype {key[2]}"
    return f"the Python value {key[1]!r}"


class ConcreteFunction:
    """One trace of a `tapeshim.function`: its compiled program and how to feed it.

    Attributes:
      structured_input_signature: `(args, kwargs)` with `TensorSpec`s for tensor
        arguments and the Python values the trace was specialised on.
      structured_outputs: the outputs' structure with `TensorSpec`s.
    """

    def __init__(self, function: "Function", trace: FunctionTrace, flat_args: list, result: Any,
                 args: tuple, kwargs: dict, arg_placeholders: dict[int, int]) -> None:
        # A variable passed as an argument is read from (and written to) that argument on each call,
        # so calls with other variables of the same shape and dtype share this trace.
        arg_variables = {id(leaf): position for position, leaf in enumerate(flat_args) if isinstance(leaf, Variable)}
        self._function = function
        flat_out = nest.flatten(result)
        out_tensors: list[Tensor] = []
        self._out_kinds: list[tuple] = []
        for leaf in flat_out:
            if leaf is None:
                self._out_kinds.append(("python", None))
                continue
            if isinstance(leaf, Variable):
                leaf = trace.read_variable(leaf)
            elif not isinstance(leaf, Tensor):
                try:
                    leaf = convert_to_tensor(leaf)
                except (TypeError, ValueError):
                    raise TypeError(
                        "To be compatible with tf.function, Python functions must return zero or more Tensors or "
                        f"ExtensionTypes or None values; in compilation of {function._name}, found return value "
                        f"of type {type(leaf)}, which is not a Tensor or ExtensionType."
                    ) from None
            self._out_kinds.append(("tensor", len(out_tensors)))
            out_tensors.append(leaf)
        self._result_structure = result
        self.written_variables = [arg_variables.get(id(variable), variable) for variable, _ in trace.pending.values()]
        pending_tensors = [tensor for _, tensor in trace.pending.values()]
        roots = out_tensors + pending_tensors + trace.effects
        plan = replay.Plan(roots, None, None, share_constants=False)
        read_position: dict[int, int] = {}
        self.read_variables: list[Variable | int] = []
        leaf_sources: list[tuple[str, int]] = []
        const_values: list[jax.Array] = []
        self._const_tensors: list[Tensor] = []
        self._key_draws: list[Callable[[], jax.Array]] = []
        self.host_feed = HostFeed(trace.host_inputs, flat_args) if trace.host_inputs.groups else None
        for leaf in plan.leaves:
            if leaf._tid in arg_placeholders:
                leaf_sources.append(("arg", arg_placeholders[leaf._tid]))
            elif leaf._tid in trace.random_leaves:
                leaf_sources.append(("random", len(self._key_draws)))
                self._key_draws.append(trace.random_leaves[leaf._tid])
            elif self.host_feed is not None and self.host_feed.add_input(leaf._tid):
                leaf_sources.append(("host", len(self.host_feed.used) - 1))
            elif leaf._tid in trace.var_leaves:
                variable = trace.var_leaves[leaf._tid]
                if id(variable) not in read_position:
                    read_position[id(variable)] = len(self.read_variables)
                    self.read_variables.append(arg_variables.get(id(variable), variable))
                leaf_sources.append(("var", read_position[id(variable)]))
            else:
                # A captured tensor (or a constant made while tracing): the tensor itself is the
                # input, so a tape watching a captured tensor differentiates through the call.
                leaf_sources.append(("const", len(const_values)))
                const_values.append(leaf._value)
                self._const_tensors.append(leaf)
        self._const_values = const_values
        self._arg_positions = sorted(set(arg_placeholders.values()))
        out_slots = [plan.slot_of[t._tid] for t in out_tensors]
        pending_slots = [plan.slot_of[t._tid] for t in pending_tensors]
        self._out_avals = tuple((tuple(t._shape), t._dtype) for t in out_tensors)
        self._pending_avals = tuple((tuple(t._shape), t._dtype) for t in pending_tensors)
        steps = plan.steps
        arg_index = {position: i for i, position in enumerate(self._arg_positions)}
        sources = [(kind, arg_index[i] if kind == "arg" else i) for kind, i in leaf_sources]

        def program(arg_values: list, var_values: list, consts: list, keys: list, hosts: list) -> tuple:
            pools = {"arg": arg_values, "var": var_values, "const": consts, "random": keys, "host": hosts}
            leaf_values = [pools[kind][i] for kind, i in sources]
            env = replay.evaluate_plain(steps, leaf_values)
            return [env[s] for s in out_slots], [env[s] for s in pending_slots]

        self._program = program
        self._jitted = runtime_checks.jit(program)  # jax.jit, with TF's errors for out-of-range indices
        n_args, n_vars, n_consts = len(self._arg_positions), len(self.read_variables), len(const_values)
        n_keys = len(self._key_draws)

        def as_node(*values: jax.Array) -> tuple:
            consts_end = n_args + n_vars + n_consts
            keys_end = consts_end + n_keys
            outs, news = program(list(values[:n_args]), list(values[n_args:n_args + n_vars]),
                                 list(values[n_args + n_vars:consts_end]), list(values[consts_end:keys_end]),
                                 list(values[keys_end:]))
            return tuple(outs) + tuple(news)

        self._as_node = as_node
        self._node_key = ("function", id(self))
        self.structured_input_signature = nest.map_structure(
            lambda leaf: TensorSpec(leaf.shape, leaf.dtype) if isinstance(leaf, (Tensor, np.ndarray)) else leaf,
            (args, kwargs))
        self.structured_outputs = nest.map_structure(
            lambda leaf: TensorSpec(leaf.shape, leaf.dtype) if isinstance(leaf, Tensor) else leaf, result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def run(self, flat_args: list, host_values: list = ()) -> Any:
        """Runs the compiled program on a call's flattened arguments and writes variables back.

        Args:
          flat_args: the call's arguments, flattened.
          host_values: this call's host inputs (elements pulled from iterators), see `HostFeed`.
        """
        arg_tensors = [flat_args[i] if isinstance(flat_args[i], Tensor) else convert_to_tensor(flat_args[i])
                       for i in self._arg_positions]
        variables = [flat_args[v] if isinstance(v, int) else v for v in self.read_variables]
        written = [flat_args[v] if isinstance(v, int) else v for v in self.written_variables]
        keys = [draw() for draw in self._key_draws] if self._key_draws else []
        if _thread_state.recorders:
            reads = [variable._read_for_op() for variable in variables]
            key_tensors = [concrete(k) for k in keys] + [convert_to_tensor(v) for v in host_values]
            inputs = tuple(arg_tensors) + tuple(reads) + tuple(self._const_tensors) + tuple(key_tensors)
            if registry.tracking_recorders(inputs):
                if self.host_feed is not None and self.host_feed.used:
                    raise LookupError(
                        "No gradient defined for operation'IteratorGetNext' (op type: IteratorGetNext). In general "
                        "every operation must have an associated `@tf.RegisterGradient` for correct autodiff, which "
                        "this op is lacking. If you want to pretend this operation is a constant in your program, "
                        "you may insert `tf.stop_gradient`.")
                # Called under a tape: the call is one recorded op, each output watched by the tapes
                # that watch an input it depends on.
                dependencies = output_dependencies(self._node_key, self._as_node, inputs)
                tracking = [registry.tracking_recorders([inputs[i] for i in deps]) for deps in dependencies]
                outputs = registry.record(self._as_node, self._node_key, inputs,
                                          self._out_avals + self._pending_avals, tracking, deps=dependencies)
                n_out = len(self._out_avals)
                if written:
                    replay.force(list(outputs[n_out:]))
                    for variable, tensor in zip(written, outputs[n_out:]):
                        variable._value = tensor._value
                return self._pack(outputs[:n_out])
        outs, news = self._jitted([t.value for t in arg_tensors], [v._value for v in variables],
                                  self._const_values, keys, list(host_values))
        for variable, value in zip(written, news):
            variable._value = value
        return self._pack([Tensor(v, shape, dtype) for v, (shape, dtype) in zip(outs, self._out_avals)])

    def _pack(self, tensors: Any) -> Any:
        flat = [None if kind == "python" else tensors[i] for kind, i in self._out_kinds]
        return nest.pack_sequence_as(self._result_structure, flat)


class Function:
    """A Python function compiled as a whole, as `tf.function` (see `function`)."""

    def __init__(self, python_function: Callable, input_signature: Any = None, jit_compile: Any = None,
                 reduce_retracing: bool = False, autograph: bool = True, name: str | None = None) -> None:
        self._python_function = python_function
        self._input_signature = None if input_signature is None else list(input_signature)
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._name = name or getattr(python_function, "__name__", "function")
        self._concrete: dict[Any, ConcreteFunction] = {}
        self._tf_keys: set = set()
        self._last_key: tuple | None = None
        self._last_args: Any = None
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._first_trace_done = False
        self._initializing_traces = 0  # a first trace that created variables is traced again, as TF does
        try:
            self._signature: inspect.Signature | None = inspect.signature(python_function)
        except (TypeError, ValueError):
            self._signature = None
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        parameters = [] if self._signature is None else list(self._signature.parameters.values())
        # Calls with every positional parameter given need no binding, unless other defaults exist.
        simple = self._signature is not None and all(p.kind in kinds for p in parameters)
        self._n_positional = sum(p.kind in kinds for p in parameters) if simple else -1
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self) -> Callable:
        """The original Python function."""
        return self._python_function

    @property
    def input_signature(self) -> Any:
        return self._input_signature

    def experimental_get_tracing_count(self) -> int:
        """How many times the function was traced (TF's count of concrete signatures)."""
        return len(self._tf_keys) + self._initializing_traces

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = Function(functools.partial(self._python_function, instance), self._input_signature,
                             self._jit_compile, self._reduce_retracing, name=self._name)
            self._bound[instance] = bound
        return bound

    def _canonical(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Binds a call to the signature with defaults filled in, so `f(x)`, `f(x=x)` and
        `f(x, scale=2.0)` share a trace, as in TF."""
        if self._signature is None:
            return args, kwargs
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def _bind_signature(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Checks and converts a call against `input_signature`, as TF does."""
        specs = self._input_signature
        if kwargs or len(args) != len(specs):
            raise TypeError(
                f"Binding inputs to tf.function failed: the function {self._name} has input_signature {specs} "
                f"and was called with {len(args)} positional arguments and keyword arguments {sorted(kwargs)}."
            )
        converted = []
        for position, (value, spec) in enumerate(zip(args, specs)):
            if isinstance(spec, TensorSpec):
                flat_values, flat_specs = [value], [spec]  # a Python list converts to one tensor
            else:
                flat_values, flat_specs = nest.flatten(value), nest.flatten(spec)
                try:
                    nest.assert_same_structure(value, spec)
                except ValueError as exc:
                    raise TypeError(f"Binding inputs to tf.function failed: argument {position}: {exc}") from None
            tensors = []
            for leaf, leaf_spec in zip(flat_values, flat_specs):
                try:
                    tensor = convert_to_tensor(leaf, dtype_hint=leaf_spec.dtype)
                except (TypeError, ValueError) as exc:
                    raise TypeError(f"Binding inputs to tf.function failed: {exc}") from None
                if not leaf_spec.is_compatible_with(tensor):
                    raise TypeError(
                        "Binding inputs to tf.function failed due to `Can not cast "
                        f"{TensorSpec(tensor.shape, tensor.dtype)} to {leaf_spec}`. Received args: {args} and "
                        f"kwargs: {kwargs} for signature: {specs}."
                    )
                tensors.append(tensor)
            converted.append(tensors[0] if isinstance(spec, TensorSpec) else nest.pack_sequence_as(value, tensors))
        return tuple(converted), {}

    def _keys(self, args: tuple, kwargs: dict) -> tuple[tuple, Any, list]:
        if not kwargs and all(a.__class__ is Tensor for a in args):
            # The common call, tensors only: the same key as the general path, built directly.
            flat = list(args)
            key = (("dict", ()), tuple(("tensor", tuple(a._shape), a._dtype._name) for a in args))
            key = (("tuple", (("tuple", (".",) * len(args)), key[0])), key[1])
        else:
            flat = nest.flatten((args, kwargs))
            key = (_structure_key((args, kwargs)), tuple(_leaf_key(leaf) for leaf in flat))
        tf_key = ("signature",) if self._input_signature is not None else key
        return key, tf_key, flat

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """Traces (if needed) for these arguments and returns the concrete function."""
        if self._input_signature is not None and not args and not kwargs:
            args = tuple(nest.map_structure(
                lambda spec: convert_to_tensor(np.zeros([d or 1 for d in spec.shape], spec.dtype.as_numpy_dtype)),
                spec) for spec in self._input_signature)
        if self._input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs)
        key, tf_key, flat = self._keys(args, kwargs)
        return self._lookup(key, tf_key, flat, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _thread_state.trace is not None:
            return self._python_function(*args, **kwargs)  # inlined into the enclosing trace
        if kwargs or len(args) != self._n_positional:
            args, kwargs = self._canonical(args, kwargs)
        if self._input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs)
        key, tf_key, flat = self._keys(args, kwargs)
        concrete = self._concrete.get(key)
        if concrete is None:
            concrete = self._lookup(key, tf_key, flat, args, kwargs)
        if concrete.host_feed is not None:
            return self._run_with_host_inputs(concrete, key, flat, args, kwargs)
        return concrete.run(flat)

    def _run_with_host_inputs(self, concrete: ConcreteFunction, key: tuple, flat: list, args: tuple,
                              kwargs: dict) -> Any:
        """Pulls this call's iterator elements and runs the trace made for their shapes.

        A call whose elements have other shapes than the trace saw (a last, smaller
        batch) runs the Python function again for them; as TF traces an iterator by its
        element spec, this is not a TF retrace.
        """
        peeked, signature = concrete.host_feed.peek(flat)
        if signature != concrete.host_feed.signature:
            variant_key = (key, "host inputs", signature)
            variant = self._concrete.get(variant_key)
            if variant is None:
                variant = self._trace(flat, args, kwargs)
                self._concrete[variant_key] = variant
                stats["function_traces"] += 1
            concrete = variant
            if concrete.host_feed is None:
                return concrete.run(flat)
            peeked, signature = concrete.host_feed.peek(flat)
        result = concrete.run(flat, concrete.host_feed.values(peeked))
        concrete.host_feed.consume(peeked)  # a call that failed (under a tape) pulled nothing, as TF
        return result

    def _lookup(self, key: tuple, tf_key: Any, flat: list, args: tuple, kwargs: dict) -> ConcreteFunction:
        concrete = self._concrete.get(key)
        if concrete is not None:
            return concrete
        if self._last_key is not None:
            stats["last_retrace_reason"] = self._retrace_reason(args, kwargs)
        concrete = self._trace(flat, args, kwargs)
        self._concrete[key] = concrete
        self._tf_keys.add(tf_key)
        self._last_key = key
        self._last_args = (args, kwargs)
        stats["function_traces"] += 1
        return concrete

    def _retrace_reason(self, args: tuple, kwargs: dict) -> str:
        """Why a new trace is needed, in TF's terms, naming the argument that changed."""
        try:
            signature = inspect.signature(self._python_function)
            new = signature.bind(*args, **kwargs).arguments
            old = signature.bind(*self._last_args[0], **self._last_args[1]).arguments
        except (TypeError, ValueError):
            return f"{self._name} retraced because its arguments changed"
        for name, value in new.items():
            if name not in old:
                return f"{self._name} retraced because argument `{name}` was added"
            if _structure_key(value) != _structure_key(old[name]):
                return f"{self._name} retraced because argument `{name}` changed structure"
            for before, after in zip(nest.flatten(old[name]), nest.flatten(value)):
                b, a = _leaf_key(before), _leaf_key(after)
                if b == a:
                    continue
                if b[0] == a[0] == "tensor" and b[2] == a[2]:
                    return (f"{self._name} retraced because argument `{name}` changed shape from "
                            f"{TensorShape(b[1])} to {TensorShape(a[1])}")
                if b[0] == a[0] == "tensor":
                    return f"{self._name} retraced because argument `{name}` changed dtype from {b[2]} to {a[2]}"
                return f"{self._name} retraced because argument `{name}` changed from {_describe(b)} to {_describe(a)}"
        return f"{self._name} retraced because its arguments changed"

    def _trace(self, flat: list, args: tuple, kwargs: dict) -> ConcreteFunction:
        """Traces the Python function for these arguments.

        As TF, a first trace that created variables (including Keras's, such as an
        optimizer's slots) is followed by a second trace, which must create none: the
        Python function runs twice on that first call.
        """
        first = not self._first_trace_done
        concrete, trace = self._trace_once(flat, args, kwargs)
        if first and trace.created_variables:
            self._initializing_traces += 1
            concrete, _ = self._trace_once(flat, args, kwargs)
        return concrete

    def _trace_once(self, flat: list, args: tuple, kwargs: dict) -> tuple[ConcreteFunction, FunctionTrace]:
        trace = FunctionTrace(allow_variable_creation=not self._first_trace_done)
        placeholders: dict[int, int] = {}
        traced_flat = []
        for position, leaf in enumerate(flat):
            if isinstance(leaf, (Tensor, np.ndarray, np.generic)):
                tensor = convert_to_tensor(leaf)
                # The trace-time value, without forcing (inside another trace it may be symbolic).
                value = tensor._value if tensor._value is not None else jax.numpy.zeros(tensor._shape,
                                                                                        tensor._dtype._np)
                placeholder = trace.placeholder(value, tensor._shape, tensor._dtype)
                placeholders[placeholder._tid] = position
                traced_flat.append(placeholder)
            else:
                traced_flat.append(leaf)
        traced_args, traced_kwargs = nest.pack_sequence_as((args, kwargs), traced_flat)
        saved_recorders, saved_trace = _thread_state.recorders, _thread_state.trace
        _thread_state.recorders = [trace]
        _thread_state.trace = trace
        try:
            result = self._python_function(*traced_args, **traced_kwargs)
            concrete = ConcreteFunction(self, trace, flat, result, args, kwargs, placeholders)
        finally:
            _thread_state.trace = saved_trace
            _thread_state.recorders = saved_recorders
        self._first_trace_done = True
        return concrete, trace


def function(func: Callable | None = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: Any = None, reduce_retracing: bool = False, experimental_implements: Any = None,
             experimental_autograph_options: Any = None, experimental_attributes: Any = None,
             experimental_relax_shapes: Any = None, experimental_compile: Any = None,
             experimental_follow_type_hints: Any = None) -> Any:
    """Compiles a Python function into one XLA program, as `tf.function`.

    The function is traced once per input signature (tensor shapes and dtypes,
    Python argument values, structure); each call then runs one `jax.jit`
    program. Variables read or assigned inside are found while tracing and
    become the program's inputs and outputs; their new values are written back
    after each call. Python side effects run only while tracing; `tf.print`
    prints on every call.

    Args:
      func: the function to compile (or None, to use `function(...)` as a
        decorator with arguments).
      input_signature: a list of `tf.TensorSpec` (nests allowed) fixing the
        arguments; calls that do not match raise `TypeError`.
      autograph: accepted for compatibility; Python `if`/`while` on tensors is
        not rewritten and raises `OperatorNotAllowedInGraphError` (use
        `tf.cond`/`tf.while_loop`).
      jit_compile: accepted; the program is always compiled by XLA.
      reduce_retracing: accepted; every new shape traces again.

    Returns:
      A `Function`, or a decorator making one.
    """
    del autograph, experimental_implements, experimental_autograph_options, experimental_attributes
    del experimental_relax_shapes, experimental_compile, experimental_follow_type_hints

    def decorate(python_function: Callable) -> Function:
        return Function(python_function, input_signature, jit_compile, reduce_retracing)

    return decorate if func is None else decorate(func)
