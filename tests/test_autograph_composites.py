"""Items and attributes assigned in converted loops (`acc[0] = acc[0] + x`, `stats["n"] += 1`, `obj.total = ...`).

TF's AutoGraph carries them as loop variables (and cond outputs). tapeshim carries names only: a loop over a
tensor, or an `if` on one, that assigns one raises NotImplementedError saying what to do (a loop used to keep
one iteration's value, an `if` its true branch's, silently), and the rewrite it suggests gives TF's values.
Python loops and branches that assign them run as before.
"""

import types

import pytest

import tapeshim
from oracle import check


def _loops(tf):
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
        return stats["n"]

    @tf.function
    def in_attribute(x):
        obj = types.SimpleNamespace(total=tf.constant(0.0))
        for row in tf.reshape(x, [-1, 1]):
            obj.total = obj.total + row[0]
        return obj.total

    return in_list, in_dict, in_attribute


@pytest.mark.parametrize("which", range(3))
def test_a_tensor_loop_assigning_an_item_or_attribute_raises(which):
    fn = _loops(tapeshim)[which]
    with pytest.raises(NotImplementedError, match="carries only variables"):
        fn(tapeshim.constant([1.5, 2.0]))


def test_the_suggested_rewrite_gives_tfs_values():
    def body(tf):
        @tf.function
        def in_dict(x):
            stats = {"n": tf.constant(0.0), "name": "steps"}
            value = stats["n"]
            for v in x:
                value = value + v
            stats["n"] = value
            return stats["n"], stats["name"] == "steps"

        return in_dict(tf.constant([1.5, 2.0, 3.0]))

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


def test_a_tensor_if_assigning_an_item_raises():
    @tapeshim.function
    def branch(x):
        state = {"s": tapeshim.constant(0.0)}
        if x > 0:
            state["s"] = state["s"] + x
        return state["s"]

    with pytest.raises(NotImplementedError, match=r"`state\['s'\]` is assigned in an `if` on a tensor"):
        branch(tapeshim.constant(-1.0))


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
