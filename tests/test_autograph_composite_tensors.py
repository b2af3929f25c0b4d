"""RaggedTensors and SparseTensors as the state of converted `if`s and tensor loops, against TF's AutoGraph
(`autograph/composite_state.py`): carried as their values tensors with their static parts; where a call
changes a row partition the function computes that call op by op, with TF's values."""

import pytest

from oracle import check, check_raises


def test_ragged_tensors_through_tensor_ifs_and_loops():
    def body(tf):
        @tf.function
        def loop(n):
            r = tf.ragged.constant([[1.0, 2.0], [3.0]])
            for _ in tf.range(n):
                r = r * 2.0
            return r

        @tf.function
        def branch(x):
            r = tf.ragged.constant([[1.0, 2.0], [3.0]])
            if x > 0:
                r = r * x
            else:
                r = r + 1.0
            return r, tf.reduce_sum(r, axis=1)

        @tf.function
        def while_with_a_counter(r):
            i = tf.constant(0)
            total = tf.constant(0.0)
            while i < 3:
                r = r + 1.0
                total += tf.reduce_sum(r)
                i += 1
            return r, total

        ragged = tf.ragged.constant([[1.0], [2.0, 3.0], []])
        positive, negative, counted = branch(tf.constant(2.0)), branch(tf.constant(-1.0)), while_with_a_counter(ragged)
        return (
            loop(tf.constant(3)).to_list(),
            (positive[0].to_list(), positive[1]),
            (negative[0].to_list(), negative[1]),
            (counted[0].to_list(), counted[1]),
        )

    check(body)


def test_sparse_tensors_through_tensor_ifs():
    def body(tf):
        @tf.function
        def branch(x):
            s = tf.sparse.SparseTensor([[0, 0], [1, 2]], [1.0, 5.0], [2, 3])
            if x > 0:
                s = tf.sparse.map_values(tf.negative, s)
            return tf.sparse.to_dense(s), s.values

        return branch(tf.constant(1.0)), branch(tf.constant(-1.0))

    check(body)


def test_gradients_through_a_ragged_loop_variable():
    def body(tf):
        w = tf.Variable(1.5)

        @tf.function
        def step(r):
            with tf.GradientTape() as tape:
                for _ in tf.range(2):
                    r = r * w
                loss = tf.reduce_sum(r.flat_values)
            return loss, tape.gradient(loss, w)

        return step(tf.ragged.constant([[1.0, 2.0], [3.0]]))

    check(body)


def test_a_loop_that_changes_the_number_of_rows_raises_tfs_error():
    def body(tf):
        @tf.function
        def grows(n):
            r = tf.ragged.constant([[1.0, 2.0], [3.0]])
            for _ in tf.range(n):
                r = tf.concat([r, r * 10.0], axis=0)
            return r

        return grows(tf.constant(2)).to_list()

    raised = check_raises(body)
    assert "'r' has shape (2, None) before the loop, but shape (4, None) after one iteration" in raised.message


def test_a_loop_that_changes_a_row_partition():
    def body(tf):
        @tf.function
        def moves(n):
            r = tf.ragged.constant([[1.0, 2.0], [3.0]])
            for _ in tf.range(n):
                r = tf.RaggedTensor.from_row_lengths(r.flat_values * 2.0, tf.reverse(r.row_lengths(), [0]))
            return r

        return moves(tf.constant(3)).to_list()

    check(body)


@pytest.mark.parametrize("positive", [True, False])
def test_branches_with_other_row_partitions(positive):
    def body(tf):
        @tf.function
        def branch(x):
            if x > 0:
                r = tf.ragged.constant([[1.0, 2.0], [3.0]])
            else:
                r = tf.ragged.constant([[1.0], [2.0, 3.0]])
            return r * x

        return branch(tf.constant(2.0 if positive else -2.0)).to_list()

    check(body)


def test_a_loop_that_changes_sparse_indices():
    # tf.sparse.add in a tensor loop: new indices each iteration (TF: an unknown number of them)
    def body(tf):
        @tf.function
        def f(n):
            s = tf.sparse.SparseTensor([[0, 0]], [1.0], [2, 2])
            for _ in tf.range(n):
                s = tf.sparse.add(s, tf.sparse.SparseTensor([[1, 1]], [2.0], [2, 2]))
            return tf.sparse.to_dense(s), s.values

        return f(tf.constant(2)), f(tf.constant(0))

    check(body)
