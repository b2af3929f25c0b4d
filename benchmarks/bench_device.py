"""tapeshim on an accelerator: timings beside jax.jit and PyTorch, and numbers checked against the CPU.

Run on a GPU (or TPU) machine: `python benchmarks/bench_device.py --check benchmarks/device_reference.npz`
(`--first-calls 30`: each of the first 30 calls too, with the compiles they waited for or started;
`bench_device_compile.py` times XLA's compiles there under option sets).
Make the reference on a CPU machine first: `python benchmarks/bench_device.py --save benchmarks/device_reference.npz`.
TensorFlow is not needed: on an accelerator machine the yardsticks are `jax.jit` and PyTorch eager on the
same device (TF's own GPU build is rarely installed beside JAX's).

Workloads (the same TF source for tapeshim eager and `tapeshim.function`):
  small MLP step (batch 64, 32-64-10), a large MLP step (batch 4096, 2048-4096-10, float32),
  a 3x3 conv step (batch 64, 32x32x16 -> 32 channels), and a 200-op elementwise chain.
The check runs each program's loss and gradients once from the same seeded values and compares them with
the CPU's numbers, within a tolerance for float32 matrix work: GPU kernels sum in other orders, and JAX's
default matmul precision on recent NVIDIA GPUs uses TF32, as TF's default does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Callable

# First steps here are a first run's: no compile cache from an earlier run (tapeshim/_src/compile_cache.py).
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_tape  # noqa: E402 - the data and the jax.jit step the CPU benchmarks use

import tapeshim as tf  # noqa: E402

LEARNING_RATE = bench_tape.LEARNING_RATE


def _conv_data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {
        "x": rng.normal(size=(64, 32, 32, 16)).astype(np.float32),
        "kernel": (rng.normal(size=(3, 3, 16, 32)) / 12.0).astype(np.float32),
        "target": rng.normal(size=(64, 32, 32, 32)).astype(np.float32),
    }


def tf_mlp_step(data: dict[str, np.ndarray]) -> tuple[Callable[[], object], list]:
    """The TF-style small/large MLP training step; returns the step and its variables."""
    w1, w2 = tf.Variable(data["w1"]), tf.Variable(data["w2"])
    x, labels = tf.constant(data["x"]), tf.constant(data["labels"])

    def step():
        with tf.GradientTape() as tape:
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(LEARNING_RATE * g1)
        w2.assign_sub(LEARNING_RATE * g2)
        return loss

    return step, [w1, w2]


def tf_conv_step(data: dict[str, np.ndarray]) -> tuple[Callable[[], object], list]:
    """A TF-style conv layer step with a mean-squared loss."""
    kernel = tf.Variable(data["kernel"])
    x, target = tf.constant(data["x"]), tf.constant(data["target"])

    def step():
        with tf.GradientTape() as tape:
            y = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=1, padding="SAME"))
            loss = tf.reduce_mean(tf.square(y - target))
        (grad,) = tape.gradient(loss, [kernel])
        kernel.assign_sub(LEARNING_RATE * grad)
        return loss

    return step, [kernel]


def tf_chain_step() -> tuple[Callable[[], object], list]:
    """A 200-op elementwise chain under one tape, one gradient."""
    x = tf.constant(np.linspace(-1.0, 1.0, 4096, dtype=np.float32))

    def step():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(50):
                y = tf.tanh(tf.sin(y) * 1.01) + 0.01
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, x)

    return step, []


def torch_mlp_step(torch, data: dict[str, np.ndarray], device: str) -> Callable[[], object]:
    w1 = torch.tensor(data["w1"], device=device, requires_grad=True)
    w2 = torch.tensor(data["w2"], device=device, requires_grad=True)
    x = torch.tensor(data["x"], device=device)
    labels = torch.tensor(data["labels"], device=device).long()

    def step():
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ w1) @ w2, labels)
        g1, g2 = torch.autograd.grad(loss, [w1, w2])
        with torch.no_grad():
            w1.sub_(LEARNING_RATE * g1)
            w2.sub_(LEARNING_RATE * g2)
        return loss

    return step


def _sync(value: object) -> None:
    if isinstance(value, tf.Tensor):
        value.numpy()
    elif isinstance(value, jax.Array):
        value.block_until_ready()
    elif hasattr(value, "item"):
        value.item()


def _median_step_seconds(step: Callable[[], object], block: int, repeats: int) -> float:
    for _ in range(3):
        _sync(step())
    # The steady state is the compiled one: on the CPU, a repeating program runs on the host until its compile in
    # the background thread is done (tapeshim/_src/background_compile.py).
    bench_tape.settle_compiles()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(block):
            out = step()
        _sync(out)
        samples.append((time.perf_counter() - start) / block)
    return statistics.median(samples)


def _programs() -> dict[str, Callable[[], tuple[Callable[[], object], list]]]:
    return {
        "small MLP (64, 32-64-10)": lambda: tf_mlp_step(bench_tape.mlp_data(64, (32, 64, 10))),
        "large MLP (4096, 2048-4096-10)": lambda: tf_mlp_step(bench_tape.mlp_data(4096, (2048, 4096, 10))),
        "conv 3x3 (64x32x32x16 -> 32)": lambda: tf_conv_step(_conv_data()),
        "200-op chain (4096)": tf_chain_step,
    }


def numbers() -> dict[str, np.ndarray]:
    """Each program's first loss (or gradient) and a sample of its variables after three steps."""
    out: dict[str, np.ndarray] = {}
    for name, build in _programs().items():
        step, variables = build()
        out[f"{name}/first"] = np.asarray(step().numpy())
        for _ in range(2):
            step()
        for index, variable in enumerate(variables):
            flat = variable.numpy().ravel()
            out[f"{name}/var{index}"] = flat[:: max(1, flat.size // 4096)]  # a sample keeps the file small
    return out


def check(reference_path: str) -> bool:
    reference = np.load(reference_path)
    ok = True
    for key, value in numbers().items():
        expected = reference[key]
        close = value.shape == expected.shape and np.allclose(value, expected, rtol=5e-3, atol=1e-3)
        worst = float(np.max(np.abs(value - expected))) if value.shape == expected.shape else float("nan")
        print(f"  {'ok ' if close else 'BAD'} {key:<42} max |diff| {worst:.3g}")
        ok &= close
    return ok


def timings(repeats: int) -> None:
    try:
        import torch
    except ImportError:
        torch = None
    device = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"
    print(f"\n{'workload':<34}{'impl':<24}{'median/step':>14}{'vs jax.jit':>12}")
    for name, build in _programs().items():
        block = 50 if "small" in name else 10
        steps: dict[str, Callable[[], object]] = {
            "tapeshim eager": build()[0],
            "tapeshim.function": tf.function(build()[0], jit_compile=True),
        }
        if "MLP" in name:
            sizes = (32, 64, 10) if "small" in name else (2048, 4096, 10)
            data = bench_tape.mlp_data(64 if "small" in name else 4096, sizes)
            steps["jax.jit"] = bench_tape.jax_mlp_step(data)
            if torch is not None:
                steps[f"PyTorch eager ({device})"] = torch_mlp_step(torch, data, device)
        results = {label: _median_step_seconds(step, block, repeats) for label, step in steps.items()}
        jit = results.get("jax.jit")
        for label, seconds in results.items():
            ratio = f"{seconds / jit:.2f}x" if jit else "-"
            print(f"{name:<34}{label:<24}{seconds * 1e6:>11.1f} us{ratio:>12}")


def first_calls(calls: int) -> None:
    """Each program's first `calls` calls (eager tapeshim), one by one: what a short program pays before the
    steady state, with the XLA compiles each call waited for or started (a background compile's counts in the
    call that submitted it, or a later one)."""
    compiles: list[float] = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, seconds, **_: compiles.append(seconds) if event.endswith("backend_compile_duration") else None
    )
    print(f"\nfirst {calls} calls (ms; compiles and their seconds in brackets)")
    for name, build in _programs().items():
        step, _ = build()
        line = []
        for _ in range(calls):
            before = len(compiles)
            start = time.perf_counter()
            _sync(step())
            took = time.perf_counter() - start
            new = compiles[before:]
            line.append(f"{took * 1e3:.1f}" + (f"[{len(new)}:{sum(new):.2f}s]" if new else ""))
        bench_tape.settle_compiles()
        print(f"{name:<34}{' '.join(line)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--save", help="write the reference numbers (run on a CPU machine)")
    parser.add_argument("--check", help="compare with reference numbers written by --save")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-timings", action="store_true")
    parser.add_argument("--first-calls", type=int, default=0, help="also time each of the first N calls")
    args = parser.parse_args()
    print(f"jax {jax.__version__}; devices {jax.devices()}")
    if args.save:
        np.savez(args.save, **numbers())
        print(f"wrote {args.save}")
    ok = True
    if args.check:
        print("numbers against the CPU reference:")
        ok = check(args.check)
    if args.first_calls:
        first_calls(args.first_calls)
    if not args.no_timings:
        timings(args.repeats)
    if not ok:
        raise SystemExit("numbers differ from the CPU reference")


if __name__ == "__main__":
    main()
