"""The lazy tape's runtime promises: compile once, per-thread tapes, bounded memory and caches."""

import gc
import threading
import weakref

import pytest

import tapeshim as tf
from oracle import backend_compiles, mlp_training_step, program_lowerings
from tapeshim import experimental

_compiles = backend_compiles()


def _mlp():
    step = mlp_training_step(tf, 64, (32, 64, 10), scale=0.1)
    return lambda: step()[0]


def test_ops_inside_a_tape_are_lazy_until_forced():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = x * x
        z = tf.reduce_sum(y)
    assert y._value is None and z._value is None  # recorded, not run
    assert y.shape == [2] and z.dtype == tf.float32  # known at once
    tape.gradient(z, x)
    assert z._value is not None  # the gradient program filled the target in
    assert float(z) == 5.0


def test_shape_errors_raise_at_the_op_inside_a_tape():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
            x + tf.constant([1.0, 2.0, 3.0])
        y = x * 2
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 2.0]


def test_steady_training_loop_compiles_once():
    step = _mlp()
    warm = len(program_lowerings())  # (a program compiled before may come from the disk cache: it lowers)
    for _ in range(200):  # the host computes its first steps (`compile_tiers.calls_before_compile`)
        step()
    assert len(program_lowerings()) > warm, "the warm-up compiled the step"
    experimental.reset_compile_stats()
    before = len(_compiles)
    losses = [step() for _ in range(1000)]
    assert len(_compiles) == before, "a steady loop compiled again"
    stats = experimental.compile_stats()
    assert stats["programs_compiled"] == 0 and stats["eager_kernels"] == 0
    assert stats["program_cache_hits"] == 1000
    assert float(losses[-1]) < float(losses[0])


def test_loop_with_new_leaf_values_reuses_the_program():
    w = tf.Variable([1.0, 2.0])
    for i in range(3):
        with tf.GradientTape() as t:
            y = tf.reduce_sum(w * tf.constant([float(i), 1.0]))
        t.gradient(y, w)
    experimental.reset_compile_stats()
    for i in range(20):
        with tf.GradientTape() as t:
            y = tf.reduce_sum(w * tf.constant([float(i), 1.0]))
        g = t.gradient(y, w)
        assert g.numpy().tolist() == [float(i), 1.0]
    assert experimental.compile_stats()["programs_compiled"] == 0


def test_tapes_are_per_thread():
    x = tf.constant(3.0)
    other_result = {}
    started, computed = threading.Event(), threading.Event()

    def other_thread():
        started.wait()
        other_result["y"] = x * x  # runs while the main thread's tape is open
        computed.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        started.set()
        computed.wait()
        mine = x * x
    thread.join()
    assert tape.gradient(other_result["y"], x) is None
    assert float(tape.gradient(mine, x)) == 6.0


def test_concurrent_training_threads_get_their_own_gradients():
    results = {}

    def train(seed):
        v = tf.Variable(float(seed))
        for _ in range(50):
            with tf.GradientTape() as t:
                y = v * v
            g = t.gradient(y, v)
            results.setdefault(seed, []).append(float(g) == 2 * float(v))
            v.assign_sub(0.01 * g)

    threads = [threading.Thread(target=train, args=(s,)) for s in (1, 2, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(all(r) and len(r) == 50 for r in results.values())


def test_one_shot_tape_releases_what_it_holds():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        hidden = v * 3.0
        y = tf.reduce_sum(hidden * hidden)
    ref = weakref.ref(hidden)
    del hidden
    tape.gradient(y, v)
    assert not tape._tracked and not tape._var_reads
    del y
    gc.collect()
    assert ref() is None


def test_program_cache_is_bounded_and_evicts_least_recent():
    experimental.set_program_cache_size(4)
    try:
        experimental.reset_compile_stats()
        v = tf.Variable(1.0)
        for n in range(1, 7):  # six structurally different programs, each seen twice (compiled the second time)
            for _ in range(2):
                with tf.GradientTape() as t:
                    y = v
                    for _ in range(n):
                        y = y * 2.0
                t.gradient(y, v)
        stats = experimental.compile_stats()
        assert stats["programs_compiled"] == 6 and stats["programs_evicted"] >= 2
        assert stats["programs_cached"] == 4
    finally:
        experimental.set_program_cache_size(512)


def _rss_mib():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_ten_thousand_steps_keep_flat_memory():
    step = _mlp()
    tiered_up = experimental.compile_stats()["programs_tiered_up"]
    for _ in range(5000):  # past the step's optimized compile (compile_tiers), whose XLA buffers stay
        step()
        if experimental.compile_stats()["programs_tiered_up"] > tiered_up:
            break
    for _ in range(200):
        step()
    gc.collect()
    start = _rss_mib()
    for _ in range(8000):
        step()
    gc.collect()
    growth = _rss_mib() - start
    assert growth < 16, f"RSS grew {growth:.1f} MiB over 8,000 steps"
