"""`tf.random`: re-exports from the op table. Deterministic under `set_seed`; not TF's bit streams."""

from tapeshim._src.ops.random_ops import (
    Generator,
    categorical,
    normal,
    set_seed,
    shuffle,
    stateless_normal,
    stateless_uniform,
    truncated_normal,
    uniform,
)

__all__ = [
    "Generator", "categorical", "normal", "set_seed", "shuffle", "stateless_normal", "stateless_uniform",
    "truncated_normal", "uniform",
]
