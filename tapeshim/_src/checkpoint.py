"""`tf.train.Checkpoint` and `tf.train.CheckpointManager` for variables and modules.

Variables are found through the checkpoint's keyword objects and their
attributes (as TF's object graph does) and keyed by that path. A checkpoint is
one `.npz` file written atomically: to a temporary file, then renamed, so a
crash mid-save never damages the last good checkpoint. The `checkpoint` state
file beside it uses TF's text format, so `tf.train.latest_checkpoint` works.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any, Callable

import numpy as np

from tapeshim._src import dtypes
from tapeshim._src.variable import Variable

_SUFFIX = ".npz"


_trackables: list[tuple[type, Callable[[Any], dict[str, Variable]], Callable | None]] = []
_deferred: dict[str, tuple[Any, Callable]] = {}  # path -> (object, restore_later) found by the last walk


def register_trackable(base_type: type, variables_of: Callable[[Any], dict[str, Variable]],
                       restore_later: Callable[[Any, dict[str, np.ndarray]], None] | None = None) -> None:
    """Makes checkpoints save objects of `base_type` through `variables_of(obj)`.

    Args:
      base_type: the class handled.
      variables_of: returns the object's variables keyed by a name that is the
        same for an identical object built afresh (so a new model restores an
        old checkpoint), instead of walking the object's attributes.
      restore_later: optional `restore_later(obj, {name: array})`, given the
        saved values under the object's path that no variable took yet (as TF,
        restoring into state the object creates later, such as optimizer slots).
    """
    _trackables.append((base_type, variables_of, restore_later))


def restore_values(variables: dict[str, Variable], values: dict[str, np.ndarray], prefix: str = "") -> None:
    """Assigns saved `values` to the `variables` of the same name, after checking every shape and dtype.

    Raises:
      ValueError: naming (after `prefix`) each variable whose saved shape or dtype
        differs; nothing is assigned then.
    """
    mismatched = [f"{prefix}{name}: saved {value.shape} {value.dtype}, variable {tuple(v._shape)} {v.dtype.name}"
                  for name, value in values.items() if (v := variables.get(name)) is not None
                  and (value.shape != tuple(v._shape) or value.dtype != v.dtype.as_numpy_dtype)]
    if mismatched:
        raise ValueError("The checkpoint does not match these variables: " + "; ".join(mismatched))
    for name, value in values.items():
        variable = variables.get(name)
        if variable is not None:
            variable.assign(value)


def _walk(obj: Any, path: str, found: dict[str, Variable], seen: set[int]) -> None:
    if id(obj) in seen:
        return
    if isinstance(obj, Variable):
        seen.add(id(obj))
        found[path] = obj
        return
    for base_type, variables_of, restore_later in _trackables:
        if isinstance(obj, base_type):
            seen.add(id(obj))
            for name, variable in variables_of(obj).items():
                found[f"{path}/{name}"] = variable
            if restore_later is not None:
                _deferred[path] = (obj, restore_later)
            return
    if isinstance(obj, Checkpoint):
        seen.add(id(obj))
        tracked = dict(obj._objects)
        tracked.update({k: v for k, v in vars(obj).items() if k not in ("_objects", "save_counter")})
        for name in sorted(tracked):
            _walk(tracked[name], f"{path}/{name}" if path else name, found, seen)
        return
    if isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _walk(obj[key], f"{path}/{key}", found, seen)
        return
    if isinstance(obj, (list, tuple)):
        for index, item in enumerate(obj):
            _walk(item, f"{path}/{index}", found, seen)
        return
    attributes = getattr(obj, "__dict__", None)
    if attributes is not None and not isinstance(obj, type):
        seen.add(id(obj))
        for key in sorted(attributes):
            if not key.startswith("__"):
                _walk(attributes[key], f"{path}/{key}", found, seen)


def _write_atomically(path: str, write: Any) -> None:
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def _write_state(directory: str, latest: str, all_paths: list[str]) -> None:
    def relative(p: str) -> str:
        return os.path.relpath(p, directory)

    text = f'model_checkpoint_path: "{relative(latest)}"\n' + "".join(
        f'all_model_checkpoint_paths: "{relative(p)}"\n' for p in all_paths)
    _write_atomically(os.path.join(directory, "checkpoint"), lambda stream: stream.write(text.encode()))


def _read_state(directory: str) -> tuple[str | None, list[str]]:
    state = os.path.join(directory, "checkpoint")
    if not os.path.exists(state):
        return None, []
    text = open(state).read()
    latest = re.search(r'^model_checkpoint_path: "(.*)"', text, re.M)
    paths = re.findall(r'^all_model_checkpoint_paths: "(.*)"', text, re.M)

    def absolute(p: str) -> str:
        return p if os.path.isabs(p) else os.path.join(directory, p)

    return (absolute(latest.group(1)) if latest else None), [absolute(p) for p in paths]


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest checkpoint recorded in `checkpoint_dir`, or None."""
    latest, _ = _read_state(checkpoint_dir)
    return latest if latest and os.path.exists(latest + _SUFFIX) else None


class CheckpointLoadStatus:
    """What a restore matched, as TF's load status object."""

    def __init__(self, unused: list[str], missing: list[str]) -> None:
        self._unused, self._missing = unused, missing

    def assert_consumed(self) -> "CheckpointLoadStatus":
        """Raises AssertionError unless every saved value and every variable was matched."""
        if self._unused or self._missing:
            raise AssertionError(
                f"Unresolved object in checkpoint: saved values not restored {self._unused}, variables without a "
                f"saved value {self._missing}")
        return self

    def assert_existing_objects_matched(self) -> "CheckpointLoadStatus":
        """Raises AssertionError unless every variable got a saved value."""
        if self._missing:
            raise AssertionError(f"Some objects had no checkpointed value: {self._missing}")
        return self

    def expect_partial(self) -> "CheckpointLoadStatus":
        """Silences the partial-restore checks."""
        return self


class Checkpoint:
    """Saves and restores the variables reachable from its keyword objects, as `tf.train.Checkpoint`.

    Args:
      root: an optional root object.
      **kwargs: the objects to track (modules, variables, objects with variable
        attributes, lists and dicts of them).
    """

    def __init__(self, root: Any = None, **kwargs: Any) -> None:
        self._objects = dict(kwargs)
        if root is not None:
            self._objects["root"] = root
        self.save_counter = Variable(0, dtype=dtypes.int64, trainable=False, name="save_counter")

    def _variables(self) -> dict[str, Variable]:
        found: dict[str, Variable] = {}
        _walk(self, "", found, set())
        found.pop("save_counter", None)
        found["save_counter"] = self.save_counter
        return found

    def write(self, file_prefix: str, options: Any = None) -> str:
        """Writes the checkpoint to `file_prefix` (atomically) and returns the prefix."""
        values = {path: np.asarray(v._value) for path, v in self._variables().items()}
        _write_atomically(file_prefix + _SUFFIX, lambda stream: np.savez(stream, **values))
        return file_prefix

    def save(self, file_prefix: str, options: Any = None) -> str:
        """Writes `<file_prefix>-<n>` for the next save number n and records it as the latest."""
        self.save_counter.assign_add(1)
        path = self.write(f"{file_prefix}-{int(self.save_counter.numpy())}")
        directory = os.path.dirname(path) or "."
        _, previous = _read_state(directory)
        _write_state(directory, path, [p for p in previous if p != path] + [path])
        return path

    def read(self, save_path: str, options: Any = None) -> CheckpointLoadStatus:
        """Restores the variables from `save_path`."""
        return self.restore(save_path)

    def restore(self, save_path: str | None, options: Any = None) -> CheckpointLoadStatus:
        """Restores every tracked variable from `save_path` (None restores nothing).

        Raises:
          NotFoundError: if there is no checkpoint at `save_path`.
          ValueError: naming every variable whose saved shape or dtype differs; no
            variable changes then.
        """
        _deferred.clear()
        variables = self._variables()
        if save_path is None:
            return CheckpointLoadStatus([], sorted(variables))
        if not os.path.exists(save_path + _SUFFIX):
            from tapeshim._src import errors

            raise errors.NotFoundError(None, None, f"Failed to find any matching files for {save_path}")
        with np.load(save_path + _SUFFIX) as saved:
            stored = {key: saved[key] for key in saved.files}
        restore_values(variables, stored)
        for owner_path, (owner, restore_later) in list(_deferred.items()):
            prefix = owner_path + "/"
            pending = {key[len(prefix):]: value for key, value in stored.items()
                       if key.startswith(prefix) and key not in variables}
            if pending:
                restore_later(owner, pending)
                variables.update({key: None for key in (prefix + name for name in pending)})
        _deferred.clear()
        unused = sorted(set(stored) - set(variables))
        missing = sorted(set(variables) - set(stored))
        return CheckpointLoadStatus(unused, missing)


class CheckpointManager:
    """Numbered checkpoints in a directory, keeping the newest `max_to_keep`, as `tf.train.CheckpointManager`."""

    def __init__(self, checkpoint: Checkpoint, directory: str, max_to_keep: int | None,
                 keep_checkpoint_every_n_hours: Any = None, checkpoint_name: str = "ckpt", step_counter: Any = None,
                 checkpoint_interval: Any = None, init_fn: Any = None) -> None:
        self._checkpoint = checkpoint
        self._directory = directory
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(directory, checkpoint_name)
        latest, paths = _read_state(directory)
        self._checkpoints = [p for p in paths if os.path.exists(p + _SUFFIX)]

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoints(self) -> list[str]:
        """The kept checkpoints, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self) -> str | None:
        return self._checkpoints[-1] if self._checkpoints else None

    def save(self, checkpoint_number: int | None = None, check_interval: bool = True, options: Any = None) -> str:
        """Saves `<directory>/<name>-<n>` and deletes checkpoints beyond `max_to_keep`."""
        self._checkpoint.save_counter.assign_add(1)
        number = int(self._checkpoint.save_counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        path = self._checkpoint.write(f"{self._prefix}-{number}")
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                old = self._checkpoints.pop(0)
                if os.path.exists(old + _SUFFIX):
                    os.remove(old + _SUFFIX)
        _write_state(self._directory, path, self._checkpoints)
        return path
