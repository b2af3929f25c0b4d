"""Checkpoint files: atomic writes, the `checkpoint` state file, reading values back.

A checkpoint is one `.npz` file (`<prefix>.npz`) whose keys are the variables'
object paths (`model/w`); `tf.train.list_variables` shows them under TF's names
(`model/w/.ATTRIBUTES/VARIABLE_VALUE`). Every file is written to a temporary
file in the same directory and renamed over the target, so a crash leaves
either the old file or the new one, never half of one. File system failures
raise the `tf.errors` class TF's file system gives their `errno`, and a
damaged checkpoint raises `tf.errors.OpError`, as TF's checkpoint reader does.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import zipfile
import zlib
from typing import Any, Callable, Sequence

import numpy as np

from tapeshim._src import dtypes, errors
from tapeshim._src.tf_logging import get_logger

SUFFIX = ".npz"
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
STATE_FILENAME = "checkpoint"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_NEW_FILE_MODE = 0o666 & ~_umask()  # the mode open() gives a new file


def make_directories(directory: str) -> None:
    """Creates `directory` and its parents, raising TF's error classes.

    Raises:
      FailedPreconditionError: if a component of the path is a file.
      OpError: the class TF gives any other file system failure (for example
        `PermissionDeniedError` in a read-only directory).
    """
    try:
        os.makedirs(directory, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        component = directory
        while component and not os.path.exists(component):
            component = os.path.dirname(component)
        if component and not os.path.isdir(component):
            raise errors.FailedPreconditionError(None, None, f"{component} is not a directory") from exc
        raise errors.from_os_error(exc) from exc
    except OSError as exc:
        raise errors.from_os_error(exc) from exc


def write_atomically(path: str, write: Callable[[Any], None]) -> None:
    """Writes `path` through `write(stream)` into a temporary file, then renames it over `path`.

    Raises:
      OpError: the class TF gives the file system failure (`PermissionDeniedError`,
        `ResourceExhaustedError` for a full disk, `OutOfRangeError` past the file
        size limit, ...); the temporary file is removed and `path` is unchanged.
    """
    directory = os.path.dirname(path) or "."
    make_directories(directory)
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        os.chmod(temporary, _NEW_FILE_MODE)  # mkstemp makes 0600; files are created as TF creates them
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        os.replace(temporary, path)
    except BaseException as exc:
        if temporary is not None and os.path.exists(temporary):
            try:
                os.remove(temporary)
            except OSError:
                pass  # the original failure is the one to report
        if isinstance(exc, OSError):
            raise errors.from_os_error(exc, exc.filename if exc.filename is not None else path) from exc
        raise


def write_values(prefix: str, values: dict[str, np.ndarray], aliases: dict[str, str] | None = None) -> None:
    """Writes the checkpoint `<prefix>.npz` holding `values` (keyed by object path).

    Args:
      prefix: the checkpoint's path without the `.npz` suffix.
      values: each variable's value, keyed by the first path that reaches it.
      aliases: the other paths of objects reachable more than once, each mapped to
        the path they were saved under (TF's object graph records these, so an object
        restores through any of its paths).
    """
    graph = json.dumps({"values": sorted(values), "aliases": aliases or {}}).encode()
    arrays: dict[str, Any] = {**values, OBJECT_GRAPH_KEY: np.array(graph)}
    write_atomically(prefix + SUFFIX, lambda stream: np.savez(stream, **arrays))


def _damaged(path: str, reason: str) -> errors.OpError:
    return errors.OpError(None, None, f"Unable to read checkpoint {path}: {reason}", errors.UnknownError.error_code)


def read_checkpoint(prefix: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The values saved in the checkpoint `prefix`, keyed by object path, and its object aliases.

    Returns:
      `(values, aliases)`: aliases map another path to an object onto the path it
      was saved under ({} for a checkpoint without any).

    Raises:
      NotFoundError: if there is no checkpoint at `prefix`.
      DataLossError: if `prefix` is a directory, not a checkpoint.
      OpError: if the file cannot be read or is truncated or not a checkpoint
        (TF's checkpoint reader raises the base class, error code UNKNOWN).
    """
    path = prefix + SUFFIX
    if not os.path.exists(path) and os.path.isdir(prefix):
        raise errors.DataLossError(
            None,
            None,
            f"Unable to open table file {prefix}: FAILED_PRECONDITION: {prefix}; Is a directory: perhaps "
            "your file is in a different file format and you need to use a different restore operator?",
        )
    if not os.path.exists(path):
        raise errors.NotFoundError(
            None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {prefix}"
        )
    try:
        saved = np.load(path, allow_pickle=False)
        if not isinstance(saved, np.lib.npyio.NpzFile):
            raise _damaged(path, "the file is not a checkpoint")
        with saved:
            values = {key: saved[key] for key in saved.files}
        graph = json.loads(bytes(values.pop(OBJECT_GRAPH_KEY)[()]).decode()) if OBJECT_GRAPH_KEY in values else {}
    except OSError as exc:
        raise errors.OpError(
            None, None, f"{path}; {exc.strerror or 'cannot be read'}", errors.UnknownError.error_code
        ) from exc
    except (ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile, zlib.error) as exc:
        raise _damaged(path, "the file is truncated or is not a checkpoint") from exc
    aliases = graph.get("aliases", {}) if isinstance(graph, dict) else {}
    return values, {str(k): str(v) for k, v in aliases.items()}


def read_values(prefix: str) -> dict[str, np.ndarray]:
    """The values saved in the checkpoint `prefix`, keyed by object path (see `read_checkpoint`)."""
    return read_checkpoint(prefix)[0]


def write_state(directory: str, latest: str, all_paths: list[str], timestamps: list[float] | None = None) -> None:
    """Writes TF's text `checkpoint` state file naming `latest` and `all_paths` (oldest first).

    Args:
      directory: where the state file goes.
      latest: the newest checkpoint's prefix.
      all_paths: every kept checkpoint's prefix, oldest first.
      timestamps: when each of `all_paths` was saved (a `CheckpointManager` records
        these, as TF's does, and only recovers checkpoints that have one).
    """

    def relative(p: str) -> str:
        return os.path.relpath(p, directory)

    text = (
        f'model_checkpoint_path: "{relative(latest)}"\n'
        + "".join(f'all_model_checkpoint_paths: "{relative(p)}"\n' for p in all_paths)
        + "".join(f"all_model_checkpoint_timestamps: {t!r}\n" for t in (timestamps or []))
    )
    write_atomically(os.path.join(directory, STATE_FILENAME), lambda stream: stream.write(text.encode()))


def read_state(directory: str) -> tuple[str | None, list[str]]:
    """The latest checkpoint and all checkpoints the state file in `directory` names (see `read_state_times`)."""
    latest, paths, _ = read_state_times(directory)
    return latest, paths


def read_state_times(directory: str) -> tuple[str | None, list[str], list[float]]:
    """The latest checkpoint, all checkpoints and their save times, as the state file in `directory` records them.

    An unreadable state file is ignored with a warning, as TF does.

    Raises:
      UnicodeDecodeError: if the state file is not UTF-8 text (TF's class for it).
    """
    state = os.path.join(directory, STATE_FILENAME)
    if not os.path.exists(state):
        return None, [], []
    try:
        with open(state, "rb") as stream:
            data = stream.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        name = type(errors.from_os_error(exc)).__name__
        get_logger().warning(f"{name}: {state}; {reason}")
        get_logger().warning(f"{state}: Checkpoint ignored")
        return None, [], []
    text = data.decode("utf-8")
    latest = re.search(r'^model_checkpoint_path: "(.*)"', text, re.M)
    paths = re.findall(r'^all_model_checkpoint_paths: "(.*)"', text, re.M)
    times = [float(t) for t in re.findall(r"^all_model_checkpoint_timestamps: ([0-9.eE+-]+)\s*$", text, re.M)]

    def absolute(p: str) -> str:
        return p if os.path.isabs(p) else os.path.join(directory, p)

    return (absolute(latest.group(1)) if latest else None), [absolute(p) for p in paths], times


class CheckpointState:
    """What a directory's `checkpoint` state file records, as TF's `CheckpointState` proto."""

    def __init__(self, model_checkpoint_path: str, all_model_checkpoint_paths: list[str]) -> None:
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps: list[float] = []
        self.last_preserved_timestamp = 0.0

    def __repr__(self) -> str:
        return f'model_checkpoint_path: "{self.model_checkpoint_path}"\n' + "".join(
            f'all_model_checkpoint_paths: "{p}"\n' for p in self.all_model_checkpoint_paths
        )


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> CheckpointState | None:
    """The state file of `checkpoint_dir`, or None if it has none, as `tf.train.get_checkpoint_state`."""
    latest, paths = read_state(os.fspath(checkpoint_dir))
    return None if latest is None else CheckpointState(latest, paths)


class CheckpointOptions:
    """Options for saving and restoring checkpoints, as `tf.train.CheckpointOptions` (accepted; files are local).

    Args:
      experimental_io_device: the device TF would do I/O on.
      experimental_enable_async_checkpoint: whether TF would write in the background.
      experimental_write_callbacks: callbacks TF runs after a write.
      enable_async: the same as `experimental_enable_async_checkpoint`.
      experimental_sharding_callback: how TF would shard the files.
    """

    def __init__(
        self,
        experimental_io_device: str | None = None,
        experimental_enable_async_checkpoint: bool = False,
        experimental_write_callbacks: Sequence[Callable[..., object]] | None = None,
        enable_async: bool = False,
        experimental_sharding_callback: object = None,
    ) -> None:
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = experimental_enable_async_checkpoint or enable_async
        self.enable_async = self.experimental_enable_async_checkpoint
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_sharding_callback = experimental_sharding_callback


def exists(prefix: str) -> bool:
    """Whether a checkpoint file for `prefix` exists."""
    return os.path.exists(prefix + SUFFIX)


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest checkpoint recorded in `checkpoint_dir`, or None, as `tf.train.latest_checkpoint`."""
    latest, _ = read_state(os.fspath(checkpoint_dir))
    return latest if latest and exists(latest) else None


def _checkpoint_path(ckpt_dir_or_file: str | bytes | os.PathLike[str]) -> str:
    if isinstance(ckpt_dir_or_file, os.PathLike):
        ckpt_dir_or_file = os.fspath(ckpt_dir_or_file)
    if not isinstance(ckpt_dir_or_file, (str, bytes)):
        raise TypeError(f"Expected binary or unicode string, got {ckpt_dir_or_file!r}")
    if isinstance(ckpt_dir_or_file, bytes):
        ckpt_dir_or_file = ckpt_dir_or_file.decode()
    if os.path.isdir(ckpt_dir_or_file):
        latest = latest_checkpoint(ckpt_dir_or_file)
        if latest is None:
            raise errors.NotFoundError(
                None,
                None,
                f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {ckpt_dir_or_file}",
            )
        return latest
    return ckpt_dir_or_file


class CheckpointReader:
    """Reads the values of one checkpoint by TF's names, as the reader `tf.train.load_checkpoint` returns."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._values = {key + VALUE_SUFFIX: value for key, value in read_values(prefix).items()}
        self._graph = "\n".join(sorted(self._values)).encode()

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        """Each saved name and its shape (a list of ints)."""
        shapes = {name: list(value.shape) for name, value in self._values.items()}
        shapes[OBJECT_GRAPH_KEY] = []
        return shapes

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        """Each saved variable's name and its `tf.DType` (without TF's `tf.string` object graph entry)."""
        return {name: dtypes.as_dtype(value.dtype) for name, value in self._values.items()}

    def has_tensor(self, name: str) -> bool:
        """Whether the checkpoint holds a value named `name`."""
        return name in self._values or name == OBJECT_GRAPH_KEY

    def get_tensor(self, name: str) -> Any:
        """The saved value named `name`: a numpy array, or a numpy scalar for a scalar.

        Raises:
          NotFoundError: if the checkpoint has no value named `name`.
        """
        if name == OBJECT_GRAPH_KEY:
            return self._graph
        if name not in self._values:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
        value = self._values[name]
        return value[()] if value.ndim == 0 else value.copy()


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader for the checkpoint at a prefix, or the latest one in a directory, as `tf.train.load_checkpoint`.

    Raises:
      TypeError: if `ckpt_dir_or_file` is not a string or path.
      NotFoundError: if there is no checkpoint there.
      OpError: if the checkpoint cannot be read or is damaged.
    """
    return CheckpointReader(_checkpoint_path(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """The `(name, shape)` of every value in a checkpoint, sorted by name, as `tf.train.list_variables`.

    Args:
      ckpt_dir_or_file: a checkpoint prefix, or a directory (its latest checkpoint).

    Raises:
      TypeError: if `ckpt_dir_or_file` is not a string or path.
      NotFoundError: if there is no checkpoint there.
      OpError: if the checkpoint cannot be read or is damaged.
    """
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """The value saved under `name` (a name `list_variables` gives), as `tf.train.load_variable`.

    Args:
      ckpt_dir_or_file: a checkpoint prefix, or a directory (its latest checkpoint).
      name: the saved value's name; a trailing `:0` is ignored, as TF does.

    Raises:
      AttributeError: if `name` is not a string (TF's class for it).
      NotFoundError: if there is no checkpoint there, or no value named `name`.
      OpError: if the checkpoint cannot be read or is damaged.
    """
    if not isinstance(name, str):
        raise AttributeError(f"load_variable expects name to be a string, got {name!r}")
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
