"""The tf.random stateless family, seeds, Generator methods and TF's initializer classes against TF.

TF's stateless ops draw from Philox; tapeshim draws from JAX's threefry, so values differ.
What TF guarantees is compared: shapes, dtypes, determinism for equal seeds (and change
for other seeds), the distribution's moments, gradients, and error classes.
"""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, interpreted_and_compiled
from tapeshim._src.ops import random_ops

N = 20000


def _summary(t):
    """Shape, dtype and nothing of the values (they are TF's Philox numbers in TF)."""
    return t.shape, t.dtype


STATELESS = {  # name: (draw(tf, seed), what TF's distribution guarantees about the values)
    "normal": (
        lambda tf, s: tf.random.stateless_normal([N], s, mean=1.0, stddev=2.0, dtype=tf.float64),
        lambda z: abs(z.mean() - 1.0) < 0.05 and abs(z.std() - 2.0) < 0.05,
    ),
    "uniform": (
        lambda tf, s: tf.random.stateless_uniform([N], s, minval=2.0, maxval=3.0),
        lambda u: u.min() >= 2.0 and u.max() < 3.0 and abs(u.mean() - 2.5) < 0.01,
    ),
    "uniform_int": (
        lambda tf, s: tf.random.stateless_uniform([N], s, minval=2, maxval=9, dtype=tf.int64),
        lambda u: u.min() == 2 and u.max() == 8 and abs(u.mean() - 5.0) < 0.05,
    ),
    "uniform_full_int": (
        lambda tf, s: tf.random.stateless_uniform([N], s, minval=None, maxval=None, dtype=tf.int32),
        lambda u: u.min() < -(2**30) and u.max() > 2**30,
    ),
    "uniform_full_uint": (
        lambda tf, s: tf.random.stateless_uniform([N], s, minval=None, maxval=None, dtype=tf.uint64),
        lambda u: u.max() > 2**63,
    ),
    "truncated_normal": (
        lambda tf, s: tf.random.stateless_truncated_normal([N], s, dtype=tf.float64),
        lambda t: abs(t).max() <= 2.0 and abs(t.std() - 0.88) < 0.02,
    ),
    "categorical": (
        lambda tf, s: tf.random.stateless_categorical([[0.0, np.log(3.0)], [0.0, 0.0]], N, s),
        lambda c: abs(c[0].mean() - 0.75) < 0.02 and abs(c[1].mean() - 0.5) < 0.02,
    ),
    "categorical_int32": (
        lambda tf, s: tf.random.stateless_categorical([[0.0, 1.0, 0.5]], 30, s, dtype=tf.int32),
        lambda c: c.min() >= 0 and c.max() <= 2,
    ),
    "binomial": (
        lambda tf, s: tf.random.stateless_binomial([N], s, counts=10.0, probs=0.3),
        lambda b: abs(b.mean() - 3.0) < 0.1,
    ),
    "binomial_float": (
        lambda tf, s: tf.random.stateless_binomial(
            [2, 3], s, counts=[10.0, 20.0, 5.0], probs=0.5, output_dtype=tf.float32
        ),
        lambda b: (b >= 0).all() and (b <= [10.0, 20.0, 5.0]).all(),
    ),
    "gamma": (
        lambda tf, s: tf.random.stateless_gamma([N, 2], s, alpha=[1.0, 3.0], beta=2.0),
        lambda g: abs(g[:, 0].mean() - 0.5) < 0.03 and abs(g[:, 1].mean() - 1.5) < 0.05,
    ),
    "poisson": (
        lambda tf, s: tf.random.stateless_poisson([N], s, lam=4.0),
        lambda p: abs(p.mean() - 4.0) < 0.1 and abs(p.var() - 4.0) < 0.3,
    ),
    "poisson_float": (
        lambda tf, s: tf.random.stateless_poisson([3], s, lam=[1.0, 2.0, 3.0], dtype=tf.float32),
        lambda p: (p >= 0).all(),
    ),
    "parameterized_truncated_normal": (
        lambda tf, s: tf.random.stateless_parameterized_truncated_normal(
            [N], s, means=0.0, stddevs=1.0, minvals=0.0, maxvals=1.0
        ),
        lambda t: t.min() >= 0.0 and t.max() <= 1.0 and abs(t.mean() - 0.46) < 0.02,
    ),
    "fold_in": (lambda tf, s: tf.random.fold_in(s, 3), lambda x: x.shape == (2,)),
    "fold_in_int64_data": (lambda tf, s: tf.random.fold_in(s, tf.constant(3, tf.int64)), lambda x: x.shape == (2,)),
    "split": (lambda tf, s: tf.random.split(s, 100), lambda x: len({tuple(r) for r in x}) == 100),
    "shuffle": (
        lambda tf, s: tf.random.experimental.stateless_shuffle(tf.range(6), s),
        lambda x: sorted(x) == list(range(6)),
    ),
}


TRACED = (
    "normal",
    "uniform",
    "uniform_int",
    "truncated_normal",
    "categorical_int32",
    "fold_in",
    "split",
    "shuffle",
    "poisson_float",
)


@pytest.mark.parametrize("name", sorted(STATELESS))
def test_stateless_shapes_dtypes_moments_and_determinism(name):
    def body(tf):
        op, moments = STATELESS[name]
        a, b = op(tf, [1, 2]), op(tf, tf.constant([1, 2]))
        c = op(tf, tf.constant([7, 9], tf.int64))
        # inside a function the seed is traced (one key path for every op): checked on the cheap samplers, as
        # XLA compiles the rejection samplers (binomial, gamma, poisson) for seconds each
        in_function = tf.function(lambda s: op(tf, s))(tf.constant([1, 2])) if name in TRACED else a
        # (a compiled function may fuse mean + stddev * z: equal to rounding)
        same = bool(np.array_equal(a.numpy(), b.numpy())) and bool(np.allclose(a.numpy(), in_function.numpy()))
        differs = not np.array_equal(a.numpy(), c.numpy())
        return _summary(a), _summary(c), same, differs or name == "shuffle", bool(moments(a.numpy()))

    check(body)


def test_gradients_of_stateless_sampling():
    def body(tf):
        mean, alpha = tf.constant(1.0), tf.constant([2.0, 3.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([mean, alpha])
            z = tf.random.stateless_normal([4], [1, 2], mean=mean, stddev=2.0)
            g = tf.random.stateless_gamma([2], [1, 2], alpha=alpha)
            u = tf.random.stateless_uniform([3], [1, 2], minval=mean, maxval=5.0)
        connected = tape.gradient(g, alpha) is not None
        return tape.gradient(z, mean), tape.gradient(u, mean) is None, connected

    check(body)


def test_stateful_gamma_and_poisson_shapes():
    check(lambda tf: _summary(tf.random.gamma([2, 3], alpha=1.0, beta=[1.0, 2.0], dtype=tf.float64, seed=1)))
    check(lambda tf: _summary(tf.random.poisson([4], lam=[[1.0], [2.0]], dtype=tf.int64)))


ERRORS = {
    "seed_shape": lambda tf: tf.random.stateless_normal([2], [1, 2, 3]),
    "seed_shape_tensor": lambda tf: tf.random.stateless_normal([2], tf.constant([1, 2, 3])),
    "seed_float": lambda tf: tf.random.stateless_normal([2], tf.constant([1.0, 2.0])),
    "gamma_shape": lambda tf: tf.random.stateless_gamma([3], [1, 2], alpha=[1.0, 2.0]),
    "poisson_shape": lambda tf: tf.random.stateless_poisson([3], [1, 2], lam=[1.0, 2.0]),
    "categorical_rank": lambda tf: tf.random.stateless_categorical([0.0, 1.0], 2, [1, 2]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_against_tf(name):
    check_raises(ERRORS[name])


def test_generator_methods():
    def body(tf):
        g = tf.random.Generator.from_seed(1)
        h = tf.random.Generator.from_seed(1)
        out = {}
        for name, call in [
            ("normal", lambda r: r.normal([2, 3])),
            ("uniform", lambda r: r.uniform([2], 1.0, 2.0)),
            ("truncated_normal", lambda r: r.truncated_normal([2], dtype=tf.float64)),
            ("uniform_full_int", lambda r: r.uniform_full_int([2], tf.int64)),
            ("binomial", lambda r: r.binomial([3], counts=5.0, probs=0.5)),
            ("make_seeds", lambda r: r.make_seeds(3)),
        ]:
            a, b = call(g), call(h)
            out[name] = (
                _summary(a),
                bool(np.array_equal(a.numpy(), b.numpy())),
                not np.array_equal(a.numpy(), call(g).numpy()),
            )
        children = g.split(2)
        out["split"] = (len(children), type(children[0]).__name__, _summary(children[0].normal([2])))
        out["algorithm"] = g.algorithm
        return out

    check(body)


def test_seed_rng_state_and_global_generator():
    check(lambda tf: tf.random.create_rng_state(5, "philox"))
    check(lambda tf: tf.random.create_rng_state(5, tf.random.Algorithm.THREEFRY))
    check(lambda tf: [a.name for a in tf.random.Algorithm])
    check(lambda tf: type(tf.random.get_global_generator()).__name__)

    def set_global(tf):
        before = tf.random.get_global_generator()
        tf.random.set_global_generator(tf.random.Generator.from_seed(3))
        a = tf.random.get_global_generator().normal([2])
        tf.random.set_global_generator(tf.random.Generator.from_seed(3))
        b = tf.random.get_global_generator().normal([2])
        tf.random.set_global_generator(before)
        return bool(np.array_equal(a.numpy(), b.numpy()))

    check(set_global)


SEEDS = {  # TF reads seeds as int64s: negative ones and ones past uint32 are seeds too
    "op_negative": lambda tf, s: tf.random.normal([3], seed=-s),
    "op_past_uint32": lambda tf, s: tf.random.uniform([3], seed=2**40 + s),
    "op_negative_past_uint32": lambda tf, s: tf.random.uniform([3], seed=-(2**40) - s),
    "global_negative": lambda tf, s: (tf.random.set_seed(-s), tf.random.normal([3]))[1],
    "stateless_negative": lambda tf, s: tf.random.stateless_normal([3], [-1, -s]),
    "stateless_past_uint32": lambda tf, s: tf.random.stateless_uniform([3], [2**40, -(2**40) - s]),
    "generator_negative": lambda tf, s: tf.random.Generator.from_seed(-s).normal([3]),
}


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seeds_of_the_whole_int64_range(name):
    def body(tf):
        draw = SEEDS[name]
        tf.random.set_seed(11)
        a = draw(tf, 5)
        tf.random.set_seed(11)
        b, c = draw(tf, 5), draw(tf, 6)
        tf.random.set_seed(None)
        return _summary(a), bool(np.array_equal(a.numpy(), b.numpy())), not np.array_equal(a.numpy(), c.numpy())

    check(body)


PAST_INT64 = {  # TF converts a stateless seed to an int64 tensor: past int64, its ValueError
    "stateless_seed": lambda tf: tf.random.stateless_uniform([2], [2**63, 0]),
    "stateless_message": lambda tf: tf.random.stateless_uniform([2], [0, 2**64 + 5]),
    "fold_in_seed": lambda tf: tf.random.fold_in([2**63, 2], 3),
}


@pytest.mark.parametrize("name", sorted(PAST_INT64))
def test_stateless_seeds_past_int64_raise_as_tf(name):
    check_raises(PAST_INT64[name])


def test_fold_in_folds_an_int64_datas_high_word():
    def body(tf):
        folded = [tf.random.fold_in([1, 2], tf.constant(v, tf.int64)).numpy() for v in (0, 2**32, -1, 2**32 - 1)]
        return len({f.tobytes() for f in folded}), folded[0].dtype

    check(body)


def test_generator_seeds_past_int64():
    def body(tf):
        g = tf.random.Generator.from_seed(2**63)
        h = tf.random.Generator.from_seed(5)
        h.reset_from_seed(2**64 - 1)
        return g.state.numpy()[0], h.state.numpy()[0], _summary(g.normal([3])), _summary(h.uniform([2]))

    check(body)


def test_op_seeds_fold_into_distinct_streams():
    """An op seed of -1 is not the global sequence, and 2**32 + s is not s (tapeshim folds an int64's words)."""

    def body(tf):
        tf.random.set_seed(3)
        draws = [tf.random.uniform([4], seed=s).numpy() for s in (-1, 0, 1, 2**32 + 1, 2**32)]
        tf.random.set_seed(3)
        draws.append(tf.random.uniform([4]).numpy())
        tf.random.set_seed(None)
        return len({d.tobytes() for d in draws}) == len(draws)

    check(body)


@pytest.mark.parametrize("pair", [[1, 2], [-7, -8], [2**40, -(2**40)], [-1, 2**32 - 1], [5, 2**32]])
def test_a_stateless_seed_draws_alike_as_ints_tensors_and_traced(pair):
    def body(tf):
        ints = tf.random.stateless_uniform([3], seed=pair).numpy()
        tensor = tf.random.stateless_uniform([3], seed=tf.constant(pair, tf.int64)).numpy()
        traced = tf.function(lambda s: tf.random.stateless_uniform([3], seed=s))(tf.constant(pair, tf.int64))
        alike = [bool(np.array_equal(ints, tensor)), bool(np.allclose(ints, traced.numpy()))]
        if min(pair) >= -(2**31) and max(pair) < 2**31:
            alike.append(bool(np.array_equal(ints, tf.random.stateless_uniform([3], seed=tf.constant(pair)))))
        return alike

    check(body)


def test_a_stateless_seed_key_runs_on_the_host():
    for pair in ([1, 2], [-7, -8], [3, 2**33 + 5]):
        interpreted, compiled = interpreted_and_compiled(random_ops._seed_key, (np.array(pair, np.int64),))
        np.testing.assert_array_equal(interpreted, compiled)


INITIALIZERS = {
    "zeros": lambda tf: tf.zeros_initializer()([2, 3]),
    "zeros_int": lambda tf: tf.zeros_initializer()([2], tf.int64),
    "ones": lambda tf: tf.ones_initializer()(shape=[2], dtype=tf.float64),
    "constant_scalar": lambda tf: tf.constant_initializer(3)([2], tf.int32),
    "constant_list": lambda tf: tf.constant_initializer([1.0, 2.0, 3.0, 4.0])([2, 2]),
    "constant_default_dtype": lambda tf: tf.constant_initializer([1, 2])([2]),
    "configs": lambda tf: [
        tf.random_normal_initializer(0.0, 1.0, seed=1).get_config(),
        tf.random_uniform_initializer().get_config(),
        tf.constant_initializer(2).get_config(),
        tf.zeros_initializer().get_config(),
    ],
    "from_config": lambda tf: tf.random_normal_initializer.from_config(
        tf.random_normal_initializer(1.0, 2.0, seed=3).get_config()
    ).get_config(),
}


@pytest.mark.parametrize("name", sorted(INITIALIZERS))
def test_initializers_against_tf(name):
    check(INITIALIZERS[name])


def test_random_initializers():
    def body(tf):
        seeded = tf.random_normal_initializer(0.0, 1.0, seed=1)
        a, b = seeded([2, 2]), seeded([2, 2])
        unseeded = tf.random_uniform_initializer(0, 5)
        u = unseeded([50], tf.int32)
        v = tf.Variable(tf.random_uniform_initializer(-1.0, 1.0, seed=2)([3]))
        return (
            _summary(a),
            bool(np.array_equal(a.numpy(), b.numpy())),
            _summary(u),
            bool(u.numpy().min() >= 0 and u.numpy().max() < 5),
            v.shape,
            v.dtype,
        )

    check(body)


INIT_ERRORS = {
    "normal_int": lambda tf: tf.random_normal_initializer()([2], tf.int32),
    "constant_size": lambda tf: tf.constant_initializer([1, 2, 3])([2]),
    "bad_kwarg": lambda tf: tf.zeros_initializer()([2], bogus=1),
}


@pytest.mark.parametrize("name", sorted(INIT_ERRORS))
def test_initializer_errors_against_tf(name):
    check_raises(INIT_ERRORS[name])


def test_initializers_in_tapeshim_keras_layers():
    tf = tapeshim
    layer = tf.keras.layers.Dense(
        2, kernel_initializer=tf.random_normal_initializer(seed=1), bias_initializer=tf.constant_initializer(0.5)
    )
    out = layer(tf.ones([1, 3]))
    assert out.shape == (1, 2)
    np.testing.assert_allclose(layer.bias.numpy(), [0.5, 0.5])


def test_generator_state_round_trip_in_tapeshim():
    # TF's state is Philox's counter and key in a variable; tapeshim's is [seed, draws, 0]: the round trip
    # (from_state, reset) is what is checked, not TF's layout.
    tf = tapeshim
    g = tf.random.Generator.from_seed(3)
    g.normal([2])
    state = g.state
    h = tf.random.Generator.from_state(state, tf.random.Algorithm.PHILOX)
    assert np.array_equal(g.normal([2]).numpy(), h.normal([2]).numpy())
    g.reset(state)
    k = tf.random.Generator.from_key_counter(g.key, [1, 0], "philox")
    assert np.array_equal(g.normal([2]).numpy(), k.normal([2]).numpy())


def test_generator_checkpoint_restore_rewinds_the_stream(tmp_path):
    # The random number generation guide's "Interacting with tf.train.Checkpoint"
    def body(tf):
        filename = str(tmp_path / f"checkpoint_{tf.__name__}")
        g = tf.random.Generator.from_seed(1)
        checkpoint = tf.train.Checkpoint(generator=g)
        g.normal([])
        checkpoint.write(filename)
        first = [g.normal([]).numpy() for _ in range(2)]
        checkpoint.restore(filename)
        again = [g.normal([]).numpy() for _ in range(2)]
        fresh = tf.random.Generator.from_seed(7)
        tf.train.Checkpoint(generator=fresh).restore(filename)
        return bool(np.array_equal(first, again)), bool(
            np.array_equal(first, [fresh.normal([]).numpy() for _ in range(2)])
        )

    check(body)


def test_generator_state_is_a_variable_that_moves_it():
    def body(tf):
        g = tf.random.Generator.from_seed(2)
        g.normal([3])
        state = g.state
        start = state.numpy()
        a = g.normal([3]).numpy()
        g.state.assign(start)
        b = g.normal([3]).numpy()
        return isinstance(g.state, tf.Variable), state.shape, state.dtype, bool(np.array_equal(a, b))

    check(body)


def test_generator_constructor():
    def body(tf):
        g = tf.random.Generator.from_seed(4)
        g.normal([2])
        copy = tf.random.Generator(copy_from=g)
        same = bool(np.array_equal(copy.normal([2]).numpy(), g.normal([2]).numpy()))
        at_state = tf.random.Generator(state=tf.random.create_rng_state(4, "philox"), alg="philox")
        return same, at_state.normal([2]).shape, at_state.algorithm

    check(body)
    check_raises(lambda tf: tf.random.Generator(state=[1, 2], alg="philox"))
    check_raises(lambda tf: tf.random.Generator())


def test_generator_algorithm_numbers():
    check(
        lambda tf: [
            tf.random.Generator.from_seed(1).algorithm,
            tf.random.Generator.from_seed(1, alg="philox").algorithm,
            tf.random.Generator.from_seed(1, alg="auto_select").algorithm,
            tf.random.Generator.from_seed(1, alg=tf.random.Algorithm.PHILOX).algorithm,
            tf.random.Generator.from_non_deterministic_state().algorithm,
        ]
    )


def test_generator_state_read_inside_a_function_keeps_the_stream_going():
    def body(tf):
        g = tf.random.Generator.from_seed(7)

        @tf.function
        def draw():
            x = g.uniform([2])
            return x, tf.identity(g.state)

        first, _ = draw()
        second, _ = draw()
        third = g.uniform([2])
        return len({tuple(v.numpy().tolist()) for v in (first, second, third)}), _.shape, _.dtype

    check(body)
