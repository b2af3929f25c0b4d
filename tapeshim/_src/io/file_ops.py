"""`tf.io.read_file` and `tf.io.write_file`: whole files as scalar string tensors."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from tapeshim._src import errors
from tapeshim._src.io.gfile import path_text
from tapeshim._src.ops import table
from tapeshim._src.strings_tensor import StringTensor, as_string_tensor
from tapeshim._src.typing_aliases import PathLike


def scalar_path(value: Any, op: str, argument: str = "filename") -> str:
    """A scalar string argument as a path, with TF's errors for a non-scalar or non-string value."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return path_text(value)
    try:
        tensor = as_string_tensor(value, argument)
    except TypeError:
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string") from None
    if tensor.shape.rank != 0:
        raise errors.invalid_argument(
            f"Input {argument} tensor must be scalar, but had shape: {list(tensor.shape)}", op
        )
    return path_text(tensor.numpy())


def read_file(filename: PathLike, name: str | None = None) -> StringTensor:
    """The contents of file `filename` as a scalar `tf.string` tensor.

    Raises:
      NotFoundError: the file does not exist.
      InvalidArgumentError: `filename` is not a scalar.
    """
    path = scalar_path(filename, "ReadFile")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise errors.from_os_error(exc, path) from None
    return StringTensor(np.array(data, dtype=object))


def write_file(filename: PathLike, contents: Any, name: str | None = None) -> None:
    """Writes scalar string `contents` to `filename`, creating missing parent directories (as TF).

    Raises:
      InvalidArgumentError: `filename` or `contents` is not a scalar.
    """
    path = scalar_path(filename, "WriteFile")
    data = as_string_tensor(contents, "contents")
    if data.shape.rank != 0:
        raise errors.invalid_argument(f"Contents tensor must be scalar, but had shape: {list(data.shape)}", "WriteFile")
    directory = os.path.dirname(path)
    try:
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data.numpy())
    except OSError as exc:
        raise errors.from_os_error(exc, path) from None


table.export("io.read_file", gradient="-", dtypes="string", note="host-side; local files (`file://` too)")(read_file)
table.export(
    "io.write_file", gradient="-", dtypes="string", note="host-side; creates missing parent directories, as TF"
)(write_file)
