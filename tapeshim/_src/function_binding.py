"""Binding a `tapeshim.function` call to its `input_signature`, as TF binds it.

The signature covers the function's leading parameters: each argument converts to a tensor compatible with
its spec (nests leaf by leaf), and the parameters after them keep their defaults: a call that gives one of
them its default value binds, another value raises TF's `TypeError`.
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
    if (kwargs or len(args) > len(specs)) and signature is not None:
        args, kwargs = _defaults_beyond(specs, signature, args, kwargs)
    if kwargs or len(args) != len(specs):
        raise TypeError(
            f"Binding inputs to tf.function failed: the function {name} has input_signature {specs} "
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
