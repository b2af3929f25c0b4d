"""The host interpreter (`tapeshim/_src/interpret.py`): a program's first call computed with NumPy.

Each rule is checked against XLA itself: the same jitted function, interpreted and compiled, gives the
same dtypes and shapes and the same values (to float rounding), including XLA's semantics where NumPy's
differ. Then through tapeshim: a first training step compiles nothing and gives TF's values, the second
compiles its programs, and programs the interpreter cannot run (a long loop, half precision) compile at
once with the same results.
"""

import contextlib
import os
import subprocess
import sys
from collections import OrderedDict

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import sparse as jax_sparse

import tapeshim as tf
from oracle import backend_compiles, check, check_raises, interpreted_and_compiled, mlp_training_step
from tapeshim._src import (
    interpret,
    interpret_blas,
    interpret_cost,
    interpret_flush,
    interpret_plan,
    interpret_rules,
    kernel_calls,
    replay,
)
from tapeshim._src.ops import nn_ops

pytestmark = pytest.mark.skipif(not interpret.enabled(), reason="the interpreter serves the CPU backend only")

rng = np.random.default_rng(0)
F = rng.normal(size=(4, 6)).astype(np.float32)
G = rng.normal(size=(6, 5)).astype(np.float32)
INTS = np.array([[7, -7, 3], [-3, 0, 2]], np.int32)
DIVISORS = np.array([[2, 2, -2], [-5, 3, 1]], np.int32)
IDX = np.array([3, 0, 2, 2], np.int32)

COLUMNS = np.array([[0, 5, 7], [2, 2, -1], [6, 1, 1], [3, 0, 9]], np.int32)


def _row_scatter(scatter, x, columns, updates, mode=None):
    """`scatter` of one update per element `columns` picks in each row of `x` (take_along_axis's transpose)."""
    numbers = jax.lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(1,),
        scatter_dims_to_operand_dims=(1,),
        operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,),
    )
    return scatter(x, columns[..., None], updates, numbers, mode=mode)


CASES = {
    "elementwise": (
        lambda x: (jnp.tanh(x) * jnp.exp(-x) + jnp.log1p(jnp.abs(x)), jax.nn.sigmoid(x), jnp.sqrt(jnp.abs(x))),
        (F,),
    ),
    "rsqrt_pow_square": (lambda x: (jax.lax.rsqrt(jnp.abs(x) + 1), x**3, jnp.square(x), x**2.5), (F,)),
    "integer_division": (
        lambda a, b: (a // jnp.where(b == 0, 1, b), jax.lax.div(a, b), jax.lax.rem(a, b)),
        (INTS, DIVISORS),
    ),
    "float_to_int_saturates": (
        lambda x: x.astype(jnp.int32),
        (np.array([np.nan, np.inf, -np.inf, 3.7, -3.7, 3e9, -3e9], np.float32),),
    ),
    "round_half_away": (
        lambda x: (jax.lax.round(x), jax.lax.round(x, jax.lax.RoundingMethod.TO_NEAREST_EVEN), jnp.floor(x)),
        (np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999997, 2.4], np.float32),),
    ),
    "matmul_and_batched_dot": (
        lambda a, b: (
            a @ b,
            jnp.einsum("bij,bjk->bik", a.reshape(2, 2, 6), b.reshape(2, 6, 2)),
            jax.lax.dot_general(a, a, (((0,), (0,)), ((), ()))),  # a matrix product's gradients contract so
            jax.lax.dot_general(b, b, (((1,), (1,)), ((), ()))),
            jax.lax.dot_general(a, b.T, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float64),
            jax.lax.dot_general(a[:2, :2], b[:2, :2], ((((), ()), ((), ())))),  # no contraction: an outer product
        ),
        (F, np.tile(G[:, :4], (2, 1))[:6]),
    ),
    "reductions": (
        lambda x: (x.sum(0), x.max(1), x.min(), jnp.argmax(x, 1), jnp.argmin(x, 0), x.prod(1), jnp.any(x > 1)),
        (F,),
    ),
    "empty_max": (
        lambda x: (jax.lax.reduce_max(x, (0,)), jax.lax.reduce_min(x, (0,))),
        (np.zeros((0, 3), np.float32),),
    ),
    "shapes": (
        lambda x: (
            x.T,
            x.reshape(3, 8),
            x[None, :, None].squeeze(),
            jnp.flip(x, 1),
            jnp.concatenate([x, x], 0),
            jnp.split(x, [1, 4], axis=1),
            jnp.broadcast_to(x[:, :1], (4, 6)),
            x[1:3, ::2],
        ),
        (F,),
    ),
    "pad_interior_and_negative": (lambda x: jax.lax.pad(x, np.float32(0.5), [(1, -1, 1), (-2, 3, 0)]), (F,)),
    "dynamic_slices_clamp": (
        lambda x, i: (
            jax.lax.dynamic_slice(x, (i, i), (2, 3)),
            jax.lax.dynamic_update_slice(x, jnp.ones((2, 2), x.dtype), (i, np.int32(0))),
        ),
        (F, np.int32(5)),
    ),
    "gather_take": (lambda x, i: (x[i], jnp.take(x, i, axis=1, mode="clip"), x[i, 1:3]), (F, IDX)),
    "gather_fill": (lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-1.0), (F, np.array([0, 9, -9, 3]))),
    "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i[:, None] % 6, axis=1), (F, IDX)),
    "scatter_add": (
        lambda x, i: (x.at[i].add(1.0), x.at[i, 2].set(-2.0), x.at[i].max(0.0), jax.ops.segment_sum(x, i, 5)),
        (F, IDX),
    ),
    "gradient_of_gather": (jax.grad(lambda x, i: (x[i] ** 2).sum()), (F, IDX)),
    "scatter_min_max_signed_zeros": (  # -0 orders below +0, as in XLA's min and max (NumPy's `at` keeps either)
        lambda x, u: (
            x.at[jnp.array([0, 1, 1, 2])].min(u),
            x.at[jnp.array([0, 1, 1, 2])].max(u),
            _row_scatter(jax.lax.scatter_min, x.reshape(1, 3), jnp.array([[0, 2]]), u[None, :2]),
            _row_scatter(jax.lax.scatter_max, -x.reshape(1, 3), jnp.array([[1, 1]]), u[None, 2:]),
        ),
        (np.array([0.0, -0.0, 0.0], np.float32), np.array([-0.0, 0.0, -0.0, 0.0], np.float32)),
    ),
    "row_picks": (  # one element per row (a sparse cross-entropy's labels): out-of-row, negative, repeated columns
        lambda x, c: (
            jnp.take_along_axis(x, c, axis=1),
            jnp.take_along_axis(x, c, axis=1, mode="clip"),
            jnp.take_along_axis(x, c.astype(jnp.uint32), axis=1),
            jax.grad(lambda m: (jnp.take_along_axis(m, c, axis=1) * jnp.arange(1.0, 4.0)).sum())(x),
            _row_scatter(jax.lax.scatter, x, c, -jnp.ones((4, 3), x.dtype)),
            _row_scatter(jax.lax.scatter_max, x, c, jnp.full((4, 3), 0.5, x.dtype), "clip"),
            _row_scatter(jax.lax.scatter_mul, x, c, jnp.full((4, 3), 3.0, x.dtype), "drop"),
        ),
        (F, COLUMNS),
    ),
    "sparse_to_dense": (  # (Keras's JAX optimizers densify an embedding's sparse gradient)
        lambda d, i, bd, bi: (
            jax_sparse.BCOO((d, i), shape=(6, 3)).todense(),  # repeated, negative and padding indices
            jax_sparse.BCOO((bd, bi), shape=(2, 5, 3)).todense(),  # a batch dimension
            jax_sparse.BCOO((d, np.zeros((5, 0), np.int32)), shape=(3,)).todense(),  # dense dimensions only
        ),
        (
            rng.normal(size=(5, 3)).astype(np.float32),
            np.array([[0], [2], [2], [-1], [6]], np.int32),
            F[:2, :4],
            np.array([[[0, 1], [4, 2], [4, 2], [5, 0]], [[1, 1], [-1, -3], [0, 3], [2, 2]]], np.int32),
        ),
    ),
    "sorting": (
        lambda x: (jnp.sort(x, 1), jnp.argsort(x, 0), jax.lax.top_k(x, 3), jnp.cumsum(x, 1), jnp.cumprod(x, 0)),
        (F,),
    ),
    "reverse_cumulative": (lambda x: (jax.lax.cumsum(x, 1, reverse=True), jax.lax.cumprod(x, 0, reverse=True)), (F,)),
    "conv_nhwc_and_gradients": (
        jax.value_and_grad(
            lambda x, k: jnp.tanh(
                jax.lax.conv_general_dilated(x, k, (2, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            ).sum(),
            argnums=(0, 1),
        ),
        (rng.normal(size=(2, 7, 6, 3)).astype(np.float32), rng.normal(size=(3, 2, 3, 4)).astype(np.float32)),
    ),
    "conv_dilated_padded_grouped_and_gradients": (
        jax.value_and_grad(
            lambda x, k: (
                jax.lax.conv_general_dilated(x, k, (2,), ((2, -1),), (2,), (2,), feature_group_count=2) ** 2
            ).sum(),
            argnums=(0, 1),
        ),
        (rng.normal(size=(2, 4, 9)).astype(np.float32), rng.normal(size=(6, 2, 3)).astype(np.float32)),
    ),
    "conv_depthwise_gradients": (
        jax.grad(
            lambda x, k: jax.lax.conv_general_dilated(
                x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=3
            ).sum(),
            argnums=(0, 1),
        ),
        (rng.normal(size=(1, 5, 5, 3)).astype(np.float32), rng.normal(size=(3, 3, 1, 3)).astype(np.float32)),
    ),
    "conv_3d_strided_dilated_and_empty": (
        lambda x, k: (
            jax.lax.conv_general_dilated(x, k, (2, 1, 3), "VALID", rhs_dilation=(1, 2, 1)),
            jax.lax.conv_general_dilated(x[:, :, :2], k, (1, 1, 1), "VALID"),  # (no output position)
        ),
        (rng.normal(size=(2, 3, 7, 6, 8)).astype(np.float32), rng.normal(size=(4, 3, 3, 2, 2)).astype(np.float32)),
    ),
    "top_k_total_order": (
        lambda x: jax.lax.top_k(x, 9),
        (np.array([1.0, np.nan, -0.0, 0.0, -np.nan, -np.inf, np.inf, 1.0, -0.0], np.float32),),
    ),
    "subnormals_flush_to_zero": (
        lambda x, y: (x > 0, x == 0, jnp.where(x != 0, 1 / x, 0.0), jnp.sign(x), y * np.float32(1e-10), x != 0),
        (np.array([1e-40, -1e-40, 0.0, 1.0], np.float32), np.array([1e-30, 1.0, -1e-30, 0.0], np.float32)),
    ),
    "subnormals_float64": (lambda x: (x * 1e-10, (x * 1e-10) == 0), (np.array([1e-300, 1.0, -1e-300]),)),
    "complex_parts": (
        lambda x, y: (jax.lax.complex(x, y), jax.lax.convert_element_type(jax.lax.complex(x, y), jnp.bool_)),
        (np.array([1.0, 1.0, -0.0, 1.0, 0.0], np.float32), np.array([np.inf, np.nan, 0.0, -0.0, 1.0], np.float32)),
    ),
    "uint64_indices": (
        lambda x, i: jnp.take(x, i, mode="clip"),
        (np.arange(5.0, dtype=np.float32), np.array([2**63 + 5, 3], np.uint64)),
    ),
    "signed_zeros": (
        lambda x, y: (
            jax.lax.min(x, y),
            jax.lax.max(x, y),
            jnp.sign(x),
            jax.lax.reduce_max(jnp.stack([x, y]), (0,)),
            jax.lax.reduce_min(jnp.stack([x, y]), (0,)),
            x + jnp.zeros(4, jnp.int32).astype(jnp.float32),
            x + np.zeros(4, np.float32),
        ),
        (np.array([0.0, -0.0, -0.0, 1.0], np.float32), np.array([-0.0, 0.0, -0.0, -0.0], np.float32)),
    ),
    "signed_zeros_beside_scalars": (  # a scalar operand settles the signs of `max`'s zeros (`_max`)
        lambda x: (
            jax.nn.relu(x),
            jnp.maximum(x, 0.0),
            jax.lax.max(np.float32(-0.0), x),
            jax.lax.max(np.float32(0.0), x),
            jax.lax.max(np.float32(0.0), x[1]),
            jax.lax.max(x, np.float32(np.nan)),
            jax.lax.max(np.float32(-1.5), x),
            jnp.minimum(x, 0.0),
            jax.lax.min(np.float32(-0.0), x),
            jnp.maximum(x.astype(jnp.int32), 0),
            jnp.maximum(x[0], 0.0),
        ),
        (np.array([0.0, -0.0, -2.0, 3.0, np.nan, -np.inf, np.inf, -1e-40], np.float32),),
    ),
    "signed_zeros_beside_broadcast_scalars": (  # over `_SMALL` elements a broadcast is a view: `_max` sees its value
        lambda x, y: (
            nn_ops._relu(x),
            jax.nn.relu(x),
            jax.lax.max(jnp.full_like(x, -0.0), x),
            jax.lax.max(x, jnp.full_like(x, np.nan)),
            jax.lax.max(jnp.full_like(x, 0.0), jnp.full_like(x, -0.0)),
            jax.lax.max(x, y),
            jax.lax.max(jnp.broadcast_to(x[:1], x.shape), x[::-1]),
        ),
        (
            np.resize(np.array([0.0, -0.0, -2.0, 3.0, np.nan, -np.inf, np.inf, -1e-40], np.float32), (160, 128)),
            np.resize(np.array([-0.0, 0.0, 1.0, -3.0, 2.0], np.float32), (160, 128)),
        ),
    ),
    "zeros_added_at_any_size": (  # XLA folds `x + 0` (keeping -0) over a broadcast zero of any size
        lambda x: (x + jnp.zeros(x.shape, x.dtype), jnp.zeros(x.shape, x.dtype) + x, x - jnp.zeros_like(x)),
        (np.resize(np.array([-0.0, 1.0, 0.0], np.float32), 5000),),
    ),
    "top_k_ties_and_ints": (lambda x: jax.lax.top_k(x, 2), (np.array([[1, 3, 3, 2], [5, 5, 5, 0]], np.int32),)),
    "select_and_clamp": (
        lambda x, i: (
            jnp.where(x > 0, x, -x),
            jax.lax.select_n(i % 3, x[0, :4], x[1, :4], x[2, :4]),
            jnp.clip(x, -0.5, 0.5),
        ),
        (F, IDX),
    ),
    "select_large_bit_masks": (  # from `interpret_rules.BITWISE_SELECT_MIN` elements: picked with bit masks
        lambda x, m: (
            jnp.where(x > 0, x, 0.0),  # a ReLU's: a zero without a sign bit
            jnp.where(x > 0, x, -0.0),
            jnp.where(m, x, -x),
            jnp.where(m, (x * 9).astype(jnp.int8), jnp.int8(-3)),
            jnp.where(m, x > 0, x < 1),
            jnp.where(m, x + 1j * x, jnp.zeros_like(x, jnp.complex64)),
            jax.lax.select_n(m, x, x * 2.0),
        ),
        (
            np.concatenate([[np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan], rng.normal(size=5000)]).astype(np.float32),
            rng.random(5006) > 0.5,
        ),
    ),
    "iota_and_compare": (lambda x: (jnp.arange(6) * x[0] > 0, jnp.eye(3, dtype=jnp.int32), x == x[0]), (F,)),
    "control_flow": (
        lambda x, n: (
            jax.lax.fori_loop(0, n, lambda k, acc: acc * 0.5 + k, x),
            jax.lax.cond(n > 2, jnp.sin, jnp.cos, x),
            jax.lax.scan(lambda c, row: (c + row, c * row), jnp.zeros(6), x),
            jax.lax.scan(lambda c, row: (c - row, c), jnp.ones(6), x, reverse=True),
        ),
        (F, np.int32(4)),
    ),
    "value_and_grad_mlp": (
        jax.value_and_grad(lambda w, x: jax.nn.logsumexp(jnp.maximum(x @ w, 0.0), axis=1).mean()),
        (G, F[:, :6]),
    ),
    "custom_jvp_and_stop_gradient": (
        jax.grad(lambda x: (jax.nn.relu(x) + jax.nn.softplus(x) + jax.lax.stop_gradient(x) * x).sum()),
        (F,),
    ),
    "int_mixed": (
        lambda a, b: (a * b, a - b, a & b, a | b, -a, jnp.sign(a), a.astype(jnp.float32) / 3),
        (INTS, DIVISORS),
    ),
    "negative_integer_powers": (lambda x, a: (x**-2, jax.lax.integer_pow(x, -3), x**0, a**0), (F, INTS)),
    "stack_and_unstack": (lambda x: (jnp.stack([x[0], x[1]], 1), *jnp.unstack(x, axis=1)), (F,)),
    "broadcasts_small_and_large": (  # a small result is a new array, a large one NumPy's broadcast view
        lambda x: (
            jnp.broadcast_to(x[0, :, None], (6, 3)),
            jnp.broadcast_to(x[1, 2], (200, 100)),
            jnp.broadcast_to(x[:, None, :3], (4, 50, 3)) * 2.0,
            jax.lax.broadcast_in_dim(x, (4, 6), (0, 1)),
        ),
        (F,),
    ),
    "bool_ops": (lambda a: (~(a > 0), (a > 0) ^ (a < 3), jnp.all(a > -8)), (INTS,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_interpreted_program_matches_xlas(name):
    interpreted, compiled = interpreted_and_compiled(*CASES[name])
    for a, b in zip(jax.tree.leaves(interpreted), jax.tree.leaves(compiled)):
        assert isinstance(a, np.ndarray) and not a.flags.writeable  # (a tensor's value, as a constant's)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=2e-6)
        if np.issubdtype(a.dtype, np.floating):  # XLA's signed zeros, NaNs where XLA has them
            np.testing.assert_array_equal(np.signbit(np.asarray(a)), np.signbit(np.asarray(b)))


@pytest.mark.parametrize("name", sorted(name for name in CASES if name.startswith("conv")))
def test_large_convolutions_sum_over_kernel_positions_instead(name, monkeypatch):
    monkeypatch.setattr(interpret_rules, "_PATCH_BYTES", 0)  # no patch matrix: one product per position
    test_interpreted_program_matches_xlas(name)


def _convolution_case(seed):
    """A random convolution (1-3 spatial axes, strides, dilations, padding, feature or batch groups) in random
    layouts, and its reference: XLA's on the default layouts, laid out as the case's output."""
    draw = np.random.default_rng(seed)
    rank = int(draw.integers(1, 4))
    feature_groups = int(draw.choice([1, 2, 3]))
    batch_groups = int(draw.choice([2, 3])) if feature_groups == 1 and draw.random() < 0.4 else 1
    in_features, out_features = feature_groups * int(draw.integers(1, 3)), max(feature_groups, batch_groups) * 2
    batch = batch_groups * int(draw.integers(1, 3))
    sizes = [tuple(int(v) for v in draw.integers(low, high, size=rank)) for low, high in ((1, 7), (1, 4))]
    strides, rhs_dilation = (tuple(int(v) for v in draw.integers(1, 3, size=rank)) for _ in range(2))
    lhs_dilation = tuple(int(v) for v in draw.integers(1, 3, size=rank)) if batch_groups == 1 else (1,) * rank
    padding = tuple((int(draw.integers(-1, 3)), int(draw.integers(-1, 3))) for _ in range(rank))
    dtype = draw.choice([np.float32, np.float64])  # (the interpreter leaves half precision to XLA)
    x = (draw.normal(size=(batch, in_features, *sizes[0])) * 3).astype(dtype)
    k = (draw.normal(size=(out_features, in_features // feature_groups, *sizes[1])) * 3).astype(dtype)
    layouts = [draw.permutation(2 + rank) for _ in range(3)]  # (where each of batch, feature, spatial... lies)
    x_laid, k_laid = (np.transpose(a, np.argsort(layout)) for a, layout in zip((x, k), layouts))

    def conv(a, b, numbers=None):
        return jax.lax.conv_general_dilated(
            a, b, strides, padding, lhs_dilation, rhs_dilation, numbers, feature_groups, batch_groups
        )

    numbers = jax.lax.ConvDimensionNumbers(*(tuple(int(d) for d in layout) for layout in layouts))
    want = np.transpose(np.asarray(jax.jit(conv)(x, k)), np.argsort(layouts[2]))
    return jax.jit(lambda a, b: conv(a, b, numbers)), (x_laid, k_laid), want


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("by_patches", [True, False])
def test_convolutions_in_any_layout_match_xlas(seed, by_patches, monkeypatch):
    if not by_patches:
        monkeypatch.setattr(interpret_rules, "_PATCH_BYTES", 0)
    jitted, args, want = _convolution_case(seed)
    got = interpret.run(jitted.trace(*args), args)
    assert got is not None and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("by_patches", [True, False])
def test_convolutions_of_an_empty_batch_or_no_features_run_on_the_host(by_patches, monkeypatch):
    if not by_patches:
        monkeypatch.setattr(interpret_rules, "_PATCH_BYTES", 0)
    for images, kernel in (
        (np.zeros((0, 9, 9, 3), np.float32), np.ones((3, 3, 3, 4), np.float32)),
        (np.ones((2, 9, 9, 3), np.float32), np.ones((3, 3, 3, 0), np.float32)),
    ):
        jitted = jax.jit(
            lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        )
        got = interpret.run(jitted.trace(images, kernel), (images, kernel))
        want = jitted(images, kernel)
        assert got is not None and got.shape == want.shape and got.dtype == want.dtype


def _mlp_steps(tf, steps, width):
    step = mlp_training_step(tf, 9, (7, width, 3), seed=3)
    out = [step() for _ in range(steps)]
    w1, w2 = step.variables
    return out, tf.convert_to_tensor(w1), tf.convert_to_tensor(w2)


def test_a_first_training_step_compiles_nothing_and_a_repeating_one_compiles_once_its_host_calls_paid(monkeypatch):
    # (the sizes this structure was seen at: 3 here, where earlier tests' steps may have made it many)
    monkeypatch.setattr(replay, "_structures", OrderedDict())
    compiles = backend_compiles()
    _mlp_steps(tf, 1, 11)  # the constants and variables of this width exist
    before = len(compiles)
    _mlp_steps(tf, 1, 13)  # a new width: new kernels and a new gradient program
    assert len(compiles) == before, "the first step of a new structure ran on the host"
    # a new width of a known structure runs per op first, then its program is traced and computed on the
    # host, and the host computes its next steps too, until their extra cost would have paid for the compile
    # (`compile_tiers.calls_before_compile`): a short loop compiles nothing
    _mlp_steps(tf, 4, 17)
    assert len(compiles) == before, "four steps of a repeating structure ran on the host"
    _mlp_steps(tf, 150, 17)
    assert len(compiles) > before, "a structure that keeps repeating compiles"
    steady = len(compiles)
    _mlp_steps(tf, 150, 17)
    assert len(compiles) == steady


@pytest.mark.usefixtures("compiles_on_repeat")  # (compiled from the second step on)
def test_interpreted_and_compiled_steps_give_tfs_values():
    check(lambda tf: _mlp_steps(tf, 4, 19), rtol=2e-5)


def test_a_loop_past_the_budget_compiles_instead(monkeypatch):
    monkeypatch.setattr(interpret_plan, "STEP_BUDGET", 200)

    def body(tf):
        loop = tf.function(
            lambda: tf.while_loop(lambda k, acc: k < 500, lambda k, acc: (k + 1, acc * 0.999 + 1.0), (0, 1.0))
        )
        return loop()

    before = interpret.stats["abandoned_calls"]
    result = check(body)
    assert interpret.stats["abandoned_calls"] == before + 1
    assert result[0].numpy() == 500


def test_programs_with_more_arithmetic_than_a_compile_costs_compile_at_once(monkeypatch):
    # Pix2Pix's first training step took 60 s on the host where compiling it takes 15 s (interpret_cost)
    monkeypatch.setattr(interpret_cost, "HOST_MULTIPLY_ADDS", 4 * 6 * 5 - 1)
    product = jax.jit(lambda a, b: jnp.tanh(a @ b))
    assert interpret.run(product.trace(F, G), (F, G)) is None  # 120 multiply-adds: one too many
    monkeypatch.setattr(interpret_cost, "HOST_MULTIPLY_ADDS", 4 * 6 * 5)
    assert interpret.run(product.trace(F, G), (F, G)) is not None
    monkeypatch.setattr(interpret_cost, "HOST_ELEMENTS", 4 * 5)  # the product's 20 elements, and tanh's 20
    assert interpret.run(product.trace(F, G), (F, G)) is None
    check(lambda tf: tf.tanh(tf.matmul(tf.constant(F), tf.constant(G))))


def test_integer_products_count_as_numpys_loop_costs(monkeypatch):
    # NumPy has no BLAS for integers: an int32 product of 2**31 multiply-adds took 5-13 s on the host (0.35 s
    # compiled and run), so an integer product's multiply-adds count `UNBLASED_WEIGHT` times
    product = jax.jit(lambda a, b: a @ b)
    ints_f, ints_g = np.arange(24, dtype=np.int32).reshape(4, 6), np.arange(30, dtype=np.int32).reshape(6, 5)
    weighted = 4 * 6 * 5 * interpret_cost.UNBLASED_WEIGHT
    monkeypatch.setattr(interpret_cost, "HOST_MULTIPLY_ADDS", weighted - 1)
    assert interpret.run(product.trace(ints_f, ints_g), (ints_f, ints_g)) is None
    assert interpret.run(product.trace(F, G), (F, G)) is not None  # (float32: BLAS, counted once)
    monkeypatch.setattr(interpret_cost, "HOST_MULTIPLY_ADDS", weighted)
    assert interpret.run(product.trace(ints_f, ints_g), (ints_f, ints_g)) is not None
    check(lambda tf: tf.matmul(tf.constant(ints_f), tf.constant(ints_g)))


def test_multiply_adds_count_products_and_convolutions_from_their_shapes():
    counted = jax.jit(
        lambda a, b, images, kernel: (
            jax.lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
            jnp.einsum("bij,bjk->bik", a.reshape(2, 2, 6), b.reshape(2, 6, 2)),
            jax.lax.conv_general_dilated(images, kernel, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
            jax.lax.cond(a[0, 0] > 0, lambda: a @ b, lambda: (a @ b) @ b.T @ b),
        )
    )
    images, kernel = np.ones((3, 8, 8, 2), np.float32), np.ones((3, 3, 2, 4), np.float32)
    closed = counted.trace(F, G[:, :4], images, kernel).jaxpr  # (4, 6) @ (6, 4)
    matmul, batched = 4 * 4 * 6, 2 * 2 * 2 * 6
    conv = interpret_cost.CONVOLUTION_WEIGHT * 3 * 4 * 4 * (3 * 3 * 2 * 4)  # (stride 2: 4x4 outputs; weighted)
    larger_branch = 4 * 4 * 6 + 4 * 4 * 6 + 4 * 6 * 4  # a cond counts its larger branch
    assert interpret_cost.program_multiply_adds(closed, interpret_plan.inner_jaxprs) == (
        matmul + batched + conv + larger_branch
    )


def test_a_loop_past_the_arithmetic_budget_is_abandoned(monkeypatch):
    monkeypatch.setattr(interpret_cost, "HOST_MULTIPLY_ADDS", 216 * 50)  # 6x6 products: 50 iterations' worth
    square = np.eye(6, dtype=np.float32) * 0.5
    loop = jax.jit(lambda m: jax.lax.fori_loop(0, 100, lambda k, acc: jnp.tanh(acc @ m), m))
    assert interpret.run(loop.trace(square), (square,)) is None
    short = jax.jit(lambda m: jax.lax.fori_loop(0, 40, lambda k, acc: jnp.tanh(acc @ m), m))
    np.testing.assert_allclose(interpret.run(short.trace(square), (square,)), short(square), rtol=2e-6)


def test_programs_without_rules_compile_on_their_first_call():
    x = np.linspace(-2.0, 2.0, 12, dtype=np.float32)
    traced = jax.jit(jax.lax.erf).trace(x)
    assert not interpret.supported(traced.jaxpr)  # `erf` has no rule
    check(lambda tf: tf.math.erf(tf.constant(x)), rtol=1e-6)


def test_arguments_inside_another_trace_are_not_interpreted():
    answers = []

    @jax.jit
    def outer(value):
        answers.append(kernel_calls.KernelCalls().call(jax.jit(jnp.sin), (value,), [value], True))
        return jnp.sin(value)

    outer(np.arange(3.0, dtype=np.float32))
    assert answers == [None]


def _gather_calls(tf, *index_lists):
    gather = tf.function(lambda params, indices: tf.gather(params, indices))
    params = tf.constant([1.0, 2.0, 3.0])
    return [gather(params, tf.constant(indices)) for indices in index_lists]


def test_a_runtime_check_computed_on_the_host_raises_tfs_error():
    compiles = backend_compiles()
    before = len(compiles)
    raised = check_raises(lambda tf: _gather_calls(tf, [1, 5]))  # the first call: on the host, checks included
    assert "indices[1] = 5 is not in [0, 3)" in raised.message
    assert len(compiles) == before
    check(lambda tf: _gather_calls(tf, [2, 0], [0, 1], [1, 1]))  # host, then compiled under checkify
    raised = check_raises(lambda tf: _gather_calls(tf, [2, 0], [0, 3]))  # the compiled program's check
    assert "indices[1] = 3 is not in [0, 3)" in raised.message


def test_programs_the_interpreter_cannot_follow_compile_instead():
    cases = [jnp.arange(3.0, dtype=jnp.float32) * k for k in range(40)]
    many = jax.jit(lambda which: jax.lax.select_n(which, *cases))
    which = np.array([0, 39, 7], np.int32)
    assert interpret.run(many.trace(which), (which,)) is None  # NumPy's choose takes 64 choices at most
    apply = jax.jit(lambda x, i: x.at[i].apply(jnp.sin))
    args = (np.ones(3, np.float32), np.array([0, 0], np.int32))
    assert interpret.run(apply.trace(*args), args) is None  # a scatter with an update function
    np.testing.assert_allclose(many(which), [0.0, 39.0, 14.0])


def test_an_output_never_shares_the_callers_numpy_memory():
    x = np.ones(3, np.float32)
    traced = jax.jit(lambda v: v + 0.0).trace(x)
    (out,) = jax.tree.leaves(interpret.run(traced, (x,)))
    x[0] = 5.0
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.0, 1.0])


@contextlib.contextmanager
def _counted_flushes():
    """The sizes of the arrays `interpret_flush.flush_subnormals` checks inside the block, as a list."""
    sizes = []
    flush = interpret_flush.flush_subnormals

    def counted(value):
        sizes.append(value.size)
        return flush(value)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(interpret_flush, "flush_subnormals", counted)
        yield sizes


@pytest.mark.usefixtures("software_flush")
def test_a_tensors_own_value_is_checked_for_subnormals_once_and_memory_that_may_change_every_call():
    tiny = np.finfo(np.float32).tiny
    traced = jax.jit(lambda v: -v).trace(np.ones(100, np.float32))  # (a negation keeps what it is given)
    program = interpret.prepare(traced)
    clean = tf.constant(np.ones(100, np.float32))._value  # (a tensor's read-only NumPy value)
    subnormal = tf.constant(np.full(100, tiny / 4, np.float32))._value
    writable = np.ones(100, np.float32)
    window_base = np.ones(150, np.float32)  # read-only views of memory that stays writable:
    window = np.lib.stride_tricks.sliding_window_view(window_base, 100)[0]
    buffer = bytearray(np.ones(100, np.float32).tobytes())
    over_buffer = np.frombuffer(buffer, np.float32)
    over_buffer.flags.writeable = False
    buffer_view = over_buffer.view()
    on_device = jnp.ones(100, jnp.float32)  # (a CPU jax.Array may share a NumPy array's memory: dlpack)
    changing = (writable, window, buffer_view, on_device)
    with _counted_flushes() as calls:
        for _ in range(3):
            for value in (clean, subnormal, *changing):
                program((value,), [value])
        assert len(calls) == 1 + 3 + 3 * len(changing)  # the clean tensor value once, every other one each call
        (out,) = jax.tree.leaves(program((subnormal,), [subnormal]))
        assert not np.any(out) and np.all(np.signbit(out))  # flushed on input, as XLA: -0.0
        writable[0] = window_base[0] = tiny / 4
        buffer[:4] = np.float32(tiny / 4).tobytes()
        for value in (writable, window, buffer_view):  # changed between calls: flushed, with XLA's sign
            (out,) = jax.tree.leaves(program((value,), [value]))
            assert out[0] == 0.0 and np.signbit(out[0]) and out[1] == -1.0
            np.testing.assert_array_equal(np.signbit(np.asarray(jax.jit(lambda v: -v)(value))), np.signbit(out))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "uint16", "bool", "complex64"])
def test_a_large_select_picks_the_bits_np_where_does(dtype):
    numpy_dtype = np.dtype(jnp.dtype(dtype))
    size = interpret_rules.BITWISE_SELECT_MIN + 7
    values = np.concatenate([[np.nan, -0.0, 0.0, np.inf, -np.inf], rng.normal(size=size) * 5])
    a = values[: size + 5].astype(numpy_dtype) if numpy_dtype.kind in "fc" else (values > 0).astype(numpy_dtype)
    b = a[::-1].copy()
    which = rng.random(a.shape) > 0.5
    cases = [
        b,
        np.zeros((), numpy_dtype),
        np.ones((), numpy_dtype),
        np.broadcast_to(np.zeros((), numpy_dtype), a.shape),
    ]
    if numpy_dtype.kind in "fc":
        cases += [np.array(-0.0).astype(numpy_dtype), np.broadcast_to(np.array(-0.0).astype(numpy_dtype), a.shape)]
    for if_false in cases:
        got, want = interpret_rules.select(which, a, if_false), np.where(which, a, if_false)
        assert got.dtype == want.dtype and got.shape == want.shape and got.flags.owndata
        assert got.tobytes() == want.tobytes(), "the same bits: NaNs, infinities and the zeros' signs"
    counts = which.astype(np.int32) * 3  # (a mask that is not bool: np.where's truth values)
    assert interpret_rules.select(counts, a, b).tobytes() == np.where(counts, a, b).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_array_checked_in_pieces_is_flushed_wherever_its_subnormal_lies(dtype):
    tiny = np.finfo(dtype).tiny
    piece = interpret_flush.CHUNK_BYTES // np.dtype(dtype).itemsize
    clean = (rng.normal(size=2 * piece + 1000) + 3.0).astype(dtype)
    assert interpret_flush.flush_subnormals(clean) is clean
    for position in (0, piece - 1, piece, 2 * piece, clean.size - 1):
        for value in (tiny / 4, -tiny / 4, 0.0, np.nan):
            given = clean.copy()
            given[position] = value
            flushed = interpret_flush.flush_subnormals(given)
            expected = given.copy()
            if abs(value) < tiny:  # (a zero stays, with its sign)
                expected[position] = np.copysign(0.0, value)
            assert flushed.tobytes() == expected.tobytes(), (position, value)
    given = clean.copy()
    given[piece + 3] = tiny / 4
    backwards = given[::-1]  # (not contiguous: checked in one piece)
    assert not backwards.flags.c_contiguous and interpret_flush.flush_subnormals(backwards)[-piece - 4] == 0.0


@pytest.mark.usefixtures("software_flush")
def test_the_interpreters_own_outputs_are_not_checked_for_subnormals_again():
    traced = jax.jit(lambda v: v * 0.5).trace(np.ones(100, np.float32))
    program = interpret.prepare(traced)
    writable = np.ones(100, np.float32)
    with _counted_flushes() as checked:
        (out,) = jax.tree.leaves(program((writable,), [writable]))  # a new tensor value (`interpret._placed`)
        assert checked == [100]
        for _ in range(3):  # a training step's new weights, taken by the next step's programs
            (again,) = jax.tree.leaves(program((out,), [out]))
        assert checked == [100], "an output of the interpreter has no subnormals: it is not checked again"
        tiny = np.finfo(np.float32).tiny
        np.testing.assert_array_equal(again, np.full(100, 0.25, np.float32))
        outside = tf.constant(np.full(100, tiny / 4, np.float32))._value  # (not the interpreter's: checked)
        (flushed,) = jax.tree.leaves(program((outside,), [outside]))
        assert checked == [100, 100] and not np.any(flushed)
        # the per-op tier's values are placed unmarked: a leaf among them reaches it unchecked
        (placed,) = interpret.to_device([np.full(100, tiny / 4, np.float32)])
        (flushed,) = jax.tree.leaves(program((placed,), [placed]))
        assert checked == [100, 100, 100] and not np.any(flushed)


def test_per_op_kernels_run_on_the_host_until_their_extra_cost_would_pay_for_the_compile():
    small = kernel_calls.host_calls_before_compile(256)
    heavy = kernel_calls.host_calls_before_compile(4_000_000)
    assert small > 1000, "a small kernel's host call costs microseconds more than its compiled call"
    assert 2 <= heavy < 20, "a kernel over millions of elements compiles after a few calls"
    assert kernel_calls.host_calls_before_compile(10**12) == 2
    compiles = backend_compiles()
    kernel = jax.jit(lambda x: jnp.sin(x) * 1.5)
    calls = kernel_calls.KernelCalls()
    x = np.linspace(-1.0, 1.0, 128, dtype=np.float32)
    assert interpret.prepare(kernel.trace(x)).work == 256  # two operations of 128 elements
    before = len(compiles)
    for _ in range(small):
        result = calls.call(kernel, (x,), [x], False, host=True)
        assert isinstance(result, np.ndarray)
    assert len(compiles) == before
    # the next call submits the compile to the background thread, and is computed on the host meanwhile
    assert isinstance(calls.call(kernel, (x,), [x], False, host=True), np.ndarray)
    assert len(compiles) == before + 1  # (reading the count waits for the background thread)
    assert calls.call(kernel, (x,), [x], False, host=True) is None  # compiled: the caller calls it
    assert calls.call(kernel, (x,), [x], True) is None, "an eager call counts the same calls"
    np.testing.assert_allclose(result, kernel(x), rtol=1e-6)
    assert len(compiles) == before + 1, "the call found the executable the background thread compiled"


def test_a_signature_first_called_inside_another_trace_still_runs_on_the_host():
    # (a custom gradient's shape evaluation calls its ops' kernels on tracers: a signature noted there, with no
    # host program, made the per-op tier's concrete calls of it compile, 17 ms in a 3 ms first step)
    calls = kernel_calls.KernelCalls()
    jitted = jax.jit(lambda a, b: (a * b,))
    x, y = np.linspace(0.0, 1.0, 12, dtype=np.float32).reshape(3, 4), np.float32(2.0)
    traced_out = jax.jit(lambda a: calls.run(jitted, (a, y), [a, y], False, True)[0])(x)
    compiles = backend_compiles()
    before = len(compiles)
    result = calls.call(jitted, (x, y), [x, y], False, True)
    assert result is not None, "the host computes it"
    assert len(compiles) == before
    np.testing.assert_array_equal(result[0], np.asarray(traced_out))


def test_a_long_chain_seen_once_compiles_no_per_op_kernel():
    def body(tf):
        x = tf.constant(np.linspace(-1.0, 1.0, 64, dtype=np.float32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(300):  # each kernel is called 300 times, as many as a per-op plan calls it
                y = tf.sin(y) * 1.01
            loss = tf.reduce_sum(y)
        return loss, tape.gradient(loss, x)

    compiles = backend_compiles()
    body(tf)  # the constants and kernels of these shapes are traced
    before = len(compiles)
    check(body, rtol=2e-5)
    assert len(compiles) == before


def _blas_threads():
    """The thread counts of the BLAS libraries tapeshim limits: those loaded with NumPy, before tapeshim
    (`interpret_blas._BLAS_CONTROLLER`; a BLAS loaded later, SciPy's with Keras, computes no NumPy product)."""
    import threadpoolctl

    known = {lib.filepath for lib in interpret_blas._BLAS_CONTROLLER.select(user_api="blas").lib_controllers}
    libraries = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
    return [lib.num_threads for lib in libraries if lib.filepath in known]


def test_host_computation_runs_blas_on_one_thread():
    # The host computes while compiles run in the background: NumPy's BLAS on one thread there (a BLAS
    # splitting products over busy cores ran a small GAN's convolutions 40-100x slower), from the first
    # product large enough for the BLAS to split it, to the outermost context's exit. Always (not only while
    # a compile runs): OpenBLAS rounds some products differently on two threads, and a call's values must not
    # depend on when a compile ran (a TF guide's training accuracy moved by one prediction)
    before = _blas_threads()
    with interpret_blas.host_errors_ignored():
        unlimited = _blas_threads()
        interpret_blas.limit_blas_threads()
        inside = _blas_threads()
        with interpret_blas.host_errors_ignored():  # (nested: the outer one holds the limit)
            interpret_blas.limit_blas_threads()
        nested = _blas_threads()
    after = _blas_threads()
    assert unlimited == before
    assert inside == nested == [1] * len(before)
    assert after == before
    interpret_blas.limit_blas_threads()  # (outside a host context: nothing)
    assert _blas_threads() == before


@pytest.mark.parametrize(
    "lhs, rhs, limits",
    [
        ((16, 16), (16, 16), False),
        ((256, 256), (256, 256), True),
        ((64, 32), (32, 64), False),  # a small MLP layer's product: OpenBLAS computes it on the calling thread
        ((1, 128), (128, 128), True),  # a matrix-vector product splits from 9,216 multiply-adds
        ((3, 64, 32), (3, 32, 64), False),  # per batch item, as NumPy's matmul calls the BLAS
        ((3, 128, 64), (3, 64, 64), True),
    ],
)
def test_only_products_the_blas_would_split_limit_its_threads(lhs, rhs, limits, monkeypatch):
    # A host evaluation without such a product never sets and restores the limit (40-45 us a call); the
    # controller that sets it scanned the process's libraries at import
    controller = interpret_blas._BLAS_CONTROLLER
    limited = []

    def limit(**kwargs):
        limited.append(kwargs)
        return type(controller).limit(controller, **kwargs)

    monkeypatch.setattr(controller, "limit", limit)
    a, b = np.ones(lhs, np.float32), np.ones(rhs, np.float32)
    out = interpret.run(jax.jit(lambda x, y: x @ y).trace(a, b), (a, b))
    np.testing.assert_allclose(out, a @ b)
    assert limited == ([{"limits": 1, "user_api": "blas"}] if limits else [])


def test_host_results_are_c_ordered_read_only_values_as_constants_are():
    # A hosted program's outputs stay NumPy arrays on the CPU: C order (a transpose is copied), and
    # read-only for good (a view of a read-only base), as `tf.constant`'s values; TF's tensors behave so too
    def body(tf):
        got = tf.transpose(tf.exp(tf.reshape(tf.range(6.0), (2, 3)))).numpy()
        shared = np.asarray(tf.exp(tf.constant([1.0, 2.0])))
        try:
            shared.flags.writeable = True
            stays_read_only = False
        except ValueError:
            stays_read_only = True
        v = tf.Variable([1.0, 2.0])
        v.assign_add([1.0, 1.0])
        copied = np.array(v)
        copied[0] = 99.0
        return [got.flags.c_contiguous, got.flags.writeable, np.frombuffer(got, np.float32), stays_read_only, v.numpy()]

    c_ordered, writeable, flat, stays_read_only, variable = check(body)
    assert c_ordered and writeable and stays_read_only
    np.testing.assert_allclose(flat, np.exp(np.arange(6.0)).reshape(2, 3).T.ravel(), 1e-6)
    np.testing.assert_array_equal(variable, [2.0, 3.0])


def test_host_results_go_to_the_device_tf_device_names():
    script = (
        "import tapeshim as tf\n"
        "x = tf.exp(tf.zeros([5]))\n"
        "with tf.device('/CPU:1'):\n"
        "    y = tf.math.sin(x)\n"
        "print(y.device)\n"
    )
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("device:CPU:1")


def test_a_broadcast_literal_is_made_once_with_its_plan():
    # ReLU's zeros (`broadcast_in_dim 0.0`) are a constant of the plan, a read-only view with every stride 0:
    # its calls make no copy, and `max` reads the zero as the scalar it is (no signed-zero masks); a
    # conversion from an integer (a one-hot mask) is not checked for subnormals
    def relu_and_mask(x, labels):
        return nn_ops._relu(x), (labels[:, None] == jnp.arange(4)).astype(jnp.float32)

    x = np.array([[-1.0, -0.0, 0.0, 2.0]] * 3, np.float32)
    labels = np.array([0, 3, 1], np.int32)
    closed = jax.make_jaxpr(relu_and_mask)(x, labels)
    plan = interpret_plan.HostPlan(closed)
    run, _, ins, *_ = plan.steps[0]  # (no step broadcasts the zero)
    assert run.__name__ == "_max"
    zeros = dict(plan.fixed)[ins[1]]
    assert zeros.shape == x.shape and not any(zeros.strides) and not zeros.flags.writeable
    assert not any(flush for run, _, _, _, _, flush in plan.steps if getattr(run, "__name__", "") == "_convert")
    relu, mask = interpret.run(jax.jit(relu_and_mask).trace(x, labels), (x, labels))
    want_relu, want_mask = jax.jit(relu_and_mask)(x, labels)
    np.testing.assert_array_equal(relu, want_relu)
    np.testing.assert_array_equal(np.signbit(relu), np.signbit(want_relu))
    np.testing.assert_array_equal(mask, want_mask)
