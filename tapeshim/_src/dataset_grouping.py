"""`tf.data.Dataset`'s grouping and resampling transformations (a base of `DatasetTransforms`), and the helpers
the transformation modules share.

group_by_window (TF's flush by key), bucket_by_sequence_length and rejection_resample.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Iterator, SupportsInt

import numpy as np

from tapeshim._src import dtypes, errors, nest
from tapeshim._src.dataset_elements import _call, _LazySpec
from tapeshim._src.ops import random_ops
from tapeshim._src.shape import TensorShape
from tapeshim._src.tensor import constant, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec

if TYPE_CHECKING:
    from tapeshim._src.dataset import Dataset

INFINITE = -1
UNKNOWN = -2


def _dataset_class() -> Any:
    from tapeshim._src.dataset import Dataset  # import cycle: dataset <-> dataset_grouping

    return Dataset


def _as_int64(value: Any, what: str) -> int:
    tensor = convert_to_tensor(value)
    if tensor.dtype != dtypes.int64 or tensor._shape:
        raise ValueError(f"`{what}` must return a single tf.int64 tensor, got {tensor.dtype.name} {tensor.shape}.")
    return int(tensor)


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


class DatasetGrouping:
    """Grouping and resampling transformations of `tf.data.Dataset` (a base of `DatasetTransforms`)."""

    _cardinality: int

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
                # A spec read off a mapped dataset's first element knows no unknown dimension: its first (the
                # sequence's length, which the buckets measure) is taken as unknown, as TF's graph would give it.
                guessed = padded_shapes is None and isinstance(grouped._element_spec, (_LazySpec, _Deferred))

                def boundary_shape(s: Any) -> TensorShape:
                    dims = (s.shape if isinstance(s, TensorSpec) else TensorShape(s)).as_list()
                    if guessed and dims:
                        dims[0] = None
                    return TensorShape([fill if d is None else d for d in dims])

                shapes = nest.map_structure(boundary_shape, base)
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
