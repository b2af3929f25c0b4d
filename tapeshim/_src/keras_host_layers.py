"""Keras preprocessing layers that compute with TensorFlow's ops (`StringLookup`, `IntegerLookup`, `Hashing`,
`HashedCrossing`, `TextVectorization`), called on tapeshim tensors.

Keras 3 implements these with TensorFlow's lookup tables and string ops on concrete inputs, whatever its
backend: they cannot run inside a JAX program (string tensors have no JAX dtype). A call on tapeshim tensors
gives Keras their values as TensorFlow tensors (so Keras hands back TensorFlow's results, strings too, instead
of converting them to the backend's arrays) and wraps what it returns, as TF runs these layers eagerly; no
tape sees them (TF registers no gradient for their ops).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any, Callable, Iterator

import jax
import numpy as np

from tapeshim._src import errors
from tapeshim._src.graph_calls import graphs_wanted
from tapeshim._src.keras_compat import flatten_layers, tensorflow_module, tf_computed_layers
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor


def computed_with_tf(layer: Any) -> bool:
    """Whether Keras computes `layer` with TensorFlow's ops (one of the layers above)."""
    return isinstance(layer, tf_computed_layers)


_given = threading.local()


@contextlib.contextmanager
def outputs_given(outputs_by_layer: dict[int, Any]) -> Iterator[None]:
    """Within it, a call of a layer computed with TensorFlow's ops whose `id` is in `outputs_by_layer` returns
    that output instead of running: the layer ran on values before a compiled step (`keras_train_step`), and
    the step's program takes what it computed as an argument."""
    before = getattr(_given, "outputs", None)
    _given.outputs = outputs_by_layer
    try:
        yield
    finally:
        _given.outputs = before


def outputs_are_given() -> bool:
    """Whether an `outputs_given` block is active."""
    return getattr(_given, "outputs", None) is not None


def given_output(layer: Any) -> Any:
    """The output `outputs_given` holds for `layer`, or None."""
    outputs = getattr(_given, "outputs", None)
    return None if outputs is None else outputs.get(id(layer))


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


_graph_calls: "weakref.WeakKeyDictionary[Any, tuple[list, Any]]" = weakref.WeakKeyDictionary()


def _graph_call(layer: Any, keras_call: Any) -> Any:
    """`keras_call` (a method bound to `layer`) as a `tf.function` (`graph_calls`), traced anew when the layer's
    lookup tables change (`adapt`, `set_vocabulary` make new ones; a graph holds the table it was traced with)."""
    tables = [getattr(sub, "lookup_table", None) for sub in flatten_layers(layer)]
    cached = _graph_calls.get(layer)
    if cached is None or len(cached[0]) != len(tables) or any(a is not b for a, b in zip(cached[0], tables)):
        call, layer_ref = keras_call.__func__, weakref.ref(layer)  # (the cache must not keep the layer alive)
        graph = tensorflow_module.function(lambda *a, **k: call(layer_ref(), *a, **k), reduce_retracing=True)
        cached = _graph_calls[layer] = (tables, graph)
    return cached[1]


def call_on_values(layer: Any, keras_call: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """`keras_call` (the layer's Keras `__call__`) on the values of the tapeshim tensors in `args` and `kwargs`;
    its results as tapeshim tensors."""
    if graphs_wanted() and layer.built:
        keras_call = _graph_call(layer, keras_call)
    leaves_to_values = lambda tree: jax.tree_util.tree_map(  # noqa: E731
        _host_value, tree, is_leaf=lambda v: isinstance(v, (Tensor, RaggedTensor))
    )
    result = keras_call(*leaves_to_values(args), **leaves_to_values(kwargs))
    return jax.tree_util.tree_map(_as_tensor, result, is_leaf=lambda v: hasattr(v, "numpy"))
