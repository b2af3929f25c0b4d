"""`tf.compat.v1`: the pieces TF 2 programs still call; any other name raises AttributeError.

tapeshim runs TF 2 (eager) code only: sessions, placeholders, graph collections and the
other TF 1 APIs have no tapeshim equivalent.
"""

from __future__ import annotations

from typing import Any

from tapeshim.compat.v1 import logging

_TF2_ONLY = (
    "tapeshim runs TF2 code only: tf.compat.v1.{name} is a TF1 API, which tapeshim does not provide. "
    "Port this code to TF2 (eager execution, tf.function, tf.keras); tapeshim's tf.compat.v1 has only "
    "enable_eager_execution, disable_eager_execution (an error), enable_v2_behavior, executing_eagerly, "
    "logging and set_random_seed."
)


def enable_eager_execution(config: Any = None, device_policy: Any = None, execution_mode: Any = None) -> None:
    """Does nothing: eager execution is always on, as in TF 2."""


def enable_v2_behavior() -> None:
    """Does nothing: tapeshim always behaves as TF 2."""


def executing_eagerly() -> bool:
    """Whether ops run eagerly now (False while a `tapeshim.function` is traced)."""
    from tapeshim._src.ops.graph_ops import executing_eagerly as eagerly

    return eagerly()


def disable_eager_execution() -> None:
    """Refused: TF 1 graph mode does not exist in tapeshim.

    Raises:
      NotImplementedError: always, explaining that tapeshim runs TF 2 code only.
    """
    raise NotImplementedError(
        "tapeshim runs TF2 code only: tf.compat.v1.disable_eager_execution() switches TensorFlow to TF1 graph mode "
        "(sessions, placeholders), which tapeshim does not have. Remove the call and run the code eagerly, using "
        "tapeshim.function (tf.function) for compiled code."
    )


def disable_v2_behavior() -> None:
    """Refused: TF 1 behavior does not exist in tapeshim.

    Raises:
      NotImplementedError: always, explaining that tapeshim runs TF 2 code only.
    """
    raise NotImplementedError(
        "tapeshim runs TF2 code only: tf.compat.v1.disable_v2_behavior() switches TensorFlow to TF1 behavior, "
        "which tapeshim does not have. Remove the call."
    )


def set_random_seed(seed: int) -> None:
    """Sets the global random seed, as `tf.compat.v1.set_random_seed` (`tf.random.set_seed`)."""
    from tapeshim._src.ops.random_ops import set_seed

    set_seed(seed)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(_TF2_ONLY.format(name=name))


__all__ = [
    "disable_eager_execution",
    "disable_v2_behavior",
    "enable_eager_execution",
    "enable_v2_behavior",
    "executing_eagerly",
    "logging",
    "set_random_seed",
]
