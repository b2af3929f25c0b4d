"""XLA's compile and run times on this machine's default device under option sets: the data behind the compile
tiers' options (`tapeshim/_src/compile_tiers.py`), which apply on the CPU only until they are measured
elsewhere.

Run on an accelerator machine: `python benchmarks/bench_device_compile.py`. Plain JAX (no tapeshim, no
TensorFlow): each program is lowered once and compiled afresh under each option set, and its compiled form
run 20 times (the median). Programs: single-op kernels (an elementwise `sin`, a small matrix product), the small
and compute-bound MLP training steps of `bench_engine.py`, and a 200-op elementwise chain's gradient.

Measured on an H100 (jax 0.11.2, 2026-12), tapeshim's own first steps there compile every new program and
kernel: a small MLP's first step took 1.7 s, the 200-op chain's gradient program about 9 s. Which options
make a quick first compile there (as `BASELINE_OPTIONS` does on the CPU: 165 -> 45 ms) is what this measures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_tape  # noqa: E402 - the hand-written JAX steps the other benchmarks time

OPTION_SETS: dict[str, dict[str, Any] | None] = {
    "default": None,
    "O0": {"xla_backend_optimization_level": 0},
    "no-autotune": {"xla_gpu_autotune_level": 0},
    "O0+no-autotune": {"xla_backend_optimization_level": 0, "xla_gpu_autotune_level": 0},
    "O0+no-autotune+cheap-llvm": {
        "xla_backend_optimization_level": 0,
        "xla_gpu_autotune_level": 0,
        "xla_llvm_disable_expensive_passes": True,
    },
    "cpu-baseline": {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False},
}


def _mlp_step(batch: int, sizes: tuple[int, int, int]) -> tuple[Callable[..., Any], tuple]:
    """`bench_tape`'s hand-written JAX MLP step and its parameters (the steps `bench_engine` times)."""
    update, params = bench_tape.jax_mlp_update(bench_tape.mlp_data(batch, sizes))
    return update, (params,)


def _chain_gradient() -> tuple[Callable[..., Any], tuple]:
    gradient, x = bench_tape.jax_chain_gradient()
    return gradient, (x,)


PROGRAMS: dict[str, Callable[[], tuple[Callable[..., Any], tuple]]] = {
    "sin [256]": lambda: (jnp.sin, (jnp.ones(256, jnp.float32),)),
    "matmul 64x32x64": lambda: (jnp.matmul, (jnp.ones((64, 32), jnp.float32), jnp.ones((32, 64), jnp.float32))),
    "small MLP step": lambda: _mlp_step(64, (32, 64, 10)),
    "compute-bound MLP step": lambda: _mlp_step(512, (512, 1024, 10)),
    "200-op chain gradient": _chain_gradient,
}


def _sync(out: Any) -> None:
    jax.tree.map(lambda leaf: leaf.block_until_ready(), out)


def measure(program: str, option_set: str) -> str:
    """One line: the compile's and first run's times, and the compiled program's median run."""
    fn, args = PROGRAMS[program]()
    lowered = jax.jit(fn).lower(*args)
    options = OPTION_SETS[option_set]
    try:
        start = time.perf_counter()
        compiled = lowered.compile(compiler_options=options) if options else lowered.compile()
        compile_s = time.perf_counter() - start
    except Exception as error:  # noqa: BLE001 - an option this XLA refuses is reported, not fatal
        return f"{program:<24}{option_set:<28}refused: {type(error).__name__}: {str(error)[:100]}"
    start = time.perf_counter()
    _sync(compiled(*args))
    first_s = time.perf_counter() - start
    runs = []
    for _ in range(20):
        start = time.perf_counter()
        _sync(compiled(*args))
        runs.append(time.perf_counter() - start)
    median_s = statistics.median(runs)
    return f"{program:<24}{option_set:<28}{compile_s * 1e3:10.1f} ms{first_s * 1e3:10.2f} ms{median_s * 1e6:12.1f} us"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="comma-separated program names (default: all)")
    args = parser.parse_args()
    jax.config.update("jax_enable_compilation_cache", False)  # every compile a fresh one
    print(f"jax {jax.__version__}; devices {jax.devices()}")
    _sync(jax.jit(lambda a: a @ a)(jnp.ones((8, 8))))  # the backend and its BLAS started before any figure
    print(f"{'program':<24}{'options':<28}{'compile':>13}{'first run':>13}{'median run':>15}")
    names = [n for n in args.only.split(",") if n] or list(PROGRAMS)
    for program in names:
        for option_set in OPTION_SETS:
            print(measure(program, option_set), flush=True)


if __name__ == "__main__":
    main()
