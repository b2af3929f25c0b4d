"""`tf.image`: color spaces, brightness/contrast/saturation/hue/gamma, standardization, SSIM and PSNR."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, runtime_checks
from tapeshim._src.ops import random_ops, table
from tapeshim._src.ops.common import broadcast_shapes, gradient_not_registered
from tapeshim._src.ops.image_common import image_tensor, kernel, run
from tapeshim._src.ops.image_ops import convert_image_dtype, to_float
from tapeshim._src.ops.math_ops import cast
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike

_GRAY_WEIGHTS = (0.2989, 0.587, 0.114)


def _gray(x: jax.Array) -> jax.Array:
    weights = jnp.asarray(_GRAY_WEIGHTS, x.dtype)
    return jnp.sum(x * weights, axis=-1, keepdims=True)


_GRAY = kernel("RGBToGrayscale", _gray)
_TILE3 = kernel("GrayscaleToRGB", lambda x: jnp.concatenate([x, x, x], axis=-1))


@table.export("image.rgb_to_grayscale", dtypes=table.REAL, op=_GRAY)
def rgb_to_grayscale(images: TensorLike, name: str | None = None) -> Tensor:
    """Luma (0.2989 R + 0.587 G + 0.114 B) with a last axis of size 1, in the input dtype.

    Raises:
      InvalidArgumentError: if the last axis is not of size 3.
    """
    images_t = convert_to_tensor(images)
    if not images_t._shape or images_t._shape[-1] != 3:
        last = images_t._shape[-1] if images_t._shape else 1
        raise errors.invalid_argument(
            f"Matrix size-incompatible: In[0]: [{int(np.prod(images_t._shape[:-1]))},{last}], In[1]: [3,1]", "MatMul"
        )
    gray = run(_GRAY, (convert_image_dtype(images_t, dtypes.float32),))
    return convert_image_dtype(gray, images_t.dtype)


@table.export("image.grayscale_to_rgb", dtypes=table.ANY, op=_TILE3)
def grayscale_to_rgb(images: TensorLike, name: str | None = None) -> Tensor:
    """Repeats a size-1 last axis three times.

    Raises:
      ValueError: if the last axis is not of size 1 or the rank is below 2.
    """
    images_t = convert_to_tensor(images)
    if len(images_t._shape) < 2:
        raise ValueError(f"'images' (shape {images_t.shape}) must be at least two-dimensional.")
    if images_t._shape[-1] != 1:
        raise ValueError("Last dimension of a grayscale image should be size 1.")
    return run(_TILE3, (images_t,))


def _hsv(x: jax.Array) -> jax.Array:
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    value = jnp.max(x, axis=-1)
    spread = value - jnp.min(x, axis=-1)
    safe_v = jnp.where(value > 0, value, 1)
    sat = jnp.where(value > 0, spread / safe_v, 0)
    safe = jnp.where(spread > 0, spread, 1)
    norm = 1 / (6 * safe)
    hue = jnp.where(r == value, norm * (g - b), jnp.where(g == value, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6))
    hue = jnp.where(spread > 0, hue, 0)
    hue = jnp.where(hue < 0, hue + 1, hue)
    return jnp.stack([hue, sat, value], axis=-1).astype(x.dtype)


def _rgb(x: jax.Array) -> jax.Array:
    h, s, v = x[..., 0], x[..., 1], x[..., 2]
    dh = h * 6
    dr = jnp.clip(jnp.abs(dh - 3) - 1, 0, 1)
    dg = jnp.clip(2 - jnp.abs(dh - 2), 0, 1)
    db = jnp.clip(2 - jnp.abs(dh - 4), 0, 1)
    one_s = 1 - s
    return jnp.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v], axis=-1).astype(x.dtype)


_TO_HSV = kernel("RGBToHSV", _hsv)
_TO_RGB = kernel("HSVToRGB", _rgb)


def _color_input(images: Any, op_name: str) -> Tensor:
    images_t = convert_to_tensor(images)
    if not images_t.dtype.is_floating:
        raise errors.invalid_argument(
            f"Value for attr 'T' of {images_t.dtype.name} is not in the list of allowed values: half, bfloat16, "
            f"float, double\n\t; NodeDef: {{{{node {op_name}}}}}",
            op_name,
        )
    channels = images_t._shape[-1] if images_t._shape else 0
    if channels != 3:
        raise errors.FailedPreconditionError(
            None, None, f"input must have 3 channels but input only has {channels} channels. [Op:{op_name}]"
        )
    return images_t


@table.export("image.rgb_to_hsv", dtypes=table.REAL_FLOAT, op=_TO_HSV)
def rgb_to_hsv(images: TensorLike, name: str | None = None) -> Tensor:
    """RGB in [0, 1] to hue, saturation, value in [0, 1] (last axis).

    Raises:
      InvalidArgumentError: for a non-float dtype.
      FailedPreconditionError: if the last axis is not of size 3.
    """
    return run(_TO_HSV, (_color_input(images, "RGBToHSV"),))


@table.export("image.hsv_to_rgb", dtypes=table.REAL_FLOAT, op=_TO_RGB)
def hsv_to_rgb(images: TensorLike, name: str | None = None) -> Tensor:
    """Hue, saturation, value in [0, 1] to RGB (last axis).

    Raises:
      InvalidArgumentError: for a non-float dtype.
      FailedPreconditionError: if the last axis is not of size 3.
    """
    return run(_TO_RGB, (_color_input(images, "HSVToRGB"),))


# -- adjustments --------------------------------------------------------------------------------------
def _back(adjusted: Tensor, dtype: dtypes.DType) -> Tensor:
    return convert_image_dtype(adjusted, dtype, saturate=True)


_ADD = kernel("AddV2", lambda x, d: x + d.astype(x.dtype))


def _contrast(x: jax.Array, factor: jax.Array) -> jax.Array:
    mean = jnp.mean(x, axis=(-3, -2), keepdims=True)
    return gradient_not_registered("AdjustContrastv2")((x - mean) * factor.astype(x.dtype) + mean)


_CONTRAST = kernel("AdjustContrastv2", _contrast)


@table.export("image.adjust_brightness", dtypes=table.REAL, op=_ADD)
@ragged_dispatch()
def adjust_brightness(image: TensorLike, delta: TensorLike) -> Tensor:
    """Adds `delta` (in [0, 1] image units) to every pixel; integer images saturate."""
    image_t = convert_to_tensor(image)
    flt = to_float(image_t)
    return _back(run(_ADD, (flt, convert_to_tensor(delta, dtype=flt.dtype))), image_t.dtype)


@table.export("image.adjust_contrast", dtypes=table.REAL, op=_CONTRAST)
def adjust_contrast(images: TensorLike, contrast_factor: TensorLike) -> Tensor:
    """`(x - mean) * contrast_factor + mean`, the mean per image and channel.

    Raises:
      InvalidArgumentError: if `images` has rank below 3.
    """
    images_t = convert_to_tensor(images)
    if len(images_t._shape) < 3:
        raise errors.invalid_argument(
            f"input must be at least 3-D, got shape{list(images_t._shape)}".replace(" ", ""), "AdjustContrastv2"
        )
    flt = to_float(images_t)
    factor = convert_to_tensor(contrast_factor, dtype=dtypes.float32)
    return _back(run(_CONTRAST, (flt, factor)), images_t.dtype)


def _saturation(x: jax.Array, factor: jax.Array) -> jax.Array:
    hsv = _hsv(x.astype(jnp.float32))
    sat = jnp.clip(hsv[..., 1] * factor, 0, 1)
    out = _rgb(jnp.stack([hsv[..., 0], sat, hsv[..., 2]], axis=-1)).astype(x.dtype)
    return gradient_not_registered("AdjustSaturation")(out)


def _hue(x: jax.Array, delta: jax.Array) -> jax.Array:
    hsv = _hsv(x.astype(jnp.float32))
    hue = jnp.mod(hsv[..., 0] + delta, 1.0)
    out = _rgb(jnp.stack([hue, hsv[..., 1], hsv[..., 2]], axis=-1)).astype(x.dtype)
    return gradient_not_registered("AdjustHue")(out)


_SATURATION = kernel("AdjustSaturation", _saturation)
_HUE = kernel("AdjustHue", _hue)


def _three_channels(image: Tensor, op_name: str) -> None:
    channels = image._shape[-1] if image._shape else 0
    if channels != 3:
        raise errors.invalid_argument(f"input must have 3 channels but instead has {channels} channels.", op_name)


@table.export("image.adjust_saturation", dtypes=table.REAL, op=_SATURATION)
def adjust_saturation(image: TensorLike, saturation_factor: TensorLike, name: str | None = None) -> Tensor:
    """Scales the HSV saturation by `saturation_factor` (clipped to [0, 1]).

    Raises:
      InvalidArgumentError: if the last axis is not of size 3.
    """
    image_t = convert_to_tensor(image)
    _three_channels(image_t, "AdjustSaturation")
    flt = to_float(image_t)
    return _back(run(_SATURATION, (flt, convert_to_tensor(saturation_factor, dtype=dtypes.float32))), image_t.dtype)


@table.export("image.adjust_hue", dtypes=table.REAL, op=_HUE)
def adjust_hue(image: TensorLike, delta: TensorLike, name: str | None = None) -> Tensor:
    """Rotates the HSV hue by `delta` (in [-1, 1], a full turn being 1).

    Raises:
      ValueError: if `delta` is outside [-1, 1].
      InvalidArgumentError: if the last axis is not of size 3.
    """
    image_t = convert_to_tensor(image)
    delta_t = convert_to_tensor(delta, dtype=dtypes.float32)
    if not delta_t._shape and abs(float(delta_t.numpy())) > 1:
        raise ValueError("delta must be in the interval [-1, 1]")
    _three_channels(image_t, "AdjustHue")
    flt = to_float(image_t)
    return _back(run(_HUE, (flt, delta_t)), image_t.dtype)


_GAMMA = kernel("AdjustGamma", lambda x, gamma, gain: gain.astype(x.dtype) * x ** gamma.astype(x.dtype))


@table.export("image.adjust_gamma", dtypes=table.REAL, op=_GAMMA)
@ragged_dispatch()
def adjust_gamma(image: TensorLike, gamma: TensorLike = 1, gain: TensorLike = 1) -> Tensor:
    """`gain * image ** gamma` on [0, 1]-scaled values; integer images saturate.

    Raises:
      ValueError: if `gamma` is negative.
    """
    image_t = convert_to_tensor(image)
    flt = to_float(image_t)
    gamma_t = convert_to_tensor(gamma, dtype=flt.dtype) if not hasattr(gamma, "dtype") else convert_to_tensor(gamma)
    if not gamma_t._shape and float(gamma_t.numpy()) < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    gain_t = convert_to_tensor(gain, dtype=flt.dtype) if not hasattr(gain, "dtype") else convert_to_tensor(gain)
    return _back(run(_GAMMA, (flt, gamma_t, gain_t)), image_t.dtype)


def _standardize(x: jax.Array) -> jax.Array:
    x = x.astype(jnp.float32)
    count = x.shape[-1] * x.shape[-2] * x.shape[-3]
    mean = jnp.mean(x, axis=(-1, -2, -3), keepdims=True)
    std = jnp.sqrt(jnp.mean(jnp.square(x - mean), axis=(-1, -2, -3), keepdims=True))
    return (x - mean) / jnp.maximum(std, jax.lax.rsqrt(jnp.float32(count)))


_STANDARDIZE = kernel("PerImageStandardization", _standardize)


@table.export("image.per_image_standardization", dtypes=table.REAL, op=_STANDARDIZE)
def per_image_standardization(image: TensorLike) -> Tensor:
    """`(x - mean) / max(stddev, 1/sqrt(num_pixels))` per image, as float32.

    Raises:
      ValueError: if the rank is below 3.
    """
    return run(_STANDARDIZE, (image_tensor(image),))


def check_factor_range(lower: float, upper: float) -> None:
    """TF's checks of a random contrast/saturation factor range [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def _random_factor(seed: Any, low: float, high: float) -> Tensor:
    return random_ops.uniform([], low, high, seed=seed)


@table.export("image.random_brightness", dtypes=table.REAL, note="not TF's random stream")
def random_brightness(image: TensorLike, max_delta: float, seed: TensorLike | None = None) -> Tensor:
    """`adjust_brightness` by a delta uniform in [-max_delta, max_delta).

    Raises:
      ValueError: if `max_delta` is negative.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _random_factor(seed, -max_delta, max_delta))


@table.export("image.random_contrast", dtypes=table.REAL, note="not TF's random stream")
def random_contrast(image: TensorLike, lower: float, upper: float, seed: TensorLike | None = None) -> Tensor:
    """`adjust_contrast` by a factor uniform in [lower, upper).

    Raises:
      ValueError: if `upper <= lower` or `lower < 0`.
    """
    check_factor_range(lower, upper)
    return adjust_contrast(image, _random_factor(seed, lower, upper))


@table.export("image.random_saturation", dtypes=table.REAL, note="not TF's random stream")
def random_saturation(image: TensorLike, lower: float, upper: float, seed: TensorLike | None = None) -> Tensor:
    """`adjust_saturation` by a factor uniform in [lower, upper).

    Raises:
      ValueError: if `upper <= lower` or `lower < 0`.
    """
    check_factor_range(lower, upper)
    return adjust_saturation(image, _random_factor(seed, lower, upper))


@table.export("image.random_hue", dtypes=table.REAL, note="not TF's random stream")
def random_hue(image: TensorLike, max_delta: float, seed: TensorLike | None = None) -> Tensor:
    """`adjust_hue` by a delta uniform in [-max_delta, max_delta).

    Raises:
      ValueError: if `max_delta` is outside [0, 0.5].
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _random_factor(seed, -max_delta, max_delta))


# -- quality metrics ----------------------------------------------------------------------------------
def _gauss_kernel(size: int, sigma: float) -> np.ndarray:
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2)
    g = np.square(coords) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).reshape(-1)
    g = np.exp(g - g.max())
    return (g / g.sum()).reshape(size, size).astype(np.float32)


def _ssim(
    x: jax.Array, y: jax.Array, max_val: jax.Array, size: int, sigma: float, k1: float, k2: float, checked: bool = False
) -> jax.Array:
    if checked:  # (TF's assertion on sizes known per call)
        dims, fields = runtime_checks.shape_fields(x.shape, "d")
        smallest = jnp.minimum(jnp.asarray(x.shape[-3]), jnp.asarray(x.shape[-2]))
        message = f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: {dims} {size}"
        values = {k: jnp.asarray(d) for k, d in fields.items()}
        runtime_checks.require(smallest >= size, message.replace(",", ", "), **values)
    kern = jnp.asarray(_gauss_kernel(size, sigma))
    channels = x.shape[-1]
    filt = jnp.tile(kern[:, :, None, None], (1, 1, 1, channels))

    def reduce(v: jax.Array) -> jax.Array:
        lead = v.shape[:-3]
        flat = v.reshape((-1,) + v.shape[-3:])
        out = jax.lax.conv_general_dilated(
            flat,
            filt,
            (1, 1),
            "VALID",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            feature_group_count=channels,
            precision=jax.lax.Precision.HIGHEST,
        )
        return out.reshape(lead + out.shape[1:])

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = reduce(x), reduce(y)
    num0 = mean0 * mean1 * 2.0
    den0 = jnp.square(mean0) + jnp.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reduce(x * y) * 2.0
    den1 = reduce(jnp.square(x) + jnp.square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return jnp.mean(jnp.mean(luminance * cs, axis=(-3, -2)), axis=-1)


_SSIM = kernel("SSIM", _ssim)


def _pair(a: Any, b: Any, op_name: str) -> tuple[Tensor, Tensor]:
    a_t, b_t = convert_to_tensor(a), convert_to_tensor(b)
    if len(a_t._shape) < 3 or len(b_t._shape) < 3:
        raise ValueError("Shape must be at least rank 3")
    try:
        broadcast_shapes(a_t._shape, b_t._shape)  # (symbolic dimensions too: a trace for every size)
    except ValueError:
        shapes = " vs. ".join("[" + ",".join(map(str, s)) + "]" for s in (a_t._shape, b_t._shape))
        raise errors.invalid_argument(f"Incompatible shapes: {shapes}", op_name) from None
    return a_t, b_t


def _max_val(max_val: Any, dtype: dtypes.DType) -> Tensor:
    return convert_image_dtype(cast(convert_to_tensor(max_val), dtype), dtypes.float32)


@table.export("image.ssim", dtypes=table.REAL, op=_SSIM)
def ssim(
    img1: TensorLike,
    img2: TensorLike,
    max_val: TensorLike,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    return_index_map: bool = False,
) -> Tensor:
    """Structural similarity of two image batches (Gaussian window, VALID), averaged over pixels and channels.

    Raises:
      InvalidArgumentError: if the images are smaller than the filter or their shapes differ.
    """
    if return_index_map:
        raise NotImplementedError("ssim(return_index_map=True) is not supported by tapeshim.")
    a, b = _pair(img1, img2, "SquaredDifference")
    size = int(filter_size)
    try:
        small = bool(min(a._shape[-3], a._shape[-2]) < size)
    except Exception:  # noqa: BLE001 - JAX's InconclusiveDimensionOperation: sizes known per call
        small = False  # (TF's assertion runs in the program)
        checked = True
    else:
        checked = False
    if small:
        raise errors.invalid_argument(
            f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
            f"{', '.join(map(str, a._shape))} {size}",
            "Assert",
        )
    peak = _max_val(max_val, a.dtype)
    x, y = convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32)
    static = {"size": size, "sigma": float(filter_sigma), "k1": float(k1), "k2": float(k2)}
    return run(_SSIM, (x, y, peak), **static, **({"checked": True} if checked else {}))


_PSNR = kernel(
    "PSNR",
    lambda a, b, peak: (
        20 * jnp.log(peak) / jnp.log(jnp.float32(10.0))
        - jnp.float32(10 / np.log(10)) * jnp.log(jnp.mean(jnp.square(a - b), axis=(-3, -2, -1)))
    ),
)


@table.export("image.psnr", dtypes=table.REAL, op=_PSNR)
def psnr(a: TensorLike, b: TensorLike, max_val: TensorLike, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio in dB per image (float32).

    Raises:
      InvalidArgumentError: if the shapes differ.
    """
    a_t, b_t = _pair(a, b, "SquaredDifference")
    peak = _max_val(max_val, a_t.dtype)
    return run(_PSNR, (convert_image_dtype(a_t, dtypes.float32), convert_image_dtype(b_t, dtypes.float32), peak))
