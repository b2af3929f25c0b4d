"""Image codecs (`tf.image.decode_*` / `encode_*`, Pillow) against real TensorFlow.

Encoded bytes are not compared (each library has its own encoder): files TF writes decode
here to TF's pixels, and files tapeshim writes decode in TF to the same pixels (PNG exactly,
JPEG within a few levels: libjpeg builds round the inverse DCT differently).
"""

import io

import numpy as np
import pytest
from PIL import Image as PIL

import tapeshim
from oracle import check, check_raises, real_tf

RNG = np.random.default_rng(3)
RGB = RNG.integers(0, 256, (6, 7, 3)).astype(np.uint8)
RGBA = RNG.integers(0, 256, (5, 4, 4)).astype(np.uint8)
GRAY = RNG.integers(0, 256, (5, 6, 1)).astype(np.uint8)
SMOOTH = (np.add.outer(np.arange(16), np.arange(16))[..., None] * np.array([4, 6, 8])).astype(np.uint8)
PNGS = {
    name: real_tf.io.encode_png(image).numpy()
    for name, image in (("rgb", RGB), ("rgba", RGBA), ("gray", GRAY), ("gray_alpha", RGBA[..., :2]))
}
JPEG = real_tf.io.encode_jpeg(SMOOTH, quality=95).numpy()


def _gif() -> bytes:
    frames = [PIL.fromarray(np.full((4, 5, 3), v, np.uint8)) for v in (10, 200)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:])
    return buffer.getvalue()


def _bmp() -> bytes:
    buffer = io.BytesIO()
    PIL.fromarray(RGB).save(buffer, format="BMP")
    return buffer.getvalue()


@pytest.mark.parametrize("channels", [0, 1, 3, 4])
@pytest.mark.parametrize("name", sorted(PNGS))
def test_decode_png_of_tf_files(name, channels):
    data = PNGS[name]
    check(lambda tf: tf.image.decode_png(data, channels=channels))
    check(lambda tf: tf.image.decode_image(tf.constant(data), channels=channels))
    check(lambda tf: tf.image.decode_png(data, channels=channels, dtype=tf.uint16))


def test_decode_image_dtypes_formats_and_errors():
    data = PNGS["rgb"]
    check(lambda tf: tf.image.decode_image(data, dtype=tf.float32))
    check(lambda tf: tf.image.decode_image(data, dtype=tf.uint16))
    check(lambda tf: tf.image.decode_jpeg(data))  # TF's decoders read any format
    gif, bmp = _gif(), _bmp()
    check(lambda tf: tf.image.decode_gif(gif))
    check(lambda tf: tf.image.decode_image(gif))
    check(lambda tf: tf.image.decode_image(gif, expand_animations=False))
    check(lambda tf: tf.image.decode_bmp(bmp))
    check(lambda tf: tf.image.decode_gif(data))
    check(lambda tf: tf.image.decode_image(bmp))
    for body in (
        lambda tf: tf.image.decode_png(b"garbage"),
        lambda tf: tf.image.decode_jpeg(b"garbage"),
        lambda tf: tf.image.decode_image(b"garbage"),
        lambda tf: tf.image.decode_png(data, channels=2),
        lambda tf: tf.image.decode_image(data, channels=5),
        lambda tf: tf.image.decode_gif(b"GIF8 broken"),
        lambda tf: tf.image.decode_jpeg(JPEG, ratio=3),
        lambda tf: tf.image.decode_jpeg(JPEG, channels=4),
    ):
        check_raises(body)


@pytest.mark.parametrize("channels", [0, 1, 3])
def test_decode_jpeg_matches_tf(channels):
    """Exact against TF's accurate integer DCT; TF's default (fast) DCT is a few levels away."""
    check(lambda tf: tf.image.decode_jpeg(JPEG, channels=channels, dct_method="INTEGER_ACCURATE"))
    expected = real_tf.image.decode_jpeg(JPEG, channels=channels).numpy()
    actual = tapeshim.image.decode_jpeg(JPEG, channels=channels).numpy()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    difference = np.abs(actual.astype(int) - expected.astype(int))
    assert difference.max() <= 8 and difference.mean() < 2


def test_decode_jpeg_ratio_shape():
    expected = real_tf.image.decode_jpeg(JPEG, ratio=2).numpy()
    actual = tapeshim.image.decode_jpeg(JPEG, ratio=2).numpy()
    assert actual.shape == expected.shape == (8, 8, 3)


@pytest.mark.parametrize("image", [RGB, RGBA, GRAY, RGBA[..., :2]], ids=["rgb", "rgba", "gray", "gray_alpha"])
def test_encode_png_decodes_in_tf(image):
    data = tapeshim.image.encode_png(image)
    assert data.dtype == tapeshim.string and data.shape == ()
    np.testing.assert_array_equal(real_tf.io.decode_png(data.numpy()).numpy(), image)
    sixteen = GRAY.astype(np.uint16) * 250
    data16 = tapeshim.image.encode_png(sixteen, compression=9).numpy()
    np.testing.assert_array_equal(real_tf.io.decode_png(data16, dtype=real_tf.uint16).numpy(), sixteen)
    np.testing.assert_array_equal(tapeshim.image.decode_png(data16, dtype=tapeshim.uint16).numpy(), sixteen)


def test_encode_jpeg_decodes_in_tf():
    for image, fmt in ((SMOOTH, ""), (SMOOTH[..., :1], "grayscale")):
        data = tapeshim.image.encode_jpeg(image, format=fmt, quality=95).numpy()
        decoded = real_tf.io.decode_jpeg(data).numpy()
        assert decoded.shape == image.shape
        assert np.abs(decoded.astype(int) - image.astype(int)).mean() < 2.0
    check(lambda tf: tf.image.encode_jpeg(RGB).dtype)
    for body in (
        lambda tf: tf.image.encode_png(RGB[0]),
        lambda tf: tf.image.encode_jpeg(RGBA),
        lambda tf: tf.image.encode_jpeg(RGB, format="grayscale"),
        lambda tf: tf.image.encode_png(RGB.astype(np.int32)),
    ):
        check_raises(body)


def test_codecs_in_a_data_pipeline():
    files = [PNGS["rgb"], PNGS["rgba"]]

    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices(files).map(
            lambda data: tf.image.resize(tf.image.decode_png(data, channels=3), [4, 4])
        )
        return list(ds.as_numpy_iterator())

    check(body)


def test_jpeg_shape_and_crop():
    check(lambda tf: tf.image.extract_jpeg_shape(JPEG))
    check(lambda tf: tf.image.extract_jpeg_shape(tf.constant(JPEG), output_type=tf.int64))
    for window, channels in (([2, 3, 5, 7], 0), ([0, 0, 16, 1], 1)):  # TF decodes only the window: edges round
        expected = real_tf.image.decode_and_crop_jpeg(
            JPEG, window, channels=channels, dct_method="INTEGER_ACCURATE"
        ).numpy()
        actual = tapeshim.image.decode_and_crop_jpeg(JPEG, tapeshim.constant(window), channels=channels).numpy()
        assert actual.shape == expected.shape and actual.dtype == expected.dtype
        assert np.abs(actual.astype(int) - expected.astype(int)).max() <= 3
    for body in (
        lambda tf: tf.image.extract_jpeg_shape(PNGS["rgb"]),
        lambda tf: tf.image.decode_and_crop_jpeg(JPEG, [14, 3, 5, 7]),
    ):
        check_raises(body)


def test_sample_distorted_bounding_box():
    boxes = np.array([[[0.1, 0.1, 0.5, 0.5], [0.6, 0.2, 0.9, 0.4]]], np.float32)
    check(
        lambda tf: [
            (t.shape, t.dtype)
            for t in tf.image.sample_distorted_bounding_box(tf.constant([40, 60, 3]), boxes, min_object_covered=0.3)
        ]
    )
    check(
        lambda tf: [
            (t.shape, t.dtype)
            for t in tf.image.stateless_sample_distorted_bounding_box(
                tf.constant([40, 60, 3], tf.int64), boxes, seed=(1, 2)
            )
        ]
    )
    tapeshim.random.set_seed(5)
    pixel = boxes[0] * np.array([40, 60, 40, 60])
    for _ in range(30):
        begin, size, bbox = tapeshim.image.sample_distorted_bounding_box(
            [40, 60, 3], boxes, min_object_covered=0.4, aspect_ratio_range=(0.5, 2.0), area_range=(0.1, 0.8)
        )
        (y, x, _), (h, w, c) = begin.numpy(), size.numpy()
        assert c == -1 and 0 <= y and y + h <= 40 and 0 <= x and x + w <= 60
        whole = (h, w) == (40, 60)
        assert whole or 0.1 * 2400 <= h * w <= 0.8 * 2400
        coverage = [
            max(0, min(b[2], y + h) - max(b[0], y))
            * max(0, min(b[3], x + w) - max(b[1], x))
            / ((b[2] - b[0]) * (b[3] - b[1]))
            for b in pixel
        ]
        assert whole or max(coverage) >= 0.4 - 1e-6
        np.testing.assert_allclose(bbox.numpy()[0, 0], [y / 40, x / 60, (y + h) / 40, (x + w) / 60], rtol=1e-6)
    first = [t.numpy() for t in tapeshim.image.stateless_sample_distorted_bounding_box([40, 60, 3], boxes, (7, 8))]
    again = [t.numpy() for t in tapeshim.image.stateless_sample_distorted_bounding_box([40, 60, 3], boxes, (7, 8))]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    for body in (
        lambda tf: tf.image.sample_distorted_bounding_box([20, 30, 3], np.zeros([1, 0, 4], np.float32)),
        lambda tf: tf.image.stateless_sample_distorted_bounding_box([20, 30, 3], boxes, seed=[1]),
    ):
        check_raises(body)
    check(
        lambda tf: tf.image.stateless_sample_distorted_bounding_box(
            [20, 30, 3],
            np.zeros([1, 0, 4], np.float32),
            seed=(1, 2),
            use_image_if_no_bounding_boxes=True,
            area_range=(1.0, 1.0),
            aspect_ratio_range=(1.5, 1.5),
        )
    )
