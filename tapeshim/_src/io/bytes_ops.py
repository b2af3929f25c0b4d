"""`tf.io.encode_base64` / `decode_base64` (web-safe alphabet) and `tf.io.decode_compressed`, on the host."""

from __future__ import annotations

import base64
import binascii
import builtins
import re
import zlib
from typing import Any, Callable

import numpy as np

from tapeshim._src import errors
from tapeshim._src.ops import table
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor
from tapeshim._src.typing_aliases import TensorLike

_WEB_SAFE = re.compile(rb"^[A-Za-z0-9_\-]*={0,2}$")


def _each(value: Any, fn: Callable[[bytes], bytes], argument: str) -> StringTensor:
    """`fn` applied to every string of a string tensor, keeping its shape."""
    try:
        tensor = as_string_tensor(value, argument)
    except TypeError:
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string") from None
    array = np.asarray(tensor.numpy(), dtype=object)
    out = np.empty(array.shape, dtype=object)
    flat_in, flat_out = array.reshape(-1), out.reshape(-1)
    for i, item in enumerate(flat_in):
        flat_out[i] = fn(bytes(item))
    return StringTensor(out)


def encode_base64(input: TensorLike, pad: bool = False, name: str | None = None) -> StringTensor:  # noqa: A002 - TF's name
    """Web-safe base64 (`-` and `_` for `+` and `/`) of each string; `=` padding only when `pad`."""

    def encode(data: bytes) -> bytes:
        text = base64.urlsafe_b64encode(data)
        return text if pad else text.rstrip(b"=")

    return _each(input, encode, "input")


def decode_base64(input: TensorLike, name: str | None = None) -> StringTensor:  # noqa: A002 - TF's name
    """Decodes web-safe base64 strings, padded or not.

    Raises:
      InvalidArgumentError: a character outside the web-safe alphabet, or a length
        that is 1 modulo 4.
    """

    def decode(text: bytes) -> bytes:
        if not _WEB_SAFE.match(text):
            raise errors.invalid_argument("Invalid character found in base64.", "DecodeBase64")
        body = text.rstrip(b"=")
        if len(body) % 4 == 1:
            raise errors.invalid_argument("Base64 string length cannot be 1 modulo 4.", "DecodeBase64")
        try:
            return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        except binascii.Error:
            raise errors.invalid_argument("Invalid character found in base64.", "DecodeBase64") from None

    return _each(input, decode, "input")


def decode_compressed(bytes: TensorLike, compression_type: str = "", name: str | None = None) -> StringTensor:  # noqa: A002
    """Decompresses each string: `"ZLIB"`, `"GZIP"` or `""` (unchanged).

    Raises:
      InvalidArgumentError: another compression type.
      DataLossError: data that is not of that compression.
    """
    kind = compression_type or ""
    if kind not in ("", "ZLIB", "GZIP"):
        raise errors.invalid_argument("Only ZLIB, ZSTD, GZIP or NONE are supported compressions", "DecodeCompressed")

    def inflate(data: builtins.bytes) -> builtins.bytes:  # `bytes` is the argument here (TF's name)
        if not kind:
            return data
        try:
            return zlib.decompress(data, 47 if kind == "GZIP" else 15)
        except zlib.error as exc:
            text = str(exc)
            code = text.split("Error ")[1].split(" ")[0] if "Error " in text else "-3"
            raise errors.DataLossError(
                None, None, f"inflate() failed with error {code}: {text.split(': ', 1)[-1]} [Op:DecodeCompressed]"
            ) from None

    return _each(bytes, inflate, "bytes")


table.export("io.encode_base64", gradient="-", dtypes="string", note="host-side; web-safe alphabet")(encode_base64)
table.export("io.decode_base64", gradient="-", dtypes="string", note="host-side; web-safe alphabet")(decode_base64)
table.export("io.decode_compressed", gradient="-", dtypes="string", note="host-side; ZLIB/GZIP (no ZSTD)")(
    decode_compressed
)
