"""`tf.distribute` strategies on a `jax.sharding.Mesh`: the default strategy, Mirrored, OneDevice.

A strategy is a 1-D mesh (axis `"batch"`) over its devices, the same mesh Keras's
`keras.distribution.DataParallel` builds, so Keras variables and tapeshim programs share
it. Variables created in `scope()` are replicated arrays on the mesh (`P()`); per-replica
values are `(N, ...)` arrays sharded on it (`P("batch")`); `run` is a `shard_map` region
(see `replica_run`); cross-replica code (`reduce`, `gather`) is ordinary global-view code.
"""

from __future__ import annotations

import contextlib
import re
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from tapeshim._src import nest
from tapeshim._src.distribute import collectives, context
from tapeshim._src.distribute.context import AXIS, ReduceOp, ReduceOpLike, as_reduce_op
from tapeshim._src.distribute.input import InputContext, datasets_from_function, distribute_dataset, stack_replicas
from tapeshim._src.distribute.replica_run import ReplicaProgram, _leaf_key, flatten
from tapeshim._src.distribute.values import DistributedValues, PerReplica, local_rows
from tapeshim._src.ops import array_ops, math_ops
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.variable import distribution_hooks

if TYPE_CHECKING:
    from tapeshim._src.dataset import Dataset

_MAX_PROGRAMS = 64  # traced replica programs kept per strategy
_BY_MESH: "weakref.WeakValueDictionary[Any, Strategy]" = weakref.WeakValueDictionary()
_DEVICE = re.compile(r"(?:.*device:)?/?(?P<kind>[a-zA-Z_]+):(?P<index>\d+)$")


def resolve_device(name: Any) -> Any:
    """A TF device string (`"/gpu:0"`, `"GPU:1"`, `"/job:localhost/replica:0/task:0/device:CPU:3"`) as a JAX device.

    Raises:
      ValueError: for a string that names no device of this machine.
    """
    if isinstance(name, jax.Device):
        return name
    text = str(name).strip()
    match = _DEVICE.match(text.split("/device:")[-1] if "/device:" in text else text)
    if match is None:
        raise ValueError(f"Unknown device name {name!r}: expected e.g. '/gpu:0', 'GPU:1' or '/cpu:0'.")
    kind, index = match.group("kind").lower(), int(match.group("index"))
    platform = {"xla_gpu": "gpu", "xla_cpu": "cpu", "xla_tpu": "tpu"}.get(kind, kind)
    try:
        devices = jax.local_devices(backend=platform)
    except RuntimeError:
        devices = []
    if index >= len(devices):
        raise ValueError(
            f"Device {name!r} does not exist: this machine has {len(devices)} {platform.upper()} "
            f"device(s) visible to JAX."
        )
    return devices[index]


def default_devices() -> list:
    """TF's `MirroredStrategy()` devices: every local GPU (or TPU); one CPU device when there is none."""
    for platform in ("gpu", "tpu"):
        try:
            devices = jax.local_devices(backend=platform)
        except RuntimeError:
            continue
        if devices:
            return list(devices)
    return [jax.local_devices(backend="cpu")[0]]


class ReplicaContext:
    """The context of one replica inside `strategy.run`, as `tf.distribute.ReplicaContext`."""

    def __init__(self, strategy: Any) -> None:
        self._strategy = strategy
        self.write_kinds: dict[int, str] = {}

    @property
    def strategy(self) -> Any:
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> Any:
        """This replica's index, an int32 scalar tensor (the mesh's axis index)."""
        return collectives.replica_id(convert_to_tensor(np.int32(0)))

    def all_reduce(self, reduce_op: ReduceOpLike, value: Any, options: Any = None) -> Any:
        """Combines `value` (a nest of tensors) over all replicas; every replica gets the result.

        The gradient of `all_reduce(SUM, x)` with respect to each replica's `x` is the replica count, as TF's.
        """
        op = as_reduce_op(reduce_op)
        return nest.map_structure(lambda t: collectives.all_reduce(op, convert_to_tensor(t)), value)

    def all_gather(self, value: Any, axis: int, options: Any = None) -> Any:
        """Concatenates every replica's `value` (a nest of tensors) along `axis`, in replica order."""
        return nest.map_structure(
            lambda t: collectives.all_gather(convert_to_tensor(t), axis, self.num_replicas_in_sync), value
        )

    def merge_call(self, merge_fn: Callable, args: tuple = (), kwargs: dict | None = None) -> Any:
        """Calls `merge_fn(strategy, *args, **kwargs)` in cross-replica context with every replica's values.

        Tensor arguments reach `merge_fn` as `PerReplica` values of all the replicas (gathered over the
        mesh); a `PerReplica` result gives each replica its own value, any other result is returned
        to every replica, as TF's `merge_call`.
        """
        n = self.num_replicas_in_sync
        leaves, treedef = flatten((tuple(args), dict(kwargs or {})))
        gathered = [
            PerReplica(collectives.all_gather(array_ops.expand_dims(convert_to_tensor(leaf), 0), 0, n))
            if isinstance(leaf, Tensor)
            else leaf
            for leaf in leaves
        ]
        merged_args, merged_kwargs = jax.tree_util.tree_unflatten(treedef, gathered)
        with context.cross_replica(self._strategy):
            result = merge_fn(self._strategy, *merged_args, **merged_kwargs)
        replica = self.replica_id_in_sync_group
        return _map(lambda v: array_ops.gather(v.stacked, replica) if isinstance(v, DistributedValues) else v, result)

    def __repr__(self) -> str:
        return f"<tapeshim.distribute.ReplicaContext of {type(self._strategy).__name__}>"


class _DefaultReplicaContext(ReplicaContext):
    """The replica context outside any strategy: one replica."""

    @property
    def replica_id_in_sync_group(self) -> int:
        return 0

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        as_reduce_op(reduce_op)
        return nest.map_structure(convert_to_tensor, value)

    def all_gather(self, value: Any, axis: int, options: Any = None) -> Any:
        return nest.map_structure(convert_to_tensor, value)

    def merge_call(self, merge_fn: Callable, args: tuple = (), kwargs: dict | None = None) -> Any:
        return merge_fn(self._strategy, *args, **(kwargs or {}))


class StrategyExtended:
    """`strategy.extended`: the devices the strategy runs on."""

    def __init__(self, strategy: "Strategy") -> None:
        self._strategy = strategy

    @property
    def worker_devices(self) -> tuple:
        return tuple(
            f"/job:localhost/replica:0/task:0/device:{d.platform.upper()}:{d.id}"
            for d in self._strategy._local_devices()
        )

    @property
    def parameter_devices(self) -> tuple:
        return self.worker_devices


def _non_distributed_error(value: Any, op: ReduceOp) -> ValueError:
    return ValueError(f"A non-DistributedValues value {value} cannot be reduced with the given reduce op {op}.")


class Strategy:
    """The base of every strategy, as `tf.distribute.Strategy`; used directly it is the default strategy.

    Args:
      devices: the JAX devices of the mesh, or None for the default strategy (no mesh, one replica).
    """

    def __init__(self, devices: list | None = None) -> None:
        self._devices = None if devices is None else list(devices)
        self._mesh = None if devices is None else Mesh(np.array(self._devices), (AXIS,))
        if self._mesh is not None:
            _BY_MESH[self._mesh] = self
        self._programs: dict = {}
        self._keras_distribution: Any = None
        self.extended = StrategyExtended(self)
        self.cluster_resolver: Any = None

    # -- devices ---------------------------------------------------------
    @property
    def num_replicas_in_sync(self) -> int:
        """The number of replicas taking part in each step (all processes)."""
        return 1 if self._devices is None else len(self._devices)

    def _local_devices(self) -> list:
        if self._devices is None:
            return [jax.local_devices()[0]]
        return [d for d in self._devices if d.process_index == jax.process_index()]

    def _local_replica_range(self) -> tuple[int, int]:
        """`(first replica, count)` of this process's replicas (devices are process-major)."""
        if self._devices is None:
            return 0, 1
        local = [i for i, d in enumerate(self._devices) if d.process_index == jax.process_index()]
        return local[0], len(local)

    def _sharding(self, spec: P) -> NamedSharding:
        """A sharding over this strategy's mesh (a strategy over devices: the default strategy has none)."""
        assert self._mesh is not None, "only a strategy over devices places values"
        return NamedSharding(self._mesh, spec)

    def _replicated(self) -> NamedSharding:
        return self._sharding(P())

    def _place_variable(self, array: jax.Array) -> jax.Array:
        """A new variable's value, replicated on every device of the mesh."""
        if jax.process_count() == 1:
            return jax.device_put(array, self._replicated())

        # Process 0's initial value on every process (TF's multi-worker variables start from worker 0's).
        value = np.asarray(multihost_utils.broadcast_one_to_all(np.asarray(array)))
        return jax.make_array_from_process_local_data(self._replicated(), value, tuple(array.shape))

    # -- scopes ----------------------------------------------------------
    @contextlib.contextmanager
    def _keras_scope(self) -> Iterator[None]:
        """Keras's own `DataParallel` distribution on this strategy's devices (Keras variables replicated)."""
        if self._devices is None:
            yield
            return
        if self._keras_distribution is None:
            import keras  # here: `import tapeshim` imports no Keras

            mesh = keras.distribution.DeviceMesh((len(self._devices),), [AXIS], self._devices)
            self._keras_distribution = keras.distribution.DataParallel(device_mesh=mesh)
        with self._keras_distribution.scope():
            yield

    @contextlib.contextmanager
    def scope(self) -> Iterator["Strategy"]:
        """Makes this strategy current: variables created inside are mirrored (replicated on the mesh)."""
        if self._devices is None:
            yield self
            return
        if context.current_replica_context() is not None:
            raise RuntimeError(
                "Cannot enter a strategy's scope inside `strategy.run`: the replica function already "
                "runs in the strategy."
            )
        with context.strategy_scope(self), self._keras_scope():
            yield self

    # -- running ---------------------------------------------------------
    def run(self, fn: Callable, args: tuple = (), kwargs: dict | None = None, options: Any = None) -> Any:
        """Runs `fn` on every replica: `PerReplica` arguments give each replica its own value.

        Returns:
          `fn`'s result with each tensor as a `PerReplica` (one value per replica).
        """
        kwargs = {} if kwargs is None else kwargs
        if self._devices is None:
            with context.replica_scope(_DefaultReplicaContext(self)):
                return fn(*args, **kwargs)
        leaves, treedef = flatten((tuple(args), dict(kwargs)))
        key = (fn, treedef, tuple(_leaf_key(leaf) for leaf in leaves))
        program = self._programs.pop(key, None)
        if program is None:
            program = ReplicaProgram(self, fn, leaves, treedef)
            if len(self._programs) >= _MAX_PROGRAMS:  # e.g. a new lambda per eager call: keep the recent ones
                self._programs.pop(next(iter(self._programs)))
        self._programs[key] = program  # most recently used last
        outputs, concrete = program(leaves)
        return program.pack(concrete, outputs)

    # -- cross-replica ---------------------------------------------------
    def reduce(self, reduce_op: ReduceOpLike, value: Any, axis: int | None = None) -> Any:
        """Combines per-replica `value` (a nest) across replicas, and along `axis` of each value if given.

        Raises:
          ValueError: SUM of a value that is not distributed (as TF).
        """
        op = as_reduce_op(reduce_op)
        return _map(lambda v: self._reduce_one(op, v, axis), value)

    def _reduce_one(self, op: ReduceOp, value: Any, axis: int | None) -> Any:
        reduce = math_ops.reduce_sum if op is ReduceOp.SUM else math_ops.reduce_mean
        if isinstance(value, DistributedValues):
            stacked = value.stacked
            if axis is None:
                return reduce(stacked, axis=0)
            return reduce(stacked, axis=[0, _axis_of(axis, len(stacked._shape) - 1) + 1])
        if self._devices is not None and self.num_replicas_in_sync > 1 and op is ReduceOp.SUM:
            raise _non_distributed_error(value, op)
        tensor = convert_to_tensor(value)
        return tensor if axis is None else reduce(tensor, axis=axis)

    def gather(self, value: Any, axis: int) -> Any:
        """Concatenates the replicas' values (a nest) along `axis`, in replica order."""

        def one(v: Any) -> Any:
            if not isinstance(v, DistributedValues):
                return convert_to_tensor(v)

            rows = local_rows(v.stacked) if jax.process_count() == 1 else _all_rows(v.stacked)
            return array_ops.concat(list(rows), axis=axis)

        return _map(one, value)

    def experimental_local_results(self, value: Any) -> tuple:
        """The values of this process's replicas: a tuple per leaf structure (one entry when not distributed)."""
        flat, treedef = flatten(value)
        if not any(isinstance(v, DistributedValues) for v in flat):
            return (value,)
        n = len(self._local_devices())
        per_leaf = [local_rows(v.stacked) if isinstance(v, DistributedValues) else (v,) * n for v in flat]
        return tuple(jax.tree_util.tree_unflatten(treedef, [rows[i] for rows in per_leaf]) for i in range(n))

    def experimental_distribute_values_from_function(self, value_fn: Callable) -> Any:
        """Per-replica values made by `value_fn(ValueContext)` for each of this process's replicas."""
        start, count = self._local_replica_range()
        values = [value_fn(ValueContext(start + i, self.num_replicas_in_sync)) for i in range(count)]
        flat = [nest.flatten(v) for v in values]
        if self._devices is None:
            return values[0]
        return nest.pack_sequence_as(values[0], [stack_replicas(self, list(group)) for group in zip(*flat)])

    # -- input -----------------------------------------------------------
    def experimental_distribute_dataset(self, dataset: Dataset, options: Any = None) -> Any:
        """Each global batch of `dataset` split contiguously over the replicas (see `input`)."""
        if self._devices is None:
            return dataset

        return distribute_dataset(self, dataset)

    def distribute_datasets_from_function(self, dataset_fn: Callable, options: Any = None) -> Any:
        """`dataset_fn(InputContext)` per process; each replica gets one element of it per step."""
        if self._devices is None:
            return dataset_fn(InputContext())
        return datasets_from_function(self, dataset_fn)

    def __repr__(self) -> str:
        return f"<tapeshim.distribute.{type(self).__name__} num_replicas_in_sync={self.num_replicas_in_sync}>"


class ValueContext:
    """The context `experimental_distribute_values_from_function` passes (`tf.distribute.experimental.ValueContext`)."""

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1) -> None:
        self.replica_id_in_sync_group = replica_id_in_sync_group
        self.num_replicas_in_sync = num_replicas_in_sync


def _map(fn: Callable[[Any], Any], value: Any) -> Any:
    """`fn` applied to each leaf of `value`, a `PerReplica` being one leaf (tapeshim's nest would open it)."""
    leaves, treedef = flatten(value)
    return jax.tree_util.tree_unflatten(treedef, [fn(leaf) for leaf in leaves])


def _axis_of(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _all_rows(stacked: Tensor) -> tuple:
    full = multihost_utils.process_allgather(stacked._value, tiled=True)
    return tuple(Tensor(full[i], tuple(stacked._shape[1:]), stacked._dtype) for i in range(full.shape[0]))


class _CrossDeviceOps:
    """Accepted for compatibility: XLA picks the collectives (NCCL on GPU, ICI on TPU, Gloo on CPU)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args = (args, kwargs)


class HierarchicalCopyAllReduce(_CrossDeviceOps):
    """`tf.distribute.HierarchicalCopyAllReduce` (accepted, ignored)."""


class NcclAllReduce(_CrossDeviceOps):
    """`tf.distribute.NcclAllReduce` (accepted, ignored)."""


class ReductionToOneDevice(_CrossDeviceOps):
    """`tf.distribute.ReductionToOneDevice` (accepted, ignored)."""


class MirroredStrategy(Strategy):
    """Synchronous data parallelism over the local devices, as `tf.distribute.MirroredStrategy`.

    Args:
      devices: device names (`"/gpu:0"`, ...) or JAX devices; default: every local GPU (TPU), else one CPU.
      cross_device_ops: accepted; XLA picks the collectives (NCCL on GPU, ICI on TPU, Gloo on CPU).
    """

    def __init__(self, devices: Any = None, cross_device_ops: Any = None) -> None:
        if devices is None:
            resolved = default_devices()
        else:
            if isinstance(devices, str):
                devices = [devices]
            resolved = [resolve_device(d) for d in devices]
            if not resolved:
                raise ValueError("Must specify at least one device.")
            if len({id(d) for d in resolved}) != len(resolved):
                raise ValueError(f"No duplicates allowed in `devices` argument: {list(devices)}")
        super().__init__(resolved)


class OneDeviceStrategy(Strategy):
    """Everything on one device, as `tf.distribute.OneDeviceStrategy`.

    Args:
      device: the device name (`"/gpu:0"`, `"/cpu:0"`) or a JAX device.
    """

    def __init__(self, device: Any) -> None:
        super().__init__([resolve_device(device)])


_DEFAULT = Strategy()


def strategy_of_mesh(mesh: Any) -> Strategy | None:
    """The live strategy whose mesh equals `mesh` (Keras's `DataParallel` mesh of its devices), if any."""
    return _BY_MESH.get(mesh)


def get_strategy() -> Strategy:
    """The current strategy: the innermost `scope()` (or `run`) entered, else the default strategy."""
    return context.current_strategy() or _DEFAULT


def has_strategy() -> bool:
    """Whether a strategy other than the default one is current."""
    return context.current_strategy() is not None


def in_cross_replica_context() -> bool:
    """True inside a strategy's `scope()` but outside `run`."""
    return context.current_replica_context() is None and context.current_strategy() is not None


def get_replica_context() -> ReplicaContext | None:
    """The replica context inside `run`; None in cross-replica context; the default context outside strategies."""
    replica = context.current_replica_context()
    if replica is not None:
        return replica
    if context.current_strategy() is not None:
        return None
    return _DefaultReplicaContext(_DEFAULT)


def get_cross_replica_context() -> Strategy | None:
    """The current strategy in cross-replica context, else None."""
    if context.current_replica_context() is not None:
        return None
    return get_strategy()


def _place(array: jax.Array) -> tuple[jax.Array, Any]:
    strategy = context.current_strategy()
    if strategy is None or strategy._devices is None:
        return array, None
    return strategy._place_variable(array), strategy


def _note_write(variable: Any, kind: str) -> None:
    replica = context.current_replica_context()
    if replica is not None and hasattr(replica, "write_kinds"):
        replica.write_kinds[id(variable)] = kind


def install_variable_hooks() -> None:
    distribution_hooks["placement"] = _place
    distribution_hooks["writes"] = _note_write


__all__ = [
    "MirroredStrategy",
    "OneDeviceStrategy",
    "PerReplica",
    "ReduceOp",
    "ReplicaContext",
    "Strategy",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
]
