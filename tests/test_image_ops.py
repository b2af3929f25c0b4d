"""`tf.image` against real TensorFlow: values, dtypes, shapes, gradients and error classes.

Random ops (random_flip_*, random_crop, random_brightness, ...) cannot match TF's random
stream bit for bit: their tests compare shapes and dtypes with TF and check the
distribution (every outcome occurs, values come from the input).
"""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises

RNG = np.random.default_rng(11)
IMG = RNG.random((2, 7, 9, 3)).astype(np.float32)
IMG3 = IMG[0]
U8 = (RNG.random((2, 6, 5, 3)) * 255).astype(np.uint8)
METHODS = ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"]


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_resize_methods_match_tf(method, antialias):
    for size in ([3, 4], [11, 13], [7, 5]):
        check(lambda tf, size=size: tf.image.resize(IMG, size, method=method, antialias=antialias))
    # uint8 input: TF's antialiased bicubic kernel sums its float32 weights in another order (1e-5 off)
    check(lambda tf: tf.image.resize(U8, [4, 9], method=method, antialias=antialias), rtol=1e-4)
    check(lambda tf: tf.image.resize(IMG3.astype(np.float64), [5, 5], method=method, antialias=antialias))


def test_resize_options_and_gradient():
    check(lambda tf: tf.image.resize(IMG, [4, 4], preserve_aspect_ratio=True))
    check(lambda tf: tf.image.resize(IMG3, tf.constant([20, 6]), preserve_aspect_ratio=True, method="area"))
    check(lambda tf: tf.image.resize(IMG, [5, 6], method=tf.image.ResizeMethod.BICUBIC))

    def grad(tf, method):
        x = tf.constant(IMG)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.image.resize(x, [4, 12], method=method) ** 2)
        return tape.gradient(y, x)

    for method in ("bilinear", "bicubic", "lanczos3", "nearest", "area"):
        check(lambda tf, method=method: grad(tf, method), raises=method == "area")  # (TF has no area gradient)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.image.resize(np.zeros([5, 6], np.float32), [3, 4]),
        lambda tf: tf.image.resize(IMG, [3.0, 4]),
        lambda tf: tf.image.resize(IMG, [3]),
        lambda tf: tf.image.resize(IMG, [3, 4], method="foo"),
        lambda tf: tf.image.resize(IMG, [0, 4]),
        lambda tf: tf.image.resize_with_pad(IMG, 0, 4),
    ],
)
def test_resize_errors(body):
    check_raises(body)


def test_resize_with_pad_and_crop_or_pad():
    for th, tw in ((10, 10), (4, 12), (7, 9), (3, 3)):
        check(lambda tf, th=th, tw=tw: tf.image.resize_with_pad(IMG, th, tw))
        check(lambda tf, th=th, tw=tw: tf.image.resize_with_crop_or_pad(IMG3, th, tw))
    check(lambda tf: tf.image.resize_with_pad(U8[0], 8, 8, method="nearest"))


def test_convert_image_dtype():
    ints = np.array([[[0, 1, 127, 128, 255]]], np.uint8)
    floats = np.array([[[-0.5, 0.0, 0.25, 0.999, 1.0, 1.5]]], np.float32)
    for target in ("float32", "float64", "float16", "uint16", "int32", "int8", "uint8"):
        check(lambda tf, target=target: tf.image.convert_image_dtype(ints, getattr(tf, target)))
    check(lambda tf: tf.image.convert_image_dtype(np.array([0, 1000, 65535], np.uint16), tf.uint8))
    check(lambda tf: tf.image.convert_image_dtype(np.array([-5, 0, 70000], np.int32), tf.int16, saturate=True))
    for target in ("uint8", "int16", "int32"):
        check(lambda tf, target=target: tf.image.convert_image_dtype(floats, getattr(tf, target), saturate=True))
    check(lambda tf: tf.image.convert_image_dtype(floats.clip(0, 1), tf.uint8))
    check(lambda tf: tf.image.convert_image_dtype(floats, tf.float64))
    check_raises(lambda tf: tf.image.convert_image_dtype(np.array([True]), tf.float32))


def test_flips_rotations_transpose():
    for body in (
        lambda tf, x: tf.image.flip_left_right(x),
        lambda tf, x: tf.image.flip_up_down(x),
        lambda tf, x: tf.image.transpose(x),
        lambda tf, x: tf.image.rot90(x),
        lambda tf, x: tf.image.rot90(x, k=2),
        lambda tf, x: tf.image.rot90(x, k=-1),
    ):
        check(lambda tf, body=body: body(tf, IMG))
        check(lambda tf, body=body: body(tf, U8[0]))
    check_raises(lambda tf: tf.image.flip_left_right(np.zeros([4, 5])))
    check_raises(lambda tf: tf.image.flip_up_down(np.zeros([1, 4, 5, 3, 1])))
    check_raises(lambda tf: tf.image.rot90(np.zeros([2, 2])))
    check_raises(lambda tf: tf.image.flip_left_right(np.zeros([0, 3, 3])))

    def grad(tf):
        x = tf.constant(IMG)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(
                tf.image.rot90(tf.image.flip_left_right(x))
                * tf.range(63.0, dtype=tf.float32)[None, :, None, None][:, :9]
            )
        return tape.gradient(y, x)

    check(grad)


def test_crops_and_pads():
    check(lambda tf: tf.image.crop_to_bounding_box(IMG, 1, 2, 4, 5))
    check(lambda tf: tf.image.pad_to_bounding_box(IMG3, 1, 2, 10, 12))
    check(lambda tf: tf.image.central_crop(IMG, 0.5))
    check(lambda tf: tf.image.central_crop(IMG3, 0.33))
    check(lambda tf: tf.image.central_crop(IMG3, 1.0))
    for body in (
        lambda tf: tf.image.crop_to_bounding_box(IMG3, 0, 0, 8, 5),
        lambda tf: tf.image.crop_to_bounding_box(IMG3, -1, 0, 2, 2),
        lambda tf: tf.image.crop_to_bounding_box(IMG3, 0, 0, 0, 2),
        lambda tf: tf.image.pad_to_bounding_box(IMG3, 1, 1, 3, 3),
        lambda tf: tf.image.resize_with_crop_or_pad(IMG3, 0, 3),
        lambda tf: tf.image.central_crop(IMG3, 0.0),
        lambda tf: tf.image.central_crop(np.zeros([3, 3]), 0.5),
    ):
        check_raises(body)


def test_random_flips_and_crop_shapes_and_distribution():
    check(lambda tf: tf.image.random_flip_left_right(IMG).shape)
    check(lambda tf: tf.image.random_flip_up_down(U8).dtype)
    check(lambda tf: tf.image.random_crop(IMG, [2, 3, 4, 3]).shape)
    check_raises(lambda tf: tf.image.random_crop(IMG3, [8, 5, 3]))
    check_raises(lambda tf: tf.image.random_crop(IMG3, [2, 2]))
    tapeshim.random.set_seed(3)
    x = tapeshim.constant(np.arange(4.0, dtype=np.float32).reshape(1, 1, 4, 1))
    outcomes = {tuple(tapeshim.image.random_flip_left_right(x).numpy().ravel()) for _ in range(40)}
    assert outcomes == {(0.0, 1.0, 2.0, 3.0), (3.0, 2.0, 1.0, 0.0)}
    batch = np.tile(np.arange(3.0, dtype=np.float32).reshape(1, 3, 1, 1), (64, 1, 1, 1))
    flipped = tapeshim.image.random_flip_up_down(batch).numpy()[:, 0, 0, 0]
    assert 10 < np.sum(flipped == 2.0) < 54 and set(flipped) == {0.0, 2.0}  # per image, about half
    grid = np.arange(30.0).reshape(5, 6)
    corners = {int(tapeshim.image.random_crop(grid, [2, 3]).numpy()[0, 0]) for _ in range(100)}
    assert corners == {r * 6 + c for r in range(4) for c in range(4)}, corners  # every offset occurs (seeded)
    f = tapeshim.function(lambda v: tapeshim.image.random_crop(v, [2, 3]))
    assert {int(f(tapeshim.constant(grid)).numpy()[0, 0]) for _ in range(40)} != {0}  # a new draw per call


def test_color_conversions():
    check(lambda tf: tf.image.rgb_to_grayscale(IMG))
    check(lambda tf: tf.image.rgb_to_grayscale(U8))
    check(lambda tf: tf.image.grayscale_to_rgb(tf.constant(IMG[..., :1])))
    check(lambda tf: tf.image.rgb_to_hsv(IMG))
    check(lambda tf: tf.image.hsv_to_rgb(IMG))
    check(lambda tf: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(tf.constant(IMG3.astype(np.float64)))))
    special = np.array([[[0, 0, 0], [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0.2]]], np.float32)
    check(lambda tf: tf.image.rgb_to_hsv(special))
    for body in (
        lambda tf: tf.image.grayscale_to_rgb(tf.constant(IMG3)),
        lambda tf: tf.image.rgb_to_grayscale(np.zeros([4, 5, 2], np.float32)),
        lambda tf: tf.image.rgb_to_hsv(np.zeros([4, 5, 2], np.float32)),
        lambda tf: tf.image.rgb_to_hsv(tf.constant(U8)),
    ):
        check_raises(body)


def test_adjustments():
    check(lambda tf: tf.image.adjust_brightness(IMG3.astype(np.float64), 0.2))
    # TF's colour adjustments run through float32 HSV round trips and Eigen reductions in their own order
    check(lambda tf: tf.image.adjust_saturation(IMG3.astype(np.float64), 0.4), rtol=1e-4)
    for image in (IMG, U8):
        check(lambda tf, image=image: tf.image.adjust_brightness(image, 0.2))
        check(lambda tf, image=image: tf.image.adjust_brightness(image, -0.3))
        check(lambda tf, image=image: tf.image.adjust_contrast(image, 1.7), rtol=1e-4)
        check(lambda tf, image=image: tf.image.adjust_saturation(image, 0.4), rtol=1e-4)
        check(lambda tf, image=image: tf.image.adjust_hue(image, 0.3), rtol=1e-4)
        check(lambda tf, image=image: tf.image.adjust_gamma(image, 2.2, 0.9), rtol=1e-4)
        check(lambda tf, image=image: tf.image.per_image_standardization(image), rtol=1e-4)
    check(lambda tf: tf.image.per_image_standardization(np.ones([3, 3, 1], np.float32)))
    for body in (
        lambda tf: tf.image.adjust_gamma(IMG, -1.0),
        lambda tf: tf.image.adjust_hue(IMG, 2.0),
        lambda tf: tf.image.adjust_saturation(np.zeros([2, 2, 2], np.float32), 1.0),
        lambda tf: tf.image.adjust_contrast(np.zeros([3], np.float32), 2.0),
        lambda tf: tf.image.per_image_standardization(np.zeros([2, 2])),
    ):
        check_raises(body)

    def grad(tf):
        x = tf.constant(IMG)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.image.per_image_standardization(tf.image.adjust_gamma(x, 1.5)) * x)
        return tape.gradient(y, x)

    def no_grad(tf, adjust):
        x = tf.constant(IMG)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(adjust(tf, x))
        return tape.gradient(y, x)

    check(grad, rtol=1e-4)
    for adjust in (
        lambda tf, x: tf.image.adjust_contrast(x, 1.5),
        lambda tf, x: tf.image.adjust_hue(x, 0.1),
        lambda tf, x: tf.image.adjust_saturation(x, 0.5),
    ):
        check_raises(lambda tf, adjust=adjust: no_grad(tf, adjust))


def test_random_adjustments_shapes_and_ranges():
    for body in (
        lambda tf: tf.image.random_brightness(IMG, 0.2),
        lambda tf: tf.image.random_contrast(IMG, 0.5, 1.5),
        lambda tf: tf.image.random_saturation(IMG, 0.5, 1.5),
        lambda tf: tf.image.random_hue(U8, 0.2),
    ):
        check(lambda tf, body=body: (body(tf).shape, body(tf).dtype))
    shifted = tapeshim.image.random_brightness(np.zeros([2, 2, 3], np.float32), 0.25).numpy()
    assert np.all(shifted == shifted.flat[0]) and -0.25 <= shifted.flat[0] < 0.25
    for body in (
        lambda tf: tf.image.random_contrast(IMG, 1.5, 0.5),
        lambda tf: tf.image.random_hue(IMG, 0.7),
        lambda tf: tf.image.random_saturation(IMG, -1.0, 0.5),
    ):
        check_raises(body)


def test_extract_patches():
    x = np.arange(2 * 6 * 7 * 2, dtype=np.float32).reshape(2, 6, 7, 2)
    for padding in ("VALID", "SAME"):
        for sizes, strides, rates in (
            ([1, 3, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1]),
            ([1, 2, 3, 1], [1, 2, 3, 1], [1, 1, 1, 1]),
            ([1, 2, 2, 1], [1, 3, 2, 1], [1, 2, 2, 1]),
        ):
            check(lambda tf, a=sizes, b=strides, c=rates, p=padding: tf.image.extract_patches(x, a, b, c, p))
    check(lambda tf: tf.image.extract_patches(x.astype(np.int32), [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"))
    check_raises(lambda tf: tf.image.extract_patches(x[0], [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"))


def test_quality_metrics_and_gradients():
    other = np.clip(IMG + RNG.normal(0, 0.05, IMG.shape).astype(np.float32), 0, 1)
    big = RNG.random((2, 16, 14, 3)).astype(np.float32)
    check(lambda tf: tf.image.psnr(IMG, other, 1.0))
    check(lambda tf: tf.image.psnr(U8, U8 // 2, 255))
    check(lambda tf: tf.image.ssim(big, np.clip(big * 0.9 + 0.05, 0, 1), 1.0))
    check(lambda tf: tf.image.ssim(big[0], big[0] ** 2, 1.0, filter_size=5, filter_sigma=1.0))
    check(lambda tf: tf.image.ssim((big * 255).astype(np.uint8), (big * 200).astype(np.uint8), 255))
    check_raises(lambda tf: tf.image.ssim(IMG, IMG, 1.0))
    check_raises(lambda tf: tf.image.psnr(IMG, IMG[..., :2], 1.0))
    check(lambda tf: tf.image.image_gradients(tf.constant(IMG)))
    check_raises(lambda tf: tf.image.image_gradients(tf.constant(IMG3)))
    check(lambda tf: tf.image.sobel_edges(tf.constant(IMG)))
    check_raises(lambda tf: tf.image.sobel_edges(tf.constant(IMG3)))

    def grad(tf):
        x = tf.constant(big)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.image.ssim(x, big * 0.5, 1.0)) + tf.reduce_sum(tf.image.sobel_edges(x) ** 2)
        return tape.gradient(y, x)

    check(grad)


def test_non_max_suppression():
    boxes = np.array(
        [
            [0, 0, 1, 1],
            [0, 0.1, 1, 1.1],
            [0, -0.1, 1, 0.9],
            [0, 10, 1, 11],
            [0, 10.1, 1, 11.1],
            [0, 100, 1, 101],
            [1, 1, 0, 0],
        ],
        np.float32,
    )
    scores = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.9], np.float32)
    check(lambda tf: tf.image.non_max_suppression(boxes, scores, 3))
    check(lambda tf: tf.image.non_max_suppression(boxes, scores, 10, iou_threshold=0.5))
    check(lambda tf: tf.image.non_max_suppression(boxes, scores, 10, iou_threshold=0.95, score_threshold=0.55))
    check(lambda tf: tf.image.non_max_suppression(boxes, np.ones(7, np.float32), 10))
    check_raises(lambda tf: tf.image.non_max_suppression(boxes[:, :3], scores, 2))
    check_raises(lambda tf: tf.image.non_max_suppression(boxes, scores[:2], 2))


def test_image_ops_inside_function():
    def body(tf):
        @tf.function
        def f(x):
            y = tf.image.resize(x, [5, 5], method="bicubic")
            y = tf.image.adjust_saturation(tf.image.flip_left_right(y), 0.5)
            return tf.image.per_image_standardization(tf.image.central_crop(y, 0.6))

        return f(tf.constant(IMG))

    check(body)
