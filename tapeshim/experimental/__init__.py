"""tapeshim-specific tools that have no TensorFlow counterpart, and TF's `tf.experimental` modules."""

from tapeshim._src.custom_gradient import jax_op
from tapeshim._src.dataset_iterator import Optional
from tapeshim._src.explain import Explanation, SourceExplanation
from tapeshim._src.interop import from_jax, optax_step, to_jax
from tapeshim._src.introspection import (
    cached_programs,
    compile_stats,
    explain_none_gradients,
    reset_compile_stats,
    set_program_cache_size,
)
from tapeshim.experimental import dlpack, numpy

__all__ = [
    "Explanation",
    "Optional",
    "SourceExplanation",
    "cached_programs",
    "compile_stats",
    "dlpack",
    "explain_none_gradients",
    "from_jax",
    "jax_op",
    "numpy",
    "optax_step",
    "reset_compile_stats",
    "set_program_cache_size",
    "to_jax",
]
