"""The parts of `tf.custom_gradient` (`custom_gradient.py`) around its call: the recorders that note the
variables a forward reads, `grad_fn`'s None pattern and gradients as JAX cotangents, and the forward-mode rule
of a forward that left tapeshim."""

from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jax_core

from tapeshim._src import interpret
from tapeshim._src.function_trace import _EVERYTHING
from tapeshim._src.state import StatelessScope
from tapeshim._src.tape import Recorder
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor
from tapeshim._src.variable import Variable


class VariableCollector(Recorder):
    """Notes the variables a function reads or writes (a recorder that records nothing).

    `variables` are all of them (the op's inputs); `watched` those TF's variable watcher sees, whose
    gradients `grad_fn` returns: trainable ones that were read (an assignment that reads its value back
    counts, one with `read_value=False` does not).
    """

    def __init__(self) -> None:
        super().__init__(watch_accessed_variables=False)
        self.variables: dict[int, Variable] = {}
        self.watched: dict[int, Variable] = {}

    def _variable_read(self, variable: Variable, tensor: Tensor) -> None:
        self.variables.setdefault(id(variable), variable)
        if variable.trainable:
            self.watched.setdefault(id(variable), variable)

    def before_write(self, variable: Variable, tensor: Tensor) -> None:
        """Notes `variable` (holding `tensor`) before the function assigns it (`StatelessScope` calls this)."""
        self.variables.setdefault(id(variable), variable)


class LazyRun(VariableCollector):
    """Notes the variables a function reads while every op it runs records lazily: nothing is computed.

    A function that hands a value to Python or NumPy (`x.numpy()`, `float(x)`,
    `print(x)`) leaves an exit in the recorder's explain log (`explain_hooks.left_tape`).
    """

    def __init__(self) -> None:
        super().__init__()
        self._tracked = _EVERYTHING  # type: ignore[assignment]
        self._produced = _EVERYTHING  # type: ignore[assignment]
        # Each variable's value when the run first read or wrote it: the op's input for it.
        self.first_values: dict[int, Tensor] = {}
        self.wrote = False  # whether the run assigned a variable (it must not run again for this call)

    def _variable_read(self, variable: Variable, tensor: Tensor) -> None:
        super()._variable_read(variable, tensor)
        self.first_values.setdefault(id(variable), tensor)

    def before_write(self, variable: Variable, tensor: Tensor) -> None:
        super().before_write(variable, tensor)
        self.first_values.setdefault(id(variable), tensor)
        self.wrote = True

    def left_tapeshim(self) -> bool:
        return self._explain_log is not None and bool(self._explain_log.exits)


def watched_variables(collector: VariableCollector) -> list[Variable]:
    """The variables `grad_fn` gets (`variables=`), in the order of the op's variable inputs: those TF's
    watcher sees among all the function read or wrote."""
    return [v for v in collector.variables.values() if id(v) in collector.watched]


def wrap(values: Any) -> list[Tensor]:
    return [concrete(v) for v in values]


def accepts_variables(grad_fn: Callable) -> bool:
    try:
        parameters = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def zero_cotangent(value: jax.Array) -> Any:
    if jnp.issubdtype(value.dtype, jnp.inexact):
        return jnp.zeros_like(value)
    return np.zeros(value.shape, dtype=jax.dtypes.float0)


def input_gradient(grad: Any, value: jax.Array, position: int) -> jax.Array:
    """`grad_fn`'s gradient for argument `position`, broadcast to the argument's shape and dtype.

    Raises:
      ValueError: if the gradient's shape does not broadcast to the argument's (TF would hand back the
        gradient as it is; a JAX gradient must have the argument's shape).
    """
    array = convert_to_tensor(grad).value
    try:
        fits = np.broadcast_shapes(array.shape, value.shape) == tuple(value.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"custom_gradient grad_fn returned a gradient of shape {list(array.shape)} for argument {position} "
            f"of shape {list(value.shape)}; tapeshim needs a gradient with the argument's shape."
        )
    return jnp.broadcast_to(array, value.shape).astype(value.dtype)


def none_gradients(grad_fn: Callable, outputs: list, n_args: int, watched: Sequence[Variable]) -> set[int]:
    """Where `grad_fn` returns None (probed on ones as upstreams): argument positions, and `n_args + j`
    for the `j`-th of the `watched` variables.

    A `grad_fn` that fails here is left to fail at `gradient` time, where TF raises too; outputs
    whose shapes are symbolic (Keras's shape inference) are not probed.
    """
    try:
        upstream = wrap([jnp.ones(o.shape, o.dtype) for o in outputs])  # fails for a Keras symbolic batch
        with StatelessScope():
            grads = grad_fn(*upstream, variables=list(watched)) if watched else grad_fn(*upstream)
        variable_grads = list(grads[1]) if watched else []
        if watched:
            grads = grads[0]
    except Exception:  # noqa: BLE001 - reported when the gradient is computed
        return set()
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    if len(grads) != n_args:
        return set()
    nones = {i for i, g in enumerate(grads) if g is None}
    if len(variable_grads) == len(watched):
        nones.update(n_args + j for j, g in enumerate(variable_grads) if g is None)
    return nones


LEAVES_JAX = (
    jax.errors.TracerArrayConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerBoolConversionError,
)


def transposed_vjp(forward: Callable, vjp: Callable) -> Callable:
    """`forward` with a jvp that transposes `vjp(values, cotangents)` (linear in the cotangents)."""
    primal = jax.custom_jvp(forward)

    def jvp_rule(values: tuple, tangents: tuple) -> tuple:
        outs = forward(*values)
        structs = [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs]
        transpose = jax.linear_transpose(lambda *cotangents: vjp(values, cotangents), *structs)
        return outs, tuple(transpose(tuple(tangents)))

    primal.defjvp(jvp_rule)
    return primal


class _Traced(NamedTuple):
    """What `interpret.prepare` reads of a `jax.jit(...).trace(...)`, for a jaxpr traced otherwise."""

    jaxpr: jax_core.ClosedJaxpr
    in_tree: Any
    out_tree: Any


def fits(values: Sequence[Any], avals: Sequence[Any]) -> bool:
    """Whether `values` (arrays or tracers) have the shapes and dtypes of `avals`."""
    return len(values) == len(avals) and all(
        tuple(np.shape(v)) == tuple(aval.shape) and getattr(v, "dtype", None) == aval.dtype
        for v, aval in zip(values, avals)
    )


def host_program(closed: jax_core.ClosedJaxpr, args: tuple, outputs: Sequence[int], as_dict: bool) -> Any:
    """The host interpreter's program (`interpret.Prepared`) of `closed` called as a per-op kernel is on `args`
    (its arguments, flat within them), returning its outputs at `outputs`: as `{position: output}` with
    `as_dict` (a VJP kernel's), else as a tuple (a forward kernel's); None where the interpreter cannot run it."""
    if not interpret.enabled():
        return None
    jaxpr = closed.jaxpr
    selected = jax_core.ClosedJaxpr(jaxpr.replace(outvars=[jaxpr.outvars[k] for k in outputs]), closed.consts)
    out_tree = jax.tree.structure({k: 0 for k in outputs} if as_dict else tuple(outputs))
    try:
        return interpret.prepare(_Traced(selected, jax.tree.structure((args, {})), out_tree))
    except Exception:  # noqa: BLE001 - a rule's lowering that does not know its parameters: the kernel is traced
        return None
