"""`tf.image.resize` and its relatives, with TF's sampling rules (not `jax.image.resize`'s).

Every method but nearest is separable and linear: each spatial axis gets a weight
matrix `W[out, in]`, built on the host in float32 with the rules of TF's kernel for
that method (ResizeBilinear / ResizeBicubic with half-pixel centers, ResizeArea,
ScaleAndTranslate for lanczos3/5, gaussian, mitchellcubic and antialiasing), and the
image is contracted with both matrices in one XLA program. Nearest gathers rows and
columns. The matrices are cached per (method, sizes, antialias).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, static_value
from tapeshim._src.ops import table
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.ops.common import gradient_not_registered, is_tensor_like
from tapeshim._src.ops.image_common import host_constant, image_tensor, kernel, run, static_int
from tapeshim._src.ops.image_ops import pad_to_bounding_box
from tapeshim._src.tensor import Tensor, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


class ResizeMethod:
    """The names `tf.image.resize` accepts for `method`."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = frozenset(v for k, v in vars(ResizeMethod).items() if k.isupper())
_F32 = np.float32


# -- one-dimensional kernels of ScaleAndTranslate (radius, function of |x|) ----------------------------
def _lanczos(radius: float, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    out = np.zeros_like(x)
    inside = x <= radius
    small = x * np.pi < 1e-3
    px = x * np.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        full = radius * np.sin(px) * np.sin(px / radius) / (px * px)
    out = np.where(small, 1.0 - px * px * (1.0 / 6 + 1.0 / (6 * radius * radius)), full)
    return np.where(inside, out, 0.0)


def _keys_cubic(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return np.where(
        x >= 2, 0.0, np.where(x >= 1, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, ((1.5 * x - 2.5) * x) * x + 1.0)
    )


def _mitchell_cubic(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return np.where(
        x >= 2,
        0.0,
        np.where(
            x >= 1,
            (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0,
            (((7.0 / 6.0) * x - 2.0) * x) * x + 8.0 / 9.0,
        ),
    )


_KERNELS: dict[str, tuple[float, Callable[[np.ndarray], np.ndarray]]] = {
    "lanczos3": (3.0, functools.partial(_lanczos, 3.0)),
    "lanczos5": (5.0, functools.partial(_lanczos, 5.0)),
    "gaussian": (1.5, lambda x: np.where(x < 1.5, np.exp(-(x.astype(np.float64) ** 2) / (2 * 0.5**2)), 0.0)),
    "box": (1.0, lambda x: np.where(x < 0.5, 1.0, np.where(x == 0.5, 0.5, 0.0))),
    "triangle": (1.0, lambda x: np.where(x < 1.0, 1.0 - x.astype(np.float64), 0.0)),
    "keyscubic": (2.0, _keys_cubic),
    "mitchellcubic": (2.0, _mitchell_cubic),
}


@functools.lru_cache(maxsize=256)
def _scale_translate_weights(kernel_name: str, in_size: int, out_size: int, antialias: bool) -> np.ndarray:
    """ScaleAndTranslate's spans as a dense [out, in] matrix (scale out/in, no translation)."""
    radius, fn = _KERNELS[kernel_name]
    scale = _F32(out_size) / _F32(in_size)
    inv_scale = _F32(1.0) / scale
    kernel_scale = max(float(inv_scale), 1.0) if antialias else 1.0
    span = min(2 * int(math.ceil(radius * kernel_scale)) + 1, in_size)
    weights = np.zeros((out_size, in_size), np.float64)
    for x in range(out_size):
        sample = float(_F32(x + 0.5) * inv_scale)
        if sample < 0 or sample > in_size:
            continue
        start = int(math.ceil(sample - radius * kernel_scale - 0.5))
        end = int(math.floor(sample + radius * kernel_scale - 0.5))
        start = min(max(start, 0), in_size - 1)
        end = min(max(end, 0), in_size - 1) + 1
        end = min(end, start + span)
        sources = np.arange(start, end)
        w = fn(np.abs((sources + 0.5 - sample) / kernel_scale)).astype(np.float32)
        total = float(w.sum(dtype=np.float32))
        if abs(total) >= 1000.0 * np.finfo(np.float32).tiny:
            w = w / _F32(total)
        weights[x, start:end] = w
    return weights.astype(np.float32)


@functools.lru_cache(maxsize=256)
def _bilinear_weights(in_size: int, out_size: int) -> np.ndarray:
    """ResizeBilinear with half-pixel centers: two taps, edges clamped."""
    scale = _F32(in_size) / _F32(out_size)
    weights = np.zeros((out_size, in_size), np.float32)
    for i in range(out_size):
        pos = float((_F32(i) + _F32(0.5)) * scale - _F32(0.5))
        low = math.floor(pos)
        lerp = _F32(pos - low)
        lo, hi = max(low, 0), min(math.ceil(pos), in_size - 1)
        weights[i, lo] += _F32(1) - lerp
        weights[i, hi] += lerp
    return weights


_TABLE_SIZE = 1024


@functools.lru_cache(maxsize=256)
def _bicubic_weights(in_size: int, out_size: int) -> np.ndarray:
    """ResizeBicubic with half-pixel centers: Keys cubic (a=-0.5) from TF's 1024-entry table, outside taps dropped."""
    a = -0.5
    scale = _F32(in_size) / _F32(out_size)
    weights = np.zeros((out_size, in_size), np.float32)

    def near(t: float) -> float:
        return float(_F32(((a + 2) * t - (a + 3)) * t * t + 1))

    def far(t: float) -> float:
        return float(_F32(((a * t - 5 * a) * t + 8 * a) * t - 4 * a))

    for i in range(out_size):
        pos = float((_F32(i) + _F32(0.5)) * scale - _F32(0.5))
        loc = math.floor(pos)
        delta = _F32(pos - loc)
        offset = int(np.rint(delta * _TABLE_SIZE))
        taps = [
            (loc - 1, far(offset / _TABLE_SIZE + 1)),
            (loc, near(offset / _TABLE_SIZE)),
            (loc + 1, near((_TABLE_SIZE - offset) / _TABLE_SIZE)),
            (loc + 2, far((_TABLE_SIZE - offset) / _TABLE_SIZE + 1)),
        ]
        kept = [(j, w) for j, w in taps if 0 <= j < in_size]
        total = float(sum(_F32(w) for _, w in kept))
        for j, w in kept:
            weights[i, j] += _F32(w) / _F32(total) if abs(total) >= 1000 * np.finfo(np.float32).tiny else w
    return weights


@functools.lru_cache(maxsize=256)
def _area_weights(in_size: int, out_size: int) -> np.ndarray:
    """ResizeArea (no half-pixel centers): the fraction of each input cell an output cell covers."""
    scale = _F32(in_size) / _F32(out_size)
    weights = np.zeros((out_size, in_size), np.float32)
    for y in range(out_size):
        lo, hi = float(_F32(y) * scale), float(_F32(y + 1) * scale)
        for i in range(math.floor(lo), math.ceil(hi)):
            if i < lo:
                part = min(i + 1 - lo, hi - lo)
            elif i + 1 > hi:
                part = hi - i
            else:
                part = 1.0
            weights[y, min(i, in_size - 1)] += _F32(part) / scale
    return weights


def _weights(method: str, antialias: bool, in_size: int, out_size: int) -> np.ndarray:
    if method == "bilinear":
        return (
            _scale_translate_weights("triangle", in_size, out_size, True)
            if antialias
            else _bilinear_weights(in_size, out_size)
        )
    if method == "bicubic":
        return (
            _scale_translate_weights("keyscubic", in_size, out_size, True)
            if antialias
            else _bicubic_weights(in_size, out_size)
        )
    if method == "area":
        return _area_weights(in_size, out_size)
    return _scale_translate_weights(method, in_size, out_size, antialias)


def _separable(images: jax.Array, rows: jax.Array, cols: jax.Array) -> jax.Array:
    x = images.astype(jnp.float32)
    out = jnp.einsum("oh,...hwc->...owc", rows, x, precision=jax.lax.Precision.HIGHEST)
    return jnp.einsum("pw,...owc->...opc", cols, out, precision=jax.lax.Precision.HIGHEST)


def _nearest(images: jax.Array, rows: tuple, cols: tuple) -> jax.Array:
    out = jnp.take(images, jnp.asarray(rows, jnp.int32), axis=-3)
    return jnp.take(out, jnp.asarray(cols, jnp.int32), axis=-2)


def _nearest_indices(in_size: int, out_size: int) -> tuple:
    scale = _F32(in_size) / _F32(out_size)
    return tuple(min(max(int(math.floor((_F32(i) + _F32(0.5)) * scale)), 0), in_size - 1) for i in range(out_size))


_SEPARABLE = kernel("ResizeSeparable", _separable)
_AREA = kernel("ResizeArea", lambda x, rows, cols: gradient_not_registered("ResizeArea")(_separable(x, rows, cols)))
_NEAREST = kernel("ResizeNearestNeighbor", _nearest)


def _size_arg(size: Any) -> tuple[int, int]:
    size = static_value.resolve(size)  # `[tf.shape(x)[1] * 2, w]` inside tapeshim.function is known (H5)
    if is_tensor_like(size):
        tensor = convert_to_tensor(size)
        if tensor.dtype != dtypes.int32:
            raise ValueError("'size' must be a 1-D int32 Tensor")
    else:
        array = np.asarray(size)
        if array.dtype.kind not in "iu":
            raise ValueError("'size' must be a 1-D int32 Tensor")
    values = _static_ints(size, "size")
    if np.asarray(size).ndim != 1 if not is_tensor_like(size) else len(convert_to_tensor(size)._shape) != 1:
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if len(values) != 2:
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    return values[0], values[1]


def _resize(images: Tensor, height: int, width: int, method: str, antialias: bool, op_name: str) -> Tensor:
    in_h, in_w = images._shape[-3], images._shape[-2]
    if height <= 0 or width <= 0:
        raise errors.invalid_argument("output dimensions must be positive", op_name)
    if method == "nearest":
        return run(_NEAREST, (images,), rows=_nearest_indices(in_h, height), cols=_nearest_indices(in_w, width))
    rows = host_constant(_weights(method, antialias, in_h, height), dtypes.float32)
    cols = host_constant(_weights(method, antialias, in_w, width), dtypes.float32)
    return run(_AREA if method == "area" else _SEPARABLE, (images, rows, cols))


_OP_NAMES = {
    "bilinear": "ResizeBilinear",
    "bicubic": "ResizeBicubic",
    "area": "ResizeArea",
    "nearest": "ResizeNearestNeighbor",
}


@table.export(
    "image.resize",
    dtypes=table.REAL,
    note="all eight methods with TF's sampling (half-pixel centers, TF's bicubic table, ResizeArea, "
    "ScaleAndTranslate kernels for antialias/lanczos/gaussian/mitchellcubic); float32 output except "
    "nearest, as TF",
)
def resize(
    images: TensorLike,
    size: TensorLike,
    method: str = ResizeMethod.BILINEAR,
    preserve_aspect_ratio: bool = False,
    antialias: bool = False,
    name: str | None = None,
) -> Tensor:
    """Resizes images to `size` with TF's sampling rules for `method`.

    Args:
      images: a `[batch, height, width, channels]` or `[height, width, channels]` tensor.
      size: `[new_height, new_width]`, int32.
      method: a `ResizeMethod` name.
      preserve_aspect_ratio: scale to fit inside `size`, keeping the aspect ratio.
      antialias: low-pass filter when downsampling (bilinear, bicubic and the ScaleAndTranslate kernels).
      name: accepted for compatibility.

    Returns:
      The resized images: float32, or the input dtype for nearest.

    Raises:
      ValueError: for a bad rank, size or method.
      InvalidArgumentError: for a non-positive output size.
    """
    images_t = convert_to_tensor(images)
    rank = len(images_t._shape)
    if rank not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    height, width = _size_arg(size)
    method = str(method).lower()
    if method not in _METHODS:
        raise ValueError(f"Resize method is not implemented: {method}")
    in_h, in_w = images_t._shape[-3], images_t._shape[-2]
    if preserve_aspect_ratio:
        factor = min(_F32(height) / _F32(in_h), _F32(width) / _F32(in_w))
        height = int(np.round(_F32(factor) * _F32(in_h)))
        width = int(np.round(_F32(factor) * _F32(in_w)))
    return _resize(images_t, height, width, method, bool(antialias), _OP_NAMES.get(method, "ScaleAndTranslate"))


@table.export("image.resize_with_pad", dtypes=table.REAL)
def resize_with_pad(
    image: TensorLike,
    target_height: TensorLike,
    target_width: TensorLike,
    method: str = ResizeMethod.BILINEAR,
    antialias: bool = False,
) -> Tensor:
    """Resizes to fit inside the target keeping the aspect ratio, then pads with zeros to the target size.

    Raises:
      ValueError: for a bad rank or a non-positive target size.
    """
    image_t = image_tensor(image, at_most=4)
    target_h, target_w = static_int(target_height, "target_height"), static_int(target_width, "target_width")
    if target_w <= 0:
        raise ValueError("target_width must be > 0.")
    if target_h <= 0:
        raise ValueError("target_height must be > 0.")
    height, width = image_t._shape[-3], image_t._shape[-2]
    ratio = max(_F32(width) / _F32(target_w), _F32(height) / _F32(target_h))
    resized_h_f, resized_w_f = _F32(height) / ratio, _F32(width) / ratio
    resized_h, resized_w = int(np.floor(resized_h_f)), int(np.floor(resized_w_f))
    pad_h = max(0, int(np.floor((_F32(target_h) - resized_h_f) / _F32(2))))
    pad_w = max(0, int(np.floor((_F32(target_w) - resized_w_f) / _F32(2))))
    resized = resize(image_t, np.array([resized_h, resized_w], np.int32), method=method, antialias=antialias)
    return pad_to_bounding_box(resized, pad_h, pad_w, target_h, target_w)
