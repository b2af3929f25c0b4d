"""Whether a user's Python decided on a symbolic size while a trace ran it.

A Keras call's shape family (`keras_program_families`) traces the call once
with symbolic sizes (`jax.export.symbolic_shape`) and serves every later size
from that trace. That is sound only where the Python it ran decided nothing on
those sizes that does not hold for every size. JAX's symbolic dimensions
answer some questions for all sizes at once, and wrongly: `n == 8` is False,
`n % 2` is an expression that Python takes as true, and `isinstance(n, int)`
is False. tapeshim's `TensorShape` (and `int_shape`, `dimension_at_index`, a
`TensorSpec`) shows a symbolic size as None, as TF's graphs show an unknown
one, where TF's eager calls see the size. Keras's own layers are written for
an unknown batch dimension (their functional build has one), and a comparison
JAX cannot decide for every size (`n > 5`) raises, which refuses the family.

So a call running a user's Python (a subclassed model, a layer of the user's
own, a `Lambda`'s function) has a family only where the user asks for it
(`enabled`: `TAPESHIM_USER_FAMILIES=1`), and its symbolic trace is watched
(`watching`): a profile function on the calling thread (`sys.setprofile`, for
that trace only; none while a profiler holds the hook, `hook_taken`) marks the
trace as deciding on its sizes (`Watch.decided`) where the user's code
- calls a method of a symbolic dimension (`n == 8`, `n - 1`, `n in (8, 16)`,
  `str(n)`, `hash(n)`, `copy.deepcopy(n)`);
- reads a size tapeshim shows as unknown (`t.shape[0]`, `t.shape.as_list()`,
  `int_shape(t)`), or has shapes holding one compared
  (`tf.TensorShape([8, 3]) == x.shape`);
- calls `isinstance`, or names `type` (a symbolic size is no int);
- keeps a symbolic size in a layer's attribute (`self.seen = x.shape`);
and wherever JAX's error for a value or a size asked of a trace is made (the
user's code may catch it: `try: n = int(tf.shape(x)[0])`). Any of these
refuses the family, and the call is traced per shape, as TF's eager calls run
at each size. Passing sizes on untouched (Keras's `ops.shape`, then a reshape
to them) and reading a known size (`x.shape[-1] // 2`) decide nothing.

Code is the user's by its file: not under JAX's, Keras's, tapeshim's or their
helpers' packages. NumPy's and the standard library's code, and tapeshim's
code handing sizes on (`_HANDING_ON`: its shapes, `int_shape`, AutoGraph's
converted calls), count as their caller's. Not seen, which is why the option
is off by default: a `match` class pattern (`case int()`), `n.__class__ is
int`, a symbolic size kept in a list or an object other than a layer
(`sizes.append(n)`: Python stores it without calling anything), and a user's
code compiled to C. JAX's Python tracer holds the profile hook out of sight
(`sys.getprofile()` is None): a watched trace ends its Python events on the
thread.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from typing import Any, Iterator

import jax
from jax import export

from tapeshim._src.shape import TensorShape

_ON = ("1", "on", "true", "yes")


def enabled() -> bool:
    """Whether calls running a user's Python may have shape families (`TAPESHIM_USER_FAMILIES=1`; off by
    default: the watch cannot see every decision, see the module's docstring)."""
    return os.environ.get("TAPESHIM_USER_FAMILIES", "").strip().lower() in _ON


def _package_directory(name: str) -> str | None:
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) + os.sep if path else None


_FRAMEWORK_DIRECTORIES = tuple(
    d for d in map(_package_directory, ("jax", "jaxlib", "keras", "tapeshim", "ml_dtypes", "optree", "opt_einsum")) if d
)
"""Where the code that decides only what holds for every size (or raises) lives: JAX's, Keras's, tapeshim's and
their helpers' packages, by directory (a user's package named alike is the user's). But see `_HANDING_ON`."""
_STANDARD_LIBRARY = os.path.dirname(contextlib.__file__) + os.sep
_PASSING_DIRECTORIES = tuple(d for d in (_package_directory("numpy"), _STANDARD_LIBRARY) if d)
"""NumPy's and the standard library's code, which computes on values handed to it: its uses are its caller's
(not the packages installed beside the standard library: `_kind`)."""
_HANDING_ON = tuple(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    for name in ("shape.py", "keras_legacy_backend.py", "api_compat.py", "tensor_spec.py", "autograph" + os.sep)
)
"""tapeshim's code that shows a symbolic size to its caller as unknown (None), as TF's graphs do (a
`TensorShape`'s comparisons, `int_shape`, `dimension_at_index`, a `TensorSpec`), or runs the caller's code
(AutoGraph's converted calls): its uses are its caller's."""
_USER, _FRAMEWORK, _PASSING = 0, 1, 2
_kinds: dict[types.CodeType, int] = {}


def _kind(code: types.CodeType) -> int:
    kind = _kinds.get(code)
    if kind is None:
        filename = code.co_filename
        if filename.startswith("<frozen "):  # (the standard library's frozen modules: importlib's, os')
            kind = _PASSING
        elif (filename := os.path.abspath(filename)).startswith(_HANDING_ON):
            kind = _PASSING
        elif filename.startswith(_FRAMEWORK_DIRECTORIES):
            kind = _FRAMEWORK
        elif filename.startswith(_PASSING_DIRECTORIES) and not _installed_package(filename):
            kind = _PASSING
        else:
            kind = _USER
        if len(_kinds) > 65536:
            _kinds.clear()
        _kinds[code] = kind
    return kind


def _functions(cls: type) -> dict[types.CodeType, str]:
    """The code objects of `cls`'s own functions and properties, by name."""
    found: dict[types.CodeType, str] = {}
    for name, member in vars(cls).items():
        if isinstance(member, property):
            member = member.fget
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if isinstance(member, types.FunctionType):
            found[member.__code__] = name
    return found


_DIMENSION = type(export.symbolic_shape("n")[0])
_DIMENSION_CODES = frozenset(_functions(_DIMENSION))
"""Every Python method of JAX's symbolic dimension (comparisons, arithmetic, hashing, text, copies)."""
_SHAPE_CODES = _functions(TensorShape)
_SHAPE_SIZELESS = frozenset(
    (
        "_known", "rank", "ndims", "__len__", "__bool__", "with_rank", "with_rank_at_least", "with_rank_at_most",
        "assert_has_rank", "assert_same_rank",
    )
)  # fmt: skip
"""`TensorShape`'s methods that read no dimension's size."""
_SETTERS: set[types.CodeType] = set()
"""The `__setattr__`s of Keras's layers and tapeshim's (`_attribute_setters`): a user's call keeping a symbolic
size in a layer's attribute hands it to the user's Python after the trace."""


def _attribute_setters() -> set[types.CodeType]:
    if not _SETTERS:
        from tapeshim._src.keras_bridge import TapeLayerMixin  # import cycle: keras_bridge -> ... -> here
        from tapeshim._src.keras_compat import keras

        for cls in (TapeLayerMixin, keras.layers.Layer):
            setter = vars(cls).get("__setattr__")
            if isinstance(setter, types.FunctionType):
                _SETTERS.add(setter.__code__)
    return _SETTERS


def _installed_package(filename: str) -> bool:
    """Whether `filename` is a package's installed beside the standard library (a user's, for this module)."""
    rest = filename[len(_STANDARD_LIBRARY) :] if filename.startswith(_STANDARD_LIBRARY) else ""
    return "site-packages" in rest or "dist-packages" in rest


def _users(frame: Any) -> bool:
    """Whether `frame` is a user's code, or code handing on to one (see the module's docstring)."""
    while frame is not None:
        kind = _kind(frame.f_code)
        if kind != _PASSING:
            return kind == _USER
        frame = frame.f_back
    return True


def _inconclusive_error() -> type:
    """The class JAX raises for a question about a symbolic size it cannot answer for every size."""
    try:
        int(export.symbolic_shape("n")[0])
    except Exception as exc:  # noqa: BLE001 - the class JAX raises, whichever it is
        return type(exc)
    return jax.errors.InconclusiveDimensionOperation


_ERRORS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
    _inconclusive_error(),
)
"""JAX's errors of a trace asking a symbolic size or a traced value for a number (and their subclasses, tapeshim's
`ValueOfJaxTrace`): raised and caught in the user's code (`try: n = int(tf.shape(x)[0]) except ...`), one
decides which branch runs. Made anywhere in a watched trace, one counts as a decision."""


def _holds_symbolic(value: Any) -> bool:
    """Whether `value` is a symbolic size, a shape with one (a tuple, a list, a `TensorShape` showing it as
    unknown), or a tuple, list or dict holding such a shape."""
    if isinstance(value, _DIMENSION):
        return True
    if isinstance(value, TensorShape):
        return value._dims is not None and None in value._dims
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return any(
            isinstance(item, (_DIMENSION, TensorShape, tuple, list)) and _holds_symbolic(item) for item in value[:64]
        )
    return False


def _reads_unknown_size(frame: Any, method: str) -> bool:
    """Whether a `TensorShape` method (running in `frame`) reads a size its shape, or a shape it is given, shows
    as unknown, or makes a shape of symbolic sizes (a comparison with a tuple of them)."""
    if method in _SHAPE_SIZELESS:
        return False
    local = frame.f_locals
    if method == "__init__":
        return _holds_symbolic(local.get("dims"))
    if method == "__getitem__":
        dims, key = getattr(local.get("self"), "_dims", None), local.get("key")
        if dims is None or None not in dims:
            return False
        if isinstance(key, slice):
            return None in dims[key]
        if isinstance(key, int) and -len(dims) <= key < len(dims):
            return dims[key] is None
        return True
    return any(_holds_symbolic(value) for value in local.values())


class Watch:
    """A profile function noting a user's use of a symbolic size (`decided`)."""

    __slots__ = ("decided", "_setters", "_typing")

    def __init__(self) -> None:
        self.decided = False
        self._setters = _attribute_setters()
        self._typing: dict[types.CodeType, bool] = {}
        """Per code object run: whether it is a user's naming `type` (`type(n) is int`)."""

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if self.decided:
            return
        if event == "c_call":
            # `isinstance(n, int)` calls nothing of a symbolic size: any check of types in a user's code counts
            if arg is isinstance and _users(frame):
                self.decided = True
            return
        if event != "call":
            return
        code = frame.f_code
        if code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), _ERRORS):
            self.decided = True
        elif code in _DIMENSION_CODES:
            self.decided = _users(frame.f_back)
        elif code in self._setters:
            self.decided = _holds_symbolic(frame.f_locals.get("value")) and _users(frame.f_back)
        elif code in _SHAPE_CODES:
            self.decided = _reads_unknown_size(frame, _SHAPE_CODES[code]) and _users(frame.f_back)
        else:
            typing = self._typing.get(code)
            if typing is None:  # (calling a type is no C function call: the user's code naming it counts)
                typing = self._typing[code] = "type" in code.co_names and _kind(code) == _USER
            self.decided = typing


class Unwatchable(RuntimeError):
    """A profiler or another profile function holds this thread's profile hook: a trace cannot be watched."""


class Decided(RuntimeError):
    """A watched trace ran a user's Python that decided on a symbolic size: the trace is valid at no size."""


def hook_taken() -> bool:
    """Whether another profile function holds the calling thread's hook (a profiler runs): `watching` would
    raise `Unwatchable`."""
    current = sys.getprofile()
    return current is not None and not isinstance(current, Watch)


@contextlib.contextmanager
def watching() -> Iterator[Watch]:
    """Watches the Python the calling thread runs inside the context (see the module's docstring); inside
    another watched context, that context's watch.

    Raises:
      Unwatchable: when the thread already has a profile function of another kind (a profiler runs).
    """
    current = sys.getprofile()
    if isinstance(current, Watch):
        yield current
        return
    if current is not None:
        raise Unwatchable("the thread's profile hook is taken")
    watch = Watch()
    sys.setprofile(watch)
    try:
        yield watch
    finally:
        sys.setprofile(None)
