"""The generated public namespaces (`python -m tapeshim._src.api_gen`) are current and complete."""

import ast
import importlib
from pathlib import Path

import pytest

from tapeshim._src import api_gen, api_gen_keras
from tapeshim._src.api_exports import NAMESPACES

RENDERED = api_gen.render_all()
PACKAGE = api_gen.ROOT
STALE = "{path} is stale: run `python -m tapeshim._src.api_gen` (never edit a generated file by hand)"


@pytest.mark.parametrize("path", sorted(RENDERED), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_generated_file_is_current(path):
    assert path.exists() and path.read_text() == RENDERED[path], STALE.format(path=path.relative_to(PACKAGE.parent))


def test_every_public_module_is_generated_or_declared_hand_written():
    """A new namespace module must be declared in api_exports.py (or listed as hand-written)."""
    generated = {path for path in RENDERED if path.suffix == ".py"}
    stubbed = {path.with_suffix(".py") for path in RENDERED if path.suffix == ".pyi"}
    hand_written = {api_gen.module_path(module) for module in api_gen.HAND_WRITTEN}
    on_disk = {path for path in PACKAGE.rglob("*.py") if "_src" not in path.relative_to(PACKAGE).parts}
    assert on_disk - generated - stubbed - hand_written == set()


def _stub_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname for alias in node.names if alias.asname)
    return names


@pytest.mark.parametrize("module", api_gen_keras.keras_modules(), ids=lambda m: m.__name__)
def test_keras_stub_names_every_public_name(module):
    """Every public name, re-exported (in a stub, `from m import a as b` re-exports `b` only through `__all__`)."""
    public = {name for name in dir(module) if not name.startswith("_")}
    assert _stub_names(api_gen_keras.stub_path(module)) == public
    assert set(module.__all__) <= public


@pytest.mark.parametrize("module", sorted(NAMESPACES))
def test_generated_module_exports_its_all(module):
    namespace = importlib.import_module(module)
    for name in getattr(namespace, "__all__", []):
        assert hasattr(namespace, name) or name == "keras", f"{module}.{name} is in __all__ but missing"
