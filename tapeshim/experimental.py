"""tapeshim-specific tools that have no TensorFlow counterpart."""

from tapeshim._src.introspection import compile_stats, reset_compile_stats, set_program_cache_size  # noqa: F401
