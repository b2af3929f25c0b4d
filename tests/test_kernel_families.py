"""Shape families (`tapeshim/_src/kernel_families.py`): one symbolic trace of a kernel serves its new sizes.

A program whose sizes keep changing (an RL episode of a new length) used to trace every kernel again for
each size. Checked here: such programs give TF's values with the family serving the new sizes; a call
fits a family only where the trace's decisions about sizes hold for it (sizes of 2 or more, distinct, and
off the family's constant dimensions); a kernel whose Python needs a concrete size is traced per signature,
as before.
"""

from collections import OrderedDict

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeshim as tf
from oracle import check
from tapeshim._src import interpret, interpret_plan, kernel_calls, kernel_families, replay

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")


def _episodes(tf):
    """An actor-critic-like loop: one tape per episode of a new length, stacked per-step values."""
    rng = np.random.default_rng(7)
    w = tf.Variable(rng.normal(size=(4, 3)).astype(np.float32) * 0.5)
    out = []
    for length in (5, 8, 6, 11, 9, 13):
        states = tf.constant(rng.normal(size=(length, 4)).astype(np.float32))
        rewards = tf.constant(rng.normal(size=(length,)).astype(np.float32))
        with tf.GradientTape() as tape:
            probs = tf.nn.softmax(tf.matmul(states, w))
            picked = tf.reduce_max(probs, axis=1)
            advantage = rewards - tf.reduce_mean(rewards)
            loss = -tf.reduce_sum(tf.math.log(picked) * advantage) + tf.reduce_mean(advantage * advantage)
        grad = tape.gradient(loss, w)
        w.assign_sub(0.1 * grad)
        out.append((loss, grad, picked, tf.stack([advantage, rewards])))
    return out, w


def test_episodes_of_new_lengths_give_tfs_values_and_are_served_by_families():
    before = dict(kernel_families.stats)
    check(_episodes)
    assert kernel_families.stats["fitted_calls"] > before["fitted_calls"]


def _calls(fn, shapes_list):
    """`KernelCalls` of `jax.jit(fn)` on arguments of each shapes, against `fn` itself."""
    calls = kernel_calls.KernelCalls(families=True)
    jitted = jax.jit(fn)
    rng = np.random.default_rng(3)
    for shapes in shapes_list:
        args = tuple(rng.normal(size=shape).astype(np.float32) for shape in shapes)
        got = calls.run(jitted, args, list(args), True, host=True)
        want = fn(*args)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)
    return calls


def test_a_kernel_whose_python_needs_a_concrete_size_is_traced_per_signature():
    def python_loop(x):
        return sum(x[i] * (i + 1) for i in range(x.shape[0]))  # `range` of a size: no symbolic trace

    before = dict(kernel_families.stats)
    _calls(python_loop, [[(3,)], [(5,)], [(7,)], [(4,)]])
    assert kernel_families.stats["failed"] == before["failed"] + 1
    assert kernel_families.stats["fitted_calls"] == before["fitted_calls"]


def test_a_branch_on_equal_sizes_is_never_taken_from_a_trace_that_decided_otherwise():
    def branch(x, y):
        if x.shape[0] == y.shape[0]:
            return x + y
        return jnp.sum(x) + jnp.sum(y)

    before = dict(kernel_families.stats)
    # a family with two symbols (sizes differ in both signatures); (7, 7) would take the other branch
    _calls(branch, [[(3,), (4,)], [(5,), (6,)], [(7,), (7,)], [(9,), (8,)]])
    # the family serves (5, 6), whose symbolic trace it is, and (9, 8); (7, 7) is traced with its shapes
    assert kernel_families.stats["fitted_calls"] == before["fitted_calls"] + 2


@pytest.mark.parametrize(
    "shapes, fits",
    [
        ([(9, 3)], True),
        ([(1, 3)], False),  # a size of 1: a trace's `n == 1` said no
        ([(0, 3)], False),
        ([(3, 3)], False),  # equal to a constant dimension of the family
        ([(9, 4)], False),  # a constant dimension changed
    ],
    ids=["fits", "size_one", "size_zero", "equals_a_constant", "other_constant"],
)
def test_which_calls_fit_a_family(shapes, fits):
    families = kernel_families.Families()

    def trace(symbolic):
        return jax.jit(lambda x: x * 2).trace(*symbolic)

    for first in ([(5, 3)], [(6, 3)]):  # the first signature, then the family
        structs = [jax.ShapeDtypeStruct(shape, np.float32) for shape in first]
        families.find(tuple(structs), structs, trace)
    structs = [jax.ShapeDtypeStruct(shape, np.float32) for shape in shapes]
    assert (families.find(tuple(structs), structs, trace) is not None) == fits


def test_recorded_shapes_of_new_sizes_come_from_the_family():
    def body(tf):
        results = []
        for n in (4, 6, 9, 12):
            x = tf.constant(np.linspace(-1.0, 1.0, 2 * n, dtype=np.float32).reshape(n, 2))
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.concat([x, x * 2.0], axis=0)
                z = tf.reduce_sum(tf.reshape(y, [-1]) ** 2)
            results.append((y.shape.as_list(), z, tape.gradient(z, x)))
        return results

    check(body)


def test_an_ops_shapes_and_host_calls_share_its_traces():
    # An op's output shapes (`registry.out_avals`) and its host calls (`kernel_calls`) read one trace per
    # signature, and one symbolic trace per family: a trace runs the kernel's Python once.
    from tapeshim._src import registry

    traces = []

    def counted_tanh(x):
        traces.append(tuple(x.shape))
        return jnp.tanh(x)

    op = registry.OpDef("CountedTanh", counted_tanh)
    sizes = [(3, 5), (4, 6), (7, 9), (4, 6)]
    for shape in sizes:
        x = np.linspace(-2.0, 2.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)
        (out,) = registry.apply(op, [tf.constant(x)])
        np.testing.assert_allclose(out.numpy(), np.tanh(x), rtol=1e-6)
    assert len(traces) == 2  # the first size, and the family's symbolic trace at the second


def test_a_users_jax_op_deciding_on_a_size_is_traced_per_signature():
    from tapeshim import experimental

    def five_times_ten(x):
        return x * 10.0 if x.shape[0] == 5 else x  # a symbolic trace would decide `n == 5` as False

    op = experimental.jax_op(five_times_ten)
    for n in (3, 4, 5, 5, 6, 5):
        x = np.ones(n, np.float32)
        np.testing.assert_array_equal(op(tf.constant(x)).numpy(), five_times_ten(x))
        with tf.GradientTape() as tape:
            watched = tf.constant(x)
            tape.watch(watched)
            y = op(watched)
            total = tf.reduce_sum(y)
        assert y.shape.as_list() == [n]
        np.testing.assert_array_equal(tape.gradient(total, watched).numpy(), np.full(n, 10.0 if n == 5 else 1.0))


def test_a_size_written_as_a_power_resolves():
    def body(tf):
        out = []
        for n in (3, 4, 5, 6):
            x = tf.constant(np.arange(n * n, dtype=np.float32).reshape(n, n))
            with tf.GradientTape() as tape:
                tape.watch(x)
                flat = tf.reshape(x, [-1])  # n * n elements: JAX writes the dimension `_k0^2`
                loss = tf.reduce_sum(flat * flat)
            out.append((flat.shape.as_list(), loss, tape.gradient(loss, x)))
        return out

    check(body)


def test_per_op_host_values_stay_flushed_through_convolutions():
    def body(tf):
        x = tf.constant(np.full((1, 4, 4, 1), 1e-20, np.float32))
        k = tf.constant(np.full((1, 1, 1, 1), 1e-20, np.float32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.conv2d(x, k, 1, "VALID") * 1e38  # 1e-40 each: subnormal, zero in XLA and TF
            for step in range(80):  # a larger structure: per op on its first run
                y = tf.maximum(y, -1.0 - step)
            loss = tf.reduce_sum(y)
        return loss, tape.gradient(loss, x)

    check(body)


def test_per_op_host_calls_raise_no_numpy_warnings(recwarn):
    def body(tf):
        x = tf.constant(np.array([0.0, 1.0, 2.0], np.float32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(40):  # a larger structure: per op on its first run
                y = tf.math.log(tf.abs(y) + 0.0) + y
            loss = tf.reduce_sum(y)
        return loss, tape.gradient(loss, x)

    check(body)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def _epochs(tf, count, sizes=range(10, 16)):
    """Eager tape steps over batches of varying length, `count` epochs over the same sizes (TF's text tutorials'
    loop): the losses and the trained weights."""
    rng = np.random.default_rng(12)
    w = tf.Variable((rng.normal(size=(4, 8)) * 0.3).astype(np.float32))
    batches = [rng.normal(size=(n, 4)).astype(np.float32) for n in sizes]
    losses = []
    for _ in range(count):
        for batch in batches:
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(tf.constant(batch), w))
                loss = tf.reduce_mean(tf.square(h - tf.reduce_mean(h, axis=0)))
            w.assign_sub(0.01 * tape.gradient(loss, w))
            losses.append(loss)
    return losses, w


def test_epochs_over_varying_sizes_give_tfs_values():
    check(lambda tf: _epochs(tf, 3), rtol=2e-5)


def test_sizes_that_come_back_each_epoch_run_per_op_until_compiling_pays(monkeypatch):
    monkeypatch.setattr(replay, "_structures", OrderedDict())  # (the sizes this test's structure was seen at)
    programs, sizes = replay.stats, range(30, 36)  # (sizes no other test runs: their programs are new)
    _epochs(tf, 1, sizes)
    before = programs["programs_compiled"]
    _epochs(tf, 1, sizes)  # each size's second sighting: its program is not traced yet (6 sizes of one structure)
    assert programs["programs_compiled"] == before
    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 0.0)  # compiling has paid for itself
    _epochs(tf, 1, sizes)
    assert programs["programs_compiled"] == before + len(sizes)
    _epochs(tf, 1, sizes)
    assert programs["programs_compiled"] == before + len(sizes)


def test_a_structure_at_few_sizes_still_compiles_on_its_second_sighting(monkeypatch):
    monkeypatch.setattr(replay, "_structures", OrderedDict())
    _epochs(tf, 1, sizes=(41, 42))
    before = replay.stats["programs_compiled"]
    _epochs(tf, 1, sizes=(41, 42))
    assert replay.stats["programs_compiled"] == before + 2


def _nested_and_sized(x, y):
    """A kernel whose jaxpr holds size-dependent parameters at the top and inside nested jaxprs: a reshape, an
    iota, a mean (a nested call), a scan over the rows, a loop whose trip count is a size, and a cond."""
    n = x.shape[0]
    flat = jnp.reshape(x, (-1,))
    positions = jnp.arange(n, dtype=jnp.float32)
    rows = jax.lax.scan(lambda carry, row: (carry + row, carry * row), jnp.zeros(x.shape[1:]), x)[1]

    def add_row(i, acc):
        return acc + jax.lax.dynamic_index_in_dim(x, i, keepdims=False) * 0.5

    looped = jax.lax.fori_loop(0, n, add_row, jnp.zeros(x.shape[1:]))
    chosen = jax.lax.cond(jnp.sum(y) > 0, lambda v: v * 2.0, lambda v: v - 1.0, jnp.mean(x, axis=0))
    return jnp.sum(flat) + jnp.sum(positions) + jnp.sum(rows) + jnp.sum(looped) + jnp.sum(chosen) + jnp.sum(y)


def test_a_family_lowers_its_plan_once_and_binds_each_new_size(monkeypatch):
    built = []
    plan_init = interpret_plan.HostPlan.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        plan_init(self, *args, **kwargs)

    monkeypatch.setattr(interpret_plan.HostPlan, "__init__", counting)
    before = dict(kernel_families.stats)
    shapes = [[(n, 3), (n,)] for n in (4, 5, 6, 7, 9, 12, 17)]
    _calls(_nested_and_sized, shapes)  # values against the kernel itself, at every size
    fitted = kernel_families.stats["fitted_calls"] - before["fitted_calls"]
    assert fitted == len(shapes) - 1  # every size after the first comes from the family
    # lowered: the first size's own plan and the family's template (nested plans included), nothing per
    # later size: fresh calls over four sizes lower as many plans as those over seven
    lowered = len(built)
    _calls(_nested_and_sized, [[(n, 3), (n,)] for n in (4, 5, 21, 30)])
    assert len(built) == 2 * lowered


def test_a_bound_template_serves_each_size_and_refuses_a_symbol_without_a_size():
    def slices(x):
        return jax.lax.dynamic_slice_in_dim(x, 1, x.shape[0] - 1) * 2.0

    template = interpret.BoundTemplate(
        jax.jit(slices).trace(jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), np.float32))
    )
    for n in (3, 6, 10):
        program = template.bind({"n": n})
        assert program is not None
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(np.asarray(program((x,), [x])), slices(x))
    assert template.bind({"m": 4}) is None  # a symbol without a size: the caller traces the call's shapes


def test_a_bound_products_multiply_adds_are_counted_at_its_sizes(monkeypatch):
    """A product of symbolic shapes counts its multiply-adds when bound (once per size, not per call): a size
    past the host's budget is abandoned, as a concrete trace's product is."""
    from tapeshim._src import interpret_cost

    n = jax.export.symbolic_shape("n")[0]
    template = interpret.BoundTemplate(
        jax.jit(lambda a, b: jnp.tanh(a @ b)).trace(
            jax.ShapeDtypeStruct((n, 6), np.float32), jax.ShapeDtypeStruct((6, 5), np.float32)
        )
    )
    monkeypatch.setattr(interpret_cost, "HOST_MULTIPLY_ADDS", 8 * 6 * 5)
    b = np.ones((6, 5), np.float32)
    for rows, served in ((4, True), (8, True), (9, False)):
        a = np.full((rows, 6), 0.1, np.float32)
        program = template.bind({"n": rows})
        assert program is not None
        got = program((a, b), [a, b])
        assert (got is not None) == served
        if served:
            np.testing.assert_allclose(np.asarray(got), np.tanh(a @ b), rtol=1e-6)
