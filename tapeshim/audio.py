"""`tf.audio`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.audio_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]
