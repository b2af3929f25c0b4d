"""`tf.saved_model.save` / `load` against TF: a module saved by tapeshim loads in tapeshim without its Python code
(portable `jax.export` programs) and in real TF (a SavedModel through jax2tf), and serves what TF's own
saved module serves."""

import numpy as np
import pytest

import tapeshim
from oracle import check, check_raises, real_tf

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4.0


def _module(tf):
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.reshape(tf.range(6, dtype=tf.float32), [3, 2]) / 3.0)
            self.b = tf.Variable(tf.ones([2]))
            self.count = tf.Variable(0, dtype=tf.int64)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            return tf.nn.relu(tf.matmul(x, self.w) - self.b)

        @tf.function(
            input_signature=[tf.TensorSpec([2, 3], tf.float32, name="features"), tf.TensorSpec([], tf.float32)]
        )
        def scaled(self, x, scale):
            self.count.assign_add(1)
            return {"y": tf.reduce_sum(self(x) * scale, axis=1), "calls": self.count}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
        def pair(self, ids):
            return tf.gather(tf.constant([10, 20, 30, 40]), ids), tf.cast(ids, tf.float64) * 0.5

    return Model()


def _sorted(value):
    """Dicts in key order: TF's loaded functions return their dict outputs in its proto map's order."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return type(value)(_sorted(v) for v in value)
    return value


def _use(tf, loaded):
    x = tf.constant(X)
    return _sorted(
        [
            loaded(x),
            loaded(np.ones([5, 3], np.float32)),
            loaded.scaled(x, 2.0),
            loaded.scaled(x, 3.0),
            loaded.pair(tf.constant([3, 0, 1])),
            loaded.signatures["serving_default"](x=x),
            loaded.signatures["scaled"](features=x, scale=tf.constant(0.5)),
            sorted(loaded.signatures),
            loaded.w,
            loaded.count,
            loaded.b.trainable,
        ]
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each library's module, saved by that library (tapeshim writes both formats)."""
    paths = {}
    for tf in (real_tf, tapeshim):
        path = str(tmp_path_factory.mktemp(tf.__name__))
        module = _module(tf)
        tf.saved_model.save(module, path, signatures={"serving_default": module.__call__, "scaled": module.scaled})
        paths[tf.__name__] = path
    return paths


def test_loads_and_serves_as_tf(saved):
    check(lambda tf: _use(tf, tf.saved_model.load(saved[tf.__name__])))


def test_real_tf_serves_what_tapeshim_saved(saved):
    def body(tf):
        path = saved["tapeshim"] if tf is real_tf else saved["tapeshim"]
        loaded = real_tf.saved_model.load(path) if tf is real_tf else tapeshim.saved_model.load(path)
        return _use(tf, loaded)

    check(body)


def test_loaded_without_the_python_code(saved, monkeypatch):
    # the loaded object holds deserialized programs: nothing of the Model class is used
    loaded = tapeshim.saved_model.load(saved["tapeshim"])
    assert type(loaded).__name__ != "Model"
    assert not hasattr(loaded, "_module")
    # (one of the two may be computed on the host: equal to rounding)
    np.testing.assert_allclose(loaded(X).numpy(), _module(tapeshim)(X).numpy(), rtol=1e-6, atol=1e-6)
    # lowered for accelerators too: a model saved here loads on a GPU machine
    import glob

    from jax import export

    for path in glob.glob(saved["tapeshim"] + "/tapeshim/*.stablehlo"):
        with open(path, "rb") as handle:
            assert {"cpu", "cuda"} <= set(export.deserialize(bytearray(handle.read())).platforms)


def test_signature_metadata(saved):
    def body(tf):
        loaded = tf.saved_model.load(saved[tf.__name__])
        signature = loaded.signatures["serving_default"]
        return signature.structured_input_signature, sorted(signature(x=X))

    check(body)


@pytest.mark.parametrize(
    "bad",
    [
        lambda loaded: loaded(np.ones([2, 4], np.float32)),
        lambda loaded: loaded.signatures["serving_default"](np.ones([2, 3], np.float32)),
    ],
)
def test_bad_calls_raise(saved, bad):
    check_raises(lambda tf: bad(tf.saved_model.load(saved[tf.__name__])))


def test_a_program_traced_for_every_size_saves_what_it_computes_per_size(tmp_path):
    # `tf.shape(x)` in a symbolic trace is computed per call: the saved program serves every size as TF's
    def body(tf):
        class SizeDependent(tf.Module):
            @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
            def f(self, x):
                return x * tf.cast(tf.shape(x)[0], tf.float32)

        path = str(tmp_path / tf.__name__)
        tf.saved_model.save(SizeDependent(), path)
        loaded = tf.saved_model.load(path)
        return loaded.f(tf.ones((2, 3))), loaded.f(tf.ones((5, 3)))

    check(body)


def test_a_program_that_depends_on_unknown_sizes_is_refused(tmp_path):
    class SizeDependent(tapeshim.Module):
        @tapeshim.function(input_signature=[tapeshim.TensorSpec([None, 4], tapeshim.float32)], autograph=False)
        def f(self, x):  # a size Python reads (float() of it, AutoGraph off): traced with concrete sizes
            return x * float(x.shape[0] if x.shape[0] is not None else tapeshim.shape(x)[0])

    with pytest.raises(ValueError, match="depends on their sizes"):
        tapeshim.saved_model.save(SizeDependent(), str(tmp_path))


def test_load_missing_directory(tmp_path):
    check_raises(lambda tf: tf.saved_model.load(str(tmp_path / "nothing")))


def test_loaded_functions_inside_a_function(saved):
    def body(tf):
        loaded = tf.saved_model.load(saved[tf.__name__])

        @tf.function
        def serve(x):
            return loaded(x) * 2.0 + 1.0

        return serve(tf.constant(X)), serve(tf.constant(X[:1]))

    check(body)


def test_keras_model_export_serves_in_tf(tmp_path):
    # Keras's own JAX-backend export path (jax2tf); tapeshim only has to leave it working
    keras = tapeshim.keras
    model = keras.Sequential([keras.layers.Input((3,)), keras.layers.Dense(2)])
    model.export(str(tmp_path / "keras"))
    loaded = real_tf.saved_model.load(str(tmp_path / "keras"))
    served = loaded.serve(X)
    np.testing.assert_allclose(served.numpy(), np.asarray(model(X)), rtol=1e-6)


def test_functions_without_signature_save_their_traces(tmp_path):
    # the SavedModel guide's first module: __call__ is saved for the call made before saving
    def build(tf):
        class CustomModule(tf.Module):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable(1.0)

            @tf.function
            def __call__(self, x):
                return x * self.v

            @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
            def mutate(self, new_v):
                self.v.assign(new_v)

        module = CustomModule()
        module(tf.constant(0.0))
        module(tf.constant([1.0, 2.0]))
        return module

    paths = {}
    for tf in (real_tf, tapeshim):
        paths[tf.__name__] = str(tmp_path / tf.__name__)
        tf.saved_model.save(build(tf), paths[tf.__name__])

    def use(tf, imported):
        first = imported(tf.constant(3.0))
        imported.mutate(tf.constant(2.0))
        return first, imported(tf.constant(3.0)), imported(tf.constant([1.0, 5.0])), imported.v

    check(lambda tf: use(tf, tf.saved_model.load(paths[tf.__name__])))
    check(
        lambda tf: use(
            tf,
            real_tf.saved_model.load(paths["tapeshim"])
            if tf is real_tf
            else tapeshim.saved_model.load(paths["tapeshim"]),
        )
    )
    check_raises(lambda tf: tf.saved_model.load(paths[tf.__name__])(tf.constant([[1.0]])))


def test_saving_a_keras_model_serves_its_call(tmp_path):
    keras = tapeshim.keras
    keras.utils.set_random_seed(3)  # (weights of one draw: a draw giving outputs near 0 failed `atol` by chance)
    inputs = keras.layers.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(4, activation="tanh")(inputs)))
    tapeshim.saved_model.save(model, str(tmp_path))
    expected = np.asarray(model(X))  # (host and compiled calls agree to rounding: atol for a value near 1e-4)
    ours = tapeshim.saved_model.load(str(tmp_path))
    theirs = real_tf.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(ours.serve(X).numpy(), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        ours.signatures["serving_default"](**{ours.signatures["serving_default"]._function._names[0]: X})[
            "output_0"
        ].numpy(),
        expected,
        rtol=1e-5,
        atol=1e-7,
    )
    np.testing.assert_allclose(theirs.serve(X).numpy(), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        theirs.serve(np.ones([7, 3], np.float32)).numpy(), np.asarray(model(np.ones([7, 3], np.float32))), rtol=1e-5
    )


def test_unknown_batch_with_index_inputs(tmp_path):
    # the size check runs the function on sample inputs: integer inputs are 0 there, a valid index
    class Lookup(tapeshim.Module):
        def __init__(self):
            super().__init__()
            self.table = tapeshim.Variable([[1.0, 2.0], [3.0, 4.0]])

        @tapeshim.function(input_signature=[tapeshim.TensorSpec([None], tapeshim.int32)])
        def rows(self, ids):
            return tapeshim.gather(self.table, ids) * 2.0

    tapeshim.saved_model.save(Lookup(), str(tmp_path))
    loaded = tapeshim.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(loaded.rows(np.array([1, 0, 1], np.int32)).numpy(), [[6, 8], [2, 4], [6, 8]])


def test_loaded_functions_are_differentiable(saved):
    # gradients through a loaded function, to its inputs and to the loaded variables (fine-tuning)
    def body(tf, loaded):
        x = tf.constant(X)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(loaded(x) ** 2)
        return tape.gradient(y, [x, loaded.w, loaded.b])

    check(lambda tf: body(tf, tf.saved_model.load(saved[tf.__name__])))
    check(
        lambda tf: body(
            tf,
            real_tf.saved_model.load(saved["tapeshim"])
            if tf is real_tf
            else tapeshim.saved_model.load(saved["tapeshim"]),
        )
    )


def test_integer_outputs_and_non_differentiable_ops(tmp_path):
    class Mixed(tapeshim.Module):
        @tapeshim.function(input_signature=[tapeshim.TensorSpec([4], tapeshim.float32)])
        def f(self, x):
            return (
                tapeshim.argmax(x),
                tapeshim.cast(tapeshim.round(x), tapeshim.int32),
                tapeshim.sort(x),
                tapeshim.where(x > 0, x, 0.0),
            )

    tapeshim.saved_model.save(Mixed(), str(tmp_path))
    x = np.array([0.3, -1.0, 2.5, 1.0], np.float32)
    check(
        lambda tf: (
            tapeshim.saved_model.load(str(tmp_path)) if tf is tapeshim else real_tf.saved_model.load(str(tmp_path))
        ).f(x)
    )


def test_the_saved_model_guides_fine_tuning_and_concrete_signatures(tmp_path):
    # the SavedModel guide: a concrete function as the signature, then fine-tuning the loaded variable
    def body(tf):
        class CustomModule(tf.Module):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable(1.0)

            @tf.function
            def __call__(self, x):
                return x * self.v

        module = CustomModule()
        path = str(tmp_path / tf.__name__)
        call = module.__call__.get_concrete_function(tf.TensorSpec([None], tf.float32))
        tf.saved_model.save(module, path, signatures=call)
        imported = tf.saved_model.load(path)
        served = imported.signatures["serving_default"](x=tf.constant([1.0, 2.0]))
        losses = []
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = (10.0 - imported.signatures["serving_default"](x=tf.constant([2.0]))["output_0"][0]) ** 2
            variables = tape.watched_variables()
            grads = tape.gradient(loss, variables)
            for variable, grad in zip(variables, grads):
                variable.assign_sub(0.05 * grad)
            losses.append(loss)
        return served, losses, imported.v if hasattr(imported, "v") else None

    check(body)


def test_loading_a_saved_model_tf_wrote_says_why_not(saved):
    with pytest.raises(ValueError, match="written by TensorFlow"):
        tapeshim.saved_model.load(saved["tensorflow"])
