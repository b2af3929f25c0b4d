"""Keras cases for eager autoregressive decoding, compared with TF's Keras as keras_cases.py's.

The Transformer tutorials' `Translator` and keras.io's text generation call a model once per new
sequence length: a custom layer that reads `tf.shape(x)` and calls Keras's causal
`MultiHeadAttention` inside. Each body is a function of the module (`tf`); keras_cases.py's
`main` runs them with TF's Keras in the child process, and tests/test_keras.py runs them with
tapeshim. `DECODING_CASES` maps a name to its body.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from keras_cases import set_weights  # noqa: E402

DECODING_CASES: dict[str, Any] = {}


def case(fn: Any) -> Any:
    DECODING_CASES[fn.__name__] = fn
    return fn


def decoder_block(tf: Any, width: int = 8) -> Any:
    """A causal self-attention block whose `call` computes positions from `tf.shape(x)` (TF code in it)."""

    class Block(tf.keras.layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.attention = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
            self.norm = tf.keras.layers.LayerNormalization()
            self.dense = tf.keras.layers.Dense(width)

        def call(self, x: Any) -> Any:
            length = tf.shape(x)[1]
            positions = tf.cast(tf.range(length), tf.float32)[tf.newaxis, :, tf.newaxis] / 10.0
            mixed = self.attention(x + positions, x, use_causal_mask=True)
            return self.dense(self.norm(x + mixed))

    return Block()


@case
def greedy_decoding_one_length_at_a_time(tf):
    rng = np.random.default_rng(4)
    embedding = rng.normal(size=(6, 8)).astype(np.float32)
    block = decoder_block(tf)
    block(tf.constant(embedding[None, :2]))
    set_weights(block, 9)
    tokens = [0]
    steps = []
    for _ in range(7):  # each step's sequence is one longer: a new shape every call
        x = tf.gather(tf.constant(embedding), tf.constant([tokens]))
        out = block(x)
        logits = tf.matmul(out[:, -1, :], tf.constant(embedding), transpose_b=True)
        tokens.append(int(tf.argmax(logits, axis=-1)[0]))
        steps.append(logits)
    return {"tokens": tokens, "logits": steps}
