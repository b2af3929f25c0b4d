"""Whether a user's Python decided on a symbolic size while a trace ran it.

A Keras call's shape family (`keras_program_families`) traces the call once
with symbolic sizes (`jax.export.symbolic_shape`) and serves every later size
from that trace. That is sound only where the Python it ran decided nothing on
those sizes that does not hold for every size. JAX's symbolic dimensions
answer some questions for all sizes at once, and wrongly: `n == 8` is False,
`n % 2` is an expression that Python takes as true, and `isinstance(n, int)`
is False. tapeshim's `TensorShape` (and `keras.backend.int_shape`) shows a
symbolic size as None, as TF's graphs show an unknown one, where TF's eager
calls see the size. Keras's own layers are written for an unknown batch
dimension (their functional build has one), and a comparison JAX cannot
decide for every size (`n > 5`) raises, which refuses the family.

So a trace running a user's Python (a subclassed model, a layer of the user's
own, a `Lambda`'s function) is watched (`watching`): a profile function on the
calling thread (`sys.setprofile`, for that trace only; none is set while a
profiler holds the hook, `hook_taken`) marks the trace as deciding on its sizes
(`Watch.decided`) where the user's code
- calls a method of a symbolic dimension (`n == 8`, `n - 1`, `n in (8, 16)`,
  `str(n)`, `hash(n)`, `copy.deepcopy(n)`);
- reads a size a tapeshim `TensorShape` shows as unknown (`t.shape[0]`,
  `t.shape.as_list()`, `int_shape(t)`), or has one compare shapes holding one
  (`tf.TensorShape([8, 3]) == x.shape`);
- calls `isinstance`, or a function reading `shape` calls `type`: a symbolic
  size is no int;
- keeps a symbolic size in a layer's attribute (`self.seen = x.shape`), where
  its Python would read it after the call.
Any of these refuses the family, and the call is traced per shape, as TF's
eager calls run at each size. Passing sizes on untouched (Keras's
`ops.shape`, then a reshape to them) and reading a known size
(`x.shape[-1] // 2`) decide nothing.

A use is the user's where the first code up the stack that is neither NumPy's,
nor the standard library's, nor tapeshim's shape code handing a size on
(`_HANDING_ON`) is neither JAX's, Keras's nor tapeshim's: `np.prod(x.shape) ==
24` in a user's `call` is the user's, the comparisons of shapes inside Keras's
or JAX's functions are not. Not seen: a user's code compiled to C (no Python
frames), and a symbolic size kept in a list or in an object other than a layer
(`sizes.append(n)`): Python stores it without calling anything.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any, Iterator

from jax import export

from tapeshim._src.shape import TensorShape

_FRAMEWORKS = frozenset(("jax", "jaxlib", "keras", "tapeshim", "ml_dtypes", "optree", "opt_einsum", "tree", "namex"))
"""Top-level modules whose code decides only what holds for every size, or raises (but see `_HANDING_ON`)."""
_PASSING = frozenset(
    ("numpy", "functools", "copy", "abc", "typing", "contextlib", "collections", "dataclasses", "enum", "weakref")
) | frozenset(("reprlib", "string", "pprint", "statistics", "heapq", "bisect"))
"""Top-level modules (with Python code) that compute on values handed to them: their uses are their caller's."""
_HANDING_ON = frozenset(("tapeshim._src.shape", "tapeshim._src.keras_legacy_backend"))
"""tapeshim's modules that show a symbolic size to their caller as unknown (None), as TF's graphs do: a
`TensorShape`'s comparisons and `keras.backend.int_shape`. Their reads are their caller's."""


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
    ("_known", "rank", "ndims", "__len__", "__bool__", "with_rank", "with_rank_at_least", "with_rank_at_most")
) | frozenset(("assert_has_rank", "assert_same_rank"))
"""`TensorShape`'s methods that read no dimension's size."""
_SETTERS: dict[types.CodeType, str] = {}
"""The `__setattr__`s of Keras's layers and tapeshim's (`_attribute_setters`): a user's call keeping a symbolic
size in a layer's attribute hands it to the user's Python after the trace."""


def _attribute_setters() -> dict[types.CodeType, str]:
    if not _SETTERS:
        from tapeshim._src.keras_bridge import TapeLayerMixin  # import cycle: keras_bridge -> ... -> here
        from tapeshim._src.keras_compat import keras

        for cls in (TapeLayerMixin, keras.layers.Layer):
            setter = vars(cls).get("__setattr__")
            if isinstance(setter, types.FunctionType):
                _SETTERS[setter.__code__] = "__setattr__"
    return _SETTERS


def _module_of(frame: Any) -> str:
    return str(frame.f_globals.get("__name__") or "")


def _users(frame: Any) -> bool:
    """Whether `frame` is a user's code, or code handing on to one (see the module's docstring)."""
    while frame is not None:
        module = _module_of(frame)
        top = module.partition(".")[0]
        if top not in _PASSING and module not in _HANDING_ON:
            return top not in _FRAMEWORKS
        frame = frame.f_back
    return True


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
        """Per code object run: whether it is a user's that reads a shape and calls `type` (`type(n) is int`)."""

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if self.decided:
            return
        if event == "c_call":
            # `isinstance(n, int)` calls nothing of a symbolic size: a user's check of types in code reading shapes
            if arg is isinstance and "shape" in frame.f_code.co_names and _users(frame):
                self.decided = True
            return
        if event != "call":
            return
        code = frame.f_code
        if code in _DIMENSION_CODES:
            self.decided = _users(frame.f_back)
        elif code in self._setters:
            self.decided = _holds_symbolic(frame.f_locals.get("value")) and _users(frame.f_back)
        elif code in _SHAPE_CODES:
            self.decided = _reads_unknown_size(frame, _SHAPE_CODES[code]) and _users(frame.f_back)
        else:
            typing = self._typing.get(code)
            if typing is None:  # (calling a type is no C function call: the code is judged as a whole)
                names = code.co_names
                typing = self._typing[code] = "type" in names and "shape" in names and _users(frame)
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
