"""Keras `fit`/`evaluate`/`predict` of a model built under a strategy: Keras's own data parallelism.

TF runs `model.fit` data-parallel when the model was built in `strategy.scope()`, even when `fit`
is called outside the scope. tapeshim re-enters the strategy's Keras `DataParallel` distribution
around the call: Keras's JAX trainer then shards each batch over the mesh and compiles one
global-view step (GSPMD), which is single-device training at the global batch. Two documented
differences from TF follow: BatchNormalization uses global statistics (TF's are per replica), and
a batch that does not divide by the replica count is refused (TF gives replicas uneven shares).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from tapeshim._src import nest
from tapeshim._src.distribute import context
from tapeshim._src.distribute.input import _uneven_error
from tapeshim._src.distribute.strategy import strategy_of_mesh


def _strategy_of(model: Any) -> Any:
    current = context.current_strategy()
    if current is not None:
        return current
    for variable in getattr(model, "weights", []):
        sharding = getattr(getattr(variable, "value", None), "sharding", None)
        mesh = getattr(sharding, "mesh", None)
        if mesh is not None:
            return strategy_of_mesh(mesh)
    return None


def _check_arrays(x: Any, batch_size: Any, replicas: int) -> None:
    if x is None or hasattr(x, "_elements") or isinstance(x, (dict,)) and not x:
        return
    shapes = [getattr(leaf, "shape", None) for leaf in nest.flatten(x)]
    rows = next((int(s[0]) for s in shapes if s is not None and len(s)), None)
    if rows is None:
        return
    size = int(batch_size) if batch_size else 32
    if size % replicas:
        raise _uneven_error(size, replicas)
    last = rows % size
    if last % replicas:
        raise _uneven_error(last, replicas)


@contextlib.contextmanager
def fit_scope(model: Any, x: Any, batch_size: Any) -> Iterator[None]:
    """Runs the block in the Keras distribution of `model`'s strategy (nothing without one)."""
    strategy = _strategy_of(model)
    if strategy is None or strategy._devices is None:
        yield
        return
    _check_arrays(x, batch_size, strategy.num_replicas_in_sync)
    with strategy._keras_scope():
        try:
            yield
        except ValueError as exc:
            if type(exc).__name__ != "IndivisibleError" and "is partitioned" not in str(exc):
                raise
            raise _uneven_error(None, strategy.num_replicas_in_sync) from exc
