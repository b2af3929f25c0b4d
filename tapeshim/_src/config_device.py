"""`tf.device`: TF's device names mapped onto JAX devices, and per-device queries of `tf.config`.

`with tf.device("/GPU:1"):` makes JAX's matching device the default device
(`jax.default_device`), so new constants and ops on uncommitted inputs run there. A
device that does not exist falls back to JAX's default device when soft placement is
on (TF's default); with it off, entering the scope raises `InvalidArgumentError`.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import jax

from tapeshim._src import config, errors

_TYPES = ("CPU", "GPU", "TPU", "CUSTOM", "EPU")


def parse_device(spec: str) -> tuple[str | None, int | None]:
    """The device type and index of a TF device string (`"/job:localhost/device:GPU:0"`, `"/cpu:0"`, `"GPU"`).

    Raises:
      ValueError: a part that is not a job, replica, task or device.
    """
    device_type, index = None, None
    for part in spec.split("/"):
        if not part:
            continue
        fields = part.split(":")
        n = len(fields)
        if n == 2 and fields[0] in ("job", "replica", "task"):
            continue
        if n in (1, 2) and fields[0].upper() in _TYPES:
            device_type = fields[0].upper()
            index = None if n == 1 or fields[1] == "*" else int(fields[1])
        elif n == 3 and fields[0] == "device":
            device_type = fields[1].upper() if fields[1].upper() in _TYPES else fields[1]
            index = None if fields[2] == "*" else int(fields[2])
        else:
            raise ValueError(f"Unknown attribute '{fields[0]}' is encountered while parsing the device spec: '{spec}'.")
    return device_type, index


def jax_device(device_type: str | None, index: int | None) -> Any:
    """The JAX device for a TF device type and index; None for JAX's default device.

    Raises:
      InvalidArgumentError: the device does not exist and soft placement is off.
    """
    if device_type is None:
        return None
    candidates = config.jax_devices_of(device_type)
    position = index or 0
    if device_type == "CPU" and candidates:
        # one TF CPU, split into logical CPUs: /CPU:i is XLA's i-th simulated CPU device if there is one
        return candidates[position] if position < len(candidates) else candidates[0]
    if position < len(config.get_visible_devices(device_type)) and position < len(candidates):
        return candidates[position]
    if config.get_soft_device_placement():
        return None
    raise errors.invalid_argument(
        f"Could not satisfy device specification '/job:localhost/replica:0/task:0/device:{device_type}:{position}'. "
        "enable_soft_placement=0. Supported device types [CPU]. All available devices "
        "[/job:localhost/replica:0/task:0/device:CPU:0].")


def tf_device_name(array: Any) -> str:
    """TF's full name of the device holding a JAX array (`/job:localhost/replica:0/task:0/device:CPU:0`)."""
    devices = getattr(array, "devices", None)
    device = next(iter(devices())) if callable(devices) else jax.devices()[0]
    kind = {"cpu": "CPU", "tpu": "TPU"}.get(device.platform, "GPU")
    index = config.jax_devices_of(kind).index(device) if device in config.jax_devices_of(kind) else 0
    return f"/job:localhost/replica:0/task:0/device:{kind}:{index}"


@contextlib.contextmanager
def device(device_name: Any) -> Iterator[None]:
    """Runs the ops created in the scope on a device, as `tf.device`.

    Args:
      device_name: a TF device string (`"/GPU:0"`, `"/device:CPU:0"`, `"cpu"`,
        `"/job:localhost/replica:0/task:0/device:GPU:1"`); None or `""` keeps the current device.

    Raises:
      RuntimeError: `device_name` is a function (TF's graph-mode device functions).
      ValueError: `device_name` is not a string, or not a device string.
    """
    if callable(device_name):
        raise RuntimeError("tf.device does not support functions.")
    if device_name is not None and not isinstance(device_name, str):
        if hasattr(device_name, "to_string"):
            device_name = device_name.to_string()
        else:
            raise ValueError(f"Expecting a string device name. Got {type(device_name)}({device_name})")
    config.STATE.initialized = True
    target = jax_device(*parse_device(device_name or ""))
    if target is None:
        yield
        return
    with jax.default_device(target):
        yield


def _find(device: str) -> Any:
    kind, index = parse_device(device)
    candidates = config.jax_devices_of(kind) if kind else []
    if kind is None or (index or 0) >= len(candidates):
        raise ValueError(f"No matching devices found for '{device}'")
    return candidates[index or 0]


def get_memory_info(device: str) -> dict[str, int]:
    """The device's current and peak memory use in bytes, as `tf.config.experimental.get_memory_info`.

    Raises:
      ValueError: no such device, or one without allocator statistics (a CPU).
    """
    stats = _find(device).memory_stats()
    if stats is None:
        raise ValueError(f"Allocator stats not available for device '{device}'")
    return {"current": int(stats.get("bytes_in_use", 0)), "peak": int(stats.get("peak_bytes_in_use", 0))}


def reset_memory_stats(device: str) -> None:
    """Checks the device exists, as `tf.config.experimental.reset_memory_stats` (JAX keeps its own peak).

    Raises:
      ValueError: no such device.
    """
    _find(device)


def get_device_details(device: Any) -> dict[str, Any]:
    """A physical device's details, as `tf.config.experimental.get_device_details` (empty for a CPU)."""
    device = config._check_device(device)
    if device.device_type != "GPU":
        return {}
    jax_dev = config.jax_devices_of("GPU")[int(device.name.rsplit(":", 1)[1])]
    details: dict[str, Any] = {"device_name": getattr(jax_dev, "device_kind", "")}
    capability = getattr(jax_dev, "compute_capability", None)
    if capability:
        details["compute_capability"] = tuple(int(p) for p in str(capability).split("."))
    return details
