"""Embedding lookups on the tape, so an embedding table's gradient is `IndexedSlices`, as in TF.

TF's Keras looks rows up with a gather from the table variable, so
`tape.gradient(loss, embedding.embeddings)` is an `IndexedSlices` with one row
per looked-up id (an id looked up twice gives two rows; a table looked up by
several calls, or shared, gives the rows of every call, in call order), and
Keras's optimizers apply such a gradient slice by slice. A Keras call in
tapeshim is one op, whose gradient for the table would be dense (repeated ids
summed).

So when a tape records a call of a layer or model holding `Embedding` layers
(directly, in a subclassed model's `call`, after other layers, inside a custom
layer), tapeshim gathers those layers' rows with `tf.gather` on the tape first
and hands them to the Keras call, where each `Embedding` returns its rows
instead of looking them up; the call does not read those tables at all. The
tape's gradient for a table is then the gathers': `IndexedSlices`.

The ids come from the call's own inputs: for an `Embedding` layer called alone
they are its argument; otherwise one more op runs the call to compute them (its
outputs are only the ids of each lookup, so XLA keeps only what computes
them; state it would change is discarded). That op also notes a table the call
reads another way (tied weights): such a table is read as usual, and its
gradient is dense, as TF's sum of a dense part and slices is.

A Sequential or functional model whose one input goes straight into its one
`Embedding` needs no such op: its ids are its input. Where users' layers run
in it, the call's trace checks that (`_only_lookup_of_the_input`): the table
is looked up once and read no other way. A call that does otherwise (a second
lookup, tied weights) is run again with the op that finds its ids, and its
model always is from then on.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

import jax
import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.keras_bridge import KerasVariable, is_tensor_like, keras, stateful_call, view_of
from tapeshim._src.keras_compat import Functional, flatten_layers, get_stateless_scope
from tapeshim._src.ops import array_ops, math_ops
from tapeshim._src.state import StatelessScope, _thread_state, stateless_scope
from tapeshim._src.tensor import convert_to_tensor

_local = threading.local()  # .rows: id(layer) -> its calls' rows (`_Given`); .lookups: the collecting op's
_unwatched: dict[int, KerasVariable] = {}
# owner -> (number of its variables, its Embedding layers, the dtype of its input where that is the ids of their
# one lookup, else None: `_ids_are_the_input`) (found once per owner, not per call)
_found: weakref.WeakKeyDictionary[Any, tuple[int, tuple, str | None]] = weakref.WeakKeyDictionary()
# the models whose call looked their input up other than once, or read the table otherwise (users' layers)
_looked_up_otherwise: weakref.WeakSet[Any] = weakref.WeakSet()


class LookupsDiffer(RuntimeError):
    """A call looked its table up other than as its rows were gathered: not once on the model's input (a users'
    layer looking up other ids, or reading the table another way), or not as at its lookups' own op."""


def _unwatched_view(keras_variable: Any) -> KerasVariable:
    """A second view of `keras_variable` whose reads tapes do not watch (the call never reads it)."""
    view = _unwatched.get(id(keras_variable))
    if view is None or view._adapted is not keras_variable:
        view = _unwatched[id(keras_variable)] = KerasVariable(keras_variable)
        view._created_trainable = False
        weakref.finalize(keras_variable, _unwatched.pop, id(keras_variable), None)
    return view


def looks_up_rows(layer: Any) -> bool:
    """Whether `layer` is a tapeshim `Embedding` looking rows up with this module's `call` (no LoRA, no
    quantization): a tape recording its call gathers them, for a gradient of `IndexedSlices`."""
    call = getattr(type(layer), "call", None)
    return (
        isinstance(layer, EmbeddingRowsMixin)
        and getattr(call, "__wrapped__", call) is EmbeddingRowsMixin.call
        and not getattr(layer, "lora_enabled", False)
        and not getattr(layer, "quantization_mode", None)
    )


def _is_plain_embedding(layer: Any) -> bool:
    return looks_up_rows(layer) and layer.built


def _embeddings_of(owner: Any, variables: list) -> tuple[tuple, str | None]:
    """`owner`'s plain `Embedding` layers (itself included) whose table is among `variables` once, and the dtype
    its input takes where that is the ids of their one lookup (`_ids_are_the_input`)."""
    found = _found.get(owner)
    if found is not None and found[0] == len(variables):
        return found[1], found[2]
    counts: dict[int, int] = {}
    for variable in variables:
        counts[id(variable)] = counts.get(id(variable), 0) + 1
    layers = tuple(
        layer
        for layer in dict.fromkeys(flatten_layers(owner))
        if _is_plain_embedding(layer) and counts.get(id(layer._embeddings)) == 1
    )
    ids_in = _ids_are_the_input(owner, layers)
    _found[owner] = (len(variables), layers, ids_in)
    return layers, ids_in


def _ids_are_the_input(owner: Any, layers: tuple) -> str | None:
    """The dtype `owner`'s input takes (converted to its `Input`'s, as Keras does; "" for an `Embedding` called
    alone) where, as its structure says, it is the ids of its only lookup: an `Embedding` called alone, or a
    Sequential or functional model whose one input goes straight into its one `Embedding` (the ids of every
    lookup, where its users' layers look up nothing more: `_only_lookup_of_the_input`); else None."""
    if len(layers) != 1:
        return None
    layer = layers[0]
    if owner is layer:
        return ""
    nodes: Any = getattr(layer, "_inbound_nodes", ())
    inputs: Any = getattr(owner, "inputs", None) or ()  # (None for a Sequential whose build kept no graph)
    if len(nodes) != 1 or len(inputs) != 1:
        return None
    try:
        dtype = dtypes.as_dtype(str(inputs[0].dtype))
    except TypeError:  # (a Keras dtype TF has no name for: the op finds the ids)
        return None
    if not (dtype.is_integer or dtype.is_floating or dtype.is_bool):  # (a string `Input`: the op finds them)
        return None
    if isinstance(owner, keras.Sequential):
        plain = type(owner).call is keras.Sequential.call
        return dtype.name if plain and owner.layers[:1] == [layer] else None
    if not isinstance(owner, Functional) or type(owner).call is not Functional.call:
        return None
    ids_in = (
        bool(nodes[0].input_tensors)
        and nodes[0].input_tensors[0] is inputs[0]
        and any(operation is layer for operation in owner.operations)  # (its node runs in every call)
    )
    return dtype.name if ids_in else None


class _NotingScope(keras.StatelessScope):
    """A Keras `StatelessScope` inside another: reads its values, keeps its writes, notes the variables read."""

    def __init__(self, outer: Any, collect_losses: bool = False) -> None:
        super().__init__(collect_losses=collect_losses)
        self.state_mapping = dict(outer.state_mapping)
        self.read: set[int] = set()
        self.noting = True

    def get_current_value(self, variable: Any) -> Any:
        if self.noting:
            self.read.add(id(variable))
        return super().get_current_value(variable)


def _lookups(
    owner: Any, keras_call: Callable[..., Any], args: tuple, kwargs: dict, variables: list, layers: tuple
) -> tuple[dict, set[int]]:
    """The ids of every lookup of `layers` in the call, by one op: `({layer index: [ids of each call]}, indices
    of the layers whose table the call reads otherwise)`."""
    positions = {id(layer): index for index, layer in enumerate(layers)}

    def collect(*call_args: Any, **call_kwargs: Any) -> dict:
        outer_tapeshim = stateless_scope()
        assert outer_tapeshim is not None  # (run by `stateful_call`, inside its scopes)
        inner = StatelessScope(
            dict(outer_tapeshim.values or {}),
            outer_tapeshim.collector,
            {} if outer_tapeshim.writes is not None else None,
        )
        noting = _NotingScope(get_stateless_scope())
        saved, _local.lookups = getattr(_local, "lookups", None), (positions, noting, {})
        try:
            with inner, noting:  # (what the call assigns stays here)
                keras_call(*call_args, **call_kwargs)
            ids = _local.lookups[2]
        finally:
            _local.lookups = saved
        tables = {id(layer._embeddings): index for index, layer in enumerate(layers)}
        # (the structure says which tables were read otherwise: the indices map to empty tuples)
        return {"ids": ids, "read": {tables[key]: () for key in noting.read if key in tables}}

    found = stateful_call(owner, "embedding_ids", collect, args, kwargs, variables, watch_state=False)
    return found["ids"], set(found["read"])


class _Given:
    """The rows gathered for one `Embedding`'s calls in a Keras call: `used` of them handed out so far."""

    __slots__ = ("calls", "used", "differed")

    def __init__(self, calls: list) -> None:
        self.calls = calls
        self.used = 0
        self.differed = False  # (a lookup that was not the gathered one: noted where the user's Python catches)


def call_gathering_rows(
    owner: Any, keras_call: Callable[..., Any], args: tuple, kwargs: dict, variables: list
) -> tuple | None:
    """`(result,)` of a recorded Keras call whose `Embedding` layers' rows are gathered on the tape (a
    `stateful_call`), or None when it looks nothing up (or no tape records)."""
    lookup = gather_on_tape(owner, keras_call, args, kwargs, variables)
    if lookup is None:
        return None
    call, call_args, states, checked = lookup
    try:
        return (stateful_call(owner, "call", call, call_args, kwargs, variables, states=states),)
    except LookupsDiffer:
        if not checked:
            raise
    _looked_up_otherwise.add(owner)  # (its ids found by their own op from now on: this call again, unchecked)
    return call_gathering_rows(owner, keras_call, args, kwargs, variables)


def gather_on_tape(
    owner: Any, keras_call: Callable[..., Any], args: tuple, kwargs: dict, variables: list
) -> tuple | None:
    """Prepares a recorded Keras call whose `Embedding` layers' rows are gathered on the tape.

    Returns:
      `(call, args, states, checked)`: for `stateful_call` a call taking the
      gathered rows first, the arguments with the rows in front, and the states
      with the tables read unwatched; then whether the ids were taken from the
      input, the call checking that (`_only_lookup_of_the_input`). None when the
      call looks nothing up (or no tape records).
    """
    trace = _thread_state.trace  # (a function's trace records too: only a tape makes the gradient's type)
    if not args or not any(recorder is not trace for recorder in _thread_state.recorders):
        return None
    layers, input_dtype = _embeddings_of(owner, variables)
    if not layers:
        return None
    checked = input_dtype is not None and owner is not layers[0]
    # (not an input given in a dict or a list: the op finds them)
    taken = not checked or (is_tensor_like(args[0]) and owner not in _looked_up_otherwise)
    if input_dtype is not None and taken:
        ids = convert_to_tensor(args[0])
        if input_dtype and ids._dtype.name != input_dtype:
            ids = math_ops.cast(ids, input_dtype)  # (as the model's call converts its input)
        if ids._dtype.name not in ("int32", "int64"):
            ids = math_ops.cast(ids, "int32")  # (as Keras's call casts them)
        found: dict = {0: [ids]}
    else:
        checked = False
        found, read_otherwise = _lookups(owner, keras_call, args, kwargs, variables, layers)
        found = {index: calls for index, calls in found.items() if index not in read_otherwise and calls}
        if not found:
            return None
    rows = {
        index: [
            array_ops.gather(view_of(layers[index]._embeddings), _from_the_end(ids, layers[index])) for ids in calls
        ]
        for index, calls in found.items()
    }
    if trace is None:
        # computed now, on the device (cheap gathers), so a training call can still run its forward pass once
        for index, calls in found.items():
            if all(ids._value is not None for ids in calls):
                for tensor in rows[index]:
                    tensor.value  # noqa: B018
    given = {id(layers[index]): index for index in rows}

    def call_with_rows(gathered: dict, *call_args: Any, **call_kwargs: Any) -> Any:
        previous = getattr(_local, "rows", {})
        mine = {key: _Given(gathered[index]) for key, index in given.items()}
        _local.rows = {**previous, **mine}
        try:
            if checked:
                return _only_lookup_of_the_input(layers[0], mine[id(layers[0])], keras_call, call_args, call_kwargs)
            return keras_call(*call_args, **call_kwargs)
        finally:
            _local.rows = previous

    tables = {id(layers[index]._embeddings) for index in rows}
    states = [_unwatched_view(v) if id(v) in tables else view_of(v) for v in variables]
    return call_with_rows, (rows,) + tuple(args), states, checked


def _from_the_end(ids: Any, layer: Any) -> Any:
    """`ids` with the negative ones counted from the end of `layer`'s table, as Keras's `take` counts them (TF's
    gather raises for them)."""
    value = ids._value
    if value is not None and not isinstance(value, jax.core.Tracer) and not (np.asarray(value) < 0).any():
        return ids  # (the common case, seen on the values: no op)
    return array_ops.where(ids < 0, ids + int(layer.input_dim), ids)


def _only_lookup_of_the_input(
    layer: Any, given: _Given, keras_call: Callable[..., Any], args: tuple, kwargs: dict
) -> Any:
    """`keras_call(*args, **kwargs)` (in its trace, by `stateful_call`), checking that `layer` looked up the
    model's input once (its rows `given`), as the model's structure says, and that nothing read its table
    otherwise. A users' layer may look the table up again or read it (tied weights): `LookupsDiffer` then.

    The model's variables are read through a Keras scope inside the call's, which notes the variables read and
    hands what the call assigns and the losses it adds on to the call's scope."""
    outer = get_stateless_scope()  # (the call's, in `keras_bridge._Program`'s trace)
    noting = _NotingScope(outer, collect_losses=outer.collect_losses)
    message = (
        f"The Embedding layer '{getattr(layer, 'name', '')}' was looked up other than once on the model's input, "
        "or its table was read another way."
    )
    try:
        with noting:
            result = keras_call(*args, **kwargs)
    except Exception as exc:
        if given.differed:  # (an error of the user's own, made of the failed lookup's)
            raise LookupsDiffer(message) from exc
        raise  # (the user's error, as TF raises it)
    if given.differed or given.used != len(given.calls) or id(layer._embeddings) in noting.read:
        raise LookupsDiffer(message)
    for key, value in noting.state_mapping.items():
        if outer.state_mapping.get(key) is not value:
            outer.state_mapping[key] = value
    outer.losses.extend(noting.losses)
    return result


def _keras_ids(inputs: Any) -> Any:
    """The ids as Keras's `Embedding.call` looks them up (other dtypes cast to int32)."""
    if inputs.dtype != "int32" and inputs.dtype != "int64":
        return keras.ops.cast(inputs, "int32")
    return inputs


class EmbeddingRowsMixin:
    """tapeshim's `Embedding`: returns the rows gathered on the tape when its caller gathered them."""

    compute_dtype: str  # Keras's `Layer.compute_dtype`, of the Embedding class this mixin goes first in

    def call(self, inputs: Any) -> Any:
        """Looks up `inputs` in the table (or returns the rows already gathered for this call)."""
        lookups = getattr(_local, "lookups", None)
        if lookups is not None and id(self) in lookups[0]:
            positions, noting, ids = lookups
            ids.setdefault(positions[id(self)], []).append(_keras_ids(inputs))
            noting.noting = False  # (this lookup is the gather; any other read of the table is noted)
            try:
                return super().call(inputs)  # type: ignore[misc]  # a mixin: Keras's Embedding, after it, has `call`
            finally:
                noting.noting = True
        given = getattr(_local, "rows", {}).get(id(self))
        if given is not None:
            calls, position = given.calls, given.used
            if position < len(calls) and tuple(calls[position].shape[:-1]) == tuple(inputs.shape):
                given.used += 1
                return keras.ops.cast(calls[position], self.compute_dtype)
            # (the call looked up other ids than the op that found them: its Python differs between two runs; or,
            # its rows gathered from the model's input, a users' layer looks up other ids too)
            given.differed = True
            raise LookupsDiffer(
                f"The Embedding layer '{getattr(self, 'name', '')}' was called with ids of shape "
                f"{tuple(inputs.shape)} where its rows were gathered for "
                f"{[tuple(c.shape[:-1]) for c in calls]}: a call whose lookups change from run to run "
                "cannot have its table's gradient as IndexedSlices."
            )
        return super().call(inputs)  # type: ignore[misc]
