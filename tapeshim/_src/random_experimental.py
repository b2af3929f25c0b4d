"""`tf.random.experimental`: TF's experimental names for the stateless seed helpers and generators."""

from tapeshim._src.ops.random_ops import Generator
from tapeshim._src.ops.random_stateless import (
    Algorithm,
    create_rng_state,
    get_global_generator,
    set_global_generator,
    stateless_shuffle,
)
from tapeshim._src.ops.random_stateless import fold_in as stateless_fold_in
from tapeshim._src.ops.random_stateless import split as stateless_split

__all__ = [
    "Algorithm",
    "Generator",
    "create_rng_state",
    "get_global_generator",
    "set_global_generator",
    "stateless_fold_in",
    "stateless_shuffle",
    "stateless_split",
]
