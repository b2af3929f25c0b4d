"""`tf.io` / `tf.image` image codecs on the host, with Pillow (the optional `images` extra).

Decoding follows TF's channel rules: `channels=0` keeps the file's channels (palette
images expand to RGB or RGBA), 1 converts color to gray (PNG with libpng's integer
weights 0.299/0.587/0.114, truncated, as TF's libpng; JPEG with libjpeg's own luma),
3 drops alpha or repeats gray, 4 adds an opaque alpha. JPEGs decode with libjpeg's
accurate integer DCT (TF's `dct_method="INTEGER_ACCURATE"`); TF's default fast DCT gives
values a few levels away. Results are uint8 tensors
(uint16 when asked for PNG). Encoded images are `tf.string` scalars; their bytes differ
from TF's encoders, their pixels decode the same.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.ops import table
from tapeshim._src.ops.image_ops import convert_image_dtype
from tapeshim._src.state import _thread_state
from tapeshim._src.tensor import Tensor, constant, convert_to_tensor
from tapeshim._src.typing_aliases import DTypeLike, TensorLike

_UNKNOWN = "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."


def _pil() -> Any:
    try:
        from PIL import Image  # optional dependency (the `images` extra): imported when a codec runs
    except ImportError:  # pragma: no cover - the extra is installed in tests
        raise ImportError("tapeshim's image codecs need Pillow: pip install 'tapeshim[images]'") from None
    return Image


def _bytes_of(contents: Any, what: str = "contents") -> bytes:
    if _thread_state.trace is not None:
        raise NotImplementedError(
            f"tapeshim decodes and encodes images on the host: call it outside "
            f"tapeshim.function (for example in a tf.data map). `{what}` was symbolic."
        )
    if isinstance(contents, (bytes, str)):
        return contents.encode() if isinstance(contents, str) else contents
    tensor = convert_to_tensor(contents)
    if tensor.dtype != dtypes.string:
        raise TypeError(f"Expected string passed to parameter '{what}' of op, got {tensor.dtype.name}.")
    value = tensor.numpy()
    if not isinstance(value, bytes):
        raise errors.invalid_argument(f"{what} must be scalar, got shape {tensor.shape}", "DecodeImage")
    return value


def _kind(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(b"GIF8"):
        return "gif"
    if data.startswith(b"BM"):
        return "bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def _check_channels(channels: Any, op_name: str) -> int:
    value = 0 if channels is None else int(channels)
    if value not in (0, 1, 3, 4):
        raise errors.invalid_argument(f"`channels` must be 0, 1, 3 or 4 but got {value}", op_name)
    return value


def _gray_png(rgb: np.ndarray) -> np.ndarray:
    weights = np.array([9797, 19234, 3737], np.int64)  # libpng: 0.299, 0.587 in 1/32768, blue the rest
    return ((rgb[..., :3].astype(np.int64) * weights).sum(-1) >> 15).astype(rgb.dtype)[..., None]


def _frame_array(image: Any, kind: str, channels: int) -> np.ndarray:
    """One decoded frame as [h, w, c] uint8/uint16 with TF's channel conversion."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        array = np.asarray(image, dtype=np.uint16)[..., None]
        sixteen = True
    else:
        sixteen = False
        if mode == "P":
            image = image.convert("RGBA" if "transparency" in image.info else "RGB")
        elif mode not in ("L", "LA", "RGB", "RGBA"):
            image = image.convert("RGB")
        array = np.asarray(image)
        if array.ndim == 2:
            array = array[..., None]
    native = array.shape[-1]
    if channels in (0, native):
        return array
    maximum = 65535 if sixteen else 255
    if channels == 1:
        return _gray_png(array) if native >= 3 else array[..., :1]
    color = array[..., :3] if native >= 3 else np.repeat(array[..., :1], 3, axis=-1)
    if channels == 3:
        return color
    alpha = (
        array[..., 3:4]
        if native in (2, 4) and native != 2
        else (array[..., 1:2] if native == 2 else np.full(array.shape[:-1] + (1,), maximum, array.dtype))
    )
    return np.concatenate([color, alpha], axis=-1)


def _decode(data: bytes, channels: int, op_name: str, animations: bool = False, ratio: int = 1) -> np.ndarray:
    kind = _kind(data)
    if kind is None:
        raise errors.invalid_argument(_UNKNOWN, op_name)
    if kind == "jpeg" and channels == 4:
        raise errors.invalid_argument("JPEG does not support 4 channels", op_name)
    image_module = _pil()
    try:
        image = image_module.open(io.BytesIO(data))
        if kind == "jpeg":
            if channels == 1 or (channels == 0 and image.mode == "L"):
                image.draft("L", (image.width // ratio, image.height // ratio))
            elif ratio > 1:
                image.draft("RGB", (image.width // ratio, image.height // ratio))
        if kind == "gif" and animations:
            frames = []
            for index in range(getattr(image, "n_frames", 1)):
                image.seek(index)
                frames.append(np.asarray(image.convert("RGB")))
            return np.stack(frames)
        if kind == "gif":
            return np.asarray(image.convert("RGB"))
        image.load()
    except (OSError, ValueError, SyntaxError) as exc:
        raise errors.invalid_argument(f"Invalid {kind.upper()} data or size: {exc}", op_name) from None
    return _frame_array(image, kind, channels)


def _as_tensor(array: np.ndarray) -> Tensor:
    return constant(np.ascontiguousarray(array), dtypes.from_numpy(array.dtype))


@table.export(
    "image.decode_png",
    gradient="-",
    dtypes="string",
    note="host-side, with Pillow; 16-bit color PNGs are read at 8 bits",
)
def decode_png(
    contents: TensorLike, channels: int = 0, dtype: DTypeLike = dtypes.uint8, name: str | None = None
) -> Tensor:
    """Decodes a PNG (or any format TF's decoders accept) to `[height, width, channels]`.

    Raises:
      InvalidArgumentError: for bad data, or `channels` not in 0, 1, 3, 4.
    """
    out = dtypes.as_dtype(dtype)
    array = _decode(_bytes_of(contents), _check_channels(channels, "DecodePng"), "DecodePng")
    if array.ndim == 4:
        array = array[0]
    return _as_tensor(_to_bits(array, out))


def _to_bits(array: np.ndarray, out: dtypes.DType) -> np.ndarray:
    if out == dtypes.uint16 and array.dtype == np.uint8:
        return array.astype(np.uint16) * 257
    if out == dtypes.uint8 and array.dtype == np.uint16:
        return (array // 257).astype(np.uint8)
    return array


@table.export(
    "image.decode_jpeg",
    gradient="-",
    dtypes="string",
    note="host-side, with Pillow: TF's INTEGER_ACCURATE DCT; TF's default fast DCT differs by a few levels",
)
def decode_jpeg(
    contents: TensorLike,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """Decodes a JPEG (or any format TF's decoders accept) to uint8 `[height, width, channels]`.

    Raises:
      InvalidArgumentError: for bad data, `channels` not in 0, 1, 3, 4 or `ratio` not in 1, 2, 4, 8.
    """
    if int(ratio) not in (1, 2, 4, 8):
        raise errors.invalid_argument(f"ratio must be 1, 2, 4, or 8, got {ratio}", "DecodeJpeg")
    array = _decode(_bytes_of(contents), _check_channels(channels, "DecodeJpeg"), "DecodeJpeg", ratio=int(ratio))
    if array.ndim == 4:
        array = array[0]
    return _as_tensor(_to_bits(array, dtypes.uint8))


@table.export("image.decode_gif", gradient="-", dtypes="string", note="host-side, with Pillow")
def decode_gif(contents: TensorLike, name: str | None = None) -> Tensor:
    """Decodes every frame of a GIF to uint8 `[frames, height, width, 3]` (other formats: one frame, as TF).

    Raises:
      InvalidArgumentError: for data in no known image format.
    """
    array = _decode(_bytes_of(contents), 3, "DecodeGif", animations=True)
    return _as_tensor(array if array.ndim == 4 else array[None])


@table.export("image.decode_bmp", gradient="-", dtypes="string", note="host-side, with Pillow")
def decode_bmp(contents: TensorLike, channels: int = 0, name: str | None = None) -> Tensor:
    """Decodes a BMP to uint8 `[height, width, channels]`.

    Raises:
      InvalidArgumentError: for bad data or `channels` not in 0, 1, 3, 4.
    """
    array = _decode(_bytes_of(contents), _check_channels(channels, "DecodeBmp"), "DecodeBmp")
    return _as_tensor(array[0] if array.ndim == 4 else array)


@table.export("image.decode_image", gradient="-", dtypes="string", note="host-side, with Pillow")
def decode_image(
    contents: TensorLike,
    channels: Any = None,
    dtype: DTypeLike = dtypes.uint8,
    name: str | None = None,
    expand_animations: bool = True,
) -> Tensor:
    """Decodes a PNG, JPEG, GIF, BMP or WebP image; GIFs give `[frames, h, w, 3]` unless `expand_animations=False`.

    A `dtype` other than uint8/uint16 is reached with `convert_image_dtype`.

    Raises:
      InvalidArgumentError: for bad data or `channels` not in 0, 1, 3, 4.
    """
    out = dtypes.as_dtype(dtype)
    data = _bytes_of(contents)
    wanted = _check_channels(channels, "DecodeImage")
    array = _decode(data, wanted, "DecodeImage", animations=expand_animations)
    if _kind(data) == "gif" and not expand_animations and array.ndim == 4:
        array = array[0]
    if out in (dtypes.uint8, dtypes.uint16):
        return _as_tensor(_to_bits(array, out))
    return convert_image_dtype(_as_tensor(array), out)


def _image_array(image: Any, op_name: str, allowed: tuple) -> np.ndarray:
    tensor = convert_to_tensor(image)
    if _thread_state.trace is not None:
        raise NotImplementedError("tapeshim encodes images on the host: call it outside tapeshim.function.")
    if len(tensor._shape) != 3:
        raise errors.invalid_argument(f"image must be 3-dimensional{list(tensor._shape)}".replace(" ", ""), op_name)
    if tensor.dtype.name not in allowed:
        raise errors.invalid_argument(
            f"Value for attr 'T' of {tensor.dtype.name} is not in the list of allowed values: {', '.join(allowed)}",
            op_name,
        )
    return np.asarray(tensor.numpy())


@table.export(
    "image.encode_png",
    gradient="-",
    dtypes="uint8, uint16",
    note="host-side, with Pillow; the bytes differ from TF's, the pixels do not",
)
def encode_png(image: TensorLike, compression: int = -1, name: str | None = None) -> Tensor:
    """PNG-encodes a uint8/uint16 `[height, width, channels]` image (1-4 channels) to a `tf.string` scalar.

    Raises:
      InvalidArgumentError: for a bad rank, dtype or channel count.
      NotImplementedError: for uint16 images with more than one channel (Pillow cannot write them).
    """
    tensor = convert_to_tensor(image)
    if len(tensor._shape) < 3:
        raise errors.invalid_argument(
            f"images must be at least rank 3{list(tensor._shape)}".replace(" ", ""), "EncodePng"
        )
    array = _image_array(tensor, "EncodePng", ("uint8", "uint16"))
    channels = array.shape[-1]
    if channels not in (1, 2, 3, 4):
        raise errors.invalid_argument(f"image must have 1, 2, 3, or 4 channels, got {channels}", "EncodePng")
    image_module = _pil()
    if array.dtype == np.uint16:
        if channels != 1:
            raise NotImplementedError("tapeshim cannot write 16-bit color PNGs (Pillow writes 16-bit gray only).")
        picture = image_module.fromarray(np.ascontiguousarray(array[..., 0], dtype=np.uint16))
    else:
        picture = image_module.fromarray(np.ascontiguousarray(array[..., 0] if channels == 1 else array))
    buffer = io.BytesIO()
    level = int(compression)
    picture.save(buffer, format="PNG", compress_level=6 if level < 0 else min(level, 9))
    return constant(buffer.getvalue())


@table.export(
    "image.encode_jpeg",
    gradient="-",
    dtypes="uint8",
    note="host-side, with Pillow; the bytes differ from TF's, decoded pixels are close",
)
def encode_jpeg(
    image: TensorLike,
    format: str = "",
    quality: int = 95,
    progressive: bool = False,  # noqa: A002
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: str | None = None,
) -> Tensor:
    """JPEG-encodes a uint8 `[height, width, 1 or 3]` image to a `tf.string` scalar.

    Raises:
      InvalidArgumentError: for a bad rank, dtype or channel count, or a bad `format`.
    """
    array = _image_array(image, "EncodeJpeg", ("uint8",))
    channels = array.shape[-1]
    if format not in ("", "grayscale", "rgb"):
        raise errors.invalid_argument(f"format must be '', grayscale or rgb, got {format}", "EncodeJpeg")
    expected = {"grayscale": 1, "rgb": 3}.get(format)
    if channels not in (1, 3) or (expected is not None and channels != expected):
        raise errors.invalid_argument(
            f"image must have 1 or 3 channels, got {list(array.shape)}".replace(" ", ""), "EncodeJpeg"
        )
    picture = _pil().fromarray(np.ascontiguousarray(array[..., 0] if channels == 1 else array))
    buffer = io.BytesIO()
    picture.save(
        buffer,
        format="JPEG",
        quality=int(quality),
        progressive=bool(progressive),
        optimize=bool(optimize_size),
        subsampling=2 if chroma_downsampling else 0,
        dpi=(int(x_density), int(y_density)),
    )
    return constant(buffer.getvalue())
