"""`tf.data.TFRecordDataset` and `tf.data.TextLineDataset`: records and lines of files as `tf.string` scalars.

Both are `Dataset`s (built with its constructor from a Python iterator), so
`map`, `batch`, `shuffle` and the rest apply. Files are read lazily, one pass per
iteration; `num_parallel_reads` interleaves files in TF's deterministic order
(one element from each of that many open files in turn).
"""

from __future__ import annotations

import functools
import zlib
from typing import Any, Callable, Iterator, SupportsInt

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.dataset import UNKNOWN, Dataset
from tapeshim._src.io.gfile import path_text
from tapeshim._src.io.records import TFRecordWriter, _Stream, compression_name, read_records
from tapeshim._src.strings_tensor import StringTensor
from tapeshim._src.tensor import convert_to_tensor
from tapeshim._src.tensor_spec import TensorSpec
from tapeshim._src.typing_aliases import PathLike


def _not_strings(dtype: Any) -> TypeError:
    return TypeError(f"The `filenames` argument must contain `tf.string` elements. Got `{dtype!r}` elements.")


def _filenames(filenames: Any) -> Callable[[], list[str]]:
    """A function giving the file names of a dataset's `filenames` argument (read when iterated)."""
    if isinstance(filenames, Dataset):
        spec = filenames.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype is not dtypes.string:
            raise _not_strings(getattr(spec, "dtype", spec))
        return lambda: [path_text(t) for t in filenames._elements()]
    if isinstance(filenames, (str, bytes)) or hasattr(filenames, "__fspath__"):
        names = [path_text(filenames)]
        return lambda: names
    tensor = convert_to_tensor(filenames)
    if tensor.dtype is not dtypes.string:
        raise _not_strings(tensor.dtype)
    names = [path_text(v) for v in np.asarray(tensor.numpy(), dtype=object).reshape(-1)]
    return lambda: names


def _interleave(sources: list[Callable[[], Iterator[bytes]]], cycle: int) -> Iterator[bytes]:
    """Elements taken one at a time from up to `cycle` open sources in turn, in TF's order.

    A source that ends is replaced in its slot by the next unopened one, which
    gives its first element on the slot's next turn.
    """
    if cycle <= 1:
        for make in sources:
            yield from make()
        return
    pending = iter(sources)
    slots: list[Iterator[bytes] | None] = []
    for _ in range(cycle):
        opener = next(pending, None)
        slots.append(opener() if opener is not None else None)
    index = 0
    while any(s is not None for s in slots):
        current = slots[index]
        if current is not None:
            try:
                yield next(current)
            except StopIteration:
                opener = next(pending, None)
                slots[index] = opener() if opener is not None else None
        index = (index + 1) % cycle


def _scalar(data: bytes) -> StringTensor:
    return StringTensor(np.array(data, dtype=object))


class _FileDataset(Dataset):
    """A dataset of the `tf.string` scalars `read(path, compression)` yields for each file."""

    def __init__(
        self,
        filenames: Any,
        compression_type: Any,
        num_parallel_reads: Any,
        read: Callable[[str, str], Iterator[bytes]],
    ) -> None:
        names = _filenames(filenames)
        kind = compression_name(compression_type)
        cycle = 1 if num_parallel_reads is None else int(num_parallel_reads)
        if cycle == -1:  # AUTOTUNE
            cycle = 2

        def iterate() -> Iterator[StringTensor]:
            sources: list[Callable[[], Iterator[bytes]]] = [functools.partial(read, path, kind) for path in names()]
            for data in _interleave(sources, cycle):
                yield _scalar(data)

        super().__init__(iterate, UNKNOWN, TensorSpec([], dtypes.string))


def _zlib_errors(read: Callable[[str, str], Iterator[bytes]]) -> Callable[[str, str], Iterator[bytes]]:
    def reading(path: str, kind: str) -> Iterator[bytes]:
        try:
            yield from read(path, kind)
        except zlib.error as exc:
            text = str(exc)
            code = text.split("Error ")[1].split(" ")[0] if "Error " in text else "-3"
            reason = text.split(": ", 1)[-1]
            raise errors.DataLossError(None, None, f"inflate() failed with error {code}: {reason}") from None

    return reading


class TFRecordDataset(_FileDataset):
    """The records of one or more TFRecord files, as `tf.data.TFRecordDataset`.

    Args:
      filenames: a file name, a list or 1-D string tensor of them, or a dataset of
        string scalars.
      compression_type: "", "ZLIB" or "GZIP" (None: "").
      buffer_size: accepted for compatibility (files are read in 64 KiB blocks).
      num_parallel_reads: read this many files in turn, one record from each
        (TF's deterministic interleave order); None reads them one after another.
      name: accepted for compatibility.

    Raises:
      TypeError: `filenames` does not hold strings.
    """

    def __init__(
        self,
        filenames: Any,
        compression_type: str | None = None,
        buffer_size: SupportsInt | None = None,
        num_parallel_reads: SupportsInt | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(filenames, compression_type, num_parallel_reads, _zlib_errors(read_records))


def _read_lines(path: str, kind: str) -> Iterator[bytes]:
    stream = _Stream(path, kind)
    try:
        rest = b""
        while True:
            chunk = stream.read(1 << 16)
            if not chunk:
                break
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                yield line[:-1] if line.endswith(b"\r") else line
        if rest:
            yield rest[:-1] if rest.endswith(b"\r") else rest
    finally:
        stream.close()


class TextLineDataset(_FileDataset):
    """The lines of one or more text files (without their `\\n` or `\\r\\n`), as `tf.data.TextLineDataset`.

    Args:
      filenames: a file name, a list or 1-D string tensor of them, or a dataset of
        string scalars.
      compression_type: "", "ZLIB" or "GZIP" (None: "").
      buffer_size: accepted for compatibility.
      num_parallel_reads: read this many files in turn, one line from each.
      name: accepted for compatibility.
    """

    def __init__(
        self,
        filenames: Any,
        compression_type: str | None = None,
        buffer_size: SupportsInt | None = None,
        num_parallel_reads: SupportsInt | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(filenames, compression_type, num_parallel_reads, _zlib_errors(_read_lines))


class DatasetTFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file, as `tf.data.experimental.TFRecordWriter`.

    Args:
      filename: the file to write.
      compression_type: "", "ZLIB" or "GZIP" (None: "").
    """

    def __init__(self, filename: PathLike, compression_type: str | None = None) -> None:
        self._filename = path_text(filename)
        self._kind = compression_name(compression_type)

    def write(self, dataset: Dataset) -> None:
        """Writes every element of `dataset` (scalar `tf.string` elements) as one record.

        Raises:
          TypeError: `dataset` does not produce scalar strings.
        """
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype is not dtypes.string or spec.shape.rank != 0:
            shapes = getattr(spec, "shape", spec)
            kinds = getattr(spec, "dtype", spec)
            raise TypeError(
                "Invalid `dataset`. Expected a`dataset` that produces scalar `tf.string` elements, but "
                f"got a dataset which produces elements with shapes {tuple(shapes)} and types "
                f"<dtype: '{getattr(kinds, 'name', kinds)}'>."
            )
        with TFRecordWriter(self._filename, self._kind or None) as writer:
            for element in dataset._elements():
                writer.write(element.numpy())
