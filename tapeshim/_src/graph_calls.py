"""Where Keras's lookup and text layers run as TensorFlow graphs instead of TensorFlow's eager ops.

Keras computes `TextVectorization`, `StringLookup`, `IntegerLookup` and `Hashing` with TensorFlow's ops
(`keras_host_layers`). TF runs them inside graphs in the places where they run most: a `tf.data` `map` and
the step of `fit`. Within `calls_as_graphs()` tapeshim does the same (a `tf.function` of the layer's Keras
call), several times faster than TensorFlow's eager ops on a batch of text; elsewhere (a call in the user's
eager code) they run eagerly, as in TF.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

_state = threading.local()


@contextlib.contextmanager
def calls_as_graphs() -> Iterator[None]:
    """Within it, a built layer computed with TensorFlow's ops runs as a TensorFlow graph."""
    before = getattr(_state, "on", False)
    _state.on = True
    try:
        yield
    finally:
        _state.on = before


def graphs_wanted() -> bool:
    """Whether a `calls_as_graphs` block is active on this thread."""
    return getattr(_state, "on", False)
