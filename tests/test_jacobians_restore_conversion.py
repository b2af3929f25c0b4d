"""Jacobians of unconnected sources, deferred checkpoint restores and Python operands of another kind.

Each case is compared with real TensorFlow (tests/oracle.py).
"""

import numpy as np
import pytest

from oracle import check, check_raises, raising


# -- Python operands that cannot take the tensor operand's dtype ----------------
@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.multiply(tf.constant([1, 2]), 0.5),
        lambda tf: tf.multiply(0.5, tf.constant([1, 2])),
        lambda tf: tf.less(tf.constant([1, 2]), 0.5),
        lambda tf: tf.equal(tf.constant([1, 2]), 0.5),
        lambda tf: tf.not_equal(tf.constant([1, 2]), 0.5),
        lambda tf: tf.greater_equal(tf.constant([1, 2]), 0.5),
        lambda tf: tf.maximum(tf.constant([1, 2]), 0.5),
        lambda tf: tf.minimum(tf.constant([1, 2]), 0.5),
        lambda tf: tf.subtract(tf.constant([1, 2]), 0.5),
        lambda tf: tf.pow(tf.constant([1, 2]), 0.5),
        lambda tf: tf.pow(0.5, tf.constant([1, 2])),
        lambda tf: tf.math.floordiv(tf.constant([1, 2]), 0.5),
        lambda tf: tf.math.floormod(tf.constant([1, 2]), 0.5),
        lambda tf: tf.math.squared_difference(tf.constant([1, 2]), 0.5),
        lambda tf: tf.multiply(tf.constant([1, 2]), [0.5, 1.5]),
        lambda tf: tf.multiply(tf.constant([1, 2]), [1, 2.5]),
        lambda tf: tf.multiply(tf.constant([1, 2]), 1e20),
        lambda tf: tf.multiply(tf.constant([True]), 1),
        lambda tf: tf.multiply(tf.constant([1.0, 2.0]), 1j),
        lambda tf: tf.where([True, False], tf.constant([1, 2]), 0.5),
        lambda tf: tf.where([True, False], 0.5, tf.constant([1, 2])),
        lambda tf: tf.concat([tf.constant([1, 2]), [0.5]], 0),
        lambda tf: tf.concat([[0.5], tf.constant([1, 2])], 0),
        lambda tf: tf.stack([tf.constant([1, 2]), [0.5, 1.0]]),
        lambda tf: tf.nn.bias_add(tf.constant([[1, 2]]), [0.5, 1.0]),
        lambda tf: tf.complex(tf.constant([1.0, 2.0]), 1j),
        lambda tf: tf.math.truediv(tf.constant([1, 2]), 0.5),
    ],
    ids=lambda body: "",
)
def test_a_python_value_of_another_kind_is_a_type_error(body):
    check_raises(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.add(tf.constant([1, 2]), 0.5),  # tf.add converts with a dtype hint: the kernel refuses
        lambda tf: tf.add(0.5, tf.constant([1, 2])),
        lambda tf: tf.add_n([tf.constant([1.0, 2.0], tf.float64), 0.1]),  # add_n converts without a hint
        lambda tf: tf.add_n([tf.constant([1.0, 2.0], tf.float64), [0.1, 0.2]]),
        lambda tf: tf.add_n([0.1, tf.constant([1.0, 2.0], tf.float64)]),
        lambda tf: tf.add_n([tf.constant([1, 2]), 1.5]),
        lambda tf: tf.tensordot(tf.constant([1.0, 2.0], tf.float64), [0.1, 0.2], 1),
        lambda tf: tf.tensordot(tf.constant([1.0, 2.0], tf.float64), [0.1], 1),
        lambda tf: tf.tensordot(tf.constant([1.0, 2.0]), [1, 2], 1),
        lambda tf: tf.matmul(tf.constant([[1, 2]]), [[0.5], [1.0]]),
        lambda tf: tf.matmul([[0.5, 1.0]], tf.constant([[1], [2]])),
    ],
    ids=lambda body: "",
)
def test_ops_that_convert_with_a_hint_or_none_raise_the_kernel_error(body):
    check_raises(body)


@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.multiply(tf.constant([1.0, 2.0]), 2),
        lambda tf: tf.multiply(tf.constant([1.0, 2.0]), [1, 2]),
        lambda tf: tf.multiply(tf.constant([1, 2]), np.float64(0.5)),
        lambda tf: tf.multiply(tf.constant([1, 2]), np.array([0.5, 1.0])),
        lambda tf: tf.add_n([tf.constant([1.0, 2.0], tf.float64), tf.constant([0.5, 1.0], tf.float64)]),
        lambda tf: tf.tensordot(tf.constant([1.0, 2.0]), [0.5, 1.5], 1),
        lambda tf: tf.constant([1, 2]) * 2,
        lambda tf: tf.equal(tf.constant([1.0, 2.0]), 1),
    ],
    ids=lambda body: "",
)
def test_python_values_that_fit_still_convert(body):
    check(body)


# -- jacobians of unconnected sources ------------------------------------------
def _jacobian_case(kind, source_dtype="float32", use_list=False, **options):
    def body(tf):
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        z = tf.cast(tf.constant([[5, 6], [7, 8]]), source_dtype)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            tape.watch(z)
            y = x * 2.0
        return getattr(tape, kind)(y, [x, z] if use_list else z, **options)

    return body


@pytest.mark.parametrize("kind", ["jacobian", "batch_jacobian"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"unconnected_gradients": "zero"},
        {"unconnected_gradients": "none"},
        {"experimental_use_pfor": False},
        {"experimental_use_pfor": False, "unconnected_gradients": "zero"},
        {"parallel_iterations": 8},  # fewer than the loop size trips a TF pfor bug with None gradients
    ],
    ids=str,
)
@pytest.mark.parametrize("source_dtype", ["float32", "float64", "int32"])
def test_jacobians_of_an_unconnected_source_as_tf(kind, options, source_dtype):
    # TF's while loop (no pfor) writes zeros of the source's dtype into its float32 TensorArray: TF's error
    raises = options == {"experimental_use_pfor": False, "unconnected_gradients": "zero"} and source_dtype != "float32"
    check(_jacobian_case(kind, source_dtype, **options), raises=raises)


@pytest.mark.parametrize("kind", ["jacobian", "batch_jacobian"])
def test_jacobians_with_the_unconnected_gradients_enum(kind):
    check(lambda tf: _jacobian_case(kind, unconnected_gradients=tf.UnconnectedGradients.ZERO)(tf))
    check(lambda tf: _jacobian_case(kind, unconnected_gradients=tf.UnconnectedGradients.NONE)(tf))


@pytest.mark.parametrize("kind", ["jacobian", "batch_jacobian"])
@pytest.mark.parametrize("options", [{}, {"unconnected_gradients": "zero"}], ids=str)
def test_jacobians_of_a_list_of_sources_as_tf(kind, options):
    check(_jacobian_case(kind, use_list=True, **options), raises=kind == "batch_jacobian")  # (TF's takes no list)


@pytest.mark.parametrize("kind", ["jacobian", "batch_jacobian"])
def test_jacobians_refuse_an_unknown_unconnected_gradients(kind):
    check_raises(_jacobian_case(kind, unconnected_gradients="foo"))


def test_batch_jacobian_of_an_unconnected_variable_is_zeros():
    def body(tf):
        x, z = tf.Variable([[1.0, 2.0]]), tf.Variable([[3.0, 4.0]])
        with tf.GradientTape() as tape:
            y = x * 2.0
        return tape.batch_jacobian(y, z)

    check(body)


# -- restoring into variables a module creates later (TF's deferred restoration) ----
def _flexible_dense(tf):
    class FlexibleDense(tf.Module):
        """The intro-to-modules guide's layer: its variables are created on the first call."""

        def __init__(self, out_features, name=None):
            super().__init__(name=name)
            self.out_features = out_features
            self.is_built = False

        def __call__(self, x):
            if not self.is_built:
                self.w = tf.Variable(tf.random.normal([x.shape[-1], self.out_features]), name="w")
                self.b = tf.Variable(tf.random.normal([self.out_features]), name="b")
                self.is_built = True
            return tf.matmul(x, self.w) + self.b

    return FlexibleDense


def _list_model(tf):
    dense = _flexible_dense(tf)

    class ListModel(tf.Module):
        def __init__(self):
            super().__init__()
            self.layers = []

        def __call__(self, x):
            if not self.layers:
                self.layers.append(dense(3))
                self.layers.extend([dense(2)])
            for layer in self.layers:
                x = layer(x)
            return x

    return ListModel


def _dict_model(tf):
    dense = _flexible_dense(tf)

    class DictModel(tf.Module):
        def __init__(self):
            super().__init__()
            self.parts = {}

        def __call__(self, x):
            if not self.parts:
                self.parts["first"] = dense(3)
                self.parts.update(second=dense(2))
            return self.parts["second"](self.parts["first"](x))

    return DictModel


def _private_list_model(tf):
    dense = _flexible_dense(tf)

    class PrivateListModel(tf.Module):
        def __init__(self):
            super().__init__()
            self._layers = []

        def __call__(self, x):
            if not self._layers:
                self._layers.append(dense(3))
                self._layers += [dense(2)]
            for layer in self._layers:
                x = layer(x)
            return x

    return PrivateListModel


@pytest.mark.parametrize("make_model", [_list_model, _dict_model, _private_list_model])
def test_a_restore_reaches_variables_appended_to_module_containers_later(make_model, tmp_path):
    def body(tf):
        model_class = make_model(tf)
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        saved = model_class()
        expected = saved(x)
        path = tf.train.Checkpoint(model=saved).save(str(tmp_path / tf.__name__ / "ckpt"))
        restored = model_class()
        status = tf.train.Checkpoint(model=restored).restore(path)
        actual = restored(x)
        status.assert_consumed()
        return expected - actual, [v.shape.as_list() for v in restored.trainable_variables]

    check(body)


def test_module_containers_stay_lists_and_dicts():
    def body(tf):
        module = tf.Module()
        module.items = [tf.Variable(1.0)]
        module.table = {"a": tf.Variable(2.0)}
        module.items.append(tf.Variable(3.0))
        module.table["b"] = tf.Variable(4.0)
        return (
            isinstance(module.items, list),
            isinstance(module.table, dict),
            len(module.variables),
            list(module.items) == module.items,
            sorted(module.table),
        )

    check(body)


# -- Keras variables' shapes ------------------------------------------------------
def keras_variable_shapes(tf):
    layer = tf.keras.layers.Dense(2)
    layer.build((None, 3))
    kernel_shape, bias_shape = layer.kernel.shape, layer.bias.shape
    return (
        type(kernel_shape).__name__,
        kernel_shape.as_list(),
        kernel_shape.rank,
        bias_shape.as_list(),
        kernel_shape == (3, 2),
        list(kernel_shape),
        kernel_shape[0],
        len(kernel_shape),
        kernel_shape.num_elements(),
        tuple(layer.kernel.numpy().shape),
    )


def test_keras_variable_shapes_are_tensor_shapes_as_tf():
    import inspect
    import os
    import pickle
    import subprocess
    import sys

    from keras_oracle import assert_outcomes_match, run_case

    import tapeshim

    script = (
        inspect.getsource(keras_variable_shapes) + "\nimport pickle, sys\nimport tensorflow as tf\n"
        "sys.path.insert(0, sys.argv[1])\nfrom keras_oracle import run_case\n"
        "sys.stdout.buffer.write(pickle.dumps(run_case(keras_variable_shapes, tf)))\n"
    )
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", script, os.path.dirname(__file__)], env=env, capture_output=True, timeout=600
    )
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    assert_outcomes_match(pickle.loads(done.stdout), run_case(keras_variable_shapes, tapeshim))


def _save_after(mutate, make_items):
    def body(tf):
        import tempfile

        module = tf.Module()
        module.items = make_items(tf)
        mutate(tf, module.items)
        path = tf.train.Checkpoint(module=module).save(tempfile.mkdtemp() + "/ckpt")
        return path.endswith("-1"), len(module.items)

    return body


def _variables(tf):
    return [tf.Variable(1.0), tf.Variable(2.0)]


def _ints(tf):
    return [1, 2]


MUTATIONS = {
    "insert_end": lambda tf, items: items.insert(2, tf.Variable(3.0)),
    "insert_front": lambda tf, items: items.insert(0, tf.Variable(3.0)),
    "setitem": lambda tf, items: items.__setitem__(0, tf.Variable(3.0)),
    "delitem": lambda tf, items: items.__delitem__(0),
    "pop": lambda tf, items: items.pop(),
    "reverse": lambda tf, items: items.reverse(),
    "append": lambda tf, items: items.append(tf.Variable(3.0)),
    "extend": lambda tf, items: items.extend([tf.Variable(3.0)]),
}


@pytest.mark.parametrize("make_items", [_variables, _ints])
@pytest.mark.parametrize("mutate", list(MUTATIONS))
def test_only_append_only_module_lists_save_as_tf(mutate, make_items):
    # TF refuses to save a list changed other than by appending: an insert, or another change to a list of variables
    refused = mutate.startswith("insert") or (make_items is _variables and mutate not in ("append", "extend"))
    check(_save_after(MUTATIONS[mutate], make_items), raises=refused)


# -- a TensorShape converts to its dimensions ---------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        lambda tf: tf.convert_to_tensor(tf.TensorShape([5, 8])),
        lambda tf: tf.convert_to_tensor(tf.TensorShape([5, 8]), tf.int64),
        lambda tf: tf.convert_to_tensor(tf.TensorShape([])),
        lambda tf: tf.convert_to_tensor(tf.TensorShape([2**33])),
        lambda tf: tf.reduce_prod(tf.TensorShape([5, 8])),
        lambda tf: tf.reshape(tf.range(40), tf.zeros([5, 8]).shape),
        raising(lambda tf: tf.convert_to_tensor(tf.TensorShape([None, 8]))),
        raising(lambda tf: tf.convert_to_tensor(tf.TensorShape(None))),
        raising(lambda tf: tf.convert_to_tensor(tf.TensorShape([5]), tf.float32)),
    ],
    ids=lambda body: "",
)
def test_a_tensor_shape_converts_as_tf(body):
    check(body)
