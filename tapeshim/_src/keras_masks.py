"""Keras masks carried on tapeshim tensors from one layer call to the next, as on TF's eager tensors.

TF's Keras attaches a layer's output mask to its output tensor (`_keras_mask`: an `Embedding` with
`mask_zero=True`, a `Masking` layer) and fills a later layer's `mask` argument from its input's, so an
eager `pool(embedding(ids))` averages only the unmasked steps. tapeshim calls a Keras layer inside one op
on JAX arrays, where Keras cannot see the tapeshim tensors' masks; this module does what Keras's
`Layer.__call__` does (keras/src/layers/layer.py: step 6 "Populate mask argument(s)" and
`_set_mask_metadata`) on the tapeshim tensors around that op.
"""

from __future__ import annotations

import inspect
import weakref
from typing import Any, Callable

from tapeshim._src import nest
from tapeshim._src.tensor import Tensor, convert_to_tensor

_signatures: "weakref.WeakKeyDictionary[type, inspect.Signature | None]" = weakref.WeakKeyDictionary()


def _mask_of(value: Any) -> Any:
    return getattr(value, "_keras_mask", None) if isinstance(value, Tensor) else None


def _masks_of(tree: Any) -> Any:
    return nest.map_structure(_mask_of, tree)


def _any_mask(tree: Any) -> bool:
    return any(_mask_of(leaf) is not None for leaf in nest.flatten(tree))


def _call_signature(layer: Any) -> inspect.Signature | None:
    cls = type(layer)
    if cls not in _signatures:
        try:
            _signatures[cls] = inspect.signature(cls.call)
        except (TypeError, ValueError):
            _signatures[cls] = None
    return _signatures[cls]


def with_input_masks(layer: Any, args: tuple, kwargs: dict) -> tuple[dict, Any]:
    """`(kwargs, previous mask)`: the call's keyword arguments with the `mask` (or `<argument>_mask`)
    arguments Keras fills from its tensor arguments' masks, and the mask Keras passes on (the `mask`
    argument, else the first argument's masks); `(kwargs, None)` when no argument carries a mask."""
    if not (any(map(_any_mask, args)) or any(map(_any_mask, kwargs.values()))):
        return kwargs, kwargs.get("mask")
    signature = _call_signature(layer)
    if signature is not None:
        try:
            bound = signature.bind_partial(layer, *args, **kwargs).arguments
        except TypeError:
            bound = {}
        tensors = {
            name: value
            for name, value in list(bound.items())[1:]
            if nest.flatten(value) and all(isinstance(leaf, Tensor) for leaf in nest.flatten(value))
        }
        names = signature.parameters
        if len(tensors) == 1:
            if "mask" in names and bound.get("mask") is None:
                kwargs = {**kwargs, "mask": _masks_of(next(iter(tensors.values())))}
        else:
            for name, value in tensors.items():
                if f"{name}_mask" in names and bound.get(f"{name}_mask") is None:
                    kwargs = {**kwargs, f"{name}_mask": _masks_of(value)}
    previous = kwargs.get("mask")
    if previous is None and args:
        previous = _masks_of(args[0])
    return kwargs, previous


def attach_output_masks(
    layer: Any, args: tuple, previous: Any, outputs: Any, compute_mask: Callable[[Any, Any], Any]
) -> None:
    """Attaches the output masks to the call's outputs, as Keras's `_set_mask_metadata` (for a layer that
    supports masking; an output's own mask is kept): `previous` where the layer keeps Keras's default
    `compute_mask`, else `compute_mask(first argument, previous)` (the layer's, run as one op)."""
    if not getattr(layer, "supports_masking", False) or not args:
        return
    own_compute_mask = type(layer).compute_mask is not _base_compute_mask()
    has_previous = any(mask is not None for mask in nest.flatten(previous))
    if not (own_compute_mask or has_previous):
        return
    flat_outputs = _tensors(outputs)
    if not flat_outputs or all(_mask_of(leaf) is not None for leaf in flat_outputs):
        return
    if not own_compute_mask:
        masks = previous
    else:
        # (a layer's own `compute_mask` given no mask gives none or one by its configuration and the input's
        # shapes, not its values: an RNN's gives none, and is not run as an op again for those shapes)
        key = None if has_previous else tuple((leaf._shape, leaf._dtype) for leaf in _tensors(args[0]))
        makes_masks = _makes_masks.setdefault(layer, {})
        if key is not None and makes_masks.get(key) is False:
            return
        masks = compute_mask(args[0], previous)
        if key is not None and len(makes_masks) < 64:
            makes_masks[key] = any(mask is not None for mask in nest.flatten(masks))
    if masks is None:
        return
    for tensor, mask in zip(flat_outputs, nest.flatten(masks)):
        if mask is not None and _mask_of(tensor) is None:
            tensor._keras_mask = convert_to_tensor(mask)


def _tensors(tree: Any) -> list:
    return [leaf for leaf in nest.flatten(tree) if isinstance(leaf, Tensor)]


_makes_masks: "weakref.WeakKeyDictionary[Any, dict[tuple, bool]]" = weakref.WeakKeyDictionary()


def _base_compute_mask() -> Any:
    from tapeshim._src.keras_compat import keras  # import cycle: keras_compat -> ops -> tensor

    return keras.Layer.compute_mask
