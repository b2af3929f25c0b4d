"""JAX interop: pytrees, __jax_array__, jax transformations, from_jax/to_jax, DLPack, optax, jax_op.

Where TF has the same thing (DLPack, a gradient computed by GradientTape), the
result is compared with real TF; otherwise with plain JAX.
"""

import array

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import tensorflow as real_tf

import tapeshim as tf
from oracle import check, check_raises, normal


def test_jax_numpy_accepts_tensors_and_variables():
    x = tf.constant([0.5, 1.0, 2.0])
    v = tf.Variable([1.0, 2.0, 3.0])
    np.testing.assert_allclose(jnp.sin(x), np.sin([0.5, 1.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(jnp.dot(x, v), 0.5 + 2.0 + 6.0, rtol=1e-6)
    assert isinstance(jnp.asarray(x), jax.Array)


def test_pytrees():
    x = tf.constant([1.0, 2.0])
    v = tf.Variable([3.0, 4.0])
    leaves, treedef = jax.tree_util.tree_flatten({"x": x, "v": v})
    assert all(isinstance(leaf, jax.Array) for leaf in leaves) and len(leaves) == 2
    rebuilt = jax.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(rebuilt["x"], tf.Tensor) and rebuilt["x"].dtype == tf.float32
    assert isinstance(rebuilt["v"], tf.Tensor)  # a variable's value, not a new variable
    doubled = jax.tree_util.tree_map(lambda a: a * 2, {"x": x})
    np.testing.assert_allclose(doubled["x"].numpy(), [2.0, 4.0])


def _f(module, x):
    return module.reduce_sum(module.sin(x) * x)


class _WithArray:
    """An object NumPy reads through `__array__` (as a pandas DataFrame or a PyTorch tensor is read)."""

    def __array__(self, dtype=None, copy=None):
        return np.arange(6, dtype=np.float32).reshape(2, 3)


class _WithInterface:
    """An object NumPy reads through the array interface."""

    def __init__(self):
        self._array = np.arange(4, dtype=np.int32)
        self.__array_interface__ = self._array.__array_interface__


def _array_likes():
    return [
        jnp.linspace(0.0, 1.0, 6).reshape(2, 3),  # float64: tapeshim runs JAX with 64-bit types, as TF has them
        jnp.arange(3),
        _WithArray(),
        _WithInterface(),
        bytearray(b"xy"),
        memoryview(b"ab"),
        array.array("d", [1.5, 2.5]),
        array.array("q", [1, 2]),
    ]


def test_array_likes_convert_as_tf_converts_them():
    # TF reads a JAX array, or anything with `__array__` or the array interface, as a NumPy array (its dtype,
    # then the requested dtype or the hint), and a flat buffer as a list of Python numbers
    def body(tf):
        out = []
        for value in _array_likes():
            out.append(tf.constant(value))
            out.append(tf.convert_to_tensor(value))
            out.append(tf.constant(value, dtype=tf.float32))
            out.append(tf.convert_to_tensor(value, dtype_hint=tf.float32))
            out.append(tf.convert_to_tensor(value, dtype_hint=tf.int32))
        out.append(tf.constant([1.0, 2.0, 3.0]) + jnp.ones(3))  # a float64 operand takes the tensor's float32
        out.append(tf.constant([1.0, 2.0, 3.0]) * jnp.arange(3))
        out.append(tf.matmul(tf.ones([2, 2]), jnp.eye(2)))
        # any number type takes the hint, as a NumPy array's does, and casts as NumPy casts (NaN to an int)
        out.append(tf.constant([1.0], dtype=tf.complex64) + jnp.array([1j]))
        out.append(tf.constant([1.0], dtype=tf.bfloat16) + jnp.array([1.0]))
        out.append(tf.constant([1.0]) + jnp.ones(1, jnp.bfloat16))
        out.append(tf.convert_to_tensor(jnp.ones(2, jnp.complex128), dtype_hint=tf.complex64))
        out.append(tf.constant([1, 1]) + jnp.array([np.nan, 3e9]))
        out.append(tf.convert_to_tensor(jnp.array([np.nan, 1e20]), dtype_hint=tf.int32))
        return out

    check(body)


@pytest.mark.parametrize("dimensions", [0, 2])
def test_a_buffer_of_other_than_one_dimension_is_refused_as_in_tf(dimensions):
    check_raises(lambda tf: tf.constant(memoryview(np.ones((2,) * dimensions))))


def test_jit_vmap_grad_take_tensors_and_match_tf():
    x = tf.constant([0.3, 0.7, 1.1])
    jitted = jax.jit(lambda t: _f(tf, t))(x)
    assert isinstance(jitted, tf.Tensor)
    np.testing.assert_allclose(jitted.numpy(), _f(real_tf, real_tf.constant([0.3, 0.7, 1.1])).numpy(), rtol=1e-6)
    batched = jax.vmap(lambda t: t * t)(x)
    np.testing.assert_allclose(batched.numpy(), [0.09, 0.49, 1.21], rtol=1e-6)
    grad = jax.grad(lambda t: jnp.sum(jnp.sin(t) * t))(x)

    def body(module):
        t = module.constant([0.3, 0.7, 1.1])
        with module.GradientTape() as tape:
            tape.watch(t)
            y = _f(module, t)
        return tape.gradient(y, t)

    expected = check(body)
    np.testing.assert_allclose(
        np.asarray(grad.numpy() if isinstance(grad, tf.Tensor) else grad), expected.numpy(), rtol=1e-6
    )
    grad_of_tf_ops = jax.grad(lambda t: _f(tf, t).value)(x)  # tapeshim ops inside jax.grad
    np.testing.assert_allclose(np.asarray(grad_of_tf_ops.numpy()), expected.numpy(), rtol=1e-6)


def test_from_jax_to_jax_without_copies():
    array = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    tensor = tf.experimental.from_jax(array)
    assert tensor.shape == (2, 3) and tensor.dtype == tf.float32
    assert tf.experimental.to_jax(tensor) is array
    v = tf.Variable(array)
    assert tf.experimental.to_jax({"v": v})["v"].unsafe_buffer_pointer() == v._value.unsafe_buffer_pointer()
    with pytest.raises(TypeError, match="tf.Tensor or tf.Variable"):
        tf.experimental.to_jax(3.0)
    assert tf.experimental.from_jax([1, 2]).dtype == tf.int32  # other values convert as tf.convert_to_tensor


def test_dlpack_round_trip_and_exchange_with_tf():
    def body(module):
        x = module.constant([[1.0, 2.0], [3.0, 4.0]])
        return module.experimental.dlpack.from_dlpack(module.experimental.dlpack.to_dlpack(x))

    check(body)
    x = tf.constant([1.0, 2.0, 3.0])
    from_tapeshim = real_tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(x))
    np.testing.assert_array_equal(from_tapeshim.numpy(), [1.0, 2.0, 3.0])
    from_tf = tf.experimental.dlpack.from_dlpack(real_tf.experimental.dlpack.to_dlpack(real_tf.constant([4, 5])))
    np.testing.assert_array_equal(from_tf.numpy(), [4, 5])
    assert from_tf.dtype == tf.int32
    shared = tf.experimental.dlpack.from_dlpack(jnp.ones(4))  # objects with __dlpack__ too
    assert shared.shape == (4,)
    with pytest.raises(TypeError, match="dlcapsule"):
        tf.experimental.dlpack.from_dlpack(3)


def test_optax_sgd_matches_tf_and_adam_matches_optax():
    def body(module):
        v = module.Variable([1.0, -2.0])
        for _ in range(3):
            with module.GradientTape() as tape:
                loss = module.reduce_sum(v * v * v)
            g = tape.gradient(loss, v)
            if module is tf:
                state = tf.experimental.optax_step(optax.sgd(0.1), [g], [v], None)
                assert state is not None
            else:
                v.assign_sub(0.1 * g)
        return v

    check(body)

    params = [jnp.array([1.0, -2.0]), jnp.array(0.5)]
    variables = [tf.Variable(p) for p in params]
    opt = optax.adam(0.05)
    state, ref_state = None, opt.init(params)
    for _ in range(4):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(variables[0] ** 2) * variables[1]
        grads = tape.gradient(loss, variables)
        state = tf.experimental.optax_step(opt, grads, variables, state)
        ref_grads = jax.grad(lambda p: jnp.sum(p[0] ** 2) * p[1])(params)
        updates, ref_state = opt.update(ref_grads, ref_state, params)
        params = optax.apply_updates(params, updates)
    for v, p in zip(variables, params):
        np.testing.assert_allclose(v.numpy(), np.asarray(p), rtol=1e-5)


def test_optax_step_errors_and_none_gradients():
    v = tf.Variable([1.0])
    w = tf.Variable([2.0])
    tf.experimental.optax_step(optax.sgd(1.0), [tf.constant([1.0]), None], [v, w])
    assert v.numpy()[0] == 0.0 and w.numpy()[0] == 2.0  # a None gradient leaves its variable alone
    with pytest.raises(ValueError, match="`variables` has 2"):
        tf.experimental.optax_step(optax.sgd(1.0), [None], [v, w])
    with pytest.raises(TypeError, match="tf.Variables"):
        tf.experimental.optax_step(optax.sgd(1.0), [None], [tf.constant(1.0)])


def test_a_jax_module_under_a_tape_via_jax_op():
    """A small JAX module (a pure function of a params pytree), as Flax/Equinox modules apply, under a tape."""

    def mlp_apply(params, x):
        hidden = jnp.tanh(x @ params["w1"] + params["b1"])
        return hidden @ params["w2"]

    layer = tf.experimental.jax_op(lambda w1, b1, w2, x: mlp_apply({"w1": w1, "b1": b1, "w2": w2}, x), name="mlp")
    init = {
        "w1": np.array([[0.1, -0.2], [0.3, 0.4]], np.float32),
        "b1": np.array([0.0, 0.1], np.float32),
        "w2": np.array([[0.5], [-0.5]], np.float32),
    }
    x_value = np.array([[1.0, 2.0]], np.float32)

    def body(module):
        w1, b1, w2 = (module.Variable(init[k]) for k in ("w1", "b1", "w2"))
        x = module.constant(x_value)
        with module.GradientTape() as tape:
            if module is tf:
                y = layer(w1, b1, w2, x)
            else:
                y = module.tanh(x @ w1 + b1) @ w2
            loss = module.reduce_sum(y * y)
        return tape.gradient(loss, [w1, b1, w2])

    check(body)


def test_an_equinox_module_under_a_tape_via_jax_op():
    """An Equinox MLP's arrays as tf.Variables, the module called through jax_op: tape gradients equal jax.grad."""
    import equinox as eqx

    model = eqx.nn.MLP(3, 2, 8, 2, key=jax.random.PRNGKey(0), dtype=jnp.float32)
    params, static = eqx.partition(model, eqx.is_array)
    leaves, treedef = jax.tree_util.tree_flatten(params)

    def apply(x, *arrays):
        module = eqx.combine(jax.tree_util.tree_unflatten(treedef, arrays), static)
        return jax.vmap(module)(x)

    call = tf.experimental.jax_op(apply, name="equinox_mlp")
    variables = [tf.Variable(np.asarray(leaf)) for leaf in leaves]
    x = normal((4, 3), 0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(call(tf.constant(x), *variables) ** 2)
    grads = tape.gradient(loss, variables)
    expected = jax.grad(lambda arrays: jnp.sum(apply(x, *arrays) ** 2))(leaves)
    assert len(grads) == len(expected)
    for grad, want in zip(grads, expected):
        np.testing.assert_allclose(grad.numpy(), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_the_interop_guide_example_runs(capsys):
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "interop.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/interop.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert float(lines[0].split()[1]) < 0.05
    assert lines[1:] == ["float32", "tf.Tensor([1.        0.5403023], shape=(2,), dtype=float32)", "(2, 8)"]
