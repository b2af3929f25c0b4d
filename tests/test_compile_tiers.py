"""The engine's two compile tiers (`tapeshim/_src/compile_tiers.py`): counts, never durations.

A new program compiles quickly (XLA's optimizations off); it compiles again, optimized, once its calls
times its work reach the budget, exactly once, and nothing compiles after that. Values are TF's in both
tiers. Per-op kernels compiled with options still run inside other JAX traces.
"""

import numpy as np
import pytest

import tapeshim as tf
from oracle import backend_compiles, check, real_tf
from tapeshim import experimental
from tapeshim._src import background_compile, compile_tiers, interpret, interpret_blas, replay, runtime_checks

pytestmark = pytest.mark.skipif(
    compile_tiers.baseline_options() is None, reason="the quick tier applies on the CPU backend only"
)


def _step_and_work():
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.normal(size=(48, 40)).astype(np.float32))
    x = tf.constant(rng.normal(size=(30, 48)).astype(np.float32))

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(x @ w) ** 2)
        return loss, tape.gradient(loss, w)

    return step


def test_a_program_compiles_quickly_then_once_optimized_when_its_work_pays_for_it(monkeypatch):
    compiles = backend_compiles()
    step = _step_and_work()
    known = set(replay._quick)
    with compile_tiers.compiles_on_repeat():  # (its first call on the host without its trace: the next traces it)
        for _ in range(3):  # compiled on its first or second sighting (per op first where its ops ran before)
            first_loss, first_grad = step()
    background_compile.wait()
    tiers = [tier for key, tier in replay._quick.items() if key not in known]
    assert len(tiers) == 1, "the gradient program was compiled by the quick tier"
    work = tiers[0].work
    assert work > 30 * 40  # the elements its operations produce, counted in its jaxpr
    monkeypatch.setattr(compile_tiers, "WORK_BUDGET", 8 * work)  # optimized after its eighth call
    experimental.reset_compile_stats()
    before = len(compiles)
    results = [step() for _ in range(12)]
    assert experimental.compile_stats()["programs_tiered_up"] == 1
    assert experimental.compile_stats()["programs_compiled"] == 0
    assert len(compiles) == before + 1  # the optimized compile, once
    more = len(compiles)
    results += [step() for _ in range(20)]
    assert len(compiles) == more and experimental.compile_stats()["programs_tiered_up"] == 1
    for loss, grad in results:  # the same values in both tiers, within float32 rounding (the oracle's 2e-5)
        np.testing.assert_allclose(loss.numpy(), first_loss.numpy(), rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(grad.numpy(), first_grad.numpy(), rtol=2e-5, atol=2e-5)


def test_a_program_below_the_budget_keeps_its_quick_compile():
    step = _step_and_work()
    for _ in range(3):  # compiled on its first or second sighting (per op first where its ops ran before)
        step()
    experimental.reset_compile_stats()
    for _ in range(30):
        step()
    stats = experimental.compile_stats()
    assert stats["programs_tiered_up"] == 0 and stats["programs_compiled"] == 0


@pytest.mark.parametrize("rental", [False, True], ids=["compiled_from_the_second_call", "on_the_host_first"])
def test_values_of_quick_and_optimized_programs_are_tfs(monkeypatch, rental):
    def body(tf):
        rng = np.random.default_rng(1)
        w = tf.Variable(rng.normal(size=(8, 5)).astype(np.float32))
        x = tf.constant(rng.normal(size=(4, 8)).astype(np.float32))
        out = []
        for _ in range(4):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.nn.softplus(x @ w) * tf.exp(-tf.abs(x @ w)))
            grad = tape.gradient(loss, w)
            w.assign_sub(0.1 * grad)
            out.append((loss, grad))
        return out

    monkeypatch.setattr(compile_tiers, "WORK_BUDGET", 1)  # optimized from the second call on
    if rental:  # (a short loop: its calls run on the host, `compile_tiers.calls_before_compile`)
        check(body)
    else:
        with compile_tiers.compiles_on_repeat():
            check(body)


@pytest.mark.usefixtures("compiles_on_repeat")  # (the kernels compile on their second calls)
def test_kernels_compiled_with_options_run_inside_other_traces():
    x = tf.constant([0.5, 1.5, -2.0])
    tf.sin(x) * 2.0  # the kernels, compiled with their options at the top level

    @tf.custom_gradient
    def halve_grad(v):
        return tf.sin(v), lambda dy: dy * tf.cos(v) * 0.5

    for _ in range(3):  # the custom gradient's kernels run inside the gradient program's trace
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(halve_grad(x) * 2.0)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(x.numpy()), rtol=1e-6)


def test_reset_compile_stats_resets_the_tier_ups(monkeypatch):
    monkeypatch.setattr(compile_tiers, "WORK_BUDGET", 1)
    step = _step_and_work()
    for _ in range(3):
        step()
    assert "programs_tiered_up" in experimental.compile_stats()
    experimental.reset_compile_stats()
    assert experimental.compile_stats()["programs_tiered_up"] == 0


def test_a_heavy_program_compiles_optimized_at_once(monkeypatch):
    compiles = backend_compiles()
    rng = np.random.default_rng(2)
    w = tf.Variable(rng.normal(size=(36, 20)).astype(np.float32))
    x = tf.constant(rng.normal(size=(11, 36)).astype(np.float32))

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sigmoid(x @ w))
        return tape.gradient(loss, w)

    monkeypatch.setattr(compile_tiers, "HEAVY_WORK", 1)  # every new program is heavy
    known = set(replay._quick)
    with compile_tiers.compiles_on_repeat():  # (its first call on the host without its trace: the next traces it)
        for _ in range(3):
            step()
    background_compile.wait()
    experimental.reset_compile_stats()
    before = len(compiles)
    for _ in range(10):
        step()
    assert set(replay._quick) <= known  # its account was dropped: it compiled optimized, once
    assert experimental.compile_stats()["programs_tiered_up"] == 0
    assert len(compiles) == before


def test_an_option_this_xla_refuses_gives_way_to_its_defaults(monkeypatch):
    monkeypatch.setattr(compile_tiers, "_refused", set())
    monkeypatch.setattr(compile_tiers, "KERNEL_OPTIONS", {"xla_no_such_option_in_any_xla": True})
    kernel = runtime_checks.jit_with_options(lambda value: value * 2.0 + 1.0, compile_tiers.kernel_options)
    np.testing.assert_allclose(kernel(np.arange(3.0, dtype=np.float32)), [1.0, 3.0, 5.0])
    assert compile_tiers._refused == {"xla_no_such_option_in_any_xla"}
    assert compile_tiers.kernel_options() is None  # later kernels compile with XLA's defaults at once
    check(lambda tf: tf.exp(tf.constant([[0.5, 1.5]])) * 3.0)


@pytest.mark.usefixtures("compiles_on_repeat")  # (its size compiles on its second call)
def test_a_function_for_every_size_compiles_each_size_quickly_then_optimized(monkeypatch):
    # A `tapeshim.function` with a `None` signature size: each size's program compiles in the quick tier, and
    # optimized (once) when its calls times its work reach the budget; values stay the same.
    rng = np.random.default_rng(1)
    w = tf.Variable(rng.normal(size=(8, 4)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32)])
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(x @ w) ** 2)
        return loss, tape.gradient(loss, w)

    x = tf.constant(rng.normal(size=(5, 8)).astype(np.float32))
    monkeypatch.setattr(compile_tiers, "WORK_BUDGET", 6 * 5 * 8 * 4)  # optimized after a few compiled calls
    experimental.reset_compile_stats()
    first = step(x)
    results = []
    for _ in range(30):
        results.append(step(x))
        background_compile.wait()
    assert experimental.compile_stats()["programs_tiered_up"] == 1
    for loss, grad in results:
        np.testing.assert_allclose(loss.numpy(), first[0].numpy(), rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(grad.numpy(), first[1].numpy(), rtol=2e-5, atol=2e-5)


# -- the ski rental: when a repeating program compiles (`compile_tiers.calls_before_compile`) ----------------


def test_the_rental_lasts_longer_for_cheap_host_calls_and_ends_at_once_for_heavy_ones():
    small_step = compile_tiers.calls_before_compile(56, 43_203)  # the small MLP's forward-and-gradient program
    eager_op = compile_tiers.calls_before_compile(1, 640)
    assert 20 <= small_step <= 100, small_step
    assert eager_op > small_step, "an eager op's host call costs less more than a step's"
    assert compile_tiers.calls_before_compile(30, 4_000_000) <= 2, "a compute-bound step compiles at once"
    assert compile_tiers.calls_before_compile(1, 10**12) == 1
    many = [compile_tiers.calls_before_compile(20, work) for work in (10, 10**3, 10**5, 10**6, 10**7)]
    assert many == sorted(many, reverse=True), "more work per call: a dearer rent, an earlier compile"
    with compile_tiers.compiles_on_repeat():
        assert compile_tiers.calls_before_compile(56, 43_203) == 1
    assert compile_tiers.calls_before_compile(56, 43_203) == small_step


def test_a_thread_computing_on_every_core_rents_longer():
    # A compile in the background takes cores from a host call that computes on every core (its products split
    # over them): its CPU time is part of the price there. The compute-bound MLP step's program (87 equations,
    # 4.9M elements) compiled on its third call, and its next 10 calls ran 1.5-2.5x slower beside the compile
    one_core = compile_tiers.calls_before_compile(87, 4_936_710)
    every_core = compile_tiers.calls_before_compile(87, 4_936_710, on_every_core=True)
    assert one_core <= 2 and 10 <= every_core <= 40, (one_core, every_core)
    assert compile_tiers.calls_before_compile(3, 1_572_864, on_every_core=True) > 5, "a weight update's kernel too"
    with compile_tiers.compiles_on_repeat():
        assert compile_tiers.calls_before_compile(87, 4_936_710, on_every_core=True) == 1


def test_convolutions_and_poolings_price_their_slow_compiles():
    # XLA compiles a convolution and a max pooling's gradient far slower than other operations: TF's CNN
    # tutorial's step (three convolutions, two poolings) compiled in 1.5 s, where the per-equation price said
    # 0.22 s, and its compile, submitted at the 14th host call, never paid back in the tutorial's 20 steps
    import jax
    from jax import lax

    from tapeshim._src import host_vjp_costs

    def conv_pool(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    x, w = np.ones((2, 6, 6, 3), np.float32), np.ones((3, 3, 3, 4), np.float32)
    forward = jax.jit(conv_pool).trace(x, w)
    gradient = jax.jit(jax.grad(lambda x, w: conv_pool(x, w).sum(), argnums=1)).trace(x, w)
    prices = compile_tiers.COMPILE_CORE_PRIMITIVE_PRICES_S
    assert interpret.prepare(forward).core_price_s == pytest.approx(prices["conv_general_dilated"])
    assert interpret.prepare(gradient).core_price_s == pytest.approx(
        2 * prices["conv_general_dilated"] + prices["select_and_scatter_add"]  # (the filter's cotangent only)
    )
    *_, vjp_price = host_vjp_costs.vjp_costs(forward.jaxpr)  # a forward whose VJP compiles with it
    assert vjp_price == pytest.approx(3 * prices["conv_general_dilated"] + prices["select_and_scatter_add"])
    tutorial = compile_tiers.calls_before_compile(159, 11_600_000, on_every_core=True)
    priced = compile_tiers.calls_before_compile(159, 11_600_000, on_every_core=True, core_price_s=0.72)
    assert tutorial <= 20 < 40 <= priced <= 80, (tutorial, priced)
    assert compile_tiers.calls_before_compile(159, 11_600_000, core_price_s=0.72) == 1, "its cores left to it"


def test_a_program_compiled_with_xlas_defaults_prices_its_multithreaded_compile():
    # XLA's default CPU pipeline compiles a training step on more than one thread: on two cores the threads past
    # its first take the caller's core (a `tapeshim.function` step's compile, submitted at its 51st call, cost
    # the caller about 250 ms where the price counted 20 ms, and never landed within the 300-call program);
    # the quick tier's options compile on about one thread (their rental is unchanged)
    quick = compile_tiers.calls_before_compile(78, 20_314)
    defaults = compile_tiers.calls_before_compile(78, 20_314, spill_share=1.0)
    assert quick < 60 and defaults > 600, (quick, defaults)
    spread = compile_tiers.calls_before_compile(78, 20_314, spill_share=1.0 / 15)  # (16 cores)
    assert quick < spread < defaults
    on_every_core = compile_tiers.calls_before_compile(78, 20_314, on_every_core=True)
    assert compile_tiers.calls_before_compile(78, 20_314, on_every_core=True, spill_share=1.0) == on_every_core, (
        "a thread on every core prices the whole compile already"
    )
    assert interpret_blas.compile_spill_share() == 1.0 / max(1, interpret_blas.CORES - 1)

    step = _function_step(33)
    step()  # (the host computes it, and rents)
    program = step.get_concrete_function()._shared.call
    assert isinstance(program, runtime_checks.CheckedProgram) and program._hosting is not None
    prepared = program._hosting.program
    assert program._hosting.rented_calls == prepared.calls_before_compile(defaults=True) - 1
    if interpret_blas.CORES == 2:
        assert prepared.calls_before_compile(defaults=True) > 2 * prepared.calls_before_compile()


def test_a_thread_computes_on_every_core_for_its_next_host_calls_after_a_split_product():
    big = np.ones((512, 512), np.float32)
    small = tf.constant(np.ones((3, 3), np.float32))
    assert not interpret_blas.computing_on_every_core()  # (each test starts as a new thread: conftest)
    interpret.run(_identity_trace(small), (small,))  # a host call (the split below counts as made in it)
    with interpret_blas.host_errors_ignored():
        interpret_blas.limit_blas_threads()
        interpret_blas.matmul(big, big)
    for _ in range(interpret_blas.RECENT_HOST_CALLS - 1):  # host calls without one
        assert interpret_blas.computing_on_every_core() == (interpret_blas._THREADS > 1)
        interpret.run(_identity_trace(small), (small,))
    assert interpret_blas.computing_on_every_core() == (interpret_blas._THREADS > 1), "the last 16 calls hold it"
    interpret.run(_identity_trace(small), (small,))
    assert not interpret_blas.computing_on_every_core()


def _identity_trace(x):
    import jax

    return jax.jit(lambda v: v * 2.0).trace(x)


def test_a_compute_bound_step_compiles_nothing_in_its_first_steps():
    # Its host calls split their products over the cores: the program rents for more calls than one computed
    # on one core, whose compile started on its third step (values: `test_interpret_blas.py`)
    rng = np.random.default_rng(3)
    w = tf.Variable((rng.normal(size=(512, 768)) / 20).astype(np.float32))
    x = tf.constant(rng.normal(size=(256, 512)).astype(np.float32))
    submitted = background_compile.stats["submitted"]
    compiles = backend_compiles()
    before = len(compiles)
    for _ in range(6):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.nn.relu(tf.matmul(x, w))))
        w.assign_sub(0.1 * tape.gradient(loss, w))
    if interpret_blas._THREADS > 1:
        assert background_compile.stats["submitted"] == submitted and len(compiles) == before
    else:  # (one core: nothing to split, a compile takes no core from the host's call)
        assert background_compile.stats["submitted"] > submitted


def _function_step(seed):
    rng = np.random.default_rng(seed)
    w = tf.Variable(rng.normal(size=(seed, 5)).astype(np.float32))  # (a width no other test uses)
    x = tf.constant(rng.normal(size=(4, seed)).astype(np.float32))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(x @ w) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    return step


@pytest.mark.parametrize("in_background", [True, False], ids=["background", "on_the_caller"])
def test_a_repeating_program_runs_on_the_host_until_its_calls_paid_for_its_compile_then_compiles_once(in_background):
    compiles = backend_compiles()
    step = _function_step(31 if in_background else 32)
    before = len(compiles)
    hosted = interpret.stats["interpreted_calls"]
    background_compile.set_enabled(in_background)
    try:
        losses = [float(step()) for _ in range(5)]
        assert len(compiles) == before, "a program called a few times compiles nothing"
        assert interpret.stats["interpreted_calls"] == hosted + 5
        losses += [float(step()) for _ in range(1500)]
    finally:
        background_compile.set_enabled(True)
    assert len(compiles) == before + 1, "a program that keeps repeating compiles, once"
    hosted = interpret.stats["interpreted_calls"]
    step()
    assert interpret.stats["interpreted_calls"] == hosted, "its calls run compiled"
    assert losses == sorted(losses, reverse=True)


def test_an_eager_op_runs_on_the_host_until_its_calls_paid_for_its_compile_then_compiles_once():
    compiles = backend_compiles()
    x = tf.constant(np.linspace(-1.0, 1.0, 41, dtype=np.float32))  # (a size no other test uses)
    before = len(compiles)
    for _ in range(5):
        np.testing.assert_allclose(tf.math.sinh(x).numpy(), np.sinh(x.numpy()), rtol=1e-6)
    assert len(compiles) == before
    for _ in range(300):
        tf.math.sinh(x)
    assert len(compiles) == before + 1
    np.testing.assert_allclose(tf.math.sinh(x).numpy(), np.sinh(x.numpy()), rtol=1e-6)


def test_a_size_of_a_function_for_every_size_rents_as_a_program_does():
    compiles = backend_compiles()
    w = tf.Variable(np.full((3, 2), 0.5, np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def step(x):
        return tf.reduce_sum(tf.tanh(tf.matmul(x, w)))

    small, large = tf.ones((11, 3)), tf.ones((13, 3))
    before = len(compiles)
    values = [float(step(small)) for _ in range(5)] + [float(step(large)) for _ in range(5)]
    assert len(compiles) == before, "sizes called a few times compile nothing"
    for _ in range(300):
        step(small)
    assert len(compiles) == before + 1, "the size that keeps repeating compiles, once"
    assert values[:5] == [values[0]] * 5 and values[5:] == [values[5]] * 5
    np.testing.assert_allclose(float(step(small)), values[0], rtol=1e-6)
    tf_w = real_tf.constant(np.full((3, 2), 0.5, np.float32))
    for n, value in ((11, values[0]), (13, values[5])):  # TF's values, on the host and compiled
        tf_value = float(real_tf.reduce_sum(real_tf.tanh(real_tf.ones((n, 3)) @ tf_w)))
        np.testing.assert_allclose(value, tf_value, rtol=1e-5)


def test_a_loop_of_many_iterations_rents_for_its_iterations_not_its_body():
    # each host call runs the loop's body 500 times (`interpret.Prepared.loop_equations`); its compile lowers the
    # body once: the rent is dear, the price is not, and the compile is submitted on the second call
    x = tf.constant(np.full(9, 0.5, np.float32))  # (a size no other test uses)

    @tf.function
    def iterate(x):
        return tf.while_loop(lambda i, v: i < 500, lambda i, v: (i + 1, tf.tanh(v) * 1.01 + 0.1), [0, x])[1]

    submitted = background_compile.stats["submitted"]
    hosted = interpret.stats["interpreted_calls"]
    values = [iterate(x).numpy()]
    assert background_compile.stats["submitted"] == submitted
    values.append(iterate(x).numpy())
    assert background_compile.stats["submitted"] == submitted + 1, "the second call submitted the compile"
    assert interpret.stats["interpreted_calls"] - hosted == 2
    background_compile.wait()
    values.append(iterate(x).numpy())
    assert interpret.stats["interpreted_calls"] - hosted == 2, "then it runs compiled"
    np.testing.assert_allclose(values[2], values[0], rtol=1e-5)
    start = real_tf.constant(np.full(9, 0.5, np.float32))

    def body(i, v):  # (`iterate`'s body, in TF)
        return i + 1, real_tf.tanh(v) * 1.01 + 0.1

    expected = real_tf.while_loop(lambda i, v: i < 500, body, [0, start])[1]
    np.testing.assert_allclose(values[0], expected.numpy(), rtol=1e-5)  # TF's value
    assert compile_tiers.calls_before_compile(10, 9, loop_equations=3000) == 1
    assert compile_tiers.calls_before_compile(10, 9) > 50
