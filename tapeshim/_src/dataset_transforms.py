"""`tf.data.Dataset` transformations beyond the core (`dataset.py`): a mixin of `Dataset`.

concatenate, flat_map, interleave, padded_batch, window, shard, take_while, scan,
unique, apply, with_options, and the static constructors counter, sample_from_datasets
and choose_from_datasets (grouping and resampling: its base, `dataset_grouping.py`).
Each follows TF's order of elements (interleave's cycle) and its cardinality rules.
"""

from __future__ import annotations

import itertools
import logging
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, SupportsInt

import numpy as np

from tapeshim._src import dtypes, errors, nest
from tapeshim._src.dataset_elements import _call, _host_tensor, _LazySpec, _spec, _to_tensors
from tapeshim._src.dataset_grouping import (
    INFINITE,
    UNKNOWN,
    DatasetGrouping,
    _dataset_class,
    _Deferred,
    _seed_key,
)
from tapeshim._src.dataset_options import Options
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.typing_aliases import DTypeLike

if TYPE_CHECKING:
    from tapeshim._src.dataset import Dataset


def _common_spec(a: Any, b: Any) -> Any:
    """The most specific spec compatible with both (TF's concatenate rule), or TypeError."""

    def merge(x: Any, y: Any) -> Any:
        if type(x) is not type(y) or x.dtype != y.dtype or x.shape.rank != y.shape.rank:
            raise TypeError
        if not isinstance(x, TensorSpec):  # a RaggedTensorSpec
            try:
                return x.most_specific_compatible_type(y)
            except (AttributeError, ValueError):
                raise TypeError from None
        return TensorSpec(x.shape.most_specific_compatible_shape(y.shape), x.dtype)

    try:
        nest.assert_same_structure(a, b)
        return nest.map_structure(merge, a, b)
    except (TypeError, ValueError):
        raise TypeError(f"Incompatible dataset elements:\n  {a} vs. \n  {b}") from None


def _as_bool(value: Any, what: str) -> bool:
    tensor = convert_to_tensor(value)
    if not tensor.dtype.is_bool or tensor._shape:
        raise ValueError(f"Invalid `{what}`. `{what}` must return a scalar boolean `tf.Tensor`.")
    return bool(tensor)


def _flatten_up_to(spec: Any, value: Any) -> list:
    """The parts of `value` at the positions of `spec`'s TensorSpec leaves (shapes given as lists stay whole)."""
    if isinstance(spec, dict):
        return [part for key in spec for part in _flatten_up_to(spec[key], value[key])]
    if isinstance(spec, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            return [value] * len(nest.flatten(spec))  # one value for every component
        return [part for s, v in zip(spec, value) for part in _flatten_up_to(s, v)]
    return [value]


def _padded_shape(spec_shape: TensorShape, padded: Any) -> list:
    if padded is None:
        return spec_shape.as_list()
    if isinstance(padded, (Tensor, np.ndarray)) or hasattr(padded, "numpy"):
        values = np.asarray(convert_to_tensor(padded).numpy()).reshape(-1).tolist()
        return [None if v == -1 else int(v) for v in values]
    dims = TensorShape(padded).as_list()
    return dims


def _pad_one(arrays: list[np.ndarray], target: list, fill: Any, dtype: Any) -> np.ndarray:
    rank = len(target)
    sizes = [max(a.shape[d] for a in arrays) if target[d] is None else target[d] for d in range(rank)]
    out = np.full([len(arrays)] + sizes, fill, dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
    for i, a in enumerate(arrays):
        if any(a.shape[d] > sizes[d] for d in range(rank)):
            raise errors.DataLossError(
                None, None, "Attempted to pad to a smaller size than the input element. [Op:IteratorGetNext]"
            )
        out[(i,) + tuple(slice(0, s) for s in a.shape)] = a
    return out


class DatasetTransforms(DatasetGrouping):
    """The transformations of `tf.data.Dataset` not in `dataset.py` (mixed into `Dataset`)."""

    _cardinality: int
    _options: Any = None
    _map_parts: Any = None

    # -- combining ------------------------------------------------------------------------------------
    def concatenate(self, dataset: Dataset, name: str | None = None) -> Any:
        """This dataset's elements followed by `dataset`'s (same structure and dtypes).

        Raises:
          TypeError: if the element structures or dtypes differ.
        """
        spec = _common_spec(self.element_spec, dataset.element_spec)
        counts = (self._cardinality, dataset._cardinality)
        card = INFINITE if INFINITE in counts else UNKNOWN if UNKNOWN in counts else sum(counts)
        return _dataset_class()(lambda: itertools.chain(self._elements(), dataset._elements()), card, spec)

    def flat_map(self, map_func: Callable[..., Any], name: str | None = None) -> Any:
        """Maps each element to a dataset and flattens the results in order."""

        def iterate() -> Iterator[Any]:
            for element in self._elements():
                yield from _call(map_func, element)._elements()

        return _dataset_class()(iterate, UNKNOWN, _Deferred(lambda: self._first_inner_spec(map_func)))

    def _first_inner_spec(self, map_func: Callable[..., Any]) -> Any:
        for element in self._elements():
            return _call(map_func, element).element_spec
        return None

    def interleave(
        self,
        map_func: Callable[..., Any],
        cycle_length: SupportsInt | None = None,
        block_length: SupportsInt | None = None,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> Any:
        """Interleaves the datasets `map_func` makes, `block_length` elements from each in a cycle.

        The order is TF's (deterministic) order: `cycle_length` datasets are open at once,
        a finished one is replaced in its slot by the next input element's dataset.
        `cycle_length` None or AUTOTUNE means the number of CPU cores, as TF.
        `num_parallel_calls` is accepted; elements are produced in the caller's thread
        (put `prefetch` after it to produce them ahead in a background thread).

        Raises:
          InvalidArgumentError: for a non-positive `cycle_length` or `block_length`.
        """
        cycle = -1 if cycle_length is None else int(cycle_length)
        block = 1 if block_length is None else int(block_length)
        if cycle == -1:
            cycle = os.cpu_count() or 1
        if cycle <= 0:
            raise errors.invalid_argument("cycle_length must be greater than zero.", "InterleaveDataset")
        if block <= 0:
            raise errors.invalid_argument("block_length must be greater than zero.", "InterleaveDataset")

        def iterate() -> Iterator[Any]:
            source = self._elements()
            slots: list = [None] * cycle
            open_count, index, taken, end_of_input = 0, 0, 0, False
            while not end_of_input or open_count > 0:
                if slots[index] is not None:
                    try:
                        element = next(slots[index])
                    except StopIteration:
                        slots[index] = None
                        open_count -= 1
                        index, taken = (index + 1) % cycle, 0
                        continue
                    taken += 1
                    if taken == block:
                        index, taken = (index + 1) % cycle, 0
                    yield element
                elif not end_of_input:
                    try:
                        element = next(source)
                    except StopIteration:
                        end_of_input = True
                        continue
                    slots[index] = _call(map_func, element)._elements()
                    open_count += 1
                else:
                    index, taken = (index + 1) % cycle, 0

        return _dataset_class()(iterate, UNKNOWN, _Deferred(lambda: self._first_inner_spec(map_func)))

    @staticmethod
    def sample_from_datasets(
        datasets: Sequence[Dataset],
        weights: Any = None,
        seed: SupportsInt | None = None,
        stop_on_empty_dataset: bool = False,
        rerandomize_each_iteration: bool | None = None,
    ) -> Any:
        """Elements drawn at random from `datasets` with probabilities `weights` (uniform by default)."""
        count = len(datasets)
        probs = (
            np.full(count, 1.0 / count)
            if weights is None
            else np.asarray(convert_to_tensor(weights).numpy() if hasattr(weights, "numpy") else weights, np.float64)
        )
        probs = probs / probs.sum()
        base = int(np.asarray(_seed_key(seed))[-1])
        passes = itertools.count()

        def iterate() -> Iterator[Any]:
            rng = np.random.default_rng([base, next(passes)])
            sources = [d._elements() for d in datasets]
            live = probs.copy()
            while live.sum() > 0:
                pick = int(rng.choice(count, p=live / live.sum()))
                try:
                    yield next(sources[pick])
                except StopIteration:
                    if stop_on_empty_dataset:
                        return
                    live[pick] = 0.0

        spec = datasets[0].element_spec
        for other in datasets[1:]:
            spec = _common_spec(spec, other.element_spec)
        return _dataset_class()(iterate, UNKNOWN, spec)

    @staticmethod
    def choose_from_datasets(
        datasets: Sequence[Dataset], choice_dataset: Dataset, stop_on_empty_dataset: bool = True
    ) -> Any:
        """The element of `datasets[i]` for each int64 `i` of `choice_dataset`.

        Raises:
          TypeError: if `choice_dataset` is not a dataset of int64 scalars.
          InvalidArgumentError: (when iterating) for an index outside `datasets`.
        """
        spec = choice_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.int64 or spec.shape.rank != 0:
            raise TypeError(
                f"Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of type `tf.int64`. Got {spec}."
            )

        def iterate() -> Iterator[Any]:
            sources = [d._elements() for d in datasets]
            empty = [False] * len(sources)
            for choice in choice_dataset._elements():
                i = int(choice)
                if not 0 <= i < len(sources):
                    raise errors.invalid_argument(
                        f"Selector index out of range: {i} >= {len(sources)}", "IteratorGetNext"
                    )
                if empty[i]:
                    continue
                try:
                    yield next(sources[i])
                except StopIteration:
                    if stop_on_empty_dataset:
                        return
                    empty[i] = True

        merged = datasets[0].element_spec
        for other in datasets[1:]:
            merged = _common_spec(merged, other.element_spec)
        return _dataset_class()(iterate, UNKNOWN, merged)

    @staticmethod
    def counter(start: int = 0, step: int = 1, dtype: DTypeLike = dtypes.int64, name: str | None = None) -> Any:
        """`start, start + step, ...` forever."""
        out = dtypes.as_dtype(dtype)
        return _dataset_class()(
            lambda: (constant(v, out) for v in itertools.count(int(start), int(step))), INFINITE, TensorSpec([], out)
        )

    # -- batching -------------------------------------------------------------------------------------
    def padded_batch(
        self,
        batch_size: int,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Any:
        """Batches elements, padding each component to `padded_shapes` (unknown dims: the batch's longest).

        Raises:
          InvalidArgumentError: for a non-positive `batch_size`, or (when iterating) an element larger than
            its padded shape.
          ValueError: if `padded_shapes` does not fit the element shapes.
        """
        size = int(batch_size)
        if size <= 0:
            raise errors.invalid_argument("batch_size must be greater than zero.", "PaddedBatchDatasetV2")
        spec = self.element_spec
        flat_specs = nest.flatten(spec)
        for s in flat_specs:
            if not isinstance(s, TensorSpec):
                raise TypeError(
                    "`padded_batch` is only supported for datasets that produce tensor elements but type spec of "
                    f"elements in the input dataset is not a subclass of TensorSpec: `{s}`."
                )
        shapes = [None] * len(flat_specs) if padded_shapes is None else _flatten_up_to(spec, padded_shapes)
        # A mapped dataset's spec is read off its first element (TF's traced map knows which dims vary):
        # without padded_shapes, every dim of such a spec is padded to the batch's longest.
        guessed = isinstance(self._element_spec, (_LazySpec, _Deferred))
        targets = []
        for component, (s, p) in enumerate(zip(flat_specs, shapes)):
            if p is None and s.shape.rank is None:
                raise ValueError(
                    f"You must provide `padded_shapes` argument because component {component} has unknown rank."
                )
            target = [None] * s.shape.rank if guessed and p is None else _padded_shape(s.shape, p)
            if s.shape.rank is not None and len(target) != s.shape.rank:
                raise ValueError(
                    f"The padded shape {TensorShape(target)} is not compatible with the shape "
                    f"{s.shape} of the corresponding input component."
                )
            targets.append(target)
        fills: list[Any]
        if padding_values is None:
            fills = [b"" if s.dtype == dtypes.string else 0 for s in flat_specs]
        else:
            # (as tensors: a Python string pads as bytes, as TF's)
            fills = [np.asarray(convert_to_tensor(v).numpy()) for v in _flatten_up_to(spec, padding_values)]

        def iterate() -> Iterator[Any]:
            source = self._elements()
            while True:
                chunk = list(itertools.islice(source, size))
                if not chunk or (drop_remainder and len(chunk) < size):
                    return
                columns = zip(*[nest.flatten(e) for e in chunk])
                leaves = []
                for column, target, fill, s in zip(columns, targets, fills, flat_specs):
                    arrays = [np.asarray(t.numpy()) for t in column]
                    leaves.append(_host_tensor(_pad_one(arrays, target, fill, s.dtype), s.dtype))
                yield nest.pack_sequence_as(spec, leaves)

        card = self._cardinality
        if card >= 0:
            card = card // size if drop_remainder else -(-card // size)
        out_spec = nest.pack_sequence_as(
            spec, [TensorSpec([size if drop_remainder else None] + t, s.dtype) for t, s in zip(targets, flat_specs)]
        )
        return _dataset_class()(iterate, card, out_spec)

    def window(
        self,
        size: int,
        shift: SupportsInt | None = None,
        stride: int = 1,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Any:
        """Windows of `size` elements (every `stride`-th), starting every `shift` elements, as nested datasets.

        Each element is the element structure with a `Dataset` in place of each tensor.

        Raises:
          InvalidArgumentError: for a non-positive size, shift or stride.
        """
        size, stride = int(size), int(stride)
        shift = size if shift is None else int(shift)
        for value, what in ((size, "size"), (shift, "shift"), (stride, "stride")):
            if value <= 0:
                raise errors.invalid_argument(
                    f"Window {what} must be greater than zero, but got {value}.", "WindowDataset"
                )
        spec = self.element_spec
        dataset_class = _dataset_class()

        def as_datasets(window: list) -> Any:
            flat = [list(column) for column in zip(*[nest.flatten(e) for e in window])]
            parts = [dataset_class(lambda c=c: iter(c), len(c), s) for c, s in zip(flat, nest.flatten(spec))]
            return nest.pack_sequence_as(spec, parts)

        def iterate() -> Iterator[Any]:
            source = self._elements()
            buffer: list = []
            offset = 0  # index of buffer[0] in the source
            exhausted = False
            for start in itertools.count(0, shift):
                wanted = start + (size - 1) * stride
                while not exhausted and offset + len(buffer) <= wanted:
                    try:
                        buffer.append(next(source))
                    except StopIteration:
                        exhausted = True
                if start >= offset + len(buffer):
                    return
                window = [buffer[i - offset] for i in range(start, wanted + 1, stride) if i - offset < len(buffer)]
                if drop_remainder and len(window) < size:
                    return
                yield as_datasets(window)
                drop = min(shift, len(buffer)) if start + shift > offset else 0
                del buffer[:drop]
                offset += drop

        card = self._cardinality
        if card >= 0:
            if drop_remainder:
                span = (size - 1) * stride + 1
                card = 0 if card < span else (card - span) // shift + 1
            else:
                card = -(-card // shift)
        out_spec = nest.map_structure(lambda s: _DatasetSpec(s), spec)
        return dataset_class(iterate, card, out_spec)

    # -- selecting ------------------------------------------------------------------------------------
    def shard(self, num_shards: SupportsInt, index: SupportsInt, name: str | None = None) -> Any:
        """Every `num_shards`-th element, starting at `index`.

        Raises:
          InvalidArgumentError: for a non-positive `num_shards` or an `index` outside [0, num_shards).
        """
        n, i = int(num_shards), int(index)
        if n <= 0:
            raise errors.invalid_argument(
                f"Number of shards must be greater than zero (currently num_shards = {n}).", "ShardDataset"
            )
        if not 0 <= i < n:
            raise errors.invalid_argument(
                f"Index must be between 0 and {n - 1} (currently index = {i}).", "ShardDataset"
            )
        card = self._cardinality
        if card >= 0:
            card = card // n + (1 if i < card % n else 0)
        return self._through(lambda make_source: itertools.islice(make_source(), i, None, n), card)

    def take_while(self, predicate: Callable[..., Any], name: str | None = None) -> Any:
        """Elements up to (not including) the first for which `predicate` is false."""

        def iterate() -> Iterator[Any]:
            for element in self._elements():
                if not _as_bool(_call(predicate, element), "predicate"):
                    return
                yield element

        return _dataset_class()(iterate, UNKNOWN, self.element_spec)

    def unique(self, name: str | None = None) -> Any:
        """The elements (int or string scalars) without repeats, in first-seen order.

        Raises:
          TypeError: for elements that are not single int32/int64/string tensors.
        """
        spec = self.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype not in (dtypes.int32, dtypes.int64, dtypes.string):
            raise TypeError(
                "`tf.data.Dataset.unique` does not support type "
                f"{spec.dtype if isinstance(spec, TensorSpec) else spec}."
            )

        def iterate() -> Iterator[Any]:
            seen: set = set()
            for element in self._elements():
                key = np.asarray(element.numpy()).tobytes() if element._shape else element.numpy()
                if key not in seen:
                    seen.add(key)
                    yield element

        return _dataset_class()(iterate, UNKNOWN, spec)

    def scan(self, initial_state: Any, scan_func: Callable[[Any, Any], Any], name: str | None = None) -> Any:
        """Maps with a state: `scan_func(state, element) -> (new_state, output)`."""

        def iterate() -> Iterator[Any]:
            state = nest.map_structure(convert_to_tensor, initial_state)
            for element in self._elements():
                args = (state,) + (element if isinstance(element, tuple) else (element,))
                state, output = scan_func(*args)
                state = nest.map_structure(convert_to_tensor, state)
                yield _to_tensors(output)

        def first_spec() -> Any:
            for element in iterate():
                return _spec(element)
            return None

        return _dataset_class()(iterate, self._cardinality, _Deferred(first_spec))

    def ignore_errors(self, log_warning: bool = False, name: str | None = None) -> Any:
        """The elements whose production raised no TF error (`tf.errors.OpError`), the failed ones dropped.

        Directly after `map`, a failing element is skipped and the pipeline goes on, as TF. After
        other stages, tapeshim's Python pipeline cannot resume the stage that failed: the dataset
        ends at the first error.
        """
        parts = getattr(self, "_map_parts", None)

        def iterate() -> Iterator[Any]:
            if parts is not None:
                source_dataset, map_func = parts
                for element in source_dataset._elements():
                    try:
                        yield _to_tensors(_call(map_func, element))
                    except errors.OpError as exc:
                        if log_warning:
                            logging.getLogger("tapeshim").warning("Dataset.ignore_errors: dropped an element: %s", exc)
                return
            source = self._elements()
            while True:
                try:
                    element = next(source)
                except StopIteration:
                    return
                except errors.OpError as exc:
                    if log_warning:
                        logging.getLogger("tapeshim").warning("Dataset.ignore_errors: dropped an element: %s", exc)
                    continue
                yield element

        return _dataset_class()(iterate, UNKNOWN, self._element_spec)

    def _assert_cardinality(self, expected: int) -> Any:
        def iterate() -> Iterator[Any]:
            count = 0
            for element in self._elements():
                count += 1
                if count > expected:
                    raise errors.FailedPreconditionError(
                        None,
                        None,
                        f"Input dataset was expected to contain {expected} elements but contained at "
                        f"least {count} elements. [Op:IteratorGetNext]",
                    )
                yield element
            if count < expected:
                raise errors.FailedPreconditionError(
                    None,
                    None,
                    f"Input dataset was expected to contain {expected} elements but contained only "
                    f"{count} elements. [Op:IteratorGetNext]",
                )

        return _dataset_class()(iterate, expected, self._element_spec)

    @staticmethod
    def random(
        seed: SupportsInt | None = None, rerandomize_each_iteration: bool | None = None, name: str | None = None
    ) -> Any:
        """Random int64 scalars in [0, 2**32) forever (not TF's stream)."""
        base = int(np.asarray(_seed_key(seed))[-1])
        passes = itertools.count()

        def iterate() -> Iterator[Any]:
            rng = np.random.default_rng([base, next(passes) if rerandomize_each_iteration else 0])
            while True:
                yield constant(int(rng.integers(0, 2**32)), dtypes.int64)

        return _dataset_class()(iterate, INFINITE, TensorSpec([], dtypes.int64))

    # -- misc -----------------------------------------------------------------------------------------
    def apply(self, transformation_func: Callable[[Any], Any]) -> Any:
        """`transformation_func(self)`.

        Raises:
          TypeError: if it does not return a dataset.
        """
        result = transformation_func(self)
        if not isinstance(result, _dataset_class()):
            raise TypeError(f"`transformation_func` must return a `tf.data.Dataset` object. Got {type(result)}.")
        return result

    def with_options(self, options: Options, name: str | None = None) -> Any:
        """The same dataset carrying `options` (merged with options set before)."""
        if not isinstance(options, Options):
            raise TypeError(f"`options` must be a `tf.data.Options`, got {type(options)}.")
        result = self._through(lambda make_source: make_source(), self._cardinality)
        result._options = options if self._options is None else self._options.merge(options)
        return result

    def options(self) -> Any:
        """The `tf.data.Options` set with `with_options` (defaults when none)."""
        return self._options if self._options is not None else Options()

    def get_single_element(self, name: str | None = None) -> Any:
        """The only element of a one-element dataset.

        Raises:
          InvalidArgumentError: if the dataset is empty or has more than one element.
        """
        source = self._elements()
        try:
            element = next(source)
        except StopIteration:
            raise errors.invalid_argument("Dataset was empty.", "DatasetToSingleElement") from None
        for _ in source:
            raise errors.invalid_argument("Dataset had more than one element.", "DatasetToSingleElement")
        return element


class _DatasetSpec:
    """The spec of a nested dataset (a `window` component), as `tf.data.DatasetSpec`."""

    def __init__(self, element_spec: Any) -> None:
        self.element_spec = element_spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _DatasetSpec) and other.element_spec == self.element_spec

    def __hash__(self) -> int:
        return hash(repr(self.element_spec))

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"
