"""tf.math.mod, tf.truncatemod, tf.math.igamma/igammac/betainc/zeta/polygamma, tf.math.special.*, tf.timestamp,
tf.as_string, tf.version, tf.debugging.enable_check_numerics and tf.edit_distance against real TF: values,
gradients and errors."""

import time

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf, second_derivative_body, taped_body, traced_body

_SPECIAL = (
    "bessel_i0 bessel_i0e bessel_i1 bessel_i1e bessel_j0 bessel_j1 bessel_k0 bessel_k0e bessel_k1 bessel_k1e "
    "bessel_y0 bessel_y1 dawsn expint fresnel_cos fresnel_sin spence"
).split()
_NO_HALF = ("dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence")
_SPECIAL_POINTS = np.array(
    [0.0, 1e-6, 0.3, 1.0, 1.9, 2.1, 4.5, 9.0, 17.0, 24.0, 26.0, 60.0, -0.7, -3.0, np.inf, np.nan]
)
_GRAD_POINTS = np.array([0.2, 0.9, 1.7, 3.5, 12.0, 30.0])


# -- mod, truncatemod --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64", "int32", "int64", "uint8"))
def test_mod_is_floormod(dtype):
    x = np.array([7, 9, 3, 200]) if dtype == "uint8" else np.array([7, -7, 7, -7, 0, 5])
    y = np.array([3, 4, 5, 7]) if dtype == "uint8" else np.array([3, 3, -3, -3, 2, 7])
    check(lambda tf: tf.math.mod(tf.constant(x, getattr(tf, dtype)), tf.constant(y, getattr(tf, dtype))))
    assert tapeshim.math.mod is tapeshim.math.floormod


def test_mod_gradient():
    check(taped_body(lambda tf, x, y: tf.math.mod(x, y), np.array([7.5, -3.25, 2.0]), np.array([2.0, 1.5, -0.75])))


@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "int64"))
def test_truncatemod(dtype):
    x = np.array([7, -7, 7, -7, 9, 0]).astype(dtype)
    y = np.array([3, 3, -3, -3, 4, 5]).astype(dtype)
    check(lambda tf: tf.truncatemod(tf.constant(x), tf.constant(y)))
    check(lambda tf: tf.truncatemod(tf.constant(x.reshape(2, 3)), tf.constant(y[:3])))


def test_truncatemod_floats_special_values():
    check(lambda tf: tf.truncatemod([7.5, -7.5, 1.0, np.inf, 5.0], [2.0, 2.0, 0.0, 2.0, np.inf]))
    check(lambda tf: tf.truncatemod(tf.constant([5.5, -2.5]), 2))


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.truncatemod(tf.constant([1, 2]), tf.constant([0, 1])),  # InternalError, as TF's CPU
        lambda tf: tf.truncatemod(tf.constant([1, 2], tf.uint8), tf.constant([1, 1], tf.uint8)),
        lambda tf: tf.truncatemod(tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16)),
        lambda tf: tf.truncatemod(tf.constant([1.0], tf.bfloat16), tf.constant([1.0], tf.bfloat16)),
        lambda tf: tf.truncatemod(tf.constant([1, 2]), tf.constant([1.0, 1.0])),
        lambda tf: tf.truncatemod(tf.constant([1.0, 2.0]), tf.constant([1.0, 1.0, 1.0])),
        lambda tf: tf.truncatemod(tf.constant([1 + 1j]), tf.constant([1 + 1j])),
    ],
)
def test_truncatemod_errors(body):
    check_raises(body)


def test_truncatemod_has_no_gradient():
    check_raises(taped_body(lambda tf, x, y: tf.truncatemod(x, y), np.array([7.5, -3.0]), np.array([2.0, 2.0])))


def test_truncatemod_in_function():
    def body(tf):
        @tf.function
        def remainder(x, y):
            return tf.truncatemod(x, y)

        return remainder(tf.constant([7.5, -3.0]), tf.constant([2.0, 2.0])), remainder(tf.constant([7, -7]), 3)

    check(body)


# -- tf.math.special and the Bessel functions of tf.math ------------------------------------------------------
@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("name", _SPECIAL)
def test_special_values(name, dtype):
    check(lambda tf: getattr(tf.math.special, name)(tf.constant(_SPECIAL_POINTS, getattr(tf, dtype))))


@pytest.mark.parametrize("name", _SPECIAL)
def test_special_half_precision(name):
    points = np.array([0.25, 1.0, 2.5, 7.0, -1.5])

    def body(tf):
        return getattr(tf.math.special, name)(tf.constant(points, tf.float16))

    if name in _NO_HALF:
        check_raises(body)
    else:
        check(body)
    check_raises(lambda tf: getattr(tf.math.special, name)(tf.constant(points, tf.bfloat16)))


@pytest.mark.parametrize("name", _SPECIAL)
def test_special_refuses_integers_and_complex(name):
    check_raises(lambda tf: getattr(tf.math.special, name)(tf.constant([1, 2])))
    check_raises(lambda tf: getattr(tf.math.special, name)(tf.constant([1.0 + 0j])))


@pytest.mark.parametrize("name", _SPECIAL)
def test_special_gradients(name):
    points = _GRAD_POINTS if name != "spence" else np.array([0.2, 0.9, 1.0, 1.7, 3.5])
    check(
        taped_body(
            lambda tf, x: getattr(tf.math.special, name)(x), points, output_gradients=np.linspace(1, 2, points.size)
        )
    )
    check(taped_body(lambda tf, x: getattr(tf.math.special, name)(x), points, dtype="float32"))


@pytest.mark.parametrize("name", ("bessel_i1", "bessel_i1e", "bessel_j1", "bessel_i0e"))
def test_special_gradient_at_zero(name):
    check(taped_body(lambda tf, x: getattr(tf.math.special, name)(x), np.array([0.0, -1.25, 2.0])))


@pytest.mark.parametrize("name", ("bessel_j0", "bessel_k1e", "bessel_y1", "dawsn", "bessel_i1"))
def test_special_second_derivative(name):
    check(second_derivative_body(lambda tf, x: getattr(tf.math.special, name)(x), [0.6, 1.3, 5.0, 27.0]))


def test_special_functions_by_their_paths():
    def body(tf):
        x = tf.constant([0.5, 1.5, 10.0])
        special = tf.math.special
        return (
            tf.math.bessel_i0(x), tf.math.bessel_i0e(x), tf.math.bessel_i1(x), tf.math.bessel_i1e(x),
            special.bessel_i0(x), special.bessel_i0e(x), special.bessel_i1(x), special.bessel_i1e(x),
            tf.math.special.bessel_j0(x), tf.math.special.bessel_j1(x), tf.math.special.bessel_y0(x),
            tf.math.special.bessel_y1(x), tf.math.special.bessel_k0(x), tf.math.special.bessel_k0e(x),
            tf.math.special.bessel_k1(x), tf.math.special.bessel_k1e(x), tf.math.special.dawsn(x),
            tf.math.special.expint(x), tf.math.special.fresnel_cos(x), tf.math.special.fresnel_sin(x),
            tf.math.special.spence(x),
        )  # fmt: skip

    check(body)
    for name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
        assert getattr(tapeshim.math, name) is getattr(tapeshim.math.special, name)


def test_special_in_function():
    check(traced_body(lambda tf, x: tf.math.special.bessel_k0(x) + tf.math.special.fresnel_sin(x), _GRAD_POINTS))


# -- igamma, igammac, zeta, polygamma, betainc ---------------------------------------------------------------
_A = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 10.0, np.inf, np.nan])
_X = np.array([-1.0, 0.0, 1e-5, 0.3, 1.0, 3.0, 50.0, np.inf, np.nan])


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("name", ("igamma", "igammac"))
def test_igamma_values(name, dtype):
    a, x = (v.ravel() for v in np.meshgrid(_A, _X))
    check(lambda tf: getattr(tf.math, name)(tf.constant(a, getattr(tf, dtype)), tf.constant(x, getattr(tf, dtype))))
    check(
        lambda tf: getattr(tf.math, name)(
            tf.constant([[0.5], [2.0]], getattr(tf, dtype)), tf.constant([0.3, 1.0, 4.0], getattr(tf, dtype))
        )
    )


@pytest.mark.parametrize("name", ("igamma", "igammac"))
def test_igamma_gradients(name):
    check(
        taped_body(lambda tf, a, x: getattr(tf.math, name)(a, x), np.array([0.5, 1.5, 4.0]), np.array([0.3, 2.0, 3.0]))
    )
    check(
        taped_body(lambda tf, a, x: getattr(tf.math, name)(a, x), np.array([[0.5], [2.0]]), np.array([0.3, 2.0, 3.0]))
    )


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_zeta_values(dtype):
    x, q = (v.ravel() for v in np.meshgrid(np.array([0.0, 1.0, 1.5, 2.0, 3.5, 10.0, np.inf, np.nan]), _X))
    check(lambda tf: tf.math.zeta(tf.constant(x, getattr(tf, dtype)), tf.constant(q, getattr(tf, dtype))))


def test_zeta_gradient_only_for_q():
    check(taped_body(lambda tf, x, q: tf.math.zeta(x, q), np.array([1.5, 2.0, 4.0]), np.array([0.5, 1.0, 3.0])))
    check(
        taped_body(
            lambda tf, x, q: tf.math.zeta(x, q),
            np.array([1.5, 2.0, 4.0]),
            np.array([0.5, 1.0, 3.0]),
            unconnected_gradients="zero",
        )
    )


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_polygamma_values(dtype):
    n, x = (
        v.ravel()
        for v in np.meshgrid(
            np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 0.5, np.nan]), np.array([-2.5, 0.0, 1e-3, 0.5, 3.0, 40.0, np.inf])
        )
    )
    check(lambda tf: tf.math.polygamma(tf.constant(n, getattr(tf, dtype)), tf.constant(x, getattr(tf, dtype))))


def test_polygamma_gradient_only_for_x():
    check(taped_body(lambda tf, n, x: tf.math.polygamma(n, x), np.array([0.0, 1.0, 3.0]), np.array([0.5, 2.0, 7.0])))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_betainc_values(dtype):
    points = np.array([-1.0, 0.0, 0.5, 2.0, 30.0, np.nan])
    a, b, x = (v.ravel() for v in np.meshgrid(points, points, np.array([-0.5, 0.0, 0.2, 0.7, 1.0, 1.5, np.nan])))
    d = getattr(real_tf, dtype).name
    check(lambda tf: tf.math.betainc(tf.constant(a, d), tf.constant(b, d), tf.constant(x, d)))
    check(lambda tf: tf.math.betainc(1.0, 2.0, tf.constant([0.5, 0.2], d)))
    check(lambda tf: tf.math.betainc(tf.constant([1.0, 3.0], d), 2.0, 0.25))


def test_betainc_gradient_only_for_x():
    check(
        taped_body(
            lambda tf, a, b, x: tf.math.betainc(a, b, x),
            np.array([0.5, 1.0, 3.0]),
            np.array([2.0, 1.0, 0.7]),
            np.array([0.2, 0.0, 0.9]),
        )
    )


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.math.igamma(tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16)),
        lambda tf: tf.math.igammac(tf.constant([1.0], tf.bfloat16), tf.constant([1.0], tf.bfloat16)),
        lambda tf: tf.math.igamma(tf.constant([1, 2]), tf.constant([1, 2])),
        lambda tf: tf.math.igamma(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0])),
        lambda tf: tf.math.zeta(tf.constant([1.5], tf.float16), tf.constant([1.0], tf.float16)),
        lambda tf: tf.math.zeta(tf.constant([1.5]), tf.constant([1.0], tf.float64)),
        lambda tf: tf.math.polygamma(tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16)),
        lambda tf: tf.math.betainc(
            tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16), tf.constant([0.5], tf.float16)
        ),
        lambda tf: tf.math.betainc([1.0, 2.0], [1.0, 2.0, 3.0], 0.5),
        lambda tf: tf.math.betainc([[1.0], [2.0]], [1.0, 2.0], 0.5),
    ],
)
def test_incomplete_function_errors(body):
    check_raises(body)


# -- timestamp, as_string, version -------------------------------------------------------------------------
def test_timestamp_is_a_float64_scalar_of_now():
    def body(tf):
        stamp = tf.timestamp()
        return stamp.dtype, stamp.shape, bool(abs(float(stamp) - time.time()) < 60)

    check(body)


def test_timestamp_in_function_reads_the_clock_on_each_call():
    def body(tf):
        @tf.function
        def stamp(x):
            return tf.timestamp() + x

        first = stamp(tf.constant(0.0, tf.float64))
        time.sleep(0.05)
        second = stamp(tf.constant(0.0, tf.float64))
        return first.dtype, bool(float(second) - float(first) >= 0.04), bool(abs(float(first) - time.time()) < 60)

    check(body)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"precision": 3},
        {"scientific": True},
        {"shortest": True},
        {"width": 12},
        {"width": 12, "fill": "0"},
        {"precision": 2, "scientific": True, "width": 14},
    ],
)
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_as_string_floats(kwargs, dtype):
    values = np.array([1.5, -0.000123, 12345.678, 0.0, np.inf, np.nan])
    check(lambda tf: tf.as_string(tf.constant(values, getattr(tf, dtype)), **kwargs))


def test_as_string_other_dtypes():
    check(lambda tf: tf.as_string(tf.constant([[1, -20], [300, 4]]), width=5))
    check(lambda tf: tf.as_string(tf.constant([True, False])))
    check(lambda tf: tf.as_string(tf.constant([1 + 2j], tf.complex64), precision=1))
    check(lambda tf: tf.strings.as_string(tf.constant([7], tf.int64), width=4, fill="0"))
    assert tapeshim.as_string is tapeshim.strings.as_string


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.as_string(tf.constant([1]), precision=2),
        lambda tf: tf.as_string(tf.constant([1.0]), scientific=True, shortest=True),
        lambda tf: tf.as_string(tf.constant([1.0]), fill="x"),
    ],
)
def test_as_string_errors(body):
    check_raises(body)


def test_version_module():
    def body(tf):
        v = tf.version
        return (
            type(v.VERSION).__name__,
            type(v.GIT_VERSION).__name__,
            type(v.COMPILER_VERSION).__name__,
            v.GRAPH_DEF_VERSION,
            v.GRAPH_DEF_VERSION_MIN_CONSUMER,
            v.GRAPH_DEF_VERSION_MIN_PRODUCER,
            v.VERSION.split(".")[:2],
        )

    check(body)
    assert tapeshim.__version__ == "0.1.0"


# -- check numerics ------------------------------------------------------------------------------------------
def _with_check_numerics(op):
    def body(tf):
        tf.debugging.enable_check_numerics()
        try:
            return op(tf)
        finally:
            tf.debugging.disable_check_numerics()

    return body


def test_check_numerics_switch_leaves_finite_ops_alone():
    check(
        _with_check_numerics(
            lambda tf: (
                tf.math.log(tf.constant([1.0, 2.0])),
                tf.constant([np.nan]),
                tf.constant([1, 2]) // tf.constant([1, 1]),
            )
        )
    )
    check(lambda tf: tf.math.log(tf.constant([0.0])))  # disabled again


def _under_a_tape(tf):
    x = tf.Variable([1.0, 0.0])
    with tf.GradientTape():
        return tf.math.log(x * 2.0)


@pytest.mark.parametrize(
    "op",
    [
        lambda tf: tf.math.log(tf.constant([0.0, 1.0])),
        lambda tf: tf.constant([1.0]) / 0.0,
        lambda tf: tf.sqrt(tf.constant(-1.0, tf.float64)),
        _under_a_tape,
    ],
)
def test_check_numerics_raises_on_nan_and_inf(op):
    check_raises(_with_check_numerics(op), messages=False)


def test_check_numerics_message_names_the_op():
    def body(tf):
        try:
            _with_check_numerics(lambda tf: tf.math.log(tf.constant([0.0, 1.0])))(tf)
        except tf.errors.InvalidArgumentError as exc:
            return "Detected Infinity or NaN in output 0" in str(exc), '"Log"' in str(exc), "-Inf" in str(exc)
        return None

    check(body)


def test_check_numerics_under_a_tape_still_differentiates_finite_steps():
    def body(tf):
        x = tf.Variable([1.0, 2.0])
        tf.debugging.enable_check_numerics()
        try:
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(tf.math.log(x) * x)
            return y, tape.gradient(y, x)
        finally:
            tf.debugging.disable_check_numerics()

    check(body)


# -- edit_distance ---------------------------------------------------------------------------------------------
def _sparse(tf, indices, values, shape, dtype=None):
    return tf.SparseTensor(indices, tf.constant(values, dtype) if dtype else tf.constant(values), shape)


@pytest.mark.parametrize("normalize", (True, False))
def test_edit_distance_strings(normalize):
    def body(tf):
        h = _sparse(tf, [[0, 0, 0], [1, 0, 0]], ["a", "b"], [2, 1, 1])
        t = _sparse(tf, [[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], ["a", "b", "c", "a"], [2, 2, 2])
        return tf.edit_distance(h, t, normalize=normalize)

    check(body)


@pytest.mark.parametrize("normalize", (True, False))
@pytest.mark.parametrize("dtype", ("int32", "int64", "float32"))
def test_edit_distance_numbers(normalize, dtype):
    def body(tf):
        h = _sparse(tf, [[0, 0], [0, 1], [0, 2], [1, 0], [2, 3]], [1, 2, 3, 4, 5], [3, 4], getattr(tf, dtype))
        t = _sparse(tf, [[0, 0], [0, 2], [1, 0], [1, 1], [1, 2]], [1, 3, 5, 4, 2], [2, 3], getattr(tf, dtype))
        return tf.edit_distance(h, t, normalize=normalize)

    check(body)


def test_edit_distance_empty_inputs():
    def body(tf):
        empty = _sparse(tf, np.zeros((0, 2), np.int64), np.zeros(0, np.int32), [2, 3])
        return tf.edit_distance(empty, empty)

    check(body)


def test_edit_distance_in_function_and_under_a_tape():
    def body(tf):
        @tf.function
        def distance(values):
            h = tf.SparseTensor([[0, 0], [0, 1]], values, [1, 2])
            return tf.edit_distance(h, tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 2]))

        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            d = tf.edit_distance(tf.SparseTensor([[0, 0], [0, 1]], x, [1, 2]), tf.SparseTensor([[0, 0]], [1.0], [1, 2]))
        return distance(tf.constant([1, 2], tf.int64)), d, tape.gradient(d, x)

    check(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.edit_distance(
            _sparse(tf, [[0, 0]], [1], [2, 3], tf.int64), _sparse(tf, [[0, 0]], [1], [2, 3], tf.int32)
        ),
        lambda tf: tf.edit_distance(
            _sparse(tf, [[0, 0]], [1], [2, 3], tf.int64), _sparse(tf, [[0, 0, 0]], [1], [2, 3, 1], tf.int64)
        ),
        lambda tf: tf.edit_distance(_sparse(tf, [[0]], [1], [3], tf.int64), _sparse(tf, [[0]], [1], [3], tf.int64)),
        lambda tf: tf.edit_distance(tf.constant([[1]]), _sparse(tf, [[0, 0]], [1], [2, 3], tf.int64)),
        lambda tf: tf.edit_distance(_sparse(tf, [[0, 0]], [1], [2, 3], tf.int64), tf.constant([[1]])),
    ],
)
def test_edit_distance_errors(body):
    check_raises(body)
