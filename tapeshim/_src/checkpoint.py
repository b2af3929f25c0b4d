"""`tf.train.Checkpoint` and `tf.train.CheckpointManager` for variables and modules.

Variables are found through the checkpoint's keyword objects and their
attributes (as TF's object graph does) and keyed by that path. A checkpoint is
one `.npz` file written atomically (`checkpoint_io`), so a crash mid-save never
damages the last good checkpoint; the `checkpoint` state file beside it uses
TF's text format, so `tf.train.latest_checkpoint` works. A `CheckpointManager`
records a new checkpoint in the state file before it deletes old ones, so a
crash at any point leaves a restorable latest checkpoint.
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import Any, Callable, Iterable

import numpy as np

from tapeshim._src import checkpoint_io, dtypes, errors
from tapeshim._src.checkpoint_io import CheckpointOptions
from tapeshim._src.dataset_iterator import OwnedIterator
from tapeshim._src.module import Module
from tapeshim._src.ops.random_ops import Generator
from tapeshim._src.variable import Variable

_SUFFIX = checkpoint_io.SUFFIX
_PENDING = "_pending_restore"  # a tf.Module's saved values for variables it has not created yet


_trackables: list[tuple[type, Callable[[Any], dict[str, Variable]], Callable | None]] = []


def register_trackable(
    base_type: type,
    variables_of: Callable[[Any], dict[str, Variable]],
    restore_later: Callable[[Any, dict[str, np.ndarray]], None] | None = None,
) -> None:
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
    """Assigns saved `values` to the `variables` of the same name, after checking every dtype and shape.

    Raises:
      InvalidArgumentError: naming (after `prefix`) each variable whose saved dtype
        differs (TF's class: its restore op reads the value with the variable's dtype).
      ValueError: naming each variable whose saved shape differs. Nothing is
        assigned when either is raised.
    """
    pairs = [(name, value, v) for name, value in values.items() if (v := variables.get(name)) is not None]
    wrong_dtype = [
        f"{prefix}{name}: expected dtype {v.dtype.name} but the checkpoint holds {value.dtype}"
        for name, value, v in pairs
        if value.dtype != v.dtype.as_numpy_dtype
    ]
    if wrong_dtype:
        raise errors.InvalidArgumentError(
            None, None, "The checkpoint does not match these variables: " + "; ".join(wrong_dtype)
        )
    wrong_shape = [
        f"{prefix}{name}: saved shape {value.shape}, variable shape {tuple(v._shape)}"
        for name, value, v in pairs
        if value.shape != tuple(v._shape)
    ]
    if wrong_shape:
        raise ValueError("The checkpoint does not match these variables: " + "; ".join(wrong_shape))
    for name, value in values.items():
        variable = variables.get(name)
        if variable is not None:
            variable.assign(value)


def _join(path: str, key: Any) -> str:
    return f"{path}/{key}" if path else str(key)


class _Walk:
    """One walk of an object graph: its variables, modules and Keras-style owners, keyed by path."""

    def __init__(self) -> None:
        self.variables: dict[str, Variable] = {}
        self.owners: dict[str, Any] = {}  # path -> tf.Module or Checkpoint, for variables attached later
        self.restore_later: dict[str, tuple[Any, Callable]] = {}  # path -> (object, restore_later)
        self.aliases: dict[str, str] = {}  # a second path to an object -> the path it was first found at
        self.moved_lists: list["ListWrapper"] = []  # tracked lists whose trackables were replaced or moved
        self._seen: set[int] = set()
        self._first_path: dict[int, str] = {}

    def visit(self, obj: Any, path: str) -> None:
        """Records the variables reachable from `obj`, keyed by their paths under `path`.

        The walk is breadth first, as TF's object graph: an object reachable by
        several paths is saved under its shortest one (the first in sorted order
        among equals), and the others become aliases.
        """
        queue = deque([(obj, path)])
        while queue:
            queue.extend(self._children(*queue.popleft()))

    def _children(self, obj: Any, path: str) -> list[tuple[Any, str]]:
        """Records `obj` if it holds state itself; returns what to visit next under it."""
        if id(obj) in self._seen:
            if self._first_path.get(id(obj)) not in (None, path):
                self.aliases[path] = self._first_path[id(obj)]
            return []
        self._first_path.setdefault(id(obj), path)
        if isinstance(obj, Variable):
            self._seen.add(id(obj))
            self.variables[path] = obj
            return []
        for base_type, variables_of, restore_later in _trackables:
            if isinstance(obj, base_type):
                self._seen.add(id(obj))
                for name, variable in variables_of(obj).items():
                    self.variables[_join(path, name)] = variable
                if restore_later is not None:
                    self.restore_later[path] = (obj, restore_later)
                return []
        if isinstance(obj, Checkpoint):
            self._seen.add(id(obj))
            self.owners[path] = obj
            tracked = {k: v for k, v in obj._objects.items() if k != "root"}
            if "root" not in obj._objects:  # as TF: with a root, attributes set on the checkpoint are not saved
                tracked.update({k: v for k, v in vars(obj).items() if not k.startswith("_")})
            children = [(tracked[name], _join(path, name)) for name in sorted(tracked)]
            if "root" in obj._objects:  # as TF: the root's children are the checkpoint's own
                children += self._children(obj._objects["root"], path)
            return children
        if isinstance(obj, dict):
            return [(obj[key], _join(path, key)) for key in sorted(obj, key=str)]
        if isinstance(obj, (list, tuple)):
            if isinstance(obj, ListWrapper) and obj._moved:
                self.moved_lists.append(obj)
            return [(item, _join(path, index)) for index, item in enumerate(obj)]
        attributes = getattr(obj, "__dict__", None)
        if attributes is None or isinstance(obj, type):
            return []
        self._seen.add(id(obj))
        if isinstance(obj, Module):
            self.owners[path] = obj
        return [
            (attributes[key], _join(path, key))
            for key in sorted(attributes)
            if not key.startswith("__") and key != _PENDING
        ]


def _resolve(path: str, aliases: dict[str, str]) -> str:
    """The saved path of the object at `path`, following the aliases of it or of an object above it."""
    for _ in range(len(aliases) + 1):
        parts = path.split("/")
        for cut in range(len(parts), 0, -1):
            head = "/".join(parts[:cut])
            if head in aliases:
                path = "/".join([aliases[head]] + parts[cut:])
                break
        else:
            return path
    return path


def _owner_of(key: str, owners: dict[str, Any]) -> str | None:
    """The longest path in `owners` that `key` lies under (the root's path is "")."""
    best = None
    for path in owners:
        if (path == "" or key.startswith(path + "/")) and (best is None or len(path) > len(best)):
            best = path
    return best


def _defer(walk: _Walk, pending: dict[str, np.ndarray]) -> set[str]:
    """Hands saved values that no variable took to the objects that may create those variables later.

    Keras-style owners get theirs through their `restore_later`; a `tf.Module` or
    a `Checkpoint` keeps its own until a matching variable is assigned to one of
    its attributes (TF's deferred restoration). Returns the keys handed over.
    """
    handed = set(pending)
    for owner_path, (owner, restore_later) in walk.restore_later.items():
        prefix = owner_path + "/" if owner_path else ""
        mine = {key: value for key, value in pending.items() if key.startswith(prefix)}
        if mine:
            restore_later(owner, {key[len(prefix) :]: value for key, value in mine.items()})
            for key in mine:
                del pending[key]
    for key in list(pending):
        found = _owner_of(key, walk.owners)
        if found is not None:
            owner = walk.owners[found]
            relative = key[len(found) + 1 :] if found else key
            owner.__dict__.setdefault(_PENDING, {})[relative] = pending.pop(key)
    return handed - set(pending)


def restore_attached(owner: Module | Checkpoint, name: str, value: object) -> None:
    """Restores the saved values that `owner` holds for its attribute `name`, just set to `value`.

    `tf.Module` and `Checkpoint` call this when an attribute is assigned (or a
    list attribute of a checkpoint changes) while the object holds values from a
    restore that ran before those variables existed.

    Raises:
      ValueError: if a saved value's shape or dtype differs from the new variable's.
    """
    pending = owner.__dict__.get(_PENDING)
    if not pending:
        return
    mine = {key: saved for key, saved in pending.items() if key == name or key.startswith(name + "/")}
    if not mine:
        return
    walk = _Walk()
    walk.visit(value, name)
    matched = {key: saved for key, saved in mine.items() if key in walk.variables}
    owner_name = getattr(owner, "name", None)
    restore_values(walk.variables, matched, f"{owner_name}/" if isinstance(owner_name, str) else "")
    handed = _defer(walk, {key: saved for key, saved in mine.items() if key not in matched})
    for key in mine:
        if key in matched or key in handed:  # the rest stays here, for variables attached later still
            del pending[key]


register_trackable(OwnedIterator, OwnedIterator.checkpoint_variables)
register_trackable(Generator, Generator.checkpoint_variables)


def _trackable(value: Any) -> bool:
    """Whether TF could track `value` in a checkpoint: state-holding objects and containers, not plain values."""
    if isinstance(value, (Variable, Module, Checkpoint, list, tuple, dict)):
        return True
    if any(isinstance(value, base_type) for base_type, _, _ in _trackables):
        return True
    # tapeshim's and Keras's own stateful objects (dataset iterators, optimizers, metrics) are trackable in TF
    return type(value).__module__.split(".")[0] in ("tapeshim", "keras")


class ListWrapper(list):
    """A list attribute of a `Checkpoint` or `tf.Module`, as TF's `ListWrapper`: variables added later are restored.

    Args:
      items: the list's items.
      owner: the checkpoint or module holding the list.
      name: the attribute's name.
    """

    def __init__(self, items: Any, owner: Any, name: str) -> None:
        super().__init__(items)
        self._owner, self._name = owner, name
        self._moved = False  # as TF: a list whose trackables were replaced, deleted or moved cannot be saved

    def _changed(self) -> None:
        if self._owner.__dict__.get(_PENDING):
            restore_attached(self._owner, self._name, self)

    def _note_moved(self, items: Any) -> None:
        if any(_trackable(item) for item in items):
            self._moved = True

    def __delitem__(self, index: Any) -> None:
        self._note_moved(self[index] if isinstance(index, slice) else [self[index]])
        super().__delitem__(index)

    def pop(self, index: Any = -1) -> Any:
        self._note_moved([self[index]])
        return super().pop(index)

    def remove(self, item: Any) -> None:
        self._note_moved([item])
        super().remove(item)

    def reverse(self) -> None:
        self._note_moved(self)
        super().reverse()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._note_moved(self)
        super().sort(*args, **kwargs)

    def append(self, item: Any) -> None:
        super().append(item)
        self._changed()

    def extend(self, items: Any) -> None:
        super().extend(items)
        self._changed()

    def insert(self, index: Any, item: Any) -> None:
        self._moved = True
        super().insert(index, item)
        self._changed()

    def __setitem__(self, index: Any, item: Any) -> None:
        self._note_moved(self[index] if isinstance(index, slice) else [self[index]])
        super().__setitem__(index, item)
        self._changed()

    # list's `__add__` returns a plain list, while `+=` keeps the wrapper (as TF's ListWrapper): mypy
    # wants the two to agree.
    def __iadd__(self, items: Iterable[Any]) -> "ListWrapper":  # type: ignore[misc]
        super().__iadd__(items)
        self._changed()
        return self

    def __repr__(self) -> str:
        return f"ListWrapper({list.__repr__(self)})"


class DictWrapper(dict):
    """A dict attribute of a `tf.Module`, as TF's `_DictWrapper`: variables added later are restored.

    Args:
      items: the dict's items.
      owner: the module holding the dict.
      name: the attribute's name.
    """

    def __init__(self, items: Any, owner: Any, name: str) -> None:
        super().__init__(items)
        self._owner, self._name = owner, name

    def _changed(self) -> None:
        if self._owner.__dict__.get(_PENDING):
            restore_attached(self._owner, self._name, self)

    def __setitem__(self, key: Any, item: Any) -> None:
        super().__setitem__(key, item)
        self._changed()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self._changed()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        item = super().setdefault(key, default)
        self._changed()
        return item


def track_container(value: object, owner: Module | Checkpoint, name: str) -> object:
    """`value` wrapped for tracking when it is a plain list or dict assigned to `owner.name`, else `value`.

    As TF, a `tf.Module` keeps its list and dict attributes as trackable wrappers, so
    variables appended to them after a restore receive their saved values.
    """
    if value.__class__ is list:
        return ListWrapper(value, owner, name)
    if value.__class__ is dict and name != _PENDING:
        return DictWrapper(value, owner, name)
    return value


class CheckpointLoadStatus:
    """What a restore matched, as TF's load status object."""

    def __init__(self, unused: list[str], missing: list[str]) -> None:
        self._unused, self._missing = unused, missing

    def assert_consumed(self) -> "CheckpointLoadStatus":
        """Raises AssertionError unless every saved value and every variable was matched."""
        if self._unused or self._missing:
            raise AssertionError(
                f"Unresolved object in checkpoint: saved values not restored {self._unused}, variables without a "
                f"saved value {self._missing}"
            )
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
      root: an optional root object; its attributes are saved at the top level, as in TF.
      **kwargs: the objects to track (modules, variables, objects with variable
        attributes, lists and dicts of them).
    """

    def __init__(self, root: Any = None, **kwargs: Any) -> None:
        for name, value in kwargs.items():
            if not _trackable(value):
                raise ValueError(
                    f"`Checkpoint` was expecting {name} to be a trackable object (a variable, a `tf.Module`, a "
                    f"Keras object, a checkpoint, or a list or dict of them), got {value!r}."
                )
        self._objects: dict[str, Any]
        self._save_counter: Variable | None
        object.__setattr__(self, "_objects", dict(kwargs))
        if root is not None:
            self._objects["root"] = root
        object.__setattr__(self, "_save_counter", None)
        for name, value in kwargs.items():  # as TF: `ckpt.step` is the object passed as `step=`
            object.__setattr__(self, name, ListWrapper(value, self, name) if type(value) is list else value)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and type(value) is list:
            value = ListWrapper(value, self, name)
        object.__setattr__(self, name, value)
        if not name.startswith("_") and self.__dict__.get(_PENDING):  # a restore ran before this was attached
            restore_attached(self, name, value)

    @property
    def save_counter(self) -> Variable:
        """The number of `save` calls so far (an int64 variable, created on first use, as in TF)."""
        counter = self._save_counter
        if counter is None:
            counter = Variable(0, dtype=dtypes.int64, trainable=False, name="save_counter")
            object.__setattr__(self, "_save_counter", counter)
        return counter

    def _walk(self) -> _Walk:
        walk = _Walk()
        walk.visit(self, "")
        walk.variables.pop("save_counter", None)
        if self._save_counter is not None:
            walk.variables["save_counter"] = self._save_counter
        return walk

    def write(self, file_prefix: str, options: CheckpointOptions | None = None) -> str:
        """Writes the checkpoint to `file_prefix` (atomically) and returns the prefix.

        Raises:
          OpError: the class TF gives a file system failure (`PermissionDeniedError`,
            `ResourceExhaustedError` for a full disk, ...).
          ValueError: if a tracked list's variables or modules were replaced, deleted or
            moved (TF saves append-only lists only).
        """
        file_prefix = os.fspath(file_prefix)
        walk = self._walk()
        if walk.moved_lists:
            raise ValueError(
                f"Unable to save the object {walk.moved_lists[0]!r} (a list wrapper constructed to track trackable "
                "TensorFlow objects). A list element was replaced (__setitem__, __setslice__), deleted "
                "(__delitem__, __delslice__), or moved (sort). In order to support restoration on object "
                "creation, tracking is exclusively for append-only data structures."
            )
        values = {path: np.asarray(v._value) for path, v in walk.variables.items()}
        checkpoint_io.write_values(file_prefix, values, walk.aliases)
        return file_prefix

    def save(self, file_prefix: str, options: CheckpointOptions | None = None) -> str:
        """Writes `<file_prefix>-<n>` for the next save number n and records it as the latest."""
        self.save_counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(self.save_counter.numpy())}")
        checkpoint_io.write_state(os.path.dirname(path) or ".", path, [path])  # as TF: only the newest is listed
        return path

    def read(self, save_path: str, options: CheckpointOptions | None = None) -> CheckpointLoadStatus:
        """Restores the variables from `save_path`."""
        return self.restore(save_path)

    def restore(self, save_path: str | None, options: CheckpointOptions | None = None) -> CheckpointLoadStatus:
        """Restores every tracked variable from `save_path` (None restores nothing).

        A variable reachable by several paths restores through any of them. Saved
        values for variables that do not exist yet are restored when they are
        created: by a Keras layer's build, or when a `tf.Module` or a `Checkpoint`
        gets them as an attribute (TF's deferred restoration).

        Raises:
          NotFoundError: if there is no checkpoint at `save_path`.
          DataLossError: if `save_path` is a directory.
          OpError: if the checkpoint cannot be read or is damaged.
          InvalidArgumentError: naming every variable whose saved dtype differs.
          ValueError: naming every variable whose saved shape differs. No variable
            changes when either is raised.
        """
        self.save_counter  # noqa: B018 - TF creates it to restore it
        walk = self._walk()
        variables = walk.variables
        if save_path is None:
            return CheckpointLoadStatus([], sorted(variables))
        save_path = os.fspath(save_path)
        stored, aliases = checkpoint_io.read_checkpoint(save_path)
        saved_path = {path: _resolve(path, aliases) if path not in stored else path for path in variables}
        restore_values(variables, {path: stored[key] for path, key in saved_path.items() if key in stored})
        consumed = {key for key in saved_path.values() if key in stored}
        pending = {key: value for key, value in stored.items() if key not in consumed}
        for alias, target in aliases.items():  # objects attached later may come back through another path
            pending.update(
                {
                    alias + key[len(target) :]: value
                    for key, value in stored.items()
                    if key not in consumed and (key == target or key.startswith(target + "/"))
                }
            )
        handed = {_resolve(key, aliases) for key in _defer(walk, pending)}
        unused = sorted(set(stored) - consumed - handed)
        missing = sorted(path for path, key in saved_path.items() if key not in stored)
        return CheckpointLoadStatus(unused, missing)


class CheckpointManager:
    """Numbered checkpoints in a directory, keeping the newest `max_to_keep`, as `tf.train.CheckpointManager`."""

    def __init__(
        self,
        checkpoint: Checkpoint,
        directory: str,
        max_to_keep: int | None,
        keep_checkpoint_every_n_hours: float | None = None,
        checkpoint_name: str = "ckpt",
        step_counter: Variable | None = None,
        checkpoint_interval: int | None = None,
        init_fn: Callable[[], object] | None = None,
    ) -> None:
        if max_to_keep is not None:
            if not isinstance(max_to_keep, (int, np.integer)) or isinstance(max_to_keep, bool):
                raise TypeError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep!r}.")
            if max_to_keep <= 0:
                raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._init_fn = init_fn
        self._prefix = os.path.join(self._directory, checkpoint_name)
        latest, paths, times = checkpoint_io.read_state_times(self._directory)
        # As TF: only checkpoints a manager saved (those with a save time) are its own to keep or delete.
        self._times = {p: t for p, t in zip(paths, times) if checkpoint_io.exists(p)}
        self._checkpoints = list(self._times)
        self._latest = latest

    @property
    def directory(self) -> str:
        """The directory the checkpoints are saved in."""
        return self._directory

    @property
    def checkpoints(self) -> list[str]:
        """The kept checkpoints, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint in the directory (also one saved without a manager), or None."""
        return self._latest

    def restore_or_initialize(self) -> str | None:
        """Restores the latest checkpoint and returns its path, or else runs `init_fn` and returns None."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def save(
        self,
        checkpoint_number: int | None = None,
        check_interval: bool = True,
        options: CheckpointOptions | None = None,
    ) -> str:
        """Saves `<directory>/<name>-<n>` and deletes checkpoints beyond `max_to_keep`.

        As TF, the state file names the new checkpoint before any old one is
        deleted, and is written again afterwards without the deleted ones, so a
        crash at any point leaves `latest_checkpoint` pointing at a whole checkpoint.

        Raises:
          OpError: the class TF gives a file system failure.
        """
        self._checkpoint.save_counter.assign_add(1)
        number = int(self._checkpoint.save_counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        path = self._checkpoint.write(f"{self._prefix}-{number}")
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        self._times[path] = time.time()
        self._latest = path
        checkpoint_io.write_state(self._directory, path, self._checkpoints, [self._times[p] for p in self._checkpoints])
        if self._max_to_keep is None or len(self._checkpoints) <= self._max_to_keep:
            return path
        while len(self._checkpoints) > self._max_to_keep:
            old = self._checkpoints.pop(0)
            self._times.pop(old, None)
            try:
                os.remove(old + _SUFFIX)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise errors.from_os_error(exc) from exc
        checkpoint_io.write_state(self._directory, path, self._checkpoints, [self._times[p] for p in self._checkpoints])
        return path
