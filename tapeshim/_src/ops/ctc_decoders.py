"""CTC decoding: `tf.nn.ctc_greedy_decoder`, `tf.nn.ctc_beam_search_decoder` and `tf.nn.ctc_unique_labels`.

The decoders are TF's CPU host ops (no gradient); their results' sizes depend on the values, so they run on
the host with numpy (inside `tapeshim.function` the function then runs eagerly, as for `tf.unique`).

The beam search follows TF's CPU kernel (`tensorflow/core/util/ctc/ctc_beam_search.h`) step by step, in the
input's precision (float32 arithmetic for float32 logits, the C library's `expf`/`logf`/`log1pf`), and keeps
its beams in a model of TF's `gtl::TopN` over the C++ standard library's heap and sort algorithms
(`cpp_algorithms.py`), so that beams of equal probability come out in TF's order.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import math_ops, table
from tapeshim._src.ops.common import attr_error, is_tensor_like, static_error, tf_type_name
from tapeshim._src.ops.cpp_algorithms import TopN
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.sparse import SparseTensor
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_NEG_INF = -math.inf


# -- the C library's math functions, which TF's kernel calls ------------------------------------------------
@functools.lru_cache(maxsize=None)
def _libm() -> Any:
    """The C math library (loaded at the first decoding: finding it by name may run a subprocess)."""
    for name in ("libm.so.6", ctypes.util.find_library("m")):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
    return None  # pragma: no cover - a platform without a loadable C math library


@functools.lru_cache(maxsize=None)
def _c_function(name: str, double: bool) -> Callable[[float], float] | None:
    library = _libm()
    function = getattr(library, name, None) if library is not None else None
    if function is None:
        return None
    ctype = ctypes.c_double if double else ctypes.c_float
    function.restype = ctype
    function.argtypes = [ctype]
    return function


def _float_function(name: str, fallback: Callable[[Any], Any]) -> Callable[[Any], np.float32]:
    """A float32 math function of the C library (a float32 numpy one where there is none)."""
    function = _c_function(name, False)
    if function is None:
        return lambda x: np.float32(fallback(np.float32(x)))
    return lambda x: np.float32(function(float(x)))


def _double_function(name: str, fallback: Callable[[Any], Any]) -> Callable[[Any], float]:
    function = _c_function(name, True)
    if function is None:
        return lambda x: float(fallback(np.float64(x)))
    return lambda x: float(function(float(x)))


class _Arithmetic:
    """The scalar arithmetic of TF's kernel for one dtype: `cast`, `exp` and `log` in that dtype.

    `log_sum_exp` is TF's `ctc::LogSumExp`, which calls the float32 `expf`/`log1pf` for either dtype.
    """

    def __init__(self, dtype: Any) -> None:
        self.cast: Callable[[Any], Any] = np.float32 if dtype == np.float32 else float
        self._expf = _float_function("expf", np.exp)
        self._log1pf = _float_function("log1pf", np.log1p)
        if dtype == np.float32:
            self.exp: Callable[[Any], Any] = self._expf
            self.log: Callable[[Any], Any] = _float_function("logf", np.log)
        else:
            self.exp = _double_function("exp", np.exp)
            self.log = _double_function("log", np.log)
        self.neg_inf = self.cast(_NEG_INF)

    def log_sum_exp(self, a: Any, b: Any) -> Any:
        if a == _NEG_INF:
            return b
        if b == _NEG_INF:
            return a
        if a > b:
            return a + self.cast(self._log1pf(self._expf(np.float32(b - a))))
        return b + self.cast(self._log1pf(self._expf(np.float32(a - b))))


# -- inputs ---------------------------------------------------------------------------------------------------
def _logits(inputs: Any, op_name: str) -> Tensor:
    """The logits as TF's op wrapper converts them: a tensor keeps its dtype, anything else prefers float32."""
    x = convert_to_tensor(inputs) if is_tensor_like(inputs) else convert_to_tensor(inputs, dtype_hint=dtypes.float32)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise attr_error(
            f"Value for attr 'T' of {tf_type_name(x.dtype)} is not in the list of allowed values: float, double\n\t; "
            f"NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    return x


def _lengths(sequence_length: Any, op_name: str) -> Tensor:
    if is_tensor_like(sequence_length):
        lengths = convert_to_tensor(sequence_length)
        if lengths.dtype is not dtypes.int32:
            raise attr_error(
                f"cannot compute {op_name} as input #1(zero-based) was expected to be a int32 tensor but is a "
                f"{tf_type_name(lengths.dtype)} tensor",
                op_name,
            )
        return lengths
    return convert_to_tensor(sequence_length, dtype=dtypes.int32)


def _attr_int(value: Any, name: str) -> int:
    """TF's `_execute.make_int`: an int attribute (a float is truncated, a string refused)."""
    if isinstance(value, str):
        raise TypeError(f"Expected int for argument '{name}' not {value!r}.")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise TypeError(f"Expected int for argument '{name}' not {value!r}.") from None


def _attr_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"Expected bool for argument '{name}' not {value!r}.")
    return value


def _batch_error(message: str, op_name: str) -> Exception:
    """A batch size that disagrees: the kernel's FailedPreconditionError, or (traced) the shape function's
    ValueError."""
    if _thread_state.trace is not None:
        return ValueError(f"{message} for '{{{{node {op_name}}}}}'")
    return errors.FailedPreconditionError(None, None, message)


def _validated(inputs: Any, sequence_length: Any, op_name: str) -> tuple[np.ndarray, np.ndarray]:
    """The logits `[max_time, batch, classes]` and the lengths on the host, after TF's checks (the shape
    function's while traced, then the kernel's `ValidateInputsGenerateOutputs`)."""
    x = _logits(inputs, op_name)
    lengths = _lengths(sequence_length, op_name)
    if len(x._shape) != 3:
        raise static_error("inputs is not a 3-Tensor", op_name)
    if len(lengths._shape) != 1:
        raise static_error("sequence_length is not a vector", op_name)
    max_time, batch, _ = (int(d) for d in x._shape)
    if batch != int(lengths._shape[0]):
        raise _batch_error(
            f"len(sequence_length) != batch_size.  len(sequence_length):  {int(lengths._shape[0])} batch_size: {batch}",
            op_name,
        )
    if x.shape.num_elements() == 0:
        raise errors.invalid_argument("inputs must not be empty", op_name)
    host_lengths = np.asarray(lengths.numpy(), np.int64).reshape(-1)
    for b, length in enumerate(host_lengths):
        if not length <= max_time:
            raise errors.FailedPreconditionError(None, None, f"sequence_length({b}) <= {max_time}")
    return np.asarray(x.numpy()), host_lengths


def _decoded(paths: list[list[list[int]]], batch: int) -> list[SparseTensor]:
    """TF's `StoreAllDecodedSequences`: one `[batch, max_length]` SparseTensor of int64 labels per path."""
    result = []
    for p in range(len(paths[0]) if paths else 0):
        rows = [paths[b][p] for b in range(batch)]
        indices = np.asarray([[b, t] for b, row in enumerate(rows) for t in range(len(row))], np.int64)
        values = np.asarray([label for row in rows for label in row], np.int64)
        shape = np.asarray([batch, max((len(row) for row in rows), default=0)], np.int64)
        result.append(SparseTensor(constant(indices.reshape(-1, 2)), constant(values), constant(shape)))
    return result


# -- greedy ---------------------------------------------------------------------------------------------------
def _row_max(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TF's `RowMax` of each `[t, b]` row: the first strictly largest element (a NaN only where it comes first)."""
    index = np.argmax(np.where(np.isnan(x), -np.inf, x), axis=-1)
    index = np.where(np.isnan(x[..., 0]), 0, index)
    return index, np.take_along_axis(x, index[..., None], axis=-1)[..., 0]


@table.export(
    "nn.ctc_greedy_decoder",
    gradient="none",
    dtypes="float32, float64",
    note="runs on the host (values needed: a tapeshim.function runs eagerly), as TF's CPU kernel",
)
def ctc_greedy_decoder(
    inputs: TensorLike, sequence_length: TensorLike, merge_repeated: bool = True, blank_index: int | None = None
) -> tuple[list[SparseTensor], Tensor]:
    """Greedy (best path) CTC decoding, as `tf.nn.ctc_greedy_decoder`.

    At each step the most likely class is taken (the first of equal maxima); blanks are dropped and, with
    `merge_repeated`, a class equal to the previous step's class too.

    Args:
      inputs: the logits, `[max_time, batch_size, num_classes]` float32 or float64.
      sequence_length: int32 `[batch_size]` lengths (at most `max_time`).
      merge_repeated: whether repeated classes are emitted once.
      blank_index: the blank class (default `num_classes - 1`; negative counts from the end).

    Returns:
      `(decoded, neg_sum_logits)`: a list of one SparseTensor (int64 `[batch_size, max_decoded_length]`) and
      the `[batch_size, 1]` negated sum of each step's largest logit.

    Raises:
      TypeError: for a `merge_repeated` that is not a bool or a `blank_index` that is not an int.
      InvalidArgumentError: for bad ranks or dtypes, empty inputs or a blank index out of range.
      FailedPreconditionError: for lengths longer than `max_time` or a batch size that disagrees.
    """
    op_name = "CTCGreedyDecoder"
    merge = _attr_bool(merge_repeated, "merge_repeated")
    blank = -1 if blank_index is None else _attr_int(blank_index, "blank_index")
    x, lengths = _validated(inputs, sequence_length, op_name)
    _, batch, classes = x.shape
    resolved = classes + blank if blank < 0 else blank
    if not 0 <= resolved < classes:
        raise errors.invalid_argument(
            f"blank_index expected to be between {-classes} and {classes - 1} but was {blank}", op_name
        )
    best, values = _row_max(x)
    scores = np.zeros([batch], x.dtype)
    with np.errstate(all="ignore"):
        for t in range(x.shape[0]):  # (in the kernel's order and precision)
            scores = np.where(t < lengths, scores + -values[t], scores)
    paths = []
    for b in range(batch):
        sequence: list[int] = []
        previous = -1
        for index in best[: max(int(lengths[b]), 0), b].tolist():
            if index != resolved and not (merge and index == previous):
                sequence.append(index)
            previous = index
        paths.append([sequence])
    return _decoded(paths, batch), constant(scores.reshape(batch, 1))


# -- beam search ----------------------------------------------------------------------------------------------
class _Beam:
    """One prefix of TF's beam search (`ctc_beam_search::BeamEntry`): its probabilities at the previous step
    (`old_*`) and this one (`new_*`), each the total, ending in a blank, and ending in the label."""

    __slots__ = (
        "parent",
        "label",
        "children",
        "old_total",
        "old_blank",
        "old_label",
        "new_total",
        "new_blank",
        "new_label",
    )

    def __init__(self, parent: _Beam | None, label: int, neg_inf: Any) -> None:
        self.parent = parent
        self.label = label
        self.children: dict[int, _Beam] = {}
        self.old_total = self.old_blank = self.old_label = neg_inf
        self.new_total = self.new_blank = self.new_label = neg_inf

    def child(self, label: int, neg_inf: Any) -> _Beam:
        found = self.children.get(label)
        if found is None:
            found = self.children[label] = _Beam(self, label, neg_inf)
        return found

    def active(self) -> bool:
        return bool(self.new_total != _NEG_INF)

    def labels(self) -> list[int]:
        out = []
        node: _Beam | None = self
        while node is not None and node.parent is not None:
            out.append(node.label)
            node = node.parent
        return out[::-1]


def _greater(a: _Beam, b: _Beam) -> bool:
    """TF's `BeamComparer`."""
    return bool(a.new_total > b.new_total)


class _BeamSearch:
    """TF's `CTCBeamSearchDecoder` with its default scorer, for one batch element at a time."""

    def __init__(self, classes: int, beam_width: int, arithmetic: _Arithmetic) -> None:
        self.classes = classes
        self.blank = classes - 1
        self.beam_width = beam_width
        self.math = arithmetic
        self.leaves = TopN(beam_width, _greater)
        self.reset()

    def reset(self) -> None:
        self.leaves.reset()
        root = _Beam(None, -1, self.math.neg_inf)
        root.new_total = self.math.cast(0.0)
        root.new_blank = self.math.cast(0.0)
        self.leaves.push(root)

    def _candidate(self, total: Any) -> bool:
        return bool(
            total > _NEG_INF and (self.leaves.size() < self.beam_width or total > self.leaves.peek_bottom().new_total)
        )

    def step(self, row: list) -> None:
        m = self.math
        max_coeff = max(row) if not any(v != v for v in row) else m.cast(math.nan)
        total = m.cast(0.0)
        for value in row:
            total = total + m.exp(value - max_coeff)
        norm = max_coeff + m.log(total)
        branches = self.leaves.extract()
        self.leaves.reset()
        for b in branches:
            b.old_total, b.old_blank, b.old_label = b.new_total, b.new_blank, b.new_label
        for b in branches:
            parent = b.parent
            if parent is not None:
                if parent.active():
                    previous = parent.old_blank if b.label == parent.label else parent.old_total
                    b.new_label = m.log_sum_exp(b.new_label, previous)
                b.new_label = b.new_label + (row[b.label] - norm)
            b.new_blank = b.old_total + row[self.blank] - norm
            b.new_total = m.log_sum_exp(b.new_blank, b.new_label)
            self.leaves.push(b)
        for b in branches:
            if not self._candidate(b.old_total):
                continue
            for label in range(self.classes - 1):
                c = b.child(label, m.neg_inf)
                if c.active():
                    continue
                c.new_blank = m.neg_inf
                previous = b.old_blank if label == b.label else b.old_total
                c.new_label = row[label] - norm + previous
                c.new_total = c.new_label
                if self._candidate(c.new_total):
                    if self.leaves.size() == self.beam_width:
                        bottom = self.leaves.peek_bottom()
                        bottom.new_total = bottom.new_blank = bottom.new_label = m.neg_inf
                    self.leaves.push(c)
                else:
                    c.old_total = c.old_blank = c.old_label = m.neg_inf
                    c.new_total = c.new_blank = c.new_label = m.neg_inf

    def top_paths(self, n: int, op_name: str) -> tuple[list[list[int]], list]:
        if n > self.beam_width:
            raise errors.invalid_argument("requested more paths than the beam width.", op_name)
        if n > self.leaves.size():
            raise errors.invalid_argument("Less leaves in the beam search than requested.", op_name)
        best = TopN(n, _greater)
        for entry in self.leaves.unsorted():
            best.push(entry)
        chosen = best.extract()[:n]
        return [entry.labels() for entry in chosen], [entry.new_total for entry in chosen]


def _attr_minimum(value: int, name: str, op_name: str) -> None:
    if value < 1:
        message = f"Value for attr '{name}' of {value} must be at least minimum 1\n\t; NodeDef: {{{{node {op_name}}}}}"
        raise static_error(message, op_name)


@table.export(
    "nn.ctc_beam_search_decoder",
    gradient="none",
    dtypes="float32, float64",
    note="runs on the host (values needed: a tapeshim.function runs eagerly); TF's CPU kernel's steps, "
    "precision and beam order (ties included)",
)
def ctc_beam_search_decoder(
    inputs: TensorLike, sequence_length: TensorLike, beam_width: int = 100, top_paths: int = 1
) -> tuple[list[SparseTensor], Tensor]:
    """Beam search CTC decoding, as `tf.nn.ctc_beam_search_decoder` (TF 2's, which never merges repeats).

    The last class is the blank. Each step extends the `beam_width` most probable prefixes (by the total
    probability of the alignments that collapse to them); blanks end a repeated label, as in CTC.

    Args:
      inputs: the logits, `[max_time, batch_size, num_classes]` float32 or float64.
      sequence_length: int32 `[batch_size]` lengths (at most `max_time`).
      beam_width: the number of prefixes kept at each step (at least 1).
      top_paths: the number of decodings returned (at least 1, at most `beam_width`).

    Returns:
      `(decoded, log_probabilities)`: a list of `top_paths` SparseTensors (int64 `[batch_size, max_length]`,
      the j-th most probable decoding of each sequence) and the `[batch_size, top_paths]` log probabilities.

    Raises:
      TypeError: for a `beam_width` or `top_paths` that is not an int.
      InvalidArgumentError: for bad ranks or dtypes, empty inputs, a width or count under 1, more paths than
        the beam width, or fewer prefixes than `top_paths` (a short sequence).
      FailedPreconditionError: for lengths longer than `max_time` or a batch size that disagrees.
    """
    op_name = "CTCBeamSearchDecoder"
    width = _attr_int(beam_width, "beam_width")
    paths_wanted = _attr_int(top_paths, "top_paths")
    _attr_minimum(width, "beam_width", op_name)
    _attr_minimum(paths_wanted, "top_paths", op_name)
    x, lengths = _validated(inputs, sequence_length, op_name)
    _, batch, classes = x.shape
    arithmetic = _Arithmetic(x.dtype.type)
    search = _BeamSearch(classes, width, arithmetic)
    scores = np.zeros([batch, paths_wanted], x.dtype)
    paths = []
    with np.errstate(all="ignore"):
        for b in range(batch):
            for t in range(int(lengths[b])):
                search.step([arithmetic.cast(v) for v in x[t, b].tolist()])
            best, log_probs = search.top_paths(paths_wanted, op_name)
            search.reset()
            paths.append(best)
            scores[b] = log_probs
    return _decoded(paths, batch), constant(scores)


# -- unique labels --------------------------------------------------------------------------------------------
def _unique_labels(labels: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Each row's distinct values in order of first appearance (padded with 0) and each element's index into
    them (TF's `Unique` per row; NaNs are all distinct, as in TF's hash map)."""
    width = labels.shape[1]
    equal = labels[:, :, None] == labels[:, None, :]
    earlier = jnp.tril(jnp.ones((width, width), bool), -1)
    first = ~jnp.any(equal & earlier[None], axis=2)
    rank = jnp.cumsum(first, axis=1) - 1
    own = jnp.arange(width)[None, :]
    first_match = jnp.where(jnp.any(equal, axis=2), jnp.argmax(equal, axis=2), own)  # (a NaN matches nothing)
    idx = jnp.take_along_axis(rank, first_match, axis=1).astype(jnp.int32)
    slots = jnp.where(first, rank, width)
    rows = jnp.arange(labels.shape[0])[:, None]
    unique = jnp.zeros_like(labels).at[rows, slots].set(labels, mode="drop")
    return unique, idx


_unique_labels_op = OpDef("CTCUniqueLabels", _unique_labels, False)


@table.export("nn.ctc_unique_labels", gradient="-", dtypes="integer, floating, bool", op=_unique_labels_op)
def ctc_unique_labels(labels: TensorLike, name: str | None = None) -> list[Tensor]:
    """Each row's distinct labels and the index of each label among them, as `tf.nn.ctc_unique_labels`.

    For `[[3, 4, 4, 3]]`: `[[3, 4, 0, 0]]` (distinct labels in order of appearance, padded with 0) and
    `[[0, 1, 1, 0]]`.

    Args:
      labels: a `[batch_size, max_label_length]` tensor of labels.
      name: ignored.

    Returns:
      `[unique, indices]`: int64 and int32 tensors of `labels`' shape (each `[0]` for an empty batch, as
      TF's `map_fn`).

    Raises:
      InvalidArgumentError: for labels that are not a matrix (each row must be a vector).
      UnimplementedError: for string labels (the int64 cast).
    """
    x = convert_to_tensor(labels)
    if x.dtype is dtypes.string:
        raise errors.UnimplementedError(None, None, "Cast string to int64 is not supported [Op:Cast]")
    shape = tuple(int(d) for d in x._shape)
    if len(shape) == 0:
        raise ValueError("elems must be a 1+ dimensional Tensor, not a scalar")
    if len(shape) != 2:
        raise static_error("unique expects a 1D vector.", "Unique")
    if shape[0] == 0:
        return [constant(np.zeros([0], np.int64)), constant(np.zeros([0], np.int32))]
    if shape[1] == 0:
        return [constant(np.zeros(shape, np.int64)), constant(np.zeros(shape, np.int32))]
    unique, idx = apply(_unique_labels_op, (x,))
    return [math_ops.cast(unique, dtypes.int64), idx]
