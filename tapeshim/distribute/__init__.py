"""`tf.distribute`: strategies on a `jax.sharding.Mesh` (see docs/distribute.md)."""

from tapeshim._src.distribute import losses as _losses  # noqa: F401 - registers tf.nn's loss scaling rows
from tapeshim._src.distribute.context import ReduceOp
from tapeshim._src.distribute.input import DistributedDataset, DistributedIterator, InputContext, InputOptions
from tapeshim._src.distribute.multi_worker import MultiWorkerMirroredStrategy, TPUStrategy
from tapeshim._src.distribute.strategy import (
    HierarchicalCopyAllReduce,
    MirroredStrategy,
    NcclAllReduce,
    OneDeviceStrategy,
    ReductionToOneDevice,
    ReplicaContext,
    Strategy,
    StrategyExtended,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)
from tapeshim._src.distribute.values import DistributedValues, PerReplica
from tapeshim.distribute import cluster_resolver, experimental

__all__ = [
    "DistributedDataset",
    "DistributedIterator",
    "DistributedValues",
    "HierarchicalCopyAllReduce",
    "InputContext",
    "InputOptions",
    "MirroredStrategy",
    "MultiWorkerMirroredStrategy",
    "NcclAllReduce",
    "OneDeviceStrategy",
    "PerReplica",
    "ReduceOp",
    "ReductionToOneDevice",
    "ReplicaContext",
    "Strategy",
    "StrategyExtended",
    "TPUStrategy",
    "cluster_resolver",
    "experimental",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
]
