"""The host interpreter's plans (`interpret_plan.HostPlan`): each value computed once, results nothing reads
not computed.

A gradient traced inside a `tapeshim.function` replays the forward its caller traced already: the program's
jaxpr holds the forward twice over the same inputs, and XLA's compile merges the two. The plan computes each
equation once and drops the ones no output depends on; the values stay XLA's (the compiled program's) and,
through tapeshim, TF's.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

from oracle import check, interpreted_and_compiled
from tapeshim._src import interpret, interpret_plan

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

rng = np.random.default_rng(7)
X = rng.normal(size=(16, 8)).astype(np.float32)
W = rng.normal(size=(8, 5)).astype(np.float32)
LABELS = rng.integers(0, 5, 16).astype(np.int32)


def _loss(w, x, labels):
    logits = x @ w
    logits = logits - jax.scipy.special.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.take_along_axis(logits, labels[:, None], 1))


def _step(w, x, labels):
    """A training step as a `tapeshim.function` traces it: the loss, then its gradient from the forward again."""
    loss = _loss(w, x, labels)
    return loss, w - 0.1 * jax.grad(_loss)(w + 0.0, x, labels)


def _names(plan):
    """The names of the plan's steps' rules (a counted product's rule is a `functools.partial`)."""
    runs = [step[0] for step in plan.steps]
    return [getattr(run, "__name__", getattr(getattr(run, "func", None), "__name__", "")) for run in runs]


def test_a_forward_traced_twice_is_computed_once():
    closed = jax.make_jaxpr(_step)(W, X, LABELS)
    plan = interpret_plan.HostPlan(closed)
    products = [eqn for eqn in closed.jaxpr.eqns if eqn.primitive.name == "dot_general"]
    assert len(products) == 3, "the forward's product twice, and the gradient's"
    assert _names(plan).count("_counted_known") == 2, "the plan computes the forward's product once"
    assert len(plan.steps) < len(closed.jaxpr.eqns) - 10
    assert plan.cost >= len(closed.jaxpr.eqns), "the compile's price still counts every equation (calls' included)"
    assert plan.run_cost == len(plan.steps), "a host call runs the steps (the rental's rent counts them)"
    prepared = interpret.prepare(jax.jit(_step).trace(W, X, LABELS))
    assert (prepared.equations, prepared.host_equations) == (plan.cost, plan.run_cost)
    interpreted, compiled = interpreted_and_compiled(_step, (W, X, LABELS))
    for got, want in zip(interpreted, compiled):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_branch_computed_once_still_counts_its_equations():
    def wave(a):
        return jnp.sin(a) * 2.0 + jnp.cos(a)

    def same(a):
        return a

    def branches(x):
        return jax.lax.cond(x[0] > 0, wave, same, x), jax.lax.cond(x[0] > 0, wave, same, x)

    closed = jax.make_jaxpr(branches)(X[0])
    conds = [eqn for eqn in closed.jaxpr.eqns if eqn.primitive.name == "cond"]
    assert conds[0].params["branches"] == conds[1].params["branches"], "JAX traces a function's branch once"
    plan = interpret_plan.HostPlan(closed)
    assert _names(plan).count("_cond") == 1
    (branch_cost,) = {max(interpret_plan.HostPlan(b).cost for b in eqn.params["branches"]) for eqn in conds}
    assert plan.cost >= 2 * (branch_cost + 1), "the compile lowers both"
    assert plan.run_cost < plan.cost
    for x in (X[0], -X[0]):
        interpreted, compiled = interpreted_and_compiled(branches, (x,))
        for got, want in zip(interpreted, compiled):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_results_nothing_reads_are_not_computed_but_checks_are():
    def program(x):
        unread = jnp.exp(x) * 2.0  # (read by nothing: its equations stay in the jaxpr)
        del unread
        checkify.check(jnp.all(x < 100.0), "x too large")  # (its result is read by nothing either)
        return jnp.tanh(x)

    traced = jax.jit(program).trace(X)
    names = [eqn.primitive.name for eqn in traced.jaxpr.jaxpr.eqns]
    assert "exp" in names and "check" in names
    plan = interpret_plan.HostPlan(traced.jaxpr)
    assert "exp" not in _names(plan) and "mul" not in _names(plan)
    np.testing.assert_allclose(interpret.run(traced, (X,), checks=True), np.tanh(X), rtol=1e-6)
    large = X * 1000.0
    with pytest.raises(interpret.CheckFailed, match="x too large"):
        interpret.run(jax.jit(program).trace(large), (large,), checks=True)


def test_literals_of_equal_bits_are_shared_and_signed_zeros_are_not():
    def program(x):
        return x + 0.0, x * -0.0, x * 0.0, (x * 2.0) * 2.0

    x = np.array([1.0, -1.0, 0.0, -0.0], np.float32)
    interpreted, compiled = interpreted_and_compiled(program, (x,))
    for got, want in zip(interpreted, compiled):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_equations_over_other_inputs_or_parameters_stay_apart():
    def program(x, y):
        return jnp.sum(x, axis=0), jnp.sum(x, axis=1), jnp.sum(y, axis=0), jnp.tanh(x), jnp.tanh(y)

    y = X + 1.0
    plan = interpret_plan.HostPlan(jax.make_jaxpr(program)(X, y))
    assert len(plan.steps) == 5
    interpreted, compiled = interpreted_and_compiled(program, (X, y))
    for got, want in zip(interpreted, compiled):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_function_training_step_on_the_host_gives_tfs_values():
    # the benchmark's `function` program: its calls run on the host for hundreds of calls (its compile, with
    # XLA's defaults, is dear): each is the plan above
    def run(tf):
        w = tf.Variable(W)

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x @ w))
            w.assign_sub(0.1 * tape.gradient(loss, w))
            return loss

        x, y = tf.constant(X), tf.constant(LABELS)
        losses = [step(x, y) for _ in range(5)]
        return losses, w

    check(run, rtol=1e-5)
