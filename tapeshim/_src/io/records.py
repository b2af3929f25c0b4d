"""TFRecord files: writing (`tf.io.TFRecordWriter`, `tf.io.TFRecordOptions`) and reading, with TF's framing.

A record is `uint64 length, uint32 masked_crc32c(length), data, uint32
masked_crc32c(data)`, little-endian. GZIP and ZLIB files are the same stream
compressed with zlib, using TF's default settings (level 6, window 15, memory
level 9), so this module's output matches TF's byte for byte where the zlib
versions agree.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any, Iterator

from tapeshim._src import errors
from tapeshim._src.io import gfile
from tapeshim._src.io.crc32c import masked_crc32c
from tapeshim._src.typing_aliases import PathLike, TensorLike

_COMPRESSIONS = {"": "", "NONE": "", "ZLIB": "ZLIB", "GZIP": "GZIP"}


class TFRecordCompressionType:
    """The compression of a TFRecord file (`tf.compat.v1.io.TFRecordCompressionType`)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_NAMES = {
    TFRecordCompressionType.NONE: "",
    TFRecordCompressionType.ZLIB: "ZLIB",
    TFRecordCompressionType.GZIP: "GZIP",
}


class TFRecordOptions:
    """How a TFRecord file is compressed, as `tf.io.TFRecordOptions`.

    Args:
      compression_type: "GZIP", "ZLIB", "" or None (none), or a
        `TFRecordCompressionType` value.
      flush_mode: zlib's flush mode for `TFRecordWriter.flush` (default 0, Z_NO_FLUSH,
        as TF: compressed data reaches the file when zlib emits it, and at `close`).
      input_buffer_size, output_buffer_size: accepted as TF's (no effect).
      window_bits: zlib's window (default 15).
      compression_level: 0-9, or -1 for zlib's default (6).
      compression_method: zlib's method (8, deflate).
      mem_level: zlib's memory level (default 9, as TF).
      compression_strategy: zlib's strategy (default 0).

    Raises:
      ValueError: an unknown compression type.
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(
        self,
        compression_type: Any = None,
        flush_mode: Any = None,
        input_buffer_size: Any = None,
        output_buffer_size: Any = None,
        window_bits: Any = None,
        compression_level: Any = None,
        compression_method: Any = None,
        mem_level: Any = None,
        compression_strategy: Any = None,
    ) -> None:
        if isinstance(compression_type, int):
            compression_type = _TYPE_NAMES.get(compression_type)
            if compression_type is None:
                raise ValueError("Not a valid compression_type: %s" % compression_type)
        if compression_type is not None and compression_type not in _COMPRESSIONS:
            raise ValueError(f'Not a valid compression_type: "{compression_type}"')
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """ "GZIP", "ZLIB" or "" for a `TFRecordOptions`, a compression-type string or value, or None."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, int):
            return _TYPE_NAMES[options]
        return _COMPRESSIONS[TFRecordOptions(options).compression_type]


def compression_name(value: Any, argument: str = "compression_type") -> str:
    """A dataset's `compression_type` argument as "", "ZLIB" or "GZIP".

    Raises:
      InvalidArgumentError: an unknown compression type, as TF's record readers.
    """
    if value is None:
        return ""
    if hasattr(value, "numpy") and not isinstance(value, (str, bytes)):
        value = value.numpy()
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, str) and value in _COMPRESSIONS:
        return _COMPRESSIONS[value]
    raise errors.InvalidArgumentError(None, None, f"Unsupported compression_type: {value}.")


def record_bytes(record: TensorLike) -> bytes:
    """A record given as bytes or str (UTF-8), as bytes; TF's TypeError for anything else (a tensor too)."""
    if isinstance(record, str):
        return record.encode("utf-8")
    if isinstance(record, (bytes, bytearray, memoryview)):
        return bytes(record)
    raise TypeError(
        f"write(): incompatible function arguments. The following argument types are supported:\n"
        f"    1. (self, record: str) -> None\n\nInvoked with: {record!r}"
    )


def frame(data: bytes) -> bytes:
    """One record in TFRecord framing."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc32c(length)) + data + struct.pack("<I", masked_crc32c(data))


def _compressor(options: TFRecordOptions, kind: str) -> Any:
    window = 15 if options.window_bits is None else int(options.window_bits)
    return zlib.compressobj(
        -1 if options.compression_level is None else int(options.compression_level),
        zlib.DEFLATED if options.compression_method is None else int(options.compression_method),
        window + 16 if kind == "GZIP" else window,
        9 if options.mem_level is None else int(options.mem_level),
        0 if options.compression_strategy is None else int(options.compression_strategy),
    )


class TFRecordWriter:
    """Writes records to a TFRecord file, as `tf.io.TFRecordWriter`.

    Args:
      path: the file to create (replaced if it exists).
      options: a `TFRecordOptions` or a compression-type string ("GZIP", "ZLIB", "").

    Raises:
      NotFoundError: the directory of `path` does not exist.
    """

    def __init__(self, path: PathLike, options: Any = None) -> None:
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(options or None)
        self._kind = _COMPRESSIONS[options.compression_type or ""]
        name = gfile.path_text(path)
        try:
            self._file: Any = open(name, "wb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise errors.from_os_error(exc, name) from None
        self._zlib = _compressor(options, self._kind) if self._kind else None
        self._flush_mode = zlib.Z_NO_FLUSH if options.flush_mode is None else int(options.flush_mode)

    def _put(self, data: bytes) -> None:
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        self._file.write(self._zlib.compress(data) if self._zlib is not None else data)

    def write(self, record: TensorLike) -> None:
        """Appends one record (bytes, or str written as UTF-8)."""
        self._put(frame(record_bytes(record)))

    def flush(self) -> None:
        """Writes buffered data to the file (compressed data as far as the options' `flush_mode` says, as TF)."""
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if self._zlib is not None and self._flush_mode != zlib.Z_NO_FLUSH:
            self._file.write(self._zlib.flush(self._flush_mode))
        self._file.flush()

    def close(self) -> None:
        """Finishes the file (the compressed stream's end) and closes it."""
        if self._file is None:
            return
        if self._zlib is not None:
            self._file.write(self._zlib.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_file", None) is not None:
            self.close()


class _Stream:
    """A file's bytes, decompressed on the fly when it is a GZIP or ZLIB file."""

    def __init__(self, name: str, kind: str) -> None:
        try:
            self._file = open(name, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise errors.from_os_error(exc, name) from None
        self._zlib = zlib.decompressobj(47 if kind == "GZIP" else 15) if kind else None
        self._buffer = b""
        self._kind = kind

    def read(self, size: int) -> bytes:
        if self._zlib is None:
            return self._file.read(size)
        while len(self._buffer) < size:
            chunk = self._file.read(1 << 16)
            if not chunk:
                break
            self._buffer += self._zlib.decompress(chunk)
            while self._zlib.eof and self._zlib.unused_data and self._kind == "GZIP":  # concatenated members
                rest = self._zlib.unused_data
                self._zlib = zlib.decompressobj(47)
                self._buffer += self._zlib.decompress(rest)
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

    def close(self) -> None:
        self._file.close()


def read_records(path: PathLike, compression_type: str = "") -> Iterator[bytes]:
    """The records of a TFRecord file, their checksums verified.

    Raises:
      NotFoundError: the file does not exist.
      DataLossError: a record is truncated or its checksum does not match.
    """
    name = gfile.path_text(path)
    stream = _Stream(name, compression_type)
    offset = 0
    try:
        while True:
            header = stream.read(12)
            if not header:
                return
            if len(header) < 12:
                raise errors.DataLossError(
                    None, None, f"truncated record at {offset}' failed with Read less bytes than requested"
                )
            length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
            if masked_crc32c(length_bytes) != length_crc:
                hint = " (Is this even a TFRecord file?)" if offset == 0 else ""
                raise errors.DataLossError(None, None, f"corrupted record at {offset}{hint}")
            (length,) = struct.unpack("<Q", length_bytes)
            body = stream.read(length + 4)
            if len(body) < length + 4:
                raise errors.DataLossError(
                    None, None, f"truncated record at {offset}' failed with Read less bytes than requested"
                )
            data = body[:length]
            if masked_crc32c(data) != struct.unpack("<I", body[length:])[0]:
                raise errors.DataLossError(None, None, f"corrupted record at {offset + 12}")
            offset += 16 + length
            yield data
    finally:
        stream.close()
