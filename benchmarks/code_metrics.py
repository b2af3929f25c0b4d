"""Code-shape figures for `tapeshim/`: function lengths, `Any` share, imports inside functions.

Run `python benchmarks/code_metrics.py` from the repository root. Issue notes quote its output
as before/after figures for refactors: it reads the source with the `ast` module and runs nothing.
"""

from __future__ import annotations

import ast
import pathlib
import statistics
import sys

_ROOT = pathlib.Path(__file__).resolve().parent.parent / "tapeshim"


def _is_any(annotation: ast.expr | None) -> bool:
    """Whether an annotation is exactly `Any` (or `typing.Any`)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "Any"
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip() == "Any"
    return False


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [a for a in every if a.arg not in ("self", "cls")]


def _is_public(path: pathlib.Path, qualified_name: str) -> bool:
    private_module = any(part.startswith("_") and part != "__init__.py" for part in path.parts[:-1])
    private_module = private_module and "_src" not in path.parts  # every `_src` module backs public names
    return not private_module and not any(part.startswith("_") for part in qualified_name.split("."))


def measure(root: pathlib.Path = _ROOT) -> dict[str, float]:
    """Returns the figures for every `.py` file under `root`."""
    lengths: list[int] = []
    parameters = any_parameters = public_parameters = public_any = 0
    nested_imports = 0
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        relative = path.relative_to(root.parent)

        def visit(node: ast.AST, prefix: str, in_function: bool, relative: pathlib.Path = relative) -> None:
            nonlocal parameters, any_parameters, public_parameters, public_any, nested_imports
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name = f"{prefix}{child.name}"
                    lengths.append((child.end_lineno or child.lineno) - child.lineno + 1)
                    own = _parameters(child)
                    anys = sum(_is_any(a.annotation) for a in own)
                    parameters += len(own)
                    any_parameters += anys
                    if _is_public(relative, name):
                        public_parameters += len(own)
                        public_any += anys
                    visit(child, name + ".", True)
                elif isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.", in_function)
                else:
                    if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                        nested_imports += 1
                    visit(child, prefix, in_function)

        visit(tree, "", False)
    lengths.sort()
    quantile = statistics.quantiles(lengths, n=100)
    return {
        "functions": len(lengths),
        "length_p50": quantile[49],
        "length_p90": quantile[89],
        "length_p99": quantile[98],
        "length_max": lengths[-1],
        "parameters": parameters,
        "any_share": any_parameters / max(parameters, 1),
        "public_parameters": public_parameters,
        "public_any_share": public_any / max(public_parameters, 1),
        "imports_inside_functions": nested_imports,
    }


def main() -> None:
    figures = measure()
    for name, value in figures.items():
        print(f"{name:>26}: {value:.3f}" if isinstance(value, float) else f"{name:>26}: {value}")


if __name__ == "__main__":
    sys.exit(main())
