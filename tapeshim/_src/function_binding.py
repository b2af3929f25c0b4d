"""Binding a `tapeshim.function` call to its `input_signature`, and a `ConcreteFunction` call to its trace, as
TF binds them.

The signature covers the function's leading parameters: each argument converts to a tensor compatible with
its spec (nests leaf by leaf), and the parameters after them keep their defaults: a call that gives one of
them its default value binds, another value raises TF's `TypeError`.

A concrete function's call binds to the trace's structured signature (every parameter required, tensors cast
to their specs, Python values equal to the traced ones), else to its flat signature of tensors
(`bind_concrete`).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from tapeshim._src import nest
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.variable import Variable


def bind_signature(
    specs: list | None, signature: inspect.Signature | None, name: Any, args: tuple, kwargs: dict
) -> tuple[tuple, dict]:
    """A call's arguments checked and converted against `specs` (the `input_signature`), as TF does.

    Args:
      specs: the input signature (None: nothing to bind).
      signature: the Python function's signature, None where Python cannot give it.
      name: the function's name, for messages.
      args: the call's positional arguments, bound to the Python signature with defaults filled in.
      kwargs: its keyword arguments.

    Returns:
      The tensors for the signature's parameters, positionally, and no keyword arguments.

    Raises:
      TypeError: TF's binding errors: arguments the signature does not describe, a value of another spec, or a
        value other than its parameter's default past the signature's parameters.
    """
    if specs is None:  # no input_signature: nothing to bind against
        return args, kwargs
    if not kwargs and _tensors_of_their_specs(specs, args):
        return args, kwargs  # (the common call: what the general walk below would give, unchanged)
    if (kwargs or len(args) > len(specs)) and signature is not None:
        args, kwargs = _defaults_beyond(specs, signature, args, kwargs)
    if kwargs or len(args) != len(specs):
        raise TypeError(
            f"Binding inputs to tf.function failed: the function {name} has input_signature {specs} "
            f"and was called with {len(args)} positional arguments and keyword arguments {sorted(kwargs)}."
        )
    converted = []
    for position, (value, spec) in enumerate(zip(args, specs)):
        if isinstance(spec, TensorSpec) or _is_ragged_spec(spec):
            flat_values, flat_specs = [value], [spec]  # a Python list converts to one tensor
        else:
            flat_values, flat_specs = nest.flatten(value), nest.flatten(spec)
            try:
                nest.assert_same_structure(value, spec)
            except ValueError as exc:
                raise TypeError(f"Binding inputs to tf.function failed: argument {position}: {exc}") from None
        tensors = []
        for leaf, leaf_spec in zip(flat_values, flat_specs):
            if _is_ragged_spec(leaf_spec):
                tensors.append(_bind_ragged(leaf, leaf_spec, args, kwargs, specs))
                continue
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
        single = isinstance(spec, TensorSpec) or _is_ragged_spec(spec)
        converted.append(tensors[0] if single else nest.pack_sequence_as(value, tensors))
    return tuple(converted), {}


def _tensors_of_their_specs(specs: list, args: tuple) -> bool:
    """Whether each of `args` is a `Tensor` of its `TensorSpec`'s dtype and a compatible shape, one per spec:
    each then binds as itself (a steady loop's calls; the general walk took 20-25 us a call of two)."""
    if len(args) != len(specs):
        return False
    for value, spec in zip(args, specs):
        if value.__class__ is not Tensor or spec.__class__ is not TensorSpec or value._dtype != spec._dtype:
            return False
        if not all(size.__class__ is int for size in value._shape) or not spec._shape.admits(value._shape):
            return False  # (a symbolic size: the general walk reads it as unknown)
    return True


def _is_ragged_spec(spec: Any) -> bool:
    from tapeshim._src.ragged_spec import RaggedTensorSpec  # import cycle: ragged_spec -> tensor -> ...

    return isinstance(spec, RaggedTensorSpec)


def _bind_ragged(value: Any, spec: Any, args: tuple, kwargs: dict, specs: list) -> Any:
    """A call's value for a `tf.RaggedTensorSpec` of the signature: a RaggedTensor of the spec's type (a Tensor
    for a spec of ragged rank 0; the spec itself, or a narrower one, for `get_concrete_function`).

    Raises:
      TypeError: TF's binding error for a value of another structure, dtype, ragged rank or shape.
    """
    from tapeshim._src.ragged import RaggedTensor  # import cycle: ragged -> ops -> ...
    from tapeshim._src.ragged_spec import RaggedTensorSpec

    if isinstance(value, RaggedTensorSpec):
        if not value.is_subtype_of(spec):
            raise TypeError(f"Binding inputs to tf.function failed due to `Can not cast {value} to {spec}`.")
        return value
    if spec.ragged_rank == 0 and not isinstance(value, RaggedTensor):
        try:
            tensor = convert_to_tensor(value, dtype_hint=spec.dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"Binding inputs to tf.function failed: {exc}") from None
        if not spec.is_compatible_with(tensor):
            raise TypeError(
                "Binding inputs to tf.function failed due to `Can not cast "
                f"{TensorSpec(tensor.shape, tensor.dtype)} to {TensorSpec(spec.shape, spec.dtype)}`. Received args: "
                f"{args} and kwargs: {kwargs} for signature: {specs}."
            )
        return tensor
    if not isinstance(value, RaggedTensor) or value.ragged_rank != spec.ragged_rank:
        raise TypeError(
            "Binding inputs to tf.function failed due to `The two structures don't have the same nested "
            f"structure.`: {value!r} is not a value of {spec}. Received args: {args} and kwargs: {kwargs} for "
            f"signature: {specs}."
        )
    if not spec.is_compatible_with(value):
        raise TypeError(
            f"Binding inputs to tf.function failed due to `Can not cast {RaggedTensorSpec.from_value(value)} to "
            f"{spec}`. Received args: {args} and kwargs: {kwargs} for signature: {specs}."
        )
    return value


def _defaults_beyond(specs: list, signature: inspect.Signature, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A call's arguments past the signature's parameters, which TF binds to their defaults: dropped where they
    are the default (the function then takes its default), TF's TypeError where they differ.

    Raises:
      TypeError: for a value other than the parameter's default.
    """
    n_specs = len(specs)
    parameters = list(signature.parameters.values())
    if any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return args, kwargs  # (extra positional arguments are *args, not defaults: the caller's error)
    given = list(zip(parameters[n_specs:], args[n_specs:])) + [
        (signature.parameters[name], value) for name, value in kwargs.items() if name in signature.parameters
    ]
    if len(given) != len(args) - min(len(args), n_specs) + len(kwargs):
        return args, kwargs  # (a keyword the signature does not have: the caller's error)
    for parameter, value in given:
        if parameter.default is parameter.empty:
            return args, kwargs  # (no default: the caller's error)
        if value is not parameter.default and not _same_default(value, parameter.default):
            raise TypeError(
                f"Binding inputs to tf.function failed due to `Can not cast {value!r} to "
                f"Literal[{parameter.default!r}]`. Received args: {args} and kwargs: {kwargs} for signature: "
                f"{specs}."
            )
    return args[:n_specs], {}


def _same_default(value: Any, default: Any) -> bool:
    """Whether a call's Python value equals its parameter's default, as TF's literal types compare them (`2` is
    `2.0`; an array equal to an array default is it; a tensor never is)."""
    if isinstance(value, (Tensor, Variable)):
        return False
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        try:
            return bool(np.array_equal(value, default))
        except (TypeError, ValueError):
            return False
    numbers = (bool, int, float, np.number)
    if not (isinstance(value, numbers) and isinstance(default, numbers)) and type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):
        return False


# -- calling a ConcreteFunction --------------------------------------------------------------------
def bind_concrete(
    signature: inspect.Signature | None,
    specs: tuple,
    traced_call: tuple,
    flat_inputs: list[tuple[int, str]],
    summary_name: str,
    function_type: Any,
    args: tuple,
    kwargs: dict,
) -> tuple[tuple, dict]:
    """A `ConcreteFunction` call's arguments, bound as TF binds them: to the structured signature, else flat.

    TF first casts the call to the trace's structured signature: each tensor parameter's value converts to
    its spec's dtype (a tensor or variable must have it) with a compatible shape, and each Python parameter
    must equal the traced value (TF's `Literal`). Where that fails, positional and keyword tensors alone bind
    to the trace's tensor inputs in order (the flat signature); they must be tensors, and their shapes are not
    checked (the graph runs with them).

    Args:
      signature: the Python function's signature (None where Python cannot give it: flat binding only).
      specs: the trace's `(args, kwargs)` with a `TensorSpec` for each tensor input (as it was called).
      traced_call: the trace's own `(args, kwargs)`, whose structure the bound call takes.
      flat_inputs: the trace's tensor inputs: `(flat position, name)`, in order.
      summary_name: the function's name, for the flat signature's messages (`f(x, y)`).
      function_type: the trace's signature, for messages.
      args: the call's positional arguments.
      kwargs: its keyword arguments.

    Raises:
      TypeError: TF's binding error, both bindings' reasons in it.
    """
    try:
        return _bind_structured(signature, specs, args, kwargs)
    except TypeError as structured:
        try:
            flat = _bind_flat(flat_inputs, summary_name, traced_call, args, kwargs)
        except TypeError as flat_error:
            raise TypeError(
                f"Binding inputs to tf.function failed due to `{structured}`. Received args: {args} and kwargs: "
                f"{kwargs} for signature: {function_type}.\nFallback to flat signature also failed due to: "
                f"{flat_error}"
            ) from None
        return nest.pack_sequence_as(traced_call, flat)


def _bind_structured(signature: inspect.Signature | None, specs: tuple, args: tuple, kwargs: dict) -> tuple:
    if signature is None:
        raise TypeError("the function has no Python signature")
    expected = signature.bind(*specs[0], **specs[1])
    expected.apply_defaults()
    given = signature.bind(*args, **kwargs)  # TypeError: a missing argument, one too many
    for name, value in expected.arguments.items():
        if name not in given.arguments:  # (a trace's parameters have no defaults: TF's function type)
            kind = signature.parameters[name].kind
            if kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) or value:
                raise TypeError(f"missing a required argument: {name!r}")
    for name, value in expected.arguments.items():
        if name in given.arguments:
            given.arguments[name] = _cast(given.arguments[name], value)
    return given.args, given.kwargs


def _cast(value: Any, expected: Any) -> Any:
    """`value` cast to the traced parameter `expected` (a spec, a nest of them, a variable or a Python value)."""
    if isinstance(expected, TensorSpec):
        return _cast_to_spec(value, expected)
    ragged_spec = _traced_ragged_spec(expected)
    if ragged_spec is not None:  # TF's RaggedTensorSpec of the trace: a value of it (a narrower spec too)
        if not ragged_spec.is_compatible_with(value):
            raise TypeError(f"Can not cast {value!r} to {ragged_spec}")
        return value
    if isinstance(expected, Variable):  # a variable argument: another variable of its shape and dtype
        if isinstance(value, Variable) and value.dtype == expected.dtype and value.shape == expected.shape:
            return value
        raise TypeError(f"Can not cast {value!r} to {TensorSpec(expected.shape, expected.dtype)}")
    if isinstance(expected, dict):
        if not isinstance(value, dict) or set(value) != set(expected):
            raise TypeError(f"Can not cast {value!r} to a dict with keys {sorted(expected, key=repr)}")
        return type(expected)((key, _cast(value[key], item)) for key, item in expected.items())
    if isinstance(expected, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(expected):
            raise TypeError(f"Can not cast {value!r} to a {type(expected).__name__} of {len(expected)} items")
        items = [_cast(v, e) for v, e in zip(value, expected)]
        return type(expected)(*items) if hasattr(expected, "_fields") else type(expected)(items)
    if not isinstance(expected, (bool, int, float, complex, str, bytes, type(None), np.generic)):
        return value  # (an iterator, a dataset, a custom trace type: matched by the call's key)
    try:  # TF's `Literal` cast: the value compares equal (a scalar tensor of the value does)
        same = bool(value == expected) or (expected != expected and value != value)  # (NaN is NaN's literal)
    except Exception:  # noqa: BLE001 - a value without a usable equality is not the traced one
        same = False
    if not same:
        raise TypeError(f"Can not cast {value!r} to Literal[{expected!r}]")
    return expected


def _traced_ragged_spec(expected: Any) -> Any:
    """The RaggedTensorSpec of a traced parameter that is one (or a RaggedTensor), else None."""
    from tapeshim._src.ragged import RaggedTensor  # import cycle: ragged -> ops -> ...
    from tapeshim._src.ragged_spec import RaggedTensorSpec

    if isinstance(expected, RaggedTensor):  # (TF binds a value of another shape through the flat signature)
        return RaggedTensorSpec([None] * expected.ndim, expected.dtype, expected.ragged_rank, expected.row_splits_dtype)
    return expected if isinstance(expected, RaggedTensorSpec) else None


def _cast_to_spec(value: Any, spec: TensorSpec) -> Any:
    if isinstance(value, Variable):
        if value.dtype != spec.dtype:
            raise TypeError(
                f"Incompatible type conversion requested to type {spec.dtype.name} for `tf.Variable of type "
                f"{value.dtype.name}. (Variable: {value!r})"
            )
        tensor: Any = value
    elif isinstance(value, Tensor):
        tensor = value
    else:
        try:
            tensor = convert_to_tensor(value, dtype=spec.dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(str(exc)) from None
    if not spec.is_compatible_with(tensor):
        raise TypeError(f"Can not cast {TensorSpec(tensor.shape, tensor.dtype)} to {spec}")
    return tensor


def _bind_flat(flat_inputs: list[tuple[int, str]], name: str, traced_call: tuple, args: tuple, kwargs: dict) -> list:
    """TF's fallback: the call's tensors bound to the trace's tensor inputs, by position or by their names."""
    names = [input_name for _, input_name in flat_inputs]
    summary = f"{name}({', '.join(names)})"
    if len(args) > len(names):
        raise TypeError(f"{summary} takes {len(names)} positional arguments, got {len(args)}.")
    values, remaining = list(args), dict(kwargs)
    for keyword in names[len(args) :]:
        if keyword not in remaining:
            missing = sorted(set(names) - set(names[: len(values)]) - set(remaining))
            raise TypeError(f"{summary} missing required arguments: {', '.join(missing)}.")
        values.append(remaining.pop(keyword))
    if remaining:
        for keyword in remaining:
            if keyword in names[: len(args)]:
                raise TypeError(f"{summary} got two values for '{keyword}'.")
        raise TypeError(f"{summary} got unexpected keyword arguments: {', '.join(sorted(remaining))}.")
    for i, value in enumerate(values):
        if isinstance(value, Variable):
            raise TypeError(
                f"provided list of inputs contains objects other than 'EagerTensor'. Item {i} is type: ResourceVariable"
            )
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{summary}: expected argument #{i}(zero-based) to be a Tensor; got {type(value).__name__} ({value})."
            )
    flat = nest.flatten(traced_call)
    for (position, _), value in zip(flat_inputs, values):
        flat[position] = value
    return flat
