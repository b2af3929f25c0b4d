"""Ops in a trace for every size, against `tf.function`: an `input_signature` with `None` dimensions traces the
Python function once in TF, and must in tapeshim too (`function_symbolic`), for `tf.image.resize` (every method,
antialias, sizes from `tf.shape` arithmetic), `resize_with_pad`, `resize_with_crop_or_pad`, the bounding-box
crops and pads, `tf.roll` by a shift only the call knows, `tf.random.uniform` with tensor bounds, mirror pads,
`sobel_edges`, `random_crop`, `psnr`/`ssim`, framing, `tf.repeat` and `//` on sizes; and a DeepDream step (a
small Keras conv model, TF's Keras run in a child process, its weights copied into tapeshim's).

Each body runs the same function with `tensorflow` and with `tapeshim` over three input shapes: the values match
TF's, and both count one Python trace (and `experimental_get_tracing_count() == 1`).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from keras_oracle import assert_same, describe

import tapeshim
from oracle import check, check_raises, real_tf
from tapeshim._src import function_symbolic

SHAPES = ((5, 7), (8, 6), (9, 9))
METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _images(rank: int = 3, shapes: tuple = SHAPES, seed: int = 0) -> list[tuple[np.ndarray]]:
    rng = np.random.default_rng(seed)
    lead = (2,) if rank == 4 else ()
    return [(rng.uniform(-1, 1, lead + (h, w, 3)).astype(np.float32),) for h, w in shapes]


def _spec(*dims: Any) -> Callable[[Any], list]:
    return lambda tf: [tf.TensorSpec(list(dims), tf.float32)]


IMAGE, BATCH = _spec(None, None, 3), _spec(None, None, None, 3)


def traced_once(fn: Callable[..., Any], inputs: list[tuple], specs: Callable[[Any], list]) -> Callable[[Any], Any]:
    """A body: `fn(tf, *args)` inside `tf.function(input_signature=specs(tf))`, called with each of `inputs`;
    it returns the results, the Python traces and the function's tracing count."""

    def body(tf: Any) -> Any:
        traces = []

        def traced(*args: Any) -> Any:
            traces.append(1)
            return fn(tf, *args)

        f = tf.function(traced, input_signature=specs(tf))
        results = [f(*args) for args in inputs]
        return results, len(traces), f.experimental_get_tracing_count()

    return body


def check_once(fn: Callable[..., Any], inputs: list[tuple], specs: Callable[[Any], list], rtol: float | None = None):
    """`check` of `traced_once`: TF's values, and one trace in each (no fallback to a trace per shape)."""
    fallbacks = function_symbolic.stats["symbolic_fallbacks"]
    _, traces, count = check(traced_once(fn, inputs, specs), rtol=rtol)
    assert (traces, count) == (1, 1)
    assert function_symbolic.stats["symbolic_fallbacks"] == fallbacks


# -- tf.image.resize --------------------------------------------------------------------------------
@pytest.mark.parametrize("antialias", [False, True], ids=["plain", "antialias"])
@pytest.mark.parametrize("method", METHODS)
def test_resize_every_method_traces_once(method, antialias):
    for size in ([6, 5], [3, 11]):
        check_once(
            lambda tf, x, size=size: tf.image.resize(x, size, method=method, antialias=antialias), _images(), IMAGE
        )


_SIZES = {
    "doubled": lambda tf, x: tf.shape(x)[:2] * 2,
    "halved_plus_one": lambda tf, x: tf.shape(x)[:2] // 2 + 1,
    "rows_plus_three": lambda tf, x: [tf.shape(x)[0] + 3, 4],
    "swapped": lambda tf, x: tf.stack([tf.shape(x)[1], tf.shape(x)[0] - 1]),
}


@pytest.mark.parametrize("method", ["bilinear", "nearest", "bicubic", "area", "lanczos3"])
@pytest.mark.parametrize("size", sorted(_SIZES))
def test_resize_to_a_size_from_tf_shape(size, method):
    check_once(lambda tf, x: tf.image.resize(x, _SIZES[size](tf, x), method=method), _images(), IMAGE)


def test_resize_batch_and_gradient():
    def fn(tf, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.image.resize(x, tf.shape(x)[1:3] * 2, method="bicubic")
            z = tf.image.resize(y, [4, 5], antialias=True)
            loss = tf.reduce_sum(z * z) + tf.reduce_sum(tf.image.resize(x, [7, 3], method="nearest"))
        return y, z, tape.gradient(loss, x)

    check_once(fn, _images(4), BATCH)


def test_resize_samples_where_tf_rounds_the_position():
    """A half-pixel position `(1 + 0.5) * (2 / 6) - 0.5` is 0 in float32 (TF's kernel rounds the product first);
    a fused multiply-add gives 1.5e-8, which weights a row of 1e8 by 1.49."""
    rows = [(np.array([[[0.0]], [[1e8]]], np.float32),), (np.array([[[0.0]], [[1e8]], [[-1e8]]], np.float32),)]
    for method in ("bilinear", "bicubic"):
        check_once(
            lambda tf, x, m=method: tf.image.resize(x, tf.shape(x)[:2] * [3, 1], method=m), rows, _spec(None, 1, 1)
        )
        check(lambda tf, m=method: tf.image.resize(rows[0][0], [6, 1], method=m))


def test_resize_to_an_empty_size_raises_when_it_runs():
    """`n // 2` is 0 for a one-row image: TF's "output dimensions must be positive" when the function runs."""

    def body(tf):
        f = tf.function(lambda x: tf.image.resize(x, tf.shape(x)[:2] // 2), input_signature=IMAGE(tf))
        f(np.ones([4, 4, 3], np.float32))
        return f(np.ones([1, 4, 3], np.float32))

    check_raises(body)


def test_resize_with_a_size_in_floats_traces_per_shape():
    """A size computed in floats from `tf.shape` (DeepDream's octaves) is a value no symbolic dimension
    expresses: tapeshim traces per shape (TF once), with TF's values."""
    fn = lambda tf, x: tf.image.resize(x, tf.cast(tf.cast(tf.shape(x)[:-1], tf.float32) * 1.3, tf.int32))  # noqa: E731
    traces = {}

    def body(tf):
        results, traces[tf.__name__], _ = traced_once(fn, _images(), IMAGE)(tf)
        return results

    check(body)
    assert traces == {"tensorflow": 1, "tapeshim": len(SHAPES) + 1}  # (the symbolic attempt, then one per shape)


@pytest.mark.parametrize(
    "method, antialias", [("bilinear", False), ("nearest", False), ("area", False), ("bicubic", True)]
)
def test_resize_with_pad_traces_once(method, antialias):
    for target in ((8, 8), (4, 11)):
        check_once(
            lambda tf, x, t=target: tf.image.resize_with_pad(x, *t, method=method, antialias=antialias),
            _images(),
            IMAGE,
        )
    check_once(lambda tf, x: tf.image.resize_with_pad(x, 9, 9, method=method), _images(4), BATCH)


# -- crops and pads ---------------------------------------------------------------------------------
_WINDOWS = {
    "crop_or_pad": lambda tf, x: tf.image.resize_with_crop_or_pad(x, 6, 7),
    "crop_or_pad_odd": lambda tf, x: tf.image.resize_with_crop_or_pad(x, 9, 4),
    "crop_to_bounding_box": lambda tf, x: tf.image.crop_to_bounding_box(x, 1, 1, 3, 4),
    "crop_to_shape": lambda tf, x: tf.image.crop_to_bounding_box(x, 1, 2, tf.shape(x)[-3] - 2, 3),
    "pad_to_bounding_box": lambda tf, x: tf.image.pad_to_bounding_box(x, 1, 2, 12, 11),
    "pad_to_shape": lambda tf, x: tf.image.pad_to_bounding_box(x, 2, 1, tf.shape(x)[-3] + 3, 12),
    "pad_reflect": lambda tf, x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]], "REFLECT"),
    "pad_symmetric": lambda tf, x: tf.pad(x, [[0, 0], [2, 1], [1, 2], [0, 0]], "SYMMETRIC"),
    "sobel_edges": lambda tf, x: tf.image.sobel_edges(x),
    "random_crop_shape": lambda tf, x: tf.shape(tf.image.random_crop(x, [2, 3, 3, 3])),
}


@pytest.mark.parametrize("name", sorted(_WINDOWS))
def test_crops_and_pads_trace_once(name):
    def fn(tf, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = _WINDOWS[name](tf, x)
            loss = tf.reduce_sum(tf.cast(y, tf.float32) * tf.cast(y, tf.float32))
        return y, (tape.gradient(loss, x) if y.dtype == tf.float32 else None)

    check_once(fn, _images(4), BATCH)
    if "shape" not in name and name != "sobel_edges":
        check_once(lambda tf, x: _WINDOWS[name](tf, x[None])[0], _images(3), IMAGE)


def test_crop_outside_the_image_raises_when_it_runs():
    def body(tf):
        f = tf.function(lambda x: tf.image.crop_to_bounding_box(x, 1, 1, 5, 2), input_signature=IMAGE(tf))
        f(np.ones([7, 4, 3], np.float32))
        return f(np.ones([5, 4, 3], np.float32))

    check_raises(body)


def test_draw_bounding_boxes_takes_colors_with_the_images_channels():
    """(Found by the scan: colors of 3 channels were read as rows of 4.)"""
    images = np.zeros([2, 5, 6, 3], np.float32)
    boxes = [[[0.1, 0.2, 0.6, 0.9]], [[0.0, 0.0, 1.0, 0.5]]]
    check(lambda tf: tf.image.draw_bounding_boxes(images, boxes, [[0.3, 0.5, 0.1], [1.0, 0.0, 0.0]]))
    check_raises(lambda tf: tf.image.draw_bounding_boxes(images, boxes, [[0.3, 0.5]]))
    check_raises(lambda tf: tf.image.draw_bounding_boxes(images, boxes, [0.3, 0.5, 0.1, 1.0]))


# -- tf.roll and random shifts (DeepDream's random_roll) ------------------------------------------------
def test_roll_by_a_shift_only_the_call_knows():
    def fn(tf, x, shift):
        with tf.GradientTape() as tape:
            tape.watch(x)
            rolled = tf.roll(x, shift=shift, axis=[0, 1])
            loss = tf.reduce_sum(rolled * tf.cast(tf.range(tf.shape(x)[1]), tf.float32)[:, None])
        back = tf.roll(rolled, shift=-shift, axis=[0, 1])
        halves = tf.roll(x, shift=tf.shape(x)[:2] // 2, axis=[0, 1])
        return rolled, back, halves, tape.gradient(loss, x)

    shifts = [np.array([2, -3], np.int32), np.array([-9, 4], np.int32), np.array([0, 11], np.int32)]
    inputs = [(x, s) for (x,), s in zip(_images(), shifts)]
    check_once(fn, inputs, lambda tf: [tf.TensorSpec([None, None, 3]), tf.TensorSpec([2], tf.int32)])


def test_random_shift_with_tensor_bounds():
    """DeepDream's `tf.random.uniform([2], -maxroll, maxroll, tf.int32)` with `maxroll` an argument: the draws
    differ from TF's, but they lie in the bounds and rolling back restores the image."""

    def fn(tf, x, maxroll):
        shift = tf.random.uniform(shape=[2], minval=-maxroll, maxval=maxroll, dtype=tf.int32)
        rolled = tf.roll(x, shift=shift, axis=[0, 1])
        inside = tf.reduce_all((shift >= -maxroll) & (shift < maxroll))
        return tf.roll(rolled, shift=-shift, axis=[0, 1]), inside, tf.shape(shift)

    inputs = [(x, np.int32(m)) for (x,), m in zip(_images(), (3, 1, 512))]
    check_once(fn, inputs, lambda tf: [tf.TensorSpec([None, None, 3]), tf.TensorSpec([], tf.int32)])

    def body(tf):  # bounds that are not ordered: TF's check, when the function runs
        f = tf.function(
            lambda n: tf.random.uniform([2], n, 2, dtype=tf.int32), input_signature=[tf.TensorSpec([], tf.int32)]
        )
        f(np.int32(0))
        return f(np.int32(5))

    check_raises(body)


# -- image quality, signals, repeats and sizes by `//` ----------------------------------------------------
_MORE = {
    "psnr": (lambda tf, x: tf.image.psnr(tf.abs(x), tf.abs(x) * 0.9, 1.0), IMAGE, 3),
    "ssim": (lambda tf, x: tf.image.ssim(tf.abs(x) + 1.0, tf.abs(x) * 0.9 + 1.0, 2.0, filter_size=3), BATCH, 4),
    "frame": (lambda tf, x: tf.signal.frame(x, 4, 2), _spec(None, None), 2),
    "frame_pad_end": (lambda tf, x: tf.signal.frame(x, 4, 3, pad_end=True, pad_value=-1.0), _spec(None, None), 2),
    "stft": (lambda tf, x: tf.abs(tf.signal.stft(tf.reshape(x, [-1]), 8, 4, fft_length=8)), _spec(None, None), 2),
    "overlap_and_add": (lambda tf, x: tf.signal.overlap_and_add(x, 2), _spec(None, None), 2),
    "repeat": (lambda tf, x: tf.repeat(x, 3, axis=0), _spec(None, None), 2),
    "range_of_half": (lambda tf, x: tf.range(tf.shape(x)[0] // 2) * 2, _spec(None, None), 2),
    "zeros_by_mod": (lambda tf, x: tf.zeros([tf.shape(x)[0] % 3 + 1, tf.shape(x)[1] // 4 + 1]), _spec(None, None), 2),
    "reshape_by_half": (
        lambda tf, x: tf.reshape(x[: tf.shape(x)[0] // 2 * 2], [tf.shape(x)[0] // 2, -1]),
        _spec(None, None),
        2,
    ),
}


@pytest.mark.parametrize("name", sorted(_MORE))
def test_more_ops_trace_once(name):
    fn, specs, rank = _MORE[name]
    inputs = [(x[..., 0],) for (x,) in _images()] if rank == 2 else _images(rank)
    check_once(fn, inputs, specs)


# -- a DeepDream step with a Keras model ------------------------------------------------------------------
def deepdream_step(tf: Any, weights: list | None = None) -> dict:
    """DeepDream's step on a small conv model (TF's tutorial with InceptionV3): the image rolled by a shift,
    upsampled, the model's mean activation differentiated with respect to it, the gradient rolled back and
    normalized, the image stepped and clipped, traced once for three image sizes. The shift is an argument (TF's
    tutorial draws it with `tf.random.uniform`, whose numbers differ). With `weights`, the model takes them."""
    inputs = tf.keras.Input([None, None, 3])
    hidden = tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    hidden = tf.keras.layers.MaxPool2D()(hidden)
    outputs = tf.keras.layers.Conv2D(3, 3, padding="same", activation="relu")(hidden)
    model = tf.keras.Model(inputs, outputs)
    if weights is not None:
        model.set_weights(weights)
    traces = []

    @tf.function(
        input_signature=(
            tf.TensorSpec([None, None, 3], tf.float32),
            tf.TensorSpec([2], tf.int32),
            tf.TensorSpec([], tf.float32),
        )
    )
    def step(img, shift, step_size):
        traces.append(1)
        rolled = tf.roll(img, shift=shift, axis=[0, 1])
        with tf.GradientTape() as tape:
            tape.watch(rolled)
            upsampled = tf.image.resize(rolled, tf.shape(rolled)[:2] * 2)
            loss = tf.math.reduce_mean(model(upsampled[None]))
        gradients = tape.gradient(loss, rolled)
        gradients = tf.roll(gradients, shift=-shift, axis=[0, 1])
        gradients /= tf.math.reduce_std(gradients) + 1e-8
        return loss, tf.clip_by_value(img + gradients * step_size, -1, 1)

    rng = np.random.default_rng(3)
    results = []
    for h, w in SHAPES:
        img = rng.uniform(-1, 1, (h, w, 3)).astype(np.float32)
        shift = rng.integers(-4, 4, 2).astype(np.int32)
        results.append(step(img, shift, np.float32(0.01)))
    return {
        "results": results,
        "traces": len(traces),
        "tracing_count": step.experimental_get_tracing_count(),
        "weights": [np.asarray(w) for w in model.get_weights()],
    }


@pytest.fixture(scope="module")
def tf_deepdream(tmp_path_factory):
    """`deepdream_step` run with TF's Keras (TensorFlow backend) in a child process: Keras takes one backend per
    process, and this one is tapeshim's JAX."""
    out = tmp_path_factory.mktemp("deepdream") / "tf.pkl"
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), str(out)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"TF's run failed:\n{done.stderr[-4000:]}"
    with open(out, "rb") as stream:
        return pickle.load(stream)


def test_deepdream_step_traces_once(tf_deepdream):
    expected = tf_deepdream
    actual = deepdream_step(tapeshim, weights=expected["weights"])
    assert expected["traces"] == actual["traces"] == 1
    assert expected["tracing_count"] == actual["tracing_count"] == 1
    assert_same(expected["results"], describe(actual["results"]), rtol=1e-4, atol=1e-5)


def _main(out_path: str) -> None:
    outcome = deepdream_step(real_tf)
    outcome["results"] = describe(outcome["results"])
    with open(out_path, "wb") as stream:
        pickle.dump(outcome, stream)


if __name__ == "__main__":
    _main(sys.argv[1])
