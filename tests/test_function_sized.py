"""A `tapeshim.function` traced for every size compiles its first sizes from its symbolic jaxpr evaluated at
their sizes (`function_sized`), without exporting the program; later sizes compile from the export. Each
compiled call is compared with TF's."""

import threading
import time

import jax
import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf
from tapeshim._src import background_compile, function_sized, function_symbolic, symbolic_dims

# each size compiles on its second call (the ski rental's own tests: test_compile_tiers.py)
pytestmark = pytest.mark.usefixtures("compiles_on_repeat")


def _refuse_exports(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("exported")

    monkeypatch.setattr(function_symbolic.export, "export", refuse)


def _count_exports(monkeypatch):
    """A list that grows by one entry with every `jax.export` of a program, from now on."""
    exports = []
    export = function_symbolic.export.export

    def counted(*args, **kwargs):
        exports.append(1)
        return export(*args, **kwargs)

    monkeypatch.setattr(function_symbolic.export, "export", counted)
    return exports


def _doubled_total(tf):
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def total(x):
        return tf.reduce_sum(x * 2.0, axis=1)

    return total


def _on_threads(call, count, stagger=0.0):
    """`call()`'s results (or the repr of what it raised) on `count` threads started `stagger` seconds apart."""
    results: list = [None] * count

    def run(index):
        try:
            results[index] = call()
        except Exception as exc:  # noqa: BLE001 - the caller's assertion shows it
            results[index] = repr(exc)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
        time.sleep(stagger)
    for thread in threads:
        thread.join()
    return results


def _tf_doubled_total(*batches):
    """Real TF's `_doubled_total` of `ones` batches of these sizes, as lists."""
    total = _doubled_total(real_tf)
    return [total(real_tf.ones((n, 3))).numpy().tolist() for n in batches]


def _calls(tf, function, sizes, make):
    """Each size's calls: its first (on the host), its second (which submits its compile), and after the
    compile its third (compiled)."""
    results = []
    for n in sizes:
        results += [function(*make(n)) for _ in range(2)]
        background_compile.wait()
        results.append(function(*make(n)))
    return results


def _training_step(tf):
    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.normal(size=(4, 8)).astype(np.float32) * 0.3)
    w2 = tf.Variable(rng.normal(size=(8, 3)).astype(np.float32) * 0.3)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([None], tf.int32)])
    def step(x, labels):
        with tf.GradientTape() as tape:
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        g1, g2 = tape.gradient(loss, [w1, w2])
        w1.assign_sub(0.1 * g1)
        w2.assign_sub(0.1 * g2)
        return loss, tf.shape(x)[0] * 2

    def make(n):
        return (
            tf.constant(np.linspace(-1.0, 1.0, n * 4, dtype=np.float32).reshape(n, 4)),
            tf.constant(np.arange(n, dtype=np.int32) % 3),
        )

    return step, make, (w1, w2)


def test_the_first_sizes_compile_without_exporting_the_program(monkeypatch):
    _refuse_exports(monkeypatch)
    before = dict(function_symbolic.stats)
    compiled_before = background_compile.stats["compiled"]

    def body(tf):
        step, make, variables = _training_step(tf)
        results = _calls(tf, step, (5, 3, 7, 9), make)
        return results, [v.numpy() for v in variables], step.experimental_get_tracing_count()

    check(body)
    assert function_symbolic.stats["sized_compiles"] - before["sized_compiles"] == 4
    assert function_symbolic.stats["sized_fallbacks"] == before["sized_fallbacks"]
    assert function_symbolic.stats["symbolic_fallbacks"] == before["symbolic_fallbacks"]
    assert background_compile.stats["compiled"] - compiled_before >= 4  # (each size's compile, in the background)


def test_the_sizes_after_the_first_ones_compile_from_the_exported_program(monkeypatch):
    exports = _count_exports(monkeypatch)
    before = dict(function_symbolic.stats)

    def body(tf):
        step, make, variables = _training_step(tf)
        results = _calls(tf, step, (2, 3, 4, 5, 6, 7), make)
        return results, [v.numpy() for v in variables]

    check(body)
    assert function_symbolic.stats["sized_compiles"] - before["sized_compiles"] == 4
    assert len(exports) == 1  # (the fifth size's compile exported it; the sixth used that export)


def test_a_size_whose_evaluation_fails_compiles_from_the_exported_program(monkeypatch):
    def failing(closed, out_tree, sizes):
        def program(*args):
            raise NotImplementedError("an equation the evaluation cannot bind")

        return program

    monkeypatch.setattr(function_sized, "sized_program", failing)
    before = dict(function_symbolic.stats)

    def body(tf):
        step, make, variables = _training_step(tf)
        return _calls(tf, step, (5, 3), make), [v.numpy() for v in variables]

    check(body)
    assert function_symbolic.stats["sized_fallbacks"] - before["sized_fallbacks"] == 2


def test_conditions_loops_and_sizes_as_values_in_a_program_compiled_for_its_sizes():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
        def f(x):
            total = tf.reduce_sum(x)
            branch = tf.cond(total > 0.0, lambda: x * 2.0, lambda: x - 1.0)

            def grow(i, acc):
                return i + 1, acc + tf.reduce_mean(branch, axis=0)

            _, grown = tf.while_loop(lambda i, acc: i < tf.shape(x)[0], grow, [0, tf.zeros_like(x[0])])
            return grown / tf.cast(tf.size(x), tf.float32), tf.reshape(branch, [-1])

        def make(n):
            sign = 1.0 if n % 2 else -1.0
            return (tf.constant(sign * np.arange(n * 3, dtype=np.float32).reshape(n, 3) + 0.5),)

        return _calls(tf, f, (3, 4), make) + _calls(tf, f, (5,), lambda n: (tf.ones((n, 2)),))

    check(body)


def test_a_runtime_check_fails_in_a_program_compiled_for_its_sizes():
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.int32)])
        def pick(values, indices):
            return tf.gather(values, indices) * 2.0

        values = tf.constant([1.0, 2.0, 3.0, 4.0])
        _calls(tf, pick, (4,), lambda n: (values, tf.constant([3, 2, 1, 0])))  # compiled for these sizes
        return pick(values, tf.constant([0, 1, 9, 2]))

    raised = check_raises(body)  # (TF's message is a graph execution error's, with the trace's stack)
    assert raised.name == "InvalidArgumentError" and "indices[2] = 9 is not in [0, 4)" in raised.message


def test_a_nested_jaxpr_the_evaluation_does_not_reach_is_not_supported():
    def scanned(x):
        return jax.lax.scan(lambda carry, row: (carry + row, carry), x[0] * 0, x)[0]

    assert not function_sized.supported(jax.make_jaxpr(scanned)(np.ones((3, 2), np.float32)))
    assert function_sized.supported(jax.make_jaxpr(lambda x: jax.jit(jax.nn.relu)(x) * 2)(np.ones(3, np.float32)))


def test_a_dimension_with_a_power_is_evaluated_as_jaxs():
    # JAX writes `3*_batch^2`, a power binding tighter than the product; the host's and the compiled calls'
    # divisor of this mean is that dimension
    def body(tf):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def pairwise(x):
            differences = x[:, None, :] - x[None, :, :]
            return tf.reduce_mean(tf.square(differences)), tf.size(differences), tf.reshape(differences, [-1])

        return _calls(
            tf, pairwise, (4, 6), lambda n: (tf.constant(np.linspace(0, 1, n * 3, dtype=np.float32).reshape(n, 3)),)
        )

    check(body)
    (batch,) = jax.export.symbolic_shape("_batch")
    for dim, expected in ((3 * batch * batch, 48), (batch**3 + 3 * batch, 76), (2 * batch**2 + batch, 36)):
        assert symbolic_dims.evaluate(dim, {"_batch": 4}) == expected, str(dim)


def test_a_resolver_evaluates_dimensions_made_while_it_resolves_and_equal_ones():
    # the resolver remembers what it evaluated by the dimension's identity (each entry holds its dimension, so
    # no id is reused meanwhile): dimensions made and dropped one after another, and equal dimensions that are
    # other objects, each get their own size
    (batch,) = jax.export.symbolic_shape("_batch")
    resolve = symbolic_dims.resolver({"_batch": 5})
    assert [resolve(2 * batch + k) for k in range(40)] == [10 + k for k in range(40)]
    assert [resolve((2 * batch + k, k)) for k in range(40)] == [(10 + k, k) for k in range(40)]
    (again,) = jax.export.symbolic_shape("_batch")  # equal to `batch`, another object
    assert resolve([batch, again, 3 * batch]) == [5, 5, 15]


def test_only_the_sizes_that_compile_use_up_the_evaluated_sizes(monkeypatch):
    _refuse_exports(monkeypatch)
    before = dict(function_symbolic.stats)

    def body(tf):
        step, make, variables = _training_step(tf)
        once = [step(*make(n)) for n in (2, 3, 4, 5, 6, 7)]  # each on the host, none compiled
        return once + _calls(tf, step, (8,), make), [v.numpy() for v in variables]

    check(body)
    assert function_symbolic.stats["sized_compiles"] - before["sized_compiles"] == 1


def test_calls_on_several_threads_fall_back_together_when_the_evaluation_fails(monkeypatch):
    def failing(closed, out_tree, sizes):
        def program(*args):
            time.sleep(0.2)  # (a slow trace: the other threads' calls start meanwhile)
            raise NotImplementedError("an equation the evaluation cannot bind")

        return program

    monkeypatch.setattr(function_sized, "sized_program", failing)
    before = dict(function_symbolic.stats)
    total = _doubled_total(tapeshim)
    x = tapeshim.ones((4, 3))
    total(x), total(x)  # the host, then its compile submitted (and failing) in the background
    background_compile.wait()
    results = _on_threads(lambda: total(x).numpy().tolist(), 4)
    assert results == _tf_doubled_total(4, 4, 4, 4)
    assert function_symbolic.stats["sized_fallbacks"] - before["sized_fallbacks"] == 1


def test_a_size_compiled_on_its_call_and_dropped_from_the_tracked_sizes_keeps_its_program(monkeypatch):
    # with background compiles off, the size compiles on its second call; once 64 other sizes (here one) have
    # dropped its entry, it comes back to the program it compiled, not to an export compiling it again
    exports = _count_exports(monkeypatch)
    monkeypatch.setattr(function_symbolic.ExportedProgram, "_SIGNATURES", 1)
    sizes = (4, 4, 4, 5, 4)
    background_compile.set_enabled(False)
    try:
        total = _doubled_total(tapeshim)
        values = [total(tapeshim.ones((n, 3))).numpy().tolist() for n in sizes]
    finally:
        background_compile.set_enabled(True)
    assert values == _tf_doubled_total(*sizes)
    assert exports == []


def test_threads_making_a_sizes_first_compiled_calls_at_once_compile_it_once(monkeypatch):
    sized_program = function_sized.sized_program

    def slow(*args):
        time.sleep(0.2)  # (the other thread's call comes meanwhile)
        return sized_program(*args)

    exports = _count_exports(monkeypatch)
    monkeypatch.setattr(function_sized, "sized_program", slow)
    monkeypatch.setattr(function_symbolic.interpret, "enabled", lambda: False)  # (first calls compile, as on a GPU)
    total = _doubled_total(tapeshim)
    total(tapeshim.ones((2, 3)))  # (traced, and another size compiled: the threads find the trace made)
    exports.clear()
    before = dict(function_symbolic.stats)
    x = tapeshim.ones((4, 3))
    results = _on_threads(lambda: total(x).numpy().tolist(), 2, stagger=0.05)
    assert results == _tf_doubled_total(4, 4)
    assert exports == [] and function_symbolic.stats["sized_compiles"] - before["sized_compiles"] == 1


def _accumulating_steps(tf, width):
    """A variable that a function traced for every size updates and a function traced for its sizes reads."""
    v = tf.Variable(np.linspace(0.5, 1.5, width, dtype=np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, width], tf.float32)])
    def add_rows(x):
        v.assign_add(tf.reduce_sum(x, axis=0) * 0.125)
        return tf.reduce_sum(x * v)

    @tf.function
    def halve():
        v.assign(v * 0.5)
        return tf.reduce_sum(v)

    return v, add_rows, halve


@pytest.mark.parametrize("evaluated_sizes, width", [(4, 3), (0, 5)], ids=["evaluated", "exported"])
def test_a_compiled_size_leaves_uncommitted_values_that_other_programs_take_without_compiling_again(
    monkeypatch, evaluated_sizes, width
):
    # JAX compiles a program again for each pattern of committed arguments: the variables a sized program
    # updated (its explicit shardings commit its outputs) made the programs that read them compile again, on
    # the calling thread (a Keras `fit`'s full-batch step after its smaller last batch, 0.5-0.8 s each).
    from oracle import program_lowerings

    monkeypatch.setattr(function_symbolic.ExportedProgram, "SIZED_COMPILES", evaluated_sizes)

    def run(tf, settle):
        v, add_rows, halve = _accumulating_steps(tf, width)  # (a width of its own: programs of their own)
        values = []
        for _ in range(3):  # each program: computed on the host, then compiled, then its compiled call
            values.append(float(halve()))
            settle()
        for n in (4, 4, 4, 5, 5, 5):
            values.append(float(add_rows(tf.ones((n, width)))))
            settle()
        return v, halve, values

    v, halve, values = run(tapeshim, background_compile.wait)
    _, _, expected = run(real_tf, lambda: None)
    np.testing.assert_allclose(values, expected, rtol=1e-6)
    total, compiles = float(np.sum(v.numpy())), len(program_lowerings())
    np.testing.assert_allclose(float(halve()), total * 0.5, rtol=1e-6)
    assert len(program_lowerings()) == compiles, "the compiled halve() took the sized program's outputs as they were"
