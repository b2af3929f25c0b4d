"""The object `tf.saved_model.load` returns: the saved functions, `signatures` and variables, without the
original Python code (the functions are deserialized `jax.export` programs)."""

from __future__ import annotations

import itertools
from typing import Any

import jax

from tapeshim._src import dtypes, nest, registry
from tapeshim._src.module import Module
from tapeshim._src.node import OpKey
from tapeshim._src.recorded_call import record_call
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.variable import Variable


def rebuild_structure(description: dict, tensors: list) -> Any:
    """The nest of outputs a saved function returns, from its JSON description and its flat tensors."""
    kind = description["kind"]
    if kind == "none":
        return None
    if kind == "tensor":
        return tensors[description["index"]]
    items = [rebuild_structure(d, tensors) for d in description["items"]]
    if kind == "dict":
        return dict(zip(description["keys"], items))
    return items if kind == "list" else tuple(items)


_function_ids = itertools.count()


class LoadedFunction:
    """A saved function: called with the arguments of its input signature (positionally or by name).

    Under a tape, a call is recorded as one op over all its inputs (the
    variables it reads and its arguments), with every output tracked by each
    tape that tracks any input, as TF's tape records a loaded function's call:
    the gradient of an output from an input it does not depend on is zero, not
    None.
    """

    def __init__(self, meta: dict, program: Any, variables: list[Variable]) -> None:
        self._meta = meta
        self._program = program
        self._call = jax.jit(program.call)
        self._reads = [variables[i] for i in meta["reads"]]
        self._writes = [variables[i] for i in meta["writes"]]
        self._specs = meta["inputs"]
        self._names = meta["arg_names"]
        self._key = OpKey("LoadedFunction", next(_function_ids))  # unique: never reused, as id() could be

    def _matches(self, args: tuple, kwargs: dict) -> bool:
        """Whether a call's arguments fit this program's inputs (names, count, dtypes and shapes)."""
        try:
            self._flat(args, dict(kwargs))
        except (TypeError, ValueError):
            return False
        return True

    def _flat(self, args: tuple, kwargs: dict) -> list[Tensor]:
        values = list(args)
        for name in self._names[len(values) :]:
            if name not in kwargs:
                raise TypeError(
                    f"Missing required argument '{name}' (the saved function takes {', '.join(self._names)})."
                )
            values.append(kwargs.pop(name))
        if kwargs:
            raise TypeError(
                f"Unexpected arguments {sorted(kwargs)} (the saved function takes {', '.join(self._names)})."
            )
        flat = nest.flatten(values)
        if len(flat) != len(self._specs):
            raise ValueError(f"Expected {len(self._specs)} tensor inputs ({', '.join(self._names)}), got {len(flat)}.")
        out = []
        for value, spec in zip(flat, self._specs):
            dtype = dtypes.as_dtype(spec["dtype"])
            if isinstance(value, Tensor) and value.dtype is not dtype:
                raise TypeError(
                    f"Binding inputs to tf.function failed: input '{spec['name']}' is {value.dtype!r}, "
                    f"the signature's is {dtype!r}."
                )
            tensor = convert_to_tensor(value, dtype)
            shape = tuple(tensor.shape)
            if len(shape) != len(spec["shape"]) or any(d is not None and d != s for d, s in zip(spec["shape"], shape)):
                given = f"TensorSpec(shape={tuple(shape)}, dtype=tf.{tensor.dtype.name}, name=None)"
                wanted = f"TensorSpec(shape={tuple(spec['shape'])}, dtype=tf.{spec['dtype']}, name=None)"
                raise TypeError(
                    f"Binding inputs to tf.function failed due to `Can not cast {given} to {wanted}`. "
                    f"Received args: {args} and kwargs: {kwargs} for signature: {self._names}."
                )
            out.append(tensor)
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        inputs = self._flat(args, kwargs)
        reads = [v._read_for_op() for v in self._reads]
        n_reads, n_out = len(reads), self._meta["n_outputs"]

        def run(*values: jax.Array) -> tuple:
            outs, news = self._program.call(list(values[:n_reads]), list(values[n_reads:]))
            return tuple(outs) + tuple(news)

        tracking = registry.tracking_recorders(reads + inputs) if _thread_state.recorders else []
        if tracking or _thread_state.trace is not None or any(t._value is None for t in reads + inputs):
            structs = [jax.ShapeDtypeStruct(tuple(t.shape), t.dtype.as_numpy_dtype) for t in reads + inputs]
            avals = tuple((tuple(a.shape), dtypes.as_dtype(a.dtype)) for a in jax.eval_shape(run, *structs))
            # opaque: every output depends on every input, as TF's tape records the loaded call (zero, not None).
            outputs = list(record_call(run, self._key, tuple(reads) + tuple(inputs), avals, tracking, opaque=True))
        else:
            outs, news = self._call([r.value for r in reads], [t.value for t in inputs])
            outputs = [Tensor(v, tuple(v.shape), dtypes.as_dtype(v.dtype)) for v in list(outs) + list(news)]
        for variable, new in zip(self._writes, outputs[n_out:]):
            variable.assign(new)
        return rebuild_structure(self._meta["structure"], outputs[:n_out])


class Dispatcher:
    """A function saved from several traces (no input signature): calls the first program whose inputs fit."""

    def __init__(self, variants: list[LoadedFunction]) -> None:
        self._variants = variants

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for variant in self._variants:
            if variant._matches(args, kwargs):
                return variant(*args, **kwargs)
        expected = "\n".join(
            f"  Option {i + 1}: {[s['shape'] for s in v._specs]} {[s['dtype'] for s in v._specs]}"
            for i, v in enumerate(self._variants)
        )
        raise ValueError(
            "Could not find matching concrete function to call loaded from the SavedModel. Got: "
            f"{args} {kwargs}. Expected inputs of one of these shapes and dtypes:\n{expected}"
        )


class SignatureFunction:
    """A serving signature: called with keyword arguments, returns a dict of named outputs (as TF's)."""

    def __init__(self, function: LoadedFunction) -> None:
        self._function = function
        names = function._names
        self.structured_input_signature = ((), {n: _spec(s) for n, s in zip(names, function._specs)})

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        if args:
            raise TypeError(
                f"Signature functions take their inputs as keyword arguments ({', '.join(self._function._names)})."
            )
        result = self._function(**kwargs)
        if isinstance(result, dict):
            return result
        flat = [t for t in nest.flatten(result) if t is not None]
        return {f"output_{i}": t for i, t in enumerate(flat)}


def _spec(spec: dict) -> Any:
    return TensorSpec(spec["shape"], dtypes.as_dtype(spec["dtype"]), spec["name"])


class _Loaded(Module):
    """The loaded object: its functions and variables as attributes, `signatures`, `variables`."""

    def __init__(self, variables: list[Variable]) -> None:
        super().__init__()
        self._loaded_variables = variables
        self.signatures: dict[str, SignatureFunction] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self.__dict__.get("_call_function")
        if call is None:
            raise TypeError("The loaded object is not callable: no __call__ was saved.")
        return call(*args, **kwargs)

    @property
    def variables(self) -> tuple:
        return tuple(self._loaded_variables)

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self._loaded_variables if v.trainable)


def build(description: dict, variables: list[Variable], programs: list) -> _Loaded:
    """The loaded object for a saved model's description, variables and deserialized programs."""
    loaded = _Loaded(variables)
    for info, variable in zip(description["variables"], variables):
        path = info["path"]
        if path and path.isidentifier():
            setattr(loaded, path, variable)
    grouped: dict[str, list[LoadedFunction]] = {}
    for meta, program in zip(description["functions"], programs):
        function = LoadedFunction(meta, program, variables)
        grouped.setdefault(meta["attribute"], []).append(function)
        if meta["signature"] is not None:
            loaded.signatures[meta["signature"]] = SignatureFunction(function)
    for attribute, variants in grouped.items():
        entry = variants[0] if variants[0]._meta["has_signature"] else Dispatcher(variants)
        if attribute == "__call__":
            loaded._call_function = entry
        elif not attribute.startswith("__signature_"):
            setattr(loaded, attribute, entry)
    return loaded
