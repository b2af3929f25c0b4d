"""`tf.saved_model.save` / `load`: portable `jax.export` (StableHLO) programs plus the variables.

A saved model directory holds, under `tapeshim/`:

* `model.json`: the functions (attribute name, signature key, input specs and
  names, output structure, which variables each reads and writes);
* `variables.npz`: the variables' values (and `model.json` their names);
* `<n>.stablehlo`: each function's program, `jax.export`-serialized, taking the
  values of the variables it reads, then its tensor inputs, and returning its
  outputs, then the new values of the variables it assigns. Programs are lowered
  for CPU, CUDA and TPU where they can be, so a model saved on one machine loads
  on another.

`load` rebuilds an object with those functions and variables without the
original Python code. When TensorFlow is installed, `save` also writes a real TF
SavedModel (`saved_model.pb`, `variables/`) into the same directory through
`jax2tf` (see `saved_model_tf.py`), which `tensorflow.saved_model.load` serves.

Unknown (None) dimensions of an input signature become symbolic dimensions. A
tapeshim function is traced at concrete shapes, so a program that depends on the
size of such a dimension (`tf.shape(x)[0]` used as a value) would be wrong at
other sizes: `save` runs the function at two other sizes and compares, and refuses
(ValueError) when the exported program does not reproduce it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import jax
import numpy as np
from jax import export
from jax.experimental import checkify

from tapeshim._src import dtypes, nest, saved_model_loaded, saved_model_tf
from tapeshim._src.function import Function
from tapeshim._src.io.gfile import path_text
from tapeshim._src.ops import table
from tapeshim._src.tensor import convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.typing_aliases import PathLike
from tapeshim._src.variable import Variable

_DIR = "tapeshim"
_FORMAT = 1
# The platforms saved programs are lowered for, widest first (the last is the current backend only).
PLATFORMS: tuple = (("cpu", "cuda", "tpu"), ("cpu", "cuda"), None)


# TF's tf.saved_model constants.
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"
REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
SERVING = "serve"
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"


def contains_saved_model(export_dir: PathLike) -> bool:
    """Whether `export_dir` holds a saved model (tapeshim's, or a TF SavedModel's `saved_model.pb`)."""
    root = path_text(export_dir)
    return any(
        os.path.isfile(os.path.join(root, name))
        for name in (os.path.join(_DIR, "model.json"), SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT)
    )


class SaveOptions:
    """Options of `tf.saved_model.save` (accepted for compatibility; tapeshim uses none of them)."""

    def __init__(
        self,
        namespace_whitelist: Any = None,
        save_debug_info: bool = False,
        function_aliases: Any = None,
        experimental_io_device: Any = None,
        experimental_variable_policy: Any = None,
        experimental_custom_gradients: bool = True,
        experimental_image_format: bool = False,
        experimental_skip_saver: bool = False,
        experimental_sharding_callback: Any = None,
        extra_tags: Any = None,
    ) -> None:
        self.function_aliases = function_aliases or {}


class LoadOptions:
    """Options of `tf.saved_model.load` (accepted for compatibility)."""

    def __init__(
        self,
        allow_partial_checkpoint: bool = False,
        experimental_io_device: Any = None,
        experimental_skip_checkpoint: bool = False,
        experimental_variable_policy: Any = None,
        experimental_load_function_aliases: bool = False,
    ) -> None:
        pass


class _Leaf:
    def __init__(self, index: int) -> None:
        self.index = index


def _structure(value: Any) -> Any:
    """A JSON description of an output structure whose tensors are `_Leaf`s (their output positions)."""
    if isinstance(value, _Leaf):
        return {"kind": "tensor", "index": value.index}
    if value is None:
        return {"kind": "none"}
    if isinstance(value, dict):
        keys = list(value)
        return {"kind": "dict", "keys": keys, "items": [_structure(value[k]) for k in keys]}
    if isinstance(value, (list, tuple)):
        return {"kind": "list" if isinstance(value, list) else "tuple", "items": [_structure(v) for v in value]}
    raise TypeError(f"Cannot save an output of type {type(value).__name__}.")


def _spec_json(spec: TensorSpec, name: str) -> dict:
    return {
        "shape": spec.shape.as_list() if spec.shape.rank is not None else None,
        "dtype": spec.dtype.name,
        "name": spec.name or name,
    }


def _struct(spec: dict, scope: Any, counter: list) -> jax.ShapeDtypeStruct:
    """The input's abstract value: each unknown dimension its own symbolic dimension."""
    if spec["shape"] is None:
        raise ValueError(f"Cannot save a function whose input '{spec['name']}' has an unknown rank.")
    dims = []
    for size in spec["shape"]:
        if size is None:
            dims.append(f"d{counter[0]}")
            counter[0] += 1
        else:
            dims.append(str(size))
    dtype = dtypes.as_dtype(spec["dtype"]).as_numpy_dtype
    if not dims:
        return jax.ShapeDtypeStruct((), dtype)
    return jax.ShapeDtypeStruct(export.symbolic_shape(", ".join(dims), scope=scope), dtype)


def _functions_of(obj: Any, signatures: Any) -> list[tuple[str, str | None, Function]]:
    """(attribute name, signature key or None, bound Function) for what `save` exports."""
    found: dict[str, Function] = {}
    names = set(dir(type(obj))) | set(getattr(obj, "__dict__", {}))
    for name in sorted(names):
        if name.startswith("__") and name != "__call__":
            continue
        raw = getattr(type(obj), name, None)
        if raw is None:
            raw = getattr(obj, "__dict__", {}).get(name)
        if isinstance(raw, Function):
            bound = getattr(obj, name)
            if bound.input_signature is not None or bound._tf_concretes or bound._eager_keys:  # TF saves traced ones
                found[name] = bound
    keys: dict[str, str | None] = dict.fromkeys(found)
    extra: list[tuple[str, str | None, Function]] = []
    if signatures is None:
        # as TF: the one function with an input signature whose outputs can be a signature's
        with_signature = [n for n, f in found.items() if f.input_signature is not None and _valid_outputs(f)]
        if len(with_signature) == 1:
            keys[with_signature[0]] = "serving_default"
    else:
        if not isinstance(signatures, dict):
            signatures = {"serving_default": signatures}
        for key, fn in signatures.items():
            fn = _as_signature_function(fn)
            if not isinstance(fn, Function) or fn.input_signature is None:
                raise ValueError(
                    f"Expected a TensorFlow function with an input_signature for signature '{key}' "
                    f"(a tapeshim.function with input_signature), got {fn!r}."
                )
            attribute = next((n for n, f in found.items() if f is fn and keys[n] is None), None)
            if attribute is not None:
                keys[attribute] = key
            else:
                extra.append((f"__signature_{key}", key, fn))
    return [(name, keys[name], fn) for name, fn in found.items()] + extra


def _as_signature_function(fn: Any) -> Any:
    """A concrete function (`f.get_concrete_function(spec)`) as a function with its input signature."""
    traced = getattr(fn, "_function", None)
    if not isinstance(traced, Function) or not hasattr(fn, "structured_input_signature"):
        return fn
    args, kwargs = fn.structured_input_signature
    if kwargs:
        raise ValueError(
            "Cannot save a concrete function with keyword arguments as a signature: trace it with "
            "positional tensor specs."
        )
    return Function(traced._python_function, input_signature=list(args), name=traced._name)


def _is_keras_model(obj: Any) -> bool:
    """A built Keras model (its symbolic `inputs` known)."""
    keras = sys.modules.get("keras")
    return keras is not None and isinstance(obj, keras.Model) and bool(getattr(obj, "inputs", None))


def _keras_serving(model: Any) -> Function:
    """A function calling `model` on its inputs (one tensor each), as Keras's `model.export` serves it."""
    specs = [TensorSpec(tuple(t.shape), dtypes.as_dtype(str(t.dtype)), getattr(t, "name", None)) for t in model.inputs]

    def serve(*inputs: Any) -> Any:
        return model(inputs[0] if len(inputs) == 1 else list(inputs))

    return Function(serve, input_signature=specs, name="serve")


def _valid_outputs(fn: Function) -> bool:
    """Whether a function's outputs can be a signature's: at least one tensor, no None."""
    kinds = [kind for kind, _ in fn.get_concrete_function()._out_kinds]
    return bool(kinds) and all(kind == "tensor" for kind in kinds)


def _variables_of(obj: Any) -> list[tuple[str, Variable]]:
    """(attribute path, variable) for the object's variables reachable through attributes."""
    out: list[tuple[str, Variable]] = []
    seen: set[int] = set()

    def walk(value: Any, path: str, depth: int) -> None:
        if depth > 6:
            return
        if isinstance(value, Variable):
            if id(value) not in seen:
                seen.add(id(value))
                out.append((path, value))
            return
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]", depth + 1)
        elif isinstance(value, dict):
            for key in sorted(value, key=repr):
                walk(value[key], f"{path}[{key!r}]", depth + 1)
        elif hasattr(value, "__dict__") and not isinstance(value, (Function, type)) and depth < 6:
            for key, item in sorted(vars(value).items()):
                if not key.startswith("_"):
                    walk(item, f"{path}.{key}" if path else key, depth + 1)

    walk(obj, "", 0)
    for variable in getattr(obj, "variables", ()) or ():
        if isinstance(variable, Variable) and id(variable) not in seen:
            seen.add(id(variable))
            out.append((f"variables[{len(out)}]", variable))
    return out


def _sample(spec: dict, size: int, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(size if d is None else d for d in spec["shape"])
    dtype = dtypes.as_dtype(spec["dtype"])
    if dtype.is_floating:
        return rng.standard_normal(shape).astype(dtype.as_numpy_dtype)
    if dtype.is_bool:
        return rng.integers(0, 2, shape).astype(bool)
    return np.zeros(shape, dtype.as_numpy_dtype)  # integers are often indices: 0 is the one always valid


def _concretes(fn: Function) -> list[Any]:
    """The concrete functions `save` exports: the input signature's, else every trace of tensors only."""
    if fn.input_signature is not None:
        return [fn.get_concrete_function()]
    return [
        c
        for c in fn._tf_concretes.values()
        if all(isinstance(leaf, TensorSpec) for leaf in nest.flatten(c.structured_input_signature))
    ]


def _export(fn: Function, concrete: Any, var_index: dict[int, int], variables: list[Variable]) -> tuple[dict, Any]:
    """(metadata, `jax.export.Exported`) of one concrete function."""
    name = fn._name
    if concrete._key_draws or concrete.host_feed is not None:
        raise ValueError(
            f"Cannot save function '{name}': it draws random numbers or pulls dataset iterators, "
            "which a saved program cannot take from the caller."
        )
    kinds = {kind for kind, _ in concrete._out_kinds}
    if "indexed_slices" in kinds or "constant" in kinds:
        raise ValueError(
            f"Cannot save function '{name}': it returns "
            + ("IndexedSlices" if "indexed_slices" in kinds else "a tf.string tensor")
            + ", which a saved program's outputs cannot hold. Return numeric tensors (`tf.convert_to_tensor` of "
            "IndexedSlices, or its values and indices)."
        )
    reads, writes = list(concrete.read_variables), list(concrete.written_variables)
    if any(not isinstance(v, Variable) for v in reads + writes):
        raise ValueError(f"Cannot save function '{name}': it takes variables as arguments.")
    for variable in reads + writes:
        if id(variable) not in var_index:
            var_index[id(variable)] = len(variables)
            variables.append(variable)
    specs = [
        _spec_json(s, s.name or f"input_{i}") for i, s in enumerate(nest.flatten(concrete.structured_input_signature))
    ]
    if any(s["dtype"] == "string" for s in specs):
        raise ValueError(f"Cannot save function '{name}': string inputs have no StableHLO type.")
    program, consts, positions = concrete._program, concrete._const_values, concrete._arg_positions
    traced_structs: dict[int, Any] = {}
    if concrete.symbolic:  # traced for every size: the recorded program, exported again for these platforms
        program = concrete._shared.program
        traced_structs = dict(zip(positions, concrete._shared.arg_structs))

    def serving(read_values: list, args: list) -> tuple[list, list]:
        outs, news = program([args[i] for i in positions], list(read_values), consts, [])
        return list(outs), list(news)

    scope, counter = export.SymbolicScope(), [0]
    if traced_structs:  # the traced symbolic dimensions, in their scope (the program's shapes name them)
        first = next(d for struct in traced_structs.values() for d in struct.shape if d.__class__ is not int)
        scope = first.scope
    arg_structs = [
        traced_structs[i] if i in traced_structs else _struct(s, scope, counter) for i, s in enumerate(specs)
    ]
    read_structs = [jax.ShapeDtypeStruct(tuple(v.shape), v.dtype.as_numpy_dtype) for v in reads]
    # Runtime index checks (checkify) cannot be serialized: they are dropped, and the saved program
    # clamps out-of-range indices as XLA does (docs/io.md).
    unchecked = checkify.checkify(serving, errors=checkify.user_checks)
    program_fn = jax.jit(lambda r, a: unchecked(r, a)[1])
    exported, failure = None, None
    for platforms in PLATFORMS:  # a program for every platform that can lower it, so a saved model moves
        try:
            exported = export.export(program_fn, platforms=platforms)(read_structs, arg_structs)
            break
        except Exception as exc:  # noqa: BLE001 - JAX's shape errors say why the program cannot be exported
            failure = exc
    if exported is None:
        raise ValueError(f"Cannot export function '{name}' for its input signature: {failure}") from None
    if counter[0]:
        _verify(fn, name, specs, exported, reads, bool(writes), concrete.structured_input_signature)
    markers = [None if kind == "python" else _Leaf(i) for kind, i in concrete._out_kinds]
    structure = _structure(nest.pack_sequence_as(concrete._result_structure, markers))
    names = [s["name"] for s in specs]
    meta = {
        "inputs": specs,
        "has_signature": fn.input_signature is not None,
        "structure": structure,
        "reads": [var_index[id(v)] for v in reads],
        "writes": [var_index[id(v)] for v in writes],
        "arg_names": names,
        "n_outputs": len(concrete._out_avals),
    }
    return meta, exported


def _verify(
    fn: Function, name: str | None, specs: list, exported: Any, reads: list, writes: bool, signature: tuple
) -> None:
    """Runs the function at two other sizes of its unknown dimensions; the exported program must agree."""
    if writes:
        raise ValueError(
            f"Cannot save function '{name}' with unknown dimensions in its input signature: it "
            "assigns variables. Give the input signature fully-defined shapes."
        )
    rng = np.random.default_rng(0)
    call = jax.jit(exported.call)
    for size in (2, 5):
        inputs = [_sample(s, size, rng) for s in specs]
        try:
            args, kwargs = nest.pack_sequence_as(signature, [convert_to_tensor(a) for a in inputs])
            expected = nest.flatten(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - any failure means the check cannot be made
            raise ValueError(
                f"Cannot save function '{name}' with unknown dimensions in its input signature: "
                f"checking it at size {size} failed ({type(exc).__name__}: {exc}). Give the input "
                "signature fully-defined shapes."
            ) from None
        try:
            outs, _ = call([v._value for v in reads], inputs)
        except (jax.errors.JaxRuntimeError, ValueError):  # traced sizes baked in: other sizes do not refine
            same = False
        else:
            got = [np.asarray(o) for o in outs]
            want = [np.asarray(t.numpy()) for t in expected if t is not None]
            same = len(got) == len(want) and all(
                g.shape == w.shape and np.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True)
                for g, w in zip(got, want)
            )
        if not same:
            raise ValueError(
                f"Cannot save function '{name}' with unknown dimensions in its input signature: its "
                "program depends on their sizes (tapeshim traces at concrete shapes). Give the input "
                "signature fully-defined shapes."
            )


def save(obj: Any, export_dir: PathLike, signatures: Any = None, options: SaveOptions | None = None) -> None:
    """Saves `obj`'s functions that have an input signature, and its variables, as `tf.saved_model.save`.

    Args:
      obj: a `tf.Module` (or any object) whose `tapeshim.function` attributes are
        saved, with the variables they use: for a function with an
        `input_signature`, its program for that signature; for one without, the
        programs of its traces so far whose arguments are all tensors (as TF).
      export_dir: the directory to write (created if missing).
      signatures: a function with an input signature, or a dict of signature name
        to such functions (default: the object's only such function, if exactly one).
      options: accepted for compatibility.

    Raises:
      ValueError: a function cannot be exported (see the module docstring).
    """
    root = path_text(export_dir)
    functions = _functions_of(obj, signatures)
    if not functions and signatures is None and _is_keras_model(obj):
        functions = [("serve", "serving_default", _keras_serving(obj))]
    variables: list[Variable] = []
    var_index: dict[int, int] = {}
    for _, variable in _variables_of(obj):
        var_index[id(variable)] = len(variables)
        variables.append(variable)
    paths = {id(v): p for p, v in _variables_of(obj)}
    metas: list[dict] = []
    exports: list[Any] = []  # jax.export.Exported
    for attribute, key, fn in functions:
        concretes = _concretes(fn)
        if not concretes and fn._eager_keys:
            raise ValueError(
                f"Cannot save {attribute!r}: its calls ran eagerly (string tensor arguments, or results TF gives an "
                "unknown shape), so it has no compiled program to export. Give it an input_signature of numbers, "
                "or trace it with such arguments first."
            )
        for concrete in concretes:
            meta, exported = _export(fn, concrete, var_index, variables)
            meta.update({"attribute": attribute, "signature": key, "file": f"{len(metas)}.stablehlo"})
            metas.append(meta)
            exports.append(exported)
    folder = os.path.join(root, _DIR)
    os.makedirs(folder, exist_ok=True)
    for meta, exported in zip(metas, exports):
        try:
            data = exported.serialize(vjp_order=1)  # loaded functions are differentiable
        except Exception:  # noqa: BLE001 - a program JAX cannot differentiate is saved without its VJP
            data = exported.serialize()
        with open(os.path.join(folder, meta["file"]), "wb") as handle:
            handle.write(data)
    values = {f"v{i}": np.asarray(v._value) for i, v in enumerate(variables)}
    np.savez(os.path.join(folder, "variables.npz"), **values)  # type: ignore[arg-type]  # names are v0, v1, ...
    description = {
        "format": _FORMAT,
        "functions": metas,
        "variables": [
            {"name": v.name, "path": paths.get(id(v), ""), "trainable": bool(v.trainable)} for v in variables
        ],
    }
    with open(os.path.join(folder, "model.json"), "w") as handle:
        json.dump(description, handle, indent=1)

    saved_model_tf.write_tf_saved_model(root, metas, exports, variables, [paths.get(id(v), "") for v in variables])


def load(export_dir: PathLike, tags: Any = None, options: LoadOptions | None = None) -> Any:
    """Loads what `save` wrote: an object with the saved functions, `signatures` and variables.

    Raises:
      OSError: the directory holds no saved model.
      ValueError: it holds a SavedModel TensorFlow wrote (without tapeshim's programs).
    """
    folder = os.path.join(path_text(export_dir), _DIR)
    if not os.path.exists(os.path.join(folder, "model.json")) and contains_saved_model(export_dir):
        raise ValueError(
            f"{path_text(export_dir)} holds a SavedModel written by TensorFlow (a TF graph), which "
            "tapeshim cannot run: tapeshim loads the saved models tapeshim writes (StableHLO "
            "programs). Load this one with tensorflow.saved_model.load."
        )
    if not os.path.exists(os.path.join(folder, "model.json")):
        raise OSError(
            f"SavedModel file does not exist at: {path_text(export_dir)}{os.sep}{{saved_model.pbtxt|saved_model.pb}}"
        )
    with open(os.path.join(folder, "model.json")) as handle:
        description = json.load(handle)
    with np.load(os.path.join(folder, "variables.npz")) as data:
        values = [data[f"v{i}"] for i in range(len(description["variables"]))]
    variables = [
        Variable(value, trainable=info["trainable"], name=info["name"].split(":")[0])
        for value, info in zip(values, description["variables"])
    ]
    programs = []
    for meta in description["functions"]:
        with open(os.path.join(folder, meta["file"]), "rb") as handle:
            programs.append(export.deserialize(bytearray(handle.read())))
    return saved_model_loaded.build(description, variables, programs)


table.export(
    "saved_model.save",
    gradient="-",
    dtypes=table.ANY,
    note="jax.export (StableHLO) programs + variables; a TF SavedModel through jax2tf when TF is installed",
)(save)
table.export(
    "saved_model.load", gradient="-", dtypes=table.ANY, note="tapeshim's saved models only (not TF-written SavedModels)"
)(load)
