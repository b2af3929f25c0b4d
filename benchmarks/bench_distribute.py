"""The custom_training tutorial's step under a strategy: tapeshim vs TF MirroredStrategy vs hand-written shard_map.

Run: `python benchmarks/bench_distribute.py [--devices N] [--per-replica-batch 64] [--steps 50] [--no-tf]`.

Weak scaling: the per-replica batch is fixed, so the global batch grows with N. For each
replica count (1 and N) it times, per step (median of `--steps`, each ended by
`block_until_ready` on the loss, after warm-up):

* tapeshim: `tf.function` around `strategy.run(train_step)` + `strategy.reduce(SUM)`, a Keras MLP
  with Adam, `compute_average_loss` (the TF tutorial's program);
* the ceiling: the same model and Adam update written by hand as `jax.jit(jax.shard_map(...))`;
* TF 2.21 `MirroredStrategy` with `tf.function` (in a child process: Keras picks one backend per
  process).

It prints step times, examples/s, scaling efficiency `T(1) / T(N)` and the tapeshim/shard_map ratio.
On a CPU-only machine the N devices are simulated host devices sharing the CPU cores, so the figures
measure overhead, not speed-up. On a multi-GPU box the same command uses the first N GPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# First steps here are a first run's: no compile cache from an earlier run (tapeshim/_src/compile_cache.py).
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")

FEATURES, HIDDEN, CLASSES = 784, 256, 10


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, default=8, help="replicas of the scaled run (default 8)")
    parser.add_argument("--per-replica-batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--no-tf", action="store_true", help="leave TensorFlow out")
    parser.add_argument("--side", default="jax", choices=("jax", "tf"), help=argparse.SUPPRESS)
    return parser.parse_args()


def _data(batch: int) -> tuple:
    import numpy as np

    rng = np.random.default_rng(0)
    return (
        rng.normal(size=(batch, FEATURES)).astype(np.float32),
        rng.integers(0, CLASSES, size=(batch,)).astype(np.int64),
    )


def _median_ms(step, steps: int) -> float:
    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _tutorial_step(tf, strategy, batch_size: int):
    """The TF tutorial's distributed step (same text for TF and tapeshim); returns a no-argument step."""
    x, y = _data(batch_size)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.Input((FEATURES,)),
                tf.keras.layers.Dense(HIDDEN, activation="relu"),
                tf.keras.layers.Dense(CLASSES),
            ]
        )
        optimizer = tf.keras.optimizers.Adam(1e-3)
        optimizer.build(model.trainable_variables)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def train_step(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(yb, model(xb, training=True)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    @tf.function
    def distributed_train_step(inputs):
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(train_step, args=(inputs,)), axis=None)

    batch = next(
        iter(
            strategy.experimental_distribute_dataset(
                tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size, drop_remainder=True)
            )
        )
    )

    def step():
        loss = distributed_train_step(batch)
        return loss.numpy()

    return step


def _shard_map_step(devices: list, batch_size: int):
    """The same MLP and Adam update, written by hand: jit(shard_map) with a psum of the gradients."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    n = len(devices)
    mesh = Mesh(np.array(devices), ("batch",))
    rng = np.random.default_rng(1)
    params = [
        rng.normal(scale=0.05, size=(FEATURES, HIDDEN)).astype(np.float32),
        np.zeros(HIDDEN, np.float32),
        rng.normal(scale=0.05, size=(HIDDEN, CLASSES)).astype(np.float32),
        np.zeros(CLASSES, np.float32),
    ]
    rep, bat = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    state = jax.device_put(
        (params, [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params], np.zeros((), np.float32)), rep
    )
    x, y = _data(batch_size)
    xb, yb = jax.device_put(x, bat), jax.device_put(y, bat)

    def loss_fn(p, xs, ys):
        logits = jax.nn.relu(xs @ p[0] + p[1]) @ p[2] + p[3]
        per_example = -jnp.take_along_axis(jax.nn.log_softmax(logits), ys[:, None], axis=1)[:, 0]
        return jnp.sum(per_example) / (xs.shape[0] * n)

    def body(state, xs, ys):
        p, m, v, t = state
        loss, grads = jax.value_and_grad(loss_fn)(p, xs, ys)
        grads = jax.lax.psum(grads, "batch")
        t = t + 1
        m = [0.9 * a + 0.1 * g for a, g in zip(m, grads)]
        v = [0.999 * a + 0.001 * g * g for a, g in zip(v, grads)]
        lr = 1e-3 * jnp.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        p = [w - lr * a / (jnp.sqrt(b) + 1e-7) for w, a, b in zip(p, m, v)]
        return (p, m, v, t), jax.lax.psum(loss, "batch")

    run = jax.jit(
        jax.shard_map(body, mesh=mesh, in_specs=(P(), P("batch"), P("batch")), out_specs=(P(), P()), check_vma=False),
        donate_argnums=0,
    )
    holder = [state]

    def step():
        holder[0], loss = run(holder[0], xb, yb)
        return loss.block_until_ready()

    return step


def _jax_side(args: argparse.Namespace) -> dict:
    os.environ.setdefault("XLA_FLAGS", f"--xla_force_host_platform_device_count={args.devices}")
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import jax

    import tapeshim as tf

    platform = jax.devices()[0].platform
    available = jax.devices()
    if len(available) < args.devices:
        sys.exit(f"--devices {args.devices}: only {len(available)} {platform} device(s) are visible to JAX.")
    results = {"platform": platform}
    for n in sorted({1, args.devices}):
        devices = available[:n]
        strategy = tf.distribute.MirroredStrategy(devices)
        batch = args.per_replica_batch * n
        results[n] = {
            "tapeshim": _median_ms(_tutorial_step(tf, strategy, batch), args.steps),
            "shard_map": _median_ms(_shard_map_step(devices, batch), args.steps),
        }
    return results


def _tf_side(args: argparse.Namespace) -> dict:
    os.environ["KERAS_BACKEND"] = "tensorflow"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * args.devices)
    kind = "GPU" if gpus else "CPU"
    names = [d.name for d in tf.config.list_logical_devices(kind)]
    results = {}
    for n in sorted({1, args.devices}):
        strategy = tf.distribute.MirroredStrategy(names[:n])
        results[n] = {"tf": _median_ms(_tutorial_step(tf, strategy, args.per_replica_batch * n), args.steps)}
    return results


def main() -> None:
    args = _parse()
    if args.side == "tf":
        print(json.dumps(_tf_side(args)))
        return
    tf_results: dict = {}
    if not args.no_tf:
        child = subprocess.run(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--side",
                "tf",
                "--devices",
                str(args.devices),
                "--per-replica-batch",
                str(args.per_replica_batch),
                "--steps",
                str(args.steps),
            ],
            capture_output=True,
            text=True,
        )
        if child.returncode == 0:
            tf_results = {int(k): v for k, v in json.loads(child.stdout.strip().splitlines()[-1]).items()}
        else:
            print("TF side failed:", child.stderr[-2000:])
    results = _jax_side(args)
    platform = results.pop("platform")
    print(
        f"MLP {FEATURES}-{HIDDEN}-{CLASSES}, Adam, per-replica batch {args.per_replica_batch}, {platform} devices "
        f"(median of {args.steps} steps, ms)"
    )
    print(
        f"{'replicas':>8} {'tapeshim':>10} {'shard_map':>10} {'TF':>10} {'tapeshim/shard_map':>19} "
        f"{'examples/s (tapeshim)':>22}"
    )
    for n in sorted(results):
        row = results[n]
        tf_ms = tf_results.get(n, {}).get("tf")
        tf_text = f"{tf_ms:10.2f}" if tf_ms is not None else f"{'-':>10}"
        print(
            f"{n:>8} {row['tapeshim']:10.2f} {row['shard_map']:10.2f} {tf_text} "
            f"{row['tapeshim'] / row['shard_map']:19.2f} {args.per_replica_batch * n / row['tapeshim'] * 1e3:22.0f}"
        )
    if len(results) > 1:
        n = max(results)
        print(
            f"weak-scaling efficiency T(1)/T({n}): tapeshim {results[1]['tapeshim'] / results[n]['tapeshim']:.2f}, "
            f"shard_map {results[1]['shard_map'] / results[n]['shard_map']:.2f}"
            + (f", TF {tf_results[1]['tf'] / tf_results[n]['tf']:.2f}" if n in tf_results and 1 in tf_results else "")
        )


if __name__ == "__main__":
    main()
