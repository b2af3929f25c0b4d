"""Tensors, dtypes, conversion, printing, operators and indexing, against real TensorFlow."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf

DTYPES = [
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "complex64",
    "complex128",
]


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_objects(name):
    def body(tf):
        d = getattr(tf, name if name != "bool" else "bool")
        return (
            repr(d),
            str(d),
            d.name,
            d.is_floating,
            d.is_integer,
            d.is_complex,
            d == d.as_numpy_dtype,
            d == name,
            tf.as_dtype(name) == d,
            tf.constant(True if name == "bool" else 1, d).dtype == d,  # (TF converts no int to a bool)
        )

    check(body)


@pytest.mark.parametrize(
    "value",
    [
        3.0,
        3,
        True,
        1 + 2j,
        2**40,
        [1, 2],
        [1, 2.5],
        [[1.0, 2.0], [3.0, 4.0]],
        np.float64(1.5),
        np.array([1, 2], np.int64),
        np.array(2.0, np.float16),
        [],
    ],
)
def test_default_dtypes(value):
    check(lambda tf: tf.constant(value))


@pytest.mark.parametrize(
    "value,dtype",
    [
        (1.5, "int32"),
        (2.0, "int32"),
        (3, "float64"),
        ([1, 2], "float16"),
        (1 + 1j, "float32"),
        (np.array([1.7]), "int32"),
        (1, "bool"),
    ],
)
def test_constant_and_convert_with_dtype(value, dtype):
    # a Python float for an integer dtype, a complex for a float one, an int for bool: TF's TypeError
    raises = (type(value), dtype) in {(float, "int32"), (complex, "float32"), (int, "bool")}
    check(lambda tf: tf.constant(value, getattr(tf, dtype)), raises=raises)
    check(lambda tf: tf.convert_to_tensor(value, dtype=getattr(tf, dtype)), raises=raises)


def test_convert_tensor_with_other_dtype_raises():
    check_raises(lambda tf: tf.convert_to_tensor(tf.constant(1.5), dtype=tf.int32), messages=True)
    check_raises(lambda tf: tf.convert_to_tensor(None), messages=True)


def test_constants_from_numpy_keep_their_values():
    # A constant owns its value: a later change of the NumPy array it came from does not reach it, and its
    # `numpy()` is the caller's to change (on the CPU tapeshim keeps the value as a host array).
    def body(tf):
        source = np.arange(6, dtype=np.float32).reshape(2, 3)
        made = [tf.constant(source), tf.convert_to_tensor(source), tf.constant(source, tf.float64)]
        batches = list(tf.data.Dataset.from_tensor_slices(source).batch(2))
        source[:] = -1.0
        out = made[0].numpy()
        out[0, 0] = 99.0
        return made + batches + [tf.matmul(made[0], tf.transpose(made[1])), tf.range(3), tf.Variable(source)]

    check(body)


def test_constant_with_shape():
    check(lambda tf: (tf.constant(7.0, shape=[2, 3]), tf.constant([1, 2, 3, 4], shape=[2, 2])))


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.constant(6.0),
        lambda tf: tf.constant([1.0, 2.0]),
        lambda tf: tf.constant([[1.0, 2.0], [3.0, 4.0]]),
        lambda tf: tf.constant([[1, 2], [3, 4]]),
        lambda tf: tf.constant(True),
        lambda tf: tf.constant(1.5, tf.float64),
        lambda tf: tf.constant(1 + 2j),
        lambda tf: tf.constant([1.5, 2.5], tf.float16),
        lambda tf: tf.constant(np.zeros([2, 0], np.float32)),
    ],
)
def test_str_and_repr(make):
    check(lambda tf: (str(make(tf)), repr(make(tf))))


def test_variable_printing():
    def body(tf):
        return repr(tf.Variable(3.0)), str(tf.Variable([1.0, 2.0])), repr(tf.Variable([[1, 2]], name="w"))

    check(body)


def test_numpy_types():
    def body(tf):
        values = [
            tf.constant(1.0).numpy(),
            tf.constant([1.0]).numpy(),
            tf.constant(1, tf.int64).numpy(),
            tf.constant(1.0, tf.bfloat16).numpy(),
            tf.constant(True).numpy(),
        ]
        return [type(v).__name__ for v in values], [str(np.asarray(v).dtype) for v in values]

    check(body)


def test_python_scalars():
    def body(tf):
        return (
            float(tf.constant(2.5)),
            int(tf.constant(2.5)),
            bool(tf.constant(0.0)),
            bool(tf.constant([1])),
            int(tf.Variable(3)),
            float(tf.Variable(1.5)),
        )

    check(body)
    check_raises(lambda tf: bool(tf.constant([1.0, 2.0])))


def _float_over(x, y):
    return 3.0 / y  # (with integer tensors, TF's TypeError: the float does not convert)


def _two_to_the(x, y):
    return 2**x  # (with integer tensors, TF's error for a negative power)


@pytest.mark.parametrize(
    "op",
    [
        lambda x, y: x + y,
        lambda x, y: x - y,
        lambda x, y: x * y,
        lambda x, y: x / y,
        lambda x, y: x // y,
        lambda x, y: x % y,
        lambda x, y: x**y,
        lambda x, y: -x,
        lambda x, y: abs(x),
        lambda x, y: x < y,
        lambda x, y: x <= y,
        lambda x, y: x > y,
        lambda x, y: x >= y,
        lambda x, y: x == y,
        lambda x, y: x != y,
        lambda x, y: 2 - x,
        _float_over,
        _two_to_the,
        lambda x, y: 7 // y,
        lambda x, y: 7 % y,
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_operators(op, dtype):
    def body(tf):
        x = tf.constant([-3, -1, 0, 2, 5], getattr(tf, dtype))
        y = tf.constant([2, 3, 4, 1, 2], getattr(tf, dtype))
        return op(x, y)

    check(body, raises=dtype.startswith("int") and op in (_float_over, _two_to_the))


def test_matmul_operator_and_variables():
    def body(tf):
        a = tf.Variable([[1.0, 2.0]])
        b = tf.constant([[1.0], [2.0]])
        return a @ b, b @ a, a + a, -a, a * 2, 1.0 - a, a**2

    check(body)


@pytest.mark.parametrize(
    "op",
    [
        lambda tf: tf.constant(1.0) + tf.constant(1),
        lambda tf: tf.constant(1) + 1.5,
        lambda tf: tf.add(1, 2.5),
        lambda tf: tf.constant(1.0, tf.float64) * tf.constant(2.0),
        lambda tf: tf.constant([1.0, 2.0, 3.0]) + tf.constant([1.0, 2.0]),
        lambda tf: tf.matmul(tf.ones([2, 3]), tf.ones([2, 3])),
        lambda tf: tf.reshape(tf.ones([2, 3]), [4]),
        lambda tf: tf.exp(tf.constant(1)),
    ],
)
def test_mixed_dtypes_and_bad_shapes_raise(op):
    check_raises(op, messages=False)


def test_python_values_take_the_tensor_dtype():
    def body(tf):
        x = tf.constant(1.0)
        return x + np.float64(2.0), x + np.array([2.0]), np.array([2.0]) + x, tf.add(2.5, 1), 3 * x, x * 2

    check(body)


def test_int_division_promotes_like_tf():
    def body(tf):
        return (
            tf.constant(3) / tf.constant(2),
            tf.constant(3, tf.int8) / tf.constant(2, tf.int8),
            tf.constant(-7) // 2,
            tf.constant(-7.0) % 3.0,
        )

    check(body)


@pytest.mark.parametrize(
    "key",
    [
        0,
        -1,
        slice(1, None),
        slice(None, None, 2),
        slice(None, None, -1),
        (Ellipsis, 1),
        (None, 0),
        (slice(None), None, 1),
        (1, slice(0, 2)),
        (Ellipsis, None, -1),
        (slice(-2, None), slice(None, None, -2)),
    ],
)
def test_getitem(key):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(lambda tf: tf.constant(data)[key])


def test_getitem_gradient_and_newaxis():
    def body(tf):
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
        with tf.GradientTape() as t:
            y = tf.reduce_sum(v[..., tf.newaxis, -1] * v[1])
        return t.gradient(y, v), tf.newaxis is None

    check(body)


@pytest.mark.parametrize("key", [5, (0, 7), (0, 0, 0)])
def test_getitem_out_of_range(key):
    check_raises(lambda tf: tf.constant([[1.0, 2.0]])[key])


def test_shape_object():
    def body(tf):
        s = tf.constant(np.zeros([2, 3], np.float32)).shape
        return (
            s,
            str(s),
            repr(s),
            s.as_list(),
            s.rank,
            s.ndims,
            len(s),
            s[0],
            s[1:],
            s == [2, 3],
            s == (2, 3),
            s.num_elements(),
            s.is_fully_defined(),
            list(s),
            str(tf.constant(1.0).shape),
            str(tf.constant([1.0]).shape),
        )

    check(body)


def test_len_iteration_hash():
    def body(tf):
        x = tf.constant([1.0, 2.0])
        return len(x), list(x), x.ref() == x.ref(), x.ref().deref() is x

    check(body)
    check_raises(lambda tf: hash(tf.constant(1.0)), messages=True)
    check_raises(lambda tf: len(tf.constant(1.0)), messages=True)
    check_raises(lambda tf: {tf.Variable(1.0): 1}, messages=True)


def test_equality_with_none_and_incompatible_shapes():
    check(
        lambda tf: (
            tf.constant(1.0) == None,  # noqa: E711
            tf.constant([1.0, 2]) == tf.constant([1.0, 2, 3]),
            tf.constant([1.0, 2]) != tf.constant([1.0, 3]),
        )
    )


def test_float64_is_really_float64():
    def body(tf):
        x = tf.constant(1.0, tf.float64) + tf.constant(1e-12, tf.float64)
        i = tf.constant(2**40, tf.int64) * 2
        return x, x.numpy() == 1.0, i, tf.constant(np.float64(0.1)).dtype

    check(body)
    assert tapeshim.constant(1.0, tapeshim.float64).value.dtype == np.float64


def test_float64_survives_the_tape():
    def body(tf):
        x = tf.Variable(1.0 + 1e-12, dtype=tf.float64)
        with tf.GradientTape() as t:
            y = x * x
        return t.gradient(y, x) - 2.0, y - 1.0

    check(body)


def test_jax_interop():
    import jax.numpy as jnp

    x = tapeshim.constant([1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])
    assert jnp.sum(jnp.asarray(x)).dtype == jnp.float32
    assert jnp.sum(x.value).dtype == jnp.float32
    assert isinstance(x, tapeshim.Tensor) and not isinstance(x, real_tf.Tensor)
