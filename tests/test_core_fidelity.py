"""Tensor conversion, dtypes, shapes and Python protocols, each compared with real TensorFlow."""

import itertools

import jax.numpy as jnp
import numpy as np
import pytest

from oracle import check, check_raises, raising


class _Reflecting:
    """A user type that defines reflected operators (TF's operators defer to them)."""

    def __rmul__(self, other):
        return ("rmul", other.shape.as_list())

    def __radd__(self, other):
        return "radd"

    def __rmatmul__(self, other):
        return "rmatmul"


# -- Python values convert straight to the requested dtype ------------------
@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.constant(0.1, tf.float64),
        lambda tf: tf.convert_to_tensor(0.1, dtype=tf.float64),
        lambda tf: tf.convert_to_tensor(0.1, dtype_hint=tf.float64),
        lambda tf: tf.constant([1.0], tf.float64) * 0.1,
        lambda tf: 0.1 * tf.constant([1.0], tf.float64),
        lambda tf: tf.add(tf.zeros([1], tf.float64), 0.1),
        lambda tf: tf.maximum(tf.zeros([2], tf.float64), 0.1),
        lambda tf: tf.constant(2.0, tf.float64) ** 0.1,
        lambda tf: tf.constant([0.1, 0.2], tf.float64),
        lambda tf: tf.constant([[0.1], [0.3]], tf.float64),
        lambda tf: tf.constant([1, 0.1], tf.float64),
        lambda tf: tf.convert_to_tensor((0.1, 0.2), tf.float64),
        lambda tf: tf.constant(0.1, tf.complex128),
        lambda tf: tf.constant([0.1 + 1j], tf.complex64),
        lambda tf: tf.Variable(0.1, dtype=tf.float64).numpy(),
        lambda tf: tf.Variable(0.0, dtype=tf.float64).assign(0.1).numpy(),
        lambda tf: tf.Variable(0.0, dtype=tf.float64).assign_add(0.1).numpy(),
        lambda tf: tf.Variable([0.0, 0.0], dtype=tf.float64).assign([0.1, 0.3]).numpy(),
        lambda tf: tf.constant(0.1, tf.float64) == 0.1,
        lambda tf: tf.constant([0.1], tf.float64) < 0.1,
        lambda tf: tf.cast(0.1, tf.float64),  # TF converts to float32 first here
        lambda tf: tf.constant(1e39, tf.float64),
        lambda tf: tf.constant([1.0], tf.float64) + 1e39,
        lambda tf: tf.convert_to_tensor(1e39, dtype_hint=tf.float64),
        lambda tf: tf.constant(16777217, tf.float64),
        lambda tf: tf.constant(2**70, tf.float64),
        lambda tf: tf.constant(2**63, tf.float32),
        lambda tf: tf.constant(1.0 + 2**-11 + 2**-30, tf.float16),  # half precision rounds through float32
        lambda tf: tf.constant(1.0 + 2**-8 + 2**-30, tf.bfloat16),
        lambda tf: tf.constant(np.float64(0.1), tf.float32),
        lambda tf: tf.constant(1.0) * np.float64(0.1),
    ],
    ids=lambda body: "",
)
def test_python_floats_keep_double_precision_until_the_cast(body):
    check(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.constant(1e39),
        lambda tf: tf.constant(-3.5e38),
        lambda tf: tf.convert_to_tensor(1e39),
        lambda tf: tf.Variable(1e39),
        lambda tf: tf.constant([[1e39, 1.0]]),
        lambda tf: tf.constant(2**63),
        lambda tf: tf.constant(2**64, tf.int64),
        lambda tf: tf.constant(2**63, tf.int32),
        lambda tf: tf.constant([1, 2**63]),
        lambda tf: tf.constant([1], tf.int64) + 2**63,
        lambda tf: tf.constant([True, 1]),
        lambda tf: tf.constant([1, 1j]),
        lambda tf: tf.constant([1.5, 1j]),
        lambda tf: tf.constant([[True], [1]]),
        lambda tf: tf.constant([1.0, None]),
        lambda tf: tf.constant([[1], [1, 2]]),
        lambda tf: tf.constant(1.5, tf.int32),
        lambda tf: tf.constant(1, tf.bool),
    ],
)
def test_out_of_range_and_mixed_python_values_raise_tfs_error(body):
    check_raises(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.constant(3.4028235e38),
        lambda tf: tf.constant(float("inf")),
        lambda tf: tf.constant(1e-50),
        lambda tf: tf.constant(1e39, tf.float32),
        lambda tf: tf.constant([1.0]) + 1e39,
        lambda tf: tf.constant(2**40, tf.int32),  # TF wraps integers that fit int64
        lambda tf: tf.constant([1, 2**40], tf.int32),
        lambda tf: tf.constant(-1, tf.uint8),
        lambda tf: tf.constant([-(2**63), 2**63 - 1]),
        lambda tf: tf.constant([2**63, 1], tf.uint64),
        lambda tf: tf.constant([1.0, 2**63]),
        lambda tf: tf.constant([1, True]),
        lambda tf: tf.constant([1j, 1, 1.5]),
        lambda tf: tf.constant([[1], [1.5]]),
        lambda tf: tf.constant([], tf.int32),
        lambda tf: tf.constant([[], []]),
        lambda tf: tf.constant([np.float64(0.1), 0.2]),  # a list led by numpy float64 stays float64
        lambda tf: tf.constant([0.2, np.float64(0.1)]),
        lambda tf: tf.constant([np.int64(1), 2]),
        lambda tf: tf.convert_to_tensor([np.array([0.1]), np.array([0.2])]),
        lambda tf: tf.Variable([np.float64(0.1)]).dtype,
    ],
)
def test_default_dtypes_and_wrapping_as_tf(body):
    check(body)


# -- Python protocols on tensors and variables ------------------------------
@pytest.mark.parametrize(
    "body",
    [
        lambda tf: f"{tf.constant(0.123456):.4f}",
        lambda tf: f"{tf.constant(5):03d}",
        lambda tf: f"{tf.constant(0.5)}",
        lambda tf: format(tf.constant([0.5, 1.0]), ""),
        lambda tf: f"{tf.constant(True)}|{tf.constant(True):>6}",
        lambda tf: f"{tf.constant(12345.678, tf.float64):e}",
        lambda tf: f"{tf.constant(1 + 2j):.2f}",
        lambda tf: f"{tf.constant(0.1, tf.float16):.3f}",
        raising(lambda tf: f"{tf.constant([0.5, 1.0]):.2f}"),  # numpy's TypeError for arrays
        raising(lambda tf: format(tf.Variable(1.25), ".1f")),  # TF's variables have no __format__
        lambda tf: f"{tf.Variable(0.5)}",
        lambda tf: f"{tf.Variable([1.0])}",
    ],
)
def test_format_specs_as_numpy(body):
    check(body)


def test_format_of_a_lazy_tensor():
    def body(tf):
        x = tf.constant(1.5)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            text = f"loss {y:.3f}"
        return text, tape.gradient(y, x)

    check(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: [1, 2, 3][tf.constant(1)],
        lambda tf: [1, 2, 3][tf.constant(2, tf.uint8)],
        lambda tf: [1, 2, 3][tf.constant(-1, tf.int64)],
        lambda tf: list(range(tf.constant(3))),
        raising(lambda tf: [1, 2, 3][tf.constant(1.0)]),
        raising(lambda tf: [1, 2, 3][tf.constant(True)]),
        raising(lambda tf: [1, 2, 3][tf.constant([1])]),
        raising(lambda tf: [1, 2, 3][tf.Variable(1)]),
        raising(lambda tf: round(tf.constant(2.5))),
        raising(lambda tf: round(tf.Variable(2.5))),
        lambda tf: bool(tf.constant([])),
        lambda tf: bool(tf.zeros([0, 3])),
        lambda tf: bool(tf.constant([2.0])),
        raising(lambda tf: bool(tf.constant([1.0, 2.0]))),
        lambda tf: bool(tf.Variable(0.0)),
        lambda tf: bool(tf.Variable([])),
        lambda tf: len(tf.constant([[1.0], [2.0]])),
        raising(lambda tf: len(tf.constant(1.0))),
        raising(lambda tf: len(tf.Variable([1.0, 2.0]))),
        raising(lambda tf: list(tf.constant(1.0))),
        lambda tf: list(tf.Variable([1.0, 2.0])),
        raising(lambda tf: hash(tf.constant(1.0))),
        lambda tf: np.asarray(tf.constant([1.5, 2.5]), dtype=np.int32),
        lambda tf: np.asarray(tf.Variable([1.5, 2.5]), dtype=np.float64),
        lambda tf: complex(tf.constant(1 + 2j)),
        lambda tf: complex(tf.Variable(1.5)),
        lambda tf: int(tf.constant(-2.7)),
        raising(lambda tf: int(tf.constant([2.7]))),
        raising(lambda tf: float(tf.constant([1.0, 2.0]))),
        lambda tf: tf.constant(1.0).device,
        lambda tf: tf.Variable(1.0).device,
    ],
)
def test_python_protocols(body):
    check(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.constant(1.0) == None,  # noqa: E711
        lambda tf: tf.constant(1.0) != None,  # noqa: E711
        raising(lambda tf: tf.Variable(1.0) == None),  # noqa: E711 - TF converts None and fails
        raising(lambda tf: tf.Variable(1.0) != None),  # noqa: E711
        raising(lambda tf: None == tf.Variable(1.0)),  # noqa: E711
        raising(lambda tf: tf.constant(1.0) == "a"),
        raising(lambda tf: tf.Variable(1.0) == "a"),
        raising(lambda tf: tf.constant([1]) == 1.5),
        raising(lambda tf: tf.constant([1]) != 1.5),
        raising(lambda tf: tf.constant([1, 2]) == [1, 2.5]),
        raising(lambda tf: tf.constant([True]) == 1),
        lambda tf: tf.constant([1]) == True,  # noqa: E712
        lambda tf: tf.constant([1.0, 2.0]) == [1.0, 3.0],
        lambda tf: tf.constant([1.0, 2.0]) == tf.constant([1.0, 2.0, 3.0]),
        lambda tf: tf.Variable([1.0, 2.0]) == tf.constant([1.0, 2.0, 3.0]),
        lambda tf: tf.constant([1]) == np.array([1.5]),
        raising(lambda tf: tf.constant([[1]]) < 1.5),
        raising(lambda tf: 1.5 < tf.constant([[1]])),
        raising(lambda tf: tf.Variable([1]) < 1.5),
        raising(lambda tf: tf.constant([[1]]) * 1.5),
        raising(lambda tf: tf.constant([[1]]) - 1.5),
        raising(lambda tf: tf.constant([[1]]) // 1.5),
        raising(lambda tf: tf.constant([[1]]) % 1.5),
        raising(lambda tf: tf.constant([[1]]) ** 1.5),
        raising(lambda tf: tf.constant([[1]]) / 1.5),
        raising(lambda tf: tf.constant([[1]]) + 1.5),
        raising(lambda tf: tf.constant(1.0) * "a"),  # TF hands it to str.__rmul__, which needs __index__
        raising(lambda tf: tf.constant([[1.0]]) * "a"),
        lambda tf: tf.constant(2) * [1.5],  # ... and list.__rmul__ repeats the list
        raising(lambda tf: tf.constant([[2]]) * [1.5]),
        raising(lambda tf: tf.constant(1.0) < "a"),
        lambda tf: tf.constant([1], tf.uint8) * 300,
        raising(lambda tf: tf.constant([1.0]) * None),
    ],
)
def test_operators_convert_python_operands_as_tf(body):
    check(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.convert_to_tensor("a", tf.float32),
        lambda tf: tf.constant("a", tf.float32),
        lambda tf: tf.constant([1.0, None], tf.float32),
        lambda tf: tf.Variable("a", dtype=tf.float32),
        lambda tf: tf.Variable(1.0).assign("a"),
        lambda tf: tf.Variable(1).assign(1.5),
        lambda tf: tf.Variable(1).assign_add(1.5),
    ],
)
def test_non_numbers_with_a_dtype_raise_tfs_error(body):
    check_raises(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.constant([1.0]) * _Reflecting(),
        lambda tf: tf.constant([1.0]) + _Reflecting(),
        lambda tf: tf.constant([[1.0]]) @ _Reflecting(),
        lambda tf: tf.Variable([1.0]) * _Reflecting(),
        raising(lambda tf: tf.constant([1.0]) - _Reflecting()),
        raising(lambda tf: tf.constant([1.0]) * object()),
    ],
)
def test_operators_defer_to_the_other_operands_reflected_operator(body):
    check(body)


# -- lists holding tensors: the first tensor's dtype decides ----------------
def _gradient_through_packed_list(tf):
    x = tf.constant(2.0, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        packed = tf.convert_to_tensor([x * x, 0.1])
        y = tf.reduce_sum(packed * packed)
    return packed, tape.gradient(y, x)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.convert_to_tensor([tf.constant(1.0, tf.float64), 0.1]),
        lambda tf: tf.convert_to_tensor([0.1, tf.constant(1.0, tf.float64)]),
        lambda tf: tf.convert_to_tensor([[0.1], [tf.constant(1.0, tf.float64)]]),
        lambda tf: tf.convert_to_tensor([tf.Variable(1.0, dtype=tf.float64), 0.1]),
        lambda tf: tf.convert_to_tensor([tf.constant(1), 2**40]),
        raising(lambda tf: tf.convert_to_tensor([tf.constant(1), 0.5])),
        raising(lambda tf: tf.convert_to_tensor([tf.constant(1.0), tf.constant(1.0, tf.float64)])),
        lambda tf: tf.convert_to_tensor([tf.constant(1.0), 0.1], tf.float64),
        lambda tf: tf.convert_to_tensor([tf.constant(1.0), 0.1], dtype_hint=tf.float64),
        lambda tf: tf.convert_to_tensor([tf.constant(1.0), np.float64(0.1)]),
        lambda tf: tf.constant([1.0, 2.0], tf.float64) * [tf.constant(1.0, tf.float64), 0.1],
        _gradient_through_packed_list,
    ],
)
def test_lists_holding_tensors_convert_as_tf(body):
    check(body)


# -- a variable's slice can be assigned, as in TF ----------------------------
def _slice_assigns(tf):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    results = [
        v[0].assign([5.0, 6.0]),
        v[0:2].assign(1.0),
        v[:, 0].assign([9.0]),
        v[1, 1].assign(0.5),
        v[tf.constant(1)].assign([7.0, 8.0]),
        v[..., 1].assign([0, 0]),
        v[None, 0].assign([[1.0, 1.0]]),
        v[::-1, 0].assign([10.0, 20.0]),
    ]
    return [r.numpy() for r in results], v


def _slice_assign_in_function(tf):
    v = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def step(x):
        v[1].assign(x)
        return v.read_value()

    return step(tf.constant(9.0)), step(tf.constant(7.0)), v


def _slice_assign_in_tape(tf):
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = v[1] * v[2]
        v[0].assign(y)
    return v, tape.gradient(y, v)


@pytest.mark.parametrize(
    "body",
    [
        _slice_assigns,
        _slice_assign_in_function,
        _slice_assign_in_tape,
        raising(lambda tf: tf.Variable([[1.0, 2.0]])[0].assign([1.0, 2.0, 3.0])),
        raising(lambda tf: tf.Variable([1, 2])[0].assign(1.5)),
        lambda tf: tf.Variable([1, 2])[0].assign(5),
        lambda tf: (hasattr(tf.Variable([1.0])[0], "assign"), hasattr(tf.constant([1.0])[0], "assign")),
        raising(lambda tf: tf.Variable([[1.0]])[0][0].assign(3.0)),
        raising(lambda tf: tf.Variable([1.0])[0].assign_add(1.0)),
    ],
)
def test_variable_slices_assign_as_tf(body):
    check(body)


# -- dtypes and shapes as TF names and checks them ---------------------------
@pytest.mark.parametrize(
    "body",
    [
        raising(lambda tf: tf.TensorShape([-1])),  # shape neg
        raising(lambda tf: tf.TensorShape([1.5])),  # shape float
        lambda tf: tf.TensorShape([np.int64(2), None]),  # shape np int
        lambda tf: tf.TensorShape([tf.constant(2)]),  # shape tensor dim
        raising(lambda tf: tf.TensorShape(["a"])),  # shape str dim
        lambda tf: tf.TensorShape(tf.TensorShape([1, None])),  # shape from shape
        lambda tf: tf.TensorShape(3),  # shape from one dimension
        lambda tf: tf.TensorShape(np.int64(0)),  # shape from one numpy dimension
        lambda tf: tf.TensorShape(np.array(3)),  # shape from a 0-d array
        lambda tf: tf.TensorShape(tf.constant(3)),  # shape from a scalar tensor
        raising(lambda tf: tf.TensorShape(-2)),  # shape from one negative dimension
        raising(lambda tf: tf.TensorShape(2.5)),  # shape from one float
        lambda tf: tf.zeros(tf.TensorShape([2, 1])),  # zeros shape
        lambda tf: tf.reshape(tf.range(4), tf.TensorShape([2, 2])),  # reshape tensorshape
        lambda tf: tf.constant([[1.0]]).shape,  # tensor shape
        lambda tf: tf.Variable([[1.0]]).shape,  # var shape
        lambda tf: tf.TensorShape([None, 2]).merge_with([3, None]),  # shape merge
        raising(lambda tf: tf.TensorShape([1, 2]).merge_with([3, 2])),  # shape merge err
        raising(lambda tf: tf.TensorShape([1, 2]).merge_with([1])),  # shape merge rank
        lambda tf: tf.TensorShape(None).merge_with([1]),  # shape merge unknown
        lambda tf: tf.TensorShape([1]).concatenate([2, None]),  # shape concat
        lambda tf: tf.TensorShape(None).concatenate([1]),  # shape concat unknown
        raising(lambda tf: tf.TensorShape([1, 2]).assert_is_compatible_with([1, 3])),  # shape assert
        lambda tf: tf.TensorShape([1, None]).assert_is_compatible_with([1, 3]),  # shape assert ok
        lambda tf: tf.TensorShape(None).with_rank(2),  # shape with_rank
        raising(lambda tf: tf.TensorShape([1]).with_rank(2)),  # shape with_rank err
        raising(lambda tf: tf.TensorShape([1]).with_rank_at_least(2)),  # shape with_rank_at_least
        raising(lambda tf: tf.TensorShape([1, 2, 3]).with_rank_at_most(2)),  # shape with_rank_at_most
        raising(lambda tf: tf.TensorShape([1]).assert_has_rank(2)),  # shape assert_has_rank
        raising(lambda tf: tf.TensorShape([1]).assert_same_rank([1, 2])),  # shape assert_same_rank
        raising(lambda tf: tf.TensorShape([1, None]).assert_is_fully_defined()),  # shape assert_fully
        lambda tf: tf.TensorShape([1, 2]).most_specific_compatible_shape([1, 3]),  # shape most specific
        lambda tf: tf.TensorShape([1, 2]).most_specific_compatible_shape([1]),  # shape most specific rank
        lambda tf: tf.TensorShape([1]) + [2],  # shape add
        lambda tf: [1] + tf.TensorShape([2]),  # shape radd
        lambda tf: tf.as_dtype(float),  # as_dtype float
        lambda tf: tf.as_dtype("float"),  # as_dtype float str
        raising(lambda tf: tf.as_dtype(int)),  # as_dtype int
        raising(lambda tf: tf.as_dtype(complex)),  # as_dtype complex
        raising(lambda tf: tf.as_dtype("<f4")),  # as_dtype np str
        lambda tf: [tf.as_dtype(e) for e in (1, 2, 3, 9, 10, 14, 18, 19)],  # as_dtype enum
        lambda tf: tf.cast(tf.constant([1, 2]), float),  # cast float
        raising(lambda tf: tf.cast(tf.constant([1.5]), int)),  # cast int
        lambda tf: tf.cast(tf.constant([1.5, 0.0]), bool),  # cast bool
        lambda tf: tf.zeros([2], float),  # zeros float
        lambda tf: tf.constant(0.1, float),  # constant float
        lambda tf: tf.Variable(0.1, dtype=float).dtype,  # Variable float
        lambda tf: [
            d.as_datatype_enum
            for d in (tf.float32, tf.float64, tf.int32, tf.uint8, tf.bool, tf.bfloat16, tf.complex128, tf.uint64)
        ],  # enum
        lambda tf: [d.limits for d in (tf.float32, tf.int8, tf.uint8, tf.bool, tf.int64)],  # limits
        raising(lambda tf: tf.float16.limits),  # limits f16
        raising(lambda tf: tf.bool.min),  # min bool
        raising(lambda tf: tf.complex64.max),  # max complex
        lambda tf: (
            tf.float32.is_compatible_with(tf.float64),
            tf.float32.is_compatible_with("float32"),
            tf.float32.is_compatible_with(np.float32),
        ),  # compat
        raising(lambda tf: tf.float32.is_compatible_with("foo")),  # compat bad
        # DType == a Python type is the behaviour under test, not a type check:
        lambda tf: (tf.float32 == float, tf.int64 == int, tf.float32 == "<f4", tf.bool == bool),  # noqa: E721
        lambda tf: (tf.float32.is_quantized, tf.int8.is_numpy_compatible),  # quantized
    ],
)
def test_dtype_and_shape_api_as_tf(body):
    check(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.convert_to_tensor(np.array([1.5]), dtype=tf.int32),
        lambda tf: tf.constant(np.array([1 + 1j]), dtype=tf.float32),
        lambda tf: tf.constant(np.float32(2.7), dtype=tf.int32),
        lambda tf: tf.constant(np.array([300]), tf.int8),
        lambda tf: tf.constant(np.array([1e39]), tf.float32),
        lambda tf: tf.constant([np.array(1e39)]),
        raising(lambda tf: tf.constant(np.array([1, None], dtype=object))),
        raising(lambda tf: tf.convert_to_tensor(np.array([1, None], dtype=object))),
        lambda tf: tf.constant(np.array([1, 2], dtype=object), tf.float32),
        raising(lambda tf: tf.constant(np.array(["2020-01-01"], dtype="datetime64[D]"))),
        lambda tf: tf.convert_to_tensor(range(3)),
        lambda tf: tf.convert_to_tensor(range(3), tf.float32),
        lambda tf: tf.constant([1, 2, 3]) * range(3),
        raising(lambda tf: tf.convert_to_tensor(x for x in [1, 2])),
        raising(lambda tf: tf.convert_to_tensor({"a": 1})),
        lambda tf: tf.convert_to_tensor(2**31),
        lambda tf: tf.convert_to_tensor([(1, 2), (3, 4)]),
        lambda tf: tf.convert_to_tensor([[]]),
        lambda tf: tf.convert_to_tensor(1.5, dtype_hint=tf.int32),
        lambda tf: tf.convert_to_tensor(2**40, dtype_hint=tf.int32),
        raising(lambda tf: tf.convert_to_tensor(1.0, dtype="foo")),
    ],
)
def test_numpy_and_python_containers_convert_as_tf(body):
    check(body)


_F64 = np.ones(2)  # float64: with a float32 tensor, TF's tf.add / tf.matmul / tf.math.truediv refuse it first


@pytest.mark.parametrize(
    "body",
    [
        # `tf.add` and `tf.matmul` convert `x` with its own dtype, then `y` with `x`'s as a hint: the kernel refuses
        raising(lambda tf: tf.add(_F64, tf.ones(2))),
        raising(lambda tf: tf.math.add(np.float64(1), tf.ones(2))),
        raising(lambda tf: tf.add([1, 2], tf.ones(2))),
        raising(lambda tf: tf.add(1, tf.ones(2))),
        raising(lambda tf: tf.add(np.ones(2, np.int32), tf.ones(2, tf.int64))),
        raising(lambda tf: tf.add(_F64, tf.Variable([1.0, 2.0]))),
        raising(lambda tf: tf.matmul(np.ones((2, 2)), tf.ones((2, 2)))),
        raising(lambda tf: tf.linalg.matmul([[1, 2]], tf.ones((2, 1)))),
        lambda tf: tf.add(tf.ones(2), _F64),
        lambda tf: tf.add(tf.Variable([1.0, 2.0]), _F64),
        lambda tf: tf.add(1.5, tf.ones(2)),
        lambda tf: tf.add(_F64, [1, 2]),
        lambda tf: tf.add(np.ones(2, np.float32), _F64),
        lambda tf: tf.matmul([[1.0, 2.0]], tf.ones((2, 1))),
        lambda tf: tf.matmul(tf.ones((1, 2)), np.ones((2, 1))),
        # truediv refuses two dtypes with TypeError; `tf.math.divide` converts a non-tensor `x` to `y`'s dtype
        raising(lambda tf: tf.math.truediv(_F64, tf.ones(2))),
        raising(lambda tf: tf.math.truediv(1, tf.ones(2))),
        raising(lambda tf: tf.math.truediv(tf.ones(2, tf.float64), tf.ones(2))),
        raising(lambda tf: tf.math.divide(tf.ones(2, tf.float64), tf.ones(2))),
        raising(lambda tf: tf.ones(2, tf.float64) / tf.ones(2)),
        raising(lambda tf: tf.ones(2, tf.int32) / tf.ones(2, tf.int64)),
        raising(lambda tf: tf.ones(2, tf.int32) / 1.5),
        raising(lambda tf: tf.math.divide(1.5, tf.ones(2, tf.int32))),
        lambda tf: tf.math.truediv(tf.ones(2, tf.int32), _F64),
        lambda tf: tf.math.divide(_F64, tf.ones(2)),
        lambda tf: tf.math.divide([1, 2], tf.ones(2)),
        # the operators convert the other operand to the tensor's dtype, as before
        lambda tf: _F64 + tf.ones(2),
        lambda tf: _F64 / tf.ones(2),
        lambda tf: [1, 2] / tf.ones(2),
        lambda tf: np.ones((2, 2)) @ tf.ones((2, 2)),
        lambda tf: [[1, 2]] @ tf.ones((2, 1)),
        # `tf.add` of strings concatenates them, as the `+` operator does
        lambda tf: tf.add("a", tf.constant("b")),
        lambda tf: tf.math.add(["a", "b"], "c"),
        lambda tf: tf.add(tf.constant([["a"], ["b"]]), tf.constant(["c", "d"])),
        raising(lambda tf: tf.add("a", tf.ones(2))),
        raising(lambda tf: tf.add(tf.constant(["a", "b", "c"]), tf.constant(["c", "d"]))),
        # a raw op converts every operand to the tensor's dtype, strictly
        lambda tf: tf.raw_ops.AddV2(x=_F64, y=tf.ones(2)),
        lambda tf: tf.raw_ops.Add(x=np.ones(2, np.int64), y=tf.ones(2)),
        lambda tf: tf.raw_ops.MatMul(a=[[1, 2]], b=tf.ones((2, 1))),
        lambda tf: tf.raw_ops.BatchMatMulV2(x=np.ones((1, 2, 2)), y=tf.ones((1, 2, 2))),
        raising(lambda tf: tf.raw_ops.AddV2(x=1.5, y=tf.ones(2, tf.int32))),
        raising(lambda tf: tf.raw_ops.AddV2(x=tf.ones(2, tf.int32), y=1.5)),
        raising(lambda tf: tf.raw_ops.Div(x=1.5, y=tf.ones(2, tf.int32))),
    ],
)
def test_mixed_operands_convert_in_each_wrappers_order_as_tf(body):
    check(body)


@pytest.mark.parametrize(
    "body",
    [
        # truediv divides the dtypes of TF's table only: bool and string are its TypeError, operators too
        raising(lambda tf: tf.constant([True, False]) / tf.constant([True, True])),
        raising(lambda tf: tf.math.truediv(tf.constant([True]), tf.constant([True]))),
        raising(lambda tf: tf.math.divide(tf.constant([True]), tf.constant([True]))),
        raising(lambda tf: tf.constant(["a"]) / tf.constant(["b"])),
        lambda tf: tf.math.truediv(tf.constant([3], tf.uint8), tf.constant([2], tf.uint8)),
        lambda tf: tf.math.truediv(tf.constant([1 + 2j]), tf.constant([2j])),
        # with a name, tf.math.divide converts x by itself, as truediv (TF: DivideDelegateWithName)
        raising(lambda tf: tf.math.divide(2, tf.constant(2.0), name="d")),
        lambda tf: tf.math.divide(2.0, tf.constant(4.0), name="d"),
        lambda tf: tf.math.divide(2, tf.constant(4.0)),
        # tf.realdiv, the generated RealDiv op
        lambda tf: tf.realdiv(tf.constant([1.0, 2.0]), tf.constant(2.0)),
        lambda tf: tf.realdiv(1, tf.constant([1.0, 2.0], tf.float64)),
        lambda tf: tf.realdiv([1.5, 2], [2, 4]),
        lambda tf: tf.realdiv(tf.constant([1j]), tf.constant([2.0 + 0j])),
        raising(lambda tf: tf.realdiv(tf.constant([1.0], tf.float64), tf.constant([2.0]))),
        raising(lambda tf: tf.realdiv(tf.constant([1, 2]), tf.constant([1, 2]))),
        raising(lambda tf: tf.realdiv(tf.constant([True]), tf.constant([True]))),
        raising(lambda tf: tf.raw_ops.RealDiv(x=tf.constant(["a"]), y=tf.constant(["b"]))),
        raising(lambda tf: tf.realdiv(tf.ones([2]), tf.ones([3]))),
        lambda tf: _flat(tf.realdiv(tf.ragged.constant([[1.0], [2.0, 3.0]]), tf.constant(2.0))),
        # RealDiv checks T (the first input's dtype), then finds its kernel, then compares the inputs' dtypes;
        # inside a function TF's graph finds no kernel when it runs (InvalidArgumentError)
        raising(lambda tf: tf.realdiv(tf.constant([1, 2]), tf.constant([True, False]))),
        raising(lambda tf: tf.realdiv(tf.constant([True, False]), tf.constant([1, 2]))),
        raising(lambda tf: tf.function(tf.realdiv)(tf.constant([1, 2]), tf.constant([3, 4]))),
        raising(lambda tf: tf.function(tf.realdiv)(tf.constant([7, 0], tf.int8), tf.constant([2.0, 1.0]))),
        # divide_no_nan of ragged operands, as TF's dispatch
        lambda tf: _flat(
            tf.math.divide_no_nan(tf.ragged.constant([[1.0, 2.0], [3.0]]), tf.ragged.constant([[0.0, 2.0], [3.0]]))
        ),
        lambda tf: _flat(tf.math.divide_no_nan(tf.ragged.constant([[1.0, 2.0], [3.0]]), tf.constant([[0.0], [2.0]]))),
        lambda tf: _flat(tf.math.divide_no_nan(tf.ragged.constant([[1.0, 2.0], [3.0]]), 2.0)),
        # a raw op converts a Python value strictly to the first input's dtype (an array casts to it)
        raising(lambda tf: tf.realdiv(1, 2.0)),
        raising(lambda tf: tf.realdiv([1, 2], [2.5, 4.0])),
        raising(lambda tf: tf.raw_ops.AddV2(x=1, y=2.5)),
        raising(lambda tf: tf.raw_ops.MatMul(a=[[1]], b=[[2.5]])),
        lambda tf: tf.raw_ops.AddV2(x=1.5, y=2),
        lambda tf: tf.raw_ops.AddV2(x=1, y=np.ones(2)),
        lambda tf: tf.raw_ops.AddV2(x=np.ones(2), y=np.ones(2, np.float32)),
        # kernels that divide refuse bool and string (their attr error), not truediv's TypeError
        raising(lambda tf: tf.raw_ops.Div(x=tf.constant([True]), y=tf.constant([True]))),
        raising(lambda tf: tf.raw_ops.Div(x=tf.constant(["a"]), y=tf.constant(["b"]))),
        raising(lambda tf: tf.sparse.segment_mean(tf.constant([True, False]), [0, 1], [0, 0])),
        raising(lambda tf: tf.sparse.segment_sqrt_n(tf.constant([True, False]), [0, 1], [0, 0])),
        raising(lambda tf: tf.sparse.segment_mean(tf.constant([1, 2]), [0, 1], [0, 0])),
        lambda tf: tf.sparse.segment_mean(tf.constant([1.0, 2.0]), [0, 1], [0, 0]),
    ],
)
def test_division_dtypes_names_and_realdiv_as_tf(body):
    check(body)


def _matmul_operands(tf):
    f32 = tf.constant([[1.5, 2.0], [3.0, 4.25]])
    i8 = tf.constant([[100, -3], [7, 127]], tf.int8)
    u8 = tf.constant([[200, 3], [7, 255]], tf.uint8)
    return f32, tf.cast(f32, tf.bfloat16), i8, u8


def _matmul_gradients(tf):
    a, b = tf.constant([[1.5, 2.0], [3.0, 4.25]]), tf.constant([[0.5, -1.0], [2.0, 0.25]], tf.bfloat16)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        product = tf.matmul(a, b, transpose_b=True)
    return product, tape.gradient(product, [a, b])


@pytest.mark.parametrize(
    "body",
    [
        # matrices of bfloat16 and another float: TF's SparseMatMul, in float32
        lambda tf: tf.matmul(_matmul_operands(tf)[0], _matmul_operands(tf)[1]),
        lambda tf: tf.matmul(_matmul_operands(tf)[1], _matmul_operands(tf)[0], transpose_a=True),
        lambda tf: tf.matmul(_matmul_operands(tf)[1], _matmul_operands(tf)[1], a_is_sparse=True),
        lambda tf: tf.matmul(_matmul_operands(tf)[0], _matmul_operands(tf)[1], output_type=tf.float64),
        _matmul_gradients,
        raising(lambda tf: tf.matmul(_matmul_operands(tf)[1], tf.ones([2, 2], tf.float64))),
        raising(lambda tf: tf.matmul(_matmul_operands(tf)[0][None], _matmul_operands(tf)[1][None])),
        raising(lambda tf: tf.matmul(tf.ones([2, 2], tf.float16), tf.ones([2, 2]))),
        # an output_type other than the inputs': BatchMatMulV3, whose CPU kernels are few
        lambda tf: tf.matmul(_matmul_operands(tf)[2], _matmul_operands(tf)[2], output_type=tf.int32),
        lambda tf: tf.matmul(_matmul_operands(tf)[3], _matmul_operands(tf)[2], output_type=tf.int32, transpose_b=True),
        lambda tf: tf.matmul(_matmul_operands(tf)[2][None], _matmul_operands(tf)[3][None], output_type=tf.int32),
        lambda tf: tf.matmul(_matmul_operands(tf)[1], _matmul_operands(tf)[2], output_type=tf.bfloat16),
        lambda tf: tf.matmul(_matmul_operands(tf)[3][None], _matmul_operands(tf)[1][None], output_type=tf.bfloat16),
        lambda tf: tf.matmul(_matmul_operands(tf)[0], _matmul_operands(tf)[0], output_type=tf.float32),
        raising(lambda tf: tf.matmul(_matmul_operands(tf)[2], _matmul_operands(tf)[2])),
        raising(lambda tf: tf.matmul(_matmul_operands(tf)[0], _matmul_operands(tf)[0], output_type=tf.float64)),
        raising(lambda tf: tf.matmul(tf.constant([[1, 2]]), tf.constant([[1], [2]]), output_type=tf.int64)),
        raising(lambda tf: tf.matmul(_matmul_operands(tf)[2], _matmul_operands(tf)[2], output_type=tf.int8)),
        raising(
            lambda tf: tf.matmul(_matmul_operands(tf)[0][None], _matmul_operands(tf)[2][None], output_type=tf.float32)
        ),
    ],
)
def test_matmul_of_mixed_dtypes_and_output_types_as_tf(body):
    check(body)


def test_matmul_picks_tfs_kernel_for_every_dtype_pair_and_output_type():
    """Per ranks, input dtypes, output_type and sparsity hint: the result's dtype and shape, or the error class
    (a kernel TF's CPU lacks, an attr it refuses, a mismatch, a batch for a kernel of matrices), as TF."""
    names = ("bfloat16", "float16", "float32", "float64", "uint8", "int8", "int32", "complex64")

    def body(tf):
        picked = {}
        cases = itertools.product(((2, 2), (3, 3), (2, 3)), names, names, (None, "int32", "bfloat16"), (False, True))
        for ranks, a, b, out, hint in cases:
            x = tf.cast(tf.ones([1] * (ranks[0] - 2) + [2, 2]), getattr(tf, a))
            y = tf.cast(tf.ones([1] * (ranks[1] - 2) + [2, 2]), getattr(tf, b))
            try:
                result = tf.matmul(x, y, output_type=None if out is None else getattr(tf, out), a_is_sparse=hint)
                picked[(ranks, a, b, out, hint)] = (result.dtype.name, tuple(result.shape))
            except Exception as exc:  # noqa: BLE001 - the error class is the result
                picked[(ranks, a, b, out, hint)] = type(exc).__name__
        return picked

    check(body)


def _mixed_v3_gradient(tf, bfloat16_first, rank):
    a = tf.Variable(tf.constant(np.array([[1.5, 2.0], [1.0, -1.0]]).reshape([1] * (rank - 2) + [2, 2]), tf.bfloat16))
    b = tf.constant(np.array([[3, 1], [4, 2]]).reshape([1] * (rank - 2) + [2, 2]), tf.int8)
    with tf.GradientTape() as tape:
        product = (
            tf.matmul(a, b, output_type=tf.bfloat16) if bfloat16_first else tf.matmul(b, a, output_type=tf.bfloat16)
        )
    return tape.gradient(product, a)


@pytest.mark.parametrize(
    "body",
    [
        # BatchMatMulV3 of bfloat16 and int8 computes, but TF's gradient of it fails
        raising(lambda tf: _mixed_v3_gradient(tf, True, 2)),
        raising(lambda tf: _mixed_v3_gradient(tf, False, 3)),
        # inside a function: a batch for SparseMatMul is a shape error, a missing kernel the graph's error
        raising(lambda tf: tf.function(lambda: tf.matmul(tf.ones((1, 2, 2)), tf.ones((1, 2, 2)), a_is_sparse=True))()),
        raising(
            lambda tf: tf.function(
                lambda: tf.matmul(tf.ones((2, 2), tf.int32), tf.ones((2, 2), tf.int32), output_type=tf.int64)
            )()
        ),
        lambda tf: tf.function(
            lambda: tf.matmul(tf.ones((2, 2), tf.int8), tf.ones((2, 2), tf.int8), output_type=tf.int32)
        )(),
        lambda tf: tf.function(lambda: tf.matmul(tf.ones((2, 2), tf.bfloat16), tf.ones((2, 2))))(),
    ],
)
def test_matmul_kernels_gradients_and_functions_as_tf(body):
    check(body)


def _flat(ragged):
    return ragged.dtype, list(ragged.nested_row_splits), ragged.flat_values


@pytest.mark.parametrize(
    "body",
    [
        # a ragged operand: TF's ragged dispatch converts the other one with its dtype as a hint
        lambda tf: _flat(tf.add(1, tf.ragged.constant([[1.0, 2.0], [3.0]]))),
        lambda tf: _flat(tf.math.truediv(2, tf.ragged.constant([[1.0, 2.0], [3.0]]))),
        lambda tf: _flat(tf.math.divide(2, tf.ragged.constant([[1.0, 2.0], [3.0]]))),
        lambda tf: _flat(tf.math.divide(tf.ragged.constant([[1.0, 2.0], [3.0]]), tf.constant(2.0))),
        raising(lambda tf: tf.ragged.constant([[1, 2], [3]]) * 1.5),
        raising(lambda tf: tf.multiply(1.5, tf.ragged.constant([[1, 2], [3]]))),
        # a variable operand of a raw op keeps its dtype; other values convert to it
        lambda tf: tf.raw_ops.AddV2(x=1, y=tf.Variable([1.0, 2.0])),
        lambda tf: tf.raw_ops.MatMul(a=np.eye(2), b=tf.Variable(np.eye(2, dtype=np.float32))),
        lambda tf: tf.raw_ops.DivNoNan(x=1, y=tf.Variable([1.0, 0.0])),
        raising(lambda tf: tf.raw_ops.AddV2(x=tf.Variable([1.0, 2.0]), y=tf.ones(2, tf.float64))),
        # raw divisions of two dtypes are the kernel's InvalidArgumentError, not truediv's TypeError
        raising(lambda tf: tf.raw_ops.RealDiv(x=tf.ones(2), y=tf.ones(2, tf.float64))),
        raising(lambda tf: tf.raw_ops.Div(x=tf.ones(2), y=tf.ones(2, tf.float64))),
        raising(lambda tf: tf.raw_ops.DivNoNan(x=tf.ones(2), y=tf.ones(2, tf.float64))),
        # AddV2 has no string kernel; Add concatenates
        raising(lambda tf: tf.raw_ops.AddV2(x=tf.constant("a"), y=tf.constant("b"))),
        lambda tf: tf.raw_ops.Add(x="a", y=tf.constant("b")),
        # a NumPy value on the left of a variable: NumPy defers to the variable's operators, as to a tensor's
        lambda tf: np.array([1.0, 2.0]) + tf.Variable([1.0, 2.0]),
        lambda tf: np.float64(2) * tf.Variable([1.0, 2.0]),
        lambda tf: np.eye(2) @ tf.Variable(np.eye(2, dtype=np.float32)),
        lambda tf: np.array([1.0, 3.0]) < tf.Variable([1.0, 2.0]),
        # a JAX array first operand (float32, as JAX's default is beside TF)
        lambda tf: tf.add(jnp.ones(2, jnp.float32), tf.ones(2)),
        lambda tf: tf.matmul(jnp.eye(2, dtype=jnp.float32), tf.eye(2)),
        lambda tf: tf.math.truediv(jnp.ones(2, jnp.float32), tf.ones(2)),
    ],
)
def test_mixed_operands_of_ragged_variable_raw_and_jax_kinds_as_tf(body):
    check(body)


def _format_inside_function(tf, spec):
    printed = []

    @tf.function
    def f(x):
        printed.append(format(x, spec))
        return x * 2

    return f(tf.constant(1.5)), printed


@pytest.mark.parametrize("spec", ["", ".2f"])
def test_format_of_a_symbolic_tensor(spec):
    check(lambda tf: _format_inside_function(tf, spec), raises=spec != "")


def test_a_variable_declared_with_unknown_dimensions_takes_values_of_compatible_shapes():
    def body(tf):
        v = tf.Variable(tf.zeros([2]), shape=tf.TensorShape(None))
        shapes = [v.shape, v.get_shape()]
        v.assign(tf.ones([3]))
        w = tf.Variable(tf.zeros([2, 3]), shape=[None, 3])
        w.assign(tf.ones([4, 3]))
        w.assign_add(tf.ones([4, 3]))
        return shapes, v.shape, v.read_value(), tf.shape(v), w.shape, w.numpy(), repr(v)

    check(body)
    check_raises(lambda tf: tf.Variable(tf.zeros([2, 3]), shape=[None, 3]).assign(tf.ones([4, 2])), messages=True)
    check_raises(lambda tf: tf.Variable(tf.zeros([2, 3]), shape=[None, 3]).assign_add(tf.ones([1, 3])))
