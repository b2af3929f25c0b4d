"""`tf.config`: devices TF's way, mapped onto JAX's devices, and the runtime's settings.

TF's physical devices are one CPU (however many CPU devices XLA simulates) and one
GPU or TPU per JAX accelerator device. Visibility, logical device splits, memory
growth, thread counts and determinism are recorded as TF records them and checked
as TF checks them. tapeshim's "runtime" counts as initialized (TF refuses most changes
after that) once devices were listed as logical devices or a `tf.device` scope was entered.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, NamedTuple

import jax

from tapeshim._src import errors


class PhysicalDevice(NamedTuple):
    """A physical device, as `tf.config.PhysicalDevice`."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """A logical device, as `tf.config.LogicalDevice`."""

    name: str
    device_type: str


@dataclasses.dataclass(frozen=True)
class LogicalDeviceConfiguration:
    """One logical device a physical device is split into, as `tf.config.LogicalDeviceConfiguration`."""

    memory_limit: int | None = None
    experimental_priority: int | None = None
    experimental_device_ordinal: int | None = None

    def __repr__(self) -> str:
        return (
            f"LogicalDeviceConfiguration(memory_limit={self.memory_limit}, experimental_priority="
            f"{self.experimental_priority}, experimental_device_ordinal={self.experimental_device_ordinal})"
        )


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.initialized = False
        self.visible: list[PhysicalDevice] | None = None
        self.logical: dict[PhysicalDevice, list[LogicalDeviceConfiguration]] = {}
        self.memory_growth: dict[PhysicalDevice, bool | None] = {}
        self.inter_op: int | None = None  # None: never set (TF refuses even 0 after initialization)
        self.intra_op: int | None = None
        self.run_functions_eagerly = False
        self.op_determinism = False
        self.soft_placement = True
        self.tensor_float_32 = True
        self.jit: Any = ""
        self.optimizer_options: dict[str, Any] = {"disable_model_pruning": False, "disable_meta_optimizer": False}


STATE = _State()


def _jax_devices(platform: str) -> list:
    try:
        return list(jax.devices(platform))
    except RuntimeError:  # no backend for the platform
        return []


def jax_devices_of(device_type: str) -> list:
    """The JAX devices behind TF's device type (`"CPU"`, `"GPU"`, `"TPU"`)."""
    if device_type == "CPU":
        return _jax_devices("cpu")
    if device_type == "GPU":
        return [d for d in jax.devices() if d.platform in ("gpu", "cuda", "rocm")]
    if device_type == "TPU":
        return [d for d in jax.devices() if d.platform == "tpu"]
    return []


def _physical() -> list[PhysicalDevice]:
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    for kind in ("GPU", "TPU"):
        devices += [PhysicalDevice(f"/physical_device:{kind}:{i}", kind) for i in range(len(jax_devices_of(kind)))]
    return devices


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The physical devices (of `device_type`), as `tf.config.list_physical_devices`.

    One CPU device, whatever number of CPU devices XLA simulates, and one GPU (or
    TPU) device per JAX accelerator device.
    """
    return [d for d in _physical() if device_type is None or d.device_type == device_type]


def _check_device(device: Any) -> PhysicalDevice:
    if not isinstance(device, PhysicalDevice) or device not in _physical():
        raise ValueError(f"Unrecognized device: {device!r}")
    return device


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The physical devices the runtime may use, as `tf.config.get_visible_devices`."""
    visible = _physical() if STATE.visible is None else STATE.visible
    return [d for d in visible if device_type is None or d.device_type == device_type]


def set_visible_devices(devices: Any, device_type: str | None = None) -> None:
    """Sets the physical devices (of `device_type`) the runtime may use, as `tf.config.set_visible_devices`.

    JAX's backends start when tapeshim is imported, so devices cannot be removed; hiding
    every GPU (`set_visible_devices([], "GPU")`) makes the CPU JAX's default device, so the
    program runs on the CPU as TF's would.

    Raises:
      ValueError: an element is not a physical device.
      RuntimeError: the visible devices change after the runtime was initialized.
    """
    if isinstance(devices, PhysicalDevice) or not isinstance(devices, (list, tuple)):
        devices = [devices]
    chosen = [_check_device(d) for d in devices]
    kept = [d for d in get_visible_devices() if device_type is not None and d.device_type != device_type]
    new = [d for d in _physical() if d in chosen or d in kept]
    with STATE.lock:
        if new == get_visible_devices():
            return
        if STATE.initialized:
            raise RuntimeError("Visible devices cannot be modified after being initialized")
        STATE.visible = new
    _place_default()


def _place_default() -> None:
    """With every accelerator hidden, JAX's default device becomes the CPU (TF then runs on its CPU)."""
    accelerators = [d for d in _physical() if d.device_type != "CPU"]
    if not accelerators:
        return
    visible = [d for d in get_visible_devices() if d.device_type != "CPU"]
    jax.config.update("jax_default_device", None if visible else _jax_devices("cpu")[0])


def get_logical_device_configuration(device: PhysicalDevice) -> list[LogicalDeviceConfiguration] | None:
    """The logical devices `device` is split into (None: not split)."""
    return STATE.logical.get(_check_device(device))


def set_logical_device_configuration(device: PhysicalDevice, logical_devices: Any) -> None:
    """Splits a physical device into logical devices, as `tf.config.set_logical_device_configuration`.

    A CPU split into N logical devices lists N CPU devices; `/CPU:i` then runs on
    JAX's i-th CPU device when XLA simulates that many (else on the first).

    Raises:
      ValueError: `device` is not a physical device.
      RuntimeError: the configuration changes after the runtime was initialized.
    """
    device = _check_device(device)
    configs = list(logical_devices)
    with STATE.lock:
        if STATE.logical.get(device) == configs:
            return
        if STATE.initialized:
            raise RuntimeError("Virtual devices cannot be modified after being initialized")
        STATE.logical[device] = configs


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """The logical devices (of `device_type`), as `tf.config.list_logical_devices`; initializes the runtime."""
    STATE.initialized = True
    found = []
    counts: dict[str, int] = {}
    for device in get_visible_devices():
        for _ in STATE.logical.get(device) or (None,):
            index = counts.get(device.device_type, 0)
            counts[device.device_type] = index + 1
            found.append(LogicalDevice(f"/device:{device.device_type}:{index}", device.device_type))
    if not any(d.device_type == "CPU" for d in found):
        raise errors.NotFoundError(None, None, "No CPU devices are available in this process")
    return [d for d in found if device_type is None or d.device_type == device_type]


def get_memory_growth(device: PhysicalDevice) -> bool | None:
    """Whether memory growth is enabled for a GPU, as `tf.config.experimental.get_memory_growth`.

    Raises:
      ValueError: `device` is not a physical device.
      KeyError: `device` is not a GPU.
    """
    device = _check_device(device)
    if device.device_type != "GPU":
        raise KeyError(device)
    return STATE.memory_growth.get(device)


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Records memory growth for a GPU, as `tf.config.experimental.set_memory_growth`.

    JAX reserves GPU memory when its backend starts (`XLA_PYTHON_CLIENT_PREALLOCATE`);
    the setting is recorded and checked as TF checks it.

    Raises:
      ValueError: not a GPU, or the GPU is split into logical devices.
      RuntimeError: the setting changes after the runtime was initialized.
    """
    device = _check_device(device)
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    if device in STATE.logical:
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    with STATE.lock:
        if STATE.memory_growth.get(device) == bool(enable):
            return
        if STATE.initialized:
            raise RuntimeError("Physical devices cannot be modified after being initialized")
        STATE.memory_growth[device] = bool(enable)


def _threads(kind: str, value: int) -> None:
    attr = "inter_op" if kind == "Inter" else "intra_op"
    with STATE.lock:
        if getattr(STATE, attr) == int(value):
            return
        if STATE.initialized:
            raise RuntimeError(f"{kind} op parallelism cannot be modified after initialization.")
        setattr(STATE, attr, int(value))


def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Records the number of threads for independent ops (0: the system picks), as TF."""
    _threads("Inter", num_threads)


def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Records the number of threads inside one op (0: the system picks), as TF."""
    _threads("Intra", num_threads)


def get_inter_op_parallelism_threads() -> int:
    """The recorded number of threads for independent ops (0: the system picks)."""
    return STATE.inter_op or 0


def get_intra_op_parallelism_threads() -> int:
    """The recorded number of threads inside one op (0: the system picks)."""
    return STATE.intra_op or 0


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Makes every `tapeshim.function` run its Python code eagerly (for debugging), as TF."""
    STATE.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    """Whether `tapeshim.function`s run their Python code eagerly (`run_functions_eagerly`).

    `tapeshim/_src/function.py` reads this flag on every call of a `Function`.
    """
    return STATE.run_functions_eagerly


def enable_op_determinism() -> None:
    """Makes ops deterministic, as `tf.config.experimental.enable_op_determinism`.

    XLA's CPU ops are deterministic; on GPU, XLA's deterministic mode
    (`--xla_gpu_deterministic_ops`) must be set before JAX's backend starts (XLA_FLAGS).
    """
    STATE.op_determinism = True


def op_determinism_enabled() -> bool:
    """Whether `enable_op_determinism` was called."""
    return STATE.op_determinism


def set_soft_device_placement(enabled: bool) -> None:
    """Whether a device that does not exist falls back to an existing one, as TF (default True)."""
    STATE.soft_placement = bool(enabled)


def get_soft_device_placement() -> bool:
    """Whether soft device placement is enabled (default True)."""
    return STATE.soft_placement


def enable_tensor_float_32_execution(enabled: bool) -> None:
    """Allows TensorFloat-32 matmuls on GPUs, as TF; disabled, JAX's matmuls use full float32 precision."""
    STATE.tensor_float_32 = bool(enabled)
    jax.config.update("jax_default_matmul_precision", None if enabled else "highest")


def tensor_float_32_execution_enabled() -> bool:
    """Whether TensorFloat-32 execution is allowed (default True)."""
    return STATE.tensor_float_32


def set_jit(enabled: bool | str) -> None:
    """Records TF's auto-clustering setting (tapeshim always compiles with XLA)."""
    STATE.jit = "autoclustering" if enabled is True else ("" if enabled is False else enabled)


def get_jit() -> Any:
    """TF's auto-clustering setting as recorded (`""` by default)."""
    return STATE.jit


def set_experimental_options(options: dict) -> None:
    """Records grappler options (tapeshim has no graph optimizer; XLA optimizes)."""
    STATE.optimizer_options = {
        **dict(options),
        **{k: v for k, v in STATE.optimizer_options.items() if k not in options},
    }


def get_experimental_options() -> dict:
    """The recorded grappler options."""
    return dict(STATE.optimizer_options)
