"""A real TensorFlow SavedModel beside tapeshim's own, written through `jax2tf` when TensorFlow is installed.

Each saved function becomes a `tf.function` (same input signature) whose body is
the function's `jax.export` program embedded with `jax2tf.convert` (StableHLO in
an `XlaCallModule` op), reading `tf.Variable`s that hold the variables' values;
`tensorflow.saved_model.load` serves it. Without TensorFlow (or `jax2tf`) only
tapeshim's format is written.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from tapeshim._src.saved_model_loaded import rebuild_structure
from tapeshim._src.variable import Variable


def tensorflow_available() -> bool:
    """Whether TensorFlow and `jax.experimental.jax2tf` can be imported."""
    return importlib.util.find_spec("tensorflow") is not None


def _polymorphic(aval: Any) -> str | None:
    """jax2tf's polymorphic shape of an exported program's input: its symbolic dimensions by their names (a
    trace for every size names the leading ones its first call gave one size alike, `function_symbolic.BATCH`)."""
    if all(d.__class__ is int for d in aval.shape):
        return None
    dims = [str(d) for d in aval.shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def write_tf_saved_model(
    root: str, metas: list[dict], exports: list[Any], variables: list[Variable], paths: list[str]
) -> bool:
    """Writes `saved_model.pb` and `variables/` into `root`; False (nothing written) without TensorFlow."""
    if not tensorflow_available():
        return False
    import tensorflow as real_tf  # here: TensorFlow is optional, and slow to import
    from jax.experimental import jax2tf  # here: it imports TensorFlow

    module = real_tf.Module()
    module.saved_variables = [
        real_tf.Variable(v._value.__array__(), trainable=v.trainable, name=v.name.split(":")[0]) for v in variables
    ]
    for path, variable in zip(paths, module.saved_variables):
        if path.isidentifier() and path != "saved_variables":
            setattr(module, path, variable)
    signatures = {}
    traced: dict[str, list[tuple[list, Any]]] = {}  # functions saved from their traces: (specs, body) each
    for meta, exported in zip(metas, exports):
        reads, writes = meta["reads"], meta["writes"]
        shapes = [None] * len(reads) + [_polymorphic(aval) for aval in exported.in_avals[len(reads) :]]
        n_reads, n_out = len(reads), meta["n_outputs"]

        # differentiable in TF where every input and output is floating (jax2tf's gradient refuses integers)
        floating = (
            all(variables[i].dtype.is_floating for i in reads)
            and all(s["dtype"] in ("float16", "bfloat16", "float32", "float64") for s in meta["inputs"])
            and all(np.issubdtype(a.dtype, np.inexact) for a in exported.out_avals)
        )
        converted = jax2tf.convert(
            _flat_program(exported, n_reads),
            polymorphic_shapes=shapes,
            with_gradient=floating,
            native_serialization_platforms=tuple(p for p in exported.platforms if p in ("cpu", "cuda", "tpu")),
        )
        specs = [real_tf.TensorSpec(s["shape"], s["dtype"], name=s["name"]) for s in meta["inputs"]]
        body = _body(module, converted, reads, writes, meta["structure"], n_out)
        attribute = meta["attribute"]
        if not meta.get("has_signature", True):
            traced.setdefault(attribute, []).append((specs, body))
            continue
        function = real_tf.function(body, input_signature=specs, autograph=False)
        if not attribute.startswith("__signature_"):
            setattr(module, attribute, function)
        if meta["signature"] is not None:
            signatures[meta["signature"]] = function.get_concrete_function()
    for attribute, variants in traced.items():
        function = real_tf.function(_dispatch(variants), autograph=False)
        for specs, _ in variants:
            function.get_concrete_function(*specs)
        setattr(module, attribute, function)
    real_tf.saved_model.save(module, root, signatures=signatures or None)
    return True


def _dispatch(variants: list[tuple[list, Any]]) -> Any:
    """A TF function body running the variant whose input specs the (traced) arguments fit."""

    def body(*args: Any) -> Any:
        for specs, variant in variants:
            if len(specs) == len(args) and all(s.is_compatible_with(a) for s, a in zip(specs, args)):
                return variant(*args)
        raise ValueError(f"No saved trace takes these arguments: {args}")

    return body


def _flat_program(exported: Any, n_reads: int) -> Any:
    def flat_program(*values: Any) -> tuple:
        outs, news = exported.call(list(values[:n_reads]), list(values[n_reads:]))
        return tuple(outs) + tuple(news)

    return flat_program


def _body(module: Any, converted: Any, reads: list, writes: list, structure: dict, n_out: int) -> Any:
    """The TF function's Python body: read the variables, run the program, assign the written ones."""

    def body(*args: Any) -> Any:
        values = [module.saved_variables[i] for i in reads]
        results = converted(*values, *args)
        for index, new in zip(writes, results[n_out:]):
            module.saved_variables[index].assign(new)
        return rebuild_structure(structure, list(results[:n_out]))

    return body
