"""A function's outputs as its compiled program returns them, and back.

The program returns tensors only. Each flattened output of the Python function is recorded as a kind:
a tensor (its position among the program's outputs), a Python `None`, an `IndexedSlices` (the positions of
its values, indices and dense shape), a `RaggedTensor` (the position of its flat values and its row
partition, which the trace knows: `ragged_function`), or a string constant computed while tracing (strings
never enter the program); `packed` rebuilds the function's result from the program's outputs by these kinds.
"""

from __future__ import annotations

from typing import Any

from tapeshim._src import dtypes, nest, ragged_function
from tapeshim._src.autograph.symbols import UndefinedAfterLoop
from tapeshim._src.function_trace import FunctionTrace
from tapeshim._src.indexed_slices import IndexedSlices
from tapeshim._src.sparse import SparseTensor
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import Variable


def output_tensors(trace: FunctionTrace, result: Any, function_name: Any) -> tuple[list[Tensor], list[tuple]]:
    """The program's output tensors among the function's flattened `result`, and each output's kind.

    Raises:
      TypeError: for an output that is neither None nor convertible to a tensor, as TF raises.
    """
    out_tensors: list[Tensor] = []
    kinds: list[tuple] = []
    for leaf in nest.flatten(result):
        if leaf is None:
            kinds.append(("python", None))
            continue
        if isinstance(leaf, IndexedSlices):  # a composite output: its component tensors
            parts = (leaf.values, leaf.indices, leaf.dense_shape)
            at = tuple(None if part is None else len(out_tensors) + k for k, part in enumerate(parts))
            out_tensors.extend(convert_to_tensor(part) for part in parts if part is not None)
            kinds.append(("indexed_slices", at))
            continue
        if ragged_function.is_traced_ragged(leaf):
            flat_values = leaf.flat_values
            kinds.append(ragged_function.output_kind(leaf, len(out_tensors)))
            out_tensors.append(flat_values)
            continue
        if ragged_function.is_ragged(leaf):  # of strings: computed from constants, returned as it is
            kinds.append(("constant", leaf))
            continue
        if isinstance(leaf, Variable):
            leaf = trace.read_variable(leaf)
        elif not isinstance(leaf, Tensor):
            if isinstance(leaf, UndefinedAfterLoop):
                leaf._fail()  # TF's error for a dataset loop's target read after the loop
            leaf = _output_tensor(leaf, function_name)
        if leaf._dtype is dtypes.string:
            # strings never enter a compiled program: one in a trace was computed from constants, and the
            # function returns it as it is (as TF's graph returns its constant)
            kinds.append(("constant", leaf))
            continue
        kinds.append(("tensor", len(out_tensors)))
        out_tensors.append(leaf)
    return out_tensors, kinds


def packed(kinds: list[tuple], structure: Any, tensors: Any, specs: bool = False, unknown_rows: bool = False) -> Any:
    """The function's result `structure` around the program's output `tensors` (with `specs`: their specs;
    with `unknown_rows`, a RaggedTensor's spec has an unknown number of rows)."""
    flat: list[Any] = []
    for kind, at in kinds:
        if kind == "ragged":
            flat.append(ragged_function.packed_output(at, tensors, specs, unknown_rows))
            continue
        if kind == "indexed_slices":
            values, indices, dense_shape = at  # (no dense shape: None)
            flat.append(
                IndexedSlices(tensors[values], tensors[indices], None if dense_shape is None else tensors[dense_shape])
            )
        elif kind == "constant":
            flat.append(ragged_function.constant_spec(at) if specs else at)
        else:
            flat.append(None if kind == "python" else tensors[at])
    return nest.pack_sequence_as(structure, flat)


def eager_outputs(result: Any, function_name: Any) -> Any:
    """A function's `result` from a call run eagerly (`Function._run_eagerly_from_now_on`), its outputs as a
    trace's: Python and NumPy values become tensors, a variable its value; None, tensors and composites (ragged,
    sparse, `IndexedSlices`) stay as they are.

    Raises:
      TypeError: for an output that is neither None nor convertible to a tensor, as TF raises.
    """

    def output(leaf: Any) -> Any:
        if leaf is None or isinstance(leaf, (Tensor, IndexedSlices, SparseTensor)) or ragged_function.is_ragged(leaf):
            return leaf
        return _output_tensor(leaf, function_name)  # (a variable: its value now)

    return nest.map_structure(output, result)


def _output_tensor(leaf: Any, function_name: Any) -> Tensor:
    """A function's output `leaf` as a tensor, or TF's TypeError for one that is not convertible."""
    try:
        return convert_to_tensor(leaf)
    except (TypeError, ValueError):
        raise TypeError(
            "To be compatible with tf.function, Python functions must return zero or more Tensors or "
            f"ExtensionTypes or None values; in compilation of {function_name}, found return "
            f"value of type {type(leaf)}, which is not a Tensor or ExtensionType."
        ) from None
