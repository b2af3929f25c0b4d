"""`tf.image`: dtype conversion, flips, crops and pads, patches, gradients and non-max suppression."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors, runtime_checks, symbolic_dims, symbolic_indexing
from tapeshim._src.ops import random_ops, table
from tapeshim._src.ops.array_ops import _static_ints, expand_dims
from tapeshim._src.ops.array_ops import squeeze as squeeze_op
from tapeshim._src.ops.image_common import image_tensor, kernel, run, static_int
from tapeshim._src.ops.ragged_hook import ragged_dispatch
from tapeshim._src.registry import OpDef, apply
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike


# -- dtype conversion ---------------------------------------------------------------------------------
def _saturate(x: jax.Array, target: np.dtype) -> jax.Array:
    """TF's saturate_cast: clamp to the target's range (where the source can exceed it), then cast."""
    if jnp.issubdtype(target, jnp.integer):
        info = jnp.iinfo(target)
        low, high = info.min, info.max
        if jnp.issubdtype(x.dtype, jnp.integer):
            src = jnp.iinfo(x.dtype)
            if low > src.min:
                x = jnp.maximum(x, jnp.asarray(low).astype(x.dtype))
            if high < src.max:
                x = jnp.minimum(x, jnp.asarray(high).astype(x.dtype))
        else:  # the bounds as the largest source values inside the range (2**31 - 1 is not a float32)
            kind = np.dtype(x.dtype)
            high_f, low_f = np.asarray(high, kind), np.asarray(low, kind)
            if float(high_f) > high:
                high_f = np.nextafter(high_f, np.asarray(0, kind))
            if float(low_f) < low:
                low_f = np.nextafter(low_f, np.asarray(0, kind))
            x = jnp.clip(x, jnp.asarray(low_f), jnp.asarray(high_f))
    elif jnp.issubdtype(target, jnp.floating) and not jnp.issubdtype(x.dtype, jnp.complexfloating):
        finite = jnp.finfo(target)  # (a wider source clamps to the target's largest finite values, as TF's)
        source_high = jnp.iinfo(x.dtype).max if jnp.issubdtype(x.dtype, jnp.integer) else jnp.finfo(x.dtype).max
        if float(source_high) > float(finite.max):
            kind = np.dtype(x.dtype)
            bounds = [jnp.asarray(np.asarray(float(v)).astype(kind)) for v in (finite.min, finite.max)]
            x = jnp.clip(x, *bounds)
    return x.astype(target)


_saturate_op = OpDef("SaturateCast", lambda x, target: _saturate(x, np.dtype(target)), True)


@table.export("dtypes.saturate_cast", "saturate_cast", dtypes=table.REAL, op=_saturate_op)
@ragged_dispatch()
def saturate_cast(value: TensorLike, dtype: DTypeLike, name: str | None = None) -> Tensor:
    """`value` cast to `dtype`, clamped to its range first (no wrap-around), as `tf.dtypes.saturate_cast`."""
    x, target = convert_to_tensor(value), dtypes.as_dtype(dtype)
    if x._dtype == target:
        return x
    return apply(_saturate_op, (x,), (("target", np.dtype(target._np).name),))[0]


def _convert(x: jax.Array, target: str, saturate: bool) -> jax.Array:
    out = np.dtype(dtypes.as_dtype(target).as_numpy_dtype)
    src = x.dtype
    cast = (lambda v: _saturate(v, out)) if saturate else (lambda v: v.astype(out))
    if jnp.issubdtype(src, jnp.integer) and jnp.issubdtype(out, jnp.integer):
        max_in, max_out = int(jnp.iinfo(src).max), int(jnp.iinfo(out).max)
        if max_in > max_out:
            return cast(jnp.floor_divide(x, jnp.asarray((max_in + 1) // (max_out + 1), src)))
        return cast(x) * jnp.asarray((max_out + 1) // (max_in + 1), out)
    if jnp.issubdtype(src, jnp.floating) and jnp.issubdtype(out, jnp.floating):
        return x.astype(out)
    if jnp.issubdtype(src, jnp.integer):
        return x.astype(out) * jnp.asarray(1.0 / int(jnp.iinfo(src).max), out)
    return cast(x * jnp.asarray(int(jnp.iinfo(out).max) + 0.5, src))


_CONVERT = kernel("ConvertImageDtype", _convert)


def _real_dtype(dtype: dtypes.DType, what: str) -> None:
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(f"{what} must be either floating point or integer")


@table.export(
    "image.convert_image_dtype",
    dtypes=table.REAL,
    note="float to unsigned int of negative values: XLA's cast, not necessarily TF's",
    op=_CONVERT,
)
@ragged_dispatch()
def convert_image_dtype(image: TensorLike, dtype: DTypeLike, saturate: bool = False, name: str | None = None) -> Tensor:
    """Converts an image to `dtype`, scaling values: floats in [0, 1], integers in [0, MAX].

    Raises:
      AttributeError: for a dtype that is neither floating nor integer, as TF.
    """
    image_t = convert_to_tensor(image)
    target = dtypes.as_dtype(dtype)
    _real_dtype(target, "dtype")
    _real_dtype(image_t.dtype, "image dtype")
    if target == image_t.dtype:
        return image_t
    return run(_CONVERT, (image_t,), target=target.name, saturate=bool(saturate))


def to_float(image: Tensor) -> Tensor:
    """TF's working copy for adjustments: float16/float32 images as they are, others converted to float32."""
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


# -- flips, rotations, transposes ---------------------------------------------------------------------
_FLIP = kernel("ReverseV2", lambda x, axis: jnp.flip(x, axis))
_ROT90 = kernel("Rot90", lambda x, k: jnp.rot90(x, k, axes=(x.ndim - 3, x.ndim - 2)))
_SWAP = kernel("Transpose", lambda x: jnp.swapaxes(x, -3, -2))


@table.export("image.flip_left_right", dtypes=table.ANY, op=_FLIP)
def flip_left_right(image: TensorLike) -> Tensor:
    """Reverses the width axis of an image or a batch of images."""
    return run(_FLIP, (image_tensor(image, at_most=4),), axis=-2)


@table.export("image.flip_up_down", dtypes=table.ANY, op=_FLIP)
def flip_up_down(image: TensorLike) -> Tensor:
    """Reverses the height axis of an image or a batch of images."""
    return run(_FLIP, (image_tensor(image, at_most=4),), axis=-3)


@table.export("image.rot90", dtypes=table.ANY, op=_ROT90)
def rot90(image: TensorLike, k: TensorLike = 1, name: str | None = None) -> Tensor:
    """Rotates images counter-clockwise by `k` quarter turns."""
    return run(_ROT90, (image_tensor(image, at_most=4),), k=static_int(k, "k") % 4)


@table.export("image.transpose", dtypes=table.ANY, op=_SWAP)
def transpose(image: TensorLike, name: str | None = None) -> Tensor:
    """Swaps the height and width axes."""
    return run(_SWAP, (image_tensor(image, at_most=4),))


def _random_flip(image: Any, seed: Any, axis: int) -> Tensor:
    image_t = image_tensor(image, at_most=4)
    key = random_ops._op_key(seed)
    return run(_RANDOM_FLIP, (key, image_t), axis=axis)


def _random_flip_impl(key: jax.Array, x: jax.Array, axis: int) -> jax.Array:
    if x.ndim == 3:
        return jnp.where(jax.random.uniform(key, ()) < 0.5, jnp.flip(x, axis), x)
    coin = jax.random.uniform(key, (x.shape[0], 1, 1, 1)) < 0.5
    return jnp.where(coin, jnp.flip(x, axis), x)


_RANDOM_FLIP = kernel("RandomFlip", _random_flip_impl)


@table.export("image.random_flip_left_right", dtypes=table.ANY, note="not TF's random stream")
def random_flip_left_right(image: TensorLike, seed: TensorLike | None = None) -> Tensor:
    """Flips each image left-right with probability 1/2 (each image of a batch independently)."""
    return _random_flip(image, seed, -2)


@table.export("image.random_flip_up_down", dtypes=table.ANY, note="not TF's random stream")
def random_flip_up_down(image: TensorLike, seed: TensorLike | None = None) -> Tensor:
    """Flips each image upside down with probability 1/2 (each image of a batch independently)."""
    return _random_flip(image, seed, -3)


# -- crops and pads -----------------------------------------------------------------------------------
_CROP = kernel("Slice", lambda x, begin, size: jax.lax.slice(x, begin, tuple(b + s for b, s in zip(begin, size))))
_PAD = kernel("Pad", lambda x, pads: jnp.pad(x, pads))


def _window_impl(x: jax.Array, *, windows: tuple, checks: tuple) -> jax.Array:
    """Crops and pads along axes whose sizes (or the window's) are known per call (a trace for every size,
    `function_symbolic`), as gathers: each of `windows`, `(mode, axis, offset, count)`, gives `count` rows,
    row `o` from input row `o + offset` ("crop"), `o - offset` ("pad", zeros outside the input), or, for
    "center" (`resize_with_crop_or_pad` to `count`), TF's centered offsets. `checks` (`(lhs, rhs, message)`)
    are TF's run-time checks `lhs >= rhs`."""
    for lhs, rhs, message in checks:
        runtime_checks.require(jnp.asarray(lhs) >= jnp.asarray(rhs), message)
    for mode, axis, offset, count in windows:
        n = jnp.asarray(x.shape[axis], jnp.int32)
        rows = jax.lax.iota(jnp.int32, symbolic_dims.at_least_zero(count))  # (`n - 2`: checked >= 1 above)
        if mode == "crop":
            x = jnp.take(x, jnp.clip(rows + jnp.asarray(offset, jnp.int32), 0, n - 1), axis=axis)
            continue
        if mode == "pad":
            source = rows - jnp.asarray(offset, jnp.int32)
            valid = (source >= 0) & (source < n)
        else:
            difference = jnp.asarray(count, jnp.int32) - n
            pad = jnp.maximum(difference // 2, 0)
            source = rows - pad + jnp.maximum(-difference // 2, 0)
            valid = (rows >= pad) & (rows < pad + jnp.minimum(jnp.asarray(count, jnp.int32), n))
        taken = jnp.take(x, jnp.clip(source, 0, n - 1), axis=axis)
        shape = [1] * x.ndim
        shape[axis] = -1
        x = jnp.where(valid.reshape(shape), taken, jnp.zeros((), x.dtype))
    return x


_WINDOW = kernel("Slice", _window_impl)


def _decided(check: Any) -> bool | None:
    """A comparison of sizes (`check()`), or None where sizes known per call leave it open."""
    try:
        return bool(check())
    except Exception:  # noqa: BLE001 - JAX's InconclusiveDimensionOperation (not in its public API)
        return None


def _checked(conditions: tuple) -> tuple:
    """TF's checks `(lhs, rhs, message)` of `lhs >= rhs`: raises TF's ValueError for one that fails for every
    size; the checks sizes known per call leave open, for the program to make when it runs."""
    open_checks = []
    for lhs, rhs, message in conditions:
        holds = _decided(lambda lhs=lhs, rhs=rhs: lhs >= rhs)
        if holds is False:
            raise ValueError(message)
        if holds is None:
            open_checks.append((lhs, rhs, message))
    return tuple(open_checks)


def _symbolic(*values: Any) -> bool:
    return any(symbolic_dims.is_symbolic(v) for v in values)


def _batched(image: Tensor) -> tuple[Tensor, bool]:
    return (image, False) if len(image._shape) == 4 else (expand_dims(image, 0), True)


def _unbatched(image: Tensor, squeeze: bool) -> Tensor:
    return squeeze_op(image, [0]) if squeeze else image


@table.export("image.crop_to_bounding_box", dtypes=table.ANY, op=_CROP)
def crop_to_bounding_box(
    image: TensorLike,
    offset_height: TensorLike,
    offset_width: TensorLike,
    target_height: TensorLike,
    target_width: TensorLike,
) -> Tensor:
    """The `target_height` x `target_width` window of the image whose top-left corner is at the offsets.

    Raises:
      ValueError: for a bad rank, a negative offset, a non-positive target or a window outside the image.
    """
    image_t = image_tensor(image, at_most=4)
    oh, ow = static_int(offset_height, "offset_height"), static_int(offset_width, "offset_width")
    th, tw = static_int(target_height, "target_height"), static_int(target_width, "target_width")
    height, width = image_t._shape[-3], image_t._shape[-2]
    checks = _checked(
        (
            (ow, 0, "offset_width must be >= 0."),
            (oh, 0, "offset_height must be >= 0."),
            (tw, 1, "target_width must be > 0."),
            (th, 1, "target_height must be > 0."),
            (width, tw + ow, "width must be >= target + offset."),
            (height, th + oh, "height must be >= target + offset."),
        )
    )
    if checks or _symbolic(height, width, oh, ow, th, tw):
        windows = (("crop", len(image_t._shape) - 3, oh, th), ("crop", len(image_t._shape) - 2, ow, tw))
        return run(_WINDOW, (image_t,), windows=windows, checks=checks)
    lead = (0,) * (len(image_t._shape) - 3)
    begin = lead + (oh, ow, 0)
    size = tuple(image_t._shape[:-3]) + (th, tw, image_t._shape[-1])
    return run(_CROP, (image_t,), begin=begin, size=size)


@table.export("image.pad_to_bounding_box", dtypes=table.ANY, op=_PAD)
def pad_to_bounding_box(
    image: TensorLike,
    offset_height: TensorLike,
    offset_width: TensorLike,
    target_height: TensorLike,
    target_width: TensorLike,
) -> Tensor:
    """Pads with zeros to `target_height` x `target_width`, the image's top-left corner at the offsets.

    Raises:
      ValueError: for a bad rank, a negative offset or a target too small for the image.
    """
    image_t = image_tensor(image, at_most=4)
    oh, ow = static_int(offset_height, "offset_height"), static_int(offset_width, "offset_width")
    th, tw = static_int(target_height, "target_height"), static_int(target_width, "target_width")
    height, width = image_t._shape[-3], image_t._shape[-2]
    after_h, after_w = th - oh - height, tw - ow - width
    checks = _checked(
        (
            (oh, 0, "offset_height must be >= 0"),
            (ow, 0, "offset_width must be >= 0"),
            (after_w, 0, "width must be <= target - offset"),
            (after_h, 0, "height must be <= target - offset"),
        )
    )
    if checks or _symbolic(height, width, oh, ow, th, tw):
        windows = (("pad", len(image_t._shape) - 3, oh, th), ("pad", len(image_t._shape) - 2, ow, tw))
        return run(_WINDOW, (image_t,), windows=windows, checks=checks)
    pads = ((0, 0),) * (len(image_t._shape) - 3) + ((oh, after_h), (ow, after_w), (0, 0))
    return run(_PAD, (image_t,), pads=pads)


@table.export("image.resize_with_crop_or_pad", dtypes=table.ANY)
def resize_with_crop_or_pad(image: TensorLike, target_height: TensorLike, target_width: TensorLike) -> Tensor:
    """Centrally crops or zero-pads the image to the target size (TF's offsets for odd differences).

    Raises:
      ValueError: for a bad rank or a non-positive target.
    """
    image_t = image_tensor(image, at_most=4)
    th, tw = static_int(target_height, "target_height"), static_int(target_width, "target_width")
    _checked(((tw, 1, "target_width must be > 0."), (th, 1, "target_height must be > 0.")))
    if _symbolic(tw, th) and not (_decided(lambda: tw >= 1) and _decided(lambda: th >= 1)):
        raise ValueError("tf.image.resize_with_crop_or_pad to a size that may not be positive: traced per shape")
    height, width = image_t._shape[-3], image_t._shape[-2]
    if _symbolic(height, width, th, tw):
        windows = (("center", len(image_t._shape) - 3, 0, th), ("center", len(image_t._shape) - 2, 0, tw))
        return run(_WINDOW, (image_t,), windows=windows, checks=())
    dw, dh = tw - width, th - height
    cropped = crop_to_bounding_box(image_t, max(-dh // 2, 0), max(-dw // 2, 0), min(th, height), min(tw, width))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), th, tw)


@table.export("image.central_crop", dtypes=table.ANY)
def central_crop(image: TensorLike, central_fraction: float) -> Tensor:
    """The central `central_fraction` of the image along height and width.

    Raises:
      ValueError: if `central_fraction` is not in (0, 1] or the rank is not 3 or 4.
    """
    fraction = float(central_fraction)
    if fraction <= 0.0 or fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    image_t = convert_to_tensor(image)
    if len(image_t._shape) not in (3, 4):
        raise ValueError(
            f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {len(image_t._shape)}."
        )
    if fraction == 1.0:
        return image_t
    height, width = image_t._shape[-3], image_t._shape[-2]
    if _symbolic(height, width):  # (TF's window size is computed in float64 from the size: no symbolic dimension)
        raise ValueError("tf.image.central_crop of an image whose size is known per call: traced per shape")
    start_h = int((float(height) - float(height) * fraction) / 2)
    start_w = int((float(width) - float(width) * fraction) / 2)
    return crop_to_bounding_box(image_t, start_h, start_w, height - 2 * start_h, width - 2 * start_w)


def _random_crop_impl(key: jax.Array, x: jax.Array, size: tuple, checked: bool = False) -> jax.Array:
    shape = x.shape
    limit = jnp.asarray([d - s + 1 for d, s in zip(shape, size)], jnp.int32)
    if checked:  # (sizes known per call: TF's assertion, and a padded copy the window provably fits in)
        dims, message = runtime_checks.shape_fields(shape, "d")
        runtime_checks.require(
            jnp.all(limit >= 1),
            f"Need value.shape >= size, got {dims.replace(',', ', ')} {', '.join(map(str, size))}",
            **{name: jnp.asarray(d) for name, d in message.items()},
        )
        x = jnp.pad(x, [(0, s) for s in size])
    offsets = jax.random.randint(key, (x.ndim,), 0, jnp.iinfo(jnp.int32).max, jnp.int32) % limit
    return jax.lax.dynamic_slice(x, tuple(offsets[i] for i in range(x.ndim)), size)


_RANDOM_CROP = kernel("RandomCrop", _random_crop_impl)


@table.export(
    "image.random_crop", dtypes=table.ANY, note="offsets uniform as TF's, not TF's random stream", op=_RANDOM_CROP
)
def random_crop(value: TensorLike, size: TensorLike, seed: TensorLike | None = None, name: str | None = None) -> Tensor:
    """A window of shape `size` at a uniformly random offset.

    Raises:
      InvalidArgumentError: if `size` has the wrong length or exceeds `value`'s shape.
    """
    value_t = convert_to_tensor(value)
    dims = _static_ints(size, "size")
    shape = tuple(value_t._shape)
    if len(dims) != len(shape):
        raise errors.invalid_argument(f"Incompatible shapes: [{len(shape)}] vs. [{len(dims)}]", "GreaterEqual")
    if _symbolic(*shape, *dims):  # (checked when the function runs)
        return run(_RANDOM_CROP, (random_ops._op_key(seed), value_t), size=tuple(dims), checked=True)
    if any(d < s for d, s in zip(shape, dims)):
        raise errors.invalid_argument(
            f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b'Need value.shape >= "
            f"size, got ' {', '.join(map(str, shape))} {', '.join(map(str, dims))}",
            "Assert",
        )
    return run(_RANDOM_CROP, (random_ops._op_key(seed), value_t), size=tuple(dims))


# -- patches and gradients ----------------------------------------------------------------------------
def _patches(x: jax.Array, sizes: tuple, strides: tuple, rates: tuple, padding: str) -> jax.Array:
    kh, kw = sizes
    eff = ((kh - 1) * rates[0] + 1, (kw - 1) * rates[1] + 1)
    pads = jax.lax.padtype_to_pads(x.shape[1:3], eff, strides, padding)
    x = jnp.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    out_h = (x.shape[1] - eff[0]) // strides[0] + 1
    out_w = (x.shape[2] - eff[1]) // strides[1] + 1
    parts = []
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * rates[0], j * rates[1]
            parts.append(
                x[
                    :,
                    r0 : r0 + (out_h - 1) * strides[0] + 1 : strides[0],
                    c0 : c0 + (out_w - 1) * strides[1] + 1 : strides[1],
                    :,
                ]
            )
    stacked = jnp.stack(parts, axis=3)  # [b, oh, ow, kh*kw, c]
    return stacked.reshape(stacked.shape[:3] + (-1,))


_PATCHES = kernel("ExtractImagePatches", _patches)


def _window_arg(value: Any, what: str) -> tuple[int, int]:
    values = _static_ints(value, what)
    if len(values) != 4 or values[0] != 1 or values[3] != 1:
        raise errors.invalid_argument(
            f"{what} is only supported across rows and columns (it must be [1, rows, cols, 1])", "ExtractImagePatches"
        )
    return values[1], values[2]


@table.export("image.extract_patches", dtypes=table.REAL, op=_PATCHES)
def extract_patches(
    images: TensorLike, sizes: TensorLike, strides: TensorLike, rates: Any, padding: str, name: str | None = None
) -> Tensor:
    """Patches of `images` flattened into the depth axis, ordered (row, column, channel) as TF.

    Raises:
      InvalidArgumentError: if `images` is not 4-D or a window argument is not `[1, r, c, 1]`.
    """
    images_t = convert_to_tensor(images)
    if len(images_t._shape) != 4:
        raise errors.invalid_argument(
            f"input must be 4-dimensional{list(images_t._shape)}".replace(" ", ""), "ExtractImagePatches"
        )
    padding = str(padding).upper()
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    return run(
        _PATCHES,
        (images_t,),
        sizes=_window_arg(sizes, "sizes"),
        strides=_window_arg(strides, "strides"),
        rates=_window_arg(rates, "rates"),
        padding=padding,
    )


def _gradients(x: jax.Array) -> tuple:
    dy = jnp.pad(x[:, 1:] - x[:, :-1], ((0, 0), (0, 1), (0, 0), (0, 0)))
    dx = jnp.pad(x[:, :, 1:] - x[:, :, :-1], ((0, 0), (0, 0), (0, 1), (0, 0)))
    return dy, dx


_IMAGE_GRADIENTS = kernel("ImageGradients", _gradients)


@table.export("image.image_gradients", dtypes=table.REAL, op=_IMAGE_GRADIENTS)
def image_gradients(image: TensorLike) -> tuple[Tensor, Tensor]:
    """Forward differences `(dy, dx)` of a 4-D image batch, zero in the last row / column.

    Raises:
      ValueError: if `image` is not 4-D.
    """
    image_t = convert_to_tensor(image)
    if len(image_t._shape) != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image_t.shape}.")

    dy, dx = apply(_IMAGE_GRADIENTS, (image_t,), ())
    return dy, dx


def _sobel(x: jax.Array) -> jax.Array:
    h, w = x.shape[1], x.shape[2]
    if _symbolic(h, w):  # (TF's MirrorPad check, for sizes known per call)
        size = jnp.minimum(jnp.asarray(h), jnp.asarray(w))
        message = "paddings must be less than the dimension size: 1, 1 not less than {size} [Op:MirrorPad]"
        runtime_checks.require(size > 1, message, size=size)
    padded = symbolic_indexing.mirror_pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), "reflect")
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    out = []
    for k in (ky, ky.T):
        acc = jnp.zeros_like(x)
        for i in range(3):
            for j in range(3):
                if k[i, j]:
                    acc = acc + jnp.asarray(k[i, j], x.dtype) * padded[:, i : i + h, j : j + w, :]
        out.append(acc)
    return jnp.stack(out, axis=-1)


_SOBEL = kernel("SobelEdges", _sobel)


@table.export("image.sobel_edges", dtypes=table.REAL_FLOAT, op=_SOBEL)
def sobel_edges(image: TensorLike) -> Tensor:
    """Sobel responses `[..., (dy, dx)]` of a 4-D float image batch (reflect padding, as TF).

    Raises:
      InvalidArgumentError: if `image` is not 4-D.
    """
    image_t = convert_to_tensor(image)
    if len(image_t._shape) != 4:
        raise errors.invalid_argument(
            f"The first dimension of paddings must be the rank of inputs[4,2], {list(image_t._shape)}".replace(" ", ""),
            "MirrorPad",
        )
    return run(_SOBEL, (image_t,))


# -- non-max suppression (on the host) ----------------------------------------------------------------
def _host_array(value: Tensor, what: str) -> np.ndarray:
    if _thread_state.trace is not None:
        raise NotImplementedError(
            f"tapeshim's non_max_suppression runs on the host: `{what}` must be known, "
            "so call it outside tapeshim.function (or on values the function receives "
            "through tf.py_function)."
        )
    return np.asarray(value.numpy())


@table.export(
    "image.non_max_suppression",
    gradient="-",
    dtypes=table.REAL_FLOAT,
    note="computed on the host with numpy (not inside tapeshim.function)",
)
def non_max_suppression(
    boxes: TensorLike,
    scores: TensorLike,
    max_output_size: TensorLike,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    name: str | None = None,
) -> Tensor:
    """Greedy non-max suppression: indices of the kept boxes, best score first (int32).

    Args:
      boxes: `[num_boxes, 4]` boxes `[y1, x1, y2, x2]` (any corner order).
      scores: `[num_boxes]` scores.
      max_output_size: the most boxes to keep.
      iou_threshold: a box overlapping a kept one by more than this IoU is dropped.
      score_threshold: boxes scoring at or below this are dropped.
      name: accepted for compatibility.

    Raises:
      InvalidArgumentError: for bad shapes or an IoU threshold outside [0, 1].
    """
    from tapeshim._src.ops.image_extra import _nms  # import cycle: image_ops <-> image_extra

    kept, _ = _nms(boxes, scores, max_output_size, iou_threshold, score_threshold, 0.0, "NonMaxSuppressionV3")
    return constant(np.asarray(kept, np.int32), dtypes.int32)
