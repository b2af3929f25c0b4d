"""`tf.signal`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.ops.signal_ops import (
    dct,
    fft,
    fft2d,
    fft3d,
    fftshift,
    frame,
    hamming_window,
    hann_window,
    idct,
    ifft,
    ifft2d,
    ifft3d,
    ifftshift,
    inverse_stft,
    inverse_stft_window_fn,
    irfft,
    irfft2d,
    irfft3d,
    linear_to_mel_weight_matrix,
    mfccs_from_log_mel_spectrograms,
    overlap_and_add,
    rfft,
    rfft2d,
    rfft3d,
    stft,
)

__all__ = [
    "dct", "fft", "fft2d", "fft3d", "fftshift", "frame", "hamming_window", "hann_window", "idct", "ifft", "ifft2d",
    "ifft3d", "ifftshift", "inverse_stft", "inverse_stft_window_fn", "irfft", "irfft2d", "irfft3d",
    "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms", "overlap_and_add", "rfft", "rfft2d", "rfft3d",
    "stft",
]
