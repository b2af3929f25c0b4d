"""`tf.test.TestCase`: a `unittest.TestCase` with TensorFlow's assertion helpers, for eager TF 2 tests.

The assertions take tensors, variables, numpy arrays, Python values and (for `assertAllClose`) nests of
them, and fail with an `AssertionError` whose text follows TF's. tapeshim runs eagerly, so `session()`,
`cached_session()` and `test_session()` are the objects TF 2 gives in eager mode: `cached_session()`'s
`run(fetches)` is `evaluate(fetches)`.

Differences from TF: the class derives from `unittest.TestCase` (TF's derives from absl's
`absltest.TestCase`; the absl helpers TF tests use most, such as `assertLen` and `assertEmpty`, are
provided here), and the assertions need values: inside a `tf.function` (where TF runs them as
`py_func`s at each call) they raise `OperatorNotAllowedInGraphError`; assert on the function's results.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import math
import os
import random
import re
import shutil
import tempfile
import time
import unittest
from collections.abc import Mapping
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from tapeshim._src import dtypes, errors, summary_ops
from tapeshim._src.config_device import DeviceSpec
from tapeshim._src.indexed_slices import IndexedSlices
from tapeshim._src.ops import random_ops
from tapeshim._src.ragged import RaggedTensor
from tapeshim._src.sparse import SparseTensor
from tapeshim._src.tensor import Tensor
from tapeshim._src.tf_logging import get_logger
from tapeshim._src.variable import Variable

DEFAULT_SEED = 87654321
"""The seed TF's `setUp` gives Python's, NumPy's and TF's global random generators."""

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])
IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])


class RaggedTensorValue:
    """The value of a ragged tensor: NumPy `values` (or a nested `RaggedTensorValue`) split by `row_splits`."""

    def __init__(self, values: Any, row_splits: np.ndarray) -> None:
        self.values = values
        self.row_splits = row_splits

    @property
    def flat_values(self) -> np.ndarray:
        """The innermost values (a NumPy array)."""
        values = self.values
        while isinstance(values, RaggedTensorValue):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple[np.ndarray, ...]:
        """The row splits of every ragged dimension, outermost first."""
        splits = [self.row_splits]
        values = self.values
        while isinstance(values, RaggedTensorValue):
            splits.append(values.row_splits)
            values = values.values
        return tuple(splits)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> np.dtype:
        return self.flat_values.dtype

    @property
    def shape(self) -> tuple[int | None, ...]:
        return (len(self.row_splits) - 1,) + (None,) * self.ragged_rank + tuple(self.flat_values.shape[1:])

    def to_list(self) -> list:
        """The value as nested Python lists."""
        inner = self.values.to_list() if isinstance(self.values, RaggedTensorValue) else self.values.tolist()
        return [inner[start:stop] for start, stop in zip(self.row_splits[:-1], self.row_splits[1:])]

    def __str__(self) -> str:
        return f"<tf.RaggedTensorValue {self.to_list()}>"

    def __repr__(self) -> str:
        return f"tf.RaggedTensorValue(values={self.values!r}, row_splits={self.row_splits!r})"


def _numpy(value: Any) -> Any:
    return value.numpy()


def evaluate_value(value: Any) -> Any:
    """One leaf of `TestCase.evaluate`: a tensor's NumPy value (composites as TF's `...Value` tuples).

    Raises:
      ValueError: the value is not a tensor-like object (a Python number, a NumPy array, ...).
    """
    if value is None:
        return None
    if callable(value) and not isinstance(value, (Tensor, Variable)):
        return evaluate_nest(value())
    if isinstance(value, SparseTensor):
        return SparseTensorValue(_numpy(value.indices), _numpy(value.values), _numpy(value.dense_shape))
    if isinstance(value, RaggedTensor):
        inner = evaluate_value(value.values)
        return RaggedTensorValue(inner, np.asarray(_numpy(value.row_splits)))
    if isinstance(value, IndexedSlices):
        shape = value.dense_shape
        return IndexedSlicesValue(_numpy(value.values), _numpy(value.indices), None if shape is None else _numpy(shape))
    if callable(getattr(value, "numpy", None)):
        return value.numpy()
    raise ValueError(f"Unsupported type {type(value).__name__!r}.")


def evaluate_nest(structure: Any) -> Any:
    """`TestCase.evaluate` of a nest (lists, tuples, namedtuples, dicts) of tensors."""
    if isinstance(structure, Mapping):
        pairs = [(key, evaluate_nest(item)) for key, item in structure.items()]
        kind: Any = type(structure)
        try:
            return kind(pairs)
        except TypeError:  # a mapping type not built from pairs (defaultdict)
            return dict(pairs)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*(evaluate_nest(item) for item in structure))
    if isinstance(structure, (list, tuple)):
        return type(structure)(evaluate_nest(item) for item in structure)
    return evaluate_value(structure)


def as_ndarray(value: Any) -> np.ndarray:
    """`value` as a NumPy array (a sequence of uneven rows becomes an object array, as in TF)."""
    if isinstance(value, (Tensor, Variable)):
        return np.asarray(value.numpy())
    if isinstance(value, np.ndarray):
        return value
    try:
        return np.array(value)
    except ValueError as error:
        if "inhomogeneous shape" not in str(error):
            raise
        return np.array(value, dtype=object)


def _where(condition: np.ndarray) -> tuple[np.ndarray, ...]:
    """The indices where `condition` holds (a scalar counts as one element: NumPy 2.1 refuses 0-d `nonzero`)."""
    return np.nonzero(np.atleast_1d(condition))


def _float32_if_custom(array: np.ndarray) -> np.ndarray:
    """bfloat16 and float8 arrays (ml_dtypes) as float32: NumPy's closeness tests mishandle their promotions."""
    return array.astype(np.float32) if array.dtype.kind == "V" and array.dtype.names is None else array


def _is_floating(dtype: np.dtype) -> bool:
    try:
        return bool(dtypes.as_dtype(dtype).is_floating)
    except (TypeError, ValueError):
        return False


def _expected_dtype(expected: Any) -> Any:
    numpy_dtype = getattr(expected, "as_numpy_dtype", None)
    return np.dtype(numpy_dtype) if numpy_dtype is not None else np.dtype(expected)


def _message_search(pattern: str | re.Pattern[str]) -> Callable[[BaseException], Any]:
    """A predicate: whether `pattern` is found in an exception's message."""

    def search(error: BaseException) -> Any:
        text = error.message if isinstance(error, errors.OpError) else str(error)
        return re.search(pattern, text)

    return search


class _EagerSessionWarner:
    """What `session()` gives in eager mode: any use of it says that sessions do not exist eagerly."""

    def __getattr__(self, attr: str) -> Any:
        raise AttributeError(
            "Trying to access properties or call methods on the result of self.session(), self.cached_session(), "
            "etc while eager execution is enabled. tapeshim runs TF 2 code eagerly: adapt the test to work with "
            "eager execution (use self.evaluate)."
        )


class FakeEagerSession:
    """What `cached_session()` gives in eager mode: `run(fetches)` evaluates `fetches`, as TF's."""

    def __init__(self, test_case: TestCase) -> None:
        self._test_case = test_case

    def run(self, fetches: Any, *args: Any, **kwargs: Any) -> Any:
        """The NumPy values of `fetches`.

        Raises:
          RuntimeError: a non-empty `feed_dict`, or any other argument, was given.
        """
        if kwargs.pop("feed_dict", None):
            raise RuntimeError(
                "feed_dict is not supported when eager execution is enabled "
                "(in this case, sess.run(t) is shorthand for t.numpy()"
            )
        if args or kwargs:
            raise RuntimeError(
                "Optional args are not supported when eager execution is enabled "
                "(in this case, sess.run(t) is shorthand for t.numpy()"
            )
        return self._test_case.evaluate(fetches)


_TEMP_ROOT: list[str] = []


def _temp_root() -> str:
    """This process's directory of test temporary directories (under `$TEST_TMPDIR` when set), removed at exit."""
    if not _TEMP_ROOT:
        parent = os.environ.get("TEST_TMPDIR") or None
        if parent:
            os.makedirs(parent, exist_ok=True)
        root = tempfile.mkdtemp(prefix="tapeshim_test_", dir=parent)
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _TEMP_ROOT.append(root)
    return _TEMP_ROOT[0]


class TestCase(unittest.TestCase):
    """Base class for tests of TF 2 code, as `tf.test.TestCase`.

    `setUp` seeds Python's, NumPy's and tapeshim's random generators with TF's default seed and clears the
    default summary writer; a test method named `test_session` is skipped (the name is TF's session helper).
    """

    def __init__(self, methodName: str = "runTest") -> None:
        super().__init__(methodName)
        self._tempdir: str | None = None
        self._test_start_time: float | None = None

    def setUp(self) -> None:
        """Seeds the random generators (TF's default seed) and clears the default summary writer."""
        super().setUp()
        random.seed(DEFAULT_SEED)
        np.random.seed(DEFAULT_SEED)
        random_ops.set_seed(DEFAULT_SEED)
        summary_ops._state.writer = None
        if self.id().endswith(".test_session"):
            self.skipTest("Not a test.")
        self._test_start_time = time.time()

    def tearDown(self) -> None:
        """Logs the test's duration."""
        if self._test_start_time is not None:
            get_logger().info("time(%s): %ss", self.id(), round(time.time() - self._test_start_time, 2))
        super().tearDown()

    def get_temp_dir(self) -> str:
        """A temporary directory of this test, the same one at each call (a new one per test)."""
        if not self._tempdir:
            self._tempdir = tempfile.mkdtemp(dir=_temp_root())
        return self._tempdir

    # -- running ---------------------------------------------------------------------------------
    def evaluate(self, tensors: Any) -> Any:
        """The NumPy values of a tensor or a nest of tensors (a callable is called and its result evaluated).

        Sparse, ragged and indexed-slices tensors give TF's `SparseTensorValue`, `RaggedTensorValue` and
        `IndexedSlicesValue`; `None` stays `None`.

        Raises:
          ValueError: a leaf is not tensor-like (a Python number, a NumPy array), as in TF.
        """
        return evaluate_nest(tensors)

    @contextlib.contextmanager
    def session(
        self, graph: Any = None, config: Any = None, use_gpu: bool = True, force_gpu: bool = False
    ) -> Iterator[Any]:
        """A block for a TF 1 session; eagerly (always, here) an object that refuses any use, as in TF 2."""
        del graph, config, use_gpu, force_gpu
        yield _EagerSessionWarner()

    @contextlib.contextmanager
    def cached_session(
        self, graph: Any = None, config: Any = None, use_gpu: bool = True, force_gpu: bool = False
    ) -> Iterator[FakeEagerSession]:
        """A block for the test's cached session; eagerly, a session whose `run` is `self.evaluate`."""
        del graph, config, use_gpu, force_gpu
        yield FakeEagerSession(self)

    @contextlib.contextmanager
    def test_session(
        self, graph: Any = None, config: Any = None, use_gpu: bool = True, force_gpu: bool = False
    ) -> Iterator[None]:
        """Deprecated (use `cached_session`): eagerly, a block that yields None."""
        del graph, config, use_gpu, force_gpu
        if self.id().endswith(".test_session"):
            self.skipTest(
                'Tests that have the name "test_session" are automatically skipped by TensorFlow test fixture, as '
                "the name is reserved for creating sessions within tests. Please rename your test if you have a "
                "test with this name."
            )
        yield None

    # -- closeness ---------------------------------------------------------------------------------
    def assertNear(self, f1: Any, f2: Any, err: float, msg: str | None = None) -> None:
        """Asserts `|f1 - f2| <= err` (equal values, infinities included, always pass)."""
        first, second = np.squeeze(f1), np.squeeze(f2)
        if first != second:
            gap = math.fabs(first - second)
            note = f" ({msg})" if msg is not None else ""
            self.assertTrue(gap <= err, "%f != %f +/- %f (difference: %g)%s" % (first, second, err, gap, note))

    def assertArrayNear(
        self, farray1: Sequence[Any], farray2: Sequence[Any], err: float, msg: str | None = None
    ) -> None:
        """Asserts two float sequences have the same length and elements within `err` of each other."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for first, second in zip(farray1, farray2):
            self.assertNear(float(first), float(second), err, msg=msg)

    def assertNDArrayNear(self, ndarray1: Any, ndarray2: Any, err: float, msg: str | None = None) -> None:
        """Asserts the Euclidean norm of `ndarray1 - ndarray2` is below `err`."""
        self.assertTrue(np.linalg.norm(as_ndarray(ndarray1) - as_ndarray(ndarray2)) < err, msg=msg)

    def _assert_arrays_close(self, a: Any, b: Any, rtol: float, atol: float, msg: str | None) -> None:
        first, second = as_ndarray(a), as_ndarray(b)
        if first.shape != second.shape and (second.ndim <= 3 or second.size < 500):
            shape_text = f"Shape mismatch: expected {first.shape}, got {second.shape} with contents {second}."
        else:
            shape_text = f"Shape mismatch: expected {first.shape}, got {second.shape}."
        self.assertEqual(first.shape, second.shape, shape_text)
        original_dtype = first.dtype
        first, second = _float32_if_custom(first), _float32_if_custom(second)
        if np.allclose(first, second, rtol=rtol, atol=atol):
            return
        bad = np.logical_or(np.abs(first - second) > atol + rtol * np.abs(second), np.isnan(first) != np.isnan(second))
        lines = [msg]
        if first.ndim:
            where = _where(bad)
            lhs, rhs = first[where], second[where]
            lines.append(f"not close where = {where}")
        else:
            lhs, rhs = first, second
        lines += [
            f"not close lhs = {lhs}",
            f"not close rhs = {rhs}",
            f"not close dif = {np.abs(lhs - rhs)}",
            f"not close tol = {atol + rtol * np.abs(rhs)}",
            f"dtype = {original_dtype}, shape = {first.shape}",
        ]
        # NaNs in the same places pass here (np.allclose above does not count them equal).
        np.testing.assert_allclose(
            first, second, rtol=rtol, atol=atol, err_msg="\n".join(str(line) for line in lines), equal_nan=True
        )

    def _assert_close_nest(self, a: Any, b: Any, rtol: float, atol: float, path: list[Any], msg: str) -> None:
        if isinstance(a, RaggedTensor) or isinstance(b, RaggedTensor):
            self._assert_ragged(a, b, msg, close=(rtol, atol))
            return
        where = "[" + "][".join(str(p) for p in path) + "]" if path else ""
        a = a._asdict() if hasattr(a, "_asdict") else a
        b = b._asdict() if hasattr(b, "_asdict") else b
        if isinstance(a, Mapping) != isinstance(b, Mapping):
            raise ValueError(f"Can't compare dict to non-dict, a{where} vs b{where}. {msg}")
        value_note = f"Mismatched value: a{where} is different from b{where}. {msg}"
        if isinstance(a, Mapping):
            self.assertCountEqual(
                a.keys(),
                b.keys(),
                msg=f"mismatched keys: a{where} has keys {a.keys()}, but b{where} has keys {b.keys()}. {msg}",
            )
            for key in a:
                self._assert_close_nest(a[key], b[key], rtol, atol, [*path, key], msg)
        elif isinstance(a, (list, tuple)):
            # As one array when the sequences make one; element by element (a slower walk) when not.
            try:
                self._assert_arrays_close(as_ndarray(a), as_ndarray(b), rtol, atol, value_note)
            except (ValueError, TypeError, NotImplementedError):
                if len(a) != len(b):
                    raise ValueError(
                        f"Mismatched length: a{where} has {len(a)} items, but b{where} has {len(b)} items. {msg}"
                    ) from None
                for index, (first, second) in enumerate(zip(a, b)):
                    self._assert_close_nest(first, second, rtol, atol, [*path, str(index)], msg)
        else:
            try:
                self._assert_arrays_close(a, b, rtol, atol, value_note)
            except TypeError as error:
                note = f"Error: a{where} has {type(a)}, but b{where} has {type(b)}. {msg}"
                error.args = (f"{error.args[0] if error.args else ''} : {note}",) + error.args[1:]
                raise

    def assertAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: str | None = None) -> None:
        """Asserts two values, or nests of values (dicts, namedtuples, tuples, lists), are close elementwise.

        As `numpy.allclose`: `|a - b| <= atol + rtol * |b|` (NaNs in the same places count as equal). TF's
        defaults, `rtol=atol=1e-6`, hold for every dtype; `assertAllCloseAccordingToType` widens them.

        Raises:
          AssertionError: the values differ (or their shapes, or the keys of two dicts).
          ValueError: only one of two nested values is a dict, or two sequences that cannot be compared as
            arrays have different lengths.
        """
        self._assert_close_nest(a, b, rtol, atol, [], msg if msg else "")

    def assertAllCloseAccordingToType(
        self,
        a: Any,
        b: Any,
        rtol: float = 1e-6,
        atol: float = 1e-6,
        float_rtol: float = 1e-6,
        float_atol: float = 1e-6,
        half_rtol: float = 1e-3,
        half_atol: float = 1e-3,
        bfloat16_rtol: float = 1e-2,
        bfloat16_atol: float = 1e-2,
        msg: str | None = None,
    ) -> None:
        """`assertAllClose` with tolerances at least those of the lowest precision of the two values' dtypes.

        float32/complex64 use at least `float_rtol`/`float_atol`, float16 `half_*` and bfloat16 `bfloat16_*`.
        """
        first, second = as_ndarray(a), as_ndarray(b)
        kinds = {first.dtype, second.dtype}
        if kinds & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if np.dtype(dtypes.bfloat16.as_numpy_dtype) in kinds:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(first, second, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: str | None = None) -> None:
        """Asserts two values are not close at every element (`assertAllClose` would fail)."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are close at all elements. {msg or ''}")

    # -- equality ------------------------------------------------------------------------------------
    def assertAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:
        """Asserts two values (arrays, tensors, nested lists) have the same shape and elements (NaN equals NaN)."""
        if isinstance(a, RaggedTensor) or isinstance(b, RaggedTensor):
            self._assert_ragged(a, b, msg)
            return
        note = msg if msg else ""
        first, second = as_ndarray(a), as_ndarray(b)
        if second.ndim <= 3 or second.size < 500:
            shape_text = f"Shape mismatch: expected {first.shape}, got {second.shape}. Contents: {second!r}. \n{note}."
        else:
            shape_text = f"Shape mismatch: expected {first.shape}, got {second.shape}. {note}"
        self.assertEqual(first.shape, second.shape, shape_text)
        same = first == second
        if _is_floating(first.dtype):
            same = np.logical_or(same, np.logical_and(np.isnan(first), np.isnan(second)))
        if np.all(same):
            return
        lines = [note]
        if first.ndim:
            where = _where(np.logical_not(same))
            lhs, rhs = first[where], second[where]
            lines.append(f"not equal where = {where}")
        else:
            lhs, rhs = first, second
        lines += [f"not equal lhs = {lhs!r}", f"not equal rhs = {rhs!r}"]
        text_kinds = {"U", "S", "O"}
        if first.dtype.kind != second.dtype.kind and {first.dtype.kind, second.dtype.kind} <= text_kinds:
            # str and bytes compare as bytes, as TF's string tensors hold bytes.
            first, second = (
                np.array([x.encode("utf-8") if isinstance(x, str) else x for x in array.flat]).reshape(array.shape)
                for array in (first, second)
            )
        np.testing.assert_array_equal(first, second, err_msg="\n".join(lines))

    def assertNotAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:
        """Asserts two values differ somewhere (`assertAllEqual` would fail)."""
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def _ragged_list(self, value: Any) -> Any:
        if isinstance(value, RaggedTensor):
            return value.to_list()
        if isinstance(value, RaggedTensorValue):
            return value.to_list()
        if isinstance(value, (Tensor, Variable)):
            array = value.numpy()
            return array.tolist() if isinstance(array, np.ndarray) else array
        if isinstance(value, np.ndarray):
            return value.tolist()
        return np.array(value, dtype=object).tolist()

    def _assert_ragged(self, a: Any, b: Any, msg: str | None, close: tuple[float, float] | None = None) -> None:
        first, second = self._ragged_list(a), self._ragged_list(b)
        if close is None:
            self.assertEqual(first, second, msg)
        else:
            self._assert_lists_close(first, second, close[0], close[1], msg, "value")
        if not (isinstance(a, (list, tuple)) or isinstance(b, (list, tuple))):
            ranks = [value.ragged_rank if isinstance(value, RaggedTensor) else 0 for value in (a, b)]
            self.assertEqual(ranks[0], ranks[1], msg)

    def _assert_lists_close(self, a: Any, b: Any, rtol: float, atol: float, msg: str | None, path: str) -> None:
        self.assertEqual(type(a), type(b))
        if isinstance(a, (list, tuple)):
            self.assertLen(a, len(b), f"Length differs for {path}")
            for index, (first, second) in enumerate(zip(a, b)):
                self._assert_lists_close(first, second, rtol, atol, msg, f"{path}[{index}]")
        else:
            self._assert_close_nest(a, b, rtol, atol, [path], msg or "")

    # -- elementwise bounds ------------------------------------------------------------------------------
    def assertAllGreater(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of `a` is greater than `comparison_target`."""
        self.assertGreater(np.min(as_ndarray(a)), comparison_target)

    def assertAllLess(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of `a` is less than `comparison_target`."""
        self.assertLess(np.max(as_ndarray(a)), comparison_target)

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of `a` is greater than or equal to `comparison_target`."""
        self.assertGreaterEqual(np.min(as_ndarray(a)), comparison_target)

    def assertAllLessEqual(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of `a` is less than or equal to `comparison_target`."""
        self.assertLessEqual(np.max(as_ndarray(a)), comparison_target)

    @staticmethod
    def _subscript_lines(subscripts: tuple[np.ndarray, ...], value: np.ndarray, limit: int = 10) -> list[str]:
        if np.ndim(value) == 0:
            return [f"  [0] : {value}"]
        rows = np.transpose(subscripts)
        lines = [f"  {row} : {value[tuple(row)]}" for row in rows[:limit]]
        return lines + (["  ..."] if len(rows) > limit else [])

    def assertAllInRange(
        self,
        target: Any,
        lower_bound: Any,
        upper_bound: Any,
        open_lower_bound: bool = False,
        open_upper_bound: bool = False,
    ) -> None:
        """Asserts every element of `target` lies in `[lower_bound, upper_bound]` (or the open bounds chosen).

        Raises:
          AssertionError: the dtype is not an ordered number type, an element is NaN, or one lies outside.
        """
        array = as_ndarray(target)
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
            raise AssertionError(
                f"The value of {array} does not have an ordered numeric type, instead it has type: {array.dtype}"
            )
        nans = _where(np.isnan(array))
        if np.size(nans):
            raise AssertionError(
                f"{len(nans[0])} of the {np.size(array)} element(s) are NaN. "
                "Subscripts(s) and value(s) of the NaN element(s):\n" + "\n".join(self._subscript_lines(nans, array))
            )
        below = array <= lower_bound if open_lower_bound else array < lower_bound
        above = array >= upper_bound if open_upper_bound else array > upper_bound
        outside = _where(np.logical_or(below, above))
        if np.size(outside):
            interval = (
                ("(" if open_lower_bound else "[")
                + f"{lower_bound}, {upper_bound}"
                + (")" if open_upper_bound else "]")
            )
            raise AssertionError(
                f"{len(outside[0])} of the {np.size(array)} element(s) are outside the range {interval}. "
                "Subscript(s) and value(s) of the offending elements:\n"
                + "\n".join(self._subscript_lines(outside, array))
            )

    def assertAllInSet(self, target: Any, expected_set: Iterable[Any]) -> None:
        """Asserts every element of `target` is in `expected_set`."""
        missing = np.setdiff1d(as_ndarray(target).flatten(), list(expected_set))
        if np.size(missing):
            raise AssertionError(f"{np.size(missing)} unique element(s) are not in the set {expected_set}: {missing}")

    def assertDTypeEqual(self, target: Any, expected_dtype: Any) -> None:
        """Asserts the NumPy dtype of `target` is `expected_dtype` (a NumPy dtype or type, or a `tf.DType`)."""
        found = as_ndarray(target).dtype
        if found != _expected_dtype(expected_dtype):
            self.fail(f"{found!r} != {expected_dtype!r}")

    def assertShapeEqual(self, input_a: Any, input_b: Any, msg: str | None = None) -> None:
        """Asserts two NumPy arrays or scalars, or tensors, have the same (static) shape.

        Raises:
          TypeError: an argument is neither a NumPy array or scalar nor a tensor.
        """
        shapes: list[Any] = []
        for name, value in (("input_a", input_a), ("input_b", input_b)):
            if isinstance(value, Tensor):
                shapes.append(value.get_shape().as_list())
            elif isinstance(value, (np.ndarray, np.generic)):
                shapes.append(value.shape)
            else:
                raise TypeError(
                    f"{name} must be a Numpy ndarray, Numpy scalar, or a Tensor.Instead received {type(value)}"
                )
        self.assertAllEqual(shapes[0], shapes[1], msg=msg)

    def assertDeviceEqual(self, device1: Any, device2: Any, msg: str | None = None) -> None:
        """Asserts two device names (or `tf.DeviceSpec`s) name the same device."""
        names = [
            (d if isinstance(d, DeviceSpec) else DeviceSpec.from_string(d)).to_string() for d in (device1, device2)
        ]
        self.assertEqual(names[0], names[1], f"Devices {names[0]} and {names[1]} are not equal. {msg}")

    def assertDictEqual(self, a: Any, b: Any, msg: Any = None) -> None:
        """`unittest`'s `assertDictEqual`, or, when it fails on tensor values, a key-by-key comparison of values.

        Float values are compared with `assertAllClose`, others with `assertAllEqual`.
        """
        try:
            super().assertDictEqual(a, b, msg)
        except Exception:  # noqa: BLE001 - tensors make unittest's comparison fail or raise
            self.assertSameElements(a.keys(), b.keys())
            for key, value in a.items():
                if np.issubdtype(as_ndarray(value).dtype, np.floating):
                    self.assertAllClose(value, b[key], msg=key)
                else:
                    self.assertAllEqual(value, b[key], msg=key)

    # -- errors --------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(
        self, exception_type: type[BaseException] | tuple[type[BaseException], ...], expected_err_re_or_predicate: Any
    ) -> Iterator[None]:
        """A block that must raise `exception_type` whose message matches a regex (searched), or whose
        exception satisfies a predicate (a callable).

        Raises:
          AssertionError: nothing was raised, or another exception, or one the regex or predicate refuses.
        """
        predicate: Callable[[BaseException], Any] = (
            expected_err_re_or_predicate
            if callable(expected_err_re_or_predicate)
            else _message_search(expected_err_re_or_predicate)
        )
        try:
            yield
        except Exception as error:  # noqa: BLE001 - any exception is judged below
            if not isinstance(error, exception_type) or not predicate(error):
                raise AssertionError(f"Exception of type {type(error)}: {error}") from error
            return
        names = exception_type if isinstance(exception_type, tuple) else (exception_type,)
        self.fail(" or ".join(t.__name__ for t in names) + " not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate: Any) -> Any:
        """A block that must raise a `tf.errors.OpError` matching a regex or predicate."""
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

    def assertRaisesIncompatibleShapesError(
        self, exception_type: type[BaseException] = errors.InvalidArgumentError
    ) -> Any:
        """A block that must raise `exception_type` saying that shapes are incompatible."""
        return self.assertRaisesWithPredicateMatch(
            exception_type, r"Incompatible shapes|Dimensions must be equal|required broadcastable shapes"
        )

    # -- absl's helpers that TF tests use ------------------------------------------------------------
    def assertStartsWith(self, actual: str, expected_start: str, msg: str | None = None) -> None:
        """Asserts `actual` starts with `expected_start`."""
        if not actual.startswith(expected_start):
            self.fail(f"{actual!r} does not start with {expected_start!r}" + (f" : {msg!r}" if msg else ""))

    def assertEndsWith(self, actual: str, expected_end: str, msg: str | None = None) -> None:
        """Asserts `actual` ends with `expected_end`."""
        if not actual.endswith(expected_end):
            self.fail(f"{actual!r} does not end with {expected_end!r}" + (f" : {msg!r}" if msg else ""))

    def assertLen(self, container: Any, expected_len: int, msg: str | None = None) -> None:
        """Asserts `len(container) == expected_len`."""
        if len(container) != expected_len:
            note = f" : {msg}" if msg else ""
            self.fail(f"{container!r} has length of {len(container)}, expected {expected_len}.{note}")

    def assertEmpty(self, container: Any, msg: str | None = None) -> None:
        """Asserts `container` has no elements."""
        if len(container):
            self.fail(f"{container!r} has length of {len(container)}." + (f" : {msg}" if msg else ""))

    def assertNotEmpty(self, container: Any, msg: str | None = None) -> None:
        """Asserts `container` has elements."""
        if not len(container):
            self.fail(f"{container!r} has length of 0." + (f" : {msg}" if msg else ""))

    def assertSameElements(
        self, expected_seq: Iterable[Any], actual_seq: Iterable[Any], msg: str | None = None
    ) -> None:
        """Asserts the two iterables hold the same set of elements (counts ignored)."""
        expected, actual = set(expected_seq), set(actual_seq)
        if expected != actual:
            self.fail(
                f"Expected, but missing:\n  {sorted(expected - actual, key=repr)!r}\n"
                f"Unexpected, but present:\n  {sorted(actual - expected, key=repr)!r}\n" + (f" : {msg}" if msg else "")
            )

    def assertBetween(self, value: Any, minv: Any, maxv: Any, msg: str | None = None) -> None:
        """Asserts `minv <= value <= maxv`."""
        note = f'"{value!r}" unexpectedly not between "{minv!r}" and "{maxv!r}"' + (f" : {msg}" if msg else "")
        self.assertLessEqual(minv, value, note)
        self.assertGreaterEqual(maxv, value, note)

    assertItemsEqual = unittest.TestCase.assertCountEqual
    assertRaisesRegexp = unittest.TestCase.assertRaisesRegex
