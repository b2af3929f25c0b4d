"""Side-by-side timings of TF-style tape code: TF eager, tf.function, tapeshim, jax.jit, PyTorch.

Run: `python benchmarks/bench_tape.py` (TensorFlow and PyTorch are used where installed).

Workloads:
  (a) small MLP step: batch 64, 32-64-10, ReLU, sparse softmax cross-entropy,
      two `assign_sub` updates;
  (b) a 200-op elementwise chain with one gradient;
  (c) compute-bound MLP step: batch 512, 512-1024-10.

Each figure is the median over repeats of the mean time of a block of steps,
with the device synchronised at the end of each block.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# First steps here are a first run's: no compile cache from an earlier run (tapeshim/_src/compile_cache.py).
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import tapeshim  # noqa: E402

real_tf = None
torch = None


def _import_baselines(with_tf: bool, with_torch: bool) -> None:
    """Imports TensorFlow and PyTorch where installed and wanted."""
    global real_tf, torch
    if with_tf:
        try:
            import tensorflow

            real_tf = tensorflow
        except ImportError:  # the benchmark runs without TF too
            real_tf = None
    if with_torch:
        try:
            import torch as torch_module

            torch = torch_module
        except ImportError:
            torch = None


LEARNING_RATE = 0.01


def timeit_block(step: Callable[[], object], block: int) -> float:
    """Mean seconds per step over one block of steps, synchronised at the end."""
    start = time.perf_counter()
    for _ in range(block):
        out = step()
    sync_any(out)
    return (time.perf_counter() - start) / block


def mlp_data(batch: int, sizes: tuple[int, int, int]) -> dict:
    rng = np.random.default_rng(0)
    n_in, n_hidden, n_out = sizes
    return {
        "x": rng.normal(size=(batch, n_in)).astype(np.float32),
        "labels": rng.integers(0, n_out, size=batch).astype(np.int32),
        "w1": (rng.normal(size=(n_in, n_hidden)) / np.sqrt(n_in)).astype(np.float32),
        "w2": (rng.normal(size=(n_hidden, n_out)) / np.sqrt(n_hidden)).astype(np.float32),
    }


def tf_style_mlp_step(tf, data: dict) -> Callable[[], object]:
    """The same TF source for real TF and tapeshim."""
    w1, w2 = tf.Variable(data["w1"]), tf.Variable(data["w2"])
    x, labels = tf.constant(data["x"]), tf.constant(data["labels"])

    def step():
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(tf.matmul(x, w1))
            logits = tf.matmul(hidden, w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(LEARNING_RATE * g1)
        w2.assign_sub(LEARNING_RATE * g2)
        return loss

    return step


def jax_mlp_update(data: dict) -> tuple[Callable[[dict], tuple], dict]:
    """The hand-written JAX step (not jitted) and its parameters: `update(params) -> (loss, new params)`."""
    params = {"w1": jnp.asarray(data["w1"]), "w2": jnp.asarray(data["w2"])}
    x, labels = jnp.asarray(data["x"]), jnp.asarray(data["labels"])

    def loss_fn(p):
        logits = jax.nn.relu(x @ p["w1"]) @ p["w2"]
        log_probs = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=1))

    def update(p):
        loss, grads = jax.value_and_grad(loss_fn)(p)
        return loss, jax.tree_util.tree_map(lambda w, g: w - LEARNING_RATE * g, p, grads)

    return update, params


def jax_mlp_step(data: dict) -> Callable[[], object]:
    raw_update, params = jax_mlp_update(data)
    update = jax.jit(raw_update)
    state = {"p": params}

    def step():
        loss, state["p"] = update(state["p"])
        return loss

    return step


def torch_mlp_step(data: dict) -> Callable[[], object]:
    w1 = torch.tensor(data["w1"], requires_grad=True)
    w2 = torch.tensor(data["w2"], requires_grad=True)
    x, labels = torch.tensor(data["x"]), torch.tensor(data["labels"]).long()

    def step():
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ w1) @ w2, labels)
        g1, g2 = torch.autograd.grad(loss, [w1, w2])
        with torch.no_grad():
            w1.sub_(LEARNING_RATE * g1)
            w2.sub_(LEARNING_RATE * g2)
        return loss

    return step


CHAIN_LENGTH = 200


def tf_style_chain(tf, size: int = 256) -> Callable[[], object]:
    x = tf.constant(np.linspace(-1.0, 1.0, size, dtype=np.float32))

    def step():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(CHAIN_LENGTH // 4):
                y = tf.sin(y)
                y = y * 1.01
                y = tf.tanh(y)
                y = y + 0.01
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, x)

    return step


def jax_chain_gradient(size: int = 256) -> tuple[Callable[[Any], Any], Any]:
    """The chain's gradient function (not jitted) and its input."""

    def f(z):
        for _ in range(CHAIN_LENGTH // 4):
            z = jnp.tanh(jnp.sin(z) * 1.01) + 0.01
        return jnp.sum(z)

    return jax.grad(f), jnp.linspace(-1.0, 1.0, size, dtype=jnp.float32)


def jax_chain(size: int = 256) -> Callable[[], object]:
    gradient, x = jax_chain_gradient(size)
    grad = jax.jit(gradient)
    return lambda: grad(x)


def torch_chain(size: int = 256) -> Callable[[], object]:
    x = torch.linspace(-1.0, 1.0, size, requires_grad=True)

    def step():
        y = x
        for _ in range(CHAIN_LENGTH // 4):
            y = torch.tanh(torch.sin(y) * 1.01) + 0.01
        (g,) = torch.autograd.grad(y.sum(), [x])
        return g

    return step


def sync_any(value: object) -> None:
    if isinstance(value, (tapeshim.Tensor,)):
        jax.block_until_ready(value.value)  # (a value computed on the host is a NumPy array: nothing to wait for)
    elif isinstance(value, jax.Array):
        value.block_until_ready()
    elif real_tf is not None and isinstance(value, real_tf.Tensor):
        value.numpy()


def settle_compiles() -> None:
    """Waits for tapeshim's background compiles: the steady state is the compiled one (on the CPU a repeating
    program runs on the host until its compile in the background thread is done)."""
    background = sys.modules.get("tapeshim._src.background_compile")
    if background is not None:
        background.wait()


def measure(steps: dict[str, Callable[[], object]], block: int, repeats: int) -> dict[str, float]:
    """Median seconds per step of each implementation, after a warm-up.

    The implementations are interleaved, one block each per round, so that
    background load (TF's and XLA's thread pools on a small machine) affects
    them alike.
    """
    samples: dict[str, list[float]] = {label: [] for label in steps}
    for step in steps.values():
        for _ in range(3):
            sync_any(step())
    settle_compiles()
    for _ in range(repeats):
        for label, step in steps.items():
            samples[label].append(timeit_block(step, block))
    return {label: statistics.median(values) for label, values in samples.items()}


def run_workload(
    name: str, builders: dict[str, Callable[[], Callable[[], object]]], block: int, repeats: int
) -> dict[str, float]:
    steps = {label: build() for label, build in builders.items() if build is not None}
    results = measure(steps, block, repeats)
    base = results.get("TF eager")
    jit = results.get("jax.jit")
    print(f"\n({name})")
    print(f"  {'implementation':<28}{'median/step':>14}{'vs TF eager':>14}{'vs jax.jit':>12}")
    for label, seconds in results.items():
        vs_tf = f"{seconds / base:.3f}x" if base else "-"
        vs_jit = f"{seconds / jit:.2f}x" if jit else "-"
        print(f"  {label:<28}{seconds * 1e6:>11.1f} us{vs_tf:>14}{vs_jit:>12}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run")
    parser.add_argument(
        "--no-tf",
        action="store_true",
        help="leave TensorFlow out of the process (its thread pools load a small machine)",
    )
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    args = parser.parse_args()
    _import_baselines(not args.no_tf, not args.no_torch)
    repeats = 3 if args.quick else args.repeats
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; "
        f"TF {real_tf.__version__ if real_tf else 'not installed'}; "
        f"torch {torch.__version__ if torch else 'not installed'}"
    )

    def tf_function(step_builder):
        return lambda: real_tf.function(step_builder())

    for name, sizes, batch, block in (
        ("a) small MLP step, batch 64, 32-64-10", (32, 64, 10), 64, 50),
        ("c) compute-bound MLP step, batch 512, 512-1024-10", (512, 1024, 10), 512, 5),
    ):
        data = mlp_data(batch, sizes)
        run_workload(
            name,
            {
                "TF eager": (lambda d=data: tf_style_mlp_step(real_tf, d)) if real_tf else None,
                "tf.function": tf_function(lambda d=data: tf_style_mlp_step(real_tf, d)) if real_tf else None,
                "tapeshim eager": lambda d=data: tf_style_mlp_step(tapeshim, d),
                "jax.jit": lambda d=data: jax_mlp_step(d),
                "PyTorch eager": (lambda d=data: torch_mlp_step(d)) if torch else None,
            },
            block,
            repeats,
        )
    run_workload(
        f"b) {CHAIN_LENGTH}-op elementwise chain, one gradient",
        {
            "TF eager": (lambda: tf_style_chain(real_tf)) if real_tf else None,
            "tf.function": tf_function(lambda: tf_style_chain(real_tf)) if real_tf else None,
            "tapeshim eager": lambda: tf_style_chain(tapeshim),
            "jax.jit": jax_chain,
            "PyTorch eager": torch_chain if torch else None,
        },
        5,
        repeats,
    )


if __name__ == "__main__":
    main()
