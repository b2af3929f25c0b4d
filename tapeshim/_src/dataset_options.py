"""`tf.data.Options` and its option groups: recorded with `Dataset.with_options`, read back by `options()`.

tapeshim's pipelines run in Python; the options that tune TF's runtime (threading,
optimizations, autotuning, sharding policy) are accepted and kept so programs that set
them run unchanged, and they change nothing here.
"""

from __future__ import annotations

import enum
from typing import Any


class AutoShardPolicy(enum.IntEnum):
    """How a distributed dataset is sharded (`tf.data.experimental.AutoShardPolicy`)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """What to do with external state when checkpointing an iterator."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


class _OptionsBase:
    """Named options with defaults; setting an unknown name is an AttributeError, as TF's."""

    _FIELDS: dict[str, Any] = {}

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {})
        for field, default in self._FIELDS.items():
            if isinstance(default, type) and issubclass(default, _OptionsBase):
                self._values[field] = default()

    def __getattr__(self, field: str) -> Any:
        if field.startswith("_"):
            raise AttributeError(field)
        if field not in self._FIELDS:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{field}'")
        default = self._FIELDS[field]
        return self._values.get(field, None if isinstance(default, type) else default)

    def __setattr__(self, field: str, value: Any) -> None:
        if field not in self._FIELDS:
            raise AttributeError(f"Cannot set the property {field} on {type(self).__name__}.")
        self._values[field] = value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values == self._values

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def _merged(self, other: "_OptionsBase") -> "_OptionsBase":
        result = type(self)()
        for field in self._FIELDS:
            mine, theirs = self._values.get(field), other._values.get(field)
            if isinstance(mine, _OptionsBase):
                result._values[field] = mine._merged(theirs)
            elif theirs is not None:
                result._values[field] = theirs
            elif mine is not None:
                result._values[field] = mine
        return result

    def __repr__(self) -> str:
        set_values = {k: v for k, v in self._values.items() if not isinstance(v, _OptionsBase)}
        return f"{type(self).__name__}({set_values})"


class AutotuneOptions(_OptionsBase):
    """`tf.data.experimental.AutotuneOptions`."""

    _FIELDS = {
        "enabled": None,
        "cpu_budget": None,
        "ram_budget": None,
        "autotune_algorithm": None,
        "initial_parallelism": None,
        "min_parallelism": None,
    }


class DistributeOptions(_OptionsBase):
    """`tf.data.experimental.DistributeOptions`."""

    _FIELDS = {"auto_shard_policy": AutoShardPolicy.AUTO, "num_devices": None}


class OptimizationOptions(_OptionsBase):
    """`tf.data.experimental.OptimizationOptions`."""

    _FIELDS = {
        name: None
        for name in (
            "apply_default_optimizations",
            "filter_fusion",
            "filter_parallelization",
            "inject_prefetch",
            "map_and_batch_fusion",
            "map_and_filter_fusion",
            "map_fusion",
            "map_parallelization",
            "noop_elimination",
            "parallel_batch",
            "seq_interleave_prefetch",
            "shuffle_and_repeat_fusion",
            "warm_start",
        )
    }


class ThreadingOptions(_OptionsBase):
    """`tf.data.ThreadingOptions`."""

    _FIELDS = {"max_intra_op_parallelism": None, "private_threadpool_size": None}


class Options(_OptionsBase):
    """`tf.data.Options`: settings a dataset carries (`Dataset.with_options`); merged when set twice."""

    _FIELDS = {
        "autotune": AutotuneOptions,
        "deterministic": None,
        "experimental_deterministic": None,
        "experimental_distribute": DistributeOptions,
        "experimental_external_state_policy": None,
        "experimental_optimization": OptimizationOptions,
        "experimental_slack": None,
        "experimental_symbolic_checkpoint": None,
        "experimental_warm_start": None,
        "experimental_threading": ThreadingOptions,
        "threading": ThreadingOptions,
        "dataset_name": None,
        "framework_type": None,
    }

    def merge(self, options: "Options") -> "Options":
        """These options overridden by the ones `options` sets.

        Raises:
          TypeError: if `options` is not `tf.data.Options`.
        """
        if not isinstance(options, Options):
            raise TypeError(f"`options` must be a `tf.data.Options`, got {type(options)}.")
        return self._merged(options)  # type: ignore[return-value]
