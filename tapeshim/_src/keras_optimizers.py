"""`tf.keras.optimizers`: Keras 3's optimizers, updating all variables in one compiled call.

`apply_gradients` filters `None` gradients as Keras does (a UserWarning naming
the variables; ValueError when none is left), then runs Keras's own `apply`
for every remaining variable as **one** tapeshim op (`keras_bridge.stateful_call`):
one jitted call eagerly, one node of the program inside `tapeshim.function`.
The variables may be Keras variables or tapeshim `Variable`s; a tapeshim
Variable is given to Keras as a stand-in Keras variable of the same shape,
dtype and name, whose value the op supplies and whose update goes back to the
tapeshim Variable.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jax_sparse

from tapeshim._src import checkpoint, dtypes, errors, keras_compat
from tapeshim._src.distribute.collectives import psum_arrays
from tapeshim._src.indexed_slices import IndexedSlices
from tapeshim._src.keras_bridge import (
    KerasVariable,
    adopt_variable,
    keras,
    note_variables_created,
    passthrough,
    stateful_call,
    view_of,
)
from tapeshim._src.keras_initial_values import host_initializer
from tapeshim._src.keras_restore import apply_pending_restore, restore_when_built, variables_by_position
from tapeshim._src.ops import math_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.tape import GradientTape
from tapeshim._src.tensor import Tensor, convert_to_tensor, read_only
from tapeshim._src.variable import Variable

# Optimizers whose update, given a sparse gradient, does what TF's Keras does with an IndexedSlices one.
# The others (Adadelta, Adafactor, a loss-scale wrapper, user classes) get it densified first.
_STATELESS_ONLY = (keras.optimizers.LossScaleOptimizer,)
_SPARSE_UPDATES = tuple(
    getattr(keras.optimizers, name)
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Nadam", "Lion", "Ftrl", "Lamb")
)


def updates_sparsely(optimizer: Any) -> bool:
    """Whether `optimizer` applies an `IndexedSlices` gradient slice by slice, as TF's Keras (else densified)."""
    return isinstance(optimizer, _SPARSE_UPDATES) and not isinstance(optimizer, _STATELESS_ONLY)


_stand_ins: dict[int, Any] = {}  # id(tapeshim Variable) -> its Keras stand-in
# id(Keras stand-in) -> its tapeshim Variable. Keyed by id, not a WeakKeyDictionary: a Keras variable
# defines `__eq__` (elementwise) and so is unhashable.
_stand_in_owners: dict[int, weakref.ref[Variable]] = {}
# optimizer -> the Keras variables it was built for (what `apply(grads)` without variables updates)
_built_variables: weakref.WeakKeyDictionary[Any, list] = weakref.WeakKeyDictionary()
_narrow_updates = threading.local()  # .active: the running `apply` updates sparse gradients in 32-bit mode


def _stand_in(variable: Variable) -> Any:
    stand_in = _stand_ins.get(id(variable))
    if stand_in is None:
        name = variable.name.split(":")[0].replace("/", "_")
        stand_in = keras.Variable(
            np.zeros(variable._shape, variable._dtype._np),
            dtype=variable._dtype.name,
            trainable=variable.trainable,
            name=name,
        )
        stand_in.constraint = variable.constraint  # Keras applies it after the update, as TF's Keras does
        _stand_in_owners[id(stand_in)] = weakref.ref(variable)
        weakref.finalize(stand_in, _stand_in_owners.pop, id(stand_in), None)
        _stand_ins[id(variable)] = stand_in
        weakref.finalize(variable, _stand_ins.pop, id(variable), None)
    return stand_in


def _sides(variable: Any) -> tuple[Any, Variable]:
    """(the Keras variable the optimizer sees, the tapeshim Variable holding the value)."""
    if isinstance(variable, keras.Variable):
        owner = _stand_in_owners.get(id(variable))
        tapeshim_variable = None if owner is None else owner()
        if tapeshim_variable is not None:
            return variable, tapeshim_variable
        return variable, view_of(variable)
    if isinstance(variable, KerasVariable):
        return variable._adapted, variable
    if isinstance(variable, Variable):
        return _stand_in(variable), variable
    raise TypeError(
        f"Expected a variable (a tf.Variable or a Keras variable) to update, got {variable!r} of type "
        f"{type(variable).__name__}."
    )


def _name(keras_variable: Any, variable: Variable) -> str:
    return variable.name if id(keras_variable) in _stand_in_owners else keras_variable.path


def _checked_gradient(gradient: Any, keras_variable: Any, variable: Variable) -> Any:
    """A gradient as the update op takes it: a Tensor of the variable's dtype, or `(values, indices)`
    for an `IndexedSlices`.

    Raises:
      InvalidArgumentError: if its shape (or its rows' shape) is not the variable's.
    """
    if isinstance(gradient, IndexedSlices):
        values, indices = convert_to_tensor(gradient.values), convert_to_tensor(gradient.indices)
        shape = (None,) + tuple(values._shape[1:])
        if len(values._shape) != len(variable._shape) or values._shape[1:] != variable._shape[1:]:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Gradient rows of shape {TensorShape(values._shape[1:])} do not match the rows "
                f"{TensorShape(variable._shape[1:])} of variable '{_name(keras_variable, variable)}' "
                f"(IndexedSlices of shape {TensorShape(shape)}); no variable was updated.",
            )
        if indices._value is not None:
            rows = variable._shape[0]
            outside = np.flatnonzero((np.asarray(indices._value) < 0) | (np.asarray(indices._value) >= rows))
            if outside.size:
                first = int(outside[0])
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"indices[{first}] = {int(np.asarray(indices._value)[first])} is not in [0, {rows}): "
                    f"the IndexedSlices gradient of variable '{_name(keras_variable, variable)}' names a row it does "
                    "not have; no variable was updated.",
                )
        if values._dtype != variable._dtype:
            values = math_ops.cast(values, variable._dtype)
        return _bucketed_rows(values, indices)
    gradient = convert_to_tensor(gradient)
    if gradient._shape != variable._shape:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Gradient shape {TensorShape(gradient._shape)} does not match the shape "
            f"{TensorShape(variable._shape)} of variable '{_name(keras_variable, variable)}'; no variable "
            "was updated.",
        )
    if gradient._dtype != variable._dtype:
        gradient = math_ops.cast(gradient, variable._dtype)
    return gradient


def _bucketed_rows(values: Any, indices: Any) -> tuple:
    """`(values, indices)` with zero rows added at the first row's index, up to the next power of two of rows.

    A Keras update is one program per argument shapes (`stateful_call`): a text model's table gets a new number
    of rows each step (batches of new sequence lengths), and each traced the optimizer's update again (10-12 ms
    of a 17 ms TF step). Zero rows change nothing: each optimizer here sums its elementwise steps of the rows
    (`_sparse_rows`) with steps that keep 0 at 0 (`square`, `abs`, `sign`, products), or densifies them first.
    RMSprop and Adagrad divide the rows by their denominators: a zero row there is 0 / its row's denominator,
    which is NaN only where the row's own update is (a zero denominator), so the rows are a row of the gradient.
    Only computed rows are padded, with NumPy (an op per new row count would be a kernel per row count).
    """
    rows = values._shape[0]
    value_array, index_array = values._value, indices._value
    if not isinstance(value_array, np.ndarray) or not isinstance(index_array, np.ndarray) or rows == 0:
        return values, indices
    extra = (1 << (rows - 1).bit_length()) - rows
    if not extra:
        return values, indices
    padded_values = np.concatenate([value_array, np.zeros((extra, *value_array.shape[1:]), value_array.dtype)])
    padded_indices = np.concatenate([index_array, np.full((extra,), index_array[0], index_array.dtype)])
    return (  # (host values, as the host interpreter's results are)
        Tensor(read_only(padded_values), tuple(padded_values.shape), values._dtype),
        Tensor(read_only(padded_indices), tuple(padded_indices.shape), indices._dtype),
    )


def _sparse_rows(rows: tuple, keras_variable: Any) -> Any:
    """An `IndexedSlices` gradient's `(values, indices)` as what Keras's JAX optimizers take: a BCOO array.

    TF's Keras applies an optimizer's elementwise steps (`square`, `abs`) to each
    slice separately, so a row indexed twice adds two squares, not the square of
    a sum. A BCOO marked `unique_indices` gets exactly that from Keras's sparse
    ops (which otherwise sum repeated rows first); densifying still sums them.
    """
    values, indices = rows
    return jax_sparse.BCOO(
        (values, indices.astype(jnp.int32)[:, None]), shape=tuple(keras_variable.shape), unique_indices=True
    )


def _dense(gradient: Any) -> Any:
    return gradient.todense() if isinstance(gradient, jax_sparse.BCOO) else gradient


def adopt_optimizer_variables(optimizer: Any) -> None:
    """Makes a Keras optimizer's variables behave as TF's: an int64 step counter, tapeshim operators.

    Keras creates `iterations` with dtype "int", which is int64 on its TensorFlow backend
    and int32 on JAX; tapeshim runs JAX with 64-bit types, so the counter can be TF's.
    The new variable takes the old one's place (and value) in the optimizer's variables.
    Every variable becomes a `TapeVariableMixin` variable, so `optimizer.iterations + 1`
    inside `tapeshim.function` reads the variable when the function runs (Keras's own
    operator would read its value once, while tracing).
    """
    old = keras_compat.iterations_variable(optimizer)
    if old.dtype == "int32":
        with keras.name_scope(optimizer.name, caller=optimizer):
            new = keras.Variable(  # (from an int64 array: a NumPy scalar would compile a `convert_element_type`)
                np.asarray(old.value, np.int64),
                name="iteration",
                dtype="int64",
                trainable=False,
                aggregation="only_first_replica",
            )
        keras_compat.replace_iterations_variable(optimizer, new)
    for variable in optimizer.variables:
        adopt_variable(variable)


if TYPE_CHECKING:
    from keras.optimizers import Optimizer as _OptimizerBase  # untyped (Any): the mixin's `super()` calls are Keras's
else:
    _OptimizerBase = object


class TapeOptimizerMixin(_OptimizerBase):
    """Keras's optimizer `apply`, run as one tapeshim op over all the variables it updates."""

    built: bool  # Keras's attribute, declared for the type checker (Keras has no types)

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: D107 - Keras's arguments
        super().__init__(*args, **kwargs)
        adopt_optimizer_variables(self)

    def add_variable(self, shape: Any, initializer: Any = "zeros", *args: Any, **kwargs: Any) -> Any:
        """Keras's `add_variable`, its initial value filled without a compile per shape (`keras_initial_values`)."""
        if not args and kwargs.get("layout") is None:
            initializer = host_initializer(initializer)
        return super().add_variable(shape, initializer, *args, **kwargs)

    def apply_gradients(self, grads_and_vars: Any) -> Any:
        """Applies `(gradient, variable)` pairs, as Keras's `apply_gradients`.

        Returns:
          The optimizer's `iterations` variable.
        """
        grads, trainable_variables = zip(*grads_and_vars)
        self.apply(grads, trainable_variables)
        return self.iterations

    def apply(self, grads: Any, trainable_variables: Any = None) -> None:
        """Updates `trainable_variables` with `grads` (one gradient per variable; None skips it).

        Raises:
          ValueError: if every gradient is None, or a variable is unknown to a
            built optimizer.
          InvalidArgumentError: if a gradient's shape differs from its
            variable's. Unlike TF, which may have updated the variables before
            it, no variable changes.
        """
        grads = list(grads)
        if not grads:
            return
        if passthrough((grads, trainable_variables), {}):
            # Keras's own code calls this (a LossScaleOptimizer's inner optimizer, fit's compiled step).
            return super().apply(grads, trainable_variables)
        if trainable_variables is None:
            if not self.built:
                return super().apply(grads)  # Keras's error
            sides = [_sides(v) for v in _built_variables.get(self, [])]
            if len(grads) != len(sides):
                return super().apply(grads)  # Keras's error
        else:
            sides = [_sides(v) for v in trainable_variables]
            if not self.built:
                with keras.name_scope(self.name, caller=self):
                    self.build([k for k, _ in sides])
                self.built = True
            keras_compat.check_variables_are_known(self, [k for k, _ in sides])
        kept = [(g, k, v) for g, (k, v) in zip(grads, sides) if g is not None]
        if not kept:
            raise ValueError("No gradients provided for any variable.")
        missing = [_name(k, v) for g, (k, v) in zip(grads, sides) if g is None]
        if missing:
            warnings.warn(
                f"Gradients do not exist for variables {missing} when minimizing the loss. If using "
                "`model.compile()`, did you forget to provide a `loss` argument?",
                stacklevel=3,
            )
        sparse_rows = isinstance(self, _SPARSE_UPDATES)
        gradients = [
            _checked_gradient(
                g if sparse_rows or not isinstance(g, IndexedSlices) else convert_to_tensor(g), keras_variable, variable
            )
            for g, keras_variable, variable in kept
        ]
        keras_variables = [k for _, k, _ in kept]
        optimizer_variables = list(self.variables)
        keras_apply = super().apply if not isinstance(self, _STATELESS_ONLY) else self._apply_statelessly

        sparse = any(isinstance(g, tuple) for g in gradients)
        narrow = sparse and not any(
            np.dtype(k.dtype).itemsize > 4
            for k in keras_variables + optimizer_variables
            if k is not keras_compat.iterations_variable(self)
        )  # the int64 step counter, as TF's

        def update(gradient_values: list) -> None:
            gradient_values = [
                _sparse_rows(g, v) if isinstance(g, tuple) else g for g, v in zip(gradient_values, keras_variables)
            ]
            if not narrow:
                keras_apply(gradient_values, keras_variables)
                return
            # Keras's sparse ops (`lax.mul` of a BCOO and a Python number) need Python numbers to be
            # 32-bit, as Keras on JAX assumes; tapeshim's 64-bit mode would make them float64. Only the
            # updates run so (`_backend_apply_gradients`): the int64 step counter is incremented after them.
            _narrow_updates.active = True
            try:
                keras_apply(gradient_values, keras_variables)
            finally:
                _narrow_updates.active = False

        stateful_call(
            self,
            "apply",
            update,
            (gradients,),
            {},
            keras_variables + optimizer_variables,
            states=[v for _, _, v in kept] + [view_of(v) for v in optimizer_variables],
            watch_state=False,
        )
        return None

    # a Keras hook (keras_compat.HOOKS)
    def _backend_update_step(self, grads: list, trainable_variables: list, learning_rate: Any) -> None:
        """Keras's update step; inside `strategy.run` the gradients are first summed over the replicas.

        Keras calls this after clipping and weight decay, so each replica clips its own
        gradients before the sum, as TF's Keras under a strategy does (the hook Keras's TF
        backend overrides for `tf.distribute`).
        """
        dense = [i for i, g in enumerate(grads) if not isinstance(g, jax_sparse.BCOO)]
        summed = psum_arrays([grads[i] for i in dense])
        grads = list(grads)
        for i, g in zip(dense, summed):
            grads[i] = g
        super()._backend_update_step(grads, trainable_variables, learning_rate)

    # a Keras hook (keras_compat.HOOKS)
    def _backend_apply_gradients(self, grads: list, trainable_variables: list) -> None:
        """Keras's updates of the variables, with 32-bit Python numbers for sparse gradients (see `apply`)."""
        if not getattr(_narrow_updates, "active", False):
            super()._backend_apply_gradients(grads, trainable_variables)
            return
        _narrow_updates.x32 = True
        try:
            with jax.enable_x64(False):
                super()._backend_apply_gradients(grads, trainable_variables)
        finally:
            _narrow_updates.x32 = False

    @property
    def iterations(self) -> Any:
        """The step counter: an int64 variable, as TF's Keras's."""
        if not getattr(_narrow_updates, "x32", False):
            return super().iterations
        # Inside 32-bit sparse updates, Keras's `self.iterations + 1` reads it as int32 (an int64 there would
        # be truncated, with JAX's warning).
        steps = keras_compat.iterations_variable(self).value.astype(jnp.int32)
        return steps // self.gradient_accumulation_steps if self.gradient_accumulation_steps else steps

    def _apply_statelessly(self, grads: list, trainable_variables: list) -> None:
        """Keras's `stateless_apply`, its results assigned: for optimizers (LossScaleOptimizer) whose stateful
        `apply` assigns variables inside `ops.cond` branches, which Keras on JAX runs only statelessly."""
        optimizer_variables = list(self.variables)
        new_trainable, new_optimizer = self.stateless_apply(
            [v.value for v in optimizer_variables], grads, [v.value for v in trainable_variables]
        )
        for variable, value in zip(
            list(trainable_variables) + optimizer_variables, list(new_trainable) + list(new_optimizer)
        ):
            variable.assign(value)

    def scale_loss(self, loss: Any) -> Any:
        """`loss` times the optimizer's loss scale (a LossScaleOptimizer's dynamic scale), on the tape.

        Returns:
          The scaled loss (`loss` itself when the optimizer has no loss scale).
        """
        keras_scale_loss = super().scale_loss
        if passthrough((loss,), {}):
            return keras_scale_loss(loss)
        return stateful_call(self, "scale_loss", keras_scale_loss, (loss,), {}, list(self.variables), watch_state=False)

    # a Keras hook (keras_compat.HOOKS)
    def _clip_gradients(self, grads: list) -> list:
        """Keras's `clipnorm`/`global_clipnorm`/`clipvalue`, with TF's Keras's rule for sparse gradients.

        For an `IndexedSlices` gradient TF's Keras computes norms from the slices
        (a row indexed twice counts twice); `global_clipnorm` then gives a dense
        gradient (TF scales it as a Tensor), the other two keep it sparse.
        """
        if not any(isinstance(g, jax_sparse.BCOO) for g in grads):
            return super()._clip_gradients(grads)
        data = [g.data if isinstance(g, jax_sparse.BCOO) else g for g in grads]

        def rebuild(g: Any, new_data: Any) -> Any:
            if not isinstance(g, jax_sparse.BCOO):
                return new_data
            return jax_sparse.BCOO((new_data, g.indices), shape=g.shape, unique_indices=True)

        if self.clipnorm and self.clipnorm > 0:
            return [None if g is None else rebuild(g, keras_compat.clip_by_norm(self, d)) for g, d in zip(grads, data)]
        if self.global_clipnorm and self.global_clipnorm > 0:
            clipped = keras_compat.clip_by_global_norm([d for d in data if d is not None], self.global_clipnorm)
            kept = iter(clipped)
            return [None if g is None else _dense(rebuild(g, next(kept))) for g in grads]
        if self.clipvalue and self.clipvalue > 0:
            v = self.clipvalue
            return [None if g is None else rebuild(g, keras.ops.clip(d, -v, v)) for g, d in zip(grads, data)]
        return grads

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Any:
        """Minimizes `loss` over `var_list`, as TF's Keras 2 `minimize` (Keras 3 has none).

        Args:
          loss: a callable taking no arguments and returning the loss, or a
            Tensor computed inside `tape`.
          var_list: the variables, or a callable returning them.
          tape: the GradientTape that computed a Tensor `loss`.

        Returns:
          The optimizer's `iterations` variable.

        Raises:
          ValueError: if `loss` is a Tensor and no `tape` is given.
        """
        if not callable(loss) and tape is None:
            raise ValueError(f"`tape` is required when a `Tensor` loss is passed. Received: loss={loss}, tape={tape}.")
        if tape is None:
            tape = GradientTape()
        if callable(loss):
            with tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def exclude_from_weight_decay(self, var_list: Any = None, var_names: Any = None) -> None:
        """Excludes variables (tapeshim or Keras ones) or names from weight decay, as Keras."""
        if var_list is not None:
            var_list = [_sides(v)[0] for v in var_list]
        super().exclude_from_weight_decay(var_list=var_list, var_names=var_names)

    @property
    def learning_rate(self) -> Any:
        """The learning rate: a variable, or a schedule's current value as a float32 Tensor (as TF)."""
        value = super().learning_rate
        if isinstance(value, keras.Variable) or passthrough((value,), {}):
            return value
        tensor = convert_to_tensor(value)
        return math_ops.cast(tensor, dtypes.float32) if tensor._dtype == dtypes.float64 else tensor

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        keras.optimizers.Optimizer.learning_rate.fset(self, value)

    def build(self, variables: Any) -> None:
        """Creates the optimizer's slot variables for `variables` (tapeshim or Keras variables)."""
        keras_variables = [_sides(v)[0] for v in variables]
        _built_variables[self] = keras_variables
        count = len(self.variables)
        super().build(keras_variables)
        if len(self.variables) != count:  # slots (SGD without momentum makes none: a function traces once, as TF)
            note_variables_created()
        adopt_optimizer_variables(self)
        apply_pending_restore(self)


checkpoint.register_trackable(keras.optimizers.Optimizer, variables_by_position, restore_when_built)


if TYPE_CHECKING:
    from keras.optimizers.schedules import LearningRateSchedule as _ScheduleBase  # (untyped, as above)
else:
    _ScheduleBase = object


class TapeScheduleMixin(_ScheduleBase):
    """A Keras learning-rate schedule whose call on a step is a tapeshim op, giving a tensor as TF's.

    Keras on JAX returns a JAX array (float64 where JAX's 64-bit mode is on); TF's Keras returns a
    float32 tensor, so `schedule(step).numpy()` works. Inside the optimizer's own (JAX-traced) update
    the call is Keras's.
    """

    def __call__(self, step: Any) -> Any:
        if passthrough((step,), {}):
            return super().__call__(step)
        return stateful_call(self, "call", super().__call__, (step,), {}, [])
