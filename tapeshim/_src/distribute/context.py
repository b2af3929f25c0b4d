"""Which strategy is current, replica and cross-replica contexts, and the replica axis.

Three pieces of thread-local state:

* the stack of strategies whose `scope()` is entered (the innermost is current);
* the stack of `ReplicaContext`s: pushed while `strategy.run` traces the per-replica
  function, so `get_replica_context()`, `tf.nn.compute_average_loss` and Keras see a
  replica context then, as in TF;
* the active replica *axis*: set only while JAX traces the body of the `jax.shard_map`
  that runs the per-replica program. Collective ops (`all_reduce`, the optimizer's
  gradient sum) call `lax.psum` and friends only then; at tapeshim's trace time (shape
  evaluation, no bound axis) they are shape-preserving stand-ins.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from typing import TYPE_CHECKING, Any, Iterator, Union

if TYPE_CHECKING:
    from tapeshim._src.distribute.strategy import ReplicaContext, Strategy
    from tapeshim._src.variable import VariableAggregation

AXIS = "batch"  # the mesh axis of every strategy (the name Keras's DataParallel uses)


class ReduceOp(enum.Enum):
    """How values from replicas are combined, as `tf.distribute.ReduceOp`."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation: VariableAggregation | str) -> "ReduceOp":
        """The reduce op of a `tf.VariableAggregation` (SUM or MEAN)."""
        name = getattr(aggregation, "name", str(aggregation)).upper()
        if name not in ("SUM", "MEAN"):
            raise ValueError(
                f"Could not convert from `tf.VariableAggregation` {aggregation} to`tf.distribute.ReduceOp` type"
            )
        return ReduceOp[name]


ReduceOpLike = Union[ReduceOp, str, "VariableAggregation"]
"""What a reduce-op argument accepts: a `ReduceOp`, its name, or a `tf.VariableAggregation` SUM or MEAN."""


def as_reduce_op(value: ReduceOpLike) -> ReduceOp:
    """`value` (a `ReduceOp` or `"sum"`/`"mean"`) as a `ReduceOp`."""
    if isinstance(value, ReduceOp):
        return value
    if isinstance(value, str) and value.upper() in ReduceOp.__members__:
        return ReduceOp[value.upper()]
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in ReduceOp.__members__:  # a tf.VariableAggregation SUM/MEAN
        return ReduceOp[name]
    raise ValueError(f"Invalid reduce op: {value!r}. Expected tf.distribute.ReduceOp.SUM or ReduceOp.MEAN.")


class _State(threading.local):
    def __init__(self) -> None:
        self.strategies: list[Any] = []
        self.replicas: list[Any] = []
        self.axis: list[tuple[str, int]] = []


_state = _State()


@contextlib.contextmanager
def strategy_scope(strategy: Strategy) -> Iterator[None]:
    """Makes `strategy` current (cross-replica context) for the block."""
    _state.strategies.append(strategy)
    try:
        yield
    finally:
        _state.strategies.pop()


@contextlib.contextmanager
def replica_scope(context: ReplicaContext) -> Iterator[None]:
    """Enters `context` (a `ReplicaContext`) while the per-replica function is traced."""
    _state.replicas.append(context)
    try:
        yield
    finally:
        _state.replicas.pop()


@contextlib.contextmanager
def cross_replica(strategy: Strategy) -> Iterator[None]:
    """Cross-replica context inside a replica function (`ReplicaContext.merge_call`'s merge function)."""
    saved = _state.replicas
    _state.replicas = []
    _state.strategies.append(strategy)
    try:
        yield
    finally:
        _state.strategies.pop()
        _state.replicas = saved


@contextlib.contextmanager
def replica_axis(num_replicas: int) -> Iterator[None]:
    """Binds the replica axis: collectives become `lax` collectives over it (inside `shard_map` only)."""
    _state.axis.append((AXIS, num_replicas))
    try:
        yield
    finally:
        _state.axis.pop()


def active_axis() -> tuple[str, int] | None:
    """`(axis name, replica count)` while a replica program is traced by JAX, else None."""
    return _state.axis[-1] if _state.axis else None


def current_replica_context() -> Any:
    """The innermost `ReplicaContext` that `strategy.run` entered, or None."""
    return _state.replicas[-1] if _state.replicas else None


def current_strategy() -> Any:
    """The strategy of the innermost replica context or scope, or None (the default strategy)."""
    replica = current_replica_context()
    if replica is not None:
        return replica.strategy
    return _state.strategies[-1] if _state.strategies else None


def in_scope_or_replica() -> bool:
    """Whether a non-default strategy is current."""
    return current_strategy() is not None
