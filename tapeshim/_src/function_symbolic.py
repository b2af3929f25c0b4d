"""One trace for every shape: an `input_signature`'s `None` dimensions traced as symbolic dimensions.

TF traces a function with an `input_signature` once; a `None` dimension is unknown
inside it (`x.shape` is `(None, 3)`) and one graph serves every size. tapeshim does
the same where it can: each `None` dimension becomes a symbolic dimension
(`jax.export.symbolic_shape`; the leading ones the first call gives one size are one, `BATCH`),
the placeholders have those shapes, ops record their outputs with the shapes JAX's
shape rules give (symbolic too), the function sees `None` for them (`TensorShape`),
and `tf.shape` arithmetic used as a shape folds to symbolic dimensions
(`symbolic_values`). Each size's first call is computed on the host from the trace's
symbolic jaxpr; the program is exported with `jax.export` for every size when a size
first compiles, in the background (`ExportedProgram`), and compiled for each size
(XLA needs the sizes), without running the Python function again.

Where the trace cannot be symbolic (a Python comparison of sizes, a size used where
only a number will do, a check that fails on a stand-in size), the function is traced
again with the call's concrete shapes, and each new shape runs the Python function
again (`stats["symbolic_fallbacks"]` counts these).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import jax
import numpy as np
from jax import export
from jax.experimental import checkify
from jax.sharding import SingleDeviceSharding

from tapeshim._src import (
    background_compile,
    compile_tiers,
    function_sized,
    interpret,
    nest,
    runtime_checks,
    symbolic_dims,
)
from tapeshim._src.tensor_spec import TensorSpec

stats = {"symbolic_traces": 0, "symbolic_fallbacks": 0, "sized_compiles": 0, "sized_fallbacks": 0}
_SUBMIT_LOCK = threading.Lock()  # (user threads may call one program at once: one submits its compile)


def symbolic_shapes(signature: Any, flat: list, share_leading: bool = False) -> dict[int, tuple] | None:
    """Per flat argument position, the symbolic shape to trace it with: `signature` (an `input_signature`, or
    the specs of a `get_concrete_function` or `reduce_retracing` trace, nested as the arguments) has a
    `TensorSpec` with `None` dimensions there (a spec of unknown rank: every dimension of the call's rank).
    None where it has none, a spec of unknown rank has no call to take a rank from, or the signature does not
    line up with the arguments. With `share_leading`, every leading `None` dimension is `BATCH`, whatever the
    call's sizes."""
    if signature is None:
        return None
    specs = nest.flatten(signature)
    if len(specs) != len(flat):
        return None
    dims_of: dict[int, list] = {}
    for position, spec in enumerate(specs):
        if not isinstance(spec, TensorSpec):
            continue
        if spec.shape.rank is not None:
            dims_of[position] = spec.shape.as_list()
            continue
        arg = flat[position]  # a spec of unknown rank: traced for the call's rank (TF's one trace for any rank)
        if isinstance(arg, TensorSpec) or not isinstance(getattr(arg, "_shape", None), tuple):
            return None
        dims_of[position] = [None] * len(arg._shape)
    if not any(None in dims for dims in dims_of.values()):
        return None
    scope = export.SymbolicScope()
    shapes: dict[int, tuple] = SymbolicShapes()
    counter = 0
    leading: dict = {}  # the first call's leading size -> its symbol
    for position, dims in dims_of.items():
        if None not in dims:
            continue
        names = []
        for axis, d in enumerate(dims):
            if d is None and axis == 0:
                given: tuple = tuple(getattr(flat[position], "_shape", ()))
                size = given[0] if len(given) == len(dims) and given[0].__class__ is int and not share_leading else None
                names.append(leading.setdefault(size, BATCH if not leading else f"{BATCH}_{len(leading)}"))
            elif d is None:
                names.append(f"_d{counter}")
                counter += 1
            else:
                names.append(str(d))
        shapes[position] = tuple(export.symbolic_shape(", ".join(names), scope=scope))
    return shapes


class SymbolicShapes(dict):
    """A trace's symbolic shapes by flat argument position (`symbolic_shapes`), with the form `fits` reads made
    once: per position, each dimension's size (an int) or its symbol's name (a str)."""

    __slots__ = ("_pattern",)

    def pattern(self) -> list[tuple[int, tuple]]:
        pattern = getattr(self, "_pattern", None)
        if pattern is None:
            pattern = self._pattern = _pattern(self)
        return pattern


def _pattern(shapes: dict[int, tuple]) -> list[tuple[int, tuple]]:
    """`(position, dimensions)` for `shapes`: each dimension an int, or its symbol's name (a str, which hashes and
    compares in a fraction of a symbolic dimension's time: `fits` runs on every call of a function)."""
    return [(position, tuple(d if d.__class__ is int else str(d) for d in shape)) for position, shape in shapes.items()]


BATCH = "_batch"
"""The symbol of the leading `None` dimensions that the first call gives one size: the arguments of a
signature with unknown leading dimensions are mostly a batch's parts (features and labels), whose sizes
TF checks against each other only when the graph runs and tapeshim's op checks compare while tracing.
Leading dimensions of another size on the first call (a graph's nodes and edges) get symbols of their
own (`_batch_1`, ...). A later call whose sizes differ where the first call's agreed does not fit the
symbolic trace (`fits`) and is traced for its shapes."""


def leading_symbols(shapes: dict[int, tuple]) -> int:
    """How many symbols the leading dimensions of a trace's `shapes` have."""
    return len({str(shape[0]) for shape in shapes.values() if shape and shape[0].__class__ is not int})


def fits(shapes: dict[int, tuple], flat: list, same_leading: bool = True) -> bool:
    """Whether a call's arguments (`flat`: tensors at the positions of `shapes`) fit the symbolic trace: known
    dimensions equal, no unknown one 0, and (with `same_leading`) the leading `None` dimensions of one symbol
    (`BATCH`) of one size."""
    leading: dict = {}
    pattern = shapes.pattern() if isinstance(shapes, SymbolicShapes) else _pattern(shapes)
    for position, shape in pattern:
        actual = flat[position]._shape
        if len(actual) != len(shape):
            return False
        for axis, (dim, size) in enumerate(zip(shape, actual)):
            if dim.__class__ is int:
                if dim != size:
                    return False
            elif size == 0:  # `jax.export` takes every symbolic size to be at least 1
                return False
            elif axis == 0 and same_leading and leading.setdefault(dim, size) != size:
                return False
    return True


class ExportFailed(Exception):
    """`jax.export` could not export a trace for every size (an op whose lowering needs its sizes): the
    function runs traces for the calls' own shapes instead (`ConcreteFunction.run`)."""


class _Deferred:
    """A compile for the background thread whose trace is made there too (`background_compile` calls
    `lower()`): the trace of an exported call exports the program first, which takes 80-100 ms."""

    __slots__ = ("_jitted", "_args")

    def __init__(self, jitted: Any, args: tuple) -> None:
        self._jitted, self._args = jitted, args

    def lower(self) -> Any:
        return self._jitted.trace(*self._args).lower()


class _Size:
    """How an exported program serves one concrete signature (`ExportedProgram.call`)."""

    __slots__ = ("host", "host_calls", "pending", "compiled", "tier", "upgrade", "optimized", "sizes", "rented_calls")

    def __init__(
        self, host: interpret.Prepared | None, rented_calls: int, compiled: Any, tier: Any, optimized: Any
    ) -> None:
        """`rented_calls`: the calls the host computes before one compiles it (the ski rental of
        `compile_tiers.calls_before_compile`)."""
        # its symbols' sizes until its first compile decides what it compiles from (`ExportedProgram._decide`)
        self.sizes: dict[str, int] | None = None
        self.host = host  # the host form of the program, until it has compiled
        self.host_calls = 0
        self.rented_calls = rented_calls
        self.pending: background_compile.Pending | None = None  # its compile in the background
        self.compiled = compiled  # the jitted program that compiles it (quick tier or optimized)
        self.tier: compile_tiers.QuickTier | None = tier  # its quick tier's account, None once optimized
        self.upgrade: background_compile.Pending | None = None  # its optimized compile in the background
        self.optimized = optimized  # the jitted program that compiles it optimized


class ExportedProgram:
    """A function's program exported for symbolic shapes: `raw` computes it for any sizes (traceable under
    `jax.jit`, differentiable), `call` runs it for one call's sizes.

    The program is exported (`exported()`) when first needed, under `checkify`, so its runtime index checks
    are outputs of the exported program; `raw` raises them again as checks (`checkify.check_error`), which
    the calling program turns into TF's `InvalidArgumentError` as it does for its own checks.

    `call` serves each concrete signature as `runtime_checks.CheckedProgram` serves a program: its first call
    is computed on the host (the recorded program's symbolic jaxpr, its dimensions evaluated at the call's
    sizes: `interpret.BoundTemplate`), as are its next calls until they have paid for its compile (a ski
    rental: `compile_tiers.calls_before_compile`; a size seen before, whose entry was dropped, compiles on
    its next call); the next submits the export and compile to the background thread, and calls are computed
    on the host until it is done; where the host cannot compute it, it compiles on the call. A first call so
    costs no export.

    A signature whose program produces fewer than `compile_tiers.HEAVY_WORK` elements per call compiles in
    the quick tier (`compile_tiers.BASELINE_OPTIONS`: a small training step's program compiled in 82 ms
    instead of 464 ms, and ran in 0.17 ms instead of 0.14 ms), and compiles optimized in the background once
    its calls times its work reach `compile_tiers.WORK_BUDGET`, as the eager engine's programs do.

    The first `SIZED_COMPILES` sizes to compile do so from the symbolic jaxpr evaluated at their sizes
    (`function_sized`), the later ones from the exported program: exporting costs more than a few sizes'
    traces (see `function_sized`). A size whose evaluation fails compiles from the export instead
    (`stats["sized_fallbacks"]`; the first of several threads calling it to see the failure switches it).
    """

    __slots__ = (
        "raw", "program", "arg_structs", "_struct_args", "_structs", "_checked", "_symbolic", "_signatures",
        "_seen", "_exported", "_export_error", "_export_lock", "has_loop", "_quick", "_host_template",
        "_sized_left",
    )  # fmt: skip
    SIZED_COMPILES = 4
    _SIGNATURES = 64  # the sizes whose host programs and compiles are tracked (the least recently seen go)
    _SEEN = 4096  # the sizes remembered as seen or compiled (then forgotten at once)

    def __init__(self, program: Callable[..., Any], structs: tuple) -> None:
        self.program = program  # the recorded program (its shapes symbolic: traceable only for `structs`)
        self.arg_structs = structs[0]  # the arguments' symbolic shapes (a saved model exports it again)
        self._struct_args = structs
        self._structs = jax.tree.leaves(structs)
        # The program's trace for the symbolic shapes (the host evaluates it): effects other than runtime
        # checks (a host callback, tf.print) cannot be exported, and the function traces per shape.
        self._symbolic = jax.jit(program).trace(*structs)
        if not all(interpret.is_check_effect(effect) for effect in self._symbolic.jaxpr.effects):
            raise NotImplementedError("a trace for every size with host callbacks")
        # (JAX cannot differentiate an exported loop whose trip count is known per call: a tape's calls of such a
        # program run traces for their own shapes, whose loops tapeshim differentiates)
        self.has_loop = interpret.has_loop(self._symbolic.jaxpr)
        self._host_template: interpret.BoundTemplate | None = None  # its host form, made at the first call
        self._exported: Any = None
        self._export_error: Exception | None = None
        self._export_lock = threading.Lock()

        def raw(*args: Any) -> Any:
            error, outputs = self.exported().call(*args)
            checkify.check_error(error)
            return outputs

        self.raw = raw
        # Explicit shardings: the exported program's outputs are committed to the device, and a variable
        # updated by one call would otherwise make the next call compile again for committed arguments.
        sharding = SingleDeviceSharding(jax.devices()[0])
        self._checked = jax.jit(checkify.checkify(raw), in_shardings=sharding, out_shardings=sharding)
        # (how many more sizes compile from their own evaluation of the symbolic jaxpr)
        self._sized_left = self.SIZED_COMPILES if function_sized.supported(self._symbolic.jaxpr) else 0
        quick_options = compile_tiers.baseline_options()
        self._quick = (
            None
            if quick_options is None
            else jax.jit(
                checkify.checkify(raw), in_shardings=sharding, out_shardings=sharding, compiler_options=quick_options
            )
        )
        self._signatures: dict[tuple, _Size] = {}
        # The signatures called before: False, or once compiled (or compiling) `(the jitted program that has it,
        # its quick tier's account)`.
        self._seen: dict = {}

    def failed(self) -> bool:
        """Whether the program could not be exported (its calls then run traces for their shapes)."""
        return self._export_error is not None

    def exported(self) -> Any:
        """The `jax.export.Exported` program (exported on first use, in whichever thread needs it first).

        Raises:
          ExportFailed: where JAX cannot export it.
        """
        with self._export_lock:
            if self._exported is None:
                if self._export_error is not None:
                    raise ExportFailed(str(self._export_error))
                try:
                    self._exported = export.export(jax.jit(checkify.checkify(self.program)))(*self._struct_args)
                except Exception as exc:  # noqa: BLE001 - JAX's own errors say why; the caller traces per shape
                    self._export_error = exc
                    raise ExportFailed(str(exc)) from exc
            return self._exported

    def call(self, *args: Any) -> Any:
        """The program's outputs for `args`: computed on the host or compiled (see the class docstring)."""
        leaves = jax.tree.leaves(args)
        key = interpret.signature(leaves)
        entry = self._signatures.get(key)
        if entry is None:
            if len(self._signatures) >= self._SIGNATURES:  # the least recently seen size goes
                self._signatures.pop(next(iter(self._signatures)))
            compiled_before = self._seen.get(key)
            if compiled_before:  # compiled before its entry was dropped: that jax.jit has it
                entry = self._signatures[key] = _Size(None, 0, *compiled_before)
            else:  # (seen before, it compiles now, as the call after its rental would)
                entry = self._signatures[key] = self._new_size(leaves, key in self._seen)
                if len(self._seen) >= self._SEEN:
                    self._seen.clear()
                self._seen[key] = False
        else:
            self._signatures[key] = self._signatures.pop(key)  # (most recently seen last)
        program = entry.host
        if program is not None and interpret.host_readable(leaves):
            entry.host_calls += 1
            if entry.host_calls > max(entry.rented_calls, 1) and entry.pending is None:
                with _SUBMIT_LOCK:  # (the rental ends: longer where this thread computes on every core; once)
                    entry.rented_calls += program.extension()
            if entry.host_calls > entry.rented_calls:
                with _SUBMIT_LOCK:
                    self._decide(entry)  # (it compiles now: in the background, or on this call)
                    if entry.pending is None and background_compile.enabled():
                        entry.pending = background_compile.submit(_Deferred(entry.compiled, args), args)
                        self._remember(key, entry)  # (compiled, or compiling: jax.jit will have it)
                pending = entry.pending
                if pending is None or pending.done():
                    entry.host = program = None  # compiled (or compiles now, on this call)
                    self._remember(key, entry)
            if program is not None:
                result = runtime_checks.host_call(program, args, leaves)
                if result is not None:
                    if entry.host_calls == 1 and entry.pending is None:  # (a size compiling already keeps its count)
                        entry.rented_calls = program.calls_before_compile()
                    return result
                entry.host = None
                if entry.pending is not None:
                    entry.pending.wait()  # (the compile under way serves this call)
        if entry.sizes is not None:
            with _SUBMIT_LOCK:
                self._decide(entry)
        sized = entry.optimized is not self._checked
        try:
            error, outputs = self._compiled_call(key, entry, args)
        except Exception:
            if not sized:
                raise
            # its evaluation at its sizes failed to trace or compile (or its run failed): the export serves it
            if entry.optimized is not self._checked:  # (else another thread's call saw it fail first)
                stats["sized_fallbacks"] += 1
                entry.optimized, entry.upgrade = self._checked, None
                entry.compiled = self._checked if entry.tier is None or self._quick is None else self._quick
                self._remember(key, entry)
            error, outputs = self._compiled_call(key, entry, args)
        runtime_checks.raise_failed(error)
        if entry.optimized is self._checked:  # (the export's: its explicit shardings commit its outputs)
            return _as_uncommitted(outputs, leaves)
        return outputs

    def _new_size(self, leaves: list, seen: bool) -> _Size:
        """A signature's entry: served on the host first, compiled in the quick tier unless its work is heavy;
        `seen`: the signature was seen before (its entry dropped), and compiles on its next call."""
        sizes = (
            symbolic_dims.sizes_of([s.shape for s in self._structs], [np.shape(leaf) for leaf in leaves])
            if len(leaves) == len(self._structs)
            else None
        )
        host = self._host_program(leaves, sizes)
        rented_calls = 0 if seen else 1  # (a new size's own count is set after its first host call)
        tier = compile_tiers.QuickTier()
        tier.work = host.work if host is not None else int(compile_tiers.HEAVY_WORK)
        if self._quick is None or tier.heavy:
            entry = _Size(host, rented_calls, self._checked, None, self._checked)
        else:
            entry = _Size(host, rented_calls, self._quick, tier, self._checked)
        entry.sizes = sizes
        return entry

    def _decide(self, entry: _Size) -> None:
        """Before a size's first compile (its caller holds `_SUBMIT_LOCK`): while sizes compiled from their own
        evaluation of the symbolic jaxpr are left (`SIZED_COMPILES`: only the sizes that compile count), it
        compiles so; else from the exported program, as it was made to."""
        sizes = entry.sizes
        if sizes is None:
            return
        try:
            if self._sized_left:
                self._sized_left -= 1
                stats["sized_compiles"] += 1
                quick, entry.optimized = self._sized_jits(sizes)
                entry.compiled = entry.optimized if entry.tier is None or quick is None else quick
        finally:  # (last: another thread's call sees `sizes` until the entry has what it compiles from)
            entry.sizes = None

    def _sized_jits(self, sizes: dict[str, int]) -> tuple[Any, Any]:
        """The quick-tier (None without one) and optimized jitted programs of the symbolic jaxpr evaluated at
        `sizes` (`function_sized`), taking what the exported program's take. Without the export's explicit
        shardings: their outputs are uncommitted for uncommitted arguments, as other programs', with no view on
        the host (`_as_uncommitted`, which makes each call finish first: 50-100 us a small step)."""
        program = checkify.checkify(function_sized.sized_program(self._symbolic.jaxpr, self._symbolic.out_tree, sizes))
        optimized = jax.jit(program)
        options = compile_tiers.baseline_options()
        if options is None:
            return None, optimized
        return jax.jit(program, compiler_options=options), optimized

    def _remember(self, key: tuple, entry: _Size) -> None:
        """Notes that `entry`'s program has (or is getting) its compile, should its entry be dropped."""
        self._seen[key] = (entry.compiled, entry.tier, entry.optimized)

    def _optimized(self, key: tuple, entry: _Size) -> None:
        entry.compiled, entry.tier, entry.upgrade = entry.optimized, None, None
        self._remember(key, entry)

    def _compiled_call(self, key: tuple, entry: _Size, args: tuple) -> Any:
        """The compiled program of a signature's `entry` on `args`; a quick-tier program tiers up (see the class
        docstring)."""
        tier = entry.tier
        if tier is None:
            return entry.compiled(*args)
        try:
            result = entry.compiled(*args)
        except Exception as exc:  # XLA refusing the quick options compiles with its defaults from now on
            if not compile_tiers.refused(exc, compile_tiers.BASELINE_OPTIONS):
                raise
            self._optimized(key, entry)
            return entry.compiled(*args)
        if entry.upgrade is None and tier.after_call():
            compile_tiers.stats["programs_tiered_up"] += 1
            if background_compile.enabled():
                entry.upgrade = background_compile.submit(_Deferred(entry.optimized, args), args)
            else:
                self._optimized(key, entry)
        elif entry.upgrade is not None and entry.upgrade.done():
            self._optimized(key, entry)
        return result

    def _host_program(self, leaves: list, sizes: dict[str, int] | None) -> interpret.Prepared | None:
        """The host form of the program for these arguments' `sizes`, or None."""
        if not interpret.enabled() or not interpret.host_readable(leaves) or sizes is None:
            return None
        if self._host_template is None:
            self._host_template = interpret.BoundTemplate(self._symbolic, checks=True)
        return self._host_template.bind(sizes)


def _as_uncommitted(outputs: Any, leaves: list) -> Any:
    """The exported program's `outputs` (committed by its explicit shardings) as `jax.jit`'s would be for the
    arguments `leaves`: uncommitted where no argument is committed. On the CPU they become read-only NumPy
    views of the results (what the host interpreter's outputs are); elsewhere they stay as they are. (A size
    compiled from its own evaluation has no explicit shardings: its outputs are handed on as they are.)

    A committed value reaching another compiled program makes it compile again (JAX compiles per pattern of
    committed arguments): the variables a Keras `fit` step's last, smaller batch updated through this program
    made the next epoch's first two steps compile the full-batch step again on the calling thread, 0.5-0.8 s
    each.
    """
    usable, device = interpret.placement(leaves)
    if not usable or device is not None:
        return outputs

    def view(value: Any) -> Any:
        if (
            isinstance(value, jax.Array)
            and value.committed
            and not jax.dtypes.issubdtype(value.dtype, jax.dtypes.extended)
        ):
            (placed,) = value.devices()
            if placed.platform == "cpu":
                return np.asarray(value)
        return value

    return jax.tree.map(view, outputs)
