"""Embedding lookups on the tape, so an embedding table's gradient is `IndexedSlices`, as in TF.

TF's Keras looks rows up with a gather from the table variable, so
`tape.gradient(loss, embedding.embeddings)` is an `IndexedSlices` with one row
per looked-up id (an id looked up twice gives two rows), and Keras's optimizers
apply such a gradient slice by slice. A Keras call in tapeshim is one op, whose
gradient for the table would be dense (repeated ids summed).

So when a tape records a call of an `Embedding` layer, or of a Sequential or
functional model whose input goes straight into an `Embedding` layer, tapeshim
gathers that layer's rows with `tf.gather` on the tape first and hands them to
the Keras call, where the layer returns them instead of looking them up; the
call does not read the table at all. The tape's gradient for the table is then
the gather's: `IndexedSlices`.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

from tapeshim._src.keras_bridge import KerasVariable, keras, view_of
from tapeshim._src.keras_compat import Functional
from tapeshim._src.ops import array_ops
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, convert_to_tensor

_local = threading.local()
_unwatched: dict[int, KerasVariable] = {}


def given_rows(layer: object) -> Tensor | None:
    """The rows gathered on the tape for `layer` in the Keras call running now, or None."""
    return getattr(_local, "rows", {}).get(id(layer))


def _unwatched_view(keras_variable: Any) -> KerasVariable:
    """A second view of `keras_variable` whose reads tapes do not watch (the call never reads it)."""
    view = _unwatched.get(id(keras_variable))
    if view is None or view._adapted is not keras_variable:
        view = _unwatched[id(keras_variable)] = KerasVariable(keras_variable)
        view._created_trainable = False
        weakref.finalize(keras_variable, _unwatched.pop, id(keras_variable), None)
    return view


def _is_plain_embedding(layer: Any) -> bool:
    return (
        isinstance(layer, keras.layers.Embedding)
        and layer.built
        and not layer.lora_enabled
        and not getattr(layer, "quantization_mode", None)
        and len(getattr(layer, "_inbound_nodes", ())) <= 1
    )


def _looked_up_by_input(owner: Any) -> Any:
    """The `Embedding` layer whose ids are `owner`'s first input: the owner itself, or a model's first layer."""
    if isinstance(owner, keras.layers.Embedding):
        return owner if _is_plain_embedding(owner) else None
    if isinstance(owner, keras.Sequential) and type(owner).call is keras.Sequential.call:
        layers = owner.layers
        return layers[0] if layers and _is_plain_embedding(layers[0]) and len(owner.inputs or ()) == 1 else None
    if isinstance(owner, Functional) and type(owner).call is Functional.call:
        inputs = getattr(owner, "inputs", None)
        if not inputs or len(inputs) != 1:
            return None
        found = [
            layer
            for layer in owner.layers
            if _is_plain_embedding(layer)
            and any(node.input_tensors and node.input_tensors[0] is inputs[0] for node in layer._inbound_nodes)
        ]
        return found[0] if len(found) == 1 else None
    return None


def gather_on_tape(
    owner: Any, keras_call: Callable[..., Any], args: tuple, kwargs: dict, variables: list
) -> tuple | None:
    """Prepares a recorded Keras call whose first input is looked up by an `Embedding` layer.

    Returns:
      `(call, args, states)` for `stateful_call`: a call taking the gathered
      rows first, the arguments with the rows in front, and the states with the
      table read unwatched; or None when the call is not such a lookup (or no
      tape records).
    """
    trace = _thread_state.trace  # (a function's trace records too: only a tape makes the gradient's type)
    if not args or not any(recorder is not trace for recorder in _thread_state.recorders):
        return None
    layer = _looked_up_by_input(owner)
    if layer is None:
        return None
    table = layer._embeddings
    if sum(v is table for v in variables) != 1:
        return None
    ids = convert_to_tensor(args[0])
    if ids._dtype.name not in ("int32", "int64"):
        return None  # Keras casts other ids; the gather would not be the table's only use
    rows = array_ops.gather(view_of(table), ids)
    if ids._value is not None and trace is None:
        rows.value  # noqa: B018 - computed now, on the device (a cheap gather), so a training call can still run its forward pass once
    layer_id = id(layer)

    def call_with_rows(gathered: Tensor, *call_args: Any, **call_kwargs: Any) -> Any:
        previous = getattr(_local, "rows", {})
        _local.rows = {**previous, layer_id: gathered}
        try:
            return keras_call(*call_args, **call_kwargs)
        finally:
            _local.rows = previous

    states = [_unwatched_view(v) if v is table else view_of(v) for v in variables]
    return call_with_rows, (rows,) + tuple(args), states


class EmbeddingRowsMixin:
    """tapeshim's `Embedding`: returns the rows gathered on the tape when its caller gathered them."""

    compute_dtype: str  # Keras's `Layer.compute_dtype`, of the Embedding class this mixin goes first in

    def call(self, inputs: Any) -> Any:
        """Looks up `inputs` in the table (or returns the rows already gathered for this call)."""
        rows = given_rows(self)
        if rows is not None:
            return keras.ops.cast(rows, self.compute_dtype)
        return super().call(inputs)  # type: ignore[misc]  # a mixin: Keras's Embedding, after it, has `call`
