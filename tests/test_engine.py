"""The execution engine of real programs (issue 9): compile counts, values as arguments, released graphs.

Counts, never durations: a loop over fresh indices compiles one kernel, a
custom gradient called in a loop compiles one program, and so on. Values are
compared against real TF where the behaviour is TF's.
"""

import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeshim as tf
from oracle import backend_compiles, check, check_raises, program_lowerings, real_tf
from tapeshim import experimental
from tapeshim._src import interpret, interpret_cost, replay
from tapeshim._src.tensor import Tensor


def _stats():
    return experimental.compile_stats()


# -- values are arguments, not cache keys ------------------------------------------------------------


INDEX_KEYS = [
    1,
    -1,
    (2, 3),
    (slice(1, 3),),
    (slice(1, None),),
    (slice(None, 3),),
    (slice(2, 1),),
    (Ellipsis, 2),
    (1, slice(2, 4)),
    (slice(-3, -1), slice(None, None, 2)),
    (None, 2),
    (slice(1, 3), None, -2),
    (slice(-2, None), Ellipsis, slice(0, 1)),
]


@pytest.mark.parametrize("key", INDEX_KEYS, ids=repr)
def test_python_indices_and_slices_match_tf(key):
    def body(tf):
        x = tf.constant(np.arange(24, dtype=np.float32).reshape(4, 6))
        v = tf.Variable(np.arange(24, dtype=np.float32).reshape(4, 6))
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v[key] * 2.0)
        return x[key], y, tape.gradient(y, v)

    check(body)


def test_out_of_range_python_index_raises_tf_error():
    def body(tf):
        x = tf.constant(np.zeros((3, 2), np.float32))
        return x[3]

    check_raises(body)


def test_an_indexing_loop_builds_one_kernel_per_kind():
    x = tf.constant(np.arange(400, dtype=np.float32).reshape(100, 4))
    x[0], x[0:1], x[0, 1:3]  # the kernels, once
    experimental.reset_compile_stats()
    rows = [x[i] for i in range(1, 100)] + [x[i : i + 1] for i in range(100)] + [x[i, 1:3] for i in range(100)]
    rows += list(x) + tf.unstack(x)
    assert _stats()["eager_kernels"] == 0
    assert rows[5].numpy().tolist() == [24.0, 25.0, 26.0, 27.0]
    assert rows[99 + 7].numpy().tolist() == [[28.0, 29.0, 30.0, 31.0]]


def test_indexing_with_sampled_actions_inside_a_tape_compiles_once():
    w = tf.Variable(np.full((4, 3), 0.5, np.float32))
    x = tf.constant(np.ones((1, 4), np.float32))
    rng = np.random.default_rng(0)

    def episode():
        with tf.GradientTape() as tape:
            probs = tf.nn.softmax(x @ w)
            action = int(rng.integers(0, 3))
            loss = -tf.math.log(probs[0, action])
        return tape.gradient(loss, w)

    for _ in range(3):
        episode()
    experimental.reset_compile_stats()
    grads = [episode() for _ in range(10)]
    assert _stats()["programs_compiled"] == 0
    assert np.allclose(grads[0].numpy().sum(), 0.0, atol=1e-6)


def test_a_custom_gradient_called_in_a_loop_compiles_once():
    @tf.custom_gradient
    def clip(x):
        def grad_fn(upstream):
            return tf.clip_by_value(upstream, -0.5, 0.5) * 3.0

        return tf.identity(x), grad_fn

    w = tf.Variable(np.ones((4,), np.float32))

    def step(i):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(clip(w * float(i + 1)))
        return tape.gradient(loss, w)

    for i in range(3):
        step(i)
    experimental.reset_compile_stats()
    grads = [step(i) for i in range(10)]
    assert _stats()["programs_compiled"] == 0
    assert grads[-1].numpy().tolist() == [15.0] * 4


def _scaled(scale):
    @tf.custom_gradient
    def f(x):
        def grad_fn(upstream):
            return upstream * scale

        return x * scale, grad_fn

    return f


GLOBAL_SCALE = 1.0


@tf.custom_gradient
def _global_scaled(x):
    def grad_fn(upstream):
        return upstream * GLOBAL_SCALE

    return x * GLOBAL_SCALE, grad_fn


def test_custom_gradient_keys_follow_captured_values():
    global GLOBAL_SCALE
    w = tf.Variable([1.0, 2.0])
    seen = []
    for scale in (1.0, 2.0, tf.constant(3.0), tf.constant(4.0)):
        with tf.GradientTape() as tape:
            y = _scaled(scale)(w)
        seen.append((y.numpy().tolist(), tape.gradient(y, w).numpy().tolist()))
    assert seen == [
        ([1.0, 2.0], [1.0, 1.0]),
        ([2.0, 4.0], [2.0, 2.0]),
        ([3.0, 6.0], [3.0, 3.0]),
        ([4.0, 8.0], [4.0, 4.0]),
    ]
    try:
        for GLOBAL_SCALE in (1.0, 5.0):  # noqa: B007 - the function reads the global
            with tf.GradientTape() as tape:
                y = _global_scaled(w)
            assert tape.gradient(y, w).numpy().tolist() == [GLOBAL_SCALE] * 2
    finally:
        GLOBAL_SCALE = 1.0


# -- forcing releases the graph ----------------------------------------------------------------------


def test_a_kept_loss_no_longer_holds_its_graph():
    v = tf.Variable([1.0, 2.0])
    losses, refs = [], []
    for _ in range(3):
        with tf.GradientTape() as tape:
            hidden = v * 3.0
            loss = tf.reduce_sum(hidden * hidden)
        refs.append(weakref.ref(hidden))
        del hidden
        tape.gradient(loss, v)
        losses.append(loss)
    del tape
    gc.collect()
    assert all(ref() is None for ref in refs)
    assert all(loss._node is None and float(loss) == 45.0 for loss in losses)


def test_a_scalar_still_held_two_releases_after_its_own_becomes_a_host_scalar():
    """A released scalar the program still holds two releases later (a kept loss) is copied to the host, its own
    bytes; `loss = step()` lets go of the one before by then, which is never copied (14 us of a small step)."""
    if not interpret.enabled():  # (on the CPU only: elsewhere the host copy would be a device transfer)
        return
    computed = jax.jit(lambda x: x * 2.0)
    held = Tensor(computed(jnp.float32(1.5)), (), tf.float32)
    dropped = Tensor(computed(jnp.float32(2.5)), (), tf.float32)
    held._value.block_until_ready()
    dropped_value = weakref.ref(dropped)
    replay.release([held, dropped])  # their own release
    del dropped
    assert dropped_value() is None
    replay.release([])  # the next
    assert isinstance(held._value, jax.Array)
    replay.release([])  # the one after
    assert isinstance(held._value, np.ndarray) and float(held) == 3.0


def test_kept_losses_become_host_scalars_and_still_behave_as_tensors():
    """Kept losses are NumPy scalars on the CPU (their own bytes, about 100, where a JAX array costs about 850 of
    Python heap: here the host tier computed them; a compiled program's are converted two releases later, the
    test above), and every later use of them gives TF's values."""

    def body(tf):
        v = tf.Variable([1.0, 2.0])
        losses = []
        for _ in range(4):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum((v * 3.0) ** 2)
            v.assign_sub(0.01 * tape.gradient(loss, v))
            losses.append(loss)
        watched = losses[0]
        with tf.GradientTape() as tape:
            tape.watch(watched)
            later = watched * watched + losses[1]
        return (
            losses,
            tf.reduce_mean(losses),
            tf.stack(losses),
            losses[0] + 1.0,
            float(losses[1]),
            tf.function(lambda a, b: a * b)(losses[0], losses[2]),
            tape.gradient(later, watched),
            losses[2] > losses[3],
            tf.cast(losses[0], tf.int32),
        )

    check(body)
    if interpret.enabled():  # (on the CPU only: elsewhere the host copy would be a device transfer)
        kept = body(tf)[0]
        assert all(isinstance(loss._value, np.ndarray) for loss in kept[:-1])


def test_a_persistent_tape_keeps_what_it_needs():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    assert float(y) == 4.0  # forced inside the tape: the tape still differentiates through it
    assert float(tape.gradient(z, x)) == 12.0
    assert float(tape.gradient(y, x)) == 4.0


def test_an_accumulator_across_steps_spans_one_step():
    w = tf.Variable(np.ones((4,), np.float32))
    total = tf.constant(0.0)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
            total = total + loss
        tape.gradient(loss, w)
    experimental.reset_compile_stats()
    for step in range(40):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
            total = total + loss
        tape.gradient(loss, w)
        pending = [t for t in total._node.inputs if t._value is None]
        assert pending == [], f"step {step}: the sum still holds an earlier step's graph"
    assert float(total) == 4.0 * 43
    assert _stats()["programs_compiled"] == 0


def test_an_accumulator_inside_one_tape_still_differentiates():
    def body(tf):
        w = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as tape:
            total = tf.constant(0.0)
            for _ in range(5):
                total = total + tf.reduce_sum(w * w)
                float(total)  # forced inside the tape
        return total, tape.gradient(total, w)

    check(body)


# -- tiers: per op the first time, one compiled program when the structure repeats ---------------------


def _mlp_step(batch=5):
    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.normal(size=(8, 16)).astype(np.float32) * 0.3)
    w2 = tf.Variable(rng.normal(size=(16, 3)).astype(np.float32) * 0.3)
    x = tf.constant(rng.normal(size=(batch, 8)).astype(np.float32))
    labels = tf.constant(rng.integers(0, 3, size=batch).astype(np.int32))

    def step():
        with tf.GradientTape() as tape:
            logits = tf.nn.relu(x @ w1) @ w2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        return [g.numpy() for g in tape.gradient(loss, [w1, w2])]

    return step


def test_a_first_step_of_new_ops_compiles_one_program():
    from tapeshim._src import replay_eager

    replay_eager._seen.clear()  # as in a fresh process: no op has run per op yet (earlier tests ran some)
    experimental.reset_compile_stats()
    ((x, w),) = [(tf.constant(np.ones((3, 2), np.float32)), tf.Variable(np.ones((2, 2), np.float32)))]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.softplus(tf.math.erf(x @ w) * 0.75))
    tape.gradient(loss, w)
    assert _stats()["programs_compiled"] == 1 and _stats()["per_op_plans"] == 0


def _chain_gradient(length, size=8, module=tf):
    x = module.constant(np.linspace(-1.0, 1.0, size, dtype=np.float32))
    with module.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(length):
            y = module.sin(y) * 1.01
        loss = module.reduce_sum(y)
    return tape.gradient(loss, x).numpy()


def test_a_larger_structure_runs_per_op_until_it_has_repeated(monkeypatch):
    from tapeshim._src import replay

    # 81 nodes: per op until its per-op time pays for its program's trace or its compile (`replay.compile_now`),
    # here never: the time its second run takes would otherwise decide whether the third runs its program, and
    # that depends on the load
    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 1.0)
    monkeypatch.setattr(replay, "TRACE_PRICE_PER_NODE_S", 1.0)
    experimental.reset_compile_stats()
    for _ in range(3):
        _chain_gradient(40)
    stats = _stats()
    assert stats["programs_compiled"] == 0 and stats["per_op_plans"] == 3


def test_a_larger_structure_whose_runs_paid_for_its_trace_runs_its_program_on_the_host(monkeypatch):
    """Once a larger plan's per-op runs have paid for its program's trace (`replay.TRACE_PRICE_PER_NODE_S`, here
    nothing: from its third sighting), the host computes its program (twice as fast as the per-op tier) until
    those calls pay for its compile; nothing compiles within these few calls, and the values are TF's."""
    from tapeshim._src import background_compile

    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 1.0)  # (its per-op runs never pay for a compile)
    monkeypatch.setattr(replay, "TRACE_PRICE_PER_NODE_S", 0.0)
    _chain_gradient(40, size=9)  # (its kernels made: the first sighting below runs per op, not compiled at once)
    replay.forget_sightings()
    experimental.reset_compile_stats()
    submitted, interpreted = background_compile.stats["submitted"], interpret.stats["interpreted_calls"]
    compile_log = backend_compiles()
    compiled_before = len(compile_log)
    results = [_chain_gradient(40, size=9) for _ in range(2)]
    assert _stats()["per_op_plans"] == 2 and _stats()["programs_compiled"] == 0
    results += [_chain_gradient(40, size=9) for _ in range(3)]
    stats = _stats()
    assert stats["per_op_plans"] == 2 and stats["programs_compiled"] == 1 and stats["program_cache_hits"] == 2
    assert interpret.stats["interpreted_calls"] - interpreted >= 3  # (the program's calls, on the host)
    assert background_compile.stats["submitted"] == submitted and len(compile_log) == compiled_before
    expected = _chain_gradient(40, size=9, module=real_tf)
    for got in results:
        np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_a_larger_program_the_host_cannot_compute_is_dropped_and_runs_per_op(monkeypatch):
    """Where the host cannot compute the program a larger plan's per-op runs paid the trace of (here: no program
    may produce an element), the program is dropped without a compile and the plan goes on per op, until its
    per-op runs pay for a compile (the rule before the trace's, `replay.compile_now`)."""
    from tapeshim._src import background_compile

    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 1.0)
    monkeypatch.setattr(replay, "TRACE_PRICE_PER_NODE_S", 0.0)
    monkeypatch.setattr(interpret_cost, "HOST_ELEMENTS", 0)
    _chain_gradient(40, size=10)
    replay.forget_sightings()
    experimental.reset_compile_stats()
    submitted = background_compile.stats["submitted"]
    compile_log = backend_compiles()
    compiled_before = len(compile_log)
    results = [_chain_gradient(40, size=10) for _ in range(4)]
    stats = _stats()
    # (the third sighting made the program and dropped it, uncounted; every sighting ran per op)
    assert stats["programs_compiled"] == 0 and stats["per_op_plans"] == 3 and stats["program_cache_hits"] == 0
    assert background_compile.stats["submitted"] == submitted and len(compile_log) == compiled_before
    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 0.0)  # (its per-op runs now paid for a compile)
    results.append(_chain_gradient(40, size=10))
    assert _stats()["programs_compiled"] == 1 and len(compile_log) > compiled_before
    expected = _chain_gradient(40, size=10, module=real_tf)
    for got in results:
        np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_a_persistent_tapes_larger_program_the_host_cannot_compute_keeps_the_per_op_tier(monkeypatch):
    """A persistent tape's request whose program the host cannot compute is served per op, the program dropped
    without a compile, and the tape's later requests of it stay per op (one tape, one tier)."""
    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 1.0)
    monkeypatch.setattr(replay, "TRACE_PRICE_PER_NODE_S", 0.0)
    monkeypatch.setattr(interpret_cost, "HOST_ELEMENTS", 0)
    x = tf.constant(np.linspace(-1.0, 1.0, 11, dtype=np.float32))
    _chain_gradient(40, size=11)
    replay.forget_sightings()
    compile_log = backend_compiles()
    compiled_before = len(compile_log)
    answers = []
    for _ in range(3):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x
            for _ in range(40):
                y = tf.sin(y) * 1.01
            loss = tf.reduce_sum(y)
        answers.append([tape.gradient(loss, x).numpy() for _ in range(2)])
    assert len(compile_log) == compiled_before and len(replay._not_hosted) == 1  # (its program made and dropped)
    expected = _chain_gradient(40, size=11, module=real_tf)
    for first, second in answers:
        np.testing.assert_array_equal(first, second)
        np.testing.assert_allclose(first, expected, rtol=1e-5)


def test_off_the_cpu_a_larger_plan_compiles_by_its_compile_rule_alone(monkeypatch):
    """Without the host interpreter (a GPU), nothing computes a larger plan's program before its compile, so the
    trace's rule does not apply: it runs per op until its runs pay for the compile."""
    monkeypatch.setattr(interpret, "enabled", lambda: False)
    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 1.0)
    monkeypatch.setattr(replay, "TRACE_PRICE_PER_NODE_S", 0.0)
    _chain_gradient(40, size=12)
    replay.forget_sightings()
    experimental.reset_compile_stats()
    for _ in range(5):
        _chain_gradient(40, size=12)
    assert _stats()["programs_compiled"] == 0 and _stats()["per_op_plans"] == 5


def test_a_new_structure_of_known_ops_runs_per_op_and_compiles_when_it_repeats():
    _chain_gradient(40, size=5)  # the ops' per-op kernels exist from here on
    experimental.reset_compile_stats()
    first = _chain_gradient(12)
    stats = _stats()
    assert stats["programs_compiled"] == 0 and stats["per_op_plans"] == 1
    second = _chain_gradient(12)
    assert _stats()["programs_compiled"] == 1
    for _ in range(5):
        third = _chain_gradient(12)
    stats = _stats()
    assert stats["programs_compiled"] == 1 and stats["program_cache_hits"] == 5
    np.testing.assert_allclose(first, second, rtol=1e-6)
    np.testing.assert_allclose(first, third, rtol=1e-6)


def test_a_structure_seen_at_many_sizes_runs_a_repeating_size_per_op_until_a_fresh_start():
    """A structure seen at `MANY_SIZES` sizes runs a repeating size per op until its per-op time pays for a
    compile, not from its second sighting as a structure of few sizes does (test_kernel_families.py tests the
    paying); `replay.forget_sightings`, which the tests call before each test, starts that memory afresh, and
    the size then compiles when it repeats."""
    from tapeshim._src import replay

    for size in (3, 4, 5, 6):
        _chain_gradient(12, size=size)
    experimental.reset_compile_stats()
    first = _chain_gradient(12, size=7)
    second = _chain_gradient(12, size=7)
    stats = _stats()
    assert stats["programs_compiled"] == 0 and stats["per_op_plans"] == 2
    replay.forget_sightings()
    _chain_gradient(12, size=7)
    third = _chain_gradient(12, size=7)
    assert _stats()["programs_compiled"] == 1
    expected = _chain_gradient(12, size=7, module=real_tf)  # per op and compiled, the values are TF's
    for got in (first, second, third):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def _tier_bodies():
    def occurrences(tf):
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            tape.watch(y)
            z = tf.reduce_sum(y * x) + tf.reduce_sum(tf.stop_gradient(y) * 3.0)
        seeds = [tf.constant(2.0), tf.constant([1.0, 0.5])]
        return tape.gradient(z, [x, y, x]), tape.gradient([z, y], x, output_gradients=seeds)

    def complex_values(tf):
        x = tf.constant([1.0 + 2.0j, 3.0 - 1.0j])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * tf.math.conj(x) * x)
        return tape.gradient(y, x)

    def integer_ops(tf):
        v = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        with tf.GradientTape() as tape:
            idx = tf.argmax(v, axis=1)
            picked = tf.gather(v, idx, axis=1, batch_dims=1)
            y = tf.reduce_sum(picked * tf.cast(idx, tf.float32)) + tf.reduce_sum(v[1, 0:2])
        return tape.gradient(y, v)

    def sparse_rows(tf):
        table = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(table, [0, 2, 2]) ** 2)
        g = tape.gradient(y, table)
        return tf.convert_to_tensor(g)

    def custom(tf):
        @tf.custom_gradient
        def f(x):
            return tf.sin(x), lambda dy: dy * 10.0

        x = tf.constant([0.5, 1.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(f(x * 2.0))
        return tape.gradient(y, x)

    return [occurrences, complex_values, integer_ops, sparse_rows, custom]


@pytest.mark.parametrize("body", _tier_bodies(), ids=lambda b: b.__name__)
@pytest.mark.usefixtures("compiles_on_repeat")  # (compiled from the second run on)
def test_per_op_and_compiled_tiers_agree_with_tf(body):
    check(body)  # the first run of the structure: per op
    check(body)  # compiled
    check(body)  # from the cache


def test_a_long_structure_stays_per_op():
    x = tf.constant(np.linspace(-1.0, 1.0, 16, dtype=np.float32))

    def gradient():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(450):
                y = tf.sin(y)
            loss = tf.reduce_sum(y)
        return tape.gradient(loss, x)

    experimental.reset_compile_stats()
    first, second = gradient(), gradient()
    assert _stats()["programs_compiled"] == 0
    expected = np.ones(16, np.float64)
    value = np.linspace(-1.0, 1.0, 16, dtype=np.float32).astype(np.float64)
    for _ in range(450):
        expected *= np.cos(value)
        value = np.sin(value)
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-4)
    # the first call's kernels run on the host (interpret.py): NumPy's sin and cos round as XLA's nearly do
    np.testing.assert_allclose(second.numpy(), first.numpy(), rtol=1e-5)


def test_an_xla_failure_falls_back_to_the_per_op_tier():
    import jax

    from tapeshim._src.jax_op import jax_op

    calls = []

    def host(value):
        calls.append(1)
        if len(calls) == 2:  # the compiled program's run
            raise RuntimeError("a failure inside the compiled program")
        return np.asarray(value) * 2

    op = jax_op(lambda v: jax.pure_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), v), name="HostDouble")
    x = tf.Variable([1.0, 2.0])
    experimental.reset_compile_stats()
    values = []
    for _ in range(3):
        with tf.GradientTape():
            values.append(op(x * 1.0).numpy().tolist())
    assert values == [[2.0, 4.0]] * 3
    assert _stats()["compile_fallbacks"] == 1


# -- the recompile warning -----------------------------------------------------------------------------


@pytest.mark.usefixtures("compiles_on_repeat")  # (each shape compiles on its second call, as a longer loop would)
def test_a_loop_that_keeps_compiling_warns_with_its_line(caplog):
    import inspect
    import logging

    # A shape's first call runs on the host; it compiles when it repeats. (A shape no other test uses: the
    # count is of this loop's compiles.)
    x = tf.constant(np.ones((43, 7), np.float32))
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for n in range(2, 10):
            for _ in range(2):
                line = inspect.currentframe().f_lineno + 1
                tf.reduce_sum(x[:n] * 3.0)
    messages = [r.getMessage() for r in caplog.records if "compiled a new XLA program" in r.getMessage()]
    assert len(messages) == 1
    assert f"test_engine.py:{line}" in messages[0] and "5 calls to" in messages[0]
    assert "changed" not in messages[0] or "from" in messages[0]


@pytest.mark.usefixtures("compiles_on_repeat")  # (each structure compiles on its second call)
def test_structures_that_repeat_and_compile_warn_at_the_gradient_line(caplog):
    # Six structures, each repeated until it compiles: six program compiles at one `tape.gradient` line, counted
    # where each compile starts (submitted to the background thread), even when the program is not called again.
    import inspect
    import logging

    v = tf.Variable(np.full((6, 5), 0.1, np.float32))
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for depth in range(1, 7):
            for _ in range(3):
                with tf.GradientTape() as tape:
                    x = v
                    for _ in range(depth):
                        x = tf.tanh(x) * 1.25
                    loss = tf.reduce_sum(x)
                line = inspect.currentframe().f_lineno + 1
                tape.gradient(loss, v)
    messages = [r.getMessage() for r in caplog.records if "compiled a new XLA program" in r.getMessage()]
    assert len(messages) == 1
    assert f"test_engine.py:{line}" in messages[0] and "gradient program" in messages[0]


def test_new_signatures_that_never_repeat_do_not_warn(caplog):
    # keras.io's actor-critic stacks an episode's log-probabilities, a new count each episode: each count's
    # first call runs on the host and compiles nothing, and TF eager prints nothing either.
    import logging

    def stacked_sums(module):
        return [
            float(module.reduce_sum(module.stack([module.constant(0.5 * i) for i in range(n)]))) for n in range(3, 12)
        ]

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        sums = stacked_sums(tf)
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]
    assert sums == stacked_sums(real_tf)


def _episodes_through_a_chain(module, episodes):
    """Episodes of new lengths through a chain of products of fixed shapes, one tape each (a new structure
    each, run per op); the last episode's gradients."""
    rng = np.random.default_rng(6)
    widths = [3, 5, 7, 9, 11, 13, 2]
    weights = [
        module.Variable(rng.standard_normal((a, b)).astype(np.float32) * 0.3) for a, b in zip(widths, widths[1:])
    ]
    for episode in range(episodes):
        with module.GradientTape() as tape:
            total = 0.0
            for _ in range(3 + episode):
                h = module.constant(rng.standard_normal((1, 3)).astype(np.float32))
                for w in weights:
                    h = module.tanh(module.matmul(h, w))
                total = total + module.reduce_sum(h)
        grads = tape.gradient(total, weights)
    return [g.numpy() for g in grads]


def test_the_per_op_tiers_compiles_do_not_warn_at_the_users_line(caplog, monkeypatch):
    # The per-op tier compiles a kernel once its host calls have paid for it: here after two, so that a
    # product kernel per weight shape compiles within a few episodes, at the `tape.gradient` line. Those belong
    # to the plans, not to a line whose shapes keep changing (they never do), and TF prints nothing.
    import logging

    from tapeshim._src import kernel_calls

    monkeypatch.setattr(kernel_calls, "host_calls_before_compile", lambda work: 2)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        grads = _episodes_through_a_chain(tf, 6)
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]
    for got, expected in zip(grads, _episodes_through_a_chain(real_tf, 6)):
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-6)


def test_a_loop_whose_new_shapes_compile_on_their_first_call_warns(caplog):
    # Under `jax_debug_nans` the host interpreter computes nothing: each new shape compiles on its first call,
    # and that loop is the one the warning is for.
    import logging

    import jax

    x = tf.constant(np.ones((53, 5), np.float32))
    jax.config.update("jax_debug_nans", True)
    try:
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            sums = [float(tf.reduce_sum(x[:n] * 5.0)) for n in range(2, 12)]
    finally:
        jax.config.update("jax_debug_nans", False)
    assert sums == [25.0 * n for n in range(2, 12)]
    assert len([r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]) == 1


def test_a_steady_loop_does_not_warn(caplog):
    import logging

    step = _mlp_step()
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for _ in range(12):
            step()
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]


def test_a_loop_over_batches_of_new_sizes_does_not_warn(caplog):
    # Each new size is served by the ops' shape families (no JAX trace, nothing compiled): TF eager prints
    # nothing here, and neither does tapeshim.
    import logging

    rng = np.random.default_rng(4)
    w = tf.Variable(rng.normal(size=(4, 8)).astype(np.float32))
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        for n in range(10, 22):
            x = tf.constant(rng.normal(size=(n, 4)).astype(np.float32))
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(x, w))
                loss = tf.reduce_mean(tf.square(h - tf.reduce_mean(h, axis=0)))
            w.assign_sub(0.01 * tape.gradient(loss, w))
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]


def _lookups_of_new_lengths(module, lengths):
    """A table's gradient through gathers of a new number of rows each step (a text model's embedding, batches
    of new sequence lengths): TF's `IndexedSlices`, one per step."""
    table = module.Variable(np.arange(24, dtype=np.float32).reshape(6, 4) / 10.0)
    rng = np.random.default_rng(7)
    slices = []
    for length in lengths:
        ids = module.constant(rng.integers(0, 6, size=(2, length)).astype(np.int32))
        with module.GradientTape() as tape:
            loss = module.reduce_sum(module.tanh(module.gather(table, ids)) * 0.5)
        slices.append(tape.gradient(loss, table))
    return slices


@pytest.mark.skipif(not interpret.enabled(), reason="the host computes first calls on the CPU only")
def test_sparse_gradients_of_new_row_counts_compile_nothing_and_do_not_warn(caplog):
    # The IndexedSlices' rows are reshaped and joined by tapeshim's ops (on the host for a new size): JAX's
    # own `reshape` and `concatenate` compiled an XLA program for each new number of rows.
    import logging

    lengths = [41, 43, 47, 53, 59, 61, 67]  # (row counts no other test uses)
    compiles = backend_compiles()
    before = len(compiles)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        got = _lookups_of_new_lengths(tf, lengths)
    assert len(compiles) == before
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]
    for ours, theirs in zip(got, _lookups_of_new_lengths(real_tf, lengths)):
        assert isinstance(ours, tf.IndexedSlices) and isinstance(theirs, real_tf.IndexedSlices)
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
        np.testing.assert_allclose(ours.values.numpy(), theirs.values.numpy(), rtol=1e-5)
        for mine, tfs in ((ours.values, theirs.values), (ours.indices, theirs.indices)):
            assert mine.dtype.name == tfs.dtype.name
        np.testing.assert_array_equal(ours.dense_shape.numpy(), theirs.dense_shape.numpy())


def _gathers_of_mixed_index_dtypes(module):
    table = module.Variable(np.arange(8, dtype=np.float32).reshape(4, 2))
    with module.GradientTape() as tape:
        loss = module.reduce_sum(module.gather(table, module.constant([0, 2])) * 2.0)
        loss += module.reduce_sum(module.gather(table, module.constant([1, 3], module.int64)) * 3.0)
        loss += module.reduce_sum(module.gather(table, module.constant([3, 3])) * 5.0)
    slices = tape.gradient(loss, table)
    return slices.indices.dtype.name, module.convert_to_tensor(slices).numpy()


def test_a_sparse_gradient_of_int32_and_int64_gathers_has_int64_indices_as_tfs():
    (ours, dense), (theirs, expected) = _gathers_of_mixed_index_dtypes(tf), _gathers_of_mixed_index_dtypes(real_tf)
    assert ours == theirs == "int64"
    np.testing.assert_array_equal(dense, expected)


@pytest.mark.usefixtures("compiles_on_repeat")  # (each shape compiles on its second call, as a longer loop would)
def test_a_bucketed_loop_of_sparse_gradients_does_not_warn(caplog):
    # Batches of three lengths, over and over: their IndexedSlices are joined on the host, where tapeshim's
    # reshape kernels compiled for each repeating row count and warned at the `tape.gradient` line.
    import logging

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        _lookups_of_new_lengths(tf, [31, 37, 29] * 6)
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]


# -- host value checks -----------------------------------------------------------------------------


def test_labels_checked_once_still_raise_tf_errors_for_bad_values():
    def body(tf):
        logits = tf.constant(np.zeros((3, 4), np.float32))
        good = tf.constant([0, 3, 1])
        losses = [tf.nn.sparse_softmax_cross_entropy_with_logits(labels=good, logits=logits) for _ in range(3)]
        return losses[-1]

    check(body)

    def bad(tf):
        logits = tf.constant(np.zeros((3, 4), np.float32))
        labels = tf.constant([0, 4, 1])
        for _ in range(2):
            try:
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            except tf.errors.InvalidArgumentError:
                continue
            return "no error"
        return tf.gather(logits, tf.constant([0, 3, 2]), axis=1)  # in range, and then out of range below

    check(bad)
    x = tf.constant(np.zeros((3, 2), np.float32))
    indices = tf.constant([0, 3])
    for _ in range(2):
        with pytest.raises(tf.errors.InvalidArgumentError, match="not in"):
            tf.gather(x, indices)


def test_a_steady_loop_over_many_kinds_of_ops_compiles_nothing_after_warming_up():
    compiles = backend_compiles()

    @tf.custom_gradient
    def scale_grad(x):
        return tf.identity(x), lambda dy: dy * 0.5

    rng = np.random.default_rng(0)
    w = tf.Variable(rng.normal(size=(6, 4)).astype(np.float32))
    table = tf.Variable(rng.normal(size=(10, 4)).astype(np.float32))
    x = tf.constant(rng.normal(size=(3, 6)).astype(np.float32))
    ids = tf.constant([1, 7, 3])

    def step(i):
        with tf.GradientTape() as tape:
            h = tf.tanh(x @ w) + tf.gather(table, ids)
            h = tf.cond(tf.reduce_sum(h) > -1e9, lambda: h * 2.0, lambda: h)
            h = scale_grad(h)
            y = tf.reduce_mean(tf.square(h[i % 3])) + tf.reduce_logsumexp(h[:, i % 4])
        grads = tape.gradient(y, [w, table])
        w.assign_sub(0.01 * grads[0])
        table.assign_sub(0.01 * tf.convert_to_tensor(grads[1]))
        return y

    warm = len(program_lowerings())  # (a program compiled before may come from the disk cache: it lowers)
    for i in range(150):  # past the host's rental (`compile_tiers.calls_before_compile`)
        step(i)
    assert len(program_lowerings()) > warm, "the warm-up compiled the step"
    experimental.reset_compile_stats()
    before = len(compiles)
    for i in range(150, 162):
        step(i)
    assert len(compiles) == before, "the steady loop compiled again"
    stats = _stats()
    assert stats["programs_compiled"] == 0
    assert stats["per_op_plans"] == 0  # (a plan run per op could compile at a step its time decides)


def test_two_ops_of_one_name_never_share_a_program():
    from tapeshim._src.jax_op import jax_op

    double = jax_op(lambda v: v * 2.0)
    triple = jax_op(lambda v: v * 3.0)  # also named "<lambda>"
    x = tf.constant([1.0, 2.0])
    results = []
    for op in (double, triple, double, triple):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(op(x))
        results.append((float(y), tape.gradient(y, x).numpy().tolist()))
    assert results == [(6.0, [2.0, 2.0]), (9.0, [3.0, 3.0])] * 2


def test_programs_compiled_while_tracing_a_function_do_not_warn(caplog):
    """A function's trace runs many shapes through one line; tf.function's own retracing warning covers traces."""
    import logging

    w = tf.Variable(np.ones((40, 3), np.float32))

    @tf.function
    def sums():
        grads = []
        for n in range(1, 8):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(w[:n] * 2.0)
            grads.append(tape.gradient(loss, w))
        return grads

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        sums()
    assert not [r for r in caplog.records if "compiled a new XLA program" in r.getMessage()]


def test_per_op_tier_reads_subnormal_leaves_as_xla_does():
    def body(tf):
        x = tf.constant(np.array([1e-39, -2e-39, 2e-38, 3e-38], np.float32))  # two subnormals
        scale = tf.constant(np.float32(1e38))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for k in range(80):  # a larger structure: per op on its first run; `maximum` flushes no output
                y = tf.maximum(y, -5.0 - k)
            loss = tf.reduce_sum(y * scale)
        return loss, tape.gradient(loss, x), y * scale

    experimental.reset_compile_stats()
    check(body)
    assert _stats()["per_op_plans"] >= 1
