"""`fit` of the text-classification tutorial's model: TF's Keras, tapeshim.keras, Keras-on-JAX, PyTorch.

Run: `python benchmarks/bench_keras_text.py [--length 0]` (TensorFlow and PyTorch are used where installed).

The model is TF's text-classification tutorial's, on seeded random texts: a
`TextVectorization` (500 tokens, `output_sequence_length` 50, or each batch's
longest text with `--length 0`) first, then `Embedding(500, 16)`,
`GlobalAveragePooling1D` and `Dense(1)`; `fit` on 2000 string tensors in batches
of 32 with Adam, then `evaluate` and `predict`. The same source runs with real
TensorFlow (in a child process: Keras chooses its backend once per process) and
with `import tapeshim as tf`. Baselines: Keras 3 on JAX fitting the vectorized
ids (vectorized once beforehand, as its users do in a `tf.data` map), and the
same model in PyTorch eager on those ids.

Printed: seconds of the first epoch (it compiles), the median of the later
epochs, and of a second `evaluate` and `predict`, with ratios to TF's.
tapeshim runs twice, each in a process of its own, sharing a compile cache
that is empty for the first (`tapeshim/_src/compile_cache.py`): the first row is
a script's first run, the second a later run of it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

TEXTS, BATCH, TOKENS, DIM, EPOCHS = 2000, 32, 500, 16, 5


def _corpus() -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(3, 40)))) for _ in range(TEXTS)]
    return texts, rng.integers(0, 2, TEXTS).astype(np.float32)


def _timed(call: Any) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _figures(epochs: list[float], evaluate: float, predict: float) -> dict:
    return {
        "first epoch": epochs[0],
        "later epochs": statistics.median(epochs[1:]),
        "evaluate": evaluate,
        "predict": predict,
    }


def keras_fit(tf: Any, length: int | None) -> dict:
    """The tutorial's model and `fit`, for `tf` = tensorflow or tapeshim."""
    texts, labels = _corpus()
    vectorize = tf.keras.layers.TextVectorization(max_tokens=TOKENS, output_sequence_length=length)
    vectorize.adapt(np.array(texts))
    model = tf.keras.Sequential(
        [
            vectorize,
            tf.keras.layers.Embedding(TOKENS, DIM),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(1),
        ]
    )
    model.compile("adam", tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    x, y = tf.constant(texts), tf.constant(labels)
    epochs = [
        _timed(lambda: model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)) for _ in range(EPOCHS)
    ]
    model.evaluate(x, y, batch_size=BATCH, verbose=0)
    evaluate = _timed(lambda: model.evaluate(x, y, batch_size=BATCH, verbose=0))
    model.predict(x, batch_size=BATCH, verbose=0)
    return _figures(epochs, evaluate, _timed(lambda: model.predict(x, batch_size=BATCH, verbose=0)))


def _ids(length: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The texts as token ids (TensorFlow's `TextVectorization`), padded to `length` or the longest text."""
    from tapeshim._src.keras_compat import tensorflow_module

    texts, labels = _corpus()
    vectorize = tensorflow_module.keras.layers.TextVectorization(max_tokens=TOKENS, output_sequence_length=length or 39)
    vectorize.adapt(np.array(texts))
    return np.asarray(vectorize(tensorflow_module.constant(texts))).astype(np.int32), labels


def keras_jax_fit(length: int | None) -> dict:
    """Keras 3 on JAX fitting the vectorized ids (its own compiled `fit`)."""
    from tapeshim._src.keras_bridge import keras

    ids, labels = _ids(length)
    model = keras.Sequential(
        [keras.layers.Embedding(TOKENS, DIM), keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)]
    )
    model.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    epochs = [
        _timed(lambda: model.fit(ids, labels, batch_size=BATCH, epochs=1, shuffle=False, verbose=0))
        for _ in range(EPOCHS)
    ]
    model.evaluate(ids, labels, batch_size=BATCH, verbose=0)
    evaluate = _timed(lambda: model.evaluate(ids, labels, batch_size=BATCH, verbose=0))
    model.predict(ids, batch_size=BATCH, verbose=0)
    return _figures(epochs, evaluate, _timed(lambda: model.predict(ids, batch_size=BATCH, verbose=0)))


def torch_fit(length: int | None) -> dict | None:
    """The same model in PyTorch eager on the vectorized ids."""
    try:
        import torch
    except ImportError:
        return None
    ids, labels = _ids(length)
    ids_t, labels_t = torch.from_numpy(ids).long(), torch.from_numpy(labels)
    embedding, dense = torch.nn.Embedding(TOKENS, DIM), torch.nn.Linear(DIM, 1)
    parameters = [*embedding.parameters(), *dense.parameters()]
    optimizer = torch.optim.Adam(parameters, lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def forward(batch: Any) -> Any:
        return dense(embedding(batch).mean(dim=1)).squeeze(-1)

    def epoch() -> None:
        for start in range(0, TEXTS, BATCH):
            optimizer.zero_grad()
            loss = loss_fn(forward(ids_t[start : start + BATCH]), labels_t[start : start + BATCH])
            loss.backward()
            optimizer.step()

    def evaluate() -> None:
        with torch.no_grad():
            for start in range(0, TEXTS, BATCH):
                loss_fn(forward(ids_t[start : start + BATCH]), labels_t[start : start + BATCH]).item()

    def predict() -> None:
        with torch.no_grad():
            torch.cat([forward(ids_t[start : start + BATCH]) for start in range(0, TEXTS, BATCH)]).numpy()

    epochs = [_timed(epoch) for _ in range(EPOCHS)]
    return _figures(epochs, _timed(evaluate), _timed(predict))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--length", type=int, default=50, help="output_sequence_length (0: each batch's longest)")
    parser.add_argument("--no-tf", action="store_true", help="leave TensorFlow's Keras out")
    parser.add_argument("--child", choices=("tensorflow", "tapeshim"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    length = args.length or None
    if args.child:
        print(json.dumps(keras_fit(importlib.import_module(args.child), length)))
        return

    def child(module: str, env: dict) -> dict | None:
        command = [sys.executable, os.path.abspath(__file__), "--child", module, "--length", str(args.length)]
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env})
        if done.returncode == 0:
            return json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{module}'s Keras could not run:", done.stderr[-2000:])
        return None

    results: dict[str, dict] = {}
    if not args.no_tf and (tf_figures := child("tensorflow", {"KERAS_BACKEND": "tensorflow"})):
        results["TF Keras fit"] = tf_figures
    with tempfile.TemporaryDirectory(prefix="bench-xla-") as cache:
        for label in ("tapeshim fit (1st run)", "tapeshim fit (later run)"):
            if figures := child("tapeshim", {"KERAS_BACKEND": "jax", "TAPESHIM_COMPILATION_CACHE_DIR": cache}):
                results[label] = figures
    os.environ["TAPESHIM_COMPILATION_CACHE_DIR"] = "off"  # (Keras-on-JAX as its users run it: no disk cache)
    import tapeshim  # noqa: F401 - Keras-on-JAX below runs with tapeshim's JAX configuration (x64)

    results["Keras-JAX fit (ids)"] = keras_jax_fit(length)
    torch = torch_fit(length)
    if torch is not None:
        results["PyTorch eager (ids)"] = torch
    base = results.get("TF Keras fit")
    shape = f"length {length}" if length else "each batch's longest text"
    print(f"\nText classifier fit: {TEXTS} texts, batch {BATCH}, TextVectorization ({shape}) -> Embedding -> Dense")
    columns = ("first epoch", "later epochs", "evaluate", "predict")
    print(f"  {'implementation':<26}" + "".join(f"{c:>22}" for c in columns))
    for label, figures in results.items():
        cells = []
        for column in columns:
            ratio = f" ({figures[column] / base[column]:.2f}x)" if base else ""
            cells.append(f"{figures[column]:.3f} s{ratio}")
        print(f"  {label:<26}" + "".join(f"{cell:>22}" for cell in cells))


if __name__ == "__main__":
    main()
