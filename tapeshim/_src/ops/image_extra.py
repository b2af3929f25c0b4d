"""`tf.image`: stateless random augmentations, crop_and_resize, total_variation, YUV/YIQ, NMS variants."""

from __future__ import annotations

import heapq
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import random_ops, table
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.ops.image_color import (
    adjust_brightness,
    adjust_contrast,
    adjust_hue,
    adjust_saturation,
    check_factor_range,
)
from tapeshim._src.ops.image_common import image_tensor, kernel, run, static_int
from tapeshim._src.ops.image_ops import _RANDOM_CROP, _RANDOM_FLIP, _host_array, random_crop
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import TensorLike


# -- stateless random augmentations (deterministic in `seed`, not TF's streams) --------------------------
def _stateless_factor(seed: Any, low: float, high: float) -> Tensor:
    return random_ops.stateless_uniform([], seed, low, high)


@table.export("image.stateless_random_flip_left_right", dtypes=table.ANY, note="not TF's random stream")
def stateless_random_flip_left_right(image: TensorLike, seed: TensorLike) -> Tensor:
    """Flips each image left-right with probability 1/2, determined by `seed` (a pair of ints)."""
    return run(_RANDOM_FLIP, (random_ops._pair_key(seed), image_tensor(image, at_most=4)), axis=-2)


@table.export("image.stateless_random_flip_up_down", dtypes=table.ANY, note="not TF's random stream")
def stateless_random_flip_up_down(image: TensorLike, seed: TensorLike) -> Tensor:
    """Flips each image upside down with probability 1/2, determined by `seed` (a pair of ints)."""
    return run(_RANDOM_FLIP, (random_ops._pair_key(seed), image_tensor(image, at_most=4)), axis=-3)


@table.export("image.stateless_random_crop", dtypes=table.ANY, note="not TF's random stream")
def stateless_random_crop(value: TensorLike, size: TensorLike, seed: TensorLike, name: str | None = None) -> Tensor:
    """A window of shape `size` at an offset determined by `seed` (a pair of ints).

    Raises:
      InvalidArgumentError: if `size` has the wrong length or exceeds `value`'s shape.
    """
    value_t = convert_to_tensor(value)
    dims = _static_ints(size, "size")
    if len(dims) != len(value_t._shape) or any(d < s for d, s in zip(value_t._shape, dims)):
        random_crop(value_t, dims)  # raises TF's error for the bad size
    return run(_RANDOM_CROP, (random_ops._pair_key(seed), value_t), size=tuple(dims))


@table.export("image.stateless_random_brightness", dtypes=table.REAL, note="not TF's random stream")
def stateless_random_brightness(image: TensorLike, max_delta: float, seed: TensorLike) -> Tensor:
    """`adjust_brightness` by a delta in [-max_delta, max_delta) determined by `seed`.

    Raises:
      ValueError: if `max_delta` is negative.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _stateless_factor(seed, -max_delta, max_delta))


@table.export("image.stateless_random_contrast", dtypes=table.REAL, note="not TF's random stream")
def stateless_random_contrast(image: TensorLike, lower: float, upper: float, seed: TensorLike) -> Tensor:
    """`adjust_contrast` by a factor in [lower, upper) determined by `seed`.

    Raises:
      ValueError: if `upper <= lower` or `lower < 0`.
    """
    check_factor_range(lower, upper)
    return adjust_contrast(image, _stateless_factor(seed, lower, upper))


@table.export("image.stateless_random_saturation", dtypes=table.REAL, note="not TF's random stream")
def stateless_random_saturation(image: TensorLike, lower: float, upper: float, seed: TensorLike) -> Tensor:
    """`adjust_saturation` by a factor in [lower, upper) determined by `seed`.

    Raises:
      ValueError: if `upper <= lower` or `lower < 0`.
    """
    check_factor_range(lower, upper)
    return adjust_saturation(image, _stateless_factor(seed, lower, upper))


@table.export("image.stateless_random_hue", dtypes=table.REAL, note="not TF's random stream")
def stateless_random_hue(image: TensorLike, max_delta: float, seed: TensorLike) -> Tensor:
    """`adjust_hue` by a delta in [-max_delta, max_delta) determined by `seed`.

    Raises:
      ValueError: if `max_delta` is outside [0, 0.5].
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _stateless_factor(seed, -max_delta, max_delta))


# -- total variation and color matrices ---------------------------------------------------------------
def _total_variation(x: jax.Array) -> jax.Array:
    dy = jnp.abs(x[..., 1:, :, :] - x[..., :-1, :, :])
    dx = jnp.abs(x[..., :, 1:, :] - x[..., :, :-1, :])
    return (jnp.sum(dy, axis=(-3, -2, -1)) + jnp.sum(dx, axis=(-3, -2, -1))).astype(x.dtype)


_TOTAL_VARIATION = kernel("TotalVariation", _total_variation)


@table.export("image.total_variation", dtypes=table.REAL, op=_TOTAL_VARIATION)
def total_variation(images: TensorLike, name: str | None = None) -> Tensor:
    """Sum of absolute differences of neighboring pixels, per image.

    Raises:
      ValueError: if `images` is not 3-D or 4-D.
    """
    images_t = convert_to_tensor(images)
    if len(images_t._shape) not in (3, 4):
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    return run(_TOTAL_VARIATION, (images_t,))


_YUV = np.array([[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]])
_YIQ = np.array([[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]])
_YUV_INVERSE = np.array([[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]])
_YIQ_INVERSE = np.array([[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]])
_MIX = kernel(
    "ColorMatrix",
    lambda x, m: jnp.tensordot(x, m.astype(x.dtype), axes=[[-1], [0]], precision=jax.lax.Precision.HIGHEST),
)


def _color_matrix(images: Any, matrix: np.ndarray) -> Tensor:
    images_t = convert_to_tensor(images)
    if not images_t.dtype.is_floating:
        raise TypeError(
            f"Value passed to parameter 'a' has DataType {images_t.dtype.name} not in list of allowed "
            "values: bfloat16, float16, float32, float64"
        )
    if not images_t._shape or images_t._shape[-1] != 3:
        raise ValueError(f"Dimensions must be equal, but are {images_t._shape[-1] if images_t._shape else 0} and 3")
    return run(_MIX, (images_t, constant(matrix.astype(images_t.dtype.as_numpy_dtype), images_t.dtype)))


@table.export("image.rgb_to_yuv", dtypes=table.REAL_FLOAT)
def rgb_to_yuv(images: TensorLike) -> Tensor:
    """RGB (floats in [0, 1]) to YUV, TF's matrix."""
    return _color_matrix(images, _YUV)


@table.export("image.yuv_to_rgb", dtypes=table.REAL_FLOAT)
def yuv_to_rgb(images: TensorLike) -> Tensor:
    """YUV to RGB, the inverse of TF's matrix."""
    return _color_matrix(images, _YUV_INVERSE)


@table.export("image.rgb_to_yiq", dtypes=table.REAL_FLOAT)
def rgb_to_yiq(images: TensorLike) -> Tensor:
    """RGB (floats in [0, 1]) to YIQ, TF's matrix."""
    return _color_matrix(images, _YIQ)


@table.export("image.yiq_to_rgb", dtypes=table.REAL_FLOAT)
def yiq_to_rgb(images: TensorLike) -> Tensor:
    """YIQ to RGB, the inverse of TF's matrix."""
    return _color_matrix(images, _YIQ_INVERSE)


# -- crop_and_resize ----------------------------------------------------------------------------------
def _crop_and_resize(
    image: jax.Array,
    boxes: jax.Array,
    box_ind: jax.Array,
    extents: jax.Array,
    crop: tuple,
    method: str,
    extrapolation: float,
) -> jax.Array:
    # `extents` holds [height - 1, width - 1, crop_h - 1, crop_w - 1] as a runtime input: XLA would turn a
    # division by a constant into a multiplication by its reciprocal, and sampling positions would then
    # round differently from TF's float32 kernel (nearest picks a different pixel).
    height, width = image.shape[1], image.shape[2]
    crop_h, crop_w = crop
    boxes = boxes.astype(jnp.float32)
    y1, x1, y2, x2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]

    def positions(lo: jax.Array, hi: jax.Array, size: jax.Array, count: int, steps: jax.Array) -> jax.Array:
        if count > 1:
            scale = (hi - lo) * size / steps
            return lo[:, None] * size + jnp.arange(count, dtype=jnp.float32)[None, :] * scale[:, None]
        return (0.5 * (lo + hi) * size)[:, None]

    in_y = positions(y1, y2, extents[0], crop_h, extents[2])
    in_x = positions(x1, x2, extents[1], crop_w, extents[3])
    valid = ((in_y >= 0) & (in_y <= height - 1))[:, :, None] & ((in_x >= 0) & (in_x <= width - 1))[:, None, :]
    source = image[box_ind].astype(jnp.float32)
    n = jnp.arange(boxes.shape[0])[:, None, None]

    def pick(rows: jax.Array, cols: jax.Array) -> jax.Array:
        rows = jnp.clip(rows, 0, height - 1).astype(jnp.int32)
        cols = jnp.clip(cols, 0, width - 1).astype(jnp.int32)
        return source[n, rows[:, :, None], cols[:, None, :]]

    if method == "nearest":
        out = pick(jnp.floor(in_y + 0.5), jnp.floor(in_x + 0.5))  # roundf: halves away from zero
    else:
        top, left = jnp.floor(in_y), jnp.floor(in_x)
        y_lerp, x_lerp = (in_y - top)[:, :, None, None], (in_x - left)[:, None, :, None]
        top_left, top_right = pick(top, left), pick(top, jnp.ceil(in_x))
        bottom_left, bottom_right = pick(jnp.ceil(in_y), left), pick(jnp.ceil(in_y), jnp.ceil(in_x))
        upper = top_left + (top_right - top_left) * x_lerp
        lower = bottom_left + (bottom_right - bottom_left) * x_lerp
        out = upper + (lower - upper) * y_lerp
    return jnp.where(valid[..., None], out, jnp.float32(extrapolation))


_CROP_AND_RESIZE = kernel("CropAndResize", _crop_and_resize)


@table.export(
    "image.crop_and_resize",
    dtypes=table.REAL,
    note="gradients for image and boxes are JAX's derivative of the same interpolation",
    op=_CROP_AND_RESIZE,
)
def crop_and_resize(
    image: TensorLike,
    boxes: TensorLike,
    box_indices: TensorLike,
    crop_size: TensorLike,
    method: str = "bilinear",
    extrapolation_value: float = 0.0,
    name: str | None = None,
) -> Tensor:
    """Crops normalized boxes `[y1, x1, y2, x2]` from a batch of images and resizes them to `crop_size` (float32).

    Raises:
      InvalidArgumentError: for bad shapes, a non-positive crop size or a box index outside the batch.
      ValueError: for a method other than bilinear or nearest.
    """
    image_t, boxes_t, index_t = convert_to_tensor(image), convert_to_tensor(boxes), convert_to_tensor(box_indices)
    op = "CropAndResize"
    if len(image_t._shape) != 4:
        raise errors.invalid_argument(f"input image must be 4-D{list(image_t._shape)}".replace(" ", ""), op)
    if len(boxes_t._shape) != 2 or boxes_t._shape[1] != 4:
        raise errors.invalid_argument(f"boxes must have 4 columns{list(boxes_t._shape)}".replace(" ", ""), op)
    if tuple(index_t._shape) != (boxes_t._shape[0],):
        raise errors.invalid_argument("box_index has incompatible shape", op)
    crop = _static_ints(crop_size, "crop_size")
    if len(crop) != 2:
        raise errors.invalid_argument("crop_size must be a 1-D tensor of length 2", op)
    if min(crop) <= 0:
        raise errors.invalid_argument("crop dimensions must be positive", op)
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"method must be 'bilinear' or 'nearest', got {method!r}")
    if index_t._value is not None or not getattr(index_t, "_node", None):
        indices = np.asarray(index_t.numpy()).reshape(-1)
        if indices.size and (indices.min() < 0 or indices.max() >= image_t._shape[0]):
            raise errors.OutOfRangeError(None, None, f"box_index has values outside [0, batch_size) [Op:{op}]")
    extents = constant(
        np.array([image_t._shape[1] - 1, image_t._shape[2] - 1, crop[0] - 1, crop[1] - 1], np.float32), dtypes.float32
    )
    return run(
        _CROP_AND_RESIZE,
        (image_t, boxes_t, index_t, extents),
        crop=tuple(crop),
        method=method,
        extrapolation=float(extrapolation_value),
    )


# -- non-max suppression variants (on the host) -------------------------------------------------------
def _nms(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: float,
    score_threshold: float,
    soft_nms_sigma: float,
    op: str,
) -> tuple[list[int], list[float]]:
    """TF's NonMaxSuppressionV5: greedy selection with hard or Gaussian soft suppression.

    Soft-NMS (`soft_nms_sigma > 0`) decays a candidate's score by `exp(-iou**2 / (2 sigma))` for every
    box selected before it and puts it back while it stays above `score_threshold`; as TF's kernel,
    `iou_threshold` then suppresses nothing.
    """
    boxes_t, scores_t = convert_to_tensor(boxes), convert_to_tensor(scores)
    if len(boxes_t._shape) != 2 or boxes_t._shape[1] != 4:
        raise errors.invalid_argument(f"boxes must be 2-D with 4 columns: {boxes_t.shape}", op)
    if len(scores_t._shape) != 1 or scores_t._shape[0] != boxes_t._shape[0]:
        raise errors.invalid_argument("scores has incompatible shape", op)
    limit = static_int(max_output_size, "max_output_size")
    if not 0 <= float(iou_threshold) <= 1:
        raise errors.invalid_argument("iou_threshold must be in [0, 1]", op)
    if float(soft_nms_sigma) < 0:
        raise errors.invalid_argument("soft_nms_sigma must be non-negative", op)
    box = _host_array(boxes_t, "boxes").astype(np.float32)
    score = _host_array(scores_t, "scores").astype(np.float32)
    y1, y2 = np.minimum(box[:, 0], box[:, 2]), np.maximum(box[:, 0], box[:, 2])
    x1, x2 = np.minimum(box[:, 1], box[:, 3]), np.maximum(box[:, 1], box[:, 3])
    area = (y2 - y1) * (x2 - x1)
    scale = np.float32(-0.5 / soft_nms_sigma) if soft_nms_sigma > 0 else np.float32(0)
    threshold, floor = np.float32(iou_threshold), np.float32(score_threshold)

    def iou(i: int, j: int) -> np.float32:
        if area[i] <= 0 or area[j] <= 0:
            return np.float32(0)
        inter = max(np.float32(0), min(y2[i], y2[j]) - max(y1[i], y1[j])) * max(
            np.float32(0), min(x2[i], x2[j]) - max(x1[i], x1[j])
        )
        return np.float32(inter / (area[i] + area[j] - inter))

    heap = [(-score[i], i, 0, score[i]) for i in range(len(score)) if score[i] > floor]
    heapq.heapify(heap)
    selected: list[int] = []
    kept: list[float] = []
    while heap and len(selected) < limit:
        _, index, begin, current = heapq.heappop(heap)
        original, hard = current, False
        for j in range(len(selected) - 1, begin - 1, -1):
            similarity = iou(index, selected[j])
            if soft_nms_sigma == 0:
                if similarity > threshold:
                    hard = True
                    break
                continue
            current = np.float32(current * np.float32(np.exp(scale * similarity * similarity)))
            if current <= floor:
                break
        if hard:
            continue
        if current == original:
            selected.append(index)
            kept.append(float(current))
        elif current > floor:
            heapq.heappush(heap, (-current, index, len(selected), current))
    return selected, kept


@table.export(
    "image.non_max_suppression_with_scores",
    gradient="-",
    dtypes=table.REAL_FLOAT,
    note="computed on the host with numpy (not inside tapeshim.function)",
)
def non_max_suppression_with_scores(
    boxes: TensorLike,
    scores: TensorLike,
    max_output_size: TensorLike,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    soft_nms_sigma: float = 0.0,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Non-max suppression returning `(indices, scores)`; `soft_nms_sigma > 0` decays overlapping scores (Soft-NMS).

    Raises:
      InvalidArgumentError: for bad shapes or thresholds.
    """
    selected, kept = _nms(
        boxes, scores, max_output_size, iou_threshold, score_threshold, float(soft_nms_sigma), "NonMaxSuppressionV5"
    )
    return (
        constant(np.asarray(selected, np.int32), dtypes.int32),
        constant(np.asarray(kept, np.float32), dtypes.float32),
    )


@table.export(
    "image.non_max_suppression_padded",
    gradient="-",
    dtypes=table.REAL_FLOAT,
    note="unbatched boxes only; computed on the host (not inside tapeshim.function)",
)
def non_max_suppression_padded(
    boxes: TensorLike,
    scores: TensorLike,
    max_output_size: TensorLike,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    pad_to_max_output_size: bool = False,
    name: str | None = None,
    sorted_input: bool = False,
    canonicalized_coordinates: bool = False,
    tile_size: int = 512,
) -> tuple[Tensor, Tensor]:
    """Non-max suppression returning `(indices, num_valid)`, the indices zero-padded to `max_output_size` if asked.

    Raises:
      InvalidArgumentError: for bad shapes or thresholds.
      NotImplementedError: for batched (3-D) boxes.
    """
    if len(convert_to_tensor(boxes)._shape) != 2:
        raise NotImplementedError("tapeshim's non_max_suppression_padded takes unbatched [num_boxes, 4] boxes.")
    selected, _ = _nms(boxes, scores, max_output_size, iou_threshold, score_threshold, 0.0, "NonMaxSuppressionV4")
    count = len(selected)
    limit = static_int(max_output_size, "max_output_size")
    padded = selected + [0] * (limit - count) if pad_to_max_output_size else selected
    return constant(np.asarray(padded, np.int32), dtypes.int32), constant(np.int32(count), dtypes.int32)


class CombinedNonMaxSuppression(NamedTuple):
    """`tf.image.combined_non_max_suppression`'s result."""

    nmsed_boxes: Tensor
    nmsed_scores: Tensor
    nmsed_classes: Tensor
    valid_detections: Tensor


@table.export(
    "image.combined_non_max_suppression",
    gradient="-",
    dtypes=table.REAL_FLOAT,
    note="computed on the host with numpy (not inside tapeshim.function); equal scores may be ordered "
    "differently from TF",
)
def combined_non_max_suppression(
    boxes: TensorLike,
    scores: TensorLike,
    max_output_size_per_class: TensorLike,
    max_total_size: TensorLike,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    pad_per_class: bool = False,
    clip_boxes: bool = True,
    name: str | None = None,
) -> CombinedNonMaxSuppression:
    """Per-class greedy NMS over a batch, merged by score into `max_total_size` detections per image.

    Args:
      boxes: `[batch, num_boxes, q, 4]`, `q` 1 (boxes shared by the classes) or `num_classes`.
      scores: `[batch, num_boxes, num_classes]`.
      max_output_size_per_class: the most boxes kept per class.
      max_total_size: the most boxes kept per image.
      iou_threshold: the overlap above which a box is suppressed.
      score_threshold: boxes scoring at or below this are dropped.
      pad_per_class: pad to `min(max_output_size_per_class * num_classes, max_total_size)` instead.
      clip_boxes: clip the kept boxes to [0, 1].
      name: accepted for compatibility.

    Raises:
      InvalidArgumentError: for bad shapes.
    """
    op = "CombinedNonMaxSuppression"
    boxes_t, scores_t = convert_to_tensor(boxes, dtype=dtypes.float32), convert_to_tensor(scores, dtype=dtypes.float32)
    if len(boxes_t._shape) != 4 or boxes_t._shape[-1] != 4:
        raise errors.invalid_argument(f"boxes must be 4-D [batch, num_boxes, q, 4]: {boxes_t.shape}", op)
    if len(scores_t._shape) != 3 or tuple(scores_t._shape[:2]) != tuple(boxes_t._shape[:2]):
        raise errors.invalid_argument(f"scores must be 3-D [batch, num_boxes, num_classes]: {scores_t.shape}", op)
    classes, q = scores_t._shape[2], boxes_t._shape[2]
    if q not in (1, classes):
        raise errors.invalid_argument("third dimension of boxes must be either 1 or num classes", op)
    per_class, total = (
        static_int(max_output_size_per_class, "max_output_size_per_class"),
        static_int(max_total_size, "max_total_size"),
    )
    if per_class <= 0 or total <= 0:
        raise errors.invalid_argument("max_output_size_per_class and max_total_size must be positive", op)
    box_values, score_values = _host_array(boxes_t, "boxes"), _host_array(scores_t, "scores")
    detections = min(per_class * classes, total) if pad_per_class else total
    batch = box_values.shape[0]
    out_boxes = np.zeros((batch, detections, 4), np.float32)
    out_scores = np.zeros((batch, detections), np.float32)
    out_classes = np.zeros((batch, detections), np.float32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found = []
        for c in range(classes):
            class_boxes = box_values[b, :, 0 if q == 1 else c]
            kept, kept_scores = _nms(
                class_boxes, score_values[b, :, c], per_class, iou_threshold, score_threshold, 0.0, op
            )
            found += [(s, c, class_boxes[i]) for i, s in zip(kept, kept_scores)]
        found.sort(key=lambda item: -item[0])
        found = found[:detections]
        valid[b] = len(found)
        for k, (s, c, box) in enumerate(found):
            out_boxes[b, k] = np.clip(box, 0.0, 1.0) if clip_boxes else box
            out_scores[b, k], out_classes[b, k] = s, c
    return CombinedNonMaxSuppression(
        constant(out_boxes, dtypes.float32),
        constant(out_scores, dtypes.float32),
        constant(out_classes, dtypes.float32),
        constant(valid, dtypes.int32),
    )
