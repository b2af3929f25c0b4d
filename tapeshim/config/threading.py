"""`tf.config.threading`: thread counts, recorded as TF records them (XLA sizes its own thread pools)."""

from tapeshim._src.config import (
    get_inter_op_parallelism_threads,
    get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads,
    set_intra_op_parallelism_threads,
)

__all__ = [
    "get_inter_op_parallelism_threads",
    "get_intra_op_parallelism_threads",
    "set_inter_op_parallelism_threads",
    "set_intra_op_parallelism_threads",
]
