"""RaggedTensors and SparseTensors in a converted `if`'s or tensor loop's state (`r = r * 2.0` in a loop).

TF's AutoGraph carries composite tensors through `tf.cond` and `tf.while_loop` as their component tensors. In
tapeshim a RaggedTensor's row partition and a SparseTensor's indices and dense shape are host values (static
in the compiled program), so the statement carries each one's values tensor, and rebuilds it with its static
parts: those must be the same in both branches of an `if` and in every iteration of a loop. Where they differ
(a loop that changes a row partition) the statement raises `DynamicShapeNeeded`, and the function computes
that call op by op, as it does for other values whose shape a call decides.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tapeshim._src import nest
from tapeshim._src.dynamic_shapes import DynamicShapeNeeded
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.sparse import SparseTensor

# Per state variable: None (no composite in it), or (the variable, per leaf: None or (composite, static key))
Template = tuple[Any, list] | None


def _static_key(leaf: RaggedTensor | SparseTensor) -> tuple:
    """What of `leaf` is static in a program: its row partitions, or its indices and dense shape."""
    if isinstance(leaf, SparseTensor):
        return ("sparse", leaf._index_host.tobytes(), leaf._index_host.shape, leaf._shape_host.tobytes())
    levels = []
    current: Any = leaf
    while isinstance(current, RaggedTensor):
        levels.append((np.asarray(current._splits).tobytes(), current._row_splits.dtype.name, current._uniform))
        current = current._values
    return ("ragged", tuple(levels))


def decompose(value: Any) -> tuple[Any, Template]:
    """`value` with each composite replaced by a 1-tuple of its values tensor (its flat values), and the
    template `rebuild` makes it again from; `(value, None)` when it holds none."""
    leaves = nest.flatten(value)
    if not any(isinstance(leaf, (RaggedTensor, SparseTensor)) for leaf in leaves):
        return value, None
    parts: list[Any] = []
    statics: list = []
    for leaf in leaves:
        if isinstance(leaf, RaggedTensor):
            parts.append((leaf.flat_values,))
            statics.append((leaf, _static_key(leaf)))
        elif isinstance(leaf, SparseTensor):
            parts.append((leaf.values,))
            statics.append((leaf, _static_key(leaf)))
        else:
            parts.append(leaf)
            statics.append(None)
    return tuple(parts), (value, statics)


def rebuild(parts: Any, template: Template) -> Any:
    """The variable `decompose` gave `parts` for, with the values tensors in `parts`."""
    if template is None or not isinstance(parts, tuple):  # (not a variable the statement outputs: undefined)
        return parts
    value, statics = template
    leaves = []
    for part, static in zip(parts, statics):
        if static is None:
            leaves.append(part)
        elif isinstance(static[0], RaggedTensor):
            leaves.append(static[0].with_flat_values(part[0]))
        else:
            leaves.append(SparseTensor(static[0].indices, part[0], static[0].dense_shape))
    return nest.pack_sequence_as(value, leaves)


def same_statics(first: Template, second: Template) -> bool:
    """Whether two templates have composites at the same places with the same static parts."""
    if first is None or second is None:
        return first is second
    keys = [[None if s is None else s[1] for s in template[1]] for template in (first, second)]
    return keys[0] == keys[1]


def _check_shape(name: str, before: Any, after: Any) -> None:
    """TF's error for a composite loop variable whose shape (a RaggedTensor's number of rows) changes."""
    if nest.is_nested(before) or nest.is_nested(after):
        return
    if not all(isinstance(value, (RaggedTensor, SparseTensor)) for value in (before, after)):
        return
    old, new = (tuple(value.shape.as_list()) for value in (before, after))
    if old != new:
        raise ValueError(
            f"'{name}' has shape {old} before the loop, but shape {new} after one iteration. Use "
            "tf.autograph.experimental.set_loop_options to set shape invariants."
        )


class CompositeState:
    """A converted statement's state with its composites decomposed, and its functions wrapped to see them
    whole (`decompose`): `state` is what the statement carries; `rebuild_all` gives the user's values."""

    def __init__(self, state: Sequence[Any], names: Sequence[str]) -> None:
        decomposed = [decompose(value) for value in state]
        self.state = tuple(parts for parts, _ in decomposed)
        self.templates: list[Template] = [template for _, template in decomposed]
        self.names = names
        self.any = any(template is not None for template in self.templates)

    def rebuild_all(self, values: Sequence[Any], templates: Sequence[Template] | None = None) -> tuple:
        templates = self.templates if templates is None else templates
        return tuple(rebuild(value, template) for value, template in zip(values, templates))

    def state_function(self, function: Callable[..., Any], n_leading: int) -> Callable[..., Any]:
        """`function` of (`n_leading` arguments and) the state, taking the decomposed state."""

        def wrapped(*values: Any) -> Any:
            return function(*values[:n_leading], *self.rebuild_all(values[n_leading:]))

        return wrapped

    def loop_body(self, body: Callable[..., tuple], n_leading: int) -> Callable[..., tuple]:
        """A loop body over the decomposed state: each composite must keep its static parts."""

        def wrapped(*values: Any) -> tuple:
            result = body(*values[:n_leading], *self.rebuild_all(values[n_leading:]))
            out = list(result[:n_leading])
            for name, value, template in zip(self.names, result[n_leading:], self.templates):
                parts, after = decompose(value)
                if template is not None and not same_statics(template, after):
                    _check_shape(name, template[0], value)
                    raise DynamicShapeNeeded(f"'{name}' changes its row partition or sparse indices in a loop")
                out.append(parts)
            return tuple(out)

        return wrapped

    def branch(self, function: Callable[..., tuple], seen: list) -> Callable[..., tuple]:
        """A branch of an `if` over the decomposed state; appends its results' templates to `seen`."""

        def wrapped(*values: Any) -> tuple:
            result = function(*self.rebuild_all(values))
            decomposed = [decompose(value) for value in result]
            seen.append([template for _, template in decomposed])
            return tuple(parts for parts, _ in decomposed)

        return wrapped

    def if_results(self, result: Sequence[Any], seen: list) -> tuple:
        """The `if`'s variables from its decomposed results and its two branches' templates."""
        for name, first, second in zip(self.names, *seen[-2:]):
            if not same_statics(first, second):
                raise DynamicShapeNeeded(f"'{name}' has other row partitions or sparse indices in the two branches")
        return self.rebuild_all(result, seen[-2])
