"""`tf.signal`: FFTs, framing, windows, STFT, mel filters, DCT and MFCCs."""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, symbolic_dims
from tapeshim._src.ops import table
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.ops.image_common import host_constant, kernel, run, static_int
from tapeshim._src.ops.manip_ops import pad
from tapeshim._src.ops.math_ops import multiply
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import AxisLike, DTypeLike, TensorLike

_COMPLEX_OF = {"float32": dtypes.complex64, "float64": dtypes.complex128}
_REAL_OF = {"complex64": dtypes.float32, "complex128": dtypes.float64}


# -- FFTs ---------------------------------------------------------------------------------------------
def _fft_impl(x: jax.Array, kind: str, rank: int, lengths: tuple | None) -> jax.Array:
    axes = tuple(range(-rank, 0))
    if kind == "fft":
        return jnp.fft.fftn(x, axes=axes).astype(x.dtype)
    if kind == "ifft":
        return jnp.fft.ifftn(x, axes=axes).astype(x.dtype)
    if kind == "rfft":
        return jnp.fft.rfftn(x, s=lengths, axes=axes).astype(_COMPLEX_OF[str(x.dtype)].as_numpy_dtype)
    real = np.float32 if x.dtype == jnp.complex64 else np.float64
    return jnp.fft.irfftn(x, s=lengths, axes=axes).astype(real)


_FFT = kernel("FFT", _fft_impl)


def _complex_input(value: Any, op_name: str) -> Tensor:
    tensor = convert_to_tensor(value)
    if tensor.dtype not in (dtypes.complex64, dtypes.complex128):
        raise errors.invalid_argument(
            f"Value for attr 'Tcomplex' of {tensor.dtype.name.replace('float32', 'float').replace('float64', 'double')}"
            f" is not in the list of allowed values: complex64, complex128\n\t; NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    return tensor


def _rank_check(tensor: Tensor, rank: int, op_name: str) -> None:
    if len(tensor._shape) < rank:
        raise errors.invalid_argument(f"input must be at least {rank}D{list(tensor._shape)}".replace(" ", ""), op_name)


def _complex_fft(kind: str, rank: int, op_name: str) -> Callable[..., Tensor]:
    def fft(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
        tensor = _complex_input(input, op_name)
        _rank_check(tensor, rank, op_name)
        return run(_FFT, (tensor,), kind=kind, rank=rank, lengths=None)

    direction = "inverse " if kind == "ifft" else ""
    fft.__name__ = op_name.lower()
    fft.__doc__ = (
        f"The {direction}discrete Fourier transform over the innermost {rank} axis/axes of a complex "
        f"tensor.\n\n    Raises:\n      InvalidArgumentError: for a real input or a rank below {rank}.\n"
    )
    return fft


fft = table.export("signal.fft", dtypes="complex")(_complex_fft("fft", 1, "FFT"))
ifft = table.export("signal.ifft", dtypes="complex")(_complex_fft("ifft", 1, "IFFT"))
fft2d = table.export("signal.fft2d", dtypes="complex")(_complex_fft("fft", 2, "FFT2D"))
ifft2d = table.export("signal.ifft2d", dtypes="complex")(_complex_fft("ifft", 2, "IFFT2D"))
fft3d = table.export("signal.fft3d", dtypes="complex")(_complex_fft("fft", 3, "FFT3D"))
ifft3d = table.export("signal.ifft3d", dtypes="complex")(_complex_fft("ifft", 3, "IFFT3D"))


def _lengths(fft_length: Any, rank: int, op_name: str) -> tuple:
    values = _static_ints(fft_length, "fft_length")
    if len(values) != rank:
        raise ValueError(f"Shape must be rank 1 with {rank} elements for '{op_name}' (fft_length has {len(values)})")
    return tuple(values)


def _real_fft(rank: int, op_name: str) -> Callable[..., Tensor]:
    def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
        tensor = convert_to_tensor(input_tensor)
        if tensor.dtype not in (dtypes.float32, dtypes.float64):
            raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {tensor}")
        _rank_check(tensor, rank, op_name)
        lengths = tuple(tensor._shape[-rank:]) if fft_length is None else _lengths(fft_length, rank, op_name)
        return run(_FFT, (tensor,), kind="rfft", rank=rank, lengths=lengths)

    rfft.__name__ = op_name.lower()
    rfft.__doc__ = (
        f"The discrete Fourier transform of a real signal over its innermost {rank} axis/axes: the "
        f"non-negative frequencies of the last one.\n\n    Args:\n      input_tensor: a float32 or "
        f"float64 tensor.\n      fft_length: the transform sizes (the input is cropped or zero-padded)."
        f"\n      name: accepted for compatibility.\n\n    Raises:\n      ValueError: for a non-float "
        f"input.\n"
    )
    return rfft


def _inverse_real_fft(rank: int, op_name: str) -> Callable[..., Tensor]:
    def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
        tensor = convert_to_tensor(input_tensor)
        if tensor.dtype not in (dtypes.complex64, dtypes.complex128):
            raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: {tensor}")
        _rank_check(tensor, rank, op_name)
        if fft_length is None:
            lengths = tuple(tensor._shape[-rank:-1]) + (2 * (tensor._shape[-1] - 1),)
        else:
            lengths = _lengths(fft_length, rank, op_name)
        return run(_FFT, (tensor,), kind="irfft", rank=rank, lengths=lengths)

    irfft.__name__ = op_name.lower()
    irfft.__doc__ = (
        f"The inverse of `rfft` over the innermost {rank} axis/axes: a real signal of `fft_length` "
        f"(default `2 * (n - 1)` for the last axis).\n\n    Raises:\n      ValueError: for a "
        f"non-complex input.\n"
    )
    return irfft


rfft = table.export("signal.rfft", dtypes=table.REAL_FLOAT)(_real_fft(1, "RFFT"))
rfft2d = table.export("signal.rfft2d", dtypes=table.REAL_FLOAT)(_real_fft(2, "RFFT2D"))
rfft3d = table.export("signal.rfft3d", dtypes=table.REAL_FLOAT)(_real_fft(3, "RFFT3D"))
irfft = table.export("signal.irfft", dtypes="complex")(_inverse_real_fft(1, "IRFFT"))
irfft2d = table.export("signal.irfft2d", dtypes="complex")(_inverse_real_fft(2, "IRFFT2D"))
irfft3d = table.export("signal.irfft3d", dtypes="complex")(_inverse_real_fft(3, "IRFFT3D"))

_SHIFT = kernel("FFTShift", lambda x, axes, inverse: (jnp.fft.ifftshift if inverse else jnp.fft.fftshift)(x, axes))


def _shift_axes(x: Tensor, axes: Any) -> tuple:
    rank = len(x._shape)
    values = tuple(range(rank)) if axes is None else _static_ints(axes, "axes")
    return tuple(a % rank for a in values)


@table.export("signal.fftshift", dtypes=table.ANY, op=_SHIFT)
def fftshift(x: TensorLike, axes: AxisLike = None, name: str | None = None) -> Tensor:
    """Moves the zero-frequency term to the center of the spectrum (all axes by default)."""
    x_t = convert_to_tensor(x)
    return run(_SHIFT, (x_t,), axes=_shift_axes(x_t, axes), inverse=False)


@table.export("signal.ifftshift", dtypes=table.ANY, op=_SHIFT)
def ifftshift(x: TensorLike, axes: AxisLike = None, name: str | None = None) -> Tensor:
    """The inverse of `fftshift`."""
    x_t = convert_to_tensor(x)
    return run(_SHIFT, (x_t,), axes=_shift_axes(x_t, axes), inverse=True)


# -- framing ------------------------------------------------------------------------------------------
def _frame_impl(x: jax.Array, pad_value: jax.Array, length: int, step: int, pad_end: bool, axis: int) -> jax.Array:
    size = x.shape[axis]
    if not symbolic_dims.is_symbolic(size):
        if pad_end:
            count = -(-size // step)
            total = max((count - 1) * step + length, size)
            widths = [(0, 0)] * x.ndim
            widths[axis] = (0, total - size)
            x = jnp.pad(x, widths, constant_values=pad_value.astype(x.dtype))
        else:
            count = max(0, 1 + (size - length) // step)
        index = jnp.asarray((np.arange(count)[:, None] * step + np.arange(length)[None, :]).astype(np.int32))
    else:  # a length known per call (a trace for every size): the frames' count and indices in the program
        if pad_end:
            count = -(-size // step)
            widths = [(0, 0)] * x.ndim
            widths[axis] = (0, (count - 1) * step + length)  # (at least what the last frame needs)
            x = jnp.pad(x, widths, constant_values=pad_value.astype(x.dtype))
        else:
            count = symbolic_dims.at_least_zero(1 + (size - length) // step)
        index = jax.lax.iota(jnp.int32, count)[:, None] * step + jnp.arange(length, dtype=jnp.int32)[None, :]
    out = jnp.take(x, index.reshape(-1), axis=axis)
    return out.reshape(x.shape[:axis] + (count, length) + x.shape[axis + 1 :])


_FRAME = kernel("Frame", _frame_impl)


@table.export("signal.frame", dtypes=table.ANY, op=_FRAME)
def frame(
    signal: TensorLike,
    frame_length: TensorLike,
    frame_step: TensorLike,
    pad_end: bool = False,
    pad_value: Any = 0,
    axis: int = -1,
    name: str | None = None,
) -> Tensor:
    """Overlapping frames of `frame_length` every `frame_step` samples along `axis`.

    Raises:
      ValueError: for a scalar signal.
    """
    signal_t = convert_to_tensor(signal)
    rank = len(signal_t._shape)
    if rank == 0:
        raise ValueError("Shape must have rank at least 1 but is rank 0")
    ax = int(axis) % rank
    length, step = static_int(frame_length, "frame_length"), static_int(frame_step, "frame_step")
    pad = convert_to_tensor(pad_value, dtype=signal_t.dtype)
    return run(_FRAME, (signal_t, pad), length=length, step=step, pad_end=bool(pad_end), axis=ax)


def _overlap_add_impl(x: jax.Array, step: int) -> jax.Array:
    frames, length = x.shape[-2], x.shape[-1]
    if symbolic_dims.is_symbolic(frames) or symbolic_dims.is_symbolic(length):  # (sizes known per call)
        total = (frames - 1) * step + length
        index = jax.lax.iota(jnp.int32, frames)[:, None] * step + jax.lax.iota(jnp.int32, length)[None, :]
    else:
        total = (frames - 1) * step + length if frames else 0
        index = jnp.asarray((np.arange(frames)[:, None] * step + np.arange(length)[None, :]).astype(np.int32))
    out = jnp.zeros(x.shape[:-2] + (total,), x.dtype)
    return out.at[..., index.reshape(-1)].add(x.reshape(x.shape[:-2] + (-1,)))


_OVERLAP_ADD = kernel("OverlapAndAdd", _overlap_add_impl)


@table.export("signal.overlap_and_add", dtypes=table.NUMERIC, op=_OVERLAP_ADD)
def overlap_and_add(signal: TensorLike, frame_step: TensorLike, name: str | None = None) -> Tensor:
    """Sums frames `[..., frames, frame_length]` placed `frame_step` apart into one signal.

    Raises:
      ValueError: for a rank below 2 or `frame_step` greater than the frame length.
    """
    signal_t = convert_to_tensor(signal)
    if len(signal_t._shape) < 2:
        raise ValueError(f"Shape must have rank at least 2 but is rank {len(signal_t._shape)}")
    step = static_int(frame_step, "frame_step")
    length = signal_t._shape[-1]
    if not symbolic_dims.is_symbolic(length) and step > length:  # (TF checks a known frame length only)
        raise ValueError(f"frame_step ({step}) must be less than or equal to frame_length ({signal_t._shape[-1]})")
    return run(_OVERLAP_ADD, (signal_t,), step=step)


# -- windows ------------------------------------------------------------------------------------------
def _raised_cosine(length: Any, periodic: Any, dtype: Any, a: float, b: float) -> Tensor:
    out = dtypes.as_dtype(dtype)
    if not out.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {out}")
    n = static_int(length, "window_length")
    if n == 1:
        return constant(np.ones(1, out.as_numpy_dtype), out)
    np_type = np.float64 if out == dtypes.float64 else np.float32
    even = 1 - n % 2
    denominator = np_type(n + int(bool(periodic)) * even - 1)
    count = np.arange(n, dtype=np_type)
    values = np_type(a) - np_type(b) * np.cos(np_type(2.0 * np.pi) * count / denominator).astype(np_type)
    return constant(values.astype(out.as_numpy_dtype), out)


@table.export("signal.hann_window", gradient="-", dtypes=table.REAL_FLOAT)
def hann_window(
    window_length: TensorLike, periodic: bool = True, dtype: DTypeLike = dtypes.float32, name: str | None = None
) -> Tensor:
    """A Hann window of `window_length` (periodic for even lengths when `periodic`, as TF)."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


@table.export("signal.hamming_window", gradient="-", dtypes=table.REAL_FLOAT)
def hamming_window(
    window_length: TensorLike, periodic: bool = True, dtype: DTypeLike = dtypes.float32, name: str | None = None
) -> Tensor:
    """A Hamming window of `window_length` (periodic for even lengths when `periodic`, as TF)."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)


def _float_window_dtype(dtype: Any) -> dtypes.DType:
    out = dtypes.as_dtype(dtype)
    if not out.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {out}")
    return out


def _kaiser(length: int, beta: float) -> np.ndarray:
    if length == 1:
        return np.ones(1)
    half = (length - 1) / 2.0
    arg = np.arange(-half, half + 0.1, 1.0)
    return np.i0(beta * np.sqrt(np.clip(1 - (arg / half) ** 2, 0, None))) / np.i0(beta)


@table.export("signal.kaiser_window", gradient="-", dtypes=table.REAL_FLOAT)
def kaiser_window(
    window_length: TensorLike, beta: float = 12.0, dtype: DTypeLike = dtypes.float32, name: str | None = None
) -> Tensor:
    """A Kaiser window: `I0(beta * sqrt(1 - (2n / (N - 1) - 1) ** 2)) / I0(beta)`."""
    out = _float_window_dtype(dtype)
    return host_constant(_kaiser(static_int(window_length, "window_length"), float(beta)), out)


@table.export("signal.kaiser_bessel_derived_window", gradient="-", dtypes=table.REAL_FLOAT)
def kaiser_bessel_derived_window(
    window_length: TensorLike, beta: float = 12.0, dtype: DTypeLike = dtypes.float32, name: str | None = None
) -> Tensor:
    """A Kaiser-Bessel-derived window (for MDCTs): the normalized running sum of a Kaiser window, mirrored."""
    out = _float_window_dtype(dtype)
    half = static_int(window_length, "window_length") // 2
    running = np.cumsum(_kaiser(half + 1, float(beta)))
    half_window = np.sqrt(running[:-1] / running[-1])
    return host_constant(np.concatenate([half_window, half_window[::-1]]), out)


@table.export("signal.vorbis_window", gradient="-", dtypes=table.REAL_FLOAT)
def vorbis_window(window_length: TensorLike, dtype: DTypeLike = dtypes.float32, name: str | None = None) -> Tensor:
    """The Vorbis power-complementary window: `sin(pi / 2 * sin(pi * (n + 0.5) / N) ** 2)`."""
    out = _float_window_dtype(dtype)
    length = static_int(window_length, "window_length")
    n = np.arange(length, dtype=np.float64)
    return host_constant(np.sin(np.pi / 2 * np.sin(np.pi * (n + 0.5) / length) ** 2), out)


# -- STFT ---------------------------------------------------------------------------------------------
def _default_fft_length(frame_length: int) -> int:
    return 1 if frame_length <= 1 else 2 ** int(math.ceil(math.log2(frame_length)))


@table.export("signal.stft", dtypes=table.REAL_FLOAT)
def stft(
    signals: TensorLike,
    frame_length: TensorLike,
    frame_step: TensorLike,
    fft_length: TensorLike | None = None,
    window_fn: Callable[..., Any] | None = hann_window,
    pad_end: bool = False,
    name: str | None = None,
) -> Tensor:
    """The short-time Fourier transform of real signals `[..., samples]`: `[..., frames, fft_length // 2 + 1]`.

    Raises:
      ValueError: for a scalar or non-float signal.
    """
    signals_t = convert_to_tensor(signals)
    if len(signals_t._shape) < 1:
        raise ValueError("Shape must have rank at least 1 but is rank 0")
    length = static_int(frame_length, "frame_length")
    n_fft = _default_fft_length(length) if fft_length is None else static_int(fft_length, "fft_length")
    framed = frame(signals_t, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = multiply(framed, convert_to_tensor(window_fn(length, dtype=signals_t.dtype)))
    return rfft(framed, [n_fft])


@table.export("signal.inverse_stft", dtypes="complex")
def inverse_stft(
    stfts: TensorLike,
    frame_length: TensorLike,
    frame_step: TensorLike,
    fft_length: TensorLike | None = None,
    window_fn: Callable[..., Any] | None = hann_window,
    name: str | None = None,
) -> Tensor:
    """Overlap-adds the inverse FFTs of `stfts` `[..., frames, bins]` (windowed by `window_fn`).

    Raises:
      ValueError: for a rank below 2.
    """
    stfts_t = convert_to_tensor(stfts)
    if len(stfts_t._shape) < 2:
        raise ValueError(f"Shape must have rank at least 2 but is rank {len(stfts_t._shape)}")
    length = static_int(frame_length, "frame_length")
    n_fft = _default_fft_length(length) if fft_length is None else static_int(fft_length, "fft_length")
    frames = irfft(stfts_t, [n_fft])
    if n_fft > length:
        frames = frames[..., :length]
    elif n_fft < length:
        frames = pad(frames, [[0, 0]] * (len(frames._shape) - 1) + [[0, length - n_fft]])
    if window_fn is not None:
        frames = multiply(frames, convert_to_tensor(window_fn(length, dtype=_REAL_OF[stfts_t.dtype.name])))
    return overlap_and_add(frames, frame_step)


@table.export("signal.inverse_stft_window_fn", gradient="-", dtypes=table.REAL_FLOAT)
def inverse_stft_window_fn(
    frame_step: TensorLike, forward_window_fn: Callable[..., Any] = hann_window, name: str | None = None
) -> Callable[..., Tensor]:
    """A window function for `inverse_stft` that inverts `stft` with `forward_window_fn` (TF's normalization)."""
    step = static_int(frame_step, "frame_step")

    def window(frame_length: Any, dtype: Any) -> Tensor:
        length = static_int(frame_length, "frame_length")
        forward = np.asarray(convert_to_tensor(forward_window_fn(length, dtype=dtype)).numpy())
        squared = np.square(forward)
        padded = np.pad(squared, (0, -length % step)).reshape(-1, step)
        denominator = np.tile(padded.sum(axis=0, keepdims=True), (padded.shape[0], 1)).reshape(-1)[:length]
        return host_constant(forward / denominator, dtype)

    return window


# -- mel filters, DCT, MFCCs --------------------------------------------------------------------------
def _hertz_to_mel(hertz: np.ndarray, np_type: type) -> np.ndarray:
    return np_type(1127.0) * np.log(np_type(1.0) + hertz / np_type(700.0))


@table.export("signal.linear_to_mel_weight_matrix", gradient="-", dtypes=table.REAL_FLOAT)
def linear_to_mel_weight_matrix(
    num_mel_bins: int = 20,
    num_spectrogram_bins: int = 129,
    sample_rate: Any = 8000,
    lower_edge_hertz: float = 125.0,
    upper_edge_hertz: float = 3800.0,
    dtype: DTypeLike = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """The `[num_spectrogram_bins, num_mel_bins]` matrix of triangular mel filters (HTK mel scale, as TF).

    Raises:
      ValueError: for non-positive bin counts or sample rate, or band edges outside [0, Nyquist].
    """
    out = dtypes.as_dtype(dtype)
    if not out.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {out}")
    mels, bins = static_int(num_mel_bins, "num_mel_bins"), static_int(num_spectrogram_bins, "num_spectrogram_bins")
    rate = float(convert_to_tensor(sample_rate).numpy()) if hasattr(sample_rate, "dtype") else float(sample_rate)
    lower, upper = float(lower_edge_hertz), float(upper_edge_hertz)
    if mels <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {mels}")
    if lower < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower}")
    if lower >= upper:
        raise ValueError(f"lower_edge_hertz {lower:.1f} >= upper_edge_hertz {upper:.1f}")
    if rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {rate}")
    if upper > rate / 2:
        raise ValueError(
            f"upper_edge_hertz {upper:.1f} is greater than Nyquist {rate / 2:.1f} for sample_rate {rate:.1f}"
        )
    np_type = np.float64 if out == dtypes.float64 else np.float32
    nyquist = np_type(rate / 2.0)
    step = nyquist / np_type(bins - 1) if bins > 1 else np_type(0)
    linear = (np.arange(bins, dtype=np_type) * step)[1:]
    spectrogram_mel = _hertz_to_mel(linear, np_type)[:, None]
    low_mel, high_mel = _hertz_to_mel(np_type(lower), np_type), _hertz_to_mel(np_type(upper), np_type)
    edges = low_mel + np.arange(mels + 2, dtype=np_type) * ((high_mel - low_mel) / np_type(mels + 1))
    lower_mel, center_mel, upper_mel = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    lower_slopes = (spectrogram_mel - lower_mel) / (center_mel - lower_mel)
    upper_slopes = (upper_mel - spectrogram_mel) / (upper_mel - center_mel)
    weights = np.maximum(np_type(0), np.minimum(lower_slopes, upper_slopes))
    weights = np.pad(weights, ((1, 0), (0, 0)))
    return constant(weights.astype(out.as_numpy_dtype), out)


def _dct_matrix(kind: int, n: int, norm: str | None) -> np.ndarray:
    """M with y = x @ M for the DCT of `kind` (scipy's and TF's definitions)."""
    k = np.arange(n)[None, :].astype(np.float64)
    i = np.arange(n)[:, None].astype(np.float64)
    if kind == 1:
        matrix = 2 * np.cos(np.pi * i * k / max(n - 1, 1))
        matrix[0, :] = 1
        matrix[-1, :] = (-1.0) ** np.arange(n)
        return matrix
    if kind == 2:
        matrix = 2 * np.cos(np.pi * k * (2 * i + 1) / (2 * n))
        if norm == "ortho":
            matrix[:, 0] *= np.sqrt(1 / (4 * n))
            matrix[:, 1:] *= np.sqrt(1 / (2 * n))
        return matrix
    if kind == 3:
        matrix = 2 * np.cos(np.pi * i * (2 * k + 1) / (2 * n))
        matrix[0, :] = 1
        if norm == "ortho":
            matrix[0, :] *= np.sqrt(1 / n)
            matrix[1:, :] *= np.sqrt(2 / n) / 2
        return matrix
    matrix = 2 * np.cos(np.pi * (2 * i + 1) * (2 * k + 1) / (4 * n))
    return matrix * np.sqrt(1 / (2 * n)) if norm == "ortho" else matrix


_MATMUL = kernel("DCT", lambda x, m: jnp.matmul(x, m.astype(x.dtype), precision=jax.lax.Precision.HIGHEST))


@table.export(
    "signal.dct", dtypes=table.REAL_FLOAT, note="a matrix product in the input dtype (TF uses an FFT)", op=_MATMUL
)
def dct(
    input: TensorLike,
    type: int = 2,
    n: TensorLike | None = None,
    axis: int = -1,
    norm: str | None = None,  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """The discrete cosine transform of types 1-4 over the last axis, as `scipy.fft.dct`.

    Raises:
      ValueError: for a bad type, norm or `n`, or a non-float input.
      NotImplementedError: for `axis` other than -1, as TF.
    """
    x = convert_to_tensor(input)
    if type not in (1, 2, 3, 4):
        raise ValueError(f"Types I, II, III and IV (I)DCT are supported. Got type: {type}")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    if type == 1 and norm == "ortho":
        raise ValueError("Normalization is not supported for the Type-I DCT.")
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"DCT requires tf.float32 or tf.float64 inputs, got: {x}")
    if n is not None:
        size = static_int(n, "n")
        if size < 1:
            raise ValueError(f"n should be a positive integer or None. Got: {size}")
        if size < x._shape[-1]:
            x = x[..., :size]
        elif size > x._shape[-1]:
            x = pad(x, [[0, 0]] * (len(x._shape) - 1) + [[0, size - x._shape[-1]]])
    length = x._shape[-1]
    if type == 1 and length < 2:
        raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    return run(_MATMUL, (x, host_constant(_dct_matrix(type, length, norm), x.dtype)))


@table.export("signal.idct", dtypes=table.REAL_FLOAT, note="a matrix product in the input dtype (TF uses an FFT)")
def idct(
    input: TensorLike,
    type: int = 2,
    n: TensorLike | None = None,
    axis: int = -1,
    norm: str | None = None,  # noqa: A002
    name: str | None = None,
) -> Tensor:
    """The inverse DCT: a DCT of the inverse type (unnormalized, it scales by `2 * (n - 1)` or `2 * n`, as TF)."""
    if type not in (1, 2, 3, 4):
        raise ValueError(f"Types I, II, III and IV (I)DCT are supported. Got type: {type}")
    inverse = {1: 1, 2: 3, 3: 2, 4: 4}[type]
    return dct(input, type=inverse, n=n, axis=axis, norm=norm)


@table.export("signal.mfccs_from_log_mel_spectrograms", dtypes=table.REAL_FLOAT)
def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any, name: str | None = None) -> Tensor:
    """MFCCs: the type-2 DCT of log-mel spectrograms scaled by `rsqrt(2 * num_mel_bins)`, as TF.

    Raises:
      ValueError: for a scalar input or no mel bins.
    """
    x = convert_to_tensor(log_mel_spectrograms)
    if len(x._shape) < 1:
        raise ValueError("Shape must have rank at least 1 but is rank 0")
    if x._shape[-1] == 0:
        raise ValueError("num_mel_bins must be positive. Got: 0")
    scale = np.asarray(1.0 / np.sqrt(x._shape[-1] * 2.0))
    return multiply(dct(x, type=2), host_constant(scale, x.dtype))
