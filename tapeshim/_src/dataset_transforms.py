"""`tf.data.Dataset` transformations beyond the core (`dataset.py`): a mixin of `Dataset`.

concatenate, flat_map, interleave, padded_batch, window, shard, take_while, scan,
unique, group_by_window, bucket_by_sequence_length, apply, with_options, and the
static constructors counter, sample_from_datasets and choose_from_datasets. Each
follows TF's order of elements (interleave's cycle, group_by_window's flush by key)
and its cardinality rules.
"""

from __future__ import annotations

import itertools
import logging
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, SupportsInt

import numpy as np

from tapeshim._src import dtypes, errors, nest
from tapeshim._src.dataset_elements import _call, _host_tensor, _LazySpec, _spec, _to_tensors
from tapeshim._src.dataset_options import Options
from tapeshim._src.ops import random_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.typing_aliases import DTypeLike

if TYPE_CHECKING:
    from tapeshim._src.dataset import Dataset

INFINITE = -1
UNKNOWN = -2


def _dataset_class() -> Any:
    from tapeshim._src.dataset import Dataset  # import cycle: dataset <-> dataset_transforms

    return Dataset


def _common_spec(a: Any, b: Any) -> Any:
    """The most specific spec compatible with both (TF's concatenate rule), or TypeError."""

    def merge(x: TensorSpec, y: TensorSpec) -> TensorSpec:
        if x.dtype != y.dtype or x.shape.rank != y.shape.rank:
            raise TypeError
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


def _as_int64(value: Any, what: str) -> int:
    tensor = convert_to_tensor(value)
    if tensor.dtype != dtypes.int64 or tensor._shape:
        raise ValueError(f"`{what}` must return a single tf.int64 tensor, got {tensor.dtype.name} {tensor.shape}.")
    return int(tensor)


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


class DatasetTransforms:
    """The transformations of `tf.data.Dataset` not in `dataset.py` (mixed into `Dataset`)."""

    _cardinality: int
    _options: Any = None
    _map_parts: Any = None

    if TYPE_CHECKING:  # what `Dataset` provides
        _element_spec: Any

        @property
        def element_spec(self) -> Any: ...

        def _elements(self) -> Iterator[Any]: ...

        def _through(
            self,
            transform: Callable[[Callable[[], Iterator[Any]]], Iterator[Any]],
            cardinality: int,
            element_spec: Any = None,
        ) -> Dataset: ...

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
            fills = [
                np.asarray(convert_to_tensor(v).numpy()) if hasattr(v, "numpy") else v
                for v in _flatten_up_to(spec, padding_values)
            ]

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

    def group_by_window(
        self,
        key_func: Callable[..., Any],
        reduce_func: Callable[[Any, Any], Any],
        window_size: SupportsInt | None = None,
        window_size_func: Callable[[Any], Any] | None = None,
        name: str | None = None,
    ) -> Any:
        """Groups elements by an int64 key into windows, reduces each window (a dataset) to a dataset.

        A window is reduced when it reaches its size; at the end the unfinished windows
        are reduced in increasing key order, as TF.

        Raises:
          ValueError: unless exactly one of `window_size` and `window_size_func` is given.
        """
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be specified.")

        def size_of(key: Any) -> int:
            if window_size is not None:
                return int(window_size)
            assert window_size_func is not None, "exactly one of the two is given (checked above)"
            return _as_int64(window_size_func(key), "window_size_func")

        # (a spec read off a mapped dataset's first element stays one: `padded_batch` pads a window to its longest)
        spec = self._element_spec if isinstance(self._element_spec, (_LazySpec, _Deferred)) else self.element_spec
        dataset_class = _dataset_class()

        def as_dataset(items: list) -> Any:
            return dataset_class(lambda: iter(items), len(items), spec)

        def iterate() -> Iterator[Any]:
            groups: dict[int, list] = {}
            for element in self._elements():
                key = _as_int64(_call(key_func, element), "key_func")
                group = groups.setdefault(key, [])
                group.append(element)
                limit = size_of(constant(key, dtypes.int64))
                if limit <= 0:
                    raise errors.invalid_argument(
                        f"Window size must be greater than zero, but got {limit}.", "GroupByWindowDataset"
                    )
                if len(group) >= limit:
                    del groups[key]
                    yield from reduce_func(constant(key, dtypes.int64), as_dataset(group))._elements()
            for key in sorted(groups):
                yield from reduce_func(constant(key, dtypes.int64), as_dataset(groups[key]))._elements()

        def first_spec() -> Any:
            for element in self._elements():
                key = constant(_as_int64(_call(key_func, element), "key_func"), dtypes.int64)
                return reduce_func(key, as_dataset([element])).element_spec
            return None

        return dataset_class(iterate, UNKNOWN, _Deferred(first_spec))

    def bucket_by_sequence_length(
        self,
        element_length_func: Callable[..., Any],
        bucket_boundaries: Any,
        bucket_batch_sizes: Any,
        padded_shapes: Any = None,
        padding_values: Any = None,
        pad_to_bucket_boundary: bool = False,
        no_padding: bool = False,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Any:
        """Batches elements of similar length together, padded per batch (TF's bucketing).

        Raises:
          ValueError: if `bucket_batch_sizes` does not have one more entry than `bucket_boundaries`.
        """
        boundaries = [int(b) for b in bucket_boundaries]
        sizes = [int(b) for b in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError("len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1")
        lows, highs = [0] + boundaries, boundaries + [np.iinfo(np.int64).max]

        def key_func(*element: Any) -> Any:
            length = int(element_length_func(*element))
            matches = [i for i, (lo, hi) in enumerate(zip(lows, highs)) if lo <= length < hi]
            return constant(matches[0] if matches else len(sizes) - 1, dtypes.int64)

        def reduce_func(bucket: Any, grouped: Any) -> Any:
            bucket_id = int(bucket)
            if no_padding:
                return grouped.batch(sizes[bucket_id], drop_remainder=drop_remainder)
            shapes = padded_shapes
            if pad_to_bucket_boundary:
                if bucket_id >= len(sizes) - 1:
                    raise errors.invalid_argument(
                        "When pad_to_bucket_boundary=True, elements must have length < max(bucket_boundaries).",
                        "Assert",
                    )
                fill = boundaries[bucket_id] - 1
                base = grouped.element_spec if padded_shapes is None else padded_shapes
                shapes = nest.map_structure(
                    lambda s: TensorShape(
                        [
                            fill if d is None else d
                            for d in (s.shape if isinstance(s, TensorSpec) else TensorShape(s)).as_list()
                        ]
                    ),
                    base,
                )
            return grouped.padded_batch(sizes[bucket_id], shapes, padding_values, drop_remainder=drop_remainder)

        def size_func(bucket: Any) -> Any:
            return constant(sizes[int(bucket)], dtypes.int64)

        grouped = self.group_by_window(lambda *e: key_func(*e), reduce_func, window_size_func=size_func)
        spec = self.element_spec
        out_spec = nest.map_structure(
            lambda s: TensorSpec([None] + ([None] * s.shape.rank if not no_padding else s.shape.as_list()), s.dtype),
            spec,
        )
        if padded_shapes is not None and not pad_to_bucket_boundary and not no_padding:
            out_spec = nest.map_structure(
                lambda s, p: TensorSpec([None, *TensorShape(p).as_list()], s.dtype), spec, padded_shapes
            )
        grouped._element_spec = out_spec
        return grouped

    def rejection_resample(
        self,
        class_func: Callable[..., Any],
        target_dist: Any,
        initial_dist: Any = None,
        seed: SupportsInt | None = None,
        name: str | None = None,
    ) -> Any:
        """`(class, element)` pairs whose classes follow `target_dist`, by rejection.

        Each element of class `c` is kept with probability `(t_c / p_c) / max_k(t_k / p_k)`,
        `p` being `initial_dist` or, when None, the class frequencies seen so far. The kept
        classes follow `target_dist` as TF's; TF also mixes in unfiltered elements early on
        to reject fewer, so it keeps more elements than this does, and not the same ones.
        """
        target = np.asarray(convert_to_tensor(target_dist).numpy(), np.float64).reshape(-1)
        initial = (
            None
            if initial_dist is None
            else np.asarray(convert_to_tensor(initial_dist).numpy(), np.float64).reshape(-1)
        )
        base = int(np.asarray(_seed_key(seed))[-1])
        passes = itertools.count()

        def iterate() -> Iterator[Any]:
            rng = np.random.default_rng([base, next(passes)])
            counts = np.zeros(len(target))
            for element in self._elements():
                label = convert_to_tensor(_call(class_func, element))
                if not label.dtype.is_integer or label._shape:
                    raise ValueError("`class_func` must return a scalar integer tensor.")
                c = int(label)
                if not 0 <= c < len(target):
                    raise errors.invalid_argument(
                        f"class {c} is outside the target distribution's {len(target)} classes", "IteratorGetNext"
                    )
                counts[c] += 1
                probs = counts / counts.sum() if initial is None else initial
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(probs > 0, target / probs, 0.0)
                if rng.random() < ratio[c] / ratio.max():
                    yield label, element

        def first_spec() -> Any:
            for element in self._elements():
                return (TensorSpec([], convert_to_tensor(_call(class_func, element)).dtype), self.element_spec)
            return None

        return _dataset_class()(iterate, UNKNOWN, _Deferred(first_spec))

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


def _seed_key(seed: Any) -> Any:
    return random_ops._next_key(seed)


class _Deferred:
    """An element spec computed when first asked (from the first element)."""

    def __init__(self, compute: Callable[[], Any]) -> None:
        self._compute = compute
        self._value: Any = None
        self._done = False

    def resolve(self) -> Any:
        if not self._done:
            self._value, self._done = self._compute(), True
        return self._value


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
