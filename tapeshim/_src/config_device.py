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


def _one_type(fields: dict, spec: str) -> None:
    if fields["device_type"] is not None:
        raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")


def _parse(spec: str) -> dict[str, Any]:
    """The fields of a TF device string.

    Raises:
      ValueError: a part that is not a job, replica, task or device, or two device parts.
    """
    fields: dict[str, Any] = {"job": None, "replica": None, "task": None, "device_type": None, "device_index": None}
    for part in (spec or "").split("/"):
        if not part:
            continue
        items = part.split(":")
        n = len(items)
        if n == 2 and items[0] == "job":
            fields["job"] = items[1]
        elif n == 2 and items[0] in ("replica", "task"):
            fields[items[0]] = int(items[1])
        elif n in (1, 2) and items[0].upper() in _TYPES:
            _one_type(fields, spec)
            fields["device_type"] = items[0].upper()
            fields["device_index"] = None if n == 1 or items[1] == "*" else int(items[1])
        elif n == 3 and items[0] == "device":
            _one_type(fields, spec)
            fields["device_type"] = items[1].upper() if items[1].upper() in _TYPES else items[1]
            fields["device_index"] = None if items[2] == "*" else int(items[2])
        else:
            raise ValueError(f"Unknown attribute '{items[0]}' is encountered while parsing the device spec: '{spec}'.")
    return fields


def parse_device(spec: str) -> tuple[str | None, int | None]:
    """The device type and index of a TF device string (`"/job:localhost/device:GPU:0"`, `"/cpu:0"`, `"GPU"`).

    Raises:
      ValueError: a part that is not a job, replica, task or device.
    """
    fields = _parse(spec)
    return fields["device_type"], fields["device_index"]


class DeviceSpec:
    """A device's job, replica, task, type and index, as `tf.DeviceSpec` (immutable).

    Args:
      job: the job name.
      replica: the replica index.
      task: the task index.
      device_type: `"CPU"`, `"GPU"`, `"TPU"` (any case) or another type name.
      device_index: the device's index (None: any).
    """

    __slots__ = ("_fields",)

    def __init__(
        self,
        job: str | None = None,
        replica: int | None = None,
        task: int | None = None,
        device_type: str | None = None,
        device_index: int | None = None,
    ) -> None:
        if device_type is not None and device_type.upper() in _TYPES:
            device_type = device_type.upper()
        self._fields = (
            job,
            None if replica is None else int(replica),
            None if task is None else int(task),
            device_type,
            None if device_index is None else int(device_index),
        )

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        """Parses a TF device string (`"/job:worker/task:1/device:GPU:0"`, `"/cpu:0"`)."""
        return cls(**_parse(spec))

    def parse_from_string(self, spec: str) -> "DeviceSpec":
        """The spec of `spec` (TF's name for `from_string` on an instance)."""
        return DeviceSpec.from_string(spec)

    job = property(lambda self: self._fields[0])
    replica = property(lambda self: self._fields[1])
    task = property(lambda self: self._fields[2])
    device_type = property(lambda self: self._fields[3])
    device_index = property(lambda self: self._fields[4])

    def to_string(self) -> str:
        """The TF device string: `/job:<job>/replica:<r>/task:<t>/device:<type>:<index>`, set fields only."""
        job, replica, task, device_type, index = self._fields
        parts = []
        if job is not None:
            parts.append(f"/job:{job}")
        if replica is not None:
            parts.append(f"/replica:{replica}")
        if task is not None:
            parts.append(f"/task:{task}")
        if device_type is not None:
            parts.append(f"/device:{device_type}:{'*' if index is None else index}")
        return "".join(parts)

    def replace(self, **kwargs: Any) -> "DeviceSpec":
        """A copy with some fields replaced."""
        names = ("job", "replica", "task", "device_type", "device_index")
        values: dict[str, Any] = dict(zip(names, self._fields))
        values.update(kwargs)
        return DeviceSpec(**values)

    def make_merged_spec(self, dev: "DeviceSpec") -> "DeviceSpec":
        """A copy with the fields `dev` sets taken from `dev`."""
        names = ("job", "replica", "task", "device_type", "device_index")
        merged: dict[str, Any] = {
            n: theirs if theirs is not None else mine for n, mine, theirs in zip(names, self._fields, dev._fields)
        }
        return DeviceSpec(**merged)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceSpec) and self._fields == other._fields

    def __hash__(self) -> int:
        return hash(self._fields)

    def __repr__(self) -> str:
        job, replica, task, device_type, index = self._fields
        return (
            f"<DeviceSpec(job={job}, replica={replica}, task={task}, device_type={device_type}, device_index={index})>"
        )


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
        "[/job:localhost/replica:0/task:0/device:CPU:0]."
    )


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
