"""`tf.experimental.dlpack`: share tensors with other array libraries without copying."""

from tapeshim._src.interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
