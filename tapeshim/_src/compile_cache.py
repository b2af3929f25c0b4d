"""XLA's programs kept on disk between runs: a program compiled by an earlier run loads instead of compiling.

TF eager compiles nothing, so its first step costs what its later ones do; tapeshim
compiles each new program with XLA (10 ms to 1.5 s on a CPU), mostly in the
background, but a first epoch still pays for them. Most programs a script compiles
are the ones it compiled the last time it ran (the same model, the same steps), so
tapeshim turns on JAX's persistent compilation cache when it is imported: each
compiled program is written under the cache directory, and a later process that
needs the same program (the same HLO, compile options, backend and jaxlib) reads it
back in a millisecond or two instead of compiling it. The text-classification
tutorial's first epoch: 2.7 s with an empty cache, 1.5 s with the cache of an
earlier run (`benchmarks/bench_keras_text.py`).

Where: `$TAPESHIM_COMPILATION_CACHE_DIR` if set, else `$XDG_CACHE_HOME/tapeshim/xla`
(`~/.cache/tapeshim/xla`), in a folder named for this machine's processor and its
instruction-set features (`host_folder`): XLA compiles CPU code for the processor it
runs on, and a home directory shared by machines of several kinds must not hand one's
programs to another. At most `MAX_BYTES` on disk, the least recently used
programs removed first (JAX's `jax_compilation_cache_max_size`). Every compiled
program is kept, however quick its compile (`jax_persistent_cache_min_compile_time_secs`
0: most of tapeshim's programs compile in well under JAX's default second).

Left as the user set it: a cache directory given to JAX already
(`JAX_COMPILATION_CACHE_DIR`, `jax.config.update("jax_compilation_cache_dir", ...)`),
and `TAPESHIM_COMPILATION_CACHE_DIR` set to `0`, `off`, `false` or empty: no cache
(as `jax.config.update("jax_enable_compilation_cache", False)` turns it off after
import). A directory that cannot be created or written leaves the cache off. JAX
reads the setting at its first compile: a process that compiled with JAX before
importing tapeshim keeps running without the cache. Programs with host callbacks
(`tf.py_function`, `tf.print`) are never written (JAX compiles them each run).
"""

from __future__ import annotations

import hashlib
import os
import platform
from typing import Any

import jax

MAX_BYTES = 2**30
"""The most bytes the cache directory holds; past that JAX removes the least recently used programs."""

_OFF = ("0", "off", "false", "no", "")
_settings: Any = jax.config  # (JAX's flags are read as attributes; its type stubs name few of them)


def default_directory() -> str:
    """`$XDG_CACHE_HOME/tapeshim/xla`, or `~/.cache/tapeshim/xla`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tapeshim", "xla")


def host_folder() -> str:
    """A folder name for this machine's processor: its architecture and a digest of its model and
    instruction-set features (Linux's `/proc/cpuinfo`; elsewhere what `platform` reports)."""
    described = [platform.machine(), platform.processor()]
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                field = line.split(":", 1)[0].strip()
                if field in ("model name", "flags", "Features", "CPU part") and line not in described:
                    described.append(line)
                if line.strip() == "":  # (the first processor's entry is enough)
                    break
    except OSError:
        pass
    digest = hashlib.sha256("\n".join(described).encode()).hexdigest()[:16]
    return f"{platform.machine() or 'cpu'}-{digest}"


def configure() -> str | None:
    """Turns on JAX's persistent compilation cache for this process (see the module docstring).

    Returns:
      The cache directory, or None where tapeshim left JAX's cache as it was (the user's own directory, or
      turned off by `TAPESHIM_COMPILATION_CACHE_DIR`, or a directory that cannot be written).
    """
    setting = os.environ.get("TAPESHIM_COMPILATION_CACHE_DIR")
    if setting is not None and setting.strip().lower() in _OFF:
        return None
    if _settings.jax_compilation_cache_dir:  # the user's own cache, configured as they chose
        return None
    directory = os.path.join(os.path.abspath(os.path.expanduser(setting or default_directory())), host_folder())
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    if not os.access(directory, os.W_OK | os.X_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", directory)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    if _settings.jax_compilation_cache_max_size == -1:  # (JAX's default: no limit)
        jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    return directory
