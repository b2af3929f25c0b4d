"""`tf.config`: devices and runtime settings (`tapeshim/_src/config.py`, `config_device.py`)."""

from tapeshim._src.config import (
    LogicalDevice,
    LogicalDeviceConfiguration,
    PhysicalDevice,
    functions_run_eagerly,
    get_logical_device_configuration,
    get_soft_device_placement,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    run_functions_eagerly,
    set_logical_device_configuration,
    set_soft_device_placement,
    set_visible_devices,
)
from tapeshim._src.distribute.multi_worker import experimental_connect_to_cluster
from tapeshim.config import experimental, optimizer, threading

experimental_functions_run_eagerly = functions_run_eagerly
experimental_run_functions_eagerly = run_functions_eagerly

__all__ = [
    "LogicalDevice",
    "LogicalDeviceConfiguration",
    "PhysicalDevice",
    "experimental",
    "experimental_connect_to_cluster",
    "experimental_functions_run_eagerly",
    "experimental_run_functions_eagerly",
    "functions_run_eagerly",
    "get_logical_device_configuration",
    "get_soft_device_placement",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "optimizer",
    "run_functions_eagerly",
    "set_logical_device_configuration",
    "set_soft_device_placement",
    "set_visible_devices",
    "threading",
]
