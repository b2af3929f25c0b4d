"""`tf.random`: re-exports from the op table. Deterministic under `set_seed`; not TF's bit streams."""

from tapeshim._src import random_experimental as experimental  # noqa: F401 - tf.random.experimental (FUNCTIONAL)
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
from tapeshim._src.ops.random_stateless import (  # FUNCTIONAL
    Algorithm,
    create_rng_state,
    fold_in,
    gamma,
    get_global_generator,
    poisson,
    set_global_generator,
    split,
    stateless_binomial,
    stateless_categorical,
    stateless_gamma,
    stateless_parameterized_truncated_normal,
    stateless_poisson,
    stateless_truncated_normal,
)

__all__ = [
    "Generator",
    "categorical",
    "normal",
    "set_seed",
    "shuffle",
    "stateless_normal",
    "stateless_uniform",
    "truncated_normal",
    "uniform",
    # FUNCTIONAL
    "Algorithm",
    "create_rng_state",
    "fold_in",
    "gamma",
    "get_global_generator",
    "poisson",
    "set_global_generator",
    "split",
    "stateless_binomial",
    "stateless_categorical",
    "stateless_gamma",
    "stateless_parameterized_truncated_normal",
    "stateless_poisson",
    "stateless_truncated_normal",
]
