"""`tf.io.gfile`: TF's file API on the local file system, with TF's error classes.

Paths are local (or `file://`) paths; other schemes (`gs://`, `s3://`, `hdfs://`)
need TF's file-system plugins and raise `UnimplementedError`.
"""

from __future__ import annotations

import glob as _glob
import os
import shutil
from typing import Any, Iterator, NamedTuple

from tapeshim._src import errors
from tapeshim._src.typing_aliases import PathLike


def path_text(path: PathLike) -> str:
    """`path` (str, bytes, `os.PathLike` or a scalar string tensor) as a local path string.

    Raises:
      UnimplementedError: for a scheme other than `file://`.
    """
    raw = path.numpy() if hasattr(path, "numpy") and not isinstance(path, (str, bytes)) else path
    fs_path = os.fspath(raw)
    path = fs_path.decode("utf-8") if isinstance(fs_path, bytes) else fs_path
    if "://" in path:
        scheme, rest = path.split("://", 1)
        if scheme != "file":
            raise errors.UnimplementedError(
                None, None, f"File system scheme '{scheme}' not implemented (file: '{path}')"
            )
        path = rest
    return path


def _os_error(exc: OSError, path: str) -> errors.OpError:
    return errors.from_os_error(exc, path)


class FileStatistics(NamedTuple):
    """What `stat` returns: `length` in bytes, `mtime_nsec`, `is_directory`."""

    length: int
    mtime_nsec: int
    is_directory: bool


def exists(path: PathLike) -> bool:
    """Whether `path` exists."""
    return os.path.exists(path_text(path))


def isdir(path: PathLike) -> bool:
    """Whether `path` is a directory."""
    return os.path.isdir(path_text(path))


def stat(path: PathLike) -> FileStatistics:
    """Length, modification time (ns) and kind of `path`.

    Raises:
      NotFoundError: `path` does not exist.
    """
    name = path_text(path)
    try:
        info = os.stat(name)
    except OSError as exc:
        raise _os_error(exc, name) from None
    return FileStatistics(info.st_size, info.st_mtime_ns, os.path.isdir(name))


def listdir(path: PathLike) -> list[str]:
    """The names in directory `path` (no `.`/`..`).

    Raises:
      NotFoundError: `path` is not a directory.
    """
    name = path_text(path)
    if not os.path.isdir(name):
        raise errors.NotFoundError(None, None, f"Could not find directory {name}")
    return os.listdir(name)


def mkdir(path: PathLike) -> None:
    """Creates directory `path` (its parent must exist; an existing directory is fine).

    Raises:
      NotFoundError: the parent directory does not exist.
    """
    name = path_text(path)
    try:
        os.mkdir(name)
    except FileExistsError:
        if not os.path.isdir(name):
            raise errors.AlreadyExistsError(None, None, f"{name}; File exists") from None
    except OSError as exc:
        raise _os_error(exc, name) from None


def makedirs(path: PathLike) -> None:
    """Creates directory `path` and any missing parents."""
    name = path_text(path)
    try:
        os.makedirs(name, exist_ok=True)
    except OSError as exc:
        raise _os_error(exc, name) from None


def remove(path: PathLike) -> None:
    """Deletes file `path`.

    Raises:
      NotFoundError: `path` does not exist.
      FailedPreconditionError: `path` is a directory.
    """
    name = path_text(path)
    if os.path.isdir(name):
        raise errors.FailedPreconditionError(None, None, f"{name}; Is a directory")
    try:
        os.remove(name)
    except OSError as exc:
        raise _os_error(exc, name) from None


def rmtree(path: PathLike) -> None:
    """Deletes directory `path` and everything under it.

    Raises:
      NotFoundError: `path` does not exist.
    """
    name = path_text(path)
    if not os.path.exists(name):
        raise errors.NotFoundError(None, None, f"{name} not found")
    try:
        shutil.rmtree(name) if os.path.isdir(name) else os.remove(name)
    except OSError as exc:
        raise _os_error(exc, name) from None


def _check_target(target: str, overwrite: bool) -> None:
    if not overwrite and os.path.exists(target):
        raise errors.AlreadyExistsError(None, None, "file already exists")


def copy(src: PathLike, dst: PathLike, overwrite: bool = False) -> None:
    """Copies file `src` to `dst`.

    Raises:
      AlreadyExistsError: `dst` exists and `overwrite` is false.
      NotFoundError: `src` does not exist.
    """
    source, target = path_text(src), path_text(dst)
    _check_target(target, overwrite)
    try:
        shutil.copyfile(source, target)
    except OSError as exc:
        raise _os_error(exc, source if not os.path.exists(source) else target) from None


def rename(src: PathLike, dst: PathLike, overwrite: bool = False) -> None:
    """Renames (moves) `src` to `dst`.

    Raises:
      AlreadyExistsError: `dst` exists and `overwrite` is false.
      NotFoundError: `src` does not exist.
    """
    source, target = path_text(src), path_text(dst)
    _check_target(target, overwrite)
    try:
        os.replace(source, target)
    except OSError as exc:
        raise _os_error(exc, source if not os.path.exists(source) else target) from None


def glob(pattern: PathLike) -> list[str]:
    """The paths matching `pattern` (`*`, `?`, `[...]`; a list of patterns gives all their matches)."""
    if isinstance(pattern, (list, tuple)):
        return [name for p in pattern for name in glob(p)]
    return _glob.glob(path_text(pattern))


def join(path: PathLike, *paths: Any) -> str:
    """Joins path components (a component starting with `/` restarts the path, as `os.path.join`)."""
    return os.path.join(path_text(path), *[path_text(p) for p in paths])


def walk(top: PathLike, topdown: bool = True, onerror: Any = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """(directory, subdirectory names, file names) for `top` and every directory under it.

    A `top` that is not a directory gives nothing.
    """
    name = path_text(top)
    if not os.path.isdir(name):
        return
    try:
        entries = sorted(os.listdir(name))
    except OSError as exc:
        if onerror is not None:
            onerror(_os_error(exc, name))
        return
    dirs = [e for e in entries if os.path.isdir(os.path.join(name, e))]
    files = [e for e in entries if e not in dirs]
    if topdown:
        yield name, dirs, files
    for sub in dirs:
        yield from walk(os.path.join(name, sub), topdown, onerror)
    if not topdown:
        yield name, dirs, files


def get_registered_schemes() -> list[str]:
    """The path schemes tapeshim reads: the local file system only."""
    return ["", "file"]


_MODES = ("r", "w", "a", "r+", "w+", "a+")


class GFile:
    """A file, as `tf.io.gfile.GFile`: opened on first use; text modes read and write str, "b" modes bytes.

    `write` takes str or bytes in any mode (TF encodes str as UTF-8).
    """

    def __init__(self, name: Any, mode: str = "r") -> None:
        self._name = path_text(name)
        self._mode = mode
        self._binary = "b" in mode
        base = mode.replace("b", "")
        if base not in _MODES:
            raise errors.InvalidArgumentError(None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self._readable = base.startswith("r") or "+" in base
        self._writable = not base == "r"
        self._base = base
        self._file: Any = None

    @property
    def name(self) -> str:
        """The file's path."""
        return self._name

    @property
    def mode(self) -> str:
        """The mode it was opened with."""
        return self._mode

    def _open(self) -> Any:
        if self._file is None:
            try:
                self._file = open(self._name, self._base + "b")  # noqa: SIM115 - closed by close()/__exit__
            except OSError as exc:
                raise _os_error(exc, self._name) from None
        return self._file

    def _out(self, data: bytes) -> Any:
        return data if self._binary else data.decode("utf-8")

    def _check_read(self) -> Any:
        if not self._readable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
        return self._open()

    def size(self) -> int:
        """The file's length in bytes."""
        return stat(self._name).length

    def read(self, n: int = -1) -> Any:
        """Up to `n` bytes (all when -1): bytes in binary mode, str in text mode."""
        return self._out(self._check_read().read(None if n is None or n < 0 else n))

    def readline(self) -> Any:
        """The next line, with its newline."""
        return self._out(self._check_read().readline())

    def readlines(self) -> list:
        """All remaining lines."""
        return [self._out(line) for line in self._check_read().readlines()]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.readlines())

    def __next__(self) -> Any:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def write(self, file_content: Any) -> None:
        """Writes str (as UTF-8) or bytes."""
        if not self._writable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
        if hasattr(file_content, "numpy") and not isinstance(file_content, (str, bytes)):
            file_content = file_content.numpy()
        data = file_content.encode("utf-8") if isinstance(file_content, str) else bytes(file_content)
        self._open().write(data)

    def tell(self) -> int:
        """The position in bytes."""
        return self._open().tell()

    def seek(self, offset: int | None = None, whence: int = 0, position: int | None = None) -> None:
        """Moves to `offset` (from the start, current position or end, by `whence`)."""
        self._open().seek(position if offset is None else offset, whence)

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        """Writes buffered data to the file."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flushes and closes the file."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "GFile":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_file", None) is not None:
            self._file.close()


Open = GFile
