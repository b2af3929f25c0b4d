"""tapeshim-specific tools that have no TensorFlow counterpart."""

from tapeshim._src.custom_gradient import jax_op
from tapeshim._src.dataset_iterator import Optional
from tapeshim._src.introspection import compile_stats, reset_compile_stats, set_program_cache_size

__all__ = ["Optional", "compile_stats", "jax_op", "reset_compile_stats", "set_program_cache_size"]
