"""`strategy.run(fn, args)`: the per-replica function as ONE `jax.shard_map` region.

`fn` is traced once per signature by tapeshim's own function tracer, at per-replica
shapes, inside a replica context. The trace's pure program then runs as

    shard_map(body, mesh, in_specs=(P(axis) for per-replica args, P() for the rest),
              out_specs=(P(axis) for outputs, P() for new variable values), check_vma=False)

recorded as one tapeshim op: called eagerly it runs as one jitted program; inside a
`tapeshim.function` it is one node of the enclosing trace, so the whole step (replica
region, collectives and the cross-replica `reduce` around it) compiles to one SPMD
program.

`check_vma=False` is load-bearing. With JAX's default (`True`), the gradient with respect
to a replicated value comes back already summed over the mesh (the transpose of the
implicit replication is a `psum`), so TF's "gradients are local, then all-reduced" would
give N times the update, silently. With `False`, gradients are local as in TF, the gradient
of `all_reduce(SUM, x)` is N, and variables written per replica may diverge, as TF's
un-aggregated mirrored variables do. Replication of the other variables is restored at the
region's boundary, by each variable's aggregation (`_aggregate`).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from tapeshim._src import nest, replay
from tapeshim._src.distribute.context import AXIS, replica_axis, replica_scope
from tapeshim._src.distribute.values import DistributedValues, PerReplica
from tapeshim._src.function import function
from tapeshim._src.jax_op import jax_op
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, concrete, convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.variable import Variable, VariableAggregation

_region_ids = itertools.count()

# Treated as leaves when flattening `run`'s arguments and results.
_LEAF_TYPES = (DistributedValues, Tensor, Variable)


def _is_leaf(value: Any) -> bool:
    return isinstance(value, _LEAF_TYPES) or value is None


def flatten(structure: Any) -> tuple[list, Any]:
    return jax.tree_util.tree_flatten(structure, is_leaf=_is_leaf)


def _leaf_key(leaf: Any) -> tuple:
    if isinstance(leaf, DistributedValues):
        t = leaf.stacked
        return ("per_replica", tuple(t._shape), t._dtype.name)
    if isinstance(leaf, Variable):
        return ("variable", id(leaf))
    if isinstance(leaf, (Tensor, jax.Array)) or hasattr(leaf, "__array__") and not isinstance(leaf, (int, float)):
        t = convert_to_tensor(leaf)
        return ("tensor", tuple(t._shape), t._dtype.name)
    try:
        hash(leaf)
        return ("python", type(leaf).__name__, leaf)
    except TypeError:
        return ("python", id(leaf))


def _aggregate(kind: str, aggregation: VariableAggregation, old: Any, new: jax.Array) -> jax.Array:
    """A variable's new value after the region: the replicas' writes combined by TF's rules.

    `kind` is how the replicas wrote it: "update" (assign_add/sub, a Keras update) or
    "assign"; `old` is its value before the region (None when not needed).
    """
    if kind == "outside":  # created outside the strategy's scope: TF applies each replica's update in turn
        return old + jax.lax.psum(new - old, AXIS)
    if aggregation is VariableAggregation.NONE:
        return new  # per replica (copies may diverge, as TF's)
    if aggregation is VariableAggregation.SUM:
        return jax.lax.psum(new, AXIS) if kind == "assign" else old + jax.lax.psum(new - old, AXIS)
    if aggregation is VariableAggregation.MEAN:
        if jnp.issubdtype(new.dtype, jnp.integer):
            return jax.lax.psum(new, AXIS) // jax.lax.psum(jnp.ones((), new.dtype), AXIS)
        return jax.lax.pmean(new, AXIS)
    first = jax.lax.axis_index(AXIS) == 0  # ONLY_FIRST_REPLICA
    return jax.lax.psum(jnp.where(first, new, jnp.zeros_like(new)), AXIS)


class ReplicaProgram:
    """One trace of a per-replica function and its `shard_map` region, for one argument signature."""

    def __init__(self, strategy: Any, fn: Callable, leaves: list, treedef: Any) -> None:
        from tapeshim._src.distribute.strategy import ReplicaContext  # import cycle: strategy <-> replica_run

        self._strategy = strategy
        n = strategy.num_replicas_in_sync
        self._kinds = []  # per leaf: "per_replica", "tensor" or "static"
        specs = []
        for leaf in leaves:
            if isinstance(leaf, DistributedValues):
                t = leaf.stacked
                if int(t._shape[0]) != n:
                    raise ValueError(
                        f"A distributed value of {t._shape[0]} replicas was passed to `run` of a "
                        f"strategy with {n} replicas."
                    )
                self._kinds.append("per_replica")
                specs.append(TensorSpec(t._shape[1:], t._dtype))
            elif _leaf_key(leaf)[0] == "tensor":
                t = convert_to_tensor(leaf)
                self._kinds.append("tensor")
                specs.append(TensorSpec(t._shape, t._dtype))
            else:
                self._kinds.append("static")
        statics = [leaf for leaf, kind in zip(leaves, self._kinds) if kind == "static"]

        def per_replica(*tensors: Any) -> Any:
            it_t, it_s = iter(tensors), iter(statics)
            values = [next(it_t) if kind != "static" else next(it_s) for kind in self._kinds]
            args, kwargs = jax.tree_util.tree_unflatten(treedef, values)
            return fn(*args, **kwargs)

        self.context = ReplicaContext(strategy)
        with replica_scope(self.context), strategy._keras_scope():
            self._concrete = function(per_replica, autograph=True).get_concrete_function(*specs)
        cf = self._concrete
        if cf.host_feed is not None:
            raise NotImplementedError(
                "`next(iterator)` inside the function passed to `strategy.run` is not supported by tapeshim: pull the "
                "element outside `run` (in the enclosing tf.function) and pass it in `args`."
            )
        self.read_variables = list(cf.read_variables)
        self.written_variables = list(cf.written_variables)
        self._const_tensors = list(cf._const_tensors)
        self._key_draws = list(cf._key_draws)
        self._out_avals = cf._out_avals
        self._pending_avals = cf._pending_avals
        self._write_kinds = []
        for variable in self.written_variables:
            # Keras writes its variables (metrics, optimizer state) as assignments of updated values: updates.
            kind = "update" if hasattr(variable, "_adapted") else self.context.write_kinds.get(id(variable), "update")
            if getattr(variable, "_strategy", True) is None:
                kind = "outside"
            self._write_kinds.append(kind)
        # A name of its own: tapeshim keys compiled programs by op names, and two regions may share shapes.
        self.op = jax_op(self._region(), name=f"StrategyRun_{next(_region_ids)}")

    def _region(self) -> Callable:
        program = self._concrete._program
        mesh = self._strategy._mesh
        n_replicas = self._strategy.num_replicas_in_sync
        arg_kinds = [k for k in self._kinds if k != "static"]
        n_args, n_vars = len(arg_kinds), len(self.read_variables)
        n_consts, n_keys = len(self._const_tensors), len(self._key_draws)
        n_written = len(self.written_variables)
        aggregations = [v.aggregation for v in self.written_variables]
        kinds = self._write_kinds
        arg_specs = [P(AXIS) if k == "per_replica" else P() for k in arg_kinds]

        def body(args: list, var_values: list, consts: list, keys: list, olds: list) -> tuple:
            with replica_axis(n_replicas):
                rid = jax.lax.axis_index(AXIS)
                args = [a[0] if k == "per_replica" else a for a, k in zip(args, arg_kinds)]
                keys = [jax.random.fold_in(k, rid) for k in keys]  # TF: random ops differ per replica
                outs, news = program(args, var_values, consts, keys)
                news = [_aggregate(kind, agg, old, new) for kind, agg, old, new in zip(kinds, aggregations, olds, news)]
            return [o[None] for o in outs], news

        region = jax.shard_map(
            body,
            mesh=mesh,
            in_specs=(arg_specs, [P()] * n_vars, [P()] * n_consts, [P()] * n_keys, [P()] * n_written),
            out_specs=([P(AXIS)] * len(self._out_avals), [P()] * n_written),
            check_vma=False,
        )

        def run_region(*arrays: jax.Array) -> tuple:
            i = 0
            groups = []
            for count in (n_args, n_vars, n_consts, n_keys, n_written):
                groups.append(list(arrays[i : i + count]))
                i += count
            outs, news = region(*groups)
            return tuple(outs) + tuple(news)

        return run_region

    def __call__(self, leaves: list) -> tuple[list, Any]:
        """Runs the region on a call's leaves; writes variables back; returns the stacked outputs."""
        trace = _thread_state.trace
        args = [
            leaf.stacked if kind == "per_replica" else convert_to_tensor(leaf)
            for leaf, kind in zip(leaves, self._kinds)
            if kind != "static"
        ]
        reads = [v._read_for_op() for v in self.read_variables]
        if trace is not None:
            keys = [trace.per_call_key(draw) for draw in self._key_draws]
        else:
            keys = [concrete(draw()) for draw in self._key_draws]
        olds = [v._read_for_op() for v in self.written_variables]
        results = self.op(*args, *reads, *self._const_tensors, *keys, *olds)
        if not isinstance(results, tuple):
            results = (results,)
        if trace is None and self._concrete.has_effects:  # as TF, `run` returns after the replicas' prints
            replay.force(list(results))
            jax.effects_barrier()
        n_out = len(self._out_avals)
        for variable, value in zip(self.written_variables, results[n_out:]):
            variable.assign(value)
        return list(results[:n_out]), self._concrete

    def pack(self, concrete: Any, outputs: list) -> Any:
        """The per-replica function's result structure with each tensor output as a `PerReplica`."""
        flat = [None if kind == "python" else PerReplica(outputs[i]) for kind, i in concrete._out_kinds]

        return nest.pack_sequence_as(concrete._result_structure, flat)
