"""Converting a Python function with AutoGraph: source, rewrite, compile, cache.

`convert(fn)` parses the function's source with `ast`, rewrites it
(`transformer.py`) and compiles it once per code object, keeping the original
file name and line numbers so that errors point at the user's line. The
converted function is rebuilt per function object with the original globals,
closure cells (a method's `__class__` cell included) and defaults, and cached.
Functions without source (builtins, lambdas typed in a REPL), generators, and
functions from TF-like libraries (tapeshim, JAX, NumPy, Keras, TensorFlow, the
standard library) run unconverted, as TF's AutoGraph leaves its own and
allowlisted modules alone.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import inspect
import linecache
import os
import sysconfig
import textwrap
import threading
import types
import weakref
from typing import Any, Callable, Iterator, TypeGuard

from tapeshim._src import dtypes
from tapeshim._src.autograph import logical, operators, symbols, transformer
from tapeshim._src.ops import math_ops
from tapeshim._src.tensor import Tensor
from tapeshim._src.tf_logging import get_logger
from tapeshim._src.variable import Variable

_DO_NOT_CONVERT = "__tapeshim_autograph_do_not_convert__"
_SKIPPED_PACKAGES = (
    "tapeshim",
    "jax",
    "jaxlib",
    "numpy",
    "keras",
    "tensorflow",
    "scipy",
    "optax",
    "flax",
    "torch",
    "tree",
    "ml_dtypes",
    "absl",
    "pytest",
    "_pytest",
)
_TAPESHIM_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_STDLIB = sysconfig.get_paths().get("stdlib", "\0")

_code_cache: dict[types.CodeType, tuple[types.CodeType, str]] = {}
# Code objects the conversion compiled (a converted function's, and those of the functions and lambdas defined in
# it, which the rewrite converted with it): calls to functions made from them need no conversion.
_converted_codes: weakref.WeakSet = weakref.WeakSet()
_sourceless_codes: weakref.WeakSet = weakref.WeakSet()  # code objects whose source was not found
_function_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_unconvertible: weakref.WeakSet = weakref.WeakSet()


class _Operators(types.ModuleType):
    """The `ag__` name the converted code sees."""

    converted_call: Callable[..., Any]  # set below, once defined; the operators are set from `operators`


ag__ = _Operators("ag__")
for _name in ("and_", "or_", "not_", "if_exp", "compare_chain"):
    setattr(ag__, _name, getattr(logical, _name))
for _name in ("if_stmt", "while_stmt", "for_stmt", "range_call"):
    setattr(ag__, _name, getattr(operators, _name))
for _name in ("Undefined", "UndefinedReturnValue", "retval", "load_or_undefined", "is_defined"):
    setattr(ag__, _name, getattr(symbols, _name))


def do_not_convert(func: Callable | None = None) -> Any:
    """Marks a function to run unconverted by AutoGraph, as `tf.autograph.experimental.do_not_convert`.

    Args:
      func: the function (or None, to use it as a decorator factory).

    Returns:
      A wrapper of `func` that AutoGraph calls as is.
    """
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with control_status(False):  # (as TF: calls converted code makes inside run as written)
            return func(*args, **kwargs)

    setattr(wrapper, _DO_NOT_CONVERT, True)
    return wrapper


def _is_convertible(fn: object) -> TypeGuard[types.FunctionType]:
    if not isinstance(fn, types.FunctionType) or getattr(fn, _DO_NOT_CONVERT, False):
        return False
    if fn in _unconvertible or fn.__code__ in _converted_codes:
        return False
    code = fn.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    if module in _SKIPPED_PACKAGES:
        return False
    filename = code.co_filename  # by file too: functools.wraps gives a library's wrapper the user's __module__
    if filename.startswith(("<", _TAPESHIM_DIR)) or any(f"{os.sep}{p}{os.sep}" in filename for p in _SKIPPED_PACKAGES):
        return False
    return not (filename.startswith(_STDLIB) and "site-packages" not in filename)


def _parse(fn: types.FunctionType) -> ast.FunctionDef | None:
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn)
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    try:
        module = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    if not module.body or not isinstance(module.body[0], ast.FunctionDef) or module.body[0].name != fn.__name__:
        return None
    ast.increment_lineno(module, first_line - 1)
    node = module.body[0]
    node.decorator_list = []
    return node


def _parse_lambda(fn: types.FunctionType) -> ast.FunctionDef | None:
    """`fn` (a lambda) as `def lambda__(<its arguments>): return <its body>`, found in its file's source.

    The lambda is the only one on its first line with its arguments' names; None when there is no source or
    none there.

    Raises:
      LambdaSourceError: when several lambdas there have those arguments (TF's AutoGraph then runs it as it is).
    """
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if not lines:
        return None
    try:
        module = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    n_args = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS)
    n_args += bool(code.co_flags & inspect.CO_VARKEYWORDS)
    arguments = code.co_varnames[:n_args]
    candidates = [
        node
        for node in ast.walk(module)
        if isinstance(node, ast.Lambda)
        and node.lineno == code.co_firstlineno
        and tuple(a.arg for a in _all_arguments(node.args)) == arguments
    ]
    if len(candidates) > 1:
        matches = "\n".join(f"Match {i}:\n{ast.unparse(node)}\n" for i, node in enumerate(candidates))
        raise LambdaSourceError(
            f"could not parse the source code of {fn!r}: found multiple definitions with identical signatures at "
            "the location. This error may be avoided by defining each lambda on a single line and with unique "
            f"argument names. The matching definitions were:\n{matches}"
        )
    if len(candidates) != 1:
        return None
    found = candidates[0]
    node = ast.FunctionDef(
        name="lambda__",
        args=copy.deepcopy(found.args),
        body=[ast.Return(value=copy.deepcopy(found.body))],
        decorator_list=[],
        returns=None,
        type_params=[],  # type: ignore[call-arg]  # Python 3.12+ requires it; 3.10 and 3.11 accept it
    )
    ast.copy_location(node, found)
    ast.copy_location(node.body[0], found.body)
    return node


def _all_arguments(args: ast.arguments) -> list[ast.arg]:
    """A function's parameters in the order of its code's `co_varnames`."""
    ordered = args.posonlyargs + args.args + args.kwonlyargs
    return ordered + [a for a in (args.vararg, args.kwarg) if a is not None]


class LambdaSourceError(ValueError):
    """A lambda AutoGraph cannot tell apart from the others on its line (TF runs it unconverted)."""


class UnsupportedLanguageElementError(NotImplementedError):
    """A construct AutoGraph does not convert (TF's `pyct.errors.UnsupportedLanguageElementError`)."""


def _unsupported(node: ast.FunctionDef) -> None:
    """Raises for the first loop with an `else` clause in `node`'s source (nested functions included), as TF 2.21's
    AutoGraph does: it does not convert such a function at all.

    Raises:
      UnsupportedLanguageElementError: "for/else statement not yet supported" (or while/else).
    """
    loops = [n for n in ast.walk(node) if isinstance(n, (ast.For, ast.While)) and n.orelse]
    if loops:
        first = min(loops, key=lambda n: (n.lineno, n.col_offset))
        kind = "for" if isinstance(first, ast.For) else "while"
        raise UnsupportedLanguageElementError(f"{kind}/else statement not yet supported")


def _compile(fn: types.FunctionType) -> tuple[types.CodeType, str] | None:
    """The converted code object of `fn` and its source, cached per code object.

    Raises:
      UnsupportedLanguageElementError: for a construct AutoGraph does not convert (`_unsupported`).
      LambdaSourceError: for a lambda not told apart from others on its line (`_parse_lambda`).
    """
    cached = _code_cache.get(fn.__code__)
    if cached is not None or fn.__code__ in _sourceless_codes:
        return cached
    node = _parse(fn)
    if node is None:
        _sourceless_codes.add(fn.__code__)  # (a new function object of this code: not parsed again)
        return None
    _unsupported(node)
    transformer.transform(node)
    # (a function defined inside a converted one already has `ag__` among its free variables)
    freevars = [name for name in fn.__code__.co_freevars if name != "ag__"]
    factory = ast.FunctionDef(
        name="autograph_factory__",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=v) for v in ["ag__"] + freevars],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=[node, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load()))],
        decorator_list=[],
        returns=None,
        type_params=[],  # type: ignore[call-arg]  # Python 3.12+ requires it; 3.10 and 3.11 accept it
    )
    ast.copy_location(factory, node)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, fn.__code__.co_filename, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    code = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    _register_converted(code)
    cached = (code, ast.unparse(node))
    _code_cache[fn.__code__] = cached
    return cached


class _ControlStatus(threading.local):
    """AutoGraph's status for the code running in this thread (TF's `ag_ctx.control_status_ctx()`): True
    (ENABLED) inside a function traced with AutoGraph on, False (DISABLED) inside a call AutoGraph must leave
    alone (`do_not_convert`, a `py_function`'s Python function; converted calls made there run as written), None
    (UNSPECIFIED) elsewhere. The ops that convert the functions they are given (`tf.map_fn`) look at it."""

    def __init__(self) -> None:
        self.enabled: bool | None = None


_status = _ControlStatus()


@contextlib.contextmanager
def control_status(enabled: bool) -> Iterator[None]:
    """Marks the code run inside as traced with AutoGraph on (`enabled`) or as left alone by it (False)."""
    saved = _status.enabled
    _status.enabled = enabled
    try:
        yield
    finally:
        _status.enabled = saved


def convert_if_enabled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` converted when AutoGraph is on for the code running (`control_status`), as TF's
    `autograph.tf_convert(fn, control_status_ctx())`; `fn` itself otherwise."""
    return convert(fn) if _status.enabled else fn


def _register_converted(code: types.CodeType) -> None:
    """Adds `code` and the code of every function and lambda defined in it to `_converted_codes`."""
    _converted_codes.add(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _register_converted(const)


def convert(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with AutoGraph applied (bound methods and `functools.partial` keep their binding).

    Returns `fn` itself when it cannot or should not be converted.
    """
    if isinstance(fn, functools.partial):
        converted = convert(fn.func)
        return fn if converted is fn.func else functools.partial(converted, *fn.args, **fn.keywords)
    if isinstance(fn, types.MethodType):
        converted = convert(fn.__func__)
        return fn if converted is fn.__func__ else types.MethodType(converted, fn.__self__)
    if not _is_convertible(fn):
        return fn
    cached = _function_cache.get(fn)
    if cached is not None:
        return cached
    try:
        compiled = _compile(fn)
    except (UnsupportedLanguageElementError, LambdaSourceError) as exc:  # as TF: a warning; runs as it is
        get_logger().warning(
            f"AutoGraph could not transform {fn!r} and will run it as-is.\nCause: {exc}\n"
            "To silence this warning, decorate the function with @tf.autograph.experimental.do_not_convert"
        )
        compiled = None
    if compiled is None:
        _unconvertible.add(fn)
        return fn
    code = compiled[0]
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells["ag__"] = types.CellType(ag__)
    closure = tuple(cells[name] for name in code.co_freevars)
    result = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    result.__kwdefaults__ = fn.__kwdefaults__
    result.__dict__.update(fn.__dict__)
    result.__wrapped__ = fn  # type: ignore[attr-defined]  # as functools.wraps sets; FunctionType has none
    result.__qualname__ = fn.__qualname__
    setattr(result, _DO_NOT_CONVERT, True)  # already converted
    _function_cache[fn] = result
    return result


def converted_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A call inside converted code: user functions are converted (once) before they run; `int(t)` and
    `float(t)` of a tensor are `tf.cast`s (to int32, float32), as TF's AutoGraph's builtins."""
    if _status.enabled is False:  # inside `do_not_convert` or a `py_function`: as written
        return fn(*args, **kwargs)
    if (fn is int or fn is float) and args and isinstance(args[0], (Tensor, Variable)):
        if len(args) > 1 or kwargs:
            base = args[1] if len(args) > 1 else kwargs.get("base")
            raise NotImplementedError(f"base {base} not supported for int")
        return math_ops.cast(args[0], dtypes.int32 if fn is int else dtypes.float32)
    if isinstance(fn, types.FunctionType):
        if getattr(fn, _DO_NOT_CONVERT, False) or fn in _unconvertible:
            return fn(*args, **kwargs)
        converted = _function_cache.get(fn)
        return (converted if converted is not None else convert(fn))(*args, **kwargs)
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        return convert(fn)(*args, **kwargs)
    return fn(*args, **kwargs)


ag__.converted_call = converted_call


def to_code(fn: Callable, recursive: bool = True, experimental_optional_features: Any = None) -> str:
    """The source of `fn` after AutoGraph's rewrite, as `tf.autograph.to_code`.

    Raises:
      ValueError: if `fn` has no Python source to convert.
      UnsupportedLanguageElementError: for a construct AutoGraph does not convert (a loop's `else`), as TF.
    """
    del recursive, experimental_optional_features
    target = getattr(fn, "python_function", fn)
    target = getattr(target, "__func__", target)
    compiled = _compile(target) if isinstance(target, types.FunctionType) else None
    if compiled is None:
        raise ValueError(f"Unable to locate the source code of {fn!r}.")
    return compiled[1] + "\n"


def to_graph(fn: Callable, recursive: bool = True, experimental_optional_features: Any = None) -> Callable:
    """`fn` converted by AutoGraph (a Python function calling tf ops), as `tf.autograph.to_graph`."""
    del recursive, experimental_optional_features
    return convert(getattr(fn, "python_function", fn))
