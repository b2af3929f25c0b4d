"""`tf.image` extras against real TensorFlow: crop_and_resize, total_variation, YUV/YIQ, NMS variants, and the
stateless random augmentations (TF's random streams cannot be matched: shapes, dtypes, determinism, ranges)."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises

RNG = np.random.default_rng(21)
IMG = RNG.random((2, 6, 7, 3)).astype(np.float32)
BOXES = np.array(
    [[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [0.5, 0.6, 0.2, 0.1], [-0.2, -0.1, 1.3, 0.5], [0.3, 0.3, 0.3, 0.3]],
    np.float32,
)
INDEX = np.array([0, 1, 1, 0, 1], np.int32)
NMS_BOXES = np.array(
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
NMS_SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.9], np.float32)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize(method):
    for crop in ([3, 4], [1, 1], [5, 2]):
        check(lambda tf, c=crop: tf.image.crop_and_resize(IMG, BOXES, INDEX, c, method=method))
    check(
        lambda tf: tf.image.crop_and_resize(
            (IMG * 255).astype(np.uint8), BOXES, INDEX, [4, 4], method=method, extrapolation_value=-1.0
        )
    )

    def grad(tf):
        image, boxes = tf.constant(IMG), tf.constant(BOXES[:2])
        with tf.GradientTape() as tape:
            tape.watch([image, boxes])
            y = tf.reduce_sum(tf.image.crop_and_resize(image, boxes, INDEX[:2], [3, 3], method=method) ** 2)
        return tape.gradient(y, image)

    check(grad)


def test_crop_and_resize_errors():
    for body in (
        lambda tf: tf.image.crop_and_resize(IMG, BOXES[:1], [2], [3, 3]),
        lambda tf: tf.image.crop_and_resize(IMG, BOXES[:1], [0], [0, 3]),
        lambda tf: tf.image.crop_and_resize(IMG[0], BOXES[:1], [0], [3, 3]),
    ):
        check_raises(body)


def test_total_variation_and_color_matrices():
    check(lambda tf: tf.image.total_variation(tf.constant(IMG)))
    check(lambda tf: tf.image.total_variation(tf.constant((IMG[0] * 100).astype(np.int32))))
    check_raises(lambda tf: tf.image.total_variation(tf.constant(IMG[0, 0])))
    for name in ("rgb_to_yuv", "yuv_to_rgb", "rgb_to_yiq", "yiq_to_rgb"):
        check(lambda tf, n=name: getattr(tf.image, n)(IMG))
        check(lambda tf, n=name: getattr(tf.image, n)(IMG[0].astype(np.float64)))

    def grad(tf):
        x = tf.constant(IMG)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.image.total_variation(x)) + tf.reduce_sum(tf.image.rgb_to_yuv(x) ** 2)
        return tape.gradient(y, x)

    check(grad)


def test_nms_variants():
    for sigma in (0.0, 0.5):
        check(lambda tf, s=sigma: tf.image.non_max_suppression_with_scores(NMS_BOXES, NMS_SCORES, 10, soft_nms_sigma=s))
    check(
        lambda tf: tf.image.non_max_suppression_with_scores(
            NMS_BOXES, NMS_SCORES, 4, iou_threshold=0.3, score_threshold=0.4, soft_nms_sigma=1.0
        )
    )
    # TF's padded NMS does not reorder a box's corners (box 6 is [1, 1, 0, 0]): compared without that box
    check(lambda tf: tf.image.non_max_suppression_padded(NMS_BOXES[:6], NMS_SCORES[:6], 6, pad_to_max_output_size=True))
    check(lambda tf: tf.image.non_max_suppression_padded(tf.constant(NMS_BOXES[:6]), tf.constant(NMS_SCORES[:6]), 6))
    check(lambda tf: tf.image.non_max_suppression(NMS_BOXES, NMS_SCORES, 10, iou_threshold=0.05))


def test_stateless_random_augmentations():
    seed = (3, 4)
    for body in (
        lambda tf, s: tf.image.stateless_random_flip_left_right(IMG, s),
        lambda tf, s: tf.image.stateless_random_flip_up_down(IMG[0], s),
        lambda tf, s: tf.image.stateless_random_crop(IMG, [1, 4, 4, 3], s),
        lambda tf, s: tf.image.stateless_random_brightness(IMG, 0.3, s),
        lambda tf, s: tf.image.stateless_random_contrast(IMG, 0.5, 1.5, s),
        lambda tf, s: tf.image.stateless_random_saturation(IMG, 0.5, 1.5, s),
        lambda tf, s: tf.image.stateless_random_hue(IMG, 0.2, s),
    ):
        check(lambda tf, body=body: (body(tf, seed).shape, body(tf, seed).dtype))
        first = body(tapeshim, seed).numpy()
        np.testing.assert_array_equal(body(tapeshim, seed).numpy(), first)  # the seed determines the result
    crops = {tuple(tapeshim.image.stateless_random_crop(np.arange(10), [3], (s, 0)).numpy()) for s in range(40)}
    assert crops == {tuple(range(i, i + 3)) for i in range(8)}
    for body in (
        lambda tf: tf.image.stateless_random_brightness(IMG, 0.2, seed=[1]),
        lambda tf: tf.image.stateless_random_crop(IMG, [3, 7, 7, 3], seed=(1, 2)),
        lambda tf: tf.image.stateless_random_hue(IMG, 0.7, seed=(1, 2)),
    ):
        check_raises(body)


def test_draw_bounding_boxes():
    canvas = RNG.random((2, 9, 11, 3)).astype(np.float32)
    boxes = np.array(
        [
            [[0.1, 0.2, 0.6, 0.9], [-0.2, 0.5, 0.4, 1.3], [0.7, 0.7, 0.2, 0.9], [0.0, 0.0, 1.0, 1.0]],
            [[0.5, -0.5, 1.5, 0.5], [1.2, 0.0, 1.5, 1.0], [0.3, 0.3, 0.31, 0.31], [0.0, 0.9, 0.5, 1.0]],
        ],
        np.float32,
    )
    colors = np.array([[1, 0, 0, 1], [0, 0.5, 1, 1], [0.2, 0.2, 0.2, 0.5]], np.float32)
    check(lambda tf: tf.image.draw_bounding_boxes(canvas, boxes, colors))
    gray = canvas[..., :1].astype(np.float16)
    check(lambda tf: tf.image.draw_bounding_boxes(tf.constant(gray), boxes, np.zeros([0, 4])))
    check(lambda tf: tf.image.draw_bounding_boxes(tf.constant(gray), boxes, colors))
    check(
        lambda tf: tf.image.draw_bounding_boxes(
            np.zeros([1, 4, 60, 4], np.float32),
            np.array([[[0, i * 5 / 59, 1, (i * 5 + 2) / 59] for i in range(12)]], np.float32),
            np.zeros([0, 4], np.float32),
        )
    )
    check_raises(lambda tf: tf.image.draw_bounding_boxes(canvas[0], boxes[0], colors))
    check_raises(lambda tf: tf.image.draw_bounding_boxes(canvas[..., :2], boxes, colors))


def test_combined_non_max_suppression():
    base = NMS_BOXES[:6] / 101.0
    boxes = np.stack([np.stack([base, base[::-1]], axis=1), np.stack([base[::-1], base], axis=1)])  # [2, 6, 2, 4]
    scores = RNG.permutation(24).reshape(2, 6, 2).astype(np.float32) / 24.0
    for kwargs in ({}, {"pad_per_class": True}, {"score_threshold": 0.3, "iou_threshold": 0.1}, {"clip_boxes": False}):
        check(lambda tf, kw=kwargs: tf.image.combined_non_max_suppression(boxes, scores, 2, 5, **kw))
    shared = boxes[:, :, :1] * 1.2 - 0.1
    check(lambda tf: tf.image.combined_non_max_suppression(shared, scores, 3, 4))
    check_raises(lambda tf: tf.image.combined_non_max_suppression(boxes[0], scores, 2, 5))
