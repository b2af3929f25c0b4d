"""`tf.image.resize` and its relatives, with TF's sampling rules (not `jax.image.resize`'s).

Every method but nearest is separable and linear: each spatial axis gets a weight
matrix `W[out, in]`, computed in float32 with the rules of TF's kernel for that
method (ResizeBilinear / ResizeBicubic with half-pixel centers, ResizeArea,
ScaleAndTranslate for lanczos3/5, gaussian, mitchellcubic and antialiasing), and the
image is contracted with both matrices. Nearest gathers rows and columns. One code
computes the weights from the sizes with index arithmetic (`_weights`): with NumPy
on the host for known sizes (cached per method and sizes), and inside the op's
program (`lax.iota`) for sizes known per call (a trace for every size,
`function_symbolic`), so such an image resizes in that one trace.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, runtime_checks, static_value, symbolic_dims
from tapeshim._src.ops import table
from tapeshim._src.ops.array_ops import _static_ints, _symbolic_ints
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
_TINY = 1000.0 * np.finfo(np.float32).tiny  # TF's kernels leave weights whose sum is below this unnormalized


# -- sampling in the program --------------------------------------------------------------------------
# Each method's weight matrix W[out, in] for one axis is computed from the axis's sizes by index arithmetic
# over the output and input positions, with `xp` NumPy (known sizes, on the host) or jax.numpy (inside the op's
# program: a size known only per call, a dimension of a trace for every size, `function_symbolic`, samples as a
# concrete one does). The float32 arithmetic is TF's kernels' (ResizeBilinear / ResizeBicubic with half-pixel
# centers, ResizeNearestNeighbor, ResizeArea, ScaleAndTranslate), every product rounded before it is added to
# (`_product`).
def _f32(size: Any) -> Any:
    """A size (an int, a symbolic dimension or an integer scalar) as float32, as TF's kernels cast sizes."""
    return _F32(size) if isinstance(size, (int, np.integer)) else jnp.asarray(size).astype(jnp.float32)


def _iota(xp: Any, n: Any) -> Any:
    return np.arange(n, dtype=np.int32) if xp is np else jax.lax.iota(jnp.int32, n)


def _product(xp: Any, a: Any, b: Any) -> Any:
    """`a * b` rounded to float32 on its own. XLA's CPU compiler contracts `a * b - c` into a fused
    multiply-add, whose single rounding can move a sampling position across a pixel or table boundary that
    TF's kernel (which rounds the product first) does not cross. The minimum with the largest float (the
    identity on every position) is an operation LLVM cannot fold away (it could a select on `p == p`)."""
    p = xp.asarray(a, np.float32) * xp.asarray(b, np.float32)
    return xp.minimum(p, _F32(np.finfo(np.float32).max))


def _half_pixel(xp: Any, x: Any, scale: Any) -> Any:
    """TF's HalfPixelScaler: `(x + 0.5) * scale - 0.5` in float32."""
    return _product(xp, x.astype(np.float32) + _F32(0.5), scale) - _F32(0.5)


def _columns(xp: Any, in_dim: Any) -> Any:
    return _iota(xp, in_dim)[None, :]


def _bilinear(xp: Any, x: Any, in_dim: Any, out_size: Any) -> Any:
    """ResizeBilinear (half-pixel centers): two taps, edges clamped."""
    pos = _half_pixel(xp, x, _f32(in_dim) / _f32(out_size))
    low = xp.floor(pos)
    lerp = (pos - low)[:, None]
    lo = xp.maximum(low.astype(np.int32), 0)[:, None]
    hi = xp.minimum(xp.ceil(pos).astype(np.int32), xp.asarray(in_dim) - 1)[:, None]
    cols = _columns(xp, in_dim)
    zero = np.float32(0)
    return xp.where(cols == lo, _F32(1) - lerp, zero) + xp.where(cols == hi, lerp, zero)


_TABLE_SIZE = 1024


def _bicubic_table() -> np.ndarray:
    """Keys cubic (a = -0.5) at the 1025 offsets of TF's table: [k, 0] the near taps' weight at k / 1024,
    [k, 1] the far taps' at k / 1024 + 1."""
    a = -0.5
    t = np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)


_BICUBIC_TABLE = _bicubic_table()


def _bicubic(xp: Any, x: Any, in_dim: Any, out_size: Any) -> Any:
    """ResizeBicubic (half-pixel centers): four taps from TF's table, taps outside the input dropped and the
    rest renormalized."""
    pos = _half_pixel(xp, x, _f32(in_dim) / _f32(out_size))
    loc_f = xp.floor(pos)
    loc = loc_f.astype(np.int32)
    offset = xp.rint((pos - loc_f) * _F32(_TABLE_SIZE)).astype(np.int32)
    table = xp.asarray(_BICUBIC_TABLE)
    taps = (table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0], table[_TABLE_SIZE - offset, 1])
    zero = np.float32(0)
    kept = [(loc + k - 1 >= 0) & (loc + k - 1 < xp.asarray(in_dim)) for k in range(4)]
    weights = [xp.where(keep, w, zero) for keep, w in zip(kept, taps)]
    total = ((weights[0] + weights[1]) + weights[2]) + weights[3]
    normal = xp.abs(total) >= _F32(_TINY)
    cols = _columns(xp, in_dim)
    out = xp.zeros((x.shape[0], in_dim), np.float32)
    for k, w in enumerate(weights):
        w = xp.where(normal, w / total, w)
        out = out + xp.where(cols == (loc + k - 1)[:, None], w[:, None], zero)
    return out


def _area(xp: Any, x: Any, in_dim: Any, out_size: Any) -> Any:
    """ResizeArea (no half-pixel centers): the part of each input cell an output cell covers, over the
    output cell's size; a cell past the last input (rounding) counts as the last."""
    scale = _f32(in_dim) / _f32(out_size)
    x_f = x.astype(np.float32)[:, None]
    lo, hi = _product(xp, x_f, scale), _product(xp, x_f + _F32(1), scale)

    def part(i: jax.Array) -> jax.Array:
        i_f = i.astype(np.float32)
        inside = (i_f >= xp.floor(lo)) & (i_f < xp.ceil(hi))
        after = i_f + _F32(1) > hi
        value = xp.where(i_f < lo, xp.where(after, scale, i_f + _F32(1) - lo), xp.where(after, hi - i_f, _F32(1)))
        return xp.where(inside, value / scale, np.float32(0))

    cols = _columns(xp, in_dim)
    last = xp.asarray(in_dim) - 1
    return part(cols) + xp.where(cols == last, part(xp.asarray(in_dim, np.int32).reshape(1, 1)), np.float32(0))


_KPI = _F32(3.14159265359)


def _lanczos(radius: float) -> Callable[[Any, Any], Any]:
    r = _F32(radius)

    def fn(xp: Any, x: Any) -> Any:
        small = x <= _F32(1e-3)
        safe = xp.where(small, _F32(1), x)  # (sin(x) / x's limit at 0 is TF's 1)
        value = r * xp.sin(_KPI * safe) * xp.sin(_KPI * safe / r) / (_KPI * _KPI * safe * safe)
        return xp.where(x > r, _F32(0), xp.where(small, _F32(1), value))

    return fn


def _gaussian(xp: Any, x: Any) -> Any:
    return xp.where(x >= _F32(1.5), _F32(0), xp.exp(-x * x / _F32(0.5)))


def _triangle(xp: Any, x: Any) -> Any:
    return xp.where(x < _F32(1), _F32(1) - x, _F32(0))


def _keys_cubic(xp: Any, x: Any) -> Any:
    far = ((_F32(-0.5) * x + _F32(2.5)) * x - _F32(4)) * x + _F32(2)
    near = ((_F32(1.5) * x - _F32(2.5)) * x) * x + _F32(1)
    return xp.where(x >= _F32(2), _F32(0), xp.where(x >= _F32(1), far, near))


def _mitchell_cubic(xp: Any, x: Any) -> Any:
    far = ((_F32(-7) / _F32(18) * x + _F32(2)) * x - _F32(10) / _F32(3)) * x + _F32(16) / _F32(9)
    near = ((_F32(7) / _F32(6) * x - _F32(2)) * x) * x + _F32(8) / _F32(9)
    return xp.where(x >= _F32(2), _F32(0), xp.where(x >= _F32(1), far, near))


_KERNELS: dict[str, tuple[float, Callable[[Any, Any], Any]]] = {
    "lanczos3": (3.0, _lanczos(3.0)),
    "lanczos5": (5.0, _lanczos(5.0)),
    "gaussian": (1.5, _gaussian),
    "triangle": (1.0, _triangle),
    "keyscubic": (2.0, _keys_cubic),
    "mitchellcubic": (2.0, _mitchell_cubic),
}


def _scale_and_translate(xp: Any, kernel_name: str, antialias: bool, x: Any, in_dim: Any, out_size: Any) -> Any:
    """ScaleAndTranslate's spans (scale out/in, no translation) as a dense [out, in] matrix."""
    radius, fn = _KERNELS[kernel_name]
    in_f = _f32(in_dim)
    inv_scale = _F32(1) / (_f32(out_size) / in_f)
    kernel_scale = xp.maximum(inv_scale, _F32(1)) if antialias else np.float32(1)
    sample = _product(xp, x.astype(np.float32) + _F32(0.5), inv_scale)[:, None]
    reach = _product(xp, _F32(radius), kernel_scale)
    last = xp.asarray(in_dim) - 1
    start = xp.clip(xp.ceil(sample - reach - _F32(0.5)).astype(np.int32), 0, last)
    end = xp.clip(xp.floor(sample + reach - _F32(0.5)).astype(np.int32), 0, last) + 1
    cols = _columns(xp, in_dim)
    inside = (sample >= _F32(0)) & (sample <= in_f) & (cols >= start) & (cols < end)
    position = cols.astype(np.float32) + _F32(0.5) - sample
    weights = xp.where(inside, fn(xp, xp.abs(position * (_F32(1) / kernel_scale))), np.float32(0))
    total = xp.sum(weights, axis=1, keepdims=True)
    return xp.where(xp.abs(total) >= _F32(_TINY), weights * (_F32(1) / total), np.float32(0))


def _weights(
    method: str, antialias: bool, in_dim: Any, out_size: Any, count: Any = None, offset: Any = None, xp: Any = jnp
) -> Any:
    """One axis's weights, W[out_size, in_dim]; with `count` and `offset`, W[count, in_dim], whose row `o`
    samples the axis resized to `out_size` at row `o - offset` and is zero where that row is outside it
    (`resize_with_pad`'s padding)."""
    x = _output_rows(xp, out_size if count is None else count, offset)
    if method == "bilinear" and not antialias:
        weights = _bilinear(xp, x, in_dim, out_size)
    elif method == "bicubic" and not antialias:
        weights = _bicubic(xp, x, in_dim, out_size)
    elif method == "area":
        weights = _area(xp, x, in_dim, out_size)
    else:
        kernel_name = {"bilinear": "triangle", "bicubic": "keyscubic"}.get(method, method)
        weights = _scale_and_translate(xp, kernel_name, antialias, x, in_dim, out_size)
    if count is None:
        return weights
    valid = (x >= 0) & (x < xp.asarray(out_size))
    return xp.where(valid[:, None], weights, np.float32(0))


def _output_rows(xp: Any, count: Any, offset: Any) -> Any:
    x = _iota(xp, count)
    return x if offset is None else x - xp.asarray(offset, np.int32)


def _nearest_indices(
    in_dim: Any, out_size: Any, count: Any = None, offset: Any = None, xp: Any = jnp
) -> tuple[Any, Any]:
    """ResizeNearestNeighbor (half-pixel centers): each output row's input row, and whether it is inside the
    resized axis (see `_weights` for `count` and `offset`)."""
    x = _output_rows(xp, out_size if count is None else count, offset)
    scale = _f32(in_dim) / _f32(out_size)
    rows = xp.floor(_product(xp, x.astype(np.float32) + _F32(0.5), scale)).astype(np.int32)
    rows = xp.clip(rows, 0, xp.asarray(in_dim) - 1)
    return rows, (x >= 0) & (x < xp.asarray(out_size))


@functools.lru_cache(maxsize=256)
def _host_weights(method: str, antialias: bool, in_size: int, out_size: int) -> np.ndarray:
    """`_weights` for known sizes, computed on the host once (NumPy's float32 rounds each operation)."""
    with np.errstate(all="ignore"):  # (the renormalization divides rows it then discards)
        return np.asarray(_weights(method, antialias, in_size, out_size, xp=np), np.float32)


@functools.lru_cache(maxsize=256)
def _host_rows(in_size: int, out_size: int) -> tuple:
    return tuple(int(i) for i in _nearest_indices(in_size, out_size, xp=np)[0])


def _separable(images: jax.Array, rows: jax.Array, cols: jax.Array) -> jax.Array:
    x = images.astype(jnp.float32)
    out = jnp.einsum("oh,...hwc->...owc", rows, x, precision=jax.lax.Precision.HIGHEST)
    return jnp.einsum("pw,...owc->...opc", cols, out, precision=jax.lax.Precision.HIGHEST)


def _nearest(images: jax.Array, rows: tuple, cols: tuple) -> jax.Array:
    out = jnp.take(images, jnp.asarray(rows, jnp.int32), axis=-3)
    return jnp.take(out, jnp.asarray(cols, jnp.int32), axis=-2)


_SEPARABLE = kernel("ResizeSeparable", _separable)
_AREA = kernel("ResizeArea", lambda x, rows, cols: gradient_not_registered("ResizeArea")(_separable(x, rows, cols)))
_NEAREST = kernel("ResizeNearestNeighbor", _nearest)


def _resampled(
    images: jax.Array,
    method: str,
    antialias: bool,
    sizes: tuple,
    counts: tuple = (None, None),
    offsets: tuple = (None, None),
) -> Any:
    """`images` resized to `sizes` (height, width); with `counts` and `offsets`, placed at `offsets` in an
    output of `counts` rows and columns, zeros around it."""
    in_h, in_w = images.shape[-3], images.shape[-2]
    if method == "nearest":
        rows, row_ok = _nearest_indices(in_h, sizes[0], counts[0], offsets[0])
        cols, col_ok = _nearest_indices(in_w, sizes[1], counts[1], offsets[1])
        out = jnp.take(jnp.take(images, rows, axis=-3), cols, axis=-2)
        if counts == (None, None):
            return out
        ok = (row_ok[:, None] & col_ok[None, :])[..., None]
        return jnp.where(ok, out, jnp.zeros((), out.dtype))
    row_w = _weights(method, antialias, in_h, sizes[0], counts[0], offsets[0])
    col_w = _weights(method, antialias, in_w, sizes[1], counts[1], offsets[1])
    out = _separable(images, row_w, col_w)
    return gradient_not_registered("ResizeArea")(out) if method == "area" else out


def _resize_impl(
    images: jax.Array, *, method: str, antialias: bool, height: Any, width: Any, checked: tuple = ()
) -> jax.Array:
    for size in checked:  # (output sizes known per call that may not be positive: TF's check when it runs)
        runtime_checks.require(jnp.asarray(size) >= 1, "output dimensions must be positive")
    return _resampled(images, method, antialias, (height, width))


_KERNEL_NAMES = {"bilinear": "ResizeBilinear", "bicubic": "ResizeBicubic", "area": "ResizeArea"}
_RESIZE = {
    m: kernel(_KERNEL_NAMES.get(m, "ResizeNearestNeighbor" if m == "nearest" else "ScaleAndTranslate"), _resize_impl)
    for m in _METHODS
}


def _size_arg(size: Any) -> tuple[Any, Any]:
    """`size` as (height, width): ints, or symbolic dimensions where it is `tf.shape` arithmetic in a trace for
    every size (`symbolic_values`)."""
    if isinstance(size, Tensor) and size.dtype != dtypes.int32:
        raise ValueError("'size' must be a 1-D int32 Tensor")
    size = static_value.resolve(size)  # `[tf.shape(x)[1] * 2, w]` inside tapeshim.function is known (H5)
    if _symbolic_ints(size) is None:
        if is_tensor_like(size):
            if convert_to_tensor(size).dtype != dtypes.int32:
                raise ValueError("'size' must be a 1-D int32 Tensor")
        elif np.asarray(size).dtype.kind not in "iu":
            raise ValueError("'size' must be a 1-D int32 Tensor")
    values = _static_ints(size, "size")
    rank = len(convert_to_tensor(size)._shape) if is_tensor_like(size) else np.asarray(size, dtype=object).ndim
    if rank != 1 or len(values) != 2:
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    return values[0], values[1]


def _is_symbolic(*dims: Any) -> bool:
    return any(symbolic_dims.is_symbolic(d) for d in dims)


def _positive(dim: Any) -> bool | None:
    """Whether an output size is positive (for a symbolic one: for every size), or None where only the
    call's sizes decide it."""
    if not symbolic_dims.is_symbolic(dim):
        return bool(dim > 0)
    try:
        return bool(dim >= 1)
    except Exception:  # noqa: BLE001 - JAX's InconclusiveDimensionOperation (not in its public API)
        return None


def _resize(images: Tensor, height: Any, width: Any, method: str, antialias: bool, op_name: str) -> Tensor:
    positive = (_positive(height), _positive(width))
    if False in positive:
        raise errors.invalid_argument("output dimensions must be positive", op_name)
    in_h, in_w = images._shape[-3], images._shape[-2]
    if not _is_symbolic(in_h, in_w, height, width):  # (known sizes: the weights computed once, on the host)
        if method == "nearest":
            return run(_NEAREST, (images,), rows=_host_rows(in_h, height), cols=_host_rows(in_w, width))
        rows = host_constant(_host_weights(method, antialias, in_h, height), dtypes.float32)
        cols = host_constant(_host_weights(method, antialias, in_w, width), dtypes.float32)
        return run(_AREA if method == "area" else _SEPARABLE, (images, rows, cols))
    checked = tuple(d for d, p in zip((height, width), positive) if p is None)  # (`n // 2`: checked per call)
    height, width = (symbolic_dims.at_least_zero(d) if p is None else d for d, p in zip((height, width), positive))
    static = {"method": method, "antialias": antialias, "height": height, "width": width}
    return run(_RESIZE[method], (images,), **static, **({"checked": checked} if checked else {}))


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

    In a trace for every size (`function_symbolic`), the input's height and width may be symbolic, and so
    may `size` where it is integer `tf.shape` arithmetic (`tf.shape(x)[:2] * 2`); a size computed in floats
    (`tf.cast(tf.cast(tf.shape(x)[:2], tf.float32) * 1.3, tf.int32)`), and `preserve_aspect_ratio`, give an
    output size that no symbolic dimension expresses, and the function is traced per shape.

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
        if _is_symbolic(height, width, in_h, in_w):  # (sizes rounded from float32 ratios: no symbolic dimension)
            raise ValueError("tf.image.resize(preserve_aspect_ratio=True) of a size known per call: traced per shape")
        factor = min(_F32(height) / _F32(in_h), _F32(width) / _F32(in_w))
        height = int(np.round(_F32(factor) * _F32(in_h)))
        width = int(np.round(_F32(factor) * _F32(in_w)))
    return _resize(images_t, height, width, method, bool(antialias), _OP_NAMES.get(method, "ScaleAndTranslate"))


def _pad_fit(height: Any, width: Any, target_h: Any, target_w: Any, xp: Any) -> tuple:
    """TF's resize_with_pad sizes in float32 (`xp`: numpy on the host, jax.numpy in the program): the resized
    height and width and the padding above and to the left."""
    f32 = (lambda v: _F32(v)) if xp is np else _f32
    h, w, th, tw = f32(height), f32(width), f32(target_h), f32(target_w)
    ratio = xp.maximum(w / tw, h / th)
    resized_h, resized_w = h / ratio, w / ratio
    pad_h = xp.maximum(0, xp.floor((th - resized_h) / _F32(2)).astype(np.int32))
    pad_w = xp.maximum(0, xp.floor((tw - resized_w) / _F32(2)).astype(np.int32))
    return xp.floor(resized_h).astype(np.int32), xp.floor(resized_w).astype(np.int32), pad_h, pad_w


def _resize_with_pad_impl(images: jax.Array, *, method: str, antialias: bool, target_h: Any, target_w: Any) -> Any:
    """resize_with_pad of an image whose size is known per call: resized and padded in one resampling."""
    resized_h, resized_w, pad_h, pad_w = _pad_fit(images.shape[-3], images.shape[-2], target_h, target_w, jnp)
    runtime_checks.require((resized_h > 0) & (resized_w > 0), "output dimensions must be positive")
    return _resampled(images, method, antialias, (resized_h, resized_w), (target_h, target_w), (pad_h, pad_w))


_RESIZE_WITH_PAD = {m: kernel("ResizeWithPad", _resize_with_pad_impl) for m in _METHODS}


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
    for target, what in ((target_w, "target_width"), (target_h, "target_height")):
        positive = _positive(target)
        if positive is None:  # (a target known per call that may not be positive: TF checks it per call)
            raise ValueError(f"tf.image.resize_with_pad to a {what} that may not be positive: traced per shape")
        if not positive:
            raise ValueError(f"{what} must be > 0.")
    height, width = image_t._shape[-3], image_t._shape[-2]
    if _is_symbolic(height, width, target_h, target_w):  # (the resized size is only known per call)
        method = str(method).lower()
        if method not in _METHODS:
            raise ValueError(f"Resize method is not implemented: {method}")
        static = {"method": method, "antialias": bool(antialias), "target_h": target_h, "target_w": target_w}
        return run(_RESIZE_WITH_PAD[method], (image_t,), **static)
    resized_h, resized_w, pad_h, pad_w = (int(v) for v in _pad_fit(height, width, target_h, target_w, np))
    resized = resize(image_t, np.array([resized_h, resized_w], np.int32), method=method, antialias=antialias)
    return pad_to_bounding_box(resized, pad_h, pad_w, target_h, target_w)
