"""Distributed datasets: each global batch split contiguously over the replicas, as one sharded array.

`experimental_distribute_dataset(ds)` iterates `ds` on the host. Each element's
leaves `(B, ...)` are split into `N` contiguous slices (replica `i` gets rows
`[i*B/N, (i+1)*B/N)`, as TF's MirroredStrategy) and placed as one `(N, B/N, ...)`
array sharded over the mesh: each device receives only its slice. On several
processes, each process places only the rows of its own replicas.

`distribute_datasets_from_function(fn)` calls `fn(InputContext)` once per process;
each step takes one element per local replica (replica `i` gets the i-th).

An iterator of either is a `tf.data` iterator to `tapeshim.function`: `next(it)`
inside a function pulls a new distributed batch on every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import jax
import numpy as np
from jax.sharding import PartitionSpec as P

from tapeshim._src import errors, nest
from tapeshim._src.dataset_iterator import OwnedIterator
from tapeshim._src.distribute.context import AXIS
from tapeshim._src.distribute.values import PerReplica
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec

if TYPE_CHECKING:
    from tapeshim._src.dataset import Dataset
    from tapeshim._src.distribute.strategy import Strategy


class InputContext:
    """What an input function needs to know about the replicas, as `tf.distribute.InputContext`.

    Args:
      num_input_pipelines: the number of input pipelines (processes).
      input_pipeline_id: this pipeline's index.
      num_replicas_in_sync: the number of replicas taking part in each step.
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0, num_replicas_in_sync: int = 1) -> None:
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """`global_batch_size / num_replicas_in_sync`.

        Raises:
          ValueError: if the global batch does not divide by the replica count.
        """
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(
                f"The `global_batch_size` {global_batch_size} is not divisible by "
                f"`num_replicas_in_sync` {self._num_replicas_in_sync}"
            )
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self) -> str:
        return (
            f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, total: "
            f"{self._num_input_pipelines})"
        )


class InputOptions:
    """Accepted for compatibility (`tf.distribute.InputOptions`); placement is the mesh's."""

    def __init__(
        self,
        experimental_fetch_to_device: Any = None,
        experimental_replication_mode: Any = None,
        experimental_place_dataset_on_device: bool = False,
        experimental_per_replica_buffer_size: int = 1,
    ) -> None:
        self.experimental_fetch_to_device = experimental_fetch_to_device
        self.experimental_replication_mode = experimental_replication_mode
        self.experimental_place_dataset_on_device = experimental_place_dataset_on_device
        self.experimental_per_replica_buffer_size = experimental_per_replica_buffer_size


def _uneven_error(batch: int | None, num_replicas: int) -> errors.InvalidArgumentError:
    what = "A global batch" if batch is None else f"A global batch of {batch} examples"
    return errors.invalid_argument(
        f"{what} cannot be split evenly over {num_replicas} replicas: tapeshim runs "
        "every replica as one SPMD program, so each replica must get the same number of examples (TF would give "
        "replicas different batch sizes here). Batch with `drop_remainder=True` (e.g. `dataset.batch(global_batch_"
        f"size, drop_remainder=True)` with a global batch size divisible by {num_replicas}), or `repeat()` the "
        "dataset and run a fixed number of steps.",
        "DistributedDatasetSplit",
    )


def place_rows(strategy: Strategy, local: np.ndarray) -> jax.Array:
    """This process's `(local replicas, ...)` rows as the global `(N, ...)` array sharded over the mesh."""
    sharding = strategy._sharding(P(AXIS))
    if jax.process_count() == 1:
        return jax.device_put(local, sharding)
    global_shape = (strategy.num_replicas_in_sync,) + tuple(local.shape[1:])
    return jax.make_array_from_process_local_data(sharding, local, global_shape)


def split_batch(strategy: Strategy, leaf: Any) -> PerReplica:
    """A global batch leaf `(B, ...)` split contiguously: `(N, B/N, ...)` on the mesh."""
    tensor = convert_to_tensor(leaf)
    n = strategy.num_replicas_in_sync
    if not tensor._shape:
        raise errors.invalid_argument(
            "A distributed dataset's elements must be batched (each leaf needs a leading batch dimension); got a "
            "scalar. Use `dataset.batch(global_batch_size, drop_remainder=True)`.",
            "DistributedDatasetSplit",
        )
    batch = int(tensor._shape[0])
    if batch % n:
        raise _uneven_error(batch, n)
    rows = np.asarray(tensor.numpy()).reshape((n, batch // n) + tuple(tensor._shape[1:]))
    start, count = strategy._local_replica_range()
    array = place_rows(strategy, rows[start : start + count])
    return PerReplica(Tensor(array, (n, batch // n) + tuple(tensor._shape[1:]), tensor._dtype))


def stack_replicas(strategy: Strategy, leaves: list) -> PerReplica:
    """One value per local replica (same shapes) as the global `(N, ...)` array on the mesh."""
    tensors = [convert_to_tensor(leaf) for leaf in leaves]
    shapes = {tuple(t._shape) for t in tensors}
    if len(shapes) != 1:
        raise errors.invalid_argument(
            f"The replicas' values have different shapes {sorted(shapes)}: tapeshim runs every replica as one SPMD "
            "program, so each replica's input must have the same shape. Batch with `drop_remainder=True`.",
            "DistributedDatasetSplit",
        )
    rows = np.stack([np.asarray(t.numpy()) for t in tensors])
    array = place_rows(strategy, rows)
    return PerReplica(Tensor(array, (strategy.num_replicas_in_sync,) + tuple(tensors[0]._shape), tensors[0]._dtype))


class _Source:
    """The host-side element stream an iterator of a distributed dataset pulls from."""

    def __init__(self, elements: Callable[[], Iterator[Any]], element_spec: Any) -> None:
        self._elements = elements
        self.element_spec = element_spec


class DistributedIterator(OwnedIterator):
    """An iterator over a distributed dataset: each element's leaves are `PerReplica` values."""

    def __repr__(self) -> str:
        return "<tapeshim.distribute.DistributedIterator>"


def _per_replica_spec(spec: Any, n: int, split: bool) -> Any:
    def one(leaf: Any) -> Any:
        dims = leaf.shape.as_list() if leaf.shape.rank is not None else []
        if split and dims:
            dims = [None if dims[0] is None else dims[0] // n] + dims[1:]
        return PerReplica(TensorSpec([n] + dims, leaf.dtype))

    return nest.map_structure(one, spec)


class DistributedDataset:
    """A dataset distributed over a strategy's replicas, as `tf.distribute.DistributedDataset`.

    Args:
      strategy: the strategy.
      elements: makes the host iterator of (per-process) distributed elements.
      element_spec: the per-replica element spec.
    """

    def __init__(self, strategy: Strategy, elements: Callable[[], Iterator[Any]], element_spec: Any) -> None:
        self._strategy = strategy
        self._make_elements = elements
        self._element_spec = element_spec

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    def __iter__(self) -> DistributedIterator:
        return DistributedIterator(_Source(self._make_elements, self._element_spec))

    def __repr__(self) -> str:
        return "<tapeshim.distribute.DistributedDataset>"


def distribute_dataset(strategy: Strategy, dataset: Dataset) -> DistributedDataset:
    """`strategy.experimental_distribute_dataset(dataset)`: each batch split contiguously."""
    if not hasattr(dataset, "_elements"):
        raise ValueError(f"`experimental_distribute_dataset` expects a `tf.data.Dataset`, got {type(dataset)}.")

    def elements() -> Iterator[Any]:
        for element in dataset._elements():
            yield nest.map_structure(lambda leaf: split_batch(strategy, leaf), element)

    spec = _per_replica_spec(dataset.element_spec, strategy.num_replicas_in_sync, split=True)
    return DistributedDataset(strategy, elements, spec)


def datasets_from_function(strategy: Strategy, dataset_fn: Callable[[InputContext], Any]) -> DistributedDataset:
    """`strategy.distribute_datasets_from_function(fn)`: one dataset per process, one element per replica."""
    context = InputContext(
        num_input_pipelines=jax.process_count(),
        input_pipeline_id=jax.process_index(),
        num_replicas_in_sync=strategy.num_replicas_in_sync,
    )
    dataset = dataset_fn(context)
    if not hasattr(dataset, "_elements"):
        raise ValueError(f"The `dataset_fn` must return a `tf.data.Dataset`, got {type(dataset)}.")
    _, local = strategy._local_replica_range()

    def elements() -> Iterator[Any]:
        source = dataset._elements()
        while True:
            group = []
            for _ in range(local):
                try:
                    group.append(next(source))
                except StopIteration:
                    break
            if len(group) < local:
                return  # an incomplete step: every replica needs an element (TF's partial step is not SPMD)
            flat = [nest.flatten(e) for e in group]
            stacked = [stack_replicas(strategy, list(leaves)) for leaves in zip(*flat)]
            yield nest.pack_sequence_as(group[0], stacked)

    spec = _per_replica_spec(dataset.element_spec, strategy.num_replicas_in_sync, split=False)
    return DistributedDataset(strategy, elements, spec)
