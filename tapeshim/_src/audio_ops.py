"""`tf.audio`: 16-bit PCM WAV decoding and encoding on the host, byte-compatible with TF's kernels."""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import table
from tapeshim._src.ops.image_codecs import _bytes_of
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


class DecodeWav(NamedTuple):
    """`tf.audio.decode_wav`'s result: float32 `audio` `[samples, channels]` in [-1, 1) and int32 `sample_rate`."""

    audio: Tensor
    sample_rate: Tensor


def _short(op: str) -> Exception:
    return errors.invalid_argument("Data too short when trying to read string", op)


def _parse(data: bytes) -> tuple[np.ndarray, int, int]:
    """(int16 samples [n, channels], channels, rate) from a RIFF/WAVE file of 16-bit PCM."""
    op = "DecodeWav"
    if len(data) < 12:
        raise _short(op)
    if data[:4] != b"RIFF":
        raise errors.invalid_argument(f"Header mismatch: Expected RIFF but found {data[:4].decode('latin-1')}", op)
    if data[8:12] != b"WAVE":
        raise errors.invalid_argument(f"Header mismatch: Expected WAVE but found {data[8:12].decode('latin-1')}", op)
    offset, channels, rate, bits, samples = 12, None, None, None, None
    while offset + 8 <= len(data):
        chunk, size = data[offset : offset + 4], struct.unpack("<I", data[offset + 4 : offset + 8])[0]
        body = data[offset + 8 : offset + 8 + size]
        if chunk == b"fmt ":
            if len(body) < 16:
                raise _short(op)
            audio_format, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
            if audio_format != 1:
                raise errors.invalid_argument(f"Bad audio format for WAV: Expected 1 (PCM), but got{audio_format}", op)
            if bits != 16:
                raise errors.invalid_argument(f"Can only read 16-bit WAV files, but received {bits}", op)
        elif chunk == b"data":
            if channels is None:
                raise errors.invalid_argument("The fmt chunk must come before the data chunk.", op)
            count = len(body) // 2
            samples = np.frombuffer(body[: count * 2], dtype="<i2").reshape(-1, channels)
            break
        offset += 8 + size + (size & 1)
    if samples is None or channels is None or rate is None:
        raise _short(op)
    return samples, channels, rate


@table.export("audio.decode_wav", gradient="-", dtypes="string", note="host-side; 16-bit PCM, as TF")
def decode_wav(
    contents: TensorLike, desired_channels: int = -1, desired_samples: int = -1, name: str | None = None
) -> DecodeWav:
    """Decodes 16-bit PCM WAV data to float32 `[samples, channels]` and the sample rate.

    `desired_channels` repeats the last channel or drops channels; `desired_samples`
    truncates or pads with zeros.

    Raises:
      InvalidArgumentError: for data that is not a 16-bit PCM WAV file.
    """
    samples, channels, rate = _parse(_bytes_of(contents))
    audio = samples.astype(np.float32) / np.float32(32768.0)
    want_channels = int(desired_channels)
    if want_channels > 0 and want_channels != channels:
        picks = [min(c, channels - 1) for c in range(want_channels)]
        audio = audio[:, picks]
    want_samples = int(desired_samples)
    if want_samples >= 0:
        audio = audio[:want_samples]
        if audio.shape[0] < want_samples:
            audio = np.pad(audio, ((0, want_samples - audio.shape[0]), (0, 0)))
    return DecodeWav(constant(np.ascontiguousarray(audio), dtypes.float32), constant(np.int32(rate), dtypes.int32))


@table.export(
    "audio.encode_wav", gradient="-", dtypes=table.REAL_FLOAT, note="host-side; the same bytes as TF's encoder"
)
def encode_wav(audio: Any, sample_rate: TensorLike, name: str | None = None) -> Tensor:
    """Encodes float32 `[samples, channels]` audio (clipped to [-1, 1]) as 16-bit PCM WAV bytes.

    Raises:
      InvalidArgumentError: if `audio` is not 2-D float32 or `sample_rate` is not a scalar.
    """
    if _thread_state.trace is not None:
        raise NotImplementedError("tapeshim encodes WAV data on the host: call it outside tapeshim.function.")
    tensor = convert_to_tensor(audio, dtype_hint=dtypes.float32)
    if tensor.dtype != dtypes.float32:
        raise errors.invalid_argument(
            f"cannot compute EncodeWav as input #0(zero-based) was expected to be a float "
            f"tensor but is a {tensor.dtype.name} tensor",
            "EncodeWav",
        )
    if len(tensor._shape) != 2:
        raise errors.invalid_argument(f"audio must be 2-dimensional{list(tensor._shape)}".replace(" ", ""), "EncodeWav")
    rate_t = convert_to_tensor(sample_rate, dtype_hint=dtypes.int32)
    if rate_t._shape:
        raise errors.invalid_argument(
            f"Input sample_rate should be a scalar tensor, got {rate_t.shape} instead.", "EncodeWav"
        )
    rate = int(rate_t.numpy())
    values = np.asarray(tensor.numpy(), np.float32)
    count, channels = values.shape
    pcm = np.clip(np.round(values * np.float32(32768.0)), -32768, 32767).astype("<i2").tobytes()
    fmt = struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
    header = (
        b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE" + b"fmt " + fmt + b"data" + struct.pack("<I", len(pcm))
    )
    return constant(header + pcm)
