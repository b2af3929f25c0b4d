"""Keras tensor specs for a layer's symbolic build: the shapes tapeshim builds a layer with, then generalizes."""

from __future__ import annotations

from typing import Any

import jax

from tapeshim._src.keras_compat import keras


def with_unknown_dims(structure: Any, size: int) -> Any:
    """`structure` with the unknown dimensions of its Keras tensors set to `size`."""

    def concrete(leaf: Any) -> Any:
        if isinstance(leaf, keras.KerasTensor) and None in leaf.shape:
            return keras.KerasTensor(
                tuple(size if d is None else d for d in leaf.shape),
                dtype=leaf.dtype,
                sparse=leaf.sparse,
                name=leaf.name,
            )
        return leaf

    return jax.tree_util.tree_map(concrete, structure, is_leaf=lambda leaf: isinstance(leaf, keras.KerasTensor))


def merge_specs(first: Any, second: Any) -> Any:
    """`first`'s Keras tensor with unknown dimensions where its shape and `second`'s differ (other leaves: `first`)."""
    if not isinstance(first, keras.KerasTensor):
        return first
    shape = tuple(a if a == b else None for a, b in zip(first.shape, second.shape))
    return keras.KerasTensor(shape, dtype=first.dtype, sparse=first.sparse)
