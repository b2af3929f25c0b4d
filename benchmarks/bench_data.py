"""The input pipeline and per-epoch Keras objects: TensorFlow and tapeshim side by side.

Run: `python benchmarks/bench_data.py` (TensorFlow is used where installed).

Two loops TF users write, each timed whole (first compilations included):

* **pipeline**: 100 epochs over 292 in-memory rows (`from_tensor_slices`),
  batches of 64, a compiled step (`tf.function`) per batch; without and with
  `prefetch(tf.data.AUTOTUNE)`.
* **new metric per epoch**: 30 epochs, each making a new `tf.keras.metrics.Mean()`
  and updating it 10 times.

Each module runs in its own child process (Keras chooses its backend once per
process: TF's Keras on the TensorFlow backend, tapeshim's on JAX).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

# First steps here are a first run's: no compile cache from an earlier run (tapeshim/_src/compile_cache.py).
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")

import numpy as np

ROWS, FEATURES, BATCH, EPOCHS = 292, 16, 64, 100
METRIC_EPOCHS, METRIC_STEPS = 30, 10


def pipeline_seconds(tf: Any, prefetch: bool) -> float:
    """Seconds for EPOCHS epochs of a compiled linear-regression step over batched in-memory rows."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, FEATURES)).astype(np.float32)
    y = rng.standard_normal((ROWS, 1)).astype(np.float32)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)
    if prefetch:
        dataset = dataset.prefetch(tf.data.AUTOTUNE)
    weights = tf.Variable(tf.zeros((FEATURES, 1)))

    @tf.function
    def step(features: Any, labels: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(features, weights) - labels) ** 2)
        weights.assign_sub(0.01 * tape.gradient(loss, weights))
        return loss

    start = time.perf_counter()
    for _ in range(EPOCHS):
        for features, labels in dataset:
            loss = step(features, labels)
    float(loss)
    return time.perf_counter() - start


def metric_seconds(tf: Any) -> float:
    """Seconds for METRIC_EPOCHS epochs, each with a new `Mean` metric updated METRIC_STEPS times."""
    losses = [tf.constant(float(i)) for i in range(METRIC_STEPS)]
    start = time.perf_counter()
    for _ in range(METRIC_EPOCHS):
        metric = tf.keras.metrics.Mean()
        for loss in losses:
            metric.update_state(loss)
        result = metric.result()
    float(result)
    return time.perf_counter() - start


def measure(module: str) -> dict[str, float]:
    """Every figure for one module (`tensorflow` or `tapeshim`), in this process."""
    tf = __import__(module)
    _ = tf.keras.metrics.Mean  # importing Keras is not part of the loops
    return {
        "pipeline": pipeline_seconds(tf, prefetch=False),
        "pipeline + prefetch(AUTOTUNE)": pipeline_seconds(tf, prefetch=True),
        "new Mean() per epoch": metric_seconds(tf),
    }


def _child(module: str) -> dict[str, float] | None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("KERAS_BACKEND", None)
    if module == "tensorflow":
        env["KERAS_BACKEND"] = "tensorflow"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--module", module],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        print(f"{module} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(lines[-1][len("RESULT ") :])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", help="measure one module in this process and print its figures as JSON")
    options = parser.parse_args()
    if options.module:
        print("RESULT " + json.dumps(measure(options.module)))
        return
    figures = {module: _child(module) for module in ("tensorflow", "tapeshim")}
    names = next((list(f) for f in figures.values() if f), [])
    print(f"{'loop':34s} {'TensorFlow':>12s} {'tapeshim':>12s}")
    for name in names:
        cells = [f"{figures[m][name]:10.2f} s" if figures[m] else f"{'n/a':>12s}" for m in ("tensorflow", "tapeshim")]
        print(f"{name:34s} {cells[0]:>12s} {cells[1]:>12s}")


if __name__ == "__main__":
    main()
