"""Whole training steps compiled: tapeshim.function against tf.function and hand-written jax.jit.

Run: `python benchmarks/bench_function.py` (TensorFlow is used where installed).

The same TF source runs under `tapeshim.function(jit_compile=True)`,
`tf.function` and `tf.function(jit_compile=True)`; the baseline is
`jax.jit(jax.value_and_grad)` with the same SGD update, written by hand.
tapeshim's first row is what the first calls of a loop cost (the host computes
them until they have paid for the compile); the table after it, the same step
after 30 blocks of calls (compiled, as a longer loop runs it).
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# First steps here are a first run's: no compile cache from an earlier run (tapeshim/_src/compile_cache.py).
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_tape  # noqa: E402

import tapeshim  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-tf", action="store_true", help="leave TensorFlow out of the process")
    args = parser.parse_args()
    bench_tape._import_baselines(not args.no_tf, False)
    real_tf = bench_tape.real_tf

    def compiled(module, data, **options):
        return lambda: module.function(bench_tape.tf_style_mlp_step(module, data), **options)

    def warmed(build, calls):
        """The step after `calls` calls and its background compiles: tapeshim's host computes a program's first
        calls until they have paid for its compile (about a thousand calls of the small step), so the three
        warm-up calls of `measure` show that host tier, and this row the compiled program a longer loop runs."""

        def warmed_step():
            step = build()
            for _ in range(calls):
                bench_tape.sync_any(step())
            bench_tape.settle_compiles()
            return step

        return warmed_step

    for name, sizes, batch, block in (
        ("small MLP step, batch 64, 32-64-10", (32, 64, 10), 64, 100),
        ("compute-bound MLP step, batch 512, 512-1024-10", (512, 1024, 10), 512, 5),
    ):
        data = bench_tape.mlp_data(batch, sizes)
        bench_tape.run_workload(
            name,
            {
                "tf.function": compiled(real_tf, data) if real_tf else None,
                "tf.function(jit_compile)": compiled(real_tf, data, jit_compile=True) if real_tf else None,
                "tapeshim.function(jit)": compiled(tapeshim, data, jit_compile=True),
                "jax.jit": lambda d=data: bench_tape.jax_mlp_step(d),
            },
            block,
            args.repeats,
        )
        # (after the row above: the same step's program, compiled here, serves a second function of its source)
        bench_tape.run_workload(
            f"{name}, after {30 * block} calls",
            {
                "tapeshim.function(jit)": warmed(compiled(tapeshim, data, jit_compile=True), 30 * block),
                "jax.jit": lambda d=data: bench_tape.jax_mlp_step(d),
            },
            block,
            args.repeats,
        )


if __name__ == "__main__":
    main()
