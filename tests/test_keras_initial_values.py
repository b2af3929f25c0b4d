"""Initial weight values without a compile per weight shape (`keras_initial_values`, `random_chunks`).

Keras's initializers on JAX compile one XLA program per weight shape; tapeshim's layers and optimizers
compute the same values from NumPy fills and from chunk kernels compiled once per distribution. The
oracle here is Keras itself (TF's initial values come from another generator): every value equals
Keras's own, bit for bit, and new shapes compile nothing.
"""

import concurrent.futures

import jax
import keras
import numpy as np
import pytest

import tapeshim as tf
from oracle import backend_compiles
from tapeshim._src import background_compile, keras_initial_values, random_chunks

SHAPES = [(), (3,), (5, 7), (3, 3, 4, 8), (70001,), (2, 700, 800)]  # (the last: the large kernel, 2 chunks)

INITIALIZERS = {
    "random_normal": lambda: keras.initializers.RandomNormal(0.5, 0.2, seed=3),
    "random_uniform": lambda: keras.initializers.RandomUniform(-0.3, 0.7, seed=4),
    "truncated_normal": lambda: keras.initializers.TruncatedNormal(0.1, 2.0, seed=5),
    "glorot_uniform": lambda: keras.initializers.GlorotUniform(seed=6),
    "glorot_normal": lambda: keras.initializers.GlorotNormal(seed=7),
    "he_normal": lambda: keras.initializers.HeNormal(seed=8),
    "he_uniform": lambda: keras.initializers.HeUniform(seed=9),
    "lecun_normal": lambda: keras.initializers.LecunNormal(seed=10),
    "lecun_uniform": lambda: keras.initializers.LecunUniform(seed=11),
    "fan_out_untruncated": lambda: keras.initializers.VarianceScaling(2.5, "fan_out", "untruncated_normal", seed=12),
    "zeros": keras.initializers.Zeros,
    "ones": keras.initializers.Ones,
    "constant": lambda: keras.initializers.Constant(2.5),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(INITIALIZERS))
def test_values_are_keras_own_bit_for_bit(name, dtype):
    initializer = INITIALIZERS[name]()
    host = keras_initial_values.host_initializer(initializer)
    assert isinstance(host, keras_initial_values.HostInitializer)
    for shape in SHAPES:
        got, want = host(shape, dtype), initializer(shape, dtype=dtype)
        assert isinstance(got, jax.Array) and got.committed is False
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype) and got.shape == tuple(want.shape)
        np.testing.assert_array_equal(got, np.asarray(want), err_msg=f"{name} {shape}")


def test_a_seed_generator_advances_as_in_keras():
    ours = keras.initializers.RandomNormal(seed=keras.random.SeedGenerator(21))
    theirs = keras.initializers.RandomNormal(seed=keras.random.SeedGenerator(21))
    host = keras_initial_values.host_initializer(ours)
    for shape in [(4, 5), (4, 5), (9,)]:  # each call draws the generator's next key, as Keras's
        np.testing.assert_array_equal(np.asarray(host(shape, "float32")), np.asarray(theirs(shape, dtype="float32")))


def test_draws_match_jax_random_for_every_float_dtype():
    key = jax.random.PRNGKey(17)
    for dtype in ["float32", "float64", "float16", "bfloat16"]:
        for shape in [(5,), (3, 70001)]:
            draws = {
                "uniform": (jax.random.uniform(key, shape, dtype, -1.5, 0.5), (-1.5, 0.5)),
                "normal": (jax.random.normal(key, shape, dtype), ()),
                "truncated_normal": (jax.random.truncated_normal(key, -2.0, 2.0, shape, dtype), (-2.0, 2.0)),
            }
            for kind, (want, bounds) in draws.items():
                got = random_chunks.draw(kind, key, shape, dtype, *bounds)
                assert got is not None and got.dtype == want.dtype
                np.testing.assert_array_equal(got, np.asarray(want), err_msg=f"{kind} {dtype} {shape}")


class _Halved(keras.initializers.RandomNormal):
    def __call__(self, shape, dtype=None):
        return super().__call__(shape, dtype) * 0.5


def test_other_initializers_keep_keras_own_call():
    for initializer in [_Halved(seed=1), keras.initializers.Orthogonal(seed=2), keras.initializers.Identity()]:
        assert keras_initial_values.host_initializer(initializer) is initializer
    host = keras_initial_values.host_initializer(keras.initializers.GlorotUniform(seed=3))
    np.testing.assert_array_equal(  # a 16-bit float: Keras's own draw
        np.asarray(host((4, 6), "bfloat16")), np.asarray(keras.initializers.GlorotUniform(seed=3)((4, 6), "bfloat16"))
    )
    assert random_chunks.draw("normal", jax.random.PRNGKey(0), (3,), "int32") is None


def test_layers_are_built_with_keras_values_and_no_compile_per_shape():
    def dense_weights(namespace, widths):
        keras.utils.set_random_seed(31)
        model = namespace.Sequential([namespace.Input((6,))] + [namespace.layers.Dense(w) for w in widths])
        return [np.asarray(v) for v in model.weights]

    ours, theirs = dense_weights(tf.keras, (5, 4)), dense_weights(keras, (5, 4))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    compiles = backend_compiles()
    before = len(compiles)
    dense_weights(tf.keras, (13, 11, 9, 7))  # new kernel and bias shapes
    assert len(compiles) == before


def test_optimizer_slots_are_filled_without_compiling():
    variables = [tf.Variable(np.ones(shape, np.float32)) for shape in [(3, 17), (17,), (17, 2), (2,)]]
    tf.keras.optimizers.Adam().build([tf.Variable(np.ones(3, np.float32))])  # (Keras's first scalars)
    compiles = backend_compiles()
    before = len(compiles)
    optimizer = tf.keras.optimizers.Adam()
    optimizer.build(variables)
    assert len(compiles) == before
    assert all(np.array_equal(np.asarray(slot), np.zeros(slot.shape)) for slot in optimizer.variables[2:])


def test_tf_random_draws_of_new_shapes_compile_nothing_new():
    tf.random.set_seed(5)
    for _ in range(3):  # the chunk kernels and the scaling ops exist (an op compiles on its second call)
        for draw in (tf.random.normal, tf.random.uniform, tf.random.truncated_normal):
            draw([2, 3])
        tf.random.normal([2, 3, 4], mean=1.0, stddev=0.5)
    background_compile.wait()  # (the compiles those calls, and earlier tests, submitted)
    compiles = backend_compiles()
    before = len(compiles)
    for rows in (53, 59, 61):  # (sizes no other test's op has run at: a second call would compile it)
        sample = tf.random.normal([rows, 3, 4], mean=1.0, stddev=0.5)
        assert sample.shape == (rows, 3, 4) and sample.dtype == tf.float32
        tf.random.uniform([rows, 9])
        tf.random.truncated_normal([rows])
    assert len(compiles) == before
    tf.random.set_seed(5)
    first = tf.random.normal([70001])
    tf.random.set_seed(5)
    np.testing.assert_array_equal(first.numpy(), tf.random.normal([70001]).numpy())
    assert abs(float(tf.reduce_mean(first))) < 0.02 and abs(float(tf.math.reduce_std(first)) - 1.0) < 0.02


HOST_BOUNDS = [(0.0, 1.0), (-1.5, 0.5), (-0.0, 1.0), (-0.0, -1.0), (2.0, 1.0), (-3e30, 5e30), (-7.3, -7.2999)]
HOST_BOUNDS += [(0.1, 0.7), (-1e-20, 1e-20), (-100.0, 1e-8), (1e-20, 3e-20), (-6.1e-5, 0.25)]


@pytest.mark.parametrize("bounds", HOST_BOUNDS)
def test_the_hosts_float32_uniform_draws_are_jax_random_bit_for_bit(bounds):
    # (XLA fuses the uniform's `floats * (high - low) + low` into one rounding: the host's FMA must too)
    low, high = (np.float32(v) for v in bounds)
    assert random_chunks._host_bounds(low, high)
    for seed, size in [(1, 1), (2, 5), (3, 4097), (4, 70001)]:
        key = jax.random.PRNGKey(seed)
        want = np.asarray(jax.random.uniform(key, (size,), np.float32, low, high))
        got = random_chunks._host_uniform(*(int(w) for w in np.asarray(key)), size, low, high)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=f"{bounds} {size}")


def test_bounds_whose_draws_could_be_subnormal_or_overflow_are_left_to_the_kernel():
    for low, high in [(-1e-37, 1e-37), (0.0, 1e-30), (1e-39, 1.0), (-3e38, 3e38), (0.0, np.inf), (np.nan, 1.0)]:
        assert not random_chunks._host_bounds(np.float32(low), np.float32(high))
    key = jax.random.PRNGKey(3)
    want = jax.random.uniform(key, (9,), np.float32, -1e-37, 1e-37)  # (flushed to zero where subnormal)
    np.testing.assert_array_equal(random_chunks.draw("uniform", key, (9,), np.float32, -1e-37, 1e-37), want)


def test_uniform_draws_come_from_the_host_until_they_paid_for_their_kernel(monkeypatch):
    """A kernel no call compiled yet (a chunk size of its own): its draws compile nothing until `HOST_ELEMENTS`
    are drawn; the next draw compiles it; the values never change."""
    monkeypatch.setattr(random_chunks, "CHUNK", random_chunks.CHUNK + 3)
    monkeypatch.setattr(random_chunks, "_host_elements", {})
    monkeypatch.setattr(random_chunks, "HOST_ELEMENTS", 3 * random_chunks._HOST_CALL_ELEMENTS)
    key = jax.random.PRNGKey(21)
    shapes = [(7, 3), (4097,), (2, 3, 5)]
    wants = [np.asarray(jax.random.uniform(key, shape, np.float32, -2.0, 3.0)) for shape in shapes]
    background_compile.wait()
    compiles = backend_compiles()
    before = len(compiles)
    for shape, want in zip(shapes, wants):  # (the third pays the rent)
        np.testing.assert_array_equal(random_chunks.draw("uniform", key, shape, "float32", -2.0, 3.0), want)
    assert len(compiles) == before
    for shape, want in zip(shapes, wants):  # (from the kernel now: it compiles once)
        np.testing.assert_array_equal(random_chunks.draw("uniform", key, shape, "float32", -2.0, 3.0), want)
    assert len(compiles) > before
    compiled = len(compiles)
    np.testing.assert_array_equal(random_chunks.draw("uniform", key, (7, 3), "float32", -2.0, 3.0), wants[0])
    assert len(compiles) == compiled


def test_draws_under_disable_jit_are_left_to_jax_random():
    # (the kernels are compiled ahead, which JAX refuses with jit disabled)
    key = jax.random.PRNGKey(6)
    with jax.disable_jit():
        assert random_chunks.draw("normal", key, (5,), "float32") is None
        sample = tf.random.normal([3, 4], seed=1)
        weights = keras_initial_values.host_initializer(keras.initializers.HeNormal(seed=2))((4, 5))
        keras_own = keras.initializers.HeNormal(seed=2)((4, 5))  # (Keras's own draw, also with jit disabled)
    assert sample.shape == (3, 4) and sample.dtype == tf.float32 and np.isfinite(sample.numpy()).all()
    np.testing.assert_array_equal(weights, keras_own)


def test_threads_drawing_at_once_compile_a_kernel_once(monkeypatch):
    monkeypatch.setattr(random_chunks, "CHUNK", random_chunks.CHUNK + 5)
    key = jax.random.PRNGKey(8)
    want = np.asarray(jax.random.normal(key, (300,), np.float32))
    background_compile.wait()
    compiles = backend_compiles()
    before = len(compiles)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        draws = list(pool.map(lambda _: random_chunks.draw("normal", key, (300,), "float32"), range(4)))
    for drawn in draws:
        np.testing.assert_array_equal(drawn, want)
    assert len(compiles) == before + 1


def test_draws_larger_than_the_chunk_limit_are_left_to_the_caller(monkeypatch):
    monkeypatch.setattr(random_chunks, "MAX_ELEMENTS", 100)
    key = jax.random.PRNGKey(2)
    assert random_chunks.draw("normal", key, (10, 10), "float32") is not None
    assert random_chunks.draw("normal", key, (10, 11), "float32") is None  # (the op's own kernel draws it)
    tf.random.set_seed(3)
    large = tf.random.normal([10, 11])
    monkeypatch.setattr(random_chunks, "MAX_ELEMENTS", 1000)
    tf.random.set_seed(3)
    np.testing.assert_array_equal(large.numpy(), tf.random.normal([10, 11]).numpy())  # the same values either way
    host = keras_initial_values.host_initializer(keras.initializers.HeNormal(seed=4))
    monkeypatch.setattr(random_chunks, "MAX_ELEMENTS", 100)
    np.testing.assert_array_equal(np.asarray(host((10, 11))), np.asarray(keras.initializers.HeNormal(seed=4)((10, 11))))


def test_einsum_dense_kernels_count_fans_along_its_axes():
    # EinsumDense gives its kernel initializer the input and output axes: Keras's fans follow them
    def kernel(namespace, initializer):
        layer = namespace.layers.EinsumDense(
            "abc,cde->abde", output_shape=(None, 4, 8), bias_axes="de", kernel_initializer=initializer
        )
        layer.build((2, 3, 16))
        return np.asarray(layer.kernel)

    for make in (lambda: keras.initializers.GlorotUniform(seed=7), lambda: keras.initializers.HeNormal(seed=7)):
        np.testing.assert_array_equal(kernel(tf.keras, make()), kernel(keras, make()))


def test_a_seed_generator_advances_once_where_the_chunks_cannot_draw(monkeypatch):
    monkeypatch.setattr(random_chunks, "MAX_ELEMENTS", 10)  # jax.random draws it, from the same key
    ours = keras.initializers.RandomNormal(seed=keras.random.SeedGenerator(8))
    theirs = keras.initializers.RandomNormal(seed=keras.random.SeedGenerator(8))
    host = keras_initial_values.host_initializer(ours)
    for shape in [(4, 5), (2,), (6, 7)]:
        np.testing.assert_array_equal(np.asarray(host(shape, "float32")), np.asarray(theirs(shape, dtype="float32")))


class _StatelessNoise(tf.keras.layers.Layer):
    def call(self, x):
        return x + tf.random.stateless_truncated_normal(tf.shape(x), seed=[4, 5])


def test_constant_seed_draws_inside_jax_traces_tapeshim_does_not_own():
    # Keras's shape inference of a custom layer, a user's jax.jit: the draw is a constant, computed now
    inputs = tf.keras.Input((3,))
    assert tf.keras.Model(inputs, _StatelessNoise()(inputs)).output_shape == (None, 3)
    eager = tf.random.stateless_normal((3,), seed=(1, 2))
    jitted = jax.jit(lambda x: x + jax.numpy.asarray(tf.random.stateless_normal((3,), seed=(1, 2))))
    np.testing.assert_array_equal(np.asarray(jitted(np.zeros(3, np.float32))), eager.numpy())
    layer = _StatelessNoise()
    first, second = layer(tf.zeros((2, 3))), layer(tf.zeros((2, 3)))
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def test_a_positional_name_gets_keras_error():
    class Legacy(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.add_weight("w", (3, 4))

    with pytest.raises(ValueError, match="`name` must be passed as a keyword argument"):
        Legacy()(tf.zeros((1, 4)))
