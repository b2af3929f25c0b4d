"""`ConcreteFunction`: one trace of a `tapeshim.function`, its compiled program, signature and graph."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, cast

import jax
import jax.extend.core
import numpy as np

from tapeshim._src import (
    control_flow,
    device_leaves,
    errors,
    function_binding,
    function_outputs,
    host_errors,
    nest,
    registry,
    replay,
    runtime_checks,
)
from tapeshim._src.dataset_iterator import OwnedIterator
from tapeshim._src.forward import ForwardAccumulator
from tapeshim._src.function_graph import FuncGraph
from tapeshim._src.function_host_inputs import HostFeed
from tapeshim._src.function_symbolic import ExportedProgram, ExportFailed, fits
from tapeshim._src.function_trace import FunctionTrace, _use_of_leaked_tensor
from tapeshim._src.function_types import FunctionType, _spec_of, _type_text
from tapeshim._src.node import OpKey
from tapeshim._src.ragged_function import arg_tensor, is_ragged, unknown_rows
from tapeshim._src.recorded_call import record_call
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.variable import Variable

if TYPE_CHECKING:
    from tapeshim._src.function import Function

_TENSOR_LIKE = (Tensor, np.ndarray, np.generic, Variable, OwnedIterator)
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}  # (TF's DataTypeString)
_NO_HOST_VALUES: list = []  # a call without iterator pulls (never mutated)

# Compiled programs of traces, by the trace's structure: a retrace that records the same ops on inputs of the
# same shapes (a new Python float baked in as a captured constant) reuses the compiled program, as replay does.
_PROGRAM_CACHE_SIZE = 256
_programs: OrderedDict = OrderedDict()
_programs_lock = threading.Lock()


class ArrayCapacityMismatch(Exception):
    """A call's dynamic_size TensorArrays reached other sizes than the trace's capacities (see
    `autograph/tensor_array.py`); the function runs the call again with a trace for `capacities`."""

    def __init__(self, capacities: tuple) -> None:
        super().__init__(capacities)
        self.capacities = capacities


class _SharedProgram:
    """A trace's jitted program, shared by traces of the same structure (see `_programs`).

    Its first calls run on the host (`interpret.py`; how many: `compile_tiers.calls_before_compile`); then
    it compiles with XLA's defaults: under
    `tapeshim.function` the promise is `jax.jit`'s speed once compiled (the quick tier of `compile_tiers`
    saved 40% of the compile but ran a small step at twice `jax.jit`'s time until its work budget paid).
    With TF's errors for out-of-range indices; without index checks it settles on the plain jit.
    """

    __slots__ = ("call", "raw")

    def __init__(self, raw: Callable[..., Any]) -> None:
        self.raw = raw
        self.call: Callable[..., Any] = runtime_checks.jit(raw, self._settle)

    def _settle(self, plain: Callable[..., Any]) -> None:
        self.call = plain


def _shared_program(key: Any, build: Callable[[], Callable[..., Any]]) -> _SharedProgram:
    with _programs_lock:  # traces may run in several threads
        entry = _programs.get(key)
        if entry is not None:
            _programs.move_to_end(key)
            return entry
        entry = _SharedProgram(build())
        _programs[key] = entry
        if len(_programs) > _PROGRAM_CACHE_SIZE:
            _programs.popitem(last=False)
        return entry


def _struct_of(leaf: Tensor) -> jax.ShapeDtypeStruct:
    if leaf._value is not None:
        return jax.ShapeDtypeStruct(leaf._value.shape, leaf._value.dtype)
    return jax.ShapeDtypeStruct(tuple(leaf._shape), leaf._dtype._np)


def _check_no_leaked_tensors(plan: replay.Plan, roots: list[Tensor]) -> None:
    """TF's `TypeError` when a function uses a tensor leaked out of another function's trace."""
    for step in plan.node_steps():  # a loop body's tensor used after the loop (appended to a list): TF's error
        if step.fn is control_flow.use_of_loop_tensor:
            raise control_flow.InaccessibleTensorError(control_flow.OUT_OF_SCOPE_MESSAGE)
    if not any(step.fn is _use_of_leaked_tensor for step in plan.node_steps()):
        return
    raise TypeError(
        "A tensor defined inside another tf.function is out of scope and cannot be used here. Use return "
        "values, explicit Python locals or TensorFlow collections to access it.\nPlease see "
        "https://www.tensorflow.org/guide/function#all_outputs_of_a_tffunction_must_be_return_values for more "
        "information."
    )


class ConcreteFunction:
    """One trace of a `tapeshim.function`: its compiled program and how to feed it.

    Attributes:
      structured_input_signature: `(args, kwargs)` with `TensorSpec`s for tensor
        arguments and the Python values the trace was specialised on.
      structured_outputs: the outputs' structure with `TensorSpec`s.
    """

    def __init__(
        self,
        function: "Function",
        trace: FunctionTrace,
        flat_args: list,
        result: Any,
        args: tuple,
        kwargs: dict,
        arg_placeholders: dict[int, int],
        specs: Any = None,
    ) -> None:
        # A variable passed as an argument is read from (and written to) that argument on each call,
        # so calls with other variables of the same shape and dtype share this trace.
        arg_variables = {id(leaf): position for position, leaf in enumerate(flat_args) if isinstance(leaf, Variable)}
        self._function = function
        out_tensors = self._output_tensors(trace, result)
        self._result_structure = result
        n_results = len(out_tensors)
        # The sizes the arrays reach are extra outputs, after the function's own (which `_pack` reads).
        out_tensors = out_tensors + self._array_size_outputs(trace)
        self.written_variables = [arg_variables.get(id(variable), variable) for variable, _ in trace.pending.values()]
        pending_tensors = [tensor for _, tensor in trace.pending.values()]
        roots = out_tensors + pending_tensors + trace.effects
        self.has_effects = bool(trace.effects)  # tf.print, summaries: host callbacks a call waits for
        sliced = replay.Slice(roots)
        plan = sliced.plan
        _check_no_leaked_tensors(plan, roots)
        leaf_sources = self._leaf_sources(plan, trace, flat_args, arg_placeholders, arg_variables)
        self._arg_positions = sorted(set(arg_placeholders.values()))
        self._out_avals = tuple((tuple(t._shape), t._dtype) for t in out_tensors)
        self._pending_avals = tuple((tuple(t._shape), t._dtype) for t in pending_tensors)
        self.symbolic = trace.symbolic
        self.symbolic_shapes: dict[int, tuple] = {}  # its arguments' symbolic shapes by flat position (if symbolic)
        self._exported: ExportedProgram = cast(ExportedProgram, None)  # its program, where symbolic (`_export`)
        self._avals_by_shapes: dict = {}  # a symbolic trace's output avals, by the call's input shapes
        sources = self._program_sources(leaf_sources)
        self._compile(sliced, sources, len(out_tensors), len(pending_tensors))
        if self.symbolic:
            self._export(trace, arg_placeholders, flat_args)
        self._node_key = OpKey("function", id(self))
        self._traced_call = (args, kwargs)
        self._flat_traced = flat_args
        self._flat_inputs: list[tuple[int, str]] | None = None  # its tensor inputs' flat positions and names
        self.variants: list[ConcreteFunction] = []  # traces for every size of other ranks (specs of unknown rank)
        self._input_signatures(args, kwargs, specs)
        self.structured_outputs = self._output_signature(result, out_tensors)
        self._graph: FuncGraph | None = None
        self._graph_source = (
            trace,
            out_tensors[:n_results],
            list(trace.pending.values()),
            list(trace.effects),
            plan.leaves,
            str(function._name),
        )
        self.key: Any = None  # the function's cache key for this trace (set by the function)

    def _output_tensors(self, trace: FunctionTrace, result: Any) -> list[Tensor]:
        """The tensors among the function's flattened outputs; sets `_out_kinds` (`function_outputs`)."""
        out_tensors, self._out_kinds = function_outputs.output_tensors(trace, result, self._function._name)
        return out_tensors

    def _array_size_outputs(self, trace: FunctionTrace) -> list[Tensor]:
        """The sizes the trace's dynamic_size TensorArrays reach (extra outputs, checked on each call).

        Sets `_array_checks` and `array_capacities`.

        Raises:
          NotImplementedError: for such arrays together with effects (tf.print, tf.py_function,
            tf.numpy_function) or iterator pulls inside loops or branches.
        """
        self._array_checks = [(ordinal, capacity) for ordinal, _, capacity in trace.dynamic_array_sizes]
        self.array_capacities = tuple(sorted(dict(self._array_checks).items()))  # (ordinal, capacity) pairs
        if not self._array_checks:
            return []
        if trace.effects or any(group.branch_pulls for group in trace.host_inputs.groups.values()):
            raise NotImplementedError(
                "tapeshim.function does not support a dynamic_size TensorArray in a loop whose trip count is a "
                "tensor together with tf.print, tf.py_function, tf.numpy_function or iterator pulls inside loops or "
                "branches: the size the array reaches is only known when the function runs, and a call that finds "
                "another size runs again, which would repeat their effects. Run such a loop eagerly (outside "
                "tapeshim.function), or collect its values without the TensorArray."
            )
        return [size for _, size, _ in trace.dynamic_array_sizes]

    def _leaf_sources(
        self,
        plan: replay.Plan,
        trace: FunctionTrace,
        flat_args: list,
        arg_placeholders: dict[int, int],
        arg_variables: dict[int, int],
    ) -> list[tuple[str, int]]:
        """Where each of the plan's leaves comes from on a call: `(kind, index)` per leaf.

        Kinds: an argument ("arg", its flat position), a random key ("random"), a host input
        ("host"), a variable read ("var") or a captured constant ("const"), each indexing its own
        list. Sets `host_feed`, `read_variables`, `_key_draws`, `_const_tensors`, `_const_values`
        and `_fed_structs`.
        """
        read_position: dict[int, int] = {}
        self.read_variables: list[Variable | int] = []
        leaf_sources: list[tuple[str, int]] = []
        const_values: list[jax.Array] = []
        self._const_tensors: list[Tensor] = []
        self._key_draws: list[Callable[[], jax.Array]] = []
        key_structs: list[jax.ShapeDtypeStruct] = []
        host_structs: list[jax.ShapeDtypeStruct] = []
        self.host_feed = (
            HostFeed(trace.host_inputs, flat_args) if trace.host_inputs.groups or trace.host_inputs.datasets else None
        )
        for leaf in plan.leaves:
            if leaf._tid in arg_placeholders:
                leaf_sources.append(("arg", arg_placeholders[leaf._tid]))
            elif leaf._tid in trace.random_leaves:
                leaf_sources.append(("random", len(self._key_draws)))
                self._key_draws.append(trace.random_leaves[leaf._tid])
                key_structs.append(_struct_of(leaf))
            elif self.host_feed is not None and self.host_feed.add_input(leaf._tid):
                leaf_sources.append(("host", len(self.host_feed.used) - 1))
                host_structs.append(_struct_of(leaf))
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
                const_values.append(cast(jax.Array, leaf._value))
                self._const_tensors.append(leaf)
        self._const_values = const_values
        self._fed_structs = key_structs + host_structs  # per-call inputs, as the program takes them
        return leaf_sources

    def _program_sources(self, leaf_sources: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """Each leaf's place among the program's inputs: `(pool, index)`, pools "arg", "var", "const", "fed".

        Per-call inputs are one list ("fed"): the random keys, then the host inputs (pulled iterator elements).
        """
        arg_index = {position: i for i, position in enumerate(self._arg_positions)}
        n_keys = len(self._key_draws)
        return [
            ("arg", arg_index[i])
            if kind == "arg"
            else ("fed", n_keys + i)
            if kind == "host"
            else ("fed", i)
            if kind == "random"
            else (kind, i)
            for kind, i in leaf_sources
        ]

    def _compile(self, sliced: replay.Slice, sources: list[tuple[str, int]], n_out: int, n_pending: int) -> None:
        """Sets the trace's program (shared by traces of the same structure) and `_as_node`, its flat form.

        The program maps `(args, variables, consts, fed)` to `(outputs, new variable values)`.
        """
        out_slots = sliced.out_slots[:n_out]
        pending_slots = sliced.out_slots[n_out : n_out + n_pending]

        def build() -> Callable[..., Any]:
            run = sliced.function()

            def program(arg_values: list, var_values: list, consts: list, fed: list) -> tuple:
                pools = {"arg": arg_values, "var": var_values, "const": consts, "fed": fed}
                values = run([pools[kind][i] for kind, i in sources])
                return values[:n_out], values[n_out : n_out + n_pending]

            return program

        if self.symbolic:  # (its symbolic dimensions belong to its own trace: exported below, never shared)
            self._shared = _SharedProgram(build())
        else:
            self._shared = _shared_program((sliced.plan.key, tuple(sources), out_slots, pending_slots), build)
        self._program = self._shared.raw
        n_args, n_vars, n_consts = len(self._arg_positions), len(self.read_variables), len(self._const_values)

        def as_node(*values: jax.Array) -> tuple:
            consts_end = n_args + n_vars + n_consts
            outs, news = self._program(
                list(values[:n_args]),
                list(values[n_args : n_args + n_vars]),
                list(values[n_args + n_vars : consts_end]),
                list(values[consts_end:]),
            )
            return tuple(outs) + tuple(news)

        self._as_node = as_node

    def _export(self, trace: FunctionTrace, arg_placeholders: dict[int, int], flat_args: list) -> None:
        """Exports the program for the placeholders' symbolic shapes (`function_symbolic`): it serves every
        size, and replaces the shared program."""
        if self.host_feed is not None or self._array_checks:
            raise NotImplementedError("a trace for every size pulling iterators or sizing arrays")  # (per shape)
        placeholder_at = {position: tid for tid, position in arg_placeholders.items()}
        tensors = {t._tid: t for t in trace._placeholder_tensors}
        arg_structs = []
        for position in self._arg_positions:
            tensor = tensors[placeholder_at[position]]
            arg_structs.append(jax.ShapeDtypeStruct(tuple(tensor._shape), tensor._dtype._np))
        variables = [flat_args[v] if isinstance(v, int) else v for v in self.read_variables]
        var_structs = [jax.ShapeDtypeStruct(tuple(v._shape), v._dtype._np) for v in variables]
        const_structs = [jax.ShapeDtypeStruct(c.shape, c.dtype) for c in self._const_values]
        exported = ExportedProgram(self._program, (arg_structs, var_structs, const_structs, list(self._fed_structs)))
        self._shared = self._exported = exported  # type: ignore[assignment]  # the same `raw` and `call`
        self._program = exported.raw

    def _exportable(self, tracking: list) -> bool:
        """Whether a symbolic trace's call under the recorders `tracking` can be recorded as its exported
        program: none of them is a forward accumulator, the program has no loop (JAX differentiates no exported
        loop), and JAX exports it."""
        if self._exported.has_loop or any(isinstance(r, ForwardAccumulator) for r in tracking):
            return False
        try:
            self._exported.exported()
        except ExportFailed:
            return False
        return True

    def _call_avals(self, inputs: tuple) -> tuple:
        """The (shape, DType) of the outputs and new variable values for a call on `inputs` (tensors): the
        trace's, or for a trace for every size, the call's (by the program's shape rules, once per shapes)."""
        avals = self._out_avals + self._pending_avals
        if not self.symbolic:
            return avals
        shapes = tuple(tuple(t._shape) for t in inputs)
        known = self._avals_by_shapes.get(shapes)
        if known is None:
            if len(self._avals_by_shapes) >= 64:
                self._avals_by_shapes.clear()
            structs = [jax.ShapeDtypeStruct(shape, t._dtype._np) for shape, t in zip(shapes, inputs)]
            outs = jax.eval_shape(self._as_node, *structs)
            known = self._avals_by_shapes[shapes] = tuple(
                (tuple(out.shape), dtype) for out, (_, dtype) in zip(outs, avals)
            )
        return known

    def _input_signatures(self, args: tuple, kwargs: dict, specs: Any) -> None:
        """Sets `_input_specs` (the call's, or `specs`, as `TensorSpec`s) and `structured_input_signature`."""
        function = self._function
        if specs is None and function._input_signature is not None:
            specs = (tuple(function._input_signature), {})
        self._input_specs = nest.map_structure(_spec_of, (args, kwargs) if specs is None else specs)
        # TF names each tensor input after its parameter (`x`, `x_1`, ...) unless its spec has a name.
        leaf_names = function._leaf_names(args, kwargs, paths=True)
        self.structured_input_signature = nest.pack_sequence_as(
            self._input_specs,
            [
                TensorSpec(leaf.shape, leaf.dtype, leaf.name or leaf_names[i])
                if isinstance(leaf, TensorSpec) and i < len(leaf_names)
                else leaf
                for i, leaf in enumerate(nest.flatten(self._input_specs))
            ],
        )

    def _output_signature(self, result: Any, out_tensors: list[Tensor]) -> Any:
        """The outputs' structure with a `TensorSpec` per tensor (unknown dimensions as `None`)."""
        general = self._general_output_shapes(out_tensors)
        out_shapes: list = general if general else [t.shape for t in out_tensors]
        out_specs = [TensorSpec(shape, t.dtype) for shape, t in zip(out_shapes, out_tensors)]
        rows = unknown_rows(nest.flatten(self._input_specs))  # (a RaggedTensorSpec of unknown rows: results' too)
        return function_outputs.packed(self._out_kinds, result, out_specs, True, unknown_rows=rows)

    def _general_output_shapes(self, out_tensors: list[Tensor]) -> list[tuple | None] | None:
        """The output shapes of a trace made for specs with unknown dimensions, those dimensions as `None`.

        Unknown dimensions were traced as 1; the program is shape-evaluated again with them as 2,
        and the output dimensions that change are unknown (as TF's output type shows them).
        """
        if self.symbolic:
            return [tuple(d if d.__class__ is int else None for d in t._shape) for t in out_tensors]
        flat_specs = nest.flatten(self._input_specs)
        if self._key_draws or self.host_feed is not None or len(flat_specs) != len(self._flat_traced):
            return None
        probes, unknown = [], False
        for position in self._arg_positions:
            spec, traced = flat_specs[position], arg_tensor(self._flat_traced[position])
            dims = tuple(traced._shape)
            if isinstance(spec, TensorSpec) and spec.shape.rank == len(dims) and None in spec.shape.as_list():
                dims = tuple(2 if d is None else t for d, t in zip(spec.shape.as_list(), dims))
                unknown = True
            probes.append(jax.ShapeDtypeStruct(dims, traced._dtype._np))
        if not unknown:
            return None
        variables = [v if isinstance(v, Variable) else self._flat_traced[v] for v in self.read_variables]
        try:
            probed, _ = jax.eval_shape(self._program, probes, [v.value for v in variables], self._const_values, [])
        except Exception:  # noqa: BLE001 - a program that only runs at the traced shapes keeps them
            return None
        return [
            tuple(d if d == p else None for d, p in zip(t._shape, out.shape))
            if len(out.shape) == len(t._shape)
            else None
            for t, out in zip(out_tensors, probed)
        ]

    # -- calling ---------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calls this trace: Python arguments must be the traced ones (and may be left out), tensors
        must have the traced dtypes; positional tensors alone also bind to the tensor inputs in order."""
        call_args, call_kwargs = self._bind(args, kwargs)
        return self._function._call_concrete(self, call_args, call_kwargs)

    def _bind(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The call bound as TF binds it (`function_binding.bind_concrete`), its tensors' dtypes checked."""
        if self._flat_inputs is None:
            specs, names = nest.flatten(self._input_specs), self._function._leaf_names(*self._traced_call)
            self._flat_inputs = [  # (named after the parameters as the graph's placeholders, or their specs)
                (i, spec.name if isinstance(spec, TensorSpec) and spec.name else names[i])
                for i, (spec, traced) in enumerate(zip(specs, self._flat_traced))
                if isinstance(traced, _TENSOR_LIKE) and i < len(names)
            ]
        call_args, call_kwargs = function_binding.bind_concrete(
            self._function._signature,
            self._input_specs,
            self._traced_call,
            self._flat_inputs,
            str(self._function._name),
            self.function_type,
            args,
            kwargs,
        )
        self._check_dtypes(nest.flatten((call_args, call_kwargs)))
        return call_args, call_kwargs

    def _bind_flat(self, args: tuple, kwargs: dict) -> list | None:
        """TF's fallback: positional tensors bound to the trace's tensor inputs in order."""
        positions = [i for i, leaf in enumerate(self._flat_traced) if isinstance(leaf, _TENSOR_LIKE)]
        if kwargs or len(args) != len(positions):
            return None
        flat = list(self._flat_traced)
        for position, value in zip(positions, args):
            flat[position] = value
        return flat

    def variant_for(self, flat: list) -> ConcreteFunction | None:
        """The trace for every size of a call's ranks made for a call of this trace's specs, if it fits."""
        return next((v for v in self.variants if fits(v.symbolic_shapes, flat)), None)

    def specs_for_ranks(self, flat: list) -> Any:
        """This trace's specs where they have an unknown rank and a call's tensors (`flat`) are compatible with
        them: a trace of the call's ranks for every size is made from them (`Function._variant`); else None."""
        specs = nest.flatten(self._input_specs)
        if len(specs) != len(flat) or not any(isinstance(s, TensorSpec) and s.shape.rank is None for s in specs):
            return None
        for spec, leaf in zip(specs, flat):
            if isinstance(spec, TensorSpec) and not (isinstance(leaf, Tensor) and spec.is_compatible_with(leaf)):
                return None
        return self._input_specs

    def _check_dtypes(self, flat: list) -> None:
        """TF's error when the program runs with a tensor of another dtype than its input's (flat binding)."""
        for index, position in enumerate(self._arg_positions):
            expected = _spec_of(self._flat_traced[position]).dtype
            value = flat[position]
            if isinstance(value, (Tensor, Variable)) or is_ragged(value):
                got = value.dtype
            else:
                try:
                    got = convert_to_tensor(value, dtype_hint=expected).dtype
                except (TypeError, ValueError):
                    got = None
            if got != expected:
                got_name = "a Python object" if got is None else f"a {_TF_TYPE_NAMES.get(got.name, got.name)} tensor"
                raise errors.invalid_argument(
                    f"cannot compute __inference_{self._function._name} as input #{index}(zero-based) was expected "
                    f"to be a {_TF_TYPE_NAMES.get(expected.name, expected.name)} tensor but is {got_name}",
                    f"__inference_{self._function._name}",
                )

    @property
    def inference_fn(self) -> "AtomicFunction":
        """The trace as a function of its flat tensor inputs only (TF's `AtomicFunction`)."""
        return AtomicFunction(self)

    # -- signature ---------------------------------------------------------------------
    def _parameters(self) -> list[tuple[str, str, Any]]:
        """The trace's parameters as TF's function type lists them: `(name, kind, spec or value)`; an element
        of `*args` is a positional-only parameter of its own (`args_0`, making the named ones before it
        positional-only too), an entry of `**kwargs` a keyword-only one."""
        signature = self._function._signature
        args, kwargs = self._input_specs
        if signature is None:
            return [(f"arg_{i}", "POSITIONAL_ONLY", v) for i, v in enumerate(args)]
        bound = signature.bind(*args, **kwargs).arguments
        varargs = any(p.kind == p.VAR_POSITIONAL for p in signature.parameters.values())
        parameters = []
        for name, value in bound.items():
            kind = signature.parameters[name].kind
            if kind == kind.VAR_POSITIONAL:
                parameters += [(f"{name}_{i}", "POSITIONAL_ONLY", v) for i, v in enumerate(value)]
            elif kind == kind.VAR_KEYWORD:
                parameters += [(key, "KEYWORD_ONLY", v) for key, v in value.items()]
            else:
                positional_only = varargs and kind == kind.POSITIONAL_OR_KEYWORD
                parameters.append((name, "POSITIONAL_ONLY" if positional_only else kind.name, value))
        return parameters

    @property
    def function_type(self) -> "FunctionType":
        """The trace's parameters and output type, printed as TF prints them."""
        return FunctionType(self)

    @property
    def output_shapes(self) -> Any:
        """The outputs' shapes, nested as the outputs (`TensorShape(None)` for a non-tensor output)."""
        return nest.map_structure(lambda x: getattr(x, "shape", TensorShape(None)), self.structured_outputs)

    @property
    def output_dtypes(self) -> Any:
        """The outputs' dtypes, nested as the outputs."""
        return nest.map_structure(lambda x: None if x is None else x.dtype, self.structured_outputs)

    def _output_text(self) -> str:
        return _type_text(self.structured_outputs)

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """The parameters, output type and captures, as TF's `pretty_printed_signature` (`verbose=False`: the
        one-line `function_type`)."""
        if not verbose:
            return str(self.function_type)
        lines = ["Input Parameters:"]
        lines += [f"  {name} ({kind}): {_type_text(value)}" for name, kind, value in self._parameters()]
        lines += ["Output Type:", f"  {self._output_text()}", "Captures:"]
        captures = self.captured_inputs
        if not captures:
            lines.append("  None")
        for capture in captures:
            if isinstance(capture, Variable):
                lines.append(f"  {id(capture)}: TensorSpec(shape=(), dtype=tf.resource, name=None)")
            else:
                lines.append(f"  {id(capture)}: {_spec_of(capture)!r}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self) -> str:
        return f"<ConcreteFunction {self.function_type} at 0x{id(self):X}>"

    # -- graph -------------------------------------------------------------------------
    @property
    def graph(self) -> FuncGraph:
        """The traced graph: its operations and a GraphDef-like view (`as_graph_def().node`)."""
        if self._graph is None:
            self._graph = FuncGraph(*self._graph_source)
        return self._graph

    @property
    def name(self) -> bytes:
        return f"__inference_{self._function._name}".encode()

    @property
    def inputs(self) -> list:
        """The graph's input tensors (arguments, then captures)."""
        return self.graph.inputs

    @property
    def outputs(self) -> list:
        """The graph's output tensors."""
        return self.graph.outputs

    @property
    def captured_inputs(self) -> list:
        """The variables and tensors the trace captured (read from outside its arguments)."""
        captured = [v for v in self.read_variables if not isinstance(v, int)]
        first_tid = self._graph_source[0].first_tid
        return captured + [t for t in self._const_tensors if t._tid < first_tid]

    @property
    def variables(self) -> tuple:
        """The captured variables."""
        return tuple(v for v in self.read_variables if not isinstance(v, int))

    trainable_variables = property(lambda self: tuple(v for v in self.variables if v.trainable))

    def run(
        self, flat_args: list, host_values: list = _NO_HOST_VALUES, before_writes: Callable[[], None] | None = None
    ) -> Any:
        """Runs the compiled program on a call's flattened arguments and writes variables back.

        Args:
          flat_args: the call's arguments, flattened.
          host_values: this call's host inputs (elements pulled from iterators), see `HostFeed`.
          before_writes: called once the program (and its host callbacks) ran, before the variables are
            written; what it raises leaves them unwritten.
        """
        arg_tensors = [arg_tensor(flat_args[i]) for i in self._arg_positions]
        variables = [flat_args[v] if isinstance(v, int) else v for v in self.read_variables]
        written = [flat_args[v] if isinstance(v, int) else v for v in self.written_variables]
        keys = [draw() for draw in self._key_draws] if self._key_draws else []
        if _thread_state.recorders:
            reads = [variable._read_for_op() for variable in variables]
            key_tensors = [concrete(k) for k in keys] + [convert_to_tensor(v) for v in host_values]
            inputs = tuple(arg_tensors) + tuple(reads) + tuple(self._const_tensors) + tuple(key_tensors)
            tracking = registry.tracking_recorders(inputs)
            if tracking:
                if self.symbolic and not self._exportable(tracking):
                    # JAX cannot forward-differentiate an exported program: traced for this call's shapes
                    return self._function._run_sized(self, flat_args)
                if self.host_feed is not None and self.host_feed.pulls_iterators:
                    raise LookupError(
                        "No gradient defined for operation'IteratorGetNext' (op type: IteratorGetNext). In general "
                        "every operation must have an associated `@tf.RegisterGradient` for correct autodiff, which "
                        "this op is lacking. If you want to pretend this operation is a constant in your program, "
                        "you may insert `tf.stop_gradient`."
                    )
                # Called under a tape: the call is one recorded op, each output watched by the tapes
                # that watch an input it depends on.
                outputs = record_call(self._as_node, self._node_key, inputs, self._call_avals(inputs))
                n_out = len(self._out_avals)
                if self._array_checks:
                    sizes = list(outputs[n_out - len(self._array_checks) : n_out])
                    replay.force(sizes)
                    self._check_array_sizes([t._value for t in sizes])
                if written:
                    replay.force(list(outputs[n_out:]))
                    for variable, tensor in zip(written, outputs[n_out:]):
                        variable._stored(tensor.value)
                return self._pack(outputs[:n_out])
        if self.symbolic and self._exported.failed():
            return self._function._run_sized(self, flat_args)
        call = self._shared.call
        # (its captured NumPy constants put on the device once it runs compiled: a call would copy each)
        self._const_values = device_leaves.for_compiled_call(call, self._const_tensors, self._const_values, 0)
        try:
            outs, news = call(
                [t.value for t in arg_tensors],
                [v._value for v in variables],
                self._const_values,
                keys + host_values if host_values else keys,
            )
            if self.has_effects:  # as TF's call, which returns after its prints: wait for the host callbacks
                jax.effects_barrier()
        except ExportFailed:  # (a trace for every size that JAX cannot export: traced for the call's shapes)
            return self._function._run_sized(self, flat_args)
        except jax.errors.JaxRuntimeError:  # a py_function's Python function failed: TF's error for it
            host_errors.raise_pending()
            raise
        if self._array_checks:
            self._check_array_sizes(outs[len(outs) - len(self._array_checks) :])
        if before_writes is not None:
            before_writes()
        for variable, value in zip(written, news):
            variable._stored(value)
        if self.symbolic:
            return self._pack([Tensor(v, tuple(v.shape), dtype) for v, (_, dtype) in zip(outs, self._out_avals)])
        return self._pack([Tensor(v, shape, dtype) for v, (shape, dtype) in zip(outs, self._out_avals)])

    def as_jaxpr(self, flat_args: list | None = None) -> jax.extend.core.ClosedJaxpr:
        """The jaxpr of the program a call runs (`jax.jit` of it is what runs), for the traced arguments
        or the flattened `flat_args` of a call of the same shapes.

        A program with runtime index checks runs under `checkify` around this jaxpr.
        """
        flat_args = self._flat_traced if flat_args is None else flat_args

        def struct(value: Any) -> jax.ShapeDtypeStruct:
            tensor = value if isinstance(value, Variable) else arg_tensor(value)
            return jax.ShapeDtypeStruct(tuple(tensor.shape), tensor.dtype.as_numpy_dtype)

        args = [struct(flat_args[i]) for i in self._arg_positions]
        variables = [struct(flat_args[v] if isinstance(v, int) else v) for v in self.read_variables]
        consts = [jax.ShapeDtypeStruct(c.shape, c.dtype) for c in self._const_values]
        return jax.make_jaxpr(self._program)(args, variables, consts, list(self._fed_structs))

    def _check_array_sizes(self, sizes: list) -> None:
        """Raises `ArrayCapacityMismatch` when a bounded TensorArray reached another size than its capacity."""
        needed: dict[int, int] = {}
        for (ordinal, _), size in zip(self._array_checks, sizes):
            needed[ordinal] = max(needed.get(ordinal, 0), int(size))
        traced = dict(self._array_checks)
        if any(needed[ordinal] != traced[ordinal] for ordinal in needed):
            raise ArrayCapacityMismatch(tuple(sorted(needed.items())))

    def _pack(self, tensors: Any, structure: Any = None) -> Any:
        """The function's result structure (or `structure`) around its output `tensors` (or their specs)."""
        return function_outputs.packed(
            self._out_kinds, self._result_structure if structure is None else structure, tensors, structure is not None
        )


class AtomicFunction:
    """A trace called with its flat tensor inputs only, as TF's `AtomicFunction` (`inference_fn`)."""

    def __init__(self, function: ConcreteFunction) -> None:
        self._function = function

    def __call__(self, *tensors: Any) -> Any:
        flat = self._function._bind_flat(tensors, {})
        if flat is None:
            raise TypeError(f"{self} takes {len(self._function._arg_positions)} tensor inputs, got {len(tensors)}.")
        self._function._check_dtypes(flat)
        call_args, call_kwargs = nest.pack_sequence_as(self._function._traced_call, flat)
        return self._function._function._call_concrete(self._function, call_args, call_kwargs)

    def __repr__(self) -> str:
        return f"<AtomicFunction> __inference_{self._function._function._name}{self._function.function_type}"
