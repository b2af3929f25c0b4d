"""`tf.data.Dataset` for in-memory data: the subset custom training loops use.

Elements are nests of tapeshim tensors. Transformations are lazy Python
pipelines: `map` and `filter` run their function once per element (TF traces it
once into a graph, so Python side effects inside them run per element here).
"""

from __future__ import annotations

import itertools
import math
import queue
import threading
from typing import Any, Callable, Iterator, SupportsInt

import numpy as np

from tapeshim._src import dataset_ragged, dtypes, errors, nest
from tapeshim._src.dataset_elements import _call, _host_tensor, _LazySpec, _spec, _to_tensors
from tapeshim._src.dataset_iterator import OwnedIterator
from tapeshim._src.dataset_transforms import DatasetTransforms, _Deferred
from tapeshim._src.graph_calls import calls_as_graphs
from tapeshim._src.ops import array_ops, random_ops
from tapeshim._src.ragged_spec import RaggedTensorSpec
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.typing_aliases import DTypeLike

INFINITE = -1
UNKNOWN = -2


def _signature_from_types(types: Any, shapes: Any) -> Any:
    """`TensorSpec`s from `from_generator`'s `output_types` and `output_shapes` (unknown shapes when None)."""
    if isinstance(types, dict):
        return {k: _signature_from_types(types[k], None if shapes is None else shapes[k]) for k in types}
    if isinstance(types, (tuple, list)):
        shapes = [None] * len(types) if shapes is None else list(shapes)
        return tuple(_signature_from_types(t, s) for t, s in zip(types, shapes))
    return TensorSpec(shapes, types)


def _convert_to_spec(value: Any, spec: Any) -> Any:
    """One generated element as tensors of `spec`; TF's error when a shape does not fit."""
    if isinstance(spec, dict):
        return {k: _convert_to_spec(value[k], spec[k]) for k in spec}
    if isinstance(spec, tuple):
        return tuple(_convert_to_spec(v, s) for v, s in zip(value, spec))
    if isinstance(spec, RaggedTensorSpec):
        return dataset_ragged.convert_to_ragged_spec(value, spec)
    try:
        tensor = convert_to_tensor(value, dtype=spec.dtype)
    except (TypeError, ValueError) as exc:
        raise errors.invalid_argument(
            f"TypeError: `generator` yielded an element that did not match the expected structure or dtype: {exc}",
            "IteratorGetNext",
        ) from None
    if not spec.shape.is_compatible_with(tensor.shape):
        raise errors.invalid_argument(
            f"TypeError: `generator` yielded an element of shape {tensor.shape} where an element of shape "
            f"{spec.shape} was expected.",
            "IteratorGetNext",
        )
    return tensor


def _stack(*parts: Tensor) -> Tensor:
    """One batch: stacked on the host when every part is computed (one transfer, no per-size kernel)."""
    if all(p._value is not None for p in parts):
        return _host_tensor(np.stack([np.asarray(p._value) for p in parts]), parts[0]._dtype)
    return array_ops.stack(list(parts))


def _stack_rows(*rows: np.ndarray) -> np.ndarray:
    return np.stack(rows)


def _batch_of(chunk: list, stack: Callable[..., Any]) -> Any:
    """One batch of the elements in `chunk`; elements whose components differ in shape raise TF's error."""
    try:
        return nest.map_structure(stack, *chunk)
    except (ValueError, errors.InvalidArgumentError):
        _check_batchable(chunk)  # (TF's error where the shapes differ; any other error as it is)
        raise


def _check_batchable(chunk: list) -> None:
    for component, parts in enumerate(zip(*(nest.flatten(element) for element in chunk))):
        shapes = [tuple(p._shape) if isinstance(p, Tensor) else np.shape(p) for p in parts]
        for k, shape in enumerate(shapes[1:], start=1):
            if shape != shapes[0]:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Cannot batch tensors with different shapes in component {component}. First element had "
                    f"shape [{','.join(map(str, shapes[0]))}] and element {k} had shape [{','.join(map(str, shape))}].",
                ) from None


def _spec_batches(
    make_source: Callable[[], Iterator[Any]], size: int, drop_remainder: bool, spec: Any
) -> Iterator[Any]:
    """Batches of `size` elements, each component batched by its spec (`dataset_ragged.batch_component`)."""
    flat_specs = nest.flatten(spec)
    source = make_source()
    while True:
        chunk = list(itertools.islice(source, size))
        if not chunk or (drop_remainder and len(chunk) < size):
            return
        columns = list(zip(*[nest.flatten(element) for element in chunk]))
        try:
            leaves = [dataset_ragged.batch_component(list(c), s, _stack) for c, s in zip(columns, flat_specs)]
        except (ValueError, errors.InvalidArgumentError):
            # (TF's error for dense components of different shapes; a ragged component stands aside as a scalar)
            _check_batchable(
                [
                    [constant(0) if isinstance(s, RaggedTensorSpec) else p for p, s in zip(nest.flatten(e), flat_specs)]
                    for e in chunk
                ]
            )
            raise
        yield nest.pack_sequence_as(spec, leaves)


def _prefetching(make_source: Callable[[], Iterator[Any]], depth: int) -> Iterator[Any]:
    """The source's elements, produced up to `depth` ahead by a background thread.

    The thread makes the elements (their host-to-device copies included) while the
    caller computes; an error the source raises is raised here, at its place in the
    sequence. Leaving the loop early stops the thread.
    """
    buffer: queue.Queue = queue.Queue(depth)
    stop = threading.Event()

    def put(item: tuple) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for element in make_source():
                if not put(("element", element)):
                    return
            put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - raised in the consumer, where TF raises it
            put(("error", exc))

    producer = threading.Thread(target=produce, name="tapeshim-prefetch", daemon=True)
    producer.start()
    try:
        while True:
            kind, item = buffer.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()


class Dataset(DatasetTransforms):
    """A sequence of elements (nests of tensors), as `tf.data.Dataset`."""

    def __init__(
        self,
        make_iterator: Callable[[], Iterator[Any]] | None,
        cardinality: int,
        element_spec: Any,
        host_rows: tuple[Callable[[], Iterator[Any]], Any] | None = None,
    ) -> None:
        # `host_rows`: (a factory of elements as nests of numpy arrays, their dtypes). Stages that only
        # select, reorder or stack elements work on those; tensors are made (copied to the device) once
        # per element at the pipeline's end: one copy per batch, not per row.
        self._host_rows = host_rows
        self._source_arrays: tuple[Any, int] | None = None  # (from_tensor_slices's nest of host arrays, rows)
        if host_rows is not None:
            make_host, dtypes_of = host_rows

            def make_iterator() -> Iterator[Any]:
                for row in make_host():
                    yield nest.map_structure(_host_tensor, row, dtypes_of)

        assert make_iterator is not None, "a Dataset needs `make_iterator` or `host_rows`"
        self._make_iterator = make_iterator
        self._cardinality = cardinality
        self._element_spec = element_spec

    def __repr__(self) -> str:
        # (TF names the transformation's class, `<_BatchDataset element_spec=...>`; its spec is the same)
        return f"<Dataset element_spec={self.element_spec!r}>"

    def _through(
        self,
        transform: Callable[[Callable[[], Iterator[Any]]], Iterator[Any]],
        cardinality: int,
        element_spec: Any = None,
    ) -> "Dataset":
        """A stage that selects or reorders the source's elements: on host rows when the source has them.

        Args:
          transform: makes the stage's iterator from a factory of fresh source iterators.
          cardinality: the stage's cardinality.
          element_spec: the stage's element spec (the source's when None).
        """
        spec = self._element_spec if element_spec is None else element_spec
        if self._host_rows is not None:
            make_host, dtypes_of = self._host_rows
            return Dataset(None, cardinality, spec, (lambda: transform(make_host), dtypes_of))
        return Dataset(lambda: transform(self._elements), cardinality, spec)

    # -- sources ----------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> "Dataset":
        """One element per row of the tensors in `tensors` (a tensor, tuple or dict)."""
        converted = _to_tensors(tensors)
        leaves = nest.flatten(converted)
        if not leaves or any(not t.shape.rank for t in leaves):
            raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        sizes = {t.shape[0] for t in leaves}
        if len(sizes) != 1:
            first, other = sorted(sizes)[:2]
            raise ValueError(f"Dimensions {other} and {first} are not compatible")
        (size,) = sizes
        spec = nest.map_structure(dataset_ragged.sliced_spec, converted)
        if dataset_ragged.has_ragged(nest.map_structure(dataset_ragged.spec_of, converted)):
            # (RaggedTensor rows are sliced as RaggedTensors: a Tensor for ragged rank 1, as TF's)
            hosted = nest.map_structure(dataset_ragged.HostRows, converted)
            return Dataset(
                lambda: (nest.map_structure(lambda h, s, i=i: h.row(i, s), hosted, spec) for i in range(size)),
                size,
                spec,
            )

        hosts = nest.map_structure(lambda t: np.asarray(t.value), converted)  # rows are sliced on the host

        def rows() -> Iterator[Any]:
            for i in range(size):
                yield nest.map_structure(lambda host, i=i: host[i], hosts)

        spec = nest.map_structure(lambda t: TensorSpec(t.shape[1:], t.dtype), converted)
        dataset = Dataset(None, size, spec, (rows, nest.map_structure(lambda t: t._dtype, converted)))
        dataset._source_arrays = (hosts, size)
        return dataset

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> "Dataset":
        """A dataset of the one element `tensors`."""
        converted = _to_tensors(tensors)
        return Dataset(lambda: iter([converted]), 1, _spec(converted))

    @staticmethod
    def from_generator(
        generator: Callable[..., Any],
        output_types: Any = None,
        output_shapes: Any = None,
        args: Any = None,
        output_signature: Any = None,
        name: str | None = None,
    ) -> "Dataset":
        """The elements a Python generator yields, as `tf.data.Dataset.from_generator`.

        `generator(*args)` is called anew for every pass, each argument a NumPy value (a string as bytes, a
        Python int as int32), as TF passes them; each element is converted
        to the `output_signature` (or `output_types` and `output_shapes`). Iterated
        inside a `tapeshim.function`, the generator is pulled on every call.

        Raises:
          TypeError: neither `output_signature` nor `output_types` is given.
        """
        if output_signature is None:
            if output_types is None:
                raise TypeError(
                    "To specify the output signature you need to provide either the `output_signature` "
                    "argument or the `output_types` argument."
                )
            output_signature = _signature_from_types(output_types, output_shapes)
        # (as TF's: each argument becomes a tensor, and the generator gets its NumPy value: a str as bytes)
        call_args = tuple(convert_to_tensor(a).numpy() for a in args) if args is not None else ()

        def iterate() -> Iterator[Any]:
            for value in generator(*call_args):
                yield _convert_to_spec(value, output_signature)

        return Dataset(iterate, UNKNOWN, output_signature)

    @staticmethod
    def list_files(
        file_pattern: Any, shuffle: bool | None = None, seed: SupportsInt | None = None, name: str | None = None
    ) -> "Dataset":
        """The file names matching glob pattern(s), as strings (shuffled unless `shuffle=False`).

        Raises:
          InvalidArgumentError: if no file matches.
        """
        from tapeshim._src.dataset_sources import list_files  # import cycle: dataset <-> dataset_sources

        return list_files(file_pattern, shuffle=shuffle, seed=seed)

    @staticmethod
    def range(*args: int, output_type: DTypeLike = dtypes.int64, name: str | None = None) -> "Dataset":  # noqa: A003
        """Integers like Python's range, as int64 scalars."""
        values = range(*[int(a) for a in args])
        out = dtypes.as_dtype(output_type)
        return Dataset(lambda: (constant(v, out) for v in values), len(values), TensorSpec([], out))

    @staticmethod
    def zip(*datasets: Any, name: str | None = None) -> "Dataset":
        """Elements of several datasets side by side (a tuple or nest of datasets)."""
        structure = datasets[0] if len(datasets) == 1 else datasets
        flat = nest.flatten(structure)

        def iterate() -> Iterator[Any]:
            for parts in zip(*[d._elements() for d in flat]):
                yield nest.pack_sequence_as(structure, list(parts))

        counts = [d._cardinality for d in flat]
        finite = [c for c in counts if c >= 0]
        card = min(finite) if finite else (UNKNOWN if UNKNOWN in counts else INFINITE)
        if UNKNOWN in counts and finite:
            card = UNKNOWN
        return Dataset(iterate, card, nest.pack_sequence_as(structure, [d.element_spec for d in flat]))

    # -- transformations --------------------------------------------------
    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> "Dataset":
        """Stacks consecutive elements into batches of `batch_size` (the last may be smaller)."""
        size = int(batch_size)
        if size <= 0:
            raise errors.invalid_argument("batch_size must be greater than zero.", "BatchDatasetV2")

        def batches(make_source: Callable[[], Iterator[Any]], stack: Callable[..., Any]) -> Iterator[Any]:
            source = make_source()
            while True:
                chunk = list(itertools.islice(source, size))
                if not chunk or (drop_remainder and len(chunk) < size):
                    return
                yield _batch_of(chunk, stack)

        card = self._cardinality
        if card >= 0:
            card = card // size if drop_remainder else math.ceil(card / size)
        element_spec = self.element_spec
        spec = nest.map_structure(
            lambda s: dataset_ragged.batched_spec(s, size if drop_remainder else None), element_spec
        )
        if dataset_ragged.has_ragged(element_spec):  # RaggedTensorSpec components batch into RaggedTensors
            return Dataset(lambda: _spec_batches(self._elements, size, drop_remainder, element_spec), card, spec)
        if self._source_arrays is not None:  # slices of the source's arrays: no work per row
            return self._sliced_batches(size, drop_remainder, card, spec)
        if self._host_rows is not None:  # stacked on the host: one device copy per batch
            return self._through(lambda make_rows: batches(make_rows, _stack_rows), card, spec)
        return Dataset(lambda: batches(self._elements, _stack), card, spec)

    def _sliced_batches(
        self, size: int, drop_remainder: bool, cardinality: int, spec: Any, shuffled: bool = False
    ) -> "Dataset":
        """`batch` of a `from_tensor_slices` dataset: slices of its host arrays (rows in a new random order on
        each iteration where `shuffled`, as Keras's `fit` shuffles arrays each epoch)."""
        assert self._source_arrays is not None and self._host_rows is not None
        hosts, rows = self._source_arrays
        base = int(np.asarray(random_ops._next_key(None))[-1]) if shuffled else 0  # (as `shuffle`'s seed)
        epochs = itertools.count()

        def batches() -> Iterator[Any]:
            order = np.random.default_rng([base, next(epochs)]).permutation(rows) if shuffled else None
            for start in range(0, rows, size):
                if drop_remainder and start + size > rows:
                    return
                picked = slice(start, start + size) if order is None else order[start : start + size]
                yield nest.map_structure(lambda host, picked=picked: host[picked], hosts)

        return Dataset(None, cardinality, spec, (batches, self._host_rows[1]))

    def map(
        self,
        map_func: Callable[..., Any],
        num_parallel_calls: int | None = None,
        deterministic: bool | None = None,
        name: str | None = None,
    ) -> "Dataset":
        """Applies `map_func` to every element (a tuple element is passed unpacked).

        A Python list `map_func` returns is a tuple of components, as TF's (a nested list is one tensor).
        """
        given = map_func

        def listless(*args: Any) -> Any:
            with calls_as_graphs():  # (Keras's text and lookup layers as graphs, as in TF's traced map)
                result = given(*args)
            return tuple(result) if isinstance(result, list) else result

        map_func = listless

        def iterate() -> Iterator[Any]:
            for element in self._elements():
                yield _to_tensors(_call(map_func, element))

        mapped = Dataset(iterate, self._cardinality, _LazySpec(self, map_func))
        mapped._map_parts = (self, map_func)  # lets ignore_errors() skip a failing element and go on
        return mapped

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> "Dataset":
        """Keeps the elements for which `predicate` returns true."""

        def iterate() -> Iterator[Any]:
            for element in self._elements():
                keep = convert_to_tensor(_call(predicate, element))
                if not keep.dtype.is_bool or keep._shape:
                    raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor.")
                if bool(keep):
                    yield element

        return Dataset(iterate, UNKNOWN if self._cardinality != INFINITE else INFINITE, self._element_spec)

    def repeat(self, count: SupportsInt | None = None, name: str | None = None) -> "Dataset":
        """Repeats the dataset `count` times (forever when None or -1)."""
        times = None if count is None or int(count) < 0 else int(count)

        def iterate(make_source: Callable[[], Iterator[Any]]) -> Iterator[Any]:
            for _ in itertools.count() if times is None else range(times):
                yield from make_source()

        card = (
            INFINITE if times is None else (self._cardinality * times if self._cardinality >= 0 else self._cardinality)
        )
        if times == 0:
            card = 0
        return self._through(iterate, card)

    def take(self, count: int, name: str | None = None) -> "Dataset":
        """The first `count` elements (all when -1)."""
        n = int(count)
        card = (
            self._cardinality
            if n < 0
            else (
                n if self._cardinality == INFINITE else min(n, self._cardinality) if self._cardinality >= 0 else UNKNOWN
            )
        )
        return self._through(lambda make_source: make_source() if n < 0 else itertools.islice(make_source(), n), card)

    def skip(self, count: int, name: str | None = None) -> "Dataset":
        """All but the first `count` elements."""
        n = int(count)
        card = self._cardinality if self._cardinality < 0 else max(self._cardinality - n, 0)
        if n < 0:
            card = 0
        return self._through(lambda make_source: itertools.islice(make_source(), n, None) if n >= 0 else iter(()), card)

    def enumerate(self, start: int = 0, name: str | None = None) -> "Dataset":  # noqa: A003
        """Pairs each element with its int64 index."""
        counter = Dataset.range(int(start), 2**62)
        counter._cardinality = INFINITE
        return Dataset.zip((counter, self))

    def shuffle(
        self, buffer_size: int, seed: int | None = None, reshuffle_each_iteration: bool = True, name: str | None = None
    ) -> "Dataset":
        """Shuffles with TF's buffer algorithm (the order differs from TF's: it uses numpy's RNG)."""
        size = int(buffer_size)
        if size <= 0:
            raise errors.invalid_argument("buffer_size must be greater than zero.", "ShuffleDatasetV3")
        base = int(np.asarray(random_ops._next_key(seed))[-1])
        epochs = itertools.count()

        def iterate(make_source: Callable[[], Iterator[Any]]) -> Iterator[Any]:
            epoch = next(epochs) if reshuffle_each_iteration else 0
            rng = np.random.default_rng([base, epoch])
            buffer: list = []
            for element in make_source():
                buffer.append(element)
                if len(buffer) >= size:
                    yield buffer.pop(int(rng.integers(len(buffer))))
            while buffer:
                yield buffer.pop(int(rng.integers(len(buffer))))

        return self._through(iterate, self._cardinality)

    def cache(self, filename: str = "", name: str | None = None) -> "Dataset":
        """Keeps the elements after the first complete pass and replays them."""
        stored: list = []
        complete = [False]

        def iterate() -> Iterator[Any]:
            if complete[0]:
                yield from stored
                return
            stored.clear()
            for element in self._elements():
                stored.append(element)
                yield element
            complete[0] = True

        return Dataset(iterate, self._cardinality, self._element_spec)

    def prefetch(self, buffer_size: SupportsInt, name: str | None = None) -> "Dataset":
        """Produces up to `buffer_size` elements ahead in a background thread, as `tf.data`'s prefetch.

        Args:
          buffer_size: how many elements to produce ahead; `tf.data.AUTOTUNE` (-1)
            lets tapeshim choose (2), and 0 produces them on demand.
          name: accepted for compatibility.

        Returns:
          The dataset of the same elements, in the same order.

        Raises:
          InvalidArgumentError: if `buffer_size` is below -1.
        """
        depth = int(buffer_size)
        if depth < -1:
            raise errors.invalid_argument(f"buffer_size must be >= -1 (AUTOTUNE), but is {depth}.", "PrefetchDataset")
        if depth == 0:
            return self
        depth = 2 if depth == -1 else depth
        return Dataset(lambda: _prefetching(self._elements, depth), self._cardinality, self._element_spec)

    def unbatch(self, name: str | None = None) -> "Dataset":
        """Splits each element's first dimension into separate elements.

        Raises:
          ValueError: if a component is a scalar.
        """
        if any(s.shape.rank == 0 for s in nest.flatten(self.element_spec) if isinstance(s, TensorSpec)):
            raise ValueError("Cannot unbatch an input with scalar components.")

        spec = nest.map_structure(dataset_ragged.unbatched_spec, self.element_spec)

        def iterate() -> Iterator[Any]:
            for element in self._elements():
                if not any(isinstance(s, RaggedTensorSpec) for s in nest.flatten(spec)):
                    for i in range(nest.flatten(element)[0].shape[0]):
                        yield nest.map_structure(lambda t, i=i: t[i], element)
                    continue
                hosted = nest.map_structure(dataset_ragged.HostRows, element)
                for i in range(nest.flatten(hosted)[0].count):
                    yield nest.map_structure(lambda h, s, i=i: h.row(i, s), hosted, spec)

        return Dataset(iterate, UNKNOWN, spec)

    def ragged_batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        row_splits_dtype: DTypeLike = dtypes.int64,
        name: str | None = None,
    ) -> "Dataset":
        """Batches consecutive elements into RaggedTensors, as `tf.data.Dataset.ragged_batch`.

        A component whose shape has unknown dimensions (of known rank) is batched into a RaggedTensor (its
        ragged rank: the axis of its last unknown dimension, plus one; `row_splits_dtype` for the new
        partitions); a RaggedTensor component into one with one more ragged dimension; a component of a fully
        known shape is stacked, as `batch` does.

        Raises:
          InvalidArgumentError: for a non-positive `batch_size`.
        """
        splits_dtype = dtypes.as_dtype(row_splits_dtype)
        source_spec = self.element_spec
        spec = nest.map_structure(lambda s: dataset_ragged.to_ragged_spec(s, splits_dtype), source_spec)
        if int(batch_size) <= 0:
            raise errors.invalid_argument("Batch size must be greater than zero.", "BatchDatasetV2")

        def iterate() -> Iterator[Any]:
            for element in self._elements():
                yield nest.map_structure(dataset_ragged.to_ragged_value, element, spec)

        return Dataset(iterate, self._cardinality, spec).batch(batch_size, drop_remainder)

    # -- reading ----------------------------------------------------------
    def _elements(self) -> Iterator[Any]:
        """A plain Python iterator over the elements (for the pipeline's own stages)."""
        return iter(self._make_iterator())

    def __iter__(self) -> OwnedIterator:
        """A `tf.data.Iterator`: inside a `tapeshim.function` it advances on every call."""
        return OwnedIterator(self)

    def as_numpy_iterator(self) -> Iterator[Any]:
        """Iterates over elements as numpy values.

        Raises:
          TypeError: for a dataset whose elements hold datasets (`window`), as TF's.
        """
        from tapeshim._src.dataset_transforms import _DatasetSpec  # import cycle: dataset <-> dataset_transforms

        for spec in nest.flatten(self.element_spec):
            if isinstance(spec, _DatasetSpec):
                raise TypeError(
                    "`tf.data.Dataset.as_numpy_iterator()` is not supported for datasets that produce values of "
                    f"type {Dataset}"
                )
        return (nest.map_structure(lambda t: t.numpy(), element) for element in self._elements())

    def cardinality(self) -> Tensor:
        """The number of elements as an int64 scalar: -1 for infinite, -2 for unknown."""
        return constant(self._cardinality, dtypes.int64)

    @property
    def element_spec(self) -> Any:
        """The structure, shapes and dtypes of one element (`tf.TensorSpec`s)."""
        spec = self._element_spec
        return spec.resolve() if isinstance(spec, (_LazySpec, _Deferred)) else spec

    def __len__(self) -> int:
        if self._cardinality == INFINITE:
            raise TypeError("The dataset is infinite.")
        if self._cardinality == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return self._cardinality

    def __bool__(self) -> bool:
        return True

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any], name: str | None = None) -> Any:
        """Folds `reduce_func(state, element)` over the dataset."""
        state = nest.map_structure(convert_to_tensor, initial_state)
        for element in self._elements():
            state = reduce_func(state, element)
        return state


def shuffled_batches(tensors: Any, batch_size: int) -> Dataset:
    """`from_tensor_slices(tensors)` shuffled whole and batched, in a new order on each iteration: what Keras's
    `fit` does with arrays each epoch (slices of the host arrays, no work per row)."""
    source = Dataset.from_tensor_slices(tensors)
    if source._source_arrays is None:
        return source.shuffle(int(source.cardinality()), reshuffle_each_iteration=True).batch(batch_size)
    batched = source.batch(batch_size)
    return source._sliced_batches(int(batch_size), False, batched._cardinality, batched.element_spec, shuffled=True)
