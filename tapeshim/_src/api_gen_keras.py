"""`.pyi` stubs for the `tapeshim.keras` modules, whose names are made at import time.

`tapeshim.keras.layers` and its siblings build their classes and functions from Keras's own
namespaces when imported (`keras_losses_metrics.wrap_namespace` subclasses each Keras class with a
tapeshim mixin; functions become tapeshim ops), so IDEs and type checkers cannot read them from the
source. A stub names each of them: a wrapper class as a subclass of its tapeshim mixin and Keras class
(`class Dense(TapeLayerMixin, keras.layers.Dense)`), a wrapped function as the Keras function whose
signature it keeps, and a re-exported Keras object by its public Keras path. Run through
`python -m tapeshim._src.api_gen`.
"""

from __future__ import annotations

import builtins
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import keras

import tapeshim.keras
from tapeshim._src import api_gen_imports

ROOT = Path(tapeshim.__file__).parent
# Keras's namespaces not walked for public paths (private copies of the public ones).
_SKIPPED_KERAS = ("keras.src", "keras._tf_keras", "keras.api")


def keras_modules() -> list[ModuleType]:
    """The public `tapeshim.keras` modules (packages and files), in a stable order."""
    found: dict[str, ModuleType] = {}
    pending = [tapeshim.keras]
    while pending:
        module = pending.pop()
        found[module.__name__] = module
        for value in vars(module).values():
            if isinstance(value, ModuleType) and value.__name__.startswith("tapeshim.keras"):
                if value.__name__ not in found and sys.modules.get(value.__name__) is value:
                    pending.append(value)
    return [found[name] for name in sorted(found)]


def _public_keras_paths() -> dict[int, str]:
    """`id(object)` of every public Keras object, mapped to its shortest public `"module:name"`."""
    paths: dict[int, str] = {}
    seen: set[str] = set()
    pending: list[ModuleType] = [keras]
    while pending:
        module = pending.pop(0)
        if module.__name__ in seen:
            continue
        seen.add(module.__name__)
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            value = getattr(module, name)
            if isinstance(value, ModuleType):
                if value.__name__.startswith("keras.") and not value.__name__.startswith(_SKIPPED_KERAS):
                    pending.append(value)
                continue
            candidate = f"{module.__name__}:{name}"
            known = paths.get(id(value))
            if known is None or (len(candidate), candidate) < (len(known), known):
                paths[id(value)] = candidate
    return paths


class _StubWriter:
    """Collects the imports and lines of one stub."""

    def __init__(self, module: ModuleType, keras_paths: dict[int, str]) -> None:
        self.module = module
        self.keras_paths = keras_paths
        self.plain_imports: set[str] = set()
        self.from_imports: dict[str, str] = {}
        self.classes: list[str] = []
        self.functions: list[str] = []
        self.lines: list[str] = []

    def dotted(self, cls: type) -> str:
        """An expression naming `cls` in the stub (public Keras path where there is one)."""
        path = self.keras_paths.get(id(cls))
        if path is None:
            module, name = cls.__module__, cls.__qualname__
        else:
            module, _, name = path.partition(":")
        self.plain_imports.add(module)
        return f"{module}.{name}"

    def bases(self, cls: type) -> list[type]:
        """`cls`'s bases, a base of the same module and name (a class the module replaced) unfolded."""
        found: list[type] = []
        for base in cls.__bases__:
            if base.__module__ == cls.__module__ and base.__qualname__ == cls.__qualname__:
                found += [b for b in self.bases(base) if b not in found]
            elif base not in found:
                found.append(base)
        return found

    def add(self, name: str, value: object) -> None:
        """Declares one public name of the module."""
        if isinstance(value, ModuleType):
            self.add_module(name, value)
        elif isinstance(value, type) and value.__module__ == self.module.__name__:
            bases = [self.dotted(base) for base in self.bases(value)]
            self.classes.append(api_gen_imports.class_statement(name, bases))
        elif inspect.isfunction(value) and value.__module__ == self.module.__name__ and self.signature(value):
            self.functions.append(f"def {name}{self.signature(value)}: ...")
        elif id(value) in self.keras_paths:
            self.from_imports[name] = self.keras_paths[id(value)]
        elif callable(value) and id(getattr(value, "__wrapped__", None)) in self.keras_paths:
            self.from_imports[name] = self.keras_paths[id(getattr(value, "__wrapped__", None))]
        elif self.importable(value):
            self.from_imports[name] = f"{getattr(value, '__module__', '')}:{getattr(value, '__qualname__', '')}"
        elif callable(value):
            self.from_imports["Callable"] = "typing:Callable"
            self.from_imports["Any"] = "typing:Any"
            self.lines.append(f"{name}: Callable[..., Any]")
        else:
            self.lines.append(f"{name}: {self.type_name(type(value))}")

    def add_module(self, name: str, value: ModuleType) -> None:
        """A submodule: the importable module, or the public Keras module a run-time one copies."""
        module_name = value.__name__
        if sys.modules.get(module_name) is not value and module_name.startswith("tapeshim.keras."):
            module_name = "keras." + module_name.removeprefix("tapeshim.keras.")
        parent, _, last = module_name.rpartition(".")
        self.from_imports[name] = f"{parent}:{last}"

    @staticmethod
    def signature(function: Callable[..., object]) -> str:
        """The signature of a function defined in the module, when it reads as source ("" if not)."""
        text = str(inspect.signature(function))
        return "" if "<" in text or "'" in text else text

    @staticmethod
    def importable(value: object) -> bool:
        """Whether `value` is reachable as `module.qualname` (a function or class defined at top level)."""
        module = sys.modules.get(getattr(value, "__module__", None) or "")
        qualname = getattr(value, "__qualname__", None)
        return module is not None and isinstance(qualname, str) and getattr(module, qualname, None) is value

    def type_name(self, cls: type) -> str:
        """The annotation of a plain value of type `cls`."""
        if getattr(builtins, cls.__name__, None) is cls:
            return cls.__name__
        return self.dotted(cls)

    def render(self, header: str, names: list[str]) -> str:
        """The stub's text."""
        for name in names:
            self.add(name, getattr(self.module, name))
        if isinstance(getattr(self.module, "__version__", None), str):
            self.lines.append("__version__: str")
        doc = inspect.getdoc(self.module) or ""
        parts = [header + f'"""{doc}"""' if "\n" not in doc else header + f'"""{doc}\n"""']
        parts += api_gen_imports.import_blocks(self.plain_imports, self.from_imports, exported=set(names), stub=True)
        parts += ["\n".join(lines) for lines in (self.classes, self.functions, self.lines) if lines]
        public_all = getattr(self.module, "__all__", None)
        if public_all is not None:
            parts.append(api_gen_imports.string_list("__all__", sorted(public_all, key=api_gen_imports.order)))
        return "\n\n".join(parts) + "\n"


def stub_source() -> str:
    """What the stubs are generated from, named in their header: the installed Keras's version.

    The stubs list the names of the Keras the tree was generated with; under another Keras version
    (the package allows several) they are stale by design, and `tests/test_api_surface.py` says so.
    """
    return f"Keras {keras_version()}'s public namespaces"


def keras_version() -> str:
    """The installed Keras's version (the one `tapeshim.keras` runs)."""
    return str(keras.__version__)


def stub_path(module: ModuleType) -> Path:
    """Where the stub of a `tapeshim.keras` module goes (beside its `.py` file)."""
    file = getattr(module, "__file__", None)
    if file is None:
        raise ValueError(f"{module.__name__} has no file")
    return Path(file).with_suffix(".pyi")


def render_stubs(header: str) -> dict[Path, str]:
    """Every `tapeshim.keras` stub, mapped to its text."""
    keras_paths = _public_keras_paths()
    stubs: dict[Path, str] = {}
    for module in keras_modules():
        names = sorted((n for n in dir(module) if not n.startswith("_")), key=api_gen_imports.order)
        stubs[stub_path(module)] = _StubWriter(module, keras_paths).render(header, names)
    return stubs
