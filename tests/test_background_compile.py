"""Compiles in the background thread (`tapeshim/_src/background_compile.py`).

A program's first call runs on the host; when it repeats, its compile goes to the background thread and its
calls run on the host until the compile is done, then compiled. The calling thread never waits for those
compiles, values stay TF's throughout, and once the compiles are done nothing compiles again.
"""

import gc
import threading
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeshim as tf
from oracle import backend_compiles, check
from tapeshim._src import background_compile, compile_tiers, interpret, runtime_checks

pytestmark = [
    pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only"),
    pytest.mark.usefixtures("compiles_on_repeat"),  # (the ski rental's own tests: test_compile_tiers.py)
]

_threads: list[str] = []


def _log_thread(event: str, duration_secs: float, **kwargs: object) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _threads.append(threading.current_thread().name)


jax.monitoring.register_event_duration_secs_listener(_log_thread)


def _compiling_threads(run) -> list[str]:
    """The threads that compiled while `run()` ran, and the background compiles it submitted."""
    background_compile.wait()
    before = len(_threads)
    run()
    background_compile.wait()
    return _threads[before:]


def _mlp_function(tf, width):
    rng = np.random.default_rng(width)
    w = tf.Variable(rng.normal(size=(5, width)).astype(np.float32))
    x = tf.constant(rng.normal(size=(8, 5)).astype(np.float32))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.relu(tf.matmul(x, w)) ** 2)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    return step


def test_a_functions_second_call_compiles_in_the_background():
    step = _mlp_function(tf, 7)
    step()  # the first call: traced, computed on the host
    threads = _compiling_threads(step)  # the second: submits the compile, computed on the host
    assert threads and set(threads) == {"tapeshim-compile"}, threads
    hosted = interpret.stats["interpreted_calls"]
    assert _compiling_threads(step) == []  # compiled: found in JAX's cache
    assert interpret.stats["interpreted_calls"] == hosted, "the call after the compile ran compiled"


def test_values_are_tfs_on_the_host_while_compiling_and_compiled():
    def body(tf):
        step = _mlp_function(tf, 9)
        return [step() for _ in range(6)]

    check(body, rtol=2e-5)


def test_an_eager_ops_second_call_compiles_in_the_background():
    x = tf.constant(np.linspace(-1.0, 1.0, 37, dtype=np.float32))
    tf.math.cosh(x)  # the first call of this signature: on the host
    threads = _compiling_threads(lambda: tf.math.cosh(x))
    assert threads == ["tapeshim-compile"]
    np.testing.assert_allclose(tf.math.cosh(x).numpy(), np.cosh(x.numpy()), rtol=1e-6)


def test_without_the_background_thread_the_second_call_compiles_on_the_caller():
    background_compile.set_enabled(False)
    try:
        step = _mlp_function(tf, 11)
        step()
        threads = _compiling_threads(step)
    finally:
        background_compile.set_enabled(True)
    assert threads and set(threads) == {"MainThread"}, threads


def test_compile_counts_are_the_synchronous_engines():
    def counts(width):
        compiles = backend_compiles()
        step = _mlp_function(tf, width)
        before = len(compiles)
        for _ in range(4):
            step()
        return len(compiles) - before

    in_background = counts(13)
    background_compile.set_enabled(False)
    try:
        on_the_caller = counts(14)
    finally:
        background_compile.set_enabled(True)
    assert in_background == on_the_caller > 0


def _gather_function(tf):
    params = tf.constant(np.arange(12.0, dtype=np.float32).reshape(6, 2))

    @tf.function
    def pick(indices):
        return tf.reduce_sum(tf.gather(params, indices) * 2.0, axis=1)

    return pick


def test_a_program_with_index_checks_compiles_in_the_background():
    pick = _gather_function(tf)
    good = tf.constant([5, 0, 2], tf.int32)
    pick(good)  # the first call: traced, computed on the host (the index check runs there)
    threads = _compiling_threads(lambda: pick(good))  # the second submits its compile under checkify
    assert threads and set(threads) == {"tapeshim-compile"}, threads
    hosted = interpret.stats["interpreted_calls"]
    assert _compiling_threads(lambda: pick(good)) == []  # compiled: found in JAX's cache
    assert interpret.stats["interpreted_calls"] == hosted, "the call after the compile ran compiled"


def test_a_heavy_programs_compile_runs_in_the_background_with_xlas_defaults(monkeypatch):
    # A compute-bound step (`compile_tiers.HEAVY_WORK`) compiles optimized at once, but in the background thread
    # as every program the host can compute: compiling it on its second call stalled that call 350-420 ms (TF
    # eager: 20-30 ms per step of a 512x512x1024 MLP).
    monkeypatch.setattr(compile_tiers, "HEAVY_WORK", 1)  # every new program is heavy
    rng = np.random.default_rng(23)
    w = tf.Variable(rng.normal(size=(23, 17)).astype(np.float32))
    x = tf.constant(rng.normal(size=(6, 23)).astype(np.float32))

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(x @ w) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    tiered_up = compile_tiers.stats["programs_tiered_up"]
    threads = _compiling_threads(lambda: [step() for _ in range(3)])
    assert threads and set(threads) == {"tapeshim-compile"}, threads
    hosted = interpret.stats["interpreted_calls"]
    assert _compiling_threads(step) == []  # compiled with XLA's defaults once: no tier-up follows
    assert interpret.stats["interpreted_calls"] == hosted, "the call after the compile ran compiled"
    for _ in range(5):
        step()
    background_compile.wait()
    assert compile_tiers.stats["programs_tiered_up"] == tiered_up


def test_index_checks_raise_tfs_error_on_the_host_while_compiling_and_compiled():
    def body(tf):
        pick = _gather_function(tf)
        good, bad = tf.constant([5, 0, 2], tf.int32), tf.constant([1, 6, 0], tf.int32)
        outcomes = [pick(good), pick(good)]  # (the second submits the compile, if any)
        for _ in range(3):  # while compiling (computed on the host), then compiled
            try:
                pick(bad)
                outcomes.append("no error")
            except tf.errors.InvalidArgumentError:
                outcomes.append("InvalidArgumentError")
            outcomes.append(pick(good))
            background_compile.wait()
        return outcomes

    outcomes = check(body)
    assert [o for o in outcomes if isinstance(o, str)] == ["InvalidArgumentError"] * 3


class _Unlowerable:
    def lower(self):
        raise ValueError("no lowering")


def test_a_compile_that_fails_in_the_background_is_dropped():
    failed = background_compile.stats["failed"]
    pending = background_compile.submit(_Unlowerable(), ())
    pending.wait()
    assert pending.done() and pending.seconds is None
    assert background_compile.stats["failed"] == failed + 1


def test_a_tier_up_in_the_background_never_runs_side_effects_again(monkeypatch):
    monkeypatch.setattr(compile_tiers, "WORK_BUDGET", 2000)  # the gradient program tiers up after a few calls
    runs = []

    def side(value):
        runs.append(threading.current_thread().name)
        return value

    @tf.function
    def f(x):
        y = tf.py_function(side, [tf.stop_gradient(x)], tf.float32)
        return tf.reduce_sum(tf.tanh(x) * y)

    x = tf.Variable(np.linspace(0.0, 1.0, 64, dtype=np.float32))
    tiered = compile_tiers.stats["programs_tiered_up"]
    for _ in range(12):
        with tf.GradientTape() as tape:
            loss = f(x)
        tape.gradient(loss, x)
    background_compile.wait()
    assert compile_tiers.stats["programs_tiered_up"] > tiered
    assert runs == ["MainThread"] * 12


def test_calls_from_several_threads_at_once():
    failures = []
    for seed in range(20):
        program = runtime_checks.jit(lambda x, s=seed: x * (s + 1.0))
        x = jnp.asarray(np.full(4, seed, np.float32))
        program(x)  # the first call: on the host
        stop = threading.Event()

        def work(program=program, x=x, seed=seed, stop=stop):
            while not stop.is_set():
                try:
                    np.testing.assert_allclose(program(x), np.full(4, seed * (seed + 1.0)))
                except Exception as error:  # noqa: BLE001 - collected for the assertion below
                    failures.append(repr(error))
                    return

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        background_compile.wait()
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []


def test_a_call_inside_another_trace_submits_no_tracer():
    submitted = background_compile.stats["submitted"]
    failed = background_compile.stats["failed"]

    @tf.function
    def step(x):
        return tf.reduce_sum(tf.tanh(x) * 3.0)

    x = tf.constant(np.linspace(0.0, 1.0, 16, dtype=np.float32))
    expected = float(step(x))  # the first call: on the host
    assert float(jax.jit(lambda a: step(a))(x)) == pytest.approx(expected, rel=1e-6)  # the second, traced
    background_compile.wait()
    assert background_compile.stats["submitted"] == submitted
    assert background_compile.stats["failed"] == failed
    assert float(step(x)) == pytest.approx(expected, rel=1e-6)  # an eager call still submits the compile
    assert background_compile.stats["submitted"] == submitted + 1


def test_queued_compiles_keep_no_argument_alive():
    kernel = jax.jit(lambda v: v * 2)
    x = np.ones((1000, 1000), np.float32)
    alive = weakref.ref(x)
    background_compile.submit(kernel.trace(x), (x,))
    background_compile.wait()
    del x
    gc.collect()
    assert alive() is None
