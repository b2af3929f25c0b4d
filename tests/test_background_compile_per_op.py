"""Off the CPU, a repeating structure compiles in the background while the per-op tier serves it.

On a GPU the host interpreter cannot compute a program's first calls (`interpret.enabled` is False there), and
XLA's compiles take far longer than on the CPU: an H100 took about 9 s for a 200-op chain's gradient program,
which the engine used to compile on the call that chose it. Now such a call submits the compile to the background
thread and runs per op, as the structure's earlier calls did, until the compile is done
(`runtime_checks.NOT_READY`). These tests take the interpreter away on the CPU to run that path here.
"""

import threading

import jax
import numpy as np
import pytest

import tapeshim as tf
from oracle import check
from tapeshim._src import background_compile, interpret, replay, replay_eager

_compile_threads: list[str] = []


def _log_thread(event: str, duration_secs: float, **kwargs: object) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _compile_threads.append(threading.current_thread().name)


jax.monitoring.register_event_duration_secs_listener(_log_thread)


class _HeldCompile:
    """Stands in for `background_compile.submit`: holds the compiles submitted until `release` compiles them."""

    def __init__(self) -> None:
        self.submitted: list = []

    def submit(self, traced, args):
        pending = background_compile.Pending()
        self.submitted.append((traced, pending))
        return pending

    def release(self) -> None:
        for traced, pending in self.submitted:
            traced.lower().compile()
            pending.seconds = 0.0
            pending._done.set()
        self.submitted.clear()


@pytest.fixture
def off_the_host(monkeypatch):
    """The engine as on a GPU: no host interpreter; a structure's compile is paid for from its second sighting."""
    monkeypatch.setattr(interpret, "enabled", lambda: False)
    monkeypatch.setitem(replay.compile_cost, "seconds_per_node", 0.0)


def _chain(tf, x, links):
    """`4 * links` ops recorded on `x` (over `replay.SMALL_PLAN` nodes from 17 links)."""
    y = x
    for _ in range(links):
        y = tf.tanh(tf.sin(y) * 1.01) + 0.01
    return y


def _chain_step(tf, links=30):
    """A gradient over a chain of `4 * links` ops."""
    x = tf.constant(np.linspace(-1.0, 1.0, 16, dtype=np.float32))

    def step():
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(_chain(tf, x, links))
        return loss, tape.gradient(loss, x)

    return step


@pytest.mark.usefixtures("off_the_host")
def test_the_per_op_tier_serves_a_structure_while_its_compile_is_held(monkeypatch):
    held = _HeldCompile()
    monkeypatch.setattr(background_compile, "submit", held.submit)
    step = _chain_step(tf)
    step()  # the first sighting: per op
    assert not held.submitted
    before = len(_compile_threads)
    runs = replay_eager.stats["per_op_runs"]
    results = [step() for _ in range(3)]  # the second sighting submits the compile; all three run per op
    assert len(held.submitted) == 1, "one compile, submitted once"
    assert len(_compile_threads) == before, "nothing compiled on the calling thread"
    assert replay_eager.stats["per_op_runs"] > runs
    held.release()
    runs = replay_eager.stats["per_op_runs"]
    compiled = step()
    assert replay_eager.stats["per_op_runs"] == runs, "once compiled, the program serves"
    for value, expected in zip(compiled, results[-1]):
        np.testing.assert_allclose(value.numpy(), expected.numpy(), rtol=1e-5)


@pytest.mark.usefixtures("off_the_host")
def test_the_compile_runs_in_the_background_thread():
    step = _chain_step(tf, links=25)
    step()
    background_compile.wait()
    before = len(_compile_threads)
    step()  # submits the compile
    background_compile.wait()
    threads = _compile_threads[before:]
    assert threads and set(threads) == {"tapeshim-compile"}, threads
    before = len(_compile_threads)
    step()
    assert len(_compile_threads) == before, "compiled: found in JAX's cache"


@pytest.mark.usefixtures("off_the_host")
def test_values_are_tfs_per_op_while_compiling_and_compiled():
    def body(tf):
        step = _chain_step(tf, links=20)
        return [step() for _ in range(5)]

    check(body, rtol=2e-5)


@pytest.mark.usefixtures("off_the_host")
def test_a_forced_structure_runs_per_op_while_it_compiles(monkeypatch):
    held = _HeldCompile()
    monkeypatch.setattr(background_compile, "submit", held.submit)

    def body(tf):
        x = tf.constant(np.linspace(-2.0, 2.0, 8, dtype=np.float32))
        values = []
        for _ in range(4):
            with tf.GradientTape() as tape:  # (under a tape the forward is lazy until read)
                tape.watch(x)
                y = x
                for _ in range(25):
                    y = tf.sin(y) * 1.5 + tf.cos(y)
                values.append(y.numpy())  # read inside the tape: the forward's own program
        return values

    check(body, rtol=2e-5)
    assert held.submitted, "the repeated forward's compile was submitted"
    held.release()


@pytest.mark.usefixtures("off_the_host")
def test_a_jacobian_compiles_on_its_call(monkeypatch):
    held = _HeldCompile()
    monkeypatch.setattr(background_compile, "submit", held.submit)

    def body(tf):
        x = tf.constant(np.linspace(-1.0, 1.0, 3, dtype=np.float32))
        out = []
        for _ in range(3):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = _chain(tf, x, 20)
            out.append(tape.jacobian(y, x))
        return out

    check(body, rtol=2e-5)
    assert not held.submitted, "a jacobian has no per-op form: it compiles on the call that needs it"


@pytest.mark.usefixtures("off_the_host")
def test_a_persistent_tape_keeps_its_tier_between_requests(monkeypatch):
    # The per-op tier and the compiled program round differently: a persistent tape asked twice (with output
    # gradients, which no answer cache serves) waits for the compile under way instead of switching tiers
    held = _HeldCompile()
    monkeypatch.setattr(background_compile, "submit", held.submit)
    seed = tf.constant(np.linspace(0.3, 2.0, 16, dtype=np.float32))
    x = tf.constant(np.linspace(-1.0, 1.0, 16, dtype=np.float32))

    def taped(persistent):
        with tf.GradientTape(persistent=persistent) as tape:
            tape.watch(x)
            y = _chain(tf, x, 30)
        return tape, y

    for _ in range(2):  # the structure's second sighting submits its compile, held
        tape, y = taped(False)
        tape.gradient(y, x, output_gradients=seed)
    assert len(held.submitted) == 1
    tape, y = taped(True)
    releasing = threading.Timer(0.2, held.release)  # (the compile finishes while the request waits for it)
    releasing.start()
    runs = replay_eager.stats["per_op_runs"]
    first = tape.gradient(y, x, output_gradients=seed).numpy()
    releasing.join()
    second = tape.gradient(y, x, output_gradients=seed).numpy()
    assert replay_eager.stats["per_op_runs"] == runs, "both requests ran the compiled program"
    np.testing.assert_array_equal(second, first)
