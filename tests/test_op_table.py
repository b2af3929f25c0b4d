"""The op table, the public namespaces and docs/ops.md agree, the table's TF paths exist in TF, and every row
has a differential test case."""

import ast
import inspect
from pathlib import Path

import pytest

import tapeshim
from oracle import real_tf
from tapeshim._src.ops import table

NAMESPACES = {
    "": tapeshim,
    "math": tapeshim.math,
    "math.special": tapeshim.math.special,
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
    "quantization": tapeshim.quantization,
}
# Names a namespace exports that are classes or enums, not ops.
NON_OP_EXPORTS = {
    "": tapeshim.NON_OP_EXPORTS,
    "image": tapeshim.image.NON_OP_EXPORTS,
    "linalg": tapeshim.linalg.NON_OP_EXPORTS,
    "sparse": {"SparseTensor"},
}
PATHS = table.all_paths()


def _resolve(module, path):
    for part in path.split("."):  # (nested namespaces: `math.special.bessel_j0`)
        module = getattr(module, part, None)
    return module


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


def test_gap_rows_are_not_implemented_yet():
    # a gap row (`table.gap`) names an op not built yet; once it is built, the row becomes a real one
    assert [path for path in GAPS if _resolve(tapeshim, path) is not None] == []


# -- every row has a differential case --------------------------------------------------------------------
TESTS = Path(__file__).parent

NAMED_CASES = {
    "signal.fft": "test_signal_ops.py::test_complex_ffts",
    "signal.ifft": "test_signal_ops.py::test_complex_ffts",
    "signal.fft2d": "test_signal_ops.py::test_complex_ffts",
    "signal.ifft2d": "test_signal_ops.py::test_complex_ffts",
    "signal.fft3d": "test_signal_ops.py::test_complex_ffts",
    "signal.ifft3d": "test_signal_ops.py::test_complex_ffts",
    "image.rgb_to_yuv": "test_image_extra.py::test_total_variation_and_color_matrices",
    "image.yuv_to_rgb": "test_image_extra.py::test_total_variation_and_color_matrices",
    "image.rgb_to_yiq": "test_image_extra.py::test_total_variation_and_color_matrices",
    "image.yiq_to_rgb": "test_image_extra.py::test_total_variation_and_color_matrices",
    "io.serialize_tensor": "test_strings_io.py::test_serialize_tensor_bytes_equal_tf",
    "io.parse_tensor": "test_strings_io.py::test_parse_tensor_reads_tf_bytes_and_tf_reads_ours",
}
"""Rows whose differential case reaches the op by name (`getattr(tf.signal, name)` over a parametrized list, or
through a helper returning the namespace) rather than as `tf.<path>`: the test running it, `file::function`."""


def _is_differential(tree):
    """Whether a test module runs its bodies through tests/oracle.py."""
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "oracle"
        or isinstance(node, ast.Import)
        and any(alias.name == "oracle" for alias in node.names)
        for node in ast.walk(tree)
    )


def _tf_paths(tree):
    """Every `tf.a.b` attribute chain in `tree` (bodies take the module as `tf`), as "a.b"."""
    paths = set()
    for node in ast.walk(tree):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if parts and isinstance(node, ast.Name) and node.id == "tf":
            paths.add(".".join(reversed(parts)))
    return paths


def _differential_modules():
    trees = {path.name: ast.parse(path.read_text()) for path in sorted(TESTS.glob("*.py"))}
    return {name: tree for name, tree in trees.items() if _is_differential(tree)}


DIFFERENTIAL = _differential_modules()
NAMED = set().union(*(_tf_paths(tree) for tree in DIFFERENTIAL.values()))


def _names_in(function):
    """The string constants and attribute names in a test function, its decorators included."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


@pytest.mark.parametrize("path", sorted(NAMED_CASES))
def test_named_cases_run_their_op(path):
    module, _, test = NAMED_CASES[path].partition("::")
    assert module in DIFFERENTIAL, f"{module} is not a differential test module (it does not use tests/oracle.py)"
    functions = {node.name: node for node in DIFFERENTIAL[module].body if isinstance(node, ast.FunctionDef)}
    assert test in functions, f"{NAMED_CASES[path]} does not exist"
    assert path.rpartition(".")[2] in _names_in(functions[test]), f"{NAMED_CASES[path]} does not name {path}"


def test_every_row_has_a_differential_case():
    """A row's case: a test module using tests/oracle.py names `tf.<path>` for one of its paths, or NAMED_CASES."""
    missing = [
        key
        for key, row in table.ROWS.items()
        if row.function is not None and not any(path in NAMED or path in NAMED_CASES for path in row.paths)
    ]
    assert not missing, f"op table rows without a differential test case: {missing}"


def test_rows_read_their_gradient_kind_from_their_kernel():
    for row in table.ROWS.values():
        if row.op is not None:
            assert row.op.differentiable == (row.gradient not in ("none", "-")), f"tf.{row.paths[0]}: {row.op}"
