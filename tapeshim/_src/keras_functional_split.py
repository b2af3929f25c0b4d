"""A functional model whose outputs depend on one another, called one operation at a time.

A Keras call is one tapeshim op (`keras_bridge.stateful_call`), so its outputs are siblings on
the tape. Grad-CAM and feature-attribution code build a model whose outputs are an inner layer's
output and the final prediction (`Model(inputs, [conv.output, model.output])`) and ask for the
gradient of the prediction with respect to the inner output; TF's tape sees each layer, so the
prediction depends on the inner output. Such a model (an output computed from another output) is
called here operation by operation, each one tapeshim op, so the tape sees what TF's sees.
Other models keep the one-op call.

A Sequential or functional model holding a layer Keras computes with TensorFlow's ops on concrete
values (`TextVectorization` first, as the text-classification tutorial's exported model) is called
the same way: that layer runs on values, outside any JAX program, and the others are one op each.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from tapeshim._src import keras_compat
from tapeshim._src.graph_calls import calls_as_graphs

_dependent: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


def has_dependent_outputs(model: Any) -> bool:
    """Whether a functional model has an output that another of its outputs is computed from (cached)."""
    known = _dependent.get(model)
    if known is None:
        known = _dependent[model] = _find_dependent_outputs(model)
    return known


_with_host_layers: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


def has_host_layers(model: Any) -> bool:
    """Whether a Sequential or functional model (with Keras's own `call`) holds a layer Keras computes with
    TensorFlow's ops (`keras_host_layers.computed_with_tf`), directly or in a model it holds (cached)."""
    known = _with_host_layers.get(model)
    if known is None:
        from tapeshim._src.keras_host_layers import computed_with_tf  # import cycle: keras_host_layers -> ops

        known = _keras_own_call(model) and any(
            computed_with_tf(layer) or (layer is not model and has_host_layers(layer))
            for layer in getattr(model, "layers", ())
        )
        _with_host_layers[model] = known
    return known


_host_prefixes: "weakref.WeakKeyDictionary[Any, list | None]" = weakref.WeakKeyDictionary()


def host_prefix(model: Any) -> list[tuple[Any, int | None]] | None:
    """A model's layers computed with TensorFlow's ops, where they all take its inputs and only they do (cached).

    Such are the text-classification tutorial's exported model (`TextVectorization` first) and a functional
    model whose string inputs each go through one lookup layer: those layers can run on the batch's values
    before a step, and the rest of the step compiles (`keras_train_step`).

    Returns:
      `(layer, input index)` for each such layer (the index in `model.inputs`; None for a Sequential model
      without an `Input`, whose first layer takes the whole input), or None for other models.
    """
    if model not in _host_prefixes:
        _host_prefixes[model] = _find_host_prefix(model) if has_host_layers(model) else None
    return _host_prefixes[model]


def _find_host_prefix(model: Any) -> list[tuple[Any, int | None]] | None:
    from tapeshim._src.keras_host_layers import computed_with_tf  # import cycle: keras_host_layers -> ops

    host = [layer for layer in keras_compat.flatten_layers(model, include_self=False) if computed_with_tf(layer)]
    inner = {id(sub) for layer in host for sub in keras_compat.flatten_layers(layer, include_self=False)}
    nested = [layer for layer in host if id(layer) not in inner]  # (not a `TextVectorization`'s own lookup)
    graph = getattr(model, "_functional", None) if isinstance(model, keras_compat.Sequential) else model
    if graph is None:  # (no `Input`: the first layer takes the input)
        first = model.layers[0] if model.layers else None
        return [(first, None)] if nested == [first] else None
    inputs = [id(tensor) for tensor in graph.inputs]
    calls = keras_compat.graph_calls(graph)
    prefix: list[tuple[Any, int | None]] = []
    for operation, call_inputs in calls:
        if computed_with_tf(operation):
            if len(call_inputs) != 1 or id(call_inputs[0]) not in inputs:
                return None
            prefix.append((operation, inputs.index(id(call_inputs[0]))))
    taken = {index for _, index in prefix}
    others_take = {
        inputs.index(id(tensor))
        for operation, call_inputs in calls
        if not computed_with_tf(operation)
        for tensor in call_inputs
        if id(tensor) in inputs
    }
    layer_ids = [id(layer) for layer, _ in prefix]
    if taken & others_take or len(set(layer_ids)) != len(layer_ids) or {id(x) for x in nested} != set(layer_ids):
        return None  # (an input also read by another layer; a lookup layer called twice, or inside another)
    return prefix


_placeholders: dict[tuple, Any] = {}  # (zeros of uint8 by shape: a few batch shapes, a few bytes each)


def apply_host_prefix(model: Any, prefix: list[tuple[Any, int | None]], inputs: Any) -> tuple[list, Any] | None:
    """The outputs of `host_prefix`'s layers on `inputs` (eagerly, on values), and `inputs` with what those
    layers take replaced by zeros of its shape (uint8), which the rest of the model does not read; None for
    inputs not given as the model's inputs in order (a dict: the model's own call takes them)."""
    from tapeshim._src.tensor import convert_to_tensor  # import cycle: tensor -> ops -> keras

    def placeholder(value: Any) -> Any:
        shape = tuple(convert_to_tensor(value).shape)
        if shape not in _placeholders:
            if len(_placeholders) >= 64:
                _placeholders.clear()
            _placeholders[shape] = convert_to_tensor(np.zeros(shape, np.uint8))
        return _placeholders[shape]

    if prefix[0][1] is None:
        with calls_as_graphs():
            return [prefix[0][0](inputs)], placeholder(inputs)
    graph = model._functional if isinstance(model, keras_compat.Sequential) else model
    flat = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(flat) != len(graph.inputs) or any(isinstance(x, (dict, list, tuple)) or x is None for x in flat):
        return None
    positions = [index for _, index in prefix if index is not None]
    with calls_as_graphs():
        outputs = [layer(_as_input(flat[i], graph.inputs[i])) for (layer, _), i in zip(prefix, positions)]
    for i in positions:
        flat[i] = placeholder(flat[i])
    return outputs, type(inputs)(flat) if isinstance(inputs, (list, tuple)) else flat[0]


def _keras_own_call(model: Any) -> bool:
    """Whether `model` is a Sequential or functional model called by Keras's own `call`."""
    if isinstance(model, keras_compat.Sequential):
        return type(model).call is keras_compat.Sequential.call
    return isinstance(model, keras_compat.Functional) and type(model).call is keras_compat.Functional.call


def _find_dependent_outputs(model: Any) -> bool:
    outputs = list(getattr(model, "outputs", None) or ())
    if len(outputs) < 2 or not isinstance(model, keras_compat.Functional):
        return False
    if type(model).call is not keras_compat.Functional.call:  # a subclass's own `call` is called as written
        return False
    output_ids = {id(o) for o in outputs}
    for output in outputs:
        seen: set[int] = set()
        stack = keras_compat.producers(output)
        while stack:
            tensor = stack.pop()
            if id(tensor) in seen:
                continue
            if id(tensor) in output_ids:
                return True
            seen.add(id(tensor))
            stack.extend(keras_compat.producers(tensor))
    return False


def call_by_operation(
    model: Any,
    args: tuple,
    kwargs: dict,
    call_operation: Callable[[Any, tuple, dict], Any],
    losses_of: Callable[[Any], list],
) -> Any:
    """`model(*args, **kwargs)` one operation at a time, or None where the model keeps its one-op call.

    Args:
      model: a functional model (`has_dependent_outputs`), or a Sequential or functional model
        holding a layer computed with TensorFlow's ops (`has_host_layers`).
      args, kwargs: the call's arguments: the inputs (a tensor, or a list or tuple in the order of
        `model.inputs`), and optionally `training`.
      call_operation: calls one operation of the graph on tapeshim tensors as one op,
        `call_operation(operation, args, kwargs)`.
      losses_of: the losses an operation's last call added (`add_loss`, activity regularizers).

    Returns:
      `(outputs, losses)`: the outputs (in the model's output structure) and the losses the call
      added; None for other arguments (a dict of inputs, a mask), which the one-op call takes.
    """

    if not _keras_own_call(model):
        return None
    inputs = args[0] if args else kwargs.get("inputs")
    extra = {k: v for k, v in kwargs.items() if k != "inputs"}
    if len(args) > 1 or set(extra) - {"training"}:
        return None
    if isinstance(model, keras_compat.Sequential):
        if not getattr(model, "_functional", None):  # (no `Input`: Keras's call applies the layers in turn)
            return _call_in_turn(model, inputs, extra.get("training"), call_operation, losses_of)
        model = model._functional
    flat = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(flat) != len(model.inputs) or any(x is None or isinstance(x, dict) for x in flat):
        return None
    losses: list = []
    operation_fn = _operation_caller(extra.get("training"), call_operation, losses_of, losses)
    standardized = [_as_input(x, spec) for x, spec in zip(flat, model.inputs)]
    return keras_compat.run_through_graph(model, standardized, operation_fn), losses


def _operation_caller(
    training: Any, call_operation: Callable[[Any, tuple, dict], Any], losses_of: Callable[[Any], list], losses: list
) -> Callable[[Any], Callable[..., Any]]:
    """`operation -> call`: a call of that operation as one op, passed `training` where it takes it, whose
    added losses go to `losses`."""

    def operation_fn(operation: Any) -> Callable[..., Any]:
        def call(*op_args: Any, **op_kwargs: Any) -> Any:
            if training is not None and "training" in keras_compat.call_context_arguments(operation):
                op_kwargs["training"] = training
            result = call_operation(operation, op_args, op_kwargs)
            losses.extend(losses_of(operation))
            return result

        return call

    return operation_fn


def _call_in_turn(
    model: Any,
    inputs: Any,
    training: Any,
    call_operation: Callable[[Any, tuple, dict], Any],
    losses_of: Callable[[Any], list],
) -> tuple[Any, list]:
    """A Sequential model without an `Input` called as Keras calls it: each layer on the last one's outputs.

    The model is built once its layers are (as Keras's first call builds it)."""
    losses: list = []
    operation_fn = _operation_caller(training, call_operation, losses_of, losses)
    outputs = inputs
    for layer in model.layers:
        outputs = operation_fn(layer)(outputs)
    model.built = True
    return outputs, losses


def _as_input(value: Any, spec: Any) -> Any:
    """An input as Keras's functional call standardizes it: the `Input`'s dtype, and a last dimension of 1
    dropped or added where the ranks differ by it (`Functional._standardize_inputs`)."""
    from tapeshim._src.keras_host_layers import outputs_are_given  # import cycle: keras_host_layers -> ops
    from tapeshim._src.ops import array_ops, math_ops  # import cycle: ops -> keras
    from tapeshim._src.tensor import convert_to_tensor

    tensor = convert_to_tensor(value)
    if str(spec.dtype) == "string" and tensor.dtype.name == "uint8" and outputs_are_given():
        return tensor  # (`apply_host_prefix`'s stand-in for strings a lookup layer took before the step)
    if spec.dtype is not None and tensor.dtype.name != str(spec.dtype):
        tensor = math_ops.cast(tensor, str(spec.dtype))
    rank, wanted = len(tensor.shape), len(spec.shape)
    if rank == wanted + 1 and tensor.shape[-1] == 1:
        tensor = array_ops.squeeze(tensor, axis=-1)
    elif rank == wanted - 1 and spec.shape[-1] == 1:
        tensor = array_ops.expand_dims(tensor, -1)
    return tensor
