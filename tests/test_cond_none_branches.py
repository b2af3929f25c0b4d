"""`tf.cond` whose branches return `None` (they only assign: a gradient-accumulation step's
`tf.cond(apply_now, apply_gradients, tf.no_op)`) or an assignment (`v.assign_add(1.0)`), eagerly and inside
`tf.function`, against TF."""

from oracle import check


def test_branches_that_only_assign_return_none_and_run_as_tf():
    def body(tf):
        v = tf.Variable(0.0)

        def bump():
            v.assign_add(1.0)

        @tf.function
        def step(x):
            result = tf.cond(x > 0, bump, lambda: None)
            tf.cond(x > 1, lambda: tf.group(v.assign_add(10.0)), tf.no_op)
            return v.read_value(), result is None

        outputs = [step(tf.constant(1.0)), step(tf.constant(-1.0)), step(tf.constant(2.0))]
        eager = tf.cond(tf.constant(True), bump, lambda: None)
        return outputs, eager is None, v.numpy()

    check(body)


def test_none_beside_tensors_in_both_branches():
    def body(tf):
        @tf.function
        def pair(x):
            return tf.cond(x > 0, lambda: (x * 2.0, None), lambda: (x - 1.0, None))

        return pair(tf.constant(3.0)), pair(tf.constant(-3.0))

    check(body)


def test_a_branch_returning_an_assignment_gives_the_value_after_it():
    def body(tf):
        v = tf.Variable(2.0)
        w = tf.Variable([1.0, 2.0])

        @tf.function
        def counter(x):
            return tf.cond(x > 0, lambda: v.assign_add(1.0), lambda: v.assign_sub(1.0))

        @tf.function
        def chosen(x):
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(tf.cond(x > 0, lambda: w, lambda: w * 2.0) ** 2)
            return y, tape.gradient(y, w)

        return (
            [counter(tf.constant(1.0)), counter(tf.constant(-1.0)), v.numpy()],
            chosen(tf.constant(1.0)),
            chosen(tf.constant(-1.0)),
        )

    check(body)
