"""`tf.image`: JPEG shape and crop decoding, and distorted bounding-box sampling (Inception-style crops).

All run on the host. `sample_distorted_bounding_box` follows TF's algorithm (aspect ratio
uniform in its range, height uniform between the area bounds, a uniform offset, the object
coverage test, the whole image when no attempt succeeds); its random numbers are not TF's.
"""

from __future__ import annotations

import io
import math
from typing import Any, NamedTuple

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import random_ops, table
from tapeshim._src.ops.array_ops import _static_ints
from tapeshim._src.ops.image_codecs import _bytes_of, _check_channels, _decode, _pil
from tapeshim._src.ops.image_ops import _host_array
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike


@table.export("image.extract_jpeg_shape", gradient="-", dtypes="string", note="host-side, with Pillow")
def extract_jpeg_shape(contents: TensorLike, output_type: DTypeLike = dtypes.int32, name: str | None = None) -> Tensor:
    """`[height, width, channels]` of a JPEG, read from its header.

    Raises:
      InvalidArgumentError: for data that is not a JPEG.
    """
    data = _bytes_of(contents)
    out = dtypes.as_dtype(output_type)
    if not data.startswith(b"\xff\xd8\xff"):
        raise errors.invalid_argument(f"Invalid JPEG data, size {len(data)}", "ExtractJpegShape")
    image = _pil().open(io.BytesIO(data))
    channels = {"L": 1, "RGB": 3, "CMYK": 4}.get(image.mode, 3)
    return constant(np.array([image.height, image.width, channels], out.as_numpy_dtype), out)


@table.export("image.decode_and_crop_jpeg", gradient="-", dtypes="string", note="host-side, with Pillow")
def decode_and_crop_jpeg(
    contents: TensorLike,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """Decodes the `crop_window` `[y, x, height, width]` of a JPEG (uint8).

    Raises:
      InvalidArgumentError: for bad data or a window outside the image.
    """
    op = "DecodeAndCropJpeg"
    window = _static_ints(crop_window, "crop_window")
    if len(window) != 4:
        raise errors.invalid_argument(f"crop_window must be shape [4], got {len(window)}", op)
    array = _decode(_bytes_of(contents), _check_channels(channels, op), op, ratio=int(ratio))
    y, x, h, w = window
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > array.shape[0] or x + w > array.shape[1]:
        raise errors.invalid_argument("jpeg::Uncompress failed. Invalid JPEG data or crop window.", op)
    return constant(np.ascontiguousarray(array[y : y + h, x : x + w]), dtypes.uint8)


class SampleDistortedBoundingBoxV2(NamedTuple):
    """`begin` and `size` for `tf.slice`, and the crop as a normalized box `[1, 1, 4]` (TF's result name)."""

    begin: Tensor
    size: Tensor
    bboxes: Tensor


class StatelessSampleDistortedBoundingBox(NamedTuple):
    """`begin` and `size` for `tf.slice`, and the crop as a normalized box `[1, 1, 4]` (TF's result name)."""

    begin: Tensor
    size: Tensor
    bboxes: Tensor


def _random_crop(
    rng: np.random.Generator, width: int, height: int, min_area_fraction: float, max_area_fraction: float, aspect: float
) -> tuple | None:
    min_area = min_area_fraction * width * height
    max_area = max_area_fraction * width * height
    crop_h = int(np.rint(math.sqrt(min_area / aspect)))
    max_h = int(np.rint(math.sqrt(max_area / aspect)))
    if int(np.rint(max_h * aspect)) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += int(rng.integers(max_h - crop_h + 1))
    crop_w = int(np.rint(crop_h * aspect))
    area = float(crop_w * crop_h)
    if area < min_area:
        crop_h += 1
        crop_w = int(np.rint(crop_h * aspect))
        area = float(crop_w * crop_h)
    if area > max_area:
        crop_h -= 1
        crop_w = int(np.rint(crop_h * aspect))
        area = float(crop_w * crop_h)
    if area < min_area or area > max_area or crop_w > width or crop_h > height or crop_w <= 0 or crop_h <= 0:
        return None
    y = int(rng.integers(height - crop_h)) if crop_h < height else 0
    x = int(rng.integers(width - crop_w)) if crop_w < width else 0
    return y, x, crop_h, crop_w


def _covers(crop: tuple, boxes: np.ndarray, minimum: float) -> bool:
    y, x, h, w = crop
    for top, left, bottom, right in boxes:
        area = (bottom - top) * (right - left)
        if area <= 0:
            continue
        inter = max(0.0, min(bottom, y + h) - max(top, y)) * max(0.0, min(right, x + w) - max(left, x))
        if inter / area >= minimum:
            return True
    return False


def _sample(
    rng: np.random.Generator,
    image_size: Any,
    bounding_boxes: Any,
    min_object_covered: Any,
    aspect_ratio_range: Any,
    area_range: Any,
    max_attempts: Any,
    use_image: bool,
    result: type = SampleDistortedBoundingBoxV2,
) -> Any:
    op = "SampleDistortedBoundingBoxV2"
    size_t = convert_to_tensor(image_size)
    sizes = _static_ints(size_t, "image_size")
    if len(sizes) != 3:
        raise errors.invalid_argument(f"image_size must contain 3 elements, got {len(sizes)}", op)
    height, width = sizes[0], sizes[1]
    boxes = np.asarray(convert_to_tensor(bounding_boxes, dtype=dtypes.float32).numpy(), np.float64).reshape(-1, 4)
    if boxes.shape[0] == 0:
        if not use_image:
            raise errors.invalid_argument(
                "No bounding boxes provided as input. One must enable "
                "use_image_if_no_bounding_boxes if you wish to not provide any bounding "
                "boxes.",
                op,
            )
        boxes = np.array([[0.0, 0.0, 1.0, 1.0]])
    if np.any(boxes < 0) or np.any(boxes > 1):
        raise errors.invalid_argument("All bounding box coordinates must be in [0.0, 1.0]", op)
    pixel_boxes = boxes * np.array([height, width, height, width])
    low_ratio, high_ratio = (float(v) for v in aspect_ratio_range)
    low_area, high_area = (float(v) for v in area_range)
    covered = float(convert_to_tensor(min_object_covered).numpy())
    crop = None
    for _ in range(int(max_attempts)):
        aspect = rng.random() * (high_ratio - low_ratio) + low_ratio
        candidate = _random_crop(rng, width, height, low_area, high_area, aspect)
        if candidate is not None and _covers(candidate, pixel_boxes, covered):
            crop = candidate
            break
    y, x, h, w = crop if crop is not None else (0, 0, height, width)
    out = size_t.dtype
    begin = constant(np.array([y, x, 0], out.as_numpy_dtype), out)
    size = constant(np.array([h, w, -1], out.as_numpy_dtype), out)
    box = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], np.float32)
    return result(begin, size, constant(box, dtypes.float32))


@table.export(
    "image.sample_distorted_bounding_box",
    gradient="-",
    dtypes="integer",
    note="TF's algorithm on the host; not TF's random stream",
)
def sample_distorted_bounding_box(
    image_size: TensorLike,
    bounding_boxes: TensorLike,
    seed: TensorLike = 0,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = (0.75, 1.33),
    area_range: Any = (0.05, 1.0),
    max_attempts: int = 100,
    use_image_if_no_bounding_boxes: bool = False,
    name: str | None = None,
) -> SampleDistortedBoundingBoxV2:
    """A random crop covering at least `min_object_covered` of one of the boxes: `(begin, size, bboxes)`.

    Raises:
      InvalidArgumentError: for a bad image size, boxes outside [0, 1], or no boxes without
        `use_image_if_no_bounding_boxes`.
    """
    key = np.asarray(random_ops._next_key(None if not seed else seed))
    rng = np.random.default_rng([int(v) for v in key.reshape(-1)])
    return _sample(
        rng,
        image_size,
        bounding_boxes,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
    )


@table.export(
    "image.stateless_sample_distorted_bounding_box",
    gradient="-",
    dtypes="integer",
    note="TF's algorithm on the host; deterministic in `seed`, not TF's random stream",
)
def stateless_sample_distorted_bounding_box(
    image_size: TensorLike,
    bounding_boxes: TensorLike,
    seed: TensorLike,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = (0.75, 1.33),
    area_range: Any = (0.05, 1.0),
    max_attempts: int = 100,
    use_image_if_no_bounding_boxes: bool = False,
    name: str | None = None,
) -> SampleDistortedBoundingBoxV2:
    """`sample_distorted_bounding_box` determined by `seed` (a pair of ints).

    Raises:
      InvalidArgumentError: as `sample_distorted_bounding_box`, or for a seed that is not a pair.
    """
    key = np.asarray(random_ops._pair_key(seed).numpy())
    rng = np.random.default_rng([int(v) for v in key.reshape(-1)])
    return _sample(
        rng,
        image_size,
        bounding_boxes,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
        StatelessSampleDistortedBoundingBox,
    )


_DEFAULT_COLORS = np.array(
    [
        [1, 1, 0, 1],
        [0, 0, 1, 1],
        [1, 0, 0, 1],
        [0, 1, 0, 1],
        [0.5, 0, 0.5, 1],
        [0.5, 0.5, 0, 1],
        [0.5, 0, 0, 1],
        [0, 0, 0.5, 1],
        [0, 1, 1, 1],
        [1, 0, 1, 1],
    ]
)


@table.export(
    "image.draw_bounding_boxes",
    gradient="-",
    dtypes="float32, float16",
    note="drawn on the host with numpy (not inside tapeshim.function)",
)
def draw_bounding_boxes(images: TensorLike, boxes: TensorLike, colors: TensorLike, name: str | None = None) -> Tensor:
    """Draws one-pixel outlines of normalized boxes `[y1, x1, y2, x2]` on a float image batch.

    Box `i` of an image takes color `i % len(colors)` (TF's ten default colors when `colors` is
    empty, white for gray images); rows and columns are `int(coordinate * (size - 1))`, and a side
    outside the image is not drawn.

    Raises:
      InvalidArgumentError: for a rank other than 4, a depth other than 1, 3 or 4, or boxes of a bad shape.
    """
    op = "DrawBoundingBoxesV2"
    images_t, boxes_t = convert_to_tensor(images), convert_to_tensor(boxes, dtype=dtypes.float32)
    if len(images_t._shape) != 4:
        raise errors.invalid_argument("The rank of the images should be 4", op)
    depth = images_t._shape[-1]
    if depth not in (1, 3, 4):
        raise errors.invalid_argument("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)", op)
    if len(boxes_t._shape) != 3 or boxes_t._shape[-1] != 4 or boxes_t._shape[0] != images_t._shape[0]:
        raise errors.invalid_argument(
            f"boxes must be of shape [{images_t._shape[0]}, num_boxes, 4], got {list(boxes_t._shape)}", op
        )
    table_colors = np.asarray(convert_to_tensor(colors, dtype=dtypes.float32).numpy(), np.float32)
    if table_colors.size:  # (TF takes any matrix with at least the image's channels)
        shape = ",".join(map(str, table_colors.shape))
        if table_colors.ndim != 2:
            raise errors.invalid_argument(f"colors must be a 2-D matrix[{shape}]", op)
        if table_colors.shape[1] < depth:
            message = f"colors must have equal or more channels than the image provided: [{shape}]"
            raise errors.invalid_argument(message, op)
    else:  # TF's default colors; gray images get white
        table_colors = (_DEFAULT_COLORS if depth != 1 else np.ones((1, 4))).astype(np.float32)
    canvas = np.array(_host_array(images_t, "images"))
    box_values = _host_array(boxes_t, "boxes")
    height, width = canvas.shape[1], canvas.shape[2]
    for b in range(canvas.shape[0]):
        for index, (y1, x1, y2, x2) in enumerate(box_values[b]):
            color = table_colors[index % table_colors.shape[0]][:depth]
            top, bottom = int(np.float32(y1) * (height - 1)), int(np.float32(y2) * (height - 1))
            left, right = int(np.float32(x1) * (width - 1)), int(np.float32(x2) * (width - 1))
            if top > bottom or left > right or top >= height or bottom < 0 or left >= width or right < 0:
                continue
            top_c, bottom_c = max(top, 0), min(bottom, height - 1)
            left_c, right_c = max(left, 0), min(right, width - 1)
            if top >= 0:
                canvas[b, top, left_c : right_c + 1] = color
            if bottom < height:
                canvas[b, bottom, left_c : right_c + 1] = color
            if left >= 0:
                canvas[b, top_c : bottom_c + 1, left] = color
            if right < width:
                canvas[b, top_c : bottom_c + 1, right] = color
    return constant(canvas, images_t.dtype)
