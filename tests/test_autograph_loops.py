"""AutoGraph's loops and branches in `tapeshim.function` against TF's: forward-mode differentiation
through loops whose trip count is a tensor, branches giving a variable different shapes, `for x in
dataset` as one loop, and `dynamic_size` TensorArrays in loops with a tensor bound."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_printed, check_raises


# -- forward mode through tensor-bound loops ----------------------------------------------
def _loops(tf):
    @tf.function
    def f(x, n):
        y = x
        for i in tf.range(n):
            y = tf.sin(y) * 1.5 + tf.cast(i, tf.float32)
        k = tf.constant(0)
        z = tf.reduce_sum(y)
        while k < n:
            z = z * z * 0.5 + 0.1
            k += 1
        return y, z

    return f


def test_forward_accumulator_through_loops_with_a_tensor_bound():
    def body(tf):
        f = _loops(tf)
        x = tf.constant([0.3, 0.7])
        results = []
        for n in (0, 1, 3):
            with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0])) as acc:
                y, z = f(x, tf.constant(n))
            results.append((y, z, acc.jvp(y), acc.jvp(z)))
        return results

    check(body)


def test_forward_accumulator_inside_the_function_over_a_captured_tensor():
    def body(tf):
        @tf.function
        def f(x, s, n):
            with tf.autodiff.ForwardAccumulator(s, tf.constant(1.0)) as acc:
                y = x
                for _ in tf.range(n):
                    y = y * s + 1.0
            return y, acc.jvp(y)

        return f(tf.constant([1.0, 2.0]), tf.constant(0.5), tf.constant(3))

    check(body)


def test_reverse_mode_and_jacobian_still_flow_through_the_loops():
    def body(tf):
        f = _loops(tf)
        x = tf.constant([0.3, 0.7])
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y, z = f(x, tf.constant(3))
        return tape.gradient(z, x), tape.jacobian(y, x)

    check(body)


# -- branches giving a variable different shapes --------------------------------------------
def test_variable_with_different_shapes_not_used_after_the_if_is_fine():
    def body(tf):
        @tf.function
        def f(x):
            if x > 0:
                _scratch = tf.ones([2])
                _kind = 1
            else:
                _scratch = tf.ones([3])
                _kind = 2.5
            return x + 1.0

        @tf.function
        def g(x):
            if x > 0:
                y = tf.ones([2]) * x
                _unused = tf.zeros([4])
            else:
                y = tf.ones([2])
                _unused = 1
            return y

        return f(tf.constant(1.0)), f(tf.constant(-1.0)), g(tf.constant(3.0)), g(tf.constant(-3.0))

    check(body)


@pytest.mark.parametrize("case", ["dims", "rank", "return"])
def test_variable_with_different_shapes_used_after_the_if(case):
    """TF gives the result an unknown shape; XLA cannot: tapeshim runs the function eagerly, with TF's values."""

    def body(tf):
        @tf.function
        def f(x):
            if case == "return":
                if x > 0:
                    return tf.ones([2]) * x
                return tf.ones([3]) * x
            if x > 0:
                y = tf.ones([2]) * x
            else:
                y = tf.ones([2, 2]) * x if case == "rank" else tf.ones([3]) * x
            return tf.reduce_sum(y), tf.shape(y)

        x = tf.constant(1.5)
        with tf.GradientTape() as tape:
            tape.watch(x)
            first = f(x)
            second = f(-x)
            total = tf.reduce_sum(tf.nest.flatten(first)[0]) + tf.reduce_sum(tf.nest.flatten(second)[0])
        return first, second, f(tf.constant(2.0)), tape.gradient(total, x), f.experimental_get_tracing_count()

    check(body)


def test_loop_variable_changing_shape_raises_tf_error():
    def body(tf):
        @tf.function
        def f(n):
            y = tf.ones([1])
            for _ in tf.range(n):
                y = tf.concat([y, y], 0)
            return y

        return f(tf.constant(2))

    check_raises(body)


# -- for x in dataset: one loop, the dataset read on every call ----------------------------
def _data(tf, n, batch):
    return tf.data.Dataset.from_tensor_slices(
        (np.arange(n, dtype=np.float32), np.arange(n, dtype=np.float32) * 2)
    ).batch(batch)


def test_for_over_a_dataset_is_one_loop_with_break_and_prints(capfd):
    def body(tf):
        traces = []

        @tf.function
        def f(ds, limit):
            total = tf.constant(0.0)
            steps = tf.constant(0)
            for x, y in ds:
                traces.append("body")
                tf.print("batch", tf.shape(x)[0], tf.reduce_sum(y))
                total += tf.reduce_sum(x * 2.0 + y)
                steps += 1
                if total > limit:
                    break
            return total, steps

        ds = _data(tf, 24, 4)
        return (
            [f(ds, tf.constant(1e9)), f(ds, tf.constant(50.0)), f(ds, tf.constant(1e9))],
            traces,
            f.experimental_get_tracing_count(),
        )

    check_printed(body, capfd)


def test_for_over_a_dataset_with_a_last_smaller_batch_and_a_new_dataset_argument():
    def body(tf):
        @tf.function
        def f(ds):
            total = tf.constant(0.0)
            count = tf.constant(0)
            for x, y in ds:
                total += tf.reduce_sum(x * y)
                count += tf.shape(x)[0]
            return total, count

        return f(_data(tf, 10, 4)), f(_data(tf, 10, 4)), f(_data(tf, 7, 4)), f.experimental_get_tracing_count()

    check(body)


def test_for_over_a_dataset_made_inside_the_function_and_nested_structures():
    def body(tf):
        @tf.function
        def f(scale):
            ds = tf.data.Dataset.range(10).map(lambda i: {"a": tf.cast(i, tf.float32), "b": i * 2}).batch(3)
            out = tf.constant(0.0)
            for element in ds:
                out += tf.reduce_sum(element["a"] * scale) + tf.cast(tf.reduce_sum(element["b"]), tf.float32)
            return out

        return f(tf.constant(2.0)), f(tf.constant(3.0))

    check(body)


def test_for_over_a_dataset_of_windows_iterates_each_window():
    def body(tf):
        ds = tf.data.Dataset.range(7).window(3)
        tens = tf.data.Dataset.range(5).map(lambda x: x * 10)
        pairs = tf.data.Dataset.zip((tf.data.Dataset.range(5), tens)).window(2, shift=1)

        @tf.function
        def squares():
            total = tf.constant(0, tf.int64)
            for window in ds:
                for x in window:
                    total += x * x
            return total

        @tf.function
        def products():
            total = tf.constant(0, tf.int64)
            for left, right in pairs:
                for a, b in tf.data.Dataset.zip((left, right)):
                    total += a * b
            return total

        return squares(), products(), squares()

    check(body)


def test_for_over_a_dataset_reshuffles_on_every_call():
    def body(tf):
        @tf.function
        def order(ds):
            out = tf.TensorArray(tf.int64, size=8)
            i = 0
            for x in ds:
                out = out.write(i, x)
                i += 1
            return out.stack()

        ds = tf.data.Dataset.range(8).shuffle(8, seed=3)
        first, second = order(ds).numpy(), order(ds).numpy()
        return sorted(first) == list(range(8)), sorted(second) == list(range(8)), list(first) != list(second)

    check(body)


def test_program_of_a_dataset_loop_does_not_grow_with_the_dataset():
    traces = []

    @tapeshim.function
    def f(ds):
        total = tapeshim.constant(0.0)
        for x, y in ds:
            traces.append(1)
            total += tapeshim.reduce_sum(x + y)
        return total

    small, large = _data(tapeshim, 16, 4), _data(tapeshim, 4000, 4)
    assert len(f.as_jaxpr(large).jaxpr.eqns) == len(f.as_jaxpr(small).jaxpr.eqns)
    shapes = [tuple(v.aval.shape) for v in f.as_jaxpr(large).jaxpr.invars]
    assert shapes.count((1000, 4)) == 2 and not [s for s in shapes if s and s != (1000, 4)]  # the data, stacked
    assert float(f(large)) == float(np.arange(4000).sum() * 3)
    assert len(traces) == 2  # once per trace (one per dataset object), not per element


# -- dynamic_size TensorArrays in loops whose trip count is a tensor -------------------------
def test_dynamic_tensor_array_in_a_tensor_bound_while_loop():
    def body(tf):
        @tf.function
        def f(n, x):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            k = tf.constant(0)
            h = x
            while k < n:
                h = tf.tanh(h * 1.5 + tf.cast(k, tf.float32))
                ta = ta.write(k, h)
                k += 1
            out = ta.stack()
            return out, ta.size(), tf.reduce_sum(out, 0), ta.read(0)

        x = tf.constant([0.1, 0.2])
        return [f(tf.constant(n), x) for n in (3, 5, 3, 1, 5)], f.experimental_get_tracing_count()

    check(body)


def test_dynamic_tensor_array_gradients_and_elements_written_before_the_loop():
    def body(tf):
        @tf.function
        def f(n, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                ta = ta.write(0, x)
                h = x
                for i in tf.range(n):
                    h = h * x + 1.0
                    ta = ta.write(i + 1, h)
                stacked = ta.stack()
                loss = tf.reduce_sum(stacked * stacked) + tf.reduce_sum(ta.read(1))
            return stacked, loss, tape.gradient(loss, x)

        x = tf.constant([0.5, -0.25])
        return f(tf.constant(3), x), f(tf.constant(1), x), f(tf.constant(4), x)

    check(body)


def test_dynamic_tensor_array_in_a_tensor_loop_with_tf_print_is_refused():
    import tapeshim as tf

    @tf.function
    def f(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            tf.print(i)
            ta = ta.write(i, tf.cast(i, tf.float32))
        return ta.stack()

    with pytest.raises(NotImplementedError, match="dynamic_size TensorArray"):
        f(tf.constant(2))

    @tf.function
    def episode(n):  # (TF's Actor-Critic tutorial: an environment step through numpy_function, then `break`)
        rewards = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        for t in tf.range(n):
            reward, done = tf.numpy_function(lambda a: (a, a >= 2), [t], [tf.int32, tf.bool])
            rewards = rewards.write(t, reward)
            if done:
                break
        return rewards.stack()

    with pytest.raises(NotImplementedError, match="tf.numpy_function"):
        episode(tf.constant(5))


# -- for x in iterator ------------------------------------------------------------------------
def test_for_over_an_iterator_argument_reads_what_remains_on_every_call():
    def body(tf):
        @tf.function
        def f(it):
            total = tf.constant(0.0)
            n = tf.constant(0)
            for x in it:
                total += tf.reduce_sum(x)
                n += 1
            return total, n

        ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(4)
        it = iter(ds)
        first, second = f(it), f(it)  # the first call reads the iterator to its end
        partly = iter(ds)
        next(partly)
        return first, second, f(partly), f.experimental_get_tracing_count()

    check(body)


def test_for_over_an_iterator_made_in_the_function():
    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(4)

        @tf.function
        def f():
            it = iter(ds)
            total = tf.reduce_sum(next(it))
            for x in it:
                total += tf.reduce_sum(x) * 2.0
            return total

        @tf.function
        def g():
            total = tf.constant(0.0)
            for x in iter(ds):
                total += tf.reduce_sum(x)
            return total

        return f(), f(), g(), g()

    check(body)


def _summed_until(tf, amount):
    """A function summing `amount(x)` over an iterator's elements until the total passes a limit."""

    @tf.function
    def until(it, limit):
        total = tf.constant(0.0)
        count = tf.constant(0)
        for x in it:
            if total > limit:
                break
            total += amount(x)
            count += 1
        return total, count

    return until


def test_for_over_an_iterator_with_a_break_leaves_the_rest_for_the_next_call():
    # one tensor loop pulling an element per iteration, as TF's: the element the break happens at is used up
    def body(tf):
        until = _summed_until(tf, lambda x: x)

        @tf.function
        def first_three(it):
            total = tf.constant(0.0)
            k = 0  # a Python counter: TF's loop carries it as a tensor
            for x in it:
                total += x
                k += 1
                if k == 3:
                    break
            return total

        it = iter(tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)))
        calls = [until(it, tf.constant(5.0)), until(it, tf.constant(5.0)), until(it, tf.constant(100.0))]
        other = iter(tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)))
        return calls, next(it, None), first_three(other), first_three(other), until.experimental_get_tracing_count()

    check(body)


def test_for_over_an_iterator_the_function_pulled_from_is_one_loop():
    def body(tf):
        @tf.function
        def rest(it):
            first = next(it)
            total = first * 100.0
            for x in it:
                total += x
            return total

        it = iter(tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)))
        return rest(it), next(it, "empty")

    check(body)


def test_pulls_after_an_iterator_loop_with_a_break_take_the_elements_after_it():
    # a `next` after the loop takes the element after the loop's, as TF's; an exhausted iterator gives an
    # empty optional, and `get_next` raises TF's OutOfRangeError
    def body(tf):
        @tf.function
        def first_then_next(it):
            first = tf.constant(-1)
            for x in it:
                first = x
                break
            return first, next(it)

        @tf.function
        def drain_then_optional(it):
            total = tf.constant(0)
            for x in it:
                total += x
                if total > 100:
                    break
            optional = it.get_next_as_optional()
            return total, tf.cast(optional.has_value(), tf.int32)

        @tf.function
        def drain_then_next(it):
            total = tf.constant(0)
            for x in it:
                total += x
                if total > 100:
                    break
            return total + it.get_next()

        numbers = tf.data.Dataset.range(6).map(lambda i: tf.cast(i, tf.int32))
        it = iter(numbers)
        pairs = [first_then_next(it) for _ in range(3)]
        drained = iter(tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.int32)))
        optionals = [drain_then_optional(drained), drain_then_optional(drained)]
        return pairs, optionals, drain_then_next

    check(lambda tf: body(tf)[:2])
    check_raises(lambda tf: body(tf)[2](iter(tf.data.Dataset.range(6).map(lambda i: tf.cast(i, tf.int32)))))


def test_a_variable_first_assigned_in_an_iterator_loop_read_after_it_raises_tf_error():
    def body(tf):
        @tf.function
        def last_seen(it, stop):
            n = tf.constant(0)
            for x in it:
                last = x * 2.0
                n += 1
                if n >= stop:
                    break
            return last, n

        return last_seen(iter(tf.data.Dataset.from_tensor_slices(np.arange(4.0))), tf.constant(2))

    raised = check_raises(body)  # (TF's message starts with "in user code:", which tapeshim does not add)
    assert "'last' must be defined before the loop" in raised.message


def test_next_after_a_loop_read_the_iterator_to_its_end_raises_tf_error():
    def body(tf):
        @tf.function
        def f(it):
            total = tf.constant(0)
            for x in it:
                total += x
            return total + next(it)

        return f(iter(tf.data.Dataset.range(3).map(lambda i: tf.cast(i, tf.int32))))

    check_raises(body)


def test_a_training_epoch_over_a_dataset_in_one_function():
    def body(tf):
        rng = np.random.default_rng(0)
        x_all = rng.normal(size=(50, 3)).astype(np.float32)
        y_all = (x_all @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3)[:, None]
        w = tf.Variable(np.zeros((3, 1), np.float32))
        b = tf.Variable(np.zeros(1, np.float32))

        @tf.function
        def epoch(ds, lr):
            total = tf.constant(0.0)
            steps = 0
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((x @ w + b - y) ** 2)
                gw, gb = tape.gradient(loss, [w, b])
                w.assign_sub(lr * gw)
                b.assign_sub(lr * gb)
                total += loss
                steps += 1
            return total / tf.cast(steps, tf.float32), steps

        ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(16)
        losses = [epoch(ds, tf.constant(0.1)) for _ in range(3)]
        return losses, w, b, epoch.experimental_get_tracing_count()

    check(body)


def test_dataset_loops_inside_tensor_branches_and_loops_reusing_the_target_name():
    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(4)

        @tf.function
        def f(flag, n):
            s = tf.constant(0.0)
            if flag > 0:
                for x in ds:
                    s += tf.reduce_sum(x)
            k = 0
            while k < n:
                for x in ds:
                    s += tf.reduce_max(x)
                k += 1
            return s

        return f(tf.constant(1), tf.constant(2)), f(tf.constant(0), tf.constant(1))

    check(body)


def test_no_gradient_flows_out_of_a_dataset_loop():
    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(4)

        @tf.function
        def f(w):
            with tf.GradientTape() as tape:
                tape.watch(w)
                s = w * 1.0
                for x in ds:
                    s += tf.reduce_sum(x * w * w)
            return s, tape.gradient(s, w)

        w = tf.constant(2.0)
        with tf.GradientTape() as outer:
            outer.watch(w)
            s, inner = f(w)
        return s, inner, outer.gradient(s, w)

    check(body)


def test_dataset_loop_target_read_after_the_loop_raises_tf_error():
    def body(tf):
        ds = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(4)

        @tf.function
        def f():
            s = tf.constant(0.0)
            for x in ds:
                s += tf.reduce_sum(x)
            return s, x

        return f()

    raised = check_raises(body)
    assert "'x' must be defined before the loop" in raised.message


def test_forward_over_reverse_through_a_loop_with_a_tensor_trip_count():
    # a Hessian-vector product through an AutoGraph loop whose trip count is a tensor (TF 2.21 raises a
    # TypeError here, for a variant dtype): checked against JAX's own forward-over-reverse
    import jax
    import jax.numpy as jnp

    @tapeshim.function
    def power_sin(x, n):
        y = x
        for _ in tapeshim.range(n):
            y = tapeshim.sin(y) * x
        return tapeshim.reduce_sum(y)

    x, v = tapeshim.constant([0.5, 1.0]), tapeshim.constant([1.0, 0.0])
    with tapeshim.autodiff.ForwardAccumulator(x, v) as accumulator:
        with tapeshim.GradientTape() as tape:
            tape.watch(x)
            y = power_sin(x, tapeshim.constant(3))
        gradient = tape.gradient(y, x)
    hvp = accumulator.jvp(gradient)

    def reference(values):
        out = values
        for _ in range(3):
            out = jnp.sin(out) * values
        return out.sum()

    expected = jax.jvp(jax.grad(reference), (jnp.array([0.5, 1.0]),), (jnp.array([1.0, 0.0]),))[1]
    np.testing.assert_allclose(hvp.numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(gradient.numpy(), jax.grad(reference)(jnp.array([0.5, 1.0])), rtol=1e-5)


def test_for_over_an_iterator_with_a_break_reaching_a_smaller_last_batch():
    # the loop's trace has the full batch's shapes; the call that pulls the smaller last batch gives TF's
    # values, variables written once, and the iterator's position as TF's
    def body(tf):
        seen = tf.Variable(0.0)

        def amount(x):
            seen.assign_add(tf.cast(tf.size(x), tf.float32))
            return tf.reduce_sum(x)

        until = _summed_until(tf, amount)
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(4)
        it = iter(dataset)
        calls = [until(it, tf.constant(5.0)), until(it, tf.constant(1000.0)), seen.numpy()]
        rest = iter(dataset)
        first = until(rest, tf.constant(1.0))
        return calls, first, next(rest, None), until(rest, tf.constant(100.0)), seen.numpy()

    check(body)


def test_a_py_function_in_an_iterator_loop_sees_each_element_once():
    # the py_function's first run while tracing (to learn its output shapes) must not take the element the
    # call's loop pulls
    def body(tf):
        seen = []

        def log(x):
            seen.append(np.asarray(x).tolist())
            return x

        until = _summed_until(tf, lambda x: tf.reduce_sum(tf.py_function(log, [x], tf.float32)))
        it = iter(tf.data.Dataset.from_tensor_slices(np.arange(14, dtype=np.float32)).batch(4))
        first = until(it, tf.constant(1.0))
        logged = list(seen)
        # (the call reaching the smaller last batch runs again eagerly: its py_function calls repeat, unlike TF's)
        return first, logged, until(it, tf.constant(1000.0)), next(it, None)

    check(body)


def test_while_true_with_a_break_on_a_tensor_raises_tf_error():
    def body(tf):
        @tf.function
        def first_square_above(x):
            i = tf.constant(0)
            while True:
                i += 1
                if i * i > x:
                    break
            return i

        return first_square_above(tf.constant(30))

    check_raises(body)


def test_branch_temporaries_inside_with_and_try_blocks_of_a_tensor_loop():
    def body(tf):
        @tf.function
        def scoped(n):
            total = tf.constant(0)
            for i in tf.range(n):
                with tf.name_scope("step"):
                    if i > 0:
                        doubled = i * 2
                        total += doubled
            return total

        @tf.function
        def guarded(n):
            total = tf.constant(0)
            for i in tf.range(n):
                try:
                    if i > 0:
                        tripled = i * 3
                        total += tripled
                finally:
                    pass
            return total

        return scoped(tf.constant(3)), guarded(tf.constant(4))

    check(body)
