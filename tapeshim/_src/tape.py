"""`GradientTape`: TF's tape contract over the lazy graph and compiled replay."""

from __future__ import annotations

import contextlib
import enum
from types import TracebackType
from typing import Any, Callable, Iterator

import numpy as np

from tapeshim._src import differentiate as diff
from tapeshim._src import dtypes, errors, explain, interpret, nest, registry, replay, tape_views, tf_logging
from tapeshim._src import explain_hooks as _explain_hooks  # EXPLAIN: tape events for tape.explain
from tapeshim._src.indexed_slices import IndexedSlices
from tapeshim._src.ops import array_ops, math_ops
from tapeshim._src.ops.common import broadcast_check, tf_type_name
from tapeshim._src.shape import TensorShape
from tapeshim._src.state import Epoch, _thread_state, live_recorders
from tapeshim._src.tensor import Tensor, convert_to_tensor, read_only
from tapeshim._src.variable import Variable, as_variable

_ONE_SHOT = "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)"
_PERSISTENT_INSIDE = (
    "Calling GradientTape.gradient on a persistent tape inside its context is significantly less efficient "
    "than calling it outside the context (it causes the gradient ops to be recorded on the tape, leading to "
    "increased CPU and memory usage). Only call GradientTape.gradient inside the context if you actually want "
    "to trace the gradient in order to compute higher order derivatives."
)


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def parse_unconnected(value: UnconnectedGradients | str) -> UnconnectedGradients:
    if value.__class__ is UnconnectedGradients:  # the common case, without the enum's lookup (every gradient)
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}") from None


class Recorder:
    """What tapes and forward accumulators share: tracked tensors and watched variables.

    `_tracked` holds the ids of the tensors this recorder differentiates with
    respect to: watched tensors, its watched variables' reads, and the outputs
    of the ops it recorded from them. `_produced` holds only the last kind: the
    outputs of ops this recorder recorded, whose nodes it differentiates through.
    """

    def __init__(self, watch_accessed_variables: bool) -> None:
        self._watch_accessed = watch_accessed_variables
        self._tracked: set[int] = set()
        self._produced: set[int] = set()
        self._var_reads: dict[int, list[int]] = {}
        self._watched_vars: dict[int, Variable] = {}
        self._explicit_vars: set[int] = set()
        self._recording = False
        self._entered = False
        self._epoch = Epoch()
        self._tiers: dict = {}  # request key -> tier used: a persistent tape repeats a request bit for bit
        self._answers: dict = {}  # a persistent tape's gradients without output_gradients (`differentiate`)
        self._explain_log: _explain_hooks.TapeLog | None = None  # `explain_hooks.log_of` creates it
        live_recorders.add(self)

    def _variable_read(self, variable: Variable, tensor: Tensor) -> None:
        key = id(variable)
        if key in self._explicit_vars or (self._watch_accessed and variable._trainable):
            self._tracked.add(tensor._tid)
            reads = self._var_reads.setdefault(key, [])
            if not reads or reads[-1] != tensor._tid:  # (a function trace's reads of one assigned value are one)
                reads.append(tensor._tid)
            self._watched_vars.setdefault(key, variable)

    def _watch_one(self, value: Any) -> None:
        if isinstance(value, Variable):
            self._explicit_vars.add(id(value))
            self._watched_vars.setdefault(id(value), value)
        elif isinstance(value, Tensor):
            self._tracked.add(value._tid)
        else:
            raise ValueError(
                f"Passed in object {value} of type '{type(value).__name__}', not tf.Tensor or tf.Variable "
                "or ExtensionType."
            )

    def _push(self) -> None:
        _thread_state.recorders.append(self)
        self._recording = True

    def _pop(self) -> None:
        recorders = _thread_state.recorders
        if self in recorders:
            recorders.remove(self)
        self._recording = False

    def _clear(self) -> None:
        self._tracked = set()
        self._produced = set()
        self._var_reads = {}
        self._epoch.done = True  # what it recorded is left over now: the next op using it forces it
        self._epoch = Epoch()
        self._tiers = {}
        self._answers = {}


def _check_differentiable_arg(value: Any) -> None:
    if value is None:
        raise TypeError("Cannot convert the argument `type_value`: None to a TensorFlow DType.")
    if not isinstance(value, (Tensor, Variable)):
        raise AttributeError(f"'{type(value).__name__}' object has no attribute 'dtype'")


class GradientTape(Recorder):
    """Records operations for automatic differentiation, as `tf.GradientTape`.

    Ops run inside the `with` block on watched tensors (and trainable variables
    read there) are recorded lazily; `gradient` computes forward values and
    gradients in one compiled XLA program.

    Args:
      persistent: whether `gradient` may be called more than once.
      watch_accessed_variables: whether trainable variables read inside the
        block are watched automatically.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        super().__init__(watch_accessed_variables)
        self._persistent = persistent
        self._used = False

    def __enter__(self) -> "GradientTape":
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active tape.")
        _explain_hooks.entered(self)  # EXPLAIN
        self._renew_if_used()
        self._entered = True
        self._push()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._recording:
            self._pop()
            _explain_hooks.exited(self)  # EXPLAIN

    def _renew_if_used(self) -> None:
        """A used one-shot tape that records again starts a fresh recording, as TF's does."""
        if self._used:
            self._used = False
            self._clear()
            self._watched_vars = {}
            self._explicit_vars = set()

    def watch(self, tensor: Any) -> None:
        """Ensures `tensor` (a Tensor, Variable or nest of them) is traced by this tape.

        Raises:
          ValueError: if an element is not a Tensor or Variable.
        """
        if not self._entered:
            raise AttributeError("'NoneType' object has no attribute '_tape'")
        for value in nest.flatten(tensor):
            if isinstance(value, (Tensor, Variable)) and not value._dtype.is_trainable:
                tf_logging.warn_first_n(
                    f"The dtype of the watched tensor must be floating (e.g. tf.float32), got {value._dtype!r}", 5
                )
            if self._recording or not self._used:
                self._watch_one(value)
            elif isinstance(value, (Tensor, Variable)):
                raise AttributeError("'NoneType' object has no attribute '_tape'")  # TF's, for a used tape
            else:
                self._watch_one(value)

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stops recording: ops run inside are not recorded by this tape.

        Raises:
          RuntimeError: if the tape was never entered.
          ValueError: if the tape is not recording.
        """
        if not self._entered:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._pop()
        _explain_hooks.paused(self)  # EXPLAIN
        try:
            yield
        finally:
            self._renew_if_used()  # a gradient taken inside leaves a fresh recording behind, as in TF
            _explain_hooks.resumed(self)  # EXPLAIN
            self._push()

    def reset(self) -> None:
        """Clears everything recorded and watched so far.

        Raises:
          ValueError: if the tape is not recording.
        """
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._clear()
        self._watched_vars = {}
        self._explicit_vars = set()

    def watched_variables(self) -> tuple:
        """The variables this tape watched, in creation order."""
        ordered = sorted(self._watched_vars.values(), key=lambda v: v._order)
        return tuple(getattr(v, "_adapted", v) for v in ordered)  # another library's variable as given

    def _start_computation(self, message: str = _ONE_SHOT) -> None:
        if not self._entered or self._used:
            raise RuntimeError(message)
        if self._recording:
            if self._persistent:
                tf_logging.warn_first_n(_PERSISTENT_INSIDE, 1)
            else:
                self._pop()

    def _finish_computation(self) -> None:
        if not self._persistent:
            self._used = True
            self._clear()

    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """Computes the gradient of `target` with respect to `sources`.

        Args:
          target: a Tensor or Variable, or a nest of them; several or non-scalar
            targets are summed.
          sources: a Tensor or Variable, or a nest of them.
          output_gradients: one cotangent per flattened target (default ones).
          unconnected_gradients: `'none'` (default) or `'zero'`: what an
            unconnected source gets.

        Returns:
          Gradients in the structure of `sources`; `None` for unconnected ones.

        Raises:
          RuntimeError: on a second call to a non-persistent tape.
          TypeError: if `target` is None.
          ValueError: for an unknown `unconnected_gradients`.
        """
        self._start_computation()
        if target is None:
            raise TypeError(
                "Argument `target` should be a list or nested structure of Tensors, Variables or "
                "CompositeTensors to be differentiated, but received None."
            )
        unconnected = parse_unconnected(unconnected_gradients)
        flat_targets = [as_variable(t) for t in nest.flatten(target)]
        flat_sources = [as_variable(s) for s in nest.flatten(sources)]
        for value in flat_targets + flat_sources:
            _check_differentiable_arg(value)
        seeds = _seeds(flat_targets, output_gradients)
        request = diff.Request(self, flat_targets, flat_sources)
        sparse = diff.sparse_gathers(request)
        if sparse:
            by_source = self._sparse_gradient(request, flat_targets, seeds, sparse)
        else:
            values = diff.differentiate(self, diff.GRADIENT, request, seeds)
            by_source = dict(zip(request.connected, values))
        results = []
        for position in request.source_positions:
            source = request.sources[position]
            result = by_source.get(position)
            if result is None:
                if position in request.identity:
                    result = _filled(source, 1)
                elif unconnected is UnconnectedGradients.ZERO:
                    result = _filled(source, 0)
            results.append(result)
        _explain_hooks.after_gradient(self, target, sources, results)  # EXPLAIN
        self._finish_computation()
        released = request.targets  # a kept loss costs its own bytes, not its step's graph
        if request.read:  # (intermediates the request computed too, `read_after_gradient`)
            released = [*released, *(tensor for tensor in request.read if tensor is not None)]
        replay.release(released)
        return nest.pack_sequence_as(sources, results)

    def _sparse_gradient(self, request: Any, flat_targets: list, seeds: list, sparse: dict) -> dict:
        """Gradients where sources used only through gathers come back as IndexedSlices (TF's rule)."""
        dense = [i for i in request.connected if i not in sparse]
        outputs = [out for i in sorted(sparse) for out, _ in sparse[i]]
        inner = diff.Request(self, flat_targets, [request.sources[i] for i in dense] + outputs)
        values = dict(zip(inner.connected, diff.differentiate(self, diff.GRADIENT, inner, seeds)))
        request.read = inner.read
        by_source = {i: values.get(k) for k, i in enumerate(dense)}
        # Under a function trace or another tape the slices are built by recorded ops (a trace's outputs, a
        # higher-order gradient's inputs); else from the values at once.
        recorded = _thread_state.trace is not None or bool(registry.tracking_recorders(request.plan.leaves))
        position = len(dense)
        for i in sorted(sparse):
            grads: list[Tensor] = []
            index_tensors: list[Tensor] = []
            for _, index_tensor in sparse[i]:
                grad = values.get(position)
                position += 1
                if grad is not None:
                    grads.append(grad)
                    index_tensors.append(index_tensor)
            if grads:
                by_source[i] = _indexed_slices(request.sources[i], grads, index_tensors, recorded)
        return by_source

    def jacobian(
        self,
        target: Any,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """Computes the jacobian of `target` with respect to each source.

        Each result has shape `target.shape + source.shape`.
        """
        del parallel_iterations
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError(
                "GradientTape must be created with persistent=True to compute the jacobian with eager "
                "execution enabled and with  experimental_use_pfor set to False."
            )
        self._start_computation()
        unconnected = parse_unconnected(unconnected_gradients)
        if isinstance(target, (list, tuple, dict)):
            raise AttributeError(f"'{type(target).__name__}' object has no attribute 'shape'")
        _check_differentiable_arg(target)
        flat_sources = [as_variable(s) for s in nest.flatten(sources)]
        for value in flat_sources:
            _check_differentiable_arg(value)
        request = diff.Request(self, [target], flat_sources)
        by_source = dict(zip(request.connected, diff.differentiate(self, diff.JACOBIAN, request)))
        results = []
        for position in request.source_positions:
            source = request.sources[position]
            result = by_source.get(position)
            if result is None and unconnected is UnconnectedGradients.ZERO:
                result = _unconnected_jacobian(
                    tuple(target._shape) + tuple(source._shape), target, source, experimental_use_pfor
                )
            results.append(result)
        self._finish_computation()
        return nest.pack_sequence_as(sources, results)

    def batch_jacobian(
        self,
        target: Any,
        source: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Tensor:
        """Computes the per-example jacobian: shape `[b] + target.shape[1:] + source.shape[1:]`.

        Assumes example `i` of `target` depends only on example `i` of `source`.
        An unconnected source gives zeros, as in TF: of `target`'s dtype, or of
        `source`'s with `unconnected_gradients=ZERO`.
        """
        del parallel_iterations
        unconnected = parse_unconnected(unconnected_gradients)
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError(
                "GradientTape must be created with persistent=True to compute the batch_jacobian with eager "
                "execution enabled and  with experimental_use_pfor set to False."
            )
        self._start_computation(_ONE_SHOT.replace("to compute", "tocompute"))
        _check_differentiable_arg(target)
        _check_differentiable_arg(source)
        for shape in (target._shape, source._shape):
            if len(shape) < 2:
                raise ValueError(f"Shape {TensorShape(shape)} must have rank at least 2")
        if target._shape[0] != source._shape[0]:
            raise ValueError(
                f"Need first dimension of target shape ({TensorShape(target._shape)}) and source shape "
                f"({TensorShape(source._shape)}) to match."
            )
        request = diff.Request(self, [target], [source])
        values = diff.differentiate(self, diff.BATCH_JACOBIAN, request)
        self._finish_computation()
        if values:
            return values[0]
        shape = tuple(target._shape) + tuple(source._shape[1:])
        if unconnected is UnconnectedGradients.ZERO:
            return _unconnected_jacobian(shape, target, source, experimental_use_pfor)
        return _zeros(shape, target._dtype)

    # -- EXPLAIN: debugging views, implemented in explain.py and tape_views.py ------------------
    def explain(self, target: Any = None, sources: Any = None) -> Any:
        """Why each source's gradient is None or zero; see `tapeshim._src.explain.explain`."""
        return explain.explain(self, target, sources)

    def summary(self, target: Any = None, sources: Any = None, print_fn: Callable[[str], object] = print) -> str:
        """Prints the recorded slice as an op listing; see `tapeshim._src.tape_views.summary`."""
        return tape_views.summary(self, target, sources, print_fn)

    def as_jaxpr(self, target: Any = None, sources: Any = None) -> Any:
        """The jaxpr of the program `gradient` runs; see `tapeshim._src.tape_views.as_jaxpr`."""
        return tape_views.as_jaxpr(self, target, sources)

    def as_stablehlo(self, target: Any = None, sources: Any = None) -> str:
        """The StableHLO text of the program `gradient` runs; see `tapeshim._src.tape_views`."""
        return tape_views.as_stablehlo(self, target, sources)

    def to_dot(self, target: Any = None, sources: Any = None) -> Any:
        """The recorded slice as Graphviz DOT text; see `tapeshim._src.tape_views.to_dot`."""
        return tape_views.to_dot(self, target, sources)

    # -- end EXPLAIN ------------------------------------------------------------------------------


def _unconnected_jacobian(shape: tuple, target: Tensor, source: Any, use_pfor: bool) -> Tensor:
    """The zeros TF's jacobians give an unconnected source with `unconnected_gradients=ZERO`.

    Each row is `zeros_like(source)`, so the result has the source's dtype; without
    pfor, TF's loop writes the rows into a TensorArray of the target's dtype and
    refuses another dtype.
    """
    if not use_pfor and source._dtype != target._dtype:
        raise errors.invalid_argument(
            f"TensorArray dtype is {target._dtype.name} but Op is trying to write dtype {source._dtype.name}",
            "TensorListSetItem",
        )
    return _zeros(shape, source._dtype)


def _zeros(shape: tuple, dtype: Any) -> Tensor:
    return _filled_shape(shape, 0, dtype)


def _filled(source: Any, fill: int) -> Tensor:
    return _filled_shape(tuple(source._shape), fill, source._dtype)


def _filled_shape(shape: tuple, fill: int, dtype: Any) -> Tensor:
    return array_ops._filled(shape, fill, dtype)


def _seeds(flat_targets: list, output_gradients: Any) -> list:
    """Converts `output_gradients` to one optional seed per flattened target.

    As in TF, a short list leaves the remaining targets at ones and a long list
    is truncated; a seed must have its target's dtype and a shape that broadcasts
    to the target's.
    """
    if output_gradients is None:
        return [None] * len(flat_targets)
    seeds: list = []
    for target, value in zip(flat_targets, nest.flatten(output_gradients)):
        seed = convert_to_tensor(value)
        if seed._dtype != target._dtype:
            raise errors.invalid_argument(  # TF's Mul takes the seed first
                f"cannot compute Mul as input #1(zero-based) was expected to be a {tf_type_name(seed._dtype)} "
                f"tensor but is a {tf_type_name(target._dtype)} tensor",
                "Mul",
            )
        in_avals = ((tuple(target._shape), target._dtype), (tuple(seed._shape), seed._dtype))
        broadcast_check("Mul")(in_avals, {})
        if len(seed._shape) > len(target._shape) or any(
            s != t and s != 1 for s, t in zip(reversed(seed._shape), reversed(target._shape))
        ):
            raise errors.invalid_argument(
                f"Incompatible shapes: [{','.join(map(str, target._shape))}] vs. [{','.join(map(str, seed._shape))}]",
                "Mul",
            )
        seeds.append(seed)
    seeds.extend([None] * (len(flat_targets) - len(seeds)))
    return seeds


def _indexed_slices(source: Any, grads: list[Tensor], index_tensors: list[Tensor], recorded: bool) -> IndexedSlices:
    """The `IndexedSlices` gradient of `source` from the gradients of its gathers' outputs (`grads`) and their
    indices: their rows, joined. Indices of different dtypes join as int64, as TF's.

    Values on the host are joined with NumPy, without an op: JAX's `reshape` and `concatenate` compiled an XLA
    program for each new number of rows (6 ms each), and tapeshim's compile theirs when a number repeats (a
    bucketed loop: their compiles counted at the user's `tape.gradient` line). Others (recorded, off the CPU)
    are joined by tapeshim's ops.
    """
    rows = (-1, *source._shape[1:])
    sized = all(isinstance(d, int) for d in source._shape)  # (else sizes known per call)
    dense_shape = convert_to_tensor(source._shape, "int32") if sized else array_ops.shape(source)
    wide = len({t._dtype for t in index_tensors}) > 1
    leaves = [t._value for t in grads + index_tensors]
    if not recorded and all(leaf is not None for leaf in leaves) and interpret.host_readable(leaves):
        value_parts = [np.reshape(np.asarray(g._value), rows) for g in grads]
        index_parts = [
            np.reshape(np.asarray(t._value), -1).astype(np.int64 if wide else t._dtype._np, copy=False)
            for t in index_tensors
        ]
        # (one gather's rows are views of its gradient, not copied)
        values = value_parts[0] if len(value_parts) == 1 else np.concatenate(value_parts)
        indices = index_parts[0] if len(index_parts) == 1 else np.concatenate(index_parts)
        return IndexedSlices(
            Tensor(read_only(values), tuple(values.shape), grads[0]._dtype),
            Tensor(read_only(indices), tuple(indices.shape), dtypes.from_numpy(indices.dtype)),
            dense_shape,
        )
    parts = [array_ops.reshape(g, rows) for g in grads]
    flat = [array_ops.reshape(math_ops.cast(t, "int64") if wide else t, (-1,)) for t in index_tensors]
    return IndexedSlices(
        parts[0] if len(parts) == 1 else array_ops.concat(parts, 0),
        flat[0] if len(flat) == 1 else array_ops.concat(flat, 0),
        dense_shape,
    )
