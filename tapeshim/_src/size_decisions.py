"""Whether a user's Python decided on a symbolic size while a trace ran it.

A Keras call's shape family (`keras_program_families`) traces the call once
with symbolic sizes (`jax.export.symbolic_shape`) and serves every later size
from that trace. That is sound only where the Python it ran decided nothing on
those sizes that does not hold for every size. JAX's symbolic dimensions
answer some questions for all sizes at once, and wrongly: `n == 8` is False,
and `n % 2` is an expression that Python takes as true, so a layer deciding
`if x.shape[0] == 8` would take the same branch at every size, 8 included.
tapeshim's `TensorShape` shows a symbolic dimension as None, as TF's graphs do
an unknown one, where TF's eager calls see the size. Keras's and tapeshim's
own code only decides what holds for every size (their layers are written for
an unknown batch dimension); a comparison that does not hold for all sizes
(`n > 5`) raises, and the family is refused.

So a trace running a user's Python (a subclassed model, a layer of the user's
own, a `Lambda`'s function) is watched (`watching`): a profile function on the
calling thread (`sys.setprofile`, for that trace only; none is set if a
profiler already is) notes every use of a symbolic dimension from the user's
code, and every read of a tapeshim shape's unknown dimension there. Any such
use (`n == 8`, `n - 1`, `n in (8, 16)`, `str(n)`, `x.shape.as_list()`) marks
the trace as deciding on its sizes (`Watch.decided`), and the family's caller
refuses it: the call is traced at each size, as TF's eager calls run at each
size. Passing the dimensions on untouched (Keras's `ops.shape`, then a
reshape to them) and reading a known one (`x.shape[-1]`) decide nothing.

A use counts as the user's when the first code up the stack that is not
NumPy's or the standard library's is neither JAX's, Keras's nor tapeshim's:
`np.prod(x.shape) == 8` in a user's `call` is the user's, the comparisons of
shapes inside Keras's or JAX's own functions are not.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Any, Iterator

from jax import export

from tapeshim._src.shape import TensorShape

_FRAMEWORKS = frozenset(("jax", "jaxlib", "keras", "tapeshim", "ml_dtypes", "optree", "opt_einsum", "tree", "namex"))
"""Top-level modules whose code decides only what holds for every size (or raises)."""
_PASSING = frozenset(
    ("numpy", "math", "functools", "operator", "itertools", "builtins", "copy", "abc", "typing", "contextlib")
) | frozenset(("collections", "dataclasses", "enum", "weakref", "reprlib", "string", "pprint"))
"""Top-level modules that compute on values handed to them: their uses are their caller's."""


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


_DIMENSION_CODES = frozenset(_functions(type(export.symbolic_shape("n")[0])))
"""The Python methods of JAX's symbolic dimension (comparisons, arithmetic, hashing, text)."""
_SHAPE_CODES = _functions(TensorShape)
_SHAPE_SIZELESS = frozenset(
    ("__init__", "_known", "rank", "ndims", "__len__", "__bool__", "with_rank", "with_rank_at_least")
) | frozenset(("with_rank_at_most", "assert_has_rank", "assert_same_rank"))
"""`TensorShape`'s methods that read no dimension's size."""


def _module_of(frame: Any) -> str:
    return str(frame.f_globals.get("__name__") or "").partition(".")[0]


def _from_users_code(frame: Any) -> bool:
    """Whether the call running in `frame` was made by a user's code (see the module's docstring)."""
    caller = frame.f_back
    while caller is not None and _module_of(caller) in _PASSING:
        caller = caller.f_back
    return caller is None or _module_of(caller) not in _FRAMEWORKS


def _reads_unknown_size(frame: Any, method: str) -> bool:
    """Whether a `TensorShape` method (running in `frame`) reads a dimension its shape shows as unknown."""
    shape = frame.f_locals.get("self")
    dims = getattr(shape, "_dims", None)
    if method in _SHAPE_SIZELESS or dims is None or None not in dims:
        return False
    if method == "__getitem__":
        key = frame.f_locals.get("key")
        if isinstance(key, slice):
            return None in dims[key]
        if isinstance(key, int) and -len(dims) <= key < len(dims):
            return dims[key] is None
    return True


class Watch:
    """A profile function noting a user's use of a symbolic size (`decided`)."""

    __slots__ = ("decided",)

    def __init__(self) -> None:
        self.decided = False

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call" or self.decided:
            return
        code = frame.f_code
        if code in _DIMENSION_CODES:
            self.decided = _from_users_code(frame)
        else:
            method = _SHAPE_CODES.get(code)
            if method is not None:
                self.decided = _reads_unknown_size(frame, method) and _from_users_code(frame)


class Unwatchable(RuntimeError):
    """A profiler or another profile function holds this thread's profile hook: a trace cannot be watched."""


class Decided(RuntimeError):
    """A watched trace ran a user's Python that decided on a symbolic size: the trace is valid at no size."""


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
