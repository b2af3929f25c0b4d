"""Items and attributes assigned in converted loops and branches (`acc[0] = acc[0] + x`, `stats["n"] += 1`,
`self.total = ...`), against TF's AutoGraph.

TF's AutoGraph carries them as loop variables and cond outputs (its `get_state`/`set_state`); so does tapeshim's
(`symbols.CarriedComposites`): values, dtypes, gradients, nested loops, items that do not exist before the
statement, and TF's errors when a branch leaves one undefined or a loop changes its shape.
"""

import types

import pytest

import tapeshim
from oracle import check, check_raises


def test_tensor_loops_carry_items_and_attributes():
    def body(tf):
        @tf.function
        def in_list(x):
            acc = [tf.constant(0.0)]
            for _ in tf.range(4):
                acc[0] = acc[0] + x
            return acc[0]

        @tf.function
        def in_dict(x):
            stats = {"n": tf.constant(0), "name": "steps"}
            i = tf.constant(0)
            while i < 3:
                stats["n"] += 1
                i += 1
            return stats["n"], stats["name"] == "steps"

        @tf.function
        def in_attribute(x):
            obj = types.SimpleNamespace(total=tf.constant(0.0))
            for row in tf.reshape(x, [-1, 1]):
                obj.total = obj.total + row[0]
            return obj.total

        @tf.function
        def in_the_test(n):
            counter = types.SimpleNamespace(i=tf.constant(0), s=tf.constant(0))
            while counter.i < n:
                counter.s += counter.i
                counter.i += 1
            return counter.s, counter.i

        @tf.function
        def python_start(x):
            counts = types.SimpleNamespace(seen=0)
            for _ in x:
                counts.seen += 1
            return counts.seen

        @tf.function
        def index_from_a_python_variable(x):
            acc = [tf.constant(0.0), tf.constant(10.0)]
            k = 1
            for v in x:
                acc[k] = acc[k] + v
            return acc

        x = tf.constant([1.5, 2.0])
        return (
            in_list(tf.constant(1.5)),
            in_dict(x),
            in_attribute(x),
            in_the_test(tf.constant(5)),
            python_start(tf.constant([1.0, 2.0, 3.0])),
            index_from_a_python_variable(x),
        )

    check(body)


def test_items_first_assigned_in_the_statement_and_read_after_it():
    def body(tf):
        @tf.function
        def loop(x):
            obj = types.SimpleNamespace()
            for i in tf.range(3):
                obj.y = x * tf.cast(i, tf.float32)
            return obj.y

        @tf.function
        def last(x):
            d = {}
            for v in x:
                d["last"] = v
            return d["last"]

        @tf.function
        def both_branches(x):
            obj = types.SimpleNamespace()
            if x > 0:
                obj.y = x * 2
            else:
                obj.y = x * 3
            return obj.y

        return loop(tf.constant(2.0)), last(tf.constant([1.0, 2.0, 3.0])), both_branches(tf.constant(2.0))

    check(body)


def test_tensor_ifs_carry_items_and_attributes():
    def body(tf):
        @tf.function
        def branch(x):
            state = {"s": tf.constant(0.0)}
            if x > 0:
                state["s"] = state["s"] + x
            return state["s"]

        @tf.function
        def python_flag(x):
            seen = types.SimpleNamespace(flag=False)
            if x > 0:
                seen.flag = True
            return seen.flag

        @tf.function
        def each_branch_starts_from_the_value_before(x):
            acc = [x]
            if x > 0:
                acc[0] = acc[0] * 10.0
            else:
                acc[0] = acc[0] - 1.0
            return acc[0]

        return [
            (
                branch(tf.constant(v)),
                python_flag(tf.constant(v)),
                each_branch_starts_from_the_value_before(tf.constant(v)),
            )
            for v in (2.0, -1.0)
        ]

    check(body)


def test_nested_loops_a_module_attribute_and_gradients():
    def body(tf):
        @tf.function
        def nested(x):
            acc = [tf.constant(0.0)]
            for _ in tf.range(3):
                for _ in tf.range(2):
                    acc[0] += x
            return acc[0]

        class Summer(tf.Module):
            def __init__(self):
                super().__init__()
                self.total = tf.constant(0.0)

            @tf.function
            def __call__(self, x):
                for v in x:
                    self.total = self.total + v
                return self.total

        w = tf.Variable(2.0)

        @tf.function
        def gradient(w):
            with tf.GradientTape() as tape:
                acc = {"v": tf.constant(1.0)}
                for _ in tf.range(3):
                    acc["v"] = acc["v"] * w
            return acc["v"], tape.gradient(acc["v"], w)

        return nested(tf.constant(2.0)), Summer()(tf.constant([1.0, 2.0])), gradient(w)

    check(body)


def test_python_loops_and_python_branches_that_assign_items_run_as_tf():
    def body(tf):
        @tf.function
        def python_loop(x, flag):
            acc = {"total": tf.constant(0.0)}
            for k in range(3):
                acc["total"] = acc["total"] + x * k
            obj = types.SimpleNamespace(seen=[])
            for k in range(2):
                obj.last = x + k
            if flag:
                acc["total"] = acc["total"] * 2.0
            return acc["total"], obj.last

        return python_loop(tf.constant(2.0), True), python_loop(tf.constant(2.0), False)

    check(body)


def test_items_used_as_scratch_within_an_iteration_or_a_branch_run_as_tf():
    def body(tf):
        @tf.function
        def scratch(n):
            tmp = {}
            total = tf.constant(0)
            for i in tf.range(n):
                tmp["a"] = i * 2
                total += tmp["a"]
            return total

        @tf.function
        def flag(n):
            seen = types.SimpleNamespace(flag=False)
            total = tf.constant(0)
            for i in tf.range(n):
                seen.flag = True
                total += i
            return total

        @tf.function
        def branch_scratch(x):
            d = {}
            if x > 0:
                d["t"] = x * 2.0
                y = d["t"] + 1.0
            else:
                d["t"] = x * 3.0
                y = d["t"] - 1.0
            return y

        n = tf.constant(4)
        return scratch(n), flag(n), branch_scratch(tf.constant(3.0)), branch_scratch(tf.constant(-3.0))

    check(body)


def test_an_item_assigned_in_one_branch_only_raises_tfs_error():
    def body(tf):
        @tf.function
        def one_branch(x):
            obj = types.SimpleNamespace()
            if x > 0:
                obj.y = x * 2
            return obj.y

        return one_branch(tf.constant(2.0))

    raised = check_raises(body)
    assert "'obj.y' must also be initialized in the else branch" in raised.message


def test_an_item_changing_shape_in_a_loop_raises_tfs_error():
    def body(tf):
        @tf.function
        def grows(x):
            acc = [tf.zeros([1])]
            for _ in tf.range(3):
                acc[0] = tf.concat([acc[0], x], 0)
            return acc[0]

        return grows(tf.constant([1.5]))

    raised = check_raises(body)
    assert "'acc[0]' has shape (1,) before the loop, but shape (2,) after one iteration" in raised.message


def test_a_failed_trace_leaves_the_items_as_they_were():
    stats = {"n": tapeshim.constant(0.0)}

    @tapeshim.function
    def fails(x):
        for v in x:
            stats["n"] = stats["n"] + v
            tapeshim.debugging.assert_equal(tapeshim.constant(True), False, message="stop")  # static: fails now
        return stats["n"]

    with pytest.raises(tapeshim.errors.InvalidArgumentError, match="stop"):
        fails(tapeshim.constant([1.0, 2.0]))
    assert float(stats["n"]) == 0.0
