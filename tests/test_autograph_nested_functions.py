"""Functions defined inside a `tf.function` and holding control flow on tensors, called directly, against TF."""

from oracle import check


def test_a_nested_function_with_an_if_and_a_loop_called_inside_a_function():
    def body(tf):
        @tf.function
        def step(x):
            def magnitude(y):
                if y > 0:
                    return y
                return -y

            def doubled(y):
                for _ in tf.range(3):
                    y = y * 2.0
                return y

            return magnitude(x) + doubled(x)

        return [step(tf.constant(-3.0)), step(tf.constant(2.0))]

    check(body)


def test_a_loss_closure_with_a_branch_inside_a_train_step():
    def body(tf):
        w = tf.Variable([1.0, -2.0])

        @tf.function
        def train_step(x, clip):
            def loss_fn():
                loss = tf.reduce_sum((w * x) ** 2)
                if clip:
                    loss = tf.minimum(loss, 4.0)
                return loss

            with tf.GradientTape() as tape:
                loss = loss_fn()
            w.assign_sub(0.1 * tape.gradient(loss, w))
            return loss

        x = tf.constant([0.5, 1.0])
        return [train_step(x, tf.constant(True)), train_step(x, tf.constant(False)), w.numpy()]

    check(body)
