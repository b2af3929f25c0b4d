"""`tf.image`: re-exports from the op table (`tapeshim/_src/ops/table.py`)."""

from tapeshim._src.ops.image_boxes import (
    decode_and_crop_jpeg,
    draw_bounding_boxes,
    extract_jpeg_shape,
    sample_distorted_bounding_box,
    stateless_sample_distorted_bounding_box,
)
from tapeshim._src.ops.image_codecs import (
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
)
from tapeshim._src.ops.image_color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    grayscale_to_rgb,
    hsv_to_rgb,
    per_image_standardization,
    psnr,
    random_brightness,
    random_contrast,
    random_hue,
    random_saturation,
    rgb_to_grayscale,
    rgb_to_hsv,
    ssim,
)
from tapeshim._src.ops.image_extra import (
    combined_non_max_suppression,
    crop_and_resize,
    non_max_suppression_padded,
    non_max_suppression_with_scores,
    rgb_to_yiq,
    rgb_to_yuv,
    stateless_random_brightness,
    stateless_random_contrast,
    stateless_random_crop,
    stateless_random_flip_left_right,
    stateless_random_flip_up_down,
    stateless_random_hue,
    stateless_random_saturation,
    total_variation,
    yiq_to_rgb,
    yuv_to_rgb,
)
from tapeshim._src.ops.image_ops import (
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    extract_patches,
    flip_left_right,
    flip_up_down,
    image_gradients,
    non_max_suppression,
    pad_to_bounding_box,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    resize_with_crop_or_pad,
    rot90,
    sobel_edges,
    transpose,
)
from tapeshim._src.ops.image_resize import ResizeMethod, resize, resize_with_pad

NON_OP_EXPORTS = frozenset(["ResizeMethod"])

__all__ = [
    "ResizeMethod", "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue", "adjust_saturation",
    "central_crop", "combined_non_max_suppression", "convert_image_dtype", "crop_and_resize", "crop_to_bounding_box",
    "decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png",
    "draw_bounding_boxes", "encode_jpeg", "encode_png", "extract_jpeg_shape", "extract_patches", "flip_left_right",
    "flip_up_down", "grayscale_to_rgb", "hsv_to_rgb", "image_gradients", "non_max_suppression",
    "non_max_suppression_padded", "non_max_suppression_with_scores", "pad_to_bounding_box", "per_image_standardization",
    "psnr", "random_brightness", "random_contrast", "random_crop", "random_flip_left_right", "random_flip_up_down",
    "random_hue", "random_saturation", "resize", "resize_with_crop_or_pad", "resize_with_pad", "rgb_to_grayscale",
    "rgb_to_hsv", "rgb_to_yiq", "rgb_to_yuv", "rot90", "sample_distorted_bounding_box", "sobel_edges", "ssim",
    "stateless_random_brightness", "stateless_random_contrast", "stateless_random_crop",
    "stateless_random_flip_left_right", "stateless_random_flip_up_down", "stateless_random_hue",
    "stateless_random_saturation", "stateless_sample_distorted_bounding_box", "total_variation", "transpose",
    "yiq_to_rgb", "yuv_to_rgb",
]
