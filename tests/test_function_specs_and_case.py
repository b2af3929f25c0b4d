"""`tf.case` in traces and `ConcreteFunction`s of specs, against real TensorFlow.

`tf.case(..., exclusive=True)` checks its predicates when the program runs (TF's graph `Assert`; here a
runtime check of the op that picks the branch), with no `default` it asserts that some predicate holds,
and eagerly both raise at once with TF's eager messages. The Keras cases (a schedule and a layer JAX
traces) run with TF's Keras in a child process, as tests/test_keras_backend.py does.

`get_concrete_function` with specs of unknown rank, `[None]` dimensions and bound Python values: the
calls of several shapes, TF's binding (structured, then flat) and its errors, the printed signatures,
and an `input_signature` of images of any size traced once through convolutions.
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from keras_oracle import assert_same as assert_same_keras

import tapeshim
from oracle import check, check_raises

_OUTPUT_SHAPE = re.compile(r"\) -> TensorSpec\(shape=(<unknown>|\([^)]*\)),")


def _core(message: str) -> str:
    """A graph `Assert`'s message without TF's node and function decorations around it."""
    found = re.search(r"assertion failed: \[.*?\] \[[^\]]*\]", message, re.S)
    return found.group(0) if found else message


def _outcome(fn, *args):
    """`fn(*args)`'s values, or the class and core message of what it raised."""
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # noqa: BLE001 - the error is the comparison
        # (the output type of a spec of unknown rank: TF's `<unknown>`, tapeshim's traced rank's shape)
        return (type(exc).__name__, _OUTPUT_SHAPE.sub(") -> TensorSpec(shape=...,", _core(str(exc))))


def _returns(tf, value):
    return lambda: tf.constant(value)


# -- tf.case inside tapeshim.function: the exclusivity and default checks run with the program --------------------
def test_exclusive_case_in_a_function_checks_each_call():
    def body(tf):
        count = []

        @tf.function
        def f(x):
            count.append(1)
            return tf.case([(x > 0, lambda: x * 2.0), (x > 1, lambda: x * 3.0)], default=lambda: -x, exclusive=True)

        outcomes = [_outcome(f, tf.constant(v)) for v in (0.5, 2.0, -1.0, 3.0, 0.2)]
        return outcomes, len(count), f.experimental_get_tracing_count()

    check(body)


def test_exclusive_case_with_a_signature_for_every_size():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def f(x):
            s = tf.reduce_sum(x)
            return tf.case([(s > 0, lambda: x * 2.0), (s > 1, lambda: x * 3.0)], default=lambda: -x, exclusive=True)

        values = ([0.5], [1.0, 1.0], [0.1, 0.2, 0.3], [-1.0, -2.0])
        return [_outcome(f, tf.constant(v)) for v in values], f.experimental_get_tracing_count()

    check(body)


def test_failed_exclusive_check_leaves_variables_unassigned():
    def body(tf):
        v = tf.Variable(0.0)

        @tf.function
        def f(x):
            tf.case(
                [(x > 0, lambda: v.assign_add(1.0)), (x > 1, lambda: v.assign_add(10.0))],
                default=lambda: v.assign_add(100.0),
                exclusive=True,
            )
            return v.read_value()

        return [_outcome(f, tf.constant(a)) for a in (0.5, 2.0, -1.0)], v

    check(body)


def test_exclusive_case_gradients_and_no_default_in_a_function():
    def body(tf):
        @tf.function
        def f(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.case([(x > 0, lambda: x * x), (x < -1, lambda: x * 3.0)], exclusive=True)
            return y, tape.gradient(y, x)

        return [_outcome(f, tf.constant(v)) for v in (2.0, -2.0, -0.5)]

    check(body)


@pytest.mark.parametrize(
    "thresholds, value",
    [
        ((0.0, 1.0), -2.0),  # none holds: "None of conditions evaluated as True" [0 0]
        ((-1.0, 1.0), 2.0),  # the first holds
        ((5.0, 1.0), 2.0),  # the last (the default action) holds
        ((0.0,), -1.0),  # one pair only
        ((0.0, 1.0, 2.0, 3.0, 4.0), -1.0),  # more than 3 predicates: TF's summary `[0 0 0...]`
    ],
)
def test_case_without_default_in_a_function(thresholds, value):
    def body(tf):
        @tf.function
        def f(x):
            pairs = [(x > t, _returns(tf, k)) for k, t in enumerate(thresholds)]
            return tf.case(pairs)

        return _outcome(f, tf.constant(value))

    check(body)


@pytest.mark.parametrize("value", [2.0, 7.0, -1.0])
def test_case_without_default_checks_exclusivity_of_the_other_pairs_only(value):
    def body(tf):
        @tf.function
        def f(x):
            return tf.case(
                [(x > 0, lambda: tf.constant(1)), (x > 5, lambda: tf.constant(2)), (x > 1, lambda: tf.constant(3))],
                exclusive=True,
            )

        return _outcome(f, tf.constant(value))

    check(body)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_first_true_predicate_wins_without_exclusive(compiled):
    def body(tf):
        def f(x):
            return tf.case(
                [(x > 0, lambda: tf.constant(1)), (x > 1, lambda: tf.constant(2)), (x > 2, lambda: tf.constant(3))],
                default=lambda: tf.constant(4),
            )

        f = tf.function(f) if compiled else f
        return [f(tf.constant(v)) for v in (3.0, 1.5, 0.5, -1.0)]

    check(body)


def test_constant_predicates_inside_a_function():
    def body(tf):
        @tf.function
        def f(x):
            pairs = [(tf.constant(True), lambda: x), (tf.constant(True), lambda: 2 * x)]
            return tf.case(pairs, default=lambda: -x, exclusive=True)

        return _outcome(f, tf.constant(1.0))

    check(body)


# -- tf.case eagerly: TF's eager Assert messages, unpacking, argument errors -----------------------------------
@pytest.mark.parametrize(
    "flags, exclusive, with_default",
    [
        ((True, True), True, True),
        ((True, False, True), True, True),
        ((True,) * 5, True, True),
        ((False, False), False, False),
        ((False,) * 5, False, False),
        ((True, False, True), True, False),  # the default action's pair is not in the exclusivity check
        ((True, True, False), True, False),
        ((False, True), False, False),
    ],
)
def test_eager_case_messages(flags, exclusive, with_default):
    def body(tf):
        pairs = [(tf.constant(flag), _returns(tf, k)) for k, flag in enumerate(flags)]
        default = (lambda: tf.constant(-1)) if with_default else None
        return tf.case(pairs, default=default, exclusive=exclusive)

    if sum(flags) > 1 and exclusive and (with_default or sum(flags[:-1]) > 1) or not any(flags):
        check_raises(body, messages=True)
    else:
        check(body)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("strict", [False, True])
def test_singleton_results_are_unpacked_eagerly_unless_strict(compiled, strict):
    def body(tf):
        def f(x):
            return tf.case([(x > 0, lambda: [x])], default=lambda: [-x], strict=strict)

        f = tf.function(f) if compiled else f
        return f(tf.constant(1.0))

    check(body)


def _bad_case(kind):
    def body(tf):
        T = lambda: tf.constant(True)  # noqa: E731
        one, two = (lambda: tf.constant(1)), (lambda: tf.constant(2))
        cases = {
            "not_a_list": lambda x: tf.case(5),
            "entry_not_a_tuple": lambda x: tf.case([[x > 0, one]]),
            "entry_of_three": lambda x: tf.case([(x > 0, one, 2)]),
            "python_bool": lambda x: tf.case([(True, one)], default=two),
            "variable": lambda x: tf.case([(tf.Variable(True), one)], default=two),
            "int_predicate": lambda x: tf.case([(tf.cast(x, tf.int32), one)], default=two),
            "not_callable": lambda x: tf.case([(x > 0, 1)], default=two),
            "default_not_callable": lambda x: tf.case([(x > 5, one), (x > 9, two)], default=2),
            "dict_not_exclusive": lambda x: tf.case({1: one}, default=two),
            "vector_predicate": lambda x: tf.case([(tf.stack([x, x]) > 0, one)], default=two),
            "branch_dtypes": lambda x: tf.case([(x > 0, one)], default=lambda: tf.constant(1.0)),
            "eager_default_not_callable_unreached": lambda x: tf.case([(T(), one), (x > 9, two)], default=2),
        }
        return cases[kind]

    return body


@pytest.mark.parametrize(
    "kind",
    [
        "not_a_list",
        "entry_not_a_tuple",
        "entry_of_three",
        "python_bool",
        "variable",
        "int_predicate",
        "not_callable",
        "default_not_callable",
        "dict_not_exclusive",
        "vector_predicate",
        "branch_dtypes",
    ],
)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_case_argument_errors(kind, compiled):
    def body(tf):
        fn = _bad_case(kind)(tf)
        f = tf.function(fn) if compiled else fn
        return f(tf.constant(1.0))

    if kind == "branch_dtypes" and not compiled:
        check(body)  # eagerly only the branch taken runs: TF checks no other branch's dtypes
    else:
        check_raises(body)


def test_eager_default_is_only_checked_where_the_chain_reaches_it():
    def body(tf):
        return _bad_case("eager_default_not_callable_unreached")(tf)(tf.constant(1.0))

    check(body)


# -- tf.case in Keras calls that JAX traces: TF's Keras runs them eagerly (or in `fit`'s graph) ----------------------
_KERAS_CASES = textwrap.dedent(
    """
    import numpy as np

    def _schedule(tf, exclusive, no_default=False):
        class Cased(tf.keras.optimizers.schedules.LearningRateSchedule):
            def __call__(self, step):
                step = tf.cast(step, tf.float32)
                if no_default:
                    return tf.case([(step < 1.0, lambda: 0.2), (step > 2.0, lambda: 0.05)], exclusive=exclusive)
                pairs = [(step < 1.0, lambda: 0.2), (step < 3.0, lambda: 0.05)]
                return tf.case(pairs, default=lambda: 0.01, exclusive=exclusive)

        v = tf.Variable([1.0, 2.0])
        optimizer = tf.keras.optimizers.SGD(learning_rate=Cased())
        for _ in range(4):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(v * v)
            optimizer.apply_gradients([(tape.gradient(loss, v), v)])
        return v

    def _layer(tf, exclusive):
        class Cased(tf.keras.layers.Layer):
            def call(self, x):
                s = tf.reduce_sum(x)
                pairs = [(s > 0, lambda: x * 2.0), (s > 10, lambda: x * 3.0)]
                return tf.case(pairs, default=lambda: -x, exclusive=exclusive)

        return Cased()

    def schedule_not_exclusive(tf):
        return _schedule(tf, False)

    def schedule_exclusive_two_hold(tf):
        return _schedule(tf, True)

    def schedule_without_default_none_holds(tf):
        return _schedule(tf, False, no_default=True)

    def layer_exclusive_small(tf):
        return _layer(tf, True)(tf.constant([[1.0, 2.0]]))

    def layer_exclusive_two_hold(tf):
        return _layer(tf, True)(tf.constant([[10.0, 2.0]]))

    def fit_with_an_exclusive_case_that_holds(tf):
        model = tf.keras.Sequential(
            [tf.keras.Input((2,)), tf.keras.layers.Dense(2, kernel_initializer="ones"), _layer(tf, True)]
        )
        model.compile(optimizer="sgd", loss="mse")
        data = np.array([[0.1, 0.2], [0.3, 0.1]], np.float32)
        history = model.fit(data, np.zeros((2, 2), np.float32), epochs=2, batch_size=2, verbose=0)
        return history.history["loss"]

    CASES = {
        name: fn for name, fn in dict(globals()).items() if callable(fn) and not name.startswith("_") and name != "np"
    }
    """
)
_KERAS_CHILD = """
import pickle, sys
sys.path.insert(0, {here!r})
import tensorflow as tf
from keras_oracle import run_case
namespace = {{}}
exec({source!r}, namespace)
outcomes = {{name: run_case(body, tf) for name, body in namespace["CASES"].items()}}
with open(sys.argv[1], "wb") as stream:
    pickle.dump(outcomes, stream)
"""


@pytest.fixture(scope="module")
def tf_keras_outcomes(tmp_path_factory):
    out = tmp_path_factory.mktemp("tf_keras_case") / "results.pkl"
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    child = _KERAS_CHILD.format(here=str(Path(__file__).parent), source=_KERAS_CASES)
    done = subprocess.run([sys.executable, "-c", child, str(out)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"TF's Keras run failed:\n{done.stderr[-4000:]}"
    with open(out, "rb") as stream:
        return pickle.load(stream)


def _keras_cases() -> dict:
    namespace: dict = {}
    exec(_KERAS_CASES, namespace)  # noqa: S102 - the same source the child process runs with TF's Keras
    return namespace["CASES"]


@pytest.mark.parametrize("name", sorted(_keras_cases()))
def test_case_in_keras_calls(name, tf_keras_outcomes):
    from keras_oracle import run_case

    expected, actual = tf_keras_outcomes[name], run_case(_keras_cases()[name], tapeshim)
    if "raised" in expected:
        assert actual.get("raised") == expected["raised"], f"tapeshim gave {actual!r}, TF {expected!r}"
        assert actual["message"] in expected["message"], f"tapeshim {actual['message']!r} vs TF {expected['message']!r}"
    else:
        assert "result" in actual, f"tapeshim raised {actual!r}"
        assert_same_keras(expected["result"], actual["result"])


# -- ConcreteFunctions of specs -------------------------------------------------------------------------------
def _traced_rank_and_shape(tf):
    count = []

    @tf.function
    def f(x):
        count.append(1)
        return x * 2.0, tf.shape(x), tf.rank(x)

    return f, count


_SHAPES = [(), (2,), (3,), (1, 3), (2, 1), (2, 1, 3)]


def test_unknown_rank_spec_serves_every_rank():
    def body(tf):
        f, _ = _traced_rank_and_shape(tf)
        concrete = f.get_concrete_function(tf.TensorSpec(None, tf.float32))
        results = [concrete(tf.ones(shape)) for shape in _SHAPES]
        return results, str(concrete.structured_input_signature), f.experimental_get_tracing_count()

    check(body)
    # tapeshim traces the Python function once per rank (JAX's ranks are static), TF once in all
    f, count = _traced_rank_and_shape(tapeshim)
    concrete = f.get_concrete_function(tapeshim.TensorSpec(None, tapeshim.float32))
    for shape in _SHAPES + [(5,), (4, 4)]:
        concrete(tapeshim.ones(shape))
    assert len(count) == len({len(s) for s in _SHAPES})


@pytest.mark.parametrize("spec", [[None], [None, 3], [2, None]])
def test_specs_with_unknown_dimensions_trace_once(spec):
    def body(tf):
        f, count = _traced_rank_and_shape(tf)
        concrete = f.get_concrete_function(tf.TensorSpec(spec, tf.float32))
        sizes = [1, 2, 5, 2]
        results = [concrete(tf.ones([n if d is None else d for d in spec])) for n in sizes]
        return (
            results,
            len(count),
            f.experimental_get_tracing_count(),
            str(concrete.structured_input_signature),
            [(s.dtype.name, str(s.shape)) for s in concrete.structured_outputs],  # (TF's: graph tensors)
            concrete.output_shapes,
            concrete.output_dtypes,
            concrete.pretty_printed_signature(),
            concrete.pretty_printed_signature(verbose=False),
            re.sub(" at 0x[0-9A-F]+", "", repr(concrete)),
        )

    check(body)


def test_a_narrower_spec_gets_the_trace_of_a_wider_one():
    def body(tf):
        f, count = _traced_rank_and_shape(tf)
        wide = f.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
        same = f.get_concrete_function(tf.TensorSpec([2, 3], tf.float32)) is wide
        other = f.get_concrete_function(tf.TensorSpec([4], tf.float32)) is wide
        f(tf.ones([5, 3]))
        return same, other, len(count), f.experimental_get_tracing_count()

    check(body)


def _scale(tf):
    @tf.function
    def scale(a, b):
        return a * b

    return scale.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)


@pytest.mark.parametrize(
    "call",
    [
        lambda tf, c: c(tf.constant([1.0, 2.0])),  # flat binding: the tensor alone
        lambda tf, c: c(a=tf.constant(3.0)),
        lambda tf, c: c(tf.constant([[1.0]]), b=2),
        lambda tf, c: c(tf.constant(1.0), b=2.0),  # TF's Literal[2] takes what equals 2
        lambda tf, c: c(tf.constant(1.0), 2),
        lambda tf, c: c(b=2, a=tf.constant(1.0)),
        lambda tf, c: c(tf.constant(1.0), tf.constant(2.0)),  # a tensor equal to the literal
        lambda tf, c: c(1.5, b=2),  # a Python value converts to the spec's dtype
        lambda tf, c: c([1, 2], b=2),
        lambda tf, c: c(np.ones(2), 2),
    ],
)
def test_spec_and_bound_python_value_calls(call):
    check(lambda tf: call(tf, _scale(tf)))


@pytest.mark.parametrize(
    "call",
    [
        lambda tf, c: c(tf.constant(1.0), b=3),
        lambda tf, c: c(tf.constant(1.0), 3),
        lambda tf, c: c(tf.constant(1.0), b=True),
        lambda tf, c: c(tf.constant(1.0), b=None),
        lambda tf, c: c(tf.constant(1.0), b=tf.constant(5.0)),
        lambda tf, c: c(),
        lambda tf, c: c(tf.constant(1.0), 2, 3),
        lambda tf, c: c(3),  # without `b`, only tensors bind (flat), and 3 is none
        lambda tf, c: c([1.0, 2.0]),
        lambda tf, c: c(np.ones(2, np.float32)),
        lambda tf, c: c("a", b=2),
        lambda tf, c: c(tf.constant(1), b=2),  # a tensor of another dtype with `b`: no flat binding
    ],
)
def test_spec_and_bound_python_value_binding_errors(call):
    def body(tf):
        try:
            call(tf, _scale(tf))
        except Exception as exc:  # noqa: BLE001 - the error is the comparison
            return type(exc).__name__, _OUTPUT_SHAPE.sub(") -> TensorSpec(shape=...,", str(exc))
        return None

    check(body)


def _dtype_error(tf, value):
    try:
        _scale(tf)(value)
    except Exception as exc:  # noqa: BLE001 - the error is the comparison
        return type(exc).__name__, re.sub(r"__inference_scale_\d+", "__inference_scale", str(exc))
    return None


@pytest.mark.parametrize("dtype", ["int32", "float64", "float16", "bool"])
def test_wrong_dtype_is_tfs_run_time_error(dtype):
    check(lambda tf: _dtype_error(tf, tf.cast(tf.constant([1, 0]), getattr(tf, dtype))))


def test_known_rank_spec_called_with_another_rank():
    def body(tf):
        @tf.function
        def f(x, n):
            return x * n

        concrete = f.get_concrete_function(tf.TensorSpec([None], tf.float32), 2.0)
        flat = concrete(tf.ones([2, 2]))  # TF's flat binding runs the graph with any shape
        return flat, _outcome(concrete, tf.ones([2, 2]), 2.0)

    check(body)


def test_python_values_convert_to_the_specs_dtype():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2

        concrete = f.get_concrete_function(tf.TensorSpec(None, tf.float32))
        return [concrete(v) for v in (1, [1, 2], np.array([1.0, 2.0]), np.array([3, 4]), tf.Variable([1.0]))]

    check(body)


def test_variable_of_another_dtype_and_unconvertible_values():
    def body(tf):
        @tf.function
        def f(x):
            return x * 2

        concrete = f.get_concrete_function(tf.TensorSpec(None, tf.float32))
        return [_outcome(concrete, v) for v in (tf.Variable([1, 2]), None, "a")]

    check(body)


def test_nested_and_variadic_specs_are_named_as_tf():
    def body(tf):
        @tf.function
        def k(xs, d, y, n=1):
            return y * n

        @tf.function
        def v(a, *xs, **kw):
            return a

        nested = k.get_concrete_function(
            [tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)],
            {"a": tf.TensorSpec([], tf.float32), "b": tf.TensorSpec([2], tf.int32)},
            tf.TensorSpec([], tf.float32),
            n=2,
        )
        variadic = v.get_concrete_function(tf.constant(1.0), tf.constant(2.0), tf.constant(3.0), s=tf.constant(2.0))
        return (
            str(nested.structured_input_signature),
            nested.pretty_printed_signature(verbose=False),
            str(variadic.structured_input_signature),
            variadic.pretty_printed_signature(verbose=False),
            nested([tf.ones([3]), tf.constant(2)], {"a": tf.constant(1.0), "b": tf.constant([1, 2])}, 3.0, n=2),
            _outcome(lambda: nested(xs=tf.ones([3]))),
        )

    check(body)


# -- an input_signature of images of any size: one trace through convolutions --------------------------------
_KERNEL = np.random.RandomState(0).rand(3, 3, 3, 4).astype(np.float32)


@pytest.mark.parametrize(
    "net",
    [
        lambda tf, x: tf.reduce_mean(x, axis=[0, 1]),
        lambda tf, x: tf.nn.conv2d(x[None], tf.constant(_KERNEL), strides=1, padding="SAME"),
        lambda tf, x: tf.nn.conv2d(x[None], tf.constant(_KERNEL), strides=1, padding="VALID"),
        lambda tf, x: tf.nn.conv2d(x[None], tf.constant(_KERNEL), strides=2, padding="SAME"),
        lambda tf, x: tf.nn.max_pool2d(x[None], 2, 2, "SAME"),
        lambda tf, x: tf.image.flip_left_right(x),
    ],
    ids=["mean", "conv_same", "conv_valid", "conv_stride_2", "max_pool", "flip"],
)
def test_image_signature_of_any_size_traces_once(net):
    def body(tf):
        count = []

        @tf.function(input_signature=[tf.TensorSpec([None, None, 3], tf.float32)])
        def f(x):
            count.append(1)
            return net(tf, x)

        images = [
            np.random.RandomState(n).rand(h, w, 3).astype(np.float32) for n, (h, w) in enumerate([(4, 5), (7, 6)])
        ]
        results = [f(tf.constant(image)) for image in images]
        return results, len(count), f.experimental_get_tracing_count()

    check(body, rtol=1e-4)


def test_image_resize_counts_one_tf_trace():
    # TF traces once; tapeshim's resize computes its interpolation weights on the host from the image's size,
    # so the trace for every size falls back to a trace per size (the TF count stays 1)
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, None, 3], tf.float32)])
        def f(x):
            return tf.image.resize(x, [8, 8])

        return [f(tf.ones([h, w, 3])) for h, w in [(4, 5), (7, 6)]], f.experimental_get_tracing_count()

    check(body)
