"""`tf.Module` and `tf.name_scope` against real TensorFlow."""

import threading

import pytest

from oracle import check, check_raises


def _model(tf):
    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
                self.b = tf.Variable(tf.zeros([n_out]), name="b", trainable=False)

        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    class MLPModel(tf.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(3, 4, name="first"), Dense(4, 2, name="second")]
            self.extra = {"z": tf.Variable(1.0, name="z"), "a": (tf.Variable(2.0, name="a"),)}
            self.alias = self.layers[0]

        @tf.Module.with_name_scope
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x * self.extra["z"]

    return MLPModel()


def test_discovery_order_and_names():
    def body(tf):
        m = _model(tf)
        return (
            m.name,
            [v.name for v in m.variables],
            [v.name for v in m.trainable_variables],
            [s.name for s in m.submodules],
            len(m.variables),
        )

    check(body)


def test_gradients_through_a_module():
    def body(tf):
        m = _model(tf)
        x = tf.ones([2, 3])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(m(x))
        return y, tape.gradient(y, m.trainable_variables)

    check(body)


def test_name_scopes_name_variables():
    def body(tf):
        with tf.name_scope("outer"):
            with tf.name_scope("inner"):
                v = tf.Variable(1.0, name="v")
            w = tf.Variable(1.0)
        return v.name, w.name, tf.Variable(1.0, name="u").name

    check(body)


def test_name_scopes_are_per_thread_and_full_paths_replace_the_stack():
    def body(tf):
        names = {}
        entered, done = threading.Event(), threading.Event()

        def other():
            with tf.name_scope("thread"):
                entered.set()
                done.wait(10)
                names["other"] = tf.Variable(1.0, name="x").name

        thread = threading.Thread(target=other)
        with tf.name_scope("main"):
            thread.start()
            entered.wait(10)
            names["main"] = tf.Variable(1.0, name="y").name
            with tf.name_scope("full/path/"):
                names["full"] = tf.Variable(1.0, name="z").name
            names["after"] = tf.Variable(1.0, name="w").name
        done.set()
        thread.join()
        return sorted(names.items())

    check(body)


@pytest.mark.parametrize("name", ["has space", "1leading_digit", "dash-name"])
def test_invalid_module_names(name):
    check_raises(lambda tf: tf.Module(name=name))
