"""Op numerics against real TensorFlow: values, gradients, dtypes and errors where tapeshim used to diverge silently.

Each test runs one body with TF and with tapeshim (tests/oracle.py) and compares
structure, None pattern, dtype, shape and values. Inputs are built from numpy
float64 arrays so that every dtype sees the same values.
"""

import numpy as np
import pytest

from oracle import check, check_raises, exact, jvp_body, second_derivative_body, taped_body

HALF_AND_DOUBLE = ["float64", "float16", "bfloat16"]


def _gradient(f, *values, dtype="float32"):
    """A body: the value of f(tf, *xs) and its gradient for each x (watched constants of `dtype`)."""
    return taped_body(f, *[exact(v) for v in values], dtype=dtype)


WIDE = [-100.0, -15.0, -10.0, -1.0, -1e-3, -1e-8, -0.0, 0.0, 1e-8, 0.5, 3.0]


# -- A2: selu (and elu) gradients as TF's kernels compute them ----------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_selu_value_and_gradient_follow_tfs_kernel(dtype):
    # TF: scale * alpha * (exp(x) - 1) below 0, gradient (y + scale * alpha) where y < 0, scale elsewhere.
    check(_gradient(lambda tf, x: tf.nn.selu(x), WIDE, dtype=dtype))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_selu_gradient_in_half_precision(dtype):
    check(_gradient(lambda tf, x: tf.nn.selu(x), [-3.0, -1.0, -0.25, 0.0, 0.5, 2.0], dtype=dtype))


@pytest.mark.parametrize("op", ["selu", "elu"])
def test_selu_and_elu_forward_mode_and_second_order(op):
    f = lambda tf, x: getattr(tf.nn, op)(x)  # noqa: E731
    check(jvp_body(f, [-15.0, -1.0, 0.0, 2.0]))
    check(second_derivative_body(f, [-15.0, -1.0, -0.5, 0.0, 2.0]))


def test_elu_gradient_is_computed_from_its_outputs():
    check(_gradient(lambda tf, x: tf.nn.elu(x), WIDE))


# -- A3: constants and Python scalars take the dtype TF gives them ---------------------------------------
@pytest.mark.parametrize("dtype", HALF_AND_DOUBLE)
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_uses_tfs_formula_and_constants(dtype, approximate):
    # TF casts its float constants from float32 (cast(0.7071..., dtype)): float64 gelu is not exact.
    check(
        _gradient(
            lambda tf, x: tf.nn.gelu(x, approximate=approximate), [-3.0, -1.3, -0.5, 0.0, 0.7, 1.3, 4.0], dtype=dtype
        )
    )


@pytest.mark.parametrize("dtype", HALF_AND_DOUBLE)
def test_leaky_relu_alpha_is_a_float32_attribute(dtype):
    check(_gradient(lambda tf, x: tf.nn.leaky_relu(x, alpha=0.1), [-2.0, -0.3, 0.0, 1.3], dtype=dtype))
    check(_gradient(lambda tf, x: tf.nn.leaky_relu(x, alpha=np.float64(0.3)), [-2.0, 1.3], dtype=dtype))


@pytest.mark.parametrize("dtype", HALF_AND_DOUBLE)
def test_batch_normalization_with_python_scalars(dtype):
    def f(tf, x):
        mean, variance = tf.nn.moments(x, axes=[0])
        return (
            tf.nn.batch_normalization(x, mean, variance, 0.1, 1.3, 1e-3),
            # Python mean and variance: TF computes inv in float32 (variance + epsilon = 0.25, so rsqrt is exact)
            tf.nn.batch_normalization(x, 0.1, 0.24, None, None, 0.01),
            tf.nn.batch_normalization(x, mean, variance, offset=None, scale=1.7, variance_epsilon=0.01),
        )

    check(_gradient(f, [-2.0, -0.3, 0.0, 1.3, 2.6], dtype=dtype))


@pytest.mark.parametrize("dtype", HALF_AND_DOUBLE)
def test_swish_beta_is_converted_then_cast(dtype):
    check(_gradient(lambda tf, x: tf.nn.swish(x, beta=0.3), [-2.0, -0.3, 0.0, 1.3], dtype=dtype))


def test_swish_beta_tensor_gets_a_gradient():
    check(_gradient(lambda tf, x, beta: tf.nn.swish(x, beta=beta), [-2.0, 0.5, 1.3], 0.7))


@pytest.mark.parametrize("dtype", HALF_AND_DOUBLE)
@pytest.mark.parametrize(
    "call",
    [
        lambda tf, x: tf.math.l2_normalize(x, epsilon=0.3),
        lambda tf, x: tf.clip_by_norm(x, 0.7),
        lambda tf, x: tf.norm(x, ord=3),
        lambda tf, x: tf.pow(x * x, 1.7),
        lambda tf, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=x * 0 + 0.3, logits=x),
        lambda tf, x: tf.nn.weighted_cross_entropy_with_logits(labels=x * 0 + 0.3, logits=x, pos_weight=1.7),
        lambda tf, x: tf.clip_by_value(x, -0.3, 0.7),
        lambda tf, x: tf.nn.dropout(x, 0.0),
        lambda tf, x: tf.math.reduce_logsumexp(x * 0.1),
        lambda tf, x: tf.nn.softmax(x * 0.1),
    ],
)
def test_ops_with_python_scalar_parameters(dtype, call):
    check(_gradient(call, [-2.0, -0.3, 0.1, 1.3], dtype=dtype))


def test_l2_normalize_of_complex_and_negative_clip_norm():
    def body(tf):
        z = tf.constant(np.array([3 + 4j, 1 - 2j]), tf.complex64)
        x = tf.constant(np.array([1.0, -2.0]), tf.float32)
        return tf.math.l2_normalize(z), tf.clip_by_norm(x, -1.0), tf.clip_by_norm(x, tf.constant(-1.0))

    check(body)


# -- A4: sort ties -------------------------------------------------------------------------------------------
TIES = [1.0, 3.0, 1.0, 3.0, 2.0]


@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_sort_gradient_reaches_the_tied_element_tf_picks(direction):
    weights = [1.0, 2.0, 3.0, 4.0, 5.0]
    check(_gradient(lambda tf, x: tf.sort(x, direction=direction) * tf.constant(weights), TIES))
    check(
        _gradient(
            lambda tf, x: tf.sort(x, axis=0, direction=direction) * tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
            [[1.0, 3.0], [1.0, 3.0], [2.0, 3.0]],
        )
    )
    check(
        _gradient(
            lambda tf, x: tf.sort(x, direction=direction) * tf.constant(weights, tf.float64), TIES, dtype="float64"
        )
    )


@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_argsort_and_top_k_with_ties(direction):
    def body(tf):
        x = tf.constant(TIES)
        return (
            tf.argsort(x, direction=direction),
            tf.argsort(x, direction=direction, stable=True),
            tf.argsort(tf.constant([1, 3, 1, 3, 2]), direction=direction),
            tf.math.top_k(x, 4),
        )

    check(body)
    check(_gradient(lambda tf, x: tf.math.top_k(x, 3).values * tf.constant([1.0, 2.0, 3.0]), TIES))


# -- A5: gradient conventions at singular points --------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_gradient_for_the_exponent_is_zero_where_the_base_is_not_positive(dtype):
    check(
        _gradient(
            lambda tf, x, y: tf.pow(x, y),
            [-2.0, 0.0, 2.0, 0.0, -1.5, 0.0],
            [2.0, 2.0, 0.5, 0.0, 3.0, -1.0],
            dtype=dtype,
        )
    )


def test_pow_forward_mode_second_order_and_complex():
    check(jvp_body(lambda tf, x, y: tf.pow(x, y), [-2.0, 0.0, 2.0], [2.0, 2.0, 0.5]))
    check(second_derivative_body(lambda tf, x: tf.pow(x, 3.0), [-2.0, 0.0, 2.0]))

    def complex_body(tf):
        x = tf.constant(np.array([0j, -1 + 0j, 1 + 2j]), tf.complex128)
        y = tf.constant(np.array([2 + 0j, 2 + 0j, 0.5 + 0j]), tf.complex128)
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            z = tf.reduce_sum(tf.math.real(tf.pow(x, y)))
        return tape.gradient(z, [x, y])

    check(complex_body)


@pytest.mark.parametrize(
    "call, values",
    [
        (lambda tf, x, y: tf.math.xlogy(x, y), ([0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, -1.0])),
        (lambda tf, x, y: tf.math.xdivy(x, y), ([0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, -1.0])),
        (lambda tf, x, y: tf.math.divide_no_nan(x, y), ([0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 2.0, 1.0])),
        (lambda tf, x, y: tf.math.atan2(x, y), ([0.0, 0.0, 1.0], [0.0, -0.0, 0.0])),
        (lambda tf, x, y: x / y, ([0.0, 1.0], [0.0, 0.0])),
        (lambda tf, x: tf.math.log1p(x), ([-1.0, -2.0, 0.0],)),
        (lambda tf, x: tf.math.sqrt(x), ([0.0, -1.0, 4.0],)),
        (lambda tf, x: tf.math.rsqrt(x), ([0.0, -1.0, 4.0],)),
        (lambda tf, x: tf.math.reciprocal(x), ([0.0, -0.0],)),
        (lambda tf, x: tf.abs(x), ([0.0, -0.0, 2.0],)),
        (lambda tf, x: tf.norm(x), ([0.0, 0.0],)),
        (lambda tf, x: tf.math.reduce_prod(x), ([0.0, 0.0, 3.0],)),
    ],
)
def test_gradients_at_singular_points(call, values):
    check(_gradient(call, *values))


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_and_minimum_propagate_nan_with_tfs_gradient(op):
    check(_gradient(lambda tf, x, y: getattr(tf.math, op)(x, y), [np.nan, 1.0, 2.0, -0.0], [1.0, np.nan, 2.0, 0.0]))
    check(_gradient(lambda tf, x: tf.clip_by_value(x, 0.0, 1.0), [np.nan, 2.0, -1.0, 0.5, 0.0, 1.0]))


@pytest.mark.parametrize("op", ["reduce_max", "reduce_min"])
def test_reduce_max_and_min_gradient_is_nan_when_the_result_is_nan(op):
    check(_gradient(lambda tf, x: getattr(tf.math, op)(x), [np.nan, 1.0, 1.0]))
    check(_gradient(lambda tf, x: getattr(tf.math, op)(x, axis=1), [[np.nan, 1.0], [2.0, 2.0], [1.0, 3.0]]))
    check(jvp_body(lambda tf, x: getattr(tf.math, op)(x, axis=0, keepdims=True), [[1.0, 2.0], [1.0, 0.0]]))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_gradient_is_zero_at_a_zero_input(exclusive, reverse):
    f = lambda tf, x: tf.math.cumprod(x, exclusive=exclusive, reverse=reverse) * tf.constant([1.0, 2.0, 3.0, 4.0])  # noqa: E731
    check(_gradient(f, [2.0, 0.0, 3.0, 0.5]))
    check(_gradient(f, [2.0, 1.5, 3.0, 0.5]))
    check(jvp_body(f, [2.0, 1.5, 3.0, 0.5]))


# -- A6: real/imag/angle/conj/abs of real and complex inputs ---------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("op", ["imag", "real", "angle", "conj", "abs"])
def test_complex_part_gradients(dtype, op):
    values = [1.0, -2.0, 0.0] if "float" in dtype else [1 + 1j, -2j, 0j]
    check(_gradient(lambda tf, x: getattr(tf.math, op)(x), values, dtype=dtype))


def test_imag_and_angle_of_integers():
    check(lambda tf: tf.math.imag(tf.constant([1, -2])))
    check_raises(lambda tf: tf.math.angle(tf.constant([1, -2])))


# -- A7: gradients TF has ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("num", [0, 1, 2, 5])
def test_linspace_gradients(dtype, num):
    check(_gradient(lambda tf, a, b: tf.linspace(a, b, num), 1.0, 3.0, dtype=dtype))


def test_linspace_vectors_axes_and_integer_bounds():
    check(_gradient(lambda tf, a, b: tf.linspace(a, b, 4), [1.0, 2.0], [3.0, 5.0]))
    check(_gradient(lambda tf, a, b: tf.linspace(a, b, 4, axis=-1), [1.0, 2.0], 3.0))
    check(
        lambda tf: (
            tf.linspace(1, 3, 3),
            tf.linspace(tf.constant(1, tf.int8), 3, 4),
            tf.linspace(0.0, 1.0, tf.constant(3)),
        )
    )
    check_raises(lambda tf: tf.linspace(1.0, 3.0, -1))


def test_fill_gradient_with_respect_to_value():
    check(_gradient(lambda tf, v: tf.fill([2, 3], v) * tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 1.5))
    check(_gradient(lambda tf, v: tf.fill(tf.constant([2]), v), 1.5, dtype="float64"))


@pytest.mark.parametrize(
    "call",
    [
        lambda tf, a: tf.broadcast_to(a, [2, 3]),
        lambda tf, a: tf.zeros_like(a) + a,
        lambda tf, a: tf.ones_like(a),
        lambda tf, a: tf.one_hot([0, 2], 3, on_value=a[0], off_value=a[1]),
        lambda tf, a: tf.eye(3) * a[0],
        lambda tf, a: tf.range(a[0], 5.0),
        lambda tf, a: tf.meshgrid(a, a),
    ],
)
def test_creation_ops_gradients(call):
    check(_gradient(call, [1.5, 2.0, 3.0]))


# -- A10: integer division by zero -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
@pytest.mark.parametrize(
    "call",
    [
        lambda tf, x, y: x // y,
        lambda tf, x, y: x % y,
        lambda tf, x, y: tf.math.floordiv(x, y),
        lambda tf, x, y: tf.math.floormod(x, y),
    ],
)
def test_integer_division_by_zero_raises(dtype, call):
    def body(tf):
        x = tf.constant([5, 3], getattr(tf, dtype))
        return call(tf, x, tf.constant([0, 1], getattr(tf, dtype)))

    check_raises(body)


def test_integer_division_by_zero_inside_a_tape_and_division_that_is_fine():
    def in_tape(tf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape():
            _ = x * 2
            return tf.constant([5, 3]) // tf.constant([0, 1])

    check_raises(in_tape)
    check_raises(lambda tf: tf.constant([5, 3]) % 0)
    check(
        lambda tf: (
            tf.constant([-5, 5, -5, 7]) // tf.constant([3, -3, -3, 2]),
            tf.constant([-5, 5, -5, 7]) % tf.constant([3, -3, -3, 2]),
            tf.constant([5.0, -3.0, 0.0]) // tf.constant([0.0, 0.0, 0.0]),
            tf.constant([5.0, -3.0, 0.0]) % tf.constant([0.0, 0.0, 0.0]),
            tf.constant([5, 3]) / tf.constant([0, 1]),
        )
    )


@pytest.mark.parametrize("op", ["floordiv", "floormod"])
def test_integer_division_by_a_zero_known_only_when_the_program_runs(op):
    def lazy_divisor(tf):
        x = tf.Variable([1.0, 2.0])
        with tf.GradientTape():
            divisor = tf.cast(x * 0, tf.int32)
            return getattr(tf.math, op)(tf.constant([5, 3]), divisor).numpy()

    check_raises(lazy_divisor)

    def in_function(tf):
        @tf.function
        def divide(a, b):
            return getattr(tf.math, op)(a, b)

        return divide(tf.constant([5, 3]), tf.constant([2, 1])), divide(tf.constant([5, 3]), tf.constant([0, 1]))

    check_raises(in_function)


def test_divide_no_nan_of_integers_divides_as_floats():
    check(
        lambda tf: (
            tf.math.divide_no_nan(tf.constant([5, 3]), tf.constant([0, 2])),
            tf.math.divide_no_nan(tf.constant([5, 3], tf.int16), tf.constant([0, 2], tf.int16)),
            tf.math.divide_no_nan(4, tf.constant([0.0, 2.0])),
        )
    )
    check_raises(lambda tf: tf.math.divide_no_nan(tf.constant([1.0]), tf.constant([1.0], tf.float64)))


# -- A11: half-precision accumulation ------------------------------------------------------------------------------
RNG = np.random.RandomState(0)
MIXED = RNG.uniform(0, 10, size=(40, 300))
HUNDREDS = np.full(1000, 100.0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "call",
    [
        lambda tf, x, big: (tf.reduce_mean(big), tf.reduce_sum(big), tf.reduce_mean(x, axis=1), tf.reduce_sum(x, 0)),
        lambda tf, x, big: (tf.reduce_mean(big, keepdims=True), tf.reduce_sum(tf.reshape(big, [10, 100]), axis=1)),
        lambda tf, x, big: tf.cumsum(x, axis=1),
        lambda tf, x, big: (tf.cumsum(x, axis=0, exclusive=True), tf.cumsum(x, axis=1, reverse=True)),
        lambda tf, x, big: tf.nn.moments(x, axes=[1]),
        lambda tf, x, big: (tf.nn.l2_loss(x / 10), tf.linalg.global_norm([x, x / 2])),
        lambda tf, x, big: tf.add_n([x] * 30),
        lambda tf, x, big: tf.add_n([x * float(k) / 7 for k in range(11)]),
        lambda tf, x, big: (tf.math.reduce_variance(x, axis=1), tf.math.reduce_std(x, axis=1)),
        lambda tf, x, big: (tf.norm(x, axis=1), tf.norm(x, ord=1, axis=1)),
        lambda tf, x, big: (tf.nn.softmax(x), tf.nn.log_softmax(x), tf.math.reduce_logsumexp(x, axis=1)),
    ],
)
def test_half_precision_reductions_accumulate_as_tf(dtype, call):
    check(lambda tf: call(tf, tf.constant(MIXED, getattr(tf, dtype)), tf.constant(HUNDREDS, getattr(tf, dtype))))


NOISY_HUNDREDS = 100 + RNG.uniform(-1, 1, 1000)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "call",
    [
        lambda tf, x: (tf.math.reduce_variance(x), tf.math.reduce_std(x)),
        lambda tf, x: tf.nn.moments(x, axes=[0]),
        lambda tf, x: tf.nn.moments(tf.reshape(x, [10, 100]), axes=[1], keepdims=True),
        lambda tf, x: tf.math.cumprod(1 + (x - 100) / 50),
        lambda tf, x: tf.math.cumprod(tf.reshape(1 + (x - 100) / 50, [10, 100]), axis=0, exclusive=True),
    ],
)
def test_half_precision_statistics_over_many_elements(dtype, call):
    check(lambda tf: call(tf, tf.constant(NOISY_HUNDREDS, getattr(tf, dtype))))


def test_variance_gradients_and_integer_input():
    check(
        _gradient(
            lambda tf, x: (tf.math.reduce_variance(x, axis=0), tf.math.reduce_std(x)),
            [[1.0, 2.0], [3.0, 5.0], [4.0, -1.0]],
        )
    )
    check(_gradient(lambda tf, x: tf.math.reduce_std(x), [1.0, 1.0]))
    check(lambda tf: tf.math.reduce_variance(tf.constant([1 + 2j, 3 - 1j]), keepdims=True))
    check_raises(lambda tf: tf.math.reduce_variance(tf.constant([1, 2])))
    check_raises(lambda tf: tf.math.reduce_std(tf.constant([1, 2])))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_mean_and_sum_gradients(dtype):
    check(_gradient(lambda tf, x: tf.reduce_mean(x), HUNDREDS, dtype=dtype))
    check(_gradient(lambda tf, x: tf.reduce_mean(x * x), MIXED, dtype=dtype))


ADDENDS = [RNG.uniform(-1e4, 1e4, size=(64,)) for _ in range(19)]


@pytest.mark.parametrize("count", [2, 5, 9, 11, 19])
def test_add_n_adds_in_tfs_order(count):
    check(lambda tf: tf.add_n([tf.constant(a, tf.float32) for a in ADDENDS[:count]]), rtol=0)


# -- B: sparse cross-entropy labels, bincount under a tape -----------------------------------------------------------
@pytest.mark.parametrize("labels", [[0, 3], [0, -1], [[0, 5], [-1, 1]]])
def test_sparse_softmax_cross_entropy_rejects_out_of_range_labels(labels):
    def body(tf):
        label_tensor = tf.constant(labels)
        return tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=label_tensor, logits=tf.zeros(label_tensor.shape.as_list() + [3])
        )

    check_raises(body, messages=False)


def test_sparse_softmax_cross_entropy_label_errors_inside_a_tape():
    def body(tf):
        logits = tf.Variable([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
        with tf.GradientTape():
            return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 3]), logits=logits)

    check_raises(body)
    check_raises(
        lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 0]), logits=tf.zeros([2, 0]))
    )
    check(
        _gradient(
            lambda tf, x: tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.constant([0, 2], tf.int64), logits=x
            ),
            [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]],
        )
    )


def test_bincount_with_weights_under_a_tape_raises_lookup_error_when_differentiated():
    check_raises(_gradient(lambda tf, w: tf.math.bincount(tf.constant([0, 1, 1]), weights=w), [1.0, 2.0, 3.0]))

    def values(tf):
        w = tf.constant([1.5, 2.0, 3.0, 4.0])
        arr = tf.constant([[0, 1], [3, 1]])
        return (
            tf.math.bincount(tf.constant([0, 1, 1, 4]), weights=w),
            tf.math.bincount(tf.constant([0, 1, 1, 4]), weights=w, maxlength=2),
            tf.math.bincount(tf.constant([0, 1, 1, 4]), weights=tf.cast(w, tf.float64), minlength=7),
            tf.math.bincount(arr, weights=tf.reshape(w, [2, 2]), axis=-1),
        )

    check(values)

    def untouched(tf):
        w = tf.constant([1.0, 2.0, 3.0])
        x = tf.constant(2.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * tf.reduce_sum(tf.math.bincount(tf.constant([0, 1, 1]), weights=w))
        return tape.gradient(y, x)

    check(untouched)


# -- class hunt: complex inputs and dtype support of the activations and special functions ---------------------
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sign_of_complex_is_differentiable(dtype):
    check(_gradient(lambda tf, x: tf.math.sign(x), [1 + 1j, -2j, 0j, 3 + 0j], dtype=dtype))


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
@pytest.mark.parametrize("op", ["silu", "swish"])
def test_silu_and_swish_use_tfs_custom_gradient(dtype, op):
    values = [-2.0, 0.5, 1.3] if dtype == "float32" else [-2 + 1j, 0.5j, 1.3 - 0.2j]
    check(_gradient(lambda tf, x: getattr(tf.nn, op)(x), values, dtype=dtype))
    check(
        _gradient(
            lambda tf, x, beta: getattr(tf.nn, op)(x, beta=beta),
            values,
            0.7 + 0.1j if "complex" in dtype else 0.7,
            dtype=dtype,
        )
    )
    check(second_derivative_body(lambda tf, x: getattr(tf.nn, op)(x, beta=0.5), [-2.0, 0.5, 1.3]))
    check(jvp_body(lambda tf, x: getattr(tf.nn, op)(x, beta=0.5), [-2.0, 0.5, 1.3]))
    check_raises(lambda tf: getattr(tf.nn, op)(tf.constant([1, 2])))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("op", ["lgamma", "digamma"])
def test_lgamma_and_digamma_dtype_support(dtype, op):
    unsupported = dtype == "bfloat16" or (op, dtype) == ("digamma", "float16")  # TF's error is the point
    check(_gradient(lambda tf, x: getattr(tf.math, op)(x), [0.5, 2.0, 3.5], dtype=dtype), raises=unsupported)


# -- class hunt: complex conventions and dtype errors across math and nn ops ------------------------------------
COMPLEX_X = np.array([[0.3 + 1.2j, -1.1 + 0.4j, 0.7 - 0.2j], [1.5 - 0.9j, -0.4 - 1.3j, 0.2 + 0.6j]])
COMPLEX_Y = np.array([[1.1 - 0.3j, 0.5 + 0.8j, -0.9 + 0.1j], [-0.6 + 0.7j, 1.2 + 0.2j, 0.4 - 1.0j]])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "call",
    [
        lambda tf, x, y: tf.math.xlogy(x, y),
        lambda tf, x, y: tf.math.xdivy(x, y),
        lambda tf, x, y: tf.math.divide_no_nan(x, y),
        lambda tf, x, y: tf.math.squared_difference(x, y),
        lambda tf, x, y: tf.math.cumprod(x, axis=1) + y,
        lambda tf, x, y: tf.math.cumprod(x, axis=0, exclusive=True, reverse=True) * y,
        lambda tf, x, y: tf.nn.moments(x + y, axes=[1]),
        lambda tf, x, y: (
            tf.norm(x),
            tf.norm(x, axis=1, keepdims=True),
            tf.norm(y, ord=1),
            tf.norm(y, ord="fro", axis=[0, 1]),
        ),
    ],
)
def test_complex_gradients_follow_tfs_gradient_functions(dtype, call):
    check(_gradient(call, COMPLEX_X, COMPLEX_Y, dtype=dtype))


@pytest.mark.parametrize(
    "call",
    [
        lambda tf: tf.sort(tf.constant([1 + 1j, 2j])),
        lambda tf: tf.round(tf.constant([1.5 + 1j])),
        lambda tf: tf.math.floordiv(tf.constant([1 + 1j]), tf.constant([2j])),
        lambda tf: tf.math.unsorted_segment_mean(tf.constant([1 + 1j, 2j]), [0, 0], 1),
        lambda tf: tf.nn.dropout(tf.constant([1 + 1j, 2j]), 0.5),
        lambda tf: tf.nn.dropout(tf.constant([1, 2]), 0.0),
    ],
)
def test_dtypes_tf_has_no_kernel_for(call):
    check_raises(call)


def test_unsorted_segment_mean_of_integers_and_floats():
    check(
        lambda tf: (
            tf.math.unsorted_segment_mean(tf.constant([[1, 2], [4, 7], [5, 5]]), [0, 2, 0], 3),
            tf.math.unsorted_segment_mean(tf.constant([1, 2, 4], tf.int16), [1, 1, 0], 2),
        )
    )
    check(_gradient(lambda tf, x: tf.math.unsorted_segment_mean(x, [0, 2, 0], 3), [[1.0, 2.0], [4.0, 7.0], [5.0, 5.0]]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape, data_format", [((1000, 3), None), ((7, 5, 4), "NWC"), ((6, 4, 5), "NCW")])
def test_bias_add_gradient_accumulates_as_tf(dtype, shape, data_format):
    upstream = np.random.RandomState(2).uniform(-1, 1, shape)

    def body(tf):
        channels = shape[1] if data_format == "NCW" else shape[-1]
        x = tf.constant(np.zeros(shape), getattr(tf, dtype))
        b = tf.constant(np.linspace(-1, 1, channels), getattr(tf, dtype))
        with tf.GradientTape() as tape:
            tape.watch([x, b])
            y = tf.nn.bias_add(x, b, data_format=data_format)
        return y, tape.gradient(y, [x, b], output_gradients=tf.constant(upstream, getattr(tf, dtype)))

    check(body)
