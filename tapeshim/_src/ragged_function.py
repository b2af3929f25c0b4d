"""RaggedTensors as `tapeshim.function` arguments and results, as TF 2.21 passes them.

TF traces a RaggedTensor argument by its `RaggedTensorSpec` (dtype, ragged rank, row-splits dtype and static
shape: the number of rows is part of it, the ragged dimensions are `None`), and returns RaggedTensors from a
function. tapeshim's ragged ops compute row partitions on the host (`ragged.py`), so a trace sees a ragged
argument's partition as it is: its flat values are a placeholder of the compiled program (a call with other
values of the same partition reuses the program, and gradients flow into them), its row splits are constants of
the trace. A call with another partition of the same spec runs the Python function again for it, which is not
a TF retrace (as a call with other shapes of one `input_signature`: `experimental_get_tracing_count` counts TF's
traces). A ragged argument of strings stays a constant of its trace (strings never enter a program).

A RaggedTensor result is its flat values (a program output) and its row partition, known while tracing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec


def _ragged_type() -> Any:
    from tapeshim._src.ragged import RaggedTensor  # import cycle: ragged -> ops -> ... -> function modules

    return RaggedTensor


def _spec_type() -> Any:
    from tapeshim._src.ragged_spec import RaggedTensorSpec  # import cycle, as above

    return RaggedTensorSpec


def is_ragged(value: Any) -> bool:
    """Whether `value` is a RaggedTensor."""
    return isinstance(value, _ragged_type())


def is_traced_ragged(value: Any) -> bool:
    """Whether `value` is a RaggedTensor whose flat values a trace takes as a placeholder (numbers, not strings)."""
    return isinstance(value, _ragged_type()) and value.flat_values.dtype is not dtypes.string


def is_ragged_spec(value: Any) -> bool:
    """Whether `value` is a `tf.RaggedTensorSpec`."""
    return isinstance(value, _spec_type())


def _levels(value: Any) -> list[tuple[np.ndarray, Any, int | None]]:
    """The row partitions of a RaggedTensor, outermost first: (host splits, splits dtype, uniform row length)."""
    levels = []
    node = value
    while isinstance(node, _ragged_type()):
        levels.append((node._splits, node._row_splits.dtype, node._uniform))
        node = node._values
    return levels


def partition_key(value: Any) -> tuple:
    """A hashable summary of a RaggedTensor's row partitions (every split, its dtype, uniform row lengths)."""
    return tuple((splits.tobytes(), dtype.name, uniform) for splits, dtype, uniform in _levels(value))


def spec_key(spec: Any) -> tuple:
    """A `RaggedTensorSpec` as a TF trace-type key: its shape (None: unknown rank), dtype, ragged rank, splits."""
    shape = tuple(spec.shape.as_list()) if spec.shape.rank is not None else None
    return ("ragged_spec", shape, spec.dtype.name, spec.ragged_rank, spec.row_splits_dtype.name)


def leaf_key(value: Any) -> tuple:
    """A RaggedTensor argument's part of a call's key: what its trace sees (the partition; for strings, every
    value: `RaggedValueType`), its flat values' shape and dtype, and (last) its TF trace type."""
    flat = value.flat_values
    spec = _spec_type().from_value(value)
    seen = partition_key(value) if flat.dtype is not dtypes.string else value.__tf_tracing_type__(None)
    return ("ragged", seen, tuple(flat._shape), flat._dtype.name, spec_key(spec))


def tf_leaf(key: tuple) -> tuple:
    """The TF trace type of one leaf key (a RaggedTensor's spec for a ragged leaf)."""
    return key[4] if key[0] == "ragged" else key


def spec_of_key(key: tuple) -> Any:
    """The `RaggedTensorSpec` of a `spec_key`."""
    _, shape, dtype, ragged_rank, splits_dtype = key
    return _spec_type()(shape, dtypes.as_dtype(dtype), ragged_rank, dtypes.as_dtype(splits_dtype))


def arg_tensor(value: Any) -> Tensor:
    """The program input for a traced argument: a RaggedTensor's flat values, else the value as a tensor."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _ragged_type()):
        return value.flat_values
    return convert_to_tensor(value)


def rebuild(flat_values: Any, levels: list[tuple[np.ndarray, Any, int | None]]) -> Any:
    """A RaggedTensor of `flat_values` partitioned by `levels` (as `_levels` gives them)."""
    ragged = _ragged_type()
    result = flat_values
    for splits, dtype, uniform in reversed(levels):
        result = ragged(result, constant(splits.astype(dtype.as_numpy_dtype), dtype), uniform)
    return result


def traced_argument(value: Any, placeholder: Tensor) -> Any:
    """The RaggedTensor a trace sees for a ragged argument: its partition over the flat values' `placeholder`."""
    return rebuild(placeholder, _levels(value))


def stand_in_for_spec(spec: Any) -> Any:
    """A call value for a `RaggedTensorSpec` of `get_concrete_function`: a RaggedTensor of the spec (each
    unknown dimension 1), or the spec itself for strings (traced as a constant, as before)."""
    from tapeshim._src.ragged_spec import stand_in

    if spec.dtype == dtypes.string or spec.ragged_rank <= 0:
        return spec
    return stand_in(spec)


def covers(spec: Any, value: Any) -> bool:
    """Whether a RaggedTensor `value` is of the type of a `get_concrete_function` `RaggedTensorSpec`."""
    return isinstance(value, _ragged_type()) and spec.is_compatible_with(value)


# -- results ----------------------------------------------------------------------------------------------
def output_kind(value: Any, position: int) -> tuple:
    """The kind of a numeric RaggedTensor result whose flat values are the program's output `position`: its
    partition, and its spec as the trace knows it."""
    return ("ragged", (position, _levels(value), _spec_type().from_value(value)))


def packed_output(at: tuple, tensors: Any, specs: bool, unknown_rows: bool = False) -> Any:
    """A ragged result rebuilt around the program's output tensors (with `specs`: its `RaggedTensorSpec`, the
    flat values' unknown dimensions unknown; with `unknown_rows`, its number of rows too)."""
    position, levels, spec = at
    flat = tensors[position]
    if not specs:
        return rebuild(flat, levels)
    shape = spec.shape
    if isinstance(flat, TensorSpec) and flat.shape.rank is not None and shape.rank is not None:
        shape = shape[: spec.ragged_rank + 1].concatenate(flat.shape[1:])
    if unknown_rows and shape.rank is not None:
        shape = TensorShape([None]).concatenate(shape[1:])
    return _spec_type()(shape, spec.dtype, spec.ragged_rank, spec.row_splits_dtype)


def constant_spec(value: Any) -> Any:
    """The spec of a result computed while tracing (a TensorSpec, a RaggedTensorSpec for a ragged one)."""
    if isinstance(value, _ragged_type()):
        return _spec_type().from_value(value)
    return TensorSpec(value.shape, value.dtype)


def unknown_rows(specs: Any) -> bool:
    """Whether a trace's input specs (flattened) hold a `RaggedTensorSpec` of an unknown number of rows: TF's
    graph then knows the number of rows of no ragged result made from it. (tapeshim cannot tell a result made
    from an argument from one made from constants: every ragged result's spec of such a trace has `None`.)"""
    return any(
        is_ragged_spec(spec) and spec.ragged_rank > 0 and (spec.shape.rank is None or spec.shape[0] is None)
        for spec in specs
    )
