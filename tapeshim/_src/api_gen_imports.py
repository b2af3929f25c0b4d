"""Import statements and string lists written as ruff's isort and formatter write them (for `api_gen`)."""

from __future__ import annotations

import re
import sys

LINE_LENGTH = 120


def _natural(text: str) -> tuple[object, ...]:
    """Ruff's isort order: case-insensitive, digit runs compared as numbers (`complex64` < `complex128`)."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text.lower()))


def order(name: str) -> tuple[object, ...]:
    """A deterministic natural order (ties between `Function` and `function` broken by case)."""
    return (_natural(name), name)


def member_key(name: str) -> tuple[object, ...]:
    """Ruff's isort order of imported names: constants, then classes, then the rest."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return (kind, _natural(name), name)


def _is_first_party(module: str) -> bool:
    return module.split(".")[0] == "tapeshim"


def _is_stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def import_blocks(
    plain: set[str],
    imports: dict[str, str],
    exported: set[str],
    used: frozenset[str] = frozenset(),
    noqa: bool = False,
    stub: bool = False,
) -> list[str]:
    """Import statements, one block per isort section (standard library, third party, first party).

    Args:
      plain: modules imported as `import a.b`.
      imports: `{name: "module:attribute"}` imported as `from module import attribute [as name]`, or
        `{name: "module"}` imported as `import module as name`.
      exported: the names in `__all__`, imported plainly in a module. Any other public name (and in a
        stub, every name) is imported as `name as name`, the explicit re-export form of type checkers and
        ruff. A name imported under another name outside `__all__` (a private one imported for its side
        effect, say) carries `# noqa: F401` unless an assignment `used` it.
      noqa: the imports follow code (`# noqa: E402`).
      stub: the text is a `.pyi` stub.
    """
    grouped: dict[str, list[str]] = {}
    statements: list[tuple[str, str, str, list[str], bool]] = []
    aliased: list[tuple[str, str, bool]] = []
    for name, source in imports.items():
        module, colon, attribute = source.partition(":")
        if not colon:
            aliased.append((module, name, module != name and name not in exported and name not in used))
            continue
        helper = stub and name in ("Any", "Callable") and module == "typing"
        if attribute == name and (name in exported and not stub or helper or module == "__future__"):
            grouped.setdefault(module, []).append(name)
        else:
            unused = attribute != name and name not in exported and name not in used and not stub
            statements.append((module, attribute, name, [f"{attribute} as {name}"], unused))
    for module, names in grouped.items():
        first = min(names, key=member_key)
        statements.append((module, first, first, sorted(names, key=member_key), False))
    sections: dict[int, list[str]] = {-1: [], 0: [], 1: [], 2: []}

    def section(module: str) -> int:
        if module == "__future__":
            return -1
        return 2 if _is_first_party(module) else 0 if _is_stdlib(module) else 1

    plain_statements = [(module, f"import {module}") for module in plain]
    for module, name, unused in aliased:
        plain_statements.append((module, f"import {module} as {name}" + "  # noqa: F401" * unused))
    for module, text in sorted(plain_statements, key=lambda statement: (_natural(statement[0]), statement[1])):
        sections[section(module)].append(text)

    def statement_key(statement: tuple[str, str, str, list[str], bool]) -> tuple[object, ...]:
        return (_natural(statement[0]), member_key(statement[1]), member_key(statement[2]))

    for module, _first, _alias, members, unused in sorted(statements, key=statement_key):
        codes = (["E402"] if noqa else []) + (["F401"] if unused else [])
        suffix = f"  # noqa: {', '.join(codes)}" if codes else ""
        line = f"from {module} import {', '.join(members)}"
        if len(line + suffix) <= LINE_LENGTH and (len(members) == 1 or not suffix):
            text = line + suffix
        else:
            text = "\n".join([f"from {module} import ({suffix}", *(f"    {m}," for m in members), ")"])
        sections[section(module)].append(text)
    return ["\n".join(block) for block in sections.values() if block]


def string_list(name: str, items: list[str], wrapper: str = "") -> str:
    """`name = [...]` (or `name = wrapper([...])`) of strings, on one line where it fits."""
    quoted = [f'"{item}"' for item in items]
    opening, closing = (f"{wrapper}(", ")") if wrapper else ("", "")
    one_line = f"{name} = {opening}[{', '.join(quoted)}]{closing}"
    if len(one_line) <= LINE_LENGTH:
        return one_line
    if wrapper:
        body = "".join(f"        {item},\n" for item in quoted)
        return f"{name} = {wrapper}(\n    [\n{body}    ]\n)"
    return f"{name} = [\n" + "".join(f"    {item},\n" for item in quoted) + "]"


def class_statement(name: str, bases: list[str]) -> str:
    """`class name(bases): ...`, wrapped as ruff's formatter wraps it."""
    line = f"class {name}({', '.join(bases)}): ..."
    if len(line) <= LINE_LENGTH:
        return line
    inner = "    " + ", ".join(bases)
    if len(inner) <= LINE_LENGTH:
        return f"class {name}(\n{inner}\n): ..."
    return f"class {name}(\n" + "".join(f"    {base},\n" for base in bases) + "): ..."
