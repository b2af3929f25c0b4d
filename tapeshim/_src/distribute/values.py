"""`PerReplica` values: one global array whose leading axis is the replica.

A per-replica value (an element of a distributed dataset, an output of
`strategy.run`) is held as ONE tensor of shape `(N, *per_replica_shape)` whose
leading axis is sharded over the strategy's mesh: replica `i` owns row `i`,
on its own device. Inside `tapeshim.function` it is an ordinary argument (the
class is a one-element tuple, so tapeshim's nest flattening passes the tensor and
packs the `PerReplica` back), and `strategy.run` hands each replica its row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeshim._src.ops import array_ops
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor


class DistributedValues(tuple):
    """Values of several replicas, as `tf.distribute.DistributedValues`.

    Holds one tensor of shape `(num_replicas, ...)`; `values` are its rows.
    """

    def __new__(cls, stacked: Any) -> "DistributedValues":  # noqa: D102 - packs from an iterable of one tensor
        single = isinstance(stacked, Tensor) or not hasattr(stacked, "__iter__") or hasattr(stacked, "shape")
        items = (stacked,) if single else tuple(stacked)
        if len(items) != 1:
            raise ValueError(f"{cls.__name__} holds one stacked tensor, got {len(items)} values.")
        return super().__new__(cls, items)

    @property
    def stacked(self) -> Tensor:
        """The `(num_replicas, ...)` tensor."""
        return self[0]

    @property
    def num_replicas(self) -> int:
        return int(self[0]._shape[0])

    @property
    def values(self) -> tuple:
        """Each replica's value (this process's replicas on a multi-host mesh)."""
        return local_rows(self[0])

    def __repr__(self) -> str:
        if _thread_state.trace is not None:
            return f"{type(self).__name__}:{{<{self.num_replicas} replicas>}}"
        rows = ",\n".join(f"  {i}: {row!r}" for i, row in enumerate(self.values))
        return f"{type(self).__name__}:{{\n{rows}\n}}"


class PerReplica(DistributedValues):
    """A value that differs per replica, as TF's `PerReplica`."""


def local_rows(stacked: Tensor) -> tuple:
    """The rows of a stacked per-replica tensor that this process holds, in replica order."""
    value = stacked._value
    if (
        _thread_state.trace is None
        and value is not None
        and hasattr(value, "addressable_shards")
        and not value.is_fully_addressable
    ):
        shards = sorted(value.addressable_shards, key=lambda s: s.index[0].start or 0)
        return tuple(Tensor(shard.data[0], tuple(stacked._shape[1:]), stacked._dtype) for shard in shards)

    return tuple(array_ops.getitem(stacked, i) for i in range(int(stacked._shape[0])))


def is_distributed(value: Any) -> bool:
    return isinstance(value, DistributedValues)


def host_rows(stacked: Tensor) -> np.ndarray:
    """This process's rows as one NumPy array (for reading results on the host)."""
    return np.stack([np.asarray(r.numpy()) for r in local_rows(stacked)])
