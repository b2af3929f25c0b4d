"""Keras preprocessing layers that compute with TensorFlow's ops (`StringLookup`, `IntegerLookup`, `Hashing`,
`HashedCrossing`, `TextVectorization`), called on tapeshim tensors.

Keras 3 implements these with TensorFlow's lookup tables and string ops on concrete inputs, whatever its
backend: they cannot run inside a JAX program (string tensors have no JAX dtype). A call on tapeshim tensors
gives Keras their values as TensorFlow tensors (so Keras hands back TensorFlow's results, strings too, instead
of converting them to the backend's arrays) and wraps what it returns, as TF runs these layers eagerly; no
tape sees them (TF registers no gradient for their ops).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from tapeshim._src import errors
from tapeshim._src.keras_compat import tensorflow_module, tf_computed_layers
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor


def computed_with_tf(layer: Any) -> bool:
    """Whether Keras computes `layer` with TensorFlow's ops (one of the layers above)."""
    return isinstance(layer, tf_computed_layers)


def _host_value(value: Any) -> Any:
    if isinstance(value, RaggedTensor):  # (TF's ragged tensor of the same values and row splits)
        return tensorflow_module.RaggedTensor.from_nested_row_splits(
            _host_value(value.flat_values), [_host_value(splits) for splits in value.nested_row_splits]
        )
    if not isinstance(value, Tensor):
        return value
    if _thread_state.trace is not None and _thread_state.trace.is_symbolic(value):
        raise errors.UnimplementedError(
            None,
            None,
            "tapeshim: Keras's lookup, hashing and text-vectorization layers compute with TensorFlow's ops on "
            "concrete values; call them outside tapeshim.function (in a tf.data map or eagerly).",
        )
    return tensorflow_module.convert_to_tensor(value.numpy())


def _as_tensor(value: Any) -> Any:
    if isinstance(value, tensorflow_module.RaggedTensor):
        return RaggedTensor.from_nested_row_splits(
            _as_tensor(value.flat_values), [_as_tensor(splits) for splits in value.nested_row_splits]
        )
    if isinstance(value, (jax.Array, np.ndarray)):
        return convert_to_tensor(value)
    if hasattr(value, "numpy"):  # a TensorFlow tensor (string results)
        return convert_to_tensor(np.asarray(value.numpy()))
    return value


def call_on_values(keras_call: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """`keras_call` (the layer's Keras `__call__`) on the values of the tapeshim tensors in `args` and `kwargs`;
    its results as tapeshim tensors."""
    leaves_to_values = lambda tree: jax.tree_util.tree_map(  # noqa: E731
        _host_value, tree, is_leaf=lambda v: isinstance(v, (Tensor, RaggedTensor))
    )
    result = keras_call(*leaves_to_values(args), **leaves_to_values(kwargs))
    return jax.tree_util.tree_map(_as_tensor, result, is_leaf=lambda v: hasattr(v, "numpy"))
