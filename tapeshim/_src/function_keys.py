"""The keys a `tapeshim.function` finds its traces by: each argument's TF trace type, and TF's rules for which
earlier signature covers a call (`reduce_retracing`, the specs of `get_concrete_function`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src import nest, ragged_function
from tapeshim._src.dataset import Dataset
from tapeshim._src.dataset_iterator import OwnedIterator
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.trace_type import trace_type_of
from tapeshim._src.variable import Variable


def leaf_key(leaf: Any) -> tuple:
    """One flattened argument's part of a call's key: a tensor's shape and dtype, a spec's, a Python value."""
    if isinstance(leaf, Tensor):
        return ("tensor", tuple(leaf._shape), leaf._dtype.name)
    if isinstance(leaf, Variable):
        return ("variable", tuple(leaf._shape), leaf._dtype.name)
    if isinstance(leaf, (np.ndarray, np.generic)):
        dtype = np.asarray(leaf).dtype
        return ("tensor", np.shape(leaf), "string" if dtype.kind in "US" else str(dtype))  # (`<U2`, `|S3`: tf.string)
    if isinstance(leaf, OwnedIterator):  # by element spec, as TF: a new iterator of the same data shares a trace
        spec = leaf.element_spec
        return ("iterator", structure_key(spec), tuple(nest.flatten(spec)))
    if isinstance(leaf, TensorSpec):  # get_concrete_function(TensorSpec(...))
        return ("spec", tuple(leaf.shape.as_list()) if leaf.shape.rank is not None else None, leaf.dtype.name)
    if ragged_function.is_ragged(leaf):  # by partition (strings: values); its TF trace type is its spec (`tf_key`)
        return ragged_function.leaf_key(leaf)
    if ragged_function.is_ragged_spec(leaf):
        return ragged_function.spec_key(leaf)
    trace_type = trace_type_of(leaf)
    if trace_type is not None:  # the tf.types.experimental.TraceType protocol
        return ("trace_type", trace_type)
    try:
        hash(leaf)
        return ("python", leaf)  # by value, as TF: f(2) and f(2.0) share a trace
    except TypeError:
        return ("python", id(leaf))


def tf_key_of(key: tuple) -> tuple:
    """The TF signature of a call's `key` (its RaggedTensor arguments by their specs): `key` itself where it
    has no ragged argument."""
    if not any(leaf[0] == "ragged" for leaf in key[1]):
        return key
    return key[0], tuple(map(ragged_function.tf_leaf, key[1]))


def dataset_key(dataset: Dataset) -> tuple:
    spec = dataset.element_spec
    return ("dataset", structure_key(spec), tuple(nest.flatten(spec)))


def structure_key(value: Any) -> Any:
    """The nesting of a call's arguments (lists, tuples, dicts), without their leaves."""
    if isinstance(value, dict):
        return ("dict", tuple((k, structure_key(value[k])) for k in sorted(value, key=repr)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(structure_key(v) for v in value))
    return "."


def zeros_for_spec(leaf: Any) -> Any:
    """A spec's trace-time stand-in: zeros, unknown dimensions as 1 (unknown rank as a scalar); a numeric
    RaggedTensorSpec's a RaggedTensor of it."""
    if ragged_function.is_ragged_spec(leaf):
        return ragged_function.stand_in_for_spec(leaf)
    if not isinstance(leaf, TensorSpec):
        return leaf
    dims = [] if leaf.shape.rank is None else [1 if d is None else d for d in leaf.shape.as_list()]
    return zeros_tensor(dims, leaf.dtype.as_numpy_dtype)


def zeros_tensor(dims: list, numpy_dtype: Any) -> Tensor:
    """A tensor of zeros of `dims` (empty strings for `tf.string`, whose NumPy dtype is `object`)."""
    if np.dtype(numpy_dtype) == np.dtype(object):
        return convert_to_tensor(np.full(dims, b"", dtype=object))
    return convert_to_tensor(np.zeros(dims, numpy_dtype))


def covers(spec_leaf: Any, leaf: Any) -> bool:
    """Whether an argument `leaf` of a call is of the trace type of a `get_concrete_function` spec leaf."""
    if isinstance(spec_leaf, TensorSpec):
        return isinstance(leaf, (Tensor, np.ndarray, np.generic)) and spec_leaf.is_compatible_with(
            convert_to_tensor(leaf)
        )
    if ragged_function.is_ragged_spec(spec_leaf) and ragged_function.is_traced_ragged(leaf):
        return ragged_function.covers(spec_leaf, leaf)
    return leaf_key(spec_leaf) == leaf_key(leaf)


def generalized_key(key: tuple, known: set) -> tuple:
    """TF's `reduce_retracing`: the TF signature a call counts under.

    A known signature whose tensors have `None` where this call's dimensions differ
    (or an unknown rank) covers it; otherwise, a known signature of the same
    structure, Python values and dtypes is generalised to `None` in the dimensions
    that differ, or to any rank (one more TF trace).
    """

    def generalise(known_key: tuple) -> tuple | None:
        if known_key[0] != key[0] or len(known_key[1]) != len(key[1]):
            return None
        leaves = []
        for old, new in zip(known_key[1], key[1]):
            if old == new:
                leaves.append(old)
            elif old[0] == new[0] and old[0] in ("tensor", "ragged_spec") and old[2:] == new[2:]:
                if old[1] is None or new[1] is None or len(old[1]) != len(new[1]):
                    leaves.append((old[0], None, *old[2:]))  # any rank
                else:
                    leaves.append((old[0], tuple(a if a == b else None for a, b in zip(old[1], new[1])), *old[2:]))
            else:
                return None
        return known_key[0], tuple(leaves)

    candidates = [g for g in map(generalise, known) if g is not None]
    for candidate in candidates:
        if candidate in known:
            return candidate
    return candidates[0] if candidates else key


def describe(key: tuple) -> str:
    """A leaf key in words, for a retrace's reason."""
    kind = key[0]
    if kind == "tensor":
        return f"a tensor of shape {TensorShape(key[1])} and dtype {key[2]}"
    if kind == "variable":
        return f"a variable of shape {TensorShape(key[1])} and dtype {key[2]}"
    if kind == "ragged_spec":
        return f"a RaggedTensor of type {ragged_function.spec_of_key(key)}"
    if kind == "ragged":
        return f"a RaggedTensor of type {ragged_function.spec_of_key(key[4])} and its row partition"
    return f"the Python value {key[1]!r}"


def ranks(flat: list) -> tuple:
    """The ranks of a call's flattened tensor arguments (-1 for other values): which symbolic trace it takes."""
    return tuple(len(leaf._shape) if isinstance(leaf, Tensor) else -1 for leaf in flat)


def spec_covers(old: Any, new: Any) -> bool:
    """Whether a spec leaf `old` of an earlier `get_concrete_function` is a supertype of `new` (TF then returns
    that trace): a spec of the same dtype and a shape as wide or wider; equal Python values."""
    if ragged_function.is_ragged_spec(old) and ragged_function.is_ragged_spec(new):
        return bool(new.is_subtype_of(old))
    if isinstance(old, TensorSpec) and isinstance(new, TensorSpec):
        if old.dtype != new.dtype or (old.shape.rank is not None and old.shape.rank != new.shape.rank):
            return False
        return old.shape.rank is None or all(a is None or a == b for a, b in zip(old.shape.as_list(), new.shape))
    return leaf_key(old) == leaf_key(new)


def generalized_spec(leaf: Any, general: tuple, exact: tuple) -> Any:
    """A `reduce_retracing` call's argument as its generalised TF signature shows it: a TensorSpec or
    RaggedTensorSpec with `None` where the dimensions differ, else the argument."""
    if general == exact:
        return leaf
    if general[0] == "tensor":
        return TensorSpec(general[1], general[2])
    if general[0] == "ragged_spec":
        return ragged_function.spec_of_key(general)
    return leaf
