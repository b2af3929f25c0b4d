"""`tf.edit_distance`: the Levenshtein distance between the sequences of two `SparseTensor`s, on the host.

A sparse tensor's indices are always known on the host (`sparse.SparseTensor`), so the sequences' layout is
too. Known values (eagerly) are compared at once; values only known when a `tapeshim.function` runs are
compared there, by a host callback. The result is float32 and has no gradient, as TF's EditDistance.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import table
from tapeshim._src.ops.common import tf_type_name
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.sparse import SparseTensor, _host
from tapeshim._src.state import _thread_state
from tapeshim._src.strings_tensor import StringTensor
from tapeshim._src.tensor import Tensor, constant

# (output shape, ((flat output position, hypothesis start, end, truth start, end), ...))
_Layout = tuple[tuple[int, ...], tuple[tuple[int, int, int, int, int], ...]]


def _sequences(sp: SparseTensor) -> dict[tuple[int, ...], tuple[int, int]]:
    """The sequences of `sp`: leading index -> (first, end) of its entries (TF requires them in order)."""
    found: dict[tuple[int, ...], tuple[int, int]] = {}
    for position, key in enumerate(tuple(int(i) for i in row) for row in sp._index_host[:, :-1]):
        start = found[key][0] if key in found else position
        found[key] = (start, position + 1)
    return found


def _levenshtein(a: list, b: list) -> int:
    previous = list(range(len(b) + 1))
    for i, item in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, other in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (item != other))
        previous = current
    return previous[-1]


def _distances(hypothesis: Any, truth: Any, layout: _Layout, normalize: bool) -> np.ndarray:
    shape, spans = layout
    out = np.zeros(math.prod(shape), np.float32)
    h_values, t_values = np.asarray(hypothesis).tolist(), np.asarray(truth).tolist()
    for flat, h_start, h_end, t_start, t_end in spans:
        h, t = h_values[h_start:h_end], t_values[t_start:t_end]
        distance = np.float32(_levenshtein(h, t))
        if normalize:
            distance = distance / np.float32(len(t)) if t else np.float32(np.inf if h else 0.0)
        out[flat] = distance
    return out.reshape(shape)


def _edit_distance_impl(hypothesis: jax.Array, truth: jax.Array, layout: _Layout, normalize: bool) -> jax.Array:
    struct = jax.ShapeDtypeStruct(layout[0], np.float32)
    return jax.pure_callback(lambda h, t: _distances(h, t, layout, normalize), struct, hypothesis, truth)


_edit_distance_op = OpDef("EditDistance", _edit_distance_impl, False)


def _shape_text(shape: np.ndarray) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


@table.export("edit_distance", gradient="-", dtypes="all", note="computed on the host (a callback inside functions)")
def edit_distance(
    hypothesis: SparseTensor, truth: SparseTensor, normalize: bool = True, name: str = "edit_distance"
) -> Tensor:
    """The Levenshtein distance between sequences, as `tf.edit_distance`.

    Each sequence is the values of one index prefix (all but the last index) of a `SparseTensor`, in index
    order. The result has, per dimension, the larger of the two inputs' leading dense dimensions; a position
    neither input has a sequence at is 0.

    Args:
      hypothesis: a `SparseTensor` of rank at least 2.
      truth: a `SparseTensor` of the same rank and values dtype.
      normalize: divide each distance by the truth's length (inf for an empty truth and a non-empty
        hypothesis).
      name: ignored.

    Returns:
      A float32 tensor of rank one less than the inputs'.

    Raises:
      TypeError: if an input is not a `SparseTensor`.
      InvalidArgumentError: for values of two dtypes, two ranks or a rank under 2.
    """
    if not isinstance(hypothesis, SparseTensor):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, SparseTensor):
        raise TypeError("Truth must be a SparseTensor.")
    h_type, t_type = hypothesis.values.dtype, truth.values.dtype
    if h_type != t_type:
        raise errors.invalid_argument(
            f"cannot compute EditDistance as input #4(zero-based) was expected to be a {tf_type_name(h_type)} "
            f"tensor but is a {tf_type_name(t_type)} tensor",
            "EditDistance",
        )
    h_shape, t_shape = hypothesis._shape_host, truth._shape_host
    if h_shape.shape[0] != t_shape.shape[0]:
        raise errors.invalid_argument(
            "Expected truth and hypothesis to have matching ranks, but their shapes are: "
            f"[{t_shape.shape[0]}] and [{h_shape.shape[0]}]",
            "EditDistance",
        )
    if t_shape.shape[0] < 2:
        raise errors.invalid_argument(
            f"Input SparseTensors must have rank at least 2, but truth_shape rank is: {t_shape.shape[0]}",
            "EditDistance",
        )
    shape = tuple(int(d) for d in np.maximum(h_shape[:-1], t_shape[:-1]))
    h_spans, t_spans = _sequences(hypothesis), _sequences(truth)
    spans = []
    for key in sorted(set(h_spans) | set(t_spans)):
        flat = int(np.ravel_multi_index(key, shape)) if shape else 0
        spans.append((flat, *h_spans.get(key, (0, 0)), *t_spans.get(key, (0, 0))))
    layout: _Layout = (shape, tuple(spans))
    h_values, t_values = hypothesis.values, truth.values
    if _thread_state.trace is None or isinstance(h_values, StringTensor) or h_type == dtypes.string:
        return constant(_distances(_host(h_values), _host(t_values), layout, bool(normalize)))
    return apply(_edit_distance_op, (h_values, t_values), (("layout", layout), ("normalize", bool(normalize))))[0]
