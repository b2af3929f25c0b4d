"""The cost of one Keras training step: TF's Keras, tapeshim.keras, Keras-on-JAX by hand, PyTorch.

Run: `python benchmarks/bench_keras.py` (TensorFlow and PyTorch are used where installed).

The step is the canonical custom loop: a `tf.keras.Sequential` MLP (64-128-10,
ReLU, batch 100), `SparseCategoricalCrossentropy(from_logits=True)` inside a
`GradientTape`, and `Adam.apply_gradients`. The same source runs with
`import tapeshim as tf` (eagerly and under `tapeshim.function`) and with real
TensorFlow (eagerly and under `tf.function`). Baselines: the Keras-on-JAX idiom
written by hand (`stateless_call` + `optimizer.stateless_apply` under one
`jax.jit`), and the same model in PyTorch eager.

Keras chooses its backend once per process, so TF's Keras runs in a child
process (KERAS_BACKEND=tensorflow) after the rest; its figures are not
interleaved with the others.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# First steps here are a first run's: no compile cache from an earlier run (tapeshim/_src/compile_cache.py).
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_tape  # noqa: E402
import numpy as np  # noqa: E402

BATCH, FEATURES, HIDDEN, CLASSES = 100, 64, 128, 10


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, FEATURES)).astype(np.float32), rng.integers(0, CLASSES, BATCH).astype(np.int32))


def _weights(shapes: list[tuple]) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [(rng.standard_normal(shape) * 0.1).astype(np.float32) for shape in shapes]


def keras_step(tf: Any, compiled: bool) -> Callable[[], object]:
    """The TF-style custom training step, for `tf` = tensorflow or tapeshim."""
    x, y = _data()
    model = tf.keras.Sequential(
        [tf.keras.Input((FEATURES,)), tf.keras.layers.Dense(HIDDEN, activation="relu"), tf.keras.layers.Dense(CLASSES)]
    )
    model.set_weights(_weights([tuple(w.shape) for w in model.weights]))
    optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = tf.constant(x), tf.constant(y)

    def step() -> object:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tf.function(step) if compiled else step


def keras_jax_step() -> Callable[[], object]:
    """Keras 3's own JAX idiom: stateless_call and stateless_apply under one jax.jit."""
    import jax

    from tapeshim._src.keras_bridge import keras

    x, y = _data()
    model = keras.Sequential(
        [keras.Input((FEATURES,)), keras.layers.Dense(HIDDEN, activation="relu"), keras.layers.Dense(CLASSES)]
    )
    model.set_weights(_weights([tuple(w.shape) for w in model.weights]))
    optimizer = keras.optimizers.Adam(1e-3)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def compute_loss(trainable, non_trainable, x, y):
        predictions, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return loss_fn(y, predictions), non_trainable

    grad_fn = jax.value_and_grad(compute_loss, has_aux=True)

    @jax.jit
    def train_step(state, x, y):
        trainable, non_trainable, optimizer_state = state
        (loss, non_trainable), grads = grad_fn(trainable, non_trainable, x, y)
        trainable, optimizer_state = optimizer.stateless_apply(optimizer_state, grads, trainable)
        return loss, (trainable, non_trainable, optimizer_state)

    state = (
        [v.value for v in model.trainable_variables],
        [v.value for v in model.non_trainable_variables],
        [v.value for v in optimizer.variables],
    )
    holder = {"state": state}

    def step() -> object:
        loss, holder["state"] = train_step(holder["state"], x, y)
        return loss

    return step


def torch_step() -> Callable[[], object] | None:
    try:
        import torch
    except ImportError:
        return None
    x, y = _data()
    x, y = torch.from_numpy(x), torch.from_numpy(y).long()
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> object:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


def _tf_child(repeats: int, block: int) -> None:
    import tensorflow

    bench_tape.real_tf = tensorflow
    steps = {"TF Keras eager": keras_step(tensorflow, False), "TF Keras tf.function": keras_step(tensorflow, True)}
    print(json.dumps(bench_tape.measure(steps, block, repeats)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--no-tf", action="store_true", help="leave TensorFlow's Keras out")
    parser.add_argument("--tf-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tf_child:
        _tf_child(args.repeats, args.block)
        return
    import tapeshim

    steps = {
        "tapeshim.keras eager": keras_step(tapeshim, False),
        "tapeshim.keras function": keras_step(tapeshim, True),
        "Keras-JAX jax.jit": keras_jax_step(),
    }
    torch = torch_step()
    if torch is not None:
        steps["PyTorch eager"] = torch
    results = bench_tape.measure(steps, args.block, args.repeats)
    if not args.no_tf:
        env = {**os.environ, "KERAS_BACKEND": "tensorflow"}
        child = subprocess.run(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--tf-child",
                "--repeats",
                str(args.repeats),
                "--block",
                str(args.block),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        if child.returncode == 0:
            results = {**json.loads(child.stdout.strip().splitlines()[-1]), **results}
        else:
            print("TF's Keras could not run:", child.stderr[-2000:])
    base, jit = results.get("TF Keras eager"), results.get("Keras-JAX jax.jit")
    print(
        f"\nKeras MLP training step, {FEATURES}-{HIDDEN}-{CLASSES}, batch {BATCH}, Adam "
        "(median per step; TF's Keras measured in a child process)"
    )
    print(f"  {'implementation':<28}{'median/step':>14}{'vs TF eager':>14}{'vs Keras-JAX jit':>18}")
    for label, seconds in results.items():
        vs_tf = f"{seconds / base:.3f}x" if base else "-"
        vs_jit = f"{seconds / jit:.2f}x" if jit else "-"
        print(f"  {label:<28}{seconds * 1e6:>11.1f} us{vs_tf:>14}{vs_jit:>18}")


if __name__ == "__main__":
    main()
