"""The op table, the public namespaces and docs/ops.md agree, and the table's TF paths exist in TF."""

import inspect
from pathlib import Path

import pytest

import tapeshim
from oracle import real_tf
from tapeshim._src.ops import table

NAMESPACES = {
    "": tapeshim,
    "math": tapeshim.math,
    "nn": tapeshim.nn,
    "linalg": tapeshim.linalg,
    "random": tapeshim.random,
    "debugging": tapeshim.debugging,
    "dtypes": tapeshim.dtypes,
    "image": tapeshim.image,
    "signal": tapeshim.signal,
    "audio": tapeshim.audio,
    "strings": tapeshim.strings,
    "sparse": tapeshim.sparse,
    "ragged": tapeshim.ragged,
    "bitwise": tapeshim.bitwise,
    "sets": tapeshim.sets,
}
# Names a namespace exports that are classes or enums, not ops.
NON_OP_EXPORTS = {"": tapeshim.NON_OP_EXPORTS, "image": tapeshim.image.NON_OP_EXPORTS, "sparse": {"SparseTensor"}}
PATHS = table.all_paths()


def _resolve(module, path):
    space, _, name = path.rpartition(".")
    return getattr(module if not space else getattr(module, space), name, None)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_table_path_is_exported_and_exists_in_tf(path):
    row = PATHS[path]
    assert _resolve(real_tf, path) is not None, f"tf.{path} does not exist in TensorFlow"
    exported = _resolve(tapeshim, path)
    if row.function is None:
        assert exported is None, f"tf.{path} is a gap row but tapeshim exports it"
    else:
        assert exported is row.function, f"tapeshim.{path} is not the table's function"


@pytest.mark.parametrize("space", sorted(NAMESPACES))
def test_every_exported_op_is_in_the_table(space):
    module = NAMESPACES[space]
    allowed = NON_OP_EXPORTS.get(space, set())
    for name in module.__all__:
        if name in allowed or space == "dtypes" and name not in ("cast", "complex"):
            continue
        path = f"{space}.{name}" if space else name
        assert path in PATHS, f"tapeshim.{path} is exported but not in the op table"


def test_docs_table_is_generated_from_the_table():
    docs = (Path(__file__).parent.parent / "docs" / "ops.md").read_text()
    stale = "docs/ops.md is stale: run `python -m tapeshim._src.ops.table > docs/ops.md`"
    assert docs == table.render_markdown(), stale


def test_rows_are_documented_functions():
    for row in table.ROWS.values():
        if row.function is not None:
            assert inspect.getdoc(row.function), f"tf.{row.paths[0]} has no docstring"


GAPS = sorted(path for path, row in PATHS.items() if row.function is None)


@pytest.mark.xfail(strict=True, reason="a gap row of the op table: not implemented yet")
@pytest.mark.parametrize("path", GAPS)
def test_gap_rows_are_not_implemented_yet(path):
    assert _resolve(tapeshim, path) is not None
