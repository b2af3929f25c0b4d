"""The op table: every TF path tapeshim answers to, its gradient kind and status.

`Row` is the one row type. Each public op function is registered here once, with
`export(...)`; ops not built yet are `gap(...)` rows. A function that runs one
kernel (`tf.math.sin` runs the `OpDef` "Sin") names it (`export(..., op=...)`):
the row then reads its gradient kind from the kernel's definition instead of
restating it. Kernels themselves (`registry.OpDef`: TF op type, JAX
implementation, checks) are not rows and are registered nowhere: the public
function that applies them is. The namespaces (`tapeshim.math`, `tapeshim.nn`,
...) are generated from this table (`python -m tapeshim._src.api_gen`), and so is
`docs/ops.md` (`python -m tapeshim._src.ops.table`); tests check that the three
agree.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, TypeVar

from tapeshim._src.registry import OpDef

F = TypeVar("F", bound=Callable[..., Any])

GRADIENT_KINDS = {
    "jax": "JAX's derivative, which equals TF's",
    "tf": "written so JAX's derivative is TF's convention (differs from plain JAX)",
    "zeros": "registered in TF with a zero gradient",
    "none": "no gradient: results are never recorded, gradients through them are None",
    "custom": "a custom vjp",
    "-": "not differentiable (integer, bool or shape outputs)",
}
STATUSES = ("implemented", "not implemented", "divergence")


@dataclasses.dataclass(frozen=True)
class Row:
    """One op of the table.

    Attributes:
      paths: the TF paths it answers to, without `tf.` (`"math.add"`, `"add"`).
      function: the tapeshim function (None for a gap).
      gradient: a key of `GRADIENT_KINDS`.
      dtypes: the dtypes it accepts, in words.
      status: one of `STATUSES`.
      note: known divergences from TF, or why it is a gap.
      op: the kernel `function` runs, when it runs exactly one (None otherwise).
    """

    paths: tuple[str, ...]
    function: Callable[..., Any] | None
    gradient: str
    dtypes: str
    status: str = "implemented"
    note: str = ""
    op: OpDef | None = None


ROWS: dict[str, Row] = {}
FLOAT = "floating, complex"
REAL_FLOAT = "floating"
NUMERIC = "floating, complex, integer"
REAL = "floating, integer"
ANY = "all"


# Gradient kinds a kernel TF registers no gradient for (`OpDef.differentiable` False) may have.
_NO_GRADIENT_KINDS = ("none", "-")


def _add(row: Row) -> None:
    if row.gradient not in GRADIENT_KINDS or row.status not in STATUSES:
        raise ValueError(f"bad op table row {row}")
    if row.op is not None and row.op.differentiable != (row.gradient not in _NO_GRADIENT_KINDS):
        raise ValueError(f"op table row {row.paths[0]}: gradient {row.gradient!r} disagrees with its kernel {row.op}")
    for path in row.paths:
        if path in ROWS and ROWS[path].function is not row.function:
            raise ValueError(f"{path} is registered twice in the op table")
    ROWS[row.paths[0]] = row


def export(
    *paths: str,
    gradient: str | None = None,
    dtypes: str = FLOAT,
    note: str = "",
    status: str = "implemented",
    op: OpDef | None = None,
) -> Callable[[F], F]:
    """Registers a public op function under its TF paths; returns the function unchanged.

    Args:
      *paths: the TF paths, without `tf.`; the first names the row.
      gradient: a key of `GRADIENT_KINDS`; None reads it from `op` ("jax", or "none" for a
        kernel TF registers no gradient for), or "jax" without one.
      dtypes: the dtypes it accepts, in words.
      note: known divergences from TF.
      status: one of `STATUSES`.
      op: the one kernel the function runs, if it runs exactly one.
    """
    if gradient is None:
        gradient = "jax" if op is None or op.differentiable else "none"
    kind = gradient

    def register(function: F) -> F:
        _add(Row(tuple(paths), function, kind, dtypes, status, note, op))
        return function

    return register


def gap(*paths: str, note: str) -> None:
    """Registers an op tapeshim does not implement yet (tests expect it to be missing)."""
    _add(Row(tuple(paths), None, "-", "", "not implemented", note))


def all_paths() -> dict[str, Row]:
    """Every TF path in the table, mapped to its row."""
    return {path: row for row in ROWS.values() for path in row.paths}


def render_markdown() -> str:
    """The text of docs/ops.md."""
    lines = [
        "# Op compatibility table",
        "",
        "Generated from `tapeshim/_src/ops/table.py` by `python -m tapeshim._src.ops.table > docs/ops.md`;",
        "a test fails when this page, the table and the namespaces disagree.",
        "",
        "Gradient kinds:",
        "",
    ]
    lines += [f"* `{kind}`: {text}" for kind, text in GRADIENT_KINDS.items()]
    lines += ["", "| op | also | status | gradient | dtypes | notes |", "|---|---|---|---|---|---|"]
    for key in sorted(ROWS):
        row = ROWS[key]
        also = ", ".join(f"`tf.{p}`" for p in row.paths[1:])
        lines.append(f"| `tf.{row.paths[0]}` | {also} | {row.status} | {row.gradient} | {row.dtypes} | {row.note} |")
    counts = {status: sum(r.status == status for r in ROWS.values()) for status in STATUSES}
    lines += ["", ", ".join(f"{n} {status}" for status, n in counts.items()) + "."]
    return "\n".join(lines) + "\n"


def _main() -> None:
    import tapeshim  # noqa: F401 - registers every op; import cycle: tapeshim imports this table
    from tapeshim._src.ops import table as registered  # import cycle: this __main__ copy is not the imported module

    print(registered.render_markdown(), end="")


if __name__ == "__main__":
    _main()
