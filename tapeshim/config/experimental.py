"""`tf.config.experimental`."""

from tapeshim._src.config import (
    LogicalDeviceConfiguration as VirtualDeviceConfiguration,
)
from tapeshim._src.config import (
    enable_op_determinism,
    enable_tensor_float_32_execution,
    get_memory_growth,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_memory_growth,
    set_visible_devices,
    tensor_float_32_execution_enabled,
)
from tapeshim._src.config import (
    get_logical_device_configuration as get_virtual_device_configuration,
)
from tapeshim._src.config import (
    set_logical_device_configuration as set_virtual_device_configuration,
)
from tapeshim._src.config_device import get_device_details, get_memory_info, reset_memory_stats

__all__ = [
    "VirtualDeviceConfiguration",
    "enable_op_determinism",
    "enable_tensor_float_32_execution",
    "get_device_details",
    "get_memory_growth",
    "get_memory_info",
    "get_virtual_device_configuration",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "reset_memory_stats",
    "set_memory_growth",
    "set_virtual_device_configuration",
    "set_visible_devices",
    "tensor_float_32_execution_enabled",
]
