"""`tapeshim.function`: a TF function traced once into the lazy graph, run as one `jax.jit` program.

Tracing runs the Python function once with placeholder tensors for its tensor
arguments while a `FunctionTrace` (`function_trace.py`) records *every* op (the
same recording a tape does). Variable reads become placeholders too, and
`assign`s are kept as lazy values. The recorded graph, from the function's outputs
and the variables' new values back to the placeholders, is one `replay.Plan`; its
program is jitted once (`ConcreteFunction`, `concrete_function.py`) and called with
the arguments', variables' and constants' current values on every call, after
which the new variable values are written back.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from typing import Any, Callable, TypedDict

import jax
import numpy as np

from tapeshim._src import autograph, dtypes, errors, function_binding, nest, ragged_function
from tapeshim._src import config as _config
from tapeshim._src.concrete_function import ArrayCapacityMismatch, ConcreteFunction
from tapeshim._src.dataset import Dataset
from tapeshim._src.dynamic_shapes import DynamicShapeNeeded, StringArgument, ValueNeededByAnOp
from tapeshim._src.function_host_inputs import OtherShapes
from tapeshim._src.function_keys import (
    covers,
    dataset_key,
    describe,
    generalized_key,
    generalized_spec,
    leaf_key,
    ranks,
    spec_covers,
    structure_key,
    tf_key_of,
    zeros_for_spec,
    zeros_tensor,
)
from tapeshim._src.function_outputs import eager_outputs
from tapeshim._src.function_retracing import detector_for, function_text
from tapeshim._src.function_symbolic import fits, leading_symbols, symbolic_shapes
from tapeshim._src.function_symbolic import stats as symbolic_stats
from tapeshim._src.function_trace import FunctionTrace
from tapeshim._src.function_types import PolymorphicFunctionType
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.tf_logging import get_logger
from tapeshim._src.trace_type import trace_type_of

__all__ = ["ConcreteFunction", "Function", "FunctionTrace", "function"]


class TraceStats(TypedDict):
    """`tapeshim.function`'s part of `compile_stats()`."""

    function_traces: int
    last_retrace_reason: str


stats: TraceStats = {"function_traces": 0, "last_retrace_reason": ""}


class Function:
    """A Python function compiled as a whole, as `tf.function` (see `function`)."""

    def __init__(
        self,
        python_function: Callable,
        input_signature: Any = None,
        jit_compile: Any = None,
        reduce_retracing: bool = False,
        autograph: bool = True,
        name: str | None = None,
    ) -> None:
        self._python_function = python_function
        self._autograph = autograph
        self._converted: Callable | None = None  # the AutoGraph form, made on the first trace
        self._input_signature = None if input_signature is None else list(input_signature)
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._name = name or getattr(python_function, "__name__", "function")
        self._concrete: dict[Any, ConcreteFunction] = {}
        self._tf_keys: set = set()
        self._eager_keys: set = set()  # argument types whose trace needs shapes XLA cannot have (dynamic_shapes)
        self._tf_concretes: dict[Any, ConcreteFunction] = {}  # the first trace for each TF signature
        self._spec_traces: list[tuple] = []  # get_concrete_function(TensorSpec) traces: (structure, specs, tf key)
        self._last_key: tuple | None = None
        self._last_args: Any = None
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._first_trace_done = False
        # the traces for every size of the signature (symbolic), by the arguments' ranks (one rank but where a
        # spec of unknown rank takes the call's)
        self._symbolic: dict[tuple, ConcreteFunction] = {}
        self._concrete_sizes = False  # whether a symbolic trace failed: traced per shape from then on
        self._regrouped = False  # whether a call its shared leading symbol did not fit was traced with its own
        self._sized: dict[Any, ConcreteFunction] = {}  # traces for the shapes of calls under tapes (`_run_sized`)
        self._made_symbolic: ConcreteFunction | None = None  # the symbolic trace the last `_trace` made, if any
        self._detector = detector_for(python_function)  # TF's frequent-retracing warning
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

    @property
    def function_type(self) -> PolymorphicFunctionType:
        """The parameters as TF prints them: `(x, y=<captured_default_value>)`, or with the signature's specs."""
        return PolymorphicFunctionType(self._signature, self._input_signature)

    def experimental_get_tracing_count(self) -> int:
        """How many times the function was traced (TF's count of concrete signatures)."""
        return len(self._tf_keys) + self._initializing_traces

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every traced signature (parameters, output type, captures), as TF prints them."""
        return "\n\n".join(concrete.pretty_printed_signature(verbose) for concrete in self._tf_concretes.values())

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = Function(
                functools.partial(self._python_function, instance),
                self._input_signature,
                self._jit_compile,
                self._reduce_retracing,
                autograph=self._autograph,
                name=self._name,
            )
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
        """Checks and converts a call against `input_signature`, as TF does (`function_binding`)."""
        return function_binding.bind_signature(self._input_signature, self._signature, self._name, args, kwargs)

    def _fails_at_these_sizes_only(self, flat: list, args: tuple, kwargs: dict, specs: Any) -> bool:
        """Whether a trace that raised a shape error for this call would pass with the same size, 2, at every
        `None` dimension of the input signature: the error then depends on sizes TF's graph does not know."""
        signature = self._input_signature
        if signature is None or len(nest.flatten(signature)) != len(flat):
            return False
        probe, unknown = [], False
        for leaf, spec in zip(flat, nest.flatten(signature)):
            dims = spec.shape.as_list() if isinstance(spec, TensorSpec) and spec.shape.rank is not None else None
            if dims is None or None not in dims or not isinstance(leaf, Tensor):
                probe.append(leaf)
                continue
            unknown = True
            probe.append(zeros_tensor([2 if d is None else d for d in dims], leaf._dtype._np))
        if not unknown:
            return False
        probe_args, probe_kwargs = nest.pack_sequence_as((args, kwargs), probe)
        try:
            self._trace_once(probe, probe_args, probe_kwargs, specs, (), None)
        except Exception:  # noqa: BLE001 - it fails at any sizes: TF's graph fails too, while tracing
            return False
        return True

    def _keys(self, args: tuple, kwargs: dict) -> tuple[tuple, Any, list]:
        if not kwargs and all(a.__class__ is Tensor for a in args):
            # The common call, tensors only: the same key as the general path, built directly.
            flat = list(args)
            tensor_keys = tuple(("tensor", tuple(a._shape), a._dtype._name) for a in args)
            key: tuple = (("tuple", (("tuple", (".",) * len(args)), ("dict", ()))), tensor_keys)
        else:
            flat = nest.flatten((args, kwargs))
            key = (structure_key((args, kwargs)), tuple(leaf_key(leaf) for leaf in flat))
        tf_key = ("signature",) if self._input_signature is not None else key
        if tf_key is key and any(isinstance(leaf, Dataset) for leaf in flat):
            # TF traces a dataset argument by its element spec; tapeshim traces each dataset object (its
            # elements may be read while tracing), but counts traces as TF does.
            tf_key = (
                key[0],
                tuple(
                    dataset_key(leaf) if isinstance(leaf, Dataset) else leaf_key for leaf, leaf_key in zip(flat, key[1])
                ),
            )
        if self._input_signature is None:  # (RaggedTensor arguments by their specs)
            tf_key = tf_key_of(tf_key)
        return key, tf_key, flat

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """Traces (if needed) for these arguments and returns the concrete function.

        Arguments may be tensors, Python values or `tf.TensorSpec`s. Unknown
        dimensions of an `input_signature` or of specs of known rank are traced
        symbolically, once for every size (`function_symbolic`), where the function
        allows it; otherwise they are traced as 1 (a call with other shapes traces
        the Python function again for them, which TF does not count as a retrace).
        """
        if self._input_signature is not None and not args and not kwargs:
            args = tuple(self._input_signature)
        args, kwargs = self._canonical(args, kwargs)
        specs = None
        if any(
            isinstance(leaf, TensorSpec) or ragged_function.is_ragged_spec(leaf)
            for leaf in nest.flatten((args, kwargs))
        ):
            specs = (args, kwargs)
            args, kwargs = nest.map_structure(zeros_for_spec, (args, kwargs))
        if self._input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs)
        key, tf_key, flat = self._keys(args, kwargs)
        if specs is not None and self._input_signature is None:
            flat_specs, structure = nest.flatten(specs), structure_key(specs)
            for spec_structure, spec_leaves, known_key in self._spec_traces:  # TF: a trace of a wider spec serves it
                if spec_structure == structure and all(map(spec_covers, spec_leaves, flat_specs)):
                    known = self._tf_concretes.get(known_key)
                    if known is not None:
                        return known
            tf_key = (structure, tuple(leaf_key(leaf) for leaf in flat_specs))
            self._spec_traces.append((structure, flat_specs, tf_key))
            existing = self._concrete.get(key)  # (a trace of the stand-ins' shapes: TF's only where its type covers)
            if existing is not None and not self._serves_specs(existing, flat_specs):
                del self._concrete[key]
        try:
            return self._lookup(key, tf_key, flat, args, kwargs, specs)
        except StringArgument as refused:  # (a concrete function is one program: TF's TypeError, saying why)
            raise TypeError(str(refused)) from None

    def _serves_specs(self, concrete: ConcreteFunction, flat_specs: list) -> bool:
        """Whether `concrete` is a trace of a TF signature (not one made for a call's shapes) whose specs
        cover `flat_specs`: TF's `get_concrete_function` of them returns it."""
        known = nest.flatten(concrete._input_specs)
        return (
            any(concrete is c for c in self._tf_concretes.values())
            and len(known) == len(flat_specs)
            and all(map(spec_covers, known, flat_specs))
        )

    def as_jaxpr(self, *args: Any, **kwargs: Any) -> Any:
        """The jaxpr of the program a call with these arguments runs (traced first if needed).

        Tracing here counts as a trace, as `get_concrete_function` does. Returns a
        `jax.extend.core.ClosedJaxpr`; its inputs are the call's tensor arguments, the
        variables the function reads, its captured constants, then per-call inputs
        (random keys, pulled iterator elements), and its outputs the function's
        tensor outputs, then the new values of the variables it assigns.
        """
        if kwargs or len(args) != self._n_positional:
            args, kwargs = self._canonical(args, kwargs)
        if self._input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs)
        key, tf_key, flat = self._keys(args, kwargs)
        concrete = self._concrete.get(key) or self._lookup(key, tf_key, flat, args, kwargs)
        return concrete.as_jaxpr(flat)

    def _covering_spec(self, args: tuple, kwargs: dict, flat: list) -> Any:
        """The TF key of a `get_concrete_function(TensorSpec)` trace that covers this call, if any."""
        structure = structure_key((args, kwargs))
        for spec_structure, spec_leaves, tf_key in self._spec_traces:
            if spec_structure == structure and all(map(covers, spec_leaves, flat)):
                return tf_key
        return None

    def _call_concrete(self, concrete: ConcreteFunction, args: tuple, kwargs: dict) -> Any:
        """Runs a call bound by a concrete function: its own program, or one traced for other shapes."""
        key, _, flat = self._keys(args, kwargs)
        if key != concrete.key and not (concrete.symbolic and fits(concrete.symbolic_shapes, flat)):
            concrete = self._concrete.get(key) or self._variant(concrete, key, flat, args, kwargs)
        return self._run(concrete, key, flat, args, kwargs)

    def _variant(
        self, concrete: ConcreteFunction, key: tuple, flat: list, args: tuple, kwargs: dict
    ) -> ConcreteFunction:
        """The trace for a call of `concrete`'s TF signature at shapes its own program does not serve: TF runs
        the same graph; tapeshim traces again, for every size of the call's ranks where `concrete`'s specs have
        an unknown rank (one trace per rank, shared by later calls of it), else for the call's shapes."""
        variant = concrete.variant_for(flat)
        if variant is None:
            specs = concrete.specs_for_ranks(flat)
            variant = self._trace(flat, args, kwargs, specs, symbolic=specs is not None)
            variant.key = key
            stats["function_traces"] += 1
            if variant.symbolic:
                concrete.variants.append(variant)
        self._concrete[key] = variant
        return variant

    def _run(self, concrete: ConcreteFunction, key: tuple, flat: list, args: tuple, kwargs: dict) -> Any:
        """Runs a call with `concrete`; a call whose dynamic_size TensorArrays reach other sizes than the
        trace's capacities runs again with a trace for those sizes (`autograph/tensor_array.py`), which is
        not a TF retrace."""
        for _ in range(4):
            try:
                if concrete.host_feed is not None:
                    return self._run_with_host_inputs(concrete, key, flat, args, kwargs)
                return concrete.run(flat)
            except ArrayCapacityMismatch as mismatch:
                base = concrete.key
                self._concrete.setdefault((base, "array capacities", concrete.array_capacities), concrete)
                variant_key = (base, "array capacities", mismatch.capacities)
                variant = self._concrete.get(variant_key)
                if variant is None:
                    variant = self._trace(flat, args, kwargs, capacities=mismatch.capacities)
                    variant.key = base
                    self._concrete[variant_key] = variant
                    stats["function_traces"] += 1
                self._concrete[base] = concrete = variant  # the next call of this signature tries these sizes first
        raise NotImplementedError(
            "The dynamic_size TensorArrays of this function's loops do not settle on one size "
            "per call; give them a fixed size."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _thread_state.trace is not None:
            with autograph.control_status(self._autograph):
                return self._traced_function()(*args, **kwargs)  # inlined into the enclosing trace
        if _config.STATE.run_functions_eagerly:  # tf.config.run_functions_eagerly(True) (FUNCTIONAL)
            return self._python_function(*args, **kwargs)
        if kwargs or len(args) != self._n_positional:
            args, kwargs = self._canonical(args, kwargs)
        if self._input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs)
        key, tf_key, flat = self._keys(args, kwargs)
        concrete = self._concrete.get(key) or self._symbolic_for(flat)
        if concrete is None:
            if key in self._eager_keys:
                return eager_outputs(self._python_function(*args, **kwargs), self._name)
            count = self.experimental_get_tracing_count()
            try:
                concrete = self._lookup(key, tf_key, flat, args, kwargs)
            except DynamicShapeNeeded as needed:
                return self._run_eagerly_from_now_on(needed, key, tf_key, args, kwargs)
            if self.experimental_get_tracing_count() != count:
                self._detector.called_with_tracing(function_text(self._python_function))
            else:
                self._detector.called_without_tracing()
        else:
            self._detector.called_without_tracing()
        if concrete.host_feed is None:
            try:
                return concrete.run(flat)
            except ArrayCapacityMismatch:
                pass  # `_run` traces for the sizes this call reached and runs it again
        return self._run(concrete, key, flat, args, kwargs)

    def _run_eagerly_from_now_on(
        self, needed: DynamicShapeNeeded, key: tuple, tf_key: Any, args: tuple, kwargs: dict
    ) -> Any:
        """Runs the Python function eagerly for this call and every later call with these argument types.

        Its trace reached a result whose shape TF leaves unknown and XLA cannot compile
        (`dynamic_shapes`), or it has a string tensor argument (`StringArgument`). TF traced it once, so the
        tracing count says so too (under `reduce_retracing`, once per generalized signature, as TF's); its
        outputs are tensors, as a trace's.
        """
        if self._reduce_retracing and self._input_signature is None:
            tf_key = generalized_key(tf_key, self._tf_keys)
        self._eager_keys.add(key)
        if tf_key not in self._tf_keys:  # (a new TF signature: what TF would trace, and say so once)
            self._tf_keys.add(tf_key)
            get_logger().warning(
                "tapeshim.function %s runs eagerly (op by op) for these argument types: %s. Values and gradients "
                "are TensorFlow's; Python side effects (print) run on every call.",
                function_text(self._python_function),
                needed.what,
            )
        return eager_outputs(self._python_function(*args, **kwargs), self._name)

    def _run_with_host_inputs(
        self, concrete: ConcreteFunction, key: tuple, flat: list, args: tuple, kwargs: dict
    ) -> Any:
        """Pulls this call's iterator elements and runs the trace made for their shapes.

        A call whose elements have other shapes than the trace saw (a last, smaller
        batch) runs the Python function again for them; as TF traces an iterator by its
        element spec, this is not a TF retrace.
        """
        feed = concrete.host_feed
        if feed is None:  # no host inputs: nothing to pull
            return concrete.run(flat)
        peeked, signature = feed.peek(flat)
        if signature != feed.signature:
            variant_key = (key, "host inputs", signature)
            variant = self._concrete.get(variant_key)
            if variant is None:
                variant = self._trace(flat, args, kwargs)
                variant.key = key
                self._concrete[variant_key] = variant
                stats["function_traces"] += 1
            concrete = variant
            feed = concrete.host_feed
            if feed is None:
                return concrete.run(flat)
            peeked, signature = feed.peek(flat)
        if feed.branch_pulls:  # pulls inside branches or loops take the elements after this call's others
            values = feed.values(peeked)
            feed.consume(peeked)
            try:
                result = concrete.run(flat, values, before_writes=feed.refuse_other_shapes)
            except OtherShapes:
                # A loop pulled an element of other shapes than its trace's (the last, smaller batch), whose
                # callback had to return the traced shapes: the call is run again eagerly, on the elements
                # put back, with no variable written by the run (its Python runs once more; TF's loop
                # traces the element spec's unknown sizes instead)
                feed.rewind()
                return self._python_function(*args, **kwargs)
            feed.raise_failure()
            return result
        result = concrete.run(flat, feed.values(peeked))
        feed.consume(peeked)  # a call that failed (under a tape) pulled nothing, as TF
        return result

    def _lookup(
        self, key: tuple, tf_key: Any, flat: list, args: tuple, kwargs: dict, specs: Any = None
    ) -> ConcreteFunction:
        concrete = self._concrete.get(key) or self._symbolic_for(flat)
        if concrete is not None:
            return concrete
        if self._spec_traces and specs is None:
            tf_key = self._covering_spec(args, kwargs, flat) or tf_key
        if self._reduce_retracing and self._input_signature is None:
            tf_key = generalized_key(tf_key, self._tf_keys)
            if specs is None and tf_key != key and tf_key[0] == key[0] and len(tf_key[1]) == len(flat):
                # The generalised signature, as TF shows it: `None` where the dimensions differ.
                specs = nest.pack_sequence_as(
                    (args, kwargs),
                    [generalized_spec(leaf, general, exact) for leaf, general, exact in zip(flat, tf_key[1], key[1])],
                )
        known = self._tf_concretes.get(tf_key)
        if known is not None and known.symbolic and fits(known.symbolic_shapes, flat):
            self._concrete[key] = known  # a trace for every size of the TF signature this call counts under
            return known
        if known is not None and specs is None and self._input_signature is None and known.specs_for_ranks(flat):
            return self._variant(known, key, flat, args, kwargs)  # a spec of unknown rank: a trace for this rank
        if self._last_key is not None:
            stats["last_retrace_reason"] = self._retrace_reason(args, kwargs)
        # (a call its signature's symbolic trace does not fit gets a trace of its own shapes; where only a shared
        # leading symbol keeps it out, one trace for every size with symbols of its own is tried first)
        regroup = (
            known is not None
            and known.symbolic
            and not self._regrouped
            and fits(known.symbolic_shapes, flat, same_leading=False)
        )
        self._regrouped = self._regrouped or regroup
        # (a spec of unknown rank: a call of another rank gets a trace for every size of its own rank)
        new_rank = self._input_signature is not None and bool(self._symbolic) and ranks(flat) not in self._symbolic
        symbolic = known is None or not known.symbolic or regroup or new_rank
        try:
            concrete = self._trace(flat, args, kwargs, specs, symbolic=symbolic, regroup=regroup)
        except ValueError as error:
            if not isinstance(error, StringArgument) and self._fails_at_these_sizes_only(flat, args, kwargs, specs):
                # TF's graph knows no sizes where the signature has None: it finds the mismatch when it runs
                raise errors.InvalidArgumentError(None, None, str(error)) from None
            raise
        concrete.key = key
        self._concrete[key] = concrete
        if tf_key not in self._tf_keys or (regroup and self._made_symbolic is not None):
            self._tf_concretes[tf_key] = self._made_symbolic or concrete  # the symbolic one where this call made it
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
            if structure_key(value) != structure_key(old[name]):
                return f"{self._name} retraced because argument `{name}` changed structure"
            for before, after in zip(nest.flatten(old[name]), nest.flatten(value)):
                b, a = leaf_key(before), leaf_key(after)
                if b == a:
                    continue
                if b[0] == a[0] == "tensor" and b[2] == a[2]:
                    return (
                        f"{self._name} retraced because argument `{name}` changed shape from "
                        f"{TensorShape(b[1])} to {TensorShape(a[1])}"
                    )
                if b[0] == a[0] == "tensor":
                    return f"{self._name} retraced because argument `{name}` changed dtype from {b[2]} to {a[2]}"
                return f"{self._name} retraced because argument `{name}` changed from {describe(b)} to {describe(a)}"
        return f"{self._name} retraced because its arguments changed"

    def _trace(
        self,
        flat: list,
        args: tuple,
        kwargs: dict,
        specs: Any = None,
        capacities: tuple = (),
        symbolic: bool = True,
        regroup: bool = False,
    ) -> ConcreteFunction:
        """Traces the Python function for these arguments.

        As TF, a first trace that created variables (including Keras's, such as an
        optimizer's slots) is followed by a second trace, which must create none: the
        Python function runs twice on that first call.

        With `regroup`, the call did not fit the symbolic trace only because leading sizes that share
        its symbol differ (a graph's nodes and edges, equal on the first call): it is traced once more
        for every size with symbols of its own, which replaces the shared one where it succeeds.
        """
        self._made_symbolic = None
        signature = self._input_signature if self._input_signature is not None else specs
        unfit = self._input_signature is not None and ranks(flat) in self._symbolic and not regroup
        attempts: list = []
        # (a trace sees a RaggedTensor argument's row partition: none serves every size)
        if symbolic and not (capacities or self._concrete_sizes or unfit or any(map(ragged_function.is_ragged, flat))):
            shapes = symbolic_shapes(signature, flat)
            if shapes is not None:
                attempts.append(shapes)
                if leading_symbols(shapes) > 1 and not regroup:  # leading sizes that differ may need one symbol
                    attempts.append(symbolic_shapes(signature, flat, share_leading=True))
        for shapes in attempts:
            try:
                concrete = self._trace_twice_if_creating(flat, args, kwargs, specs, capacities, shapes)
            except Exception as failure:  # noqa: BLE001 - a trace that needs concrete sizes: traced for this call's
                if isinstance(failure, DynamicShapeNeeded) and not isinstance(failure, ValueNeededByAnOp):
                    raise  # (a result TF gives an unknown shape: run eagerly; an op's size value: per-size traces)
                if shapes is attempts[-1]:
                    symbolic_stats["symbolic_fallbacks"] += 1
                    if not regroup:  # (not tried again: its Python would run twice per shape)
                        self._concrete_sizes = True
                else:  # symbols of their own failed: a later call is not traced with them again
                    self._regrouped = True
            else:
                symbolic_stats["symbolic_traces"] += 1
                concrete.symbolic_shapes = shapes
                self._made_symbolic = concrete
                if fits(shapes, flat):
                    if self._input_signature is not None:
                        self._symbolic[ranks(flat)] = concrete
                    return concrete
                # This call's sizes do not fit it (leading sizes that differ, an empty dimension): its own trace,
                # and the symbolic one serves later calls only once this call traced (it may raise).
                own = self._trace_twice_if_creating(flat, args, kwargs, specs, capacities, None)
                if self._input_signature is not None:
                    self._symbolic[ranks(flat)] = concrete
                return own
        return self._trace_twice_if_creating(flat, args, kwargs, specs, capacities, None)

    def _run_sized(self, symbolic: ConcreteFunction, flat: list) -> Any:
        """Runs a call of the symbolic trace with a trace for the call's own shapes: under a forward accumulator
        (JAX cannot forward-differentiate an exported program), or where JAX could not export it."""
        args, kwargs = nest.pack_sequence_as(symbolic._traced_call, flat)
        key, _, _ = self._keys(args, kwargs)
        concrete = self._sized.get(key)
        if concrete is None:
            if len(self._sized) >= _SIZED_TRACES:
                self._sized.pop(next(iter(self._sized)))
            concrete = self._sized[key] = self._trace_twice_if_creating(flat, args, kwargs, None, (), None)
        return concrete.run(flat)

    def _symbolic_for(self, flat: list) -> ConcreteFunction | None:
        """The symbolic trace (`function_symbolic`) where this call's arguments fit it, else None."""
        symbolic = self._symbolic.get(ranks(flat)) if self._symbolic else None
        return symbolic if symbolic is not None and fits(symbolic.symbolic_shapes, flat) else None

    def _trace_twice_if_creating(
        self, flat: list, args: tuple, kwargs: dict, specs: Any, capacities: tuple, shapes: dict | None
    ) -> ConcreteFunction:
        first = not self._first_trace_done
        concrete, trace = self._trace_once(flat, args, kwargs, specs, capacities, shapes)
        if first and trace.created_variables:
            self._initializing_traces += 1
            concrete, trace = self._trace_once(flat, args, kwargs, specs, capacities, shapes)
        if trace.grad_fn_draws:  # (traced again with a per-call key for them: `custom_gradient.add_backward_key`)
            concrete, _ = self._trace_once(flat, args, kwargs, specs, capacities, shapes)
        return concrete

    def _leaf_names(self, args: tuple, kwargs: dict, paths: bool = False) -> list[str]:
        """TF's graph names for the flattened arguments: the parameter's name, then `name_1`, ... (an element of
        `*args` is a parameter of its own, `args_0`); with `paths`, the names of a trace's specs in its
        `structured_input_signature`: the parameter's name and the path into a nested argument (`xs_0`, `d_a`)."""
        params = [] if self._signature is None else list(self._signature.parameters.values())
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
        names = []
        bases = [
            positional[i] if i < len(positional) else f"{var}_{i - len(positional)}" if var else f"args_{i}"
            for i in range(len(args))
        ]
        for base, value in list(zip(bases, args)) + [(name, kwargs[name]) for name in sorted(kwargs, key=repr)]:
            if paths:
                names += [base + suffix for suffix in _paths(value)]
            else:
                names += [base if i == 0 else f"{base}_{i}" for i in range(len(nest.flatten(value)))]
        return names

    def _traced_function(self) -> Callable:
        """What a trace runs: the AutoGraph form of the Python function (converted once), or the function."""
        if self._converted is None:
            self._converted = autograph.convert(self._python_function) if self._autograph else self._python_function
        return self._converted

    def _trace_once(
        self,
        flat: list,
        args: tuple,
        kwargs: dict,
        specs: Any = None,
        capacities: tuple = (),
        shapes: dict[int, tuple] | None = None,
    ) -> tuple[ConcreteFunction, FunctionTrace]:
        trace = FunctionTrace(allow_variable_creation=not self._first_trace_done, array_capacities=capacities)
        trace.symbolic = shapes is not None
        shapes = shapes or {}
        placeholders: dict[int, int] = {}
        traced_flat = []
        names = self._leaf_names(args, kwargs)
        for position, leaf in enumerate(flat):
            if isinstance(leaf, (Tensor, np.ndarray, np.generic)):
                tensor = convert_to_tensor(leaf)
                if tensor._dtype is dtypes.string:
                    argument = names[position] if position < len(names) else position
                    raise StringArgument(
                        f"tapeshim.function {function_text(self._python_function)} got a tf.string tensor as "
                        f"argument {argument}: string tensors live on the host and cannot enter a compiled "
                        "program. A call runs such a function eagerly; a concrete function cannot: run the string "
                        "ops outside the function (e.g. in Dataset.map) and pass the numbers they produce.",
                        f"a tf.string tensor as argument {argument} (string tensors live on the host)",
                    )
                # The trace-time value, without forcing (inside another trace it may be symbolic).
                name = names[position] if position < len(names) else None
                if position in shapes:  # every size at once: no value
                    placeholder = trace.placeholder(None, shapes[position], tensor._dtype, name)
                else:
                    value = (
                        tensor._value
                        if tensor._value is not None
                        else jax.numpy.zeros(tensor._shape, tensor._dtype._np)
                    )
                    placeholder = trace.placeholder(value, tensor._shape, tensor._dtype, name)
                placeholders[placeholder._tid] = position
                traced_flat.append(placeholder)
            elif ragged_function.is_traced_ragged(leaf):  # its flat values a placeholder, its partition as it is
                flat_values = leaf.flat_values
                value = (
                    flat_values._value
                    if flat_values._value is not None
                    else jax.numpy.zeros(flat_values._shape, flat_values._dtype._np)
                )
                name = names[position] if position < len(names) else None
                placeholder = trace.placeholder(value, flat_values._shape, flat_values._dtype, name)
                placeholders[placeholder._tid] = position
                traced_flat.append(ragged_function.traced_argument(leaf, placeholder))
            else:
                trace_type = trace_type_of(leaf)
                # The TraceType protocol: the function sees the type's placeholder value.
                traced_flat.append(leaf if trace_type is None else trace_type.placeholder_value(None))
        traced_args, traced_kwargs = nest.pack_sequence_as((args, kwargs), traced_flat)
        saved_recorders, saved_trace = _thread_state.recorders, _thread_state.trace
        _thread_state.recorders = [trace]
        _thread_state.trace = trace
        try:
            with autograph.control_status(self._autograph):
                result = self._traced_function()(*traced_args, **traced_kwargs)
            concrete = ConcreteFunction(self, trace, flat, result, args, kwargs, placeholders, specs)
        finally:
            _thread_state.trace = saved_trace
            _thread_state.recorders = saved_recorders
            trace.retire()
        self._first_trace_done = True
        return concrete, trace


def _paths(value: Any) -> list[str]:
    """The paths to a nested value's leaves, in `nest.flatten` order, as TF's spec names give them (`_0_a`)."""
    if isinstance(value, dict):
        return [f"_{key}{sub}" for key in nest._sorted_keys(value) for sub in _paths(value[key])]
    if isinstance(value, (list, tuple)):
        return [f"_{i}{sub}" for i, item in enumerate(value) for sub in _paths(item)]
    return [""]


_SIZED_TRACES = 64  # the per-shape traces a symbolic trace keeps for calls under tapes (oldest dropped first)


def function(
    func: Callable | None = None,
    input_signature: Any = None,
    autograph: bool = True,
    jit_compile: Any = None,
    reduce_retracing: bool = False,
    experimental_implements: Any = None,
    experimental_autograph_options: Any = None,
    experimental_attributes: Any = None,
    experimental_relax_shapes: Any = None,
    experimental_compile: Any = None,
    experimental_follow_type_hints: Any = None,
) -> Any:
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
      autograph: convert Python `if`/`while`/`for` over tensors into
        `tf.cond`/`tf.while_loop` (AutoGraph, `autograph/`); with False, Python
        control flow on a tensor raises `OperatorNotAllowedInGraphError`.
      jit_compile: accepted; the program is always compiled by XLA.
      reduce_retracing: count traces as TF does (generalised signatures);
        every new concrete shape is still compiled, running the Python function.

    Returns:
      A `Function`, or a decorator making one.
    """
    del experimental_implements, experimental_autograph_options, experimental_attributes
    del experimental_relax_shapes, experimental_compile, experimental_follow_type_hints

    def decorate(python_function: Callable) -> Function:
        return Function(python_function, input_signature, jit_compile, reduce_retracing, autograph=autograph)

    return decorate if func is None else decorate(func)
