"""`tf.test`: TestCase's assertions, evaluate and sessions, compute_gradient and the device questions, against TF.

Each case is one call on a `tf.test.TestCase` instance, `case(tf, test)`, run with real TensorFlow's
TestCase and with tapeshim's: both pass, or both raise the same exception class (and, where the case
says so, the same message).
"""

from __future__ import annotations

import collections
import io
import os
import random
import unittest
from typing import Any, Callable

import numpy as np
import pytest

import tapeshim
from oracle import real_tf
from tapeshim._src import tf_test_platform as test_platform

MODULES = {"tf": real_tf, "tapeshim": tapeshim}
Point = collections.namedtuple("Point", ["x", "y"])


def _test_case(module: Any) -> Any:
    class Probe(module.test.TestCase):
        def runTest(self) -> None:  # noqa: N802 - unittest's name
            pass

    probe = Probe()
    probe.setUp()
    return probe


def _outcome(module: Any, case: Callable[[Any, Any], Any]) -> tuple[str, str] | None:
    test = _test_case(module)
    try:
        case(module, test)
    except Exception as error:  # noqa: BLE001 - the exception is the comparison
        return type(error).__name__, str(error)
    finally:
        test.tearDown()
    return None


def _compare(case: Callable[[Any, Any], Any], messages: bool = False) -> tuple[str, str] | None:
    expected, actual = _outcome(real_tf, case), _outcome(tapeshim, case)
    if expected is None or actual is None:
        assert expected == actual, f"TF: {expected}, tapeshim: {actual}"
        return None
    assert expected[0] == actual[0], f"TF raised {expected}, tapeshim raised {actual}"
    if messages:
        assert expected[1] == actual[1], f"messages differ:\nTF:       {expected[1]!r}\ntapeshim: {actual[1]!r}"
    return actual


def f32(tf: Any, values: Any) -> Any:
    return tf.constant(values, tf.float32)


# (id, case): both pass, or both raise the same exception class with the same message (unless in MESSAGES_DIFFER)
CASES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    # assertAllClose: TF's default tolerances are rtol = atol = 1e-6, whatever the dtype
    ("close_equal", lambda tf, t: t.assertAllClose(f32(tf, [1.0, 2.0]), [1.0, 2.0])),
    ("close_within", lambda tf, t: t.assertAllClose(f32(tf, [1.0, 2.0]), [1.0000005, 2.000001])),
    ("close_outside", lambda tf, t: t.assertAllClose(f32(tf, [1.0, 2.0]), [1.0, 2.001])),
    ("close_scalar", lambda tf, t: t.assertAllClose(1.0, tf.constant(1.5))),
    ("close_msg", lambda tf, t: t.assertAllClose([1.0], [2.0], msg="mine")),
    ("close_rtol", lambda tf, t: t.assertAllClose(f32(tf, [100.0]), [100.5], rtol=1e-2)),
    ("close_atol", lambda tf, t: t.assertAllClose(f32(tf, [0.0]), [0.05], atol=0.1)),
    ("close_f16_default", lambda tf, t: t.assertAllClose(tf.constant([1.0], tf.float16), [1.0005])),
    ("close_f64", lambda tf, t: t.assertAllClose(tf.constant([1.0], tf.float64), [1.0 + 1e-9])),
    ("close_shape", lambda tf, t: t.assertAllClose(f32(tf, [1.0, 2.0]), [[1.0, 2.0]])),
    ("close_nan_nan", lambda tf, t: t.assertAllClose([np.nan, 1.0], f32(tf, [np.nan, 1.0]))),
    ("close_nan_one", lambda tf, t: t.assertAllClose([np.nan], [1.0])),
    ("close_inf", lambda tf, t: t.assertAllClose([np.inf], f32(tf, [np.inf]))),
    ("close_int", lambda tf, t: t.assertAllClose(tf.constant([1, 2]), [1, 3])),
    ("close_variable", lambda tf, t: t.assertAllClose(tf.Variable([1.0, 2.0]), [1.0, 2.0])),
    ("close_complex", lambda tf, t: t.assertAllClose(tf.constant([1 + 2j]), [1 + 2.1j])),
    ("close_bf16", lambda tf, t: t.assertAllClose(tf.constant([1.0], tf.bfloat16), [1.0])),
    ("close_dict", lambda tf, t: t.assertAllClose({"a": f32(tf, 1.0), "b": [2.0]}, {"a": 1.0, "b": [2.0]})),
    ("close_dict_bad", lambda tf, t: t.assertAllClose({"a": f32(tf, 1.0)}, {"a": 1.5})),
    ("close_dict_keys", lambda tf, t: t.assertAllClose({"a": 1.0}, {"b": 1.0})),
    ("close_dict_vs_list", lambda tf, t: t.assertAllClose({"a": 1.0}, [1.0])),
    (
        "close_nested_path",
        lambda tf, t: t.assertAllClose([(1.0, 1.0), {"d": (6.0, 7.0)}], [(1.0, 1.0), {"d": (6.0, 8.0)}]),
    ),
    ("close_namedtuple", lambda tf, t: t.assertAllClose(Point(f32(tf, 1.0), 2.0), Point(1.0, 2.0))),
    ("close_namedtuple_dict", lambda tf, t: t.assertAllClose(Point(1.0, 2.0), {"x": 1.0, "y": 2.0})),
    ("close_uneven_lengths", lambda tf, t: t.assertAllClose([[1.0], [2.0, 3.0]], [[1.0], [2.0, 3.0], [4.0]])),
    ("close_uneven_equal", lambda tf, t: t.assertAllClose([[1.0], [2.0, 3.0]], [[1.0], [2.0, 3.0]])),
    ("close_uneven_bad", lambda tf, t: t.assertAllClose([[1.0], [2.0, 3.0]], [[1.0], [2.0, 3.5]])),
    ("close_list_lengths", lambda tf, t: t.assertAllClose([1.0, 2.0], [1.0, 2.0, 3.0])),
    ("close_tensors_list", lambda tf, t: t.assertAllClose([f32(tf, 1.0), f32(tf, 2.0)], f32(tf, [1.0, 2.0]))),
    ("close_strings", lambda tf, t: t.assertAllClose(tf.constant(["a"]), ["a"])),
    ("close_ragged", lambda tf, t: t.assertAllClose(tf.ragged.constant([[1.0, 2.0], [3.0]]), [[1.0, 2.0], [3.0]])),
    (
        "close_ragged_bad",
        lambda tf, t: t.assertAllClose(
            tf.ragged.constant([[1.0, 2.0], [3.0]]), tf.ragged.constant([[1.0, 2.0], [3.5]])
        ),
    ),
    (
        "close_ragged_shape",
        lambda tf, t: t.assertAllClose(
            tf.ragged.constant([[1.0, 2.0], [3.0]]), tf.ragged.constant([[1.0], [2.0, 3.0]])
        ),
    ),
    ("not_close_pass", lambda tf, t: t.assertNotAllClose(f32(tf, [1.0, 2.0]), [1.0, 2.5])),
    ("not_close_fail", lambda tf, t: t.assertNotAllClose(f32(tf, [1.0, 2.0]), [1.0, 2.0], msg="m")),
    # assertAllCloseAccordingToType
    (
        "by_type_f16",
        lambda tf, t: t.assertAllCloseAccordingToType(tf.constant([1.0], tf.float16), np.array([1.0005], np.float16)),
    ),
    (
        "by_type_f16_bad",
        lambda tf, t: t.assertAllCloseAccordingToType(tf.constant([1.0], tf.float16), np.array([1.01], np.float16)),
    ),
    (
        "by_type_bf16",
        lambda tf, t: t.assertAllCloseAccordingToType(
            tf.constant([1.0], tf.bfloat16), tf.constant([1.0078125], tf.bfloat16)
        ),
    ),
    ("by_type_f32", lambda tf, t: t.assertAllCloseAccordingToType(f32(tf, [1.0]), np.array([1.0000005], np.float32))),
    (
        "by_type_f32_wide",
        lambda tf, t: t.assertAllCloseAccordingToType(f32(tf, [1.0]), np.float32([1.00001]), float_rtol=1e-4),
    ),
    ("by_type_f64", lambda tf, t: t.assertAllCloseAccordingToType(tf.constant([1.0], tf.float64), [1.00001])),
    # assertAllEqual / assertNotAllEqual
    ("equal_ints", lambda tf, t: t.assertAllEqual(tf.constant([1, 2]), [1, 2])),
    ("equal_ints_bad", lambda tf, t: t.assertAllEqual(tf.constant([1, 2]), [1, 3])),
    ("equal_scalar_bad", lambda tf, t: t.assertAllEqual(tf.constant(1), 2)),
    ("equal_shape", lambda tf, t: t.assertAllEqual(tf.constant([1, 2]), [[1, 2]])),
    ("equal_nan", lambda tf, t: t.assertAllEqual(f32(tf, [np.nan, 1.0]), [np.nan, 1.0])),
    ("equal_bool", lambda tf, t: t.assertAllEqual(tf.constant([True, False]), [True, True])),
    ("equal_strings", lambda tf, t: t.assertAllEqual(tf.constant(["ab", "c"]), [b"ab", b"c"])),
    ("equal_str_bytes", lambda tf, t: t.assertAllEqual(tf.constant(["ab", "c"]), ["ab", "c"])),
    ("equal_strings_bad", lambda tf, t: t.assertAllEqual(tf.constant(["ab"]), [b"x"])),
    ("equal_ragged", lambda tf, t: t.assertAllEqual(tf.ragged.constant([[1, 2], [3]]), [[1, 2], [3]])),
    ("equal_ragged_bad", lambda tf, t: t.assertAllEqual(tf.ragged.constant([[1, 2], [3]]), [[1, 2], [4]])),
    ("equal_msg", lambda tf, t: t.assertAllEqual([1], [2], msg="why")),
    ("not_equal_pass", lambda tf, t: t.assertNotAllEqual(tf.constant([1, 2]), [1, 3])),
    ("not_equal_fail", lambda tf, t: t.assertNotAllEqual(tf.constant([1, 2]), [1, 2], msg="m")),
    # bounds, ranges and sets
    ("greater", lambda tf, t: t.assertAllGreater(f32(tf, [1.0, 2.0]), 0.5)),
    ("greater_bad", lambda tf, t: t.assertAllGreater(f32(tf, [1.0, 2.0]), 1.0)),
    ("less", lambda tf, t: t.assertAllLess(tf.constant([1, 2]), 3)),
    ("less_bad", lambda tf, t: t.assertAllLess(tf.constant([1, 2]), 2)),
    ("greater_equal", lambda tf, t: t.assertAllGreaterEqual(f32(tf, [1.0, 2.0]), 1.0)),
    ("greater_equal_bad", lambda tf, t: t.assertAllGreaterEqual(f32(tf, [1.0, 2.0]), 1.5)),
    ("less_equal", lambda tf, t: t.assertAllLessEqual(f32(tf, [1.0, 2.0]), 2.0)),
    ("less_equal_bad", lambda tf, t: t.assertAllLessEqual(f32(tf, [1.0, 2.0]), 1.5)),
    ("range", lambda tf, t: t.assertAllInRange(f32(tf, [0.0, 0.5, 1.0]), 0.0, 1.0)),
    ("range_open_lower", lambda tf, t: t.assertAllInRange(f32(tf, [0.0, 0.5]), 0.0, 1.0, open_lower_bound=True)),
    ("range_open_upper", lambda tf, t: t.assertAllInRange(f32(tf, [[0.5, 1.0]]), 0.0, 1.0, open_upper_bound=True)),
    ("range_outside", lambda tf, t: t.assertAllInRange(tf.constant([1, 5, 9]), 2, 6)),
    ("range_scalar", lambda tf, t: t.assertAllInRange(tf.constant(7), 2, 6)),
    ("range_nan", lambda tf, t: t.assertAllInRange(f32(tf, [np.nan, 0.5]), 0.0, 1.0)),
    ("range_strings", lambda tf, t: t.assertAllInRange(tf.constant(["a"]), 0, 1)),
    ("range_many", lambda tf, t: t.assertAllInRange(tf.range(20), 0, 5)),
    ("in_set", lambda tf, t: t.assertAllInSet(tf.constant([1, 2, 1]), {1, 2})),
    ("in_set_bad", lambda tf, t: t.assertAllInSet(tf.constant([[1, 3], [4, 4]]), [1, 2])),
    # shapes, dtypes, nearness
    ("shape_equal", lambda tf, t: t.assertShapeEqual(np.zeros((2, 3)), tf.zeros([2, 3]))),
    ("shape_scalar", lambda tf, t: t.assertShapeEqual(np.float32(1.0), tf.constant(2.0))),
    ("shape_bad", lambda tf, t: t.assertShapeEqual(np.zeros((2, 3)), tf.zeros([3, 2]))),
    ("shape_list", lambda tf, t: t.assertShapeEqual([1, 2], tf.zeros([2]))),
    ("dtype_tf", lambda tf, t: t.assertDTypeEqual(f32(tf, [1.0]), tf.float32)),
    ("dtype_np", lambda tf, t: t.assertDTypeEqual(tf.constant([1], tf.int64), np.int64)),
    ("dtype_bad", lambda tf, t: t.assertDTypeEqual(f32(tf, [1.0]), np.float64)),
    ("dtype_list", lambda tf, t: t.assertDTypeEqual([1.0, 2.0], np.float64)),
    ("near", lambda tf, t: t.assertNear(1.0, 1.05, 0.1)),
    ("near_bad", lambda tf, t: t.assertNear(1.0, 1.5, 0.1, msg="m")),
    ("near_inf", lambda tf, t: t.assertNear(np.inf, np.inf, 0.1)),
    ("near_tensor", lambda tf, t: t.assertNear(f32(tf, [2.0]), 2.0, 1e-6)),
    ("array_near", lambda tf, t: t.assertArrayNear([1.0, 2.0], [1.01, 1.99], 0.02)),
    ("array_near_bad", lambda tf, t: t.assertArrayNear([1.0, 2.0], [1.0, 2.5], 0.1)),
    ("array_near_length", lambda tf, t: t.assertArrayNear([1.0, 2.0], [1.0], 0.1)),
    ("ndarray_near", lambda tf, t: t.assertNDArrayNear(np.ones(3), np.ones(3) + 0.001, 0.01)),
    ("ndarray_near_bad", lambda tf, t: t.assertNDArrayNear(np.ones(3), np.ones(3) + 0.1, 0.01)),
    ("starts_with", lambda tf, t: t.assertStartsWith("abc", "ab")),
    ("starts_with_bad", lambda tf, t: t.assertStartsWith("abc", "b", msg="m")),
    (
        "dict_equal_tensors",
        lambda tf, t: t.assertDictEqual({"a": f32(tf, [1.0]), "b": tf.constant([1])}, {"a": [1.0], "b": [1]}),
    ),
    ("dict_equal_bad", lambda tf, t: t.assertDictEqual({"a": tf.constant([1])}, {"a": [2]})),
    ("items_equal", lambda tf, t: t.assertItemsEqual([1, 2, 2], [2, 1, 2])),
    ("len", lambda tf, t: t.assertLen([1, 2], 2)),
    ("len_bad", lambda tf, t: t.assertLen([1, 2], 3)),
    ("empty", lambda tf, t: t.assertEmpty([])),
    ("not_empty_bad", lambda tf, t: t.assertNotEmpty([])),
    ("same_elements", lambda tf, t: t.assertSameElements([1, 2, 2], [2, 1])),
    ("same_elements_bad", lambda tf, t: t.assertSameElements([1, 2], [3])),
    ("between_bad", lambda tf, t: t.assertBetween(5, 1, 3)),
]


def _raises(tf: Any, t: Any, context: Any, body: Callable[[], Any]) -> None:
    with context:
        body()


ERROR_CASES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    (
        "op_error",
        lambda tf, t: _raises(
            tf, t, t.assertRaisesOpError("requested shape"), lambda: tf.reshape(tf.range(3), [2]).numpy()
        ),
    ),
    (
        "op_error_regex_bad",
        lambda tf, t: _raises(tf, t, t.assertRaisesOpError("zebra"), lambda: tf.reshape(tf.range(3), [2]).numpy()),
    ),
    ("op_error_not_raised", lambda tf, t: _raises(tf, t, t.assertRaisesOpError("x"), lambda: tf.range(3))),
    (
        "op_error_other_class",
        lambda tf, t: _raises(tf, t, t.assertRaisesOpError("x"), lambda: (_ for _ in ()).throw(ValueError("x"))),
    ),
    (
        "predicate",
        lambda tf, t: _raises(
            tf,
            t,
            t.assertRaisesWithPredicateMatch(ValueError, lambda e: "bad" in str(e)),
            lambda: (_ for _ in ()).throw(ValueError("bad value")),
        ),
    ),
    (
        "predicate_false",
        lambda tf, t: _raises(
            tf,
            t,
            t.assertRaisesWithPredicateMatch(ValueError, lambda e: False),
            lambda: (_ for _ in ()).throw(ValueError("bad value")),
        ),
    ),
    (
        "predicate_class",
        lambda tf, t: _raises(
            tf,
            t,
            t.assertRaisesWithPredicateMatch(tf.errors.InvalidArgumentError, "Incompatible|must be|Input to reshape"),
            lambda: tf.reshape(tf.range(3), [2]).numpy(),
        ),
    ),
    (
        "incompatible_shapes",
        lambda tf, t: _raises(tf, t, t.assertRaisesIncompatibleShapesError(), lambda: tf.range(3) + tf.range(2)),
    ),
]


MESSAGES_DIFFER = {
    "close_strings": "the message names the tensor's class",
    "close_ragged_bad": "TF's message spells its path `value[1][0]` letter by letter (`[v][a][l]...`)",
    "op_error_regex_bad": "the message names the error's class, and TF's op messages start with its kernel's name",
    "op_error_not_raised": "TF's says `Exception of type <class 'AssertionError'>: OpError not raised`",
}


@pytest.mark.parametrize("name, case", CASES + ERROR_CASES, ids=[c[0] for c in CASES + ERROR_CASES])
def test_assertion_like_tf(name: str, case: Callable[[Any, Any], Any]) -> None:
    _compare(case, messages=name not in MESSAGES_DIFFER)


def test_failures_are_assertion_errors_with_tf_details() -> None:
    raised = _compare(lambda tf, t: t.assertAllClose(f32(tf, [1.0, 2.0, 3.0]), [1.0, 2.5, 3.5]), messages=True)
    assert raised is not None and raised[0] == "AssertionError"
    for line in ("not close where = (array([1, 2]),)", "not close lhs = [2. 3.]", "dtype = float32, shape = (3,)"):
        assert line in raised[1]


# -- evaluate and the eager sessions ----------------------------------------------------------------------
def _describe(value: Any) -> Any:
    """A module-independent description of what `evaluate` gave."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.name, value.tolist())
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.name, value.item())
    if hasattr(value, "to_list") and hasattr(value, "row_splits"):
        return ("RaggedTensorValue", value.to_list(), value.ragged_rank, _describe(value.flat_values), str(value))
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, value._fields, [_describe(v) for v in value])
    if isinstance(value, dict):
        return [(k, _describe(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_describe(v) for v in value])
    return value


EVALUATED: list[tuple[str, Callable[[Any], Any]]] = [
    ("tensor", lambda tf: f32(tf, [1.0, 2.0])),
    ("scalar", lambda tf: tf.constant(3)),
    ("none", lambda tf: None),
    ("list_with_none", lambda tf: [tf.constant(1.0), None]),
    ("dict", lambda tf: {"b": tf.constant([1, 2]), "a": (tf.Variable(2.0),)}),
    ("namedtuple", lambda tf: Point(tf.constant(1), [tf.constant(2.0)])),
    ("callable", lambda tf: lambda: tf.constant([3])),
    ("sparse", lambda tf: tf.sparse.from_dense(tf.constant([[0, 1], [2, 0]], tf.int64))),
    ("ragged", lambda tf: tf.ragged.constant([[1, 2], [3]])),
    ("ragged_2", lambda tf: tf.ragged.constant([[[1, 2]], [[3], []]])),
    ("indexed_slices", lambda tf: tf.IndexedSlices(f32(tf, [[1.0]]), tf.constant([0]))),
    ("python_float", lambda tf: 1.0),
    ("numpy_array", lambda tf: np.array([1.0])),
    ("string", lambda tf: tf.constant(["a", "bc"])),
]


@pytest.mark.parametrize("name, make", EVALUATED, ids=[c[0] for c in EVALUATED])
def test_evaluate_like_tf(name: str, make: Callable[[Any], Any]) -> None:
    results = []
    for module in MODULES.values():
        test = _test_case(module)
        try:
            results.append(_describe(test.evaluate(make(module))))
        except Exception as error:  # noqa: BLE001 - the exception is the comparison
            results.append((type(error).__name__, str(error)))
    assert results[0] == results[1]


def test_sessions_are_eager_like_tf() -> None:
    for module in MODULES.values():
        test = _test_case(module)
        with test.cached_session() as session:
            assert session.run(f32(module, [1.0, 2.0])).tolist() == [1.0, 2.0]
            assert session.run({"a": module.constant(1)}) == {"a": 1}
            with pytest.raises(RuntimeError, match="feed_dict is not supported"):
                session.run(module.constant(1), feed_dict={"x": 1})
        with test.session() as warner:
            with pytest.raises(AttributeError, match="eager execution"):
                warner.run(module.constant(1))
        with test.test_session() as nothing:
            assert nothing is None


def test_set_up_seeds_and_temp_dirs_like_tf() -> None:
    draws = {}
    for name, module in MODULES.items():
        test = _test_case(module)
        draws[name] = (random.random(), float(np.random.rand()))
        first = test.get_temp_dir()
        assert os.path.isdir(first) and test.get_temp_dir() == first
        assert _test_case(module).get_temp_dir() != first
    assert draws["tf"] == draws["tapeshim"]


def test_tapeshim_set_up_seeds_its_random_ops() -> None:
    first = _test_case(tapeshim)
    a = tapeshim.random.uniform([3]).numpy()
    second = _test_case(tapeshim)
    del first, second
    _test_case(tapeshim)
    assert np.array_equal(tapeshim.random.uniform([3]).numpy(), a)


# -- a whole test class, run by unittest with each module -----------------------------------------------
def _suite_class(module: Any) -> type:
    tf = module

    class Suite(tf.test.TestCase):
        def test_passes(self) -> None:
            x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
            self.assertAllClose(self.evaluate(tf.matmul(x, x)), [[7.0, 10.0], [15.0, 22.0]])
            self.assertAllEqual(tf.shape(x), [2, 2])
            with self.cached_session():
                self.assertAllInRange(x, 1.0, 4.0)

        def test_fails(self) -> None:
            self.assertAllClose(tf.constant([1.0]), [1.1])

        def test_errors(self) -> None:
            self.assertAllClose({"a": 1.0}, [1.0])

        def test_op_error(self) -> None:
            with self.assertRaisesOpError("."):
                tf.reshape(tf.range(3), [2]).numpy()

        @tf.test.disable_with_predicate(lambda: True, "disabled here")
        def test_disabled(self) -> None:
            raise AssertionError("never runs")

        def test_session(self) -> None:  # TF skips a test of this name (it is its session helper's)
            raise AssertionError("never runs")

    return Suite


def test_unittest_runs_the_same_class_alike() -> None:
    summaries = []
    for module in MODULES.values():
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(_suite_class(module))
        result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
        summaries.append(
            (
                result.testsRun,
                sorted(t.id().rsplit(".", 1)[1] for t, _ in result.failures),
                sorted(t.id().rsplit(".", 1)[1] for t, _ in result.errors),
                sorted((t.id().rsplit(".", 1)[1], why) for t, why in result.skipped),
            )
        )
    assert summaries[0] == summaries[1]
    assert summaries[1][1] == ["test_fails"] and summaries[1][2] == ["test_errors"]


# -- compute_gradient ----------------------------------------------------------------------------------
GRADIENT_CASES: list[tuple[str, Callable[[Any], Any], Callable[[Any], list[Any]]]] = [
    ("square_python_float", lambda tf: lambda x: x * x, lambda tf: [3.0]),
    ("matmul_float64", lambda tf: tf.matmul, lambda tf: [np.arange(6.0).reshape(2, 3), np.ones((3, 2))]),
    (
        "reduce_float32",
        lambda tf: lambda x: tf.reduce_sum(x**2, axis=1),
        lambda tf: [np.arange(6, dtype=np.float32).reshape(2, 3)],
    ),
    ("two_arguments", lambda tf: lambda a, b: a * b + a, lambda tf: [np.float32([1.0, 2.0]), np.float32([3.0, 4.0])]),
    ("complex64", lambda tf: lambda z: z * z, lambda tf: [np.array([1 + 2j, 3 - 1j], np.complex64)]),
    (
        "real_to_complex",
        lambda tf: lambda v: tf.complex(v, 2 * v) * tf.complex(v, v),
        lambda tf: [np.float64([1.0, 2.0])],
    ),
    ("gather_indexed_slices", lambda tf: lambda p: tf.gather(p, [0, 2, 0]), lambda tf: [np.arange(6.0).reshape(3, 2)]),
    ("float16", lambda tf: lambda x: x * 3.0, lambda tf: [np.array([1.0, 2.0], np.float16)]),
    ("cast_to_float64", lambda tf: lambda x: tf.cast(x, tf.float64) * 2, lambda tf: [np.float32([1.0, 2.0])]),
    ("tf_function", lambda tf: tf.function(lambda x: x * x * x), lambda tf: [np.float32([0.5, -1.0])]),
    ("unconnected", lambda tf: lambda a, b: a * 2.0, lambda tf: [np.float32([1.0]), np.float32([2.0])]),
    ("empty_result", lambda tf: lambda x: x[:0], lambda tf: [np.float32([1.0, 2.0])]),
    ("delta", lambda tf: lambda x: x * x, lambda tf: [np.float64([1.0, 2.0])]),
    ("int_argument", lambda tf: lambda x: x * 2, lambda tf: [np.array([1, 2])]),
    ("int_result", lambda tf: lambda x: tf.cast(x, tf.int32), lambda tf: [np.float32([1.0])]),
]


def _gradients(module: Any, make_f: Callable[[Any], Any], make_x: Callable[[Any], Any], delta: float | None) -> Any:
    try:
        return module.test.compute_gradient(make_f(module), make_x(module), delta=delta)
    except Exception as error:  # noqa: BLE001 - the exception is the comparison
        return type(error).__name__, str(error)


@pytest.mark.parametrize("name, make_f, make_x", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_compute_gradient_matches_tf(name: str, make_f: Any, make_x: Any) -> None:
    delta = 1e-3 if name == "delta" else None
    expected = _gradients(real_tf, make_f, make_x, delta)
    actual = _gradients(tapeshim, make_f, make_x, delta)
    if isinstance(expected[0], str):
        assert expected == actual
        return
    assert isinstance(actual, tuple) and len(actual) == 2 and all(isinstance(part, tuple) for part in actual)
    for part_tf, part_ts in zip(expected, actual):
        assert len(part_tf) == len(part_ts)
        for jacobian_tf, jacobian_ts in zip(part_tf, part_ts):
            assert jacobian_ts.dtype == jacobian_tf.dtype and jacobian_ts.shape == jacobian_tf.shape
            # These functions' ops round alike in TF and XLA: the Jacobians are the same arrays.
            np.testing.assert_array_equal(jacobian_ts, jacobian_tf)


def test_compute_gradient_of_transcendental_functions_is_close_to_tf() -> None:
    """XLA's sin may differ from TF's in the last bit: the finite differences amplify that, within tolerance."""
    x = np.linspace(0.0, 1.0, 4)
    for dtype, tolerance in ((np.float32, 1e-3), (np.float64, 1e-9)):
        expected = real_tf.test.compute_gradient(lambda v: real_tf.sin(v) * 2.0, [x.astype(dtype)])
        actual = tapeshim.test.compute_gradient(lambda v: tapeshim.sin(v) * 2.0, [x.astype(dtype)])
        for part in (0, 1):
            assert actual[part][0].dtype == expected[part][0].dtype
            np.testing.assert_allclose(actual[part][0], expected[part][0], rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(actual[0][0], np.diag(2 * np.cos(x)), rtol=1e-6)


def test_compute_gradient_rejects_a_non_sequence_like_tf() -> None:
    for module in MODULES.values():
        with pytest.raises(ValueError, match="must be a list or tuple"):
            module.test.compute_gradient(lambda x: x, 1.0)


# -- the build and the devices -------------------------------------------------------------------------
def test_device_answers_follow_jax() -> None:
    import jax

    gpus = [d for d in jax.devices() if d.platform in ("gpu", "cuda", "rocm")]
    assert tapeshim.test.is_gpu_available() == bool(gpus)
    assert tapeshim.test.is_gpu_available(cuda_only=True, min_cuda_compute_capability=(1, 0)) == bool(gpus)
    assert tapeshim.test.gpu_device_name() == ("/device:GPU:0" if gpus else "")
    assert tapeshim.test.is_built_with_xla() is True
    assert tapeshim.test.is_built_with_gpu_support() == (
        tapeshim.test.is_built_with_cuda() or tapeshim.test.is_built_with_rocm()
    )
    if gpus:
        assert tapeshim.test.is_built_with_gpu_support()
    tapeshim.test.experimental.sync_devices()


def test_cpu_targets() -> None:
    assert tapeshim.test.is_cpu_target_available(test_platform._host_target())
    for module in MODULES.values():
        with pytest.raises(AssertionError, match="Unknown CPU target"):
            module.test.is_cpu_target_available("mips")


def test_decorators() -> None:
    class Marked:
        pass

    for module in MODULES.values():
        assert module.test.with_eager_op_as_function(Marked) is Marked
        assert module.test.with_eager_op_as_function(only_as_function=True)(Marked) is Marked


# -- Benchmark ----------------------------------------------------------------------------------------
def test_benchmark_reports_as_tf(capsys: pytest.CaptureFixture[str]) -> None:
    class MyBench(tapeshim.test.Benchmark):
        def benchmark_square(self) -> None:
            self.report_benchmark(iters=3, wall_time=0.5, extras={"note": "x", "size": 2})

        def benchmark_op(self) -> dict[str, Any]:
            return self.run_op_benchmark(None, lambda: tapeshim.square(tapeshim.ones([4])), min_iters=3, name="op")

    bench = MyBench()
    bench.benchmark_square()
    printed = capsys.readouterr().out
    assert 'name: "MyBench.benchmark_square"' in printed and "iters: 3" in printed and "wall_time: 0.5" in printed
    assert 'key: "note"' in printed and 'string_value: "x"' in printed and "double_value: 2" in printed
    values = bench.benchmark_op()
    assert values["iters"] == 3 and values["wall_time"] >= 0 and "wall_time_mean" in values["extras"]
    assert 'name: "MyBench.op"' in capsys.readouterr().out
    assert np.array_equal(bench.evaluate([tapeshim.constant(2)]), [2])
    with pytest.raises(TypeError, match="extras must be a dict"):
        bench.report_benchmark(extras=[1])
    with pytest.raises(TypeError, match="callable"):
        bench.run_op_benchmark(None, tapeshim.constant(1))
    test_platform.run_benchmarks(r"MyBench\.benchmark_square")
    assert 'name: "MyBench.benchmark_square"' in capsys.readouterr().out
    assert tapeshim.test.Benchmark.is_abstract() and not MyBench.is_abstract()


def test_benchmark_writes_the_report_file(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    class FileBench(tapeshim.test.Benchmark):
        def benchmark_it(self) -> None:
            self.report_benchmark(iters=1, name="a/b")

    monkeypatch.setenv(test_platform.TEST_REPORTER_TEST_ENV, str(tmp_path) + "/report_")
    FileBench().benchmark_it()
    assert 'name: "FileBench.a/b"' in (tmp_path / "report_FileBench.a__b").read_text()
    with pytest.raises(OSError, match="File already exists"):
        FileBench().benchmark_it()


def test_sync_devices_refuses_a_traced_function_like_tf() -> None:
    for module in MODULES.values():
        module.test.experimental.sync_devices()

        @module.function
        def synced(x: Any, module: Any = module) -> Any:
            module.test.experimental.sync_devices()
            return x

        with pytest.raises(RuntimeError, match="must only be called in Eager mode"):
            synced(module.constant(1.0))


MAIN_SCRIPT = """
import sys
import tapeshim as tf

class Suite(tf.test.TestCase):
    def test_ok(self):
        self.assertAllEqual(tf.constant([1, 2]), [1, 2])

    def test_maybe(self):
        self.assertAllClose(tf.constant(1.0), 2.0 if "fail" in sys.argv[1:] else 1.0)

class Bench(tf.test.Benchmark):
    def benchmark_add(self):
        self.report_benchmark(iters=1, wall_time=0.25)

if __name__ == "__main__":
    tf.test.main([sys.argv[0]] + [a for a in sys.argv[1:] if a != "fail"])
"""


def test_main_runs_the_module_tests_and_benchmarks(tmp_path: Any) -> None:
    import subprocess
    import sys

    script = tmp_path / "suite_test.py"
    script.write_text(MAIN_SCRIPT)

    def run(*arguments: str) -> Any:
        return subprocess.run([sys.executable, str(script), *arguments], capture_output=True, text=True, timeout=300)

    failed, benchmarks = run("fail"), run("--benchmarks=Bench")
    # As in TF, unittest also finds the `test_session` helper, and `setUp` skips it.
    assert "Ran 3 tests" in failed.stderr, failed.stderr[-2000:]
    assert failed.returncode == 1 and "FAILED (failures=1, skipped=1)" in failed.stderr, failed.stderr[-2000:]
    assert benchmarks.returncode == 0 and 'name: "Bench.benchmark_add"' in benchmarks.stdout, benchmarks.stderr[-2000:]
