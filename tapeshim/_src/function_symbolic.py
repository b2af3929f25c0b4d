"""One trace for every shape: an `input_signature`'s `None` dimensions traced as symbolic dimensions.

TF traces a function with an `input_signature` once; a `None` dimension is unknown
inside it (`x.shape` is `(None, 3)`) and one graph serves every size. tapeshim does
the same where it can: each `None` dimension becomes its own symbolic dimension
(`jax.export.symbolic_shape`), the placeholders have those shapes, ops record their
outputs with the shapes JAX's shape rules give (symbolic too), the function sees
`None` for them (`TensorShape`), and the recorded program is exported once with
`jax.export` for every size (`ExportedProgram`); a call compiles it for the call's
sizes (XLA needs them), without running the Python function again.

Where the trace cannot be symbolic (an op whose shape code needs a number, a shape
read used as a static shape, `tf.shape(x)` feeding a `reshape`), the function is
traced again with the call's concrete shapes, and each new shape runs the Python
function again (`stats["symbolic_fallbacks"]` counts these).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
from jax import export

from tapeshim._src import nest
from tapeshim._src.tensor_spec import TensorSpec

stats = {"symbolic_traces": 0, "symbolic_fallbacks": 0}


def symbolic_shapes(input_signature: list | None, flat: list) -> dict[int, tuple] | None:
    """Per flat argument position, the symbolic shape to trace it with; None when the signature has no
    `None` dimension (or a spec of unknown rank, or does not line up with the arguments)."""
    if input_signature is None:
        return None
    specs = nest.flatten(input_signature)
    if len(specs) != len(flat) or not all(isinstance(spec, TensorSpec) for spec in specs):
        return None
    if any(spec.shape.rank is None for spec in specs):
        return None
    if not any(d is None for spec in specs for d in spec.shape.as_list()):
        return None
    scope = export.SymbolicScope()
    shapes: dict[int, tuple] = {}
    counter = 0
    for position, spec in enumerate(specs):
        dims = spec.shape.as_list()
        if None not in dims:
            continue
        names = []
        for d in dims:
            if d is None:
                names.append(f"_d{counter}")
                counter += 1
            else:
                names.append(str(d))
        shapes[position] = tuple(export.symbolic_shape(", ".join(names), scope=scope))
    return shapes


class ExportedProgram:
    """A function's program exported for symbolic shapes: `raw` computes it for any sizes (under `jax.jit`,
    differentiable), `call` is `jax.jit(raw)`, compiled once per concrete signature."""

    __slots__ = ("raw", "call", "exported", "program", "arg_structs")

    def __init__(self, program: Callable[..., Any], structs: tuple) -> None:
        self.program = program  # the recorded program (its shapes symbolic: traceable only for `structs`)
        self.arg_structs = structs[0]  # the arguments' symbolic shapes (a saved model exports it again)
        self.exported = export.export(jax.jit(program))(*structs)
        self.raw = self.exported.call
        self.call = jax.jit(self.exported.call)
