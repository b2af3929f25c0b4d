"""Real-program patterns of issue 9: first-step latency, steady state and retained memory, side by side.

Run: `python benchmarks/bench_engine.py [--quick]`. Each implementation runs in
its own child process (so first-call figures are really first calls, and
memory figures are that implementation's own), and the parent prints the
ratios to TF eager in one table.

Patterns (the same TF source runs on real TF and on tapeshim):
  mlp_small     small MLP step (batch 64, 32-64-10): first step, second step, calls10 and
                calls100 (the first 10 and 100 calls together: what a short program pays,
                its compiles included; a tiered engine compiles a repeating structure
                within them), steady step (once compiled)
  chain200      200-op elementwise chain, one gradient: first, second, calls10, calls100, steady
  mlp_compute   compute-bound MLP step (batch 512, 512-1024-10): first, second, calls10, calls100,
                steady
  actor_critic  one tape over an RL episode of varying length, `np.argmax`
                on the probabilities inside the tape, `probs[0, a]`
  indexing      `x[i]`, `x[i:i+1]`, `for row in x`, `tf.unstack` over fresh indices
  custom_grad   an eager loop calling a `tf.custom_gradient` function
  chain_long    one tape over a long chain of `tf.sin`, first gradient
  rnn           an RNN cell unrolled under a tape, first and second call
  keras_cnn     a small Keras CNN train step (GradientTape + optimizer): first, second, calls10,
                calls100, steady
  cnn_sizes     a Keras CNN step at batch sizes not seen before (an epoch's last batch): new_size, repeat
  text_lengths  a Keras text classifier's step (embedding, Adam) on batches of new sequence lengths: new_size,
                repeat
  tx_lengths    a small Transformer language model (a users' block layer: causal attention, LayerNormalization)
                on batches of new sequence lengths: new_size, repeat
  sig_sizes     a tf.function step with a None batch dimension, called with changing batch sizes
  new_sizes     an eager tape step over batches of new sizes (variable-length data): first, mean per step
  mem_append    `losses.append(loss)` after each step: RSS growth
  mem_total     `total = total + loss` inside each step's tape, then read `total`
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from typing import Any, Callable, Iterable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# First steps here are a first run's: no compile cache from an earlier run (tapeshim/_src/compile_cache.py).
os.environ.setdefault("TAPESHIM_COMPILATION_CACHE_DIR", "off")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _sync(value: Any) -> None:
    if hasattr(value, "numpy"):
        value.numpy()
    elif hasattr(value, "block_until_ready"):
        value.block_until_ready()


def _settle_compiles() -> None:
    """Waits for tapeshim's background compiles (`background_compile`), so that they land in no later figure."""
    module = sys.modules.get("tapeshim._src.background_compile")
    if module is not None:
        module.wait()


EARLY_CALLS = 10
LONG_CALLS = 100


def _first_and_steady(step: Callable[[], Any], steady_calls: int) -> dict:
    """The first call, the second, the totals of the first `EARLY_CALLS` and `LONG_CALLS` calls (what a short
    program pays, compiles included: a tiered engine compiles a repeating structure within them), and the mean
    of `steady_calls` once compiles settled."""
    times = []
    for _ in range(LONG_CALLS):
        start = time.perf_counter()
        _sync(step())
        times.append(time.perf_counter() - start)
    _settle_compiles()  # the steady state is the compiled one
    start = time.perf_counter()
    for _ in range(steady_calls):
        out = step()
    _sync(out)
    steady = (time.perf_counter() - start) / steady_calls
    return {
        "first": times[0],
        "second": times[1],
        f"calls{EARLY_CALLS}": sum(times[:EARLY_CALLS]),
        f"calls{LONG_CALLS}": sum(times),
        "steady": steady,
    }


def mlp_step(tf: Any, batch: int, sizes: tuple) -> Callable[[], Any]:
    rng = np.random.default_rng(0)
    n_in, n_hidden, n_out = sizes
    w1 = tf.Variable((rng.normal(size=(n_in, n_hidden)) / np.sqrt(n_in)).astype(np.float32))
    w2 = tf.Variable((rng.normal(size=(n_hidden, n_out)) / np.sqrt(n_hidden)).astype(np.float32))
    x = tf.constant(rng.normal(size=(batch, n_in)).astype(np.float32))
    labels = tf.constant(rng.integers(0, n_out, size=batch).astype(np.int32))

    def step() -> Any:
        return _sgd_step(tf, w1, w2, x, labels)

    return step


def _sgd_step(tf: Any, w1: Any, w2: Any, x: Any, labels: Any) -> Any:
    """One SGD step of a two-layer MLP with a sparse softmax cross-entropy loss; returns the loss."""
    with tf.GradientTape() as tape:
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    g1, g2 = tape.gradient(loss, [w1, w2])
    w1.assign_sub(0.01 * g1)
    w2.assign_sub(0.01 * g2)
    return loss


def chain_step(tf: Any, length: int, size: int = 256) -> Callable[[], Any]:
    x = tf.constant(np.linspace(-1.0, 1.0, size, dtype=np.float32))

    def step() -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(length // 4):
                y = tf.tanh(tf.sin(y) * 1.01) + 0.01
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, x)

    return step


def sin_chain_first(tf: Any, length: int) -> dict:
    x = tf.constant(np.linspace(-1.0, 1.0, 64, dtype=np.float32))
    start = time.perf_counter()
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(length):
            y = tf.sin(y)
        loss = tf.reduce_sum(y)
    _sync(tape.gradient(loss, x))
    return {"first": time.perf_counter() - start}


def actor_critic(tf: Any, episodes: int) -> dict:
    rng = np.random.default_rng(1)
    w1 = tf.Variable(rng.normal(size=(4, 32)).astype(np.float32) * 0.3)
    wa = tf.Variable(rng.normal(size=(32, 2)).astype(np.float32) * 0.3)
    wc = tf.Variable(rng.normal(size=(32, 1)).astype(np.float32) * 0.3)
    variables = [w1, wa, wc]
    times = []
    for _ in range(episodes):
        length = int(rng.integers(8, 24))
        start = time.perf_counter()
        state = rng.normal(size=(1, 4)).astype(np.float32)
        with tf.GradientTape() as tape:
            log_probs, values, rewards = [], [], []
            for _ in range(length):
                hidden = tf.nn.relu(tf.matmul(tf.constant(state), w1))
                probs = tf.nn.softmax(tf.matmul(hidden, wa))
                value = tf.matmul(hidden, wc)
                action = int(np.argmax(np.squeeze(probs)))
                log_probs.append(tf.math.log(probs[0, action]))
                values.append(value[0, 0])
                rewards.append(1.0)
                state = rng.normal(size=(1, 4)).astype(np.float32)
            returns = tf.constant(np.cumsum(rewards[::-1])[::-1].astype(np.float32))
            log_probs = tf.stack(log_probs)
            values = tf.stack(values)
            advantage = returns - values
            loss = -tf.reduce_sum(log_probs * advantage) + tf.reduce_sum(advantage * advantage)
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(0.001 * g)
        _sync(loss)
        times.append(time.perf_counter() - start)
    return {"first": times[0], "steady": float(np.mean(times[1:]))}


def indexing(tf: Any, n: int) -> dict:
    x = tf.constant(np.arange(n * 8, dtype=np.float32).reshape(n, 8))
    start = time.perf_counter()
    out = None
    for i in range(n):
        out = x[i]
        out = x[i : i + 1]
    for row in x:
        out = row
    out = tf.unstack(x)[-1]
    _sync(out)
    calls = 3 * n + 1
    return {"steady": (time.perf_counter() - start) / calls}


def custom_grad(tf: Any, steps: int) -> dict:
    @tf.custom_gradient
    def clip(x):
        def grad_fn(upstream):
            return tf.clip_by_value(upstream, -0.5, 0.5) * tf.ones_like(x)

        return tf.identity(x) * 1.0, grad_fn

    w = tf.Variable(np.ones((16, 16), np.float32))
    times = []
    for i in range(steps):
        start = time.perf_counter()
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(clip(w * float(i % 3 + 1)))
        _sync(tape.gradient(loss, w))
        times.append(time.perf_counter() - start)
    return {"first": times[0], "steady": float(np.mean(times[1:]))}


def rnn(tf: Any, steps: int) -> dict:
    rng = np.random.default_rng(2)
    wx = tf.Variable(rng.normal(size=(8, 32)).astype(np.float32) * 0.2)
    wh = tf.Variable(rng.normal(size=(32, 32)).astype(np.float32) * 0.2)
    xs = tf.constant(rng.normal(size=(steps, 4, 8)).astype(np.float32))

    def call() -> Any:
        with tf.GradientTape() as tape:
            h = tf.zeros((4, 32))
            for t in range(steps):
                h = tf.tanh(tf.matmul(xs[t], wx) + tf.matmul(h, wh))
            loss = tf.reduce_sum(h * h)
        return tape.gradient(loss, [wx, wh])[0]

    times = []
    for _ in range(3):
        start = time.perf_counter()
        _sync(call())
        times.append(time.perf_counter() - start)
    return {"first": times[0], "steady": times[-1]}


def keras_cnn(tf: Any, steps: int) -> dict:
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.layers.Input((16, 16, 1)),
            keras.layers.Conv2D(8, 3, activation="relu"),
            keras.layers.Flatten(),
            keras.layers.Dense(10),
        ]
    )
    optimizer = keras.optimizers.SGD(0.01)
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(32, 16, 16, 1)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, size=32).astype(np.int32))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step() -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return _first_and_steady(step, steps)


def cnn_sizes(tf: Any, steps: int) -> dict:
    """A Keras CNN's training step (two convolutions over 28 x 28 images) at a steady batch, then at batch sizes
    not seen before (an epoch's last, partial batch; variable-length data): their mean ("new_size"), and the
    mean of the same sizes again ("repeat")."""
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.layers.Input((28, 28, 1)),
            keras.layers.Conv2D(16, 3, activation="relu"),
            keras.layers.Conv2D(16, 3, activation="relu"),
            keras.layers.Flatten(),
            keras.layers.Dense(10),
        ]
    )
    train = _keras_train_step(tf, model, keras.optimizers.SGD(0.01))
    rng = np.random.default_rng(5)

    def step(n: int) -> float:
        images = tf.constant(rng.normal(size=(n, 28, 28, 1)).astype(np.float32))
        return train(images, tf.constant(rng.integers(0, 10, size=n).astype(np.int32)))

    return _new_and_repeated(step, [64] * steps, (20, 33, 47))


def text_lengths(tf: Any, steps: int) -> dict:
    """A Keras text classifier's training step (an embedding, a convolution, pooling; Adam) on batches of a new
    sequence length each step, as padded batches of variable-length text come: their mean ("new_size"), and the
    mean of the same lengths again ("repeat"). The table's gradient is IndexedSlices of a new number of rows."""
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.layers.Embedding(1000, 32),
            keras.layers.Conv1D(32, 3, activation="relu"),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(2),
        ]
    )
    train = _keras_train_step(tf, model, keras.optimizers.Adam(1e-3))
    rng = np.random.default_rng(6)

    def step(length: int) -> float:
        ids = tf.constant(rng.integers(0, 1000, size=(32, length)).astype(np.int32))
        return train(ids, tf.constant(rng.integers(0, 2, size=32).astype(np.int32)))

    return _new_and_repeated(step, (20, 21, 22), range(23, 23 + steps))


def transformer_lengths(tf: Any, steps: int) -> dict:
    """A small Transformer language model's training step (an embedding, a block layer of the user's own: causal
    self-attention, a feed-forward network, LayerNormalization; Adam) on batches of a new sequence length each
    step: their mean ("new_size"), and the mean of the same lengths again ("repeat"). The model runs a user's
    Python: traced at each new length by default; with `TAPESHIM_USER_FAMILIES=1` its shape family, traced once
    under watch (`size_decisions`), serves them."""
    keras = tf.keras

    class Block(keras.layers.Layer):
        def __init__(self, width: int, heads: int) -> None:
            super().__init__()
            self.attention = keras.layers.MultiHeadAttention(heads, width // heads)
            self.feed_forward = keras.Sequential(
                [keras.layers.Dense(2 * width, activation="relu"), keras.layers.Dense(width)]
            )
            self.norm1, self.norm2 = keras.layers.LayerNormalization(), keras.layers.LayerNormalization()

        def call(self, x: Any) -> Any:
            x = self.norm1(x + self.attention(x, x, use_causal_mask=True))
            return self.norm2(x + self.feed_forward(x))

    ids = keras.Input((None,), dtype="int32")
    logits = keras.layers.Dense(500)(Block(32, 4)(keras.layers.Embedding(500, 32)(ids)))
    train = _keras_train_step(tf, keras.Model(ids, logits), keras.optimizers.Adam(1e-3))
    rng = np.random.default_rng(7)

    def step(length: int) -> float:
        tokens = rng.integers(0, 500, size=(8, length + 1)).astype(np.int32)
        return train(tf.constant(tokens[:, :-1]), tf.constant(tokens[:, 1:]))

    return _new_and_repeated(step, (16, 17, 18), range(19, 19 + steps))


def _keras_train_step(tf: Any, model: Any, optimizer: Any) -> Callable[[Any, Any], float]:
    """A custom training loop's step of a Keras classifier (logits, a sparse cross-entropy) on `(inputs,
    labels)`, as TF's guides write it: its duration, the loss computed."""
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(inputs: Any, labels: Any) -> float:
        start = time.perf_counter()
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(inputs, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        _sync(loss)
        return time.perf_counter() - start

    return step


def _new_and_repeated(step: Callable[[int], float], warm_up: Iterable[int], sizes: Iterable[int]) -> dict:
    """`step(size)` at the `warm_up` sizes, then (its compiles settled) the mean of its steps at `sizes`, sizes
    it has not seen ("new_size"), and the mean of the same sizes again ("repeat")."""
    for size in warm_up:
        step(size)
    _settle_compiles()
    sizes = list(sizes)
    new = [step(size) for size in sizes]
    repeat = [step(size) for size in sizes]
    return {"new_size": float(np.mean(new)), "repeat": float(np.mean(repeat))}


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def mem_append(tf: Any, steps: int) -> dict:
    step = mlp_step(tf, 64, (32, 64, 10))
    # a warm-up as long as the loop: tapeshim compiles this step again, optimized, after about 4,600 calls
    # (compile_tiers), and what compiling costs is not what the kept losses cost
    for _ in range(steps):
        step()
    _settle_compiles()
    before = _rss_mib()
    losses = []
    for _ in range(steps):
        losses.append(step())
    _sync(losses[-1])
    return {"rss_mib": _rss_mib() - before}


def mem_total(tf: Any, steps: int) -> dict:
    w = tf.Variable(np.ones((8,), np.float32))
    total = tf.constant(0.0)

    def step(total: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w) * 0.5
            total = total + loss
        w.assign_sub(0.001 * tape.gradient(loss, w))
        return total

    for _ in range(200):  # warm-up past tapeshim's host calls (its compiles): what compiling costs is not what
        total = step(total)  # the loop keeps
    _settle_compiles()
    before = _rss_mib()
    start = time.perf_counter()
    for _ in range(steps):
        total = step(total)
    loop = time.perf_counter() - start
    start = time.perf_counter()
    value = float(total)
    return {"loop": loop, "read": time.perf_counter() - start, "rss_mib": _rss_mib() - before, "value": value}


def signature_sizes(tf: Any, calls: int) -> dict:
    """A training step under `tf.function` with an input signature of unknown batch size, called with
    changing batch sizes (a last smaller batch, a new size): first call, first calls of new sizes, repeats."""
    rng = np.random.default_rng(3)
    w1 = tf.Variable((rng.normal(size=(32, 64)) / np.sqrt(32)).astype(np.float32))
    w2 = tf.Variable((rng.normal(size=(64, 10)) / 8).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 32], tf.float32), tf.TensorSpec([None], tf.int32)])
    def step(x: Any, y: Any) -> Any:
        return _sgd_step(tf, w1, w2, x, y)

    sizes = [64, 64, 37, 64, 37, 10, 64, 10] + [64, 37] * (calls // 2)
    seen: set = set()
    first, new, repeat = 0.0, [], []
    start_all = time.perf_counter()
    for k, n in enumerate(sizes):
        x = tf.constant(rng.normal(size=(n, 32)).astype(np.float32))
        y = tf.constant(rng.integers(0, 10, size=n).astype(np.int32))
        start = time.perf_counter()
        _sync(step(x, y))
        took = time.perf_counter() - start
        if k == 0:
            first = took
        elif n not in seen:
            new.append(took)
        else:
            repeat.append(took)
        seen.add(n)
    total = time.perf_counter() - start_all
    return {"first": first, "new_size": float(np.mean(new)), "steady": float(np.median(repeat)), "loop": total}


def new_sizes(tf: Any, steps: int) -> dict:
    """An eager training step under a tape, each step on a batch of a size not seen before (variable-length
    data): the first step, and the mean of the later ones; then a second epoch over the same sizes (each seen
    once before): the mean of its steps ("repeat")."""
    rng = np.random.default_rng(4)
    w = tf.Variable((rng.normal(size=(4, 8)) * 0.3).astype(np.float32))
    batches = [rng.normal(size=(n, 4)).astype(np.float32) for n in range(10, 10 + steps)]
    epochs: list[list[float]] = [[], []]
    for times in epochs:
        for batch in batches:
            x = tf.constant(batch)
            start = time.perf_counter()
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(x, w))
                loss = tf.reduce_mean(tf.square(h - tf.reduce_mean(h, axis=0)))
            w.assign_sub(0.01 * tape.gradient(loss, w))
            _sync(loss)
            times.append(time.perf_counter() - start)
    first, second = epochs
    return {"first": first[0], "mean": float(np.mean(first[1:])), "repeat": float(np.mean(second))}


def patterns(quick: bool) -> dict[str, Callable[[Any], dict]]:
    scale = 1 if quick else 2
    return {
        "mlp_small": lambda tf: _first_and_steady(mlp_step(tf, 64, (32, 64, 10)), 200),
        "chain200": lambda tf: _first_and_steady(chain_step(tf, 200), 20),
        "mlp_compute": lambda tf: _first_and_steady(mlp_step(tf, 512, (512, 1024, 10)), 5),
        "actor_critic": lambda tf: actor_critic(tf, 6 * scale),
        "indexing": lambda tf: indexing(tf, 100 * scale),
        "custom_grad": lambda tf: custom_grad(tf, 20 * scale),
        "chain_long": lambda tf: sin_chain_first(tf, 500 * scale),
        "rnn": lambda tf: rnn(tf, 50 * scale),
        "keras_cnn": lambda tf: keras_cnn(tf, 10),
        "cnn_sizes": lambda tf: cnn_sizes(tf, 20),
        "text_lengths": lambda tf: text_lengths(tf, 20 * scale),
        "tx_lengths": lambda tf: transformer_lengths(tf, 8 * scale),
        "sig_sizes": lambda tf: signature_sizes(tf, 20 * scale),
        "new_sizes": lambda tf: new_sizes(tf, 40 * scale),
        "mem_append": lambda tf: mem_append(tf, 5000 * scale),
        "mem_total": lambda tf: mem_total(tf, 1000 * scale),
    }


def child(framework: str, names: list[str], quick: bool) -> None:
    if framework == "tf":
        import tensorflow as tf
    else:
        sys.path.insert(0, os.path.dirname(HERE))
        import tapeshim as tf
    table = patterns(quick)
    results = {}
    for name in names:
        _settle_compiles()  # each pattern starts with no compile of another running beside it
        # ... and with no garbage of another's: a full collection (80 ms of the ~180k objects a tapeshim child holds
        # by then) falls in whichever pattern's allocations trigger it, and moved between patterns with any change
        gc.collect()
        try:
            results[name] = table[name](tf)
        except Exception as exc:  # noqa: BLE001 - reported in the table
            results[name] = {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
        print(json.dumps({name: results[name]}), flush=True)


def run_child(framework: str, names: list[str], quick: bool) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--child", framework, "--only", ",".join(names)]
    if quick:
        command.append("--quick")
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    results = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            results.update(json.loads(line))
    if out.returncode and not results:
        print(out.stderr[-2000:], file=sys.stderr)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer steps")
    parser.add_argument("--only", default="", help="comma-separated pattern names")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--no-tf", action="store_true", help="tapeshim only")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(patterns(args.quick))
    if args.child:
        child(args.child, names, args.quick)
        return
    frameworks = ["tapeshim"] if args.no_tf else ["tf", "tapeshim"]
    results = {}
    for framework in frameworks:
        compute = [n for n in names if not n.startswith("mem_")]
        results[framework] = run_child(framework, compute, args.quick) if compute else {}
        for name in names:
            if name.startswith("mem_"):  # each memory pattern in a process of its own
                results[framework].update(run_child(framework, [name], args.quick))
    print(f"{'pattern':<14}{'figure':<10}{'TF eager':>12}{'tapeshim':>12}{'ratio':>9}")
    for name in names:
        tf_row = results.get("tf", {}).get(name, {})
        ts_row = results.get("tapeshim", {}).get(name, {})
        for row in (tf_row, ts_row):
            if "error" in row:
                print(f"{name:<14}error: {row['error']}")
        early = (f"calls{EARLY_CALLS}", f"calls{LONG_CALLS}")
        figures = ("first", "second", *early, "new_size", "steady", "mean", "repeat", "loop", "read")
        for figure in (*figures, "rss_mib"):
            a, b = tf_row.get(figure), ts_row.get(figure)
            if a is None and b is None:
                continue
            unit = "MiB" if figure == "rss_mib" else "ms"
            scale = 1 if figure == "rss_mib" else 1e3

            def text(v: Any, scale: float = scale, unit: str = unit) -> str:
                return "-" if v is None else f"{v * scale:.2f}{unit}"

            ratio = f"{b / a:.2f}x" if a and b is not None and figure != "rss_mib" else ""
            print(f"{name:<14}{figure:<10}{text(a):>12}{text(b):>12}{ratio:>9}")


if __name__ == "__main__":
    main()
